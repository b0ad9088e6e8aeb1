/*
 * test_net.c: the runtime on loopback against an in-process responder.
 *
 * Each case runs a uv loop holding a pool (rp_net_pool_start), a
 * responder (tests/lib/rp_test_resolver.h: UDP and TCP on one 127.0.0.1
 * port, run by a fake resolver profile) and clients, asserts the
 * answers, stops the pool and checks that every handle closed
 * (uv_loop_close() == 0). A guard timer fails a case that hangs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "respool_net.h"
#include "dns.h"
#include "rp_test_resolver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* GUARD_MS fails a case still running after it. */
#define GUARD_MS 8000

/* ---------------------------------------------------------------- */
/* Fixture                                                            */
/* ---------------------------------------------------------------- */

typedef struct fixture {
  uv_loop_t loop;
  uv_timer_t guard;
  uv_timer_t step;
  rp_net_pool *np;
  int closed;
  rp_test_resolver resp;
  rp_config cfg;
  struct sockaddr_storage pool_addr;
  /* UDP client. */
  uv_udp_t cudp;
  int cudp_answers;
  uint8_t last_rcode;
  uint16_t last_id;
  uint8_t cudp_ids[8192]; /* a bit per ID answered */
  /* TCP client. */
  uv_tcp_t ctcp;
  uv_connect_t creq;
  uint8_t crbuf[4096];
  size_t crlen;
  int ctcp_answers;
  uint32_t ctcp_ids;
  int phase;
  /* In-process client (rp_net_pool_query): answers taken, the last one's
     token, ID and rcode, a bit per token answered, queries still to send
     one after another from the callback, and whether the next answer
     stops the pool. */
  int direct_answers;
  uint64_t direct_token;
  uint16_t direct_id;
  uint8_t direct_rcode;
  uint8_t direct_tokens[1024];
  int direct_chain;
  int direct_stop;
} fixture;

static void guard_cb(uv_timer_t *t) {
  (void)t;
  fail_msg("test hung");
}

static void pool_closed(rp_net_pool *np, void *ud) {
  fixture *f = ud;
  (void)np;
  f->closed = 1;
  f->np = NULL;
}

static void fx_init(fixture *f) {
  memset(f, 0, sizeof(*f));
  assert_int_equal(uv_loop_init(&f->loop), 0);
  uv_timer_init(&f->loop, &f->guard);
  uv_timer_init(&f->loop, &f->step);
  f->guard.data = f->step.data = f;
  uv_timer_start(&f->guard, guard_cb, GUARD_MS, 0);
  uv_unref((uv_handle_t *)&f->guard);
  rp_test_resolver_start(&f->resp, &f->loop, "");
  rp_config_init(&f->cfg, NULL);
}

static void fx_start_pool(fixture *f) {
  rp_net_options opts = {.config = &f->cfg, .kind = RP_KIND_GENERIC};
  char err[RP_CONFIG_ERRLEN];
  socklen_t len;
  int rv = rp_net_pool_start(&f->np, &f->loop, &opts, err, sizeof(err));
  if (rv != 0) {
    fail_msg("start: %s", err);
  }
  rp_net_pool_get_address(f->np, &f->pool_addr, &len);
  assert_int_equal(f->pool_addr.ss_family, AF_INET);
}

static void fx_add(fixture *f, const char *scheme) {
  char spec[64], err[RP_CONFIG_ERRLEN];
  rp_test_resolver_address(&f->resp, scheme, spec, sizeof(spec));
  assert_int_equal(
      rp_config_add_resolver(&f->cfg, spec, "test", "-r", err, sizeof(err)), 0);
}

static void fx_finish(fixture *f) {
  if (f->np) {
    rp_net_pool_stop(f->np, pool_closed, f);
  }
  rp_test_resolver_stop(&f->resp);
  uv_close((uv_handle_t *)&f->guard, NULL);
  uv_close((uv_handle_t *)&f->step, NULL);
  uv_run(&f->loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&f->loop), 0);
  rp_config_free(&f->cfg);
}

