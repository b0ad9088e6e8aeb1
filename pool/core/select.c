/*
 * select.c: resolver selection (see select.h for the notes).
 */
#include "select.h"

#include <assert.h>

/* SELECT_MIN_OK bounds 1 - loss in the cost, so that a resolver losing
   everything has a finite cost (10 x its latency). */
#define SELECT_MIN_OK 0.1
/* SELECT_SCORE_OFFSET turns a score -10 .. 10 into a weight 1 .. 21. */
#define SELECT_SCORE_OFFSET 11
/* SELECT_WEIGHTED_DRAWS is how many weighted draws may hit a resolver
   the query already waits on before giving up. */
#define SELECT_WEIGHTED_DRAWS 4
/* SELECT_COPY_SPREAD is how many equally good unlimited resolvers a
   copy may rotate over (bounded work per copy). */
#define SELECT_COPY_SPREAD 4
/* SELECT_PER_MILLE scales least_loss's ratio (MasterDnsVPN). */
#define SELECT_PER_MILLE 1000.0
/* SELECT_SPILL_LOOK bounds how many resolvers a spill looks at, cheapest
   first (bounded work per query at 10 000 resolvers). */
#define SELECT_SPILL_LOOK 16

static rp_res *select_res(const rp_pool *pool, uint32_t slot) {
  return slot < pool->res_cap ? pool->res[slot] : NULL;
}

/* ---------------------------------------------------------------- */
/* Heap orders                                                        */
/* ---------------------------------------------------------------- */

int rp_select_less_lru(const rp_pq_entry *a, const rp_pq_entry *b) {
  const rp_res *ra = rp_container_of_const(a, rp_res, e_lru);
  const rp_res *rb = rp_container_of_const(b, rp_res, e_lru);

  if (ra->use_seq != rb->use_seq) {
    return ra->use_seq < rb->use_seq;
  }
  if (ra->tiebreak != rb->tiebreak) {
    return ra->tiebreak < rb->tiebreak;
  }
  return ra->slot < rb->slot;
}

int rp_select_less_cost(const rp_pq_entry *a, const rp_pq_entry *b) {
  const rp_res *ra = rp_container_of_const(a, rp_res, e_cost);
  const rp_res *rb = rp_container_of_const(b, rp_res, e_cost);

  if (ra->cost != rb->cost) {
    return ra->cost < rb->cost;
  }
  return ra->slot < rb->slot;
}

int rp_select_less_loss(const rp_pq_entry *a, const rp_pq_entry *b) {
  const rp_res *ra = rp_container_of_const(a, rp_res, e_loss);
  const rp_res *rb = rp_container_of_const(b, rp_res, e_loss);
  double la = rp_health_loss_ratio(&ra->health);
  double lb = rp_health_loss_ratio(&rb->health);

  if (la != lb) {
    return la < lb;
  }
  return ra->slot < rb->slot;
}

int rp_select_less_unlim(const rp_pq_entry *a, const rp_pq_entry *b) {
  const rp_res *ra = rp_container_of_const(a, rp_res, e_unlim);
  const rp_res *rb = rp_container_of_const(b, rp_res, e_unlim);

  if (ra->cost != rb->cost) {
    return ra->cost < rb->cost;
  }
  return ra->slot < rb->slot;
}

int rp_select_less_strat(const rp_pq_entry *a, const rp_pq_entry *b) {
  const rp_res *ra = rp_container_of_const(a, rp_res, e_strat);
  const rp_res *rb = rp_container_of_const(b, rp_res, e_strat);

  if (ra->strat_key != rb->strat_key) {
    return ra->strat_key < rb->strat_key;
  }
  if (ra->use_seq != rb->use_seq) {
    return ra->use_seq < rb->use_seq;
  }
  if (ra->tiebreak != rb->tiebreak) {
    return ra->tiebreak < rb->tiebreak;
  }
  return ra->slot < rb->slot;
}

