/*
 * test_sim_parts.c: the simulator's pure parts: the event heap's (ts,
 * seq) order, load specs, resolver changes and scenario files.
 */
#include "rp_test_mem.h"

#include "fr_profile.h"
#include "sim_heap.h"
#include "sim_load.h"
#include "sim_resolver.h"
#include "sim_scenario.h"

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
  sim_heap_init(&heap, rp_test_mem_plain());
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
      cmocka_unit_test(test_sim_load_parse),
      cmocka_unit_test(test_sim_resolver_change),
      cmocka_unit_test(test_sim_scenario_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
