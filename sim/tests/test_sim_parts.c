/*
 * test_sim_parts.c: the simulator's pure parts: the event heap's (ts,
 * seq) order, the --set table, load specs, resolver changes and
 * scenario files.
 */
#include "test_sim_mem.h"

#include "fr_profile.h"
#include "sim_heap.h"
#include "sim_load.h"
#include "sim_resolver.h"
#include "sim_scenario.h"
#include "sim_settings.h"

#include "dns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* TEST_HEAP_N is how many events the order test pushes. */
#define TEST_HEAP_N 1000u
/* TEST_HEAP_TIMES is how many distinct times they share (many ties). */
#define TEST_HEAP_TIMES 7u

static void test_sim_heap_order(void **state) {
  sim_heap heap;
  sim_event ev;
  uint32_t i;
  rp_tstamp last_ts = 0;
  uint64_t last_seq = 0;
  int first = 1;
  (void)state;
  sim_heap_init(&heap, &test_sim_mem);
  assert_null(sim_heap_top(&heap));
  assert_int_equal(sim_heap_pop(&heap, &ev), RP_ERR_NOT_FOUND);
  for (i = 0; i < TEST_HEAP_N; ++i) {
    /* A scrambled time out of a few values, so most events tie. */
    rp_tstamp ts = (rp_tstamp)((i * 5u + 3u) % TEST_HEAP_TIMES);
    sim_event e = {.ts = ts, .kind = 1, .a = i, .b = 0, .c = 0};
    assert_int_equal(sim_heap_push(&heap, &e), 0);
  }
  assert_int_equal(sim_heap_len(&heap), TEST_HEAP_N);
  for (i = 0; i < TEST_HEAP_N; ++i) {
    assert_int_equal(sim_heap_pop(&heap, &ev), 0);
    if (!first) {
      assert_true(ev.ts > last_ts || (ev.ts == last_ts && ev.seq > last_seq));
    }
    /* The push order survives among ties: seq equals the index a. */
    assert_int_equal(ev.seq, ev.a);
    first = 0;
    last_ts = ev.ts;
    last_seq = ev.seq;
  }
  assert_int_equal(sim_heap_len(&heap), 0);
  sim_heap_free(&heap);
}

static void test_sim_settings_table(void **state) {
  size_t n;
  size_t i;
  const sim_settings_field *f = sim_settings_fields(&n);
  rp_settings a;
  rp_settings b;
  char value[SIM_SETTINGS_VALUELEN];
  char assign[SIM_SETTINGS_VALUELEN + 64];
  char err[SIM_SETTINGS_ERRLEN];
  (void)state;
  rp_settings_default(&a, RP_KIND_DNSTT);
  assert_true(n > 40);
  /* Every field formats and reads back to the same bytes. */
  for (i = 0; i < n; ++i) {
    rp_settings_default(&b, RP_KIND_GENERIC);
    sim_settings_format(&a, &f[i], value, sizeof(value));
    snprintf(assign, sizeof(assign), "%s=%s", f[i].name, value);
    assert_int_equal(sim_settings_set(&b, assign, err, sizeof(err)), 0);
    assert_memory_equal((const uint8_t *)&a + f[i].offset,
                        (const uint8_t *)&b + f[i].offset, f[i].size);
  }
}

/* test_type_align returns the alignment of a table type on this ABI. */
static size_t test_type_align(sim_settings_type type) {
  switch (type) {
  case SIM_SETTINGS_DURATION:
    return _Alignof(rp_duration);
  case SIM_SETTINGS_U32:
    return _Alignof(uint32_t);
  case SIM_SETTINGS_U16:
    return _Alignof(uint16_t);
  case SIM_SETTINGS_INT:
  case SIM_SETTINGS_BOOL:
    return _Alignof(int);
  case SIM_SETTINGS_SIZE:
    return _Alignof(size_t);
  case SIM_SETTINGS_DOUBLE:
    return _Alignof(double);
  case SIM_SETTINGS_BALANCE:
    return _Alignof(rp_balance);
  case SIM_SETTINGS_LOG_LEVEL:
    return _Alignof(rp_log_level);
  case SIM_SETTINGS_STRING:
    return 1;
  }
  return 1;
}