static size_t build_query(uint8_t *buf, size_t cap, uint16_t id,
                          const char *name, uint16_t edns) {
  rp_dns_name n;
  rp_ssize len;
  assert_int_equal(rp_dns_name_from_text(&n, name), 0);
  len = rp_dns_build_query(buf, cap, id, &n, RP_DNS_TYPE_A, edns);
  assert_true(len > 0);
  return (size_t)len;
}

/* pool_working runs the loop until the pool has |n| resolvers up. */
static void wait_working(fixture *f, size_t n) {
  rp_pool_stats st;
  for (;;) {
    rp_pool_get_stats(rp_net_pool_get_core(f->np), &st);
    if (st.nup >= n) {
      return;
    }
    uv_run(&f->loop, UV_RUN_ONCE);
  }
}

/* fx_up starts the fixture with one resolver, the responder by |scheme|,
   and runs the loop until the pool has it working. */
static void fx_up(fixture *f, const char *scheme) {
  fx_init(f);
  fx_add(f, scheme);
  fx_start_pool(f);
  wait_working(f, 1);
}

/* run_until runs the loop until |*counter| (a field of the fixture the
   callbacks count in) reaches |n|. */
static void run_until(fixture *f, const int *counter, int n) {
  while (*counter < n) {
    uv_run(&f->loop, UV_RUN_ONCE);
  }
}

/* wait_check runs the loop until resolver |i|'s check is |check|, and
   leaves its info in |*info|. */
static void wait_check(fixture *f, size_t i, rp_net_check_state check,
                       rp_net_resolver_info *info) {
  for (;;) {
    rp_net_pool_get_resolver(f->np, i, info, uv_hrtime());
    if (info->check == check) {
      return;
    }
    uv_run(&f->loop, UV_RUN_ONCE);
  }
}

/* ---------------------------------------------------------------- */
/* Clients                                                            */
/* ---------------------------------------------------------------- */

static void cudp_recv(uv_udp_t *h, ssize_t n, const uv_buf_t *buf,
                      const struct sockaddr *addr, unsigned flags) {
  fixture *f = h->data;
  (void)addr;
  (void)flags;
  if (n < RP_DNS_HEADER_LEN) {
    return;
  }
  ++f->cudp_answers;
  f->last_id = rp_dns_get_id((const uint8_t *)buf->base);
  f->cudp_ids[f->last_id / 8] |= (uint8_t)(1u << (f->last_id % 8));
  f->last_rcode = rp_dns_rcode((const uint8_t *)buf->base);
}

static void cudp_send(fixture *f, uint16_t id, uint16_t edns) {
  uint8_t q[512];
  size_t len = build_query(q, sizeof(q), id, "udp.example", edns);
  uv_buf_t b = uv_buf_init((char *)q, (unsigned)len);
  if (!uv_is_active((uv_handle_t *)&f->cudp)) {
    struct sockaddr_in any;
    uv_ip4_addr("127.0.0.1", 0, &any);
    uv_udp_init(&f->loop, &f->cudp);
    f->cudp.data = f;
    uv_udp_bind(&f->cudp, (const struct sockaddr *)&any, 0);
    uv_udp_recv_start(&f->cudp, rp_test_udp_alloc, cudp_recv);
  }
  assert_int_equal(
      uv_udp_try_send(&f->cudp, &b, 1, (const struct sockaddr *)&f->pool_addr),
      (int)len);
}

static void ctcp_alloc(uv_handle_t *h, size_t s, uv_buf_t *b) {
  fixture *f = h->data;
  (void)s;
  b->base = (char *)f->crbuf + f->crlen;
  b->len = sizeof(f->crbuf) - f->crlen;
}

static void ctcp_read(uv_stream_t *h, ssize_t n, const uv_buf_t *buf) {
  fixture *f = h->data;
  size_t off = 0;
  (void)buf;
  if (n < 0) {
    return;
  }
  f->crlen += (size_t)n;
  while (f->crlen - off >= 2) {
    size_t mlen = (size_t)(f->crbuf[off] << 8 | f->crbuf[off + 1]);
    if (f->crlen - off < 2 + mlen) {
      break;
    }
    ++f->ctcp_answers;
    f->ctcp_ids |= 1u << rp_dns_get_id(f->crbuf + off + 2);
    off += 2 + mlen;
  }
  memmove(f->crbuf, f->crbuf + off, f->crlen - off);
  f->crlen -= off;
}

