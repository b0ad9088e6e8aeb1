#!/usr/bin/env bash
# The server's refusals lower the cap over DoT and DoH as REFUSED does
# over UDP. dnsdist limits each client to 30 q/s (MaxQPSIPRule) and
# answers past it REFUSED (plain DNS and DoT) or HTTP 429 (DoH:
# HTTPStatusAction, matched with HTTPPathRule). For each transport
# respool gets 100 q/s for 6 s from dnsperf; its single resolver must end
# capped (cap_qps between 10 and 60 q/s, refusals counted), and the caps
# are printed side by side.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"
need dnsperf dnsdist openssl python3 "$RESPOOL_BIN" "$FAKERES_BIN"

LIMIT=30
make_certs "$WORK"
start_fakeres fr --answer
DOT=$(free_port)
DOH=$(free_port)
start_dnsdist dd "$(fakeres_udp fr 0)" "$DOT" "$DOH" "
addAction(AndRule({HTTPPathRule('/dns-query'), MaxQPSIPRule($LIMIT)}), HTTPStatusAction(429, 'busy', 'text/plain'))
addAction(MaxQPSIPRule($LIMIT), RCodeAction(DNSRCode.REFUSED))"
dnsperf_data "$WORK/q.txt" 5000 A

summary=""
for url in "127.0.0.1:$DD_UDP" "dot://dns.test@127.0.0.1:$DOT" \
  "https://dns.test@127.0.0.1:$DOH/dns-query"; do
  start_respool rf -r "$url" --tls-ca "$WORK/ca.pem" \
    --stats-json "$WORK/rf.json" --stats 500ms
  wait_json "$WORK/rf.json" 'j["pool"]["nup"] >= 1' 10 >/dev/null ||
    fail "$url: not added: $(cat "$WORK/rf.err")"
  dnsperf -s "$RP_HOST" -p "$RP_PORT" -d "$WORK/q.txt" -Q 100 -l 6 -t 3 \
    -q 500 >"$WORK/perf.out" 2>&1
  sleep 0.6
  cap=$(json_get "$WORK/rf.json" 'j["resolvers"][0]["cap_qps"]')
  refused=$(json_get "$WORK/rf.json" 'j["resolvers"][0]["refused"]')
  answered=$(json_get "$WORK/rf.json" 'j["resolvers"][0]["answered"]')
  http=$(json_get "$WORK/rf.json" 'j["pool"]["doh_http_refusals"]')
  stop_respool rf
  noerr=$(dnsperf_rcode "$WORK/perf.out" NOERROR)
  summary="$summary
#   $url: cap_qps=$cap refused=$refused http_429=$http answered=$answered client_NOERROR=$noerr"
  python3 -c "import sys; c=float(sys.argv[1]); sys.exit(0 if 10 <= c <= 60 else 1)" \
    "$cap" || fail "$url: cap $cap not learned near the $LIMIT q/s limit$summary"
  [ "$refused" -gt 0 ] || fail "$url: no refusal counted"
done
note "learned caps (limit $LIMIT q/s, offered 100 q/s):$summary"
echo ok
