#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_config (corpus/config/), fuzz_scores
(corpus/scores/) and fuzz_tcp_frame (corpus/tcp_frame/).

The config seeds are the examples of docs/config.md, the good and bad
texts of pool/tests/test_config.c, and a few more that reach the other
fields (tuning of every type, discovery, every resolver form). The scores
seeds are the examples of docs/config.md and pool/tests/test_scores.c and
variants (several keys, clamping, entries that are not numbers, corrupt
files), and the reproducers of the known bugs (crash-*). The tcp_frame
seeds are streams of framed queries and answers cut in several ways, and
the ends a stream can have: a zero length, a length past a small buffer, a
frame cut short. Run from anywhere: python3 gen_corpus.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG = {
    # docs/config.md.
    "doc_outbound": """{
  "type": "dnstt",
  "domain": "t.example.com",
  "resolvers": ["8.8.8.8:53", "tcp://9.9.9.9:53"],
  "smart_pool": {"enabled": true, "load_balance": "auto", "deadline": "5s"}
}
""",
    "doc_tuning": """{"smart_pool": {"enabled": true,
                "tuning": {"token_wait": "500ms", "band_ratio": 1.5,
                           "wait_for_token": true}}}
""",
    # pool/tests/test_config.c, good.
    "test_true": "true",
    "test_outbound_true": '{"smart_pool": true, "tag": "x"}',
    "test_full": (
        '{"enabled": true, "load_balance": "lowest_latency",'
        ' "deadline": "4s", "per_attempt": "300ms",'
        ' "probe_interval": "1m", "down_after": 5, "duplicate": 3,'
        ' "wait_for_token": true,'
        ' "discovery": {"country": "IR", "sample_ranges": 2,'
        '   "want": 12, "concurrency": 50, "pace": "20ms"},'
        ' "resolvers": ["8.8.8.8", "1.1.1.1:5353", "tcp://9.9.9.9:53",'
        '   "dot://1.1.1.1:853", "tls://dns.example@1.0.0.1",'
        '   "https://dns.google/dns-query", "auto", "[::1]:53"],'
        ' "kind": "masterdns", "listen": "127.0.0.1:5353",'
        ' "scores_file": "/tmp/s.json", "pretest_domain": "a.b",'
        ' "tls_ca": "/ca.pem", "tls_name": "n"}'),
    "test_outbound_dnstt": (
        '{"type": "dnstt", "domain": "t.example.com",'
        ' "resolvers": ["8.8.8.8:53"], "smart_pool": {"enabled": true}}'),
    "test_file": '{\n  "resolvers": ["1.1.1.1",\n "x.y"]\n}\n',
    # More good ones.
    "false": '{"smart_pool": false}',
    "every_balance": (
        '{"smart_pool": {"load_balance": "roundrobin"}, "type": "masterdns"}'),
    "weighted_numbers": (
        '{"load_balance": "weighted", "deadline": 2.5, "per_attempt": 0.3,'
        ' "probe_interval": 10, "down_after": 1000, "duplicate": 10,'
        ' "wait_for_token": false, "kind": "generic", "listen": ":5353"}'),
    "least_loss_v6": (
        '{"load_balance": "least_loss", "listen": "[::1]:0",'
        ' "resolvers": ["udp://[2001:db8::1]:53", "2001:db8::2",'
        ' "tcp://[::1]:5300", "dot://NAME@10.0.0.1:853",'
        ' "https://dns.example@127.0.0.1:8443/dns-query",'
        ' "https://host:8443/path/q?x=1"]}'),
    "discovery_all": (
        '{"resolvers": ["auto"], "pretest_domain": "",'
        ' "discovery": {"country": "RU", "sample_ranges": 0, "want": 1,'
        ' "concurrency": 1000000, "pace": 0, "timeout": "0ms",'
        ' "list_file": "/tmp/list.txt", "data_file": "/tmp/r.json",'
        ' "system": false, "bundled": false}}'),
    "tuning_every_type": (
        '{"tuning": {"deadline": "none", "per_attempt": 1.5,'
        ' "down_after": 3, "wait_for_token": "yes", "max_inflight": "100",'
        ' "log_level": "debug", "log_categories": 255,'
        ' "band_ratio": "1.25", "score_answer": -2,'
        ' "probe_qtype": 16, "probe_name": "probe.example",'
        ' "load_balance": "least_loss", "latency_window": "250us",'
        ' "loss_window": 30, "max_query_len": 512}}'),
    "tuning_odd_values": (
        '{"tuning": {"band_slack": "1.000001s", "hedge_min_dev": 1e-7,'
        ' "token_wait": "1h", "band_loss": 0, "cap_growth": 1e300,'
        ' "max_resolvers": 1, "duplicate": 10, "deadline": "0"}}'),
    "listen_forms": '{"listen": "127.0.0.1"}',
    "tuning_overrides_fields": (
        '{"deadline": "3s", "duplicate": 2,'
        ' "tuning": {"deadline": "7s", "duplicate": 1}}'),
    "many_resolvers": (
        '{"resolvers": [' + ", ".join('"10.0.0.%d:%d"' % (i, 5300 + i)
                                     for i in range(40)) + ']}'),
    "nested_outbound_extra": (
        '{"type": "masterdns", "tag": "out", "settings": {"a": [1, 2]},'
        ' "resolvers": [], "smart_pool": {"enabled": true,'
        ' "resolvers": ["9.9.9.9"]}}'),
    "unicode_strings": (
        '{"scores_file": "/tmp/\\u00e9t\\u00e9.json", "tls_name": "\\u0041",'
        ' "pretest_domain": "xn--bcher-kva.example"}'),
}

