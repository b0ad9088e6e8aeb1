#!/usr/bin/env bash
# fakeres-vs-dnsdist.sh: queries/s of an unlimited `fakeres --answer`
# under dnsperf, side by side with dnsdist 1.7 answering every query
# itself (SpoofAction) on another loopback port, in the same run.
#
#   RP_BUILD_DIR=build fake-resolvers/bench/fakeres-vs-dnsdist.sh
#   DURATION=10 ROUNDS=2 CLIENTS=10 MAXQPS=200000 (environment, defaults)
#
# Each round runs dnsperf for DURATION s against fakeres, then against
# dnsdist; the script prints each run and the ratio of the medians. It
# needs dnsperf and dnsdist; without dnsdist it measures fakeres alone.
set -u

BUILD="${RP_BUILD_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}"
FAKERES="$BUILD/fake-resolvers/fakeres"
DURATION="${DURATION:-10}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-10}"
MAXQPS="${MAXQPS:-200000}"
TMP="$(mktemp -d /tmp/fr-bench.XXXXXX)"
PIDS=""

cleanup() {
  local p
  for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 0.3
  for p in $PIDS; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

log() { printf '[bench] %s\n' "$*" >&2; }

if [ ! -x "$FAKERES" ]; then
  log "no $FAKERES (build first, or set RP_BUILD_DIR)"
  exit 1
fi
for i in $(seq 1000); do echo "q$i.bench.example A"; done >"$TMP/queries"

# A guard lifetime: rounds x 2 runs x (duration + slack).
GUARD=$((ROUNDS * 2 * (DURATION + 5) + 30))

"$FAKERES" --answer -r name=bench --lifetime "${GUARD}s" >"$TMP/fakeres.out" &
PIDS="$PIDS $!"
FR_PID=$!
for i in $(seq 100); do
  grep -q resolvers "$TMP/fakeres.out" 2>/dev/null && break
  sleep 0.05
done
FR_PORT=$(sed -n 's/.*"udp":"127.0.0.1:\([0-9]*\)".*/\1/p' "$TMP/fakeres.out" | head -n 1)

DD_PORT=""
if command -v dnsdist >/dev/null 2>&1; then
  DD_PORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat >"$TMP/dnsdist.conf" <<CONF
setLocal("127.0.0.1:$DD_PORT")
setSecurityPollSuffix("")
addAction(AllRule(), SpoofAction("127.0.0.1"))
CONF
  dnsdist -C "$TMP/dnsdist.conf" --supervised --disable-syslog \
    >"$TMP/dnsdist.log" 2>&1 &
  DD_PID=$!
  PIDS="$PIDS $DD_PID"
  for i in $(seq 100); do
    dig +short +tries=1 +time=1 @127.0.0.1 -p "$DD_PORT" probe.bench.example A \
      2>/dev/null | grep -q 127.0.0.1 && break
    sleep 0.1
  done
  DD_VERSION=$(dnsdist --version 2>/dev/null | head -n 1)
else
  log "dnsdist not installed: measuring fakeres alone"
fi

# cpu_ticks PID: user + system clock ticks of a process (all threads).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
TICK_HZ=$(getconf CLK_TCK)

run() { # run NAME PORT PID: one dnsperf run, prints "q/s cpu-us-per-query"
  local t0 t1 qps lost ndone
  t0=$(cpu_ticks "$3")
  dnsperf -s 127.0.0.1 -p "$2" -d "$TMP/queries" -l "$DURATION" -c "$CLIENTS" \
    -Q "$MAXQPS" >"$TMP/perf.$1" 2>&1
  t1=$(cpu_ticks "$3")
  qps=$(sed -n 's/.*Queries per second: *\([0-9.]*\).*/\1/p' "$TMP/perf.$1")
  lost=$(sed -n 's/.*Queries lost: *\([0-9]*\).*/\1/p' "$TMP/perf.$1")
  ndone=$(sed -n 's/.*Queries completed: *\([0-9]*\).*/\1/p' "$TMP/perf.$1")
  local us
  us=$(awk -v t=$((t1 - t0)) -v hz="$TICK_HZ" -v n="${ndone:-0}" \
    'BEGIN { printf "%.2f", (n > 0 ? t * 1e6 / hz / n : 0) }')
  log "$1: ${qps:-?} q/s (lost ${lost:-?}), responder CPU ${us} us/query"
  echo "${qps:-0}:$us"
}

FR_RUNS=""
DD_RUNS=""
for _ in $(seq "$ROUNDS"); do
  FR_RUNS="$FR_RUNS $(run fakeres "$FR_PORT" "$FR_PID")"
  if [ -n "$DD_PORT" ]; then
    DD_RUNS="$DD_RUNS $(run dnsdist "$DD_PORT" "$DD_PID")"
  fi
done

kill -TERM "$FR_PID" 2>/dev/null
wait "$FR_PID" 2>/dev/null
log "fakeres counts: $(tail -n 1 "$TMP/fakeres.out")"

python3 - "$FR_RUNS" "$DD_RUNS" "${DD_VERSION:-none}" "$DURATION" "$CLIENTS" <<'PY'
import statistics, sys
def parse(words):
    runs = [tuple(float(v) for v in w.split(":")) for w in words.split()]
    return [r[0] for r in runs], [r[1] for r in runs]
fr, fr_cpu = parse(sys.argv[1])
dd, dd_cpu = parse(sys.argv[2])
print("fakeres vs dnsdist, dnsperf -l %s -c %s, %d round(s) each, interleaved"
      % (sys.argv[4], sys.argv[5], len(fr)))
print("| responder | runs (q/s) | median q/s | responder CPU us/query (median) |")
print("|---|---|---|---|")
print("| fakeres --answer | %s | %.0f | %.2f |" % (" ".join("%.0f" % x for x in fr),
      statistics.median(fr), statistics.median(fr_cpu)))
if dd:
    name = sys.argv[3].split(" (")[0]
    print("| %s SpoofAction | %s | %.0f | %.2f |" % (name, " ".join("%.0f" % x for x in dd),
          statistics.median(dd), statistics.median(dd_cpu)))
    print("q/s ratio fakeres / dnsdist = %.2f; CPU per query ratio = %.2f"
          % (statistics.median(fr) / statistics.median(dd),
             statistics.median(fr_cpu) / statistics.median(dd_cpu)))
PY
