/*
 * test_dns.c: unit tests of the DNS wire codec (pool/dns).
 *
 * Real packets come from pool/tests/fixtures/dns (one .hex file each):
 * queries sent by dig and kdig and answers spoofed by dnsdist, captured
 * on loopback (each file's comment line says how). Hand-made malformed
 * messages come from gen_handmade.py in the same folder.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "dns.h"

#ifndef RP_DNS_FIXTURE_DIR
#error "RP_DNS_FIXTURE_DIR must name the fixture folder"
#endif

/* TEST_BUF_LEN holds any fixture and any message built here. */
#define TEST_BUF_LEN 4096
/* TEST_PATH_LEN is the longest fixture path. */
#define TEST_PATH_LEN 512
/* TEST_TEXT_LEN holds any name in presentation form. */
#define TEST_TEXT_LEN 1100

/* ---------------------------------------------------------------- */
/* Fixture loading                                                    */
/* ---------------------------------------------------------------- */

static int hex_digit(int c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

/* load_fixture reads RP_DNS_FIXTURE_DIR/<name>.hex: '#' lines are
   comments, the rest hex digits and white space. Fails the test if the
   file is missing or bad. */
static size_t load_fixture(const char *name, uint8_t *buf, size_t cap) {
  char path[TEST_PATH_LEN];
  char line[TEST_BUF_LEN * 2 + 64];
  size_t n = 0;
  FILE *f;
  snprintf(path, sizeof(path), "%s/%s.hex", RP_DNS_FIXTURE_DIR, name);
  f = fopen(path, "r");
  if (f == NULL) {
    fail_msg("cannot open fixture %s", path);
  }
  while (fgets(line, sizeof(line), f) != NULL) {
    const char *p = line;
    int hi = -1;
    if (line[0] == '#') {
      continue;
    }
    for (; *p != '\0'; p++) {
      int d = hex_digit((unsigned char)*p);
      if (d < 0) {
        continue;
      }
      if (hi < 0) {
        hi = d;
      } else {
        assert_true(n < cap);
        buf[n++] = (uint8_t)(hi << 4 | d);
        hi = -1;
      }
    }
    assert_int_equal(hi, -1);
  }
  fclose(f);
  return n;
}

static void name_text(const rp_dns_name *name, char *out, size_t cap) {
  assert_true(rp_dns_name_to_text(name, out, cap) >= 0);
}

static rp_dns_name make_name(const char *text) {
  rp_dns_name n;
  assert_int_equal(rp_dns_name_from_text(&n, text), 0);
  return n;
}

/* ---------------------------------------------------------------- */
/* Cursor                                                             */
/* ---------------------------------------------------------------- */

static void test_dns_cursor_bounds(void **state) {
  static const uint8_t b[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07};
  rp_dns_cursor c;
  uint8_t v8;
  uint16_t v16;
  uint32_t v32;
  (void)state;
  rp_dns_cursor_init(&c, b, sizeof(b));
  assert_int_equal(rp_dns_cursor_u8(&c, &v8), 0);
  assert_int_equal(v8, 0x01);
  assert_int_equal(rp_dns_cursor_u16(&c, &v16), 0);
  assert_int_equal(v16, 0x0203);
  assert_int_equal(rp_dns_cursor_u32(&c, &v32), 0);
  assert_int_equal(v32, 0x04050607u);
  assert_int_equal(c.pos, 7);
  assert_int_equal(rp_dns_cursor_u8(&c, &v8), RP_ERR_MALFORMED);
  assert_int_equal(c.pos, 7);
  c.pos = 5;
  assert_int_equal(rp_dns_cursor_u32(&c, &v32), RP_ERR_MALFORMED);
  assert_int_equal(c.pos, 5);
  c.pos = 6;
  assert_int_equal(rp_dns_cursor_u16(&c, &v16), RP_ERR_MALFORMED);
  assert_int_equal(c.pos, 6);
  assert_int_equal(rp_dns_cursor_skip(&c, 2), RP_ERR_MALFORMED);
  assert_int_equal(rp_dns_cursor_skip(&c, SIZE_MAX), RP_ERR_MALFORMED);
  assert_int_equal(c.pos, 6);
  assert_int_equal(rp_dns_cursor_skip(&c, 1), 0);
  assert_int_equal(rp_dns_cursor_skip(&c, 0), 0);
  assert_int_equal(c.pos, 7);
}

static void test_dns_cursor_name(void **state) {
  /* After a 12-byte header: "a" at 12, then "b" + pointer to 12 at 15:
     reading at 15 gives b.a. and resumes after the pointer. */
  static const uint8_t b[] = {0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00,
                              0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 'a',
                              0x00, 0x01, 'B',  0xC0, 0x0C, 0xEE};
  rp_dns_cursor c;
  rp_dns_name n;
  char text[TEST_TEXT_LEN];
  (void)state;
  rp_dns_cursor_init(&c, b, sizeof(b));
  c.pos = 15;
  assert_int_equal(rp_dns_cursor_name(&c, &n), 0);
  assert_int_equal(c.pos, 19);
  name_text(&n, text, sizeof(text));
  assert_string_equal(text, "B.a.");
  /* A pointer to the name's own start is refused. */
  {
    static const uint8_t loop[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                   0xC0, 0x0C};
    rp_dns_cursor_init(&c, loop, sizeof(loop));
    c.pos = 12;
    assert_int_equal(rp_dns_cursor_name(&c, &n), RP_ERR_MALFORMED);
    assert_int_equal(c.pos, 12);
  }
  /* A pointer into the header is refused: what it names would change
     with the ID (fuzz_core_events found a client query that parsed
     with its own ID and not with the one the pool sent it with). */
  {
    static const uint8_t hdr[] = {0x12, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00,
                                  0x00, 0x00, 0x00, 0x00, 0x00, 0xC0, 0x01};
    rp_dns_cursor_init(&c, hdr, sizeof(hdr));
    c.pos = 12;
    assert_int_equal(rp_dns_cursor_name(&c, &n), RP_ERR_MALFORMED);
    assert_int_equal(c.pos, 12);
  }
}

/* ---------------------------------------------------------------- */
/* Captured queries                                                   */
/* ---------------------------------------------------------------- */

typedef struct query_case {
  const char *file;
  uint16_t id;
  const char *qname;
  uint16_t qtype;
  int has_edns;
  uint16_t udp;
  int dnssec_ok;
} query_case;

static const query_case query_cases[] = {
    {"query_dig_a", 4660, "www.example.com.", RP_DNS_TYPE_A, 1, 1232, 0},
    {"query_dig_noedns", 4661, "www.example.com.", RP_DNS_TYPE_A, 0, 0, 0},
    {"query_dig_0x20", 4662, "TxT.eXaMpLe.CoM.", RP_DNS_TYPE_TXT, 1, 1232, 0},
    {"query_dig_dnssec", 4663, "www.example.com.", RP_DNS_TYPE_A, 1, 4096, 1},
    {"query_dig_txt", 4664, "txt.example.com.", RP_DNS_TYPE_TXT, 1, 1232, 0},
    {"query_dig_bigtxt", 4665, "big.example.com.", RP_DNS_TYPE_TXT, 1, 1232,
     0},
    {"query_dig_cname", 4666, "cname.example.com.", RP_DNS_TYPE_A, 1, 1232, 0},
    {"query_dig_aaaa", 4667, "www.example.com.", RP_DNS_TYPE_AAAA, 1, 1232, 0},
    {"query_dig_refused", 4668, "refused.example.com.", RP_DNS_TYPE_A, 1, 1232,
     0},
    {"query_dig_servfail", 4669, "servfail.example.com.", RP_DNS_TYPE_A, 1,
     1232, 0},
    {"query_dig_tc", 4670, "tc.example.com.", RP_DNS_TYPE_A, 1, 1232, 0},
    {"query_dig_root", 4671, ".", RP_DNS_TYPE_NS, 1, 1232, 0},
    {"query_kdig_a", 0xef5d, "www.example.com.", RP_DNS_TYPE_A, 0, 0, 0},
    {"query_kdig_edns", 0x8ee3, "txt.example.com.", RP_DNS_TYPE_TXT, 1, 1232,
     1},
    {"query_kdig_nsid", 0x87f6, "www.example.com.", RP_DNS_TYPE_A, 1, 4096, 0},
};

static void test_dns_parse_queries(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(query_cases) / sizeof(query_cases[0]); i++) {
    const query_case *qc = &query_cases[i];
    uint8_t buf[TEST_BUF_LEN];
    char text[TEST_TEXT_LEN];
    rp_dns_msg m;
    size_t len = load_fixture(qc->file, buf, sizeof(buf));
    print_message("%s\n", qc->file);
    assert_int_equal(rp_dns_parse(&m, buf, len), 0);
    assert_int_equal(m.hdr.id, qc->id);
    assert_int_equal(rp_dns_get_id(buf), qc->id);
    assert_int_equal(m.hdr.flags & RP_DNS_FLAG_QR, 0);
    assert_int_equal(m.hdr.flags & RP_DNS_FLAG_RD, RP_DNS_FLAG_RD);
    assert_int_equal(m.hdr.qdcount, 1);
    assert_true(m.has_question);
    assert_int_equal(m.question.qtype, qc->qtype);
    assert_int_equal(m.question.qclass, RP_DNS_CLASS_IN);
    name_text(&m.question.name, text, sizeof(text));
    assert_string_equal(text, qc->qname);
    assert_int_equal(m.nanswers, 0);
    assert_int_equal(m.has_edns, qc->has_edns);
    assert_int_equal(m.edns_udp_size, qc->udp);
    assert_int_equal(m.edns_do, qc->dnssec_ok);
    assert_int_equal(m.edns_version, 0);
    assert_int_equal(m.rcode, RP_DNS_RCODE_NOERROR);
  }
}

