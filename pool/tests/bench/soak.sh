#!/usr/bin/env bash
# soak.sh: tunnel traffic through respool for SOAK_SECS under ASan and
# UBSan while the resolvers die, come back and change their limits
# (issue 13; docs/reliability.md, "Soak").
#
# It runs lanes side by side, each a tunnel with its own server, its own
# SOAK_RESOLVERS fakeres processes and its own respool, all respools and
# fakeres and the minimal tunnels from the sanitizer build (SOAK_BUILD,
# default build-asan/, the directory `./run.sh asan` makes; configured and
# built here, -j ${JOBS:-2}, when a binary is missing):
#   dnstt       the minimal DNSTT tunnel (tun-dnstt-server and -client);
#               respool --kind dnstt --pretest "" (as the table's relay
#               column)
#   md          the minimal MasterDNS tunnel (tun-md-server and -client);
#               respool as a user starts it (no --kind, the default
#               start-up check)
#   real-dnstt  the real dnstt (issue 10), where RP_REAL_TUNNELS (default
#               ../shared/real-tunnels beside the source tree) holds
#               bin/dnstt-{server,client} and dnstt/server.{key,pub};
#               respool as a user starts it
#   real-md     the real MasterDnsVPN, where it holds
#               bin/masterdnsvpn-{server,client} and masterdnsvpn/ with
#               its configs and key; respool as a user starts it
# A real lane whose binaries are absent is skipped with a line that says
# so. Resolver k (1-based) of a lane is one fakeres on 127.0.0.(10+o+k),
# o the lane's offset (0, 20, 40, 60), on a port below the ephemeral range
# that every restart keeps (respool rotates its upstream source ports, so
# a freed ephemeral port may be taken meanwhile). One process each, so
# that one can be killed and started again on the same address and port.
#
# Each lane runs rounds, one after the other:
# - minimal lanes download SOAK_DOWNLOAD bytes (the client checks the
#   pattern, exit 0 when every byte arrived intact) and upload a random
#   file of SOAK_UPLOAD bytes (--in), which the server appends to the
#   lane's sink file;
# - real lanes fetch SOAK_REAL_DOWNLOAD bytes of a pattern through the
#   tunnel from scenarios/tools/tcp_measure.py behind the real server
#   (exit 0 when every byte arrived intact).
# A round gets SOAK_ROUND_TIMEOUT seconds. Every SOAK_STEP seconds (30) a
# driver takes the next step of a fixed cycle and applies it to resolver
# k of every lane: a resolver is killed (SIGKILL), started again, restarted
# with a rate limit (refusing, dropping or SERVFAIL past it), with latency,
# with loss, or unlimited again; at least two are up at any time. Each
# respool's RSS (VmRSS of /proc/PID/status) is sampled every 10 s.
#
# Passes when: no sanitizer report (ASan, LeakSanitizer, UBSan) in the log
# of any process; every respool exits 0 on SIGTERM; in every lane at least
# one round ran and every round exited 0 (lane real-md: no round delivered
# a wrong byte, and at most SOAK_MD_INCOMPLETE % of its rounds, each cut
# at SOAK_MD_LIMIT seconds, are incomplete: the real MasterDnsVPN client
# now and then never opens its stream through its own balancer too, see
# docs/reliability.md); each minimal lane's sink holds
# exactly the uploads of its rounds (sha256); and each respool's RSS at
# the end is at most 1.5 times its RSS after SOAK_WARMUP (30 s) plus
# 8 MiB. Prints the figures, one "soak: key=value" line each.
#
# Environment: SOAK_SECS (600; 60 for the short check), SOAK_STEP (30),
# SOAK_WARMUP (30), SOAK_RESOLVERS (4, 3 to 9), SOAK_DOWNLOAD (4M),
# SOAK_UPLOAD (65536), SOAK_REAL_DOWNLOAD (4M), SOAK_ROUND_TIMEOUT (180),
# SOAK_LANES (all four; a space-separated subset), SOAK_MD_LIMIT (60),
# SOAK_MD_INCOMPLETE (10, per cent), SOAK_BUILD, KEEP_WORK=1
# keeps the logs. ASan's quarantine is set to 32 MiB (ASAN_OPTIONS, unless
# given): the default 256 MiB fills slowly over the run and would read as
# growth.
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
SOAK_LANES=${SOAK_LANES:-dnstt md real-dnstt real-md}
SOAK_MD_LIMIT=${SOAK_MD_LIMIT:-60}
SOAK_MD_INCOMPLETE=${SOAK_MD_INCOMPLETE:-10}
REAL_DIR=${RP_REAL_TUNNELS:-$ROOT/../shared/real-tunnels}
JOBS=${JOBS:-2}
DOMAIN=t.example
RSS_EVERY=10

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=32}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

