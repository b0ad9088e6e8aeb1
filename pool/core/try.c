/*
 * try.c: see try.h.
 */
#include "core.h"
#include "try.h"
#include "query.h"
#include "fanout.h"
#include "res.h"
#include "select.h"

#include <assert.h>
#include <string.h>

/* TRY_PROBATION_STALE is how many tries per probation may be marked
   stale. */
#define TRY_PROBATION_STALE 8

/* try_case_on returns 1 if a send of |q| to |r| with |sflags| goes
   with a 0x20 name: datagrams only (case.h). */
static int try_case_on(const rp_query *q, const rp_res *r, uint32_t sflags) {
  return q->case_ok && !(sflags & RP_SEND_STREAM) &&
         !(r->flags & RP_RESOLVER_STREAM);
}

void rp_try_close(rp_pool *pool, rp_query *q, rp_try *t, rp_tstamp now) {
  rp_res *r = rp_pool_res(pool, t->res);

  assert(t->open);
  t->open = 0;
  --q->nopen;
  rp_query_linger_sync(pool, q);
  rp_list_remove(&t->res_node);
  if (r == NULL) {
    return;
  }
  rp_idmap_del(&pool->ids, r->slot, t->upstream_id);
  --r->inflight;
  if (t->stale) {
    --r->stale;
  }
  rp_select_probation_sync(pool, r, now);
}

/* try_rto returns |r|'s mean latency + hedge_devs deviations (of the
   cheapest resolver while |r|'s is unknown), or RP_TSTAMP_UNSET while
   no resolver's is known. */
static rp_duration try_rto(const rp_pool *pool, const rp_res *r) {
  const rp_settings *set = &pool->set;
  rp_duration rto = rp_rtt_rto(&r->rtt, set->hedge_devs, set->hedge_min_dev);
  const rp_pq_entry *pe;

  if (rto == RP_TSTAMP_UNSET) {
    pe = rp_pq_top(&pool->cost);
    if (pe != NULL) {
      rto = rp_rtt_rto(&rp_container_of_const(pe, rp_res, e_cost)->rtt,
                       set->hedge_devs, set->hedge_min_dev);
    }
  }
  return rto;
}

/* try_latest_late returns the latency of |r|'s latest late answer of the last
   late_window at |now|, or 0 (none, or late_window 0). */
static rp_duration try_latest_late(const rp_pool *pool, const rp_res *r,
                                   rp_tstamp now) {
  return pool->set.late_window > 0
             ? rp_rtt_late(&r->rtt, now, pool->set.late_window)
             : 0;
}

/* try_judge_after returns how long after a send at |r| an overtaken
   try is judged lost at |now|: try_rto, and not sooner than its latest
   late answer (try_latest_late); RP_TSTAMP_UNSET while no latency is known. */
static rp_duration try_judge_after(const rp_pool *pool, const rp_res *r,
                                   rp_tstamp now) {
  rp_duration after = try_rto(pool, r), late = try_latest_late(pool, r, now);

  return after != RP_TSTAMP_UNSET && late > after ? late : after;
}

rp_duration rp_try_hedge_after(rp_pool *pool, const rp_res *r, rp_tstamp now) {
  const rp_settings *set = &pool->set;
  rp_duration rto = try_rto(pool, r);
  rp_duration fastest = rp_rtt_fastest(&r->rtt), early;

  if (rto == RP_TSTAMP_UNSET && set->hedge_initial > 0) {
    rto = set->hedge_initial;
  }
  if (fastest != RP_TSTAMP_UNSET &&
      rp_health_lost_lately(&r->health, set->lossy_recent, now)) {
    early = (rp_duration)(set->early_hedge_rtts * (double)fastest);
    if (early < set->hedge_min_dev) {
      /* Not sooner than the deviation term of a normal hedge: at a 60 us
         loopback resolver twice the fastest answer hedged every query,
         and the doubled load lost more. */
      early = set->hedge_min_dev;
    }
    if (rto == RP_TSTAMP_UNSET || early < rto) {
      rto = early;
    }
  }
  if (rto == RP_TSTAMP_UNSET || rto >= set->per_attempt) {
    return RP_TSTAMP_UNSET;
  }
  return rto;
}

int rp_try_kind_hedged(rp_try_kind kind) {
  switch (kind) {
  case RP_TRY_FIRST:
  case RP_TRY_RESEND:
  case RP_TRY_HEDGE:
  case RP_TRY_PASTCAP:
  case RP_TRY_STREAM:
    return 1;
  case RP_TRY_COPY:
  case RP_TRY_RETRY:
  case RP_TRY_DOWNCOPY:
    break;
  }
  return 0;
}

