# lib.sh: helpers of the runtime's integration scripts (sourced). The
# common parts (directories, work dir, exit trap, process kill, waiting
# for a line, ports) are the shared tests/lib/lib.sh; this file keeps what
# is the runtime's: respool, fakeres, tinyres and dnsperf helpers.
#
# Environment: RP_BUILD_DIR and RP_SOURCE_DIR (set by ctest), or
# RESPOOL_BIN / FAKERES_BIN to point at other binaries. Every process a
# script starts is recorded in PIDS and killed by its own pid at exit.

# shellcheck source=../../../tests/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../../tests/lib/lib.sh"

RESPOOL_BIN=${RESPOOL_BIN:-$RP_BUILD_DIR/pool/cli/respool}
FAKERES_BIN=${FAKERES_BIN:-$RP_BUILD_DIR/fake-resolvers/fakeres}
TINYRES=${TINYRES:-$RP_SOURCE_DIR/pool/tests/net/tinyres.py}

rp_work_init rp-net-test
WORK=$RP_WORK
PIDS=""

# net_track_pids hands the scripts' PIDS to the shared exit trap.
net_track_pids() {
  # shellcheck disable=SC2086 # one pid a word
  rp_track $PIDS
}
rp_on_exit net_track_pids

fail() { rp_fail "$@"; }

note() {
  echo "# $*" >&2
}

# need CMD...: fail when a tool is missing (it is a dependency, not an
# option: run.sh deps installs it).
need() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || [ -x "$c" ] || fail "missing tool: $c"
  done
}

# wait_line FILE [ERRFILE]: waits up to 10 s for FILE to have a first
# line; on failure names the last lines of ERRFILE.
wait_line() {
  rp_wait_line "$1" || fail "no output in $1${2:+: $(tail -3 "$2" 2>/dev/null)}"
}

# wait_log FILE TEXT WHAT: waits up to 5 s for TEXT in FILE (a log);
# fails with "WHAT: " and the file.
wait_log() {
  local i
  for i in $(seq 1 50); do
    grep -q "$2" "$1" && return 0
    sleep 0.1
  done
  fail "$3: $(cat "$1")"
}

# free_low_port: rp_free_low_port (tests/lib/lib.sh). A test that stops a
# server and starts it again on the same port needs one: an ephemeral
# port, once freed, may be taken by any socket the pool opens meanwhile
# (it rotates its upstream source ports).
free_low_port() { rp_free_low_port; }

# start_fakeres NAME ARGS...: runs fakeres, sets FR_<NAME>_PID and writes
# its address line to $WORK/NAME.out.
start_fakeres() {
  local name=$1
  shift
  "$FAKERES_BIN" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local pid=$!
  PIDS="$PIDS $pid"
  eval "FR_${name}_PID=$pid"
  wait_line "$WORK/$name.out" "$WORK/$name.err"
}

# fakeres_udp NAME INDEX: prints the UDP address of resolver INDEX.
fakeres_udp() {
  head -1 "$WORK/$1.out" | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["resolvers"][int(sys.argv[1])]["udp"])' "$2"
}

# stop_pid PID: SIGTERM and wait (SIGKILL after 5 s).
stop_pid() { rp_stop_pid "$1"; }

# stop_respool NAME: SIGTERM respool, wait, and fail unless it exited 0
# without a sanitizer report in $WORK/NAME.err.
stop_respool() {
  kill -TERM "$RP_PID" 2>/dev/null
  wait "$RP_PID"
  local rc=$?
  [ $rc -eq 0 ] || fail "respool exited $rc: $(tail -5 "$WORK/$1.err")"
  if grep -q "Sanitizer" "$WORK/$1.err"; then
    fail "sanitizer report: $(cat "$WORK/$1.err")"
  fi
}

# start_respool NAME ARGS...: runs respool, sets RP_PID, RP_HOST and
# RP_PORT from its first stdout line.
start_respool() {
  local name=$1
  shift
  "$RESPOOL_BIN" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  RP_PID=$!
  PIDS="$PIDS $RP_PID"
  wait_line "$WORK/$name.out"
  local addr
  addr=$(head -1 "$WORK/$name.out")
  RP_HOST=${addr%:*}
  RP_PORT=${addr##*:}
}

# json_get FILE EXPR: evaluates a Python expression on the JSON in FILE
# (bound to j).
json_get() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# wait_json FILE EXPR TIMEOUT_S: waits until EXPR (Python, j = JSON of
# FILE) is true; prints the seconds it took.
wait_json() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys, time
path, expr, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
t0 = time.monotonic()
while time.monotonic() - t0 < limit:
    try:
        j = json.load(open(path))
        if eval(expr):
            print("%.2f" % (time.monotonic() - t0))
            sys.exit(0)
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        pass
    time.sleep(0.05)
print("timeout")
sys.exit(1)
EOF
}

# dnsperf_data FILE N TYPE: writes N unique query names.
dnsperf_data() {
  python3 -c 'import sys
n=int(sys.argv[2]); t=sys.argv[3]
with open(sys.argv[1],"w") as f:
    for i in range(n):
        f.write("q%d.perf.example %s\n" % (i, t))' "$1" "$2" "$3"
}

# dnsperf_rcode OUT RCODE: prints the count of RCODE in dnsperf output.
dnsperf_rcode() {
  python3 - "$1" "$2" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"Response codes:\s*(.*)", text)
n = 0
if m:
    for name, cnt in re.findall(r"([A-Z]+) (\d+)", m.group(1)):
        if name == sys.argv[2]:
            n = int(cnt)
print(n)
EOF
}

# dnsperf_field OUT NAME: prints "Queries sent", "Queries lost", ...
dnsperf_field() {
  sed -n "s/^ *$2: *\([0-9]*\).*/\1/p" "$1" | head -1
}