# pool/tests/test_config.c, bad (each must be refused with a message).
BAD = [
    '{"enabeld": true}',
    '{"deadline": "5 parsecs"}',
    '{"deadline": "-1s"}',
    '{"deadline": "0s"}',
    '{"per_attempt": true}',
    '{"down_after": 0}',
    '{"down_after": 2.5}',
    '{"duplicate": 99}',
    '{"load_balance": "fastest"}',
    '{"resolvers": ["8.8.8.8", "1.2.3"]}',
    '{"resolvers": ["8.8.8.8:99999"]}',
    '{"resolvers": ["tcp://dns.google:53"]}',
    '{"resolvers": ["ftp://1.1.1.1"]}',
    '{"resolvers": ["https://dns.google"]}',
    '{"resolvers": ["1.1.1.1/x"]}',
    '{"resolvers": [53]}',
    '{"resolvers": "8.8.8.8"}',
    '{"discovery": {"want": 0}}',
    '{"discovery": {"colour": 1}}',
    '{"discovery": {"country": "Iran"}}',
    '{"kind": "iodine"}',
    '{"listen": "localhost:53"}',
    '{"smart_pool": {"duplicate": "2"}}',
    '{"smart_pool": 3}',
    '{"enabled": true,,}',
    '[1]',
    # More.
    '{"tuning": {"band_ration": 1}}',
    '{"tuning": {"band_ratio": "x"}}',
    '{"tuning": []}',
    '{"resolvers": ["dot://@1.1.1.1"]}',
    '{"resolvers": ["[::1"]}',
    '{"pretest_domain": "' + "a" * 300 + '"}',
]


