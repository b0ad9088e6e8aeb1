#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_core_events into corpus/core_events/.

Each seed is one scenario in the input format that fuzz_core_events.c
describes in its header comment: an 8-byte setup header, then events
(opcode byte, time byte, payload). The seeds reach the main paths of the
core (answers, refusals, truncation and the stream retry, timeouts and
hedges, copies, down resolvers and probes, removal, every error outcome,
every strategy, the full and too-long cases); the fuzzer mutates from
there. Run from anywhere: python3 gen_corpus.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "core_events")

# Opcodes.
SUBMIT, SUBMIT_RAW, ANSWER, ANSWER_RAW, ERROR, TICK, ADD, REMOVE = range(8)
# Time units of the time byte (bits 6-7).
U10US, UMS, U50MS, US = range(4)
# rp_outcome values.
(OK, TIMEOUT, SERVFAIL, REFUSED, FORMERR, TRUNCATED, MALFORMED, ID_MISMATCH,
 CONNECT_FAILED, TLS_FAILED, HTTP_429, SEND_FAILED) = range(12)
# Answer kinds (b1 bits 0-1).
A_TXT, A_ERROR, A_ECHO, A_CUT = range(4)


def header(kind=0, balance=0, wait_toggle=False, lazy=False, log=False,
           nres=2, dup=0, probe_name=False, prob1=False, short=False,
           max_inflight=16, down=0, shortq=False, tcp_mask=0, room=2,
           t0=False, nohedge=False, seed=1):
    h0 = kind | balance << 2 | wait_toggle << 5 | lazy << 6 | log << 7
    h1 = (nres - 1) | dup << 3 | probe_name << 5 | prob1 << 6 | short << 7
    h2 = (max_inflight - 1) | down << 5 | shortq << 7
    h4 = room | t0 << 3 | nohedge << 4
    return bytes([h0, h1, h2, tcp_mask, h4, seed >> 16 & 255,
                  seed >> 8 & 255, seed & 255])


def tb(n=0, unit=UMS):
    """The time byte: n (0..63) units."""
    return bytes([unit << 6 | n])


def submit(labels=(b"q1",), qid=0x1234, qtype=0, edns=True, opcode=False,
           suffix=True, rd_clear=False, n=0, unit=UMS):
    b0 = (qtype | edns << 2 | opcode << 3 | suffix << 4 |
          (len(labels) - 1) << 5 | rd_clear << 7)
    body = bytes([b0, qid >> 8, qid & 255])
    for label in labels:
        body += bytes([len(label) - 1]) + label
    return bytes([SUBMIT]) + tb(n, unit) + body


def submit_raw(data, n=0, unit=UMS):
    return bytes([SUBMIT_RAW]) + tb(n, unit) + bytes([len(data)]) + data


def answer(k=0, kind=A_TXT, size=16, val=0x41, tc=False, stream=False,
           idxor=False, flip=False, noqr=False, opcode=False, n=1, unit=UMS):
    b1 = (kind | tc << 2 | stream << 3 | idxor << 4 | flip << 5 |
          noqr << 6 | opcode << 7)
    return bytes([ANSWER]) + tb(n, unit) + bytes([k, b1, size, val])


def answer_raw(b0, data, n=1, unit=UMS):
    return bytes([ANSWER_RAW]) + tb(n, unit) + bytes([b0, len(data)]) + data


def error(k=0, target=0, outcome=TIMEOUT, n=0, unit=UMS):
    return bytes([ERROR]) + tb(n, unit) + bytes([target << 5 | k, outcome])


def tick(n=0, unit=UMS):
    return bytes([TICK]) + tb(n, unit)


def add(stream=False, tcp=False, score=0, n=0, unit=UMS):
    b0 = stream | tcp << 1 | (score + 10) << 2
    return bytes([ADD]) + tb(n, unit) + bytes([b0])


def remove(b0=0, n=0, unit=UMS):
    return bytes([REMOVE]) + tb(n, unit) + bytes([b0])


def q(i):
    return (b"q%d" % i,)


# A plain query (ID 0x0102, RD, one question q.example A) and variants.
RAW_QUERY = bytes.fromhex("010201000001000000000000" "0171076578616d706c6500"
                          "00010001")
RAW_ANSWER = bytes.fromhex("010281800001000100000000" "0171076578616d706c6500"
                           "00010001" "c00c000100010000003c000401020304")

SEEDS = {}

SEEDS["basic_answer"] = header(nres=1) + submit() + answer()

