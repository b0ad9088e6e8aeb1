"""The command line of the scenario table (scenarios/runner.py and
scenarios/run-table.sh): the options, the setups and columns chosen, the
placeholders every command shares, the options of a round (transfer,
time limit), --list, --replot, the run (or a simulator's rounds,
--sim-results), the checks and gates, and the output: table.md,
results.json, command.txt, plots, results/latest/, the table and the
check lines on stdout, the exit status.
"""

import argparse
import atexit
import datetime
import json
import os
import shutil
import sys
import tempfile

from respool_bench.cell import run_round
from respool_bench.checks import evaluate
from respool_bench.columns import (DEFAULT_REAL_TUNNELS, HERE, ROOT,
                                   check_available, column_def, load_json,
                                   physical_limit_kbps)
from respool_bench.plots import make_plots
from respool_bench.results import fmt_bytes, hms
from respool_bench.rounds import run_rounds
from respool_bench.table import make_table
from respool_bench.template import PH, TemplateError, resolve_exe, subst_str


class Opts:
    """What a round needs of the command line: fakeres, the tmp dir,
    whether logs are kept, and per setup the transfer and time limit."""


def log(msg):
    print("[table] " + msg, file=sys.stderr, flush=True)


def find_build(arg):
    if arg:
        return os.path.abspath(arg)
    if os.environ.get("RP_BUILD_DIR"):
        return os.path.abspath(os.environ["RP_BUILD_DIR"])
    return os.path.join(ROOT, "build")


def build_parser():
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
    return ap


def write_results(outdir, res, table):
    """table.md and results.json into outdir."""
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=False)
        f.write("\n")


def replot(a):
    """--replot DIR: table.md and the plots again from DIR/results.json,
    the checks evaluated again from --gates (when it ran any)."""
    outdir = os.path.abspath(a.replot)
    with open(os.path.join(outdir, "results.json")) as f:
        res = json.load(f)

    def replot_log(msg):
        print("[table] " + msg, file=sys.stderr)
    if "checks" in res and os.path.exists(a.gates):
        res["checks"] = evaluate(res, load_json(a.gates).get("checks", []))
    res["plots"] = make_plots(res, outdir, replot_log)
    write_results(outdir, res, make_table(res))
    replot_log("replotted %s: %d plots" % (outdir, len(res["plots"])))
    return 0


def round_count(ap, a, quick):
    """--rounds, else $ROUNDS, else 3 (1 in QUICK)."""
    rounds = a.rounds
    if rounds is None and os.environ.get("ROUNDS"):
        rounds = int(os.environ["ROUNDS"])
    if rounds is None:
        rounds = 1 if quick else 3
    if rounds < 1:
        ap.error("ROUNDS must be >= 1")
    return rounds


def split(vals):
    """--setup a,b --setup c: ["a", "b", "c"]."""
    return [x for v in vals for x in v.split(",") if x]


def pick(ap, what, items, wanted):
    """The items named in wanted, in their own order (all when wanted is
    empty); a usage error names the unknown ones."""
    if not wanted:
        return items
    unknown = set(wanted) - {x["name"] for x in items}
    if unknown:
        ap.error("unknown %s(s): %s (have: %s)" % (
            what, ", ".join(sorted(unknown)),
            ", ".join(x["name"] for x in items)))
    return [x for x in items if x["name"] in wanted]


def choose(ap, a, quick, setups_data, cols_data):
    """The setups and columns to run (--setup, --column, QUICK)."""
    setups = pick(ap, "setup", setups_data["setups"], split(a.setup))
    want_c = split(a.column)
    cols = pick(ap, "column", cols_data["columns"], want_c)
    if quick and not want_c:
        # Columns marked "quick": false (the real tunnels: a minute a
        # limited cell) run in QUICK mode only when named with --column.
        cols = [c for c in cols
                if cols_data["tunnels"].get(c.get("tunnel"), {}).get(
                    "quick", True) and c.get("quick", True)]
    return setups, cols


def static_context(ap, a, cols_data, build):
    """The placeholders every command of the run shares: build, root,
    scenarios, domain, columns.json "vars", real_tunnels, --var."""
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
    return {k: (subst_str(v, ctx_static) if isinstance(v, str) else v)
            for k, v in ctx_static.items()}


def make_opts(a, defaults, build, quick):
    """A round's options: fakeres, a tmp dir (removed at exit unless the
    logs are kept), per setup its bytes, seconds, upload and time limit
    (setups.json, its "defaults", QUICK, --timeout)."""
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
    return opts


def column_defs(cols, cols_data, opts, ctx_static, sim_rounds, sim_path):
    """Each column merged with its tunnel and relay, "na" (the reason)
    where it cannot run: not simulated, fakeres or an executable missing."""
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
                cd["na"] = "not in %s" % sim_path
        elif "na" not in cd:
            if resolve_exe(opts.fakeres) is None:
                cd["na"] = "fakeres not built (%s)" % opts.fakeres
            else:
                why = check_available(cd, ctx_static)
                if why:
                    cd["na"] = why
        cdefs.append(cd)
    return cdefs


def list_table(setups, cdefs):
    """--list: the setups and the columns (with n/a reasons)."""
    for s in setups:
        print("setup  %-24s %s" % (s["name"], s.get("description", "")))
    for cd in cdefs:
        print("column %-24s %s%s" % (
            cd["name"], cd.get("mode", ""),
            ("  n/a (%s)" % cd["na"]) if "na" in cd else ""))


