/*
 * fanout.c: see fanout.h.
 */
#include "core.h"
#include "fanout.h"
#include "try.h"
#include "select.h"

#include <assert.h>

size_t rp_fanout_inflight(const rp_pool *pool) {
  assert(pool->nlinger <= pool->ninflight);
  return pool->ninflight - pool->nlinger;
}

/* fanout_at returns when |q|'s copies go: a quarter of a round trip
   of its first resolver after the first send, or with it when that is
   less than copy_min_delay. */
static rp_tstamp fanout_at(rp_pool *pool, const rp_res *r, rp_tstamp now) {
  rp_duration rtt = rp_rtt_fastest(&r->rtt), delay;
  const rp_pq_entry *pe;

  if (rtt == RP_TSTAMP_UNSET) {
    pe = rp_pq_top(&pool->unlim);
    rtt = pe ? rp_rtt_fastest(&rp_container_of_const(pe, rp_res, e_unlim)->rtt)
             : 0;
  }
  delay = (rp_duration)(pool->set.copy_delay_rtt * (double)rtt);
  return rp_tstamp_add(now, delay < pool->set.copy_min_delay ? 0 : delay);
}

/* fanout_fit trims |q|'s copies to what the client can take after
   its first send went to |r|. With copy_inflight_rtt 0: none while more
   than copy_max_inflight client queries are in flight, and the same over
   a resolver no slower than copy_inflight_rtt (answers come back
   together: two copies each on one fast resolver overflowed the real
   MasterDnsVPN client's sockets). Over a slower one the bound is on
   answers in flight, 2 x copy_max_inflight per copy_inflight_rtt of its
   fastest round trip, counting each query with its copies, and the
   copies may share a resolver. */
static void fanout_fit(const rp_pool *pool, rp_query *q, const rp_res *r,
                       rp_tstamp now) {
  rp_duration rtt = rp_rtt_fastest(&r->rtt), unit = pool->set.copy_inflight_rtt;
  double bound = (double)pool->set.copy_max_inflight, limit;

  if (pool->set.copy_ramp > 0 && now - pool->ramp_from < pool->set.copy_ramp) {
    bound *= (double)(now - pool->ramp_from) / (double)pool->set.copy_ramp;
  }
  q->copy_stack = 0;
  if (unit == 0 || rtt == RP_TSTAMP_UNSET || rtt <= unit) {
    if ((double)rp_fanout_inflight(pool) > bound) {
      q->copies = 0;
    }
    return;
  }
  q->copy_stack = 1;
  limit = 2.0 * bound;
  limit *= (double)rtt / (double)unit;
  while (q->copies > 0 &&
         (double)rp_fanout_inflight(pool) * (double)(1u + q->copies) > limit) {
    --q->copies;
  }
}

int rp_fanout_arm(rp_pool *pool, rp_query *q, const rp_res *r, rp_tstamp now) {
  fanout_fit(pool, q, r, now);
  if (q->copies == 0) {
    return 0;
  }
  q->copy_at = fanout_at(pool, r, now);
  if (q->copy_at <= now) {
    return rp_fanout_send(pool, q, now);
  }
  return 0;
}

int rp_fanout_send(rp_pool *pool, rp_query *q, rp_tstamp now) {
  uint32_t slot;
  rp_res *r;
  int rv;

  q->copy_at = RP_TSTAMP_UNSET;
  while (q->copies > 0 && !q->answered) {
    if (!rp_copies_may_extra(&pool->copies, &pool->set, now)) {
      ++pool->stats.extras_skipped;
      break;
    }
    slot = rp_select_copy(pool, q, now);
    if (slot == RP_CORE_NONE) {
      break;
    }
    r = pool->res[slot];
    rv = rp_try_send(pool, q, r, RP_TRY_COPY, 0, 0, now);
    if (rv < 0) {
      return rv;
    }
    if (rv == 0) {
      break;
    }
    --q->copies;
    q->had_copy = 1;
    ++r->copies;
    ++pool->stats.copies;
  }
  return 0;
}

void rp_fanout_ramp(rp_pool *pool, rp_tstamp now) {
  if (pool->last_submit == RP_TSTAMP_UNSET ||
      now - pool->last_submit >= pool->set.copy_ramp) {
    pool->ramp_from = now;
  }
  pool->last_submit = now;
}

void rp_fanout_plan(rp_pool *pool, rp_query *q, rp_tstamp now) {
  /* With the fixed bound a query over it takes no plan (a probe copy
     waits for a query that may have it); fanout_fit trims the rest
     once the first resolver is known. */
  q->copies = pool->set.copy_inflight_rtt == 0 &&
                      rp_fanout_inflight(pool) > pool->set.copy_max_inflight
                  ? 0
                  : (uint8_t)rp_copies_plan(&pool->copies, &pool->set, now);
}
