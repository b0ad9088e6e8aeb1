/*
 * direct.c: in-process clients of the runtime (respool_net.h,
 * rp_net_pool_query): an embedder that runs the pool on its own loop
 * hands queries to the core directly instead of sending them to the
 * loopback listener, and takes the answers from a callback.
 *
 * IMPLEMENTATION NOTES
 * - The core delivers answers while it runs, and the embedder answers
 *   an answer with its next query at once: the core must not be entered
 *   from its own callback, and the embedder must not be called back from
 *   inside its own call (rp_net_pool_query may fail a query at once). So
 *   deliver only copies the answer into a queue, and the loop's check and
 *   prepare callbacks, before they send the send queue, hand over the
 *   answers queued so far. The queries the callback makes leave in the
 *   same sendmmsg.
 * - Answers queued during a drain (a query failed at once) wait for the
 *   next one; an idle handle runs meanwhile, so the loop polls without
 *   blocking. A client that resends at once whatever fails at once thus
 *   spins through the loop, never inside one callback.
 * - The queue is one buffer of RP_NET_DIRECT_BYTES and RP_NET_DIRECT_ANSWERS
 *   records taken in order; a drain moves what it left to the front. An
 *   answer's bytes stay in place while the callback reads them. A full
 *   queue drops the answer (counted), as a full socket buffer would: the
 *   embedder's own timeout covers it.
 * - Nothing else differs from a listener client: the same submit, the
 *   same core, the same counters besides direct_queries and
 *   direct_dropped. Answers are never truncated (the client takes any
 *   size).
 */
#include "net_internal.h"

#include <string.h>

/* rp_net_direct_rec is one queued answer: its client's token and where
   its bytes are in dq_buf. */
struct rp_net_direct_rec {
  uint64_t token;
  size_t off, len;
};

int rp_net_pool_set_answer_cb(rp_net_pool *np, rp_net_answer_cb cb,
                              void *user_data) {
  const rp_mem *mem = np->mem;
  if (cb == NULL) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  if (np->dq_recs == NULL) {
    np->dq_recs = mem->calloc(RP_NET_DIRECT_ANSWERS, sizeof(*np->dq_recs),
                              mem->user_data);
    np->dq_buf = mem->malloc(RP_NET_DIRECT_BYTES, mem->user_data);
    if (np->dq_recs == NULL || np->dq_buf == NULL) {
      rp_net_direct_free(np);
      return RP_ERR_NOMEM;
    }
  }
  np->direct_cb = cb;
  np->direct_user_data = user_data;
  return 0;
}

int rp_net_pool_query(rp_net_pool *np, const uint8_t *q, size_t len,
                      uint64_t token, rp_tstamp now) {
  rp_client client = {.id = token};
  rp_net_client_addr ca = {.kind = RP_NET_CLIENT_DIRECT};
  if (np->direct_cb == NULL || np->stopping) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  rp_net_client_save(&client, &ca);
  ++np->counters.direct_queries;
  return rp_net_submit(np, q, len, &client, now) == RP_ERR_MALFORMED
             ? RP_ERR_MALFORMED
             : 0;
}

void rp_net_direct_queue(rp_net_pool *np, uint64_t token, const uint8_t *data,
                         size_t len) {
  struct rp_net_direct_rec *r;
  if (np->direct_cb == NULL || np->dq_n == RP_NET_DIRECT_ANSWERS ||
      len > RP_NET_DIRECT_BYTES - np->dq_used) {
    ++np->counters.direct_dropped;
    return;
  }
  r = &np->dq_recs[np->dq_n++];
  r->token = token;
  r->off = np->dq_used;
  r->len = len;
  memcpy(np->dq_buf + np->dq_used, data, len);
  np->dq_used += len;
}

void rp_net_direct_idle_cb(uv_idle_t *h) { rp_net_tx_loop_work(h->data); }

void rp_net_direct_drain(rp_net_pool *np) {
  size_t end = np->dq_n, left, base;
  if (np->dq_draining || np->in_core || end == 0) {
    return;
  }
  np->dq_draining = 1;
  while (np->dq_next < end && !np->stopping) {
    const struct rp_net_direct_rec *r = &np->dq_recs[np->dq_next++];
    np->direct_cb(np, r->token, np->dq_buf + r->off, r->len,
                  np->direct_user_data);
  }
  np->dq_draining = 0;
  left = np->stopping ? 0 : np->dq_n - np->dq_next;
  if (left > 0) {
    /* Answers that came during the drain: to the front, for the next. */
    size_t i;
    base = np->dq_recs[np->dq_next].off;
    memmove(np->dq_buf, np->dq_buf + base, np->dq_used - base);
    memmove(np->dq_recs, np->dq_recs + np->dq_next,
            left * sizeof(*np->dq_recs));
    for (i = 0; i < left; ++i) {
      np->dq_recs[i].off -= base;
    }
    np->dq_used -= base;
  } else {
    np->dq_used = 0;
  }
  np->dq_n = left;
  np->dq_next = 0;
  if (left > 0 && !np->dq_idle) {
    np->dq_idle = 1;
    uv_idle_start(&np->direct_idle, rp_net_direct_idle_cb);
  } else if (left == 0 && np->dq_idle) {
    np->dq_idle = 0;
    uv_idle_stop(&np->direct_idle);
  }
}

void rp_net_direct_free(rp_net_pool *np) {
  const rp_mem *mem = np->mem;
  mem->free(np->dq_recs, mem->user_data);
  mem->free(np->dq_buf, mem->user_data);
  np->dq_recs = NULL;
  np->dq_buf = NULL;
  np->dq_n = np->dq_next = np->dq_used = 0;
  np->direct_cb = NULL;
}
