#!/usr/bin/env python3
"""Unit tests of tools/sim_vs_loopback.py: the ratio of each cell, its
mark past the tolerance (15 % rate-limited, 30 % otherwise), the winner
per row, the off cells listed under the model that decides them, a
marked cell within its loopback rounds' range said so, and a loopback
round that did not finish counted over the time it ran, and the tunnel
server's retransmissions, empty answers, timeouts and answers that
found the window full set side by side, and the cells run again on
loopback (--again) beside the baseline and the model.
"""

import importlib.util
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools",
                    "sim_vs_loopback.py")
spec = importlib.util.spec_from_file_location("sim_vs_loopback", TOOL)
svl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(svl)

SETUPS = [{"name": "one-limited", "rate_limited": True},
          {"name": "one-unlimited"}]
COLUMNS = [{"name": "dnstt-first", "title": "DNSTT first", "tunnel": "dnstt",
            "mode": "direct-first"},
           {"name": "dnstt-dnsdist", "title": "DNSTT dnsdist",
            "tunnel": "dnstt", "mode": "dnsdist"},
           {"name": "real-md-respool", "title": "real MD respool",
            "tunnel": "real-masterdns", "mode": "respool"}]


def write(d, kbps, rounds=None):
    cells = {}
    for (s, c), v in kbps.items():
        cells.setdefault(s, {})[c] = {"summary": {"kbps_down": v}}
    for (s, c), rs in (rounds or {}).items():
        cells[s][c]["rounds"] = rs
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"setups": SETUPS, "columns": COLUMNS, "cells": cells,
                   "rounds": 1, "command": "test"}, f)


