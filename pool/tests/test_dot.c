/*
 * test_dot.c: the DoT transport against a scripted TLS server.
 *
 * The server is the shared TLS test server (tests/lib/rp_test_tls.h: a
 * thread on blocking sockets, a self-signed certificate for dns.test).
 * It reads framed queries (RFC 7858: two-byte length), collects what
 * arrives within BATCH_MS of the first one, and answers the batch in
 * reverse order (QR set): pipelined queries, out-of-order answers.
 *
 * The pool (one DoT resolver, no start-up check) relays UDP queries of
 * the test. Once the resolver is out of probation, five queries sent at
 * once must reach the server on the one connection as one batch and all
 * come back NOERROR with their own IDs, though answered last-first. Then
 * the server closes the connection; the next query opens a new one
 * (resumed session). Last, an answer followed by a zero-length frame in
 * the same record: delivered, the connection closed, and the next one
 * starts with an empty framer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "respool_net.h"
#include "dns.h"
#include "rp_test_client.h"
#include "rp_test_tls.h"
#include "test_tls_pool.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* GUARD_MS fails a case still running after it. */
#define GUARD_MS 15000
/* BATCH_MS is how long the server collects queries after the first. */
#define BATCH_MS 60
/* MAX_BATCH bounds one batch. */
#define MAX_BATCH 32
/* MSG_MAX bounds one query. */
#define MSG_MAX 512
/* NPARALLEL is the number of queries sent at once. */
#define NPARALLEL 5

typedef struct server {
  /* tls is the listening TLS server; its user_data is this server. */
  rp_test_tls_server tls;
  /* close_after: close the connection after the batch that brings its
     answers to this many (0 = never); set by the test, cleared by the
     server when it closes. */
  volatile int close_after;
  /* zero_after: write a zero-length frame right behind the next answer,
     in the same record (a protocol error the pool closes on); cleared by
     the server. */
  volatile int zero_after;
  volatile int max_batch;
  volatile int connections;
} server;

typedef struct msg {
  uint8_t b[MSG_MAX];
  size_t len;
} msg;

/* s_read_msg reads one frame within |timeout_ms|; 1 = got one, 0 =
   timeout, -1 = closed. */
static int s_read_msg(SSL *ssl, int fd, msg *m, int timeout_ms) {
  uint8_t hdr[2];
  size_t got = 0, want;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (SSL_pending(ssl) == 0 && poll(&p, 1, timeout_ms) <= 0) {
    return 0;
  }
  while (got < 2) {
    int n = SSL_read(ssl, hdr + got, (int)(2 - got));
    if (n <= 0) {
      return -1;
    }
    got += (size_t)n;
  }
  want = (size_t)((hdr[0] << 8) | hdr[1]);
  if (want == 0 || want > MSG_MAX) {
    return -1;
  }
  got = 0;
  while (got < want) {
    int n = SSL_read(ssl, m->b + got, (int)(want - got));
    if (n <= 0) {
      return -1;
    }
    got += (size_t)n;
  }
  m->len = want;
  return 1;
}

static void s_conn(rp_test_tls_server *tls, SSL *ssl, int fd) {
  server *sv = tls->user_data;
  static msg batch[MAX_BATCH];
  int answered = 0;
  ++sv->connections;
  while (!tls->stop) {
    int n = 0, r, i;
    r = s_read_msg(ssl, fd, &batch[0], RP_TEST_TLS_POLL_MS);
    if (r < 0) {
      break;
    }
    if (r == 0) {
      continue;
    }
    n = 1;
    while (n < MAX_BATCH &&
           (r = s_read_msg(ssl, fd, &batch[n], BATCH_MS)) > 0) {
      ++n;
    }
    if (n > sv->max_batch) {
      sv->max_batch = n;
    }
    /* Last in, first out. */
    for (i = n - 1; i >= 0; --i) {
      uint8_t out[MSG_MAX + 4];
      int olen = (int)batch[i].len + 2;
      out[0] = (uint8_t)(batch[i].len >> 8);
      out[1] = (uint8_t)batch[i].len;
      memcpy(out + 2, batch[i].b, batch[i].len);
      out[4] |= 0x80;
      if (sv->zero_after) {
        sv->zero_after = 0;
        out[olen++] = 0;
        out[olen++] = 0;
      }
      if (SSL_write(ssl, out, olen) <= 0) {
        r = -1;
        break;
      }
      ++answered;
    }
    if (r < 0) {
      break;
    }
    /* The server clears close_after itself: were the test thread to
       clear it once it read the answer, it could do so before this
       check and the connection would stay open. */
    if (sv->close_after && answered >= sv->close_after) {
      sv->close_after = 0;
      break;
    }
  }
}

