#!/usr/bin/env bash
# Discovery over a 58 000-line resolver list of 127.0.0.0/8 addresses of
# which 10 answer (one fakeres listening on those 10 addresses, all on
# the same port P, a free one found at start; every line names port P):
# - `respool discover --json` finds exactly the 10, with latency and
#   pretest result, and the time it took is printed;
# - `respool -r auto --resolver-list FILE` adds the 10 to the pool as they
#   pass (nup reaches 10) and dig over UDP through it is answered;
# - the scores saved at exit order the next start: the second run finds
#   the 10 among its first candidates (source "saved").
# System and bundled resolvers are switched off (no network here).
. "$(dirname "$0")/lib.sh"
need dig python3 "$RESPOOL_BIN" "$FAKERES_BIN"

N=58000
# A UDP port free on 127.0.0.1 is free on the other loopback addresses.
P=$(python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - "$P" "$N" "$WORK" <<'PYEOF'
import random, sys
p, n, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
addrs = ["127.%d.%d.%d" % (20 + (i >> 16), (i >> 8) & 255, i & 255)
         for i in range(n)]
live = sorted(random.sample(range(n), 10))
with open(work + "/list.txt", "w") as f:
    f.write("# 58 000 candidates, 10 of them answer\n")
    f.write("".join("%s:%d\n" % (a, p) for a in addrs))
with open(work + "/live.txt", "w") as f:
    f.write(" ".join(addrs[i] for i in live) + "\n")
PYEOF
[ "$(grep -c . "$WORK/list.txt")" -gt $N ] || fail "list not written"
args=""
for a in $(cat "$WORK/live.txt"); do
  args="$args -r addr=$a,port=$P"
done
# shellcheck disable=SC2086
start_fakeres fr --answer $args
echo '{"discovery": {"system": false, "bundled": false, "timeout": "500ms"}}' \
  >"$WORK/disc.json"

"$RESPOOL_BIN" discover -c "$WORK/disc.json" --resolver-list "$WORK/list.txt" \
  --want 10 --json >"$WORK/found.json" 2>"$WORK/discover.err" ||
  fail "discover failed: $(cat "$WORK/discover.err")"
python3 - "$WORK/found.json" "$WORK/live.txt" "$P" <<'PYEOF' || fail "discover did not find the 10"
import json, sys
j = json.load(open(sys.argv[1]))
live = set("%s:%s" % (a, sys.argv[3]) for a in open(sys.argv[2]).read().split())
found = set(r["address"] for r in j["found"])
print("# discover: found %d/10 in %.2f s; tested %d of %d candidates "
      "(unreachable %d, timeout %d)" % (len(found & live), j["elapsed_s"],
      j["tested"], j["candidates"], j["by_result"]["unreachable"],
      j["by_result"]["timeout"]), file=sys.stderr)
assert j["candidates"] == 58000, j["candidates"]
assert found == live, (found, live)
assert all(r["result"] == "passed" and r["latency_ms"] >= 0 for r in j["found"])
PYEOF

# The pool: auto over the same list, scores kept for the second run.
start_respool pool -c "$WORK/disc.json" -r auto \
  --resolver-list "$WORK/list.txt" --scores "$WORK/scores.json" \
  --stats-json "$WORK/pool.json" --stats 200ms -v
took=$(wait_json "$WORK/pool.json" 'j["pool"]["nup"] >= 10' 50) ||
  fail "pool did not reach 10 resolvers: $(grep ev= "$WORK/pool.err" | tail -5)"
a=$(dig @"$RP_HOST" -p "$RP_PORT" +short +tries=1 +time=3 x.example A)
[ "$a" = 127.0.0.1 ] || fail "no answer through the discovered pool"
found=$(json_get "$WORK/pool.json" 'j["pool"]["discovery_found"]')
stop_respool pool
note "pool: $found resolvers found and in the pool $took s after respool started"
grep -q 'ev=discovery_done found=10' "$WORK/pool.err" ||
  fail "no discovery_done line: $(grep ev= "$WORK/pool.err" | tail -3)"

# Second start: the saved scores come first.
start_respool pool2 -c "$WORK/disc.json" -r auto \
  --resolver-list "$WORK/list.txt" --scores "$WORK/scores.json" \
  --stats-json "$WORK/pool2.json" --stats 200ms -v
wait_json "$WORK/pool2.json" 'j["pool"]["nup"] >= 10' 50 >/dev/null ||
  fail "second run did not reach 10"
stop_respool pool2
saved=$(grep -c 'ev=disc_found.*source=saved' "$WORK/pool2.err")
tested=$(sed -n 's/.*ev=disc_done.*tested=\([0-9]*\).*/\1/p' "$WORK/pool2.err")
note "second run: $saved of 10 found from saved scores, tested=$tested"
[ "$saved" = 10 ] || fail "saved scores did not order the second start"
# (The saved 10 start first, with the next 90 of the list beside them;
# list candidates that are unreachable end at once and free their slot,
# so "tested" is a little over 100 and varies.)
echo ok
