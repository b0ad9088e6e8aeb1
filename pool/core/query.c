/*
 * query.c: see query.h.
 */
#include "core.h"
#include "query.h"
#include "try.h"
#include "fanout.h"
#include "wait.h"
#include "res.h"
#include "select.h"

#include <assert.h>
#include <string.h>

unsigned rp_query_live(const rp_query *q) {
  unsigned n = 0;
  size_t i;

  for (i = 0; i < q->ntries; ++i) {
    n += q->tries[i].open && !q->tries[i].judged;
  }
  return n;
}

void rp_query_linger_sync(rp_pool *pool, rp_query *q) {
  uint8_t linger = (uint8_t)(q->active && q->answered && q->nopen > 0 &&
                             rp_query_live(q) == 0);

  if (linger != q->linger) {
    q->linger = linger;
    if (linger) {
      ++pool->nlinger;
    } else {
      --pool->nlinger;
    }
  }
}

/* query_deliver hands |len| bytes to |q|'s client with its ID. */
static int query_deliver(rp_pool *pool, rp_query *q, const uint8_t *data,
                         size_t len, uint32_t flags) {
  if (len > RP_DNS_MAX_MSG_LEN) {
    return 0;
  }
  if (data != pool->scratch) {
    memcpy(pool->scratch, data, len);
  }
  rp_dns_set_id(pool->scratch, q->client_id);
  /* Answered while waiting (a copy to a down resolver came back). */
  rp_wait_cancel(pool, q);
  if (q->answered) {
    flags |= RP_DELIVER_EXTRA;
    ++pool->stats.duplicates_delivered;
  } else {
    ++pool->stats.delivered;
  }
  q->answered = 1;
  rp_query_linger_sync(pool, q);
  if (pool->cb.deliver(pool, &q->client, pool->scratch, len, flags, pool->now,
                       pool->user_data) != 0) {
    return RP_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

/* query_judge records one judgement of |q|'s copies and logs a change
   of the copy level. */
static void query_judge(rp_pool *pool, int carried) {
  double before = pool->copies.level;

  rp_copies_judge(&pool->copies, &pool->set, carried);
  if (pool->copies.level != before) {
    rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, pool->now,
                "ev=copy_level level=%.2f was=%.2f inflight=%zu",
                pool->copies.level, before, rp_fanout_inflight(pool));
  }
}

int rp_query_deliver_judged(rp_pool *pool, rp_query *q, const uint8_t *data,
                            size_t len) {
  uint64_t h = 0;
  int need = q->answered || q->nopen > 0 || q->copies > 0;
  size_t i;

  if (need) {
    h = rp_copies_hash(data, len);
  }
  if (q->answered) {
    for (i = 0; i < q->nseen; ++i) {
      if (q->seen[i] == h) {
        ++pool->stats.repeats_dropped;
        if (q->had_copy) {
          ++pool->stats.copies_repeat;
          query_judge(pool, 0);
        }
        return 0;
      }
    }
    if (q->had_copy) {
      ++pool->stats.copies_data;
      query_judge(pool, 1);
    }
  }
  if (need && q->nseen < RP_COPIES_SEEN) {
    q->seen[q->nseen++] = h;
  }
  return query_deliver(pool, q, data, len, 0);
}

int rp_query_fail_bytes(rp_pool *pool, const rp_client *client,
                        const uint8_t *query, size_t len, uint8_t rcode) {
  rp_ssize n =
      rp_dns_build_error(pool->scratch, RP_DNS_MAX_MSG_LEN, query, len, rcode);

  ++pool->stats.failed;
  if (n < 0) {
    return 0;
  }
  if (pool->cb.deliver(pool, client, pool->scratch, (size_t)n,
                       RP_DELIVER_FAILED, pool->now, pool->user_data) != 0) {
    return RP_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

int rp_query_fail(rp_pool *pool, rp_query *q) {
  if (q->answered) {
    return 0;
  }
  q->answered = 1;
  rp_query_linger_sync(pool, q);
  return rp_query_fail_bytes(pool, &q->client, q->buf, q->len,
                             RP_DNS_RCODE_SERVFAIL);
}

void rp_query_free(rp_pool *pool, rp_query *q, rp_tstamp now) {
  size_t i;

  for (i = 0; i < q->ntries; ++i) {
    if (q->tries[i].open) {
      rp_try_close(pool, q, &q->tries[i], now);
    }
  }
  rp_pool_timer_set(pool, &q->timer, RP_TSTAMP_UNSET);
  rp_wait_cancel(pool, q);
  rp_list_remove(&q->node);
  /* Last freed, first reused: its memory is still in the cache. */
  rp_list_push_front(&pool->free_q, &q->node);
  q->active = 0;
  rp_query_linger_sync(pool, q);
  --pool->ninflight;
}

/* query_next returns |q|'s next event. */
static rp_tstamp query_next(const rp_pool *pool, const rp_query *q) {
  rp_tstamp at = q->deadline_at;
  size_t i;

  if (q->wait_until != RP_TSTAMP_UNSET) {
    at = rp_tstamp_min(at, q->wait_until);
  }
  if (!q->answered && q->copy_at != RP_TSTAMP_UNSET) {
    at = rp_tstamp_min(at, q->copy_at);
  }
  for (i = 0; i < q->ntries; ++i) {
    const rp_try *t = &q->tries[i];

    if (!t->open) {
      continue;
    }
    at = rp_tstamp_min(at, t->expire_at);
    if (!t->judged && !t->judge_checked && t->judge_at != RP_TSTAMP_UNSET) {
      at = rp_tstamp_min(at, t->judge_at);
    }
    if (!q->answered && !t->hedged && t->hedge_at != RP_TSTAMP_UNSET &&
        q->nhedges < pool->set.max_hedges) {
      at = rp_tstamp_min(at, t->hedge_at);
    }
    if (rp_try_may_stale(pool, t)) {
      at = rp_tstamp_min(at, rp_try_stale_at(pool, t));
    }
  }
  return at;
}

void rp_query_schedule(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_tstamp at = query_next(pool, q);

  if (at <= now) {
    at = now + 1;
  }
  rp_pool_timer_set(pool, &q->timer, at);
}

void rp_query_finish(rp_pool *pool, rp_query *q, rp_tstamp now) {
  if (q->answered && q->nopen == 0) {
    rp_query_free(pool, q, now);
  } else {
    rp_query_schedule(pool, q, now);
  }
}

int rp_query_spill(rp_pool *pool, rp_query *q, rp_tstamp now) {
  uint32_t slot;
  rp_res *r;

  if (pool->set.load_balance != RP_BALANCE_AUTO ||
      q->ntries >= RP_CORE_MAX_TRIES) {
    return 0;
  }
  slot = rp_select_spill(pool, q, now);
  if (slot == RP_CORE_NONE) {
    return 0;
  }
  r = pool->res[slot];
  rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
              "ev=select q=%u srv=%u why=spill cost_ms=%.1f loss=%.3f "
              "cap_qps=%.1f band=%zu out=%zu",
              q->idx, r->slot, r->cost / RP_CORE_NS_PER_MS,
              rp_health_loss_ratio(&r->health), r->rl.cap, pool->band.len,
              pool->out.len);
  ++pool->stats.spills;
  return rp_try_send(pool, q, r, q->ntries == 0 ? RP_TRY_FIRST : RP_TRY_RESEND,
                     0, 0, now);
}

int rp_query_place(rp_pool *pool, rp_query *q, rp_try_kind kind,
                   rp_tstamp now) {
  uint32_t slot;
  int past_cap = 0, rv;
  rp_res *r;

  if (rp_pq_entry_queued(&q->e_wait)) {
    /* Already waiting (a down copy of it failed): rp_wait_drain places it. */
    return 0;
  }
  if (q->ntries >= RP_CORE_MAX_TRIES) {
    slot = RP_CORE_NONE;
  } else {
    slot = rp_select_primary(pool, q, now);
    if (slot == RP_CORE_NONE && pool->set.load_balance == RP_BALANCE_AUTO) {
      slot = rp_select_past_cap(pool, q, now);
      past_cap = slot != RP_CORE_NONE;
    }
  }
  if (slot != RP_CORE_NONE) {
    r = pool->res[slot];
    rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
                "ev=select q=%u srv=%u why=%s cost_ms=%.1f loss=%.3f "
                "cap_qps=%.1f band=%zu out=%zu",
                q->idx, r->slot,
                past_cap           ? "past_cap"
                : rp_res_proven(r) ? "band"
                                   : "unproven",
                r->cost / RP_CORE_NS_PER_MS, rp_health_loss_ratio(&r->health),
                r->rl.cap, pool->band.len, pool->out.len);
    rv = rp_try_send(pool, q, r, past_cap ? RP_TRY_PASTCAP : kind, 0, past_cap,
                     now);
    if (rv < 0) {
      return rv;
    }
    if (rv == 1) {
      if (kind == RP_TRY_FIRST && q->copies > 0) {
        rv = rp_fanout_arm(pool, q, r, now);
        if (rv < 0) {
          return rv;
        }
      }
      if (kind == RP_TRY_RESEND) {
        ++pool->stats.resends;
      }
      return 0;
    }
  }
  if (rp_query_live(q) > 0 || q->answered) {
    return 0;
  }
  rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
              "ev=select q=%u srv=none why=%s band=%zu token=%zu", q->idx,
              pool->set.wait_for_token ? "wait" : "fail", pool->band.len,
              pool->pastcap.len);
  if (rp_wait_hold(pool, q, now)) {
    return 0;
  }
  rv = rp_query_spill(pool, q, now);
  if (rv != 0) {
    return rv < 0 ? rv : 0;
  }
  return rp_query_fail(pool, q);
}