void rp_try_hedge_known(rp_pool *pool, rp_tstamp now) {
  rp_list *n;
  rp_query *q;
  rp_try *t;
  rp_res *r;
  rp_duration after;
  rp_tstamp at;
  size_t i;
  int changed;

  for (n = pool->live_q.next; n != &pool->live_q; n = n->next) {
    q = rp_container_of(n, rp_query, node);
    if (q->answered) {
      continue;
    }
    changed = 0;
    for (i = 0; i < q->ntries; ++i) {
      t = &q->tries[i];
      r = rp_pool_res(pool, t->res);
      if (!t->open || t->hedged || !rp_try_kind_hedged((rp_try_kind)t->kind) ||
          r == NULL) {
        continue;
      }
      after = rp_try_hedge_after(pool, r, now);
      if (after == RP_TSTAMP_UNSET) {
        continue;
      }
      at = rp_tstamp_add(t->sent, after);
      if (t->hedge_at == RP_TSTAMP_UNSET || at < t->hedge_at) {
        t->hedge_at = at;
        changed = 1;
      }
    }
    if (changed) {
      rp_query_schedule(pool, q, now);
    }
  }
}

/* try_draw_id draws an upstream ID for the next try of |q| at |r| that
   no open try or probe of |r| holds, and enters it in the ID map.
   Returns 1 with the ID in |*pid|, or 0 when none was found in
   RP_CORE_ID_DRAWS draws (or the map is full). */
static int try_draw_id(rp_pool *pool, rp_query *q, rp_res *r, uint16_t *pid) {
  uint16_t id = 0;
  int i, rv;

  for (i = 0; i < RP_CORE_ID_DRAWS; ++i) {
    id = rp_pool_rand16(pool);
    rv = rp_idmap_insert(
        &pool->ids, r->slot, id,
        (rp_idmap_value){.query = q->idx, .try_index = q->ntries});
    if (rv == 0) {
      break;
    }
    if (rv < 0) {
      return 0;
    }
  }
  if (i == RP_CORE_ID_DRAWS) {
    return 0;
  }
  *pid = id;
  return 1;
}

/* try_arm sets the hedge and judge times of |t|, a try of |kind| sent
   to |r| at |now|. */
static void try_arm(rp_pool *pool, rp_try *t, const rp_res *r, rp_try_kind kind,
                    rp_tstamp now) {
  rp_duration after;

  if (rp_try_kind_hedged(kind)) {
    after = rp_try_hedge_after(pool, r, now);
    if (after != RP_TSTAMP_UNSET) {
      t->hedge_at = rp_tstamp_add(now, after);
    }
  }
  if (kind != RP_TRY_DOWNCOPY && kind != RP_TRY_STREAM && !r->down) {
    /* A datagram try is judged lost at the resolver's mean + 4
       deviations (or its latest late answer) if a later one overtook it
       (rp_try_judge). */
    after = try_judge_after(pool, r, now);
    if (after != RP_TSTAMP_UNSET && after < pool->set.per_attempt) {
      t->judge_at = rp_tstamp_add(now, after);
    }
  }
}

/* try_note_send counts a send of |kind| to |r| at |now|: its place in
   the LRU and strategy orders, its rate limit, the counters and the
   budget on extra sends. */
static void try_note_send(rp_pool *pool, rp_res *r, rp_try_kind kind,
                          int past_cap, rp_tstamp now) {
  rp_select_used(pool, r, now);
  rp_ratelim_on_send(&r->rl, &pool->set, past_cap, now);
  if (past_cap) {
    rp_select_past_cap_used(pool, r);
  }
  ++r->sent;
  ++pool->stats.sends;
  if (kind == RP_TRY_FIRST || kind == RP_TRY_COPY || kind == RP_TRY_HEDGE) {
    rp_copies_on_send(&pool->copies, &pool->set, kind != RP_TRY_FIRST, now);
  }
}

