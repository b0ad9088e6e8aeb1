/*
 * test_fr_profile.c: unit tests of the fake resolvers' profile module.
 * Fake clock (a local rp_tstamp), seeded or scripted random source.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dns.h"
#include "fr_profile.h"

/* scripted is a random source that replays a list, then repeats its last
   value, and counts the calls. */
typedef struct scripted {
  const uint64_t *values;
  size_t n;
  size_t calls;
} scripted;

static uint64_t scripted_next(void *user_data) {
  scripted *s = user_data;
  size_t i = s->calls < s->n ? s->calls : s->n - 1;
  ++s->calls;
  return s->values[i];
}

static void parse_ok(fr_spec *spec, const char *text) {
  char err[FR_ERRBUF_LEN];
  int rv;

  fr_spec_default(spec);
  rv = fr_spec_parse(spec, text, err, sizeof(err));
  if (rv != 0) {
    fail_msg("spec '%s': %s", text, err);
  }
}

/* parse_err checks that |text| fails with a message containing every
   one of the NULL-ended words. */
static void parse_err(const char *text, ...) {
  char err[FR_ERRBUF_LEN];
  fr_spec spec;
  va_list ap;
  const char *word;

  fr_spec_default(&spec);
  assert_int_equal(fr_spec_parse(&spec, text, err, sizeof(err)), RP_ERR_CONFIG);
  va_start(ap, text);
  while ((word = va_arg(ap, const char *)) != NULL) {
    if (strstr(err, word) == NULL) {
      va_end(ap);
      fail_msg("spec '%s': error '%s' lacks '%s'", text, err, word);
    }
  }
  va_end(ap);
}

static void test_fr_profile_spec_full(void **state) {
  fr_spec spec;
  (void)state;

  parse_ok(&spec, "name=r1,rate=30,over=refuse,latency=60ms,jitter=5ms,"
                  "loss=10%,dead");
  assert_string_equal(spec.name, "r1");
  assert_int_equal(spec.rate_mqps, 30 * FR_MILLI);
  assert_int_equal(spec.over, FR_OVER_REFUSE);
  assert_int_equal(spec.latency, 60 * RP_MILLISECONDS);
  assert_int_equal(spec.jitter, 5 * RP_MILLISECONDS);
  assert_int_equal(spec.loss_ppm, 100000);
  assert_int_equal(spec.dead, 1);
  assert_int_equal(spec.addr[0], 127);
  assert_int_equal(spec.addr[3], 1);
  assert_int_equal(spec.port, 0);
  /* Default burst: a tenth of a second of rate. */
  assert_int_equal(fr_spec_burst_milli(&spec), 3 * FR_MILLI);

  parse_ok(&spec, "rate=0.5,burst=2,over=drop,latency=1.5s,jitter=250us,"
                  "loss=0.5,dead=no,addr=127.0.0.42,port=5353,name=a-b_c.d");
  assert_int_equal(spec.rate_mqps, 500);
  assert_int_equal(fr_spec_burst_milli(&spec), 2 * FR_MILLI);
  assert_int_equal(spec.over, FR_OVER_DROP);
  assert_int_equal(spec.latency, 1500 * RP_MILLISECONDS);
  assert_int_equal(spec.jitter, 250 * RP_MICROSECONDS);
  assert_int_equal(spec.loss_ppm, 5000);
  assert_int_equal(spec.dead, 0);
  assert_int_equal(spec.addr[3], 42);
  assert_int_equal(spec.port, 5353);
  assert_string_equal(spec.name, "a-b_c.d");

  parse_ok(&spec, "over=servfail,latency=1m,jitter=0");
  assert_int_equal(spec.over, FR_OVER_SERVFAIL);
  assert_int_equal(spec.latency, 60 * RP_SECONDS);
  assert_int_equal(spec.jitter, 0);

  /* An empty spec is the default unlimited resolver. */
  parse_ok(&spec, "");
  assert_int_equal(spec.rate_mqps, 0);
  assert_int_equal(fr_spec_burst_milli(&spec), 0);

  /* A tiny rate still gets one whole token of burst. */
  parse_ok(&spec, "rate=2");
  assert_int_equal(fr_spec_burst_milli(&spec), FR_MILLI);
}

