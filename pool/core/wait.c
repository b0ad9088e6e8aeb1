/*
 * wait.c: see wait.h.
 */
#include "core.h"
#include "wait.h"
#include "try.h"
#include "query.h"
#include "fanout.h"
#include "select.h"

#include <assert.h>

int rp_wait_less(const rp_pq_entry *a, const rp_pq_entry *b) {
  const rp_query *qa = rp_container_of_const(a, rp_query, e_wait);
  const rp_query *qb = rp_container_of_const(b, rp_query, e_wait);

  if (qa->question.name.len != qb->question.name.len) {
    return qa->question.name.len > qb->question.name.len;
  }
  if (qa->wait_end != qb->wait_end) {
    return qa->wait_end < qb->wait_end;
  }
  return qa->idx < qb->idx;
}

/* wait_pastcap_skip moves on a past-cap candidate whose time came but
   that could not take the query (probation with a query in flight), so
   that rp_pool_get_expiry never stays in the past. */
static void wait_pastcap_skip(rp_pool *pool, rp_tstamp now) {
  rp_pq_entry *pe = rp_pq_top(&pool->pastcap);
  rp_res *r;

  if (pe == NULL) {
    return;
  }
  r = rp_container_of(pe, rp_res, e_pastcap);
  if (r->pastcap_at <= now) {
    r->pastcap_at = rp_tstamp_add(now, pool->set.past_cap_interval);
    rp_pq_update(&pool->pastcap, &r->e_pastcap);
  }
}

int rp_wait_drain(rp_pool *pool, rp_tstamp now) {
  rp_query *q;
  int rv;

  while (rp_pq_top(&pool->waits) != NULL) {
    uint32_t slot;
    int past_cap = 0;

    q = rp_container_of(rp_pq_top(&pool->waits), rp_query, e_wait);
    slot = rp_select_primary(pool, q, now);
    if (slot == RP_CORE_NONE && pool->set.load_balance == RP_BALANCE_AUTO) {
      slot = rp_select_past_cap(pool, q, now);
      past_cap = slot != RP_CORE_NONE;
    }
    if (slot == RP_CORE_NONE) {
      wait_pastcap_skip(pool, now);
      return 0;
    }
    rp_pq_pop(&pool->waits);
    q->wait_until = RP_TSTAMP_UNSET;
    rv = rp_try_send(pool, q, pool->res[slot],
                     past_cap         ? RP_TRY_PASTCAP
                     : q->ntries == 0 ? RP_TRY_FIRST
                                      : RP_TRY_RESEND,
                     0, past_cap, now);
    if (rv < 0) {
      return rv;
    }
    if (rv == 1 && q->ntries == 1 && q->copies > 0) {
      int crv = rp_fanout_arm(pool, q, pool->res[slot], now);

      if (crv < 0) {
        return crv;
      }
    }
    if (rv == 0) {
      rv = rp_query_fail(pool, q);
      if (rv < 0) {
        return rv;
      }
    }
    rp_query_finish(pool, q, now);
  }
  return 0;
}

int rp_wait_hold(rp_pool *pool, rp_query *q, rp_tstamp now) {
  int rv;

  if (q->wait_end == RP_TSTAMP_UNSET) {
    q->wait_end =
        rp_tstamp_min(rp_tstamp_add(now, pool->set.token_wait), q->deadline_at);
  }
  /* A resolver still in probation is no cap: while one is, the query is
     held (it takes the probation slot when it frees), never failed at
     once, whatever wait_for_token says. */
  if (!(pool->set.wait_for_token || pool->nprob_up > 0) ||
      q->ntries >= RP_CORE_MAX_TRIES || now >= q->wait_end) {
    return 0;
  }
  q->wait_until = q->wait_end;
  if (!q->waited) {
    ++pool->stats.waits;
  }
  q->waited = 1;
  rv = rp_pq_push(&pool->waits, &q->e_wait);
  /* Room for every query was reserved. */
  assert(rv == 0);
  (void)rv;
  return 1;
}

int rp_wait_expired(rp_pool *pool, rp_query *q, rp_tstamp now) {
  int rv;

  if (q->wait_until == RP_TSTAMP_UNSET || now < q->wait_until) {
    return 0;
  }
  q->wait_until = RP_TSTAMP_UNSET;
  rv = rp_query_spill(pool, q, now);
  if (rv < 0) {
    return rv;
  }
  if (rv == 1) {
    rp_pq_remove(&pool->waits, &q->e_wait);
  } else if (pool->nprob_up > 0) {
    /* A resolver in probation that lost and refused nothing will soon
       take it (a slow one's first replies come after a round trip):
       wait one more token_wait, up to the deadline, instead of
       failing. */
    q->wait_until =
        rp_tstamp_min(rp_tstamp_add(now, pool->set.token_wait), q->deadline_at);
  } else {
    rp_pq_remove(&pool->waits, &q->e_wait);
    rv = rp_query_fail(pool, q);
    if (rv < 0) {
      return rv;
    }
  }
  return 0;
}

void rp_wait_cancel(rp_pool *pool, rp_query *q) {
  if (rp_pq_entry_queued(&q->e_wait)) {
    rp_pq_remove(&pool->waits, &q->e_wait);
    q->wait_until = RP_TSTAMP_UNSET;
  }
}
