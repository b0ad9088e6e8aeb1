#!/usr/bin/env python3
"""check_boundaries.py: which project headers each component may include.

Reads the build's compile_commands.json, asks the compiler for the
headers every non-test source includes (-M: the preprocessor's own list,
so a relative path or a header reached through another counts too) and
fails when one lies in a folder the component must not reach: pool/include
is the public API, pool/dns the codec shared by every component (the one
exception, docs/architecture.md), and each component's own folder is its
own. Tests, fuzz harnesses and benchmarks may reach their module's
internals and are not judged; generated headers in the build folder are
not judged.

usage: check_boundaries.py COMPILE_COMMANDS SOURCE_DIR BINARY_DIR
       check_boundaries.py --self-test
"""
import json
import os
import shlex
import subprocess
import sys

PUBLIC = ["pool/include/", "pool/dns/"]

# (component folder, folders its sources may include besides PUBLIC).
RULES = [
    ("pool/dns/", []),
    ("pool/core/", ["pool/core/"]),
    ("pool/net/", ["pool/net/", "pool/discovery/"]),
    ("pool/discovery/", ["pool/discovery/"]),
    ("pool/cli/", ["pool/cli/", "pool/discovery/"]),
    ("fake-resolvers/", ["fake-resolvers/"]),
    ("tunnels/", ["tunnels/"]),
    # The simulator runs the fake resolvers' profiles and the tunnels'
    # engines (fr_profile, tun_core with MasterDNS's balancer) as they are.
    ("sim/", ["sim/", "fake-resolvers/", "tunnels/common/",
              "tunnels/masterdns/balancer.h"]),
    ("examples/", []),
]


def exempt(rel):
    base = os.path.basename(rel)
    return ("/tests/" in "/" + rel or "/fuzz/" in "/" + rel or
            base.startswith(("test_", "bench_")))


def judge(rel_src, rel_headers):
    """The headers of |rel_headers| that |rel_src| must not include."""
    for comp, allowed in RULES:
        if rel_src.startswith(comp):
            ok = PUBLIC + allowed
            return [h for h in rel_headers
                    if not any(h.startswith(a) for a in ok)]
    return []


def headers_of(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    cmd, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        cmd.append(a)
    out = subprocess.run(cmd + ["-M"], cwd=entry["directory"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("%s: %s" % (entry["file"], out.stderr.strip()))
    deps = out.stdout.replace("\\\n", " ").split(":", 1)[1].split()
    return [os.path.normpath(os.path.join(entry["directory"], d))
            for d in deps]


def self_test():
    bad = judge("tunnels/common/tunpool.c",
                ["pool/include/respool_net.h", "pool/dns/dns.h",
                 "pool/net/net_internal.h", "tunnels/common/tunpool.h"])
    assert bad == ["pool/net/net_internal.h"], bad
    assert judge("pool/core/pool.c", ["pool/net/config.h"]) == \
        ["pool/net/config.h"]
    assert judge("sim/simnet.c", ["tunnels/common/tundrv.h",
                                  "fake-resolvers/fr_profile.h"]) == []
    assert judge("sim/simnet.c", ["pool/core/core.h"]) == ["pool/core/core.h"]
    assert exempt("pool/tests/test_net.c") and exempt("pool/core/fuzz/x.c")
    print("self-test passed")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(argv) != 4:
        print(__doc__)
        return 2
    src_dir = os.path.realpath(argv[2]) + "/"
    bin_dir = os.path.realpath(argv[3]) + "/"
    entries = json.load(open(argv[1]))
    seen, bad, judged = set(), [], 0
    for e in entries:
        f = os.path.realpath(os.path.join(e["directory"], e["file"]))
        if f in seen or not f.startswith(src_dir) or f.startswith(bin_dir):
            continue
        seen.add(f)
        rel = f[len(src_dir):]
        if exempt(rel):
            continue
        hdrs = []
        for h in headers_of(e):
            h = os.path.realpath(h)
            if h.startswith(src_dir) and not h.startswith(bin_dir) \
                    and h != f:
                hdrs.append(h[len(src_dir):])
        judged += 1
        for h in judge(rel, hdrs):
            bad.append("%s includes %s" % (rel, h))
    for b in bad:
        print("boundary: " + b)
    print("%d sources judged, %d includes across a boundary" %
          (judged, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