int rp_try_send(rp_pool *pool, rp_query *q, rp_res *r, rp_try_kind kind,
                uint32_t sflags, int past_cap, rp_tstamp now) {
  rp_try *t;
  uint16_t id = 0;
  int rv;

  if (q->ntries >= RP_CORE_MAX_TRIES || !try_draw_id(pool, q, r, &id)) {
    return 0;
  }
  t = &q->tries[q->ntries++];
  *t = (rp_try){
      .query = q,
      .sent = now,
      .hedge_at = RP_TSTAMP_UNSET,
      .expire_at = rp_tstamp_add(now, pool->set.per_attempt),
      .judge_at = RP_TSTAMP_UNSET,
      .res = r->slot,
      .upstream_id = id,
      .kind = (uint8_t)kind,
      .open = 1,
      .hedged = 0,
      .past_cap = (uint8_t)(past_cap != 0),
  };
  rp_list_push_back(&r->tries, &t->res_node);
  ++q->nopen;
  ++r->inflight;
  try_arm(pool, t, r, kind, now);
  try_note_send(pool, r, kind, past_cap, now);
  rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_TX, now,
              "ev=send srv=%u id=%u kind=%d q=%u try=%u", r->slot, id,
              (int)kind, q->idx, (unsigned)(q->ntries - 1));
  rp_dns_set_id(q->buf, id);
  if (try_case_on(q, r, sflags)) {
    /* Each try its own pattern; the client's bytes are written back
       after the send (case.h). */
    t->case_seed = rp_pool_rand64(pool);
    t->case_flags =
        (uint8_t)(RP_CASE_ON | rp_case_apply(q->buf + RP_DNS_HEADER_LEN,
                                             q->question.name.len,
                                             t->case_seed));
  }
  rv = pool->cb.send_query(pool, r->slot, r->user_data, id, q->buf, q->len,
                           sflags, now, pool->user_data);
  rp_dns_set_id(q->buf, q->client_id);
  if (t->case_flags & RP_CASE_ON) {
    memcpy(q->buf + RP_DNS_HEADER_LEN, q->question.name.wire,
           q->question.name.len);
  }
  if (rv != 0) {
    return RP_ERR_CALLBACK_FAILURE;
  }
  return 1;
}

int rp_try_may_stale(const rp_pool *pool, const rp_try *t) {
  const rp_res *r = rp_pool_res(pool, t->res);

  return r != NULL && r->probation && !t->stale && !t->judged &&
         t->kind != RP_TRY_DOWNCOPY && t->kind != RP_TRY_STREAM &&
         r->stale_used < TRY_PROBATION_STALE &&
         (uint64_t)r->stale_used <= r->replies && !r->prob_failed;
}

rp_tstamp rp_try_stale_at(const rp_pool *pool, const rp_try *t) {
  rp_tstamp floor = rp_tstamp_add(t->sent, pool->set.past_cap_interval);

  return t->judge_at != RP_TSTAMP_UNSET && t->judge_at > floor ? t->judge_at
                                                               : floor;
}

void rp_try_stale(rp_pool *pool, rp_try *t, rp_tstamp now) {
  rp_res *r = rp_pool_res(pool, t->res);

  if (!rp_try_may_stale(pool, t)) {
    return;
  }
  ++r->stale_used;
  t->stale = 1;
  ++r->stale;
  /* Nothing is judged: an unanswered try may be a poll the tunnel
     server holds. If it was lost, the next try overtakes it and it is
     judged then (rp_try_judge). stale_caps restores the old rule that
     capped the resolver here, reading a held poll as a burst limit met
     (docs/simulator.md, "The stale-cap fixture"). */
  if (pool->set.stale_caps &&
      rp_ratelim_on_stale(&r->rl, &pool->set, t->sent, now)) {
    rp_pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CAP, now,
                "ev=cap srv=%u why=stale cap_qps=%.1f", r->slot, r->rl.cap);
  }
  rp_select_probation_sync(pool, r, now);
}

int rp_try_judge(rp_pool *pool, rp_try *t, int overtaken, rp_tstamp now) {
  rp_query *q = t->query;
  rp_res *r = rp_pool_res(pool, t->res);
  int rv = 0;

  assert(t->open && !t->judged && r != NULL);
  t->judged = 1;
  rp_query_linger_sync(pool, q);
  t->hedged = 1;
  rp_list_remove(&t->res_node);
  rp_list_push_back(&r->lost, &t->res_node);
  if (!t->stale) {
    t->stale = 1;
    ++r->stale;
  }
  if (overtaken) {
    rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_RX, now,
                "ev=lost srv=%u id=%u q=%u why=overtaken sent=%.6f newest=%.6f",
                r->slot, t->upstream_id, q->idx,
                (double)t->sent / RP_CORE_NS_PER_S,
                (double)r->newest_reply_sent / RP_CORE_NS_PER_S);
    t->judged_drop = rp_res_failed(pool, r, t->sent, 1, 1, now) > 0
                         ? RP_JUDGED_LOSS
                         : RP_JUDGED_RATE;
  }
  rp_select_probation_sync(pool, r, now);
  if (!q->answered && rp_query_live(q) == 0 &&
      !rp_pq_entry_queued(&q->e_wait) && now < q->deadline_at) {
    rv = rp_query_place(pool, q, RP_TRY_RESEND, now);
  }
  return rv;
}

