/*
 * test_core_rtt.c: the latency and loss estimators of pool/core (rtt,
 * health), with a fake clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "dns.h"
#include "health.h"
#include "idmap.h"
#include "rtt.h"

#include <string.h>

#define MS RP_MILLISECONDS
#define S RP_SECONDS

/* The fastest answer of the window is kept while it is in the window;
   slow (held) answers do not raise it; it ages out after 10 s. */
static void test_core_rtt_fastest_window(void **state) {
  rp_rtt rtt;
  rp_tstamp now = 0;
  int i;

  (void)state;
  rp_rtt_init(&rtt);
  assert_true(rp_rtt_fastest(&rtt) == RP_TSTAMP_UNSET);
  rp_rtt_add(&rtt, 20 * MS, now, 10 * S);
  for (i = 0; i < 50; ++i) {
    now += 100 * MS;
    rp_rtt_add(&rtt, 1000 * MS, now, 10 * S);
  }
  assert_true(rp_rtt_fastest(&rtt) == 20 * MS);
  for (i = 0; i < 120; ++i) {
    now += 100 * MS;
    rp_rtt_add(&rtt, 300 * MS, now, 10 * S);
  }
  assert_true(rp_rtt_fastest(&rtt) == 300 * MS);
}

/* The latest late answer of the window holds: a later, smaller one does
   not lower it, a larger one raises it; it ages out one sample at a
   time, and with no late answer for a whole window it is 0 (unlike the
   fastest, which is kept). */
static void test_core_rtt_late_window(void **state) {
  rp_rtt rtt;
  rp_tstamp now = 1 * S;

  (void)state;
  rp_rtt_init(&rtt);
  assert_true(rp_rtt_late(&rtt, now, 10 * S) == 0);
  rp_rtt_late_add(&rtt, 80 * MS, now, 10 * S);
  now += 1 * S;
  rp_rtt_late_add(&rtt, 30 * MS, now, 10 * S);
  assert_true(rp_rtt_late(&rtt, now, 10 * S) == 80 * MS);
  now += 1 * S;
  rp_rtt_late_add(&rtt, 120 * MS, now, 10 * S);
  assert_true(rp_rtt_late(&rtt, now, 10 * S) == 120 * MS);
  /* 10.5 s after the 120 ms one, a 40 ms one: the window holds that. */
  now += 10500 * MS;
  rp_rtt_late_add(&rtt, 40 * MS, now, 10 * S);
  assert_true(rp_rtt_late(&rtt, now, 10 * S) == 40 * MS);
  now += 10001 * MS;
  assert_true(rp_rtt_late(&rtt, now, 10 * S) == 0);
  /* The fastest answer is untouched by late ones. */
  assert_true(rp_rtt_fastest(&rtt) == RP_TSTAMP_UNSET);
}

/* mean and deviation follow RFC 6298; rto = mean + 4 dev, with a floor
   on the deviation term. */
static void test_core_rtt_rto(void **state) {
  rp_rtt rtt;
  int i;

  (void)state;
  rp_rtt_init(&rtt);
  assert_true(rp_rtt_rto(&rtt, 4.0, 10 * MS) == RP_TSTAMP_UNSET);
  rp_rtt_add(&rtt, 100 * MS, 0, 10 * S);
  assert_true(rtt.mean == 100 * MS && rtt.dev == 50 * MS);
  assert_true(rp_rtt_rto(&rtt, 4.0, 10 * MS) == 300 * MS);
  for (i = 0; i < 100; ++i) {
    rp_rtt_add(&rtt, 100 * MS, 0, 10 * S);
  }
  assert_true(rp_rtt_rto(&rtt, 4.0, 10 * MS) == 110 * MS);
}

/* The Wilson interval: few samples neither shut out a clean resolver
   nor pass a lossy one; with more samples a 30 % loss is well above 2
   points. */
