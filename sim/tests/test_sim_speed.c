/*
 * test_sim_speed.c: the simulator's speed as virtual seconds per wall
 * second (label bench, outside the default run: machines are noisy).
 *
 * DESIGN.md section 7 asks for at least 1000x real time. Each setup runs
 * TEST_SPEED_ROUNDS times and the best ratio counts, so a busy machine
 * does not fail it; the ratios are printed for the note.
 */
#include "test_sim_run.h"

#include <time.h>

/* TEST_SPEED_MIN is the required ratio of virtual to wall time. */
#define TEST_SPEED_MIN 1000.0
/* TEST_SPEED_ROUNDS is how many times each setup runs. */
#define TEST_SPEED_ROUNDS 3

/* test_wall returns a monotonic wall clock in seconds. */
static double test_wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* test_speed runs a setup and returns its best ratio. */
static double test_speed(const char *label, rp_kind kind, const char *load,
                         const char *const *specs, size_t n) {
  double best = 0.0;
  int round;
  for (round = 0; round < TEST_SPEED_ROUNDS; ++round) {
    sim *s = test_sim_make(kind, (uint64_t)round + 1, load, specs, n);
    double t0 = test_wall();
    double t1;
    double ratio;
    test_sim_run_ok(s);
    t1 = test_wall();
    ratio = ((double)sim_now(s) / (double)RP_SECONDS) / (t1 - t0);
    if (ratio > best) {
      best = ratio;
    }
    if (round == 0) {
      printf("[ speed ] %-24s events=%llu virtual=%.1f s wall=%.4f s "
             "(%.2f M events/s)\n",
             label, (unsigned long long)sim_events(s),
             (double)sim_now(s) / (double)RP_SECONDS, t1 - t0,
             (double)sim_events(s) / (t1 - t0) / 1e6);
    }
    sim_del(s);
  }
  printf("[ speed ] %-24s best %.0fx real time\n", label, best);
  return best;
}

static void test_sim_speed_ratio(void **state) {
  static const char *const limited[] = {
      "rate=20,over=refuse", "rate=30,over=refuse", "rate=40,over=drop"};
  static const char *const uneven[] = {"latency=10ms,jitter=1ms",
                                       "latency=60ms,jitter=5ms",
                                       "latency=250ms,jitter=10ms"};
  static const char *const lossy[] = {"latency=10ms,jitter=1ms",
                                      "latency=10ms,jitter=1ms,loss=10%",
                                      "latency=10ms,jitter=1ms,loss=30%"};
  (void)state;
  /* The loads of the sim tests and scenarios: checked. */
  assert_true(test_speed("three-limited 150 q/s", RP_KIND_DNSTT,
                         "rate=150,seconds=20", limited, 3) >= TEST_SPEED_MIN);
  assert_true(test_speed("three-uneven 100 q/s", RP_KIND_MASTERDNS,
                         "rate=100,seconds=20", uneven, 3) >= TEST_SPEED_MIN);
  assert_true(test_speed("three-lossy 100 q/s", RP_KIND_GENERIC,
                         "rate=100,seconds=20", lossy, 3) >= TEST_SPEED_MIN);
  /* Heavier loads: printed only. The cost is per query (about a
     microsecond of CPU per event), so the ratio falls as the simulated
     rate rises: 1000x real time means a million simulated events a
     second. */
  (void)test_speed("three-uneven 1000 q/s", RP_KIND_MASTERDNS,
                   "rate=1000,seconds=20", uneven, 3);
  (void)test_speed("three-lossy 300 workers", RP_KIND_DNSTT,
                   "workers=300,seconds=2", lossy, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_speed_ratio),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
