#!/usr/bin/env bash
# relay-vs-dnsdist.sh: relay q/s and added latency of respool against
# dnsdist (policy leastOutstanding) in front of the same three unlimited
# fakeres resolvers, measured in one run and reported as ratios.
#
#   relay q/s:      dnsperf with many queries outstanding (-q), -l SECS
#   added latency:  mean latency at a light load (LIGHT_QPS) minus the
#                   mean latency straight to one resolver
#
#   CPU per query:  CPU time (user + system, /proc/PID/schedstat) each
#                   relay used per answered query in the max q/s runs
#   copies:         respool's copies per query after the first runs (the
#                   CLI defaults judge a copy by what its answer carried:
#                   over plain A-record resolvers none is worth sending)
#
# Environment: SECS (default 10), LIGHT_QPS (2000), OUTSTANDING (200),
# CLIENTS (4: dnsperf -c, client sockets),
# DUPLICATE (empty: the CLI's defaults, no setting changed; 1 for one send
# per query like dnsdist), ROUNDS (3: every figure is measured ROUNDS
# times, respool and dnsdist taking turns to go first; the medians are
# reported, the ratios as the medians of the rounds').
# Prints a Markdown table and one JSON line; exits 0 when it measured
# (the targets are reported, not enforced: machines are noisy).
. "$(dirname "$0")/../net/lib.sh"
need dnsperf dnsdist python3 "$RESPOOL_BIN" "$FAKERES_BIN"

SECS=${SECS:-10}
LIGHT_QPS=${LIGHT_QPS:-2000}
OUTSTANDING=${OUTSTANDING:-200}
CLIENTS=${CLIENTS:-4}
DUPLICATE=${DUPLICATE:-}
ROUNDS=${ROUNDS:-3}

start_fakeres fr -r name=a -r name=b -r name=c --answer
A=$(fakeres_udp fr 0)
B=$(fakeres_udp fr 1)
C=$(fakeres_udp fr 2)

CFG=()
if [ -n "$DUPLICATE" ]; then
  echo "{\"duplicate\": $DUPLICATE}" >"$WORK/pool.json"
  CFG=(--config "$WORK/pool.json")
fi
start_respool rp -r "$A" -r "$B" -r "$C" "${CFG[@]}" \
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

# cpu_ns PID: time on a CPU, all threads, ns (/proc/PID/task/*/schedstat).
cpu_ns() {
  cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'
}

# perf NAME HOST PORT [PID] ARGS...: runs dnsperf, prints "qps latency_s
# cpu_ns_per_query" (the CPU of PID over the run per answered query; 0
# without a PID: pass - for none).
perf() {
  local name=$1 host=$2 port=$3 pid=$4
  shift 4
  local c0=0 c1=0
  [ "$pid" != - ] && c0=$(cpu_ns "$pid")
  dnsperf -s "$host" -p "$port" -d "$WORK/q.txt" -t 2 -c "$CLIENTS" "$@" \
    >"$WORK/$name.perf" 2>&1
  [ "$pid" != - ] && c1=$(cpu_ns "$pid")
  local qps lat done
  qps=$(sed -n 's/.*Queries per second: *\([0-9.]*\).*/\1/p' "$WORK/$name.perf")
  lat=$(sed -n 's/.*Average Latency (s): *\([0-9.]*\).*/\1/p' "$WORK/$name.perf")
  done=$(sed -n 's/.*Queries completed: *\([0-9]*\).*/\1/p' "$WORK/$name.perf")
  python3 -c "import sys; q=float(sys.argv[3] or 0); print(sys.argv[1] or 0, sys.argv[2] or 0, (float(sys.argv[5]) - float(sys.argv[4])) / q if q else 0)" \
    "$qps" "$lat" "$done" "$c0" "$c1"
}