/* c_send sends query "q<id>.example" with ID |id|. */
static void c_send(rp_test_client *c, const struct sockaddr *to, uint16_t id) {
  char name[32];
  snprintf(name, sizeof(name), "q%u.example", id);
  rp_test_client_send(c, to, id, name);
}

static void guard_cb(uv_timer_t *t) {
  (void)t;
  fail_msg("DoT test hung");
}

static void test_dot_pipelined_out_of_order(void **state) {
  static const char json[] = "{\"pretest_domain\": \"\", \"duplicate\": 1}";
  server sv = {0};
  tls_pool t;
  rp_config cfg;
  rp_net_options opts = {0};
  rp_net_counters k;
  char err[RP_CONFIG_ERRLEN], url[128];
  int done;
  uint16_t i;
  (void)state;
  rp_test_tls_server_init(&sv.tls, "dot");
  rp_test_tls_server_run(&sv.tls, s_conn, &sv);
  uv_loop_init(&t.loop);
  rp_config_init(&cfg, NULL);
  snprintf(url, sizeof(url), "dot://dns.test@127.0.0.1:%u", sv.tls.port);
  assert_int_equal(
      rp_config_parse_json(&cfg, json, strlen(json), "t", err, sizeof(err)), 0);
  assert_int_equal(
      rp_config_add_resolver(&cfg, url, "test", "-r", err, sizeof(err)), 0);
  cfg.tls_ca = strdup(sv.tls.cert);
  tls_pool_up(&t, &opts, &cfg, guard_cb, GUARD_MS);

  /* Probation: one at a time until 8 answers. */
  for (i = 1; i <= 10; ++i) {
    c_send(&t.c, (const struct sockaddr *)&t.lis, i);
    tls_pool_wait(&t, i);
    assert_int_equal(t.c.rcode[i], RP_DNS_RCODE_NOERROR);
  }
  /* Five at once: one batch on the connection, answered last-first. */
  for (i = 20; i < 20 + NPARALLEL; ++i) {
    c_send(&t.c, (const struct sockaddr *)&t.lis, i);
  }
  do {
    uv_run(&t.loop, UV_RUN_ONCE);
    done = 1;
    for (i = 20; i < 20 + NPARALLEL; ++i) {
      done &= t.c.rcode[i] >= 0;
    }
  } while (!done);
  for (i = 20; i < 20 + NPARALLEL; ++i) {
    assert_int_equal(t.c.rcode[i], RP_DNS_RCODE_NOERROR);
  }
  print_message("# DoT: largest batch %d of %d parallel queries\n",
                sv.max_batch, NPARALLEL);
  assert_true(sv.max_batch >= 3);
  assert_int_equal(sv.connections, 1);

  /* The server closes after its next answer; the query after it opens a
     new connection that resumes the session. (Until the fix, a query sent
     while the old connection was closing failed at once, its resends
     too, eight times in the same instant: the resolver went down.) */
  sv.close_after = 1;
  c_send(&t.c, (const struct sockaddr *)&t.lis, 30);
  tls_pool_wait(&t, 30);
  c_send(&t.c, (const struct sockaddr *)&t.lis, 31);
  tls_pool_wait(&t, 31);
  /* Sent before or after the pool saw the close, 31 is answered: a try
     failed by the reset is sent again on the new connection (held while
     the old one closes), and the lone resolver is not taken down. */
  assert_int_equal(t.c.rcode[31], RP_DNS_RCODE_NOERROR);
  rp_net_pool_get_counters(t.np, &k);
  print_message("# DoT: connections=%d handshakes=%llu resumed=%llu\n",
                sv.connections, (unsigned long long)k.tls_handshakes,
                (unsigned long long)k.tls_resumed);
  assert_int_equal(sv.connections, 2);
  assert_int_equal(k.tls_handshakes, 2);
  assert_int_equal(k.tls_resumed, 1);

  /* An answer with a zero-length frame behind it in the same read: the
     answer is delivered, the pool closes the connection, and the next
     query's new connection starts clean. (Until the fix the framer kept
     the zero length: every later connection of the resolver met it at
     its first read and closed.) */
  sv.zero_after = 1;
  c_send(&t.c, (const struct sockaddr *)&t.lis, 32);
  tls_pool_wait(&t, 32);
  assert_int_equal(t.c.rcode[32], RP_DNS_RCODE_NOERROR);
  for (i = 33; i < 36; ++i) {
    c_send(&t.c, (const struct sockaddr *)&t.lis, i);
    tls_pool_wait(&t, i);
    assert_int_equal(t.c.rcode[i], RP_DNS_RCODE_NOERROR);
  }
  print_message("# DoT: after the zero-length frame: connections=%d\n",
                sv.connections);
  assert_int_equal(sv.connections, 3);

  tls_pool_down(&t);
  rp_test_tls_server_stop(&sv.tls);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dot_pipelined_out_of_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
