#!/bin/sh
# sim_table.sh BIN: `respool-sim table`, the benchmark table in virtual
# time: the same seed gives byte-identical JSON (on 1, 3 or the default
# number of worker processes), another seed another
# run; bad options exit 2 naming the value; --cost-scale 2 halves a
# CPU-bound cell; the limited cells move their
# bytes near the fake resolvers' limits (wide margins: the figures belong
# to results/sim-vs-loopback.md, this checks the machine runs); the
# in-process pool's start-up check keeps out a resolver it never heard;
# the real dnstt alone stops behind a refusing resolver (its smux).
set -u
BIN=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

"$BIN" table --help >"$TMP/help" || fail "table --help exit code"
grep -q -- "--seed" "$TMP/help" || fail "table --help does not mention --seed"

"$BIN" table --setup nope >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "an unknown setup must exit 2"
"$BIN" table --rounds x >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "a bad --rounds must exit 2"
grep -q "'x'" "$TMP/err" || fail "the error must name the value"

for v in 0 -1 x 101; do
  "$BIN" table --cost-scale "$v" >/dev/null 2>"$TMP/err"
  [ $? -eq 2 ] || fail "--cost-scale $v must exit 2"
  grep -q -- "'$v'" "$TMP/err" || fail "the --cost-scale error must name $v"
done
# A machine twice as slow: the CPU-bound cell moves less, by about half.
"$BIN" table --setup one-unlimited --column dnstt-first --json >"$TMP/s1.json" 2>/dev/null || fail "cost-scale 1"
"$BIN" table --setup one-unlimited --column dnstt-first --json --cost-scale 2 >"$TMP/s2.json" 2>/dev/null || fail "cost-scale 2"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$TMP/s1.json" "$TMP/s2.json" <<'PY' || fail "--cost-scale 2 did not slow the unlimited cell"
import json, sys
a, b = (json.load(open(p))["results"][0]["kbps_down"] for p in sys.argv[1:3])
assert 0.35 < b / a < 0.65, (a, b)
PY
fi

"$BIN" table --list >"$TMP/list" || fail "--list"
grep -q "^setup  three-limited" "$TMP/list" || fail "--list lacks three-limited"
grep -q "^column md-own " "$TMP/list" || fail "--list lacks md-own"

ARGS="--setup three-limited,three-limited-one-dead --column dnstt-pool,md-own,dnstt-respool,dnstt-dnsdist,real-md-respool --json"
"$BIN" table $ARGS --seed 7 >"$TMP/a.json" 2>/dev/null || fail "table run a"
"$BIN" table $ARGS --seed 7 >"$TMP/b.json" 2>/dev/null || fail "table run b"
"$BIN" table $ARGS --seed 8 >"$TMP/c.json" 2>/dev/null || fail "table run c"
"$BIN" table $ARGS --seed 7 --jobs 1 >"$TMP/j1.json" 2>/dev/null || fail "table run --jobs 1"
"$BIN" table $ARGS --seed 7 --jobs 3 >"$TMP/j3.json" 2>/dev/null || fail "table run --jobs 3"
cmp -s "$TMP/a.json" "$TMP/b.json" || fail "same seed, different output"
cmp -s "$TMP/a.json" "$TMP/j1.json" || fail "--jobs 1 changed the output"
cmp -s "$TMP/a.json" "$TMP/j3.json" || fail "--jobs 3 changed the output"
"$BIN" table --jobs 0 >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "--jobs 0 must exit 2"
cmp -s "$TMP/a.json" "$TMP/c.json" && fail "another seed, the same output"

if command -v python3 >/dev/null 2>&1; then
  python3 - "$TMP/a.json" <<'PY' || fail "limited cells out of range"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["results"]) == 10, len(d["results"])
for r in d["results"]:
    assert r["ok"] and r["client"]["complete"], r
    # 128 KiB through 90 (70) answered q/s: well under 2x the physical
    # limit of the DNSTT payload (670 / 521 kbps) and above a tenth.
    lim = 670 if r["setup"] == "three-limited" else 521
    assert lim / 10 < r["kbps_down"] < 2 * lim, (r["setup"], r["column"], r["kbps_down"])
    # respool (the CLI) senses the kind, as a user runs it: MasterDnsVPN's
    # settings once it has seen the client's queries; the relay the
    # table gives --kind dnstt keeps it.
    want = {"real-md-respool": "masterdns", "dnstt-respool": "dnstt",
            "dnstt-pool": "dnstt"}.get(r["column"])
    assert want is None or r.get("kind") == want, (r["column"], r.get("kind"))
    # The tunnel server's counters, as the servers print them: every
    # answer fakeres relayed came from it; no loss, nothing sent again.
    sv = r["server"]
    assert sv["answers"] >= sum(f["answered"] for f in r["fakeres"]), sv
    assert 0 < sv["bytes_down_acked"] <= r["client"]["bytes_down"], sv
    assert sv["retransmissions"] == 0, sv
