#!/usr/bin/env bash
# tunnel_transfer.sh: one checksummed transfer through a tunnel and fake
# resolvers on loopback.
#
# usage: tunnel_transfer.sh KIND DOWN UP [CLIENT-ARGS...] -- RESOLVER-SPEC...
#   KIND          dnstt | md
#   DOWN, UP      bytes to download and upload (K/M suffixes)
#   CLIENT-ARGS   extra client options (e.g. --duplication 1); the script
#                 takes "--expect JQ-EXPR" itself: the expression must be
#                 true on the client's JSON line, and "--compare-first S":
#                 after the transfer, the same client without --pool and
#                 its pool options downloads for S seconds straight from
#                 the first resolver and both kbps are printed (for
#                 information; the test does not depend on it)
#   RESOLVER-SPEC fakeres -r specs; each becomes one resolver
# Env: RP_BUILD_DIR (build tree), TUN_TIME_LIMIT (seconds, default 100,
# below the ctest timeout so that the script always cleans up).
# Passes when the client reports every byte intact, the server received
# every uploaded byte with the right pattern and the sink file is whole.
set -u

kind=$1 down=$2 up=$3
shift 3
client_args=()
expects=()
compare_first=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  if [ "$1" = "--expect" ]; then
    expects+=("$2")
    shift 2
    continue
  fi
  if [ "$1" = "--compare-first" ]; then
    compare_first=$2
    shift 2
    continue
  fi
  client_args+=("$1")
  shift
done
[ $# -gt 0 ] && shift
specs=("$@")

# shellcheck source-path=SCRIPTDIR source=lib_tunnel.sh
. "$(dirname "$0")/lib_tunnel.sh"
limit=${TUN_TIME_LIMIT:-100}
domain=$tun_domain
tun_init "$kind"

tun_start_server --serve-bytes "$down" --sink "$work/sink" || exit 1
fr_args=()
for s in "${specs[@]}"; do
  fr_args+=(-r "$s")
done
tun_start_fakeres "${fr_args[@]}" --seed 1 || exit 1
tun_resolver_args

start=$(date +%s.%N)
timeout "$limit" "$client" "${res_args[@]}" --domain $domain \
  --download-bytes "$down" --upload-bytes "$up" --measure \
  "${client_args[@]}" >"$work/client.out" 2>"$work/client.err"
crc=$?
end=$(date +%s.%N)

# The same client straight to the first resolver, for S seconds (no
# upload, so the server's upload counters stay those of the transfer).
first_line=""
if [ -n "$compare_first" ]; then
  direct_args=()
  skip=0
  for a in "${client_args[@]}"; do
    if [ $skip -eq 1 ]; then skip=0; continue; fi
    case $a in
      --pool|--pool-verbose) ;;
      --pool-config|--pool-check-bytes|--udp-workers) skip=1 ;;
      *) direct_args+=("$a") ;;
    esac
  done
  sleep 1 # let the resolvers' rate limits refill
  first_line=$(timeout $((compare_first + 20)) "$client" \
    --resolver "${res_args[1]}" --domain $domain --seconds "$compare_first" \
    "${direct_args[@]}" 2>/dev/null | tail -1)
fi

kill -TERM "$fr_pid" 2>/dev/null; wait "$fr_pid" 2>/dev/null; fr_pid=""
kill -TERM "$srv_pid" 2>/dev/null; wait "$srv_pid"; src=$?; srv_pid=""

echo "client: $(cat "$work/client.out")"
echo "server: $(tail -1 "$work/server.out")"
echo "fakeres: $(tail -1 "$work/fakeres.out")"
echo "wall: $(echo "$end - $start" | bc) s"
if [ -n "$first_line" ]; then
  pool_kbps=$(jq -r .kbps_down "$work/client.out")
  first_kbps=$(echo "$first_line" | jq -r .kbps_down)
  echo "first resolver alone (${compare_first} s): $first_kbps kbps down;" \
    "this transfer: $pool_kbps kbps down;" \
    "ratio $(echo "scale=2; $pool_kbps / ($first_kbps + 0.001)" | bc)"
fi
[ -s "$work/client.err" ] && { echo "client stderr:"; head -20 "$work/client.err"; }
[ -s "$work/server.err" ] && { echo "server stderr:"; head -20 "$work/server.err"; }

fail=0
check() {
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1: got '$2', want '$3'"
    fail=1
  fi
}
down_bytes=$(numfmt --from=iec "$down")
up_bytes=$(numfmt --from=iec "$up")
cl=$(cat "$work/client.out")
sv=$(tail -1 "$work/server.out")
check "client exit status" "$crc" 0
check "server exit status" "$src" 0
check "client complete" "$(echo "$cl" | jq -r .complete)" true
check "download pattern" "$(echo "$cl" | jq -r .down_ok)" true
check "bytes down" "$(echo "$cl" | jq -r .bytes_down)" "$down_bytes"
check "bytes up (server)" "$(echo "$sv" | jq -r .bytes_up)" "$up_bytes"
check "upload pattern" "$(echo "$sv" | jq -r .up_pattern_ok)" true
check "sink size" "$(stat -c %s "$work/sink")" "$up_bytes"
for e in "${expects[@]}"; do
  check "expect $e" "$(echo "$cl" | jq -r "$e")" true
done
[ $fail -eq 0 ] && echo "PASS"
exit $fail
