/*
 * test_fr_answer.c: unit tests of the answer-mode replies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dns.h"
#include "fr_answer.h"

/* BUF is room for any message. */
#define BUF RP_DNS_MAX_MSG_LEN

static rp_dns_name mkname(const char *text) {
  rp_dns_name n;
  assert_int_equal(rp_dns_name_from_text(&n, text), 0);
  return n;
}

/* build_query builds and parses a query into |msg| (bytes in |buf|). */
static void build_query(rp_dns_msg *msg, uint8_t *buf, size_t cap,
                        const char *name, uint16_t qtype, uint16_t edns) {
  rp_dns_name n = mkname(name);
  rp_ssize len = rp_dns_build_query(buf, cap, 0xbeef, &n, qtype, edns);
  assert_true(len > 0);
  assert_int_equal(rp_dns_parse(msg, buf, (size_t)len), 0);
}

/* answer builds the reply to |name|/|qtype| and parses it into |ans|;
   returns its length. */
static size_t answer(rp_dns_msg *ans, uint8_t *out, const char *name,
                     uint16_t qtype, uint16_t edns, int stream) {
  uint8_t qbuf[512];
  rp_dns_msg q;
  rp_ssize len;

  build_query(&q, qbuf, sizeof(qbuf), name, qtype, edns);
  len = fr_answer_build(out, BUF, &q, stream);
  assert_true(len > 0);
  assert_int_equal(rp_dns_parse(ans, out, (size_t)len), 0);
  assert_int_equal(ans->hdr.id, 0xbeef);
  assert_true(ans->hdr.flags & RP_DNS_FLAG_QR);
  assert_true(ans->hdr.flags & RP_DNS_FLAG_RD);
  assert_int_equal(ans->rcode, RP_DNS_RCODE_NOERROR);
  assert_true(ans->has_question);
  assert_int_equal(ans->question.qtype, qtype);
  assert_int_equal(ans->has_edns, edns != 0);
  return (size_t)len;
}

static void test_fr_answer_txt_size_label(void **state) {
  rp_dns_name n;
  (void)state;

  n = mkname("s1000.t.example");
  assert_int_equal(fr_answer_txt_size(&n), 1000);
  n = mkname("SIZE-42.t.example");
  assert_int_equal(fr_answer_txt_size(&n), 42);
  n = mkname("s0.t.example");
  assert_int_equal(fr_answer_txt_size(&n), 0);
  n = mkname("s99999999999999999999.t.example");
  assert_int_equal(fr_answer_txt_size(&n), RP_DNS_MAX_MSG_LEN);
  n = mkname("s.t.example");
  assert_int_equal(fr_answer_txt_size(&n), FR_TXT_SIZE_NONE);
  n = mkname("s10x.t.example");
  assert_int_equal(fr_answer_txt_size(&n), FR_TXT_SIZE_NONE);
  n = mkname("size-.t.example");
  assert_int_equal(fr_answer_txt_size(&n), FR_TXT_SIZE_NONE);
  n = mkname("www.t.example");
  assert_int_equal(fr_answer_txt_size(&n), FR_TXT_SIZE_NONE);
  n = mkname(".");
  assert_int_equal(fr_answer_txt_size(&n), FR_TXT_SIZE_NONE);
}

static void test_fr_answer_a_and_aaaa(void **state) {
  static uint8_t out[BUF];
  rp_dns_msg ans;
  const uint8_t *rd;
  (void)state;

  answer(&ans, out, "a.example", RP_DNS_TYPE_A, 0, 0);
  assert_int_equal(ans.nanswers, 1);
  assert_int_equal(ans.answers[0].type, RP_DNS_TYPE_A);
  assert_int_equal(ans.answers[0].rdata_len, 4);
  rd = out + ans.answers[0].rdata_off;
  assert_int_equal(rd[0], 127);
  assert_int_equal(rd[3], 1);

  answer(&ans, out, "a.example", RP_DNS_TYPE_AAAA, 1232, 0);
  assert_int_equal(ans.nanswers, 1);
  assert_int_equal(ans.answers[0].rdata_len, 16);

  /* Other types: NOERROR, no record. */
  answer(&ans, out, "a.example", RP_DNS_TYPE_NS, 0, 0);
  assert_int_equal(ans.nanswers, 0);
}

