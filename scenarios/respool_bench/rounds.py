"""The rounds of the table: for every setup, ROUNDS rounds, each round
over every runnable column in turn (interleaved, so round k's cells ran
side by side), the progress with an ETA on stderr, each cell summarized
(medians) once its rounds are done; on SIGINT/SIGTERM/SIGHUP every
process is stopped and what ran is kept. How a round is run (processes,
or a simulator's records) is the caller's: one_round(setup, cd, rnd).
"""

import signal
import time

from respool_bench.procs import Interrupted, kill_all, on_signal
from respool_bench.results import fmt_kbps, hms, summarize

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Progress:
    """Counts the runs done of total and logs each with the elapsed time
    and an ETA."""

    def __init__(self, total, log):
        self.total = total
        self.done = 0
        self.t_start = time.monotonic()
        self.log = log

    def start(self, s, cd, rnd, rounds):
        el = time.monotonic() - self.t_start
        eta = (el / self.done * (self.total - self.done)) \
            if self.done else None
        self.log("%s / %s / round %d/%d  [%d/%d, %s elapsed%s]" % (
            s["name"], cd["name"], rnd, rounds, self.done + 1, self.total,
            hms(el), (", ETA " + hms(eta)) if eta is not None else ""))

    def finish(self, rec):
        self.done += 1
        if rec.get("ok"):
            self.log("    %s kbps down, %s kbps up (%.1f s)%s" % (
                fmt_kbps(rec["kbps_down"]),
                fmt_kbps(rec["kbps_up"])
                if rec.get("kbps_up") is not None else "?",
                rec["elapsed"],
                ("  " + rec["warning"]) if rec.get("warning") else ""))
        else:
            self.log("    failed: %s" % rec.get("error"))


def new_cells(res, s, cdefs, limit_of):
    """setup s's cells in res, empty; an n/a column's summary says why."""
    cells = res["cells"].setdefault(s["name"], {})
    for cd in cdefs:
        cells[cd["name"]] = {"rounds": [], "limit_kbps": limit_of(s, cd)}
        if "na" in cd:
            cells[cd["name"]]["summary"] = {"na": cd["na"]}
    return cells


def run_setup(res, s, cdefs, rounds, one_round, limit_of, progress):
    """Every round of setup s, interleaved across the runnable columns,
    then each cell's summary."""
    runnable = [cd for cd in cdefs if "na" not in cd]
    cells = new_cells(res, s, cdefs, limit_of)
    for rnd in range(1, rounds + 1):
        for cd in runnable:
            progress.start(s, cd, rnd, rounds)
            rec = one_round(s, cd, rnd)
            cells[cd["name"]]["rounds"].append(rec)
            progress.finish(rec)
    for cd in runnable:
        cells[cd["name"]]["summary"] = summarize(cells[cd["name"]]["rounds"])


def summarize_interrupted(res, setups, runnable):
    """After an interruption: a cell with rounds gets their summary, one
    without "interrupted"."""
    for s in setups:
        for cd in runnable:
            cell = res["cells"].get(s["name"], {}).get(cd["name"])
            if cell is not None and "summary" not in cell:
                cell["summary"] = summarize(cell["rounds"]) \
                    if cell["rounds"] else {"na": "interrupted"}


def run_rounds(res, setups, cdefs, rounds, quick, one_round, limit_of, log):
    """Runs the table into res["cells"]; sets res["interrupted"] and
    res["elapsed_seconds"]. Returns whether it was interrupted."""
    runnable = [cd for cd in cdefs if "na" not in cd]
    for cd in cdefs:
        if "na" in cd:
            log("column %s: n/a (%s)" % (cd["name"], cd["na"]))
    total = len(setups) * len(runnable) * rounds
    progress = Progress(total, log)
    interrupted = False
    log("%d setup(s) x %d column(s) x %d round(s) = %d runs%s" % (
        len(setups), len(runnable), rounds, total,
        " (QUICK)" if quick else ""))
    for sig in SIGNALS:
        signal.signal(sig, on_signal)
    try:
        for s in setups:
            run_setup(res, s, cdefs, rounds, one_round, limit_of, progress)
    except (Interrupted, KeyboardInterrupt) as e:
        interrupted = True
        log("interrupted (%s): stopping every process, writing what ran"
            % (e or "Ctrl-C"))
        kill_all()
        summarize_interrupted(res, setups, runnable)
    finally:
        kill_all()
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    res["interrupted"] = interrupted
    res["elapsed_seconds"] = round(time.monotonic() - progress.t_start, 1)
    return interrupted