TUN_BIN=$SOAK_BUILD/tunnels
MEASURE=$ROOT/scenarios/tools/tcp_measure.py

# lib.sh: WORK, PIDS (killed at exit), fail, wait_line, free_low_port.
RP_BUILD_DIR=$SOAK_BUILD
. "$ROOT/pool/tests/net/lib.sh"

say() { echo "soak: $*"; }

case "$SOAK_RESOLVERS" in
  [3-9]) ;;
  *) fail "SOAK_RESOLVERS must be 3 to 9, not '$SOAK_RESOLVERS'" ;;
esac
for l in $SOAK_LANES; do
  case "$l" in
    dnstt | md | real-dnstt | real-md) ;;
    *) fail "SOAK_LANES: unknown lane '$l' (dnstt, md, real-dnstt, real-md)" ;;
  esac
done
if [ ! -x "$RESPOOL_BIN" ] || [ ! -x "$FAKERES_BIN" ] ||
  [ ! -x "$TUN_BIN/tun-dnstt-server" ] || [ ! -x "$TUN_BIN/tun-dnstt-client" ] ||
  [ ! -x "$TUN_BIN/tun-md-server" ] || [ ! -x "$TUN_BIN/tun-md-client" ]; then
  say "building the sanitizer build in $SOAK_BUILD"
  cmake -S "$ROOT" -B "$SOAK_BUILD" -DRP_WERROR=ON -DRP_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug >/dev/null || fail "cmake failed"
  cmake --build "$SOAK_BUILD" -j "$JOBS" --target respool fakeres \
    tun-dnstt-server tun-dnstt-client tun-md-server tun-md-client \
    >/dev/null || fail "build failed"
fi

# ---- the lanes ---------------------------------------------------------------
# LANES: the lanes that run. Per lane L: OFF[L] (resolver index offset),
# SRV_PID[L] and UP[L] (the tunnel server's DNS address, the fakeres upstream),
# RP_PID[L] and RP_ADDR[L] (its respool), RSS0[L] and RSS1[L] (RSS after
# the warm-up and at the end, KiB), RC[L] (respool's exit status).
declare -A OFF UP SRV_PID RP_PID RP_ADDR RSS0 RSS1 RC
OFF=([dnstt]=0 [real-dnstt]=20 [md]=40 [real-md]=60)
LANES=()
for l in $SOAK_LANES; do
  case "$l" in
    real-dnstt)
      if [ ! -x "$REAL_DIR/bin/dnstt-server" ] || [ ! -x "$REAL_DIR/bin/dnstt-client" ] ||
        [ ! -r "$REAL_DIR/dnstt/server.key" ] || [ ! -r "$REAL_DIR/dnstt/server.pub" ]; then
        say "lane real-dnstt: skipped (no bin/dnstt-server, bin/dnstt-client and dnstt/server.key/.pub in $REAL_DIR; set RP_REAL_TUNNELS)"
        continue
      fi
      ;;
    real-md)
      if [ ! -x "$REAL_DIR/bin/masterdnsvpn-server" ] || [ ! -x "$REAL_DIR/bin/masterdnsvpn-client" ] ||
        [ ! -r "$REAL_DIR/masterdnsvpn/server_config.toml" ] ||
        [ ! -r "$REAL_DIR/masterdnsvpn/client_config.toml" ]; then
        say "lane real-md: skipped (no bin/masterdnsvpn-server, bin/masterdnsvpn-client and masterdnsvpn/*_config.toml in $REAL_DIR; set RP_REAL_TUNNELS)"
        continue
      fi
      ;;
  esac
  LANES+=("$l")
