#!/usr/bin/env bash
# Relay q/s of respool through plain UDP, DoT and DoH to the same backend:
# one dnsdist (UDP, DoT with addTLSLocal, DoH over HTTP/2 with
# addDOHLocal) in front of one fakeres --answer. For each transport
# respool gets dnsperf at full speed (200 queries outstanding) for
# BENCH_SECONDS (5) and the q/s, the mean latency and the failed share
# are printed side by side; dnsdist's own UDP port is measured too as the
# ceiling. No assertion on absolute speed; every transport must answer
# at least 95 % of what it was sent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"
need dnsperf dnsdist openssl python3 "$RESPOOL_BIN" "$FAKERES_BIN"

SECS=${BENCH_SECONDS:-5}
make_certs "$WORK"
start_fakeres fr --answer
DOT=$(free_port)
DOH=$(free_port)
start_dnsdist dd "$(fakeres_udp fr 0)" "$DOT" "$DOH"
dnsperf_data "$WORK/q.txt" 100000 A

# perf HOST PORT: runs dnsperf, prints "qps latency_ms lost_pct".
perf() {
  dnsperf -s "$1" -p "$2" -d "$WORK/q.txt" -l "$SECS" -q 200 -t 2 \
    >"$WORK/perf.out" 2>&1
  python3 - "$WORK/perf.out" <<'PYEOF'
import re, sys
t = open(sys.argv[1]).read()
qps = float(re.search(r"Queries per second:\s*([\d.]+)", t).group(1))
lat = float(re.search(r"Average Latency \(s\):\s*([\d.]+)", t).group(1)) * 1000
sent = int(re.search(r"Queries sent:\s*(\d+)", t).group(1))
done = int(re.search(r"Queries completed:\s*(\d+)", t).group(1))
noerr = 0
m = re.search(r"Response codes:\s*(.*)", t)
if m:
    for name, cnt in re.findall(r"([A-Z]+) (\d+)", m.group(1)):
        if name == "NOERROR":
            noerr = int(cnt)
print("%.0f %.2f %.1f" % (qps, lat, 100.0 * (sent - noerr) / max(sent, 1)))
PYEOF
}

table="transport            q/s   lat_ms  not_NOERROR%"
read -r q l x < <(perf 127.0.0.1 "$DD_UDP")
table="$table
dnsdist UDP direct  $q   $l   $x"
for url in "127.0.0.1:$DD_UDP" "dot://dns.test@127.0.0.1:$DOT" \
  "https://dns.test@127.0.0.1:$DOH/dns-query"; do
  start_respool b -r "$url" --tls-ca "$WORK/ca.pem" \
    --stats-json "$WORK/b.json" --stats 500ms
  wait_json "$WORK/b.json" 'j["pool"]["nup"] >= 1' 10 >/dev/null ||
    fail "$url: not added"
  read -r q l x < <(perf "$RP_HOST" "$RP_PORT")
  stop_respool b
  case $url in
  dot*) name="respool -> DoT" ;;
  https*) name="respool -> DoH" ;;
  *) name="respool -> UDP" ;;
  esac
  table="$table
$name      $q   $l   $x"
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 5 else 1)' "$x" ||
    fail "$name: $x % not answered NOERROR"
done
echo "$table" | column -t -s '  ' >&2 2>/dev/null || echo "$table" >&2
echo "$table"
echo ok