static void test_core_health_wilson(void **state) {
  rp_health h;
  int i;

  (void)state;
  rp_health_init(&h, 0);
  rp_health_reply(&h, 10.0, 1, 0);
  rp_health_reply(&h, 10.0, 1, 0);
  assert_true(rp_health_loss_lower(&h, 1.96) == 0.0);
  assert_true(rp_health_loss_upper(&h, 1.96) > 0.5);
  rp_health_init(&h, 0);
  for (i = 0; i < 10; ++i) {
    if (i % 3 == 0) {
      rp_health_loss(&h, 10.0, 1, 1, -4, (rp_tstamp)i);
    } else {
      rp_health_reply(&h, 10.0, 1, (rp_tstamp)i);
    }
  }
  assert_true(rp_health_loss_lower(&h, 1.96) > 0.1);
  assert_true(rp_health_lost_lately(&h, 10 * S, 5 * S));
  assert_false(rp_health_lost_lately(&h, 10 * S, 20 * S));
}

/* A loss taken back (rp_health_late) and the late answer's reply leave
   one closed try, not lost. */
static void test_core_health_late(void **state) {
  rp_health h;
  int i;

  (void)state;
  rp_health_init(&h, 0);
  for (i = 0; i < 9; ++i) {
    rp_health_reply(&h, 10.0, 1, 0);
  }
  rp_health_loss(&h, 10.0, 1, 0, 0, 0);
  assert_true(rp_health_loss_ratio(&h) > 0.09);
  rp_health_late(&h, 10.0, 0);
  rp_health_reply(&h, 10.0, 0, 0);
  assert_true(rp_health_loss_ratio(&h) == 0.0);
  assert_true(h.n > 9.99 && h.n < 10.01);
  assert_true(h.total_lost == 0 && h.total_closed == 10);
}

/* Failures in a row reset on any reply; the score is clamped. */
static void test_core_health_score_and_fails(void **state) {
  rp_health h;
  int i;

  (void)state;
  rp_health_init(&h, 30);
  assert_int_equal(h.score, 10);
  for (i = 0; i < 5; ++i) {
    rp_health_loss(&h, 10.0, 1, 1, -4, 0);
  }
  assert_int_equal(h.fails_in_row, 5);
  assert_int_equal(h.score, -10);
  rp_health_reply(&h, 10.0, -4, 0);
  assert_int_equal(h.fails_in_row, 0);
  /* An overflow drop counts toward down but not toward loss. */
  rp_health_init(&h, 0);
  rp_health_loss(&h, 10.0, 0, 1, -4, 0);
  assert_int_equal(h.fails_in_row, 1);
  assert_true(rp_health_loss_ratio(&h) == 0.0);
  /* A loss while the resolver answers others is loss, not a failure in
     a row. */
  rp_health_loss(&h, 10.0, 1, 0, -4, 0);
  assert_int_equal(h.fails_in_row, 1);
  assert_true(rp_health_loss_ratio(&h) > 0.0);
}

/* rp_idmap_insert adds a key once, reports a key already there, and
   keeps every key findable (one probe sequence for get + put). */
static void test_core_idmap_insert(void **state) {
  rp_idmap map;
  const rp_idmap_value *v;
  uint32_t i;

  (void)state;
  assert_int_equal(rp_idmap_init(&map, 1000, rp_mem_default()), 0);
  for (i = 0; i < 1000; ++i) {
    assert_int_equal(
        rp_idmap_insert(&map, i % 7, (uint16_t)(i * 37),
                        (rp_idmap_value){.query = i, .try_index = 1}),
        0);
  }
  assert_int_equal(rp_idmap_insert(&map, 3, (uint16_t)(3 * 37),
                                   (rp_idmap_value){.query = 9}),
                   1);
  for (i = 0; i < 1000; ++i) {
    v = rp_idmap_get(&map, i % 7, (uint16_t)(i * 37));
    assert_non_null(v);
    assert_int_equal(v->query, i);
  }
  for (i = 0; i < 1000; i += 2) {
    rp_idmap_del(&map, i % 7, (uint16_t)(i * 37));
  }
  for (i = 0; i < 1000; ++i) {
    v = rp_idmap_get(&map, i % 7, (uint16_t)(i * 37));
    if (i % 2 == 0) {
      assert_null(v);
    } else {
      assert_non_null(v);
      assert_int_equal(v->query, i);
    }
  }
  rp_idmap_free(&map);
}

/* The map starts small and grows as keys come, up to exactly the room
   asked for: every key stays findable across each growth, and the key
   after the last is refused (RP_ERR_FULL), by put as by insert. */
