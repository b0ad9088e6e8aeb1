#!/usr/bin/env bash
# DoT and DoH through respool against Debian's dnsdist (DoT: addTLSLocal,
# DoH over HTTP/2: addDOHLocal) in front of a fakeres, with a CA and a
# certificate for dns.test made here:
# - dig over plain UDP through respool reaches the backend over DoT and
#   over DoH (dot://dns.test@127.0.0.1:PORT, https://dns.test@.../dns-query);
# - TLS 1.3 session resumption: after dnsdist closed the idle connection
#   (DoH: with a GOAWAY) the next one resumes (tls_resumed >= 1);
# - without --tls-ca the certificate is refused: the log names the
#   verify error and tls_failures counts it; a wrong name is refused too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"
tls_backend
# A short idle timeout so that the resumption check does not wait long.
DD_IDLE=1 start_dnsdist dd "$(fakeres_udp fr 0)" "$DOT" "$DOH" \
  "setTCPRecvTimeout(1)"

# dig_ok NAME: one A query through the running respool answers 127.0.0.1.
dig_ok() {
  local a
  a=$(dig @"$RP_HOST" -p "$RP_PORT" +short +tries=1 +time=3 "$1" A)
  [ "$a" = "127.0.0.1" ]
}

for url in "dot://dns.test@127.0.0.1:$DOT" \
  "https://dns.test@127.0.0.1:$DOH/dns-query"; do
  start_respool ok -r "$url" --tls-ca "$WORK/ca.pem" \
    --stats-json "$WORK/ok.json" --stats 200ms -v
  wait_json "$WORK/ok.json" 'j["pool"]["nup"] >= 1' 10 >/dev/null ||
    fail "$url: not added: $(cat "$WORK/ok.err")"
  dig_ok a1.example || fail "$url: no answer"
  dig_ok a2.example || fail "$url: no second answer"
  txt=$(dig @"$RP_HOST" -p "$RP_PORT" +short +tries=1 +time=3 +bufsize=4096 \
    s3000.example TXT | wc -c)
  [ "$txt" -gt 3000 ] || fail "$url: large TXT answer cut ($txt bytes)"
  # dnsdist closes the idle connection after 1 s; the next one resumes.
  sleep 2.5
  dig_ok a3.example || fail "$url: no answer after the idle close"
  sleep 0.5
  resumed=$(json_get "$WORK/ok.json" 'j["pool"]["tls_resumed"]')
  hs=$(json_get "$WORK/ok.json" 'j["pool"]["tls_handshakes"]')
  goaways=$(json_get "$WORK/ok.json" 'j["pool"]["doh_goaways"]')
  stop_respool ok
  note "$url: handshakes=$hs resumed=$resumed goaways=$goaways"
  case $url in
  # dnsdist's DoH (h2o) ends an idle connection with GOAWAY: the pool
  # closed it and the next query opened a new one (checked above).
  https*) [ "$goaways" -ge 1 ] || fail "$url: no GOAWAY seen at the idle close" ;;
  esac
  [ "$hs" -ge 2 ] || fail "$url: expected a second connection ($hs)"
  [ "$resumed" -ge 1 ] || fail "$url: the second connection did not resume"
done

# No --tls-ca: the system store does not know the test CA.
for url in "dot://dns.test@127.0.0.1:$DOT" \
  "https://dns.test@127.0.0.1:$DOH/dns-query"; do
  start_respool bad -r "$url" --stats-json "$WORK/bad.json" --stats 200ms
  wait_json "$WORK/bad.json" 'j["pool"]["tls_failures"] >= 1' 10 >/dev/null ||
    fail "$url: TLS failure not counted"
  err=$(json_get "$WORK/bad.json" 'j["resolvers"][0]["last_error"]')
  nup=$(json_get "$WORK/bad.json" 'j["pool"]["nup"]')
  stop_respool bad
  note "$url without CA: $err"
  grep -q 'ev=tls_failed.*certificate verify failed' "$WORK/bad.err" ||
    fail "$url: no clear error in the log: $(cat "$WORK/bad.err")"
  case $err in
  *"certificate verify failed: unable to get local issuer certificate"*) ;;
  *) fail "$url: last_error does not name the reason: $err" ;;
  esac
  [ "$nup" = 0 ] || fail "$url: resolver with a bad certificate was added"
done

# The right CA but another name.
start_respool name -r "dot://wrong.test@127.0.0.1:$DOT" --tls-ca "$WORK/ca.pem" \
  --stats-json "$WORK/name.json" --stats 200ms
wait_json "$WORK/name.json" 'j["pool"]["tls_failures"] >= 1' 10 >/dev/null ||
  fail "wrong name: TLS failure not counted"
err=$(json_get "$WORK/name.json" 'j["resolvers"][0]["last_error"]')
stop_respool name
note "wrong name: $err"
case $err in
*"hostname mismatch"*) ;;
*) fail "wrong name: reason not named: $err" ;;
esac
echo ok
