/*
 * res.c: see res.h.
 */
#include "core.h"
#include "res.h"
#include "down.h"
#include "try.h"
#include "query.h"
#include "select.h"

#include <stdio.h>

void rp_res_prob_sync(rp_pool *pool, rp_res *r) {
  int want = !r->down && r->probation && !r->prob_failed;

  if (want && !r->prob_counted) {
    ++pool->nprob_up;
  } else if (!want && r->prob_counted) {
    --pool->nprob_up;
  }
  r->prob_counted = want;
}

void rp_res_reply(rp_pool *pool, rp_res *r, rp_tstamp sent, int score_delta,
                  rp_tstamp now) {
  ++r->replies;
  if (sent > r->newest_reply_sent) {
    r->newest_reply_sent = sent;
  }
  rp_health_reply(&r->health, pool->set.loss_window, score_delta, now);
  if (r->probation && r->replies >= pool->set.probation_answers) {
    r->probation = 0;
    rp_res_prob_sync(pool, r);
  }
  rp_select_probation_sync(pool, r, now);
  rp_down_leave(pool, r, now);
}

uint32_t rp_res_failed(rp_pool *pool, rp_res *r, rp_tstamp sent, int is_drop,
                       int overtaken, rp_tstamp now) {
  uint32_t count_loss = 1;

  if (sent < r->up_at) {
    /* Sent while it was down: judged when it went down. */
    return 0;
  }
  if (is_drop) {
    ++r->dropped;
    if (rp_ratelim_on_drop(&r->rl, &pool->set, sent, overtaken, now,
                           &count_loss)) {
      rp_pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CAP, now,
                  "ev=cap srv=%u why=%s cap_qps=%.1f drops=%u/%u share=%.3f "
                  "before=%u/%u before_share=%.3f",
                  r->slot, count_loss > 0 ? "random_loss" : "drop", r->rl.cap,
                  r->rl.lvl.drops, r->rl.lvl.drops + r->rl.lvl.answers,
                  rp_ratelim_share(&r->rl.lvl), r->rl.prev.drops,
                  r->rl.prev.drops + r->rl.prev.answers,
                  rp_ratelim_share(&r->rl.prev));
    }
  } else {
    ++r->errors;
  }
  /* A reply to a later try, or an answer after the send: it still
     answers, so it is capped, never taken down by this loss. */
  rp_health_loss(&r->health, pool->set.loss_window, count_loss,
                 !overtaken && (r->rl.last_answer == RP_TSTAMP_UNSET ||
                                r->rl.last_answer < sent),
                 pool->set.score_failure, now);
  if (r->probation && !r->prob_failed &&
      ((count_loss > 0 &&
        !(is_drop && overtaken && rp_ratelim_drop_may_be_rate(&r->rl, now))) ||
       !is_drop)) {
    /* Lost (not a drop that may be overflow of a burst limit it met,
       even one counted as loss early) or failed in probation. */
    r->prob_failed = 1;
    rp_res_prob_sync(pool, r);
    rp_select_probation_sync(pool, r, now);
  }
  if (!r->down && r->health.fails_in_row >= pool->set.down_after) {
    rp_down_enter(pool, r, now);
  }
  rp_select_refresh(pool, r, now);
  return count_loss;
}

/* res_grow makes room for slot |slot| in the resolver array and in
   the Fenwick tree. Returns 0 or RP_ERR_NOMEM. */
static int res_grow(rp_pool *pool, size_t slot) {
  size_t ncap = pool->res_cap ? pool->res_cap : 16, i;
  rp_res **nres;
  uint64_t *nfw;

  if (slot < pool->res_cap) {
    return 0;
  }
  while (ncap <= slot) {
    ncap *= 2;
  }
  if (ncap > pool->set.max_resolvers) {
    ncap = pool->set.max_resolvers;
  }
  nfw = pool->mem.calloc(ncap + 1, sizeof(uint64_t), pool->mem.user_data);
  if (nfw == NULL) {
    return RP_ERR_NOMEM;
  }
  nres = pool->mem.realloc(pool->res, ncap * sizeof(rp_res *),
                           pool->mem.user_data);
  if (nres == NULL) {
    pool->mem.free(nfw, pool->mem.user_data);
    return RP_ERR_NOMEM;
  }
  for (i = pool->res_cap; i < ncap; ++i) {
    nres[i] = NULL;
  }
  rp_select_fw_resize(pool, nfw, nres, ncap);
  pool->res = nres;
  pool->res_cap = ncap;
  return 0;
}

/* res_reserve makes room for |need| resolvers in the pool's heaps and
   for them and every query in the timer heap. Returns 0 or
   RP_ERR_NOMEM. */
static int res_reserve(rp_pool *pool, size_t need) {
  int rv;

  if ((rv = rp_pq_reserve(&pool->band, need)) != 0 ||
      (rv = rp_pq_reserve(&pool->out, need)) != 0 ||
      (rv = rp_pq_reserve(&pool->busy, need)) != 0 ||
      (rv = rp_pq_reserve(&pool->fresh, need)) != 0 ||
      (rv = rp_pq_reserve(&pool->cost, need)) != 0 ||
      (rv = rp_pq_reserve(&pool->loss, need)) != 0 ||
      (rv = rp_pq_reserve(&pool->unlim, need)) != 0 ||
      (rv = rp_pq_reserve(&pool->strat, need)) != 0 ||
      (rv = rp_pq_reserve(&pool->pastcap, need)) != 0 ||
      (rv = rp_pq_reserve(&pool->timers, pool->set.max_inflight + need)) != 0) {
    return rv;
  }
  return 0;
}

