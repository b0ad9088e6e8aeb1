/*
 * stats.c: the public strings of the outcomes and resolver states, and
 * the counters (rp_pool_get_stats, rp_pool_get_resolver_stats).
 */
#include "core.h"

const char *rp_outcome_str(rp_outcome outcome) {
  switch (outcome) {
  case RP_OUTCOME_OK:
    return "ok";
  case RP_OUTCOME_TIMEOUT:
    return "timeout";
  case RP_OUTCOME_SERVFAIL:
    return "servfail";
  case RP_OUTCOME_REFUSED:
    return "refused";
  case RP_OUTCOME_FORMERR:
    return "formerr";
  case RP_OUTCOME_TRUNCATED:
    return "truncated";
  case RP_OUTCOME_MALFORMED:
    return "malformed";
  case RP_OUTCOME_ID_MISMATCH:
    return "id_mismatch";
  case RP_OUTCOME_CONNECT_FAILED:
    return "connect_failed";
  case RP_OUTCOME_TLS_FAILED:
    return "tls_failed";
  case RP_OUTCOME_HTTP_429:
    return "http_429";
  case RP_OUTCOME_SEND_FAILED:
    return "send_failed";
  }
  return "unknown";
}

const char *rp_resolver_state_str(rp_resolver_state state) {
  switch (state) {
  case RP_RESOLVER_PROBATION:
    return "probation";
  case RP_RESOLVER_ACTIVE:
    return "active";
  case RP_RESOLVER_CAPPED:
    return "capped";
  case RP_RESOLVER_DOWN:
    return "down";
  }
  return "unknown";
}

int rp_pool_get_resolver_stats(const rp_pool *pool, uint32_t resolver_id,
                               rp_resolver_stats *stats, rp_tstamp now) {
  const rp_res *r = pool ? rp_pool_res(pool, resolver_id) : NULL;
  rp_ratelim rl;

  if (r == NULL || stats == NULL) {
    return RP_ERR_NOT_FOUND;
  }
  rl = r->rl;
  *stats = (rp_resolver_stats){
      .state = r->down           ? RP_RESOLVER_DOWN
               : r->probation    ? RP_RESOLVER_PROBATION
               : r->rl.cap > 0.0 ? RP_RESOLVER_CAPPED
                                 : RP_RESOLVER_ACTIVE,
      .cap_qps = r->rl.cap,
      .answer_rate_qps = rp_ratelim_rate(&rl, &pool->set, now),
      .fastest_latency = rp_rtt_fastest(&r->rtt),
      .mean_latency = r->rtt.mean,
      .latency_dev =
          r->rtt.mean == RP_TSTAMP_UNSET ? RP_TSTAMP_UNSET : r->rtt.dev,
      .loss = rp_health_loss_ratio(&r->health),
      .loss_uncertainty = (rp_health_loss_upper(&r->health, pool->set.loss_z) -
                           rp_health_loss_lower(&r->health, pool->set.loss_z)) /
                          2.0,
      .inflight = r->inflight,
      .sent = r->sent,
      .answered = r->answered,
      .refused = r->refused,
      .dropped = r->dropped,
      .late = r->late,
      .errors = r->errors,
      .copies = r->copies,
      .hedges = r->hedges,
      .probes = r->probes,
      .case_mismatches = r->cs.mismatches,
      .case_fallback = r->cs.mode == RP_CASE_FALLBACK,
      .last_used = r->sent ? r->last_used : RP_TSTAMP_UNSET,
      .score = r->health.score,
  };
  return 0;
}

void rp_pool_get_stats(const rp_pool *pool, rp_pool_stats *stats) {
  *stats = pool->stats;
  stats->inflight = pool->ninflight;
  stats->nresolvers = pool->nres;
  stats->nup = pool->nup;
}
