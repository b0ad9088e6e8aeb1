"""The plots of a results dir (plots/, with gnuplot): download kbps per
setup and column, rate-limited cells as a share of the physical limit,
the queries per resolver of each setup, the ratios, and the caps over
time (timeline.py). Each plot's data (.dat) and script (.gp) stay beside
its PNG.
"""

import math
import os
import shutil
import subprocess

import timeline
from respool_bench.results import median_kbps

# The lines every bar plot ends with: grid, key, labels, tab data.
GNUPLOT_TAIL = """set grid ytics
set key outside right top vertical
set xtics rotate by -25 scale 0
set datafile missing "?"
set datafile separator "\\t"
plot {plots}
"""

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
""" + GNUPLOT_TAIL

# Stacked bars of shares; the head is the bars' but for the lines below.
GNUPLOT_SHARES = GNUPLOT_BARS.replace("{w},600", "900,480").replace(
    "clustered gap 1", "rowstacked").replace("0.9\n", "0.7\n").replace(
    "set logscale y\nset yrange [{ylo}:{yhi}]\n"
    "set ylabel \"download kbps (median, log scale)\"",
    "set yrange [0:100]\nset ylabel \"share of the queries (%)\"")


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


def write_dat(path, head, rows):
    """A tab-separated data file: the header (its first cell, then the
    titles), then a row per (name, values)."""
    with open(path, "w") as f:
        f.write(head[0] + "\t" + "\t".join(head[1:]) + "\n")
        for name, vals in rows:
            f.write(name + "\t" + "\t".join(vals) + "\n")


def plot_list(dat, n):
    """gnuplot's plot clause: columns 2..n+1 of dat, titled by the header."""
    return ", ".join('"%s" using %d:xtic(1) title columnheader(%d)' % (
        dat, i + 2, i + 2) for i in range(n))


def throughput_rows(res):
    """Each setup's median kbps per column ("?": none)."""
    rows = []
    for s in res["setups"]:
        vals = []
        for c in res["columns"]:
            v, _ = median_kbps(res, s["name"], c["name"])
            vals.append("%.3f" % v if v and v > 0 else "?")
        rows.append((s["name"], vals))
    return rows


def plot_throughput(res, pdir, log):
    """throughput.png: grouped bars, one group per setup, one bar per
    column, on a log axis. Returns whether it was made."""
    cols = res["columns"]
    ylo, yhi = log_range([median_kbps(res, s["name"], c["name"])[0]
                          for s in res["setups"] for c in cols])
    sc = GNUPLOT_BARS.format(w=max(900, 160 * len(res["setups"])),
                             out="throughput.png", ylo=ylo, yhi=yhi,
                             title="download kbps per setup and column "
                                   "(%s)" % res["started"],
                             plots=plot_list("throughput.dat", len(cols)))
    return run_gnuplot(sc, os.path.join(pdir, "throughput.gp"), log) and \
        os.path.exists(os.path.join(pdir, "throughput.png"))


def plot_limit_share(res, log):
    """limit-share.png: rate-limited setups, each cell as % of the
    physical limit (in the plots dir). Returns the plots made."""
    cols = res["columns"]
    rows = []
    for s in res["setups"]:
        if not s.get("rate_limited"):
            continue
        vals = []
        for c in cols:
            v, _ = median_kbps(res, s["name"], c["name"])
            lim = res["cells"].get(s["name"], {}).get(
                c["name"], {}).get("limit_kbps")
            vals.append("%.2f" % (100.0 * v / lim) if v and lim else "?")
        rows.append((s["name"], vals))
    if not any(v != "?" for _, vals in rows for v in vals):
        return []
    write_dat("limit-share.dat", ["setup"] + [c["title"] for c in cols],
              rows)
    sc = GNUPLOT_BARS.format(
        w=900, out="limit-share.png", ylo=1, yhi=100,
        plots=plot_list("limit-share.dat", len(cols)),
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
        return [os.path.join("plots", "limit-share.png")]
    return []


def plot_shares(res, s, log):
    """shares-SETUP.png: per-resolver query shares of setup s, a stacked
    bar per column (in the plots dir). Returns the plots made."""
    if len(s.get("resolvers", [])) < 2:
        return []  # one resolver: every column is 100 % r1
    profiles = resolver_profiles(s)
    names = []
    rows = []
    for c in res["columns"]:
        cell = res["cells"].get(s["name"], {}).get(c["name"])
        sm = cell and cell["summary"]
        per = (sm or {}).get("resolvers") or {}
        for n in per:
            if n not in names:
                names.append(n)
        rows.append((c["title"], per))
    if not any(v.get("share") is not None
               for _, per in rows for v in per.values()):
        return []
    base = "shares-%s" % s["name"]
    write_dat(base + ".dat", ["column"] + [profiles.get(n, n) for n in names],
              [(title, ["%.2f" % (100 * per[n]["share"])
                        if per.get(n, {}).get("share") is not None else "?"
                        for n in names]) for title, per in rows])
    sc = GNUPLOT_SHARES.format(
        out=base + ".png", plots=plot_list(base + ".dat", len(names)),
        title="%s: queries per resolver by column" % s["name"])
    if run_gnuplot(sc, base + ".gp", log) and os.path.exists(base + ".png"):
        return [os.path.join("plots", base + ".png")]
    return []


def make_plots(res, outdir, log):
    """Every plot of results dict |res| into outdir/plots; returns their
    paths relative to outdir."""
    if shutil.which("gnuplot") is None:
        log("gnuplot not found: no plots")
        return []
    made = []
    pdir = os.path.join(outdir, "plots")
    os.makedirs(pdir, exist_ok=True)
    rows = throughput_rows(res)
    write_dat(os.path.join(pdir, "throughput.dat"),
              ["setup"] + [c["title"] for c in res["columns"]], rows)
    if all(v == "?" for _, vals in rows for v in vals):
        log("no figures to plot")
        return made
    cwd = os.getcwd()
    os.chdir(pdir)
    try:
        if plot_throughput(res, pdir, log):
            made.append(os.path.join("plots", "throughput.png"))
        made.extend(plot_limit_share(res, log))
        for s in res["setups"]:
            made.extend(plot_shares(res, s, log))
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
    write_dat("ratios.dat", ["setup"] + [r["title"] for r in ratios], rows)
    lo = 2 ** math.floor(math.log2(min(vals_all + [1.0])))
    hi = 2 ** math.ceil(math.log2(max(vals_all + [1.0])) + 0.01)
    plots = plot_list("ratios.dat", len(ratios))
    sc = GNUPLOT_RATIOS.format(w=max(900, 160 * len(res["setups"])),
                               out="ratios.png", ylo=lo, yhi=hi, plots=plots,
                               title="ratios per setup: the pool against "
                                     "the first resolver, own balancers, "
                                     "dnsdist and the real tunnels alone")
    if run_gnuplot(sc, "ratios.gp", log) and os.path.exists("ratios.png"):
        return [os.path.join("plots", "ratios.png")]
    return []
