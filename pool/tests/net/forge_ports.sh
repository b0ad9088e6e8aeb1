#!/usr/bin/env bash
# Source ports against blind forgery (the reliability issue's item 3):
# with one UDP socket per resolver, its source port was fixed for the
# process's life, so a forger who had found it once (by a scan) needed
# only the 16-bit ID. A spray of the 65 536 IDs is that forger; this test
# gives it the ID for free (the best case of a spray) and checks the port
# alone stops it.
#
# A hostile resolver answers every query at once, except names starting
# with "forge": for those it first sends an answer with the right ID and
# question but the address 6.6.6.6 to the source port of the first query
# it saw, then 50 ms later the genuine answer (192.0.2.1) to the query's
# own port. The client asks one name every 1.1 s.
#
# - `--set udp_port_life=0` (one port for life, as before): every query
#   leaves from the same port and the forgery is delivered. This shows
#   the test catches the defect.
# - The default (a new port once the current one is 1 s old, old ones
#   closed per_attempt after their last send): five queries 1.1 s apart
#   leave from at least four ports, and the forgery at 4.4 s, aimed at a
#   port last used 4.4 s before, is not delivered: the client gets the
#   genuine answer.
. "$(dirname "$0")/lib.sh"
need python3 "$RESPOOL_BIN"

# hostile RUN: the resolver (hostile.py, mode first-port); writes its
# port to $WORK/RUN.port and one line "srcport name" per query to
# $WORK/RUN.log.
hostile() {
  python3 "$RP_SOURCE_DIR/pool/tests/net/hostile.py" "$WORK/$1" first-port &
  PIDS="$PIDS $!"
  wait_line "$WORK/$1.port"
}

# client N: asks warm1.example .. warm(N-1).example and then
# forge.example, 1.1 s apart; prints each answer's address.
client() {
  python3 - "$RP_HOST" "$RP_PORT" "$1" <<'EOF'
import socket, struct, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
for i in range(n):
    if i:
        time.sleep(1.1)
    label = b"forge" if i == n - 1 else b"warm%d" % (i + 1)
    qname = b"".join(bytes([len(l)]) + l for l in (label, b"example")) + b"\0"
    s.sendto(struct.pack("!HHHHHH", 100 + i, 0x0100, 1, 0, 0, 0) + qname +
             b"\0\1\0\1", (host, port))
    try:
        a = s.recv(4096)
    except socket.timeout:
        print("timeout")
        continue
    print(".".join(str(b) for b in a[-4:]) if a[3] & 0xF == 0 and len(a) >= 16
          else "rcode%d" % (a[3] & 0xF))
EOF
}

ports() {
  awk '{print $1}' "$WORK/$1.log" | sort -u | wc -l
}

# One port for life: the forgery gets through.
hostile fixed
start_respool fixed -r "127.0.0.1:$(cat "$WORK/fixed.port")" \
  --set udp_port_life=0
client 2 >"$WORK/fixed.answers"
stop_respool fixed
note "udp_port_life=0: answers $(tr '\n' ' ' <"$WORK/fixed.answers")," \
  "$(ports fixed) port(s) for $(wc -l <"$WORK/fixed.log") queries"
[ "$(tail -1 "$WORK/fixed.answers")" = 6.6.6.6 ] ||
  fail "with one port for life the forgery should get through (the test's own check): $(cat "$WORK/fixed.answers")"
[ "$(ports fixed)" -eq 1 ] || fail "udp_port_life=0 used $(ports fixed) ports"

# The default: new ports, the old one closed.
hostile rotating
start_respool rotating -r "127.0.0.1:$(cat "$WORK/rotating.port")"
client 5 >"$WORK/rotating.answers"
stop_respool rotating
note "default: answers $(tr '\n' ' ' <"$WORK/rotating.answers")," \
  "$(ports rotating) port(s) for $(wc -l <"$WORK/rotating.log") queries"
grep -qv "^192.0.2.1$" "$WORK/rotating.answers" &&
  fail "a forged or missing answer with rotating ports: $(cat "$WORK/rotating.answers")"
[ "$(ports rotating)" -ge 4 ] ||
  fail "five queries 1.1 s apart left from $(ports rotating) source ports (want >= 4)"
echo "ok"