SCORES = {
    # docs/config.md.
    "doc_example": """{
  "dnstt_resolversTXT": {"8.8.8.8": 6, "tcp://9.9.9.9:53": -2},
  "generic_resolvers": {"1.1.1.1": 3}
}
""",
    # pool/tests/test_scores.c.
    "test_saved": (
        '{"masterdns_resolvers": {"8.8.8.8": 4, "tcp://9.9.9.9:53": -10,'
        ' "1.1.1.1": 10, "8.8.4.4": -1},'
        ' "generic_resolvers": {"8.8.8.8": 3}}'),
    "test_corrupt_truncated": '{"generic_resolvers": {"1.1.1.1": 2, ',
    "test_not_object": '{"generic_resolvers": [1]}',
    "test_mixed": '{"generic_resolvers": {"a": "x", "b": -3.7}}',
    "test_garbage": "garbage",
    # More.
    "empty_object": "{}",
    "empty_key": '{"generic_resolvers": {}}',
    "all_keys": (
        '{"generic_resolvers": {"1.1.1.1": 1},'
        ' "dnstt_resolvers": {"8.8.8.8": 2},'
        ' "dnstt_resolversTXT": {"9.9.9.9": -3},'
        ' "masterdns_resolvers": {"dot://dns.example": 5},'
        ' "other_tunnel": {"x": 1}}'),
    "clamped": (
        '{"generic_resolvers": {"a": 1e9, "b": -1e9, "c": 10.9, "d": -10.9,'
        ' "e": 0.5, "f": -0.5}}'),
    "non_numbers": (
        '{"generic_resolvers": {"a": null, "b": true, "c": [1], "d": {},'
        ' "e": "3", "f": 2}}'),
    "unsorted_many": (
        '{"generic_resolvers": {' +
        ", ".join('"10.0.%d.%d": %d' % ((i * 7919) % 256, i % 256, i % 21 - 10)
                  for i in range(60)) + '}}'),
    "duplicate_names": '{"generic_resolvers": {"a": 1, "a": 2, "b": 3}}',
    "escaped_names": (
        '{"generic_resolvers": {"\\u00e9": 1, "tab\\there": 2,'
        ' "quote\\"d": 3, "back\\\\slash": 4}}'),
    "array_root": '[{"generic_resolvers": {"a": 1}}]',
    "number_root": "42",
    "nested_deep": '{"x": [[[[[[{"y": {"z": 1}}]]]]]]}',
    "key_is_string": '{"generic_resolvers": "1.1.1.1"}',
    "trailing_bytes": '{"generic_resolvers": {"a": 1}} trailing',
    "other_keys_only": '{"dnstt_resolversTXT": {"8.8.8.8": 6}, "z": null}',
    "empty_file": "",
}

# Reproducers of the known bugs (docs/reliability.md); each target skips
# the check they break unless FUZZ_STRICT is set.
CRASHES = {
    # config.c config_duration: a bare number under 1 ns is stored as 0.
    ("config", "crash-tiny-duration.json"): '{"deadline": 1e-10}',
    # scores.c rp_scores_save: only the first member named the key is
    # replaced; the next load reads the stale one.
    ("scores", "crash-duplicate-key"):
        '{"generic_resolvers":{},"generic_resolvers":3}',
    # scores.c rp_scores_save: cJSON writes 1e999 (inf) as null, so the
    # entry of the other key is lost.
    ("scores", "crash-nonfinite-other-key"):
        '{"generic_resolvers":{},"dnstt_resolvers":{"x":1e999}}',
    # fuzz_config.c's own check was stale: "kind": "auto" (the CLI's
    # default, RP_KIND_AUTO) is valid; the long run's only crash.
    ("config", "crash-kind-auto.json"): '{"kind": "auto"}',
}


# fuzz_tcp_frame's input (fuzz_tcp_frame.c): a buffer byte (below 0x80
# the runtime's 65537 bytes, else 3 + 4 * (b & 0x7f)), a count of chunk
# bytes, the chunk bytes (0xff: the rest; else (c & 0x7f) + 1 bytes, top
# bit: put in with space/commit rather than feed), then the stream.
FULL = 0x00
REST = 0xff
DIRECT = 0x80


def small(cap):
    """The buffer byte of a small buffer of |cap| bytes."""
    assert (cap - 3) % 4 == 0 and 3 <= cap <= 511
    return 0x80 | (cap - 3) // 4


def dns_name(name):
    out = b""
    for label in name.split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def query(qid, name, qtype=1):
    return (struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 1) +
            dns_name(name) + struct.pack(">HH", qtype, 1) +
            # An OPT record: 4096-byte UDP payload.
            b"\0" + struct.pack(">HHIH", 41, 4096, 0, 0))


