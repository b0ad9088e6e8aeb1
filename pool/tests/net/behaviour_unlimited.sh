#!/usr/bin/env bash
# Three unlimited resolvers share the load: dnsperf offers 300 q/s for
# 10 s through respool with duplicate 1; each resolver gets 25-42 % of
# the queries (counted by fakeres) and every query is answered NOERROR.
# With copies (duplicate 2, the default) the copies go to the one best
# resolver by design, which skews the raw counts; that is not this
# check's subject.
. "$(dirname "$0")/lib.sh"
need dnsperf python3 "$RESPOOL_BIN" "$FAKERES_BIN"

QPS=${QPS:-300}
SECS=${SECS:-10}

check() {
  start_fakeres fr -r name=a -r name=b -r name=c --answer
  echo '{"duplicate": 1}' >"$WORK/pool.json"
  start_respool rp -r "$(fakeres_udp fr 0)" -r "$(fakeres_udp fr 1)" \
    -r "$(fakeres_udp fr 2)" --config "$WORK/pool.json" --stats-json "$WORK/stats.json" --stats 500ms
  wait_json "$WORK/stats.json" 'j["pool"]["nup"] >= 3' 10 >/dev/null ||
    { note "resolvers not added"; return 1; }
  dnsperf_data "$WORK/q.txt" 20000 A
  dnsperf -s "$RP_HOST" -p "$RP_PORT" -d "$WORK/q.txt" -Q "$QPS" -l "$SECS" \
    -t 5 -q 500 >"$WORK/perf.out" 2>&1
  stop_respool rp
  stop_pid "$FR_fr_PID"
  local counts noerr sent
  counts=$(tail -1 "$WORK/fr.out")
  noerr=$(dnsperf_rcode "$WORK/perf.out" NOERROR)
  sent=$(dnsperf_field "$WORK/perf.out" "Queries sent")
  note "dnsperf sent=$sent noerror=$noerr; fakeres $counts"
  python3 - "$counts" <<'PY' || return 1
import json, sys
r = json.loads(sys.argv[1])["resolvers"]
q = [x["queries"] for x in r]
tot = sum(q)
shares = [100.0 * x / tot for x in q] if tot else [0, 0, 0]
print("# shares %: " + " ".join("%.1f" % s for s in shares), file=sys.stderr)
sys.exit(0 if all(25.0 <= s <= 42.0 for s in shares) else 1)
PY
  [ "$noerr" -ge $((sent * 99 / 100)) ] ||
    { note "only $noerr of $sent NOERROR"; return 1; }
}

check || fail "unlimited resolvers not shared 25-42 %"
echo ok
