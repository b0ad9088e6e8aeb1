#!/usr/bin/env python3
"""Unit tests of respool_bench.checks: share, ratio and limit_share
checks (with and without per_round) judged PASS, FAIL or SKIP on a small
results dict, with the exact detail text the table and stdout show.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

from respool_bench.checks import evaluate, judge  # noqa: E402


def cell(*kbps, limit=None):
    """A cell whose round k got kbps[k] (None: failed); the summary's
    median is the middle one, as summarize would give for odd counts."""
    rounds = [{"round": i + 1, "ok": v is not None, "kbps_down": v}
              for i, v in enumerate(kbps)]
    c = {"summary": {"kbps_down": sorted(v or 0 for v in kbps)[
        len(kbps) // 2]}, "rounds": rounds}
    if limit:
        c["limit_kbps"] = limit
    return c


def results():
    shares = {"summary": {"kbps_down": 10.0, "resolvers": {
        "r1": {"share": 0.5}, "r2": {"share": 0.3}, "r3": {"share": 0.2}}}}
    return {"cells": {"s": {
        "a": cell(110, 120, 80), "b": cell(100, 100, 100),
        "c": cell(110, None, 130), "zero": {"summary": {"kbps_down": 0.0}},
        "l": cell(50, 47, 44, limit=100), "sh": shares,
        "na": {"summary": {"na": "not built"}},
        "bad": {"summary": {"rounds_ok": 0, "error": "x"}}}}}


def one(check):
    return evaluate(results(), [check])[0]


RATIO = {"name": "x", "type": "ratio", "setup": "s", "den": "b", "min": 1.0}
LIMIT = {"name": "y", "type": "limit_share", "setup": "s", "column": "l",
         "min": 0.45}
SHARE = {"name": "z", "type": "share", "setup": "s", "column": "sh",
         "resolvers": ["r2", "r3"], "max": 0.3}


class Judge(unittest.TestCase):
    def test_bounds(self):
        self.assertEqual(judge([1, 2], 1, 2), "PASS")
        self.assertEqual(judge([0.99], 1, None), "FAIL")
        self.assertEqual(judge([2.01], None, 2), "FAIL")
        self.assertEqual(judge([], 1, 2), "PASS")


class Ratio(unittest.TestCase):
    def test_median_passes(self):
        r = one(dict(RATIO, num="a"))
        self.assertEqual(r["result"], "PASS")
        self.assertEqual(r["values"], [1.1])
        self.assertEqual(r["detail"], "s: a 110 / b 100 = 1.10x; "
                         "wants >= 1")

    def test_per_round_fails_on_one_round(self):
        r = one(dict(RATIO, num="a", per_round=True))
        self.assertEqual(r["result"], "FAIL")
        self.assertEqual(r["detail"], "s: a 110 / b 100 = 1.10x, rounds "
                         "side by side: 1.10x, 1.20x, 0.80x; wants >= 1")

    def test_per_round_failed_round_counts_zero(self):
        r = one(dict(RATIO, num="c", per_round=True))
        self.assertEqual((r["result"], r["values"][1:]),
                         ("FAIL", [1.1, 0.0, 1.3]))

    def test_skips(self):
        for num, den, why in (("na", "b", "na n/a"),
                              ("bad", "b", "s/bad failed"),
                              ("gone", "b", "s/gone not in this run"),
                              ("a", "zero", "zero is 0 kbps")):
            r = one(dict(RATIO, num=num, den=den))
            self.assertEqual((r["result"], r["detail"]), ("SKIP", why))
            self.assertNotIn("values", r)

    def test_max_bound(self):
        r = one(dict(RATIO, num="a", min=None, max=1.05))
        self.assertEqual(r["result"], "FAIL")
        self.assertTrue(r["detail"].endswith("; wants <= 1.05"))


class LimitShare(unittest.TestCase):
    def test_median_and_per_round(self):
        med, rnd = evaluate(results(), [LIMIT, dict(LIMIT, per_round=True)])
        self.assertEqual(med["result"], "PASS")
        self.assertEqual(med["detail"], "s l: 47.0 of 100 kbps = 47 %; "
                         "wants >= 0.45")
        self.assertEqual(rnd["result"], "FAIL")
        self.assertEqual(rnd["values"], [0.47, 0.5, 0.47, 0.44])
        self.assertIn(", rounds: 50.0 %, 47.0 %, 44.0 %;", rnd["detail"])

    def test_no_limit_skips(self):
        r = one(dict(LIMIT, column="b"))
        self.assertEqual((r["result"], r["detail"]),
                         ("SKIP", "no physical limit"))


class Share(unittest.TestCase):
    def test_pass_and_key_order(self):
        r = one(SHARE)
        self.assertEqual(r["result"], "PASS")
        self.assertEqual(r["detail"], "s sh: r2 30.0 %, r3 20.0 %; "
                         "wants <= 0.3")
        self.assertEqual(list(r), ["name", "type", "spec", "values",
                                   "result", "detail"])

    def test_fail(self):
        self.assertEqual(one(dict(SHARE, max=0.25))["result"], "FAIL")

    def test_skips(self):
        for col, res, why in (("na", None, "s/na n/a"),
                              ("bad", None, "s/bad failed"),
                              ("gone", None, "s/gone not in this run"),
                              ("sh", ["r9"], "no share for r9")):
            ch = dict(SHARE, column=col)
            if res:
                ch["resolvers"] = res
            r = one(ch)
            self.assertEqual((r["result"], r["detail"]), ("SKIP", why))


class Other(unittest.TestCase):
    def test_unknown_type_skips(self):
        r = one({"name": "u", "type": "nosuch"})
        self.assertEqual((r["result"], r["detail"]),
                         ("SKIP", "unknown check type nosuch"))

    def test_order_kept(self):
        names = [r["name"] for r in evaluate(results(), [
            dict(RATIO, num="a", name="1"), dict(LIMIT, name="2"),
            dict(SHARE, name="3")])]
        self.assertEqual(names, ["1", "2", "3"])


if __name__ == "__main__":
    unittest.main()
