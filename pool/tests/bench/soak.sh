#!/usr/bin/env bash
# soak.sh: tunnel traffic through respool for SOAK_SECS under ASan and
# UBSan while the resolvers die, come back and change their limits
# (issue 13; docs/reliability.md, "Soak").
#
# What runs, all from the sanitizer build (SOAK_BUILD, default
# build-asan/, the directory `./run.sh asan` makes; configured and built
# here, -j ${JOBS:-2}, when a binary is missing):
# - the minimal DNSTT tunnel server (tun-dnstt-server), serving
#   SOAK_DOWNLOAD bytes of its pattern to each session and writing what is
#   uploaded to a sink file;
# - SOAK_RESOLVERS (4) fakeres processes, one resolver each on its own
#   127.0.0.k address, forwarding to the tunnel server; one process each
#   so that one can be killed and started again on the same address and
#   port;
# - respool (kind dnstt, --pretest "" as the table's relay column) over
#   those resolvers;
# - rounds of tun-dnstt-client through respool, one after the other:
#   each downloads SOAK_DOWNLOAD bytes (the client checks the pattern,
#   exit 0 when every byte arrived intact) and uploads a random file of
#   SOAK_UPLOAD bytes (--in); a round gets SOAK_ROUND_TIMEOUT seconds;
# - a driver that every SOAK_STEP seconds (30) takes the next step of a
#   fixed cycle: a resolver is killed (SIGKILL), started again (same
#   address and port), restarted with a rate limit (refusing or
#   dropping past it), with latency, with loss, or unlimited again; at
#   least two resolvers are up at any time.
# respool's RSS (VmRSS of /proc/PID/status) is sampled every 10 s.
#
# Passes when: no sanitizer report (ASan, LeakSanitizer, UBSan) in the log
# of any process; respool exits 0 on SIGTERM; every minimal round exited
# 0 and at least one ran; the sink holds exactly the uploads of the rounds
# (sha256); and the RSS at the end is at most 1.5 times the RSS after
# SOAK_WARMUP (30 s) plus 8 MiB.
# Prints the figures, one "soak: key=value" line each.
#
# Environment: SOAK_SECS (600; 60 for the short check), SOAK_STEP (30),
# SOAK_WARMUP (30), SOAK_RESOLVERS (4, at least 3), SOAK_DOWNLOAD (4M),
# SOAK_UPLOAD (65536), SOAK_ROUND_TIMEOUT (180), SOAK_BUILD, KEEP_WORK=1
# keeps the logs. ASan's quarantine is set to 32 MiB (ASAN_OPTIONS, unless
# given): the default 256 MiB fills slowly over the run and would read as
# growth.
#
# The real dnstt (issue 10's client, where present): when RP_REAL_TUNNELS
# (default ../shared/real-tunnels beside the source tree) holds
# bin/dnstt-server, bin/dnstt-client and dnstt/server.{key,pub}, a second
# lane runs beside the first: the real dnstt-server behind
# scenarios/tools/tcp_measure.py (a TCP source of its pattern), its own
# SOAK_RESOLVERS fakeres on 127.0.0.(30+k) (fakeres forwards to one
# upstream), its own respool from the sanitizer build started as a user
# starts it (no --kind, the default start-up check), and rounds of the
# real dnstt-client through it, each fetching SOAK_REAL_DOWNLOAD (4M)
# bytes through the tunnel (tcp_measure checks the pattern, exit 0 when
# every byte arrived intact; SOAK_ROUND_TIMEOUT each). Every step of the
# cycle is applied to both lanes' resolver k. Without the binaries the
# lane is skipped with a line that says so. The same checks hold for the
# second respool (sanitizers, exit 0, RSS) and its rounds.
set -u

