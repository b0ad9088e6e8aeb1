#!/usr/bin/env bash
# run.sh: the front door.
#   ./run.sh            the main job: the scenario table (QUICK=1 for the short check)
#   ./run.sh test       install what is missing, build into build/, run ctest (no bench)
#   ./run.sh build      install what is missing and build only
#   ./run.sh asan       build build-asan/ with ASan+UBSan and run the unit and sim tests
#   ./run.sh fuzz [s]   build build-fuzz/ with clang libFuzzer and fuzz each target s seconds
#   ./run.sh fuzz-long [n]  fuzz each target for n executions (10^7) and print a table
#                       (FUZZ_TARGETS="a b" picks targets, FUZZ_JOBS=N runs N processes each)
#   ./run.sh bench      run the bench-labelled tests
#   ./run.sh sim [args] the table in virtual time (respool-sim table) into results/sim/
#   ./run.sh deps       install the Debian packages the project needs
#   ./run.sh --help
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

PACKAGES=(cmake pkg-config make gcc libuv1-dev libssl-dev libcjson-dev
  libcmocka-dev libnghttp2-dev gnuplot-nox dnsperf dnsutils knot-dnsutils
  dnsdist clang libclang-rt-14-dev openssl valgrind python3 curl dpkg-dev)

log() { printf '[run.sh] %s\n' "$*" >&2; }

deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  log "installing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq || log "apt-get update failed; trying the install anyway"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts dnsdist as a service on install; the tests start their
  # own. Only a dnsdist installed just now is stopped: a host that already
  # ran dnsdist keeps its service.
  local p
  for p in "${missing[@]}"; do
    if [ "$p" = dnsdist ] && command -v systemctl >/dev/null 2>&1; then
      $sudo systemctl disable --now dnsdist >/dev/null 2>&1 || true
    fi
  done
}

configure_build() {
  local dir="$1"
  shift
  cmake -S "$ROOT" -B "$dir" -DRP_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
}

usage() {
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
}