static void test_fr_answer_txt_sizes(void **state) {
  static uint8_t out[BUF];
  rp_dns_msg ans;
  size_t len;
  rp_dns_name qn;
  (void)state;

  /* Asked size, under the room. */
  answer(&ans, out, "s100.t.example", RP_DNS_TYPE_TXT, 1232, 0);
  assert_int_equal(rp_dns_txt_payload_size(&ans), 100);

  /* No label: filled to the room, the message exactly the EDNS size. */
  len = answer(&ans, out, "poll.t.example", RP_DNS_TYPE_TXT, 1232, 0);
  qn = mkname("poll.t.example");
  assert_int_equal(rp_dns_txt_payload_size(&ans),
                   rp_dns_txt_room(&qn, 1232, 1));
  assert_int_equal(len, 1232);

  /* Without EDNS the limit is 512. */
  len = answer(&ans, out, "poll.t.example", RP_DNS_TYPE_TXT, 0, 0);
  assert_true(len <= 512);
  assert_int_equal(rp_dns_txt_payload_size(&ans), rp_dns_txt_room(&qn, 512, 0));

  /* An asked size over the room is capped to it over UDP... */
  answer(&ans, out, "s5000.t.example", RP_DNS_TYPE_TXT, 1232, 0);
  qn = mkname("s5000.t.example");
  assert_int_equal(rp_dns_txt_payload_size(&ans),
                   rp_dns_txt_room(&qn, 1232, 1));
  /* ...but granted over TCP. */
  answer(&ans, out, "s5000.t.example", RP_DNS_TYPE_TXT, 1232, 1);
  assert_int_equal(rp_dns_txt_payload_size(&ans), 5000);
  /* Without a label, TCP fills to the UDP room too. */
  answer(&ans, out, "poll.t.example", RP_DNS_TYPE_TXT, 1232, 1);
  qn = mkname("poll.t.example");
  assert_int_equal(rp_dns_txt_payload_size(&ans),
                   rp_dns_txt_room(&qn, 1232, 1));
  /* A huge TCP ask is capped at one message. */
  len = answer(&ans, out, "s70000.t.example", RP_DNS_TYPE_TXT, 1232, 1);
  assert_true(len <= RP_DNS_MAX_MSG_LEN);
}

static void test_fr_answer_errors(void **state) {
  static uint8_t out[BUF];
  uint8_t qbuf[512];
  rp_dns_msg q;
  rp_dns_msg ans;
  rp_ssize len;
  (void)state;

  /* No room. */
  build_query(&q, qbuf, sizeof(qbuf), "a.example", RP_DNS_TYPE_A, 0);
  assert_int_equal(fr_answer_build(out, 20, &q, 0), RP_ERR_NOBUF);
  /* No question. */
  q.has_question = 0;
  assert_int_equal(fr_answer_build(out, BUF, &q, 0), RP_ERR_INVALID_ARGUMENT);
  /* Opcode other than QUERY: NOTIMP. */
  build_query(&q, qbuf, sizeof(qbuf), "a.example", RP_DNS_TYPE_A, 0);
  qbuf[2] |= 0x10; /* opcode 2 (STATUS) */
  assert_int_equal(rp_dns_parse(&q, qbuf, q.len), 0);
  len = fr_answer_build(out, BUF, &q, 0);
  assert_true(len > 0);
  assert_int_equal(rp_dns_parse(&ans, out, (size_t)len), 0);
  assert_int_equal(ans.rcode, RP_DNS_RCODE_NOTIMP);
}

static void test_fr_answer_udp_limit(void **state) {
  uint8_t qbuf[512];
  rp_dns_msg q;
  (void)state;

  build_query(&q, qbuf, sizeof(qbuf), "a.example", RP_DNS_TYPE_TXT, 4096);
  assert_int_equal(fr_answer_udp_limit(&q), 4096);
  build_query(&q, qbuf, sizeof(qbuf), "a.example", RP_DNS_TYPE_TXT, 100);
  assert_int_equal(fr_answer_udp_limit(&q), 512);
  build_query(&q, qbuf, sizeof(qbuf), "a.example", RP_DNS_TYPE_TXT, 0);
  assert_int_equal(fr_answer_udp_limit(&q), 512);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fr_answer_txt_size_label),
      cmocka_unit_test(test_fr_answer_a_and_aaaa),
      cmocka_unit_test(test_fr_answer_txt_sizes),
      cmocka_unit_test(test_fr_answer_errors),
      cmocka_unit_test(test_fr_answer_udp_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
