/*
 * test_balancer.c: the MasterDnsVPN-style balancer with a fake clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "balancer.h"

static void test_balancer_roundrobin(void **state) {
  tun_bal bal;
  size_t counts[3] = {0, 0, 0};
  int k;

  (void)state;
  assert_int_equal(tun_bal_init(&bal, 3, TUN_BAL_ROUNDROBIN), 0);
  for (k = 0; k < 300; ++k) {
    ++counts[tun_bal_pick(&bal)];
  }
  assert_int_equal(counts[0], 100);
  assert_int_equal(counts[1], 100);
  assert_int_equal(counts[2], 100);
  assert_int_equal(tun_bal_init(&bal, 0, TUN_BAL_ROUNDROBIN),
                   RP_ERR_INVALID_ARGUMENT);
  assert_int_equal(tun_bal_init(&bal, TUN_BAL_MAX + 1, TUN_BAL_ROUNDROBIN),
                   RP_ERR_INVALID_ARGUMENT);
}

static void test_balancer_least_loss(void **state) {
  tun_bal bal;
  rp_tstamp now = 0;
  size_t counts[2] = {0, 0};
  int k;

  (void)state;
  assert_int_equal(tun_bal_init(&bal, 2, TUN_BAL_LEAST_LOSS), 0);
  /* Neutral 200 until 5 sent. */
  assert_int_equal(tun_bal_loss_score(&bal, 0), TUN_BAL_NEUTRAL_LOSS);
  for (k = 0; k < 10; ++k) {
    tun_bal_on_sent(&bal, 0);
    tun_bal_on_sent(&bal, 1);
    tun_bal_on_answer(&bal, 0, RP_MILLISECONDS, 1, now);
    if (k % 2 == 0) {
      tun_bal_on_timeout(&bal, 1, now);
    } else {
      tun_bal_on_answer(&bal, 1, RP_MILLISECONDS, 1, now);
    }
  }
  assert_int_equal(tun_bal_loss_score(&bal, 0), 0);
  assert_int_equal(tun_bal_loss_score(&bal, 1), 500);
  for (k = 0; k < 100; ++k) {
    ++counts[tun_bal_pick(&bal)];
  }
  assert_int_equal(counts[0], 100);
}

static void test_balancer_lowest_latency(void **state) {
  tun_bal bal;
  rp_tstamp now = 0;
  int k;

  (void)state;
  assert_int_equal(tun_bal_init(&bal, 3, TUN_BAL_LOWEST_LATENCY), 0);
  assert_int_equal(tun_bal_latency_score_us(&bal, 0),
                   TUN_BAL_LATENCY_PENALTY_US);
  for (k = 0; k < 5; ++k) {
    tun_bal_on_answer(&bal, 0, 60 * RP_MILLISECONDS, 1, now);
    tun_bal_on_answer(&bal, 1, 10 * RP_MILLISECONDS, 1, now);
  }
  /* Only 4 replies from resolver 2: still penalised. */
  for (k = 0; k < 4; ++k) {
    tun_bal_on_answer(&bal, 2, RP_MILLISECONDS, 1, now);
  }
  assert_int_equal(tun_bal_latency_score_us(&bal, 0), 60000);
  assert_int_equal(tun_bal_latency_score_us(&bal, 1), 10000);
  for (k = 0; k < 20; ++k) {
    assert_int_equal(tun_bal_pick(&bal), 1);
  }
  tun_bal_on_answer(&bal, 2, RP_MILLISECONDS, 1, now);
  assert_int_equal(tun_bal_pick(&bal), 2);
}

static void test_balancer_copies(void **state) {
  tun_bal bal;
  size_t out[8], n, k, first;
  int j;

  (void)state;
  assert_int_equal(tun_bal_init(&bal, 3, TUN_BAL_ROUNDROBIN), 0);
  for (j = 0; j < 30; ++j) {
    first = tun_bal_pick(&bal);
    n = tun_bal_pick_copies(&bal, first, 4, out);
    /* A copy never goes to the first resolver, nor twice anywhere. */
    assert_int_equal(n, 2);
    for (k = 0; k < n; ++k) {
      assert_int_not_equal(out[k], first);
    }
    assert_int_not_equal(out[0], out[1]);
  }
  assert_int_equal(tun_bal_init(&bal, 1, TUN_BAL_ROUNDROBIN), 0);
  assert_int_equal(tun_bal_pick_copies(&bal, 0, 1, out), 0);
}

static void test_balancer_disable_recheck(void **state) {
  tun_bal bal;
  rp_tstamp now = 0;
  int k;

  (void)state;
  assert_int_equal(tun_bal_init(&bal, 2, TUN_BAL_ROUNDROBIN), 0);
  /* Resolver 1 only times out: disabled once 30 s have passed. */
  for (k = 0; k < 30; ++k) {
    tun_bal_on_timeout(&bal, 1, now);
    assert_true(bal.res[1].active);
    now += RP_SECONDS - 1;
  }
  now += 30;
  tun_bal_on_timeout(&bal, 1, now);
  assert_false(bal.res[1].active);
  assert_int_equal(tun_bal_nactive(&bal), 1);
  for (k = 0; k < 10; ++k) {
    assert_int_equal(tun_bal_pick(&bal), 0);
  }
  /* Rechecked every 5 s; an answer enables it. */
  assert_false(tun_bal_recheck_due(&bal, 1, now));
  now += TUN_BAL_RECHECK_EVERY;
  assert_true(tun_bal_recheck_due(&bal, 1, now));
  assert_false(tun_bal_recheck_due(&bal, 1, now));
  tun_bal_set_active(&bal, 1, 1, now);
  assert_int_equal(tun_bal_nactive(&bal), 2);
  /* An error answer proves it alive: no disabling after it. */
  tun_bal_on_timeout(&bal, 0, now);
  tun_bal_on_answer(&bal, 0, RP_MILLISECONDS, 0, now + RP_SECONDS);
  tun_bal_on_timeout(&bal, 0, now + 40 * RP_SECONDS);
  assert_true(bal.res[0].active);
  /* With every resolver disabled, picks still return one. */
  tun_bal_set_active(&bal, 0, 0, now);
  tun_bal_set_active(&bal, 1, 0, now);
  assert_true(tun_bal_pick(&bal) < 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_balancer_roundrobin),
      cmocka_unit_test(test_balancer_least_loss),
      cmocka_unit_test(test_balancer_lowest_latency),
      cmocka_unit_test(test_balancer_copies),
      cmocka_unit_test(test_balancer_disable_recheck),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
