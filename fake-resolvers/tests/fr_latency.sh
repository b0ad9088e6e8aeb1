#!/usr/bin/env bash
# shellcheck disable=SC1091,SC2046 # lib.sh is sourced; "set -- $(fr_addr)" splits on purpose
# fr_latency.sh: a 60 ms resolver's median latency (dnsperf -v, per query)
# is 60-66 ms, a jittered one stays within its bounds, and a dead one
# answers nothing at all.
. "$(dirname "$0")/lib.sh"

attempt() {
  local ok=0 i
  for i in $(seq 500); do echo "q$i.lat.example A"; done >"$FR_TMP/queries"
  fr_start f -r name=l60,latency=60ms -r name=j60,latency=60ms,jitter=10ms \
    -r name=dead,dead --answer || return 1
  perf_start perf.l60 f l60 -l 3 -Q 100 -v
  local p1=$!
  perf_start perf.j60 f j60 -l 3 -Q 100 -v
  local p2=$!
  perf_start perf.dead f dead -l 2 -Q 50 -t 1
  local p3=$!
  wait $p1 $p2 $p3
  # TCP to the dead one: connects, no answer.
  set -- $(fr_addr f dead tcp)
  if dig +tcp +tries=1 +time=1 @"$1" -p "$2" x.example A >/dev/null 2>&1; then
    fr_log "FAIL: dead resolver answered over TCP"
    ok=1
  fi
  fr_stop f || return 1
  set -- $(perf_latencies "$FR_TMP/perf.l60")
  check "l60: samples" "$2" 250 320 || ok=1
  check "l60: median ms" "$1" 60 66 || ok=1
  check "l60: min ms (never early)" "$3" 60 100 || ok=1
  set -- $(perf_latencies "$FR_TMP/perf.j60")
  check "j60: median ms" "$1" 58 66 || ok=1
  check "j60: min ms" "$3" 50 60 || ok=1
  # The upper jitter bound is exact in unit.fr_profile (fake clock); here a
  # busy machine can delay any one datagram, so only gross errors fail.
  check "j60: max ms" "$4" 60 250 || ok=1
  check "dead: dnsperf completed" "$(perf_field "$FR_TMP/perf.dead" "Queries completed")" 0 0 || ok=1
  check "dead: fakeres answered" "$(fr_count f dead answered)" 0 0 || ok=1
  check "dead: fakeres dead count" "$(fr_count f dead dead)" 90 105 || ok=1
  return $ok
}

fr_main
