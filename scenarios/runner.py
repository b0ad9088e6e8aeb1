#!/usr/bin/env python3
"""runner.py: the scenario table of respool (DESIGN.md section 6, issue 7).

For every setup (scenarios/setups.json) and column (scenarios/columns.json)
it starts a tunnel server, fakeres in front of it, an optional relay (the
pool, dnsdist) and the tunnel client in measurement mode, parses the
client's JSON line, collects the fake resolvers' counts and the relay's
statistics, and stops everything. Rounds of one setup are interleaved
across its columns; the table shows the median. Python 3 standard library
only. See docs/benchmark.md.
"""

import argparse
import atexit
import datetime
import json
import math
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import timeline

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Where the real dnstt and MasterDnsVPN are looked for when neither
# --real-tunnels nor RP_REAL_TUNNELS names a folder (bin/, dnstt/ and
# masterdnsvpn/ inside, as ../shared/real-tunnels/README.md describes).
DEFAULT_REAL_TUNNELS = os.path.normpath(
    os.path.join(ROOT, "..", "shared", "real-tunnels"))

# ---------------------------------------------------------------------------
# Processes: every child runs in its own process group; all are killed on
# exit, on an exception and on SIGINT/SIGTERM/SIGHUP.

LIVE = []  # Popen objects still to reap
# The largest DNS message (RFC 1035 over TCP): no answer carries more.
MAX_ANSWER_BYTES = 65535


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


def _on_signal(signum, frame):
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


# ---------------------------------------------------------------------------
# Templates

PH = re.compile(r"\{([a-z][a-z0-9_]*)\}")


class TemplateError(Exception):
    pass


def subst_str(s, ctx):
    def rep(m):
        k = m.group(1)
        if k not in ctx:
            raise TemplateError("unknown placeholder {%s} in %r" % (k, s))
        v = ctx[k]
        if isinstance(v, list):
            raise TemplateError("list placeholder {%s} must be a whole "
                                "argument" % k)
        return str(v)
    return PH.sub(rep, s)


def subst_argv(tmpl, ctx, depth=0):
    """Expands an argv template (a list, or a string split like a shell
    would): placeholders are replaced; an element that is exactly a list
    placeholder is spliced in (and expanded in turn)."""
    if isinstance(tmpl, str):
        import shlex
        tmpl = shlex.split(tmpl)
    if depth > 5:
        raise TemplateError("placeholders nest too deep")
    out = []
    for el in tmpl:
        m = PH.fullmatch(el)
        if m and isinstance(ctx.get(m.group(1)), list):
            out.extend(subst_argv(ctx[m.group(1)], ctx, depth + 1))
        else:
            out.append(subst_str(el, ctx))
    return out


def resolve_exe(argv0):
    if os.sep in argv0:
        return argv0 if os.access(argv0, os.X_OK) else None
    return shutil.which(argv0)


# ---------------------------------------------------------------------------
# Data


def load_json(path):
    with open(path) as f:
        return json.load(f)


def column_def(cols_data, col):
    """The column merged over its tunnel's defaults (and relay)."""
    tun = cols_data["tunnels"].get(col.get("tunnel"), {})
    d = dict(tun)
    d.update(col)
    d.setdefault("kind", col.get("tunnel", "generic"))
    if d.get("relay"):
        rel = cols_data.get("relays", {}).get(d["relay"])
        if rel is None:
            raise TemplateError("column %s: unknown relay %s" %
                                (col["name"], d["relay"]))
        r = dict(rel)
        r.update(d.get("relay_override", {}))
        d["relay_def"] = r
    return d


def physical_limit_kbps(setup, col):
    qps = setup.get("answered_qps")
    pb = col.get("payload_bytes")
    if not setup.get("rate_limited") or not qps or not pb:
        return None
    return qps * pb * 8 / 1000.0


