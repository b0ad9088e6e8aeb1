"""Child processes of the runner: every child runs in its own process
group; all are killed on exit, on an exception and on SIGINT/SIGTERM/
SIGHUP. Also what the runner reads of them and of the host: their output
files, their CPU seconds (/proc), free ports, UDP receive-buffer drops.
"""

import atexit
import json
import os
import re
import resource
import signal
import socket
import subprocess
import time

LIVE = []  # Popen objects still to reap


def _kill_group(p, sig):
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_proc(p, grace=3.0, sig=signal.SIGTERM):
    """Sends sig to p's group, waits up to grace s, then SIGKILLs it."""
    if p is None:
        return None
    if p.poll() is None:
        _kill_group(p, sig)
        try:
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            _kill_group(p, signal.SIGKILL)
            try:
                p.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
    # The leader is gone: make sure nothing of its group is left.
    _kill_group(p, signal.SIGKILL)
    if p in LIVE:
        LIVE.remove(p)
    return p.returncode


def kill_all():
    for p in list(LIVE):
        stop_proc(p, grace=1.0)


atexit.register(kill_all)


class Interrupted(Exception):
    pass


def on_signal(signum, frame):
    signal.signal(signum, signal.SIG_IGN)
    raise Interrupted("signal %d" % signum)


def spawn(argv, out_path, err_path, cwd):
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=err, cwd=cwd, start_new_session=True)
    LIVE.append(p)
    return p


CLK_TCK = os.sysconf("SC_CLK_TCK")


def group_cpu(root):
    """CPU seconds (user + system, with reaped children) per pid of every
    live process of root's process group or below root (a wrapper may start
    its command in a session of its own), read from /proc."""
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d, "rb") as f:
                st = f.read().decode("ascii", "replace")
        except OSError:
            continue
        f = st[st.rfind(")") + 2:].split()
        # After the name: state ppid pgrp ... utime(11) stime cutime cstime
        try:
            procs[int(d)] = (int(f[1]), int(f[2]),
                             sum(int(x) for x in f[11:15]) / CLK_TCK)
        except (IndexError, ValueError):
            continue
    mine = {pid for pid, (_, pg, _) in procs.items() if pg == root}
    grew = True
    while grew:
        more = {pid for pid, (pp, _, _) in procs.items()
                if pp in mine and pid not in mine}
        mine |= more
        grew = bool(more)
    return {pid: procs[pid][2] for pid in mine}


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def read_text(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def tail(path, n=3):
    lines = [l for l in read_text(path).splitlines() if l.strip()]
    return " | ".join(lines[-n:])[-400:]


def json_lines(path):
    res = []
    for line in read_text(path).splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                res.append(json.loads(line))
            except ValueError:
                pass
    return res


def wait_for(path, proc, what, pattern=None, timeout=8.0):
    """Waits for a complete first line in path (or a line matching pattern).
    Returns the line; raises RuntimeError when proc dies or on timeout."""
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern) if pattern else None
    while True:
        text = read_text(path)
        if rx is None:
            if "\n" in text:
                return text.split("\n", 1)[0].strip()
        else:
            for line in text.splitlines():
                if rx.search(line):
                    return line.strip()
        if proc.poll() is not None:
            raise RuntimeError("%s exited (%s) before it was ready" %
                               (what, proc.returncode))
        if time.monotonic() > deadline:
            raise RuntimeError("%s not ready after %.0f s" % (what, timeout))
        time.sleep(0.02)


def free_port(taken=None):
    """A free port on 127.0.0.1, for both UDP and TCP, not in the set
    |taken| (which it joins). One cell's ports must differ: two picks in
    a row may return the same free port, and a real tunnel's client
    port equal to its server's TCP source port let the measurement
    connect to the source, around the tunnel (13 Gbit/s, 5 queries)."""
    for _ in range(50):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.bind(("127.0.0.1", 0))
            port = u.getsockname()[1]
            if taken is not None and port in taken:
                continue
            t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                t.bind(("127.0.0.1", port))
                if taken is not None:
                    taken.add(port)
                return port
            except OSError:
                continue
            finally:
                t.close()
        finally:
            u.close()
    raise RuntimeError("no free port")


def udp_rcvbuf_errors():
    """The host's count of UDP datagrams dropped for a full receive
    buffer (/proc/net/snmp RcvbufErrors), or None where it is not read."""
    try:
        with open("/proc/net/snmp") as f:
            rows = [line.split() for line in f if line.startswith("Udp:")]
        return int(rows[1][rows[0].index("RcvbufErrors")])
    except (OSError, ValueError, IndexError):
        return None
