/*
 * rp_test_client.h: a UDP DNS client of the loopback tests (owned by
 * tests/lib).
 *
 * It owns one uv_udp_t bound to 127.0.0.1 on a free port. Each query it
 * sends asks for an A record of the name given, with the ID given; each
 * answer that comes back records its rcode under its ID (IDs below
 * RP_TEST_CLIENT_IDS; others are ignored). The test runs the loop until
 * rcode[id] >= 0. Used by pool/tests/test_dot.c and test_doh.c.
 */
#ifndef RP_TEST_CLIENT_H
#define RP_TEST_CLIENT_H

#include <uv.h>

#include <stdint.h>

/* RP_TEST_CLIENT_IDS is how many query IDs (0 ..) are tracked. */
#define RP_TEST_CLIENT_IDS 64
/* RP_TEST_CLIENT_BUF is the receive buffer, bytes. */
#define RP_TEST_CLIENT_BUF 4096

typedef struct rp_test_client {
  /* udp is the client's socket; closed by rp_test_client_close. */
  uv_udp_t udp;
  /* rbuf receives one datagram. */
  uint8_t rbuf[RP_TEST_CLIENT_BUF];
  /* rcode[id] is the rcode of the answer to query |id|; -1 until one
     came. */
  int rcode[RP_TEST_CLIENT_IDS];
  /* answers counts the answers recorded. */
  int answers;
} rp_test_client;

/* rp_test_client_init binds |c| on |loop| and starts receiving. A setup
   failure fails the calling cmocka test. */
void rp_test_client_init(rp_test_client *c, uv_loop_t *loop);

/* rp_test_client_send sends a query for |name| A with ID |id| to |to|. */
void rp_test_client_send(rp_test_client *c, const struct sockaddr *to,
                         uint16_t id, const char *name);

/* rp_test_client_close closes the socket (the loop must run after). */
void rp_test_client_close(rp_test_client *c);

#endif /* RP_TEST_CLIENT_H */