ROOT=${RP_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
SOAK_BUILD=${SOAK_BUILD:-$ROOT/build-asan}
SOAK_SECS=${SOAK_SECS:-600}
SOAK_STEP=${SOAK_STEP:-30}
SOAK_WARMUP=${SOAK_WARMUP:-30}
SOAK_RESOLVERS=${SOAK_RESOLVERS:-4}
SOAK_DOWNLOAD=${SOAK_DOWNLOAD:-4M}
SOAK_UPLOAD=${SOAK_UPLOAD:-65536}
SOAK_ROUND_TIMEOUT=${SOAK_ROUND_TIMEOUT:-180}
SOAK_REAL_DOWNLOAD=${SOAK_REAL_DOWNLOAD:-4M}
REAL_DIR=${RP_REAL_TUNNELS:-$ROOT/../shared/real-tunnels}
JOBS=${JOBS:-2}
DOMAIN=t.example
RSS_EVERY=10

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=32}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

SERVER_BIN=$SOAK_BUILD/tunnels/tun-dnstt-server
CLIENT_BIN=$SOAK_BUILD/tunnels/tun-dnstt-client

# lib.sh: WORK, PIDS (killed at exit), fail, wait_line.
RP_BUILD_DIR=$SOAK_BUILD
. "$ROOT/pool/tests/net/lib.sh"

say() { echo "soak: $*"; }

[ "$SOAK_RESOLVERS" -ge 3 ] || fail "SOAK_RESOLVERS must be at least 3"
if [ ! -x "$RESPOOL_BIN" ] || [ ! -x "$FAKERES_BIN" ] ||
  [ ! -x "$SERVER_BIN" ] || [ ! -x "$CLIENT_BIN" ]; then
  say "building the sanitizer build in $SOAK_BUILD"
  cmake -S "$ROOT" -B "$SOAK_BUILD" -DRP_WERROR=ON -DRP_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug >/dev/null || fail "cmake failed"
  cmake --build "$SOAK_BUILD" -j "$JOBS" --target respool fakeres \
    tun-dnstt-server tun-dnstt-client >/dev/null || fail "build failed"
fi

# ---- the tunnel server ----------------------------------------------------
"$SERVER_BIN" --listen 127.0.0.1:0 --domain "$DOMAIN" \
  --serve-bytes "$SOAK_DOWNLOAD" --sink "$WORK/sink" \
  >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
PIDS="$PIDS $SERVER_PID"
wait_line "$WORK/server.out"
SERVER_ADDR=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["listen"])' "$WORK/server.out")

# ---- the real dnstt server (the second lane) --------------------------------
REAL=0
if [ -x "$REAL_DIR/bin/dnstt-server" ] && [ -x "$REAL_DIR/bin/dnstt-client" ] &&
  [ -r "$REAL_DIR/dnstt/server.key" ] && [ -r "$REAL_DIR/dnstt/server.pub" ]; then
  REAL=1
  real_bytes=$(numfmt --from=iec "$SOAK_REAL_DOWNLOAD")
  read -r REAL_AUX REAL_SRV <<<"$(python3 -c 'import socket
ps = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ps.append(s)
print(*[s.getsockname()[1] for s in ps])')"
  python3 "$ROOT/scenarios/tools/tcp_measure.py" serve \
    --target "127.0.0.1:$REAL_AUX" --listen-addr "127.0.0.1:$REAL_SRV" \
    --bytes "$real_bytes" -- "$REAL_DIR/bin/dnstt-server" \
    -udp "127.0.0.1:$REAL_SRV" -privkey-file "$REAL_DIR/dnstt/server.key" \
    "$DOMAIN" "127.0.0.1:$REAL_AUX" >"$WORK/real-server.out" 2>"$WORK/real-server.log" &
  REAL_SERVER_PID=$!
  PIDS="$PIDS $REAL_SERVER_PID"
  wait_line "$WORK/real-server.out"
else
  say "real dnstt: skipped (no bin/dnstt-server, bin/dnstt-client and dnstt/server.key/.pub in $REAL_DIR; set RP_REAL_TUNNELS)"
