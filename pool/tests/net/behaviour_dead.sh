#!/usr/bin/env bash
# A dead resolver among three: while dnsperf offers 100 q/s, one of three
# unlimited resolvers is killed. It must be marked down (after down_after
# failures), no client query may be lost (dnsperf timeout 6 s = deadline
# 5 s + 1 s), and once restarted on the same port it must be back within
# probe_interval + 1 s (6 s).
. "$(dirname "$0")/lib.sh"
need dnsperf python3 "$RESPOOL_BIN" "$FAKERES_BIN"

check() {
  start_fakeres fa -r name=a --answer
  start_fakeres fb -r name=b --answer
  local C CPORT t_down t_back lost sent noerr
  # Below the ephemeral range: restarted on it later, after the pool has
  # opened and closed many upstream source ports.
  CPORT=$(free_low_port)
  start_fakeres fc -r name=c,port="$CPORT" --answer
  C=$(fakeres_udp fc 0)
  start_respool rp -r "$(fakeres_udp fa 0)" -r "$(fakeres_udp fb 0)" -r "$C" \
    --stats-json "$WORK/stats.json" --stats 100ms
  wait_json "$WORK/stats.json" 'j["pool"]["nup"] >= 3' 10 >/dev/null ||
    { note "resolvers not added"; return 1; }
  dnsperf_data "$WORK/q.txt" 20000 A
  dnsperf -s "$RP_HOST" -p "$RP_PORT" -d "$WORK/q.txt" -Q 100 -l 20 \
    -t 6 -q 1000 >"$WORK/perf.out" 2>&1 &
  local PERF=$!
  PIDS="$PIDS $PERF"
  sleep 3
  stop_pid "$FR_fc_PID"
  t_down=$(wait_json "$WORK/stats.json" 'j["resolvers"][2]["state"] == "down"' 8) ||
    { note "killed resolver never marked down"; return 1; }
  local fails
  fails=$(json_get "$WORK/stats.json" 'j["resolvers"][2]["errors"] + j["resolvers"][2]["dropped"]')
  note "down ${t_down}s after the kill, after $fails failures (down_after 8)"
  [ "$fails" -ge 8 ] || { note "down after only $fails failures"; return 1; }
  sleep 2
  start_fakeres fc -r name=c,port="$CPORT" --answer
  t_back=$(wait_json "$WORK/stats.json" 'j["resolvers"][2]["state"] != "down"' 6) ||
    { note "restarted resolver not back within 6 s"; wait "$PERF"; return 1; }
  note "back ${t_back}s after restart"
  wait "$PERF"
  lost=$(dnsperf_field "$WORK/perf.out" "Queries lost")
  sent=$(dnsperf_field "$WORK/perf.out" "Queries sent")
  noerr=$(dnsperf_rcode "$WORK/perf.out" NOERROR)
  note "dnsperf sent=$sent lost=$lost noerror=$noerr"
  stop_respool rp
  [ "${lost:-1}" -eq 0 ] || { note "$lost queries lost"; return 1; }
}

check || fail "dead resolver check"
echo ok