/* ---------------------------------------------------------------- */
/* Captured answers                                                   */
/* ---------------------------------------------------------------- */

typedef struct answer_case {
  const char *file;
  const char *query;
  uint16_t rcode;
  size_t nanswers;
  uint16_t type;
  int has_edns;
  int tc;
  /* txt is the TXT payload size, or -1 when the answers are not TXT. */
  rp_ssize txt;
} answer_case;

static const answer_case answer_cases[] = {
    {"answer_dig_a", "query_dig_a", 0, 2, RP_DNS_TYPE_A, 1, 0, 0},
    {"answer_dig_noedns", "query_dig_noedns", 0, 2, RP_DNS_TYPE_A, 0, 0, 0},
    {"answer_dig_0x20", "query_dig_0x20", 0, 2, RP_DNS_TYPE_TXT, 0, 0, 14},
    {"answer_dig_dnssec", "query_dig_dnssec", 0, 2, RP_DNS_TYPE_A, 1, 0, 0},
    {"answer_dig_txt", "query_dig_txt", 0, 2, RP_DNS_TYPE_TXT, 0, 0, 14},
    {"answer_dig_bigtxt", "query_dig_bigtxt", 0, 1, RP_DNS_TYPE_TXT, 0, 0,
     300},
    {"answer_dig_cname", "query_dig_cname", 0, 1, RP_DNS_TYPE_CNAME, 1, 0, 0},
    {"answer_dig_aaaa", "query_dig_aaaa", 0, 1, RP_DNS_TYPE_AAAA, 1, 0, 0},
    {"answer_dig_refused", "query_dig_refused", RP_DNS_RCODE_REFUSED, 0, 0, 1,
     0, 0},
    {"answer_dig_servfail", "query_dig_servfail", RP_DNS_RCODE_SERVFAIL, 0, 0,
     1, 0, 0},
    {"answer_dig_tc", "query_dig_tc", 0, 0, 0, 1, 1, 0},
    {"answer_kdig_a", "query_kdig_a", 0, 2, RP_DNS_TYPE_A, 0, 0, 0},
    {"answer_kdig_edns", "query_kdig_edns", 0, 2, RP_DNS_TYPE_TXT, 0, 0, 14},
    {"answer_kdig_nsid", "query_kdig_nsid", 0, 2, RP_DNS_TYPE_A, 1, 0, 0},
};

static void test_dns_parse_answers(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(answer_cases) / sizeof(answer_cases[0]); i++) {
    const answer_case *ac = &answer_cases[i];
    uint8_t abuf[TEST_BUF_LEN];
    uint8_t qbuf[TEST_BUF_LEN];
    rp_dns_msg a;
    rp_dns_msg q;
    size_t alen = load_fixture(ac->file, abuf, sizeof(abuf));
    size_t qlen = load_fixture(ac->query, qbuf, sizeof(qbuf));
    size_t j;
    print_message("%s\n", ac->file);
    assert_int_equal(rp_dns_parse(&a, abuf, alen), 0);
    assert_int_equal(rp_dns_parse(&q, qbuf, qlen), 0);
    assert_int_equal(a.hdr.id, q.hdr.id);
    assert_int_equal(a.hdr.flags & RP_DNS_FLAG_QR, RP_DNS_FLAG_QR);
    assert_int_equal(a.rcode, ac->rcode);
    assert_int_equal(rp_dns_rcode(abuf), ac->rcode);
    assert_int_equal(rp_dns_is_truncated(abuf), ac->tc);
    assert_int_equal(a.has_edns, ac->has_edns);
    assert_true(a.has_question);
    /* The answer echoes the question exactly, 0x20 case included. */
    assert_true(rp_dns_question_equal(&a.question, &q.question));
    assert_int_equal(a.nanswers, ac->nanswers);
    for (j = 0; j < a.nanswers; j++) {
      assert_int_equal(a.answers[j].type, ac->type);
      assert_true(rp_dns_name_equal(&a.answers[j].name, &q.question.name));
      assert_int_equal(a.answers[j].ttl, 60);
      assert_true(a.answers[j].rdata_off + a.answers[j].rdata_len <= alen);
    }
    assert_int_equal(rp_dns_txt_payload_size(&a), ac->txt);
  }
}

