#!/usr/bin/env bash
# tunnel_kbps.sh: download kbps of a tunnel for a few seconds through fake
# resolvers (one JSON line from the client, plus the fakeres counts).
#
# usage: tunnel_kbps.sh KIND SECONDS [CLIENT-ARGS...] -- RESOLVER-SPEC...
#   KIND  dnstt | md.   Env: RP_BUILD_DIR.
set -u
kind=$1 secs=$2
shift 2
client_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  client_args+=("$1")
  shift
done
[ $# -gt 0 ] && shift
specs=("$@")
build=${RP_BUILD_DIR:?RP_BUILD_DIR is not set}
case $kind in
  dnstt) server=$build/tunnels/tun-dnstt-server client=$build/tunnels/tun-dnstt-client ;;
  md) server=$build/tunnels/tun-md-server client=$build/tunnels/tun-md-client ;;
  *) echo "unknown kind $kind" >&2; exit 2 ;;
esac
work=$(mktemp -d)
srv_pid="" fr_pid=""
cleanup() {
  [ -n "$fr_pid" ] && kill -TERM "$fr_pid" 2>/dev/null && wait "$fr_pid" 2>/dev/null
  [ -n "$srv_pid" ] && kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
wait_line() {
  local i
  for i in $(seq 1 100); do
    [ -s "$1" ] && head -1 "$1" | grep -q '}' && return 0
    sleep 0.05
  done
  return 1
}
"$server" --listen 127.0.0.1:0 --domain t.example --serve-bytes 64G \
  >"$work/server.out" 2>&1 &
srv_pid=$!
wait_line "$work/server.out" || exit 1
fr_args=()
for s in "${specs[@]}"; do fr_args+=(-r "$s"); done
"$build/fake-resolvers/fakeres" "${fr_args[@]}" \
  --upstream "$(head -1 "$work/server.out" | jq -r .listen)" \
  >"$work/fakeres.out" 2>&1 &
fr_pid=$!
wait_line "$work/fakeres.out" || exit 1
res_args=()
for a in $(head -1 "$work/fakeres.out" | jq -r '.resolvers[].udp'); do
  res_args+=(--resolver "$a")
done
timeout $((${secs%.*} + 30)) "$client" "${res_args[@]}" --domain t.example \
  --seconds "$secs" --measure "${client_args[@]}"
