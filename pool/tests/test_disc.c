/*
 * test_disc.c: resolver discovery (pool/discovery) on loopback.
 *
 * - Silent candidates: 300 UDP sockets that never answer, tested with
 *   concurrency 100 and a 200 ms pretest timeout, all end as timeouts in
 *   about 300 x 0.2 s / 100 = 0.6 s (bounded here by 3 s; one at a time
 *   would take 60 s). Junk lines and DoT URLs of the list are skipped,
 *   duplicates dropped.
 * - Order and result: with concurrency 1, saved addresses come first,
 *   then the system file, then the list; a responder that answers NOERROR
 *   passes with its latency and ends the run (want 1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "disc.h"
#include "dns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* NSILENT is the number of silent candidates. */
#define NSILENT 300
/* GUARD_MS fails a case still running after it. */
#define GUARD_MS 10000
/* MAX_ORDER is how many results the order case records. */
#define MAX_ORDER 8

typedef struct rec {
  int done;
  rp_disc_stats stats;
  size_t nfound;
  rp_disc_report found;
  char found_addr[RP_DISC_ADDR_LEN];
  char order[MAX_ORDER][RP_DISC_ADDR_LEN];
  rp_disc_source order_src[MAX_ORDER];
  size_t norder;
  rp_disc *d;
  int closed;
} rec;

static void on_found(const rp_disc_report *r, void *ud) {
  rec *x = ud;
  ++x->nfound;
  x->found = *r;
  snprintf(x->found_addr, sizeof(x->found_addr), "%s", r->addr);
}

static void on_result(const rp_disc_report *r, void *ud) {
  rec *x = ud;
  if (x->norder < MAX_ORDER) {
    snprintf(x->order[x->norder], RP_DISC_ADDR_LEN, "%s", r->addr);
    x->order_src[x->norder] = r->source;
    ++x->norder;
  }
}

static void on_closed(rp_disc *d, void *ud) {
  rec *x = ud;
  (void)d;
  x->closed = 1;
}

static void on_done(const rp_disc_stats *st, void *ud) {
  rec *x = ud;
  ++x->done;
  x->stats = *st;
  rp_disc_stop(x->d, on_closed, x);
}

static void guard_cb(uv_timer_t *t) {
  (void)t;
  fail_msg("discovery test hung");
}

/* run_disc starts the discovery |x->d| on |loop| with |o| (its
   user_data set to |x|) under a guard timer |guard|, and runs the loop
   until the discovery closed. The case closes |guard|. */
static void run_disc(rec *x, uv_loop_t *loop, rp_disc_options *o,
                     uv_timer_t *guard) {
  char err[RP_CONFIG_ERRLEN];

  o->user_data = x;
  assert_int_equal(rp_disc_start(&x->d, loop, o, err, sizeof(err)), 0);
  uv_timer_init(loop, guard);
  uv_timer_start(guard, guard_cb, GUARD_MS, 0);
  while (!x->closed) {
    uv_run(loop, UV_RUN_ONCE);
  }
}

/* bind_udp binds a UDP socket of |loop| on 127.0.0.1 and returns its
   port. */
