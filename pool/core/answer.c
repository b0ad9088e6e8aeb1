/*
 * answer.c: see answer.h.
 */
#include "core.h"
#include "answer.h"
#include "try.h"
#include "query.h"
#include "res.h"
#include "select.h"

#include <string.h>

int rp_answer_refusal(rp_pool *pool, rp_query *q, rp_try *t, rp_res *r,
                      rp_tstamp now) {
  rp_tstamp sent = t->sent;

  rp_try_close(pool, q, t, now);
  ++r->refused;
  if (rp_ratelim_on_refusal(&r->rl, &pool->set, sent, now)) {
    rp_pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CAP, now,
                "ev=cap srv=%u why=refusal cap_qps=%.1f", r->slot, r->rl.cap);
  }
  rp_res_reply(pool, r, sent, pool->set.score_refusal, now);
  if (r->probation && !r->prob_failed) {
    /* A refuser will not soon take the queries that wait for it. */
    r->prob_failed = 1;
    rp_res_prob_sync(pool, r);
  }
  rp_select_refresh(pool, r, now);
  if (!q->answered && q->wait_until == RP_TSTAMP_UNSET) {
    return rp_query_place(pool, q, RP_TRY_RESEND, now);
  }
  return 0;
}

int rp_answer_neterr(rp_pool *pool, rp_query *q, rp_try *t, rp_res *r,
                     rp_tstamp now) {
  rp_tstamp sent = t->sent;

  rp_try_close(pool, q, t, now);
  rp_res_failed(pool, r, sent, 0, 0, now);
  if (!q->answered && q->wait_until == RP_TSTAMP_UNSET) {
    return rp_query_place(pool, q, RP_TRY_RESEND, now);
  }
  return 0;
}

int rp_answer_case(rp_pool *pool, rp_res *r, uint8_t *pflags,
                   rp_case_verdict verdict, rp_tstamp now) {
  int first;

  if (verdict == RP_CASE_MATCH) {
    if (rp_case_res_match(&r->cs, *pflags, now)) {
      rp_pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_RX, now,
                  "ev=case_strict srv=%u name=%s why=proof", r->slot, r->name);
    }
    return 1;
  }
  ++pool->stats.case_mismatches;
  first = !(*pflags & RP_CASE_MISSED);
  *pflags |= RP_CASE_MISSED;
  if (rp_case_res_mismatch(&r->cs, first, &pool->set, now)) {
    ++pool->stats.case_fallbacks;
    rp_pool_log(pool, RP_LOG_WARN, RP_LOG_CAT_RX, now,
                "ev=case_fallback srv=%u name=%s misses=%u why=another_case",
                r->slot, r->name, r->cs.misses);
  }
  if (r->cs.mode == RP_CASE_FALLBACK) {
    return 1;
  }
  ++pool->stats.spoofed;
  rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_RX, now,
              "ev=case_mismatch srv=%u misses=%u", r->slot, r->cs.misses);
  return 0;
}

int rp_answer_error(rp_pool *pool, rp_res *r, rp_try *t, rp_outcome outcome,
                    rp_tstamp now) {
  rp_query *q = t->query;
  int rv = 0;

  switch (outcome) {
  case RP_OUTCOME_OK:
    return 0;
  case RP_OUTCOME_TIMEOUT:
    rv = rp_try_expired(pool, q, t, now);
    break;
  case RP_OUTCOME_SERVFAIL:
  case RP_OUTCOME_REFUSED:
  case RP_OUTCOME_HTTP_429:
    rv = rp_answer_refusal(pool, q, t, r, now);
    break;
  case RP_OUTCOME_FORMERR:
  case RP_OUTCOME_MALFORMED:
    ++pool->stats.malformed;
    return 0;
  case RP_OUTCOME_ID_MISMATCH:
    ++pool->stats.spoofed;
    return 0;
  case RP_OUTCOME_TRUNCATED:
  case RP_OUTCOME_CONNECT_FAILED:
  case RP_OUTCOME_TLS_FAILED:
  case RP_OUTCOME_SEND_FAILED:
    rv = rp_answer_neterr(pool, q, t, r, now);
    break;
  }
  if (q->active) {
    rp_query_finish(pool, q, now);
  }
  return rv;
}

/* answer_stream asks |q| again over the stream after the truncated
   answer of |r| to its try |t| (a reply without a latency sample).
   Returns 0 or a fatal error. */
static int answer_stream(rp_pool *pool, rp_query *q, rp_try *t, rp_res *r,
                         rp_tstamp now) {
  rp_tstamp sent = t->sent;
  int rv;

  rp_try_close(pool, q, t, now);
  rp_res_reply(pool, r, sent, 0, now);
  ++q->nstreams;
  rv = rp_try_send(pool, q, r, RP_TRY_STREAM, RP_SEND_STREAM, 0, now);
  return rv < 0 ? rv : 0;
}

/* answer_ok takes the answer |answer| (|len| bytes, in the client's case
   unless |cased|) of |r| to the try |t| of |q|: a latency sample, a
   reply, and the answer delivered (or judged a repeat). Returns 0 or a
   fatal error. */
