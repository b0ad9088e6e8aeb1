/*
 * select_set.c: the sets an up resolver is kept in, their heap orders
 * and keys (see select_set.h for the notes).
 */
#include "select_set.h"

#include <assert.h>

/* SELECT_MIN_OK bounds 1 - loss in the cost, so that a resolver losing
   everything has a finite cost (10 x its latency). */
#define SELECT_MIN_OK 0.1
/* SELECT_SCORE_OFFSET turns a score -10 .. 10 into a weight 1 .. 21. */
#define SELECT_SCORE_OFFSET 11
/* SELECT_PER_MILLE scales least_loss's ratio (MasterDnsVPN). */
#define SELECT_PER_MILLE 1000.0

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

/* rp_select_loss_ok returns 1 if |r|'s loss (its lower bound) is within
   band_loss of the lowest. */
int rp_select_loss_ok(const rp_pool *pool, const rp_res *r) {
  const rp_pq_entry *pe = rp_pq_top(&pool->loss);
  double ref = 0.0;

  if (pe != NULL) {
    ref = rp_health_loss_ratio(
        &rp_container_of_const(pe, rp_res, e_loss)->health);
  }
  return rp_health_loss_lower(&r->health, pool->set.loss_z) <=
         ref + pool->set.band_loss;
}

/* rp_select_push pushes |pe| into |pq|; room was reserved at add. */
void rp_select_push(rp_pq *pq, rp_pq_entry *pe) {
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

  if (rp_select_loss_ok(pool, best)) {
    return best->cost;
  }
  pe = rp_pq_top(&pool->loss);
  if (pe == NULL) {
    return best->cost;
  }
  surest = rp_container_of_const(pe, rp_res, e_loss);
  return surest->cost > best->cost ? surest->cost : best->cost;
}

/* rp_select_qualifies returns 1 if |r| is in the equal-cost band now. */
int rp_select_qualifies(const rp_pool *pool, const rp_res *r) {
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
  return rp_select_loss_ok(pool, r);
}

/* rp_select_surest_back moves the surest resolver (the loss heap's top)
   from the left-out set into the band when it qualifies now: left-out
   resolvers are re-checked on their own news, and the band's
   thresholds may have moved under it (the cheapest turned lossy) with
   none. Returns 1 when moved. O(log n). */
int rp_select_surest_back(rp_pool *pool) {
  rp_pq_entry *pe = rp_pq_top(&pool->loss);
  rp_res *r;

  if (pe == NULL) {
    return 0;
  }
  r = rp_container_of(pe, rp_res, e_loss);
  if (r->where != RP_WHERE_OUT || !rp_select_qualifies(pool, r)) {
    return 0;
  }
  rp_pq_remove(&pool->out, &r->e_lru);
  r->where = RP_WHERE_BAND;
  rp_select_push(&pool->band, &r->e_lru);
  return 1;
}

/* rp_select_to_token moves |r| (in no set) to the token wait. */
void rp_select_to_token(rp_pool *pool, rp_res *r, rp_tstamp now) {
  rp_tstamp at = rp_ratelim_next_token(&r->rl);

  if (at <= now) {
    at = now + 1;
  }
  r->where = RP_WHERE_TOKEN;
  rp_pool_timer_set(pool, &r->timer, at);
  r->pastcap_at = rp_ratelim_past_cap_at(&r->rl, &pool->set);
  rp_select_push(&pool->pastcap, &r->e_pastcap);
}

/* rp_select_may_overflow returns 1 if the probation resolver |r| may take
   queries past its one in flight when no other resolver can: it replied
   before (a dead one never gets more than its probation query), and
   probation_strict (the old rule, a fixture) is off. */
int rp_select_may_overflow(const rp_pool *pool, const rp_res *r) {
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
    if (rp_select_may_overflow(pool, r)) {
      r->where = RP_WHERE_BUSY;
      rp_select_push(&pool->busy, &r->e_lru);
    } else {
      r->where = RP_WHERE_UNPROVEN;
    }
    return;
  }
  if (!rp_res_proven(r)) {
    /* It may be dead: explored by retries, a query's only try only when
       no resolver that replied has room (select_fresh). */
    r->where = RP_WHERE_FRESH;
    rp_select_push(&pool->fresh, &r->e_lru);
    return;
  }
  if (r->rl.cap > 0.0) {
    rp_ratelim_update(&r->rl, &pool->set, now);
    if (r->rl.cap > 0.0 && r->rl.tokens < 1.0) {
      rp_select_to_token(pool, r, now);
      return;
    }
  }
  if (rp_select_qualifies(pool, r)) {
    r->where = RP_WHERE_BAND;
    rp_select_push(&pool->band, &r->e_lru);
  } else {
    r->where = RP_WHERE_OUT;
    rp_select_push(&pool->out, &r->e_lru);
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

void rp_select_set_down(rp_pool *pool, rp_res *r) {
  rp_select_unplace(pool, r);
  r->where = RP_WHERE_DOWN;
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
      (r->where == RP_WHERE_BUSY) != rp_select_may_overflow(pool, r)) {
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
    rp_select_push(pq, pe);
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
  if (r->where == RP_WHERE_BAND && !rp_select_qualifies(pool, r)) {
    rp_pq_remove(&pool->band, &r->e_lru);
    r->where = RP_WHERE_OUT;
    rp_select_push(&pool->out, &r->e_lru);
  } else if (r->where == RP_WHERE_OUT && rp_select_qualifies(pool, r)) {
    rp_pq_remove(&pool->out, &r->e_lru);
    r->where = RP_WHERE_BAND;
    rp_select_push(&pool->band, &r->e_lru);
  }
}

/* ---------------------------------------------------------------- */
/* Auto                                                               */

void rp_select_fw_resize(rp_pool *pool, uint64_t *nfw, rp_res *const *nres,
                         size_t ncap) {
  size_t i, j;

  /* Rebuild the Fenwick tree for the new size. */
  for (i = 0; i < ncap; ++i) {
    uint64_t w = i < pool->res_cap && nres[i] ? nres[i]->fw_weight : 0;

    for (j = i + 1; j <= ncap && w; j += j & (~j + 1)) {
      nfw[j] += w;
    }
  }
  pool->mem.free(pool->fw, pool->mem.user_data);
  pool->fw = nfw;
}

void rp_select_used(rp_pool *pool, rp_res *r, rp_tstamp now) {
  r->last_used = now;
  r->use_seq = ++pool->use_seq;
  if (rp_pq_entry_queued(&r->e_lru)) {
    rp_pq_update(rp_select_lru_heap(pool, r), &r->e_lru);
  }
  if (rp_pq_entry_queued(&r->e_strat)) {
    rp_pq_update(&pool->strat, &r->e_strat);
  }
}

void rp_select_past_cap_used(rp_pool *pool, rp_res *r) {
  if (rp_pq_entry_queued(&r->e_pastcap)) {
    r->pastcap_at = rp_ratelim_past_cap_at(&r->rl, &pool->set);
    rp_pq_update(&pool->pastcap, &r->e_pastcap);
  }
}