static void ctcp_connected(uv_connect_t *req, int status) {
  fixture *f = req->data;
  uint8_t frames[1024];
  size_t len = 0;
  uint16_t id;
  uv_buf_t b;
  assert_int_equal(status, 0);
  uv_read_start((uv_stream_t *)&f->ctcp, ctcp_alloc, ctcp_read);
  for (id = 1; id <= 3; ++id) {
    size_t q = build_query(frames + len + 2, sizeof(frames) - len - 2, id,
                           "tcp.example", 0);
    frames[len] = (uint8_t)(q >> 8);
    frames[len + 1] = (uint8_t)q;
    len += 2 + q;
  }
  b = uv_buf_init((char *)frames, (unsigned)len);
  assert_int_equal(uv_try_write((uv_stream_t *)&f->ctcp, &b, 1), (int)len);
}

static void ctcp_connect(fixture *f) {
  uv_tcp_init(&f->loop, &f->ctcp);
  f->ctcp.data = f;
  f->creq.data = f;
  assert_int_equal(uv_tcp_connect(&f->creq, &f->ctcp,
                                  (const struct sockaddr *)&f->pool_addr,
                                  ctcp_connected),
                   0);
}

/* ---------------------------------------------------------------- */
/* Cases                                                              */
/* ---------------------------------------------------------------- */

static void test_net_udp_and_tcp_clients(void **state) {
  fixture f;
  rp_net_resolver_info info;
  (void)state;
  fx_up(&f, "");
  assert_int_equal(rp_net_pool_get_resolver(f.np, 0, &info, uv_hrtime()), 0);
  assert_int_equal(info.check, RP_NET_CHECK_PASSED);

  cudp_send(&f, 0x1234, 0);
  ctcp_connect(&f);
  while (f.cudp_answers < 1 || f.ctcp_answers < 3) {
    uv_run(&f.loop, UV_RUN_ONCE);
  }
  assert_int_equal(f.last_id, 0x1234);
  assert_int_equal(f.last_rcode, RP_DNS_RCODE_NOERROR);
  assert_int_equal(f.ctcp_ids, 0xe);
  uv_close((uv_handle_t *)&f.cudp, NULL);
  uv_close((uv_handle_t *)&f.ctcp, NULL);
  fx_finish(&f);
  assert_int_equal(f.closed, 1);
}

static void test_net_truncation(void **state) {
  fixture f;
  rp_net_counters c;
  (void)state;
  fx_init(&f);
  f.resp.truncate = 1;
  fx_add(&f, "");
  fx_start_pool(&f);
  wait_working(&f, 1);
  cudp_send(&f, 7, RP_DNS_EDNS_UDP_SIZE);
  run_until(&f, &f.cudp_answers, 1);
  /* The responder marks its TCP answers NXDOMAIN: this one came over the
     TCP companion after the truncated UDP answer. */
  assert_int_equal(f.last_id, 7);
  assert_int_equal(f.last_rcode, RP_DNS_RCODE_NXDOMAIN);
  rp_net_pool_get_counters(f.np, &c);
  assert_int_equal(c.tcp_connects, 1);
  assert_true(f.resp.tcp_queries >= 1);
  uv_close((uv_handle_t *)&f.cudp, NULL);
  fx_finish(&f);
}

static void late_step(uv_timer_t *t) {
  fixture *f = t->data;
  if (f->phase == 0) {
    /* The query is at the resolver: close the client connection. */
    uv_close((uv_handle_t *)&f->ctcp, NULL);
    f->phase = 1;
    uv_timer_start(&f->step, late_step, 300, 0);
  } else {
    f->phase = 2;
  }
}

static void test_net_late_tcp_answer(void **state) {
  fixture f;
  rp_net_counters c;
  (void)state;
  fx_up(&f, "");
  rp_test_resolver_set_spec(&f.resp, "latency=150ms");
  ctcp_connect(&f);
  uv_timer_start(&f.step, late_step, 50, 0);
  run_until(&f, &f.phase, 2);
  assert_int_equal(f.ctcp_answers, 0);
  rp_net_pool_get_counters(f.np, &c);
  assert_int_equal(c.tcp_queries, 3);
  /* Each answer that came back found its connection gone (one may still
     be in flight when the case ends on a slow machine). */
  assert_in_range(c.dropped_late, 1, 3);
  fx_finish(&f);
}

