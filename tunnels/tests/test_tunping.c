/*
 * test_tunping.c: MasterDnsVPN's ping loop (tunping.h) on a fake clock:
 * the timer's checks a ping interval apart, the wake by traffic that
 * checks too early and restarts the timer, the wakes' throttle, and the
 * timer's lateness.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tunping.h"

#define MS RP_MILLISECONDS
#define US RP_MICROSECONDS
#define T0 (1000 * MS)

/* Quiet: the timer checks every 100 ms and each check sends a ping. */
static void test_tunping_timer(void **state) {
  tun_ping p;
  int i;

  (void)state;
  tun_ping_start(&p, 100 * MS, 0, T0);
  for (i = 1; i <= 3; ++i) {
    assert_int_equal(tun_ping_due(&p), T0 + (rp_tstamp)i * 100 * MS);
    assert_int_equal(tun_ping_check(&p, T0 + (rp_tstamp)i * 100 * MS), 1);
    tun_ping_sent(&p, T0 + (rp_tstamp)i * 100 * MS);
  }
}

/* The ping's first data answer wakes the loop 800 us after the ping: too
   early for a ping, and the timer restarts from there, so the next ping
   goes 100.8 ms after the last. */
static void test_tunping_wake_restarts(void **state) {
  tun_ping p;
  rp_tstamp ping, wake;

  (void)state;
  tun_ping_start(&p, 100 * MS, 0, T0);
  ping = tun_ping_due(&p);
  assert_int_equal(tun_ping_check(&p, ping), 1);
  tun_ping_sent(&p, ping);
  wake = ping + 800 * US;
  assert_int_equal(tun_ping_traffic(&p, wake), 0);
  assert_int_equal(tun_ping_due(&p), wake + 100 * MS);
  /* More traffic within 100 ms of the wake checks nothing. */
  assert_int_equal(tun_ping_traffic(&p, wake + 50 * MS), 0);
  assert_int_equal(tun_ping_due(&p), wake + 100 * MS);
  assert_int_equal(tun_ping_check(&p, wake + 100 * MS), 1);
}

/* Traffic that wakes the loop once the interval passed sends the ping
   before the timer would. */
static void test_tunping_wake_sends(void **state) {
  tun_ping p;

  (void)state;
  tun_ping_start(&p, 100 * MS, 0, T0);
  tun_ping_sent(&p, T0 + 5 * MS);
  /* The timer at 100 ms: 95 ms since the ping, none; it restarts. */
  assert_int_equal(tun_ping_check(&p, T0 + 100 * MS), 0);
  assert_int_equal(tun_ping_due(&p), T0 + 200 * MS);
  assert_int_equal(tun_ping_traffic(&p, T0 + 150 * MS), 1);
  assert_int_equal(tun_ping_due(&p), T0 + 250 * MS);
}

/* The checks come |late| after their time; a long interval waits half
   of it between checks, at most a second. */
static void test_tunping_late_and_long(void **state) {
  tun_ping p;

  (void)state;
  tun_ping_start(&p, 100 * MS, 1500 * US, T0);
  assert_int_equal(tun_ping_due(&p), T0 + 101500 * US);
  assert_int_equal(tun_ping_check(&p, tun_ping_due(&p)), 1);
  assert_int_equal(tun_ping_due(&p), T0 + 203 * MS);
  tun_ping_start(&p, 750 * MS, 0, T0);
  assert_int_equal(tun_ping_check(&p, T0 + 750 * MS), 1);
  assert_int_equal(tun_ping_due(&p), T0 + 1125 * MS);
  tun_ping_start(&p, 15000 * MS, 0, T0);
  assert_int_equal(tun_ping_check(&p, T0 + 100 * MS), 0);
  assert_int_equal(tun_ping_due(&p), T0 + 1100 * MS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tunping_timer),
      cmocka_unit_test(test_tunping_wake_restarts),
      cmocka_unit_test(test_tunping_wake_sends),
      cmocka_unit_test(test_tunping_late_and_long),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
