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
  dnsperf -s "$1" -p "$2" -d "$FR_TMP/queries" -n 1 -Q 1000 -q 500 -t 1 -v \
    >"$FR_TMP/perf.fw" 2>&1 &
  local p1=$!
  set -- $(fr_addr f fwloss)
  dnsperf -s "$1" -p "$2" -d "$FR_TMP/queries" -n 1 -Q 1000 -q 1000 -t 1 \
    >"$FR_TMP/perf.fwloss" 2>&1 &
  local p2=$!
  set -- $(fr_addr t to)
  dnsperf -s "$1" -p "$2" -d "$FR_TMP/queries" -l 1 -Q 20 -t 1 \
    >"$FR_TMP/perf.to" 2>&1 &
  local p3=$!
  wait $p1 $p2 $p3
  sleep 0.5 # let the last upstream timeouts fire
  fr_stop t || return 1
  fr_stop f || return 1
  fr_stop u || return 1

  check "fw: dnsperf NOERROR of 2000" "$(perf_field "$FR_TMP/perf.fw" NOERROR)" 1995 2000 || ok=1
  local med
  med=$(python3 -c '
import statistics, sys
lat = [float(l.split()[-1]) * 1000 for l in open(sys.argv[1]) if l.startswith("> NOERROR")]
print("%.3f" % statistics.median(lat) if lat else 0)' "$FR_TMP/perf.fw")
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
