#!/usr/bin/env python3
"""Unit tests of respool_bench.template and respool_bench.columns: the
{placeholder} expansion of column commands and generated files, a column
merged over its tunnel and relay, a setup's physical limit. No processes.
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

from respool_bench.columns import column_def, physical_limit_kbps  # noqa
from respool_bench.template import (TemplateError, subst_argv,  # noqa
                                    subst_str, write_files)


class SubstStr(unittest.TestCase):
    def test_replaces_every_placeholder(self):
        self.assertEqual(subst_str("{a}:{b}/{a}", {"a": "x", "b": 7}),
                         "x:7/x")

    def test_leaves_other_braces(self):
        self.assertEqual(subst_str("{A} {} {1x} {{a}}", {"a": "v"}),
                         "{A} {} {1x} {v}")

    def test_unknown_placeholder(self):
        with self.assertRaisesRegex(TemplateError, r"unknown placeholder "
                                    r"\{nope\} in '-{nope}-'"):
            subst_str("-{nope}-", {})

    def test_list_inside_a_string(self):
        with self.assertRaisesRegex(TemplateError, "must be a whole"):
            subst_str("x{l}", {"l": ["a"]})


class SubstArgv(unittest.TestCase):
    def test_string_split_like_a_shell(self):
        self.assertEqual(subst_argv("cmd 'a b' {p}", {"p": 53}),
                         ["cmd", "a b", "53"])

    def test_list_placeholder_spliced_and_expanded(self):
        ctx = {"transfer": ["--bytes", "{bytes}"], "bytes": 1024,
               "all": ["{flag}", "1.2.3.4:53"], "flag": "-r"}
        self.assertEqual(
            subst_argv(["c", "{transfer}", "{all}", "x{bytes}"], ctx),
            ["c", "--bytes", "1024", "-r", "1.2.3.4:53", "x1024"])

    def test_empty_list_placeholder_vanishes(self):
        self.assertEqual(subst_argv(["c", "{mode_args}", "d"],
                                    {"mode_args": []}), ["c", "d"])

    def test_nesting_too_deep(self):
        with self.assertRaisesRegex(TemplateError, "nest too deep"):
            subst_argv(["{loop}"], {"loop": ["{loop}"]})


class WriteFiles(unittest.TestCase):
    RESOLVERS = [{"udp": "127.0.0.2:5300", "name": "r1"},
                 {"udp": "127.0.0.3:5301", "name": "r2"}]

    def write(self, spec, ctx=None):
        with tempfile.TemporaryDirectory() as wd:
            write_files({"{column}.conf": spec}, dict(ctx or {}, column="c"),
                        self.RESOLVERS, wd)
            with open(os.path.join(wd, "c.conf")) as f:
                return f.read()

    def test_per_resolver_lines_after_the_fixed_ones(self):
        self.assertEqual(self.write({
            "lines": ["port {p}"],
            "per_resolver": "{index} {name} {ip} {port} {addr}"},
            {"p": 9}),
            "port 9\n0 r1 127.0.0.2 5300 127.0.0.2:5300\n"
            "1 r2 127.0.0.3 5301 127.0.0.3:5301\n")

    def test_per_resolver_where_the_lines_say(self):
        self.assertEqual(self.write({
            "lines": ["begin", "{per_resolver}", "end"],
            "per_resolver": "server {addr}"}),
            "begin\nserver 127.0.0.2:5300\nserver 127.0.0.3:5301\nend\n")

    def test_no_files(self):
        write_files(None, {}, [], "/nonexistent")  # nothing written


class ColumnDef(unittest.TestCase):
    DATA = {"tunnels": {"t": {"client": "tc", "server": "ts",
                              "payload_bytes": 100}},
            "relays": {"pool": {"cmd": "respool", "addr": "first_line"}}}

    def test_merged_over_the_tunnel(self):
        cd = column_def(self.DATA, {"name": "c", "tunnel": "t",
                                    "client": "own"})
        self.assertEqual((cd["client"], cd["server"], cd["kind"]),
                         ("own", "ts", "t"))
        self.assertNotIn("relay_def", cd)

    def test_relay_with_override(self):
        cd = column_def(self.DATA, {"name": "c", "tunnel": "t",
                                    "relay": "pool",
                                    "relay_override": {"cmd": "other"}})
        self.assertEqual(cd["relay_def"], {"cmd": "other",
                                           "addr": "first_line"})
        self.assertEqual(self.DATA["relays"]["pool"]["cmd"], "respool")

    def test_unknown_relay(self):
        with self.assertRaisesRegex(TemplateError, "column c: unknown relay"):
            column_def(self.DATA, {"name": "c", "relay": "nosuch"})

    def test_generic_kind_without_a_tunnel(self):
        self.assertEqual(column_def(self.DATA, {"name": "c"})["kind"],
                         "generic")


class PhysicalLimit(unittest.TestCase):
    def test_answered_qps_times_payload(self):
        self.assertEqual(physical_limit_kbps(
            {"rate_limited": True, "answered_qps": 30},
            {"payload_bytes": 100}), 24.0)

    def test_none_when_unlimited_or_unknown(self):
        for setup, col in (({"answered_qps": 30}, {"payload_bytes": 100}),
                           ({"rate_limited": True}, {"payload_bytes": 100}),
                           ({"rate_limited": True, "answered_qps": 30}, {})):
            self.assertIsNone(physical_limit_kbps(setup, col))


if __name__ == "__main__":
    unittest.main()