SEEDS["two_resolvers_four_queries"] = (
    header(nres=2) + b"".join(submit(q(i), qid=i) for i in range(4)) +
    answer(k=0) + answer(k=2) + answer(k=1, n=5) + answer(k=3, n=20))

SEEDS["refused_then_resend"] = (
    header(nres=2) + submit() + answer(kind=A_ERROR, size=5) +
    answer(k=0, n=3))

SEEDS["servfail_answer"] = (
    header(nres=2, dup=1) + submit() + answer(kind=A_ERROR, size=2) +
    answer(k=0, kind=A_ERROR, size=2) + tick(63, U50MS))

SEEDS["tc_stream_retry"] = (
    header(nres=1, tcp_mask=1) + submit() + answer(tc=True) +
    answer(k=0, stream=True, size=200))

SEEDS["tc_no_fallback"] = header(nres=1) + submit() + answer(tc=True)

SEEDS["tc_stream_tc_again"] = (
    header(nres=1, tcp_mask=1) + submit() + answer(tc=True) +
    answer(k=0, tc=True) + answer(k=0, tc=True) + answer(k=0, tc=True))

SEEDS["timeouts_to_deadline"] = (
    header(nres=2) + submit() + tick(3, US) + tick(3, US) + tick(1, US))

SEEDS["down_probe_name"] = (
    header(nres=2, down=1, probe_name=True) + submit() + tick(3, US) +
    submit(q(2), qid=2) + tick(3, US) + tick(10, US) + answer(k=0) +
    tick(10, US) + answer(k=0, n=2))

SEEDS["down_probe_copies"] = (
    header(nres=1, down=1) + submit() + tick(3, US) + tick(7, US) +
    tick(7, US) + answer(k=0) + submit(q(3), qid=3) + answer(k=0))

SEEDS["remove_inflight_then_add"] = (
    header(nres=3, room=3) + b"".join(submit(q(i), qid=i) for i in range(5)) +
    remove(0) + remove(1) + add(tcp=True, score=5) + answer(k=0) +
    answer(k=1) + remove(0x80) + add(score=-10) + tick(3, US))

SEEDS["error_outcomes"] = (
    header(nres=3) + b"".join(submit(q(i), qid=i) + error(0, 0, o)
                              for i, o in enumerate(range(12))))

SEEDS["error_all"] = (
    header(nres=2) + b"".join(submit(q(i), qid=i) for i in range(6)) +
    error(0, 4, CONNECT_FAILED) + error(1, 5, TLS_FAILED) +
    error(0, 6, TIMEOUT) + error(0, 7, SEND_FAILED) + tick(5, US))

SEEDS["raw_queries"] = (
    header(nres=1) + submit_raw(b"") + submit_raw(b"\x00" * 11) +
    submit_raw(bytes([0x12, 0x34, 0x80]) + b"\x00" * 9) +
    submit_raw(bytes([0x12, 0x34, 0x01, 0, 0, 1]) + b"\x00" * 6) +
    submit_raw(RAW_QUERY) + answer(k=0))

SEEDS["masterdns_copies"] = (
    header(kind=2, nres=4) + b"".join(submit(q(i), qid=i) for i in range(3)) +
    tick(2) + answer(k=0, val=1) + answer(k=1, val=1) + answer(k=2, val=2) +
    answer(k=3) + answer(k=4) + tick(1, US))

SEEDS["dnstt_copies_judged"] = (
    header(kind=1, nres=3, dup=2) +
    b"".join(submit(q(i), qid=i, n=10) + tick(1) + answer(k=0, val=i) +
             answer(k=1, val=i) for i in range(8)))

SEEDS["hedges_short_timing"] = (
    header(nres=3, short=True, prob1=True) +
    b"".join(submit(q(i), qid=i) + answer(k=0, n=5) for i in range(6)) +
    submit(q(9), qid=9) + tick(40) + tick(40) + answer(k=0) + answer(k=1) +
    tick(20, U50MS))

SEEDS["lazy_timers"] = (
    header(nres=2, lazy=True) + submit() + submit(q(2), qid=2, n=5) +
    tick(3, US) + answer(k=0) + tick(10, US))

for bal, name in enumerate(["auto", "roundrobin", "weighted",
                            "lowest_latency", "least_loss"]):
    SEEDS["balance_" + name] = (
        header(nres=3, balance=bal, prob1=True) +
        b"".join(submit(q(i), qid=i) + answer(k=0, n=1 + i % 3)
                 for i in range(10)) + error(0, 0, TIMEOUT) + tick(3, US))

