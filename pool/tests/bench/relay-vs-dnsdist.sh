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
# and doubles the queries the resolvers see).
# Prints a Markdown table and one JSON line; exits 0 when it measured
# (the targets are reported, not enforced: machines are noisy).
. "$(dirname "$0")/../net/lib.sh"
need dnsperf dnsdist python3 "$RESPOOL_BIN" "$FAKERES_BIN"

SECS=${SECS:-10}
LIGHT_QPS=${LIGHT_QPS:-2000}
OUTSTANDING=${OUTSTANDING:-200}
DUPLICATE=${DUPLICATE:-1}

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
read -r d_qps d_lat < <(perf direct "${A%:*}" "${A##*:}" -Q "$LIGHT_QPS" -l "$SECS")
read -r r_qps_l r_lat < <(perf rp_light "$RP_H" "$RP_P" -Q "$LIGHT_QPS" -l "$SECS")
read -r x_qps_l x_lat < <(perf dd_light 127.0.0.1 "$DD_PORT" -Q "$LIGHT_QPS" -l "$SECS")
read -r r_qps r_lat_h < <(perf rp_max "$RP_H" "$RP_P" -q "$OUTSTANDING" -l "$SECS")
read -r x_qps x_lat_h < <(perf dd_max 127.0.0.1 "$DD_PORT" -q "$OUTSTANDING" -l "$SECS")

note "respool duplicate=$DUPLICATE; ${SECS}s per run; light load ${LIGHT_QPS} q/s; ${OUTSTANDING} outstanding"
python3 - "$d_lat" "$r_lat" "$x_lat" "$r_qps" "$x_qps" "$r_qps_l" "$x_qps_l" <<'PY'
import json, sys
d, r, x, rq, xq, rql, xql = (float(v) for v in sys.argv[1:])
r_add = (r - d) * 1e6
x_add = (x - d) * 1e6
ratio_qps = rq / xq if xq else 0.0
ratio_lat = r_add / x_add if x_add > 0 else float("nan")
print("| relay | max q/s | added latency (us) at light load |")
print("|---|---|---|")
print("| respool | %.0f | %.1f |" % (rq, r_add))
print("| dnsdist leastOutstanding | %.0f | %.1f |" % (xq, x_add))
print("| ratio respool/dnsdist | %.2f | %.2f |" % (ratio_qps, ratio_lat))
print(json.dumps({"respool_qps": rq, "dnsdist_qps": xq,
                  "qps_ratio": ratio_qps,
                  "direct_latency_us": d * 1e6,
                  "respool_added_latency_us": r_add,
                  "dnsdist_added_latency_us": x_add,
                  "light_qps": [rql, xql]}))
PY
stop_respool rp
echo ok
