/*
 * pool.c: the pool core's entry points (respool.h): a pool's life, a
 * client query, a resolver's answer or error, a resolver added or
 * removed, the timers; and the helpers every module of the core uses
 * (logging, random draws, the timer heap). The work is the modules':
 * query.h (queries), try.h (tries), fanout.h (copies), wait.h (waits),
 * answer.h (replies), res.h and down.h (resolvers), select.h (choice).
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5; docs/pool-behaviour.md has
 * each rule with its setting and its test)
 * - Every call into the core takes |now|, keeps it in pool->now for the
 *   send_query and deliver callbacks it makes, and ends by placing the
 *   queries that wait for capacity (rp_wait_drain).
 * - One timer heap holds a timer per query (its next event) and one per
 *   resolver (its token in RP_WHERE_TOKEN, its copies and probes when
 *   down), ordered by time and then by arming order (deterministic
 *   ties). rp_pool_get_expiry reads its top (and the past-cap heap's
 *   while queries wait); rp_pool_handle_expiry runs every timer due.
 * - Every table is allocated at rp_pool_new (queries, their bytes, the
 *   ID map, the heaps' room) or at rp_pool_add_resolver (a resolver's
 *   room): a query allocates nothing.
 * - Kind sensing (sense.h): with rp_pool_sense_kind, the first client
 *   queries' names tell dnstt, MasterDnsVPN or generic apart, and the
 *   pool takes that kind's settings; the copy level keeps its place.
 */
#include "core.h"
#include "answer.h"
#include "down.h"
#include "fanout.h"
#include "query.h"
#include "res.h"
#include "select.h"
#include "try.h"
#include "wait.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* POOL_LOG_LINE is the longest log line, bytes. */
#define POOL_LOG_LINE 256
/* ---------------------------------------------------------------- */
/* Small helpers                                                      */
/* ---------------------------------------------------------------- */

void rp_pool_log_emit(const rp_pool *pool, rp_log_level level,
                      uint32_t category, rp_tstamp now, const char *fmt, ...) {
  char line[POOL_LOG_LINE];
  va_list ap;
  int n;

  n = snprintf(line, sizeof(line), "t=%.3f ", (double)now / RP_CORE_NS_PER_S);
  if (n < 0 || (size_t)n >= sizeof(line)) {
    return;
  }
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
  va_end(ap);
  pool->cb.log(level, category, line, pool->user_data);
}

uint32_t rp_pool_rand32(rp_pool *pool) {
  uint8_t b[4];

  pool->cb.rand(b, sizeof(b), pool->user_data);
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
         (uint32_t)b[3];
}

uint64_t rp_pool_rand64(rp_pool *pool) {
  uint8_t b[8];
  uint64_t v = 0;
  size_t i;

  pool->cb.rand(b, sizeof(b), pool->user_data);
  for (i = 0; i < sizeof(b); ++i) {
    v = v << 8 | b[i];
  }
  return v;
}

uint16_t rp_pool_rand16(rp_pool *pool) {
  uint8_t b[2];

  pool->cb.rand(b, sizeof(b), pool->user_data);
  return (uint16_t)(b[0] << 8 | b[1]);
}

static int pool_less_timer(const rp_pq_entry *a, const rp_pq_entry *b) {
  const rp_timer *ta = rp_container_of_const(a, rp_timer, pe);
  const rp_timer *tb = rp_container_of_const(b, rp_timer, pe);

  if (ta->at != tb->at) {
    return ta->at < tb->at;
  }
  return ta->seq < tb->seq;
}

void rp_pool_timer_set(rp_pool *pool, rp_timer *t, rp_tstamp at) {
  int rv;

  if (rp_pq_entry_queued(&t->pe)) {
    if (at == t->at) {
      return;
    }
    rp_pq_remove(&pool->timers, &t->pe);
  }
  if (at == RP_TSTAMP_UNSET) {
    return;
  }
  t->at = at;
  t->seq = pool->timer_seq++;
  /* Room for every query and resolver was reserved. */
  rv = rp_pq_push(&pool->timers, &t->pe);
  assert(rv == 0);
  (void)rv;
}

/* ---------------------------------------------------------------- */
/* Pool lifecycle                                                     */
/* ---------------------------------------------------------------- */

