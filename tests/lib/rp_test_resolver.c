/*
 * rp_test_resolver.c: the scriptable loopback resolver
 * (rp_test_resolver.h).
 */
#include "rp_test_resolver.h"

#include <stdarg.h>
#include <setjmp.h>
#include <cmocka.h>

#include "dns.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* RES_PORT_TRIES bounds the search for a free UDP+TCP port pair. */
#define RES_PORT_TRIES 50
/* RES_BACKLOG is the TCP listen backlog. */
#define RES_BACKLOG 8
/* RES_SEED seeds the profile's random source: fixed, so each run draws
   the same losses and jitter. */
#define RES_SEED 1
/* RES_NS_PER_MS converts the profile's delays to timer ms. */
#define RES_NS_PER_MS 1000000u
/* DNS header flag bits of bytes 2 and 3 (RFC 1035 4.1.1). */
#define RES_FLAG_QR 0x80
#define RES_FLAG_TC 0x02
#define RES_FLAG_RA 0x80

void rp_test_port_reserve(rp_test_port *pr) {
  int tries;

  pr->udp = pr->tcp = -1;
  for (tries = 0; tries < RES_PORT_TRIES; ++tries) {
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    int tcp = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    uv_ip4_addr("127.0.0.1", 0, &a);
    setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(udp, (const struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(udp, (struct sockaddr *)&a, &alen) == 0 &&
        bind(tcp, (const struct sockaddr *)&a, sizeof(a)) == 0) {
      pr->udp = udp;
      pr->tcp = tcp;
      pr->port = ntohs(a.sin_port);
      return;
    }
    close(udp);
    close(tcp);
  }
  fail_msg("no free UDP and TCP port pair on 127.0.0.1 in %d tries",
           RES_PORT_TRIES);
}

void rp_test_port_release(rp_test_port *pr) {
  if (pr->udp >= 0) {
    close(pr->udp);
  }
  if (pr->tcp >= 0) {
    close(pr->tcp);
  }
  pr->udp = pr->tcp = -1;
}

/* res_answer writes the answer to query |q| (|len| bytes) into |out|:
   the query with QR, RA, |tc| and |rcode|. */
static void res_answer(const uint8_t *q, size_t len, uint8_t *out, int tc,
                       uint8_t rcode) {
  memcpy(out, q, len);
  out[2] |= RES_FLAG_QR;
  if (tc) {
    out[2] |= RES_FLAG_TC;
  }
  out[3] = (uint8_t)(RES_FLAG_RA | rcode);
}

void rp_test_udp_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
  static uint8_t buf[65536];
  (void)h;
  (void)suggested;
  b->base = (char *)buf;
  b->len = sizeof(buf);
}

static void res_send(rp_test_resolver *r, const uint8_t *buf, size_t len,
                     const struct sockaddr *to) {
  uv_buf_t b = uv_buf_init((char *)(uintptr_t)buf, (unsigned)len);
  uv_udp_try_send(&r->udp, &b, 1, to);
}

static void res_timer_cb(uv_timer_t *t);

/* res_arm starts the timer for the earliest held answer, if any. */
static void res_arm(rp_test_resolver *r) {
  uint64_t now = uv_now(r->timer.loop), due = UINT64_MAX;
  size_t i;

  for (i = 0; i < RP_TEST_RESOLVER_PENDING; ++i) {
    if (r->pending[i].used && r->pending[i].due_ms < due) {
      due = r->pending[i].due_ms;
    }
  }
  if (due != UINT64_MAX) {
    uv_timer_start(&r->timer, res_timer_cb, due > now ? due - now : 0, 0);
  }
}

static void res_timer_cb(uv_timer_t *t) {
  rp_test_resolver *r = t->data;
  uint64_t now = uv_now(t->loop);
  size_t i;

  for (i = 0; i < RP_TEST_RESOLVER_PENDING; ++i) {
    rp_test_pending *p = &r->pending[i];
    if (p->used && p->due_ms <= now) {
      res_send(r, p->buf, p->len, (const struct sockaddr *)&p->to);
      p->used = 0;
    }
  }
  res_arm(r);
}

/* res_hold keeps an answer until |delay| (ns) has passed; it goes at once
   when every slot is taken. */
static void res_hold(rp_test_resolver *r, const uint8_t *buf, size_t len,
                     const struct sockaddr *to, rp_duration delay) {
  size_t i;

  for (i = 0; i < RP_TEST_RESOLVER_PENDING; ++i) {
    rp_test_pending *p = &r->pending[i];
    if (!p->used) {
      memcpy(p->buf, buf, len);
      p->len = len;
      memcpy(&p->to, to, sizeof(struct sockaddr_in));
      p->due_ms =
          uv_now(r->timer.loop) + (delay + RES_NS_PER_MS - 1) / RES_NS_PER_MS;
      p->used = 1;
      res_arm(r);
      return;
    }
  }
  res_send(r, buf, len, to);
}