/* query_hedge_sent counts a hedge of |q| sent to |r|. */
static void query_hedge_sent(rp_pool *pool, rp_query *q, rp_res *r) {
  ++q->nhedges;
  ++r->hedges;
  ++pool->stats.hedges;
}

/* query_hedge_later re-arms the hedge of |t| that found no resolver with
   room while one that answered is up: it is tried again a hedge delay
   (at least token_wait) later, until one has room, instead of the query
   waiting out per_attempt. At a resolver that never replied (most
   likely dead) the room is a new one's probation slow start; at one
   that replied it is a token: a dropping resolver that took a burst
   holds every try of it, and with no later send there nothing overtakes
   them (the real MasterDnsVPN client's window stalled for per_attempt,
   2 s, at the start of three-limited-one-dead). */
static void query_hedge_later(rp_pool *pool, rp_try *t, rp_tstamp now) {
  rp_res *r = rp_pool_res(pool, t->res);
  rp_duration after;

  if (r == NULL || rp_pq_top(&pool->cost) == NULL) {
    return;
  }
  after = rp_try_hedge_after(pool, r, now);
  if (after != RP_TSTAMP_UNSET) {
    if (rp_res_proven(r) && after < pool->set.token_wait) {
      after = pool->set.token_wait;
    }
    t->hedged = 0;
    t->hedge_at = rp_tstamp_add(now, after);
  }
}

