#!/usr/bin/env python3
"""Unit tests of tools/md_capture.py: the report of a capture (queries
by kind with their copies and answers, answers with data per 100 ms, the
pings' gaps and their part past 100 ms and the first traffic), the
download's gaps and copies read from the answers' packet headers, a bad
log line named, the relay in front of a UDP echo server on loopback, and the
columns file that wraps a column's client.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools")
TOOL = os.path.join(TOOLS, "md_capture.py")
sys.path.insert(0, TOOLS)
import md_capture as mdc  # noqa: E402


def query(qid, size):
    return bytes([qid >> 8, qid & 255, 1, 0]) + bytes(size - 4)


def answer(qid, rcode, size):
    return bytes([qid >> 8, qid & 255, 0x81, 0x80 | rcode]) + bytes(size - 4)


class ReportTest(unittest.TestCase):
    def test_kinds_pings_and_data(self):
        ev = [
            # A ping of two copies, both answered with data 0.8 ms later.
            (1.0000, 0, "Q", query(1, 57)), (1.0001, 1, "Q", query(2, 57)),
            (1.0008, 0, "A", answer(1, 0, 1400)),
            (1.0009, 1, "A", answer(2, 0, 1400)),
            # One ack, three copies: one refused, one dropped.
            (1.0010, 0, "Q", query(3, 52)), (1.0010, 1, "Q", query(4, 52)),
            (1.0011, 2, "Q", query(5, 52)),
            (1.0012, 0, "A", answer(3, 5, 52)),
            (1.0020, 1, "A", answer(4, 0, 1400)),
            # Two acks, refused.
            (1.0030, 0, "Q", query(6, 69)), (1.0031, 0, "A", answer(6, 5, 69)),
            # The next ping 102 ms after the first.
            (1.1020, 0, "Q", query(7, 57)),
        ]
        r = mdc.report(ev)
        self.assertEqual(r["kinds"]["ping"],
                         {"queries": 2, "copies": 3, "answered": 1,
                          "answers": 2})
        self.assertEqual(r["kinds"]["ack1"],
                         {"queries": 1, "copies": 3, "answered": 1,
                          "answers": 1})
        self.assertEqual(r["kinds"]["ack2"]["answered"], 0)
        self.assertEqual(r["data_answers"], 3)
        self.assertEqual(r["data_per_100ms"][10], 3)
        self.assertAlmostEqual(r["ping_gap_ms"]["median"], 102.0, places=3)
        # 102 ms less 100 less the 0.8 ms to its first answer with data.
        self.assertAlmostEqual(r["ping_late_ms"]["median"], 1.2, places=3)

    def test_kind_by_size(self):
        self.assertEqual(mdc.query_kind(52), "ack1")
        self.assertEqual(mdc.query_kind(69), "ack2")
        self.assertEqual(mdc.query_kind(80), "ack3")
        self.assertEqual(mdc.query_kind(281), "upload")
        self.assertEqual(mdc.query_kind(61), "other")

    def test_bad_line_named(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log",
                                         delete=False) as f:
            f.write("0.1 0 Q 0102\n0.2 A 0102\n")
        try:
            with self.assertRaises(SystemExit) as e:
                mdc.read_log(f.name)
            self.assertIn("line 2", str(e.exception.code))
        finally:
            os.unlink(f.name)


def txt_answer(*records):
    """A DNS answer to t. with one TXT record for each of |records|."""
    out = bytes([0, 1, 0x81, 0x80, 0, 1, 0, len(records), 0, 0, 0, 0])
    out += b"\x01t\x00" + bytes([0, 16, 0, 1])
    for rec in records:
        rd = b""
        for i in range(0, len(rec), 255):
            chunk = rec[i:i + 255]
            rd += bytes([len(chunk)]) + chunk
        out += bytes([0xC0, 12, 0, 16, 0, 1, 0, 0, 0, 0,
                      len(rd) >> 8, len(rd) & 255]) + rd
    return out


def md_packet(typ, seq, stream=1, size=300):
    """A MasterDnsVPN packet header (session 1) and |size| bytes."""
    return bytes([1, typ, stream >> 8, stream & 255, seq >> 8, seq & 255,
                  0, 1, 0, 7, 9]) + bytes(size)


class GapsTest(unittest.TestCase):
    def test_gaps_and_copies(self):
        data, resend = mdc.MD_DATA, mdc.MD_RESEND
        ev = [
            (1.00, 0, "A", txt_answer(md_packet(data, 0))),
            (1.01, 1, "A", txt_answer(md_packet(data, 1))),
            (1.02, 2, "A", txt_answer(md_packet(data, 3))),
            # A packet in two TXT records: the first holds the header.
            (1.03, 0, "A", txt_answer(b"\0\x02" + md_packet(data, 4),
                                      b"\x01" + bytes(100))),
            (1.04, 0, "A", txt_answer(b"pong")),
            (1.05, 0, "Q", bytes(60)),
            (1.50, 1, "A", txt_answer(md_packet(resend, 2))),
            (1.90, 2, "A", txt_answer(md_packet(resend, 4))),
            (2.00, 0, "A", txt_answer(md_packet(data, 6))),
            (2.50, 0, "Q", bytes(60)),
        ]
        g = mdc.gaps(ev)
        self.assertEqual(g["data_answers"], 7)
        self.assertEqual((g["stream"], g["next"], g["held"]), (1, 5, 1))
        self.assertEqual(len(g["gaps"]), 2)
        first = g["gaps"][0]
        self.assertAlmostEqual(first["from"], 0.01)
        self.assertAlmostEqual(first["to"], 0.50)
        self.assertEqual(first["seq"], 2)
        self.assertEqual([(r, k) for _, r, k in first["arrivals"]],
                         [(1, "resend")])
        # 5 never came: open from the last move (1.50) to the end.
        self.assertEqual((g["gaps"][1]["seq"], g["gaps"][1]["to"]),
                         (5, None))
        self.assertEqual(g["copies"], 1)
        self.assertAlmostEqual(g["copy_delay_s"]["p50"], 0.87)

    def test_no_data(self):
        self.assertEqual(mdc.gaps([(1.0, 0, "A", txt_answer(b"x"))]),
                         {"data_answers": 0})


class RelayTest(unittest.TestCase):
    def test_relay_logs_and_forwards(self):
        echo = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        echo.bind(("127.0.0.1", 0))
        echo.settimeout(10)

        def serve():
            try:
                data, peer = echo.recvfrom(2048)
                echo.sendto(data[::-1], peer)
            except OSError:
                pass

        threading.Thread(target=serve, daemon=True).start()
        with tempfile.TemporaryDirectory() as d:
            addrs = os.path.join(d, "resolvers.txt")
            log = os.path.join(d, "cap.log")
            with open(addrs, "w") as f:
                f.write("%s:%d\n" % echo.getsockname())
            client = ("import socket,sys\n"
                      "h,p=open(sys.argv[1]).read().split()[0].rsplit(':',1)\n"
                      "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                      "s.settimeout(10)\n"
                      "s.sendto(b'abcd',(h,int(p)))\n"
                      "sys.exit(0 if s.recv(64)==b'dcba' else 3)\n")
            rc = subprocess.run([sys.executable, TOOL, "relay", addrs, log,
                                 "--", sys.executable, "-c", client, addrs],
                                timeout=30).returncode
            self.assertEqual(rc, 0)
            with open(addrs) as f:
                self.assertTrue(f.read().startswith("127.0.9.1:"))
            ev = mdc.read_log(log)
            self.assertEqual([(r, k, dg) for t, r, k, dg in ev],
                             [(0, "Q", b"abcd"), (0, "A", b"dcba")])
        echo.close()


class ColumnsTest(unittest.TestCase):
    def test_client_behind_relay(self):
        out = subprocess.run([sys.executable, TOOL, "columns", "--column",
                              "real-md-own", "--log", "/tmp/x.log"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        cols = json.loads(out.stdout)
        self.assertEqual([c["name"] for c in cols["columns"]],
                         ["real-md-own"])
        argv = cols["tunnels"][cols["columns"][0]["tunnel"]]["client"]
        at = argv.index("relay")
        self.assertEqual(argv[at + 1], "{workdir}/md-resolvers.txt")
        self.assertEqual(argv[at + 2], "/tmp/x.log")
        self.assertEqual(argv[at + 3], "--")
        self.assertIn("masterdnsvpn-client", argv[at + 4])
        bad = subprocess.run([sys.executable, TOOL, "columns", "--column",
                              "no-such", "--log", "/tmp/x.log"],
                             capture_output=True, text=True, timeout=30)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("no-such", bad.stderr)


if __name__ == "__main__":
    unittest.main()