/* pool_init_sets makes the pool's heaps and lists empty (no memory). */
static void pool_init_sets(rp_pool *pool) {
  const rp_mem *mem = &pool->mem;

  rp_pq_init(&pool->timers, pool_less_timer, mem);
  rp_pq_init(&pool->band, rp_select_less_lru, mem);
  rp_pq_init(&pool->out, rp_select_less_lru, mem);
  rp_pq_init(&pool->busy, rp_select_less_lru, mem);
  rp_pq_init(&pool->fresh, rp_select_less_lru, mem);
  rp_pq_init(&pool->cost, rp_select_less_cost, mem);
  rp_pq_init(&pool->loss, rp_select_less_loss, mem);
  rp_pq_init(&pool->unlim, rp_select_less_unlim, mem);
  rp_pq_init(&pool->strat, rp_select_less_strat, mem);
  rp_pq_init(&pool->pastcap, rp_select_less_pastcap, mem);
  rp_list_init(&pool->free_q);
  rp_list_init(&pool->live_q);
  rp_pq_init(&pool->waits, rp_wait_less, mem);
  rp_list_init(&pool->rr_ring);
  rp_list_init(&pool->down_wait);
  pool->rr_next = &pool->rr_ring;
}

/* pool_alloc_tables allocates the query table and its bytes, the ID map,
   the room of the timer and wait heaps and the scratch buffers. Returns
   0, or RP_ERR_NOMEM with nothing of them left allocated. */
static int pool_alloc_tables(rp_pool *pool) {
  const rp_mem *mem = &pool->mem;
  size_t nids;
  int rv;

  pool->queries =
      mem->calloc(pool->set.max_inflight, sizeof(rp_query), mem->user_data);
  if (pool->queries == NULL) {
    rv = RP_ERR_NOMEM;
    goto fail_queries;
  }
  pool->qbufs = mem->malloc(pool->set.max_inflight * pool->set.max_query_len,
                            mem->user_data);
  if (pool->qbufs == NULL) {
    rv = RP_ERR_NOMEM;
    goto fail_qbufs;
  }
  nids = pool->set.max_inflight * RP_CORE_TRIES_PER_QUERY +
         pool->set.max_resolvers;
  rv = rp_idmap_init(&pool->ids, nids, mem);
  if (rv != 0) {
    goto fail_ids;
  }
  rv = rp_pq_reserve(&pool->timers, pool->set.max_inflight);
  if (rv != 0) {
    goto fail_timers;
  }
  rv = rp_pq_reserve(&pool->waits, pool->set.max_inflight);
  if (rv != 0) {
    goto fail_waits;
  }
  pool->scratch = mem->malloc(RP_DNS_MAX_MSG_LEN, mem->user_data);
  if (pool->scratch == NULL) {
    rv = RP_ERR_NOMEM;
    goto fail_scratch;
  }
  pool->last_q = mem->malloc(pool->set.max_query_len, mem->user_data);
  if (pool->last_q == NULL) {
    rv = RP_ERR_NOMEM;
    goto fail_last_q;
  }
  return 0;

fail_last_q:
  mem->free(pool->scratch, mem->user_data);
fail_scratch:
  rp_pq_free(&pool->waits);
fail_waits:
  rp_pq_free(&pool->timers);
fail_timers:
  rp_idmap_free(&pool->ids);
fail_ids:
  mem->free(pool->qbufs, mem->user_data);
fail_qbufs:
  mem->free(pool->queries, mem->user_data);
fail_queries:
  return rv;
}

int rp_pool_new(rp_pool **ppool, const rp_settings *settings,
                const rp_callbacks *callbacks, const rp_mem *mem,
                void *user_data) {
  rp_pool *pool;
  int rv;

  if (ppool == NULL || settings == NULL || callbacks == NULL ||
      callbacks->send_query == NULL || callbacks->deliver == NULL ||
      callbacks->rand == NULL || rp_settings_check(settings) != 0) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  if (mem == NULL) {
    mem = rp_mem_default();
  }
  if (settings->max_inflight > SIZE_MAX / settings->max_query_len ||
      settings->max_inflight >
          (SIZE_MAX - settings->max_resolvers) / RP_CORE_TRIES_PER_QUERY) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  pool = mem->calloc(1, sizeof(*pool), mem->user_data);
  if (pool == NULL) {
    return RP_ERR_NOMEM;
  }
  pool->set = *settings;
  pool->set.probe_name[sizeof(pool->set.probe_name) - 1] = '\0';
  pool->cb = *callbacks;
  pool->mem = *mem;
  pool->user_data = user_data;
  pool_init_sets(pool);
  rv = pool_alloc_tables(pool);
  if (rv != 0) {
    /* |mem| may point into |pool|: free with a copy. */
    rp_mem m = pool->mem;

    m.free(pool, m.user_data);
    return rv;
  }
  pool->last_submit = RP_TSTAMP_UNSET;
  rp_query_table_init(pool);
  rp_copies_init(&pool->copies, &pool->set, 0);
  *ppool = pool;
  return 0;
}