static void test_net_unsupported_and_dead(void **state) {
  fixture f;
  rp_net_options opts;
  rp_net_resolver_info info;
  rp_net_counters c;
  char err[RP_CONFIG_ERRLEN];
  rp_net_pool *np = NULL;
  struct sockaddr_in dead;
  uv_tcp_t probe;
  int namelen = sizeof(dead);
  (void)state;
  fx_init(&f);

  (void)np;
  (void)opts;
  /* Issue 5 made DoT supported (it used to be skipped here): a DoT and a
     tcp:// resolver on a closed port both fail their checks with a
     connection failure; the UDP one is used. */
  uv_tcp_init(&f.loop, &probe);
  uv_ip4_addr("127.0.0.1", 0, &dead);
  uv_tcp_bind(&probe, (const struct sockaddr *)&dead, 0);
  uv_tcp_getsockname(&probe, (struct sockaddr *)&dead, &namelen);
  uv_close((uv_handle_t *)&probe, NULL);
  uv_run(&f.loop, UV_RUN_NOWAIT);
  snprintf(err, sizeof(err), "dot://dns.test@127.0.0.1:%u",
           ntohs(dead.sin_port));
  assert_int_equal(
      rp_config_add_resolver(&f.cfg, err, "test", "-r", err, sizeof(err)), 0);
  snprintf(err, sizeof(err), "tcp://127.0.0.1:%u", ntohs(dead.sin_port));
  assert_int_equal(
      rp_config_add_resolver(&f.cfg, err, "test", "-r", err, sizeof(err)), 0);
  fx_add(&f, "");
  fx_start_pool(&f);
  wait_working(&f, 1);
  for (;;) {
    rp_net_resolver_info other;
    rp_net_pool_get_resolver(f.np, 1, &info, uv_hrtime());
    rp_net_pool_get_resolver(f.np, 0, &other, uv_hrtime());
    if (info.check == RP_NET_CHECK_FAILED &&
        other.check == RP_NET_CHECK_FAILED) {
      break;
    }
    uv_run(&f.loop, UV_RUN_ONCE);
  }
  rp_net_pool_get_resolver(f.np, 0, &info, uv_hrtime());
  assert_non_null(strstr(info.last_error, "connect_failed"));
  rp_net_pool_get_resolver(f.np, 2, &info, uv_hrtime());
  assert_int_equal(info.check, RP_NET_CHECK_PASSED);
  rp_net_pool_get_counters(f.np, &c);
  assert_int_equal(c.checks_failed, 2);
  assert_int_equal(c.tcp_connect_failures, 2);
  fx_finish(&f);
}

static void reconnect_step(uv_timer_t *t) {
  fixture *f = t->data;
  f->phase = 2;
}

static void test_net_tcp_reconnect(void **state) {
  fixture f;
  rp_net_counters c;
  (void)state;
  fx_up(&f, "tcp://");
  cudp_send(&f, 21, 0);
  run_until(&f, &f.cudp_answers, 1);
  /* The resolver drops the connection; the pool sees EOF, and the next
     query opens a new connection. */
  assert_true(f.resp.conn_open);
  rp_test_resolver_drop_conn(&f.resp);
  uv_timer_start(&f.step, reconnect_step, 50, 0);
  run_until(&f, &f.phase, 2);
  cudp_send(&f, 22, 0);
  run_until(&f, &f.cudp_answers, 2);
  assert_int_equal(f.last_id, 22);
  rp_net_pool_get_counters(f.np, &c);
  assert_int_equal(c.tcp_connects, 2);
  assert_int_equal(f.resp.udp_queries, 0);
  uv_close((uv_handle_t *)&f.cudp, NULL);
  fx_finish(&f);
}