void rp_try_late(rp_pool *pool, rp_res *r, const rp_try *t, rp_duration lat,
                 rp_tstamp now) {
  ++r->late;
  ++pool->stats.late;
  /* The judgement's delay learns from late answers only with a window;
     what the judgement counted is taken back whatever the window: an
     answered query was not lost. */
  if (pool->set.late_window > 0) {
    rp_rtt_late_add(&r->rtt, lat, now, pool->set.late_window);
  }
  if (t->judged_drop == RP_JUDGED_LOSS) {
    rp_health_late(&r->health, pool->set.loss_window, now);
  }
  if (rp_ratelim_on_late(&r->rl, &pool->set, t->sent, now)) {
    rp_pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CAP, now,
                "ev=cap srv=%u why=late cap_qps=%.1f late=%u/%u", r->slot,
                r->rl.cap, r->rl.exp_late, r->rl.exp_drops);
  }
}

int rp_try_judge_overtaken(rp_pool *pool, rp_res *r, rp_tstamp now) {
  rp_duration rto = RP_TSTAMP_UNSET;
  rp_try *t;
  int rv;

  while (!rp_list_empty(&r->tries)) {
    t = rp_container_of(r->tries.next, rp_try, res_node);
    if (t->sent >= r->newest_reply_sent || t->kind == RP_TRY_STREAM ||
        t->kind == RP_TRY_DOWNCOPY) {
      break;
    }
    /* Most replies find the head not overtaken: the latency is read
       only when one is. */
    if (rto == RP_TSTAMP_UNSET) {
      rto = try_judge_after(pool, r, now);
      if (rto == RP_TSTAMP_UNSET || rto >= pool->set.per_attempt) {
        break;
      }
    }
    if (now < rp_tstamp_add(t->sent, rto)) {
      break;
    }
    rv = rp_try_judge(pool, t, 1, now);
    rp_query_finish(pool, t->query, now);
    if (rv < 0) {
      return rv;
    }
  }
  return 0;
}

int rp_try_expired(rp_pool *pool, rp_query *q, rp_try *t, rp_tstamp now) {
  rp_res *r = rp_pool_res(pool, t->res);
  rp_tstamp sent = t->sent;
  int judged = t->judged, kind = t->kind;

  rp_try_close(pool, q, t, now);
  /* A stream try that expired says the resolver's stream service stalls,
     nothing of its UDP rate: counted as a drop overtaken by the UDP
     answers, a burst of them capped a resolver that answered every UDP
     query (test_core_pool_truncation_stream_stall). The query goes on
     over UDP, and tc_stream_tries bounds what a stall costs it. */
  if (r != NULL && !judged && kind != RP_TRY_STREAM) {
    rp_res_failed(pool, r, sent, 1, sent < r->newest_reply_sent, now);
  }
  if (!q->answered && q->nopen == 0 && now < q->deadline_at) {
    return rp_query_place(pool, q, RP_TRY_RESEND, now);
  }
  return 0;
}

int rp_try_check_judge(rp_pool *pool, rp_try *t, rp_tstamp now) {
  rp_res *tr;
  rp_duration late;
  int rv;

  if (t->judged || t->judge_checked || t->judge_at == RP_TSTAMP_UNSET ||
      now < t->judge_at) {
    return 0;
  }
  tr = rp_pool_res(pool, t->res);
  late = tr != NULL ? try_latest_late(pool, tr, now) : 0;
  if (late > 0 && late < pool->set.per_attempt &&
      now < rp_tstamp_add(t->sent, late)) {
    /* A late answer since its send holds it back. */
    t->judge_at = rp_tstamp_add(t->sent, late);
    return 0;
  }
  t->judge_checked = 1;
  if (tr != NULL && t->sent < tr->newest_reply_sent &&
      late < pool->set.per_attempt) {
    rv = rp_try_judge(pool, t, 1, now);
    return rv < 0 ? rv : 1;
  }
  return 0;
}
