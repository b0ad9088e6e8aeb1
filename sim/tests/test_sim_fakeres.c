/*
 * test_sim_fakeres.c: the simulated fake resolvers' delay timer
 * (simnet_fakeres.c) against the rules of the real one (fr_reply.c on
 * libuv's loop): the boundary a timer armed at some instant is due at,
 * a wake that runs it, and when the sleeping loop wakes on its own.
 * With the fake resolvers' server built (TEST_SIM_FR_REAL), the
 * boundary is checked against fakeres's own fr_wait_ms.
 */
#define _GNU_SOURCE

#include "rp_test_mem.h"

#include "simnet_internal.h"

#ifdef TEST_SIM_FR_REAL
#include "fr_server_internal.h"
#endif

#define MS RP_MILLISECONDS
#define US RP_MICROSECONDS

/* An idle loop: the reply's timer, armed when it was held, wakes the
   loop at its due time plus the lateness, whatever the millisecond's
   fraction; the reply leaves then. */
static void test_sim_fr_idle_due_plus_late(void **state) {
  rp_tstamp held = 5 * MS + 700 * US;
  rp_tstamp due = held + 10 * MS;
  rp_tstamp b, wake;

  (void)state;
  b = sim_net_fr_boundary(held, due);
  assert_int_equal(b, 15 * MS);
  wake = sim_net_fr_sleep(held, b, 120 * US);
  assert_int_equal(wake, due + 120 * US);
  assert_true(sim_net_fr_timer_due(wake, b));
  assert_true(due <= wake);
}

/* A busy loop: a datagram at 15.05 ms runs the timer (the loop's time
   reads 15 ms) before the reply (due 15.7) is due: it is armed again for
   the next whole millisecond, and the loop's sleep from then ends at
   16.05 ms plus the lateness, unless another datagram wakes it after
   16 ms first. */
static void test_sim_fr_busy_next_boundary(void **state) {
  rp_tstamp due = 15 * MS + 700 * US;
  rp_tstamp io = 15 * MS + 50 * US;
  rp_tstamp b;

  (void)state;
  assert_true(sim_net_fr_timer_due(io, 15 * MS));
  assert_true(due > io);
  b = sim_net_fr_boundary(io, due);
  assert_int_equal(b, 16 * MS);
  assert_int_equal(sim_net_fr_sleep(io, b, 90 * US), 16 * MS + 140 * US);
  assert_false(sim_net_fr_timer_due(16 * MS - 1, b));
  assert_true(sim_net_fr_timer_due(16 * MS + 10 * US, b));
}

/* The loop's last wake sets the phase: asleep since 12.3 ms with the
   timer due at 15 ms, it wakes at 15.3 ms plus the lateness. */
static void test_sim_fr_phase_of_last_wake(void **state) {
  (void)state;
  assert_int_equal(sim_net_fr_sleep(12 * MS + 300 * US, 15 * MS, 0),
                   15 * MS + 300 * US);
  /* Already due (a wake at 15.9 ms has not run it yet): at once. */
  assert_int_equal(sim_net_fr_sleep(15 * MS + 900 * US, 15 * MS, 50 * US),
                   15 * MS + 950 * US);
  /* A reply due now or before: this millisecond. */
  assert_int_equal(sim_net_fr_boundary(7 * MS + 1, 7 * MS), 7 * MS);
  assert_int_equal(sim_net_fr_boundary(7 * MS, 7 * MS), 7 * MS);
}

/* The boundary is the loop's truncated time plus fakeres's wait. */
static void test_sim_fr_boundary_as_fakeres(void **state) {
  static const rp_tstamp nows[] = {0,        1,           999 * US,
                                   MS,       MS + 1,      5 * MS + 700 * US,
                                   12345678, 98765432101};
  static const rp_duration delays[] = {1,       999 * US, MS,      MS + 1,
                                       10 * MS, 60 * MS,  250 * MS};
  size_t i, j;

  (void)state;
  for (i = 0; i < sizeof(nows) / sizeof(nows[0]); ++i) {
    for (j = 0; j < sizeof(delays) / sizeof(delays[0]); ++j) {
      rp_tstamp now = nows[i], due = now + delays[j];
      rp_tstamp b = sim_net_fr_boundary(now, due);

      /* Never more than a millisecond past the due time... */
      assert_true(b < due + MS);
      /* ...and a whole millisecond of the loop's time. */
      assert_int_equal(b % MS, 0);
#ifdef TEST_SIM_FR_REAL
      assert_int_equal(b, now / MS * MS + fr_wait_ms(due, now) * MS);
#endif
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_fr_idle_due_plus_late),
      cmocka_unit_test(test_sim_fr_busy_next_boundary),
      cmocka_unit_test(test_sim_fr_phase_of_last_wake),
      cmocka_unit_test(test_sim_fr_boundary_as_fakeres),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
