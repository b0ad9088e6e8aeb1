/*
 * test_fr_server.c: the libuv server in-process, on loopback port 0.
 *
 * Each case runs one loop with an fr_server and test sockets, counts the
 * replies, closes every handle and checks uv_loop_close() == 0. A guard
 * timer fails a case that hangs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dns.h"
#include "fr_answer.h"
#include "fr_server.h"

/* GUARD_MS fails a case that has not finished by then. */
#define GUARD_MS 5000
/* SETTLE_MS waits after the last expected reply, so that an unexpected
   one would still be seen. */
#define SETTLE_MS 100
/* UPSTREAM_TIMEOUT is the server's upstream timeout in the upstream
   case, and UPSTREAM_SETTLE_MS outlasts it. */
#define UPSTREAM_TIMEOUT (200 * RP_MILLISECONDS)
#define UPSTREAM_SETTLE_MS 400
#define MAX_REPLIES 32
#define BUF 2048

typedef struct reply {
  uint16_t id;
  uint8_t rcode;
  uint16_t ancount;
} reply;

typedef struct ctx {
  uv_loop_t loop;
  fr_server *srv;
  uv_udp_t client;
  uv_udp_t upstream;
  int upstream_on;
  uv_timer_t guard;
  uv_timer_t settle;
  uint64_t settle_ms;
  reply replies[MAX_REPLIES];
  size_t nreplies;
  size_t want;
  int guard_fired;
  int finished;
  /* upstream_seen counts queries the test upstream received. */
  size_t upstream_seen;
} ctx;

static void finish(ctx *c) {
  if (c->finished) {
    return;
  }
  c->finished = 1;
  fr_server_close(c->srv);
  uv_close((uv_handle_t *)&c->client, NULL);
  if (c->upstream_on) {
    uv_close((uv_handle_t *)&c->upstream, NULL);
  }
  uv_close((uv_handle_t *)&c->guard, NULL);
  uv_close((uv_handle_t *)&c->settle, NULL);
}

static void on_guard(uv_timer_t *t) {
  ctx *c = t->data;
  c->guard_fired = 1;
  finish(c);
}

static void on_settle(uv_timer_t *t) { finish(t->data); }

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  static char mem[BUF];
  (void)h;
  (void)suggested;
  *buf = uv_buf_init(mem, sizeof(mem));
}

static void on_client_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                           const struct sockaddr *addr, unsigned flags) {
  ctx *c = h->data;
  rp_dns_header hdr;
  (void)addr;
  (void)flags;

  if (nread <= 0 || c->nreplies == MAX_REPLIES) {
    return;
  }
  assert_int_equal(
      rp_dns_parse_header(&hdr, (const uint8_t *)buf->base, (size_t)nread), 0);
  c->replies[c->nreplies++] = (reply){
      .id = hdr.id,
      .rcode = (uint8_t)(hdr.flags & RP_DNS_RCODE_MASK),
      .ancount = hdr.ancount,
  };
  if (c->nreplies == c->want) {
    uv_timer_start(&c->settle, on_settle, c->settle_ms, 0);
  }
}

static void ctx_start(ctx *c, const fr_server_config *cfg) {
  struct sockaddr_in any;
  char err[FR_ERRBUF_LEN];

  memset(c, 0, sizeof(*c));
  assert_int_equal(uv_loop_init(&c->loop), 0);
  assert_int_equal(fr_server_new(&c->srv, &c->loop, cfg, err, sizeof(err)), 0);
  uv_ip4_addr("127.0.0.1", 0, &any);
  uv_udp_init(&c->loop, &c->client);
  c->client.data = c;
  assert_int_equal(uv_udp_bind(&c->client, (const struct sockaddr *)&any, 0),
                   0);
  assert_int_equal(uv_udp_recv_start(&c->client, on_alloc, on_client_recv), 0);
  uv_timer_init(&c->loop, &c->guard);
  uv_timer_init(&c->loop, &c->settle);
  c->guard.data = c;
  c->settle.data = c;
  c->settle_ms = SETTLE_MS;
  uv_timer_start(&c->guard, on_guard, GUARD_MS, 0);
}

static void ctx_run_and_close(ctx *c) {
  uv_run(&c->loop, UV_RUN_DEFAULT);
  assert_false(c->guard_fired);
  assert_int_equal(uv_loop_close(&c->loop), 0);
}

/* send_to sends |len| bytes from the client to resolver |i|. */
static void send_to(ctx *c, size_t i, const uint8_t *data, size_t len) {
  struct sockaddr_in to;
  uv_buf_t buf = uv_buf_init((char *)(uintptr_t)data, (unsigned)len);

  assert_int_equal(fr_server_address(c->srv, i, &to, NULL), 0);
  assert_int_equal(
      uv_udp_try_send(&c->client, &buf, 1, (const struct sockaddr *)&to),
      (int)len);
}