static void test_net_recheck(void **state) {
  fixture f;
  rp_test_resolver late;
  rp_net_options opts;
  rp_net_resolver_info info;
  char spec[64], err[RP_CONFIG_ERRLEN];
  rp_test_port pr;
  (void)state;
  fx_init(&f);
  /* The port stays reserved while the resolver is down (its TCP socket
     bound, not listening), so a parallel test cannot take it first. */
  rp_test_port_reserve(&pr);
  snprintf(spec, sizeof(spec), "tcp://127.0.0.1:%d", pr.port);
  assert_int_equal(
      rp_config_add_resolver(&f.cfg, spec, "test", "-r", err, sizeof(err)), 0);
  opts = (rp_net_options){.config = &f.cfg,
                          .recheck_interval = 300 * RP_MILLISECONDS};
  assert_int_equal(rp_net_pool_start(&f.np, &f.loop, &opts, err, sizeof(err)),
                   0);
  wait_check(&f, 0, RP_NET_CHECK_FAILED, &info);
  /* The resolver comes up: the next re-check (fewer than 10 work) adds
     it, after the TCP backoff has passed. */
  rp_test_resolver_start_on(&late, &f.loop, &pr, "");
  wait_check(&f, 0, RP_NET_CHECK_PASSED, &info);
  assert_true(late.tcp_queries >= 1);
  rp_test_resolver_stop(&late);
  fx_finish(&f);
}

static rp_ssize check_build(uint8_t *buf, size_t cap, uint16_t id,
                            void *user_data) {
  int *calls = user_data;
  ++calls[0];
  return (rp_ssize)build_query(buf, cap, id, "check.tunnel.example", 0);
}

static int check_verify(const uint8_t *answer, size_t len, void *user_data) {
  int *calls = user_data;
  (void)answer;
  (void)len;
  ++calls[1];
  return 0;
}

static void test_net_embedder_check(void **state) {
  fixture f;
  rp_net_options opts;
  rp_net_resolver_info info;
  char err[RP_CONFIG_ERRLEN];
  int calls[2] = {0, 0};
  (void)state;
  fx_init(&f);
  fx_add(&f, "");
  opts = (rp_net_options){.config = &f.cfg,
                          .check_build = check_build,
                          .check_verify = check_verify,
                          .user_data = calls};
  assert_int_equal(rp_net_pool_start(&f.np, &f.loop, &opts, err, sizeof(err)),
                   0);
  wait_check(&f, 0, RP_NET_CHECK_FAILED, &info);
  assert_int_equal(calls[0], 1);
  assert_int_equal(calls[1], 1);
  fx_finish(&f);
}

/* Every listed resolver is checked at once, whatever want says: twelve
   live ones listed with want 10 all pass and join (the checks used to go
   ten at a time, so a dead one listed first held a live one out for its
   whole check timeout). */
static void test_net_check_all_at_once(void **state) {
  fixture f;
  rp_net_resolver_info info;
  size_t i, passed = 0;
  (void)state;
  fx_init(&f);
  for (i = 0; i < RP_NET_CHECK_WANT + 2; ++i) {
    fx_add(&f, "");
  }
  fx_start_pool(&f);
  wait_working(&f, RP_NET_CHECK_WANT + 2);
  for (i = 0; i < RP_NET_CHECK_WANT + 2; ++i) {
    rp_net_pool_get_resolver(f.np, i, &info, uv_hrtime());
    passed += info.check == RP_NET_CHECK_PASSED;
  }
  assert_int_equal(passed, RP_NET_CHECK_WANT + 2);
  fx_finish(&f);
}

/* A burst of queries of one length leaves for the resolver in segmented
   sends (UDP_SEGMENT), and every answer reaches the client with its own
   ID; a query of another length amid them (EDNS) is not lost. */
static void test_net_segmented_sends(void **state) {
  fixture f;
  rp_net_counters nc;
  uint16_t id;
  const uint16_t n = 120;
  (void)state;
  fx_up(&f, "");
  for (id = 1; id <= n; ++id) {
    cudp_send(&f, id, id == n / 2 ? 1232 : 0);
  }
  run_until(&f, &f.cudp_answers, n);
  for (id = 1; id <= n; ++id) {
    assert_true(f.cudp_ids[id / 8] & (1u << (id % 8)));
  }
  rp_net_pool_get_counters(f.np, &nc);
  if (nc.udp_segment_refused > 0) {
    print_message("the kernel refused segmented sends: sent one by one\n");
  } else {
    assert_true(nc.udp_segmented >= 2);
  }
  assert_int_equal(nc.send_failures, 0);
  uv_close((uv_handle_t *)&f.cudp, NULL);
  fx_finish(&f);
}

