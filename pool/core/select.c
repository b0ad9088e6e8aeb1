/*
 * select.c: resolver selection, the choice (see select.h for the notes;
 * the sets it chooses from are select_set.c's).
 */
#include "select.h"

/* SELECT_WEIGHTED_DRAWS is how many weighted draws may hit a resolver
   the query already waits on before giving up. */
#define SELECT_WEIGHTED_DRAWS 4
/* SELECT_COPY_SPREAD is how many equally good unlimited resolvers a
   copy may rotate over (bounded work per copy). */
#define SELECT_COPY_SPREAD 4
/* SELECT_SPILL_LOOK bounds how many resolvers a spill looks at, cheapest
   first (bounded work per query at 10 000 resolvers). */
#define SELECT_SPILL_LOOK 16
/* SELECT_MAX_GAP_NS bounds a stretched retry gap (an hour), as a double:
   retry_left_out may be set to hours and the stretch to 1000. */
#define SELECT_MAX_GAP_NS 3.6e12

/* select_has_open_copy returns 1 if |q| has an open copy at |slot|. */
static int select_has_open_copy(const rp_query *q, uint32_t slot) {
  size_t i;

  for (i = 0; i < q->ntries; ++i) {
    if (q->tries[i].open && q->tries[i].res == slot &&
        q->tries[i].kind == RP_TRY_COPY) {
      return 1;
    }
  }
  return 0;
}

/* select_open_count returns how many open tries |q| has at |slot|. */
static size_t select_open_count(const rp_query *q, uint32_t slot) {
  size_t i, n = 0;

  for (i = 0; i < q->ntries; ++i) {
    n += q->tries[i].open && q->tries[i].res == slot;
  }
  return n;
}

/* ---------------------------------------------------------------- */

/* select_take checks |r|'s probation (unless |overflow|: a send past
   the probation limit) and token for a send at |now|. Returns 1 and
   takes the token, or 0 after moving |r| (which must be popped from its
   heap by the caller first) to the set that fits. */
static int select_take(rp_pool *pool, rp_res *r, int overflow,
                       rp_tstamp now) {
  if (!overflow && rp_res_probation_busy(r)) {
    rp_select_place(pool, r, now);
    return 0;
  }
  if (r->rl.cap > 0.0) {
    if (rp_ratelim_update(&r->rl, &pool->set, now)) {
      rp_select_refresh(pool, r, now);
    }
    if (!rp_ratelim_take(&r->rl)) {
      rp_ratelim_held_back(&r->rl, now);
      rp_select_to_token(pool, r, now);
      return 0;
    }
  }
  return 1;
}

static uint32_t select_auto(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_res *aside[RP_CORE_MAX_TRIES];
  size_t naside = 0, i;
  uint32_t found = RP_CORE_NONE;
  rp_pq_entry *pe;
  rp_res *r;

  if (rp_pq_top(&pool->band) == NULL) {
    (void)rp_select_surest_back(pool);
  }
  while ((pe = rp_pq_top(&pool->band)) != NULL) {
    r = rp_container_of(pe, rp_res, e_lru);
    rp_pq_pop(&pool->band);
    r->where = RP_WHERE_NONE;
    if (!rp_select_qualifies(pool, r)) {
      r->where = RP_WHERE_OUT;
      rp_select_push(&pool->out, &r->e_lru);
      continue;
    }
    if (rp_select_has_open(q, r->slot) ||
        r->inflight >= RP_CORE_RES_MAX_INFLIGHT) {
      aside[naside++] = r;
      if (naside == RP_CORE_MAX_TRIES) {
        break;
      }
      continue;
    }
    if (!select_take(pool, r, 0, now)) {
      continue;
    }
    /* The send updates last_used and the LRU position. */
    r->where = RP_WHERE_BAND;
    rp_select_push(&pool->band, &r->e_lru);
    found = r->slot;
    break;
  }
  for (i = 0; i < naside; ++i) {
    aside[i]->where = RP_WHERE_BAND;
    rp_select_push(&pool->band, &aside[i]->e_lru);
  }
  return found;
}

