#!/usr/bin/env bash
# shellcheck disable=SC1091,SC2046 # lib.sh is sourced; "set -- $(fr_addr)" splits on purpose
# fr_malformed.sh: malformed queries get FORMERR when a header parses and
# nothing otherwise, are counted, and the process survives them (it still
# answers, then exits cleanly on SIGTERM).
. "$(dirname "$0")/lib.sh"

attempt() {
  local ok=0 a
  fr_start f -r name=m --answer || return 1
  set -- $(fr_addr f m)
  python3 "$(dirname "$0")/fr_probe.py" malformed "$1" "$2" || ok=1
  # A burst of random bytes (printf into a raw UDP send): survive it.
  python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for n in range(500):
    s.sendto(os.urandom(1 + n % 600), (sys.argv[1], int(sys.argv[2])))' "$1" "$2"
  a=$(dig +short +tries=1 +time=2 @"$1" -p "$2" alive.example A)
  check "answers after 500 random packets" "$([ "$a" = 127.0.0.1 ] && echo 1 || echo 0)" 1 1 || ok=1
  fr_stop f || return 1
  # 6 bad probes + the 500 random ones (a few random ones may parse).
  check "malformed count" "$(fr_count f m malformed)" 450 506 || ok=1
  return $ok
}

fr_main