class SimVsLoopback(unittest.TestCase):
    def run_tool(self, sim, lb, lb_rounds=None, sim_rounds=None,
                 again=None, again_rounds=None):
        """Runs the tool on |sim| and |lb| (and a rerun |again| with
        --again); returns its Markdown."""
        with tempfile.TemporaryDirectory() as a, \
                tempfile.TemporaryDirectory() as b, \
                tempfile.TemporaryDirectory() as c:
            write(a, sim, sim_rounds)
            write(b, lb, lb_rounds)
            out = os.path.join(a, "out.md")
            extra = []
            if again is not None:
                write(c, again, again_rounds)
                extra = ["--again", c]
            self.assertEqual(svl.main(["x", a, b, out] + extra), 0)
            with open(out) as f:
                return f.read()

    def test_marks_winners_models(self):
        lb = {("one-limited", "dnstt-first"): 200.0,
              ("one-limited", "dnstt-dnsdist"): 100.0,
              ("one-limited", "real-md-respool"): 100.0,
              ("one-unlimited", "dnstt-first"): 1000.0,
              ("one-unlimited", "dnstt-dnsdist"): 800.0,
              ("one-unlimited", "real-md-respool"): 500.0}
        sim = dict(lb)
        # Limited: 1.14x is within 15 %, 1.20x is not.
        sim[("one-limited", "dnstt-dnsdist")] = 114.0
        sim[("one-limited", "real-md-respool")] = 120.0
        # Unlimited: 1.29x within 30 %, and a winner that differs.
        sim[("one-unlimited", "dnstt-dnsdist")] = 1032.0
        sim[("one-unlimited", "real-md-respool")] = 1400.0
        text = self.run_tool(sim, lb)
        self.assertIn("114 / 100 (1.14x) |", text)
        self.assertIn("120 / 100 (1.20x) ! |", text)
        self.assertIn("1032 / 800 (1.29x) |", text)
        self.assertIn("| yes (DNSTT first) |", text)
        self.assertIn("| no: real MD respool / DNSTT first (loopback "
                      "+100.0 %, model +40.0 %) |", text)
        self.assertIn("Within the tolerance: 4 of 6 cells; the same winner "
                      "in 1 of 2 rows.", text)
        self.assertIn("- the real MasterDnsVPN model", text)
        self.assertIn("2 cells: one-limited real MD respool 1.20x; "
                      "one-unlimited real MD respool 2.80x.", text)
        self.assertNotIn("dnsdist relay model", text)

    def test_unfinished_rounds(self):
        # Two rounds stalled after 16 KiB in a 90 s run (the table's
        # figure, 120 kbps, is their rate while bytes arrived), one
        # finished at 180: the median of 1.46, 1.46 and 180.
        lb = {("one-limited", "dnstt-first"): 200.0,
              ("one-limited", "dnstt-dnsdist"): 120.0,
              ("one-limited", "real-md-respool"): 100.0}
        stalled = {"kbps_down": 120.0, "client_seconds_wall": 90.0,
                   "client": {"complete": False, "bytes_down": 16384}}
        done = {"kbps_down": 180.0, "client_seconds_wall": 6.0,
                "client": {"complete": True, "bytes_down": 131072}}
        rounds = {("one-limited", "dnstt-dnsdist"): [stalled, done, stalled]}
        sim = dict(lb)
        sim[("one-limited", "dnstt-dnsdist")] = 45.0
        text = self.run_tool(sim, lb, rounds)
        # 45 lies between a stalled round and the finished one.
        self.assertIn("45 / 1.5 (30.90x) ! (within loopback's rounds, "
                      "1.5-180) (loopback: 2 of 3 rounds unfinished, 16384, "
                      "16384 bytes)", text)
        self.assertIn("200 / 200 (1.00x) |", text)

    def test_within_loopback_rounds(self):
        # Loopback rounds 158, 162 and 195 (median 162): a model at 195 is
        # 1.20x off the median but one of loopback's rounds; one at 200
        # is outside them; a cell within the tolerance says nothing.
        lb = {("one-limited", "dnstt-first"): 200.0,
              ("one-limited", "dnstt-dnsdist"): 162.0,
              ("one-limited", "real-md-respool"): 162.0}
        rs = [{"kbps_down": k} for k in (162.0, 158.0, 195.0)]
        rounds = {("one-limited", "dnstt-dnsdist"): rs,
                  ("one-limited", "real-md-respool"): rs,
                  ("one-limited", "dnstt-first"): [{"kbps_down": 190.0},
                                                   {"kbps_down": 210.0}]}
        sim = dict(lb)
        sim[("one-limited", "dnstt-dnsdist")] = 195.0
        sim[("one-limited", "real-md-respool")] = 200.0
        text = self.run_tool(sim, lb, rounds)
        self.assertIn("195 / 162 (1.20x) ! (within loopback's rounds, "
                      "158-195) |", text)
        self.assertIn("200 / 162 (1.23x) ! |", text)
        self.assertIn("200 / 200 (1.00x) |", text)
        self.assertIn("one-limited DNSTT dnsdist 1.20x (within loopback's "
                      "rounds).", text)
        self.assertIn("Of the 2 cells further off, 1 lies within the range "
                      "of their loopback rounds.", text)

    def test_server_section(self):
        # The server's retransmissions and empty answers per 100 answers,
        # medians of the rounds, where either side retransmits 1 or more;
        # a side without the counters (a real tunnel's tcp_measure) is
        # left out, and so is a cell where both sides stay under 1.
        lb = {("one-unlimited", "dnstt-first"): 1000.0,
              ("one-unlimited", "dnstt-dnsdist"): 800.0,
              ("one-unlimited", "real-md-respool"): 500.0}

        def srv(retx, empty, answers=1000, timeouts=None, full=None):
            sv = {"server": "dnstt", "answers": answers,
                  "retransmissions": retx, "answered_empty": empty}
            if timeouts is not None:
                sv["timeouts"] = timeouts
                sv["window_full"] = full
            return {"kbps_down": 1.0, "server": sv}
        sim_rounds = {
            ("one-unlimited", "dnstt-first"): [srv(0, 0), srv(5, 0)],
            ("one-unlimited", "dnstt-dnsdist"): [srv(0, 10, 1000, 0, 10),
                                                 srv(2, 30, 1000, 1, 30),
                                                 srv(4, 20, 1000, 2, 20)],
            ("one-unlimited", "real-md-respool"): [srv(0, 0)]}
        lb_rounds = {
            ("one-unlimited", "dnstt-first"): [srv(1, 0), srv(3, 0)],
            ("one-unlimited", "dnstt-dnsdist"): [srv(170, 0, 1000),
                                                 srv(90, 0, 500)],
            ("one-unlimited", "real-md-respool"): [
                {"kbps_down": 1.0, "server": {"server": "tcp_measure"}}]}
        text = self.run_tool(dict(lb), lb, lb_rounds, sim_rounds)
        self.assertIn("## The tunnel server's retransmissions", text)
        # The timeouts and the answers that found the window full: the
        # loopback rounds here predate those counters ("-").
        self.assertIn("| one-unlimited | DNSTT dnsdist | 0.2 / 17.5 | "
                      "2.0 / 0.0 | 0.1 / - | 2.0 / - |", text)
        self.assertNotIn("| one-unlimited | DNSTT first |", text)
        self.assertNotIn("| one-unlimited | real MD respool |", text)
        # No cell at 1 or more: no section.
        text = self.run_tool(dict(lb), lb, None, None)
        self.assertNotIn("retransmissions", text)

    def test_again(self):
        # The baseline, the model and a rerun of three cells (one-limited
        # is rate-limited: 15 %; one-unlimited 30 %):
        # - dnstt-dnsdist, limited: model 150 against 100 (off); the rerun
        #   140 (130-160) moved 40 % and the model is 1.07x of it;
        # - real-md-respool, limited: model 120 against 100 (off); the
        #   rerun 104 held, and the model is 1.154x of it: still off;
        # - one-unlimited dnstt-first: within, run again for context.
        lb = {("one-limited", "dnstt-first"): 200.0,
              ("one-limited", "dnstt-dnsdist"): 100.0,
              ("one-limited", "real-md-respool"): 100.0,
              ("one-unlimited", "dnstt-first"): 1000.0}
        sim = dict(lb)
        sim[("one-limited", "dnstt-dnsdist")] = 150.0
        sim[("one-limited", "real-md-respool")] = 120.0
        again = {("one-limited", "dnstt-dnsdist"): 140.0,
                 ("one-limited", "real-md-respool"): 104.0,
                 ("one-unlimited", "dnstt-first"): 900.0}
        rounds = {("one-limited", "dnstt-dnsdist"): [
            {"kbps_down": k} for k in (130.0, 140.0, 160.0)]}
        text = self.run_tool(sim, lb, again=again, again_rounds=rounds)
        self.assertIn("## The cells run again on loopback", text)
        self.assertIn("| one-limited | DNSTT dnsdist | 150 ! | 100 | "
                      "140 (130-160) | 1.40x ! | 1.07x |", text)
        self.assertIn("| one-limited | real MD respool | 120 ! | 100 | "
                      "104 | 1.04x | 1.15x ! |", text)
        self.assertIn("| one-unlimited | DNSTT first | 1000 | 1000 | 900 | "
                      "0.90x | 1.11x |", text)
        self.assertIn("Of the 2 cells further off run again, 1 moved on "
                      "loopback by more than their tolerance between the two "
                      "runs, and 1 is within the tolerance of the rerun.",
                      text)
        # Without --again, no such section.
        self.assertNotIn("run again", self.run_tool(sim, lb))

    def test_bad_usage(self):
        # --again without a directory, or a directory without
        # results.json: exit status 2.
        with tempfile.TemporaryDirectory() as a:
            write(a, {("one-limited", "dnstt-first"): 1.0})
            self.assertEqual(svl.main(["x", a, a, "--again"]), 2)
            self.assertEqual(svl.main(["x", a, a, "--again",
                                       os.path.join(a, "no")]), 2)
            self.assertEqual(svl.main(["x", a]), 2)

    def test_model_of(self):
        self.assertIn("dnsdist", svl.model_of({"tunnel": "dnstt",
                                               "mode": "dnsdist"}))
        self.assertIn("real dnstt", svl.model_of({"tunnel": "real-dnstt",
                                                  "mode": "dnsdist"}))
        self.assertIn("minimal DNSTT", svl.model_of({"tunnel": "dnstt-orig",
                                                     "mode": "respool"}))


if __name__ == "__main__":
    unittest.main()