/* test_cmp_field orders table entries by offset. */
static int test_cmp_field(const void *a, const void *b) {
  const sim_settings_field *x = a;
  const sim_settings_field *y = b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Every field of rp_settings is in the --set table: walking the entries
   by offset, each starts where the previous one ends (after natural
   padding), and the last one ends the struct. A field added to
   respool.h without a table line shows up as a gap, named here. */
static void test_sim_settings_complete(void **state) {
  size_t n;
  size_t i;
  const sim_settings_field *f = sim_settings_fields(&n);
  sim_settings_field sorted[128];
  size_t pos = 0;
  (void)state;
  assert_true(n <= sizeof(sorted) / sizeof(sorted[0]));
  memcpy(sorted, f, n * sizeof(*f));
  qsort(sorted, n, sizeof(sorted[0]), test_cmp_field);
  for (i = 0; i < n; ++i) {
    size_t a = test_type_align(sorted[i].type);
    size_t expect = (pos + a - 1) / a * a;
    if (sorted[i].offset != expect) {
      fail_msg("rp_settings has a field at offset %zu (before %s) that "
               "sim/sim_settings.c does not know: add it to the table",
               pos, sorted[i].name);
    }
    pos = sorted[i].offset + sorted[i].size;
  }
  if ((pos + _Alignof(rp_settings) - 1) / _Alignof(rp_settings) *
          _Alignof(rp_settings) !=
      sizeof(rp_settings)) {
    fail_msg("rp_settings has fields after %s that sim/sim_settings.c does "
             "not know: add them to the table",
             sorted[n - 1].name);
  }
}

static void test_sim_settings_set(void **state) {
  rp_settings s;
  rp_settings before;
  char err[SIM_SETTINGS_ERRLEN];
  (void)state;
  rp_settings_default(&s, RP_KIND_GENERIC);
  assert_int_equal(sim_settings_set(&s, "band_ratio=1.5", err, sizeof(err)), 0);
  assert_true(s.band_ratio == 1.5);
  assert_int_equal(sim_settings_set(&s, "token_wait=150ms", err, sizeof(err)),
                   0);
  assert_int_equal(s.token_wait, 150 * RP_MILLISECONDS);
  assert_int_equal(sim_settings_set(&s, "wait_for_token=no", err, sizeof(err)),
                   0);
  assert_int_equal(s.wait_for_token, 0);
  assert_int_equal(
      sim_settings_set(&s, "load_balance=least_loss", err, sizeof(err)), 0);
  assert_int_equal(s.load_balance, RP_BALANCE_LEAST_LOSS);
  assert_int_equal(sim_settings_set(&s, "score_refusal=-3", err, sizeof(err)),
                   0);
  assert_int_equal(s.score_refusal, -3);
  before = s;
  /* An unknown name is an error that names it, and changes nothing. */
  assert_int_equal(sim_settings_set(&s, "band_ration=2", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, "band_ration"));
  assert_int_equal(sim_settings_set(&s, "down_after=x", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, "down_after"));
  assert_non_null(strstr(err, "'x'"));
  assert_int_equal(sim_settings_set(&s, "deadline", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_int_equal(sim_settings_set(&s, "duplicate=-1", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_memory_equal(&s, &before, sizeof(s));
}

static void test_sim_load_parse(void **state) {
  sim_load load;
  char err[SIM_LOAD_ERRLEN];
  uint8_t q[SIM_LOAD_QUERY_MAX];
  rp_dns_msg msg;
  rp_ssize n;
  (void)state;
  assert_int_equal(
      sim_load_parse(&load, "rate=150,seconds=20", err, sizeof(err)), 0);
  assert_int_equal(load.kind, SIM_LOAD_RATE);
  assert_true(load.rate_qps == 150.0);
  assert_int_equal(load.duration, 20 * RP_SECONDS);
  assert_int_equal(sim_load_parse(&load,
                                  "workers=300,seconds=500ms,think=2ms,"
                                  "size=100,empty=25%",
                                  err, sizeof(err)),
                   0);
  assert_int_equal(load.kind, SIM_LOAD_WORKERS);
  assert_int_equal(load.workers, 300);
  assert_int_equal(load.duration, 500 * RP_MILLISECONDS);
  assert_int_equal(load.think, 2 * RP_MILLISECONDS);
  assert_int_equal(load.size, 100);
  assert_int_equal(load.empty_ppm, FR_PPM / 4);
  assert_int_equal(sim_load_parse(&load, "rate=1,workers=2", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_int_equal(sim_load_parse(&load, "rate=abc", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, "rate"));
  assert_int_equal(sim_load_parse(&load, "speed=3", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, "speed"));
  /* A query is a TXT question with EDNS 1232 and the serial's ID. */
  assert_int_equal(sim_load_parse(&load, "rate=1", err, sizeof(err)), 0);
  n = sim_load_build_query(&load, 70000, 0, q, sizeof(q));
  assert_true(n > 0);
  assert_int_equal(rp_dns_parse(&msg, q, (size_t)n), 0);
  assert_int_equal(msg.hdr.id, 70000 & 0xffff);
  assert_int_equal(msg.question.qtype, RP_DNS_TYPE_TXT);
  assert_int_equal(msg.edns_udp_size, RP_DNS_EDNS_UDP_SIZE);
}

static void test_sim_resolver_change(void **state) {
  fr_spec spec;
  sim_resolver r;
  fr_decision d;
  char err[FR_ERRBUF_LEN];
  (void)state;
  fr_spec_default(&spec);
  assert_int_equal(
      fr_spec_parse(&spec, "name=x,latency=10ms", err, sizeof(err)), 0);
  sim_resolver_init(&r, &spec, 1, 0);
  sim_resolver_receive(&r, 0, &d);
  assert_int_equal(d.verdict, FR_VERDICT_ANSWER);
  assert_int_equal(d.delay, 10 * RP_MILLISECONDS);
  assert_int_equal(
      sim_resolver_change(&r, "dead", RP_SECONDS, err, sizeof(err)), 0);
  sim_resolver_receive(&r, RP_SECONDS, &d);
  assert_int_equal(d.verdict, FR_VERDICT_DEAD);
  /* Keys not in the change are kept: latency and name. */
  assert_int_equal(
      sim_resolver_change(&r, "dead=no", 2 * RP_SECONDS, err, sizeof(err)), 0);
  sim_resolver_receive(&r, 2 * RP_SECONDS, &d);
  assert_int_equal(d.verdict, FR_VERDICT_ANSWER);
  assert_int_equal(d.delay, 10 * RP_MILLISECONDS);
  assert_string_equal(r.spec.name, "x");
  assert_int_equal(r.counts.received, 3);
  assert_int_equal(r.counts.answered, 2);
  assert_int_equal(r.counts.dead, 1);
  assert_int_equal(sim_resolver_change(&r, "rate=", 0, err, sizeof(err)),
                   RP_ERR_CONFIG);
}

/* test_scenario_rec records directives. */
typedef struct test_scenario_rec {
  char keys[8][32];
  char args[8][128];
  int n;
} test_scenario_rec;

static int test_scenario_fn(const char *key, const char *arg, void *user_data,
                            char *errbuf, size_t errlen) {
  test_scenario_rec *rec = user_data;
  if (strcmp(key, "bad") == 0) {
    snprintf(errbuf, errlen, "bad directive");
    return -1;
  }
  if (rec->n < 8) {
    snprintf(rec->keys[rec->n], sizeof(rec->keys[0]), "%s", key);
    snprintf(rec->args[rec->n], sizeof(rec->args[0]), "%s", arg);
    ++rec->n;
  }
  return 0;
}

static void test_sim_scenario_file(void **state) {
  char path[] = "/tmp/test_sim_scenarioXXXXXX";
  char err[256];
  test_scenario_rec rec;
  FILE *fp;
  int fd;
  (void)state;
  memset(&rec, 0, sizeof(rec));
  fd = mkstemp(path);
  assert_true(fd >= 0);
  fp = fdopen(fd, "w");
  assert_non_null(fp);
  fprintf(fp, "# a comment\n\nresolver name=r1,rate=20  # trailing\n"
              "  at 10s r1 dead\nbad line\n");
  fclose(fp);
  assert_int_equal(
      sim_scenario_load(path, test_scenario_fn, &rec, err, sizeof(err)),
      RP_ERR_CONFIG);
  assert_int_equal(rec.n, 2);
  assert_string_equal(rec.keys[0], "resolver");
  assert_string_equal(rec.args[0], "name=r1,rate=20");
  assert_string_equal(rec.keys[1], "at");
  assert_string_equal(rec.args[1], "10s r1 dead");
  assert_non_null(strstr(err, ":5:"));
  remove(path);
  assert_int_equal(
      sim_scenario_load(path, test_scenario_fn, &rec, err, sizeof(err)),
      RP_ERR_IO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_heap_order),
      cmocka_unit_test(test_sim_settings_table),
      cmocka_unit_test(test_sim_settings_complete),
      cmocka_unit_test(test_sim_settings_set),
      cmocka_unit_test(test_sim_load_parse),
      cmocka_unit_test(test_sim_resolver_change),
      cmocka_unit_test(test_sim_scenario_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
