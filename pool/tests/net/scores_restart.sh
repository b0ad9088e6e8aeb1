#!/usr/bin/env bash
# Scores saved at SIGTERM and reloaded at the next start: a working and a
# dead resolver; after a run the file holds both under generic_resolvers
# (the dead one below the working one); the next run reads them back
# (saved_score in --stats-json) and checks the working one first. A
# corrupt file is reported and ignored.
. "$(dirname "$0")/lib.sh"
need dig python3 "$RESPOOL_BIN" "$FAKERES_BIN"

start_fakeres fr -r name=good -r name=dead,dead --answer
G=$(fakeres_udp fr 0)
D=$(fakeres_udp fr 1)
S="$WORK/scores.json"

start_respool rp1 -r "$D" -r "$G" --scores "$S" --stats-json "$WORK/s1.json" \
  --stats 200ms -v -v
wait_json "$WORK/s1.json" 'j["pool"]["nup"] >= 1 and j["resolvers"][0]["check"] == "failed"' 10 \
  >/dev/null || fail "check did not settle: $(tail -5 "$WORK/rp1.err")"
for i in $(seq 1 20); do
  dig +short +tries=1 +time=2 @"$RP_HOST" -p "$RP_PORT" "s$i.example" A >/dev/null
done
stop_respool rp1
[ -s "$S" ] || fail "no scores file"
grep -q "ev=scores_saved" "$WORK/rp1.err" || fail "no scores_saved log"
sg=$(json_get "$S" "j['generic_resolvers']['$G']")
sd=$(json_get "$S" "j['generic_resolvers']['$D']")
note "saved scores: good=$sg dead=$sd"
[ "$sd" -lt "$sg" ] || fail "dead resolver scored $sd, good $sg"
ls "$WORK"/scores.json.tmp.* >/dev/null 2>&1 && fail "temporary file left"

# Restart: scores read back, the better one checked first.
start_respool rp2 -r "$D" -r "$G" --scores "$S" --stats-json "$WORK/s2.json" \
  --stats 200ms -v -v
wait_json "$WORK/s2.json" 'j["pool"]["nup"] >= 1' 10 >/dev/null ||
  fail "restart: no resolver"
l1=$(json_get "$WORK/s2.json" "[r['saved_score'] for r in j['resolvers'] if r['name']=='$G'][0]")
[ "$l1" = "$sg" ] || fail "saved score of good read back as $l1, not $sg"
first=$(grep -m1 "ev=check_start" "$WORK/rp2.err" | sed 's/.*res=//')
[ "$first" = "$G" ] || fail "first check went to $first, not $G"
stop_respool rp2

# A corrupt file is reported and ignored, then replaced.
echo '{"generic_resolvers": {' >"$S"
start_respool rp3 -r "$G" --scores "$S" --stats-json "$WORK/s3.json" --stats 200ms
wait_json "$WORK/s3.json" 'j["pool"]["nup"] >= 1' 10 >/dev/null ||
  fail "corrupt file stopped the pool"
stop_respool rp3
grep -q "corrupt" "$WORK/rp3.err" || fail "corrupt file not reported: $(cat "$WORK/rp3.err")"
json_get "$S" "j['generic_resolvers']['$G']" >/dev/null || fail "file not rewritten"
echo ok