/* select_overflow picks, when no resolver of the band can take |q|, a
   band member in probation that already holds its one query (the busy
   heap, least recently used first): probation spreads the first queries
   only while another resolver has room, it never makes a client's
   opening burst wait or fail. */
static uint32_t select_overflow(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_res *aside[RP_CORE_MAX_TRIES];
  size_t naside = 0, i;
  uint32_t found = RP_CORE_NONE;
  rp_pq_entry *pe;
  rp_res *r;

  while ((pe = rp_pq_top(&pool->busy)) != NULL) {
    r = rp_container_of(pe, rp_res, e_lru);
    rp_pq_pop(&pool->busy);
    r->where = RP_WHERE_NONE;
    if (!rp_res_probation_busy(r) || !rp_select_may_overflow(pool, r)) {
      rp_select_place(pool, r, now);
      continue;
    }
    if (!rp_select_qualifies(pool, r) || rp_select_has_open(q, r->slot) ||
        !rp_res_overflow_room(r) || r->inflight >= RP_CORE_RES_MAX_INFLIGHT) {
      aside[naside++] = r;
      if (naside == RP_CORE_MAX_TRIES) {
        break;
      }
      continue;
    }
    if (!select_take(pool, r, 1, now)) {
      continue;
    }
    r->where = RP_WHERE_BUSY;
    rp_select_push(&pool->busy, &r->e_lru);
    found = r->slot;
    break;
  }
  for (i = 0; i < naside; ++i) {
    aside[i]->where = RP_WHERE_BUSY;
    rp_select_push(&pool->busy, &aside[i]->e_lru);
  }
  return found;
}

/* select_fresh_top returns the least recently used resolver of the fresh
   heap that may take a try now (never replied, no query in flight),
   moving those that no longer belong there (a try in flight, or a reply)
   to their sets first; NULL when the heap is empty. */
static rp_res *select_fresh_top(rp_pool *pool, rp_tstamp now) {
  rp_pq_entry *pe;
  rp_res *r;

  while ((pe = rp_pq_top(&pool->fresh)) != NULL) {
    r = rp_container_of(pe, rp_res, e_lru);
    if (!rp_res_probation_busy(r) && !rp_res_proven(r)) {
      return r;
    }
    rp_select_place(pool, r, now);
  }
  return NULL;
}

/* select_fresh picks, when no resolver that replied has room for |q|, the
   least recently used one that never replied and holds no query: at
   start nothing has replied, and a client's opening burst must not wait
   for a resolver to prove itself. It stays in the fresh heap; after the
   send it holds its one probation query and moves out lazily. */
static uint32_t select_fresh(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_res *aside[RP_CORE_MAX_TRIES];
  size_t naside = 0, i;
  uint32_t found = RP_CORE_NONE;
  rp_res *r;

  while (naside < RP_CORE_MAX_TRIES && (r = select_fresh_top(pool, now))) {
    if (rp_select_has_open(q, r->slot) ||
        r->inflight >= RP_CORE_RES_MAX_INFLIGHT) {
      rp_pq_pop(&pool->fresh);
      aside[naside++] = r;
      continue;
    }
    found = r->slot;
    break;
  }
  for (i = 0; i < naside; ++i) {
    rp_select_push(&pool->fresh, &aside[i]->e_lru);
  }
  return found;
}

/* ---------------------------------------------------------------- */
/* Other strategies                                                   */
/* ---------------------------------------------------------------- */

