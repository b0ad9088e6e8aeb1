/*
 * test_sim.c: the pool core's behaviour in the simulator (label sim).
 *
 * Each test runs the real core against simulated fake resolvers in
 * virtual time and asserts the numbers DESIGN.md section 5 and the
 * issues promise: the spread over equal resolvers, the slow and the
 * lossy avoided, the limited ones combined, a dead one down and back.
 * They also pin the simulator itself: the same seed gives the same trace
 * hash. Nothing sleeps; each test takes milliseconds.
 */
#include "test_sim_run.h"

/* TEST_SEEDS is how many seeds the spread tests try. */
#define TEST_SEEDS 3u

static void test_sim_determinism(void **state) {
  static const char *const specs[] = {
      "latency=10ms,jitter=5ms", "latency=12ms,jitter=5ms,loss=10%",
      "rate=30,over=refuse,latency=8ms,jitter=3ms"};
  uint64_t h1;
  uint64_t h2;
  uint64_t h3;
  sim *s;
  (void)state;
  s = test_sim_make(RP_KIND_DNSTT, 42, "rate=120,seconds=10", specs, 3);
  test_sim_run_ok(s);
  h1 = sim_trace_hash(s);
  sim_del(s);
  s = test_sim_make(RP_KIND_DNSTT, 42, "rate=120,seconds=10", specs, 3);
  test_sim_run_ok(s);
  h2 = sim_trace_hash(s);
  sim_del(s);
  s = test_sim_make(RP_KIND_DNSTT, 43, "rate=120,seconds=10", specs, 3);
  test_sim_run_ok(s);
  h3 = sim_trace_hash(s);
  sim_del(s);
  assert_int_equal(h1, h2);
  assert_int_not_equal(h1, h3);
}

static void test_sim_worker_load(void **state) {
  static const char *const specs[] = {"latency=10ms", "latency=10ms"};
  sim_client_stats cs;
  sim *s;
  (void)state;
  /* 20 workers with 10 ms answers and 1 ms think: about 1800 q/s. */
  s = test_sim_make(RP_KIND_DNSTT, 1, "workers=20,seconds=2", specs, 2);
  test_sim_run_ok(s);
  assert_int_equal(sim_get_client_stats(s, &cs), 0);
  assert_true(cs.answered > 1000);
  assert_int_equal(cs.unanswered, 0);
  assert_int_equal(cs.worker_timeouts, 0);
  /* Once past probation the loop runs at its pace: 20 workers / 11 ms,
     about 1800 answers a second, checked at 1500. */
  assert_true(sim_answered_between(s, RP_SECONDS, 2 * RP_SECONDS) >= 1500);
  sim_del(s);
}

static void test_sim_three_unlimited_spread(void **state) {
  static const char *const specs[] = {"latency=10ms,jitter=1ms",
                                      "latency=10ms,jitter=1ms",
                                      "latency=10ms,jitter=1ms"};
  uint64_t seed;
  (void)state;
  for (seed = 1; seed <= TEST_SEEDS; ++seed) {
    sim *s =
        test_sim_make(RP_KIND_GENERIC, seed, "rate=100,seconds=20", specs, 3);
    uint32_t i;
    test_sim_run_ok(s);
    for (i = 0; i < 3; ++i) {
      double share = test_sim_share(s, i);
      if (share < 0.25 || share > 0.42) {
        fail_msg("seed %u resolver %u share %.3f outside 0.25..0.42",
                 (unsigned)seed, (unsigned)i, share);
      }
    }
    sim_del(s);
  }
}

/* test_sim_third_avoided runs 20 s of 100 q/s over three resolvers of
   |specs| and fails unless the third got under 5 % of the queries;
   |what| names it in the message. */
static void test_sim_third_avoided(const char *const specs[3],
                                   const char *what) {
  sim *s = test_sim_make(RP_KIND_GENERIC, 1, "rate=100,seconds=20", specs, 3);
  double share;
  test_sim_run_ok(s);
  share = test_sim_share(s, 2);
  if (share >= 0.05) {
    fail_msg("the %s resolver got %.3f of the queries", what, share);
  }
  sim_del(s);
}

static void test_sim_slow_avoided(void **state) {
  static const char *const specs[] = {"latency=10ms,jitter=1ms",
                                      "latency=10ms,jitter=1ms",
                                      "latency=100ms,jitter=10ms"};
  (void)state;
  test_sim_third_avoided(specs, "10x slower");
}