int rp_pool_sense_kind(rp_pool *pool, const rp_settings *by_kind) {
  size_t k;

  if (pool == NULL || by_kind == NULL || pool->stats.queries != 0) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  for (k = 0; k < RP_KIND_COUNT; ++k) {
    const rp_settings *s = &by_kind[k];
    if (rp_settings_check(s) != 0 ||
        s->max_inflight != pool->set.max_inflight ||
        s->max_resolvers != pool->set.max_resolvers ||
        s->max_query_len != pool->set.max_query_len ||
        s->load_balance != pool->set.load_balance) {
      return RP_ERR_INVALID_ARGUMENT;
    }
  }
  if (pool->by_kind == NULL) {
    pool->by_kind = pool->mem.malloc(RP_KIND_COUNT * sizeof(rp_settings),
                                     pool->mem.user_data);
    if (pool->by_kind == NULL) {
      return RP_ERR_NOMEM;
    }
  }
  memcpy(pool->by_kind, by_kind, RP_KIND_COUNT * sizeof(rp_settings));
  for (k = 0; k < RP_KIND_COUNT; ++k) {
    pool->by_kind[k].probe_name[sizeof(pool->by_kind[k].probe_name) - 1] = '\0';
    /* A tunnel's names are never touched, whatever the entry asks. */
    rp_settings_restrict(&pool->by_kind[k], (rp_kind)k);
  }
  rp_sense_init(&pool->sense);
  return 0;
}

rp_kind rp_pool_kind(const rp_pool *pool) {
  if (pool->by_kind == NULL) {
    return RP_KIND_GENERIC;
  }
  return pool->sense.state == RP_SENSE_SENSING ? RP_KIND_AUTO
                                               : pool->sense.kind;
}

int rp_pool_case_active(const rp_pool *pool) {
  return pool->set.case_randomize &&
         (pool->by_kind == NULL || pool->sense.state == RP_SENSE_DONE);
}

/* pool_sense feeds a client query's question to the kind sensing and,
   on a verdict, takes that kind's settings. The copy level keeps its
   place: full stays full (a level of duplicate - 1), a lower one stays
   where it was, within the new bound. */
static void pool_sense(rp_pool *pool, const rp_dns_question *question,
                       rp_tstamp now) {
  uint32_t old_max = pool->set.duplicate - 1, new_max;

  if (!rp_sense_feed(&pool->sense, question)) {
    return;
  }
  rp_pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CFG, now,
              "ev=kind kind=%s queries=%u looked=%u base36=%u",
              pool->sense.kind == RP_KIND_MASTERDNS ? "masterdns"
              : pool->sense.kind == RP_KIND_DNSTT   ? "dnstt"
                                                    : "generic",
              pool->sense.seen, pool->sense.looked, pool->sense.base36);
  if (pool->sense.kind == RP_KIND_GENERIC) {
    return;
  }
  pool->set = pool->by_kind[pool->sense.kind];
  new_max = pool->set.duplicate - 1;
  rp_copies_rescale(&pool->copies, old_max, new_max);
}

void rp_pool_del(rp_pool *pool) {
  rp_mem m;
  size_t i;

  if (pool == NULL) {
    return;
  }
  m = pool->mem;
  for (i = 0; i < pool->res_cap; ++i) {
    if (pool->res[i] != NULL) {
      m.free(pool->res[i], m.user_data);
    }
  }
  m.free(pool->res, m.user_data);
  m.free(pool->fw, m.user_data);
  m.free(pool->last_q, m.user_data);
  m.free(pool->scratch, m.user_data);
  rp_pq_free(&pool->timers);
  rp_pq_free(&pool->waits);
  rp_pq_free(&pool->band);
  rp_pq_free(&pool->out);
  rp_pq_free(&pool->busy);
  rp_pq_free(&pool->fresh);
  rp_pq_free(&pool->cost);
  rp_pq_free(&pool->loss);
  rp_pq_free(&pool->unlim);
  rp_pq_free(&pool->strat);
  rp_pq_free(&pool->pastcap);
  rp_idmap_free(&pool->ids);
  m.free(pool->qbufs, m.user_data);
  m.free(pool->queries, m.user_data);
  m.free(pool->by_kind, m.user_data);
  m.free(pool, m.user_data);
}