/* ---------------------------------------------------------------- */
/* In-process clients                                                 */
/* ---------------------------------------------------------------- */

/* The chain of queries sent one after another from the answer callback:
   tokens DIRECT_CHAIN_FIRST .. + DIRECT_CHAIN_LEN - 1. */
#define DIRECT_CHAIN_FIRST 100
#define DIRECT_CHAIN_LEN 300

/* direct_send hands the pool a query of ID |token| with |token|. */
static int direct_send(fixture *f, uint16_t token) {
  uint8_t q[512];
  size_t len = build_query(q, sizeof(q), token, "direct.example", 0);
  return rp_net_pool_query(f->np, q, len, token, uv_hrtime());
}

static void direct_answer(rp_net_pool *np, uint64_t token, const uint8_t *data,
                          size_t len, void *user_data) {
  fixture *f = user_data;
  assert_ptr_equal(np, f->np);
  assert_true(len >= RP_DNS_HEADER_LEN);
  ++f->direct_answers;
  f->direct_token = token;
  f->direct_id = rp_dns_get_id(data);
  f->direct_rcode = rp_dns_rcode(data);
  if (token / 8 < sizeof(f->direct_tokens)) {
    f->direct_tokens[token / 8] |= (uint8_t)(1u << (token % 8));
  }
  if (f->direct_stop) {
    f->direct_stop = 0;
    rp_net_pool_stop(f->np, pool_closed, f);
    return;
  }
  if (f->direct_chain > 0 && token >= DIRECT_CHAIN_FIRST &&
      token < DIRECT_CHAIN_FIRST + DIRECT_CHAIN_LEN) {
    /* The next query of the chain from inside the callback. */
    --f->direct_chain;
    assert_int_equal(direct_send(f, (uint16_t)(token + 1)), 0);
  }
}

static int direct_all_answered(const fixture *f, uint16_t from, uint16_t to) {
  uint16_t t;
  for (t = from; t <= to; ++t) {
    if (!(f->direct_tokens[t / 8] & (1u << (t % 8)))) {
      return 0;
    }
  }
  return 1;
}

static void test_net_direct_queries(void **state) {
  fixture f;
  rp_net_counters c;
  const uint8_t junk[3] = {1, 2, 3};
  uint16_t t;
  (void)state;
  fx_up(&f, "");

  /* Without an answer callback there is no in-process client. */
  assert_int_equal(direct_send(&f, 1), RP_ERR_INVALID_ARGUMENT);
  assert_int_equal(rp_net_pool_set_answer_cb(f.np, NULL, &f),
                   RP_ERR_INVALID_ARGUMENT);
  assert_int_equal(rp_net_pool_set_answer_cb(f.np, direct_answer, &f), 0);

  /* One query: its answer comes from the loop, never inside the call,
     with the query's ID and token. */
  assert_int_equal(direct_send(&f, 7), 0);
  assert_int_equal(f.direct_answers, 0);
  run_until(&f, &f.direct_answers, 1);
  assert_int_equal(f.direct_token, 7);
  assert_int_equal(f.direct_id, 7);
  assert_int_equal(f.direct_rcode, RP_DNS_RCODE_NOERROR);

  /* 300 queries one after another, each sent from the callback of the
     answer before, beside a burst of 100. */
  f.direct_chain = DIRECT_CHAIN_LEN - 1;
  assert_int_equal(direct_send(&f, DIRECT_CHAIN_FIRST), 0);
  for (t = 1000; t < 1100; ++t) {
    assert_int_equal(direct_send(&f, t), 0);
  }
  while (!direct_all_answered(&f, DIRECT_CHAIN_FIRST,
                              DIRECT_CHAIN_FIRST + DIRECT_CHAIN_LEN - 1) ||
         !direct_all_answered(&f, 1000, 1099)) {
    uv_run(&f.loop, UV_RUN_ONCE);
  }
  assert_int_equal(f.direct_answers, 401);

  /* Not a query: refused and counted, no answer. */
  assert_int_equal(rp_net_pool_query(f.np, junk, sizeof(junk), 5, uv_hrtime()),
                   RP_ERR_MALFORMED);
  rp_net_pool_get_counters(f.np, &c);
  assert_int_equal(c.direct_queries, 402);
  assert_int_equal(c.dropped_malformed, 1);
  assert_int_equal(c.direct_dropped, 0);
  assert_int_equal(c.udp_queries, 0);

  /* The callback may stop the pool: nothing is called back after. */
  f.direct_stop = 1;
  assert_int_equal(direct_send(&f, 500), 0);
  assert_int_equal(direct_send(&f, 501), 0);
  while (!f.closed) {
    uv_run(&f.loop, UV_RUN_ONCE);
  }
  assert_int_equal(f.direct_answers, 402);
  fx_finish(&f);
}

