#!/usr/bin/env bash
# case-cost.sh: what 0x20 (settings.case_randomize, pool/core/case.h)
# costs the relay, counted in instructions, not timed: respool runs under
# valgrind --tool=callgrind (--kind generic) in front of one fakeres
# --answer while dnsperf relays QUERIES queries through it at QPS, once
# with 0x20 on and once with --set case_randomize=0. Instruction counts
# are the same on a loaded machine as on a quiet one (the few queries a
# slow run may resend aside), which CPU time is not.
#
# Environment: QUERIES (default 20000), QPS (1000: respool under
# valgrind answers that without loss), NAME (the dnsperf names,
# printf-style with the query number; default "q%d.perf.example", 12
# letters). Prints per run the instructions respool executed (the whole
# process: start, the relay and exit), the answered queries and the
# instructions per answered query; then the difference per query and
# the share of the 0x20 functions (inclusive) from callgrind_annotate.
. "$(dirname "$0")/../net/lib.sh"
need valgrind callgrind_annotate dnsperf python3 "$RESPOOL_BIN" "$FAKERES_BIN"

QUERIES=${QUERIES:-20000}
QPS=${QPS:-1000}
NAME=${NAME:-q%d.perf.example}

start_fakeres fr -r name=a --answer
A=$(fakeres_udp fr 0)
python3 -c 'import sys
n, fmt = int(sys.argv[2]), sys.argv[3]
with open(sys.argv[1], "w") as f:
    for i in range(n):
        f.write((fmt % i) + " A\n")' "$WORK/q.txt" "$QUERIES" "$NAME"

# run MODE: respool under callgrind with case_randomize=MODE; prints
# "MODE instructions answered".
run() {
  local out="$WORK/cg.$1.out"
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$RESPOOL_BIN" -r "$A" --kind generic --pretest "" \
    --set case_randomize="$1" --stats-json "$WORK/stats.$1.json" \
    >"$WORK/rp.$1.out" 2>"$WORK/rp.$1.err" &
  RP_PID=$!
  PIDS="$PIDS $RP_PID"
  wait_line "$WORK/rp.$1.out"
  local addr
  addr=$(head -1 "$WORK/rp.$1.out")
  dnsperf -s "${addr%:*}" -p "${addr##*:}" -d "$WORK/q.txt" -t 5 -q 20 \
    -Q "$QPS" -n 1 >"$WORK/perf.$1" 2>&1
  kill -TERM "$RP_PID"
  wait "$RP_PID"
  local ir answered
  ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORK/rp.$1.err")
  [ -n "$ir" ] || ir=$(grep -m1 '^summary:' "$out" | awk '{print $2}')
  answered=$(sed -n 's/.*Queries completed: *\([0-9]*\).*/\1/p' "$WORK/perf.$1")
  echo "$1 $ir $answered"
}

on=$(run 1)
off=$(run 0)
echo "$on" "$off" | awk '{
  printf "case_randomize=1: %d instructions, %d answered, %.0f per query\n", $2, $3, $2 / $3
  printf "case_randomize=0: %d instructions, %d answered, %.0f per query\n", $5, $6, $5 / $6
  printf "0x20 costs %.0f instructions per query (%.1f %%)\n", $2 / $3 - $5 / $6, 100 * ($2 / $3 - $5 / $6) / ($5 / $6)
}'
callgrind_annotate --inclusive=yes "$WORK/cg.1.out" 2>/dev/null |
  grep -E "rp_case_|pool_case_|rp_pool_on_answer|rp_pool_submit|PROGRAM TOTALS" |
  sed 's/ \[.*//' | head -12