/* ---------------------------------------------------------------- */
/* Resolvers: add, remove                                             */
/* ---------------------------------------------------------------- */

int rp_pool_add_resolver(rp_pool *pool, const rp_resolver_config *config,
                         uint32_t *presolver_id, rp_tstamp now) {
  int rv;

  if (pool == NULL || config == NULL || presolver_id == NULL) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  pool->now = now;
  rv = rp_res_add(pool, config, presolver_id, now);
  if (rv != 0) {
    return rv;
  }
  return rp_wait_drain(pool, now);
}

int rp_pool_remove_resolver(rp_pool *pool, uint32_t resolver_id,
                            rp_tstamp now) {
  rp_res *r = pool ? rp_pool_res(pool, resolver_id) : NULL;

  if (r == NULL) {
    return RP_ERR_NOT_FOUND;
  }
  pool->now = now;
  return rp_res_remove(pool, r, now);
}

/* ---------------------------------------------------------------- */
/* Events                                                             */
/* ---------------------------------------------------------------- */

/* pool_submit_send places the new query |q|, sends a retry of a left-out
   resolver along with it and a copy to a down resolver waiting for one.
   Returns 0 or a fatal error. */
static int pool_submit_send(rp_pool *pool, rp_query *q, rp_tstamp now) {
  uint32_t slot;
  int rv;

  rv = rp_query_place(pool, q, RP_TRY_FIRST, now);
  if (rv < 0) {
    return rv;
  }
  if (pool->set.load_balance == RP_BALANCE_AUTO && q->nopen > 0) {
    slot = rp_select_left_out(pool, q, now);
    if (slot != RP_CORE_NONE) {
      rp_pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
                  "ev=select q=%u srv=%u why=retry replies=%llu fresh=%zu "
                  "out=%zu",
                  q->idx, slot, (unsigned long long)pool->res[slot]->replies,
                  pool->fresh.len, pool->out.len);
      rv = rp_try_send(pool, q, pool->res[slot], RP_TRY_RETRY, 0, 0, now);
      if (rv < 0) {
        return rv;
      }
      pool->stats.retries += (uint64_t)rv;
    }
  }
  rv = rp_down_copy_new(pool, q, now);
  if (rv < 0) {
    return rv;
  }
  rp_query_finish(pool, q, now);
  return 0;
}

int rp_pool_submit(rp_pool *pool, const uint8_t *query, size_t len,
                   const rp_client *client, rp_tstamp now) {
  rp_dns_header hdr;
  rp_dns_brief msg;
  rp_query *q;
  int rv;

  if (pool == NULL || query == NULL || client == NULL) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  pool->now = now;
  ++pool->stats.queries;
  if (rp_dns_parse_header(&hdr, query, len) != 0 ||
      (hdr.flags & RP_DNS_FLAG_QR)) {
    ++pool->stats.malformed;
    return RP_ERR_MALFORMED;
  }
  rv = rp_wait_drain(pool, now);
  if (rv < 0) {
    return rv;
  }
  if (rp_dns_parse_brief(&msg, query, len) != 0 || !msg.has_question) {
    ++pool->stats.malformed;
    return rp_query_fail_bytes(pool, client, query, len, RP_DNS_RCODE_FORMERR);
  }
  if (len > pool->set.max_query_len) {
    ++pool->stats.malformed;
    return rp_query_fail_bytes(pool, client, query, len, RP_DNS_RCODE_SERVFAIL);
  }
  if (pool->by_kind != NULL && pool->sense.state == RP_SENSE_SENSING) {
    pool_sense(pool, &msg.question, now);
  }
  if (rp_list_empty(&pool->free_q)) {
    ++pool->stats.full;
    return rp_query_fail_bytes(pool, client, query, len, RP_DNS_RCODE_SERVFAIL);
  }
  rp_fanout_ramp(pool, now);
  q = rp_query_start(pool, query, len, client, hdr.id, &msg.question, now);
  rp_down_note_query(pool, query, len, client);
  rp_fanout_plan(pool, q, now);
  return pool_submit_send(pool, q, now);
}

