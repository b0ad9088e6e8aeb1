/*
 * down.c: see down.h.
 */
#include "core.h"
#include "down.h"
#include "res.h"
#include "try.h"
#include "query.h"
#include "answer.h"
#include "select.h"

#include <string.h>

/* DOWN_SCAN is how many of the newest live queries are looked at for a
   copy to a down resolver. */
#define DOWN_SCAN 8
/* DOWN_ROOM is how many tries a query keeps free when it carries copies
   to down resolvers. */
#define DOWN_ROOM 6

void rp_down_enter(rp_pool *pool, rp_res *r, rp_tstamp now) {
  rp_select_set_down(pool, r);
  r->down = 1;
  --pool->nup;
  rp_res_prob_sync(pool, r);
  rp_res_ring_leave(pool, r);
  rp_select_refresh(pool, r, now);
  r->last_down_copy = now;
  r->last_probe = now;
  rp_pool_timer_set(pool, &r->timer,
                    rp_tstamp_add(now, pool->set.down_copy_interval));
  rp_pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_SEL, now,
              "ev=down srv=%u name=%s fails=%u", r->slot, r->name,
              r->health.fails_in_row);
}

int rp_down_leave(rp_pool *pool, rp_res *r, rp_tstamp now) {
  if (!r->down) {
    return 0;
  }
  rp_pool_timer_set(pool, &r->timer, RP_TSTAMP_UNSET);
  if (rp_list_linked(&r->down_node)) {
    rp_list_remove(&r->down_node);
  }
  r->down = 0;
  rp_select_unplace(pool, r);
  ++pool->nup;
  r->prob_failed = 0;
  rp_res_prob_sync(pool, r);
  /* What it lost while down (and the tries sent then that are still
     open) says nothing about it now that it answers again: a revived
     resolver starts with a clean loss record and no cap. */
  r->up_at = now;
  rp_health_revive(&r->health);
  rp_ratelim_revive(&r->rl);
  rp_list_push_back(&pool->rr_ring, &r->rr_node);
  rp_select_refresh(pool, r, now);
  rp_select_place(pool, r, now);
  rp_pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_SEL, now, "ev=up srv=%u name=%s",
              r->slot, r->name);
  return 1;
}

void rp_down_note_query(rp_pool *pool, const uint8_t *query, size_t len,
                        const rp_client *client) {
  memcpy(pool->last_q, query, len);
  pool->last_q_len = len;
  pool->last_client = *client;
}

void rp_down_probe_lost(rp_pool *pool, rp_res *r, rp_tstamp now) {
  rp_idmap_del(&pool->ids, r->slot, r->probe_id);
  r->probe_open = 0;
  rp_health_loss(&r->health, pool->set.loss_window, 1, 1,
                 pool->set.score_failure, now);
}

/* down_probe_deliver hands the answer |answer| (|len| bytes, |cased|
   when the probe went with a 0x20 name) to the client whose query the
   probe of |r| copied, as an extra answer. Returns 0 or
   RP_ERR_CALLBACK_FAILURE. */
