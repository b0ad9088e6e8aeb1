#!/usr/bin/env python3
"""md_capture.py: capture and read a tunnel client's DNS traffic on
loopback, one logging UDP relay per resolver, for the measurements of
the real MasterDnsVPN in docs/simulator.md.

  md_capture.py columns --column C --log LOG [--columns FILE] > COLS
      prints a columns file with one column, C wrapped: its tunnel's
      client runs behind `relay` (the column must list its resolvers in
      a generated file, as the real MasterDnsVPN's columns do);
  md_capture.py relay ADDRFILE LOG -- CMD...
      reads the resolvers (host:port a line) from ADDRFILE, binds a relay
      for each on an address of its own (127.0.9.1, .2, ...: the real
      client takes resolvers on one address for one), writes their
      addresses into ADDRFILE, runs CMD and logs every datagram as
      "seconds resolver Q|A hex";
  md_capture.py gaps LOG
      the download's packets as the client received them (the
      MasterDnsVPN answers' packet headers, which travel in the clear:
      type, stream, sequence number): the gaps in its order that lasted
      over 0.2 s, each with the arrivals of its missing packet, and the
      time from a packet's first arrival to its next copy (its server's
      resend of a packet whose ack it had not yet);
  md_capture.py report LOG
      the queries by kind (the real MasterDnsVPN's sizes with the sample
      config and the domain t.example: 57 bytes a ping, 52 one ack, 69
      two and 11 more each further ack, 281 an upload packet), how many were
      answered, the answers with data per 100 ms, and the gaps between
      pings (median, mean, range) with the part of each gap past
      100 ms and the first traffic after its ping.

Run the column with scenarios/runner.py --columns COLS (one round).
"""

import argparse
import bisect
import collections
import copy
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = os.path.join(os.path.dirname(HERE), "columns.json")
RELAY_NET = "127.0.9.%d"
PING, ACK1, ACK2, ACK_STEP, UPLOAD = 57, 52, 69, 11, 281
DATA_MIN = 300  # an answer over this many bytes carries download data
FAR = 0.05      # a ping's first traffic later than this: a timer's wake


def cmd_columns(a):
    with open(a.columns) as f:
        cols = json.load(f)
    col = next((c for c in cols["columns"] if c["name"] == a.column), None)
    if col is None:
        sys.exit("md_capture: no column %r in %s" % (a.column, a.columns))
    files = col.get("files", {})
    if len(files) != 1:
        sys.exit("md_capture: column %r generates no resolvers file"
                 % a.column)
    fname = next(iter(files))
    tun = copy.deepcopy(cols["tunnels"][col["tunnel"]])
    argv = tun["client"]
    at = argv.index("--") + 1 if "--" in argv else 0
    tun["client"] = argv[:at] + [
        "python3", os.path.abspath(__file__), "relay",
        "{workdir}/" + fname, os.path.abspath(a.log), "--"] + argv[at:]
    name = col["tunnel"] + "-capture"
    cols["tunnels"][name] = tun
    col = dict(col, tunnel=name)
    cols["columns"] = [col]
    json.dump(cols, sys.stdout, indent=1)
    sys.stdout.write("\n")


def cmd_relay(a):
    res = []
    with open(a.addrfile) as f:
        for line in f:
            line = line.strip()
            if line:
                host, port = line.rsplit(":", 1)
                res.append((host, int(port)))
    if not res or len(res) > 250:
        sys.exit("md_capture: %d resolvers in %s" % (len(res), a.addrfile))
    near, far, kind = [], [], {}
    for i, r in enumerate(res):
        for lst, k, addr in ((near, "Q", RELAY_NET % (i + 1)),
                             (far, "A", "127.0.0.1")):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            s.bind((addr, 0))
            lst.append(s)
            kind[s] = (k, i)
    with open(a.addrfile, "w") as f:
        f.write("".join("%s:%d\n" % s.getsockname() for s in near))
    log = open(a.log, "w")
    t0 = time.monotonic()
    client = [None] * len(res)

    def loop():
        while True:
            ready, _, _ = select.select(near + far, [], [])
            for s in ready:
                data, peer = s.recvfrom(65536)
                k, i = kind[s]
                if k == "Q":
                    client[i] = peer
                    far[i].sendto(data, res[i])
                elif client[i] is not None:
                    near[i].sendto(data, client[i])
                log.write("%.6f %d %s %s\n" % (time.monotonic() - t0, i, k,
                                               data.hex()))
            log.flush()

    threading.Thread(target=loop, daemon=True).start()
    child = subprocess.Popen(a.command)
    try:
        sys.exit(child.wait())
    except KeyboardInterrupt:
        child.terminate()
        sys.exit(child.wait())