static int answer_ok(rp_pool *pool, rp_query *q, rp_try *t, rp_res *r,
                     const uint8_t *answer, size_t len, int cased,
                     rp_tstamp now) {
  rp_tstamp sent = t->sent;
  rp_duration lat = now - sent;
  int blind;

  rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_RX, now,
              "ev=answer srv=%u id=%u q=%u try=%u lat_ms=%.3f", r->slot,
              t->upstream_id, q->idx, (unsigned)(t - q->tries),
              (double)lat / RP_CORE_NS_PER_MS);
  if (t->judged_drop) {
    rp_try_late(pool, r, t, lat, now);
  }
  rp_try_close(pool, q, t, now);
  ++r->answered;
  blind = rp_pq_top(&pool->cost) == NULL;
  rp_rtt_add(&r->rtt, lat, now, pool->set.latency_window);
  rp_ratelim_on_answer(&r->rl, &pool->set, sent, now);
  rp_res_reply(pool, r, sent, pool->set.score_answer, now);
  rp_select_refresh(pool, r, now);
  if (blind && rp_pq_top(&pool->cost) != NULL) {
    rp_try_hedge_known(pool, now);
  }
  if (cased) {
    /* The client's case back, in the scratch query_deliver uses. */
    rp_case_restore(pool->scratch, answer, len, &q->question.name);
    answer = pool->scratch;
  }
  return rp_query_deliver_judged(pool, q, answer, len);
}

/* answer_classify handles the answer of |r| to the try |t| of |q| by
   its kind: rejected, refusal, truncated or an answer. Returns 0 or a
   fatal error. */
static int answer_classify(rp_pool *pool, rp_query *q, rp_try *t, rp_res *r,
                           const rp_dns_brief *msg, const uint8_t *answer,
                           size_t len, uint32_t flags, int cased,
                           rp_tstamp now) {
  uint8_t rcode = rp_dns_rcode(answer);

  if (((msg->hdr.flags ^ (uint16_t)((q->buf[2] << 8) | q->buf[3])) &
       RP_DNS_OPCODE_MASK) != 0 ||
      rcode > RP_DNS_RCODE_LAST_ASSIGNED) {
    /* Another opcode than the query's, or an unassigned rcode: not an
       answer to pass on. The try failed; the query goes elsewhere (or
       fails SERVFAIL at its deadline). */
    ++pool->stats.malformed;
    rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_RX, now,
                "ev=answer_rejected srv=%u q=%u flags=0x%04x", r->slot, q->idx,
                (unsigned)msg->hdr.flags);
    return rp_answer_neterr(pool, q, t, r, now);
  }
  if (rcode == RP_DNS_RCODE_REFUSED || rcode == RP_DNS_RCODE_SERVFAIL) {
    return rp_answer_refusal(pool, q, t, r, now);
  }
  if (rp_dns_is_truncated(answer) && !(flags & RP_ANSWER_STREAM) &&
      (r->flags & RP_RESOLVER_TCP_FALLBACK) &&
      q->nstreams < pool->set.tc_stream_tries) {
    return answer_stream(pool, q, t, r, now);
  }
  return answer_ok(pool, q, t, r, answer, len, cased, now);
}

int rp_answer_query(rp_pool *pool, rp_res *r, rp_query *q, rp_try *t,
                    const rp_dns_brief *msg, const uint8_t *answer, size_t len,
                    uint32_t flags, rp_tstamp now) {
  int cased = (t->case_flags & RP_CASE_ON) != 0, rv = 0;
  rp_case_verdict verdict = rp_case_answer(
      &q->question, t->case_flags, t->case_seed, &msg->question, answer, len);

  if (verdict == RP_CASE_OTHER) {
    ++pool->stats.spoofed;
    return RP_ANSWER_THEN_DONE;
  }
  if (cased && !rp_answer_case(pool, r, &t->case_flags, verdict, now)) {
    /* Another case at a strict resolver: the query goes out again at
       once, and the try stays open for the genuine answer (case.h). */
    if (!t->judged) {
      rv = rp_try_judge(pool, t, 0, now);
    }
    if (q->active) {
      rp_query_finish(pool, q, now);
    }
    return rv < 0 ? rv : RP_ANSWER_THEN_DRAIN;
  }
  rv = answer_classify(pool, q, t, r, msg, answer, len, flags, cased, now);
  if (q->active) {
    rp_query_finish(pool, q, now);
  }
  return rv < 0 ? rv : RP_ANSWER_THEN_OVERTAKE;
}

int rp_answer_error_all(rp_pool *pool, rp_res *r, rp_outcome outcome,
                        rp_tstamp now) {
  rp_list batch;
  rp_try *t;
  int rv = 0;

  /* Move the open tries aside first: resends may add new ones. */
  rp_list_init(&batch);
  rp_list_splice(&batch, &r->lost);
  rp_list_splice(&batch, &r->tries);
  while (!rp_list_empty(&batch) && rv == 0) {
    t = rp_container_of(batch.next, rp_try, res_node);
    rp_list_remove(&t->res_node);
    rp_list_push_back(t->judged ? &r->lost : &r->tries, &t->res_node);
    rv = rp_answer_error(pool, r, t, outcome, now);
  }
  while (!rp_list_empty(&batch)) {
    t = rp_container_of(batch.next, rp_try, res_node);
    rp_list_remove(&t->res_node);
    rp_list_push_back(t->judged ? &r->lost : &r->tries, &t->res_node);
  }
  return rv;
}