static void test_fr_profile_spec_keeps_caller_defaults(void **state) {
  fr_spec spec;
  char err[FR_ERRBUF_LEN];
  (void)state;

  fr_spec_default(&spec);
  spec.addr[3] = 9;
  assert_int_equal(fr_spec_parse(&spec, "name=x", err, sizeof(err)), 0);
  assert_int_equal(spec.addr[3], 9);
  assert_int_equal(fr_spec_parse(&spec, "addr=127.0.0.3", err, sizeof(err)), 0);
  assert_int_equal(spec.addr[3], 3);
}

static void test_fr_profile_spec_errors(void **state) {
  (void)state;

  parse_err("rate=3x", "rate", "'3x'", NULL);
  parse_err("rate=", "rate", NULL);
  parse_err("rate", "rate", "missing", NULL);
  parse_err("rate=-1", "rate", "'-1'", NULL);
  parse_err("rate=20000000", "rate", NULL);
  parse_err("rate=0.0001", "rate", NULL);
  parse_err("burst=0", "burst", "'0'", NULL);
  parse_err("over=maybe", "over", "'maybe'", "refuse", NULL);
  parse_err("latency=60", "latency", "'60'", NULL);
  parse_err("latency=60xs", "latency", "'60xs'", NULL);
  parse_err("latency=2h", "latency", NULL);
  parse_err("latency=61m", "latency", NULL);
  parse_err("jitter=1.0000000001s", "jitter", NULL);
  parse_err("loss=101%", "loss", "'101%'", NULL);
  parse_err("loss=10%%", "loss", NULL);
  parse_err("loss=ten", "loss", NULL);
  parse_err("dead=perhaps", "dead", "'perhaps'", NULL);
  parse_err("addr=127.0.0", "addr", "'127.0.0'", NULL);
  parse_err("addr=127.0.0.256", "addr", NULL);
  parse_err("addr=127.0.0.1.", "addr", NULL);
  parse_err("addr=127..0.1", "addr", NULL);
  parse_err("port=70000", "port", "'70000'", NULL);
  parse_err("port=5x", "port", NULL);
  parse_err("name=", "name", NULL);
  parse_err("name=with space", "name", NULL);
  parse_err("name=abcdefghijabcdefghijabcdefghij12", "name", NULL);
  parse_err("colour=red", "unknown key", "'colour'", NULL);
  parse_err("name=a,name=b", "name", "twice", NULL);
  parse_err("name=a,,rate=1", "empty item", NULL);
  parse_err("name=a,", "empty item", NULL);
  parse_err(",", "empty item", NULL);
}

static void test_fr_profile_spec_null_errbuf(void **state) {
  fr_spec spec;
  (void)state;

  fr_spec_default(&spec);
  assert_int_equal(fr_spec_parse(&spec, "bad", NULL, 0), RP_ERR_CONFIG);
}

/* decide_n offers |n| queries evenly over |span| from |start| and counts
   the verdicts into |counts| (indexed by fr_verdict). */
static void decide_n(fr_profile *p, rp_tstamp start, rp_duration span, size_t n,
                     fr_rng *rng, uint64_t counts[6]) {
  size_t i;
  fr_decision d;

  for (i = 0; i < n; ++i) {
    rp_tstamp now = start + span * i / n;
    fr_profile_decide(p, now, fr_rng_next, rng, &d);
    ++counts[d.verdict];
  }
}