/* res_init sets up the new resolver |r| in |slot| from |config| at
   |now|; its tiebreak is drawn from callbacks.rand. */
static void res_init(rp_pool *pool, rp_res *r, size_t slot,
                     const rp_resolver_config *config, rp_tstamp now) {
  r->slot = (uint32_t)slot;
  r->flags = config->flags;
  r->user_data = config->user_data;
  if (config->name) {
    snprintf(r->name, sizeof(r->name), "%s", config->name);
  }
  /* Zeroed by calloc: in no selection set (RP_WHERE_NONE) until
     rp_select_refresh places it. */
  r->probation = pool->set.probation_answers > 0;
  r->tiebreak = rp_pool_rand32(pool);
  r->added = now;
  r->last_used = 0;
  rp_pq_entry_init(&r->e_lru);
  rp_pq_entry_init(&r->e_cost);
  rp_pq_entry_init(&r->e_loss);
  rp_pq_entry_init(&r->e_unlim);
  rp_pq_entry_init(&r->e_strat);
  rp_pq_entry_init(&r->e_pastcap);
  rp_pq_entry_init(&r->timer.pe);
  r->timer.kind = RP_TIMER_RES;
  rp_list_init(&r->tries);
  rp_list_init(&r->lost);
  rp_list_init(&r->rr_node);
  rp_list_init(&r->down_node);
  r->cost = -1.0;
  rp_rtt_init(&r->rtt);
  rp_health_init(&r->health, config->score);
  rp_ratelim_init(&r->rl);
  rp_case_res_init(&r->cs);
  r->last_probe = RP_TSTAMP_UNSET;
  r->last_down_copy = RP_TSTAMP_UNSET;
}

int rp_res_add(rp_pool *pool, const rp_resolver_config *config,
               uint32_t *presolver_id, rp_tstamp now) {
  size_t slot;
  rp_res *r;
  int rv;

  if (pool->nres >= pool->set.max_resolvers) {
    return RP_ERR_FULL;
  }
  for (slot = pool->res_hint; slot < pool->res_cap && pool->res[slot] != NULL;
       ++slot) {
  }
  rv = res_grow(pool, slot);
  if (rv != 0) {
    return rv;
  }
  rv = res_reserve(pool, pool->nres + 1);
  if (rv != 0) {
    return rv;
  }
  r = pool->mem.calloc(1, sizeof(*r), pool->mem.user_data);
  if (r == NULL) {
    return RP_ERR_NOMEM;
  }
  res_init(pool, r, slot, config, now);
  pool->res[slot] = r;
  pool->res_hint = slot + 1;
  ++pool->nres;
  ++pool->nup;
  rp_res_prob_sync(pool, r);
  rp_list_push_back(&pool->rr_ring, &r->rr_node);
  rp_select_refresh(pool, r, now);
  rp_select_place(pool, r, now);
  *presolver_id = (uint32_t)slot;
  return 0;
}

void rp_res_ring_leave(rp_pool *pool, rp_res *r) {
  if (rp_list_linked(&r->rr_node)) {
    if (pool->rr_next == &r->rr_node) {
      pool->rr_next = r->rr_node.next;
    }
    rp_list_remove(&r->rr_node);
  }
}

int rp_res_remove(rp_pool *pool, rp_res *r, rp_tstamp now) {
  uint32_t slot = r->slot;
  rp_query *q;
  rp_try *t;
  int rv = 0, rv2;

  /* Take it out of every set first so no resend picks it. */
  rp_select_unplace(pool, r);
  rp_pool_timer_set(pool, &r->timer, RP_TSTAMP_UNSET);
  if (!r->down) {
    --pool->nup;
  }
  r->down = 1;
  rp_res_prob_sync(pool, r);
  rp_select_refresh(pool, r, now);
  rp_select_fw_set(pool, r, 0);
  rp_pq_remove(&pool->strat, &r->e_strat);
  rp_res_ring_leave(pool, r);
  rp_list_splice(&r->tries, &r->lost);
  while (!rp_list_empty(&r->tries)) {
    t = rp_container_of(r->tries.next, rp_try, res_node);
    q = t->query;
    rp_try_close(pool, q, t, now);
    if (!q->answered && q->nopen == 0 && !rp_pq_entry_queued(&q->e_wait) &&
        rv == 0) {
      rv2 = rp_query_place(pool, q, RP_TRY_RESEND, now);
      if (rv2 < 0) {
        rv = rv2;
      }
    }
    rp_query_finish(pool, q, now);
  }
  rp_down_forget(pool, r);
  pool->res[slot] = NULL;
  if (slot < pool->res_hint) {
    pool->res_hint = slot;
  }
  --pool->nres;
  pool->mem.free(r, pool->mem.user_data);
  return rv;
}

int rp_res_timer(rp_pool *pool, rp_res *r, rp_tstamp now) {
  switch (r->where) {
  case RP_WHERE_TOKEN:
    rp_ratelim_update(&r->rl, &pool->set, now);
    if (r->rl.cap <= 0.0 || r->rl.tokens >= 1.0) {
      rp_select_unplace(pool, r);
      rp_select_refresh(pool, r, now);
      rp_select_place(pool, r, now);
    } else {
      rp_tstamp at = rp_ratelim_next_token(&r->rl);

      rp_pool_timer_set(pool, &r->timer, at > now ? at : now + 1);
    }
    return 0;
  case RP_WHERE_DOWN:
    return rp_down_timer(pool, r, now);
  case RP_WHERE_NONE:
  case RP_WHERE_BAND:
  case RP_WHERE_OUT:
  case RP_WHERE_BUSY:
  case RP_WHERE_UNPROVEN:
  case RP_WHERE_FRESH:
    break;
  }
  return 0;
}