def command_line(argv):
    """The command as results.json and command.txt record it, with
    QUICK= and ROUNDS= from the environment."""
    env = "".join("%s=%s " % (k, os.environ[k]) for k in ("QUICK", "ROUNDS")
                  if os.environ.get(k))
    return env + " ".join(
        [os.environ.get("RP_TABLE_ARGV0", "scenarios/runner.py")] +
        (sys.argv[1:] if argv is None else list(argv)))


def new_results(command, started, quick, rounds, build, opts, setups, cdefs,
                cols_data):
    """results.json before the run: the setups (with their physical
    limits per kind), the columns, no cells yet."""
    res = {"command": command,
           "started": started.isoformat(timespec="seconds"),
           "quick": quick, "rounds": rounds, "build": build,
           "transfer_note": "%s through rate-limited setups, %s s otherwise"
           % (fmt_bytes(opts.bytes_for({})), opts.seconds_for({})),
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
    return res


def load_sim(path):
    """--sim-results FILE: its rounds by (setup, column, round), the
    number of rounds, whether it was QUICK."""
    sim_data = load_json(path)
    sim_rounds = {(r["setup"], r["column"], r["round"]): r
                  for r in sim_data.get("results", [])}
    return (sim_rounds, max([k[2] for k in sim_rounds] or [1]),
            bool(sim_data.get("quick")))


def write_output(a, res, command, stamp):
    """The results dir (--out DIR, else results/STAMP/ and a copy in
    results/latest/): plots, table.md, results.json, command.txt.
    Returns the table, the dir and latest (None with --out)."""
    if a.out:
        outdir = os.path.abspath(a.out)
        latest = None
    else:
        outdir = os.path.join(ROOT, "results", stamp)
        latest = os.path.join(ROOT, "results", "latest")
    os.makedirs(outdir, exist_ok=True)
    res["plots"] = [] if a.no_plots else make_plots(res, outdir, log)
    table = make_table(res)
    write_results(outdir, res, table)
    with open(os.path.join(outdir, "command.txt"), "w") as f:
        f.write(command + "\n")
    if latest:
        shutil.rmtree(latest, ignore_errors=True)
        shutil.copytree(outdir, latest)
    return table, outdir, latest


def print_checks(res, gate, quick):
    """A line per check and gate on stdout; returns whether one that
    decides the exit status FAILed."""
    failed = False
    for key in ("checks", "gates"):
        for ch in res.get(key, []):
            print("%-4s %s: %s" % (ch["result"], ch["name"], ch["detail"]))
            # Under --gate the gates (the checks with CI margins) decide;
            # a plain QUICK run is decided by the checks themselves.
            decides = key == "gates" if gate else quick
            if ch["result"] == "FAIL" and decides:
                failed = True
    return failed


def main(argv=None):
    ap = build_parser()
    a = ap.parse_args(argv)
    if a.replot:
        return replot(a)
    quick = a.quick or a.gate or os.environ.get("QUICK", "") not in ("", "0")
    rounds = round_count(ap, a, quick)
    try:
        setups_data = load_json(a.setups)
        cols_data = load_json(a.columns)
        gates_data = load_json(a.gates) if os.path.exists(a.gates) else {}
    except (OSError, ValueError) as e:
        print("run-table: %s" % e, file=sys.stderr)
        return 2
    setups, cols = choose(ap, a, quick, setups_data, cols_data)
    sim_rounds = None
    if a.sim_results:
        try:
            sim_rounds, rounds, quick = load_sim(a.sim_results)
        except (OSError, ValueError) as e:
            print("run-table: %s" % e, file=sys.stderr)
            return 2
    build = find_build(a.build)
    ctx_static = static_context(ap, a, cols_data, build)
    opts = make_opts(a, setups_data.get("defaults", {}), build, quick)
    cdefs = column_defs(cols, cols_data, opts, ctx_static, sim_rounds,
                        a.sim_results)
    if a.list:
        list_table(setups, cdefs)
        return 0

    started = datetime.datetime.now(datetime.timezone.utc)
    command = command_line(argv)
    res = new_results(command, started, quick, rounds, build, opts, setups,
                      cdefs, cols_data)

    def one_round(s, cd, rnd):
        if sim_rounds is None:
            return run_round(s, cd, rnd, opts, ctx_static)
        rec = sim_rounds.get((s["name"], cd["name"], rnd),
                             {"ok": False, "error": "not simulated"})
        rec.setdefault("elapsed", 0.0)
        return rec
    interrupted = run_rounds(res, setups, cdefs, rounds, quick, one_round,
                             physical_limit_kbps, log)
    if not interrupted:
        # Printed after every run; they set the exit status in QUICK runs
        # (and --gate) only: a full run reports them for information.
        res["checks"] = evaluate(res, gates_data.get("checks", []))
        res["checks_decide_exit"] = quick and not a.gate
        if a.gate:
            res["gates"] = evaluate(res, gates_data.get("gates", []))
    table, outdir, latest = write_output(a, res, command,
                                         started.strftime("%Y%m%dT%H%M%SZ"))
    print(table.split("\n## Queries per resolver")[0].rstrip())
    failed = print_checks(res, a.gate, quick)
    log("results in %s%s (%s)" % (
        os.path.relpath(outdir, os.getcwd()),
        (" and " + os.path.relpath(latest, os.getcwd())) if latest else "",
        hms(res["elapsed_seconds"])))
    if interrupted:
        return 130
    return 1 if failed else 0