static void res_udp_recv(uv_udp_t *h, ssize_t n, const uv_buf_t *buf,
                         const struct sockaddr *addr, unsigned flags) {
  rp_test_resolver *r = h->data;
  uint8_t out[RP_TEST_RESOLVER_MSG];
  fr_decision d;
  (void)flags;
  if (n < RP_DNS_HEADER_LEN || !addr || (size_t)n > sizeof(out)) {
    return;
  }
  ++r->udp_queries;
  fr_profile_decide(&r->profile, uv_hrtime(), fr_rng_next, &r->rng, &d);
  switch (d.verdict) {
  case FR_VERDICT_ANSWER:
  case FR_VERDICT_REFUSE:
    res_answer((const uint8_t *)buf->base, (size_t)n, out, r->truncate,
               d.rcode);
    if (d.delay == 0) {
      res_send(r, out, (size_t)n, addr);
    } else {
      res_hold(r, out, (size_t)n, addr, d.delay);
    }
    break;
  case FR_VERDICT_DROP:
  case FR_VERDICT_LOSE_BEFORE:
  case FR_VERDICT_LOSE_AFTER:
  case FR_VERDICT_DEAD:
    break;
  }
}

static void res_conn_alloc(uv_handle_t *h, size_t s, uv_buf_t *b) {
  rp_test_resolver *r = h->data;
  (void)s;
  b->base = (char *)r->rbuf + r->rlen;
  b->len = sizeof(r->rbuf) - r->rlen;
}

static void res_conn_read(uv_stream_t *h, ssize_t n, const uv_buf_t *buf) {
  rp_test_resolver *r = h->data;
  size_t off = 0, wlen = 0;
  (void)buf;
  if (n < 0) {
    rp_test_resolver_drop_conn(r);
    return;
  }
  r->rlen += (size_t)n;
  while (r->rlen - off >= 2) {
    size_t mlen = (size_t)(r->rbuf[off] << 8 | r->rbuf[off + 1]);
    if (r->rlen - off < 2 + mlen || wlen + 2 + mlen > sizeof(r->wbuf)) {
      break;
    }
    ++r->tcp_queries;
    res_answer(r->rbuf + off + 2, mlen, r->wbuf + wlen + 2, 0,
               r->truncate ? RP_DNS_RCODE_NXDOMAIN : RP_DNS_RCODE_NOERROR);
    r->wbuf[wlen] = (uint8_t)(mlen >> 8);
    r->wbuf[wlen + 1] = (uint8_t)mlen;
    wlen += 2 + mlen;
    off += 2 + mlen;
  }
  memmove(r->rbuf, r->rbuf + off, r->rlen - off);
  r->rlen -= off;
  if (wlen) {
    uv_buf_t b = uv_buf_init((char *)r->wbuf, (unsigned)wlen);
    uv_try_write((uv_stream_t *)&r->conn, &b, 1);
  }
}

static void res_connection(uv_stream_t *server, int status) {
  rp_test_resolver *r = server->data;
  if (status < 0 || r->conn_open) {
    return;
  }
  uv_tcp_init(server->loop, &r->conn);
  r->conn.data = r;
  r->conn_open = 1;
  if (uv_accept(server, (uv_stream_t *)&r->conn) == 0) {
    uv_read_start((uv_stream_t *)&r->conn, res_conn_alloc, res_conn_read);
  }
}

void rp_test_resolver_set_spec(rp_test_resolver *r, const char *spec) {
  fr_spec s;
  char err[FR_ERRBUF_LEN];

  fr_spec_default(&s);
  if (fr_spec_parse(&s, spec, err, sizeof(err)) != 0) {
    fail_msg("test resolver spec '%s': %s", spec, err);
  }
  fr_profile_init(&r->profile, &s, uv_hrtime());
}

void rp_test_resolver_start_on(rp_test_resolver *r, uv_loop_t *loop,
                               rp_test_port *pr, const char *spec) {
  int namelen = sizeof(r->addr);

  memset(r, 0, sizeof(*r));
  fr_rng_seed(&r->rng, RES_SEED);
  rp_test_resolver_set_spec(r, spec);
  assert_int_equal(uv_timer_init(loop, &r->timer), 0);
  r->timer.data = r;
  assert_int_equal(uv_udp_init(loop, &r->udp), 0);
  assert_int_equal(uv_tcp_init(loop, &r->tcp), 0);
  assert_int_equal(uv_udp_open(&r->udp, pr->udp), 0);
  assert_int_equal(uv_tcp_open(&r->tcp, pr->tcp), 0);
  pr->udp = pr->tcp = -1;
  r->udp.data = r->tcp.data = r;
  uv_udp_getsockname(&r->udp, (struct sockaddr *)&r->addr, &namelen);
  assert_int_equal(
      uv_listen((uv_stream_t *)&r->tcp, RES_BACKLOG, res_connection), 0);
  assert_int_equal(uv_udp_recv_start(&r->udp, rp_test_udp_alloc, res_udp_recv),
                   0);
}

void rp_test_resolver_start(rp_test_resolver *r, uv_loop_t *loop,
                            const char *spec) {
  rp_test_port pr;
  rp_test_port_reserve(&pr);
  rp_test_resolver_start_on(r, loop, &pr, spec);
}

void rp_test_resolver_drop_conn(rp_test_resolver *r) {
  if (r->conn_open) {
    uv_close((uv_handle_t *)&r->conn, NULL);
    r->conn_open = 0;
  }
}

void rp_test_resolver_address(const rp_test_resolver *r, const char *scheme,
                              char *out, size_t cap) {
  snprintf(out, cap, "%s127.0.0.1:%u", scheme, ntohs(r->addr.sin_port));
}

void rp_test_resolver_stop(rp_test_resolver *r) {
  uv_close((uv_handle_t *)&r->udp, NULL);
  uv_close((uv_handle_t *)&r->tcp, NULL);
  uv_close((uv_handle_t *)&r->timer, NULL);
  rp_test_resolver_drop_conn(r);
}