RP_H=$RP_HOST
RP_P=$RP_PORT
# Rounds alternate which relay goes first; each round's ratio compares
# runs seconds apart, and the medians of the rounds are reported.
: >"$WORK/rounds"
for round in $(seq 1 "$ROUNDS"); do
  read -r d_qps d_lat _ < <(perf direct "${A%:*}" "${A##*:}" - -Q "$LIGHT_QPS" -l "$SECS")
  if [ $((round % 2)) = 1 ]; then
    read -r r_qps_l r_lat _ < <(perf rp_light "$RP_H" "$RP_P" - -Q "$LIGHT_QPS" -l "$SECS")
    read -r x_qps_l x_lat _ < <(perf dd_light 127.0.0.1 "$DD_PORT" - -Q "$LIGHT_QPS" -l "$SECS")
    read -r r_qps r_lat_h r_cpu < <(perf rp_max "$RP_H" "$RP_P" "$RP_PID" -q "$OUTSTANDING" -l "$SECS")
    read -r x_qps x_lat_h x_cpu < <(perf dd_max 127.0.0.1 "$DD_PORT" "$DD_PID" -q "$OUTSTANDING" -l "$SECS")
  else
    read -r x_qps_l x_lat _ < <(perf dd_light 127.0.0.1 "$DD_PORT" - -Q "$LIGHT_QPS" -l "$SECS")
    read -r r_qps_l r_lat _ < <(perf rp_light "$RP_H" "$RP_P" - -Q "$LIGHT_QPS" -l "$SECS")
    read -r x_qps x_lat_h x_cpu < <(perf dd_max 127.0.0.1 "$DD_PORT" "$DD_PID" -q "$OUTSTANDING" -l "$SECS")
    read -r r_qps r_lat_h r_cpu < <(perf rp_max "$RP_H" "$RP_P" "$RP_PID" -q "$OUTSTANDING" -l "$SECS")
  fi
  echo "$d_lat $r_lat $x_lat $r_qps $x_qps $r_qps_l $x_qps_l $r_cpu $x_cpu" >>"$WORK/rounds"
  note "round $round: respool $r_qps q/s $(printf %.0f "$r_cpu") ns CPU/query, dnsdist $x_qps q/s $(printf %.0f "$x_cpu") ns CPU/query"
  if [ "$round" = 1 ]; then
    # Copies per query from here on (after the first runs: past the
    # copy controller's first judgements).
    cp "$WORK/stats.json" "$WORK/stats-after1.json" 2>/dev/null || true
  fi
done
sleep 1.2

note "respool ${DUPLICATE:+duplicate=$DUPLICATE}${DUPLICATE:-CLI defaults}; ${SECS}s per run; light load ${LIGHT_QPS} q/s; ${OUTSTANDING} outstanding; $ROUNDS rounds (medians)"
python3 - "$WORK/rounds" "$WORK/stats-after1.json" "$WORK/stats.json" <<'PY'
import json, statistics, sys
rows = [[float(v) for v in l.split()] for l in open(sys.argv[1]) if l.strip()]
def pool(path):
    try:
        return json.load(open(path))["pool"]
    except (OSError, ValueError, KeyError):
        return {}
p1, p2 = pool(sys.argv[2]), pool(sys.argv[3])
dq = p2.get("queries", 0) - p1.get("queries", 0)
copies_share = (p2.get("copies", 0) - p1.get("copies", 0)) / dq if dq > 0 else float("nan")
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
rcpu = [row[7] / 1000.0 for row in rows]
xcpu = [row[8] / 1000.0 for row in rows]
ratio_cpu = med([ratio(a, b) for a, b in zip(rcpu, xcpu)])
print("| relay | max q/s | CPU us per query | added latency (us) at light load |")
print("|---|---|---|---|")
print("| respool | %.0f | %.2f | %.1f |" % (med(rqs), med(rcpu), med(r_adds)))
print("| dnsdist leastOutstanding | %.0f | %.2f | %.1f |" % (med(xqs), med(xcpu), med(x_adds)))
print("| ratio respool/dnsdist | %.2f | %.2f | %.2f |" % (ratio_qps, ratio_cpu, ratio_lat))
print("respool copies per query after the first round: %.4f" % copies_share)
print(json.dumps({"respool_qps": med(rqs), "dnsdist_qps": med(xqs),
                  "qps_ratio": ratio_qps,
                  "respool_cpu_us_per_query": med(rcpu),
                  "dnsdist_cpu_us_per_query": med(xcpu),
                  "cpu_ratio": ratio_cpu,
                  "respool_copies_per_query": copies_share,
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
