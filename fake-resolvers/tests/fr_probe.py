#!/usr/bin/env python3
"""fr_probe.py: raw DNS probes of fakeres for the loopback tests.

  fr_probe.py tcp HOST PORT        pipelined queries on one TCP connection
  fr_probe.py malformed HOST PORT  bad packets over UDP and TCP

Each prints one line per check ("ok: ..." or "FAIL: ...") and exits 1 if
any check failed. Standard library only.
"""
import random
import socket
import struct
import sys
import time

TIMEOUT = 3.0
failed = False


def say(ok, what):
    global failed
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failed = True


def name_wire(name):
    out = b""
    for label in name.strip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def query(qid, name, qtype=1, edns=None):
    """A query with RD; an OPT record of |edns| bytes when given."""
    arcount = 1 if edns else 0
    msg = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, arcount)
    msg += name_wire(name) + struct.pack("!HH", qtype, 1)
    if edns:
        msg += b"\0" + struct.pack("!HHIH", 41, edns, 0, 0)
    return msg


def header(msg):
    qid, flags, qd, an, ns, ar = struct.unpack("!HHHHHH", msg[:12])
    return qid, flags, flags & 0xF, an


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def recv_frame(sock):
    (n,) = struct.unpack("!H", recv_exact(sock, 2))
    return recv_exact(sock, n)


def frame(msg):
    return struct.pack("!H", len(msg)) + msg


def tcp(host, port):
    # 1. Twenty pipelined queries in one write; every answer comes back,
    # matched by ID, in whatever order the jitter gives.
    s = socket.create_connection((host, port), timeout=TIMEOUT)
    ids = random.sample(range(65536), 20)
    s.sendall(b"".join(frame(query(i, "p%d.tcp.example" % i)) for i in ids))
    got = []
    for _ in ids:
        qid, flags, rcode, an = header(recv_frame(s))
        got.append(qid)
        if rcode != 0 or an != 1:
            say(False, "answer %d: rcode %d, %d records" % (qid, rcode, an))
    say(sorted(got) == sorted(ids), "20 pipelined queries, 20 answers by ID")
    say(got != ids, "answers out of order (jitter): %s" % (got != ids))

    # 2. A frame sent one byte at a time.
    msg = frame(query(4242, "slow.tcp.example"))
    for b in msg:
        s.sendall(bytes([b]))
        time.sleep(0.002)
    qid, _, rcode, _ = header(recv_frame(s))
    say(qid == 4242 and rcode == 0, "frame split into single bytes")

    # 3. A large TXT over TCP: 5000 payload bytes (20 strings).
    s.sendall(frame(query(77, "s5000.tcp.example", qtype=16, edns=1232)))
    ans = recv_frame(s)
    # payload = message - header - question - owner ptr - fixed - strings - OPT
    qlen = len(name_wire("s5000.tcp.example")) + 4
    payload = len(ans) - 12 - qlen - 2 - 10 - 20 - 11
    say(payload == 5000, "s5000 over TCP carries %d payload bytes" % payload)
    s.close()

    # 4. Half-close after the query: the answer still arrives.
    s = socket.create_connection((host, port), timeout=TIMEOUT)
    s.sendall(frame(query(99, "half.tcp.example")))
    s.shutdown(socket.SHUT_WR)
    qid, _, rcode, _ = header(recv_frame(s))
    say(qid == 99 and rcode == 0, "answer after the client's half-close")
    s.close()


def udp_exchange(host, port, data, wait=0.5):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(wait)
    s.sendto(data, (host, port))
    try:
        return s.recv(65536)
    except socket.timeout:
        return None
    finally:
        s.close()


def malformed(host, port):
    # A header that promises a question and has none: FORMERR, same ID.
    ans = udp_exchange(host, port, struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0))
    say(ans is not None and header(ans)[0] == 0x1234 and header(ans)[2] == 1,
        "header without its question: FORMERR with the query's ID")
    # A name running past the end: FORMERR.
    bad = struct.pack("!HHHHHH", 0x2345, 0x0100, 1, 0, 0, 0) + b"\x3fabc"
    ans = udp_exchange(host, port, bad)
    say(ans is not None and header(ans)[2] == 1, "truncated name: FORMERR")
    # A compression loop in the question: FORMERR.
    loop = struct.pack("!HHHHHH", 0x3456, 0x0100, 1, 0, 0, 0) + b"\xc0\x0c\0\1\0\1"
    ans = udp_exchange(host, port, loop)
    say(ans is not None and header(ans)[2] == 1, "compression loop: FORMERR")
    # Too short for a header: dropped.
    say(udp_exchange(host, port, b"\x01\x02\x03\x04\x05") is None,
        "5-byte packet: no answer")
    # A response (QR set) is not answered, so two fakes cannot loop.
    resp = bytearray(query(0x4567, "r.example"))
    resp[2] |= 0x80
    say(udp_exchange(host, port, bytes(resp)) is None, "a response: no answer")
    # Garbage over TCP: FORMERR in a frame, and the connection lives on.
    s = socket.create_connection((host, port), timeout=TIMEOUT)
    s.sendall(frame(struct.pack("!HHHHHH", 0x5678, 0x0100, 1, 0, 0, 0) + b"\xff" * 7))
    qid, _, rcode, _ = header(recv_frame(s))
    say(qid == 0x5678 and rcode == 1, "TCP garbage: FORMERR")
    s.sendall(frame(query(0x6789, "after.example")))
    qid, _, rcode, _ = header(recv_frame(s))
    say(qid == 0x6789 and rcode == 0, "TCP connection still answers")
    s.close()
    # Still alive over UDP.
    ans = udp_exchange(host, port, query(0x789A, "alive.example"), wait=2)
    say(ans is not None and header(ans)[2] == 0, "still answers over UDP")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("tcp", "malformed"):
        sys.exit(__doc__)
    host, port = sys.argv[2], int(sys.argv[3])
    try:
        {"tcp": tcp, "malformed": malformed}[sys.argv[1]](host, port)
    except (OSError, ConnectionError, struct.error) as e:
        say(False, "exception: %r" % e)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
