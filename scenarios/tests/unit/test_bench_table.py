#!/usr/bin/env python3
"""Unit tests of respool_bench.table: table.md rendered from a small
results dict, section by section, and its cells (n/a, fail, share of the
limit, partial, [k/n], the queries per resolver with copies).
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

from respool_bench.table import (cell_text, make_table, md_grid,  # noqa
                                 queries_text)


def results(cpu=True):
    first = {"rounds_ok": 3, "rounds": 3, "kbps_down": 40.0,
             "resolvers": {"r1": {"share": 1.0, "qps": 30.0,
                                  "refused": 12}}}
    pool = {"rounds_ok": 2, "rounds": 3, "kbps_down": 120.0,
            "partial": 1, "partial_bytes": [1000],
            "resolvers": {"r1": {"share": 0.25, "qps": 29.6},
                          "r2": {"share": 0.75}},
            "copies": 4, "hedges": 1, "copies_data": 1, "copies_repeat": 3}
    if cpu:
        first["cpu_s_per_mib"] = 0.5
        pool["cpu_s_per_mib"] = 0.25
    return {
        "command": "scenarios/runner.py --quick", "rounds": 3,
        "quick": True, "transfer_note": "1 MiB through rate-limited setups"
        ", 5 s otherwise",
        "setups": [{"name": "lim", "rate_limited": True,
                    "limits": {"dnstt": 160.0}},
                   {"name": "open"}],
        "columns": [{"name": "first", "title": "First"},
                    {"name": "pool", "title": "Pool"},
                    {"name": "gone", "title": "Gone"}],
        "ratios": [{"num": "pool", "den": "first", "title": "pool/first"},
                   {"num": "pool", "den": "nosuch",
                    "title": "pool/nosuch"}],
        "cells": {"lim": {"first": {"summary": first, "limit_kbps": 160.0},
                          "pool": {"summary": pool, "limit_kbps": 160.0},
                          "gone": {"summary": {"na": "not built"}}},
                  "open": {"first": {"summary": {"rounds_ok": 0,
                                                 "rounds": 1,
                                                 "error": "timeout"}}}},
        "checks": [{"result": "PASS", "name": "c1", "detail": "d1"}],
        "gates": [{"result": "FAIL", "name": "g1", "detail": "d2"}]}


class Cells(unittest.TestCase):
    def test_cell_text(self):
        self.assertEqual(cell_text(None, None), "-")
        self.assertEqual(cell_text({"na": "x"}, None), "n/a")
        self.assertEqual(cell_text({"rounds": 1, "rounds_ok": 0}, None),
                         "fail")
        self.assertEqual(cell_text({"kbps_down": 120.0, "rounds_ok": 2,
                                    "rounds": 3, "partial": 1}, 160.0),
                         "120 (75 %)* [2/3]")

    def test_md_grid(self):
        self.assertEqual(md_grid([{"name": "s"}], [{"title": "A"},
                                                   {"title": "B"}],
                                 lambda s, h: s["name"] + h["title"]),
                         ["| setup | A | B |", "|---|---|---|",
                          "| s | sA | sB |", ""])

    def test_queries_text(self):
        self.assertEqual(queries_text(None), "-")
        self.assertEqual(queries_text(results()["cells"]["lim"]["pool"][
            "summary"]), "r1 25% (30)<br>r2 75%<br>copies 4 hedges 1 "
            "(25 % of judged copies carried data)")
        self.assertEqual(queries_text({"resolvers": {"r1": {
            "share": 1.0, "dropped": 2, "lost": 1}}}), "r1 100% D2 L1")


class Table(unittest.TestCase):
    def setUp(self):
        self.lines = make_table(results()).split("\n")

    def section(self, title):
        i = self.lines.index(title)
        j = next((k for k in range(i + 1, len(self.lines))
                  if self.lines[k].startswith("## ")), len(self.lines))
        return self.lines[i:j]

    def test_kbps_grid_and_limits(self):
        self.assertEqual(self.lines[0], "# respool scenario table")
        self.assertTrue(self.lines[2].startswith(
            "Median download kbps of 3 round(s) (QUICK); 1 MiB through"))
        self.assertEqual(self.lines[4:9], [
            "| setup | First | Pool | Gone |", "|---|---|---|---|",
            "| lim | 40.0 (25 %) | 120 (75 %)* [2/3] | n/a |",
            "| open | fail | - | - |", ""])
        self.assertIn("Physical limits (kbps): lim dnstt 160.", self.lines)

    def test_ratios_only_of_columns_in_the_table(self):
        self.assertEqual(self.section("## Ratios")[4:7], [
            "| setup | pool/first |", "|---|---|", "| lim | 3.00x |"])
        self.assertNotIn("pool/nosuch", "\n".join(self.lines))

    def test_cpu_section_with_efficiency_ratios(self):
        sec = self.section("## CPU seconds per MiB")
        self.assertIn("| lim | 0.500 | 0.250 | - |", sec)
        self.assertIn("| lim | 2.00x |", sec)
        lines = make_table(results(cpu=False)).split("\n")
        self.assertNotIn("## CPU seconds per MiB", lines)

    def test_queries_notes_checks_command(self):
        self.assertIn("| lim | r1 100% (30) R12 | r1 25% (30)<br>r2 75%<br>"
                      "copies 4 hedges 1 (25 % of judged copies carried "
                      "data) | - |", self.section("## Queries per resolver"))
        self.assertEqual(self.section("## Notes")[2:5], [
            "- lim / pool: * 1 of 2 rounds did not finish the transfer "
            "within the client's time limit (bytes that arrived: 1000); "
            "the figure counts them at the rate of what arrived",
            "- gone: n/a (not built)",
            "- open / first: fail (timeout)"])
        self.assertEqual(self.section("## Checks (they decide QUICK runs)")[
            2], "- PASS: c1 (d1)")
        self.assertEqual(self.section("## Gate")[2:], [
            "- FAIL: g1 (d2)", "", "Command: `scenarios/runner.py --quick`",
            ""])

    def test_na_note_once_for_many_setups(self):
        res = results()
        res["cells"]["open"]["gone"] = {"summary": {"na": "not built"}}
        text = make_table(res)
        self.assertEqual(text.count("- gone: n/a (not built)"), 1)


if __name__ == "__main__":
    unittest.main()