int rp_select_less_pastcap(const rp_pq_entry *a, const rp_pq_entry *b) {
  const rp_res *ra = rp_container_of_const(a, rp_res, e_pastcap);
  const rp_res *rb = rp_container_of_const(b, rp_res, e_pastcap);

  if (ra->pastcap_at != rb->pastcap_at) {
    return ra->pastcap_at < rb->pastcap_at;
  }
  return ra->slot < rb->slot;
}

/* ---------------------------------------------------------------- */
/* Membership                                                         */
/* ---------------------------------------------------------------- */

int rp_select_has_open(const rp_query *q, uint32_t slot) {
  size_t i;

  /* A try judged lost does not count: the query may be sent there
     again (the only resolver may be the one that lost it). */
  for (i = 0; i < q->ntries; ++i) {
    if (q->tries[i].open && !q->tries[i].judged && q->tries[i].res == slot) {
      return 1;
    }
  }
  return 0;
}

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

/* select_loss_ok returns 1 if |r|'s loss (its lower bound) is within
   band_loss of the lowest. */
static int select_loss_ok(const rp_pool *pool, const rp_res *r) {
  const rp_pq_entry *pe = rp_pq_top(&pool->loss);
  double ref = 0.0;

  if (pe != NULL) {
    ref = rp_health_loss_ratio(
        &rp_container_of_const(pe, rp_res, e_loss)->health);
  }
  return rp_health_loss_lower(&r->health, pool->set.loss_z) <=
         ref + pool->set.band_loss;
}

/* select_push pushes |pe| into |pq|; room was reserved at add. */
static void select_push(rp_pq *pq, rp_pq_entry *pe) {
  int rv = rp_pq_push(pq, pe);

  assert(rv == 0);
  (void)rv;
}

/* select_cost_ref returns the cost the band is measured from: the
   cheapest resolver's, or, when the cheapest is out on loss, the surest
   one's when that is higher. Without that the band could be empty while
   resolvers answer (the cheapest lossy, the surest slower than the
   band): every query then waited and spilled to the lossy one. */
static double select_cost_ref(const rp_pool *pool, const rp_res *best) {
  const rp_pq_entry *pe;
  const rp_res *surest;

  if (select_loss_ok(pool, best)) {
    return best->cost;
  }
  pe = rp_pq_top(&pool->loss);
  if (pe == NULL) {
    return best->cost;
  }
  surest = rp_container_of_const(pe, rp_res, e_loss);
  return surest->cost > best->cost ? surest->cost : best->cost;
}

/* select_qualifies returns 1 if |r| is in the equal-cost band now. */
static int select_qualifies(const rp_pool *pool, const rp_res *r) {
  const rp_pq_entry *pe;
  const rp_res *best;
  double limit;

  if (r->down) {
    return 0;
  }
  pe = rp_pq_top(&pool->cost);
  if (r->cost >= 0.0 && pe != NULL) {
    best = rp_container_of_const(pe, rp_res, e_cost);
    limit = pool->set.band_ratio * select_cost_ref(pool, best) +
            (double)pool->set.band_slack;
    if (r->cost > limit) {
      return 0;
    }
  }
  return select_loss_ok(pool, r);
}

/* select_surest_back moves the surest resolver (the loss heap's top)
   from the left-out set into the band when it qualifies now: left-out
   resolvers are re-checked on their own news, and the band's
   thresholds may have moved under it (the cheapest turned lossy) with
   none. Returns 1 when moved. O(log n). */
static int select_surest_back(rp_pool *pool) {
  rp_pq_entry *pe = rp_pq_top(&pool->loss);
  rp_res *r;

  if (pe == NULL) {
    return 0;
  }
  r = rp_container_of(pe, rp_res, e_loss);
  if (r->where != RP_WHERE_OUT || !select_qualifies(pool, r)) {
    return 0;
  }
  rp_pq_remove(&pool->out, &r->e_lru);
  r->where = RP_WHERE_BAND;
  select_push(&pool->band, &r->e_lru);
  return 1;
}