fi

# ---- the resolvers ---------------------------------------------------------
# Resolver k (1-based) is one fakeres on 127.0.0.(10+k); RES_PORT[k] is the
# port of its first start, kept by every restart; RES_PID[k] is empty while
# it is down. Each start writes its own log, res<k>.<n>.err. The real
# lane's resolver k is index k+REAL_OFF, on 127.0.0.(30+k), forwarding to
# the real server.
declare -a RES_PID RES_PORT RES_SPEC
RES_STARTS=0
REAL_OFF=20

# res_start K SPEC: starts resolver K (K > REAL_OFF: of the real lane)
# with the profile SPEC.
res_start() {
  local k=$1 spec=$2 port=${RES_PORT[$1]:-0} out up=$SERVER_ADDR
  if [ "$k" -gt "$REAL_OFF" ]; then
    up="127.0.0.1:$REAL_SRV"
  fi
  RES_STARTS=$((RES_STARTS + 1))
  out="$WORK/res$k.$RES_STARTS"
  "$FAKERES_BIN" -r "name=r$k,addr=127.0.0.$((10 + k)),port=$port${spec:+,$spec}" \
    --upstream "$up" >"$out.out" 2>"$out.err" &
  RES_PID[$k]=$!
  PIDS="$PIDS ${RES_PID[$k]}"
  RES_SPEC[$k]=${spec:-unlimited}
  wait_line "$out.out"
  if [ "$port" = 0 ]; then
    RES_PORT[$k]=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["resolvers"][0]["udp"].rsplit(":",1)[1])' "$out.out")
  fi
}

# res_down K SIGNAL: takes resolver K down: SIGKILL for a resolver that
# dies, SIGTERM for a restart (its sanitizer checks run at exit).
res_down() {
  local k=$1
  if [ -n "${RES_PID[$k]:-}" ]; then
    kill "-$2" "${RES_PID[$k]}" 2>/dev/null
    wait "${RES_PID[$k]}" 2>/dev/null
    RES_PID[$k]=""
    RES_SPEC[$k]=dead
  fi
}

# res_restart K SPEC: resolver K with a new profile on the same address.
res_restart() {
  res_down "$1" TERM
  res_start "$1" "$2"
}

# lanes_k K: resolver K in each lane that runs.
lanes_k() {
  echo "$1"
  [ "$REAL" = 1 ] && echo "$(($1 + REAL_OFF))"
}

for k in $(seq 1 "$SOAK_RESOLVERS"); do
  for i in $(lanes_k "$k"); do
    res_start "$i" ""
  done
done
RP_ARGS=()
REAL_ARGS=()
for k in $(seq 1 "$SOAK_RESOLVERS"); do
  RP_ARGS+=(-r "127.0.0.$((10 + k)):${RES_PORT[$k]}")
  [ "$REAL" = 1 ] && REAL_ARGS+=(-r "127.0.0.$((10 + k + REAL_OFF)):${RES_PORT[$((k + REAL_OFF))]}")
done

# ---- respool ---------------------------------------------------------------
# respool_start NAME ARGS...: starts respool with ARGS (stats every 10 s to
# NAME-stats.json, logs NAME.out/.err); sets STARTED_PID and STARTED_ADDR.
respool_start() {
  local name=$1
  shift
  "$RESPOOL_BIN" "$@" --listen 127.0.0.1:0 \
    --stats-json "$WORK/$name-stats.json" --stats 10s \
    >"$WORK/$name.out" 2>"$WORK/$name.err" &
  STARTED_PID=$!
  PIDS="$PIDS $STARTED_PID"
  wait_line "$WORK/$name.out"
  STARTED_ADDR=$(head -1 "$WORK/$name.out")
}

