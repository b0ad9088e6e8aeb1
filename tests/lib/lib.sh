# shellcheck shell=bash
# lib.sh: the helpers every shell test shares (sourced, bash; owned by
# tests/lib). The component libraries source it and keep only what is
# theirs: pool/tests/net/lib.sh (respool, fakeres, dnsperf), lib_tls.sh
# (dnsdist), fake-resolvers/tests/lib.sh (fakeres checks) and
# tunnels/tests/lib_tunnel.sh (tunnel servers).
#
#   RP_BUILD_DIR, RP_SOURCE_DIR  set by ctest; defaults: build/ and the tree
#   rp_work_init PREFIX          RP_WORK = a new /tmp/PREFIX.XXXXXX; sets the
#                                EXIT trap (rp_cleanup)
#   rp_track PID...              kill PID at exit (SIGTERM, then wait)
#   rp_on_exit FUNC              run FUNC at exit, before the kills
#   rp_stop_pid PID [TENTHS]     SIGTERM, wait TENTHS/10 s (default 5 s),
#                                SIGKILL if still alive; returns the exit
#                                status (137 when it had to be killed)
#   rp_wait_line FILE [REGEX] [TENTHS]
#                                waits until FILE's first line matches
#                                REGEX (default: any character); 0 or 1
#   rp_log MSG, rp_fail MSG      a line on stderr; rp_fail exits 1
#   rp_skip MSG                  says SKIP and exits 0: a missing optional
#                                tool passes with a note (no skip code is
#                                registered with ctest)
#   rp_free_low_port             a port below the ephemeral range, free for
#                                UDP and TCP on 127.0.0.1
#
# KEEP_WORK=1 keeps RP_WORK at exit. Every process is killed by its own
# pid, never by name.

set -u

RP_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RP_SOURCE_DIR=${RP_SOURCE_DIR:-$(cd "$RP_LIB_DIR/../.." && pwd)}
RP_BUILD_DIR=${RP_BUILD_DIR:-$RP_SOURCE_DIR/build}
RP_WORK=""
RP_PIDS=""
RP_EXIT_HOOKS=""

rp_log() { printf '[%s] %s\n' "$(basename "$0" .sh)" "$*" >&2; }

rp_fail() {
  echo "FAIL: $*" >&2
  exit 1
}

rp_skip() {
  echo "SKIP: $*" >&2
  exit 0
}

rp_track() { RP_PIDS="$RP_PIDS $*"; }

rp_on_exit() { RP_EXIT_HOOKS="$RP_EXIT_HOOKS $1"; }

rp_cleanup() {
  local h p
  for h in $RP_EXIT_HOOKS; do
    "$h"
  done
  for p in $RP_PIDS; do
    kill -TERM "$p" 2>/dev/null
  done
  for p in $RP_PIDS; do
    wait "$p" 2>/dev/null
  done
  if [ -n "$RP_WORK" ]; then
    if [ "${KEEP_WORK:-0}" = 1 ]; then
      echo "work dir kept: $RP_WORK" >&2
    else
      rm -rf "$RP_WORK"
    fi
  fi
}

rp_work_init() {
  RP_WORK=$(mktemp -d "/tmp/$1.XXXXXX")
  trap rp_cleanup EXIT
}

rp_stop_pid() {
  local pid=$1 tenths=${2:-50} _ rc=0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 "$tenths"); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null || rc=$?
  return "$rc"
}

rp_wait_line() {
  local file=$1 re=${2:-.} tenths=${3:-100} _
  for _ in $(seq 1 "$tenths"); do
    if [ -s "$file" ] && head -1 "$file" | grep -q -- "$re"; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

rp_free_low_port() {
  python3 -c 'import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    p = random.randint(max(1024, lo - 12000), lo - 1)
    try:
        for t in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
            s = socket.socket(socket.AF_INET, t)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", p))
            s.close()
    except OSError:
        continue
    print(p)
    break'
}
