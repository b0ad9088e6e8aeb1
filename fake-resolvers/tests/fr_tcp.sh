#!/usr/bin/env bash
# shellcheck disable=SC1091,SC2046 # lib.sh is sourced; "set -- $(fr_addr)" splits on purpose
# fr_tcp.sh: TCP (RFC 7766 framing). dig +tcp and kdig +tcp get answers;
# pipelined queries on one connection all come back, out of order under
# jitter; a frame split into single bytes, a 5000-byte TXT and a
# half-closed connection work; dnsperf -m tcp completes every query.
. "$(dirname "$0")/lib.sh"

attempt() {
  local ok=0 i a
  for i in $(seq 1000); do echo "q$i.tcp.example A"; done >"$FR_TMP/queries"
  fr_start f -r name=t,latency=10ms,jitter=9ms -r name=fast,addr=127.0.0.3 \
    --answer || return 1
  set -- $(fr_addr f t tcp)
  a=$(dig +tcp +short +tries=1 +time=2 @"$1" -p "$2" a.tcp.example A)
  check "dig +tcp A" "$([ "$a" = 127.0.0.1 ] && echo 1 || echo 0)" 1 1 || ok=1
  a=$(kdig +tcp +short +retry=0 +time=2 @"$1" -p "$2" a.tcp.example A)
  check "kdig +tcp A" "$([ "$a" = 127.0.0.1 ] && echo 1 || echo 0)" 1 1 || ok=1
  python3 "$(dirname "$0")/fr_probe.py" tcp "$1" "$2" || ok=1
  set -- $(fr_addr f fast tcp)
  check "resolver on its own address" "$([ "$1" = 127.0.0.3 ] && echo 1 || echo 0)" 1 1 || ok=1
  dnsperf -m tcp -s "$1" -p "$2" -d "$FR_TMP/queries" -n 1 -Q 1000 -c 4 \
    >"$FR_TMP/perf" 2>&1 || { fr_log "dnsperf -m tcp failed"; ok=1; }
  check "dnsperf -m tcp NOERROR of 1000" "$(perf_field "$FR_TMP/perf" NOERROR)" 1000 1000 || ok=1
  fr_stop f || return 1
  return $ok
}

fr_main
