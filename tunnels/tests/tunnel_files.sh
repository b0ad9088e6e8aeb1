#!/usr/bin/env bash
# tunnel_files.sh: a file each way through a tunnel and one fake resolver
# (--serve-file and --sink on the server, --in and --out on the client);
# passes when both files arrive byte for byte.
#
# usage: tunnel_files.sh KIND RESOLVER-SPEC     (KIND dnstt | md)
# Env: RP_BUILD_DIR.
set -u
kind=$1 spec=$2
# shellcheck source-path=SCRIPTDIR source=lib_tunnel.sh
. "$(dirname "$0")/lib_tunnel.sh"
tun_init "$kind"
head -c 200000 /dev/urandom >"$work/down.bin"
head -c 50000 /dev/urandom >"$work/up.bin"
tun_start_server --serve-file "$work/down.bin" --sink "$work/sink.bin" || exit 1
tun_start_fakeres -r "$spec" --seed 2 || exit 1
timeout 100 "$client" --resolver "$(head -1 "$work/fakeres.out" | jq -r '.resolvers[0].udp')" \
  --domain "$tun_domain" --in "$work/up.bin" --out "$work/got.bin" \
  --download-bytes 200000 --measure
crc=$?
kill -TERM "$srv_pid"; wait "$srv_pid"; srv_pid=""
fail=0
[ $crc -eq 0 ] || { echo "FAIL: client exit status $crc"; fail=1; }
cmp "$work/down.bin" "$work/got.bin" || { echo "FAIL: download differs"; fail=1; }
cmp "$work/up.bin" "$work/sink.bin" || { echo "FAIL: upload differs"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