def txt_answer(qid, name, payload):
    q = dns_name(name) + struct.pack(">HH", 16, 1)
    rdata = b""
    for i in range(0, len(payload), 255):
        part = payload[i:i + 255]
        rdata += bytes([len(part)]) + part
    return (struct.pack(">HHHHHH", qid, 0x8180, 1, 1, 0, 0) + q +
            b"\xc0\x0c" + struct.pack(">HHIH", 16, 1, 60, len(rdata)) +
            rdata)


def frame(msg):
    return struct.pack(">H", len(msg)) + msg


def tcp_seed(cap, chunks, stream):
    assert len(chunks) < 256
    return bytes([cap, len(chunks)]) + bytes(chunks) + stream


Q1 = query(0x1234, "example.com")
Q2 = query(0xbeef, "aaaa.t.example.com", 16)
Q3 = query(0x0001, "x." * 60 + "t.example.com", 16)
A1 = txt_answer(0xbeef, "aaaa.t.example.com", bytes(range(256)) * 2)
A2 = txt_answer(0x0002, "b.t.example.com", b"\x5a" * 3000)
THREE = frame(Q1) + frame(Q2) + frame(Q3)

TCP_FRAME = {
    "one_query": tcp_seed(FULL, [], frame(Q1)),
    "three_bytewise": tcp_seed(FULL, [0x00], THREE),
    "three_direct_6": tcp_seed(FULL, [DIRECT | 5], THREE),
    "three_mixed": tcp_seed(FULL, [0x01, DIRECT | 0x02, 0x7f, REST], THREE),
    "prefix_split": tcp_seed(FULL, [0x00, DIRECT | 0x7f], THREE),
    "answers_direct_128": tcp_seed(FULL, [DIRECT | 0x7f],
                                   frame(A1) + frame(A2) + frame(Q1)),
    "answer_feed_odd": tcp_seed(FULL, [0x06, 0x10, 0x2a], frame(A2)),
    "cut_short": tcp_seed(FULL, [0x03], frame(Q1) + frame(A1)[:100]),
    "one_byte_left": tcp_seed(FULL, [], frame(Q2) + b"\x00"),
    "zero_length": tcp_seed(FULL, [0x04], frame(Q1) + b"\0\0" + frame(Q2)),
    "zero_length_first": tcp_seed(FULL, [], b"\0\0"),
    "small_exact": tcp_seed(small(11), [DIRECT | 0x01],
                            frame(b"\x11" * 9) * 3 + frame(b"\x22" * 5)),
    "small_over": tcp_seed(small(11), [0x00],
                           frame(b"\x11" * 9) + frame(b"\x33" * 10)),
    "small_query_over": tcp_seed(small(51), [0x09], frame(Q1) + frame(Q3)),
    "largest_small": tcp_seed(small(511), [DIRECT | 0x7f, 0x7f],
                              frame(b"\x44" * 509) + frame(b"\x55" * 510)),
    "tiny_buffer": tcp_seed(small(3), [0x00],
                            frame(b"\x01") * 4 + b"\x00\x02\x01\x02"),
    "empty_stream": tcp_seed(FULL, [0x00, 0x01], b""),
    "chunks_only": tcp_seed(FULL, [0x80] * 8, b""),
}


def write(dirname, name, text):
    path = os.path.join(HERE, "corpus", dirname)
    os.makedirs(path, exist_ok=True)
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    with open(os.path.join(path, name), "wb") as f:
        f.write(data)


def main():
    for name, text in CONFIG.items():
        write("config", name + ".json", text)
    for i, text in enumerate(BAD):
        write("config", "bad_%02d.json" % i, text)
    for name, text in SCORES.items():
        write("scores", name + ".json", text)
    for (dirname, name), text in CRASHES.items():
        write(dirname, name, text)
    for name, data in TCP_FRAME.items():
        write("tcp_frame", name, data)
    print("wrote %d config, %d scores and %d tcp_frame seeds, %d reproducers"
          % (len(CONFIG) + len(BAD), len(SCORES), len(TCP_FRAME),
             len(CRASHES)))


if __name__ == "__main__":
    main()
