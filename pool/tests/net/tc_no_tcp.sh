#!/usr/bin/env bash
# A resolver that truncates every large answer and cannot serve it over
# TCP (issue 13: before the bound, one client query cost 12 upstream
# sends). respool asks a query again over a stream at most
# tc_stream_tries (2) times after a truncated UDP answer, then hands the
# truncated answer to the client as it is: NOERROR with TC, so the client
# may ask over TCP itself.
#   --tcp none   the resolver's TCP port refuses connections
#   --tcp stall  it accepts them and reads the queries, never answers
# Checks per mode: every client query gets the truncated answer (TC,
# NOERROR), the resolver saw at most 1 + tc_stream_tries UDP sends a
# query (plus the start-up check), and in stall mode at most
# tc_stream_tries TCP queries a query: 5 sends in all where there were 12.
. "$(dirname "$0")/lib.sh"
need dig python3 "$RESPOOL_BIN"

N=8
TC_STREAM_TRIES=2

# run_mode MODE: one tinyres in MODE, one respool, N parallel digs.
run_mode() {
  local mode=$1 R i out counts udp tcpq digs=()
  python3 "$TINYRES" --txt-size 1500 --tcp "$mode" >"$WORK/tiny-$mode.out" 2>"$WORK/tiny-$mode.err" &
  local tiny=$!
  PIDS="$PIDS $tiny"
  wait_line "$WORK/tiny-$mode.out" "$WORK/tiny-$mode.err"
  R=$(head -1 "$WORK/tiny-$mode.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["udp"])')
  start_respool "rp-$mode" -r "$R" --set "tc_stream_tries=$TC_STREAM_TRIES" \
    --stats-json "$WORK/stats-$mode.json" --stats 200ms
  wait_json "$WORK/stats-$mode.json" 'j["pool"]["nup"] >= 1' 10 >/dev/null ||
    fail "$mode: resolver not added: $(cat "$WORK/rp-$mode.err")"
  for i in $(seq 1 "$N"); do
    # +time=20: in stall mode each stream try waits out its attempt.
    dig +tries=1 +time=20 +bufsize=1232 +ignore @"$RP_HOST" -p "$RP_PORT" \
      "big$i.$mode.example" TXT >"$WORK/dig-$mode.$i" 2>&1 &
    digs+=($!)
  done
  wait "${digs[@]}"
  for i in $(seq 1 "$N"); do
    out=$(cat "$WORK/dig-$mode.$i")
    echo "$out" | grep -q "status: NOERROR" ||
      fail "$mode: query $i not answered NOERROR: $out"
    echo "$out" | grep -q "flags:.* tc" ||
      fail "$mode: query $i answered without TC: $out"
  done
  stop_respool "rp-$mode"
  kill -TERM "$tiny"
  wait "$tiny"
  counts=$(tail -1 "$WORK/tiny-$mode.out")
  udp=$(echo "$counts" | python3 -c 'import json,sys; print(json.load(sys.stdin)["udp"])')
  tcpq=$(echo "$counts" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tcp"])')
  note "$mode: $N queries, resolver saw udp=$udp tcp=$tcpq ($counts)"
  # A query goes over UDP at most once more after each stream try, as
  # the core's test_core_pool_truncation allows: 1 + tc_stream_tries UDP
  # sends and tc_stream_tries stream tries. The start-up check adds a few
  # small queries (answered whole).
  [ "$udp" -le $(((TC_STREAM_TRIES + 1) * N + 4)) ] ||
    fail "$mode: $udp UDP sends for $N queries (at most $(((TC_STREAM_TRIES + 1) * N + 4)))"
  [ "$tcpq" -le $((TC_STREAM_TRIES * N)) ] ||
    fail "$mode: $tcpq TCP queries for $N queries (at most $((TC_STREAM_TRIES * N)))"
  if [ "$mode" = stall ]; then
    [ "$tcpq" -ge 1 ] || fail "stall: no query reached the resolver over TCP"
  fi
}

run_mode none
run_mode stall
echo ok
