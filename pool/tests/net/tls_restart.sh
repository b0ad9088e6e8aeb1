#!/usr/bin/env bash
# A DoT and a DoH server killed and restarted on the same ports are
# reconnected: respool relays over each, dnsdist is killed (SIGKILL),
# queries meanwhile fail over to nothing (SERVFAIL), dnsdist comes back
# and within 15 s dig over UDP through respool gets answers again over a
# new TLS connection. Prints how long the reconnection took.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"
tls_backend
start_dnsdist dd "$(fakeres_udp fr 0)" "$DOT" "$DOH"

dig_a() {
  dig @"$RP_HOST" -p "$RP_PORT" +short +tries=1 +time=1 "$1" A 2>/dev/null
}

for url in "dot://dns.test@127.0.0.1:$DOT" \
  "https://dns.test@127.0.0.1:$DOH/dns-query"; do
  start_respool rs -r "$url" --tls-ca "$WORK/ca.pem" \
    --stats-json "$WORK/rs.json" --stats 200ms -v
  wait_json "$WORK/rs.json" 'j["pool"]["nup"] >= 1' 10 >/dev/null ||
    fail "$url: not added"
  [ "$(dig_a b1.example)" = 127.0.0.1 ] || fail "$url: no answer before"
  kill -KILL "$DD_PID"
  wait "$DD_PID" 2>/dev/null
  # While it is down queries fail (SERVFAIL or no answer), none hangs.
  for i in 1 2 3; do
    [ "$(dig_a down$i.example)" != 127.0.0.1 ] ||
      fail "$url: answer while the server is down"
  done
  start_dnsdist dd "$(fakeres_udp fr 0)" "$DOT" "$DOH"
  t0=$(date +%s.%N)
  ok=0
  for i in $(seq 1 60); do
    if [ "$(dig_a up$i.example)" = 127.0.0.1 ]; then
      ok=1
      break
    fi
    sleep 0.25
  done
  t1=$(date +%s.%N)
  sleep 0.3
  hs=$(json_get "$WORK/rs.json" 'j["pool"]["tls_handshakes"]')
  stop_respool rs
  [ $ok = 1 ] || fail "$url: not reconnected within 15 s: $(tail -5 "$WORK/rs.err")"
  note "$url: answers again $(echo "$t1 - $t0" | bc) s after the restart, handshakes=$hs"
  [ "$hs" -ge 2 ] || fail "$url: expected a new handshake ($hs)"
done
echo ok
