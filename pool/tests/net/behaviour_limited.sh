#!/usr/bin/env bash
# Three limited resolvers (20 q/s refusing, 30 q/s refusing, 40 q/s
# dropping), offered 150 q/s for 20 s: over the last 10 s at least 80 %
# of their 90 q/s is answered NOERROR. dnsperf runs twice back to back
# (10 s to learn, 10 s measured) because it reports totals only.
. "$(dirname "$0")/lib.sh"
need dnsperf python3 "$RESPOOL_BIN" "$FAKERES_BIN"

check() {
  start_fakeres fr -r name=r20,rate=20,over=refuse \
    -r name=r30,rate=30,over=refuse -r name=d40,rate=40,over=drop --answer
  start_respool rp -r "$(fakeres_udp fr 0)" -r "$(fakeres_udp fr 1)" \
    -r "$(fakeres_udp fr 2)" --stats-json "$WORK/stats.json" --stats 1s
  wait_json "$WORK/stats.json" 'j["pool"]["nup"] >= 3' 10 >/dev/null ||
    { note "resolvers not added"; return 1; }
  dnsperf_data "$WORK/q.txt" 20000 A
  dnsperf -s "$RP_HOST" -p "$RP_PORT" -d "$WORK/q.txt" -Q 150 -l 10 \
    -t 5 -q 2000 >"$WORK/warm.out" 2>&1
  dnsperf -s "$RP_HOST" -p "$RP_PORT" -d "$WORK/q.txt" -Q 150 -l 10 \
    -t 5 -q 2000 >"$WORK/perf.out" 2>&1
  stop_respool rp
  stop_pid "$FR_fr_PID"
  local noerr sent
  noerr=$(dnsperf_rcode "$WORK/perf.out" NOERROR)
  sent=$(dnsperf_field "$WORK/perf.out" "Queries sent")
  note "warm-up: $(grep 'Response codes' "$WORK/warm.out")"
  note "measured: sent=$sent $(grep 'Response codes' "$WORK/perf.out")"
  note "fakeres: $(tail -1 "$WORK/fr.out")"
  note "NOERROR $noerr over 10 s; needed 720 (80 % of 90 q/s)"
  [ "${noerr:-0}" -ge 720 ]
}

check || fail "three-limited: too few NOERROR answers"
echo ok
