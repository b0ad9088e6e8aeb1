#!/usr/bin/env python3
"""test_real_tunnels.py: the real dnstt and MasterDnsVPN through respool.

The real tunnels (../shared/real-tunnels, or $RP_REAL_TUNNELS) behind
fakeres, each cell measured side by side with the same tunnel without the
pool, and judged by the ratio (never by an absolute time):

  dnstt-unlimited  256 KiB, real dnstt via respool (no --kind) over one
                   unlimited resolver / real dnstt straight at it >= 0.5
                   (a held poll taken for a drop made it 0.006)
  dnstt-limited    real dnstt via respool over one 30 q/s refusing
                   resolver / alone >= 2 (alone it loses a poll to every
                   refusal: 20-45 kbps; via respool 110-120), and the 256
                   KiB arrive
  md-limited       256 KiB, MasterDnsVPN via respool over three limited
                   resolvers (20 r, 30 r, 40 d) / its own balancer >= 0.6

Exit 77 (ctest: skipped) with a message when the binaries are absent.
Usage: test_real_tunnels.py [BUILD_DIR] [CASE...]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scenarios"))
from respool_bench.procs import free_port, stop_proc  # noqa: E402

MEASURE = os.path.join(ROOT, "scenarios", "tools", "tcp_measure.py")
KIB256 = 262144
DOMAIN = "t.example"

ONE = ["name=r1,addr=127.0.0.2"]
ONE_LIMITED = ["name=r1,rate=30,over=refuse,addr=127.0.0.2"]
THREE_LIMITED = ["name=r1,rate=20,over=refuse,addr=127.0.0.2",
                 "name=r2,rate=30,over=refuse,addr=127.0.0.3",
                 "name=r3,rate=40,over=drop,addr=127.0.0.4"]


def real_dir():
    for d in (os.environ.get("RP_REAL_TUNNELS"),
              os.path.join(ROOT, "..", "shared", "real-tunnels")):
        if d and os.path.isfile(os.path.join(d, "bin", "dnstt-client")):
            return os.path.abspath(d)
    return None


class Procs:
    """Children in their own process groups, all stopped at the end."""

    def __init__(self, wd):
        self.wd = wd
        self.live = []

    def start(self, name, argv):
        out = open(os.path.join(self.wd, name + ".out"), "w")
        err = open(os.path.join(self.wd, name + ".err"), "w")
        p = subprocess.Popen(argv, stdout=out, stderr=err, cwd=self.wd,
                             stdin=subprocess.DEVNULL,
                             start_new_session=True)
        self.live.append(p)
        return p

    def first_line(self, name, p, timeout=10.0):
        path = os.path.join(self.wd, name + ".out")
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with open(path) as f:
                line = f.readline()
            if line.endswith("\n"):
                return line.strip()
            if p.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("%s did not start: %s" % (
            name, open(os.path.join(self.wd, name + ".err")).read()[-400:]))

    def stop(self):
        for p in reversed(self.live):
            stop_proc(p)
        self.live = []


def run_cell(build, rt, tunnel, specs, via, limit):
    """One transfer of 256 KiB: |via| is 'direct' (first resolver),
    'own' (MasterDnsVPN's balancer over all) or 'respool'. Returns the
    tcp_measure JSON (kbps of what arrived when |limit| s pass)."""
    wd = tempfile.mkdtemp(prefix="rp-real-")
    ps = Procs(wd)
    try:
        taken = set()  # three different ports
        sport, aux, cport = (free_port(taken), free_port(taken),
                             free_port(taken))
        if tunnel == "dnstt":
            srv = [os.path.join(rt, "bin", "dnstt-server"), "-udp",
                   "127.0.0.1:%d" % sport, "-privkey-file",
                   os.path.join(rt, "dnstt", "server.key"), DOMAIN,
                   "127.0.0.1:%d" % aux]
        else:
            shutil.copytree(os.path.join(rt, "masterdnsvpn"),
                            os.path.join(wd, "mds"))
            for f in os.listdir(os.path.join(wd, "mds")):
                os.chmod(os.path.join(wd, "mds", f), 0o644)
            srv = ["sh", "-c", "cd mds && exec %s -config server_config.toml "
                   "-nowait -udp-host 127.0.0.1 -udp-port %d -forward-ip "
                   "127.0.0.1 -forward-port %d -domain %s" % (
                       os.path.join(rt, "bin", "masterdnsvpn-server"), sport,
                       aux, DOMAIN)]
        p = ps.start("server", ["python3", MEASURE, "serve", "--target",
                                "127.0.0.1:%d" % aux, "--listen-addr",
                                "127.0.0.1:%d" % sport, "--"] + srv)
        ps.first_line("server", p)
        fr = [os.path.join(build, "fake-resolvers", "fakeres"),
              "--upstream", "127.0.0.1:%d" % sport, "--seed", "1"]
        for s in specs:
            fr += ["-r", s]
        p = ps.start("fakeres", fr)
        addrs = [r["udp"] for r in
                 json.loads(ps.first_line("fakeres", p))["resolvers"]]
        targets = addrs[:1] if via == "direct" else addrs
        if via == "respool":
            rp = [os.path.join(build, "pool", "cli", "respool"),
                  "--listen", "127.0.0.1:0"]
            for a in addrs:
                rp += ["-r", a]
            p = ps.start("respool", rp)
            targets = [ps.first_line("respool", p).split()[0]]
        fetch = ["python3", MEASURE, "fetch", "--connect",
                 "127.0.0.1:%d" % cport, "--bytes", str(KIB256),
                 "--limit", str(limit), "--wait", "30", "--"]
        if tunnel == "dnstt":
            cli = [os.path.join(rt, "bin", "dnstt-client"), "-udp",
                   targets[0], "-pubkey-file",
                   os.path.join(rt, "dnstt", "server.pub"), DOMAIN,
                   "127.0.0.1:%d" % cport]
        else:
            with open(os.path.join(wd, "res.txt"), "w") as f:
                f.write("\n".join(targets) + "\n")
            cli = [os.path.join(rt, "bin", "masterdnsvpn-client"), "-config",
                   os.path.join(rt, "masterdnsvpn", "client_config.toml"),
                   "-resolvers", os.path.join(wd, "res.txt"), "-listen-ip",
                   "127.0.0.1", "-listen-port", str(cport), "-domains",
                   DOMAIN]
        out = subprocess.run(fetch + cli, capture_output=True, text=True,
                             timeout=limit + 60, cwd=wd)
        lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
        if not lines:
            raise RuntimeError("no measurement: %s" % out.stderr[-400:])
        return json.loads(lines[-1])
    finally:
        ps.stop()
        shutil.rmtree(wd, ignore_errors=True)


CASES = {
    # name: (tunnel, setup, numerator, denominator, minimum ratio, limit s,
    #        the numerator must complete)
    "dnstt-unlimited": ("dnstt", ONE, "respool", "direct", 0.5, 60, True),
    "dnstt-limited": ("dnstt", ONE_LIMITED, "respool", "direct", 2.0, 40,
                      True),
    "md-limited": ("masterdns", THREE_LIMITED, "respool", "own", 0.6, 60,
                   True),
}


def main(argv):
    build = os.path.abspath(argv[1] if len(argv) > 1 else
                            os.environ.get("RP_BUILD_DIR",
                                           os.path.join(ROOT, "build")))
    rt = real_dir()
    if rt is None:
        print("SKIP: the real tunnels were not found (set RP_REAL_TUNNELS "
              "or put them in ../shared/real-tunnels)")
        return 77
    want = argv[2:] or list(CASES)
    failed = 0
    for name in want:
        tunnel, setup, num, den, least, limit, complete = CASES[name]
        a = run_cell(build, rt, tunnel, setup, num, limit)
        b = run_cell(build, rt, tunnel, setup, den, limit)
        ratio = a["kbps_down"] / b["kbps_down"] if b["kbps_down"] else \
            float("inf")
        ok = ratio >= least and (a["complete"] or not complete)
        print("%s %s: %s %.1f kbps (%s), %s %.1f kbps (%s): ratio %.2f, "
              "wants >= %.2f%s" % (
                  "PASS" if ok else "FAIL", name, num, a["kbps_down"],
                  "complete" if a["complete"] else "incomplete", den,
                  b["kbps_down"],
                  "complete" if b["complete"] else "incomplete", ratio, least,
                  " and complete" if complete else ""), flush=True)
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