static void test_sim_lossy_avoided(void **state) {
  static const char *const specs[] = {"latency=10ms,jitter=1ms",
                                      "latency=10ms,jitter=1ms,loss=10%",
                                      "latency=10ms,jitter=1ms,loss=30%"};
  (void)state;
  test_sim_third_avoided(specs, "30 % loss");
}

/* TEST_LIMITED_SUM is the sum of the three limits, q/s. */
#define TEST_LIMITED_SUM 90.0
/* TEST_LIMITED_SHARE is the share of it the pool must answer. */
#define TEST_LIMITED_SHARE 0.8
/* TEST_TAIL is the tail of the load measured. */
#define TEST_TAIL (10 * RP_SECONDS)

/* test_three_limited runs the three-limited setup for |kind| and checks
   the answered rate over the last 10 s of load. */
static void test_three_limited(rp_kind kind, const char *kind_name) {
  static const char *const specs[] = {
      "rate=20,over=refuse", "rate=30,over=refuse", "rate=40,over=drop"};
  sim *s = test_sim_make(kind, 1, "rate=150,seconds=20", specs, 3);
  rp_tstamp end;
  double qps;
  test_sim_run_ok(s);
  end = sim_load_end(s);
  qps = (double)sim_answered_between(s, end - TEST_TAIL, end) /
        ((double)TEST_TAIL / (double)RP_SECONDS);
  if (qps < TEST_LIMITED_SHARE * TEST_LIMITED_SUM) {
    fail_msg("kind %s: answered %.1f q/s over the last 10 s, want >= %.1f",
             kind_name, qps, TEST_LIMITED_SHARE * TEST_LIMITED_SUM);
  }
  sim_del(s);
}

static void test_sim_three_limited_generic(void **state) {
  (void)state;
  test_three_limited(RP_KIND_GENERIC, "generic");
}

static void test_sim_three_limited_dnstt(void **state) {
  (void)state;
  test_three_limited(RP_KIND_DNSTT, "dnstt");
}

static void test_sim_dead_and_back(void **state) {
  static const char *const specs[] = {"latency=10ms", "latency=10ms",
                                      "latency=10ms"};
  char err[FR_ERRBUF_LEN];
  rp_resolver_stats st;
  sim *s = test_sim_make(RP_KIND_GENERIC, 1, "rate=50,seconds=40", specs, 3);
  rp_tstamp revive = 20 * RP_SECONDS;
  rp_duration probe;
  uint64_t answered_before;
  (void)state;
  assert_int_equal(sim_add_hook(s, 5 * RP_SECONDS, 2, "dead", err, sizeof(err)),
                   0);
  assert_int_equal(sim_add_hook(s, revive, 2, "dead=no", err, sizeof(err)), 0);
  /* Down well before it comes back. */
  assert_int_equal(sim_run_until(s, 15 * RP_SECONDS), 0);
  assert_int_equal(sim_get_resolver_stats(s, 2, &st), 0);
  assert_int_equal(st.state, RP_RESOLVER_DOWN);
  assert_int_equal(sim_run_until(s, revive), 0);
  answered_before = sim_get_resolver(s, 2)->counts.answered;
  /* Back within probe_interval + 1 s of its revival (issue 4). */
  probe = 5 * RP_SECONDS;
  assert_int_equal(sim_run_until(s, revive + probe + RP_SECONDS), 0);
  assert_int_equal(sim_get_resolver_stats(s, 2, &st), 0);
  assert_int_not_equal(st.state, RP_RESOLVER_DOWN);
  assert_true(sim_get_resolver(s, 2)->counts.answered > answered_before);
  test_sim_run_ok(s);
  sim_del(s);
}

static void test_sim_becomes_limited(void **state) {
  static const char *const specs[] = {"latency=10ms", "latency=10ms"};
  char err[FR_ERRBUF_LEN];
  rp_resolver_stats st;
  sim *s = test_sim_make(RP_KIND_GENERIC, 1, "rate=100,seconds=20", specs, 2);
  (void)state;
  assert_int_equal(sim_add_hook(s, 5 * RP_SECONDS, 0, "rate=25,over=refuse",
                                err, sizeof(err)),
                   0);
  test_sim_run_ok(s);
  assert_int_equal(sim_get_resolver_stats(s, 0, &st), 0);
  /* Issue 3: a resolver refusing at 25 q/s ends with a cap of 20..32. */
  if (st.cap_qps < 20.0 || st.cap_qps > 32.0) {
    fail_msg("cap %.1f q/s after the resolver became limited to 25",
             st.cap_qps);
  }
  assert_true(sim_get_resolver(s, 0)->counts.refused > 0);
  sim_del(s);
}