/* query_hedge_nudge sends |q| again to the resolver of its slow try |t|
   when no other has room and nothing went to that resolver since |t|
   (a try is judged lost only when a later one overtakes it): a dropper
   that took a burst and then nothing (the client's window full of the
   dropped queries) showed no drop until per_attempt. The nudge's answer
   overtakes the burst's dropped tries, which are then resent; a dropped
   nudge is nudged in turn, at most one a past_cap_interval. Returns 1
   when sent, 0 when not, or a fatal error. */
static int query_hedge_nudge(rp_pool *pool, rp_query *q, rp_try *t,
                             rp_tstamp now) {
  rp_res *r = rp_pool_res(pool, t->res);
  int rv;

  /* A lone slow try is a slow answer (test_core_timing_hedge_target);
     several silent ones after a burst, or at a resolver that lost
     lately, are drops. */
  if (r == NULL || r->down || !rp_res_proven(r) || r->last_used > t->sent ||
      (r->inflight < 2 &&
       !rp_health_lost_lately(&r->health, pool->set.lossy_recent, now)) ||
      now < rp_tstamp_add(t->sent, pool->set.past_cap_interval) ||
      q->ntries >= RP_CORE_MAX_TRIES ||
      r->inflight >= RP_CORE_RES_MAX_INFLIGHT ||
      (r->probation &&
       (pool->set.probation_strict || !rp_res_overflow_room(r)))) {
    return 0;
  }
  if (r->rl.cap > 0.0) {
    if (rp_ratelim_update(&r->rl, &pool->set, now)) {
      /* Lifted: its keys and place change (as at its token timer). */
      rp_select_unplace(pool, r);
      rp_select_refresh(pool, r, now);
      rp_select_place(pool, r, now);
    }
    if (r->rl.cap > 0.0 && !rp_ratelim_take(&r->rl)) {
      return 0;
    }
  }
  rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
              "ev=select q=%u srv=%u why=nudge", q->idx, r->slot);
  rv = rp_try_send(pool, q, r, RP_TRY_HEDGE, 0, 0, now);
  if (rv == 1) {
    query_hedge_sent(pool, q, r);
  }
  return rv;
}

/* query_hedge hedges the slow try |t| of |q| at |now|: to another
   resolver with room, else a nudge of its own resolver, else the hedge
   is tried again later. Returns 0 or a fatal error. */