respool_start respool "${RP_ARGS[@]}" --kind dnstt --pretest ""
RP_PID=$STARTED_PID
RP_ADDR=$STARTED_ADDR
say "respool=$RP_ADDR pid=$RP_PID resolvers=$SOAK_RESOLVERS secs=$SOAK_SECS"
REAL_PID=""
if [ "$REAL" = 1 ]; then
  # As a user starts it in front of the real client: no --kind, the
  # default start-up check.
  respool_start real-respool "${REAL_ARGS[@]}"
  REAL_PID=$STARTED_PID
  REAL_ADDR=$STARTED_ADDR
  say "real lane: respool=$REAL_ADDR pid=$REAL_PID real dnstt from $REAL_DIR"
fi

# ---- traffic ---------------------------------------------------------------
head -c "$SOAK_UPLOAD" /dev/urandom >"$WORK/upload"
STOP="$WORK/stop"

# minimal_rounds: tun-dnstt-client rounds until $STOP exists; one line per
# round in rounds.txt: "<exit> <seconds>".
minimal_rounds() {
  local n=0 t0 rc
  while [ ! -e "$STOP" ]; do
    n=$((n + 1))
    t0=$(date +%s)
    timeout -s TERM "$SOAK_ROUND_TIMEOUT" "$CLIENT_BIN" --resolver "$RP_ADDR" \
      --domain "$DOMAIN" --download-bytes "$SOAK_DOWNLOAD" \
      --in "$WORK/upload" --measure \
      >>"$WORK/client.out" 2>"$WORK/client.$n.err"
    rc=$?
    echo "$rc $(($(date +%s) - t0))" >>"$WORK/rounds.txt"
  done
}

# real_rounds: rounds of the real dnstt-client through the second
# respool until $STOP exists; one line per round in real-rounds.txt.
real_rounds() {
  local n=0 t0 rc port
  while [ ! -e "$STOP" ]; do
    n=$((n + 1))
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    t0=$(date +%s)
    timeout -s TERM "$SOAK_ROUND_TIMEOUT" python3 \
      "$ROOT/scenarios/tools/tcp_measure.py" fetch --connect "127.0.0.1:$port" \
      --bytes "$real_bytes" --upload-bytes 8192 -- \
      "$REAL_DIR/bin/dnstt-client" -udp "$REAL_ADDR" \
      -pubkey-file "$REAL_DIR/dnstt/server.pub" "$DOMAIN" "127.0.0.1:$port" \
      >>"$WORK/real-client.out" 2>"$WORK/real-client.$n.log"
    rc=$?
    echo "$rc $(($(date +%s) - t0))" >>"$WORK/real-rounds.txt"
  done
}

minimal_rounds &
TRAFFIC_PIDS=$!
PIDS="$PIDS $TRAFFIC_PIDS"
if [ "$REAL" = 1 ]; then
  real_rounds &
  TRAFFIC_PIDS="$TRAFFIC_PIDS $!"
  PIDS="$PIDS $!"
fi

# ---- the driver and the RSS samples ----------------------------------------
# The cycle of steps, one every SOAK_STEP seconds; resolver 1 is never
# killed while another is down, so two are always up.
STEPS=(
  "kill 2"
  "start 2 "
  "restart 3 rate=20,over=refuse"
  "kill 1"
  "restart 4 rate=40,over=drop"
  "start 1 latency=50ms,jitter=10ms"
  "restart 3 loss=20%"
  "kill 4"
  "restart 2 rate=15,over=servfail"
  "start 4 "
  "restart 1 "
  "restart 3 "
  "restart 2 "
)

# rss_kib [PID]: VmRSS of respool (or PID), KiB.
rss_kib() {
  sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/${1:-$RP_PID}/status" 2>/dev/null
}