SEEDS["max_inflight_full"] = (
    header(nres=1, max_inflight=1, wait_toggle=True) + submit() +
    submit(q(2), qid=2) + submit(q(3), qid=3) + answer(k=0))

SEEDS["query_too_long"] = (
    header(nres=1, shortq=True) + submit((b"x" * 40, b"y" * 30), qid=7) +
    submit() + answer(k=0))

SEEDS["no_wait_for_token"] = (
    header(kind=0, nres=1, wait_toggle=True) +
    b"".join(submit(q(i), qid=i) for i in range(6)) + answer(k=0))

SEEDS["debug_log"] = (
    header(nres=2, log=True) + submit() + answer(k=0) + submit(q(2), qid=2) +
    answer(kind=A_ERROR, size=5) + tick(3, US))

SEEDS["spoofed_answers"] = (
    header(nres=1) + submit() + answer(idxor=True, val=7) +
    answer(flip=True) + answer(noqr=True) + answer(opcode=True) +
    answer(kind=A_ECHO, size=0))

SEEDS["unassigned_rcodes"] = (
    header(nres=2) + submit() + answer(kind=A_ERROR, size=11) +
    answer(k=0, kind=A_ECHO, size=15) + answer(k=0, kind=A_ERROR, size=3))

SEEDS["max_resolvers_full"] = (
    header(nres=2, room=1) + add() + add(stream=True) + add() + remove(0) +
    add(tcp=True) + submit() + answer(k=0))

SEEDS["clock_at_zero"] = (
    header(nres=2, t0=True) + submit(n=0) + answer(k=0, n=0) +
    submit(q(2), qid=2, n=0) + tick(0) + tick(3, US))

SEEDS["raw_answers"] = (
    header(nres=1) + submit() + answer_raw(0x80, RAW_ANSWER) +
    answer_raw(0x00, RAW_ANSWER) + answer_raw(0xc0, RAW_ANSWER[:12]) +
    answer_raw(0x80, b"\x01") + answer(k=0))

SEEDS["cut_answers"] = (
    header(nres=1) + submit() + answer(kind=A_CUT, size=40) +
    answer(kind=A_CUT, size=200) + answer(kind=A_TXT, size=250, val=0))

SEEDS["opcode_and_no_rd"] = (
    header(nres=1) + submit(opcode=True) + answer(k=0) +
    submit(q(2), qid=2, rd_clear=True, edns=False, qtype=1) + answer(k=0))

SEEDS["burst_refusals_caps"] = (
    header(nres=2, prob1=True) +
    b"".join(submit(q(i), qid=i, n=1) +
             (answer(k=0, kind=A_ERROR, size=5) if i % 3 else answer(k=0))
             for i in range(40)) + tick(2, US))

SEEDS["stream_resolvers"] = (
    header(nres=1, room=2) + add(stream=True) + add(stream=True, tcp=True) +
    b"".join(submit(q(i), qid=i) + answer(k=0, stream=True)
             for i in range(4)))

SEEDS["binary_labels"] = (
    header(nres=1) + submit((bytes(range(0, 63)), b"\x00.\xff"), suffix=False,
                            qtype=3) + answer(k=0, size=255))

SEEDS["long_gaps_many_down"] = (
    header(nres=8, down=1, short=True) +
    b"".join(submit(q(i), qid=i) for i in range(8)) + tick(63, US) +
    tick(63, US) + submit(q(20), qid=20) + answer(k=0) + tick(63, US))

# 0x20 (kind generic): answers with the first letter's case flipped are
# not taken (each sends the query again) until the third falls back; a
# later answer in the case sent is a proof and checks the case again.
SEEDS["case_mismatch_fallback"] = (
    header(nres=1) + submit((b"MixedCase", b"example"), qid=7) +
    answer(k=0, flip=True) + answer(k=0, flip=True) +
    answer(k=0, flip=True) + submit(q(2), qid=2) + answer(k=0) +
    submit((b"longername", b"example"), qid=3) + answer(k=0) + tick(3, US))

# Found by the fuzzer: with lazy timers a down resolver's overdue timer
# copies a query past its deadline, which moves that query's timer to the
# next nanosecond after the late tick (the settle phase runs it).
SEEDS["late_tick_past_deadline"] = bytes.fromhex(
    "fc002f0002410000" "10010000000000" "8eaba0054100ff")


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in sorted(SEEDS.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(SEEDS), OUT))


if __name__ == "__main__":
    main()
