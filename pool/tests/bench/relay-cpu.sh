#!/usr/bin/env bash
# relay-cpu.sh: CPU time respool spends per relayed query, in front of
# three unlimited fakeres resolvers, with dnsperf offering a fixed number
# of queries. CPU per query is steadier than q/s on a shared machine.
#
# Environment: QUERIES (default 200000) per run, OUTSTANDING (200; the
# load is as fast as respool answers), QPS (0 = no rate limit, else
# dnsperf -Q), ROUNDS (3), BINS (space-separated respool binaries to
# compare, interleaved round by round; default the built one; BIN+KEY=VAL
# adds "KEY": VAL to that run's config, e.g. respool+duplicate=2).
# Prints one line per run and the median per binary: ns of CPU (user +
# system, from /proc/PID/schedstat) per answered query, and q/s.
. "$(dirname "$0")/../net/lib.sh"
need dnsperf python3 "$RESPOOL_BIN" "$FAKERES_BIN"

QUERIES=${QUERIES:-200000}
OUTSTANDING=${OUTSTANDING:-200}
QPS=${QPS:-0}
ROUNDS=${ROUNDS:-3}
BINS=${BINS:-$RESPOOL_BIN}

start_fakeres fr -r name=a -r name=b -r name=c --answer
A=$(fakeres_udp fr 0)
B=$(fakeres_udp fr 1)
C=$(fakeres_udp fr 2)
echo '{"duplicate": 1}' >"$WORK/pool.json"
dnsperf_data "$WORK/q.txt" 100000 A

# cpu_ns PID: time on a CPU, all threads; wait_ns PID: time runnable
# but waiting for a CPU (ns, /proc/PID/task/*/schedstat).
cpu_ns() {
  cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}'
}
wait_ns() {
  cat /proc/"$1"/task/*/schedstat | awk '{s += $2} END {printf "%.0f", s}'
}

RATE=()
if [ "$QPS" != 0 ]; then
  RATE=(-Q "$QPS")
fi
: >"$WORK/results"
for round in $(seq 1 "$ROUNDS"); do
  i=0
  for bin in $BINS; do
    i=$((i + 1))
    cfg="$WORK/pool.json"
    if [ "${bin#*+}" != "$bin" ]; then
      kv=${bin#*+}
      cfg="$WORK/pool$i.json"
      echo "{\"duplicate\": 1, \"${kv%%=*}\": ${kv#*=}}" >"$cfg"
    fi
    RESPOOL_BIN=${bin%%+*} start_respool "rp$i" -r "$A" -r "$B" -r "$C" \
      --config "$cfg" --stats-json "$WORK/stats$i.json" --stats 1s
    wait_json "$WORK/stats$i.json" 'j["pool"]["nup"] >= 3' 10 >/dev/null ||
      fail "respool: resolvers not added"
    c0=$(cpu_ns "$RP_PID")
    w0=$(wait_ns "$RP_PID")
    t0=$(date +%s%N)
    dnsperf -s "$RP_HOST" -p "$RP_PORT" -d "$WORK/q.txt" -t 2 \
      -q "$OUTSTANDING" "${RATE[@]}" -n $(((QUERIES + 99999) / 100000)) \
      >"$WORK/perf$i" 2>&1
    c1=$(cpu_ns "$RP_PID")
    w1=$(wait_ns "$RP_PID")
    t1=$(date +%s%N)
    stop_respool "rp$i"
    done_q=$(sed -n 's/.*Queries completed: *\([0-9]*\).*/\1/p' "$WORK/perf$i")
    qps=$(sed -n 's/.*Queries per second: *\([0-9.]*\).*/\1/p' "$WORK/perf$i")
    echo "$i $(((c1 - c0) / ${done_q:-1})) ${qps:-0} $(((c1 - c0) * 100 / (t1 - t0))) $(((w1 - w0) * 100 / (t1 - t0)))" |
      tee -a "$WORK/results" |
      awk -v b="$bin" '{printf "run %s: %s ns/query, %s q/s, on CPU %s%%, waiting for a CPU %s%%\n", b, $2, $3, $4, $5}'
  done
done
python3 - "$WORK/results" $BINS <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for i, b in enumerate(sys.argv[2:], 1):
    ns = [int(r[1]) for r in rows if r[0] == str(i)]
    q = [float(r[2]) for r in rows if r[0] == str(i)]
    print("median %s: %.0f ns/query, %.0f q/s (%d runs)"
          % (b, statistics.median(ns), statistics.median(q), len(ns)))
PY