T0=$(date +%s)
next_step=$SOAK_STEP
next_rss=0
step=0
RSS_START=""
RSS_MAX=0
REAL_RSS_START=""
: >"$WORK/rss.txt"
: >"$WORK/real-rss.txt"
while :; do
  now=$(($(date +%s) - T0))
  [ "$now" -ge "$SOAK_SECS" ] && break
  kill -0 "$RP_PID" 2>/dev/null || fail "respool died: $(tail -20 "$WORK/respool.err")"
  if [ -n "$REAL_PID" ] && ! kill -0 "$REAL_PID" 2>/dev/null; then
    fail "the real lane's respool died: $(tail -20 "$WORK/real-respool.err")"
  fi
  if [ "$now" -ge "$next_rss" ]; then
    rss=$(rss_kib)
    echo "$now $rss" >>"$WORK/rss.txt"
    if [ -z "$RSS_START" ] && [ "$now" -ge "$SOAK_WARMUP" ]; then
      RSS_START=$rss
    fi
    if [ -n "$REAL_PID" ]; then
      real_rss=$(rss_kib "$REAL_PID")
      echo "$now $real_rss" >>"$WORK/real-rss.txt"
      if [ -z "$REAL_RSS_START" ] && [ "$now" -ge "$SOAK_WARMUP" ]; then
        REAL_RSS_START=$real_rss
      fi
    fi
    [ "${rss:-0}" -gt "$RSS_MAX" ] && RSS_MAX=$rss
    next_rss=$((next_rss + RSS_EVERY))
  fi
  if [ "$now" -ge "$next_step" ]; then
    read -r op k spec <<<"${STEPS[$((step % ${#STEPS[@]}))]}"
    for i in $(lanes_k "$k"); do
      case "$op" in
        kill) res_down "$i" KILL ;;
        start) res_start "$i" "${spec:-}" ;;
        restart) res_restart "$i" "${spec:-}" ;;
      esac
    done
    step=$((step + 1))
    say "t=${now}s step=$step $op r$k ${spec:-} ($(for i in $(seq 1 "$SOAK_RESOLVERS"); do printf 'r%s=%s ' "$i" "${RES_SPEC[$i]}"; done))"
    next_step=$((next_step + SOAK_STEP))
  fi
  sleep 1
done
RSS_END=$(rss_kib)
echo "$SOAK_SECS $RSS_END" >>"$WORK/rss.txt"
REAL_RSS_END=""
if [ -n "$REAL_PID" ]; then
  REAL_RSS_END=$(rss_kib "$REAL_PID")
  echo "$SOAK_SECS $REAL_RSS_END" >>"$WORK/real-rss.txt"
fi

# ---- the end -----------------------------------------------------------------
touch "$STOP"
say "waiting for the last round to end"
for p in $TRAFFIC_PIDS; do
  wait "$p"
done
for k in $(seq 1 "$SOAK_RESOLVERS"); do
  for i in $(lanes_k "$k"); do
    res_down "$i" TERM
  done
done
kill -TERM "$RP_PID" 2>/dev/null
wait "$RP_PID"
RP_RC=$?
REAL_RC=0
if [ -n "$REAL_PID" ]; then
  kill -TERM "$REAL_PID" 2>/dev/null
  wait "$REAL_PID"
  REAL_RC=$?
  kill -TERM "$REAL_SERVER_PID" 2>/dev/null
  wait "$REAL_SERVER_PID" 2>/dev/null
fi
kill -TERM "$SERVER_PID" 2>/dev/null
wait "$SERVER_PID" 2>/dev/null

