#!/usr/bin/env bash
# TCP clients of the listener (RFC 7766): 1 030 idle connections do not
# lock a fresh `dig +tcp` out (the idle longest is closed to make room),
# idle ones are closed after the busy idle timeout (1 s, while three
# quarters of the slots are taken) and the idle timeout (10 s), a client that sends
# queries and never reads is closed once its queued answers pass the
# per-client bound while other clients are served, and refusals and
# closings are logged at most about once a second.
. "$(dirname "$0")/lib.sh"
need dig python3 "$RESPOOL_BIN" "$FAKERES_BIN"

start_fakeres fr -r name=a --answer
A=$(fakeres_udp fr 0)
start_respool rp -r "$A" --stats-json "$WORK/stats.json" --stats 200ms
wait_json "$WORK/stats.json" 'j["pool"]["nup"] >= 1' 10 >/dev/null ||
  fail "resolver not added: $(cat "$WORK/rp.err")"

# 1. 1 030 idle connections, held open by a helper until told to stop.
python3 - "$RP_HOST" "$RP_PORT" "$WORK" <<'PY' &
import os, socket, sys, time
host, port, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
conns = []
for i in range(1030):
    s = socket.create_connection((host, port), timeout=5)
    conns.append(s)
open(os.path.join(work, "held"), "w").write("%d\n" % len(conns))
def count_closed():
    closed = 0
    for s in conns:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed
deadline = time.time() + 30
for mark in ("mark", "stop"):
    while time.time() < deadline and \
            not os.path.exists(os.path.join(work, mark)):
        time.sleep(0.05)
    open(os.path.join(work, "closed-" + mark), "w").write(
        "%d\n" % count_closed())
PY
HOLDER=$!
PIDS="$PIDS $HOLDER"
for i in $(seq 1 100); do [ -s "$WORK/held" ] && break; sleep 0.1; done
[ -s "$WORK/held" ] || fail "the helper did not open its connections"
for i in 1 2 3; do
  a=$(dig +short +tcp +tries=1 +time=3 @"$RP_HOST" -p "$RP_PORT" "fresh$i.example" A)
  [ "$a" = 127.0.0.1 ] || fail "dig +tcp with 1030 idle connections held: '$a'"
done
note "dig +tcp answered 3 of 3 with 1030 idle connections held"
# While three quarters of the slots are taken the busy idle timeout (1 s)
# applies: within 3 s at least the connections above 768 are closed
# (those opened in the same second as the rest may stay). Below 768 the
# idle timeout is 10 s: by 12 s all are closed.
sleep 3
touch "$WORK/mark"
for i in $(seq 1 50); do [ -s "$WORK/closed-mark" ] && break; sleep 0.1; done
closed=$(cat "$WORK/closed-mark")
note "respool closed $closed of 1030 idle connections within 3 s"
[ "$closed" -ge 262 ] || fail "only $closed of 1030 idle connections closed in 3 s"
sleep 9.5
touch "$WORK/stop"
wait "$HOLDER"
closed=$(cat "$WORK/closed-stop")
note "respool closed $closed of 1030 idle connections within 12.5 s"
[ "$closed" -eq 1030 ] || fail "only $closed of 1030 idle connections closed in 12.5 s"
sleep 0.5
ev=$(json_get "$WORK/stats.json" 'j["pool"]["tcp_evicted"]')
idle=$(json_get "$WORK/stats.json" 'j["pool"]["tcp_idle_closed"]')
note "tcp_evicted=$ev tcp_idle_closed=$idle"
# Evicted when the 1 025th arrived while all were still fresh; when
# opening them took over a second, the sweep had made room already.
[ $((ev + idle)) -ge 1030 ] || fail "tcp_evicted=$ev + tcp_idle_closed=$idle < 1030"
nlog=$(grep -c 'ev=tcp_client_evicted' "$WORK/rp.err")
[ "$nlog" -le 5 ] || fail "$nlog eviction log lines: not rate-limited"

# 2. A client that sends 10 000 queries for 1 000-byte answers and never
# reads: closed when its queue passes the per-client bound (128 KiB);
# dig +tcp is served meanwhile and respool's memory stays bounded.
python3 - "$RP_HOST" "$RP_PORT" "$WORK" <<'PY' &
import os, socket, struct, sys, time
host, port, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.settimeout(5)
s.connect((host, port))
def q(i):
    name = b"".join(bytes([len(l)]) + l for l in
                    (b"s1000", b"n%d" % i, b"example")) + b"\0"
    m = struct.pack(">HHHHHH", i & 0xffff, 0x0100, 1, 0, 0, 1) + name + \
        struct.pack(">HH", 16, 1) + b"\0\0\x29\x04\xd0\0\0\0\0\0\0"
    return struct.pack(">H", len(m)) + m
sent = 0
try:
    # 10 000 queries at about 2 000 a second (a rate the one resolver
    # answers without loss): some 10 MB of answers, more than the kernel's
    # socket buffers and the per-client bound together.
    for i in range(10000):
        s.sendall(q(i))
        sent += 1
        if i % 20 == 19:
            time.sleep(0.01)
except OSError:
    pass
open(os.path.join(work, "slow_sent"), "w").write("%d\n" % sent)
time.sleep(2)
PY
SLOW=$!
PIDS="$PIDS $SLOW"
sleep 1.5
a=$(dig +short +tcp +tries=1 +time=3 @"$RP_HOST" -p "$RP_PORT" "beside.example" A)
[ "$a" = 127.0.0.1 ] || fail "dig +tcp beside a client that does not read: '$a'"
for i in $(seq 1 100); do
  slow=$(json_get "$WORK/stats.json" 'j["pool"]["tcp_slow_closed"]')
  [ "$slow" -ge 1 ] && break
  sleep 0.2
done
[ "$slow" -ge 1 ] || fail "the client that does not read was not closed"
rss=$(awk '/VmRSS/ {print $2}' /proc/"$RP_PID"/status)
note "tcp_slow_closed=$slow, respool RSS ${rss} kB"
[ "$rss" -lt 200000 ] || fail "respool RSS $rss kB"
wait "$SLOW"
echo ok