static void test_sim_guard_stops(void **state) {
  static const char *const specs[] = {""};
  sim_config cfg;
  sim *s = NULL;
  fr_spec spec;
  char err[FR_ERRBUF_LEN];
  (void)state;
  /* Zero latency, zero think: a closed loop that never lets time move.
     The event guard must stop it with a message. */
  sim_config_default(&cfg, RP_KIND_GENERIC);
  assert_int_equal(sim_load_parse(&cfg.load, "workers=2,seconds=1,think=0", err,
                                  sizeof(err)),
                   0);
  cfg.max_events = 10000;
  assert_int_equal(sim_new(&s, &cfg, rp_test_mem_plain()), 0);
  fr_spec_default(&spec);
  assert_int_equal(fr_spec_parse(&spec, specs[0], err, sizeof(err)), 0);
  assert_int_equal(sim_add_resolver(s, &spec, NULL), 0);
  assert_int_equal(sim_run(s), RP_ERR_PROTO);
  assert_non_null(strstr(sim_error(s), "max_events"));
  sim_del(s);
}

/* TEST_FAILMEM_MAX bounds the failmalloc loop. */
#define TEST_FAILMEM_MAX 10000u

/* Allocation N fails, for N upward until a whole run succeeds: every
   failure is reported as out of memory (or a callback failure carrying
   it) and sim_del frees everything (cmocka checks for leaks). */
static void test_sim_failmalloc(void **state) {
  rp_test_mem tm;
  size_t at;
  int done = 0;
  (void)state;
  rp_test_mem_init(&tm);
  for (at = 0; at < TEST_FAILMEM_MAX && !done; ++at) {
    sim_config cfg;
    sim *s = NULL;
    fr_spec spec;
    char err[FR_ERRBUF_LEN];
    int rv;
    sim_config_default(&cfg, RP_KIND_DNSTT);
    assert_int_equal(
        sim_load_parse(&cfg.load, "rate=200,seconds=2", err, sizeof(err)), 0);
    rv = sim_new(&s, &cfg,
                 rp_test_mem_fail_at(&tm, (long)at, RP_TEST_MEM_FAIL_FROM));
    if (rv != 0) {
      assert_int_equal(rv, RP_ERR_NOMEM);
      continue;
    }
    fr_spec_default(&spec);
    rv = sim_add_resolver(s, &spec, NULL);
    if (rv == 0) {
      assert_int_equal(
          fr_spec_parse(&spec, "latency=5ms,loss=10%", err, sizeof(err)), 0);
      rv = sim_add_resolver(s, &spec, NULL);
    }
    if (rv == 0) {
      rv = sim_add_hook(s, RP_SECONDS, 1, "dead", err, sizeof(err));
    }
    if (rv == 0) {
      rv = sim_run(s);
    }
    if (rv == 0) {
      done = 1;
    } else {
      assert_true(rv == RP_ERR_NOMEM || rv == RP_ERR_CALLBACK_FAILURE);
    }
    sim_del(s);
  }
  assert_true(done);
}

/* main runs every case, or those matching the pattern in argv[1]
   (cmocka_set_test_filter: '*' and '?' wildcards). */
int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_determinism),
      cmocka_unit_test(test_sim_worker_load),
      cmocka_unit_test(test_sim_three_unlimited_spread),
      cmocka_unit_test(test_sim_slow_avoided),
      cmocka_unit_test(test_sim_lossy_avoided),
      cmocka_unit_test(test_sim_three_limited_generic),
      cmocka_unit_test(test_sim_three_limited_dnstt),
      cmocka_unit_test(test_sim_dead_and_back),
      cmocka_unit_test(test_sim_becomes_limited),
      cmocka_unit_test(test_sim_guard_stops),
      cmocka_unit_test(test_sim_failmalloc),
  };
  if (argc > 1) {
    cmocka_set_test_filter(argv[1]);
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