/* test_net_direct_full: answers that find the queue full are dropped and
   counted, the rest delivered; memory stays bounded. The queries go to a
   resolver that never answers and fail together. */
static void test_net_direct_full(void **state) {
  fixture f;
  rp_net_counters c;
  rp_test_port silent;
  char spec[64], err[RP_CONFIG_ERRLEN];
  rp_tstamp now;
  uint32_t i, n = RP_NET_DIRECT_ANSWERS + 100;
  (void)state;
  fx_init(&f);
  rp_test_port_reserve(&silent);
  snprintf(spec, sizeof(spec), "127.0.0.1:%d", silent.port);
  assert_int_equal(
      rp_config_add_resolver(&f.cfg, spec, "test", "-r", err, sizeof(err)), 0);
  f.cfg.pretest_domain = calloc(1, 1);
  fx_start_pool(&f);
  wait_working(&f, 1);
  assert_int_equal(rp_net_pool_set_answer_cb(f.np, direct_answer, &f), 0);
  now = uv_hrtime();
  for (i = 0; i < n; ++i) {
    uint8_t q[512];
    size_t len = build_query(q, sizeof(q), (uint16_t)i, "full.example", 0);
    assert_int_equal(rp_net_pool_query(f.np, q, len, i, now), 0);
  }
  for (;;) {
    rp_net_pool_get_counters(f.np, &c);
    if ((uint64_t)f.direct_answers + c.direct_dropped >= n) {
      break;
    }
    uv_run(&f.loop, UV_RUN_ONCE);
  }
  assert_true(c.direct_dropped > 0);
  assert_int_equal((uint64_t)f.direct_answers + c.direct_dropped, n);
  assert_int_equal(f.direct_rcode, RP_DNS_RCODE_SERVFAIL);
  rp_test_port_release(&silent);
  fx_finish(&f);
}

static void test_net_no_resolvers(void **state) {
  rp_config cfg;
  rp_net_options opts;
  uv_loop_t loop;
  rp_net_pool *np = NULL;
  char err[RP_CONFIG_ERRLEN];
  (void)state;
  uv_loop_init(&loop);
  rp_config_init(&cfg, NULL);
  opts = (rp_net_options){.config = &cfg};
  assert_int_equal(rp_net_pool_start(&np, &loop, &opts, err, sizeof(err)),
                   RP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "no resolvers"));
  assert_int_equal(uv_loop_close(&loop), 0);
  rp_config_free(&cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_net_udp_and_tcp_clients),
      cmocka_unit_test(test_net_truncation),
      cmocka_unit_test(test_net_late_tcp_answer),
      cmocka_unit_test(test_net_unsupported_and_dead),
      cmocka_unit_test(test_net_tcp_reconnect),
      cmocka_unit_test(test_net_recheck),
      cmocka_unit_test(test_net_embedder_check),
      cmocka_unit_test(test_net_check_all_at_once),
      cmocka_unit_test(test_net_segmented_sends),
      cmocka_unit_test(test_net_no_resolvers),
      cmocka_unit_test(test_net_direct_queries),
      cmocka_unit_test(test_net_direct_full),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
