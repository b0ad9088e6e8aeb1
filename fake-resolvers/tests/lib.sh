# shellcheck shell=bash
# lib.sh: helpers for the loopback tests of fakeres (sourced, bash).
#
# Each test script defines a function `attempt` that starts its fakeres
# processes, drives them and checks counts, returning non-zero on a failed
# check; `fr_main` runs it once (no retry: a check that fails on a
# loaded machine gets an honest margin, not a second try). Every fakeres is started with --lifetime as a guard,
# and the shared exit trap (tests/lib/lib.sh, which also gives the work
# directory and the process stop) kills whatever is still running.

if [ -z "${RP_BUILD_DIR:-}" ]; then
  echo "RP_BUILD_DIR is not set (run through ctest)" >&2
  exit 2
fi
# shellcheck source=../../tests/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/lib.sh"
FAKERES="$RP_BUILD_DIR/fake-resolvers/fakeres"
rp_work_init fr-test
FR_TMP=$RP_WORK
# FR_GUARD is the --lifetime of every fakeres: under the ctest timeout.
FR_GUARD="${FR_GUARD:-45s}"

fr_log() { rp_log "$@"; }

# fr_start NAME ARGS...: start fakeres with ARGS, stdout in $FR_TMP/NAME.out;
# wait for its JSON line (5 s at most).
fr_start() {
  local name=$1
  shift
  "$FAKERES" --lifetime "$FR_GUARD" "$@" >"$FR_TMP/$name.out" \
    2>"$FR_TMP/$name.err" &
  local pid=$!
  rp_track "$pid"
  echo "$pid" >"$FR_TMP/$name.pid"
  local _
  for _ in $(seq 100); do
    if grep -q '"resolvers"' "$FR_TMP/$name.out" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      fr_log "fakeres $name exited early: $(cat "$FR_TMP/$name.err")"
      return 1
    fi
    sleep 0.05
  done
  fr_log "fakeres $name printed no address line"
  return 1
}

# fr_addr NAME RESOLVER [udp|tcp]: print "ip port" of a resolver.
fr_addr() {
  python3 - "$FR_TMP/$1.out" "$2" "${3:-udp}" <<'EOF'
import json, sys
line = open(sys.argv[1]).readline()
for r in json.loads(line)["resolvers"]:
    if r["name"] == sys.argv[2]:
        ip, port = r[sys.argv[3]].rsplit(":", 1)
        print(ip, port)
        break
else:
    sys.exit("no resolver " + sys.argv[2])
EOF
}

# fr_stop NAME: SIGTERM, wait (5 s at most), and check the exit status and
# the counts line.
fr_stop() {
  local pid
  pid=$(cat "$FR_TMP/$1.pid")
  local rc=0
  rp_stop_pid "$pid" || rc=$?
  if [ "$rc" -eq 137 ]; then
    fr_log "fakeres $1 did not exit on SIGTERM"
    return 1
  fi
  if [ "$rc" -ne 0 ]; then
    fr_log "fakeres $1 exited with $rc: $(cat "$FR_TMP/$1.err")"
    return 1
  fi
  if [ "$(grep -c '"resolvers"' "$FR_TMP/$1.out")" -ne 2 ]; then
    fr_log "fakeres $1 printed no counts line"
    return 1
  fi
  fr_log "$1 counts: $(tail -n 1 "$FR_TMP/$1.out")"
}

# fr_count NAME RESOLVER FIELD: a counter from the exit line.
fr_count() {
  python3 - "$FR_TMP/$1.out" "$2" "$3" <<'EOF'
import json, sys
line = open(sys.argv[1]).read().splitlines()[-1]
for r in json.loads(line)["resolvers"]:
    if r["name"] == sys.argv[2]:
        print(r[sys.argv[3]])
        break
else:
    sys.exit("no resolver " + sys.argv[2])
EOF
}

# perf_field FILE LABEL: the first number after "LABEL:" in dnsperf output
# (e.g. "Queries sent"), or after the rcode name for "NOERROR"/"REFUSED"/
# "SERVFAIL" (0 when absent).
perf_field() {
  python3 - "$1" "$2" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
label = sys.argv[2]
if label.isupper():
    m = re.search(r"Response codes:.*?\b" + label + r" (\d+)", text)
else:
    m = re.search(re.escape(label) + r":\s+([\d.]+)", text)
print(m.group(1) if m else 0)
EOF
}

# perf_start OUT NAME RESOLVER ARGS...: dnsperf with ARGS in the
# background against RESOLVER of fakeres NAME over UDP, with the queries in
# $FR_TMP/queries; stdout and stderr in $FR_TMP/OUT. $! is its pid.
perf_start() {
  local out=$1 addr
  addr=$(fr_addr "$2" "$3")
  shift 3
  # shellcheck disable=SC2086 # "ip port" splits on purpose
  set -- $addr "$@"
  dnsperf -s "$1" -p "$2" -d "$FR_TMP/queries" "${@:3}" >"$FR_TMP/$out" 2>&1 &
}

# perf_latencies FILE: "median count min max" of the NOERROR latencies of
# dnsperf -v output, in ms ("0 0 0 0" when none).
perf_latencies() {
  python3 - "$1" <<'EOF'
import statistics, sys
lat = [float(l.split()[-1]) * 1000 for l in open(sys.argv[1])
       if l.startswith("> NOERROR")]
if not lat:
    print("0 0 0 0")
else:
    print("%.3f %d %.3f %.3f" % (statistics.median(lat), len(lat), min(lat), max(lat)))
EOF
}

# check WHAT VALUE LO HI: pass if LO <= VALUE <= HI (numbers, decimals ok).
check() {
  if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }'; then
    fr_log "ok: $1 = $2 (in $3 .. $4)"
    return 0
  fi
  fr_log "FAIL: $1 = $2, want $3 .. $4"
  return 1
}

# fr_stop_all: stop every fakeres still running from this attempt.
fr_stop_all() {
  local f
  for f in "$FR_TMP"/*.pid; do
    [ -e "$f" ] || continue
    local pid
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -f "$f"
  done
}

# fr_main: run `attempt` once; PASS or FAILED.
fr_main() {
  if attempt; then
    fr_log "PASS"
    exit 0
  fi
  fr_stop_all
  fr_log "FAILED"
  exit 1
}