/* select_to_token moves |r| (in no set) to the token wait. */
static void select_to_token(rp_pool *pool, rp_res *r, rp_tstamp now) {
  rp_tstamp at = rp_ratelim_next_token(&r->rl);

  if (at <= now) {
    at = now + 1;
  }
  r->where = RP_WHERE_TOKEN;
  rp_pool_timer_set(pool, &r->timer, at);
  r->pastcap_at = rp_ratelim_past_cap_at(&r->rl, &pool->set);
  select_push(&pool->pastcap, &r->e_pastcap);
}

/* select_may_overflow returns 1 if the probation resolver |r| may take
   queries past its one in flight when no other resolver can: it replied
   before (a dead one never gets more than its probation query), and
   probation_strict (the old rule, a fixture) is off. */
static int select_may_overflow(const rp_pool *pool, const rp_res *r) {
  return r->replies > 0 && !pool->set.probation_strict;
}

rp_pq *rp_select_lru_heap(rp_pool *pool, const rp_res *r) {
  switch (r->where) {
  case RP_WHERE_BAND:
    return &pool->band;
  case RP_WHERE_OUT:
    return &pool->out;
  case RP_WHERE_BUSY:
    return &pool->busy;
  case RP_WHERE_FRESH:
    return &pool->fresh;
  case RP_WHERE_NONE:
  case RP_WHERE_TOKEN:
  case RP_WHERE_UNPROVEN:
  case RP_WHERE_DOWN:
    break;
  }
  return NULL;
}

void rp_select_place(rp_pool *pool, rp_res *r, rp_tstamp now) {
  assert(r->where == RP_WHERE_NONE || r->where == RP_WHERE_BUSY ||
         r->where == RP_WHERE_UNPROVEN || r->where == RP_WHERE_FRESH);
  if (r->where == RP_WHERE_BUSY) {
    rp_pq_remove(&pool->busy, &r->e_lru);
  } else if (r->where == RP_WHERE_FRESH) {
    rp_pq_remove(&pool->fresh, &r->e_lru);
  }
  r->where = RP_WHERE_NONE;
  if (r->down) {
    r->where = RP_WHERE_DOWN;
    return;
  }
  if (pool->set.load_balance != RP_BALANCE_AUTO) {
    return;
  }
  if (rp_res_probation_busy(r)) {
    if (select_may_overflow(pool, r)) {
      r->where = RP_WHERE_BUSY;
      select_push(&pool->busy, &r->e_lru);
    } else {
      r->where = RP_WHERE_UNPROVEN;
    }
    return;
  }
  if (!rp_res_proven(r)) {
    /* It may be dead: explored by retries, a query's only try only when
       no resolver that replied has room (select_fresh). */
    r->where = RP_WHERE_FRESH;
    select_push(&pool->fresh, &r->e_lru);
    return;
  }
  if (r->rl.cap > 0.0) {
    rp_ratelim_update(&r->rl, &pool->set, now);
    if (r->rl.cap > 0.0 && r->rl.tokens < 1.0) {
      select_to_token(pool, r, now);
      return;
    }
  }
  if (select_qualifies(pool, r)) {
    r->where = RP_WHERE_BAND;
    select_push(&pool->band, &r->e_lru);
  } else {
    r->where = RP_WHERE_OUT;
    select_push(&pool->out, &r->e_lru);
  }
}

