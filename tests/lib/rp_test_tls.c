/*
 * rp_test_tls.c: the TLS test server (rp_test_tls.h).
 */
#include "rp_test_tls.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* TLS_BACKLOG is the listen backlog; the pool opens one or two
   connections at a time. */
#define TLS_BACKLOG 8

/* tls_serve runs the handshake on |fd| and hands the connection to the
   test. */
static void tls_serve(rp_test_tls_server *sv, int fd) {
  SSL *ssl = SSL_new(sv->ctx);

  if (ssl == NULL) {
    ERR_clear_error();
    return;
  }
  SSL_set_fd(ssl, fd);
  if (SSL_accept(ssl) == 1) {
    sv->conn(sv, ssl, fd);
  }
  ERR_clear_error();
  SSL_free(ssl);
}

static void *tls_main(void *arg) {
  rp_test_tls_server *sv = arg;

  while (!sv->stop) {
    struct pollfd p = {.fd = sv->lfd, .events = POLLIN};
    int fd;
    if (poll(&p, 1, RP_TEST_TLS_POLL_MS) <= 0) {
      continue;
    }
    fd = accept(sv->lfd, NULL, NULL);
    if (fd >= 0) {
      tls_serve(sv, fd);
      close(fd);
    }
  }
  return NULL;
}

void rp_test_tls_server_init(rp_test_tls_server *sv, const char *tag) {
  struct sockaddr_in sin = {.sin_family = AF_INET};
  socklen_t len = sizeof(sin);
  char cmd[512], key[RP_TEST_TLS_PATH_MAX + 16];

  memset(sv, 0, sizeof(*sv));
  sv->lfd = -1;
  snprintf(sv->dir, sizeof(sv->dir), "/tmp/rp-%s-test.XXXXXX", tag);
  assert_non_null(mkdtemp(sv->dir));
  snprintf(sv->cert, sizeof(sv->cert), "%s/cert.pem", sv->dir);
  snprintf(key, sizeof(key), "%s/key.pem", sv->dir);
  snprintf(cmd, sizeof(cmd),
           "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
           "-nodes -days 1 -subj /CN=dns.test -addext "
           "subjectAltName=DNS:dns.test -keyout %s -out %s 2>/dev/null",
           key, sv->cert);
  assert_int_equal(system(cmd), 0);
  sv->ctx = SSL_CTX_new(TLS_server_method());
  assert_non_null(sv->ctx);
  assert_int_equal(
      SSL_CTX_use_certificate_file(sv->ctx, sv->cert, SSL_FILETYPE_PEM), 1);
  assert_int_equal(SSL_CTX_use_PrivateKey_file(sv->ctx, key, SSL_FILETYPE_PEM),
                   1);
  sv->lfd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(sv->lfd >= 0);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(sv->lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
  assert_int_equal(listen(sv->lfd, TLS_BACKLOG), 0);
  assert_int_equal(getsockname(sv->lfd, (struct sockaddr *)&sin, &len), 0);
  sv->port = ntohs(sin.sin_port);
}

void rp_test_tls_server_run(rp_test_tls_server *sv, rp_test_tls_conn_fn conn,
                            void *user_data) {
  sv->conn = conn;
  sv->user_data = user_data;
  assert_int_equal(pthread_create(&sv->th, NULL, tls_main, sv), 0);
}

void rp_test_tls_server_stop(rp_test_tls_server *sv) {
  char cmd[RP_TEST_TLS_PATH_MAX + 16];

  sv->stop = 1;
  pthread_join(sv->th, NULL);
  close(sv->lfd);
  SSL_CTX_free(sv->ctx);
  snprintf(cmd, sizeof(cmd), "rm -rf %s", sv->dir);
  assert_int_equal(system(cmd), 0);
}
