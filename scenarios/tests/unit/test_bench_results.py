#!/usr/bin/env python3
"""Unit tests of a cell's rounds: respool_bench.results (medians over
the good rounds, lookups, round k side by side, formats),
respool_bench.rounds (interleaving, summaries, n/a cells, an
interruption) with a stand-in round, and the pure judgements of
respool_bench.cell (bytes around the tunnel, a relay's address). No
processes are started.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

from respool_bench import rounds as rounds_mod  # noqa: E402
from respool_bench.cell import check_carried, relay_address  # noqa: E402
from respool_bench.procs import Interrupted  # noqa: E402
from respool_bench.results import (fmt_bytes, fmt_cpu, fmt_kbps,  # noqa
                                   hms, median_cpu, median_kbps,
                                   round_ratios, summarize)


def ok_round(kbps, **kw):
    r = {"ok": True, "kbps_down": kbps, "kbps_up": None,
         "fakeres": [{"name": "r1", "share": 0.6, "qps": kbps / 10},
                     {"name": "r2", "share": 0.4, "qps": 1.0}]}
    r.update(kw)
    return r


class Summarize(unittest.TestCase):
    def test_medians_of_the_good_rounds(self):
        s = summarize([ok_round(300), ok_round(100), ok_round(200),
                       {"ok": False, "error": "boom"}])
        self.assertEqual((s["rounds_ok"], s["rounds"], s["kbps_down"]),
                         (3, 4, 200))
        self.assertNotIn("kbps_up", s)
        self.assertEqual(s["resolvers"], {"r1": {"share": 0.6, "qps": 20.0},
                                          "r2": {"share": 0.4, "qps": 1.0}})

    def test_up_cpu_copies_and_partial(self):
        s = summarize([
            ok_round(10, kbps_up=2.0, cpu_s_per_mib=0.5, copies=3,
                     cpu_seconds={"client": 1.0, "total": 2.0}),
            ok_round(20, cpu_s_per_mib=0.7, copies=5, partial=True,
                     client={"bytes_down": 1234},
                     cpu_seconds={"client": 3.0, "total": 4.0})])
        self.assertEqual(s["kbps_down"], 15.0)
        self.assertEqual(s["kbps_up"], 2.0)
        self.assertEqual(s["cpu_s_per_mib"], 0.6)
        self.assertEqual(s["cpu_seconds"], {"client": 2.0, "total": 3.0})
        self.assertEqual(s["copies"], 4.0)
        self.assertEqual((s["partial"], s["partial_bytes"]), (1, [1234]))

    def test_all_failed_keeps_the_last_error(self):
        s = summarize([{"ok": False, "error": "a"}, {"ok": False}])
        self.assertEqual(s, {"rounds_ok": 0, "rounds": 2, "error": "?"})
        self.assertEqual(summarize([])["error"], "not run")


RES = {"cells": {"s": {
    "a": {"summary": {"kbps_down": 50.0, "cpu_s_per_mib": 0.2},
          "rounds": [{"round": 1, "ok": True, "kbps_down": 60},
                     {"round": 2, "ok": False},
                     {"round": 3, "ok": True, "kbps_down": 40}]},
    "b": {"summary": {"kbps_down": 100.0},
          "rounds": [{"round": 1, "ok": True, "kbps_down": 120},
                     {"round": 2, "ok": True, "kbps_down": 100},
                     {"round": 3, "ok": False}]},
    "na": {"summary": {"na": "why"}},
    "bad": {"summary": {"error": "x", "cpu_s_per_mib": 1}}}}}


class Lookups(unittest.TestCase):
    def test_median_kbps(self):
        self.assertEqual(median_kbps(RES, "s", "a"), (50.0, None))
        self.assertEqual(median_kbps(RES, "s", "na"), (None, "na n/a"))
        self.assertEqual(median_kbps(RES, "s", "bad"),
                         (None, "s/bad failed"))
        self.assertEqual(median_kbps(RES, "t", "a"),
                         (None, "t/a not in this run"))

    def test_median_cpu(self):
        self.assertEqual(median_cpu(RES, "s", "a"), 0.2)
        self.assertIsNone(median_cpu(RES, "s", "bad"))
        self.assertIsNone(median_cpu(RES, "s", "gone"))

    def test_round_ratios_side_by_side(self):
        # Round 2 of a failed: 0; round 3 of b failed: left out.
        self.assertEqual(round_ratios(RES, "s", "a", "b"), [0.5, 0.0])
        self.assertEqual(round_ratios(RES, "s", "b", "gone"), [])


class Formats(unittest.TestCase):
    def test_fmt(self):
        self.assertEqual([fmt_kbps(v) for v in (1234.5, 12.345, 1.2345)],
                         ["1234", "12.3", "1.23"])
        self.assertEqual((fmt_cpu(0.12345), fmt_cpu(12.345)),
                         ("0.123", "12.35"))
        self.assertEqual([fmt_bytes(n) for n in (1 << 20, 3072, 1000)],
                         ["1 MiB", "3 KiB", "1000 bytes"])
        self.assertEqual([hms(s) for s in (59.4, 61, 3725)],
                         ["59s", "1m01s", "1h02m05s"])


class Rounds(unittest.TestCase):
    SETUPS = [{"name": "s1"}, {"name": "s2"}]
    CDEFS = [{"name": "a"}, {"name": "n", "na": "not built"}, {"name": "b"}]

    def run_table(self, one_round, rounds=3):
        res = {"cells": {}}
        logs = []
        interrupted = rounds_mod.run_rounds(
            res, self.SETUPS, self.CDEFS, rounds, False, one_round,
            lambda s, cd: 7.0 if s["name"] == "s1" else None, logs.append)
        return res, interrupted, logs

    def test_interleaved_with_medians(self):
        order = []

        def one_round(s, cd, rnd):
            order.append("%s/%s/%d" % (s["name"], cd["name"], rnd))
            return {"ok": True, "kbps_down": 100.0 * rnd, "elapsed": 0.1,
                    "round": rnd}
        res, interrupted, logs = self.run_table(one_round)
        self.assertFalse(interrupted)
        self.assertEqual(order[:6], ["s1/a/1", "s1/b/1", "s1/a/2", "s1/b/2",
                                     "s1/a/3", "s1/b/3"])
        self.assertEqual(len(order), 12)
        a = res["cells"]["s1"]["a"]
        self.assertEqual((a["summary"]["kbps_down"], a["limit_kbps"]),
                         (200.0, 7.0))
        self.assertEqual(res["cells"]["s2"]["n"],
                         {"rounds": [], "limit_kbps": None,
                          "summary": {"na": "not built"}})
        self.assertIn("column n: n/a (not built)", logs)
        self.assertIn("2 setup(s) x 2 column(s) x 3 round(s) = 12 runs",
                      logs)
        self.assertIn("    300 kbps down, ? kbps up (0.1 s)", logs)
        self.assertIn("elapsed_seconds", res)

    def test_interrupted_keeps_what_ran(self):
        calls = []

        def one_round(s, cd, rnd):
            calls.append(1)
            if len(calls) == 4:
                raise Interrupted("signal 2")
            return {"ok": False, "error": "e", "elapsed": 0.0}
        res, interrupted, logs = self.run_table(one_round)
        self.assertTrue(interrupted and res["interrupted"])
        cells = res["cells"]["s1"]
        self.assertEqual(cells["a"]["summary"]["rounds"], 2)
        self.assertEqual(cells["b"]["summary"]["rounds"], 1)
        self.assertNotIn("s2", res["cells"])
        self.assertTrue(any(l.startswith("interrupted (signal 2)")
                            for l in logs))


class CellJudgements(unittest.TestCase):
    def test_more_bytes_than_the_answers_carry(self):
        r = {"ok": True, "client": {"bytes_down": 8256978944},
             "fakeres": [{"answered": 6}, {"answered": 2}]}
        check_carried(r, {})
        self.assertFalse(r["ok"])
        self.assertIn("around the tunnel", r["error"])

    def test_bytes_that_fit_and_columns_off_dns(self):
        k = {"ok": True, "client": {"bytes_down": 10 ** 6},
             "fakeres": [{"answered": 1200}]}
        check_carried(k, {})
        off = {"ok": True, "client": {"bytes_down": 10 ** 9},
               "fakeres": [{"answered": 1}]}
        check_carried(off, {"through_dns": False})
        self.assertTrue(k["ok"] and off["ok"])

    def test_relay_address(self):
        self.assertEqual(relay_address("udp://127.0.0.1:53 ready",
                                       "first_line", {}), "127.0.0.1:53")
        self.assertEqual(relay_address('{"listen": "127.0.0.1:54"}',
                                       "first_line", {}), "127.0.0.1:54")
        self.assertEqual(relay_address("", "first_line", {}), "")
        self.assertEqual(relay_address("x", "127.0.0.1:{relay_port}",
                                       {"relay_port": 9}), "127.0.0.1:9")


if __name__ == "__main__":
    unittest.main()
