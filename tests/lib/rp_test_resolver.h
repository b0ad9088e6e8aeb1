/*
 * rp_test_resolver.h: the scriptable loopback resolver of the C
 * integration tests (owned by tests/lib), built on the fake resolvers'
 * profile (fake-resolvers/fr_profile.h).
 *
 * A resolver serves UDP and TCP on one 127.0.0.1 port on a uv loop. It
 * answers a query by echoing it with QR and RA set. What happens to each
 * UDP query is fr_profile_decide's verdict for the resolver's spec (the
 * fakeres syntax: "latency=150ms", "rate=20,over=refuse", "loss=30%",
 * "dead"...): answered after the drawn delay, refused with the profile's
 * rcode after it, or never answered (drop, loss, dead). The clock is
 * uv_hrtime(); randomness is an fr_rng with a fixed seed, so a run's
 * draws are the same each time.
 *
 * What fr_profile does not model and this test resolver adds:
 * - |truncate|: UDP answers carry TC, and TCP answers are NXDOMAIN (so a
 *   test sees which transport an answer came over);
 * - TCP (RFC 7766 two-byte framing), one connection at a time, answered
 *   at once: the profile governs UDP only, as the tests need only a TCP
 *   companion that works (fakeres applies it to TCP too);
 * - rp_test_resolver_drop_conn closes the TCP connection from the
 *   resolver's side;
 * - a reserved port (rp_test_port) to start on later, so a "down"
 *   resolver's port stays refused and no parallel test takes it.
 *
 * Ownership: the struct embeds its libuv handles, so it must stay put
 * from start until the loop has run after rp_test_resolver_stop. Used by
 * pool/tests/test_net.c. Set-up failures fail the calling cmocka test.
 */
#ifndef RP_TEST_RESOLVER_H
#define RP_TEST_RESOLVER_H

#include <uv.h>

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "fr_profile.h"

/* RP_TEST_RESOLVER_PENDING is how many delayed UDP answers it holds; a
   query past that is answered at once. */
#define RP_TEST_RESOLVER_PENDING 64
/* RP_TEST_RESOLVER_MSG is the largest query it answers, bytes. */
#define RP_TEST_RESOLVER_MSG 512
/* RP_TEST_RESOLVER_STREAM is the TCP read and write buffer, bytes. */
#define RP_TEST_RESOLVER_STREAM 4096

/*
 * rp_test_port is a reserved port: a UDP and a TCP socket of 127.0.0.1
 * bound to one free port number, the TCP one not listening (a connect is
 * refused).
 */
typedef struct rp_test_port {
  /* udp and tcp are the bound sockets; -1 once handed over or closed. */
  int udp, tcp;
  /* port is the port number, host order. */
  uint16_t port;
} rp_test_port;

/* rp_test_port_reserve reserves a free port pair (50 tries; port 0 gives
   a free UDP port whose TCP twin may be taken). */
void rp_test_port_reserve(rp_test_port *pr);

/* rp_test_port_release closes the sockets of |pr| still held. */
void rp_test_port_release(rp_test_port *pr);

/* rp_test_pending is one delayed UDP answer. */
typedef struct rp_test_pending {
  /* buf and len are the answer. */
  uint8_t buf[RP_TEST_RESOLVER_MSG];
  size_t len;
  /* to is the client's address. */
  struct sockaddr_storage to;
  /* due_ms is when it leaves, in uv_now() ms. */
  uint64_t due_ms;
  /* used is 1 while the slot holds an answer. */
  int used;
} rp_test_pending;

typedef struct rp_test_resolver {
  /* Handles: UDP, TCP listener, the one TCP connection, the answer
     timer. */
  uv_udp_t udp;
  uv_tcp_t tcp;
  uv_tcp_t conn;
  /* conn_open is 1 while |conn| is open. */
  int conn_open;
  uv_timer_t timer;
  /* addr is the bound address. */
  struct sockaddr_in addr;
  /* profile decides each UDP query; rng is its random source. */
  fr_profile profile;
  fr_rng rng;
  /* truncate: UDP answers carry TC; TCP answers are NXDOMAIN. */
  int truncate;
  /* pending holds the delayed UDP answers. */
  rp_test_pending pending[RP_TEST_RESOLVER_PENDING];
  /* rbuf holds TCP bytes not yet a whole query; wbuf the answers. */
  uint8_t rbuf[RP_TEST_RESOLVER_STREAM];
  size_t rlen;
  uint8_t wbuf[RP_TEST_RESOLVER_STREAM];
  /* udp_queries and tcp_queries count the queries received. */
  int udp_queries, tcp_queries;
} rp_test_resolver;

/* rp_test_resolver_start starts |r| on |loop| on a fresh reserved port
   with the profile |spec| (fakeres syntax; "" answers at once). */
void rp_test_resolver_start(rp_test_resolver *r, uv_loop_t *loop,
                            const char *spec);

/* rp_test_resolver_start_on starts |r| on the sockets of |pr|, which it
   owns from then on (|pr| is emptied). */
void rp_test_resolver_start_on(rp_test_resolver *r, uv_loop_t *loop,
                               rp_test_port *pr, const char *spec);

/* rp_test_resolver_set_spec replaces the profile with |spec| from now on
   (a full bucket); answers already held keep their time. */
void rp_test_resolver_set_spec(rp_test_resolver *r, const char *spec);

/* rp_test_resolver_drop_conn closes the TCP connection, if open. */
void rp_test_resolver_drop_conn(rp_test_resolver *r);

/* rp_test_resolver_address writes "<scheme>127.0.0.1:<port>" to |out|
   (|cap| bytes): a resolver address for rp_config_add_resolver. */
void rp_test_resolver_address(const rp_test_resolver *r, const char *scheme,
                              char *out, size_t cap);

/* rp_test_udp_alloc is a uv_alloc_cb giving one static 64 KiB buffer
   (the loop is single-threaded and a datagram is consumed in its recv
   callback); the resolver's UDP socket and a test's clients use it. */
void rp_test_udp_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b);

/* rp_test_resolver_stop closes every handle of |r| (the loop must run
   after); held answers are not sent. */
void rp_test_resolver_stop(rp_test_resolver *r);

#endif /* RP_TEST_RESOLVER_H */
