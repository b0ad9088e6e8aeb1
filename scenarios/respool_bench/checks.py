"""Checks and gates (gates.json "checks" and "gates") evaluated on a
results dict: a resolver's share of the queries ("share"), one column's
median over another's ("ratio"), a cell's median as a share of the
setup's physical limit ("limit_share"); with "per_round" each round must
pass too, not only the median. Each gives PASS, FAIL, or SKIP when an
input is missing, n/a or failed. Pure: no files, no processes.
"""

from respool_bench.results import fmt_kbps, median_kbps, round_ratios


def judge(vals, lo, hi):
    """FAIL when any value is below lo or above hi (None: no bound)."""
    bad = [v for v in vals if (lo is not None and v < lo) or
           (hi is not None and v > hi)]
    return "FAIL" if bad else "PASS"


def eval_share(res, ch):
    """The named resolvers' median shares of a cell's queries."""
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
    detail = "%s %s: %s" % (ch["setup"], ch["column"], ", ".join(
        "%s %.1f %%" % (n, 100 * v) for n, v in zip(ch["resolvers"], vals)))
    return vals, detail


def eval_ratio(res, ch):
    """Median kbps of num over den (and each round side by side)."""
    a, ea = median_kbps(res, ch["setup"], ch["num"])
    b, eb = median_kbps(res, ch["setup"], ch["den"])
    if a is None or b is None:
        raise LookupError(ea or eb)
    if b <= 0:
        raise LookupError("%s is 0 kbps" % ch["den"])
    v = a / b
    vals = [v]
    detail = "%s: %s %s / %s %s = %.2fx" % (
        ch["setup"], ch["num"], fmt_kbps(a), ch["den"], fmt_kbps(b), v)
    if ch.get("per_round"):
        rv = round_ratios(res, ch["setup"], ch["num"], ch["den"])
        vals = [v] + rv
        detail += ", rounds side by side: %s" % ", ".join(
            "%.2fx" % x for x in rv)
    return vals, detail


def eval_limit_share(res, ch):
    """A cell's median kbps over its physical limit (and each round's)."""
    a, ea = median_kbps(res, ch["setup"], ch["column"])
    cell = res["cells"].get(ch["setup"], {}).get(ch["column"])
    lim = cell and cell.get("limit_kbps")
    if a is None or not lim:
        raise LookupError(ea or "no physical limit")
    v = a / lim
    vals = [v]
    detail = "%s %s: %s of %.0f kbps = %.0f %%" % (
        ch["setup"], ch["column"], fmt_kbps(a), lim, 100 * v)
    if ch.get("per_round"):
        rv = [(x.get("kbps_down") or 0) / lim if x.get("ok") else 0.0
              for x in cell.get("rounds", []) if isinstance(x, dict)]
        vals = [v] + rv
        detail += ", rounds: %s" % ", ".join("%.1f %%" % (100 * x)
                                             for x in rv)
    return vals, detail


KINDS = {"share": eval_share, "ratio": eval_ratio,
         "limit_share": eval_limit_share}


def evaluate(res, checks):
    """Each check of |checks| judged on |res|: a list of {name, type,
    spec, values, result, detail} in the same order."""
    out = []
    for ch in checks:
        r = {"name": ch["name"], "type": ch["type"], "spec": ch}
        lo, hi = ch.get("min"), ch.get("max")
        try:
            kind = KINDS.get(ch["type"])
            if kind is None:
                raise LookupError("unknown check type %s" % ch["type"])
            r["values"], r["detail"] = kind(res, ch)
            r["result"] = judge(r["values"], lo, hi)
            if ch["type"] == "share":
                # results.json keeps its key order: values, result, detail.
                r["detail"] = r.pop("detail")
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