done
[ ${#LANES[@]} -ge 1 ] || fail "no lane to run"
real_bytes=$(numfmt --from=iec "$SOAK_REAL_DOWNLOAD")

# server_start L: starts lane L's tunnel server; sets UP[L].
server_start() {
  local l=$1 aux srv
  case "$l" in
    dnstt | md)
      "$TUN_BIN/tun-$l-server" --listen 127.0.0.1:0 --domain "$DOMAIN" \
        --serve-bytes "$SOAK_DOWNLOAD" --sink "$WORK/$l-sink" \
        >"$WORK/$l-server.out" 2>"$WORK/$l-server.err" &
      SRV_PID[$l]=$!
      PIDS="$PIDS $!"
      wait_line "$WORK/$l-server.out" "$WORK/$l-server.err"
      UP[$l]=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["listen"])' "$WORK/$l-server.out")
      return
      ;;
  esac
  # A real server behind tcp_measure, a TCP source of the pattern on aux.
  aux=$(free_low_port)
  srv=$(free_low_port)
  if [ "$l" = real-dnstt ]; then
    set -- "$REAL_DIR/bin/dnstt-server" -udp "127.0.0.1:$srv" \
      -privkey-file "$REAL_DIR/dnstt/server.key" "$DOMAIN" "127.0.0.1:$aux"
  else
    # The server reads its config and key from its working folder.
    mkdir -p "$WORK/mds"
    cp "$REAL_DIR"/masterdnsvpn/* "$WORK/mds/"
    chmod 644 "$WORK"/mds/*
    set -- sh -c "cd '$WORK/mds' && exec '$REAL_DIR/bin/masterdnsvpn-server' \
      -config server_config.toml -nowait -udp-host 127.0.0.1 -udp-port $srv \
      -forward-ip 127.0.0.1 -forward-port $aux -domain $DOMAIN"
  fi
  python3 "$MEASURE" serve --target "127.0.0.1:$aux" \
    --listen-addr "127.0.0.1:$srv" --bytes "$real_bytes" -- "$@" \
    >"$WORK/$l-server.out" 2>"$WORK/$l-server.log" &
  SRV_PID[$l]=$!
  PIDS="$PIDS $!"
  wait_line "$WORK/$l-server.out" "$WORK/$l-server.log"
  UP[$l]=127.0.0.1:$srv
}

# ---- the resolvers ---------------------------------------------------------
# Resolver index i = OFF[L] + k; RES_PORT[i] its port, RES_PID[i] empty
# while it is down, RES_UP[i] its upstream. Each start writes its own log,
# res<i>.<n>.err.
declare -a RES_PID RES_PORT RES_SPEC RES_UP
RES_STARTS=0

# res_start I SPEC: starts resolver I with the profile SPEC.
res_start() {
  local i=$1 spec=$2 out
  RES_STARTS=$((RES_STARTS + 1))
  out="$WORK/res$i.$RES_STARTS"
  "$FAKERES_BIN" -r "name=r$i,addr=127.0.0.$((10 + i)),port=${RES_PORT[$i]}${spec:+,$spec}" \
    --upstream "${RES_UP[$i]}" >"$out.out" 2>"$out.err" &
  RES_PID[$i]=$!
  PIDS="$PIDS ${RES_PID[$i]}"
  RES_SPEC[$i]=${spec:-unlimited}
  wait_line "$out.out" "$out.err"
}

# res_down I SIGNAL: takes resolver I down: SIGKILL for a resolver that
# dies, SIGTERM for a restart (its sanitizer checks run at exit).
res_down() {
  local i=$1
  if [ -n "${RES_PID[$i]:-}" ]; then
    kill "-$2" "${RES_PID[$i]}" 2>/dev/null
    wait "${RES_PID[$i]}" 2>/dev/null
    RES_PID[$i]=""
    RES_SPEC[$i]=dead
  fi
}

# res_restart I SPEC: resolver I with a new profile on the same address.
res_restart() {
  res_down "$1" TERM
  res_start "$1" "$2"
}

# lanes_k K: resolver K's index in each lane.
lanes_k() {
  local l
  for l in "${LANES[@]}"; do
    echo "$((${OFF[$l]} + $1))"
  done
}

# ---- respool ---------------------------------------------------------------
# respool_start L ARGS...: starts lane L's respool with ARGS (stats every
# 10 s to L-stats.json, logs L-respool.out/.err).
respool_start() {
  local l=$1
  shift
  "$RESPOOL_BIN" "$@" --listen 127.0.0.1:0 \
    --stats-json "$WORK/$l-stats.json" --stats 10s \
    >"$WORK/$l-respool.out" 2>"$WORK/$l-respool.err" &
  RP_PID[$l]=$!
  PIDS="$PIDS ${RP_PID[$l]}"
  wait_line "$WORK/$l-respool.out" "$WORK/$l-respool.err"
  RP_ADDR[$l]=$(head -1 "$WORK/$l-respool.out")
}

for l in "${LANES[@]}"; do
  server_start "$l"
  args=()
  for k in $(seq 1 "$SOAK_RESOLVERS"); do
    i=$((${OFF[$l]} + k))
    RES_PORT[$i]=$(free_low_port)
    RES_UP[$i]=${UP[$l]}
    res_start "$i" ""
    args+=(-r "127.0.0.$((10 + i)):${RES_PORT[$i]}")
  done
  # The minimal DNSTT lane as the table's relay column; the others as a
  # user starts respool in front of a tunnel client: no --kind, the
  # default start-up check.
  [ "$l" = dnstt ] && args+=(--kind dnstt --pretest "")
  respool_start "$l" "${args[@]}"
  say "lane $l: respool=${RP_ADDR[$l]} pid=${RP_PID[$l]} server=${UP[$l]}"
done
say "lanes=${LANES[*]} resolvers=$SOAK_RESOLVERS secs=$SOAK_SECS"

# ---- traffic ---------------------------------------------------------------
head -c "$SOAK_UPLOAD" /dev/urandom >"$WORK/upload"
STOP="$WORK/stop"

# rounds L: lane L's rounds until $STOP exists; one line per round in
# L-rounds.txt: "<exit> <seconds>".
rounds() {
  local l=$1 n=0 t0 rc port
  while [ ! -e "$STOP" ]; do
    n=$((n + 1))
    t0=$(date +%s)
    case "$l" in
      dnstt | md)
        timeout -s TERM "$SOAK_ROUND_TIMEOUT" "$TUN_BIN/tun-$l-client" \
          --resolver "${RP_ADDR[$l]}" --domain "$DOMAIN" \
          --download-bytes "$SOAK_DOWNLOAD" --in "$WORK/upload" --measure \
          >>"$WORK/$l-client.out" 2>"$WORK/$l-client.$n.err"
        ;;
      real-dnstt)
        port=$(free_low_port)
        timeout -s TERM "$SOAK_ROUND_TIMEOUT" python3 "$MEASURE" fetch \
          --connect "127.0.0.1:$port" --bytes "$real_bytes" \
          --upload-bytes 8192 -- \
          "$REAL_DIR/bin/dnstt-client" -udp "${RP_ADDR[$l]}" \
          -pubkey-file "$REAL_DIR/dnstt/server.pub" "$DOMAIN" "127.0.0.1:$port" \
          >>"$WORK/$l-client.out" 2>"$WORK/$l-client.$n.log"
        ;;
      real-md)
        port=$(free_low_port)
        echo "${RP_ADDR[$l]}" >"$WORK/md-resolvers.txt"
        timeout -s TERM "$SOAK_ROUND_TIMEOUT" python3 "$MEASURE" fetch \
          --connect "127.0.0.1:$port" --bytes "$real_bytes" \
          --upload-bytes 8192 --wait 30 --limit "$SOAK_MD_LIMIT" -- \
          "$REAL_DIR/bin/masterdnsvpn-client" \
          -config "$REAL_DIR/masterdnsvpn/client_config.toml" \
          -resolvers "$WORK/md-resolvers.txt" -listen-ip 127.0.0.1 \
          -listen-port "$port" -domains "$DOMAIN" \
          >>"$WORK/$l-client.out" 2>"$WORK/$l-client.$n.log"
        ;;
    esac
    rc=$?
    echo "$rc $(($(date +%s) - t0))" >>"$WORK/$l-rounds.txt"
  done
}

TRAFFIC_PIDS=""
for l in "${LANES[@]}"; do
  : >"$WORK/$l-rounds.txt"
  : >"$WORK/$l-rss.txt"
  rounds "$l" &
  TRAFFIC_PIDS="$TRAFFIC_PIDS $!"
  PIDS="$PIDS $!"
done

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

# rss_kib PID: VmRSS of PID, KiB.
rss_kib() {
  sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null
}

T0=$(date +%s)
next_step=$SOAK_STEP
next_rss=0
step=0
while :; do
  now=$(($(date +%s) - T0))
  [ "$now" -ge "$SOAK_SECS" ] && break
  for l in "${LANES[@]}"; do
    kill -0 "${RP_PID[$l]}" 2>/dev/null ||
      fail "lane $l: respool died: $(tail -20 "$WORK/$l-respool.err")"
  done
  if [ "$now" -ge "$next_rss" ]; then
    for l in "${LANES[@]}"; do
      rss=$(rss_kib "${RP_PID[$l]}")
      echo "$now $rss" >>"$WORK/$l-rss.txt"
      if [ -z "${RSS0[$l]:-}" ] && [ "$now" -ge "$SOAK_WARMUP" ]; then
        RSS0[$l]=$rss
      fi
    done
    next_rss=$((next_rss + RSS_EVERY))
  fi
  if [ "$now" -ge "$next_step" ]; then
    read -r op k spec <<<"${STEPS[$((step % ${#STEPS[@]}))]}"
    # Only the steps that name a resolver this run has (SOAK_RESOLVERS 3
    # skips resolver 4's).
    if [ "$k" -le "$SOAK_RESOLVERS" ]; then
      for i in $(lanes_k "$k"); do
        case "$op" in
          kill) res_down "$i" KILL ;;
          start) res_start "$i" "${spec:-}" ;;
          restart) res_restart "$i" "${spec:-}" ;;
        esac
      done
    fi
    step=$((step + 1))
    o=${OFF[${LANES[0]}]}
    say "t=${now}s step=$step $op r$k ${spec:-} ($(for k in $(seq 1 "$SOAK_RESOLVERS"); do printf 'r%s=%s ' "$k" "${RES_SPEC[$((o + k))]}"; done))"
    next_step=$((next_step + SOAK_STEP))
  fi
  sleep 1
done
for l in "${LANES[@]}"; do
  RSS1[$l]=$(rss_kib "${RP_PID[$l]}")
  echo "$SOAK_SECS ${RSS1[$l]}" >>"$WORK/$l-rss.txt"
done

# ---- the end -----------------------------------------------------------------
touch "$STOP"
say "waiting for the last rounds to end"
for p in $TRAFFIC_PIDS; do
  wait "$p"
done
for k in $(seq 1 "$SOAK_RESOLVERS"); do
  for i in $(lanes_k "$k"); do
    res_down "$i" TERM
  done
done
for l in "${LANES[@]}"; do
  kill -TERM "${RP_PID[$l]}" 2>/dev/null
  wait "${RP_PID[$l]}"
  RC[$l]=$?
done
for l in "${LANES[@]}"; do
  kill -TERM "${SRV_PID[$l]}" 2>/dev/null
  wait "${SRV_PID[$l]}" 2>/dev/null
done

FAILS=()
reports=$(grep -l -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer' "$WORK"/*.err 2>/dev/null)
[ -z "$reports" ] || FAILS+=("sanitizer reports in: $(basename -a $reports | tr '\n' ' ')")

say "secs=$SOAK_SECS steps=$step resolver_starts=$RES_STARTS"
for l in "${LANES[@]}"; do
  f=$WORK/$l-rounds.txt
  n=$(wc -l <"$f")
  bad=$(awk '$1 != 0' "$f" | wc -l)
  [ "${RC[$l]}" -eq 0 ] || FAILS+=("lane $l: respool exited ${RC[$l]}")
  [ "$n" -ge 1 ] || FAILS+=("lane $l: no round finished")
  line="lane=$l rounds=$n failed=$bad"
  if [ "$l" = real-md ]; then
    # The real MasterDnsVPN client itself now and then never opens its
    # stream, or has it reset, with its own balancer as via respool: a
    # share of incomplete rounds is allowed, a wrong byte never.
    corrupt=$(grep -c '"down_ok": false' "$WORK/$l-client.out")
    complete=$(grep -c '"complete": true' "$WORK/$l-client.out")
    [ "$corrupt" -eq 0 ] || FAILS+=("lane $l: $corrupt rounds delivered bytes that are not the pattern")
    [ "$complete" -ge 1 ] || FAILS+=("lane $l: no round completed")
    [ $((100 * (n - complete))) -le $((SOAK_MD_INCOMPLETE * n)) ] ||
      FAILS+=("lane $l: $((n - complete)) of $n rounds incomplete, more than $SOAK_MD_INCOMPLETE % (exit status/seconds: $(awk '$1 != 0 {printf "%s/%ss ", $1, $2}' "$f"))")
    line="$line complete=$complete incomplete=$((n - complete)) corrupt=$corrupt"
  else
    [ "$bad" -eq 0 ] || FAILS+=("lane $l: $bad of $n rounds failed (exit status/seconds: $(awk '$1 != 0 {printf "%s/%ss ", $1, $2}' "$f"))")
  fi
  case "$l" in
    dnstt | md)
      want=$(for _ in $(seq 1 "$n"); do cat "$WORK/upload"; done | sha256sum | cut -d' ' -f1)
      got=$(sha256sum <"$WORK/$l-sink" | cut -d' ' -f1)
      sink=$(stat -c %s "$WORK/$l-sink")
      [ "$want" = "$got" ] || FAILS+=("lane $l: the sink ($sink bytes) is not the $n uploads ($((n * SOAK_UPLOAD)) bytes)")
      line="$line download_bytes_each=$SOAK_DOWNLOAD upload_bytes_each=$SOAK_UPLOAD sink_bytes=$sink sink_sha256_ok=$([ "$want" = "$got" ] && echo yes || echo no)"
      ;;
    *)
      line="$line download_bytes_each=$SOAK_REAL_DOWNLOAD (pattern checked by tcp_measure)"
      ;;
  esac
  if [ -z "${RSS0[$l]:-}" ]; then
    FAILS+=("lane $l: no RSS sample after the warm-up (SOAK_SECS too short)")
  elif [ -n "${RSS1[$l]}" ]; then
    limit=$((${RSS0[$l]} * 3 / 2 + 8192))
    [ "${RSS1[$l]}" -le "$limit" ] || FAILS+=("lane $l: RSS grew: ${RSS0[$l]} KiB after the warm-up, ${RSS1[$l]} KiB at the end (limit $limit)")
  fi
  say "$line rss_kib_start=${RSS0[$l]:-none} (t=${SOAK_WARMUP}s) rss_kib_end=${RSS1[$l]:-none} rss_kib_max=$(sort -n -k2 "$WORK/$l-rss.txt" | tail -1 | cut -d' ' -f2) respool_exit=${RC[$l]}"
  say "lane=$l rss_kib_series=$(awk '{printf "%s:%s ", $1, $2}' "$WORK/$l-rss.txt")"
done
say "sanitizer_reports=$([ -z "$reports" ] && echo 0 || echo "$(echo "$reports" | wc -l) logs")"
if [ ${#FAILS[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${FAILS[@]}" >&2
  KEEP_WORK=1
  exit 1
fi
say "PASS"