static void send_query(ctx *c, size_t i, uint16_t id, const char *name) {
  uint8_t q[BUF];
  rp_dns_name n;
  rp_ssize len;

  assert_int_equal(rp_dns_name_from_text(&n, name), 0);
  len = rp_dns_build_query(q, sizeof(q), id, &n, RP_DNS_TYPE_A, 0);
  assert_true(len > 0);
  send_to(c, i, q, (size_t)len);
}

static size_t count_rcode(const ctx *c, uint8_t rcode) {
  size_t i;
  size_t n = 0;
  for (i = 0; i < c->nreplies; ++i) {
    n += c->replies[i].rcode == rcode;
  }
  return n;
}

static fr_spec spec(const char *text) {
  fr_spec s;
  char err[FR_ERRBUF_LEN];
  fr_spec_default(&s);
  assert_int_equal(fr_spec_parse(&s, text, err, sizeof(err)), 0);
  return s;
}

/* use_specs parses the |n| profile |texts| into |specs| and points
   |cfg| at them. */
static void use_specs(fr_server_config *cfg, fr_spec *specs,
                      const char *const *texts, size_t n) {
  size_t i;

  for (i = 0; i < n; ++i) {
    specs[i] = spec(texts[i]);
  }
  cfg->specs = specs;
  cfg->nspecs = n;
}

static void test_fr_server_answer_mode(void **state) {
  static const char *const texts[] = {"name=ans", "name=ref,rate=1,burst=1",
                                      "name=dead,dead"};
  static ctx c;
  fr_spec specs[3];
  fr_server_config cfg = {
      .mode = FR_MODE_ANSWER, .upstream_timeout = RP_SECONDS, .seed = 1};
  /* A header that promises a question it does not carry. */
  const uint8_t header_only[RP_DNS_HEADER_LEN] = {0x12, 0x34, 0x01, 0, 0, 1,
                                                  0,    0,    0,    0, 0, 0};
  const uint8_t tiny[5] = {1, 2, 3, 4, 5};
  const fr_counts *k;
  (void)state;

  use_specs(&cfg, specs, texts, 3);
  ctx_start(&c, &cfg);
  send_query(&c, 0, 1, "a.example");
  send_query(&c, 0, 2, "b.example");
  send_query(&c, 0, 3, "c.example");
  send_query(&c, 1, 4, "a.example");
  send_query(&c, 1, 5, "b.example");
  send_query(&c, 1, 6, "c.example");
  send_query(&c, 2, 7, "a.example");
  send_query(&c, 2, 8, "b.example");
  send_to(&c, 0, header_only, sizeof(header_only));
  send_to(&c, 0, tiny, sizeof(tiny));
  c.want = 7;
  ctx_run_and_close(&c);

  assert_int_equal(c.nreplies, 7);
  assert_int_equal(count_rcode(&c, RP_DNS_RCODE_NOERROR), 4);
  assert_int_equal(count_rcode(&c, RP_DNS_RCODE_REFUSED), 2);
  assert_int_equal(count_rcode(&c, RP_DNS_RCODE_FORMERR), 1);
  k = fr_server_counts(c.srv, 0);
  assert_int_equal(k->queries, 5);
  assert_int_equal(k->answered, 3);
  assert_int_equal(k->malformed, 2);
  k = fr_server_counts(c.srv, 1);
  assert_int_equal(k->answered, 1);
  assert_int_equal(k->refused, 2);
  k = fr_server_counts(c.srv, 2);
  assert_int_equal(k->queries, 2);
  assert_int_equal(k->dead, 2);
  assert_int_equal(k->answered, 0);
  assert_null(fr_server_counts(c.srv, 3));
  assert_int_equal(fr_server_address(c.srv, 3, NULL, NULL), RP_ERR_NOT_FOUND);
  fr_server_del(c.srv);
}

/* The test upstream: ignores "ignore.*", answers the rest after a spoofed
   answer to another question with the same ID. */
static void on_upstream_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                             const struct sockaddr *addr, unsigned flags) {
  ctx *c = h->data;
  rp_dns_msg q;
  uint8_t out[BUF];
  uint8_t spoof_q[BUF];
  rp_dns_msg spoof;
  rp_dns_name other;
  rp_ssize len;
  uv_buf_t b;
  (void)flags;

  if (nread <= 0) {
    return;
  }
  assert_int_equal(rp_dns_parse(&q, (const uint8_t *)buf->base, (size_t)nread),
                   0);
  ++c->upstream_seen;
  if (q.question.name.wire[1] == 'i') {
    return; /* "ignore...": let the server time out */
  }
  /* Spoof: same ID, another question. */
  assert_int_equal(rp_dns_name_from_text(&other, "spoof.example"), 0);
  len = rp_dns_build_query(spoof_q, sizeof(spoof_q), q.hdr.id, &other,
                           RP_DNS_TYPE_A, 0);
  assert_true(len > 0);
  assert_int_equal(rp_dns_parse(&spoof, spoof_q, (size_t)len), 0);
  len = fr_answer_build(out, sizeof(out), &spoof, 0);
  assert_true(len > 0);
  b = uv_buf_init((char *)out, (unsigned)len);
  assert_int_equal(uv_udp_try_send(h, &b, 1, addr), (int)len);
  /* The real answer. */
  len = fr_answer_build(out, sizeof(out), &q, 0);
  assert_true(len > 0);
  b = uv_buf_init((char *)out, (unsigned)len);
  assert_int_equal(uv_udp_try_send(h, &b, 1, addr), (int)len);
}