def query_kind(n):
    if n == PING:
        return "ping"
    if n == UPLOAD:
        return "upload"
    if n == ACK1:
        return "ack1"
    if n >= ACK2 and (n - ACK2) % ACK_STEP == 0 and n - ACK2 < 7 * ACK_STEP:
        return "ack%d" % (2 + (n - ACK2) // ACK_STEP)
    return "other"


def read_log(path):
    ev = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                t, r, k, h = line.split()
                if k not in ("Q", "A"):
                    raise ValueError(k)
                ev.append((float(t), int(r), k, bytes.fromhex(h)))
            except ValueError:
                sys.exit("md_capture: %s line %d: not 'seconds resolver Q|A "
                         "hex'" % (path, n))
    return ev


def report(ev):
    """Returns the report of the datagrams |ev| as a dict."""
    answers = {}
    for t, r, k, d in ev:
        if k == "A" and len(d) >= 4:
            answers[(r, d[:2])] = (t, d[3] & 15, len(d))
    # A query's copies carry the same bytes but their IDs, sent within a
    # few milliseconds to other resolvers.
    groups, last = [], {}
    for t, r, k, d in ev:
        if k != "Q" or len(d) < 4:
            continue
        g = last.get(d[2:])
        if (g is not None and t - groups[g]["t"] < 0.005
                and r not in groups[g]["res"]):
            groups[g]["res"].append(r)
            groups[g]["ids"].append((r, d[:2]))
        else:
            last[d[2:]] = len(groups)
            groups.append({"t": t, "len": len(d), "res": [r],
                           "ids": [(r, d[:2])]})
    kinds = {}
    for g in groups:
        e = kinds.setdefault(query_kind(g["len"]),
                             {"queries": 0, "copies": 0, "answered": 0,
                              "answers": 0})
        got = [answers.get(i) for i in g["ids"]]
        ok = [x for x in got if x is not None and x[1] == 0]
        e["queries"] += 1
        e["copies"] += len(g["ids"])
        e["answered"] += 1 if ok else 0
        e["answers"] += len(ok)
    data = sorted(t for t, rc, n in answers.values()
                  if rc == 0 and n > DATA_MIN)
    bins = {}
    for t in data:
        bins[int(t * 10)] = bins.get(int(t * 10), 0) + 1
    pings = [g["t"] for g in groups if g["len"] == PING]
    # What wakes the ping loop: an answer with data, a query not a ping.
    traffic = sorted(t for t, r, k, d in ev
                     if (k == "A" and len(d) > DATA_MIN) or
                     (k == "Q" and len(d) != PING))
    gaps, late = [], []
    for p, q in zip(pings, pings[1:]):
        gaps.append((q - p) * 1000)
        i = bisect.bisect_right(traffic, p)
        if i < len(traffic) and traffic[i] - p < FAR:
            late.append((q - p) * 1000 - 100 - (traffic[i] - p) * 1000)
    out = {"kinds": kinds, "data_answers": len(data),
           "data_per_100ms": [bins.get(i, 0)
                              for i in range(int(data[-1] * 10) + 1)]
           if data else [], "pings": len(pings)}
    if gaps:
        out["ping_gap_ms"] = {"median": statistics.median(gaps),
                              "mean": statistics.mean(gaps),
                              "min": min(gaps), "max": max(gaps)}
    if late:
        out["ping_late_ms"] = {"median": statistics.median(late),
                               "mean": statistics.mean(late), "n": len(late)}
    return out


def cmd_report(a):
    r = report(read_log(a.log))
    print("queries by kind: queries, copies, answered by a copy at least, "
          "answers")
    for k in sorted(r["kinds"]):
        e = r["kinds"][k]
        print("  %-7s %5d %5d %5d %5d" % (k, e["queries"], e["copies"],
                                          e["answered"], e["answers"]))
    print("answers with data: %d; per 100 ms: %s"
          % (r["data_answers"], " ".join(map(str, r["data_per_100ms"]))))
    if "ping_gap_ms" in r:
        g = r["ping_gap_ms"]
        print("pings: %d, %.2f-%.2f ms apart, median %.2f, mean %.2f"
              % (r["pings"], g["min"], g["max"], g["median"], g["mean"]))
    if "ping_late_ms" in r:
        g = r["ping_late_ms"]
        print("past 100 ms and the first traffic after the ping: median "
              "%.2f ms, mean %.2f (%d gaps)" % (g["median"], g["mean"],
                                                g["n"]))


# MasterDnsVPN's packet types that carry download data (STREAM_DATA,
# STREAM_RESEND) and the header bytes before their stream and sequence
# number (session, type).
MD_DATA, MD_RESEND = 0x0F, 0x12
GAP_MIN = 0.2  # gaps shorter than this (s) are not listed


def dns_skip_name(b, i):
    while True:
        n = b[i]
        if n == 0:
            return i + 1
        if n & 0xC0 == 0xC0:
            return i + 2
        i += 1 + n


def dns_txt_records(b):
    """The TXT records of the DNS answer |b|, each its strings joined."""
    qd, an = int.from_bytes(b[4:6], "big"), int.from_bytes(b[6:8], "big")
    i = 12
    for _ in range(qd):
        i = dns_skip_name(b, i) + 4
    out = []
    for _ in range(an):
        i = dns_skip_name(b, i)
        typ = int.from_bytes(b[i:i + 2], "big")
        rdl = int.from_bytes(b[i + 8:i + 10], "big")
        rd, i = b[i + 10:i + 10 + rdl], i + 10 + rdl
        if typ != 16:
            continue
        j, data = 0, b""
        while j < len(rd):
            data += rd[j + 1:j + 1 + rd[j]]
            j += 1 + rd[j]
        out.append(data)
    return out


def md_data_packet(answer):
    """(type, stream, sequence) of a data packet answer, else None. An
    answer in several TXT records carries the header in the one that
    starts with 0 (then the count of records)."""
    try:
        recs = dns_txt_records(answer)
    except IndexError:
        return None
    if len(recs) > 1:
        recs = [r[2:] for r in recs if r[:1] == b"\0"]
    if not recs or len(recs[0]) < 6 or recs[0][1] not in (MD_DATA, MD_RESEND):
        return None
    h = recs[0]
    return h[1], int.from_bytes(h[2:4], "big"), int.from_bytes(h[4:6], "big")


def gaps(ev):
    """Returns the gaps report of the datagrams |ev| as a dict."""
    arrivals = {}
    order = []
    for t, r, k, d in ev:
        if k != "A":
            continue
        p = md_data_packet(d)
        if p is None:
            continue
        key = (p[1], p[2])
        arrivals.setdefault(key, []).append((t, r, p[0]))
        order.append((t, key))
    if not order:
        return {"data_answers": 0}
    t0 = order[0][0]
    stream = collections.Counter(k[0] for _, k in order).most_common(1)[0][0]
    nxt, held, since, out = None, set(), t0, []
    for t, (st, sn) in order:
        if st != stream:
            continue
        if nxt is None:
            nxt = sn
        if (sn - nxt) & 0xFFFF >= 0x8000:
            continue
        held.add(sn)
        old = nxt
        while nxt in held:
            held.discard(nxt)
            nxt = (nxt + 1) & 0xFFFF
        if nxt != old:
            if t - since > GAP_MIN:
                out.append({"from": since - t0, "to": t - t0, "seq": old,
                            "arrivals": [(a - t0, r, "resend" if ty ==
                                          MD_RESEND else "data")
                                         for a, r, ty in
                                         arrivals[(stream, old)]]})
            since = t
    end = max(t for t, _, _, _ in ev)
    if held and end - since > GAP_MIN:
        out.append({"from": since - t0, "to": None, "seq": nxt,
                    "arrivals": []})
    again = sorted(v[1][0] - v[0][0] for k, v in arrivals.items()
                   if k[0] == stream and len(v) > 1)

    def pct(p):
        return again[int(p * (len(again) - 1))] if again else None
    return {"data_answers": len(order), "stream": stream, "next": nxt,
            "held": len(held), "gaps": out, "copies": len(again),
            "copy_delay_s": {"p10": pct(0.1), "p50": pct(0.5),
                             "p90": pct(0.9)}}


def cmd_gaps(a):
    g = gaps(read_log(a.log))
    if not g["data_answers"]:
        print("no data packets in %s" % a.log)
        return
    print("data answers %d (stream %d); at the end the next expected %d, "
          "%d held past it" % (g["data_answers"], g["stream"], g["next"],
                               g["held"]))
    print("gaps over %.1f s (from, to, its packet: arrivals as (s, "
          "resolver, kind)):" % GAP_MIN)
    for x in g["gaps"]:
        if x["to"] is None:
            print("  %6.3f  (open at the end) %5d never came"
                  % (x["from"], x["seq"]))
            continue
        print("  %6.3f %6.3f %5d %s" % (x["from"], x["to"], x["seq"],
                                         [(round(t, 3), r, k) for t, r, k
                                          in x["arrivals"]]))
    d = g["copy_delay_s"]
    if g["copies"]:
        print("packets that came again: %d, after p10 %.3f s, p50 %.3f, "
              "p90 %.3f" % (g["copies"], d["p10"], d["p50"], d["p90"]))


def main():
    p = argparse.ArgumentParser(
        description="Capture and read a tunnel client's DNS traffic "
        "through a logging relay per resolver.")
    sub = p.add_subparsers(dest="sub", required=True)
    c = sub.add_parser("columns", help="a columns file with one column "
                       "behind the relays")
    c.add_argument("--column", required=True)
    c.add_argument("--log", required=True)
    c.add_argument("--columns", default=COLUMNS)
    c.set_defaults(fn=cmd_columns)
    r = sub.add_parser("relay", help="run CMD behind the relays")
    r.add_argument("addrfile")
    r.add_argument("log")
    r.add_argument("command", nargs=argparse.REMAINDER)
    r.set_defaults(fn=cmd_relay)
    s = sub.add_parser("report", help="read a capture")
    s.add_argument("log")
    s.set_defaults(fn=cmd_report)
    g = sub.add_parser("gaps", help="the download's gaps in a capture")
    g.add_argument("log")
    g.set_defaults(fn=cmd_gaps)
    a = p.parse_args()
    if a.sub == "relay":
        if a.command and a.command[0] == "--":
            a.command = a.command[1:]
        if not a.command:
            p.error("relay: no command after --")
    a.fn(a)


if __name__ == "__main__":
    main()
