#!/usr/bin/env python3
"""fake_tunnel.py: stand-in tunnel server, client and relay for the runner's
own test (test_runner.sh). Python 3 standard library only.

  fake_tunnel.py server --listen 127.0.0.1:PORT [--payload N]
      answers every DNS query with one TXT record of N bytes (NOERROR);
      prints {"listen":..} at start and its counters on SIGTERM.
  fake_tunnel.py client --resolver ADDR [--resolver ADDR]... [--seconds S |
      --bytes N] [--payload N] [--round R --kbps-by-round a,b,c]
      [--fail] [--hang]
      sends queries round robin over the resolvers, one at a time, and
      prints the measurement JSON line (kbps_down, kbps_up, ...).
  fake_tunnel.py tcp-forward --listen ADDR --to ADDR [--resolvers-file F]
      a TCP pipe standing in for a real TCP-forwarding tunnel client.
  fake_tunnel.py relay -r ADDR [-r ADDR]... [--stats-json FILE]
      a round-robin UDP relay on 127.0.0.1:0; prints its address as the
      first stdout line and writes {"pool":{"copies":..,"hedges":..}} to
      FILE on SIGTERM.
"""
import argparse
import json
import os
import select
import signal
import socket
import struct
import sys
import time


def addr(s):
    h, _, p = s.rpartition(":")
    return (h, int(p))


def question_end(q):
    i = 12
    while i < len(q):
        n = q[i]
        if n == 0:
            return i + 1 + 4
        if n & 0xC0:
            return i + 2 + 4
        i += 1 + n
    return None


def answer(q, payload):
    end = question_end(q)
    if end is None or len(q) < 12 or end > len(q):
        return None
    hdr = bytearray(q[:12])
    hdr[2] = 0x84 | (hdr[2] & 0x01)  # QR, AA, RD copied
    hdr[3] = 0x00
    hdr[4:12] = struct.pack("!HHHH", 1, 1, 0, 0)
    txt = b""
    left = payload
    while left > 0:
        n = min(255, left)
        txt += bytes([n]) + b"x" * n
        left -= n
    rr = struct.pack("!HHHIH", 0xC00C, 16, 1, 0, len(txt)) + txt
    return bytes(hdr) + q[12:end] + rr


def query(qid, n):
    name = b"".join(bytes([len(l)]) + l for l in
                    [b"q%d" % n, b"t", b"example"]) + b"\x00"
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + name + \
        struct.pack("!HH", 16, 1)


STOP = []


def on_term(signum, frame):
    STOP.append(signum)


def server(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(addr(a.listen))
    print(json.dumps({"listen": "%s:%d" % s.getsockname()}), flush=True)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    n = 0
    while not STOP:
        r, _, _ = select.select([s], [], [], 0.1)
        if r:
            q, peer = s.recvfrom(4096)
            ans = answer(q, a.payload)
            if ans:
                s.sendto(ans, peer)
                n += 1
    print(json.dumps({"server": "fake", "answers": n}), flush=True)


def client(a):
    if a.hang:
        time.sleep(3600)
    if a.fail:
        print("fake client: failing on purpose", file=sys.stderr)
        return 3
    socks = []
    for r in a.resolver:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(addr(r))
        socks.append(s)
    t0 = time.monotonic()
    sent = got = 0
    while True:
        el = time.monotonic() - t0
        if a.seconds is not None and el >= a.seconds:
            break
        if a.bytes is not None and got * a.payload >= a.bytes:
            break
        if el > 30:
            break
        s = socks[sent % len(socks)]
        s.send(query(sent & 0xFFFF, sent))
        sent += 1
        r, _, _ = select.select([s], [], [], 0.05)
        if r:
            data = s.recv(4096)
            if len(data) > 3 and (data[3] & 0x0F) == 0:
                got += 1
        else:
            time.sleep(0.001)
    el = max(time.monotonic() - t0, 1e-3)
    kbps = got * a.payload * 8 / 1000.0 / el
    if a.kbps_by_round:
        vals = [float(x) for x in a.kbps_by_round.split(",")]
        kbps = vals[(a.round - 1) % len(vals)]
    out = {"tunnel": "fake", "complete": True,
           "bytes_down": got * a.payload, "bytes_up": 0,
           "seconds": round(el, 3), "kbps_down": round(kbps, 1),
           "kbps_up": 1.0, "upload_asked": a.upload_bytes,
           "queries": sent, "answers": got}
    print(json.dumps(out), flush=True)
    return 0


def relay(a):
    ups = [addr(r) for r in a.r]
    lst = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    lst.bind(("127.0.0.1", 0))
    up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    up.bind(("127.0.0.1", 0))
    print("%s:%d" % lst.getsockname(), flush=True)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    pending = {}
    n = 0
    while not STOP:
        r, _, _ = select.select([lst, up], [], [], 0.1)
        for s in r:
            data, peer = s.recvfrom(4096)
            if len(data) < 12:
                continue
            qid = data[:2]
            if s is lst:
                pending[qid] = peer
                up.sendto(data, ups[n % len(ups)])
                n += 1
            elif qid in pending:
                lst.sendto(data, pending.pop(qid))
    if a.stats_json:
        with open(a.stats_json, "w") as f:
            json.dump({"pool": {"queries": n, "copies": 7, "hedges": 5}}, f)
    return 0


def tcp_forward(a):
    """A TCP pipe standing in for a real tunnel client (plumbing test)."""
    import threading
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(addr(a.listen))
    lst.listen(4)
    signal.signal(signal.SIGTERM, on_term)

    def pipe(src, dst):
        try:
            while True:
                d = src.recv(65536)
                if not d:
                    break
                dst.sendall(d)
        except OSError:
            pass
        finally:
            for x in (src, dst):
                try:
                    x.close()
                except OSError:
                    pass
    while not STOP:
        r, _, _ = select.select([lst], [], [], 0.1)
        if r:
            c, _ = lst.accept()
            u = socket.create_connection(addr(a.to))
            threading.Thread(target=pipe, args=(c, u), daemon=True).start()
            threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("server")
    p.add_argument("--listen", required=True)
    p.add_argument("--payload", type=int, default=200)
    p = sub.add_parser("client")
    p.add_argument("--resolver", action="append", required=True)
    p.add_argument("--seconds", type=float)
    p.add_argument("--bytes", type=int)
    p.add_argument("--payload", type=int, default=200)
    p.add_argument("--round", type=int, default=1)
    p.add_argument("--kbps-by-round")
    p.add_argument("--upload-bytes", type=int, default=0)
    p.add_argument("--fail", action="store_true")
    p.add_argument("--hang", action="store_true")
    p = sub.add_parser("relay")
    p.add_argument("-r", action="append", required=True)
    p.add_argument("--stats-json")
    p = sub.add_parser("tcp-forward")
    p.add_argument("--listen", required=True)
    p.add_argument("--to", required=True)
    p.add_argument("--resolvers-file")
    a = ap.parse_args()
    if getattr(a, "resolvers_file", None):
        # Proves the generated file exists and holds the resolvers.
        with open(a.resolvers_file) as f:
            if "127.0.0." not in f.read():
                sys.exit("fake_tunnel: bad resolvers file")
    return {"server": server, "client": client, "relay": relay,
            "tcp-forward": tcp_forward}[a.cmd](a) or 0


if __name__ == "__main__":
    sys.exit(main())