def check_available(cd, ctx_static):
    """Returns None when the column can run, else a reason (n/a)."""
    ctx = dict(ctx_static)
    # Dummy values: only the executables matter here.
    for k in ("server_port", "client_port", "aux_port", "relay_port",
              "relay_addr", "resolver_first", "upload_bytes",
              "resolver_first_ip", "resolver_first_port", "resolvers_csv",
              "resolvers_space", "resolvers_file", "bytes", "seconds",
              "serve_bytes", "workdir", "server_addr", "round", "setup",
              "client_limit"):
        ctx.setdefault(k, "0")
    ctx.setdefault("transfer", [])
    ctx.setdefault("mode_args", [])
    ctx.setdefault("resolvers_all_args", [])
    ctx["kind"] = cd.get("kind", "")
    ctx["column"] = cd["name"]
    if cd.get("real") and "real_tunnels" not in ctx:
        return ("the real tunnels were not found (looked in %s; give "
                "--real-tunnels DIR or set RP_REAL_TUNNELS)" %
                DEFAULT_REAL_TUNNELS)
    need = [("server", cd.get("server")), ("client", cd.get("client"))]
    if cd.get("relay_def"):
        need.append(("relay", cd["relay_def"].get("cmd")))
    for what, tmpl in need:
        if not tmpl:
            return "no %s command" % what
        try:
            argv = subst_argv(tmpl, ctx)
        except TemplateError as e:
            return str(e)
        if not argv or resolve_exe(argv[0]) is None:
            return "%s %s not built/installed" % (
                what, os.path.basename(argv[0]) if argv else "?")
    for exe in cd.get("requires", []):
        try:
            path = subst_str(exe, ctx)
        except TemplateError as e:
            return str(e)
        if resolve_exe(path) is None:
            return "%s missing" % path
    words = cd.get("requires_help")
    if words:
        argv = subst_argv(cd["client"], ctx)
        try:
            h = subprocess.run([argv[0], "--help"], capture_output=True,
                               timeout=5, stdin=subprocess.DEVNULL)
            text = (h.stdout + h.stderr).decode("utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired):
            text = ""
        for w in words:
            if w not in text:
                return "client has no %s yet" % w
    return None


# ---------------------------------------------------------------------------
# One cell, one round


def write_files(files, ctx, resolvers, wd):
    """Writes generated files (config of a relay or a tunnel) into wd:
    each is {"lines": [...], "per_resolver": "line with {addr} {ip} {port}
    {name} {index}"}; per-resolver lines follow the fixed ones unless the
    fixed lines hold a line that is exactly "{per_resolver}"."""
    for fname, spec in (files or {}).items():
        per = []
        if spec.get("per_resolver"):
            for i, r in enumerate(resolvers):
                c2 = dict(ctx)
                ip, _, port = r["udp"].rpartition(":")
                c2.update({"addr": r["udp"], "name": r["name"], "ip": ip,
                           "port": port, "index": i})
                per.append(subst_str(spec["per_resolver"], c2))
        lines = []
        placed = False
        for l in spec.get("lines", []):
            if l == "{per_resolver}":
                lines.extend(per)
                placed = True
            else:
                lines.append(subst_str(l, ctx))
        if not placed:
            lines.extend(per)
        path = os.path.join(wd, subst_str(fname, ctx))
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")


def udp_rcvbuf_errors():
    """The host's count of UDP datagrams dropped for a full receive
    buffer (/proc/net/snmp RcvbufErrors), or None where it is not read."""
    try:
        with open("/proc/net/snmp") as f:
            rows = [line.split() for line in f if line.startswith("Udp:")]
        return int(rows[1][rows[0].index("RcvbufErrors")])
    except (OSError, ValueError, IndexError):
        return None


def run_round(setup, cd, rnd, opts, ctx_static):
    rec = {"setup": setup["name"], "column": cd["name"], "round": rnd,
           "ok": False}
    wd = tempfile.mkdtemp(prefix="rp-cell-", dir=opts.tmp)
    procs = {}
    t0 = time.monotonic()
    rcvbuf0 = udp_rcvbuf_errors()
    try:
        limited = bool(setup.get("rate_limited"))
        ctx = dict(ctx_static)
        ctx.update({"workdir": wd, "setup": setup["name"],
                    "column": cd["name"], "round": rnd,
                    "kind": cd.get("kind", ""),
                    "bytes": opts.bytes_for(setup),
                    "seconds": opts.seconds_for(setup)})
        ctx["serve_bytes"] = cd.get("serve_bytes_limited", ctx["bytes"]) \
            if limited else cd.get("serve_bytes_timed", "1G")
        ctx["transfer"] = list(cd["transfer_bytes"] if limited
                               else cd["transfer_seconds"])
        ctx["upload_bytes"] = opts.upload_for(setup)
        # A client that measures itself gives up this much before the
        # runner would stop it, so that a partial transfer still reports.
        ctx["client_limit"] = max(5, int(opts.timeout_for(setup, cd)) - 10)
        if ctx["upload_bytes"] and cd.get("transfer_upload"):
            ctx["transfer"] += cd["transfer_upload"]
        rec["transfer"] = ("%s bytes" % ctx["bytes"]) if limited \
            else ("%s s" % ctx["seconds"])
        # Tunnel server (a new port and another try when it dies before it
        # is ready: the free port may have been taken meanwhile).
        taken = set()
        ctx["client_port"] = free_port(taken)
        ctx["aux_port"] = free_port(taken)
        ready = cd.get("server_ready", "line")
        for attempt in range(3):
            ctx["server_port"] = free_port(taken)
            ctx["server_addr"] = "127.0.0.1:%d" % ctx["server_port"]
            write_files(cd.get("server_files"), ctx, [], wd)
            argv = subst_argv(cd["server"], ctx)
            rec["server_cmd"] = argv
            procs["server"] = spawn(argv, os.path.join(wd, "server.out"),
                                    os.path.join(wd, "server.err"), wd)
            if ready != "line":
                time.sleep(float(ready))
                if procs["server"].poll() is None:
                    break
                if attempt == 2:
                    raise RuntimeError("tunnel server exited (%s): %s" % (
                        procs["server"].returncode,
                        tail(os.path.join(wd, "server.err"))))
                stop_proc(procs["server"])
                continue
            try:
                line = wait_for(os.path.join(wd, "server.out"),
                                procs["server"], "tunnel server")
            except RuntimeError as e:
                if procs["server"].poll() is None or attempt == 2:
                    raise RuntimeError("%s: %s" % (
                        e, tail(os.path.join(wd, "server.err"))))
                stop_proc(procs["server"])
                continue
            try:
                la = json.loads(line).get("listen")
                if la:
                    ctx["server_addr"] = la
            except (ValueError, AttributeError):
                pass
            break
        # Fake resolvers in front of it.
        fr = [opts.fakeres]
        for spec in setup["resolvers"]:
            fr += ["-r", spec]
        fr += ["--seed", str(rnd), "--upstream", ctx["server_addr"]]
        rec["fakeres_cmd"] = fr
        procs["fakeres"] = spawn(fr, os.path.join(wd, "fakeres.out"),
                                 os.path.join(wd, "fakeres.err"), wd)
        line = wait_for(os.path.join(wd, "fakeres.out"), procs["fakeres"],
                        "fakeres")
        resolvers = json.loads(line)["resolvers"]
        addrs = [r["udp"] for r in resolvers]
        rec["resolvers"] = resolvers
        with open(os.path.join(wd, "resolvers.txt"), "w") as f:
            f.write("\n".join(addrs) + "\n")
        ip, _, port = addrs[0].rpartition(":")
        ctx.update({"resolver_first": addrs[0], "resolver_first_ip": ip,
                    "resolver_first_port": port,
                    "resolvers_csv": ",".join(addrs),
                    "resolvers_space": " ".join(addrs),
                    "resolvers_file": os.path.join(wd, "resolvers.txt")})
        flag = cd.get("resolver_flag", "--resolver")
        ctx["resolvers_all_args"] = [x for a in addrs for x in (flag, a)]
        # Relay (pool, dnsdist).
        rel = cd.get("relay_def")
        if rel:
            rctx = dict(ctx)
            rflag = rel.get("resolver_flag", "--resolver")
            rctx["resolvers_all_args"] = [x for a in addrs
                                          for x in (rflag, a)]
            pat = rel.get("ready_regex")
            addr_spec = rel.get("addr", "first_line")
            for attempt in range(3):
                rctx["relay_port"] = free_port(taken)
                write_files(rel.get("files"), rctx, resolvers, wd)
                argv = subst_argv(rel["cmd"], rctx)
                rec["relay_cmd"] = argv
                procs["relay"] = spawn(argv, os.path.join(wd, "relay.out"),
                                       os.path.join(wd, "relay.err"), wd)
                try:
                    line = wait_for(os.path.join(wd, "relay.out"),
                                    procs["relay"], "relay " + cd["relay"],
                                    pattern=subst_str(pat, rctx) if pat
                                    else None)
                    break
                except RuntimeError as e:
                    if procs["relay"].poll() is None or attempt == 2:
                        raise RuntimeError("%s: %s" % (
                            e, tail(os.path.join(wd, "relay.err"))))
                    stop_proc(procs["relay"])
            if addr_spec == "first_line":
                addr = line
                if line.startswith("{"):
                    addr = json.loads(line).get("listen", "")
                addr = addr.split()[0] if addr.split() else ""
                for pre in ("udp://", "tcp://"):
                    if addr.startswith(pre):
                        addr = addr[len(pre):]
            else:
                addr = subst_str(addr_spec, rctx)
            ctx["relay_addr"] = addr
            ctx["relay_port"] = addr.rpartition(":")[2]
            rec["relay_addr"] = addr
        # Client (and its generated files, e.g. a resolver list).
        ctx["mode_args"] = cd.get("mode_args", [])
        write_files(cd.get("files"), ctx, resolvers, wd)
        argv = subst_argv(cd["client"], ctx)
        rec["client_cmd"] = argv
        cout = os.path.join(wd, "client.out")
        cerr = os.path.join(wd, "client.err")
        timeout = opts.timeout_for(setup, cd)
        # CPU of the cell while the client runs: the other processes read
        # from /proc per process group before and after, the client (the
        # only child reaped meanwhile) from the runner's children usage.
        groups = {name: p.pid for name, p in procs.items()}
        cpu0 = {name: group_cpu(g) for name, g in groups.items()}
        ch0 = children_cpu()
        tc = time.monotonic()
        wall0 = time.time()
        procs["client"] = spawn(argv, cout, cerr, wd)
        # A relay's stats file is sampled every second meanwhile: its
        # caps and answers over time (timeline.py).
        sampler = timeline.Sampler(subst_str(rel["stats_json"],
                                             {"workdir": wd})) \
            if rel and rel.get("stats_json") else None
        rc = None
        while True:
            left = tc + timeout - time.monotonic()
            try:
                rc = procs["client"].wait(
                    timeout=max(0.01, min(left, 1.0)) if sampler else timeout)
                break
            except subprocess.TimeoutExpired:
                if not sampler or left <= 1.0:
                    stop_proc(procs["client"], grace=2.0, sig=signal.SIGINT)
                    rc = None
                    break
                sampler.poll(wall0)
        if sampler and sampler.result():
            rec["timeline"] = sampler.result()
        cpu = {"client": round(children_cpu() - ch0, 3)}
        for name, g in groups.items():
            now = group_cpu(g)
            cpu[name] = round(sum(v - cpu0[name].get(pid, 0.0)
                                  for pid, v in now.items()), 3)
        cpu["total"] = round(sum(cpu.values()), 3)
        rec["cpu_seconds"] = cpu
        rec["client_seconds_wall"] = round(time.monotonic() - tc, 3)
        rec["client_exit"] = rc
        got = [j for j in json_lines(cout) if "kbps_down" in j]
        if got:
            rec["client"] = got[-1]
            timeline.from_client(rec)
        if rc is None and not got:
            rec["error"] = "timeout after %.0f s" % timeout
        elif not got:
            rec["error"] = "client exit %s, no JSON: %s" % (rc, tail(cerr))
        else:
            c = got[-1]
            rec["kbps_down"] = float(c.get("kbps_down") or 0.0)
            rec["kbps_up"] = float(c["kbps_up"]) \
                if c.get("kbps_up") is not None else None
            moved = sum(float(c[k]) for k in ("bytes_down", "bytes_up")
                        if isinstance(c.get(k), (int, float)))
            if moved > 0:
                rec["cpu_s_per_mib"] = round(
                    rec["cpu_seconds"]["total"] / (moved / 1048576.0), 4)
            if rc not in (0, None) or c.get("complete") is False:
                rec["warning"] = "client exit %s%s" % (
                    rc, ", incomplete" if c.get("complete") is False else "")
            if limited and c.get("complete") is False and \
                    not cd.get("partial_ok"):
                rec["error"] = "transfer incomplete (exit %s)" % rc
            else:
                rec["ok"] = True
                if limited and c.get("complete") is False:
                    # A client that gave up at its time limit: its figure
                    # is the rate of what arrived (marked in the table).
                    rec["partial"] = True
    except (RuntimeError, TemplateError, OSError, ValueError, KeyError) as e:
        rec["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        # Stop in order: client, relay, resolvers, server; keep their counts.
        for name in ("client", "relay", "fakeres", "server"):
            p = procs.get(name)
            if p is not None:
                rc = stop_proc(p)
                rec.setdefault("exits", {})[name] = rc
        rec["elapsed"] = round(time.monotonic() - t0, 3)
        rcvbuf1 = udp_rcvbuf_errors()
        if rcvbuf0 is not None and rcvbuf1 is not None:
            # Host-wide: any UDP socket of the round (client, relay,
            # resolvers, server) that overflowed, and nothing else's
            # while the machine is otherwise quiet.
            rec["udp_rcvbuf_errors"] = rcvbuf1 - rcvbuf0
        collect(rec, wd, cd)
        check_carried(rec, cd)
        if opts.keep_logs:
            rec["workdir"] = wd
        else:
            shutil.rmtree(wd, ignore_errors=True)
    return rec


def check_carried(rec, cd):
    """Fails a round whose client got more bytes than the resolvers'
    answers could carry (answered x MAX_ANSWER_BYTES): its bytes came
    around the tunnel, not through it. A column whose bytes do not ride
    DNS (the runner's own plumbing test) says "through_dns": false."""
    if cd.get("through_dns") is False:
        return
    c = rec.get("client") or {}
    got = c.get("bytes_down")
    res = rec.get("fakeres")
    if not rec.get("ok") or not isinstance(got, (int, float)) or not res:
        return
    answered = sum(r.get("answered", 0) for r in res)
    if got > answered * MAX_ANSWER_BYTES:
        rec["ok"] = False
        rec["error"] = ("%d bytes down from %d answers: more than they can "
                        "carry (%d bytes each); the transfer went around "
                        "the tunnel" % (got, answered, MAX_ANSWER_BYTES))


def take_pool_stats(rec, st):
    """Copy a pool's stats (respool --stats-json, or a tunnel client's
    pool_stats) into the round record, per resolver under fakeres's names."""
    if not isinstance(st, dict):
        return
    rec["relay_stats"] = st
    pool = st.get("pool", {})
    names = {r["udp"]: r["name"] for r in rec.get("resolvers", [])}
    per = {}
    for r in st.get("resolvers") or []:
        if isinstance(r, dict):
            n = names.get(r.get("name") or r.get("address"), r.get("name"))
            per[str(n)] = {k: v for k, v in r.items()
                           if isinstance(v, (int, float, str))}
    if per:
        rec["relay_resolvers"] = per
    for k in ("copies", "hedges", "resends", "spills", "retries", "failed",
              "waits",
              "copies_data", "copies_repeat", "repeats_dropped",
              "extras_skipped", "late"):
        if k in pool:
            rec[k] = pool[k]


def collect(rec, wd, cd):
    counts = [j for j in json_lines(os.path.join(wd, "fakeres.out"))
              if j.get("resolvers") and "queries" in j["resolvers"][0]]
    if counts:
        res = counts[-1]["resolvers"]
        secs = None
        c = rec.get("client") or {}
        if c.get("seconds"):
            secs = float(c["seconds"])
        elif rec.get("client_seconds_wall"):
            secs = rec["client_seconds_wall"]
        total = sum(r.get("queries", 0) for r in res) or 0
        for r in res:
            r["share"] = (r.get("queries", 0) / total) if total else None
            r["qps"] = (r.get("queries", 0) / secs) if secs else None
        rec["fakeres"] = res
    srv = [j for j in json_lines(os.path.join(wd, "server.out"))
           if "listen" not in j]
    if srv:
        rec["server"] = srv[-1]
    rel = cd.get("relay_def")
    if rel and rel.get("stats_json"):
        path = subst_str(rel["stats_json"], {"workdir": wd})
        try:
            take_pool_stats(rec, load_json(path))
        except (OSError, ValueError):
            pass
    elif isinstance((rec.get("client") or {}).get("pool_stats"), dict):
        # A client that embeds the pool reports its stats in its own JSON.
        take_pool_stats(rec, rec["client"]["pool_stats"])
    for name in ("client", "relay", "server", "fakeres"):
        t = tail(os.path.join(wd, name + ".err"), 2)
        if t and (not rec.get("ok") or name == "relay"):
            rec.setdefault("stderr_tail", {})[name] = t


# ---------------------------------------------------------------------------
# Aggregation, table, checks, plots


def summarize(rounds):
    ok = [r for r in rounds if r.get("ok")]
    s = {"rounds_ok": len(ok), "rounds": len(rounds)}
    partial = [r for r in ok if r.get("partial")]
    if partial:
        s["partial"] = len(partial)
        s["partial_bytes"] = [r.get("client", {}).get("bytes_down")
                              for r in partial]
    if ok:
        s["kbps_down"] = statistics.median(r["kbps_down"] for r in ok)
        up = [r["kbps_up"] for r in ok if r.get("kbps_up") is not None]
        if up:
            s["kbps_up"] = statistics.median(up)
        # Per-resolver shares and rates: median over the good rounds.
        names = []
        for r in ok:
            for x in r.get("fakeres", []):
                if x["name"] not in names:
                    names.append(x["name"])
        per = {}
        for n in names:
            vals = {}
            for key in ("share", "qps", "queries", "refused", "dropped",
                        "lost", "dead"):
                v = [x.get(key) for r in ok for x in r.get("fakeres", [])
                     if x["name"] == n and x.get(key) is not None]
                if v:
                    vals[key] = statistics.median(v)
            per[n] = vals
        s["resolvers"] = per
        eff = [r["cpu_s_per_mib"] for r in ok if "cpu_s_per_mib" in r]
        if eff:
            s["cpu_s_per_mib"] = statistics.median(eff)
            s["cpu_seconds"] = {
                k: statistics.median(r["cpu_seconds"][k] for r in ok
                                     if k in r.get("cpu_seconds", {}))
                for k in ok[0].get("cpu_seconds", {})}
        for k in ("copies", "hedges", "copies_data", "copies_repeat"):
            v = [r[k] for r in ok if k in r]
            if v:
                s[k] = statistics.median(v)
    else:
        errs = [r.get("error", "?") for r in rounds]
        s["error"] = errs[-1] if errs else "not run"
    return s


def fmt_kbps(v):
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def cell_text(summary, limit):
    if summary is None:
        return "-"
    if "na" in summary:
        return "n/a"
    if "kbps_down" not in summary:
        return "fail"
    t = fmt_kbps(summary["kbps_down"])
    if limit:
        t += " (%.0f %%)" % (100.0 * summary["kbps_down"] / limit)
    if summary.get("partial"):
        t += "*"
    if summary["rounds_ok"] < summary["rounds"]:
        t += " [%d/%d]" % (summary["rounds_ok"], summary["rounds"])
    return t


def md_grid(setups, heads, cell):
    """Markdown table lines: a row per setup, a column per head, each
    cell cell(setup, head) as text; a blank line after."""
    out = ["| setup | " + " | ".join(h["title"] for h in heads) + " |",
           "|---|" + "---|" * len(heads)]
    for s in setups:
        out.append("| %s | %s |" % (
            s["name"], " | ".join(cell(s, h) for h in heads)))
    out.append("")
    return out


def ratio_text(a, b):
    return "%.2fx" % (a / b) if a is not None and b else "-"


def make_table(res):
    cols = res["columns"]
    out = []
    out.append("# respool scenario table\n")
    out.append("Median download kbps of %d round(s)%s; %s. Rate-limited "
               "cells also as a share of the physical limit (answered q/s "
               "x payload bytes x 8). `n/a`/`fail`: see notes below. "
               "[k/n]: only k of n rounds succeeded.\n" % (
                   res["rounds"], " (QUICK)" if res["quick"] else "",
                   res["transfer_note"]))
    out.append("| setup | " + " | ".join(c["title"] for c in cols) + " |")
    out.append("|---|" + "---|" * len(cols))
    for s in res["setups"]:
        row = []
        for c in cols:
            cell = res["cells"].get(s["name"], {}).get(c["name"])
            row.append(cell_text(cell and cell["summary"],
                                 cell and cell.get("limit_kbps")))
        out.append("| %s | %s |" % (s["name"], " | ".join(row)))
    out.append("")
    # Physical limits.
    lim = [s for s in res["setups"] if s.get("rate_limited")]
    if lim:
        out.append("Physical limits (kbps): " + "; ".join(
            "%s %s" % (s["name"], ", ".join(
                "%s %.0f" % (k, v) for k, v in s.get("limits", {}).items()))
            for s in lim) + ".\n")
    # Ratios (columns.json "ratios").
    rat = [r for r in res.get("ratios", [])
           if r["num"] in {c["name"] for c in cols} and
           r["den"] in {c["name"] for c in cols}]
    if rat:
        out.append("## Ratios\n")
        out.append("Median kbps of one column over another, per setup.\n")
        out += md_grid(res["setups"], rat, lambda s, r: ratio_text(
            median_kbps(res, s["name"], r["num"])[0],
            median_kbps(res, s["name"], r["den"])[0]))
    # Efficiency: CPU seconds of all the cell's processes per MiB moved.
    if any("cpu_s_per_mib" in (cell.get("summary") or {})
           for row in res["cells"].values() for cell in row.values()):
        out.append("## CPU seconds per MiB\n")
        out.append("Median CPU seconds (user + system) that all processes "
                   "of a cell (tunnel client and server, fake resolvers, "
                   "relay) used while the client ran, per MiB it moved "
                   "(down + up). Lower is better; on the CPU-bound "
                   "unlimited setups this compares cells by efficiency as "
                   "well as by kbps.\n")
        def cpu_text(s, c):
            cell = res["cells"].get(s["name"], {}).get(c["name"])
            v = cell and cell["summary"].get("cpu_s_per_mib")
            return fmt_cpu(v) if v is not None else "-"
        out += md_grid(res["setups"], cols, cpu_text)
        if rat:
            out.append("Efficiency ratios: MiB per CPU second of one column "
                       "over another (the other's CPU s per MiB over this "
                       "one's); >= 1.00x: no less efficient.\n")
            out += md_grid(res["setups"], rat, lambda s, r: ratio_text(
                median_cpu(res, s["name"], r["den"]),
                median_cpu(res, s["name"], r["num"])))
    # Query shares.
    out.append("## Queries per resolver\n")
    out.append("Median share of the queries the fake resolvers received "
               "(q/s in brackets; R = refused, D = dropped past the limit, "
               "L = lost).\n")
    out.append("| setup | " + " | ".join(c["title"] for c in cols) + " |")
    out.append("|---|" + "---|" * len(cols))
    for s in res["setups"]:
        row = []
        for c in cols:
            cell = res["cells"].get(s["name"], {}).get(c["name"])
            sm = cell and cell["summary"]
            if not sm or not sm.get("resolvers"):
                row.append("-")
                continue
            parts = []
            for n, v in sm["resolvers"].items():
                p = "%s %.0f%%" % (n, 100 * (v.get("share") or 0))
                if v.get("qps") is not None:
                    p += " (%.0f)" % v["qps"]
                extra = "".join("%s%d" % (tag, v[k]) for k, tag in
                                (("refused", " R"), ("dropped", " D"),
                                 ("lost", " L")) if v.get(k))
                parts.append(p + extra)
            if sm.get("copies") is not None or sm.get("hedges") is not None:
                p = "copies %d hedges %d" % (sm.get("copies") or 0,
                                             sm.get("hedges") or 0)
                judged = (sm.get("copies_data") or 0) + \
                    (sm.get("copies_repeat") or 0)
                if judged:
                    p += " (%.0f %% of judged copies carried data)" % (
                        100.0 * (sm.get("copies_data") or 0) / judged)
                parts.append(p)
            row.append("<br>".join(parts))
        out.append("| %s | %s |" % (s["name"], " | ".join(row)))
    out.append("")
    notes = []
    for s in res["setups"]:
        for c in cols:
            cell = res["cells"].get(s["name"], {}).get(c["name"])
            if not cell:
                continue
            sm = cell["summary"]
            if "na" in sm:
                notes.append("%s: n/a (%s)" % (c["name"], sm["na"]))
            elif "kbps_down" not in sm:
                notes.append("%s / %s: fail (%s)" % (
                    s["name"], c["name"], sm.get("error", "?")))
            elif sm.get("partial"):
                notes.append("%s / %s: * %d of %d rounds did not finish "
                             "the transfer within the client's time limit "
                             "(bytes that arrived: %s); the figure counts "
                             "them at the rate of what arrived" % (
                                 s["name"], c["name"], sm["partial"],
                                 sm["rounds_ok"], ", ".join(
                                     str(b) for b in sm["partial_bytes"])))
    if notes:
        out.append("## Notes\n")
        seen = set()
        for n in notes:
            if n not in seen:
                seen.add(n)
                out.append("- " + n)
        out.append("")
    for key, title in (("checks", "Checks (%s)" % (
            "they decide QUICK runs" if res.get("quick")
            else "informative outside QUICK")),
            ("gates", "Gate")):
        if res.get(key):
            out.append("## %s\n" % title)
            for ch in res[key]:
                out.append("- %s: %s (%s)" % (ch["result"], ch["name"],
                                              ch["detail"]))
            out.append("")
    out.append("Command: `%s`" % res["command"])
    return "\n".join(out) + "\n"


def fmt_cpu(v):
    return "%.3f" % v if v < 1 else "%.2f" % v


def median_cpu(res, setup, col):
    cell = res["cells"].get(setup, {}).get(col)
    sm = cell and cell["summary"]
    return sm.get("cpu_s_per_mib") if sm and "kbps_down" in sm else None


def median_kbps(res, setup, col):
    cell = res["cells"].get(setup, {}).get(col)
    if not cell:
        return None, "%s/%s not in this run" % (setup, col)
    sm = cell["summary"]
    if "na" in sm:
        return None, "%s n/a" % col
    if "kbps_down" not in sm:
        return None, "%s/%s failed" % (setup, col)
    return sm["kbps_down"], None


def round_ratios(res, setup, num, den):
    """Round k of |num| over round k of |den| (the rounds are interleaved,
    so round k's cells ran side by side), for every round |den| completed;
    a round |num| failed counts 0."""
    def by_round(col):
        cell = res["cells"].get(setup, {}).get(col) or {}
        return {x["round"]: x for x in cell.get("rounds", [])
                if isinstance(x, dict) and "round" in x}
    a, b = by_round(num), by_round(den)
    out = []
    for k in sorted(b):
        db = b[k].get("kbps_down") if b[k].get("ok") else None
        if not db:
            continue
        na = a.get(k)
        out.append((na.get("kbps_down") or 0) / db
                   if na and na.get("ok") else 0.0)
    return out


def evaluate(res, checks):
    out = []
    for ch in checks:
        r = {"name": ch["name"], "type": ch["type"], "spec": ch}
        lo, hi = ch.get("min"), ch.get("max")

        def judge(vals):
            bad = [v for v in vals if (lo is not None and v < lo) or
                   (hi is not None and v > hi)]
            return "FAIL" if bad else "PASS"
        try:
            if ch["type"] == "share":
                cell = res["cells"].get(ch["setup"], {}).get(ch["column"])
                sm = cell and cell["summary"]
                if not sm or "na" in sm or not sm.get("resolvers"):
                    raise LookupError("%s/%s %s" % (
                        ch["setup"], ch["column"],
                        "not in this run" if not cell else
                        "n/a" if "na" in sm else "failed"))
                vals = []
                for n in ch["resolvers"]:
                    v = sm["resolvers"].get(n, {}).get("share")
                    if v is None:
                        raise LookupError("no share for %s" % n)
                    vals.append(v)
                r["values"] = vals
                r["result"] = judge(vals)
                r["detail"] = "%s %s: %s" % (ch["setup"], ch["column"], ", ".join(
                    "%s %.1f %%" % (n, 100 * v)
                    for n, v in zip(ch["resolvers"], vals)))
            elif ch["type"] == "ratio":
                a, ea = median_kbps(res, ch["setup"], ch["num"])
                b, eb = median_kbps(res, ch["setup"], ch["den"])
                if a is None or b is None:
                    raise LookupError(ea or eb)
                if b <= 0:
                    raise LookupError("%s is 0 kbps" % ch["den"])
                v = a / b
                r["values"] = [v]
                r["detail"] = "%s: %s %s / %s %s = %.2fx" % (
                    ch["setup"], ch["num"], fmt_kbps(a), ch["den"],
                    fmt_kbps(b), v)
                if ch.get("per_round"):
                    rv = round_ratios(res, ch["setup"], ch["num"], ch["den"])
                    r["values"] = [v] + rv
                    r["detail"] += ", rounds side by side: %s" % ", ".join(
                        "%.2fx" % x for x in rv)
                r["result"] = judge(r["values"])
            elif ch["type"] == "limit_share":
                a, ea = median_kbps(res, ch["setup"], ch["column"])
                cell = res["cells"].get(ch["setup"], {}).get(ch["column"])
                lim = cell and cell.get("limit_kbps")
                if a is None or not lim:
                    raise LookupError(ea or "no physical limit")
                v = a / lim
                r["values"] = [v]
                r["detail"] = "%s %s: %s of %.0f kbps = %.0f %%" % (
                    ch["setup"], ch["column"], fmt_kbps(a), lim, 100 * v)
                if ch.get("per_round"):
                    rv = [(x.get("kbps_down") or 0) / lim if x.get("ok")
                          else 0.0 for x in cell.get("rounds", [])
                          if isinstance(x, dict)]
                    r["values"] = [v] + rv
                    r["detail"] += ", rounds: %s" % ", ".join(
                        "%.1f %%" % (100 * x) for x in rv)
                r["result"] = judge(r["values"])
            else:
                raise LookupError("unknown check type %s" % ch["type"])
            bounds = []
            if lo is not None:
                bounds.append(">= %g" % lo)
            if hi is not None:
                bounds.append("<= %g" % hi)
            r["detail"] += "; wants " + " and ".join(bounds)
        except LookupError as e:
            r["result"] = "SKIP"
            r["detail"] = str(e).strip("'\"")
        out.append(r)
    return out


GNUPLOT_BARS = """set terminal pngcairo size {w},600 noenhanced font ",10"
set output "{out}"
set title "{title}"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [{ylo}:{yhi}]
set ylabel "download kbps (median, log scale)"
set grid ytics
set key outside right top vertical
set xtics rotate by -25 scale 0
set datafile missing "?"
set datafile separator "\\t"
plot {plots}
"""

GNUPLOT_SHARES = """set terminal pngcairo size 900,480 noenhanced font ",10"
set output "{out}"
set title "{title}"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7
set yrange [0:100]
set ylabel "share of the queries (%)"
set grid ytics
set key outside right top vertical
set xtics rotate by -25 scale 0
set datafile missing "?"
set datafile separator "\\t"
plot {plots}
"""


def gnuplot_fallback_terminal(script):
    return script.replace("pngcairo", "png")


def run_gnuplot(script, path, log):
    with open(path, "w") as f:
        f.write(script)
    for s in (script, gnuplot_fallback_terminal(script)):
        with open(path, "w") as f:
            f.write(s)
        p = subprocess.run(["gnuplot", path], capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=60)
        if p.returncode == 0:
            return True
        err = p.stderr.decode("utf-8", "replace").strip()
    log("gnuplot failed on %s: %s" % (os.path.basename(path), err[-300:]))
    return False


def make_plots(res, outdir, log):
    if shutil.which("gnuplot") is None:
        log("gnuplot not found: no plots")
        return []
    made = []
    cols = res["columns"]
    pdir = os.path.join(outdir, "plots")
    os.makedirs(pdir, exist_ok=True)
    # Grouped bars: one group per setup, one bar per column.
    dat = os.path.join(pdir, "throughput.dat")
    any_value = False
    with open(dat, "w") as f:
        f.write("setup\t" + "\t".join(c["title"] for c in cols) + "\n")
        for s in res["setups"]:
            vals = []
            for c in cols:
                v, _ = median_kbps(res, s["name"], c["name"])
                vals.append("%.3f" % v if v and v > 0 else "?")
                any_value = any_value or bool(v and v > 0)
            f.write(s["name"] + "\t" + "\t".join(vals) + "\n")
    if not any_value:
        log("no figures to plot")
        return made
    plots = ", ".join(
        '"%s" using %d:xtic(1) title columnheader(%d)' % (
            os.path.basename(dat), i + 2, i + 2) for i in range(len(cols)))
    png = os.path.join(pdir, "throughput.png")
    ylo, yhi = log_range([median_kbps(res, s["name"], c["name"])[0]
                          for s in res["setups"] for c in cols])
    sc = GNUPLOT_BARS.format(w=max(900, 160 * len(res["setups"])),
                             out="throughput.png", ylo=ylo, yhi=yhi,
                             title="download kbps per setup and column "
                                   "(%s)" % res["started"], plots=plots)
    cwd = os.getcwd()
    os.chdir(pdir)
    try:
        if run_gnuplot(sc, os.path.join(pdir, "throughput.gp"), log) and \
                os.path.exists(png):
            made.append(os.path.relpath(png, outdir))
        # Rate-limited setups: each cell as % of the physical limit.
        lim_setups = [s for s in res["setups"] if s.get("rate_limited")]
        rows = []
        for s in lim_setups:
            vals = []
            for c in cols:
                v, _ = median_kbps(res, s["name"], c["name"])
                lim = res["cells"].get(s["name"], {}).get(
                    c["name"], {}).get("limit_kbps")
                vals.append("%.2f" % (100.0 * v / lim) if v and lim else "?")
            rows.append((s["name"], vals))
        if any(v != "?" for _, vals in rows for v in vals):
            with open("limit-share.dat", "w") as f:
                f.write("setup\t" + "\t".join(c["title"] for c in cols) +
                        "\n")
                for name, vals in rows:
                    f.write(name + "\t" + "\t".join(vals) + "\n")
            plots = ", ".join(
                '"limit-share.dat" using %d:xtic(1) title columnheader(%d)'
                % (i + 2, i + 2) for i in range(len(cols)))
            sc = GNUPLOT_BARS.format(
                w=900, out="limit-share.png", plots=plots, ylo=1, yhi=100,
                title="rate-limited setups: download as % of the physical "
                      "limit").replace(
                "set logscale y\nset yrange [1:100]\n"
                "set ylabel \"download kbps (median, log scale)\"",
                "set yrange [0:110]\nset ylabel \"% of the physical limit"
                "\"\nset arrow from graph 0, first 75 to graph 1, first 75 "
                "nohead dt 2\nset label \"75 % target\" at graph 0.01, "
                "first 78")
            if run_gnuplot(sc, "limit-share.gp", log) and \
                    os.path.exists("limit-share.png"):
                made.append(os.path.join("plots", "limit-share.png"))
        # Per-resolver query shares: one PNG per setup, a stacked bar per
        # column.
        for s in res["setups"]:
            if len(s.get("resolvers", [])) < 2:
                continue  # one resolver: every column is 100 % r1
            profiles = resolver_profiles(s)
            names = []
            rows = []
            for c in cols:
                cell = res["cells"].get(s["name"], {}).get(c["name"])
                sm = cell and cell["summary"]
                per = (sm or {}).get("resolvers") or {}
                for n in per:
                    if n not in names:
                        names.append(n)
                rows.append((c["title"], per))
            if not any(v.get("share") is not None
                       for _, per in rows for v in per.values()):
                continue
            base = "shares-%s" % s["name"]
            with open(base + ".dat", "w") as f:
                f.write("column\t" + "\t".join(
                    profiles.get(n, n) for n in names) + "\n")
                for title, per in rows:
                    vals = []
                    for n in names:
                        v = per.get(n, {}).get("share")
                        vals.append("%.2f" % (100 * v) if v is not None
                                    else "?")
                    f.write(title + "\t" + "\t".join(vals) + "\n")
            plots = ", ".join(
                '"%s.dat" using %d:xtic(1) title columnheader(%d)' % (
                    base, i + 2, i + 2) for i in range(len(names)))
            sc = GNUPLOT_SHARES.format(
                out=base + ".png", plots=plots,
                title="%s: queries per resolver by column" % s["name"])
            if run_gnuplot(sc, base + ".gp", log) and \
                    os.path.exists(base + ".png"):
                made.append(os.path.join("plots", base + ".png"))
        made.extend(plot_ratios(res, log))
        made.extend(timeline.plot_caps(res, run_gnuplot, resolver_profiles,
                                       log))
    finally:
        os.chdir(cwd)
    return made


def log_range(values):
    """The decades a log axis needs for |values| (>0 ones): from the one
    below the smallest to the one above the largest."""
    vals = [v for v in values if v and v > 0]
    if not vals:
        return 1, 10
    lo = 10 ** math.floor(math.log10(min(vals)))
    hi = 10 ** math.ceil(math.log10(max(vals)))
    return lo, hi if hi > lo else lo * 10


def resolver_profiles(setup):
    """Legend names of a setup's resolvers: "r2 (latency=60ms)", from the
    fakeres specs (name and addr left out; "unlimited" when nothing
    else)."""
    out = {}
    for spec in setup.get("resolvers", []):
        parts = [p for p in spec.split(",") if p]
        name = next((p[5:] for p in parts if p.startswith("name=")), None)
        rest = [p for p in parts
                if not p.startswith("name=") and not p.startswith("addr=")]
        if name:
            out[name] = "%s (%s)" % (name, ", ".join(rest) or "unlimited")
    return out


# The ratios plot is the bars plot on a log 2 axis with a line at 1.
GNUPLOT_RATIOS = GNUPLOT_BARS.replace(
    'set logscale y\nset yrange [{ylo}:{yhi}]\n'
    'set ylabel "download kbps (median, log scale)"',
    'set logscale y 2\nset yrange [{ylo}:{yhi}]\n'
    'set ylabel "ratio of median kbps (log 2 scale; 1 = level)"').replace(
    'set datafile missing',
    'set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2\n'
    'set label "level" at graph 0.01, first 1.08\nset datafile missing')
assert GNUPLOT_RATIOS != GNUPLOT_BARS and "log 2" in GNUPLOT_RATIOS


def plot_ratios(res, log):
    """ratios.png: every ratio of the table (the pool against the first
    resolver, its own balancer, dnsdist, the real tunnels) per setup, on
    one log 2 axis with a line at 1."""
    ratios = [r for r in res.get("ratios") or []
              if any(median_kbps(res, s["name"], r["num"])[0] and
                     median_kbps(res, s["name"], r["den"])[0]
                     for s in res["setups"])]
    rows, vals_all = [], []
    for s in res["setups"]:
        vals = []
        for r in ratios:
            a = median_kbps(res, s["name"], r["num"])[0]
            b = median_kbps(res, s["name"], r["den"])[0]
            v = a / b if a and b else None
            vals.append("%.4f" % v if v else "?")
            if v:
                vals_all.append(v)
        rows.append((s["name"], vals))
    if not vals_all:
        return []
    with open("ratios.dat", "w") as f:
        f.write("setup\t" + "\t".join(r["title"] for r in ratios) + "\n")
        for name, vals in rows:
            f.write(name + "\t" + "\t".join(vals) + "\n")
    lo = 2 ** math.floor(math.log2(min(vals_all + [1.0])))
    hi = 2 ** math.ceil(math.log2(max(vals_all + [1.0])) + 0.01)
    plots = ", ".join(
        '"ratios.dat" using %d:xtic(1) title columnheader(%d)' % (i + 2, i + 2)
        for i in range(len(ratios)))
    sc = GNUPLOT_RATIOS.format(w=max(900, 160 * len(res["setups"])),
                               out="ratios.png", ylo=lo, yhi=hi, plots=plots,
                               title="ratios per setup: the pool against "
                                     "the first resolver, own balancers, "
                                     "dnsdist and the real tunnels alone")
    if run_gnuplot(sc, "ratios.gp", log) and os.path.exists("ratios.png"):
        return [os.path.join("plots", "ratios.png")]
    return []


# ---------------------------------------------------------------------------
# Main


class Opts:
    pass


def find_build(arg):
    if arg:
        return os.path.abspath(arg)
    if os.environ.get("RP_BUILD_DIR"):
        return os.path.abspath(os.environ["RP_BUILD_DIR"])
    return os.path.join(ROOT, "build")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="run-table.sh",
        description="Runs the scenario table (DESIGN.md section 6): every "
        "setup x column, ROUNDS rounds interleaved, medians, table.md, "
        "results.json, plots. Env: QUICK=1 (one round, shorter transfers, "
        "the issue-7 PASS/FAIL checks), ROUNDS=N.",
        epilog="Output: results/<UTC timestamp>/ and results/latest/ "
        "(or exactly --out DIR). Exit 1 when a check or gate FAILs, 2 on a "
        "usage error, 130 when interrupted.")
    ap.add_argument("--setup", action="append", default=[],
                    help="run only this setup (repeatable, or a,b)")
    ap.add_argument("--column", action="append", default=[],
                    help="run only this column (repeatable, or a,b)")
    ap.add_argument("--gate", action="store_true",
                    help="QUICK run, then compare with gates.json")
    ap.add_argument("--quick", action="store_true",
                    help="same as QUICK=1")
    ap.add_argument("--rounds", type=int, default=None,
                    help="rounds per cell (env ROUNDS; default 3, QUICK 1)")
    ap.add_argument("--out", help="write the results exactly into DIR "
                    "(default results/<timestamp>/ + results/latest/)")
    ap.add_argument("--build", help="build directory (default "
                    "$RP_BUILD_DIR, else $ROOT/build)")
    ap.add_argument("--fakeres", help="fakeres binary (default "
                    "BUILD/fake-resolvers/fakeres)")
    ap.add_argument("--setups", default=os.path.join(HERE, "setups.json"))
    ap.add_argument("--columns", default=os.path.join(HERE, "columns.json"))
    ap.add_argument("--gates", default=os.path.join(HERE, "gates.json"))
    ap.add_argument("--timeout", type=float, default=None,
                    help="client time limit per round in s (default 240 "
                    "for byte transfers, seconds+30 for timed ones; QUICK "
                    "60)")
    ap.add_argument("--keep-logs", action="store_true",
                    help="keep each round's work dir (logs) under the tmp "
                    "dir and record it in results.json")
    ap.add_argument("--var", action="append", default=[],
                    metavar="KEY=VALUE", help="set placeholder {KEY} "
                    "(e.g. the path of an external tunnel binary)")
    ap.add_argument("--real-tunnels", metavar="DIR",
                    help="folder of the real dnstt and MasterDnsVPN "
                    "(bin/, dnstt/, masterdnsvpn/) for the real-* columns "
                    "(default $RP_REAL_TUNNELS, else %s when it exists; "
                    "without them those columns are n/a)" %
                    DEFAULT_REAL_TUNNELS)
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--list", action="store_true",
                    help="list setups and columns (with n/a reasons), exit")
    ap.add_argument("--sim-results", metavar="FILE",
                    help="take the rounds from FILE (respool-sim table "
                    "--json: the table in virtual time) instead of running "
                    "them; the setups and columns are those of the files, "
                    "narrowed by --setup/--column as usual")
    ap.add_argument("--replot", metavar="DIR",
                    help="rebuild DIR's table.md and plots from its "
                    "results.json (no run), the checks evaluated again "
                    "from --gates, then exit")
    a = ap.parse_args(argv)

    if a.replot:
        outdir = os.path.abspath(a.replot)
        with open(os.path.join(outdir, "results.json")) as f:
            res = json.load(f)
        def replot_log(msg):
            print("[table] " + msg, file=sys.stderr)
        if "checks" in res and os.path.exists(a.gates):
            res["checks"] = evaluate(res, load_json(a.gates).get("checks", []))
        res["plots"] = make_plots(res, outdir, replot_log)
        with open(os.path.join(outdir, "table.md"), "w") as f:
            f.write(make_table(res))
        with open(os.path.join(outdir, "results.json"), "w") as f:
            json.dump(res, f, indent=1, sort_keys=False)
            f.write("\n")
        replot_log("replotted %s: %d plots" % (outdir, len(res["plots"])))
        return 0

    quick = a.quick or a.gate or os.environ.get("QUICK", "") not in ("", "0")
    rounds = a.rounds
    if rounds is None and os.environ.get("ROUNDS"):
        rounds = int(os.environ["ROUNDS"])
    if rounds is None:
        rounds = 1 if quick else 3
    if rounds < 1:
        ap.error("ROUNDS must be >= 1")

    def split(vals):
        return [x for v in vals for x in v.split(",") if x]

    try:
        setups_data = load_json(a.setups)
        cols_data = load_json(a.columns)
        gates_data = load_json(a.gates) if os.path.exists(a.gates) else {}
    except (OSError, ValueError) as e:
        print("run-table: %s" % e, file=sys.stderr)
        return 2
    defaults = setups_data.get("defaults", {})
    setups = setups_data["setups"]
    want_s = split(a.setup)
    if want_s:
        unknown = set(want_s) - {s["name"] for s in setups}
        if unknown:
            ap.error("unknown setup(s): %s (have: %s)" % (
                ", ".join(sorted(unknown)),
                ", ".join(s["name"] for s in setups)))
        setups = [s for s in setups if s["name"] in want_s]
    cols = cols_data["columns"]
    want_c = split(a.column)
    if want_c:
        unknown = set(want_c) - {c["name"] for c in cols}
        if unknown:
            ap.error("unknown column(s): %s (have: %s)" % (
                ", ".join(sorted(unknown)),
                ", ".join(c["name"] for c in cols)))
        cols = [c for c in cols if c["name"] in want_c]
    elif quick:
        # Columns marked "quick": false (the real tunnels: a minute a
        # limited cell) run in QUICK mode only when named with --column.
        cols = [c for c in cols
                if cols_data["tunnels"].get(c.get("tunnel"), {}).get(
                    "quick", True) and c.get("quick", True)]

    sim_rounds = None
    if a.sim_results:
        try:
            sim_data = load_json(a.sim_results)
        except (OSError, ValueError) as e:
            print("run-table: %s" % e, file=sys.stderr)
            return 2
        sim_rounds = {(r["setup"], r["column"], r["round"]): r
                      for r in sim_data.get("results", [])}
        rounds = max([k[2] for k in sim_rounds] or [1])
        quick = bool(sim_data.get("quick"))
    build = find_build(a.build)
    ctx_static = {"build": build, "root": ROOT, "scenarios": HERE,
                  "domain": cols_data.get("domain", "t.example")}
    ctx_static.update(cols_data.get("vars", {}))
    real = a.real_tunnels or os.environ.get("RP_REAL_TUNNELS") or (
        DEFAULT_REAL_TUNNELS if os.path.isdir(DEFAULT_REAL_TUNNELS) else "")
    if real:
        if not os.path.isdir(real):
            ap.error("--real-tunnels: no such folder: %s" % real)
        ctx_static["real_tunnels"] = os.path.abspath(real)
    for kv in a.var:
        k, eq, v = kv.partition("=")
        if not eq or not PH.fullmatch("{%s}" % k):
            ap.error("--var wants KEY=VALUE, got %r" % kv)
        ctx_static[k] = v
    ctx_static = {k: (subst_str(v, ctx_static) if isinstance(v, str) else v)
                  for k, v in ctx_static.items()}

    opts = Opts()
    opts.fakeres = os.path.abspath(
        a.fakeres or os.path.join(build, "fake-resolvers", "fakeres"))
    opts.keep_logs = a.keep_logs
    opts.tmp = tempfile.mkdtemp(prefix="rp-table-")
    atexit.register(lambda: opts.keep_logs or
                    shutil.rmtree(opts.tmp, ignore_errors=True))
    bkey = "quick_bytes" if quick else "bytes"
    skey = "quick_seconds" if quick else "seconds"
    opts.bytes_for = lambda s: s.get(bkey, defaults.get(bkey, 131072))
    opts.seconds_for = lambda s: s.get(skey, defaults.get(skey, 5))
    opts.upload_for = lambda s: s.get("upload_bytes",
                                      defaults.get("upload_bytes", 0))

    def timeout_for(s, cd=None):
        if a.timeout:
            return a.timeout
        if s.get("rate_limited"):
            own = (cd or {}).get("timeout_limited")
            if own:
                return float(min(own, 60.0) if quick else own)
            return 60.0 if quick else 240.0
        return float(opts.seconds_for(s)) + (20.0 if quick else 30.0)
    opts.timeout_for = timeout_for

    cdefs = []
    for c in cols:
        try:
            cd = column_def(cols_data, c)
        except TemplateError as e:
            cd = dict(c)
            cd["na"] = str(e)
        cd.setdefault("title", cd["name"])
        if sim_rounds is not None:
            if not any(k[1] == cd["name"] for k in sim_rounds):
                cd["na"] = "not in %s" % a.sim_results
        elif "na" not in cd:
            if resolve_exe(opts.fakeres) is None:
                cd["na"] = "fakeres not built (%s)" % opts.fakeres
            else:
                why = check_available(cd, ctx_static)
                if why:
                    cd["na"] = why
        cdefs.append(cd)

    def log(msg):
        print("[table] " + msg, file=sys.stderr, flush=True)

    if a.list:
        for s in setups:
            print("setup  %-24s %s" % (s["name"], s.get("description", "")))
        for cd in cdefs:
            print("column %-24s %s%s" % (
                cd["name"], cd.get("mode", ""),
                ("  n/a (%s)" % cd["na"]) if "na" in cd else ""))
        return 0

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)

    started = datetime.datetime.now(datetime.timezone.utc)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    env = "".join("%s=%s " % (k, os.environ[k]) for k in ("QUICK", "ROUNDS")
                  if os.environ.get(k))
    command = env + " ".join(
        [os.environ.get("RP_TABLE_ARGV0", "scenarios/runner.py")] +
        (sys.argv[1:] if argv is None else list(argv)))
    res = {"command": command, "started": started.isoformat(timespec="seconds"),
           "quick": quick, "rounds": rounds, "build": build,
           "transfer_note": "%s through rate-limited setups, %s s otherwise" % (
               fmt_bytes(opts.bytes_for({})), opts.seconds_for({})),
           "setups": [], "columns": [], "cells": {},
           "ratios": cols_data.get("ratios", [])}
    for s in setups:
        sd = {k: v for k, v in s.items()}
        lims = {}
        for cd in cdefs:
            lim = physical_limit_kbps(s, cd)
            if lim:
                lims[cd.get("kind", cd["name"])] = lim
        if lims:
            sd["limits"] = lims
        res["setups"].append(sd)
    for cd in cdefs:
        res["columns"].append({k: cd[k] for k in
                               ("name", "title", "mode", "kind", "tunnel",
                                "relay", "na", "extra", "payload_bytes")
                               if k in cd})

    runnable = [cd for cd in cdefs if "na" not in cd]
    for cd in cdefs:
        if "na" in cd:
            log("column %s: n/a (%s)" % (cd["name"], cd["na"]))
    total = len(setups) * len(runnable) * rounds
    done = 0
    t_start = time.monotonic()
    interrupted = False
    log("%d setup(s) x %d column(s) x %d round(s) = %d runs%s" % (
        len(setups), len(runnable), rounds, total, " (QUICK)" if quick else ""))
    try:
        for s in setups:
            cells = res["cells"].setdefault(s["name"], {})
            for cd in cdefs:
                cells[cd["name"]] = {"rounds": [],
                                     "limit_kbps": physical_limit_kbps(s, cd)}
                if "na" in cd:
                    cells[cd["name"]]["summary"] = {"na": cd["na"]}
            for rnd in range(1, rounds + 1):
                for cd in runnable:
                    el = time.monotonic() - t_start
                    eta = (el / done * (total - done)) if done else None
                    log("%s / %s / round %d/%d  [%d/%d, %s elapsed%s]" % (
                        s["name"], cd["name"], rnd, rounds, done + 1, total,
                        hms(el), (", ETA " + hms(eta)) if eta is not None
                        else ""))
                    if sim_rounds is not None:
                        rec = sim_rounds.get(
                            (s["name"], cd["name"], rnd),
                            {"ok": False, "error": "not simulated"})
                        rec.setdefault("elapsed", 0.0)
                    else:
                        rec = run_round(s, cd, rnd, opts, ctx_static)
                    cells[cd["name"]]["rounds"].append(rec)
                    done += 1
                    if rec.get("ok"):
                        log("    %s kbps down, %s kbps up (%.1f s)%s" % (
                            fmt_kbps(rec["kbps_down"]),
                            fmt_kbps(rec["kbps_up"])
                            if rec.get("kbps_up") is not None else "?",
                            rec["elapsed"],
                            ("  " + rec["warning"]) if rec.get("warning")
                            else ""))
                    else:
                        log("    failed: %s" % rec.get("error"))
            for cd in runnable:
                cells[cd["name"]]["summary"] = summarize(
                    cells[cd["name"]]["rounds"])
    except (Interrupted, KeyboardInterrupt) as e:
        interrupted = True
        log("interrupted (%s): stopping every process, writing what ran"
            % (e or "Ctrl-C"))
        kill_all()
        for s in setups:
            for cd in runnable:
                cell = res["cells"].get(s["name"], {}).get(cd["name"])
                if cell is not None and "summary" not in cell:
                    cell["summary"] = summarize(cell["rounds"]) \
                        if cell["rounds"] else {"na": "interrupted"}
    finally:
        kill_all()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    res["interrupted"] = interrupted
    res["elapsed_seconds"] = round(time.monotonic() - t_start, 1)

    failed = False
    if not interrupted:
        # Printed after every run; they set the exit status in QUICK runs
        # (and --gate) only: a full run reports them for information.
        res["checks"] = evaluate(res, gates_data.get("checks", []))
        res["checks_decide_exit"] = quick and not a.gate
    if a.gate and not interrupted:
        res["gates"] = evaluate(res, gates_data.get("gates", []))

    # Output.
    if a.out:
        outdir = os.path.abspath(a.out)
        latest = None
    else:
        outdir = os.path.join(ROOT, "results", stamp)
        latest = os.path.join(ROOT, "results", "latest")
    os.makedirs(outdir, exist_ok=True)
    res["plots"] = [] if a.no_plots else make_plots(res, outdir, log)
    table = make_table(res)
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=False)
        f.write("\n")
    with open(os.path.join(outdir, "command.txt"), "w") as f:
        f.write(command + "\n")
    if latest:
        shutil.rmtree(latest, ignore_errors=True)
        shutil.copytree(outdir, latest)
    print(table.split("\n## Queries per resolver")[0].rstrip())
    for key in ("checks", "gates"):
        for ch in res.get(key, []):
            line = "%-4s %s: %s" % (ch["result"], ch["name"], ch["detail"])
            print(line)
            # Under --gate the gates (the checks with CI margins) decide;
            # a plain QUICK run is decided by the checks themselves.
            decides = key == "gates" if a.gate else quick
            if ch["result"] == "FAIL" and decides:
                failed = True
    log("results in %s%s (%s)" % (
        os.path.relpath(outdir, os.getcwd()),
        (" and " + os.path.relpath(latest, os.getcwd())) if latest else "",
        hms(res["elapsed_seconds"])))
    if interrupted:
        return 130
    return 1 if failed else 0


def fmt_bytes(n):
    n = int(n)
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return "%d %s" % (n // size, unit)
    return "%d bytes" % n


def hms(sec):
    sec = int(sec + 0.5)
    if sec >= 3600:
        return "%dh%02dm%02ds" % (sec // 3600, sec // 60 % 60, sec % 60)
    if sec >= 60:
        return "%dm%02ds" % (sec // 60, sec % 60)
    return "%ds" % sec


if __name__ == "__main__":
    sys.exit(main())