static void test_dns_parse_answer_rdata(void **state) {
  uint8_t buf[TEST_BUF_LEN];
  uint8_t out[TEST_BUF_LEN];
  char text[TEST_TEXT_LEN];
  rp_dns_msg m;
  rp_dns_cursor c;
  rp_dns_name target;
  size_t len;
  (void)state;

  len = load_fixture("answer_dig_a", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(m.answers[0].rdata_len, 4);
  assert_memory_equal(buf + m.answers[0].rdata_off, "\xc0\x00\x02\x02", 4);
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[0], out, sizeof(out)),
                   RP_ERR_MALFORMED);

  len = load_fixture("answer_dig_aaaa", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(m.answers[0].rdata_len, 16);
  assert_memory_equal(buf + m.answers[0].rdata_off,
                      "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);

  len = load_fixture("answer_dig_cname", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  rp_dns_cursor_init(&c, buf, len);
  c.pos = m.answers[0].rdata_off;
  assert_int_equal(rp_dns_cursor_name(&c, &target), 0);
  name_text(&target, text, sizeof(text));
  assert_string_equal(text, "target.example.net.");

  len = load_fixture("handmade_cname_compressed", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  c.pos = m.answers[0].rdata_off;
  rp_dns_cursor_init(&c, buf, len);
  c.pos = m.answers[0].rdata_off;
  assert_int_equal(rp_dns_cursor_name(&c, &target), 0);
  name_text(&target, text, sizeof(text));
  assert_string_equal(text, "cdn.example.com.");
}

static void test_dns_parse_txt(void **state) {
  uint8_t buf[TEST_BUF_LEN];
  uint8_t out[TEST_BUF_LEN];
  rp_dns_msg m;
  size_t len;
  size_t i;
  (void)state;

  len = load_fixture("answer_dig_txt", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[0], out, sizeof(out)), 10);
  assert_memory_equal(out, "helloworld", 10);
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[1], out, sizeof(out)), 4);
  assert_memory_equal(out, "abcd", 4);
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[0], out, 9), RP_ERR_NOBUF);
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[0], out, 10), 10);

  len = load_fixture("answer_dig_bigtxt", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[0], out, sizeof(out)), 300);
  for (i = 0; i < 300; i++) {
    assert_int_equal(out[i], i < 255 ? 'x' : 'y');
  }

  len = load_fixture("handmade_empty_txt", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(m.nanswers, 1);
  assert_int_equal(rp_dns_txt_payload_size(&m), 0);
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[0], NULL, 0), 0);

  /* txt_read re-checks the rdata: a doctored record is refused. */
  len = load_fixture("answer_dig_txt", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  m.answers[0].rdata_len = 5;
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[0], out, sizeof(out)),
                   RP_ERR_MALFORMED);
  assert_int_equal(rp_dns_txt_payload_size(&m), RP_ERR_MALFORMED);
  m.answers[0].rdata_len = 12;
  m.answers[0].rdata_off = len - 4;
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[0], out, sizeof(out)),
                   RP_ERR_MALFORMED);
}

/* ---------------------------------------------------------------- */
/* Malformed and hand-made messages                                   */
/* ---------------------------------------------------------------- */

static const char *const malformed_cases[] = {
    "malformed_trunc_header",
    "malformed_trunc_name",
    "malformed_trunc_qtype",
    "malformed_ptr_loop",
    "malformed_ptr_self",
    "malformed_ptr_label_loop",
    "malformed_ptr_past_end",
    "malformed_ptr_trunc",
    "malformed_ptr_forward",
    "malformed_label64",
    "malformed_label_0x80",
    "malformed_name256",
    "malformed_name256_ptr",
    "malformed_two_questions",
    "malformed_rdata_past_end",
    "malformed_answer_missing",
    "malformed_a_len5",
    "malformed_aaaa_len4",
    "malformed_cname_trailing",
    "malformed_txt_overrun",
    "malformed_txt_overrun2",
    "malformed_opt_owner",
    "malformed_opt_two",
    "malformed_opt_option_overrun",
    "malformed_opt_option_trunc",
    "malformed_auth_trunc",
};

static void test_dns_parse_malformed(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(malformed_cases) / sizeof(malformed_cases[0]); i++) {
    uint8_t buf[TEST_BUF_LEN];
    rp_dns_msg m;
    size_t len = load_fixture(malformed_cases[i], buf, sizeof(buf));
    print_message("%s\n", malformed_cases[i]);
    assert_int_equal(rp_dns_parse(&m, buf, len), RP_ERR_MALFORMED);
  }
}

/* Every prefix of a valid captured message either parses or is refused,
   and every strict prefix of a message without trailing bytes is
   refused. */
static void test_dns_parse_truncations(void **state) {
  static const char *const files[] = {"answer_dig_txt", "answer_dig_a",
                                      "answer_dig_cname", "query_kdig_nsid",
                                      "answer_dig_bigtxt"};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    uint8_t buf[TEST_BUF_LEN];
    size_t len = load_fixture(files[i], buf, sizeof(buf));
    size_t cut;
    for (cut = 0; cut < len; cut++) {
      rp_dns_msg m;
      assert_int_equal(rp_dns_parse(&m, buf, cut), RP_ERR_MALFORMED);
    }
  }
}