static uint32_t select_rr(rp_pool *pool, rp_query *q) {
  rp_list *n = pool->rr_next;
  size_t steps;
  rp_res *r;

  for (steps = 0; steps <= pool->nres + 1; ++steps) {
    if (n == &pool->rr_ring) {
      n = n->next;
      if (n == &pool->rr_ring) {
        return RP_CORE_NONE;
      }
    }
    r = rp_container_of(n, rp_res, rr_node);
    n = n->next;
    if (rp_select_has_open(q, r->slot) ||
        r->inflight >= RP_CORE_RES_MAX_INFLIGHT) {
      if (steps > RP_CORE_MAX_TRIES) {
        return RP_CORE_NONE;
      }
      continue;
    }
    pool->rr_next = n;
    return r->slot;
  }
  return RP_CORE_NONE;
}

/* select_fw_find returns the slot whose cumulative weight covers |u|. */
static uint32_t select_fw_find(const rp_pool *pool, uint64_t u) {
  size_t pos = 0, step = 1;

  while (step * 2 <= pool->res_cap) {
    step *= 2;
  }
  for (; step > 0; step /= 2) {
    if (pos + step <= pool->res_cap && pool->fw[pos + step] <= u) {
      pos += step;
      u -= pool->fw[pos];
    }
  }
  return (uint32_t)pos;
}

static uint32_t select_weighted(rp_pool *pool, rp_query *q) {
  uint64_t total = 0, u;
  size_t i;
  uint32_t slot;
  rp_res *r;
  int draw;

  if (pool->fw == NULL) {
    return RP_CORE_NONE;
  }
  for (i = pool->res_cap; i > 0; i -= i & (~i + 1)) {
    total += pool->fw[i];
  }
  if (total == 0) {
    return RP_CORE_NONE;
  }
  for (draw = 0; draw < SELECT_WEIGHTED_DRAWS; ++draw) {
    u = rp_pool_rand32(pool) % total;
    slot = select_fw_find(pool, u);
    r = rp_pool_res(pool, slot);
    if (r != NULL && !rp_select_has_open(q, slot) &&
        r->inflight < RP_CORE_RES_MAX_INFLIGHT) {
      return slot;
    }
  }
  return RP_CORE_NONE;
}

static uint32_t select_strat(rp_pool *pool, rp_query *q) {
  rp_res *aside[RP_CORE_MAX_TRIES];
  size_t naside = 0, i;
  uint32_t found = RP_CORE_NONE;
  rp_pq_entry *pe;
  rp_res *r;

  while ((pe = rp_pq_top(&pool->strat)) != NULL && naside < RP_CORE_MAX_TRIES) {
    r = rp_container_of(pe, rp_res, e_strat);
    if (rp_select_has_open(q, r->slot) ||
        r->inflight >= RP_CORE_RES_MAX_INFLIGHT) {
      rp_pq_pop(&pool->strat);
      aside[naside++] = r;
      continue;
    }
    found = r->slot;
    break;
  }
  for (i = 0; i < naside; ++i) {
    rp_select_push(&pool->strat, &aside[i]->e_strat);
  }
  return found;
}

uint32_t rp_select_primary(rp_pool *pool, rp_query *q, rp_tstamp now) {
  switch (pool->set.load_balance) {
  case RP_BALANCE_AUTO: {
    uint32_t found = select_auto(pool, q, now);

    if (found == RP_CORE_NONE) {
      found = select_overflow(pool, q, now);
    }
    return found != RP_CORE_NONE ? found : select_fresh(pool, q, now);
  }
  case RP_BALANCE_ROUNDROBIN:
    return select_rr(pool, q);
  case RP_BALANCE_WEIGHTED:
    return select_weighted(pool, q);
  case RP_BALANCE_LOWEST_LATENCY:
  case RP_BALANCE_LEAST_LOSS:
    return select_strat(pool, q);
  }
  return RP_CORE_NONE;
}