FAILS=()
[ "$RP_RC" -eq 0 ] || FAILS+=("respool exited $RP_RC")
[ "$REAL_RC" -eq 0 ] || FAILS+=("the real lane's respool exited $REAL_RC")
reports=$(grep -l -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer' "$WORK"/*.err 2>/dev/null)
[ -z "$reports" ] || FAILS+=("sanitizer reports in: $(basename -a $reports | tr '\n' ' ')")

rounds=$(wc -l <"$WORK/rounds.txt" 2>/dev/null || echo 0)
bad=$(awk '$1 != 0' "$WORK/rounds.txt" 2>/dev/null | wc -l)
[ "$rounds" -ge 1 ] || FAILS+=("no minimal round finished")
[ "$bad" -eq 0 ] || FAILS+=("$bad of $rounds minimal rounds failed (exit status, seconds: $(awk '$1 != 0 {printf "%s/%ss ", $1, $2}' "$WORK/rounds.txt"))")
want=$(for i in $(seq 1 "$rounds"); do cat "$WORK/upload"; done | sha256sum | cut -d' ' -f1)
got=$(sha256sum <"$WORK/sink" | cut -d' ' -f1)
sink_bytes=$(stat -c %s "$WORK/sink")
[ "$want" = "$got" ] || FAILS+=("the sink ($sink_bytes bytes) is not the $rounds uploads ($((rounds * SOAK_UPLOAD)) bytes)")

[ -n "$RSS_START" ] || FAILS+=("no RSS sample after the warm-up (SOAK_SECS too short)")
if [ -n "$RSS_START" ] && [ -n "$RSS_END" ]; then
  limit=$((RSS_START * 3 / 2 + 8192))
  [ "$RSS_END" -le "$limit" ] || FAILS+=("RSS grew: ${RSS_START} KiB after the warm-up, ${RSS_END} KiB at the end (limit $limit)")
fi
real_n=0
real_bad=0
if [ "$REAL" = 1 ]; then
  real_n=$(wc -l <"$WORK/real-rounds.txt" 2>/dev/null || echo 0)
  real_bad=$(awk '$1 != 0' "$WORK/real-rounds.txt" 2>/dev/null | wc -l)
  [ "$real_n" -ge 1 ] || FAILS+=("no real dnstt round finished")
  [ "$real_bad" -eq 0 ] || FAILS+=("$real_bad of $real_n real dnstt rounds failed (exit status, seconds: $(awk '$1 != 0 {printf "%s/%ss ", $1, $2}' "$WORK/real-rounds.txt"))")
  if [ -n "$REAL_RSS_START" ] && [ -n "$REAL_RSS_END" ]; then
    limit=$((REAL_RSS_START * 3 / 2 + 8192))
    [ "$REAL_RSS_END" -le "$limit" ] || FAILS+=("the real lane's RSS grew: ${REAL_RSS_START} KiB after the warm-up, ${REAL_RSS_END} KiB at the end (limit $limit)")
  fi
fi

say "secs=$SOAK_SECS steps=$step resolver_starts=$RES_STARTS"
say "minimal_rounds=$rounds failed=$bad download_bytes_each=$SOAK_DOWNLOAD upload_bytes_each=$SOAK_UPLOAD sink_bytes=$sink_bytes sink_sha256_ok=$([ "$want" = "$got" ] && echo yes || echo no)"
say "rss_kib_start=${RSS_START:-none} (t=${SOAK_WARMUP}s) rss_kib_end=${RSS_END:-none} rss_kib_max=$RSS_MAX samples=$(wc -l <"$WORK/rss.txt")"
say "rss_kib_series=$(awk '{printf "%s:%s ", $1, $2}' "$WORK/rss.txt")"
if [ "$REAL" = 1 ]; then
  say "real_rounds=$real_n failed=$real_bad download_bytes_each=$SOAK_REAL_DOWNLOAD (pattern checked by tcp_measure) rss_kib_start=${REAL_RSS_START:-none} rss_kib_end=${REAL_RSS_END:-none} respool_exit=$REAL_RC"
  say "real_rss_kib_series=$(awk '{printf "%s:%s ", $1, $2}' "$WORK/real-rss.txt")"
else
  say "real_rounds=skipped"
fi
say "respool_exit=$RP_RC sanitizer_reports=$([ -z "$reports" ] && echo 0 || echo "$(echo "$reports" | wc -l) logs")"
if [ ${#FAILS[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${FAILS[@]}" >&2
  KEEP_WORK=1
  exit 1
fi
say "PASS"