static void test_fr_server_upstream_mode(void **state) {
  static ctx c;
  static uv_loop_t probe;
  static const char *const texts[] = {"name=fw"};
  fr_spec specs[1];
  fr_server_config cfg = {.mode = FR_MODE_UPSTREAM,
                          .upstream_timeout = UPSTREAM_TIMEOUT,
                          .seed = 2};
  struct sockaddr_in any;
  uv_udp_t up;
  int alen = sizeof(cfg.upstream);
  const fr_counts *k;
  (void)state;

  /* The upstream socket must exist before the server: bind it on its own
     loop first, then move its address into the config. A second socket
     on the test's loop takes the same port. */
  use_specs(&cfg, specs, texts, 1);
  uv_ip4_addr("127.0.0.1", 0, &any);
  assert_int_equal(uv_loop_init(&probe), 0);
  uv_udp_init(&probe, &up);
  assert_int_equal(uv_udp_bind(&up, (const struct sockaddr *)&any, 0), 0);
  assert_int_equal(
      uv_udp_getsockname(&up, (struct sockaddr *)&cfg.upstream, &alen), 0);
  uv_close((uv_handle_t *)&up, NULL);
  uv_run(&probe, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&probe), 0);

  ctx_start(&c, &cfg);
  uv_udp_init(&c.loop, &c.upstream);
  c.upstream.data = &c;
  c.upstream_on = 1;
  assert_int_equal(
      uv_udp_bind(&c.upstream, (const struct sockaddr *)&cfg.upstream, 0), 0);
  assert_int_equal(uv_udp_recv_start(&c.upstream, on_alloc, on_upstream_recv),
                   0);
  c.settle_ms = UPSTREAM_SETTLE_MS;
  send_query(&c, 0, 0x1111, "answer.up.example");
  send_query(&c, 0, 0x2222, "ignore.up.example");
  c.want = 1;
  ctx_run_and_close(&c);

  assert_int_equal(c.upstream_seen, 2);
  assert_int_equal(c.nreplies, 1);
  assert_int_equal(c.replies[0].id, 0x1111);
  assert_int_equal(c.replies[0].rcode, RP_DNS_RCODE_NOERROR);
  assert_int_equal(c.replies[0].ancount, 1);
  k = fr_server_counts(c.srv, 0);
  assert_int_equal(k->queries, 2);
  assert_int_equal(k->answered, 1);
  assert_int_equal(k->upstream_timeouts, 1);
  fr_server_del(c.srv);
}

static void test_fr_server_bind_error(void **state) {
  uv_loop_t loop;
  fr_server *srv = NULL;
  fr_spec specs[2];
  char err[FR_ERRBUF_LEN];
  fr_server_config cfg = {
      .mode = FR_MODE_ANSWER,
      .specs = specs,
      .nspecs = 2,
  };
  struct sockaddr_in udp;
  (void)state;

  /* The first resolver binds a free port; the second asks for the same
     one and must fail, leaving nothing open. */
  specs[0] = spec("name=a");
  assert_int_equal(uv_loop_init(&loop), 0);
  cfg.nspecs = 1;
  assert_int_equal(fr_server_new(&srv, &loop, &cfg, err, sizeof(err)), 0);
  assert_int_equal(fr_server_address(srv, 0, &udp, NULL), 0);
  specs[1] = spec("name=b");
  specs[1].port = ntohs(udp.sin_port);
  {
    fr_server *srv2 = NULL;
    fr_server_config cfg2 = cfg;
    cfg2.specs = &specs[1];
    cfg2.nspecs = 1;
    assert_int_equal(fr_server_new(&srv2, &loop, &cfg2, err, sizeof(err)),
                     RP_ERR_IO);
    assert_non_null(strstr(err, "resolver b"));
    assert_null(srv2);
  }
  cfg.nspecs = 0;
  assert_int_equal(fr_server_new(&srv, &loop, &cfg, err, sizeof(err)),
                   RP_ERR_INVALID_ARGUMENT);
  fr_server_close(srv);
  uv_run(&loop, UV_RUN_DEFAULT);
  fr_server_del(srv);
  assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fr_server_answer_mode),
      cmocka_unit_test(test_fr_server_upstream_mode),
      cmocka_unit_test(test_fr_server_bind_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