static int query_hedge(rp_pool *pool, rp_query *q, rp_try *t, rp_tstamp now) {
  uint32_t slot;
  rp_res *r;
  int rv;

  t->hedged = 1;
  if (!rp_copies_may_extra(&pool->copies, &pool->set, now)) {
    ++pool->stats.extras_skipped;
    return 0;
  }
  /* Over hedge_max_inflight its answer would come on top of a full
     stream: no hedge, as when none has room; a dropper that took a
     burst is still nudged (test_core_caps_hedge_waits_for_room). */
  slot = pool->set.hedge_max_inflight > 0 &&
                 rp_fanout_inflight(pool) > pool->set.hedge_max_inflight
             ? RP_CORE_NONE
             : rp_select_hedge(pool, q, t->res, now);
  if (slot == RP_CORE_NONE) {
    rv = query_hedge_nudge(pool, q, t, now);
    if (rv < 0) {
      return rv;
    }
    if (rv == 0) {
      query_hedge_later(pool, t, now);
    }
    return 0;
  }
  r = pool->res[slot];
  rv = rp_try_send(pool, q, r, RP_TRY_HEDGE, 0, 0, now);
  if (rv < 0) {
    return rv;
  }
  if (rv == 1) {
    query_hedge_sent(pool, q, r);
  }
  return 0;
}

/* query_try_service runs the due events of the open try |t| of |q| at
   |now|: its expiry, its judgement as overtaken, its stale mark, its
   hedge. Returns 0 or a fatal error. */
static int query_try_service(rp_pool *pool, rp_query *q, rp_try *t,
                             rp_tstamp now) {
  int rv;

  if (now >= t->expire_at) {
    return rp_try_expired(pool, q, t, now);
  }
  rv = rp_try_check_judge(pool, t, now);
  if (rv != 0) {
    return rv < 0 ? rv : 0;
  }
  if (rp_try_may_stale(pool, t) && now >= rp_try_stale_at(pool, t)) {
    rp_try_stale(pool, t, now);
  }
  if (!q->answered && !t->hedged && t->hedge_at != RP_TSTAMP_UNSET &&
      now >= t->hedge_at && q->nhedges < pool->set.max_hedges) {
    return query_hedge(pool, q, t, now);
  }
  return 0;
}

int rp_query_service(rp_pool *pool, rp_query *q, rp_tstamp now) {
  size_t i, n;
  int rv;

  if (now >= q->deadline_at) {
    rv = rp_query_fail(pool, q);
    rp_query_free(pool, q, now);
    return rv;
  }
  rv = rp_wait_expired(pool, q, now);
  if (rv < 0) {
    return rv;
  }
  if (!q->answered && q->copy_at != RP_TSTAMP_UNSET && now >= q->copy_at) {
    rv = rp_fanout_send(pool, q, now);
    if (rv < 0) {
      return rv;
    }
  }
  n = q->ntries;
  for (i = 0; i < n; ++i) {
    if (!q->tries[i].open) {
      continue;
    }
    rv = query_try_service(pool, q, &q->tries[i], now);
    if (rv < 0) {
      return rv;
    }
  }
  rp_query_finish(pool, q, now);
  return 0;
}

void rp_query_table_init(rp_pool *pool) {
  size_t i;

  for (i = 0; i < pool->set.max_inflight; ++i) {
    rp_query *q = &pool->queries[i];

    q->idx = (uint32_t)i;
    q->buf = pool->qbufs + i * pool->set.max_query_len;
    rp_pq_entry_init(&q->timer.pe);
    q->timer.kind = RP_TIMER_QUERY;
    rp_pq_entry_init(&q->e_wait);
    rp_list_push_back(&pool->free_q, &q->node);
  }
}

rp_query *rp_query_start(rp_pool *pool, const uint8_t *query, size_t len,
                         const rp_client *client, uint16_t client_id,
                         const rp_dns_question *question, rp_tstamp now) {
  rp_query *q = rp_container_of(pool->free_q.next, rp_query, node);

  rp_list_remove(&q->node);
  rp_list_push_back(&pool->live_q, &q->node);
  ++pool->ninflight;
  memcpy(q->buf, query, len);
  q->len = len;
  q->client = *client;
  q->client_id = client_id;
  q->question = *question;
  q->submitted = now;
  q->deadline_at = rp_tstamp_add(now, pool->set.deadline);
  q->wait_until = RP_TSTAMP_UNSET;
  q->wait_end = RP_TSTAMP_UNSET;
  q->copy_at = RP_TSTAMP_UNSET;
  q->active = 1;
  q->answered = 0;
  q->ntries = 0;
  q->nopen = 0;
  q->nhedges = 0;
  q->waited = 0;
  q->nstreams = 0;
  q->had_copy = 0;
  q->linger = 0;
  q->copy_stack = 0;
  q->nseen = 0;
  q->case_ok = (uint8_t)(rp_pool_case_active(pool) &&
                         rp_case_eligible(query, len, question));
  return q;
}
