#!/usr/bin/env bash
# relay-vs-dnsdist.sh: relay q/s and added latency of respool against
# dnsdist (policy leastOutstanding) in front of the same three unlimited
# fakeres resolvers, measured in one run and reported as ratios.
#
#   relay q/s:      dnsperf with many queries outstanding (-q), -l SECS
#   added latency:  mean latency at a light load (LIGHT_QPS) minus the
#                   mean latency straight to one resolver
#
# Environment: SECS (default 10), LIGHT_QPS (2000), OUTSTANDING (200),
# DUPLICATE (1: one send per query, like dnsdist; 2 is the CLI's default
# and doubles the queries the resolvers see), ROUNDS (3: every figure is
# measured ROUNDS times, respool and dnsdist taking turns to go first;
# the medians are reported, the q/s ratio as the median of the rounds').
# Prints a Markdown table and one JSON line; exits 0 when it measured
# (the targets are reported, not enforced: machines are noisy).
. "$(dirname "$0")/../net/lib.sh"
need dnsperf dnsdist python3 "$RESPOOL_BIN" "$FAKERES_BIN"

SECS=${SECS:-10}
LIGHT_QPS=${LIGHT_QPS:-2000}
OUTSTANDING=${OUTSTANDING:-200}
DUPLICATE=${DUPLICATE:-1}
ROUNDS=${ROUNDS:-3}

start_fakeres fr -r name=a -r name=b -r name=c --answer
A=$(fakeres_udp fr 0)
B=$(fakeres_udp fr 1)
C=$(fakeres_udp fr 2)

echo "{\"duplicate\": $DUPLICATE}" >"$WORK/pool.json"
start_respool rp -r "$A" -r "$B" -r "$C" --config "$WORK/pool.json" \
  --stats-json "$WORK/stats.json" --stats 1s
wait_json "$WORK/stats.json" 'j["pool"]["nup"] >= 3' 10 >/dev/null ||
  fail "respool: resolvers not added"

DD_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$WORK/dnsdist.conf" <<CONF
setLocal("127.0.0.1:$DD_PORT")
newServer({address="$A"})
newServer({address="$B"})
newServer({address="$C"})
setServerPolicy(leastOutstanding)
CONF
dnsdist -C "$WORK/dnsdist.conf" --supervised --disable-syslog \
  >"$WORK/dnsdist.out" 2>&1 &
DD_PID=$!
PIDS="$PIDS $DD_PID"
for i in $(seq 1 50); do
  dig +short +tries=1 +time=1 @127.0.0.1 -p "$DD_PORT" up.example A 2>/dev/null |
    grep -q 127.0.0.1 && break
  sleep 0.2
done

dnsperf_data "$WORK/q.txt" 100000 A

# perf NAME HOST PORT ARGS...: runs dnsperf, prints "qps latency_s".
perf() {
  local name=$1 host=$2 port=$3
  shift 3
  dnsperf -s "$host" -p "$port" -d "$WORK/q.txt" -t 2 "$@" \
    >"$WORK/$name.perf" 2>&1
  local qps lat
  qps=$(sed -n 's/.*Queries per second: *\([0-9.]*\).*/\1/p' "$WORK/$name.perf")
  lat=$(sed -n 's/.*Average Latency (s): *\([0-9.]*\).*/\1/p' "$WORK/$name.perf")
  echo "${qps:-0} ${lat:-0}"
}

RP_H=$RP_HOST
RP_P=$RP_PORT
# Rounds alternate which relay goes first; each round's ratio compares
# runs seconds apart, and the medians of the rounds are reported.
: >"$WORK/rounds"
for round in $(seq 1 "$ROUNDS"); do
  read -r d_qps d_lat < <(perf direct "${A%:*}" "${A##*:}" -Q "$LIGHT_QPS" -l "$SECS")
  if [ $((round % 2)) = 1 ]; then
    read -r r_qps_l r_lat < <(perf rp_light "$RP_H" "$RP_P" -Q "$LIGHT_QPS" -l "$SECS")
    read -r x_qps_l x_lat < <(perf dd_light 127.0.0.1 "$DD_PORT" -Q "$LIGHT_QPS" -l "$SECS")
    read -r r_qps r_lat_h < <(perf rp_max "$RP_H" "$RP_P" -q "$OUTSTANDING" -l "$SECS")
    read -r x_qps x_lat_h < <(perf dd_max 127.0.0.1 "$DD_PORT" -q "$OUTSTANDING" -l "$SECS")
  else
    read -r x_qps_l x_lat < <(perf dd_light 127.0.0.1 "$DD_PORT" -Q "$LIGHT_QPS" -l "$SECS")
    read -r r_qps_l r_lat < <(perf rp_light "$RP_H" "$RP_P" -Q "$LIGHT_QPS" -l "$SECS")
    read -r x_qps x_lat_h < <(perf dd_max 127.0.0.1 "$DD_PORT" -q "$OUTSTANDING" -l "$SECS")
    read -r r_qps r_lat_h < <(perf rp_max "$RP_H" "$RP_P" -q "$OUTSTANDING" -l "$SECS")
  fi
  echo "$d_lat $r_lat $x_lat $r_qps $x_qps $r_qps_l $x_qps_l" >>"$WORK/rounds"
  note "round $round: respool $r_qps q/s, dnsdist $x_qps q/s"
done

note "respool duplicate=$DUPLICATE; ${SECS}s per run; light load ${LIGHT_QPS} q/s; ${OUTSTANDING} outstanding; $ROUNDS rounds (medians)"
python3 - "$WORK/rounds" <<'PY'
import json, statistics, sys
rows = [[float(v) for v in l.split()] for l in open(sys.argv[1]) if l.strip()]
med = statistics.median
def ratio(a, b):
    return a / b if b > 0 else float("nan")
r_adds = [(r - d) * 1e6 for d, r, x, *_ in rows]
x_adds = [(x - d) * 1e6 for d, r, x, *_ in rows]
rqs = [row[3] for row in rows]
xqs = [row[4] for row in rows]
ratio_qps = med([ratio(a, b) for a, b in zip(rqs, xqs)])
# Added latency is a small difference of two noisy means: ratio of the
# medians.
ratio_lat = ratio(med(r_adds), med(x_adds))
d = med([row[0] for row in rows])
print("| relay | max q/s | added latency (us) at light load |")
print("|---|---|---|")
print("| respool | %.0f | %.1f |" % (med(rqs), med(r_adds)))
print("| dnsdist leastOutstanding | %.0f | %.1f |" % (med(xqs), med(x_adds)))
print("| ratio respool/dnsdist | %.2f | %.2f |" % (ratio_qps, ratio_lat))
print(json.dumps({"respool_qps": med(rqs), "dnsdist_qps": med(xqs),
                  "qps_ratio": ratio_qps,
                  "direct_latency_us": d * 1e6,
                  "respool_added_latency_us": med(r_adds),
                  "dnsdist_added_latency_us": med(x_adds),
                  "latency_ratio": ratio_lat,
                  "rounds": len(rows),
                  "light_qps": [med([row[5] for row in rows]),
                                med([row[6] for row in rows])]}))
PY
stop_respool rp
echo ok
