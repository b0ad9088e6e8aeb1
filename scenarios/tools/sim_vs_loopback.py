#!/usr/bin/env python3
"""sim_vs_loopback.py SIM_DIR LOOPBACK_DIR [OUT.md] [--again DIR ...]

Sets each cell of the table in virtual time (SIM_DIR/results.json, from
./run.sh sim) beside the same cell on loopback (LOOPBACK_DIR/results.json,
e.g. results/baseline), as the simulator issue asks: the sim / loopback
ratio of the median kbps, a mark on every rate-limited cell off by more
than 15 % and every other cell off by more than 30 %, and per row whether
the winning column is the same (where not, by how much each side's
winner leads the other's). A marked cell whose simulated figure lies
within its loopback rounds' range says so (the loopback median picked
another round's regime, not the model a figure it never reached). A
loopback round that did not finish
its transfer counts at the rate of what it moved over the whole time
the client ran (the table's figure is the rate while bytes arrived, which
hides a stall), and its cell says so. Then, where the tunnel server's
counters are on both sides, its retransmissions and empty answers per 100
answers, its retransmission timeouts and its answers that found the
window full, model beside loopback. With --again DIR (repeatable: a
runner --out of some cells run again on loopback, e.g. the cells further
off), each cell of those runs beside the baseline and the model: whether
loopback held its own figure within the cell's tolerance, and whether
the model is within it of the rerun. Writes Markdown to OUT.md (default
stdout). Exit status 0 (a report, not a gate), 2 for bad usage.
"""
import argparse
import json
import os
import statistics
import sys

LIMITED_TOL = 0.15
OTHER_TOL = 0.30
# SERVER_MIN_PCT: the server section lists a cell whose server (on either
# side) retransmitted at least so many per 100 answers.
SERVER_MIN_PCT = 1

# MODELS names the model a column's cell depends on most, in the order
# tried: (tunnel, mode or None, the model). docs/simulator.md says what
# each models and why it is off.
MODELS = [
    ("real-masterdns", None, "the real MasterDnsVPN model (its send loop: "
     "docs/simulator.md, \"The real MasterDnsVPN's send loop\")"),
    ("real-dnstt", None, "the real dnstt model (the original client on "
     "KCP's clock and its smux: docs/simulator.md, \"The real dnstt's KCP "
     "clock\" and \"The real dnstt's smux\")"),
    (None, "dnsdist", "the dnsdist relay model (leastOutstanding, the "
     "relay's costs)"),
    ("masterdns", None, "the minimal MasterDNS client's model and costs "
     "(docs/simulator.md, \"The minimal MasterDNS client over "
     "three-lossy\" and \"The same client over three-unlimited\")"),
    (None, None, "the minimal DNSTT clients' and the fake resolvers' "
     "costs (docs/simulator.md, \"The cost model\")"),
]


def tolerance(setup):
    """The tolerance of a setup's cells: LIMITED_TOL where its resolvers
    are rate-limited, OTHER_TOL elsewhere."""
    return LIMITED_TOL if setup.get("rate_limited") else OTHER_TOL


def in_tolerance(a, b, tol):
    """Whether |a| lies within |tol| of |b| (their ratio within 1 +- tol)."""
    return abs(a / b - 1.0) <= tol


def model_of(col):
    for tunnel, mode, name in MODELS:
        if (tunnel is None or col.get("tunnel") == tunnel) and \
                (mode is None or col.get("mode") == mode):
            return name
    return MODELS[-1][2]


def round_kbps(rnd):
    """Returns (kbps, unfinished) of one round: a round whose client did
    not finish counts what it moved over the whole time it ran."""
    cl = rnd.get("client") or {}
    wall = rnd.get("client_seconds_wall")
    if cl.get("complete") is False and wall and cl.get("bytes_down") is not None:
        return cl["bytes_down"] * 8 / 1000.0 / wall, True
    return rnd.get("kbps_down"), False