static void test_fr_profile_bucket_exact(void **state) {
  fr_spec spec;
  fr_profile p;
  fr_decision d;
  fr_rng rng;
  rp_tstamp now = 0;
  uint64_t counts[6] = {0};
  int i;
  (void)state;

  fr_rng_seed(&rng, 1);
  parse_ok(&spec, "rate=30");
  fr_profile_init(&p, &spec, now);
  assert_int_equal(fr_profile_tokens(&p, now), 3);
  /* The burst of three, then a refusal. */
  for (i = 0; i < 3; ++i) {
    fr_profile_decide(&p, now, fr_rng_next, &rng, &d);
    assert_int_equal(d.verdict, FR_VERDICT_ANSWER);
    assert_int_equal(d.delay, 0);
  }
  fr_profile_decide(&p, now, fr_rng_next, &rng, &d);
  assert_int_equal(d.verdict, FR_VERDICT_REFUSE);
  assert_int_equal(d.rcode, RP_DNS_RCODE_REFUSED);
  /* One token takes 1/30 s = 33333333.3 ns. */
  now = 33333333;
  fr_profile_decide(&p, now, fr_rng_next, &rng, &d);
  assert_int_equal(d.verdict, FR_VERDICT_REFUSE);
  now = 33333334;
  fr_profile_decide(&p, now, fr_rng_next, &rng, &d);
  assert_int_equal(d.verdict, FR_VERDICT_ANSWER);
  fr_profile_decide(&p, now, fr_rng_next, &rng, &d);
  assert_int_equal(d.verdict, FR_VERDICT_REFUSE);
  assert_int_equal(p.stats.queries, 7);
  assert_int_equal(p.stats.answered, 4);
  assert_int_equal(p.stats.refused, 3);

  /* 300 q/s offered for 5 s: burst 3 + floor(30 x 4.99667) = 152. */
  fr_profile_init(&p, &spec, 0);
  decide_n(&p, 0, 5 * RP_SECONDS, 1500, &rng, counts);
  assert_int_equal(counts[FR_VERDICT_ANSWER], 152);
  assert_int_equal(counts[FR_VERDICT_REFUSE], 1348);

  /* A long quiet spell refills to the burst only. */
  now = 1000 * RP_SECONDS;
  assert_int_equal(fr_profile_tokens(&p, now), 3);
}

static void test_fr_profile_bucket_fractional_rate(void **state) {
  fr_spec spec;
  fr_profile p;
  fr_rng rng;
  uint64_t counts[6] = {0};
  (void)state;

  fr_rng_seed(&rng, 2);
  /* 0.5 q/s, burst 1: over 100 s (at 10 q/s) 1 + floor(0.5 x 99.9). */
  parse_ok(&spec, "rate=0.5");
  fr_profile_init(&p, &spec, 0);
  decide_n(&p, 0, 100 * RP_SECONDS, 1000, &rng, counts);
  assert_int_equal(counts[FR_VERDICT_ANSWER], 50);
  assert_int_equal(counts[FR_VERDICT_REFUSE], 950);

  /* Explicit burst of 10 at 100 q/s, offered 1000 q/s for 1 s. */
  memset(counts, 0, sizeof(counts));
  parse_ok(&spec, "rate=100,burst=10");
  fr_profile_init(&p, &spec, 0);
  decide_n(&p, 0, RP_SECONDS, 1000, &rng, counts);
  assert_int_equal(counts[FR_VERDICT_ANSWER], 10 + 99);
}

static void test_fr_profile_over_modes(void **state) {
  fr_spec spec;
  fr_profile p;
  fr_decision d;
  fr_rng rng;
  (void)state;

  fr_rng_seed(&rng, 3);
  parse_ok(&spec, "rate=1,over=drop");
  fr_profile_init(&p, &spec, 0);
  fr_profile_decide(&p, 0, fr_rng_next, &rng, &d);
  assert_int_equal(d.verdict, FR_VERDICT_ANSWER);
  fr_profile_decide(&p, 0, fr_rng_next, &rng, &d);
  assert_int_equal(d.verdict, FR_VERDICT_DROP);
  assert_int_equal(d.delay, 0);
  assert_int_equal(p.stats.dropped, 1);

  parse_ok(&spec, "rate=1,over=servfail,latency=20ms");
  fr_profile_init(&p, &spec, 0);
  fr_profile_decide(&p, 0, fr_rng_next, &rng, &d);
  assert_int_equal(d.verdict, FR_VERDICT_ANSWER);
  assert_int_equal(d.delay, 20 * RP_MILLISECONDS);
  fr_profile_decide(&p, 0, fr_rng_next, &rng, &d);
  assert_int_equal(d.verdict, FR_VERDICT_REFUSE);
  assert_int_equal(d.rcode, RP_DNS_RCODE_SERVFAIL);
  /* A refusal travels the same path: same delay. */
  assert_int_equal(d.delay, 20 * RP_MILLISECONDS);
}