# fuzz_build configures and builds build-fuzz/ and sets fuzz_targets to
# the fuzz_* targets found, or to those of FUZZ_TARGETS (names separated
# by spaces) when it is set.
fuzz_build() {
  cmake -S "$ROOT" -B build-fuzz -DCMAKE_C_COMPILER=clang -DRP_FUZZ=ON \
    -DRP_BUILD_TESTS=OFF -DRP_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    >/dev/null
  mapfile -t fuzz_targets < <(cmake --build build-fuzz --target help |
    sed -n -e 's/^\.\.\. \(fuzz_[A-Za-z0-9_]*\).*/\1/p' \
      -e 's/^\(fuzz_[A-Za-z0-9_]*\): .*/\1/p' | sort -u)
  if [ ${#fuzz_targets[@]} -eq 0 ]; then
    log "no fuzz targets found (is clang installed?)"
    exit 1
  fi
  if [ -n "${FUZZ_TARGETS:-}" ]; then
    local want t found
    for want in $FUZZ_TARGETS; do
      found=0
      for t in "${fuzz_targets[@]}"; do
        [ "$t" = "$want" ] && found=1
      done
      [ "$found" = 1 ] || { log "no fuzz target $want"; exit 2; }
    done
    read -r -a fuzz_targets <<<"$FUZZ_TARGETS"
  fi
  cmake --build build-fuzz -j "$JOBS" --target "${fuzz_targets[@]}"
}

# fuzz_scratch NAME makes build-fuzz/corpus-NAME, a fresh copy of the
# target's seed corpus, and sets fuzz_seed to the seed folder (empty when
# there is none).
fuzz_scratch() {
  local name="$1" scratch="build-fuzz/corpus-$1"
  [ -x "build-fuzz/fuzz/$name" ] || { log "missing build-fuzz/fuzz/$name"; exit 1; }
  fuzz_seed="$(find "$ROOT" -path "$ROOT/build*" -prune -o -type d \
    -path "*/fuzz/corpus/${name#fuzz_}" -print | head -n 1)"
  rm -rf "$scratch"
  mkdir -p "$scratch"
  if [ -n "$fuzz_seed" ]; then
    cp -R "$fuzz_seed"/. "$scratch"/
  fi
}

# fuzz_stat LOG KEY prints the value of libFuzzer's final "stat::KEY".
fuzz_stat() {
  sed -n "s/^stat::$2: *\([0-9]*\).*/\1/p" "$1" | tail -n 1
}

cmd="${1:-main}"
case "$cmd" in
  -h | --help | help)
    usage
    ;;
  deps)
    deps
    ;;
  build)
    deps
    configure_build build
    ;;
  test)
    deps
    configure_build build
    cd build
    ctest -LE bench --output-on-failure -j "$JOBS"
    ;;
  asan)
    deps
    configure_build build-asan -DRP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
    cd build-asan
    ASAN_OPTIONS=detect_leaks=1 ctest -L 'unit|sim' --output-on-failure -j "$JOBS"
    ;;
  fuzz)
    # Every fuzz_* target (any component) is built with clang into
    # build-fuzz/fuzz/ and runs for $secs seconds on a scratch copy of its
    # seed corpus <component>/fuzz/corpus/<target without fuzz_>/ in the
    # source tree, which is never written to. A crash, or an input that
    # runs over 10 s (-timeout), stops the script with libFuzzer's exit
    # status and leaves crash-*/timeout-* files in build-fuzz/.
    # FUZZ_TARGETS="fuzz_a fuzz_b" runs only those.
    deps
    secs="${2:-60}"
    fuzz_build
    for name in "${fuzz_targets[@]}"; do
      fuzz_scratch "$name"
      log "fuzzing $name for ${secs}s (seed: ${fuzz_seed:-none}, $(ls "build-fuzz/corpus-$name" | wc -l) inputs)"
      status=0
      (cd build-fuzz && "./fuzz/$name" -max_total_time="$secs" -timeout=10 \
        -print_final_stats=1 "corpus-$name") >"build-fuzz/$name.log" 2>&1 ||
        status=$?
      grep -E '^(stat::|Done |==[0-9]+==|SUMMARY)' "build-fuzz/$name.log" || true
      if [ "$status" -ne 0 ]; then
        log "$name FAILED (exit $status); see build-fuzz/$name.log"
        exit "$status"
      fi
      log "$name: no crash in ${secs}s"
    done
    ;;
  fuzz-long)
    # The long runs of docs/reliability.md: each target (FUZZ_TARGETS to
    # choose) runs from a scratch copy of its seed corpus until it has
    # executed $runs inputs (libFuzzer -runs), one target at a time, with
    # the flags of `fuzz`. A crash or a timeout stops that target only;
    # the next one still runs. At the end a Markdown table: executions,
    # the wall time, the mean executions per second and the crashes
    # (libFuzzer stops at the first, so 0 or 1), and the exit status is
    # 1 if any target crashed. Logs: build-fuzz/<target>.long.log.
    # FUZZ_JOBS=N runs N processes per target (libFuzzer -jobs), each
    # runs/N inputs over one shared corpus: the table sums them. A
    # stopped (SIGSTOP) fuzzer reads its pause as a timeout at -timeout.
    deps
    runs="${2:-10000000}"
    jobs="${FUZZ_JOBS:-1}"
    case "$jobs" in
      '' | *[!0-9]* | 0)
        log "FUZZ_JOBS must be a positive number of processes, not '$jobs'"
        exit 2
        ;;
    esac
    fuzz_build
    rows=()
    failed=0
    for name in "${fuzz_targets[@]}"; do
      fuzz_scratch "$name"
      log "fuzzing $name for $runs executions (seed: ${fuzz_seed:-none})"
      status=0
      t0=$(date +%s)
      if [ "$jobs" -gt 1 ]; then
        # libFuzzer's -jobs: $jobs processes at once, each running
        # runs/jobs inputs and sharing the corpus directory (what one
        # finds, the others pick up); each logs to fuzz-N.log.
        rm -rf "build-fuzz/jobs-$name"
        mkdir -p "build-fuzz/jobs-$name"
        (cd "build-fuzz/jobs-$name" && "../fuzz/$name" -jobs="$jobs" \
          -workers="$jobs" -runs="$(((runs + jobs - 1) / jobs))" \
          -timeout=10 -print_final_stats=1 "../corpus-$name") \
          >"build-fuzz/$name.long.log" 2>&1 || status=$?
        cat "build-fuzz/jobs-$name"/fuzz-*.log >>"build-fuzz/$name.long.log"
        if grep -q "^SUMMARY: \|ERROR: libFuzzer" "build-fuzz/jobs-$name"/fuzz-*.log; then
          status=1
        fi
        execs=0
        rate=0
        for f in "build-fuzz/jobs-$name"/fuzz-*.log; do
          execs=$((execs + $(fuzz_stat "$f" number_of_executed_units)))
          rate=$((rate + $(fuzz_stat "$f" average_exec_per_sec)))
        done
      else
        (cd build-fuzz && "./fuzz/$name" -runs="$runs" -timeout=10 \
          -print_final_stats=1 "corpus-$name") >"build-fuzz/$name.long.log" 2>&1 ||
          status=$?
        execs=$(fuzz_stat "build-fuzz/$name.long.log" number_of_executed_units)
        rate=$(fuzz_stat "build-fuzz/$name.long.log" average_exec_per_sec)
      fi
      t1=$(date +%s)
      crashes=0
      if [ "$status" -ne 0 ]; then
        crashes=1
        failed=1
        log "$name FAILED (exit $status); see build-fuzz/$name.long.log"
      fi
      rows+=("| \`$name\` | ${execs:-?} | $((t1 - t0)) s | ${rate:-?} | $crashes |")
      log "$name: ${execs:-?} executions in $((t1 - t0)) s, $crashes crashes"
    done
    printf '\n| target | executions | wall time | exec/s | crashes |\n'
    printf '|---|---|---|---|---|\n'
    printf '%s\n' "${rows[@]}"
    exit "$failed"
    ;;
  bench)
    deps
    configure_build build
    cd build
    ctest -L bench --output-on-failure
    ;;
  sim)
    # The table in virtual time: respool-sim table's rounds, rendered by
    # the runner (table.md, results.json, plots) in results/sim/.
    # Arguments go to respool-sim table (--rounds 3, --setup ..., --seed).
    deps
    configure_build build
    mkdir -p "$ROOT/results/sim"
    "$ROOT/build/sim/respool-sim" table --json "${@:2}" \
      >"$ROOT/results/sim/rounds.json"
    RP_TABLE_ARGV0="./run.sh sim" python3 "$ROOT/scenarios/runner.py" \
      --sim-results "$ROOT/results/sim/rounds.json" --out "$ROOT/results/sim"
    ;;
  main)
    # The scenario table (scenarios/run-table.sh, issue 7). Flags after
    # "main" go to the runner. A failed build stops here: a table made
    # with stale binaries would mislead.
    deps
    configure_build build
    if [ -x "$ROOT/scenarios/run-table.sh" ]; then
      RP_TABLE_ARGV0="./run.sh" exec "$ROOT/scenarios/run-table.sh" "${@:2}"
    fi
    log "the scenario table is not built yet (issue 7); what runs today:"
    log "  ./run.sh test    the unit and integration tests"
    log "  ./run.sh bench   the benches"
    log "  build/fake-resolvers/fakeres --help"
    ;;
  *)
    # Runner flags straight after ./run.sh (./run.sh --gate, ./run.sh
    # --setup three-limited --column dnstt-pool, ...): the main job.
    if [ "${cmd#-}" != "$cmd" ] && [ -x "$ROOT/scenarios/run-table.sh" ]; then
      deps
      configure_build build
      RP_TABLE_ARGV0="./run.sh" exec "$ROOT/scenarios/run-table.sh" "$@"
    fi
    log "unknown command: $cmd"
    usage
    exit 2
    ;;
esac