uint32_t rp_select_hedge(rp_pool *pool, rp_query *q, uint32_t first,
                         rp_tstamp now) {
  rp_res *aside[RP_CORE_MAX_TRIES + 1];
  size_t naside = 0, i;
  uint32_t found;
  rp_res *r = rp_pool_res(pool, first);
  rp_pq_entry *pe;
  int lossy;

  if (pool->set.load_balance != RP_BALANCE_AUTO) {
    return rp_select_primary(pool, q, now);
  }
  found = select_auto(pool, q, now);
  if (found == RP_CORE_NONE) {
    found = select_overflow(pool, q, now);
  }
  if (found == RP_CORE_NONE && rp_pq_top(&pool->cost) == NULL) {
    /* Nothing answered yet: one never tried may be the live one. Once
       one answered, a hedge waits for its room instead (query.c,
       query_hedge_later). */
    found = select_fresh(pool, q, now);
  }
  if (found != RP_CORE_NONE) {
    return found;
  }
  /* Nothing in the band: only a first resolver that really loses
     queries justifies a hedge to a slower one. */
  lossy = r != NULL &&
          (rp_health_loss_lower(&r->health, pool->set.loss_z) >
               pool->set.hedge_lossy_loss ||
           rp_health_lost_lately(&r->health, pool->set.lossy_recent, now));
  if (!lossy) {
    return RP_CORE_NONE;
  }
  while ((pe = rp_pq_top(&pool->cost)) != NULL && naside <= RP_CORE_MAX_TRIES) {
    r = rp_container_of(pe, rp_res, e_cost);
    rp_pq_pop(&pool->cost);
    aside[naside++] = r;
    if (rp_select_has_open(q, r->slot) ||
        r->inflight >= RP_CORE_RES_MAX_INFLIGHT ||
        rp_res_probation_busy(r)) {
      continue;
    }
    if (r->rl.cap > 0.0) {
      rp_ratelim_update(&r->rl, &pool->set, now);
      if (r->rl.cap > 0.0 && !rp_ratelim_take(&r->rl)) {
        continue;
      }
    }
    found = r->slot;
    break;
  }
  for (i = 0; i < naside; ++i) {
    rp_select_push(&pool->cost, &aside[i]->e_cost);
  }
  return found;
}

uint32_t rp_select_spill(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_res *aside[SELECT_SPILL_LOOK];
  size_t naside = 0, i;
  uint32_t found = RP_CORE_NONE;
  rp_pq_entry *pe;
  rp_res *r;
  int lifted = 0;

  /* The cheapest first among those out of the band (the band's members
     were asked already and are at their caps, or hold a try of |q|):
     slower or lossier, but an answer late or less sure beats a
     SERVFAIL. A probation resolver takes one more than its replies, as
     in select_overflow; one without a token or without a reply yet is
     passed over. */
  while ((pe = rp_pq_top(&pool->cost)) != NULL && naside < SELECT_SPILL_LOOK) {
    r = rp_container_of(pe, rp_res, e_cost);
    rp_pq_pop(&pool->cost);
    aside[naside++] = r;
    if ((r->where != RP_WHERE_OUT && r->where != RP_WHERE_BUSY) ||
        rp_select_has_open(q, r->slot) ||
        r->inflight >= RP_CORE_RES_MAX_INFLIGHT) {
      continue;
    }
    if (rp_res_probation_busy(r) &&
        (!rp_select_may_overflow(pool, r) || !rp_res_overflow_room(r))) {
      continue;
    }
    if (r->rl.cap > 0.0) {
      /* Lifted: uncapped now; its heaps are put in order below, once it
         is back in the cost heap. */
      lifted = rp_ratelim_update(&r->rl, &pool->set, now);
      if (!rp_ratelim_take(&r->rl)) {
        rp_ratelim_held_back(&r->rl, now);
        continue;
      }
    }
    found = r->slot;
    break;
  }
  for (i = 0; i < naside; ++i) {
    rp_select_push(&pool->cost, &aside[i]->e_cost);
  }
  if (found == RP_CORE_NONE && (r = select_fresh_top(pool, now)) != NULL &&
      !rp_select_has_open(q, r->slot) &&
      r->inflight < RP_CORE_RES_MAX_INFLIGHT) {
    /* Only when nothing that replied can: one that never replied, one
       query at a time (its probation): a dead one takes a query per
       per_attempt, no more. */
    found = r->slot;
  }
  if (lifted && found != RP_CORE_NONE) {
    rp_select_refresh(pool, pool->res[found], now);
  }
  return found;
}