void rp_select_unplace(rp_pool *pool, rp_res *r) {
  switch (r->where) {
  case RP_WHERE_BAND:
    rp_pq_remove(&pool->band, &r->e_lru);
    break;
  case RP_WHERE_OUT:
    rp_pq_remove(&pool->out, &r->e_lru);
    break;
  case RP_WHERE_TOKEN:
    rp_pool_timer_set(pool, &r->timer, RP_TSTAMP_UNSET);
    rp_pq_remove(&pool->pastcap, &r->e_pastcap);
    break;
  case RP_WHERE_BUSY:
    rp_pq_remove(&pool->busy, &r->e_lru);
    break;
  case RP_WHERE_FRESH:
    rp_pq_remove(&pool->fresh, &r->e_lru);
    break;
  case RP_WHERE_NONE:
  case RP_WHERE_UNPROVEN:
  case RP_WHERE_DOWN:
    break;
  }
  r->where = RP_WHERE_NONE;
}

void rp_select_probation_sync(rp_pool *pool, rp_res *r, rp_tstamp now) {
  if (r->where == RP_WHERE_FRESH) {
    /* Its first reply: it joins the band (or is left out) as before. */
    if (rp_res_proven(r)) {
      rp_select_place(pool, r, now);
    }
    return;
  }
  if (r->where != RP_WHERE_BUSY && r->where != RP_WHERE_UNPROVEN) {
    return;
  }
  if (!rp_res_probation_busy(r) ||
      (r->where == RP_WHERE_BUSY) != select_may_overflow(pool, r)) {
    rp_select_place(pool, r, now);
  }
}

/* select_heap_set puts |pe| in |pq| when |in|, else takes it out, and
   restores the order after a key change. */
static void select_heap_set(rp_pq *pq, rp_pq_entry *pe, int in) {
  if (!in) {
    rp_pq_remove(pq, pe);
  } else if (rp_pq_entry_queued(pe)) {
    rp_pq_update(pq, pe);
  } else {
    select_push(pq, pe);
  }
}

void rp_select_fw_set(rp_pool *pool, rp_res *r, uint64_t weight) {
  size_t i;
  uint64_t old = r->fw_weight;

  if (pool->fw == NULL || weight == old) {
    return;
  }
  r->fw_weight = weight;
  for (i = (size_t)r->slot + 1; i <= pool->res_cap; i += i & (~i + 1)) {
    pool->fw[i] = pool->fw[i] - old + weight;
  }
}

void rp_select_refresh(rp_pool *pool, rp_res *r, rp_tstamp now) {
  const rp_settings *set = &pool->set;
  rp_duration fastest = rp_rtt_fastest(&r->rtt);
  double ok = 1.0 - rp_health_loss_ratio(&r->health);
  int up = !r->down;

  (void)now;
  if (ok < SELECT_MIN_OK) {
    ok = SELECT_MIN_OK;
  }
  r->cost = fastest == RP_TSTAMP_UNSET ? -1.0 : (double)fastest / ok;
  select_heap_set(&pool->cost, &r->e_cost, up && r->cost >= 0.0);
  select_heap_set(&pool->loss, &r->e_loss, up && r->health.n > 0.0);
  select_heap_set(&pool->unlim, &r->e_unlim,
                  up && !r->probation && r->rl.cap <= 0.0 && r->cost >= 0.0);
  switch (set->load_balance) {
  case RP_BALANCE_LOWEST_LATENCY:
    r->strat_key = r->rtt.nsamples < set->stat_min_samples
                       ? (double)set->ll_unknown_latency
                       : (double)r->rtt.mean;
    select_heap_set(&pool->strat, &r->e_strat, up);
    break;
  case RP_BALANCE_LEAST_LOSS:
    r->strat_key = r->health.total_closed < set->stat_min_samples
                       ? (double)set->ll_unknown_loss
                       : (double)r->health.total_lost * SELECT_PER_MILLE /
                             (double)r->health.total_closed;
    select_heap_set(&pool->strat, &r->e_strat, up);
    break;
  case RP_BALANCE_WEIGHTED:
    rp_select_fw_set(
        pool, r, up ? (uint64_t)(r->health.score + SELECT_SCORE_OFFSET) : 0);
    break;
  case RP_BALANCE_AUTO:
  case RP_BALANCE_ROUNDROBIN:
    break;
  }
  if (r->where == RP_WHERE_BAND && !select_qualifies(pool, r)) {
    rp_pq_remove(&pool->band, &r->e_lru);
    r->where = RP_WHERE_OUT;
    select_push(&pool->out, &r->e_lru);
  } else if (r->where == RP_WHERE_OUT && select_qualifies(pool, r)) {
    rp_pq_remove(&pool->out, &r->e_lru);
    r->where = RP_WHERE_BAND;
    select_push(&pool->band, &r->e_lru);
  }
}

