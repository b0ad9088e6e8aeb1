#!/usr/bin/env bash
# shellcheck disable=SC1091,SC2046 # lib.sh is sourced; "set -- $(fr_addr)" splits on purpose
# fr_loss.sh: a resolver losing 10 % loses 10 +- 3 % of 5000 queries, by
# dnsperf's count and by fakeres' own.
. "$(dirname "$0")/lib.sh"

N=5000

attempt() {
  local ok=0 i
  for i in $(seq $N); do echo "q$i.loss.example A"; done >"$FR_TMP/queries"
  fr_start f -r name=l10,loss=10% --answer || return 1
  set -- $(fr_addr f l10)
  dnsperf -s "$1" -p "$2" -d "$FR_TMP/queries" -n 1 -Q 2500 -q 2000 -t 1 \
    >"$FR_TMP/perf" 2>&1 || { fr_log "dnsperf failed"; ok=1; }
  fr_stop f || return 1
  local sent lost q a flost
  sent=$(perf_field "$FR_TMP/perf" "Queries sent")
  lost=$(perf_field "$FR_TMP/perf" "Queries lost")
  q=$(fr_count f l10 queries)
  a=$(fr_count f l10 answered)
  flost=$(fr_count f l10 lost)
  check "queries sent" "$sent" $N $N || ok=1
  check "fakeres queries" "$q" $((N - 5)) $N || ok=1
  check "dnsperf lost" "$lost" $((N * 7 / 100)) $((N * 13 / 100)) || ok=1
  check "fakeres lost" "$flost" $((N * 7 / 100)) $((N * 13 / 100)) || ok=1
  check "answered + lost = queries" $((a + flost)) "$q" "$q" || ok=1
  return $ok
}

fr_main
