#!/usr/bin/env bash
# shellcheck disable=SC1091,SC2046 # lib.sh is sourced; "set -- $(fr_addr)" splits on purpose
# fr_upstream.sh: upstream mode. A fakeres forwards to a second fakeres
# (--answer): answers come back with the client's ID (dig and dnsperf
# check it) and full payload, over UDP and TCP; its latency is added;
# loss applies; an upstream that never answers is timed out and counted.
. "$(dirname "$0")/lib.sh"

attempt() {
  local ok=0 i
  for i in $(seq 2000); do echo "q$i.up.example A"; done >"$FR_TMP/queries"
  fr_start u -r name=up -r name=updead,dead --answer || return 1
  set -- $(fr_addr u up)
  fr_start f --upstream "$1:$2" -r name=fw,latency=20ms \
    -r name=fwloss,loss=20% || return 1
  set -- $(fr_addr u updead)
  fr_start t --upstream "$1:$2" --upstream-timeout 300ms -r name=to || return 1

  set -- $(fr_addr f fw)
  local a
  a=$(dig +short +tries=1 +time=2 @"$1" -p "$2" a.up.example A)
  check "fw: dig A answer is 127.0.0.1" "$([ "$a" = 127.0.0.1 ] && echo 1 || echo 0)" 1 1 || ok=1
  a=$(dig +tcp +tries=1 +time=2 @"$1" -p "$2" s700.up.example TXT | grep -c "status: NOERROR")
  check "fw: dig +tcp TXT NOERROR" "$a" 1 1 || ok=1
  # The TXT payload size survives the relay: 700 bytes + 3 string lengths.
  a=$(dig +bufsize=1232 +tries=1 +time=2 @"$1" -p "$2" s700.up.example TXT |
    sed -n 's/.*MSG SIZE  rcvd: \([0-9]*\).*/\1/p')
  check "fw: relayed TXT message size" "$a" 740 800 || ok=1
  perf_start perf.fw f fw -n 1 -Q 1000 -q 500 -t 1 -v
  local p1=$!
  perf_start perf.fwloss f fwloss -n 1 -Q 1000 -q 1000 -t 1
  local p2=$!
  perf_start perf.to t to -l 1 -Q 20 -t 1
  local p3=$!
  wait $p1 $p2 $p3
  sleep 0.5 # let the last upstream timeouts fire
  fr_stop t || return 1
  fr_stop f || return 1
  fr_stop u || return 1

  check "fw: dnsperf NOERROR of 2000" "$(perf_field "$FR_TMP/perf.fw" NOERROR)" 1995 2000 || ok=1
  local med
  med=$(perf_latencies "$FR_TMP/perf.fw" | cut -d' ' -f1)
  check "fw: median latency ms" "$med" 20 30 || ok=1
  check "fwloss: dnsperf lost of 2000" "$(perf_field "$FR_TMP/perf.fwloss" "Queries lost")" 300 500 || ok=1
  check "fwloss: fakeres lost of 2000" "$(fr_count f fwloss lost)" 300 500 || ok=1
  local uq fa la
  uq=$(fr_count u up queries)
  fa=$(fr_count f fw answered)
  la=$(fr_count f fwloss answered)
  # Upstream saw every forwarded query: answered ones plus the lost-after.
  check "up: queries seen upstream" "$uq" $((fa + la)) $((fa + la + 500)) || ok=1
  check "up: upstream answered all" "$(fr_count u up answered)" "$uq" "$uq" || ok=1
  check "to: upstream timeouts" "$(fr_count t to upstream_timeouts)" 18 22 || ok=1
  check "to: answered" "$(fr_count t to answered)" 0 0 || ok=1
  check "to: dnsperf completed" "$(perf_field "$FR_TMP/perf.to" "Queries completed")" 0 0 || ok=1
  return $ok
}

fr_main