uint32_t rp_select_copy(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_res *aside[RP_CORE_MAX_TRIES + SELECT_COPY_SPREAD];
  size_t naside = 0, i, ncand = 0;
  rp_res *best = NULL, *same = NULL, *r;
  rp_pq_entry *pe;
  double limit = -1.0;
  size_t nopen, same_open = 0;

  (void)now;
  /* Among the unlimited resolvers as good as the soonest and surest
     (the equal-cost band of the cheapest, and within band_loss of the
     lowest loss: a copy's answer lost after the tunnel server put data
     in it costs the tunnel a retransmission), the least recently used that
     has no try of this query open: copies take turns like first sends
     and never double up on the first send's resolver while another
     equally good one is there. Only when every candidate already has a
     try of the query (one unlimited resolver) does the copy go to one
     of them, never twice unless |q|'s copies may stack (a slow first
     resolver, copy_inflight_rtt): then the one with the fewest open
     tries of the query (a tunnel server answers each copy with other
     data, wherever it came from). */
  while ((pe = rp_pq_top(&pool->unlim)) != NULL &&
         naside < RP_CORE_MAX_TRIES + SELECT_COPY_SPREAD &&
         ncand < SELECT_COPY_SPREAD) {
    r = rp_container_of(pe, rp_res, e_unlim);
    if (limit >= 0.0 && r->cost > limit) {
      break;
    }
    rp_pq_pop(&pool->unlim);
    aside[naside++] = r;
    if (limit < 0.0) {
      limit = pool->set.band_ratio * r->cost + (double)pool->set.band_slack;
    }
    if ((!q->copy_stack && select_has_open_copy(q, r->slot)) ||
        r->inflight >= RP_CORE_RES_MAX_INFLIGHT || !rp_select_loss_ok(pool, r)) {
      continue;
    }
    if (rp_select_has_open(q, r->slot)) {
      nopen = select_open_count(q, r->slot);
      if (same == NULL || nopen < same_open ||
          (nopen == same_open && r->use_seq < same->use_seq)) {
        same = r;
        same_open = nopen;
      }
      continue;
    }
    ++ncand;
    if (best == NULL || r->use_seq < best->use_seq) {
      best = r;
    }
  }
  for (i = 0; i < naside; ++i) {
    rp_select_push(&pool->unlim, &aside[i]->e_unlim);
  }
  if (best == NULL) {
    best = same;
  }
  return best ? best->slot : RP_CORE_NONE;
}

/* select_on_proven returns 1 if |q| has an open try at a resolver that
   replied before. */
static int select_on_proven(const rp_pool *pool, const rp_query *q) {
  size_t i;
  const rp_res *r;

  for (i = 0; i < q->ntries; ++i) {
    r = rp_pool_res(pool, q->tries[i].res);
    if (q->tries[i].open && r != NULL && rp_res_proven(r)) {
      return 1;
    }
  }
  return 0;
}

/* select_retry_gap returns how long after its last send the left-out or
   never-replied |r| is due for a retry: retry_left_out stretched by its
   loss share (retry_loss_stretch). The share is the estimate over
   loss_window, not its lower bound: a resolver retried every few seconds
   has too few recent sends for the bound to leave 0 (1 lost of 5:
   0.04). */
static rp_duration select_retry_gap(const rp_pool *pool, const rp_res *r) {
  double gap = (double)pool->set.retry_left_out *
               (1.0 + pool->set.retry_loss_stretch *
                          rp_health_loss_ratio(&r->health));

  return gap >= SELECT_MAX_GAP_NS ? (rp_duration)SELECT_MAX_GAP_NS
                                  : (rp_duration)gap;
}

