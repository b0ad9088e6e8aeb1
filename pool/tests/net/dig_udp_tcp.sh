#!/usr/bin/env bash
# dig and kdig through respool, over UDP and over TCP, to two fakeres
# resolvers (one reached over UDP, one over tcp://); pipelined TCP with
# kdig; a bad config names the field; --help and --version work.
. "$(dirname "$0")/lib.sh"
need dig kdig python3 "$RESPOOL_BIN" "$FAKERES_BIN"

start_fakeres fr -r name=u -r name=t --answer
U=$(fakeres_udp fr 0)
T=$(fakeres_udp fr 1)
start_respool rp -r "$U" -r "tcp://$T" --stats-json "$WORK/stats.json" \
  --stats 200ms

# The first stdout line is 127.0.0.1:PORT.
[ "$RP_HOST" = 127.0.0.1 ] || fail "listen host $RP_HOST"
[ "$RP_PORT" -gt 0 ] || fail "listen port $RP_PORT"
wait_json "$WORK/stats.json" 'j["pool"]["nup"] >= 2' 10 >/dev/null ||
  fail "resolvers not added: $(cat "$WORK/rp.err")"

for i in 1 2 3 4 5 6; do
  a=$(dig +short +tries=1 +time=3 @"$RP_HOST" -p "$RP_PORT" "u$i.example" A)
  [ "$a" = 127.0.0.1 ] || fail "dig over UDP answered '$a'"
  a=$(dig +short +tcp +tries=1 +time=3 @"$RP_HOST" -p "$RP_PORT" "t$i.example" A)
  [ "$a" = 127.0.0.1 ] || fail "dig over TCP answered '$a'"
done
a=$(kdig +short +notcp +retry=0 +timeout=3 @"$RP_HOST" -p "$RP_PORT" k.example A)
[ "$a" = 127.0.0.1 ] || fail "kdig over UDP answered '$a'"
a=$(kdig +short +tcp +retry=0 +timeout=3 @"$RP_HOST" -p "$RP_PORT" k2.example A)
[ "$a" = 127.0.0.1 ] || fail "kdig over TCP answered '$a'"

# Several queries pipelined on one TCP connection (kdig +keepopen).
n=$(kdig +tcp +keepopen +retry=0 +timeout=3 @"$RP_HOST" -p "$RP_PORT" \
  p1.example A p2.example A p3.example A p4.example A 2>&1 |
  grep -c 'status: NOERROR')
[ "$n" -eq 4 ] || fail "pipelined TCP: $n of 4 answers"

# A TXT answer of 1000 bytes over UDP with EDNS 1232.
sz=$(dig +tries=1 +time=3 +bufsize=1232 @"$RP_HOST" -p "$RP_PORT" \
  s1000.x.example TXT | sed -n 's/.*MSG SIZE  rcvd: \([0-9]*\).*/\1/p')
[ "${sz:-0}" -gt 1000 ] || fail "TXT answer size ${sz:-none}"

# Both resolvers carried queries.
sleep 0.5
sent_u=$(json_get "$WORK/stats.json" 'j["resolvers"][0]["sent"]')
sent_t=$(json_get "$WORK/stats.json" 'j["resolvers"][1]["sent"]')
note "sent: udp resolver $sent_u, tcp resolver $sent_t"

# A taken listen port is a runtime failure (exit 1) that says why.
"$RESPOOL_BIN" -r "$U" --listen "127.0.0.1:$RP_PORT" >/dev/null 2>"$WORK/busy.err"
rc=$?
[ $rc -eq 1 ] || fail "busy port exit $rc"
grep -q "cannot listen" "$WORK/busy.err" || fail "busy port message: $(cat "$WORK/busy.err")"

stop_respool rp
grep -q "share%" "$WORK/rp.err" || fail "no --stats table on stderr"

# Configuration errors: exit 2 and name the file, field and value.
echo '{"resolvers": ["8.8.8.8"], "down_afterr": 3}' >"$WORK/bad.json"
"$RESPOOL_BIN" --config "$WORK/bad.json" >/dev/null 2>"$WORK/bad.err"
rc=$?
[ $rc -eq 2 ] || fail "bad config exit $rc"
grep -q "bad.json: down_afterr: unknown field" "$WORK/bad.err" ||
  fail "bad config message: $(cat "$WORK/bad.err")"
"$RESPOOL_BIN" -r 1.2.3 >/dev/null 2>"$WORK/bad2.err"
[ $? -eq 2 ] || fail "bad -r exit"
grep -q "1.2.3" "$WORK/bad2.err" || fail "bad -r message"
"$RESPOOL_BIN" --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option exit"
"$RESPOOL_BIN" --help | grep -q -- "--stats-json" || fail "--help"
"$RESPOOL_BIN" --version | grep -q "respool" || fail "--version"
echo "ok"