static int down_probe_deliver(rp_pool *pool, rp_res *r, const uint8_t *answer,
                              size_t len, int cased, rp_tstamp now) {
  if (cased) {
    rp_case_restore(pool->scratch, answer, len, &r->probe_q.name);
  } else {
    memcpy(pool->scratch, answer, len);
  }
  rp_dns_set_id(pool->scratch, r->probe_client_id);
  ++pool->stats.duplicates_delivered;
  if (pool->cb.deliver(pool, &r->probe_client, pool->scratch, len,
                       RP_DELIVER_EXTRA, now, pool->user_data) != 0) {
    return RP_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

int rp_down_probe_answer(rp_pool *pool, rp_res *r, const rp_dns_brief *msg,
                         const uint8_t *answer, size_t len, rp_tstamp now) {
  int cased = (r->probe_case_flags & RP_CASE_ON) != 0;
  rp_case_verdict verdict =
      rp_case_answer(&r->probe_q, r->probe_case_flags, r->probe_case_seed,
                     &msg->question, answer, len);
  uint8_t rcode;
  int rv;

  if (verdict == RP_CASE_OTHER) {
    ++pool->stats.spoofed;
    return RP_ANSWER_THEN_DONE;
  }
  if (cased && !rp_answer_case(pool, r, &r->probe_case_flags, verdict, now)) {
    return RP_ANSWER_THEN_DONE;
  }
  rp_idmap_del(&pool->ids, r->slot, r->probe_id);
  r->probe_open = 0;
  ++r->answered;
  rp_res_reply(pool, r, r->probe_sent, pool->set.score_answer, now);
  rp_select_refresh(pool, r, now);
  rcode = rp_dns_rcode(answer);
  if (r->probe_copy && rcode != RP_DNS_RCODE_REFUSED &&
      rcode != RP_DNS_RCODE_SERVFAIL) {
    rv = down_probe_deliver(pool, r, answer, len, cased, now);
    if (rv < 0) {
      return rv;
    }
  }
  return RP_ANSWER_THEN_OVERTAKE;
}

void rp_down_forget(rp_pool *pool, rp_res *r) {
  if (r->probe_open) {
    rp_idmap_del(&pool->ids, r->slot, r->probe_id);
  }
  if (rp_list_linked(&r->down_node)) {
    rp_list_remove(&r->down_node);
  }
}

/* down_probe sends a standalone probe to the down resolver |r|: a copy
   of the most recent client query, else a query for probe_name. */
static int down_probe(rp_pool *pool, rp_res *r, rp_tstamp now) {
  rp_dns_name name;
  rp_dns_brief msg;
  rp_ssize n;
  uint16_t id = 0;
  size_t len;
  int i;

  if (r->probe_open) {
    return 0;
  }
  for (i = 0; i < RP_CORE_ID_DRAWS; ++i) {
    id = rp_pool_rand16(pool);
    if (rp_idmap_get(&pool->ids, r->slot, id) == NULL) {
      break;
    }
  }
  if (i == RP_CORE_ID_DRAWS) {
    return 0;
  }
  /* A probe for probe_name carries no tunnel data; a copy of a client
     query does, so its answer is handed to that client. */
  r->probe_copy = 0;
  if (pool->set.probe_name[0] != '\0' &&
      rp_dns_name_from_text(&name, pool->set.probe_name) == 0) {
    n = rp_dns_build_query(pool->scratch, RP_DNS_MAX_MSG_LEN, id, &name,
                           pool->set.probe_qtype, RP_DNS_EDNS_UDP_SIZE);
    if (n < 0) {
      return 0;
    }
    len = (size_t)n;
  } else if (pool->last_q_len > 0) {
    memcpy(pool->scratch, pool->last_q, pool->last_q_len);
    len = pool->last_q_len;
    r->probe_copy = 1;
    r->probe_client = pool->last_client;
    r->probe_client_id = rp_dns_get_id(pool->last_q);
    rp_dns_set_id(pool->scratch, id);
  } else {
    return 0;
  }
  if (rp_dns_parse_brief(&msg, pool->scratch, len) != 0 || !msg.has_question) {
    return 0;
  }
  r->probe_q = msg.question;
  r->probe_case_flags = 0;
  if (rp_pool_case_active(pool) && !(r->flags & RP_RESOLVER_STREAM) &&
      rp_case_eligible(pool->scratch, len, &msg.question)) {
    r->probe_case_seed = rp_pool_rand64(pool);
    r->probe_case_flags =
        (uint8_t)(RP_CASE_ON | rp_case_apply(pool->scratch + RP_DNS_HEADER_LEN,
                                             msg.question.name.len,
                                             r->probe_case_seed));
  }
  if (rp_idmap_put(&pool->ids, r->slot, id,
                   (rp_idmap_value){.query = RP_IDMAP_PROBE, .try_index = 0}) !=
      0) {
    return 0;
  }
  r->probe_open = 1;
  r->probe_id = id;
  r->probe_sent = now;
  r->last_probe = now;
  ++r->probes;
  ++r->sent;
  ++pool->stats.probes;
  ++pool->stats.sends;
  if (pool->cb.send_query(pool, r->slot, r->user_data, id, pool->scratch, len,
                          RP_SEND_PROBE, now, pool->user_data) != 0) {
    return RP_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

/* down_may_copy returns 1 if the live query |q| may carry a copy to
   a down resolver: unanswered, with room left for its own hedges and
   resends, and no such copy yet. One a query: with thousands of down
   resolvers (listed unchecked), a copy a second to each filled every
   query's tries and multiplied the load by its number of tries. */
static int down_may_copy(const rp_query *q) {
  size_t i;

  if (q->answered || q->ntries + DOWN_ROOM >= RP_CORE_MAX_TRIES) {
    return 0;
  }
  for (i = 0; i < q->ntries; ++i) {
    if (q->tries[i].kind == RP_TRY_DOWNCOPY) {
      return 0;
    }
  }
  return 1;
}

int rp_down_timer(rp_pool *pool, rp_res *r, rp_tstamp now) {
  rp_list *n;
  rp_query *q, *pick = NULL;
  size_t scanned = 0;
  int rv = 0;
  /* One that never replied is probed when idle only while no resolver
     is up (a lone resolver unreachable at start): with 10 000 dead ones
     listed unchecked beside a live one, idle probes would be 2 000
     datagrams a second with no client query to serve. */
  int idle_probe = rp_res_proven(r) || pool->nup == 0;

  if (r->probe_open &&
      rp_tstamp_elapsed(r->probe_sent, pool->set.per_attempt, now)) {
    ++r->dropped;
    rp_down_probe_lost(pool, r, now);
  }
  if (rp_tstamp_elapsed(r->last_down_copy, pool->set.down_copy_interval, now)) {
    for (n = pool->live_q.prev; n != &pool->live_q && scanned < DOWN_SCAN;
         n = n->prev, ++scanned) {
      q = rp_container_of(n, rp_query, node);
      if (down_may_copy(q) && !rp_select_has_open(q, r->slot)) {
        pick = q;
        break;
      }
    }
    if (pick != NULL) {
      if (rp_list_linked(&r->down_node)) {
        rp_list_remove(&r->down_node);
      }
      rv = rp_try_send(pool, pick, r, RP_TRY_DOWNCOPY, RP_SEND_PROBE, 0, now);
      if (rv == 1) {
        r->last_down_copy = now;
        ++r->probes;
        ++pool->stats.probes;
        rp_query_schedule(pool, pick, now);
        rv = 0;
      }
    } else {
      /* The copy goes with the next client query (rp_pool_submit): one
         that answered before first, as it is the likelier to be back. */
      if (!rp_list_linked(&r->down_node)) {
        if (rp_res_proven(r)) {
          rp_list_push_front(&pool->down_wait, &r->down_node);
        } else {
          rp_list_push_back(&pool->down_wait, &r->down_node);
        }
      }
      if (idle_probe && rp_list_empty(&pool->live_q) &&
          (r->last_probe == RP_TSTAMP_UNSET ||
           rp_tstamp_elapsed(r->last_probe, pool->set.probe_interval, now))) {
        rv = down_probe(pool, r, now);
      }
    }
  }
  if (r->down && rp_list_linked(&r->down_node) && !idle_probe) {
    /* Nothing to do until a client query comes (rp_down_copy_new re-arms
       the timer): no wake-up a second for each of thousands. */
    rp_pool_timer_set(pool, &r->timer, RP_TSTAMP_UNSET);
  } else if (r->down) {
    rp_tstamp at = rp_tstamp_add(now, pool->set.down_copy_interval);

    if (r->last_down_copy != RP_TSTAMP_UNSET) {
      rp_tstamp due =
          rp_tstamp_add(r->last_down_copy, pool->set.down_copy_interval);
      if (due > now) {
        at = due;
      }
    }
    if (rp_list_linked(&r->down_node) && r->last_probe != RP_TSTAMP_UNSET) {
      /* Waiting for a live query: next, the idle probe. */
      at = rp_tstamp_add(r->last_probe, pool->set.probe_interval);
      if (at <= now) {
        at = rp_tstamp_add(now, pool->set.down_copy_interval);
      }
    }
    if (r->probe_open) {
      at = rp_tstamp_min(at,
                         rp_tstamp_add(r->probe_sent, pool->set.per_attempt));
    }
    rp_pool_timer_set(pool, &r->timer, at);
  }
  return rv < 0 ? rv : 0;
}

int rp_down_copy_new(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_res *r;
  int rv;

  if (rp_list_empty(&pool->down_wait) || !down_may_copy(q)) {
    return 0;
  }
  r = rp_container_of(pool->down_wait.next, rp_res, down_node);
  rv = rp_try_send(pool, q, r, RP_TRY_DOWNCOPY, RP_SEND_PROBE, 0, now);
  if (rv < 0) {
    return rv;
  }
  if (rv == 1) {
    rp_list_remove(&r->down_node);
    r->last_down_copy = now;
    ++r->probes;
    ++pool->stats.probes;
    rp_pool_timer_set(pool, &r->timer,
                      rp_tstamp_add(now, pool->set.down_copy_interval));
  }
  return 0;
}
