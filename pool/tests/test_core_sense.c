/*
 * test_core_sense.c: recognising the tunnel from its query names
 * (pool/core/sense.h): MasterDnsVPN's base36 labels, dnstt's base32
 * ones, and the queries that must leave the kind alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sense.h"

static const char k_base36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
static const char k_base32[] = "abcdefghijklmnopqrstuvwxyz234567";

/* next is a small LCG: the tests' names are the same on every run. */
static uint32_t next(uint32_t *x) {
  *x = *x * 1103515245u + 12345u;
  return *x >> 8;
}

/* random_label writes |len| characters drawn from |alphabet|. */
static void random_label(char *out, size_t len, const char *alphabet,
                         uint32_t *x) {
  size_t i, n = strlen(alphabet);

  for (i = 0; i < len; ++i) {
    out[i] = alphabet[next(x) % n];
  }
  out[len] = '\0';
}

static rp_dns_question question(const char *first, const char *rest,
                                uint16_t qtype) {
  rp_dns_question q;
  char text[300];

  snprintf(text, sizeof(text), "%s.%s", first, rest);
  memset(&q, 0, sizeof(q));
  assert_int_equal(rp_dns_name_from_text(&q.name, text), 0);
  q.qtype = qtype;
  q.qclass = 1;
  return q;
}

/* label_fn writes the first label of name |i| (at most 63 characters)
   into |label|, drawing from |*px|. */
typedef void label_fn(char *label, int i, uint32_t *px);

/* feed_names starts |s| afresh and feeds it RP_SENSE_QUERIES TXT
   questions under |zone|, the first label of each written by |make|
   with draws seeded by |seed|. Unless |done| is NULL, |done[i]| gets
   what the feed of name |i| returned. */
static void feed_names(rp_sense *s, label_fn *make, uint32_t seed,
                       const char *zone, int *done) {
  char label[64];
  uint32_t x = seed;
  int i;

  rp_sense_init(s);
  for (i = 0; i < RP_SENSE_QUERIES; ++i) {
    rp_dns_question q;
    int rv;

    make(label, i, &x);
    q = question(label, zone, RP_DNS_TYPE_TXT);
    rv = rp_sense_feed(s, &q);
    if (done) {
      done[i] = rv;
    }
  }
}

/* MasterDnsVPN's data names: 18 characters of base36 under its domain
   (a session prefix shared, the rest varying). About one label in eight
   has none of 0, 1, 8, 9: still masterdns, at the 32nd name looked at. */
static void masterdns_label(char *label, int i, uint32_t *px) {
  (void)i;
  memcpy(label, "7mz3m77e9ky", 11);
  random_label(label + 11, 7, k_base36, px);
}

static void test_sense_base36_is_masterdns(void **state) {
  rp_sense s;
  int i, done[RP_SENSE_QUERIES];

  (void)state;
  feed_names(&s, masterdns_label, 7, "v.example.com", done);
  for (i = 0; i < RP_SENSE_QUERIES; ++i) {
    assert_int_equal(done[i], i == RP_SENSE_QUERIES - 1);
  }
  assert_int_equal(s.state, RP_SENSE_DONE);
  assert_int_equal(s.kind, RP_KIND_MASTERDNS);
  /* Decided once: more names change nothing. */
  {
    rp_dns_question q = question("abcdefghijklmnopqrstuvwxyz", "t.example",
                                 RP_DNS_TYPE_TXT);
    assert_int_equal(rp_sense_feed(&s, &q), 0);
    assert_int_equal(s.kind, RP_KIND_MASTERDNS);
  }
}

/* dnstt's names: base32 of the client ID and the data, 63-character
   labels (the last shorter): never a 0, 1, 8 or 9. Upper case (a
   resolver's 0x20 or a client's) counts the same. */
static void dnstt_label(char *label, int i, uint32_t *px) {
  memcpy(label, "j6r5hluc45zn", 12);
  random_label(label + 12, (size_t)(i % 2 ? 51 : 16), k_base32, px);
  if (i % 3 == 0) {
    label[0] = 'J';
    label[5] = 'L';
  }
}