static uint16_t bind_udp(uv_loop_t *loop, uv_udp_t *u) {
  struct sockaddr_in sin;
  int len = sizeof(sin);
  uv_ip4_addr("127.0.0.1", 0, &sin);
  assert_int_equal(uv_udp_init(loop, u), 0);
  assert_int_equal(uv_udp_bind(u, (const struct sockaddr *)&sin, 0), 0);
  assert_int_equal(uv_udp_getsockname(u, (struct sockaddr *)&sin, &len), 0);
  return ntohs(sin.sin_port);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_disc_silent_bounded(void **state) {
  uv_loop_t loop;
  uv_udp_t *socks = calloc(NSILENT, sizeof(*socks));
  uint16_t first_port = 0;
  uv_timer_t guard;
  char path[] = "/tmp/rp-disc-list.XXXXXX";
  rp_config_discovery cfg = {
      .want = 10, .concurrency = 100, .timeout = 200 * RP_MILLISECONDS};
  rp_disc_options o = {
      .config = &cfg, .on_found = on_found, .on_done = on_done};
  rec x = {0};
  FILE *f;
  int fd, i;
  (void)state;
  assert_non_null(socks);
  uv_loop_init(&loop);
  fd = mkstemp(path);
  assert_true(fd >= 0);
  f = fdopen(fd, "w");
  fputs("# silent candidates\n\nnot-an-address\ndot://x@127.0.0.1:853\n", f);
  for (i = 0; i < NSILENT; ++i) {
    uint16_t port = bind_udp(&loop, &socks[i]);
    if (i == 0) {
      first_port = port;
    }
    fprintf(f, "127.0.0.1:%u\n", port);
  }
  fprintf(f, "  127.0.0.1:%u  # a duplicate\n", first_port);
  fclose(f);
  cfg.list_file = path;
  run_disc(&x, &loop, &o, &guard);
  assert_int_equal(x.done, 1);
  assert_int_equal(x.stats.candidates, NSILENT);
  assert_int_equal(x.stats.skipped, 2);
  assert_int_equal(x.stats.tested, NSILENT);
  assert_int_equal(x.stats.by_result[RP_DISC_TIMEOUT], NSILENT);
  assert_int_equal(x.stats.passed, 0);
  assert_int_equal(x.nfound, 0);
  print_message("# %d silent candidates, concurrency 100, timeout 200 ms: "
                "%.2f s\n",
                NSILENT, (double)x.stats.elapsed / (double)RP_SECONDS);
  assert_true(x.stats.elapsed < 3 * RP_SECONDS);
  assert_true(x.stats.elapsed >= 500 * RP_MILLISECONDS);
  uv_close((uv_handle_t *)&guard, NULL);
  for (i = 0; i < NSILENT; ++i) {
    uv_close((uv_handle_t *)&socks[i], NULL);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
  unlink(path);
  free(socks);
}

/* The responder answers each query NOERROR (QR set, no records). */
static uint8_t resp_buf[512];

static void resp_alloc(uv_handle_t *h, size_t s, uv_buf_t *b) {
  (void)h;
  (void)s;
  b->base = (char *)resp_buf;
  b->len = sizeof(resp_buf);
}

static void resp_recv(uv_udp_t *u, ssize_t n, const uv_buf_t *b,
                      const struct sockaddr *from, unsigned flags) {
  uv_buf_t out;
  (void)flags;
  if (n < RP_DNS_HEADER_LEN || !from) {
    return;
  }
  b->base[2] = (char)(b->base[2] | 0x80);
  out = uv_buf_init(b->base, (unsigned int)n);
  uv_udp_try_send(u, &out, 1, from);
}

static void test_disc_order_and_pass(void **state) {
  uv_loop_t loop;
  uv_udp_t silent, resp;
  uv_timer_t guard;
  char list[] = "/tmp/rp-disc-list.XXXXXX";
  char sys[] = "/tmp/rp-disc-resolv.XXXXXX";
  char text[256], saved[64], want_found[64];
  const char *first[1];
  rp_config_discovery cfg = {.want = 1,
                             .concurrency = 1,
                             .timeout = 100 * RP_MILLISECONDS,
                             .system = 1};
  rp_disc_options o = {.config = &cfg,
                       .on_found = on_found,
                       .on_result = on_result,
                       .on_done = on_done};
  rec x = {0};
  uint16_t sp, rport;
  (void)state;
  uv_loop_init(&loop);
  sp = bind_udp(&loop, &silent);
  rport = bind_udp(&loop, &resp);
  uv_udp_recv_start(&resp, resp_alloc, resp_recv);
  close(mkstemp(list));
  close(mkstemp(sys));
  /* System: a nameserver line (port 53: nothing listens, unreachable). */
  write_file(sys, "# test\nsearch example\nnameserver 127.0.0.9\n");
  snprintf(text, sizeof(text), "127.0.0.1:%u\n127.0.0.1:%u\n127.0.0.1:%u\n", sp,
           rport, sp + 0u);
  write_file(list, text);
  snprintf(saved, sizeof(saved), "127.0.0.1:%u", sp);
  snprintf(want_found, sizeof(want_found), "127.0.0.1:%u", rport);
  first[0] = saved;
  cfg.list_file = list;
  o.first = first;
  o.nfirst = 1;
  o.resolv_conf = sys;
  run_disc(&x, &loop, &o, &guard);
  /* saved (silent), system (unreachable), list: the silent one again is a
     duplicate, then the responder passes and the run ends. */
  assert_int_equal(x.stats.candidates, 3);
  assert_int_equal(x.norder, 3);
  assert_string_equal(x.order[0], saved);
  assert_int_equal(x.order_src[0], RP_DISC_SOURCE_SAVED);
  assert_string_equal(x.order[1], "127.0.0.9:53");
  assert_int_equal(x.order_src[1], RP_DISC_SOURCE_SYSTEM);
  assert_string_equal(x.order[2], want_found);
  assert_int_equal(x.order_src[2], RP_DISC_SOURCE_LIST);
  assert_int_equal(x.nfound, 1);
  assert_string_equal(x.found_addr, want_found);
  assert_int_equal(x.found.result, RP_DISC_PASSED);
  assert_true(x.found.latency < 100 * RP_MILLISECONDS);
  assert_int_equal(x.stats.by_result[RP_DISC_TIMEOUT], 1);
  assert_int_equal(x.stats.passed, 1);
  assert_int_equal(x.done, 1);
  uv_close((uv_handle_t *)&guard, NULL);
  uv_close((uv_handle_t *)&silent, NULL);
  uv_close((uv_handle_t *)&resp, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
  unlink(list);
  unlink(sys);
}

static int bundled_count(const char *url, void *ud) {
  size_t *n = ud;
  assert_true(strncmp(url, "dot://", 6) == 0 ||
              strncmp(url, "https://", 8) == 0);
  ++*n;
  return 0;
}

static void test_disc_bundled(void **state) {
  size_t n_global = 0, n_ru = 0;
  char err[RP_CONFIG_ERRLEN];
  (void)state;
  assert_int_equal(
      rp_disc_bundled_tls(NULL, "", bundled_count, &n_global, err, sizeof(err)),
      0);
  assert_int_equal(
      rp_disc_bundled_tls(NULL, "RU", bundled_count, &n_ru, err, sizeof(err)),
      0);
  assert_true(n_global >= 2);
  assert_true(n_ru > n_global);
  assert_int_equal(rp_disc_bundled_tls("/nonexistent/x.json", "", bundled_count,
                                       &n_ru, err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, "/nonexistent/x.json"));
}

static void test_disc_config_fields(void **state) {
  static const char json[] =
      "{\"resolvers\": [\"auto\", \"https://dns.test@127.0.0.1:8443/q\"],"
      " \"tls_ca\": \"/x/ca.pem\", \"tls_name\": \"dns.test\","
      " \"discovery\": {\"country\": \"RU\", \"want\": 3,"
      " \"concurrency\": 7, \"pace\": \"5ms\", \"timeout\": \"300ms\","
      " \"list_file\": \"/x/list\", \"data_file\": \"/x/data.json\","
      " \"system\": false, \"bundled\": false, \"sample_ranges\": 4}}";
  rp_config cfg;
  char err[RP_CONFIG_ERRLEN];
  (void)state;
  rp_config_init(&cfg, NULL);
  assert_int_equal(cfg.discovery.system, 1);
  assert_int_equal(cfg.discovery.bundled, 1);
  assert_int_equal(
      rp_config_parse_json(&cfg, json, strlen(json), "t", err, sizeof(err)), 0);
  assert_int_equal(cfg.nresolvers, 2);
  assert_int_equal(cfg.resolvers[0].scheme, RP_SCHEME_AUTO);
  assert_int_equal(cfg.resolvers[1].scheme, RP_SCHEME_DOH);
  assert_string_equal(cfg.resolvers[1].tls_name, "dns.test");
  assert_string_equal(cfg.resolvers[1].host, "127.0.0.1");
  assert_string_equal(cfg.resolvers[1].path, "/q");
  assert_int_equal(cfg.resolvers[1].port, 8443);
  assert_true(cfg.resolvers[1].has_addr);
  assert_string_equal(cfg.discovery.country, "RU");
  assert_int_equal(cfg.discovery.want, 3);
  assert_int_equal(cfg.discovery.concurrency, 7);
  assert_int_equal(cfg.discovery.pace, 5 * RP_MILLISECONDS);
  assert_int_equal(cfg.discovery.timeout, 300 * RP_MILLISECONDS);
  assert_string_equal(cfg.discovery.list_file, "/x/list");
  assert_string_equal(cfg.discovery.data_file, "/x/data.json");
  assert_int_equal(cfg.discovery.system, 0);
  assert_int_equal(cfg.discovery.bundled, 0);
  assert_int_equal(cfg.discovery.sample_ranges, 4);
  rp_config_free(&cfg);
  rp_config_init(&cfg, NULL);
  assert_int_equal(
      rp_config_parse_json(&cfg, "{\"discovery\": {\"system\": 1}}",
                           strlen("{\"discovery\": {\"system\": 1}}"), "t", err,
                           sizeof(err)),
      RP_ERR_CONFIG);
  assert_non_null(strstr(err, "discovery.system"));
  rp_config_free(&cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_disc_silent_bounded),
      cmocka_unit_test(test_disc_order_and_pass),
      cmocka_unit_test(test_disc_bundled),
      cmocka_unit_test(test_disc_config_fields),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
