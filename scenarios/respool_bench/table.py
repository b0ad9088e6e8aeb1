"""table.md rendered from a results dict (results.json): the median kbps
grid (rate-limited cells also as a share of the physical limit), the
physical limits, the ratios, CPU seconds per MiB, the queries per
resolver, the notes (n/a, fail, partial), the checks and gates, the
command. Pure: a dict in, the text out.
"""

from respool_bench.results import (fmt_cpu, fmt_kbps, median_cpu,
                                   median_kbps)


def cell_text(summary, limit):
    """A cell of the kbps grid: the median, "(N %)" of the limit, "*"
    for partial transfers, "[k/n]" when only k of n rounds succeeded."""
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


def summary_of(res, setup, col):
    """The summary of cell setup/col, None when it is not in res."""
    cell = res["cells"].get(setup, {}).get(col)
    return cell and cell["summary"]


def kbps_section(res):
    """The title, the legend and the median kbps grid."""
    out = ["# respool scenario table\n"]
    out.append("Median download kbps of %d round(s)%s; %s. Rate-limited "
               "cells also as a share of the physical limit (answered q/s "
               "x payload bytes x 8). `n/a`/`fail`: see notes below. "
               "[k/n]: only k of n rounds succeeded.\n" % (
                   res["rounds"], " (QUICK)" if res["quick"] else "",
                   res["transfer_note"]))

    def kbps_cell(s, c):
        cell = res["cells"].get(s["name"], {}).get(c["name"])
        return cell_text(cell and cell["summary"],
                         cell and cell.get("limit_kbps"))
    return out + md_grid(res["setups"], res["columns"], kbps_cell)


def limits_section(res):
    lim = [s for s in res["setups"] if s.get("rate_limited")]
    if not lim:
        return []
    return ["Physical limits (kbps): " + "; ".join(
        "%s %s" % (s["name"], ", ".join(
            "%s %.0f" % (k, v) for k, v in s.get("limits", {}).items()))
        for s in lim) + ".\n"]


def table_ratios(res):
    """columns.json "ratios" whose two columns are both in the table."""
    names = {c["name"] for c in res["columns"]}
    return [r for r in res.get("ratios", [])
            if r["num"] in names and r["den"] in names]


def ratios_section(res, rat):
    if not rat:
        return []
    out = ["## Ratios\n",
           "Median kbps of one column over another, per setup.\n"]
    return out + md_grid(res["setups"], rat, lambda s, r: ratio_text(
        median_kbps(res, s["name"], r["num"])[0],
        median_kbps(res, s["name"], r["den"])[0]))


def cpu_section(res, rat):
    """Efficiency: CPU seconds of all the cell's processes per MiB moved
    (and the ratios of it), when any cell has it."""
    if not any("cpu_s_per_mib" in (cell.get("summary") or {})
               for row in res["cells"].values() for cell in row.values()):
        return []
    out = ["## CPU seconds per MiB\n"]
    out.append("Median CPU seconds (user + system) that all processes "
               "of a cell (tunnel client and server, fake resolvers, "
               "relay) used while the client ran, per MiB it moved "
               "(down + up). Lower is better; on the CPU-bound "
               "unlimited setups this compares cells by efficiency as "
               "well as by kbps.\n")

    def cpu_text(s, c):
        sm = summary_of(res, s["name"], c["name"])
        v = (sm or {}).get("cpu_s_per_mib")
        return fmt_cpu(v) if v is not None else "-"
    out += md_grid(res["setups"], res["columns"], cpu_text)
    if rat:
        out.append("Efficiency ratios: MiB per CPU second of one column "
                   "over another (the other's CPU s per MiB over this "
                   "one's); >= 1.00x: no less efficient.\n")
        out += md_grid(res["setups"], rat, lambda s, r: ratio_text(
            median_cpu(res, s["name"], r["den"]),
            median_cpu(res, s["name"], r["num"])))
    return out


def queries_text(sm):
    """A cell of the queries grid: each resolver's share (q/s, refused,
    dropped, lost), then the pool's copies and hedges."""
    if not sm or not sm.get("resolvers"):
        return "-"
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
        judged = (sm.get("copies_data") or 0) + (sm.get("copies_repeat") or 0)
        if judged:
            p += " (%.0f %% of judged copies carried data)" % (
                100.0 * (sm.get("copies_data") or 0) / judged)
        parts.append(p)
    return "<br>".join(parts)


def queries_section(res):
    out = ["## Queries per resolver\n"]
    out.append("Median share of the queries the fake resolvers received "
               "(q/s in brackets; R = refused, D = dropped past the limit, "
               "L = lost).\n")
    return out + md_grid(res["setups"], res["columns"], lambda s, c:
                         queries_text(summary_of(res, s["name"], c["name"])))


def cell_note(s, c, sm):
    """The note on cell s/c (n/a, fail, partial rounds), or None."""
    if "na" in sm:
        return "%s: n/a (%s)" % (c["name"], sm["na"])
    if "kbps_down" not in sm:
        return "%s / %s: fail (%s)" % (s["name"], c["name"],
                                       sm.get("error", "?"))
    if sm.get("partial"):
        return ("%s / %s: * %d of %d rounds did not finish the transfer "
                "within the client's time limit (bytes that arrived: %s); "
                "the figure counts them at the rate of what arrived" % (
                    s["name"], c["name"], sm["partial"], sm["rounds_ok"],
                    ", ".join(str(b) for b in sm["partial_bytes"])))
    return None


def notes_section(res):
    notes = []
    for s in res["setups"]:
        for c in res["columns"]:
            cell = res["cells"].get(s["name"], {}).get(c["name"])
            n = cell and cell_note(s, c, cell["summary"])
            if n and n not in notes:
                notes.append(n)
    if not notes:
        return []
    return ["## Notes\n"] + ["- " + n for n in notes] + [""]


def checks_section(res):
    out = []
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
    return out


def make_table(res):
    """table.md of results dict |res|."""
    rat = table_ratios(res)
    out = (kbps_section(res) + limits_section(res) +
           ratios_section(res, rat) + cpu_section(res, rat) +
           queries_section(res) + notes_section(res) + checks_section(res))
    out.append("Command: `%s`" % res["command"])
    return "\n".join(out) + "\n"
