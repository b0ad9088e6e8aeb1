#!/usr/bin/env bash
# shellcheck disable=SC1091,SC2046 # lib.sh is sourced; "set -- $(fr_addr)" splits on purpose
# fr_rate.sh: rate limits under dnsperf. Three 30 q/s resolvers, refusing,
# SERVFAILing and dropping past the limit, are each offered 300 q/s for
# 5 s at once. Each must answer 30 q/s +- 10 % and refuse (or drop) the
# rest, by dnsperf's rcode counts and by fakeres' exit counts.
. "$(dirname "$0")/lib.sh"

SECONDS_RUN=5
OFFER=300

attempt() {
  local ok=0 i
  for i in $(seq 3000); do echo "q$i.rate.example A"; done >"$FR_TMP/queries"
  fr_start f -r name=refuse,rate=30,over=refuse \
    -r name=servfail,rate=30,over=servfail \
    -r name=drop,rate=30,over=drop --answer || return 1
  local r
  for r in refuse servfail drop; do
    set -- $(fr_addr f "$r")
    dnsperf -s "$1" -p "$2" -d "$FR_TMP/queries" -l "$SECONDS_RUN" \
      -Q "$OFFER" -q 2000 -t 1 >"$FR_TMP/perf.$r" 2>&1 &
    echo $! >"$FR_TMP/perfpid.$r"
  done
  for r in refuse servfail drop; do
    wait "$(cat "$FR_TMP/perfpid.$r")" || { fr_log "dnsperf $r failed"; ok=1; }
  done
  fr_stop f || return 1
  for r in refuse servfail drop; do
    local q a ref dr noerr
    q=$(fr_count f "$r" queries)
    a=$(fr_count f "$r" answered)
    ref=$(fr_count f "$r" refused)
    dr=$(fr_count f "$r" dropped)
    noerr=$(perf_field "$FR_TMP/perf.$r" NOERROR)
    check "$r: queries offered" "$q" $((OFFER * SECONDS_RUN * 85 / 100)) \
      $((OFFER * SECONDS_RUN * 105 / 100)) || ok=1
    check "$r: fakeres answers/s" "$(awk -v a="$a" -v s=$SECONDS_RUN 'BEGIN{print a/s}')" 27 33 || ok=1
    check "$r: dnsperf NOERROR/s" "$(awk -v a="$noerr" -v s=$SECONDS_RUN 'BEGIN{print a/s}')" 27 33 || ok=1
    case $r in
    refuse)
      check "refuse: refused = queries - answered" "$ref" $((q - a)) $((q - a)) || ok=1
      check "refuse: dnsperf REFUSED" "$(perf_field "$FR_TMP/perf.$r" REFUSED)" \
        $((q - a - 5)) $((q - a)) || ok=1
      ;;
    servfail)
      check "servfail: refused = queries - answered" "$ref" $((q - a)) $((q - a)) || ok=1
      check "servfail: dnsperf SERVFAIL" "$(perf_field "$FR_TMP/perf.$r" SERVFAIL)" \
        $((q - a - 5)) $((q - a)) || ok=1
      ;;
    drop)
      check "drop: dropped = queries - answered" "$dr" $((q - a)) $((q - a)) || ok=1
      check "drop: dnsperf lost" "$(perf_field "$FR_TMP/perf.$r" "Queries lost")" \
        $((q - a)) $((q - a + 5)) || ok=1
      ;;
    esac
  done
  return $ok
}

fr_main
