#!/usr/bin/env python3
"""tcp_measure.py: measure a real TCP-forwarding DNS tunnel (dnstt-client /
dnstt-server and the like) for the scenario runner. Standard library only.

A real tunnel carries a TCP stream: its server connects to a TCP target,
its client listens on a local TCP port. This wraps each side:

  tcp_measure.py serve --target 127.0.0.1:AUX --listen-addr ADDR
      [--bytes N] [--linger S] -- SERVER-COMMAND...
    runs a TCP source on AUX (sends N bytes, default unlimited, of a
    pattern to each connection, then half-closes it and reads what comes
    until the peer closes or S seconds, default 60, pass), starts
    SERVER-COMMAND (which should
    forward to AUX), prints {"listen":"ADDR"} and on SIGTERM stops the
    command and prints {"server":"tcp_measure","connections":..}.

  tcp_measure.py fetch --connect 127.0.0.1:PORT (--bytes N | --seconds S)
      [--upload-bytes N] [--wait S] [--limit S] -- CLIENT-COMMAND...
    starts CLIENT-COMMAND (which should listen on PORT), connects to PORT
    (retrying up to --wait s), reads N bytes or for S seconds, checks the
    pattern and prints the runner's measurement line {"kbps_down":..,
    "kbps_up":null,"bytes_down":..,"seconds":..,"complete":..}; exit 0 when
    complete and intact. --upload-bytes sends N bytes up as well (no upload
    rate is claimed: the bytes are only known to have left the socket).
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from respool_bench.procs import stop_proc  # noqa: E402

PATTERN = bytes(range(256)) * 64  # 16 KiB, repeated


def hostport(s):
    h, _, p = s.rpartition(":")
    return (h or "127.0.0.1", int(p))


def start_child(cmd):
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise SystemExit("tcp_measure: no command after --")
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=sys.stderr, start_new_session=True)


def stop_child(p):
    """SIGTERM to the child's process group, SIGKILL after 3 s."""
    stop_proc(p, grace=3.0)


STOP = threading.Event()


def serve(a):
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(hostport(a.target))
    lst.listen(16)
    lst.settimeout(0.2)
    conns = [0]

    def drain(c):
        try:
            while c.recv(65536):
                pass
        except OSError:
            pass

    def feed(c):
        reader = threading.Thread(target=drain, args=(c,), daemon=True)
        reader.start()
        sent = 0
        try:
            while not STOP.is_set() and (a.bytes is None or sent < a.bytes):
                off = sent % len(PATTERN)
                chunk = PATTERN[off:]
                if a.bytes is not None:
                    chunk = chunk[:a.bytes - sent]
                sent += c.send(chunk)
        except OSError:
            pass
        finally:
            # Half-close, then read until the peer closes: a close() with
            # the client's upload still arriving makes the kernel answer
            # with a reset, and a reset throws away what the tunnel server
            # has not read yet of the download (the real MasterDnsVPN
            # server then resets the stream: an incomplete round that was
            # the tool's doing).
            try:
                c.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            reader.join(a.linger)
            c.close()

    def accept_loop():
        while not STOP.is_set():
            try:
                c, _ = lst.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conns[0] += 1
            threading.Thread(target=feed, args=(c,), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()
    child = start_child(a.cmd)
    signal.signal(signal.SIGTERM, lambda *x: STOP.set())
    signal.signal(signal.SIGINT, lambda *x: STOP.set())
    time.sleep(a.settle)
    print(json.dumps({"listen": a.listen_addr}), flush=True)
    while not STOP.is_set() and child.poll() is None:
        STOP.wait(0.2)
    rc = child.poll()
    stop_child(child)
    print(json.dumps({"server": "tcp_measure", "connections": conns[0],
                      "child_exit": rc}), flush=True)
    return 0


def fetch(a):
    child = start_child(a.cmd)
    try:
        deadline = time.monotonic() + a.wait
        s = None
        while time.monotonic() < deadline:
            if child.poll() is not None:
                print("tcp_measure: client command exited %s" % child.returncode,
                      file=sys.stderr)
                return 1
            try:
                s = socket.create_connection(hostport(a.connect), timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        if s is None:
            print("tcp_measure: nothing listens on %s" % a.connect,
                  file=sys.stderr)
            return 1
        up_done = [None]
        if a.upload_bytes:
            def upload():
                t = time.monotonic()
                try:
                    s.sendall(PATTERN * (a.upload_bytes // len(PATTERN)) +
                              PATTERN[:a.upload_bytes % len(PATTERN)])
                    up_done[0] = time.monotonic() - t
                except OSError:
                    pass
            threading.Thread(target=upload, daemon=True).start()
        s.settimeout(0.2)
        got = 0
        ok = True
        t0 = time.monotonic()
        last = t0
        while True:
            now = time.monotonic()
            if a.seconds is not None and now - t0 >= a.seconds:
                break
            if a.bytes is not None and got >= a.bytes:
                break
            if a.limit and now - t0 >= a.limit:
                break
            try:
                d = s.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            if not d:
                break
            off = got % len(PATTERN)
            exp = (PATTERN[off:] + PATTERN * (len(d) // len(PATTERN) + 1))
            if d != exp[:len(d)]:
                ok = False
            got += len(d)
            last = time.monotonic()
        el = (time.monotonic() - t0) if a.seconds is not None else \
            max(last - t0, 1e-3)
        s.close()
        complete = ok and (a.bytes is None or got >= a.bytes)
        print(json.dumps({"tunnel": "external", "complete": complete,
                          "bytes_down": got, "bytes_up": 0,
                          "seconds": round(el, 3),
                          "kbps_down": round(got * 8 / 1000.0 / el, 1),
                          # Sent into the local socket, not acknowledged
                          # end to end: no upload rate is claimed.
                          "bytes_up_sent": a.upload_bytes if up_done[0]
                          is not None else 0,
                          "kbps_up": None, "down_ok": ok}), flush=True)
        return 0 if complete else 1
    finally:
        stop_child(child)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("serve")
    p.add_argument("--target", required=True)
    p.add_argument("--listen-addr", required=True)
    p.add_argument("--bytes", type=int)
    p.add_argument("--settle", type=float, default=0.3)
    p.add_argument("--linger", type=float, default=60.0,
                   help="seconds a connection stays open for reading "
                   "after the last byte was sent (until the peer closes)")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    p = sub.add_parser("fetch")
    p.add_argument("--connect", required=True)
    p.add_argument("--bytes", type=int)
    p.add_argument("--seconds", type=float)
    p.add_argument("--upload-bytes", type=int, default=0,
                   help="also send N bytes up the tunnel (discarded by "
                   "the serve side)")
    p.add_argument("--wait", type=float, default=10.0)
    p.add_argument("--limit", type=float, default=0,
                   help="give up after this many seconds (0 = never)")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    return serve(a) if a.mode == "serve" else fetch(a)


if __name__ == "__main__":
    sys.exit(main())