static void test_fr_profile_dead(void **state) {
  fr_spec spec;
  fr_profile p;
  fr_decision d;
  const uint64_t zero = 0;
  scripted s = {.values = &zero, .n = 1, .calls = 0};
  int i;
  (void)state;

  parse_ok(&spec, "dead,loss=50%,latency=10ms,jitter=5ms");
  fr_profile_init(&p, &spec, 0);
  for (i = 0; i < 10; ++i) {
    fr_profile_decide(&p, (rp_tstamp)i * RP_SECONDS, scripted_next, &s, &d);
    assert_int_equal(d.verdict, FR_VERDICT_DEAD);
  }
  assert_int_equal(s.calls, 0);
  assert_int_equal(p.stats.dead, 10);
  assert_int_equal(p.stats.queries, 10);
}

static void test_fr_profile_loss_scripted(void **state) {
  fr_spec spec;
  fr_profile p;
  fr_decision d;
  /* High 32 bits 0 (lost), bit 31 clear: before. Then lost after. Then a
     draw of all ones: not lost. */
  const uint64_t vals[] = {0, 1ULL << 31, UINT64_MAX};
  scripted s = {.values = vals, .n = 3, .calls = 0};
  (void)state;

  parse_ok(&spec, "rate=1,loss=10%");
  fr_profile_init(&p, &spec, 0);
  fr_profile_decide(&p, 0, scripted_next, &s, &d);
  assert_int_equal(d.verdict, FR_VERDICT_LOSE_BEFORE);
  /* Lost before: no token spent. */
  assert_int_equal(fr_profile_tokens(&p, 0), 1);
  fr_profile_decide(&p, 0, scripted_next, &s, &d);
  assert_int_equal(d.verdict, FR_VERDICT_LOSE_AFTER);
  /* Lost after: the resolver spent its token. */
  assert_int_equal(fr_profile_tokens(&p, 0), 0);
  fr_profile_decide(&p, 0, scripted_next, &s, &d);
  assert_int_equal(d.verdict, FR_VERDICT_REFUSE);
  assert_int_equal(s.calls, 3);
}