static void test_sense_base32_is_dnstt(void **state) {
  rp_sense s;

  (void)state;
  feed_names(&s, dnstt_label, 11, "t.example.com", NULL);
  assert_int_equal(s.state, RP_SENSE_DONE);
  assert_int_equal(s.kind, RP_KIND_DNSTT);
  assert_int_equal(s.base36, 0);
}

/* A stub resolver's queries: A and AAAA, short labels, TXT for names with
   hyphens. Nothing is looked at; after RP_SENSE_GIVE_UP queries the
   sensing ends without a verdict (generic), so it costs nothing after. */
static void test_sense_stub_gives_up(void **state) {
  static const struct {
    const char *first, *rest;
    uint16_t qtype;
  } names[] = {
      {"www", "example.com", RP_DNS_TYPE_A},
      {"d1a2b3c4e5f6a7b8c9d0", "cloudfront.net", RP_DNS_TYPE_A},
      {"mail", "example.org", RP_DNS_TYPE_TXT},
      {"google-site-verification", "example.net", RP_DNS_TYPE_TXT},
      {"selector1_domainkey", "example.com", RP_DNS_TYPE_TXT},
      {"0123456789abcde", "example.com", RP_DNS_TYPE_TXT},
  };
  rp_sense s;
  int i;

  (void)state;
  rp_sense_init(&s);
  for (i = 0; i < RP_SENSE_GIVE_UP; ++i) {
    rp_dns_question q = question(names[i % 6].first, names[i % 6].rest,
                                 names[i % 6].qtype);
    assert_int_equal(rp_sense_feed(&s, &q), i == RP_SENSE_GIVE_UP - 1);
  }
  assert_int_equal(s.looked, 0);
  assert_int_equal(s.state, RP_SENSE_DONE);
  assert_int_equal(s.kind, RP_KIND_GENERIC);
}

/* Mixed: a quarter of the names base36, the rest base32. Neither tunnel
   writes that, so there is no verdict: generic. */
static void mixed_label(char *label, int i, uint32_t *px) {
  if (i % 4 == 0) {
    random_label(label, 20, "0189", px);
  } else {
    random_label(label, 20, k_base32, px);
  }
}

static void test_sense_mixed_no_verdict(void **state) {
  rp_sense s;

  (void)state;
  feed_names(&s, mixed_label, 3, "t.example", NULL);
  assert_int_equal(s.state, RP_SENSE_DONE);
  assert_int_equal(s.kind, RP_KIND_GENERIC);
  assert_int_equal(s.base36, RP_SENSE_QUERIES / 4);
}

/* Only TXT queries with a long first label of letters and digits count:
   a base36 label in an A query, one of 15 characters, one with a hyphen
   and the bare root are not looked at. */
static void test_sense_not_looked_at(void **state) {
  rp_sense s;
  rp_dns_question q;

  (void)state;
  rp_sense_init(&s);
  q = question("7mz3m77e9ky0iy05pv", "v.example.com", RP_DNS_TYPE_A);
  rp_sense_feed(&s, &q);
  q = question("7mz3m77e9ky0iy0", "v.example.com", RP_DNS_TYPE_TXT);
  rp_sense_feed(&s, &q);
  q = question("7mz3m77e9ky0-iy05pv", "v.example.com", RP_DNS_TYPE_TXT);
  rp_sense_feed(&s, &q);
  memset(&q, 0, sizeof(q));
  q.name.len = 1;
  q.qtype = RP_DNS_TYPE_TXT;
  rp_sense_feed(&s, &q);
  assert_int_equal(s.seen, 4);
  assert_int_equal(s.looked, 0);
  assert_int_equal(s.state, RP_SENSE_SENSING);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sense_base36_is_masterdns),
      cmocka_unit_test(test_sense_base32_is_dnstt),
      cmocka_unit_test(test_sense_stub_gives_up),
      cmocka_unit_test(test_sense_mixed_no_verdict),
      cmocka_unit_test(test_sense_not_looked_at),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
