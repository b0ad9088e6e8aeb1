#!/usr/bin/env bash
# tunnel_files.sh: a file each way through a tunnel and one fake resolver
# (--serve-file and --sink on the server, --in and --out on the client);
# passes when both files arrive byte for byte.
#
# usage: tunnel_files.sh KIND RESOLVER-SPEC     (KIND dnstt | md)
# Env: RP_BUILD_DIR.
set -u
kind=$1 spec=$2
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
  echo "no output in $1" >&2
  return 1
}
head -c 200000 /dev/urandom >"$work/down.bin"
head -c 50000 /dev/urandom >"$work/up.bin"
"$server" --listen 127.0.0.1:0 --domain t.example --serve-file "$work/down.bin" \
  --sink "$work/sink.bin" >"$work/server.out" 2>&1 &
srv_pid=$!
wait_line "$work/server.out" || exit 1
"$build/fake-resolvers/fakeres" -r "$spec" --seed 2 \
  --upstream "$(head -1 "$work/server.out" | jq -r .listen)" \
  >"$work/fakeres.out" 2>&1 &
fr_pid=$!
wait_line "$work/fakeres.out" || exit 1
timeout 100 "$client" --resolver "$(head -1 "$work/fakeres.out" | jq -r '.resolvers[0].udp')" \
  --domain t.example --in "$work/up.bin" --out "$work/got.bin" \
  --download-bytes 200000 --measure
crc=$?
kill -TERM "$srv_pid"; wait "$srv_pid"; srv_pid=""
fail=0
[ $crc -eq 0 ] || { echo "FAIL: client exit status $crc"; fail=1; }
cmp "$work/down.bin" "$work/got.bin" || { echo "FAIL: download differs"; fail=1; }
cmp "$work/up.bin" "$work/sink.bin" || { echo "FAIL: upload differs"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