int rp_pool_on_answer(rp_pool *pool, uint32_t resolver_id,
                      const uint8_t *answer, size_t len, uint32_t flags,
                      rp_tstamp now) {
  const rp_idmap_value *v;
  rp_dns_brief msg;
  rp_query *q;
  rp_res *r;
  int rv;

  if (pool == NULL || answer == NULL) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  pool->now = now;
  r = rp_pool_res(pool, resolver_id);
  if (len < RP_DNS_HEADER_LEN || len > RP_DNS_MAX_MSG_LEN) {
    ++pool->stats.malformed;
    return 0;
  }
  v = r ? rp_idmap_get(&pool->ids, r->slot, rp_dns_get_id(answer)) : NULL;
  if (v == NULL) {
    ++pool->stats.spoofed;
    return 0;
  }
  if (rp_dns_parse_brief(&msg, answer, len) != 0) {
    ++pool->stats.malformed;
    return 0;
  }
  if (!(msg.hdr.flags & RP_DNS_FLAG_QR) || !msg.has_question) {
    ++pool->stats.spoofed;
    return 0;
  }
  if (v->query == RP_IDMAP_PROBE) {
    rv = rp_down_probe_answer(pool, r, &msg, answer, len, now);
  } else {
    q = &pool->queries[v->query];
    rv = rp_answer_query(pool, r, q, &q->tries[v->try_index], &msg, answer, len,
                         flags, now);
  }
  if (rv < 0 || rv == RP_ANSWER_THEN_DONE) {
    return rv;
  }
  if (rv == RP_ANSWER_THEN_OVERTAKE) {
    rv = rp_try_judge_overtaken(pool, r, now);
    if (rv < 0) {
      return rv;
    }
  }
  return rp_wait_drain(pool, now);
}

int rp_pool_on_error(rp_pool *pool, uint32_t resolver_id, uint32_t upstream_id,
                     rp_outcome outcome, rp_tstamp now) {
  rp_res *r = pool ? rp_pool_res(pool, resolver_id) : NULL;
  const rp_idmap_value *v;
  rp_try *t;
  int rv = 0;

  if (r == NULL) {
    return RP_ERR_NOT_FOUND;
  }
  pool->now = now;
  if (upstream_id == RP_UPSTREAM_ID_ALL) {
    rv = rp_answer_error_all(pool, r, outcome, now);
  } else if (upstream_id <= UINT16_MAX) {
    v = rp_idmap_get(&pool->ids, r->slot, (uint16_t)upstream_id);
    if (v == NULL) {
      return 0;
    }
    if (v->query == RP_IDMAP_PROBE) {
      rp_down_probe_lost(pool, r, now);
      return 0;
    }
    t = &pool->queries[v->query].tries[v->try_index];
    rv = rp_answer_error(pool, r, t, outcome, now);
  }
  if (rv < 0) {
    return rv;
  }
  return rp_wait_drain(pool, now);
}

rp_tstamp rp_pool_get_expiry(const rp_pool *pool) {
  const rp_pq_entry *pe = rp_pq_top(&pool->timers);
  rp_tstamp at =
      pe ? rp_container_of_const(pe, rp_timer, pe)->at : RP_TSTAMP_UNSET;

  if (pool->waits.len > 0) {
    pe = rp_pq_top(&pool->pastcap);
    if (pe != NULL) {
      at = rp_tstamp_min(
          at, rp_container_of_const(pe, rp_res, e_pastcap)->pastcap_at);
    }
  }
  return at;
}

int rp_pool_handle_expiry(rp_pool *pool, rp_tstamp now) {
  rp_pq_entry *pe;
  rp_timer *t;
  int rv;

  pool->now = now;
  while ((pe = rp_pq_top(&pool->timers)) != NULL) {
    t = rp_container_of(pe, rp_timer, pe);
    if (t->at > now) {
      break;
    }
    rp_pq_pop(&pool->timers);
    switch (t->kind) {
    case RP_TIMER_QUERY:
      rv = rp_query_service(pool, rp_container_of(t, rp_query, timer), now);
      break;
    case RP_TIMER_RES:
      rv = rp_res_timer(pool, rp_container_of(t, rp_res, timer), now);
      break;
    default:
      rp_unreachable();
    }
    if (rv < 0) {
      return rv;
    }
  }
  return rp_wait_drain(pool, now);
}