def fmt_kbps(v):
    """kbps as the cells print it: whole above 10, one decimal below."""
    return "%.0f" % v if v >= 10 else "%.1f" % v


def medians(path):
    """Returns the results, {(setup, column): median kbps},
    {(setup, column): (rounds unfinished, rounds, bytes of each)} and
    {(setup, column): (lowest, highest) round kbps} of cells of two rounds
    or more."""
    with open(os.path.join(path, "results.json")) as f:
        res = json.load(f)
    out, unfinished, spread = {}, {}, {}
    for s, cols in res.get("cells", {}).items():
        for c, cell in cols.items():
            v = (cell.get("summary") or {}).get("kbps_down")
            rounds = [r for r in cell.get("rounds", [])
                      if r.get("kbps_down") is not None]
            per = [round_kbps(r) for r in rounds]
            late = [r for r, (_, u) in zip(rounds, per) if u]
            if late:
                v = statistics.median(k for k, _ in per)
                unfinished[(s, c)] = (len(late), len(rounds), [
                    r["client"]["bytes_down"] for r in late])
            if len(per) >= 2:
                spread[(s, c)] = (min(k for k, _ in per),
                                  max(k for k, _ in per))
            if v is not None:
                out[(s, c)] = v
    return res, out, unfinished, spread


# SERVER_FIELDS are the tunnel server's counters the server section sets
# side by side, per 100 answers: (counter, column title).
SERVER_FIELDS = [("retransmissions", "retransmitted"),
                 ("answered_empty", "empty"),
                 ("timeouts", "timed out"),
                 ("window_full", "window full")]


def server_rates(res):
    """Returns {(setup, column): [median per 100 answers or None, one a
    SERVER_FIELDS entry]} for the cells whose rounds carry the tunnel
    server's counters (the minimal tunnels' servers on loopback, every
    cell of the model); None where the rounds lack that counter (a
    results.json from before it was counted)."""
    out = {}
    for s, cols in res.get("cells", {}).items():
        for c, cell in cols.items():
            per = [[] for _ in SERVER_FIELDS]
            for r in cell.get("rounds", []):
                sv = r.get("server") or {}
                n = sv.get("answers") or sv.get("queries")
                if not n or sv.get("retransmissions") is None:
                    continue
                for i, (key, _) in enumerate(SERVER_FIELDS):
                    if key == "answered_empty" or sv.get(key) is not None:
                        per[i].append(100.0 * (sv.get(key) or 0) / n)
            if per[0]:
                out[(s, c)] = [statistics.median(v) if v else None
                               for v in per]
    return out


def fmt_rate(v):
    return "-" if v is None else "%.1f" % v


def server_lines(sim_res, lb_res, setups, cols, titles):
    """The section on the tunnel server's counters: the cells where
    either side retransmits, or finds its window full, at least
    SERVER_MIN_PCT of its answers."""
    sim, lb = server_rates(sim_res), server_rates(lb_res)
    rows = []
    for s in setups:
        for c in cols:
            a, b = sim.get((s["name"], c)), lb.get((s["name"], c))
            if a is None or b is None or max(
                    v or 0 for v in (a[0], b[0], a[3], b[3])) < SERVER_MIN_PCT:
                continue
            rows.append("| %s | %s | %s |" % (s["name"], titles[c], " | ".join(
                "%s / %s" % (fmt_rate(x), fmt_rate(y)) for x, y in zip(a, b))))
    if not rows:
        return []
    return ["## The tunnel server's retransmissions", "",
            "Per 100 answers of the tunnel server, model / loopback "
            "(medians of the rounds), where either side retransmitted, or "
            "found its window full, at least %d: a segment sent again (its "
            "answer lost, or its ack late behind answers that overtook "
            "it), answers that carried no data, segments whose "
            "retransmission timer expired, and answers that could carry "
            "no new data because the window was full of segments not yet "
            "acked (`-`: a results.json from before the server counted "
            "them)." % SERVER_MIN_PCT, "",
            "| setup | column | " + " | ".join(t for _, t in SERVER_FIELDS)
            + " |",
            "|---|---|" + "---|" * len(SERVER_FIELDS)] + rows + [""]


