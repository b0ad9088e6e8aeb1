"""One cell, one round: the tunnel server, fakeres in front of it, an
optional relay (the pool, dnsdist) and the tunnel client started in a
work dir of their own; the client's JSON line parsed, the CPU seconds of
every process, the fake resolvers' counts and the relay's statistics
collected into the round's record; everything stopped, whatever happens.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import timeline
from respool_bench.columns import load_json
from respool_bench.procs import (children_cpu, free_port, group_cpu,
                                 json_lines, spawn, stop_proc, tail,
                                 udp_rcvbuf_errors, wait_for)
from respool_bench.template import (TemplateError, subst_argv, subst_str,
                                    write_files)

# The largest DNS message (RFC 1035 over TCP): no answer carries more.
MAX_ANSWER_BYTES = 65535


def round_context(setup, cd, rnd, opts, ctx_static, wd):
    """The placeholders of one round before any process starts: the
    transfer (bytes or seconds), the client's own time limit, the client's
    and an auxiliary port (taken: the ports picked for this cell)."""
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
    return ctx


def start_server(cd, ctx, taken, wd, procs, rec):
    """The tunnel server (a new port and another try when it dies before
    it is ready: the free port may have been taken meanwhile); sets
    {server_port} and {server_addr} (the address it says it listens on)."""
    ready = cd.get("server_ready", "line")
    err = os.path.join(wd, "server.err")
    for attempt in range(3):
        ctx["server_port"] = free_port(taken)
        ctx["server_addr"] = "127.0.0.1:%d" % ctx["server_port"]
        write_files(cd.get("server_files"), ctx, [], wd)
        argv = subst_argv(cd["server"], ctx)
        rec["server_cmd"] = argv
        procs["server"] = spawn(argv, os.path.join(wd, "server.out"), err,
                                wd)
        if ready != "line":
            time.sleep(float(ready))
            if procs["server"].poll() is None:
                return
            if attempt == 2:
                raise RuntimeError("tunnel server exited (%s): %s" % (
                    procs["server"].returncode, tail(err)))
            stop_proc(procs["server"])
            continue
        try:
            line = wait_for(os.path.join(wd, "server.out"),
                            procs["server"], "tunnel server")
        except RuntimeError as e:
            if procs["server"].poll() is None or attempt == 2:
                raise RuntimeError("%s: %s" % (e, tail(err)))
            stop_proc(procs["server"])
            continue
        try:
            la = json.loads(line).get("listen")
            if la:
                ctx["server_addr"] = la
        except (ValueError, AttributeError):
            pass
        return


def start_fakeres(setup, rnd, opts, ctx, wd, procs, rec):
    """The fake resolvers in front of the server; sets the resolver
    placeholders and returns fakeres's list of resolvers."""
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
    return resolvers


def resolver_args(addrs, flag):
    """{resolvers_all_args}: flag and address, for every resolver."""
    return [x for a in addrs for x in (flag, a)]


def relay_address(line, addr_spec, rctx):
    """The relay's address: from its first line ("udp://host:port ...",
    or JSON with "listen") or from the column's template."""
    if addr_spec != "first_line":
        return subst_str(addr_spec, rctx)
    addr = line
    if line.startswith("{"):
        addr = json.loads(line).get("listen", "")
    addr = addr.split()[0] if addr.split() else ""
    for pre in ("udp://", "tcp://"):
        if addr.startswith(pre):
            addr = addr[len(pre):]
    return addr


def start_relay(cd, ctx, resolvers, taken, wd, procs, rec):
    """The relay (pool, dnsdist) over the resolvers, with another port
    and try when it dies before it is ready; sets {relay_addr} and
    {relay_port} for the client."""
    rel = cd["relay_def"]
    rctx = dict(ctx)
    rctx["resolvers_all_args"] = resolver_args(
        [r["udp"] for r in resolvers], rel.get("resolver_flag", "--resolver"))
    pat = rel.get("ready_regex")
    err = os.path.join(wd, "relay.err")
    for attempt in range(3):
        rctx["relay_port"] = free_port(taken)
        write_files(rel.get("files"), rctx, resolvers, wd)
        argv = subst_argv(rel["cmd"], rctx)
        rec["relay_cmd"] = argv
        procs["relay"] = spawn(argv, os.path.join(wd, "relay.out"), err, wd)
        try:
            line = wait_for(os.path.join(wd, "relay.out"), procs["relay"],
                            "relay " + cd["relay"],
                            pattern=subst_str(pat, rctx) if pat else None)
            break
        except RuntimeError as e:
            if procs["relay"].poll() is None or attempt == 2:
                raise RuntimeError("%s: %s" % (e, tail(err)))
            stop_proc(procs["relay"])
    addr = relay_address(line, rel.get("addr", "first_line"), rctx)
    ctx["relay_addr"] = addr
    ctx["relay_port"] = addr.rpartition(":")[2]
    rec["relay_addr"] = addr


