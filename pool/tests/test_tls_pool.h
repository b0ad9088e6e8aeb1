/*
 * test_tls_pool.h: the start and the end of a pool in the DoT and DoH
 * loopback tests (test_dot.c, test_doh.c), which share them.
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

/* tls_pool_closed is the pool's close callback: it sets the int at
   |ud|. */
static void tls_pool_closed(rp_net_pool *np, void *ud) {
  (void)np;
  *(int *)ud = 1;
}

/* tls_pool_up starts |*pnp| on |loop| with |opts| and config |cfg|
   (freed here: the pool keeps its own copy), reads the pool's address
   into |lis|, binds the client |c| and starts |guard| to call |guard_cb|
   after |guard_ms|. A failed start fails the case. */
static void tls_pool_up(rp_net_pool **pnp, uv_loop_t *loop,
                        rp_net_options *opts, rp_config *cfg,
                        struct sockaddr_storage *lis, rp_test_client *c,
                        uv_timer_t *guard, uv_timer_cb guard_cb,
                        uint64_t guard_ms) {
  char err[RP_CONFIG_ERRLEN];
  socklen_t lislen;

  opts->config = cfg;
  assert_int_equal(rp_net_pool_start(pnp, loop, opts, err, sizeof(err)), 0);
  rp_config_free(cfg);
  rp_net_pool_get_address(*pnp, lis, &lislen);
  rp_test_client_init(c, loop);
  uv_timer_init(loop, guard);
  uv_timer_start(guard, guard_cb, guard_ms, 0);
}

/* tls_pool_down stops |np|, closes the client |c| and |guard|, runs
   |loop| until every handle closed, and asserts that the pool called
   back and the loop closes. The case stops its TLS server after. */
static void tls_pool_down(rp_net_pool *np, rp_test_client *c, uv_timer_t *guard,
                          uv_loop_t *loop) {
  int closed = 0;

  rp_net_pool_stop(np, tls_pool_closed, &closed);
  rp_test_client_close(c);
  uv_close((uv_handle_t *)guard, NULL);
  uv_run(loop, UV_RUN_DEFAULT);
  assert_true(closed);
  assert_int_equal(uv_loop_close(loop), 0);
}

#endif /* TEST_TLS_POOL_H */
