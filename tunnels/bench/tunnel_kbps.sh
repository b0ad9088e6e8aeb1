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
# shellcheck source-path=SCRIPTDIR source=../tests/lib_tunnel.sh
. "$(dirname "$0")/../tests/lib_tunnel.sh"
tun_init "$kind"
tun_start_server --serve-bytes 64G || exit 1
fr_args=()
for s in "${specs[@]}"; do fr_args+=(-r "$s"); done
tun_start_fakeres "${fr_args[@]}" || exit 1
tun_resolver_args
timeout $((${secs%.*} + 30)) "$client" "${res_args[@]}" --domain "$tun_domain" \
  --seconds "$secs" --measure "${client_args[@]}"
