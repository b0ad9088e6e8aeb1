#!/usr/bin/env bash
# TCP fallback on truncation: a resolver (tinyres) that truncates UDP
# answers larger than the query allows. respool retries the truncated
# answer over its TCP companion and hands the whole answer back; a UDP
# client that cannot take it gets TC from respool and retries over TCP.
. "$(dirname "$0")/lib.sh"
need dig python3 "$RESPOOL_BIN"

python3 "$TINYRES" --txt-size 1500 >"$WORK/tiny.out" 2>"$WORK/tiny.err" &
TINY_PID=$!
PIDS="$PIDS $TINY_PID"
wait_line "$WORK/tiny.out"
R=$(head -1 "$WORK/tiny.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["udp"])')
start_respool rp -r "$R" --stats-json "$WORK/stats.json" --stats 200ms
wait_json "$WORK/stats.json" 'j["pool"]["nup"] >= 1' 10 >/dev/null ||
  fail "resolver not added: $(cat "$WORK/rp.err")"

# EDNS 1232: the resolver truncates, respool retries over TCP, and the
# whole answer (> 1232 bytes) goes back to dig with TC (+ignore shows it);
# without +ignore dig retries over TCP to respool and gets it whole.
out=$(dig +tries=1 +time=5 +bufsize=1232 +ignore @"$RP_HOST" -p "$RP_PORT" big1.example TXT)
echo "$out" | grep -q "flags:.* tc" || fail "expected TC to a 1232-byte client: $out"
out=$(dig +tries=1 +time=5 +bufsize=1232 @"$RP_HOST" -p "$RP_PORT" big2.example TXT)
sz=$(echo "$out" | sed -n 's/.*MSG SIZE  rcvd: \([0-9]*\).*/\1/p')
[ "${sz:-0}" -gt 1500 ] || fail "whole answer after TC: size ${sz:-none}: $out"
# Without EDNS (512): the same through respool.
out=$(dig +tries=1 +time=5 +noedns @"$RP_HOST" -p "$RP_PORT" big3.example TXT)
sz=$(echo "$out" | sed -n 's/.*MSG SIZE  rcvd: \([0-9]*\).*/\1/p')
[ "${sz:-0}" -gt 1500 ] || fail "no-EDNS answer size ${sz:-none}"
# A client over TCP straight away gets the whole answer (the resolver is
# still asked over UDP first, then over TCP).
out=$(dig +tries=1 +time=5 +tcp @"$RP_HOST" -p "$RP_PORT" big4.example TXT)
sz=$(echo "$out" | sed -n 's/.*MSG SIZE  rcvd: \([0-9]*\).*/\1/p')
[ "${sz:-0}" -gt 1500 ] || fail "TCP client answer size ${sz:-none}"

sleep 0.5
trunc=$(json_get "$WORK/stats.json" 'j["pool"]["truncated_to_client"]')
conn=$(json_get "$WORK/stats.json" 'j["pool"]["tcp_connects"]')
stop_respool rp
kill -TERM "$TINY_PID"
wait "$TINY_PID"
counts=$(tail -1 "$WORK/tiny.out")
note "resolver counts: $counts; truncated_to_client=$trunc tcp_connects=$conn"
tc=$(echo "$counts" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tc"])')
tcpq=$(echo "$counts" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tcp"])')
[ "$tc" -ge 4 ] || fail "resolver truncated only $tc answers"
[ "$tcpq" -ge 4 ] || fail "only $tcpq queries reached the resolver over TCP"
[ "$conn" -ge 1 ] || fail "no TCP companion connection"
[ "$trunc" -ge 2 ] || fail "respool truncated $trunc answers to clients"
echo ok
