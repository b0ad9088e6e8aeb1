#!/usr/bin/env bash
# run.sh: the front door.
#   ./run.sh            the main job: the scenario table (QUICK=1 for the short check)
#   ./run.sh test       install what is missing, build into build/, run ctest (no bench)
#   ./run.sh build      install what is missing and build only
#   ./run.sh asan       build build-asan/ with ASan+UBSan and run the unit and sim tests
#   ./run.sh fuzz [s]   build build-fuzz/ with clang libFuzzer and fuzz each target s seconds
#   ./run.sh bench      run the bench-labelled tests
#   ./run.sh deps       install the Debian packages the project needs
#   ./run.sh --help
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

PACKAGES=(cmake pkg-config make gcc libuv1-dev libssl-dev libcjson-dev
  libcmocka-dev libnghttp2-dev gnuplot-nox dnsperf dnsutils knot-dnsutils
  dnsdist clang libclang-rt-14-dev openssl valgrind python3)

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
  # Debian starts dnsdist as a service on install; the tests start their own.
  if command -v systemctl >/dev/null 2>&1; then
    $sudo systemctl disable --now dnsdist >/dev/null 2>&1 || true
  fi
}

configure_build() {
  local dir="$1"
  shift
  cmake -S "$ROOT" -B "$dir" -DRP_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
}

usage() {
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
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
    ctest -LE bench --output-on-failure -j "$JOBS" --repeat until-pass:2
    ;;
  asan)
    deps
    configure_build build-asan -DRP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
    cd build-asan
    ASAN_OPTIONS=detect_leaks=1 ctest -L 'unit|sim' --output-on-failure -j "$JOBS"
    ;;
  fuzz)
    deps
    secs="${2:-60}"
    CC=clang configure_build build-fuzz -DRP_FUZZ=ON -DRP_BUILD_TESTS=OFF
    for f in build-fuzz/fuzz/fuzz_*; do
      [ -x "$f" ] || continue
      name="$(basename "$f")"
      corpus="$ROOT/fuzz/corpus/${name#fuzz_}"
      mkdir -p "build-fuzz/corpus-$name"
      log "fuzzing $name for ${secs}s"
      "$f" -max_total_time="$secs" -print_final_stats=1 \
        "build-fuzz/corpus-$name" "$corpus"
    done
    ;;
  bench)
    deps
    configure_build build
    cd build
    ctest -L bench --output-on-failure
    ;;
  main)
    deps
    configure_build build
    if [ -x "$ROOT/scenarios/run-table.sh" ]; then
      exec "$ROOT/scenarios/run-table.sh" "${@:2}"
    fi
    log "the scenario table is not built yet (issue 7); what runs today:"
    log "  ./run.sh test    the unit and integration tests"
    log "  ./run.sh bench   the benches"
    log "  build/fake-resolvers/fakeres --help"
    ;;
  *)
    if [ -x "$ROOT/scenarios/run-table.sh" ]; then
      exec "$ROOT/scenarios/run-table.sh" "$@"
    fi
    log "unknown command: $cmd"
    usage
    exit 2
    ;;
esac
