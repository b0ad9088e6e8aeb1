"""timeline.py: each resolver's learned cap and answer rate over one
round, and the plots of them for the rate-limited setups.

A round's timeline comes from one of two places:
- a tunnel client that embeds the pool prints it in its JSON line
  ("pool_timeline": one sample a second, tunnels/common/tunpool.c);
- a relay with a stats file (respool --stats-json, rewritten every
  --stats interval) is sampled by the runner while the client runs
  (Sampler: a sample each time the file changes).
Both end up in the round record as rec["timeline"]:
  {"period_ms": 1000, "names": [addr, ...], "t": [s, ...],
   "cap": [[q/s per resolver], ...], "answered": [[count], ...]}
"t" is seconds from the client's start ("period_ms" spacing when absent).
"""

import json
import os


class Sampler:
    """Samples a respool --stats-json file into a timeline."""

    def __init__(self, path, mtime_of=os.path.getmtime):
        self.path = path
        self.mtime_of = mtime_of
        self.last = None
        self.names = []
        self.t, self.cap, self.answered = [], [], []

    def poll(self, wall_t0):
        """Take a sample when the file changed since the last poll.
        |wall_t0| is the client's start on the wall clock (time.time())."""
        try:
            m = self.mtime_of(self.path)
            if m == self.last:
                return
            with open(self.path) as f:
                st = json.load(f)
        except (OSError, ValueError):
            return
        self.last = m
        per = {}
        for r in st.get("resolvers") or []:
            if isinstance(r, dict) and r.get("name"):
                per[r["name"]] = r
        for n in per:
            if n not in self.names:
                self.names.append(n)
        self.t.append(round(m - wall_t0, 3))
        self.cap.append([float(per.get(n, {}).get("cap_qps") or 0)
                         for n in self.names])
        self.answered.append([int(per.get(n, {}).get("answered") or 0)
                              for n in self.names])

    def result(self):
        if len(self.t) < 2:
            return None
        k = len(self.names)
        return {"names": self.names, "t": self.t,
                "cap": [row + [0.0] * (k - len(row)) for row in self.cap],
                "answered": [row + [0] * (k - len(row))
                             for row in self.answered]}


def from_client(rec):
    """Moves a client's pool_timeline into rec["timeline"]."""
    c = rec.get("client")
    if isinstance(c, dict) and isinstance(c.get("pool_timeline"), dict):
        tl = c.pop("pool_timeline")
        n = len(tl.get("cap") or [])
        period = float(tl.get("period_ms") or 1000) / 1000.0
        tl["t"] = [round(period * (i + 1), 3) for i in range(n)]
        tl.pop("rate", None)
        rec["timeline"] = tl


def limits_of(setup):
    """The rate limit (q/s) of each resolver of |setup| by fakeres name;
    None for an unlimited one."""
    out = {}
    for i, spec in enumerate(setup.get("resolvers", [])):
        parts = dict(p.split("=", 1) if "=" in p else (p, "")
                     for p in spec.split(",") if p)
        name = parts.get("name", "r%d" % (i + 1))
        rate = float(parts.get("rate", "0") or 0)
        out[name] = rate if rate > 0 else None
    return out


GNUPLOT_CAPS = """set terminal pngcairo size 1000,520 noenhanced
set output "{out}"
set title "{title}"
set xlabel "seconds from the client's start"
set ylabel "queries per second"
set key below horizontal maxcols 3
set grid ytics lc rgb "#dddddd"
set xrange [0:*]
set yrange [0:{ymax}]
set datafile missing "?"
plot {plots}
"""


def plot_caps(res, run_gnuplot, profiles_of, log):
    """caps-SETUP-COLUMN.png in the current directory for each
    rate-limited setup and each column with a timeline: per resolver its
    learned cap (dashed), its answers per second (solid) and its real
    limit (dotted). The round shown is the first good one."""
    made = []
    for s in res["setups"]:
        if not s.get("rate_limited"):
            continue
        limits = limits_of(s)
        profiles = profiles_of(s)
        for c in res["columns"]:
            cell = res["cells"].get(s["name"], {}).get(c["name"])
            rec = next((r for r in (cell or {}).get("rounds", [])
                        if r.get("ok") and r.get("timeline")), None)
            if rec is None or len(rec["timeline"].get("t") or []) < 3 or \
                    not rec["timeline"].get("names"):
                continue  # a round too short to show anything
            tl = rec["timeline"]
            addr_name = {r.get("udp"): r.get("name")
                         for r in rec.get("resolvers", [])}
            names = [addr_name.get(a, a) for a in tl["names"]]
            base = "caps-%s-%s" % (s["name"], c["name"])
            ymax = 1.0
            with open(base + ".dat", "w") as f:
                f.write("t\t" + "\t".join(
                    "cap_%s\tans_%s" % (n, n) for n in names) + "\n")
                prev_t, prev = 0.0, [0] * len(names)
                for t, cap, ans in zip(tl["t"], tl["cap"], tl["answered"]):
                    dt = t - prev_t
                    row = []
                    for i in range(len(names)):
                        rate = (ans[i] - prev[i]) / dt if dt > 0 else 0.0
                        row += ["%.1f" % cap[i] if cap[i] > 0 else "?",
                                "%.1f" % max(rate, 0.0)]
                        ymax = max(ymax, rate, cap[i])
                    f.write("%.3f\t%s\n" % (t, "\t".join(row)))
                    prev_t, prev = t, ans
            for n in names:
                if limits.get(n):
                    ymax = max(ymax, limits[n])
            plots = []
            for i, n in enumerate(names):
                label = profiles.get(n, n)
                plots.append('"%s.dat" using 1:%d with lines lw 2 lc %d '
                             'title "%s answers/s"' % (base, 3 + 2 * i, i + 1,
                                                       label))
                plots.append('"%s.dat" using 1:%d with lines dt 2 lc %d '
                             'title "%s cap"' % (base, 2 + 2 * i, i + 1, n))
                if limits.get(n):
                    plots.append('%g with lines dt 3 lw 2 lc %d title "%s limit"'
                                 % (limits[n], i + 1, n))
            sc = GNUPLOT_CAPS.format(
                out=base + ".png", ymax="%.0f" % (ymax * 1.15),
                plots=", ".join(plots),
                title="%s, %s (round %s): learned caps and answers per "
                      "second" % (s["name"], c["title"], rec.get("round")))
            if run_gnuplot(sc, base + ".gp", log) and \
                    os.path.exists(base + ".png"):
                made.append(os.path.join("plots", base + ".png"))
    return made