/* ---------------------------------------------------------------- */
/* Auto                                                               */
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
      select_to_token(pool, r, now);
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
    (void)select_surest_back(pool);
  }
  while ((pe = rp_pq_top(&pool->band)) != NULL) {
    r = rp_container_of(pe, rp_res, e_lru);
    rp_pq_pop(&pool->band);
    r->where = RP_WHERE_NONE;
    if (!select_qualifies(pool, r)) {
      r->where = RP_WHERE_OUT;
      select_push(&pool->out, &r->e_lru);
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
    select_push(&pool->band, &r->e_lru);
    found = r->slot;
    break;
  }
  for (i = 0; i < naside; ++i) {
    aside[i]->where = RP_WHERE_BAND;
    select_push(&pool->band, &aside[i]->e_lru);
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
    if (!rp_res_probation_busy(r) || !select_may_overflow(pool, r)) {
      rp_select_place(pool, r, now);
      continue;
    }
    if (!select_qualifies(pool, r) || rp_select_has_open(q, r->slot) ||
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
    select_push(&pool->busy, &r->e_lru);
    found = r->slot;
    break;
  }
  for (i = 0; i < naside; ++i) {
    aside[i]->where = RP_WHERE_BUSY;
    select_push(&pool->busy, &aside[i]->e_lru);
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
    select_push(&pool->fresh, &aside[i]->e_lru);
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
    r = select_res(pool, slot);
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
    select_push(&pool->strat, &aside[i]->e_strat);
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
  rp_res *r = select_res(pool, first);
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
       one answered, a hedge waits for its room instead (pool.c,
       pool_hedge_later). */
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
    select_push(&pool->cost, &aside[i]->e_cost);
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
        (!select_may_overflow(pool, r) || !rp_res_overflow_room(r))) {
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
    select_push(&pool->cost, &aside[i]->e_cost);
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
        r->inflight >= RP_CORE_RES_MAX_INFLIGHT || !select_loss_ok(pool, r)) {
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
    select_push(&pool->unlim, &aside[i]->e_unlim);
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
    r = select_res(pool, q->tries[i].res);
    if (q->tries[i].open && r != NULL && rp_res_proven(r)) {
      return 1;
    }
  }
  return 0;
}

/* select_retry_fresh returns the least recently used resolver that
   never replied, if it holds no query and is due (never tried, or
   retry_left_out after its last send), for a retry riding along |q|
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
      (r->use_seq != 0 &&
       !rp_tstamp_elapsed(r->last_used, pool->set.retry_left_out, now))) {
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
  if (!rp_tstamp_elapsed(r->last_used, pool->set.retry_left_out, now)) {
    return RP_CORE_NONE;
  }
  rp_pq_pop(&pool->out);
  r->where = RP_WHERE_NONE;
  if (select_qualifies(pool, r)) {
    r->where = RP_WHERE_BAND;
    select_push(&pool->band, &r->e_lru);
    return RP_CORE_NONE;
  }
  if (rp_select_has_open(q, r->slot) ||
      r->inflight >= RP_CORE_RES_MAX_INFLIGHT) {
    r->where = RP_WHERE_OUT;
    select_push(&pool->out, &r->e_lru);
    return RP_CORE_NONE;
  }
  if (!select_take(pool, r, 0, now)) {
    return RP_CORE_NONE;
  }
  r->where = RP_WHERE_OUT;
  select_push(&pool->out, &r->e_lru);
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