def again_lines(again, sim, lb, setups, titles):
    """The section on the cells run again on loopback: for each cell of
    the runs in |again| (a list of directories) that both sides have,
    the baseline's median, the rerun's median and rounds, the rerun
    against the baseline and the model against the rerun, each marked
    past the cell's tolerance; and how many of the cells further off
    moved on loopback by more than their tolerance."""
    runs, rerun = [], {}
    for d in again:
        res, med, _, spread = medians(d)
        runs.append("`%s` (`%s`)" % (d, res.get("command", "?")))
        for key, v in med.items():
            if key not in rerun:
                rerun[key] = (v, spread.get(key))
    rows = []
    off = moved = near = 0
    for s in setups:
        tol = tolerance(s)
        for c in titles:
            key = (s["name"], c)
            if key not in rerun or key not in sim or not lb.get(key) or \
                    not rerun[key][0]:
                continue
            a, b = sim[key], lb[key]
            v, lo_hi = rerun[key]
            was_off = not in_tolerance(a, b, tol)
            lb_moved = not in_tolerance(v, b, tol)
            ok = in_tolerance(a, v, tol)
            if was_off:
                off += 1
                moved += lb_moved
                near += ok
            rows.append("| %s | %s | %.0f%s | %s | %s%s | %.2fx%s | %.2fx%s |" % (
                s["name"], titles[c], a, " !" if was_off else "",
                fmt_kbps(b), fmt_kbps(v),
                " (%s-%s)" % (fmt_kbps(lo_hi[0]), fmt_kbps(lo_hi[1]))
                if lo_hi else "",
                v / b, " !" if lb_moved else "", a / v, "" if ok else " !"))
    if not rows:
        return []
    return ["## The cells run again on loopback", "",
            "Cells run again on loopback (%s), beside the baseline and the "
            "model: the model's kbps (`!`: further off than the tolerance "
            "from the baseline), the baseline's median, the rerun's median "
            "(its rounds' range), the rerun against the baseline (`!`: "
            "loopback itself moved by more than the cell's tolerance) and "
            "the model against the rerun (`!`: further off than the "
            "tolerance from the rerun too)." % "; ".join(runs), "",
            "| setup | column | model | baseline | again | again / baseline "
            "| model / again |",
            "|---|---|---|---|---|---|---|"] + rows + [
            "", "Of the %d cells further off run again, %d moved on loopback "
            "by more than their tolerance between the two runs, and %d %s "
            "within the tolerance of the rerun." % (
                off, moved, near, "is" if near == 1 else "are"), ""]


