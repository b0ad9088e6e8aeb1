#!/bin/sh
# sim_cli.sh BIN SCENARIO_DIR: respool-sim's command line: --help, clear
# errors for unknown --set names and bad specs, every scenario file runs,
# --json is valid JSON, --trace writes the events. Virtual time only.
set -u
BIN=$1
DIR=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

"$BIN" --help >"$TMP/help" || fail "--help exit code"
grep -q -- "--set" "$TMP/help" || fail "--help does not mention --set"

"$BIN" -r name=a --set band_ration=2 >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "unknown --set name must exit 2"
grep -q "band_ration" "$TMP/err" || fail "the error must name band_ration"

"$BIN" -r rate=3x >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "bad spec must exit 2"
grep -q "rate" "$TMP/err" || fail "the error must name the key"

"$BIN" -r name=a --at 5s:zz:dead >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "--at with an unknown resolver must exit 2"
grep -q "zz" "$TMP/err" || fail "the error must name the resolver"

"$BIN" --list-settings --kind dnstt >"$TMP/list" || fail "--list-settings"
grep -q "^  band_ratio " "$TMP/list" || fail "--list-settings lacks band_ratio"

for f in "$DIR"/*.txt; do
  "$BIN" --scenario "$f" --load rate=50,seconds=3 >"$TMP/out" 2>&1 ||
    fail "scenario $f: $(cat "$TMP/out")"
  grep -q "^client: queries=" "$TMP/out" || fail "scenario $f: no totals"
done

"$BIN" -r name=a -r name=b --load rate=50,seconds=2 --json >"$TMP/json" ||
  fail "--json run"
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["resolvers"])==2; assert d["client"]["queries"]==100' "$TMP/json" ||
    fail "--json output is not the expected JSON"
fi

"$BIN" -r name=a --load rate=10,seconds=1 --trace "$TMP/trace" >/dev/null ||
  fail "--trace run"
grep -q "ev=send srv=a" "$TMP/trace" || fail "the trace lacks sends"
grep -q "ev=deliver" "$TMP/trace" || fail "the trace lacks deliveries"

# The same seed gives the same trace hash, from the command line too.
h1=$("$BIN" -r loss=10%,latency=5ms,jitter=2ms -r latency=5ms --seed 9 | grep -o 'trace_hash=[0-9a-f]*')
h2=$("$BIN" -r loss=10%,latency=5ms,jitter=2ms -r latency=5ms --seed 9 | grep -o 'trace_hash=[0-9a-f]*')
[ -n "$h1" ] && [ "$h1" = "$h2" ] || fail "same seed, different hash ($h1 / $h2)"
echo "sim_cli: all checks passed"
