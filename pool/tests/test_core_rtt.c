/*
 * test_core_rtt.c: the latency and loss estimators of pool/core (rtt,
 * health), with a fake clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "health.h"
#include "rtt.h"

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_core_rtt_fastest_window),
      cmocka_unit_test(test_core_rtt_rto),
      cmocka_unit_test(test_core_health_wilson),
      cmocka_unit_test(test_core_health_score_and_fails),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
