/*
 * rp_test_tls.h: the TLS test server of the DoT and DoH tests (owned by
 * tests/lib).
 *
 * It owns what a TLS server needs before the protocol starts: a fresh
 * directory with a self-signed P-256 certificate for dns.test (made with
 * the openssl command; its path is |cert|, the CA file the pool is given),
 * the SSL_CTX, a TCP socket listening on 127.0.0.1 on a free port, and a
 * thread on blocking sockets that accepts one connection at a time, runs
 * the TLS handshake and hands the connection to the test's |conn|
 * function. The test owns the protocol (framed DNS for DoT, HTTP/2 for
 * DoH): |conn| serves until the peer closes or |stop| is set, looking at
 * |stop| at least every RP_TEST_TLS_POLL_MS. The server frees the SSL
 * and closes the socket when |conn| returns.
 *
 * Used by pool/tests/test_dot.c and pool/tests/test_doh.c. Failures to set
 * up fail the calling cmocka test.
 */
#ifndef RP_TEST_TLS_H
#define RP_TEST_TLS_H

#include <openssl/ssl.h>
#include <pthread.h>
#include <stdint.h>

/* RP_TEST_TLS_POLL_MS is how often the server thread (and a |conn|
   function) looks at the stop flag, ms. */
#define RP_TEST_TLS_POLL_MS 50

/* RP_TEST_TLS_PATH_MAX bounds the paths of the certificate directory and
   files. */
#define RP_TEST_TLS_PATH_MAX 96

typedef struct rp_test_tls_server rp_test_tls_server;

/* rp_test_tls_conn_fn serves one accepted TLS connection |ssl| over
   socket |fd| (both borrowed) until it closes or sv->stop is set. */
typedef void (*rp_test_tls_conn_fn)(rp_test_tls_server *sv, SSL *ssl, int fd);

struct rp_test_tls_server {
  /* lfd is the listening socket; -1 before init. */
  int lfd;
  /* port is the listening port, host order. */
  uint16_t port;
  /* ctx is the server's TLS context; a test may configure it (ALPN)
     between init and run. */
  SSL_CTX *ctx;
  /* th is the accepting thread (after run). */
  pthread_t th;
  /* stop tells the thread and |conn| to finish; set by _stop. */
  volatile int stop;
  /* conn serves each connection; user_data is the test's. */
  rp_test_tls_conn_fn conn;
  void *user_data;
  /* dir holds cert.pem and key.pem; removed by _stop. */
  char dir[RP_TEST_TLS_PATH_MAX];
  /* cert is the certificate's path (the pool's CA file). */
  char cert[RP_TEST_TLS_PATH_MAX + 16];
};

/* rp_test_tls_server_init makes the certificate (in a new directory
   /tmp/rp-<tag>-test.XXXXXX), the context and the listening socket of
   |sv|. The thread does not run yet. */
void rp_test_tls_server_init(rp_test_tls_server *sv, const char *tag);

/* rp_test_tls_server_run starts the accepting thread, which passes each
   handshaken connection to |conn| with |user_data| in sv->user_data. */
void rp_test_tls_server_run(rp_test_tls_server *sv, rp_test_tls_conn_fn conn,
                            void *user_data);

/* rp_test_tls_server_stop stops and joins the thread, closes the socket,
   frees the context and removes the directory. */
void rp_test_tls_server_stop(rp_test_tls_server *sv);

#endif /* RP_TEST_TLS_H */
