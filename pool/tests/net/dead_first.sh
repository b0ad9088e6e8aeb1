#!/usr/bin/env bash
# Dead resolvers listed before a live one (the reliability issue's "only
# 10 resolvers are ever in the pool"): N resolvers that never answer,
# then one that does, default start-up check. A client sending a query
# every 20 ms from the moment respool prints its address must have its
# first NOERROR answer within 1 s, for N = 20 and N = 10 000 (before the
# fix: nothing answered in 25 s with 20; the checks ran ten at a time and
# each dead one held its slot for the 2 s check timeout). Then
# `--pretest ""` with 20 dead and one live, a query every 20 ms from the
# start: every query answered, none later than 1.5 s; with 20 dead and 3
# live: all 23 join the pool (before: ten); a bad --want is refused.
#
# The dead resolvers are addresses 127.2.x.y on one port where a single
# socket bound to 0.0.0.0 reads and discards every datagram: silent, as a
# resolver that drops the tunnel's queries is.
. "$(dirname "$0")/lib.sh"
need python3 "$RESPOOL_BIN" "$FAKERES_BIN"

# blackhole PORTFILE: binds UDP 0.0.0.0:0, writes its port, discards all.
python3 - "$WORK/hole.port" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(("0.0.0.0", 0))
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1])
s.settimeout(60)
try:
    while True:
        s.recv(2048)
except socket.timeout:
    pass
EOF
PIDS="$PIDS $!"
wait_line "$WORK/hole.port"
HOLE=$(cat "$WORK/hole.port")

start_fakeres live --answer -r name=l1 -r name=l2 -r name=l3
LIVE=$(fakeres_udp live 0)

# config N FILE [LIVE...]: a config listing N dead resolvers, then LIVE.
config() {
  python3 - "$@" <<'EOF'
import json, sys
n, path, live = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
port = open(sys.argv[2] + ".port").read().strip()
dead = ["127.2.%d.%d:%s" % (i // 250, i % 250 + 1, port) for i in range(n)]
json.dump({"resolvers": dead + live}, open(path, "w"))
EOF
}

# client MODE SECONDS: queries the pool every 20 ms from the moment it is
# up. MODE first: until the first NOERROR answer (for up to SECONDS);
# prints the seconds to it and the SERVFAILs before it ("never N" and
# status 1 when none came). MODE all: for SECONDS, then up to 6 s more for
# the answers; prints the queries sent, NOERROR answers, SERVFAILs,
# unanswered, those answered later than 1.5 s, and the worst time to an
# answer.
client() {
  python3 - "$RP_HOST" "$RP_PORT" "$1" "$2" <<'EOF'
import socket, struct, sys, time
host, port, mode, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
t0 = time.monotonic()
sent, got = {}, {}
servfail, nxt, qid = 0, 0.0, 0
drain = 6.0 if mode == "all" else 0.0
while True:
    now = time.monotonic() - t0
    if now >= secs + drain or (now >= secs and len(got) == len(sent)):
        break
    if now < secs and now >= nxt:
        qid += 1
        name = b"".join(bytes([len(l)]) + l for l in (b"q%d" % qid, b"dead", b"example")) + b"\0"
        s.sendto(struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + name + b"\0\1\0\1", (host, port))
        sent[qid] = now
        nxt = now + 0.02
    try:
        a = s.recv(4096)
    except BlockingIOError:
        time.sleep(0.002)
        continue
    rid = struct.unpack(">H", a[:2])[0]
    if rid not in sent or rid in got:
        continue
    if a[3] & 0xF:
        servfail += 1
        got[rid] = None
        continue
    got[rid] = time.monotonic() - t0 - sent[rid]
    if mode == "first":
        print("%.3f %d" % (time.monotonic() - t0, servfail))
        sys.exit(0)
if mode == "first":
    print("never %d" % servfail)
    sys.exit(1)
ok = [d for d in got.values() if d is not None]
print("%d %d %d %d %d %.3f" % (len(sent), len(ok), servfail, len(sent) - len(got),
      sum(1 for d in ok if d > 1.5), max(ok) if ok else -1.0))
EOF
}

for n in 20 10000; do
  cp "$WORK/hole.port" "$WORK/dead$n.json.port"
  config "$n" "$WORK/dead$n.json" "$LIVE"
  start_respool rp$n -c "$WORK/dead$n.json"
  out=$(client first 6) || fail "$n dead first: no answer in 6 s ($out)"
  t=${out% *}
  note "$n dead listed first: first answer ${t}s after start (${out#* } error answers before it)"
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 1.0 else 1)" "$t" ||
    fail "$n dead first: first answer after ${t}s, wants <= 1 s"
  stop_respool rp$n
done

# --pretest "": 20 dead and the live one join unchecked, and a client
# queries every 20 ms from the start. While nothing has answered the
# first queries go to resolvers never answered (the dead ones lose
# them); once the live one answered, none is placed on one that never
# answered while it has room, and those left on dead ones go to it. Every
# query answered, none later than 1.5 s (before: about fifteen waited for
# per_attempt, 2 s, and one every 2 s per dead resolver until it was
# down).
cp "$WORK/hole.port" "$WORK/unchecked.json.port"
config 20 "$WORK/unchecked.json" "$LIVE"
start_respool rpun -c "$WORK/unchecked.json" --pretest "" --stats-json "$WORK/un-stats.json" --stats 100ms
read -r nsent nok nfail nlost nlate worst <<<"$(client all 6)"
note "--pretest \"\" with 20 dead and 1 live, a query every 20 ms for 6 s: $nok of $nsent answered, $nfail SERVFAIL, $nlost unanswered, $nlate later than 1.5 s (worst ${worst}s)"
[ "$nok" -eq "$nsent" ] && [ "$nfail" -eq 0 ] && [ "$nlost" -eq 0 ] ||
  fail "--pretest \"\": $nok of $nsent answered, $nfail SERVFAIL, $nlost unanswered"
[ "$nlate" -eq 0 ] || fail "--pretest \"\": $nlate answers later than 1.5 s (worst ${worst}s)"
note "--pretest \"\": retries (tries riding along to the unchecked ones) $(json_get "$WORK/un-stats.json" 'j["pool"]["retries"]')"
stop_respool rpun

cp "$WORK/hole.port" "$WORK/all.json.port"
config 20 "$WORK/all.json" "$LIVE" "$(fakeres_udp live 1)" "$(fakeres_udp live 2)"
start_respool rpall -c "$WORK/all.json" --pretest "" --stats-json "$WORK/all-stats.json" --stats 100ms
wait_json "$WORK/all-stats.json" 'len(j["resolvers"]) == 23 and j["pool"]["nup"] >= 3' 5 >/dev/null ||
  fail "--pretest \"\": not every listed resolver joined: $(json_get "$WORK/all-stats.json" 'len(j["resolvers"])')"
note "--pretest \"\": all 23 listed resolvers in the pool"
stop_respool rpall

# A bad --want is refused, naming the value.
if "$RESPOOL_BIN" -r "$LIVE" --want 0 >"$WORK/want.out" 2>"$WORK/want.err"; then
  fail "--want 0 accepted"
fi
grep -q -- "--want: bad number (0" "$WORK/want.err" || fail "--want 0: $(cat "$WORK/want.err")"
echo ok
