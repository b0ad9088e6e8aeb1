#!/usr/bin/env python3
"""tinyres: a tiny loopback DNS responder for the runtime's tests.

Answers every A query with 192.0.2.1 and every TXT query with one TXT
record of --txt-size bytes. Over UDP an answer larger than the query's
limit (512 without EDNS, else the EDNS size) is replaced by a truncated
answer (TC set, no records), so a client must retry over TCP. Listens on
UDP and TCP of the same 127.0.0.1 port, prints one JSON line with the
address at start and the counts as JSON on stdout at SIGTERM.
--tcp none: no TCP service (connections refused); --tcp stall: TCP
connections accepted and queries read, never answered (a resolver that
truncates and cannot serve the rest).
"""
import argparse
import json
import selectors
import signal
import socket
import struct
import sys

counts = {"udp": 0, "tcp": 0, "tc": 0}


def parse_question(q):
    """Returns (end offset of question, qtype, edns size or 0)."""
    pos = 12
    while True:
        n = q[pos]
        pos += 1
        if n == 0:
            break
        pos += n
    qtype = struct.unpack("!H", q[pos:pos + 2])[0]
    pos += 4
    edns = 0
    arcount = struct.unpack("!H", q[10:12])[0]
    if arcount and len(q) >= pos + 11 and q[pos] == 0:
        rtype, size = struct.unpack("!HH", q[pos + 1:pos + 5])
        if rtype == 41:
            edns = size
    return pos, qtype, edns


def answer(q, txt_size, limit, refuse):
    qend, qtype, edns = parse_question(q)
    qid = q[:2]
    flags = 0x8180 | (q[2] & 0x01) << 8
    question = q[12:qend]
    if refuse:
        return qid + struct.pack("!HHHHH", (flags & 0xfff0) | 5, 1, 0, 0, 0) + question, False
    rrs = b""
    if qtype == 16:
        data = b"x" * txt_size
        rdata = b""
        for i in range(0, max(len(data), 1), 255):
            chunk = data[i:i + 255]
            rdata += bytes([len(chunk)]) + chunk
        rrs = b"\xc0\x0c" + struct.pack("!HHIH", 16, 1, 0, len(rdata)) + rdata
    else:
        rrs = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + bytes([192, 0, 2, 1])
    opt = b""
    if edns:
        opt = b"\x00" + struct.pack("!HHIH", 41, 1232, 0, 0)
    msg = qid + struct.pack("!HHHHH", flags, 1, 1, 0, 1 if edns else 0) + question + rrs + opt
    if limit is not None:
        lim = max(edns, 512) if edns else 512
        if len(msg) > lim:
            counts["tc"] += 1
            return qid + struct.pack("!HHHHH", flags | 0x0200, 1, 0, 0, 0) + question, True
    return msg, False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--txt-size", type=int, default=100)
    ap.add_argument("--refuse", action="store_true")
    ap.add_argument("--tcp", choices=("serve", "none", "stall"),
                    default="serve")
    args = ap.parse_args()

    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", args.port))
    port = udp.getsockname()[1]
    sel = selectors.DefaultSelector()
    udp.setblocking(False)
    sel.register(udp, selectors.EVENT_READ, "udp")
    if args.tcp != "none":
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind(("127.0.0.1", port))
        tcp.listen(64)
        tcp.setblocking(False)
        sel.register(tcp, selectors.EVENT_READ, "listen")
    bufs = {}
    running = [True]

    def stop(signum, frame):
        running[0] = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(json.dumps({"udp": "127.0.0.1:%d" % port, "tcp": "127.0.0.1:%d" % port}), flush=True)
    while running[0]:
        try:
            events = sel.select(0.2)
        except InterruptedError:
            continue
        for key, _ in events:
            if key.data == "udp":
                try:
                    q, addr = udp.recvfrom(65535)
                except BlockingIOError:
                    continue
                counts["udp"] += 1
                try:
                    a, _ = answer(q, args.txt_size, True, args.refuse)
                    udp.sendto(a, addr)
                except (IndexError, struct.error):
                    pass
            elif key.data == "listen":
                try:
                    c, _ = tcp.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                bufs[c] = b""
                sel.register(c, selectors.EVENT_READ, "conn")
            else:
                c = key.fileobj
                try:
                    data = c.recv(65535)
                except (BlockingIOError, ConnectionError):
                    data = None if isinstance(sys.exc_info()[1], BlockingIOError) else b""
                if data is None:
                    continue
                if not data:
                    sel.unregister(c)
                    c.close()
                    del bufs[c]
                    continue
                b = bufs[c] + data
                while len(b) >= 2:
                    n = struct.unpack("!H", b[:2])[0]
                    if len(b) < 2 + n:
                        break
                    q = b[2:2 + n]
                    b = b[2 + n:]
                    counts["tcp"] += 1
                    if args.tcp == "stall":
                        continue
                    try:
                        a, _ = answer(q, args.txt_size, None, args.refuse)
                        c.setblocking(True)
                        c.sendall(struct.pack("!H", len(a)) + a)
                        c.setblocking(False)
                    except (IndexError, struct.error, OSError):
                        pass
                bufs[c] = b
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