static void test_fr_profile_loss_ratio(void **state) {
  fr_spec spec;
  fr_profile p;
  fr_rng rng;
  uint64_t counts[6] = {0};
  uint64_t lost;
  (void)state;

  fr_rng_seed(&rng, 12345);
  parse_ok(&spec, "loss=10%");
  fr_profile_init(&p, &spec, 0);
  decide_n(&p, 0, 10 * RP_SECONDS, 10000, &rng, counts);
  lost = counts[FR_VERDICT_LOSE_BEFORE] + counts[FR_VERDICT_LOSE_AFTER];
  /* 10 % of 10000, sigma 30: 3.3 sigma either side. */
  assert_in_range(lost, 900, 1100);
  /* Half before, half after: sigma of each about 16. */
  assert_in_range(counts[FR_VERDICT_LOSE_BEFORE], lost / 2 - 80, lost / 2 + 80);
  assert_int_equal(counts[FR_VERDICT_ANSWER], 10000 - lost);

  /* 0 % loses nothing, 100 % loses all. */
  memset(counts, 0, sizeof(counts));
  parse_ok(&spec, "loss=100%");
  fr_profile_init(&p, &spec, 0);
  decide_n(&p, 0, RP_SECONDS, 1000, &rng, counts);
  assert_int_equal(
      counts[FR_VERDICT_LOSE_BEFORE] + counts[FR_VERDICT_LOSE_AFTER], 1000);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a;
  uint64_t y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void test_fr_profile_latency_jitter(void **state) {
  enum { N = 10000 };
  fr_spec spec;
  fr_profile p;
  fr_decision d;
  fr_rng rng;
  static uint64_t delays[N];
  uint64_t sum = 0;
  size_t i;
  (void)state;

  fr_rng_seed(&rng, 99);
  parse_ok(&spec, "latency=60ms,jitter=5ms");
  fr_profile_init(&p, &spec, 0);
  for (i = 0; i < N; ++i) {
    fr_profile_decide(&p, i * RP_MILLISECONDS, fr_rng_next, &rng, &d);
    assert_int_equal(d.verdict, FR_VERDICT_ANSWER);
    assert_in_range(d.delay, 55 * RP_MILLISECONDS, 65 * RP_MILLISECONDS);
    delays[i] = d.delay;
    sum += d.delay;
  }
  qsort(delays, N, sizeof(delays[0]), cmp_u64);
  /* Uniform over 10 ms: the median within 0.25 ms of 60 ms, the extremes
     within 0.1 ms of the bounds. */
  assert_in_range(delays[N / 2], 59750 * RP_MICROSECONDS,
                  60250 * RP_MICROSECONDS);
  assert_in_range(sum / N, 59750 * RP_MICROSECONDS, 60250 * RP_MICROSECONDS);
  assert_true(delays[0] < 55100 * RP_MICROSECONDS);
  assert_true(delays[N - 1] > 64900 * RP_MICROSECONDS);

  /* No jitter: exact, and no random draw. */
  parse_ok(&spec, "latency=10ms");
  fr_profile_init(&p, &spec, 0);
  {
    const uint64_t zero = 0;
    scripted s = {.values = &zero, .n = 1, .calls = 0};
    fr_profile_decide(&p, 0, scripted_next, &s, &d);
    assert_int_equal(d.delay, 10 * RP_MILLISECONDS);
    assert_int_equal(s.calls, 0);
  }

  /* Jitter wider than latency clamps at 0. */
  parse_ok(&spec, "latency=1ms,jitter=10ms");
  fr_profile_init(&p, &spec, 0);
  {
    const uint64_t zero = 0;
    scripted s = {.values = &zero, .n = 1, .calls = 0};
    fr_profile_decide(&p, 0, scripted_next, &s, &d);
    assert_int_equal(d.delay, 0);
  }
}

static void test_fr_profile_rng_deterministic(void **state) {
  fr_rng a;
  fr_rng b;
  int i;
  (void)state;

  fr_rng_seed(&a, 7);
  fr_rng_seed(&b, 7);
  for (i = 0; i < 100; ++i) {
    assert_int_equal(fr_rng_next(&a), fr_rng_next(&b));
  }
  fr_rng_seed(&b, 8);
  assert_int_not_equal(fr_rng_next(&a), fr_rng_next(&b));
}

static void test_fr_profile_names(void **state) {
  (void)state;
  assert_string_equal(fr_over_str(FR_OVER_DROP), "drop");
  assert_string_equal(fr_verdict_str(FR_VERDICT_LOSE_AFTER), "lose_after");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fr_profile_spec_full),
      cmocka_unit_test(test_fr_profile_spec_keeps_caller_defaults),
      cmocka_unit_test(test_fr_profile_spec_errors),
      cmocka_unit_test(test_fr_profile_spec_null_errbuf),
      cmocka_unit_test(test_fr_profile_bucket_exact),
      cmocka_unit_test(test_fr_profile_bucket_fractional_rate),
      cmocka_unit_test(test_fr_profile_over_modes),
      cmocka_unit_test(test_fr_profile_dead),
      cmocka_unit_test(test_fr_profile_loss_scripted),
      cmocka_unit_test(test_fr_profile_loss_ratio),
      cmocka_unit_test(test_fr_profile_latency_jitter),
      cmocka_unit_test(test_fr_profile_rng_deterministic),
      cmocka_unit_test(test_fr_profile_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
