#!/usr/bin/env bash
# test_runner.sh: the scenario runner's own test, in a few seconds, with a
# stand-in tunnel (fake_tunnel.py) run as external commands in front of the
# real fakeres: placeholders, rounds interleaved, median, table.md,
# results.json, command.txt, plots, n/a and failed cells, PASS/SKIP/FAIL
# checks and exit codes, a client timeout, Ctrl-C, and no process left
# behind.
#
# usage: scenarios/tests/test_runner.sh [BUILD_DIR]
#   BUILD_DIR (or env RP_BUILD_DIR) holds fake-resolvers/fakeres; default
#   $ROOT/build. Exit 0 pass, 1 fail, 77 skip (no fakeres or python3).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SC="$(dirname "$HERE")"
ROOT="$(dirname "$SC")"
BUILD="$(cd "${1:-${RP_BUILD_DIR:-$ROOT/build}}" 2>/dev/null && pwd)" || { echo "SKIP: no build dir"; exit 77; }
FAKERES="$BUILD/fake-resolvers/fakeres"

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
[ -x "$FAKERES" ] || { echo "SKIP: no $FAKERES"; exit 77; }

TMP="$(mktemp -d /tmp/rp-test-runner.XXXXXX)"
fails=0
passes=0
runner_pid=""
cleanup() {
  if [ -n "$runner_pid" ]; then kill -TERM "$runner_pid" 2>/dev/null; fi
  # Anything of ours still alive carries $TMP in its command line.
  for p in $(pgrep -f "$TMP" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT

ok() { echo "ok   $*"; passes=$((passes + 1)); }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
expect() { # expect DESC COMMAND...
  local d=$1
  shift
  if "$@"; then ok "$d"; else bad "$d"; fi
}

# Stand-ins that carry $TMP in their command lines (leftover detection).
cp "$HERE/fake_tunnel.py" "$TMP/fake_tunnel.py"
printf '#!/usr/bin/env bash\nexec -a "%s/fakeres" "%s" "$@"\n' "$TMP" "$FAKERES" \
  >"$TMP/fakeres"
chmod +x "$TMP/fakeres"

run() { # run OUT [ARGS...]: the runner on the test data; status in $rc
  local out=$1
  shift
  python3 "$SC/runner.py" --build "$BUILD" --fakeres "$TMP/fakeres" \
    --var fake="$TMP/fake_tunnel.py" --setups "$HERE/setups.json" \
    --columns "$HERE/columns.json" --gates "$HERE/gates.json" \
    --out "$TMP/$out" "$@" >"$TMP/$out.stdout" 2>"$TMP/$out.stderr"
  rc=$?
}

leftovers() { # no process of ours may be left
  local left
  left="$(pgrep -af "$TMP" | grep -v pgrep || true)"
  if [ -n "$left" ]; then
    echo "$left"
    return 1
  fi
  return 0
}

jq_py() { # jq_py DIR EXPR: evaluates a Python expression on results.json (r)
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" \
    "$TMP/$1/results.json"
}

# 1. Three rounds, interleaved; median; relay with stats; n/a column.
t0=$(date +%s)
ROUNDS=3 run r1 --setup plain --column fake-first,fake-all,fake-relay,fake-missing
expect "three-round run exits 0 (rc=$rc)" test "$rc" -eq 0
for f in table.md results.json command.txt plots/throughput.png \
  plots/shares-plain.png; do
  expect "r1 wrote $f" test -s "$TMP/r1/$f"
done
expect "median of 300,100,200 is 200" \
  test "$(jq_py r1 "r['cells']['plain']['fake-first']['summary']['kbps_down']")" = "200.0"
expect "rounds interleaved across columns" test "$(jq_py r1 \
  "' '.join(l.split(' / ')[1] for l in open('$TMP/r1.stderr') if ' / round ' in l)")" \
  = "fake-first fake-all fake-relay fake-first fake-all fake-relay fake-first fake-all fake-relay"
expect "three rounds recorded per cell" \
  test "$(jq_py r1 "len(r['cells']['plain']['fake-all']['rounds'])")" = "3"
expect "own-balancer spreads (placeholder {resolvers_all_args})" \
  test "$(jq_py r1 "all(0.25 < v['share'] < 0.42 for v in r['cells']['plain']['fake-all']['summary']['resolvers'].values())")" = "True"
expect "relay address and stats JSON collected (copies, hedges)" \
  test "$(jq_py r1 "(r['cells']['plain']['fake-relay']['summary'].get('copies'), r['cells']['plain']['fake-relay']['summary'].get('hedges'))")" = "(7, 5)"
expect "every round of a cell has its CPU seconds and CPU s per MiB" \
  test "$(jq_py r1 "all(x['cpu_seconds']['total'] >= 0 and x.get('cpu_s_per_mib', -1) >= 0 for c in ('fake-first', 'fake-all', 'fake-relay') for x in r['cells']['plain'][c]['rounds'])")" = "True"
expect "table has the CPU per MiB section" grep -q '^## CPU seconds per MiB' "$TMP/r1/table.md"
expect "missing client is n/a in the table" grep -q '| plain | 200 | .* | n/a |' "$TMP/r1/table.md"
expect "n/a reason noted" grep -q 'fake-missing: n/a (client such-client' "$TMP/r1/table.md"
expect "command.txt has ROUNDS and the flags" grep -q '^ROUNDS=3 .*--setup plain' "$TMP/r1/command.txt"
expect "progress on stderr with ETA" grep -q 'round 3/3 .*ETA' "$TMP/r1.stderr"
expect "no process left after r1" leftovers
rm -f "$TMP/r1/table.md" "$TMP/r1/plots/"*
python3 "$SC/runner.py" --replot "$TMP/r1" >/dev/null 2>"$TMP/replot.err"
expect "--replot rebuilds table.md and the plots from results.json" \
  test -s "$TMP/r1/table.md" -a -s "$TMP/r1/plots/throughput.png" -a -s "$TMP/r1/plots/shares-plain.png"
expect "share legends name the resolver profiles" grep -q 'r1 (unlimited)' "$TMP/r1/plots/shares-plain.dat"

# 2. QUICK: checks PASS and SKIP, a failing client, a hanging client
#    (timeout), a rate-limited setup as share of the physical limit.
QUICK=1 run r2 --column fake-first,fake-all,fake-missing,fake-fail,fake-hang,fake-external \
  --timeout 1.5
expect "QUICK run with PASS and SKIP exits 0 (rc=$rc)" test "$rc" -eq 0
expect "PASS printed" grep -q '^PASS spread over three' "$TMP/r2.stdout"
expect "SKIP for an n/a input" grep -q '^SKIP needs an n/a column' "$TMP/r2.stdout"
expect "SKIP for a failed input" grep -q '^SKIP needs a failed cell' "$TMP/r2.stdout"
expect "no FAIL printed" bash -c "! grep -q '^FAIL' '$TMP/r2.stdout'"
expect "failed client is a fail cell" grep -q 'plain / fake-fail: fail (client exit 3' "$TMP/r2/table.md"
expect "hanging client times out" grep -q 'fake-hang: fail (timeout after 2 s' "$TMP/r2/table.md"
expect "rate-limited cell shows % of the limit" grep -Eq '^\| limited \| [0-9.]+ \([0-9]+ %\)' "$TMP/r2/table.md"
expect "external TCP tunnel plumbing (tools/tcp_measure.py, generated file)" \
  test "$(jq_py r2 "r['cells']['plain']['fake-external']['summary'].get('kbps_down', 0) > 0 and r['cells']['limited']['fake-external']['summary'].get('kbps_down', 0) > 0")" = "True"
expect "upload placeholder reaches the client ({transfer} + transfer_upload)" \
  test "$(jq_py r2 "r['cells']['plain']['fake-all']['rounds'][0]['client']['upload_asked']")" = "1000"
expect "limit-share plot for the rate-limited setup" test -s "$TMP/r2/plots/limit-share.png"
expect "one round in QUICK" test "$(jq_py r2 "r['rounds']")" = "1"
expect "no process left after r2" leftovers
expect "one cell's ports differ (free_port with a taken set)" python3 -c "
import sys; sys.path.insert(0, '$SC'); import runner
t = set(); p = [runner.free_port(t) for _ in range(300)]
sys.exit(len(set(p)) != 300)"
expect "more bytes than the answers carry fails the round (around the tunnel)" python3 -c "
import sys; sys.path.insert(0, '$SC'); import runner
r = {'ok': True, 'client': {'bytes_down': 8256978944},
     'fakeres': [{'answered': 6}, {'answered': 2}]}
runner.check_carried(r, {})
k = {'ok': True, 'client': {'bytes_down': 10 ** 6}, 'fakeres': [{'answered': 1200}]}
runner.check_carried(k, {})
sys.exit(r['ok'] or 'around the tunnel' not in r['error'] or not k['ok'])"

expect "per_round: each round side by side must pass, not only the median" python3 -c "
import sys; sys.path.insert(0, '$SC'); import runner
def cell(*k):
    rs = [{'round': i + 1, 'ok': v is not None, 'kbps_down': v} for i, v in enumerate(k)]
    return {'summary': {'kbps_down': sorted(v or 0 for v in k)[len(k) // 2]}, 'rounds': rs}
res = {'cells': {'s': {'a': cell(110, 120, 80), 'b': cell(100, 100, 100),
                       'c': cell(110, None, 130)}}}
ch = {'name': 'x', 'type': 'ratio', 'setup': 's', 'den': 'b', 'min': 1.0}
med, rnd, gone = runner.evaluate(res, [dict(ch, num='a'), dict(ch, num='a', per_round=True),
                                       dict(ch, num='c', per_round=True)])
lim = cell(50, 47, 44)
lim['limit_kbps'] = 100
res['cells']['s']['l'] = lim
ls = {'name': 'y', 'type': 'limit_share', 'setup': 's', 'column': 'l', 'min': 0.45}
lmed, lrnd = runner.evaluate(res, [ls, dict(ls, per_round=True)])
sys.exit(not (med['result'] == 'PASS' and rnd['result'] == 'FAIL' and
              '0.80x' in rnd['detail'] and gone['result'] == 'FAIL' and
              lmed['result'] == 'PASS' and lrnd['result'] == 'FAIL'))"

# 3. --gate with a failing gate: FAIL printed, exit 1.
python3 "$SC/runner.py" --build "$BUILD" --fakeres "$TMP/fakeres" \
  --var fake="$TMP/fake_tunnel.py" --setups "$HERE/setups.json" \
  --columns "$HERE/columns.json" --gates "$HERE/gates-fail.json" \
  --out "$TMP/r3" --gate --setup plain --column fake-first \
  >"$TMP/r3.stdout" 2>"$TMP/r3.stderr"
rc=$?
expect "failing gate exits 1 (rc=$rc)" test "$rc" -eq 1
expect "FAIL printed" grep -q '^FAIL first spreads' "$TMP/r3.stdout"

# 4. Ctrl-C in the middle of a round: exit 130, results written, nothing left.
python3 "$SC/runner.py" --build "$BUILD" --fakeres "$TMP/fakeres" \
  --var fake="$TMP/fake_tunnel.py" --setups "$HERE/setups.json" \
  --columns "$HERE/columns.json" --gates "$HERE/gates.json" \
  --out "$TMP/r4" --setup plain --column fake-hang --timeout 60 \
  >"$TMP/r4.stdout" 2>"$TMP/r4.stderr" &
runner_pid=$!
for _ in $(seq 1 100); do
  pgrep -f "$TMP/fake_tunnel.py client" >/dev/null && break
  sleep 0.05
done
sleep 0.3
kill -INT "$runner_pid"
wait "$runner_pid"
rc=$?
runner_pid=""
expect "interrupted run exits 130 (rc=$rc)" test "$rc" -eq 130
expect "interrupted run still wrote results.json" test -s "$TMP/r4/results.json"
expect "no process left after Ctrl-C" leftovers

# 5. Usage errors.
python3 "$SC/runner.py" --setups "$HERE/setups.json" --columns "$HERE/columns.json" \
  --setup nosuch >/dev/null 2>&1
rc=$?
expect "unknown setup is a usage error (rc=$rc)" test "$rc" -eq 2

# 6. Caps over time (timeline.py): a relay's stats file sampled each time
#    it changes, a client's pool_timeline taken over, the plot's data.
mkdir -p "$TMP/tl"
(cd "$TMP/tl" && python3 - "$SC" <<'PYEOF') >"$TMP/tl.out" 2>&1
import json, os, sys
sys.path.insert(0, sys.argv[1])
import timeline
path = "stats.json"
s = timeline.Sampler(path)
s.poll(100.0)                      # no file yet: no sample
for i, (cap, ans) in enumerate([(0, 10), (48, 40), (36, 70), (36, 100)]):
    with open(path, "w") as f:
        json.dump({"resolvers": [{"name": "127.0.0.2:53", "cap_qps": cap,
                                  "answered": ans}]}, f)
    os.utime(path, (101.0 + i, 101.0 + i))
    s.poll(100.0)
    s.poll(100.0)                  # unchanged: no second sample
tl = s.result()
assert tl["t"] == [1.0, 2.0, 3.0, 4.0], tl
assert [c[0] for c in tl["cap"]] == [0.0, 48.0, 36.0, 36.0], tl
rec = {"ok": True, "round": 1, "client": {"pool_timeline": {
    "period_ms": 1000, "names": ["127.0.0.2:53"], "cap": [[0], [40], [30]],
    "rate": [[1], [2], [3]], "answered": [[30], [60], [90]]}},
    "resolvers": [{"name": "r1", "udp": "127.0.0.2:53"}]}
timeline.from_client(rec)
assert "pool_timeline" not in rec["client"] and rec["timeline"]["t"] == [1.0, 2.0, 3.0], rec
res = {"setups": [{"name": "lim", "rate_limited": True,
                   "resolvers": ["name=r1,rate=30,over=refuse"]}],
       "columns": [{"name": "c", "title": "C"}],
       "cells": {"lim": {"c": {"rounds": [rec]}}}}
made = timeline.plot_caps(res, lambda sc, p, log: open(p, "w").write(sc) > 0,
                          lambda s: {"r1": "r1 (rate=30)"}, print)
dat = open("caps-lim-c.dat").read().split("\n")
assert dat[0] == "t\tcap_r1\tans_r1" and dat[1] == "1.000\t?\t30.0" and \
    dat[2] == "2.000\t40.0\t30.0", dat
gp = open("caps-lim-c.gp").read()
assert "30 with lines dt 3" in gp and "r1 (rate=30) answers/s" in gp, gp
print("ok")
PYEOF
expect "timeline: sampled on change, taken from the client, plotted with the limit ($(tail -1 "$TMP/tl.out"))" \
  grep -qx ok "$TMP/tl.out"

echo "test_runner ($(($(date +%s) - t0)) s):"
echo "test_runner: $passes passed, $fails failed"
if [ "$fails" -ne 0 ]; then
  for f in r1 r2 r3 r4; do
    echo "--- $f.stderr"
    tail -n 15 "$TMP/$f.stderr" 2>/dev/null
  done
  exit 1
fi
exit 0