static void test_core_idmap_grow(void **state) {
  rp_idmap map;
  const rp_idmap_value *v;
  uint32_t i;
  const uint32_t n = 5000;

  (void)state;
  assert_int_equal(rp_idmap_init(&map, n, rp_mem_default()), 0);
  assert_true(map.mask + 1 < 2 * n);
  for (i = 0; i < n; ++i) {
    int rv = (i % 2)
                 ? rp_idmap_put(&map, i % 13, (uint16_t)(i * 7919),
                                (rp_idmap_value){.query = i})
                 : rp_idmap_insert(&map, i % 13, (uint16_t)(i * 7919),
                                   (rp_idmap_value){.query = i});
    assert_int_equal(rv, 0);
  }
  assert_true(map.mask + 1 >= 2 * n);
  assert_int_equal(rp_idmap_insert(&map, 20, 1, (rp_idmap_value){.query = 1}),
                   RP_ERR_FULL);
  assert_int_equal(rp_idmap_put(&map, 20, 1, (rp_idmap_value){.query = 1}),
                   RP_ERR_FULL);
  for (i = 0; i < n; ++i) {
    v = rp_idmap_get(&map, i % 13, (uint16_t)(i * 7919));
    assert_non_null(v);
    assert_int_equal(v->query, i);
  }
  rp_idmap_del(&map, 0, 0);
  assert_int_equal(rp_idmap_insert(&map, 20, 1, (rp_idmap_value){.query = 1}),
                   0);
  rp_idmap_free(&map);
}

/* rp_dns_parse_brief accepts and rejects exactly what rp_dns_parse does
   and keeps the same header, question and rcode (the core's hot path
   parses with it). */
static void test_core_dns_brief(void **state) {
  static rp_dns_msg msg;
  rp_dns_brief brief;
  rp_dns_name name;
  uint8_t buf[RP_DNS_MAX_MSG_LEN], ans[RP_DNS_MAX_MSG_LEN];
  rp_ssize n, m;
  size_t cut;
  uint8_t payload[300];

  (void)state;
  memset(payload, 'x', sizeof(payload));
  assert_int_equal(rp_dns_name_from_text(&name, "abc.t.example"), 0);
  n = rp_dns_build_query(buf, sizeof(buf), 0x1234, &name, RP_DNS_TYPE_TXT,
                         RP_DNS_EDNS_UDP_SIZE);
  assert_true(n > 0);
  assert_int_equal(rp_dns_parse(&msg, buf, (size_t)n), 0);
  m = rp_dns_build_txt_answer(ans, sizeof(ans), &msg, 60, payload,
                              sizeof(payload));
  assert_true(m > 0);
  for (cut = 0; cut <= (size_t)m; ++cut) {
    int a = rp_dns_parse(&msg, ans, cut);
    int b = rp_dns_parse_brief(&brief, ans, cut);

    assert_int_equal(a, b);
    if (a == 0) {
      assert_int_equal(msg.has_question, brief.has_question);
      assert_memory_equal(&msg.hdr, &brief.hdr, sizeof(msg.hdr));
      assert_int_equal(msg.rcode, brief.rcode);
      if (msg.has_question) {
        assert_true(rp_dns_question_equal(&msg.question, &brief.question));
      }
    }
  }
  for (cut = 0; cut <= (size_t)n; ++cut) {
    assert_int_equal(rp_dns_parse(&msg, buf, cut),
                     rp_dns_parse_brief(&brief, buf, cut));
  }
  /* Flipped bytes: the same verdict. */
  for (cut = 0; cut < (size_t)m; ++cut) {
    int a, b;

    ans[cut] ^= 0xff;
    a = rp_dns_parse(&msg, ans, (size_t)m);
    b = rp_dns_parse_brief(&brief, ans, (size_t)m);
    assert_int_equal(a, b);
    if (a == 0) {
      assert_int_equal(msg.rcode, brief.rcode);
    }
    ans[cut] ^= 0xff;
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_core_rtt_fastest_window),
      cmocka_unit_test(test_core_rtt_late_window),
      cmocka_unit_test(test_core_rtt_rto),
      cmocka_unit_test(test_core_health_wilson),
      cmocka_unit_test(test_core_health_late),
      cmocka_unit_test(test_core_health_score_and_fails),
      cmocka_unit_test(test_core_idmap_insert),
      cmocka_unit_test(test_core_idmap_grow),
      cmocka_unit_test(test_core_dns_brief),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
