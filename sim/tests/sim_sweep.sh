#!/bin/sh
# sim_sweep.sh BIN: `respool-sim table --sweep` and `--timeline`: the
# same seeds give a byte-identical CSV; a bad field or value exits 2
# naming it; a timeline has a row per 100 ms and refuses a cell without
# a pool. And the stale-cap fixture (docs/simulator.md): stale_caps fires
# in the simulator (three-limited moves other bytes with it), and the
# real dnstt model on one unlimited resolver collapses (at least 10x
# fewer kbps) under the two old rules together, stale_caps=1 and
# probation_strict=1 (its opening poll, held by the server, goes stale
# and caps the resolver at 36 q/s), and under neither alone.
set -u
BIN=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

"$BIN" table --sweep --help >"$TMP/help" || fail "--sweep --help"
grep -q -- "--seeds" "$TMP/help" || fail "--sweep --help lacks --seeds"

"$BIN" table --sweep no_such_field=1,2 --setup three-limited \
  --column real-md-respool >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "an unknown field must exit 2"
grep -q "no_such_field" "$TMP/err" || fail "the error must name the field"
"$BIN" table --sweep past_cap_interval=50ms,xyz --setup three-limited \
  --column real-md-respool >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "a bad value must exit 2"
grep -q "'xyz'" "$TMP/err" || fail "the error must name the value"

ARGS="--sweep past_cap_interval=50ms,100ms --seeds 2 --setup three-limited --column real-md-respool,real-md-own,real-md-first"
# The runs go to --jobs workers: one, three and the default give the same
# bytes.
"$BIN" table $ARGS --jobs 1 --csv "$TMP/a.csv" 2>/dev/null || fail "sweep a"
"$BIN" table $ARGS --jobs 3 >"$TMP/b.csv" 2>/dev/null || fail "sweep b"
cmp -s "$TMP/a.csv" "$TMP/b.csv" || fail "same seeds, different CSV (1, 3 jobs)"
"$BIN" table $ARGS >"$TMP/c.csv" 2>/dev/null || fail "sweep c"
cmp -s "$TMP/a.csv" "$TMP/c.csv" || fail "same seeds, different CSV (default)"
head -1 "$TMP/a.csv" | grep -q "^field,value,kind,setup,name,seeds,median,min,max$" ||
  fail "CSV header"
# 2 values x (3 cells + 2 ratios).
[ "$(tail -n +2 "$TMP/a.csv" | wc -l)" -eq 10 ] || fail "CSV rows"
grep -q ",ratio,three-limited,real-md-respool/real-md-own,2," "$TMP/a.csv" ||
  fail "CSV lacks the ratio"

"$BIN" table --timeline "$TMP/t.csv" --setup three-limited \
  --column real-md-respool >/dev/null 2>&1 || fail "timeline"
head -1 "$TMP/t.csv" | grep -q "^t_s,r1_state,r1_cap_qps,r1_rate_qps,r1_inflight," ||
  fail "timeline header"
# A row per 100 ms while the cell runs (over a second).
[ "$(wc -l <"$TMP/t.csv")" -gt 10 ] || fail "timeline rows"
grep -q "^0.100," "$TMP/t.csv" || fail "timeline lacks t=0.1 s"
"$BIN" table --timeline "$TMP/x.csv" --setup three-limited \
  --column real-md-own >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "a cell without a pool must exit 2"
grep -q "runs no pool" "$TMP/err" || fail "say why there is no timeline"

kbps() { # kbps SETUP COLUMN [ARGS]: the cell's kbps
  s=$1; c=$2; shift 2
  "$BIN" table --setup "$s" --column "$c" "$@" 2>/dev/null |
    awk -F'|' 'NR == 3 { gsub(/ /, "", $3); print $3 }'
}
a=$(kbps three-limited dnstt-respool)
b=$(kbps three-limited dnstt-respool --set stale_caps=1)
[ -n "$a" ] && [ -n "$b" ] || fail "three-limited runs"
[ "$a" != "$b" ] || fail "stale_caps=1 changed nothing on three-limited ($a)"
a=$(kbps one-unlimited real-dnstt-respool)
b=$(kbps one-unlimited real-dnstt-respool --set stale_caps=1)
c=$(kbps one-unlimited real-dnstt-respool --set probation_strict=1)
# The old code had no hedge_initial either (0707b1a): the opening held
# poll, hedged at 300 ms, is answered by the hedge's query and probation
# moves on, so the collapse needs all three (57 342 kbps with the two
# old rules alone).
d=$(kbps one-unlimited real-dnstt-respool --set stale_caps=1 \
  --set probation_strict=1 --set hedge_initial=0)
[ "${a:-0}" -gt 10000 ] || fail "one-unlimited real dnstt: $a kbps"
[ "${b:-0}" -gt 10000 ] || fail "one-unlimited real dnstt, stale_caps=1: $b kbps"
[ "${c:-0}" -gt 10000 ] ||
  fail "one-unlimited real dnstt, probation_strict=1: $c kbps"
[ "${d:-0}" -gt 0 ] && [ $((d * 10)) -le "$a" ] ||
  fail "one-unlimited real dnstt, both old rules: $d kbps, not 10x under $a"
echo "sim_sweep: ok (stale_caps three-limited dnstt-respool; one-unlimited" \
  "real dnstt $a / $b / $c kbps, both old rules $d)"
