/*
 * rp_test_client.c: the UDP DNS client of the loopback tests
 * (rp_test_client.h).
 */
#include "rp_test_client.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "dns.h"

#include <string.h>

/* CLIENT_QUERY_MAX bounds one query, bytes. */
#define CLIENT_QUERY_MAX 512

static void client_alloc(uv_handle_t *h, size_t s, uv_buf_t *b) {
  rp_test_client *c = h->data;
  (void)s;
  b->base = (char *)c->rbuf;
  b->len = sizeof(c->rbuf);
}

static void client_recv(uv_udp_t *u, ssize_t n, const uv_buf_t *b,
                        const struct sockaddr *from, unsigned flags) {
  rp_test_client *c = u->data;
  uint16_t id;
  (void)from;
  (void)flags;
  if (n < RP_DNS_HEADER_LEN) {
    return;
  }
  id = rp_dns_get_id((const uint8_t *)b->base);
  if (id < RP_TEST_CLIENT_IDS) {
    c->rcode[id] = (uint8_t)b->base[3] & RP_DNS_RCODE_MASK;
    ++c->answers;
  }
}

void rp_test_client_init(rp_test_client *c, uv_loop_t *loop) {
  struct sockaddr_in any;
  size_t i;

  memset(c, 0, sizeof(*c));
  for (i = 0; i < RP_TEST_CLIENT_IDS; ++i) {
    c->rcode[i] = -1;
  }
  assert_int_equal(uv_ip4_addr("127.0.0.1", 0, &any), 0);
  assert_int_equal(uv_udp_init(loop, &c->udp), 0);
  c->udp.data = c;
  assert_int_equal(uv_udp_bind(&c->udp, (const struct sockaddr *)&any, 0), 0);
  assert_int_equal(uv_udp_recv_start(&c->udp, client_alloc, client_recv), 0);
}

void rp_test_client_send(rp_test_client *c, const struct sockaddr *to,
                         uint16_t id, const char *name) {
  uint8_t q[CLIENT_QUERY_MAX];
  rp_dns_name qn;
  rp_ssize n;
  uv_buf_t b;

  assert_int_equal(rp_dns_name_from_text(&qn, name), 0);
  n = rp_dns_build_query(q, sizeof(q), id, &qn, RP_DNS_TYPE_A, 0);
  assert_true(n > 0);
  b = uv_buf_init((char *)q, (unsigned int)n);
  assert_true(uv_udp_try_send(&c->udp, &b, 1, to) > 0);
}

void rp_test_client_close(rp_test_client *c) {
  uv_close((uv_handle_t *)&c->udp, NULL);
}