/* select_retry_due returns 1 if |r|, the top of its LRU heap |pq|, is due
   for a retry at |now|. One past retry_left_out but not past its
   stretched gap goes behind the others, as if used (its last send
   stays), so that it does not hold back those due behind it. */
static int select_retry_due(rp_pool *pool, rp_pq *pq, rp_res *r,
                            rp_tstamp now) {
  if (!rp_tstamp_elapsed(r->last_used, pool->set.retry_left_out, now)) {
    return 0;
  }
  if (rp_tstamp_elapsed(r->last_used, select_retry_gap(pool, r), now)) {
    return 1;
  }
  r->use_seq = ++pool->use_seq;
  rp_pq_update(pq, &r->e_lru);
  return 0;
}

/* select_retry_fresh returns the least recently used resolver that
   never replied, if it holds no query and is due (never tried, or
   select_retry_gap after its last send), for a retry riding along |q|
   placed on a resolver that replied before (while none has, those
   never replied take the queries themselves, one each); else
   RP_CORE_NONE. */
static uint32_t select_retry_fresh(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_res *r;

  if (pool->fresh.len == 0 || !select_on_proven(pool, q)) {
    return RP_CORE_NONE;
  }
  r = select_fresh_top(pool, now);
  if (r == NULL || rp_select_has_open(q, r->slot) ||
      r->inflight >= RP_CORE_RES_MAX_INFLIGHT ||
      (r->use_seq != 0 && !select_retry_due(pool, &pool->fresh, r, now))) {
    return RP_CORE_NONE;
  }
  return r->slot;
}

/* select_retry_out returns the left-out resolver due for its retry, or
   RP_CORE_NONE. */
static uint32_t select_retry_out(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_pq_entry *pe = rp_pq_top(&pool->out);
  rp_res *r;

  if (pe == NULL) {
    return RP_CORE_NONE;
  }
  r = rp_container_of(pe, rp_res, e_lru);
  if (!select_retry_due(pool, &pool->out, r, now)) {
    return RP_CORE_NONE;
  }
  rp_pq_pop(&pool->out);
  r->where = RP_WHERE_NONE;
  if (rp_select_qualifies(pool, r)) {
    r->where = RP_WHERE_BAND;
    rp_select_push(&pool->band, &r->e_lru);
    return RP_CORE_NONE;
  }
  if (rp_select_has_open(q, r->slot) ||
      r->inflight >= RP_CORE_RES_MAX_INFLIGHT) {
    r->where = RP_WHERE_OUT;
    rp_select_push(&pool->out, &r->e_lru);
    return RP_CORE_NONE;
  }
  if (!select_take(pool, r, 0, now)) {
    return RP_CORE_NONE;
  }
  r->where = RP_WHERE_OUT;
  rp_select_push(&pool->out, &r->e_lru);
  return r->slot;
}

uint32_t rp_select_left_out(rp_pool *pool, rp_query *q, rp_tstamp now) {
  int fresh = pool->retry_fresh;
  uint32_t found =
      fresh ? select_retry_fresh(pool, q, now) : select_retry_out(pool, q, now);

  if (found == RP_CORE_NONE) {
    fresh = !fresh;
    found = fresh ? select_retry_fresh(pool, q, now)
                  : select_retry_out(pool, q, now);
  }
  if (found != RP_CORE_NONE) {
    /* The other heap first next time: 10 000 resolvers never tried must
       not hold back the retries of those left out, nor the reverse. */
    pool->retry_fresh = !fresh;
  }
  return found;
}

uint32_t rp_select_past_cap(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_pq_entry *pe = rp_pq_top(&pool->pastcap);
  rp_res *r;

  if (pe == NULL) {
    return RP_CORE_NONE;
  }
  r = rp_container_of(pe, rp_res, e_pastcap);
  if (r->pastcap_at > now || rp_select_has_open(q, r->slot) ||
      rp_res_probation_busy(r) ||
      r->inflight >= RP_CORE_RES_MAX_INFLIGHT) {
    return RP_CORE_NONE;
  }
  return r->slot;
}