def wait_client(procs, timeout, sampler, tc, wall0):
    """Waits for the client up to timeout s after tc (SIGINT, then stop,
    when it is late), polling the relay's stats sampler once a second
    meanwhile. Returns its exit status, None when it was stopped."""
    while True:
        left = tc + timeout - time.monotonic()
        try:
            return procs["client"].wait(
                timeout=max(0.01, min(left, 1.0)) if sampler else timeout)
        except subprocess.TimeoutExpired:
            if not sampler or left <= 1.0:
                stop_proc(procs["client"], grace=2.0, sig=signal.SIGINT)
                return None
            sampler.poll(wall0)


def run_client(cd, ctx, resolvers, timeout, wd, procs, rec):
    """The client (and its generated files, e.g. a resolver list), timed
    and measured: the CPU seconds of every process of the cell while it
    runs, a relay's stats over time. Returns the client's exit status."""
    rel = cd.get("relay_def")
    ctx["mode_args"] = cd.get("mode_args", [])
    write_files(cd.get("files"), ctx, resolvers, wd)
    argv = subst_argv(cd["client"], ctx)
    rec["client_cmd"] = argv
    # CPU of the cell while the client runs: the other processes read
    # from /proc per process group before and after, the client (the
    # only child reaped meanwhile) from the runner's children usage.
    groups = {name: p.pid for name, p in procs.items()}
    cpu0 = {name: group_cpu(g) for name, g in groups.items()}
    ch0 = children_cpu()
    tc = time.monotonic()
    wall0 = time.time()
    procs["client"] = spawn(argv, os.path.join(wd, "client.out"),
                            os.path.join(wd, "client.err"), wd)
    # A relay's stats file is sampled every second meanwhile: its
    # caps and answers over time (timeline.py).
    sampler = timeline.Sampler(subst_str(rel["stats_json"],
                                         {"workdir": wd})) \
        if rel and rel.get("stats_json") else None
    rc = wait_client(procs, timeout, sampler, tc, wall0)
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
    return rc


def judge_client(rec, cd, limited, rc, timeout, wd):
    """The round's figures from the client's last JSON line: ok, or the
    error (timeout, no JSON, an incomplete byte transfer), a warning for
    a bad exit, partial for a client that gave up at its time limit."""
    got = [j for j in json_lines(os.path.join(wd, "client.out"))
           if "kbps_down" in j]
    if got:
        rec["client"] = got[-1]
        timeline.from_client(rec)
    if rc is None and not got:
        rec["error"] = "timeout after %.0f s" % timeout
        return
    if not got:
        rec["error"] = "client exit %s, no JSON: %s" % (
            rc, tail(os.path.join(wd, "client.err")))
        return
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
    if limited and c.get("complete") is False and not cd.get("partial_ok"):
        rec["error"] = "transfer incomplete (exit %s)" % rc
    else:
        rec["ok"] = True
        if limited and c.get("complete") is False:
            # A client that gave up at its time limit: its figure
            # is the rate of what arrived (marked in the table).
            rec["partial"] = True


def finish_round(rec, procs, wd, cd, opts, t0, rcvbuf0):
    """Stops the processes in order (client, relay, resolvers, server),
    keeping their exit statuses and counts; removes the work dir unless
    the logs are kept."""
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


def run_round(setup, cd, rnd, opts, ctx_static):
    """One round of one cell; returns its record (results.json)."""
    rec = {"setup": setup["name"], "column": cd["name"], "round": rnd,
           "ok": False}
    wd = tempfile.mkdtemp(prefix="rp-cell-", dir=opts.tmp)
    procs = {}
    t0 = time.monotonic()
    rcvbuf0 = udp_rcvbuf_errors()
    try:
        limited = bool(setup.get("rate_limited"))
        ctx = round_context(setup, cd, rnd, opts, ctx_static, wd)
        rec["transfer"] = ("%s bytes" % ctx["bytes"]) if limited \
            else ("%s s" % ctx["seconds"])
        taken = set()
        ctx["client_port"] = free_port(taken)
        ctx["aux_port"] = free_port(taken)
        start_server(cd, ctx, taken, wd, procs, rec)
        resolvers = start_fakeres(setup, rnd, opts, ctx, wd, procs, rec)
        ctx["resolvers_all_args"] = resolver_args(
            [r["udp"] for r in resolvers],
            cd.get("resolver_flag", "--resolver"))
        if cd.get("relay_def"):
            start_relay(cd, ctx, resolvers, taken, wd, procs, rec)
        timeout = opts.timeout_for(setup, cd)
        rc = run_client(cd, ctx, resolvers, timeout, wd, procs, rec)
        judge_client(rec, cd, limited, rc, timeout, wd)
    except (RuntimeError, TemplateError, OSError, ValueError, KeyError) as e:
        rec["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        finish_round(rec, procs, wd, cd, opts, t0, rcvbuf0)
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