def parse_args(argv):
    """Returns the options of argv[1:], or raises SystemExit (2 for bad
    usage, 0 for --help)."""
    ap = argparse.ArgumentParser(
        prog="sim_vs_loopback.py",
        description=__doc__.strip().split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sim_dir", help="the simulated table (./run.sh sim)")
    ap.add_argument("loopback_dir", help="a loopback run, e.g. "
                    "results/baseline")
    ap.add_argument("out", nargs="?", help="the Markdown to write "
                    "(default stdout)")
    ap.add_argument("--again", action="append", default=[], metavar="DIR",
                    help="a runner --out of cells run again on loopback "
                    "(repeatable)")
    return ap.parse_args(argv[1:])


def main(argv):
    try:
        opts = parse_args(argv)
    except SystemExit as e:
        return e.code
    for d in [opts.sim_dir, opts.loopback_dir] + opts.again:
        if not os.path.isfile(os.path.join(d, "results.json")):
            print("sim_vs_loopback.py: %s has no results.json" % d,
                  file=sys.stderr)
            return 2
    sim_res, sim, _, _ = medians(opts.sim_dir)
    lb_res, lb, lb_late, lb_spread = medians(opts.loopback_dir)
    setups = [s for s in sim_res["setups"]]
    cols = [c["name"] for c in sim_res["columns"]]
    titles = {c["name"]: c.get("title", c["name"]) for c in sim_res["columns"]}
    lines = ["# The table in virtual time beside loopback", "",
             "Each cell: simulated kbps / loopback kbps (the ratio). "
             "Medians of %s simulated round(s) (`%s`) and of the loopback "
             "run in `%s` (`%s`). `!` marks a rate-limited cell off by "
             "more than %d %% or another cell off by more than %d %%." % (
                 sim_res.get("rounds"), sim_res.get("command", "?"),
                 opts.loopback_dir, lb_res.get("command", "?"),
                 LIMITED_TOL * 100, OTHER_TOL * 100), "",
             "| setup | " + " | ".join(titles[c] for c in cols) +
             " | same winner |",
             "|---|" + "---|" * (len(cols) + 1)]
    within = total = same = in_spread = 0
    off = {}
    for s in setups:
        row = []
        tol = tolerance(s)
        for c in cols:
            a, b = sim.get((s["name"], c)), lb.get((s["name"], c))
            if a is None or b is None or b <= 0:
                row.append("-")
                continue
            r = a / b
            ok = in_tolerance(a, b, tol)
            total += 1
            within += ok
            late = lb_late.get((s["name"], c))
            lo_hi = lb_spread.get((s["name"], c))
            spread = not ok and lo_hi and lo_hi[0] <= a <= lo_hi[1]
            in_spread += bool(spread)
            row.append("%.0f / %s (%.2fx)%s%s%s" % (
                a, fmt_kbps(b), r, "" if ok else " !",
                " (within loopback's rounds, %s-%s)" % (
                    fmt_kbps(lo_hi[0]), fmt_kbps(lo_hi[1]))
                if spread else "",
                " (loopback: %d of %d rounds unfinished, %s bytes)" % (
                    late[0], late[1], ", ".join(str(x) for x in late[2]))
                if late else ""))
            if not ok:
                col = next(x for x in sim_res["columns"] if x["name"] == c)
                off.setdefault(model_of(col), []).append(
                    "%s %s %.2fx%s" % (s["name"], titles[c], r,
                                       " (within loopback's rounds)"
                                       if spread else ""))
        have = [c for c in cols if (s["name"], c) in sim and
                (s["name"], c) in lb]
        if have:
            ws = max(have, key=lambda c: sim[(s["name"], c)])
            wl = max(have, key=lambda c: lb[(s["name"], c)])
            # Where they differ, how far ahead each side's winner is of
            # the other's: a row decided by a few percent on loopback
            # asks the model for more than its tolerance.
            win = "yes (%s)" % titles[ws] if ws == wl else \
                "no: %s / %s (loopback %+.1f %%, model %+.1f %%)" % (
                    titles[ws], titles[wl],
                    100.0 * (lb[(s["name"], wl)] / lb[(s["name"], ws)] - 1),
                    100.0 * (sim[(s["name"], ws)] / sim[(s["name"], wl)] - 1))
            same += ws == wl
        else:
            win = "-"
        lines.append("| %s | %s | %s |" % (s["name"], " | ".join(row), win))
    lines += ["", "Within the tolerance: %d of %d cells; the same winner in "
              "%d of %d rows." % (within, total, same, len(setups))]
    if in_spread:
        lines.append("Of the %d cells further off, %d lie%s within the "
                     "range of their loopback rounds." % (
                         total - within, in_spread,
                         "s" if in_spread == 1 else ""))
    lines.append("")
    if off:
        lines += ["## The cells further off, by the model that decides them",
                  ""]
        for _, _, name in MODELS:
            if name in off:
                n = len(off[name])
                lines.append("- %s: %d cell%s: %s." % (
                    name, n, "" if n == 1 else "s", "; ".join(off[name])))
        lines.append("")
    lines += server_lines(sim_res, lb_res, setups, cols, titles)
    lines += again_lines(opts.again, sim, lb, setups, titles)
    text = "\n".join(lines)
    if opts.out:
        with open(opts.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