static void test_dns_parse_handmade(void **state) {
  uint8_t buf[TEST_BUF_LEN];
  char text[TEST_TEXT_LEN];
  rp_dns_msg m;
  size_t len;
  (void)state;

  len = load_fixture("handmade_ptr_chain", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(m.nanswers, 2);
  assert_true(rp_dns_name_equal(&m.answers[1].name, &m.question.name));

  len = load_fixture("handmade_name255", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(m.question.name.len, 255);

  len = load_fixture("handmade_label63", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(m.question.name.len, 65);

  len = load_fixture("handmade_ext_rcode", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_true(m.has_edns);
  assert_int_equal(m.rcode, 16);
  assert_int_equal(m.edns_do, 1);
  assert_int_equal(rp_dns_rcode(buf), 0);

  len = load_fixture("handmade_empty_txt", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(m.hdr.nscount, 1);

  len = load_fixture("handmade_no_question", buf, sizeof(buf));
  assert_int_equal(len, RP_DNS_HEADER_LEN);
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_false(m.has_question);
  assert_int_equal(m.rcode, RP_DNS_RCODE_REFUSED);

  len = load_fixture("handmade_cname_compressed", buf, sizeof(buf));
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  name_text(&m.answers[0].name, text, sizeof(text));
  assert_string_equal(text, "www.example.com.");
}

static void test_dns_parse_many_answers(void **state) {
  uint8_t buf[TEST_BUF_LEN];
  uint8_t addr[4] = {127, 0, 0, 0};
  rp_dns_name n = make_name("many.example");
  rp_dns_builder b;
  rp_dns_msg m;
  rp_ssize len;
  size_t i;
  (void)state;
  rp_dns_builder_init(&b, buf, sizeof(buf), 7, RP_DNS_FLAG_QR);
  rp_dns_builder_question(&b, &n, RP_DNS_TYPE_A, RP_DNS_CLASS_IN);
  for (i = 0; i < RP_DNS_MAX_RRS + 8; i++) {
    addr[3] = (uint8_t)i;
    rp_dns_builder_rr_a(&b, &n, 1, addr);
  }
  len = rp_dns_builder_finish(&b);
  assert_true(len > 0);
  assert_int_equal(rp_dns_parse(&m, buf, (size_t)len), 0);
  assert_int_equal(m.hdr.ancount, RP_DNS_MAX_RRS + 8);
  assert_int_equal(m.nanswers, RP_DNS_MAX_RRS);
  assert_int_equal(buf[m.answers[RP_DNS_MAX_RRS - 1].rdata_off + 3],
                   RP_DNS_MAX_RRS - 1);
  /* A broken record past the kept ones still fails the parse. */
  assert_int_equal(rp_dns_parse(&m, buf, (size_t)len - 1), RP_ERR_MALFORMED);
  buf[len - 5] = 9; /* the last rdlength: 4 -> 9 */
  assert_int_equal(rp_dns_parse(&m, buf, (size_t)len), RP_ERR_MALFORMED);
}

/* ---------------------------------------------------------------- */
/* Names                                                              */
/* ---------------------------------------------------------------- */

static void test_dns_name_text(void **state) {
  rp_dns_name n;
  char text[TEST_TEXT_LEN];
  char big[TEST_TEXT_LEN];
  (void)state;

  n = make_name("WwW.ExAmPlE.cOm");
  assert_int_equal(n.len, 17);
  assert_memory_equal(n.wire, "\3WwW\7ExAmPlE\3cOm\0", 17);
  assert_int_equal(rp_dns_name_to_text(&n, text, sizeof(text)), 16);
  assert_string_equal(text, "WwW.ExAmPlE.cOm.");
  assert_int_equal(rp_dns_name_to_text(&n, text, 16), RP_ERR_NOBUF);
  assert_int_equal(rp_dns_name_to_text(&n, text, 17), 16);

  n = make_name("a.b.");
  assert_int_equal(n.len, 5);
  n = make_name(".");
  assert_int_equal(n.len, 1);
  assert_int_equal(rp_dns_name_to_text(&n, text, sizeof(text)), 1);
  assert_string_equal(text, ".");
  assert_int_equal(rp_dns_name_to_text(&n, text, 1), RP_ERR_NOBUF);
  n = make_name("");
  assert_int_equal(n.len, 1);

  assert_int_equal(rp_dns_name_from_text(&n, "a..b"), RP_ERR_MALFORMED);
  assert_int_equal(rp_dns_name_from_text(&n, ".a"), RP_ERR_MALFORMED);
  assert_int_equal(rp_dns_name_from_text(&n, "a.."), RP_ERR_MALFORMED);

  /* Label 63 is fine, 64 is not. */
  memset(big, 'x', 64);
  big[63] = '\0';
  assert_int_equal(rp_dns_name_from_text(&n, big), 0);
  assert_int_equal(n.len, 65);
  big[63] = 'x';
  big[64] = '\0';
  assert_int_equal(rp_dns_name_from_text(&n, big), RP_ERR_MALFORMED);

  /* 255 wire bytes are fine, 256 are not: 3 x 63 + one label of 61 is
     3 * 64 + 62 + 1 = 255. */
  memset(big, 'y', sizeof(big));
  big[63] = '.';
  big[127] = '.';
  big[191] = '.';
  big[192 + 61] = '\0';
  assert_int_equal(rp_dns_name_from_text(&n, big), 0);
  assert_int_equal(n.len, 255);
  big[192 + 61] = 'y';
  big[192 + 62] = '\0';
  assert_int_equal(rp_dns_name_from_text(&n, big), RP_ERR_MALFORMED);

  /* Bytes outside printable ASCII, dots and backslashes are escaped. */
  memcpy(n.wire, "\4a.\\\x01\1 \0", 8);
  n.len = 8;
  assert_int_equal(rp_dns_name_to_text(&n, text, sizeof(text)), 19);
  assert_string_equal(text, "a\\046\\092\\001.\\032.");

  /* A worst-case name fits in 4 bytes a byte plus dots. */
  memset(n.wire, 0xFF, sizeof(n.wire));
  n.wire[0] = 63;
  n.wire[64] = 63;
  n.wire[128] = 63;
  n.wire[192] = 61;
  n.wire[254] = 0;
  n.len = 255;
  assert_int_equal(rp_dns_name_to_text(&n, text, sizeof(text)),
                   250 * 4 + 4);
  /* A malformed name is refused. */
  n.len = 3;
  assert_int_equal(rp_dns_name_to_text(&n, text, sizeof(text)),
                   RP_ERR_MALFORMED);
}

static void test_dns_name_compare(void **state) {
  rp_dns_name a = make_name("WwW.ExAmPlE.cOm");
  rp_dns_name b = make_name("www.example.com");
  rp_dns_name zone = make_name("EXAMPLE.com");
  rp_dns_name other = make_name("xample.com");
  rp_dns_name root = make_name(".");
  rp_dns_question qa = {.name = a, .qtype = 16, .qclass = 1};
  rp_dns_question qb = {.name = b, .qtype = 16, .qclass = 1};
  rp_dns_question qc = {.name = a, .qtype = 1, .qclass = 1};
  rp_dns_question qd = {.name = a, .qtype = 16, .qclass = 1};
  (void)state;
  assert_false(rp_dns_name_equal(&a, &b));
  assert_true(rp_dns_name_equal(&a, &a));
  assert_true(rp_dns_name_equal_nocase(&a, &b));
  assert_false(rp_dns_name_equal_nocase(&a, &zone));
  assert_false(rp_dns_question_equal(&qa, &qb));
  assert_false(rp_dns_question_equal(&qa, &qc));
  assert_true(rp_dns_question_equal(&qa, &qd));
  qd.qclass = 3;
  assert_false(rp_dns_question_equal(&qa, &qd));
  assert_true(rp_dns_name_is_subdomain(&a, &zone));
  assert_true(rp_dns_name_is_subdomain(&zone, &zone));
  assert_true(rp_dns_name_is_subdomain(&a, &root));
  assert_false(rp_dns_name_is_subdomain(&zone, &a));
  assert_false(rp_dns_name_is_subdomain(&a, &other));
  other = make_name("wexample.com");
  assert_false(rp_dns_name_is_subdomain(&other, &zone));
}

/* ---------------------------------------------------------------- */
/* Building                                                           */
/* ---------------------------------------------------------------- */

static void test_dns_roundtrip_query(void **state) {
  uint8_t buf[TEST_BUF_LEN];
  rp_dns_name n = make_name("aBcDeF.t.ExAmple.ORG");
  rp_dns_msg m;
  rp_ssize len;
  (void)state;
  len = rp_dns_build_query(buf, sizeof(buf), 0xBEEF, &n, RP_DNS_TYPE_TXT,
                           RP_DNS_EDNS_UDP_SIZE);
  assert_int_equal(len, 12 + n.len + 4 + 11);
  assert_int_equal(rp_dns_parse(&m, buf, (size_t)len), 0);
  assert_int_equal(m.hdr.id, 0xBEEF);
  assert_int_equal(m.hdr.flags, RP_DNS_FLAG_RD);
  assert_true(rp_dns_name_equal(&m.question.name, &n));
  assert_int_equal(m.question.qtype, RP_DNS_TYPE_TXT);
  assert_true(m.has_edns);
  assert_int_equal(m.edns_udp_size, RP_DNS_EDNS_UDP_SIZE);
  assert_false(m.edns_do);

  len = rp_dns_build_query(buf, sizeof(buf), 1, &n, RP_DNS_TYPE_A, 0);
  assert_int_equal(len, 12 + n.len + 4);
  assert_int_equal(rp_dns_parse(&m, buf, (size_t)len), 0);
  assert_false(m.has_edns);
  assert_int_equal(rp_dns_build_query(buf, (size_t)len - 1, 1, &n,
                                      RP_DNS_TYPE_A, 0),
                   RP_ERR_NOBUF);
  assert_int_equal(rp_dns_build_query(buf, 11, 1, &n, RP_DNS_TYPE_A, 0),
                   RP_ERR_NOBUF);

  /* Identical to what dig sends without EDNS, ID and all. */
  {
    uint8_t dig[TEST_BUF_LEN];
    size_t dlen = load_fixture("query_dig_noedns", dig, sizeof(dig));
    rp_dns_name w = make_name("www.example.com");
    rp_dns_builder b;
    rp_dns_builder_init(&b, buf, sizeof(buf), 4661,
                        RP_DNS_FLAG_RD | 0x0020u /* AD, as dig sets */);
    rp_dns_builder_question(&b, &w, RP_DNS_TYPE_A, RP_DNS_CLASS_IN);
    len = rp_dns_builder_finish(&b);
    assert_int_equal(len, dlen);
    assert_memory_equal(buf, dig, dlen);
  }
}

static void test_dns_set_id(void **state) {
  uint8_t buf[TEST_BUF_LEN];
  uint8_t copy[TEST_BUF_LEN];
  rp_dns_msg m;
  size_t len = load_fixture("answer_dig_txt", buf, sizeof(buf));
  (void)state;
  memcpy(copy, buf, len);
  assert_int_equal(rp_dns_get_id(buf), 4664);
  rp_dns_set_id(buf, 0xA55A);
  assert_int_equal(rp_dns_get_id(buf), 0xA55A);
  assert_int_equal(buf[0], 0xA5);
  assert_int_equal(buf[1], 0x5A);
  assert_memory_equal(buf + 2, copy + 2, len - 2);
  assert_int_equal(rp_dns_parse(&m, buf, len), 0);
  assert_int_equal(m.hdr.id, 0xA55A);
  rp_dns_set_id(buf, 4664);
  assert_memory_equal(buf, copy, len);
}

static void test_dns_builder_records(void **state) {
  uint8_t buf[TEST_BUF_LEN];
  uint8_t out[TEST_BUF_LEN];
  uint8_t data[600];
  static const uint8_t a4[4] = {10, 1, 2, 3};
  static const uint8_t a6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 7};
  rp_dns_name n = make_name("Rec.Example");
  rp_dns_name t = make_name("target.example");
  rp_dns_builder b;
  rp_dns_msg m;
  rp_dns_cursor c;
  rp_dns_name got;
  rp_ssize len;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(data); i++) {
    data[i] = (uint8_t)i;
  }
  rp_dns_builder_init(&b, buf, sizeof(buf), 99,
                      RP_DNS_FLAG_QR | RP_DNS_FLAG_AA | RP_DNS_RCODE_NXDOMAIN);
  rp_dns_builder_question(&b, &n, RP_DNS_TYPE_TXT, RP_DNS_CLASS_IN);
  rp_dns_builder_rr_a(&b, &n, 10, a4);
  rp_dns_builder_rr_aaaa(&b, &n, 20, a6);
  rp_dns_builder_rr_cname(&b, &n, 30, &t);
  rp_dns_builder_rr_txt(&b, &n, 40, data, 0);
  rp_dns_builder_rr_txt(&b, &n, 40, data, 255);
  rp_dns_builder_rr_txt(&b, &n, 40, data, 256);
  rp_dns_builder_rr_txt(&b, &n, 40, data, 510);
  rp_dns_builder_rr_txt(&b, &n, 40, data, 511);
  rp_dns_builder_opt(&b, 4000, 1);
  len = rp_dns_builder_finish(&b);
  assert_true(len > 0);
  assert_int_equal(rp_dns_parse(&m, buf, (size_t)len), 0);
  assert_int_equal(m.rcode, RP_DNS_RCODE_NXDOMAIN);
  assert_int_equal(m.hdr.id, 99);
  assert_int_equal(m.nanswers, 8);
  assert_int_equal(m.answers[0].type, RP_DNS_TYPE_A);
  assert_int_equal(m.answers[0].ttl, 10);
  assert_memory_equal(buf + m.answers[0].rdata_off, a4, 4);
  assert_int_equal(m.answers[1].type, RP_DNS_TYPE_AAAA);
  assert_memory_equal(buf + m.answers[1].rdata_off, a6, 16);
  assert_int_equal(m.answers[2].type, RP_DNS_TYPE_CNAME);
  rp_dns_cursor_init(&c, buf, (size_t)len);
  c.pos = m.answers[2].rdata_off;
  assert_int_equal(rp_dns_cursor_name(&c, &got), 0);
  assert_true(rp_dns_name_equal(&got, &t));
  /* Strings: 0 -> 1 empty, 255 -> 1, 256 -> 2, 510 -> 2, 511 -> 3. */
  assert_int_equal(m.answers[3].rdata_len, 1);
  assert_int_equal(m.answers[4].rdata_len, 256);
  assert_int_equal(m.answers[5].rdata_len, 258);
  assert_int_equal(m.answers[6].rdata_len, 512);
  assert_int_equal(m.answers[7].rdata_len, 514);
  assert_int_equal(rp_dns_txt_read(&m, &m.answers[7], out, sizeof(out)), 511);
  assert_memory_equal(out, data, 511);
  assert_int_equal(rp_dns_txt_payload_size(&m), 255 + 256 + 510 + 511);
  assert_true(m.has_edns);
  assert_int_equal(m.edns_udp_size, 4000);
  assert_true(m.edns_do);
  for (i = 0; i < m.nanswers; i++) {
    assert_true(rp_dns_name_equal(&m.answers[i].name, &n));
  }
}

static void test_dns_builder_errors(void **state) {
  uint8_t buf[TEST_BUF_LEN];
  static uint8_t huge[70000];
  static uint8_t huge_data[RP_DNS_MAX_MSG_LEN];
  static const uint8_t a4[4] = {1, 2, 3, 4};
  rp_dns_name n = make_name("x.y");
  rp_dns_name bad = n;
  rp_dns_builder b;
  (void)state;

  /* Sections out of order. */
  rp_dns_builder_init(&b, buf, sizeof(buf), 1, 0);
  rp_dns_builder_rr_a(&b, &n, 1, a4);
  rp_dns_builder_question(&b, &n, 1, 1);
  assert_int_equal(rp_dns_builder_finish(&b), RP_ERR_INVALID_ARGUMENT);
  rp_dns_builder_init(&b, buf, sizeof(buf), 1, 0);
  rp_dns_builder_opt(&b, 512, 0);
  rp_dns_builder_rr_a(&b, &n, 1, a4);
  assert_int_equal(rp_dns_builder_finish(&b), RP_ERR_INVALID_ARGUMENT);

  /* A broken name. */
  bad.len = 2;
  rp_dns_builder_init(&b, buf, sizeof(buf), 1, 0);
  rp_dns_builder_question(&b, &bad, 1, 1);
  assert_int_equal(rp_dns_builder_finish(&b), RP_ERR_INVALID_ARGUMENT);
  rp_dns_builder_init(&b, buf, sizeof(buf), 1, 0);
  rp_dns_builder_rr_cname(&b, &n, 1, &bad);
  assert_int_equal(rp_dns_builder_finish(&b), RP_ERR_INVALID_ARGUMENT);

  /* TXT rdata over 65535 bytes. */
  rp_dns_builder_init(&b, huge, sizeof(huge), 1, 0);
  rp_dns_builder_rr_txt(&b, &n, 1, huge_data, 65280);
  assert_int_equal(rp_dns_builder_finish(&b), RP_ERR_INVALID_ARGUMENT);
  rp_dns_builder_init(&b, huge, sizeof(huge), 1, 0);
  rp_dns_builder_rr_txt(&b, &n, 1, huge_data, 65279); /* 65279 + 256 = 65535 */
  assert_true(rp_dns_builder_finish(&b) > 0);

  /* No room: the first error sticks and nothing is written past cap. */
  memset(buf, 0xAB, sizeof(buf));
  rp_dns_builder_init(&b, buf, 20, 1, 0);
  rp_dns_builder_question(&b, &n, 1, 1);
  rp_dns_builder_rr_a(&b, &n, 1, a4);
  assert_int_equal(b.err, RP_ERR_NOBUF);
  assert_int_equal(rp_dns_builder_finish(&b), RP_ERR_NOBUF);
  assert_int_equal(buf[20], 0xAB);
  rp_dns_builder_init(&b, buf, 11, 1, 0);
  assert_int_equal(rp_dns_builder_finish(&b), RP_ERR_NOBUF);
  /* Exactly enough. */
  rp_dns_builder_init(&b, buf, 12 + 5 + 4, 1, 0);
  rp_dns_builder_question(&b, &n, 1, 1);
  assert_int_equal(rp_dns_builder_finish(&b), 21);
}

/* ---------------------------------------------------------------- */
/* Error answers                                                      */
/* ---------------------------------------------------------------- */

static void test_dns_build_error(void **state) {
  static const char *const files[] = {"query_dig_a", "query_dig_noedns",
                                      "query_dig_0x20", "query_dig_dnssec",
                                      "query_kdig_nsid", "query_kdig_a"};
  static const uint8_t rcodes[] = {RP_DNS_RCODE_REFUSED,
                                   RP_DNS_RCODE_SERVFAIL,
                                   RP_DNS_RCODE_FORMERR};
  size_t i;
  size_t r;
  (void)state;
  for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    for (r = 0; r < sizeof(rcodes); r++) {
      uint8_t q[TEST_BUF_LEN];
      uint8_t out[TEST_BUF_LEN];
      rp_dns_msg qm;
      rp_dns_msg am;
      size_t qlen = load_fixture(files[i], q, sizeof(q));
      rp_ssize len;
      print_message("%s rcode %u\n", files[i], rcodes[r]);
      assert_int_equal(rp_dns_parse(&qm, q, qlen), 0);
      len = rp_dns_build_error(out, sizeof(out), q, qlen, rcodes[r]);
      assert_true(len > 0);
      assert_int_equal(len, 12 + qm.question.name.len + 4 +
                                (qm.has_edns ? 11 : 0));
      assert_int_equal(rp_dns_parse(&am, out, (size_t)len), 0);
      assert_int_equal(am.hdr.id, qm.hdr.id);
      assert_int_equal(am.rcode, rcodes[r]);
      assert_int_equal(rp_dns_rcode(out), rcodes[r]);
      assert_int_equal(am.hdr.flags & ~RP_DNS_RCODE_MASK,
                       RP_DNS_FLAG_QR | RP_DNS_FLAG_RA |
                           (qm.hdr.flags &
                            (RP_DNS_FLAG_RD | RP_DNS_OPCODE_MASK)));
      assert_true(am.has_question);
      assert_true(rp_dns_question_equal(&am.question, &qm.question));
      assert_int_equal(am.nanswers, 0);
      assert_int_equal(am.hdr.nscount, 0);
      assert_int_equal(am.has_edns, qm.has_edns);
      assert_int_equal(am.edns_do, qm.edns_do);
      assert_int_equal(rp_dns_build_error(out, (size_t)len - 1, q, qlen,
                                          rcodes[r]),
                       RP_ERR_NOBUF);
    }
  }
}

static void test_dns_build_error_malformed(void **state) {
  uint8_t q[TEST_BUF_LEN];
  uint8_t out[TEST_BUF_LEN];
  rp_dns_msg am;
  size_t qlen;
  rp_ssize len;
  (void)state;

  /* The question does not parse: a bare header. */
  qlen = load_fixture("malformed_ptr_loop", q, sizeof(q));
  len = rp_dns_build_error(out, sizeof(out), q, qlen, RP_DNS_RCODE_FORMERR);
  assert_int_equal(len, RP_DNS_HEADER_LEN);
  assert_int_equal(rp_dns_parse(&am, out, (size_t)len), 0);
  assert_int_equal(am.hdr.id, 0x1234);
  assert_int_equal(am.hdr.qdcount + am.hdr.ancount + am.hdr.nscount +
                       am.hdr.arcount,
                   0);
  assert_int_equal(am.rcode, RP_DNS_RCODE_FORMERR);
  assert_int_equal(am.hdr.flags & RP_DNS_FLAG_RD, RP_DNS_FLAG_RD);
  assert_int_equal(rp_dns_build_error(out, 11, q, qlen, 1), RP_ERR_NOBUF);

  /* Two questions: a bare header too. */
  qlen = load_fixture("malformed_two_questions", q, sizeof(q));
  len = rp_dns_build_error(out, sizeof(out), q, qlen, RP_DNS_RCODE_FORMERR);
  assert_int_equal(len, RP_DNS_HEADER_LEN);

  /* A good question with a broken OPT after it: the question is echoed,
     the OPT is not. */
  qlen = load_fixture("malformed_opt_two", q, sizeof(q));
  len = rp_dns_build_error(out, sizeof(out), q, qlen, RP_DNS_RCODE_FORMERR);
  assert_int_equal(rp_dns_parse(&am, out, (size_t)len), 0);
  assert_true(am.has_question);
  assert_false(am.has_edns);
  assert_int_equal(len, 12 + 17 + 4);

  /* Under 12 bytes. */
  qlen = load_fixture("malformed_trunc_header", q, sizeof(q));
  assert_int_equal(rp_dns_build_error(out, sizeof(out), q, qlen, 2),
                   RP_ERR_MALFORMED);

  /* An extended rcode goes to the OPT record when there is one. */
  qlen = load_fixture("query_dig_a", q, sizeof(q));
  len = rp_dns_build_error(out, sizeof(out), q, qlen, 16);
  assert_int_equal(rp_dns_parse(&am, out, (size_t)len), 0);
  assert_int_equal(am.rcode, 16);
  assert_int_equal(rp_dns_rcode(out), 0);
}

/* ---------------------------------------------------------------- */
/* TXT answers and room                                               */
/* ---------------------------------------------------------------- */

static void test_dns_build_txt_answer(void **state) {
  uint8_t q[TEST_BUF_LEN];
  uint8_t out[TEST_BUF_LEN];
  uint8_t data[1000];
  uint8_t back[1000];
  rp_dns_msg qm;
  rp_dns_msg am;
  size_t qlen;
  rp_ssize len;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(data); i++) {
    data[i] = (uint8_t)(i * 7);
  }
  qlen = load_fixture("query_kdig_edns", q, sizeof(q));
  assert_int_equal(rp_dns_parse(&qm, q, qlen), 0);
  len = rp_dns_build_txt_answer(out, sizeof(out), &qm, 0, data, 600);
  assert_true(len > 0);
  assert_int_equal(rp_dns_parse(&am, out, (size_t)len), 0);
  assert_int_equal(am.hdr.id, qm.hdr.id);
  assert_int_equal(am.hdr.flags, RP_DNS_FLAG_QR | RP_DNS_FLAG_AA |
                                     RP_DNS_FLAG_RD);
  assert_true(rp_dns_question_equal(&am.question, &qm.question));
  assert_int_equal(am.nanswers, 1);
  assert_int_equal(am.answers[0].type, RP_DNS_TYPE_TXT);
  assert_int_equal(am.answers[0].ttl, 0);
  /* The owner is a pointer to the question. */
  assert_int_equal(out[12 + qm.question.name.len + 4], 0xC0);
  assert_int_equal(out[12 + qm.question.name.len + 5], 0x0C);
  assert_true(rp_dns_name_equal(&am.answers[0].name, &qm.question.name));
  assert_int_equal(rp_dns_txt_payload_size(&am), 600);
  assert_int_equal(rp_dns_txt_read(&am, &am.answers[0], back, sizeof(back)),
                   600);
  assert_memory_equal(back, data, 600);
  assert_true(am.has_edns);
  assert_true(am.edns_do);
  assert_int_equal(am.edns_udp_size, RP_DNS_EDNS_UDP_SIZE);

  /* No EDNS in the query, none in the answer; 0x20 case echoed. */
  qlen = load_fixture("query_dig_0x20", q, sizeof(q));
  assert_int_equal(rp_dns_parse(&qm, q, qlen), 0);
  qm.has_edns = 0;
  len = rp_dns_build_txt_answer(out, sizeof(out), &qm, 5, data, 0);
  assert_int_equal(len, 12 + qm.question.name.len + 4 + 2 + 10 + 1);
  assert_int_equal(rp_dns_parse(&am, out, (size_t)len), 0);
  assert_false(am.has_edns);
  assert_int_equal(am.hdr.flags & RP_DNS_FLAG_RD, RP_DNS_FLAG_RD);
  assert_memory_equal(out + 12, "\3TxT\7eXaMpLe\3CoM", 16);
  assert_int_equal(rp_dns_txt_payload_size(&am), 0);

  /* A query without a question cannot be answered. */
  qm.has_question = 0;
  assert_int_equal(rp_dns_build_txt_answer(out, sizeof(out), &qm, 5, data, 1),
                   RP_ERR_INVALID_ARGUMENT);
}

static size_t name_of_len(rp_dns_name *n, size_t wire_len) {
  /* Labels of up to 63 bytes ('a', 'b'...), then the root. A label
     takes its length + 1 bytes, so a single byte cannot be left over. */
  size_t pos = 0;
  size_t left = wire_len - 1;
  char c = 'a';
  assert_true(wire_len != 2 && wire_len >= 1);
  while (left > 0) {
    size_t lab = left - 1 > RP_DNS_MAX_LABEL_LEN ? RP_DNS_MAX_LABEL_LEN
                                                  : left - 1;
    if (left - (lab + 1) == 1) {
      lab--;
    }
    n->wire[pos] = (uint8_t)lab;
    memset(n->wire + pos + 1, c++, lab);
    pos += 1 + lab;
    left -= 1 + lab;
  }
  n->wire[pos++] = 0;
  n->len = (uint8_t)pos;
  return pos;
}

/* txt_fits builds an answer with |n| payload bytes into |limit| bytes. */
static int txt_fits(const rp_dns_msg *qm, size_t limit, size_t n) {
  static uint8_t out[RP_DNS_MAX_MSG_LEN];
  static uint8_t data[RP_DNS_MAX_MSG_LEN];
  rp_ssize len = rp_dns_build_txt_answer(out, limit, qm, 0, data, n);
  if (len >= 0) {
    assert_true((size_t)len <= limit);
    return 1;
  }
  assert_int_equal(len, RP_ERR_NOBUF);
  return 0;
}

static void test_dns_txt_room(void **state) {
  static const size_t name_lens[] = {1, 5, 17, 64, 100, 200, 255};
  static const size_t limits[] = {RP_DNS_MAX_UDP_DEFAULT,
                                  RP_DNS_EDNS_UDP_SIZE, 4096};
  uint8_t q[TEST_BUF_LEN];
  size_t i;
  size_t l;
  int opt;
  (void)state;
  for (i = 0; i < sizeof(name_lens) / sizeof(name_lens[0]); i++) {
    rp_dns_name n;
    assert_int_equal(name_of_len(&n, name_lens[i]), name_lens[i]);
    for (opt = 0; opt <= 1; opt++) {
      rp_dns_msg qm;
      rp_ssize qlen = rp_dns_build_query(q, sizeof(q), 1, &n, RP_DNS_TYPE_TXT,
                                         opt ? RP_DNS_EDNS_UDP_SIZE : 0);
      assert_true(qlen > 0);
      assert_int_equal(rp_dns_parse(&qm, q, (size_t)qlen), 0);
      for (l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
        size_t room = rp_dns_txt_room(&n, limits[l], opt);
        print_message("name %zu opt %d limit %zu room %zu\n", name_lens[i],
                      opt, limits[l], room);
        assert_true(room > 0);
        assert_true(txt_fits(&qm, limits[l], room));
        assert_false(txt_fits(&qm, limits[l], room + 1));
      }
    }
  }
  /* Known values for a 1232 answer: 1232 - 12 - 4 - 2 - 10 - 11 = 1193
     minus the question name; 1193 - 17 = 1176 bytes of rdata carry
     1176 - 5 = 1171 payload bytes. */
  {
    rp_dns_name w = make_name("www.example.com");
    assert_int_equal(rp_dns_txt_room(&w, 1232, 1), 1171);
    assert_int_equal(rp_dns_txt_room(&w, 512, 0), 512 - 45 - 2);
    assert_int_equal(rp_dns_txt_room(&w, 45, 0), 0);
    assert_int_equal(rp_dns_txt_room(&w, 46, 0), 0);
    assert_int_equal(rp_dns_txt_room(&w, 47, 0), 1);
  }
}

/* Every limit from 0 to 1400, both with and without OPT, for two names:
   room is the largest payload that fits. */
static void test_dns_txt_room_sweep(void **state) {
  static const size_t name_lens[] = {17, 130};
  uint8_t q[TEST_BUF_LEN];
  size_t i;
  size_t limit;
  int opt;
  (void)state;
  for (i = 0; i < sizeof(name_lens) / sizeof(name_lens[0]); i++) {
    rp_dns_name n;
    name_of_len(&n, name_lens[i]);
    for (opt = 0; opt <= 1; opt++) {
      rp_dns_msg qm;
      rp_ssize qlen = rp_dns_build_query(q, sizeof(q), 1, &n, RP_DNS_TYPE_TXT,
                                         opt ? RP_DNS_EDNS_UDP_SIZE : 0);
      assert_int_equal(rp_dns_parse(&qm, q, (size_t)qlen), 0);
      for (limit = 0; limit <= 1400; limit++) {
        size_t room = rp_dns_txt_room(&n, limit, opt);
        if (room > 0 || txt_fits(&qm, limit, 0)) {
          assert_true(txt_fits(&qm, limit, room));
        }
        assert_false(txt_fits(&qm, limit, room + 1));
      }
    }
  }
  /* The rdata length limit caps the room of a huge message. */
  {
    rp_dns_name w = make_name("w");
    assert_true(rp_dns_txt_room(&w, 1000000, 1) <= 65535);
    assert_int_equal(rp_dns_txt_room(&w, 1000000, 1),
                     rp_dns_txt_room(&w, RP_DNS_MAX_MSG_LEN, 1));
  }
}

/* The brief parse keeps the OPT record's UDP size (0 without one). */
static void test_dns_brief_edns_size(void **state) {
  uint8_t buf[512];
  rp_dns_name n;
  rp_dns_brief b;
  rp_ssize len;
  (void)state;
  assert_int_equal(rp_dns_name_from_text(&n, "size.example"), 0);
  len = rp_dns_build_query(buf, sizeof(buf), 9, &n, RP_DNS_TYPE_TXT, 1232);
  assert_true(len > 0);
  assert_int_equal(rp_dns_parse_brief(&b, buf, (size_t)len), 0);
  assert_int_equal(b.edns_udp_size, 1232);
  len = rp_dns_build_query(buf, sizeof(buf), 9, &n, RP_DNS_TYPE_TXT, 0);
  assert_int_equal(rp_dns_parse_brief(&b, buf, (size_t)len), 0);
  assert_int_equal(b.edns_udp_size, 0);
}

/* A truncated copy: header with TC, the question, no records. */
static void test_dns_build_truncated(void **state) {
  uint8_t q[512], a[1024], out[512];
  rp_dns_name n;
  rp_dns_msg qm, m;
  rp_ssize qlen, alen, len;
  static const uint8_t payload[600] = {7};
  (void)state;
  assert_int_equal(rp_dns_name_from_text(&n, "TrUnC.example"), 0);
  qlen = rp_dns_build_query(q, sizeof(q), 0x4321, &n, RP_DNS_TYPE_TXT, 1232);
  assert_int_equal(rp_dns_parse(&qm, q, (size_t)qlen), 0);
  alen = rp_dns_build_txt_answer(a, sizeof(a), &qm, 0, payload,
                                 sizeof(payload));
  assert_true(alen > 512);
  len = rp_dns_build_truncated(out, sizeof(out), a, (size_t)alen);
  assert_true(len > RP_DNS_HEADER_LEN && len < 512);
  assert_int_equal(rp_dns_parse(&m, out, (size_t)len), 0);
  assert_int_equal(m.hdr.id, 0x4321);
  assert_true(rp_dns_is_truncated(out));
  assert_true(rp_dns_is_response(out));
  assert_int_equal(m.hdr.qdcount, 1);
  assert_int_equal(m.hdr.ancount + m.hdr.nscount + m.hdr.arcount, 0);
  /* The question as it came, case included. */
  assert_true(rp_dns_name_equal(&m.question.name, &n));
  /* A question that does not read: the header alone. */
  a[RP_DNS_HEADER_LEN] = 63;
  len = rp_dns_build_truncated(out, sizeof(out), a, RP_DNS_HEADER_LEN + 3);
  assert_int_equal(len, RP_DNS_HEADER_LEN);
  assert_int_equal(out[5], 0);
  assert_int_equal(rp_dns_build_truncated(out, sizeof(out), a, 11),
                   RP_ERR_MALFORMED);
  assert_int_equal(rp_dns_build_truncated(out, 11, a, (size_t)alen),
                   RP_ERR_NOBUF);
}

/* The check's verdict on a reply, from its header. */
static void test_dns_check_reply(void **state) {
  uint8_t q[512], r[512];
  rp_dns_name n;
  rp_ssize qlen, rlen;
  (void)state;
  assert_int_equal(rp_dns_name_from_text(&n, "example.com"), 0);
  qlen = rp_dns_build_query(q, sizeof(q), 77, &n, RP_DNS_TYPE_A, 0);
  assert_true(qlen > 0);
  /* The query itself (QR clear), another ID, too short: not a reply. */
  assert_int_equal(rp_dns_check_reply(q, (size_t)qlen, 77), RP_DNS_REPLY_OTHER);
  rlen = rp_dns_build_error(r, sizeof(r), q, (size_t)qlen, RP_DNS_RCODE_NXDOMAIN);
  assert_int_equal(rp_dns_check_reply(r, (size_t)rlen, 78), RP_DNS_REPLY_OTHER);
  assert_int_equal(rp_dns_check_reply(r, 11, 77), RP_DNS_REPLY_OTHER);
  assert_int_equal(rp_dns_check_reply(r, (size_t)rlen, 77), RP_DNS_REPLY_WORKS);
  rlen = rp_dns_build_error(r, sizeof(r), q, (size_t)qlen, RP_DNS_RCODE_NOERROR);
  assert_int_equal(rp_dns_check_reply(r, (size_t)rlen, 77), RP_DNS_REPLY_WORKS);
  rlen = rp_dns_build_error(r, sizeof(r), q, (size_t)qlen, RP_DNS_RCODE_REFUSED);
  assert_int_equal(rp_dns_check_reply(r, (size_t)rlen, 77),
                   RP_DNS_REPLY_REFUSED);
  rlen = rp_dns_build_error(r, sizeof(r), q, (size_t)qlen, RP_DNS_RCODE_SERVFAIL);
  assert_int_equal(rp_dns_check_reply(r, (size_t)rlen, 77),
                   RP_DNS_REPLY_BAD_RCODE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dns_cursor_bounds),
      cmocka_unit_test(test_dns_cursor_name),
      cmocka_unit_test(test_dns_parse_queries),
      cmocka_unit_test(test_dns_parse_answers),
      cmocka_unit_test(test_dns_parse_answer_rdata),
      cmocka_unit_test(test_dns_parse_txt),
      cmocka_unit_test(test_dns_parse_malformed),
      cmocka_unit_test(test_dns_parse_truncations),
      cmocka_unit_test(test_dns_parse_handmade),
      cmocka_unit_test(test_dns_parse_many_answers),
      cmocka_unit_test(test_dns_name_text),
      cmocka_unit_test(test_dns_name_compare),
      cmocka_unit_test(test_dns_roundtrip_query),
      cmocka_unit_test(test_dns_set_id),
      cmocka_unit_test(test_dns_builder_records),
      cmocka_unit_test(test_dns_builder_errors),
      cmocka_unit_test(test_dns_build_error),
      cmocka_unit_test(test_dns_build_error_malformed),
      cmocka_unit_test(test_dns_build_txt_answer),
      cmocka_unit_test(test_dns_txt_room),
      cmocka_unit_test(test_dns_txt_room_sweep),
      cmocka_unit_test(test_dns_brief_edns_size),
      cmocka_unit_test(test_dns_build_truncated),
      cmocka_unit_test(test_dns_check_reply),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
