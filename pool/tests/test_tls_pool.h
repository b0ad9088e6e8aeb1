/*
 * test_tls_pool.h: the pool's side of the DoT and DoH loopback tests
 * (test_dot.c, test_doh.c), which share it. Include it after cmocka.h.
 *
 * Each case runs one uv loop holding the pool, the shared UDP client
 * (tests/lib/rp_test_client.h) and a guard timer that fails a case that
 * hangs; the TLS server (tests/lib/rp_test_tls.h) runs in its own
 * thread and is stopped by the case.
 */
#ifndef TEST_TLS_POOL_H
#define TEST_TLS_POOL_H

#include "respool_net.h"
#include "rp_test_client.h"

typedef struct tls_pool {
  /* loop runs everything below; the case initialises it. */
  uv_loop_t loop;
  /* guard fails a case still running after its time. */
  uv_timer_t guard;
  /* c is the client that queries the pool. */
  rp_test_client c;
  /* np is the pool; NULL until tls_pool_up. */
  rp_net_pool *np;
  /* lis is the pool's listening address. */
  struct sockaddr_storage lis;
} tls_pool;

/* tls_pool_closed is the pool's close callback: it sets the int at
   |ud|. */
static void tls_pool_closed(rp_net_pool *np, void *ud) {
  (void)np;
  *(int *)ud = 1;
}

/* tls_pool_up starts |t->np| on |t->loop| with |opts| and config |cfg|
   (freed here: the pool keeps its own copy), reads the pool's address
   into |t->lis|, binds the client and starts the guard to call
   |guard_cb| after |guard_ms|. A failed start fails the case. */
static void tls_pool_up(tls_pool *t, rp_net_options *opts, rp_config *cfg,
                        uv_timer_cb guard_cb, uint64_t guard_ms) {
  char err[RP_CONFIG_ERRLEN];
  socklen_t lislen;

  t->np = NULL;
  opts->config = cfg;
  assert_int_equal(rp_net_pool_start(&t->np, &t->loop, opts, err, sizeof(err)),
                   0);
  rp_config_free(cfg);
  rp_net_pool_get_address(t->np, &t->lis, &lislen);
  rp_test_client_init(&t->c, &t->loop);
  uv_timer_init(&t->loop, &t->guard);
  uv_timer_start(&t->guard, guard_cb, guard_ms, 0);
}

/* tls_pool_wait runs the loop until the answer to query |id| came. */
static void tls_pool_wait(tls_pool *t, uint16_t id) {
  while (t->c.rcode[id] < 0) {
    uv_run(&t->loop, UV_RUN_ONCE);
  }
}

/* tls_pool_down stops the pool, closes the client and the guard, runs
   the loop until every handle closed, and asserts that the pool called
   back and the loop closes. The case stops its TLS server after. */
static void tls_pool_down(tls_pool *t) {
  int closed = 0;

  rp_net_pool_stop(t->np, tls_pool_closed, &closed);
  rp_test_client_close(&t->c);
  uv_close((uv_handle_t *)&t->guard, NULL);
  uv_run(&t->loop, UV_RUN_DEFAULT);
  assert_true(closed);
  assert_int_equal(uv_loop_close(&t->loop), 0);
}

#endif /* TEST_TLS_POOL_H */
