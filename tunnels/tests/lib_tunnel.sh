# shellcheck shell=bash disable=SC2034 # sets variables for the script
# lib_tunnel.sh: sourced by the tunnel scripts (tests/tunnel_transfer.sh,
# tests/tunnel_files.sh, bench/tunnel_kbps.sh). It picks the programs of a
# tunnel kind, starts the tunnel server and the fake resolvers in front of
# it on loopback, and stops both on exit. The work directory, the exit
# trap and the wait for a first line are the shared tests/lib/lib.sh.
#
#   tun_init KIND            sets build (RP_BUILD_DIR), server and client
#                            for KIND (dnstt | md; else exit 2), work (a
#                            temporary directory) and the exit trap
#   wait_line FILE           waits up to 5 s for a first JSON line in FILE
#   tun_start_server ARGS    the server on 127.0.0.1:0 for $tun_domain with
#                            ARGS; output in $work/server.out (stderr
#                            server.err); waits for its first line
#   tun_start_fakeres ARGS   fakeres with ARGS, forwarding to the server;
#                            output in $work/fakeres.out (stderr
#                            fakeres.err); waits for its first line
#   tun_resolver_args        sets res_args: --resolver ADDR for each fake
#                            resolver, in order
# srv_pid and fr_pid are the running processes ("" once stopped).

# shellcheck source=../../tests/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/lib.sh"

tun_domain=t.example

tun_init() {
  build=${RP_BUILD_DIR:?RP_BUILD_DIR is not set}
  case $1 in
    dnstt) server=$build/tunnels/tun-dnstt-server client=$build/tunnels/tun-dnstt-client ;;
    md) server=$build/tunnels/tun-md-server client=$build/tunnels/tun-md-client ;;
    *) echo "unknown kind $1" >&2; exit 2 ;;
  esac
  rp_work_init tun-test
  work=$RP_WORK
  srv_pid="" fr_pid=""
  rp_on_exit tun_cleanup
}

# tun_cleanup stops the fake resolvers, then the server (those still
# running: a script clears a pid it stopped itself).
tun_cleanup() {
  [ -n "$fr_pid" ] && kill -TERM "$fr_pid" 2>/dev/null && wait "$fr_pid" 2>/dev/null
  [ -n "$srv_pid" ] && kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
  return 0
}

wait_line() {
  rp_wait_line "$1" '}' 50 || {
    echo "no output in $1" >&2
    return 1
  }
}

tun_start_server() {
  "$server" --listen 127.0.0.1:0 --domain "$tun_domain" "$@" \
    >"$work/server.out" 2>"$work/server.err" &
  srv_pid=$!
  wait_line "$work/server.out"
}

tun_start_fakeres() {
  "$build/fake-resolvers/fakeres" "$@" \
    --upstream "$(head -1 "$work/server.out" | jq -r .listen)" \
    >"$work/fakeres.out" 2>"$work/fakeres.err" &
  fr_pid=$!
  wait_line "$work/fakeres.out"
}

tun_resolver_args() {
  local a
  res_args=()
  for a in $(head -1 "$work/fakeres.out" | jq -r '.resolvers[].udp'); do
    res_args+=(--resolver "$a")
  done
}
