"""A cell's rounds summarized and read back: the medians over the good
rounds (kbps, per-resolver shares and rates, CPU seconds, copies), a
cell's median or its rounds side by side looked up in a results dict
(results.json), and the figures formatted as the table and the log
print them. Pure: no files, no processes.
"""

import statistics

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


def median_cpu(res, setup, col):
    cell = res["cells"].get(setup, {}).get(col)
    sm = cell and cell["summary"]
    return sm.get("cpu_s_per_mib") if sm and "kbps_down" in sm else None


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


def fmt_kbps(v):
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_cpu(v):
    return "%.3f" % v if v < 1 else "%.2f" % v


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