PY
fi
# Over three-lossy the server sends again what lost answers carried.
"$BIN" table --setup three-lossy --column md-own-nodup --json >"$TMP/lossy.json" 2>/dev/null || fail "lossy run"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$TMP/lossy.json" <<'PY' || fail "the server's retransmissions"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
lost = sum(f["lost"] for f in r["fakeres"])
assert r["server"]["server"] == "masterdns", r["server"]
assert 0 < r["server"]["retransmissions"] <= lost, (r["server"], lost)
PY
fi

# The start-up check (simnet_check.c): the in-process pool's check is a
# query of its own; a resolver joins when it passed. The dead one gets
# that query alone; over three-lossy, seed 1's first round loses the 10 %
# resolver's check, which keeps it out of the run (its one query).
"$BIN" table --setup three-limited-one-dead,three-lossy --column dnstt-pool --quick --rounds 2 --json >"$TMP/chk.json" 2>/dev/null || fail "check run"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$TMP/chk.json" <<'PY' || fail "the start-up check"
import json, sys
d = json.load(open(sys.argv[1]))
got = {(r["setup"], r["round"]): {f["name"]: f for f in r["fakeres"]}
       for r in d["results"]}
for rnd in (1, 2):
    dead = got[("three-limited-one-dead", rnd)]["r3"]
    assert dead["queries"] == 1 and dead["answered"] == 0, dead
lossy = got[("three-lossy", 1)]
assert lossy["r2"]["queries"] == 1, lossy["r2"]
assert lossy["r3"]["queries"] > 10, lossy["r3"]
PY
fi
# A failed check is repeated every 15 s (the pool's re-check while fewer
# than ten resolvers work): a dead resolver gets 3 in a 31 s run, at 0, 15
# and 30 s, in process and behind respool-cli.
cat >"$TMP/setups.json" <<'EOF2'
{"defaults": {"bytes": 131072, "seconds": 31, "quick_bytes": 65536,
              "quick_seconds": 31, "upload_bytes": 0},
 "setups": [{"name": "slow-and-dead", "rate_limited": false,
             "resolvers": ["name=r1,rate=50,over=refuse,addr=127.0.0.2",
                           "name=r2,dead,addr=127.0.0.3"]}]}
EOF2
"$BIN" table --setups "$TMP/setups.json" --column dnstt-pool,real-md-respool --json >"$TMP/re.json" 2>/dev/null || fail "re-check run"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$TMP/re.json" <<'PY' || fail "the re-check of a failed check"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["results"]) == 2, d["results"]
for r in d["results"]:
    dead = {f["name"]: f for f in r["fakeres"]}["r2"]
    assert dead["queries"] == 3 and dead["answered"] == 0, (r["column"], dead)
    assert r["client"]["bytes_down"] > 0, r["column"]
PY
fi
# The real dnstt client's smux (tunsmux.h): alone behind a resolver that
# refuses past 30 q/s its upload's segments go too slowly for its window
# update, and the download stops at the first frame (16 KiB) for the 90 s
# its client runs, as on loopback; via respool both go through.
"$BIN" table --setup one-limited --column real-dnstt-first,real-dnstt-respool --json >"$TMP/smux.json" 2>/dev/null || fail "smux run"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$TMP/smux.json" <<'PY' || fail "the real dnstt's smux stall"
import json, sys
got = {r["column"]: r for r in json.load(open(sys.argv[1]))["results"]}
alone, via = got["real-dnstt-first"], got["real-dnstt-respool"]
assert alone["client"]["bytes_down"] == 16384, alone["client"]
assert not alone["client"]["complete"], alone["client"]
assert abs(alone["client"]["seconds"] - 90) < 1, alone["client"]
assert via["client"]["complete"], via["client"]
PY
fi
echo "sim_table: ok"
