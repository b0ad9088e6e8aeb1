/*
 * pool.c: the pool core: queries, tries, answers, timers.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5; docs/pool-behaviour.md has
 * each rule with its setting and its test)
 * - Every client query gets a slot of the preallocated table and one
 *   timer in the pool's timer heap, at its next event: a copy due, a
 *   hedge due, a try's per_attempt, the end of a wait, the deadline. A
 *   resolver has one timer (its token in RP_WHERE_TOKEN, its copies and
 *   probes when down). rp_pool_get_expiry reads the top of that heap.
 * - A try is one send of a query to a resolver under an upstream ID the
 *   core draws through callbacks.rand and checks for collisions in
 *   the ID map; the client's ID is restored on delivery.
 * - Answer classification: a reply whose (resolver, ID) matches no try
 *   is spoofed; one that does not parse is malformed; one whose question
 *   differs (byte for byte: 0x20 case is checked) is spoofed; the try
 *   stays open in the last two cases (the real answer may follow). A try
 *   sent with a 0x20 name (case.h) matches only the case it was sent
 *   with; an answer that differs in case only, from a resolver that has
 *   not fallen back, sets the try aside as if lost (without a loss) and
 *   sends its query again; the client gets its own case back.
 *   REFUSED and SERVFAIL (and HTTP 429 through rp_pool_on_error) are
 *   refusals; TC over UDP is asked again over the stream when the
 *   resolver allows it, else delivered; anything else is an answer.
 * - Every answer is delivered, later ones with RP_DELIVER_EXTRA: tunnel
 *   answers carry data. A query ends when it was answered (or failed)
 *   and no try is open, or at its deadline.
 * - Left out: no caching, no rewriting of questions, no merging.
 */
#include "core.h"
#include "select.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* POOL_LOG_LINE is the longest log line, bytes. */
#define POOL_LOG_LINE 256
/* POOL_DOWN_SCAN is how many of the newest live queries are looked at
   for a copy to a down resolver. */
#define POOL_DOWN_SCAN 8
/* POOL_DOWN_ROOM is how many tries a query keeps free when it carries
   copies to down resolvers. */
#define POOL_DOWN_ROOM 6
/* POOL_NS_PER_MS converts ns to ms in logs. */
#define POOL_NS_PER_MS 1e6
/* POOL_NS_PER_S converts ns to s in logs. */
#define POOL_NS_PER_S 1e9

static int pool_query_place(rp_pool *pool, rp_query *q, rp_try_kind kind,
                            rp_tstamp now);
static int pool_res_up(rp_pool *pool, rp_res *r, rp_tstamp now);
static void pool_query_schedule(rp_pool *pool, rp_query *q, rp_tstamp now);
static void pool_query_finish(rp_pool *pool, rp_query *q, rp_tstamp now);

/* ---------------------------------------------------------------- */
/* Small helpers                                                      */
/* ---------------------------------------------------------------- */

/* pool_log_on reports whether a line of |level| and |category| would be
   logged; pool_log checks it before anything is formatted or even passed
   (several debug lines lie on the path of every query). */
static inline int pool_log_on(const rp_pool *pool, rp_log_level level,
                              uint32_t category) {
  return pool->cb.log != NULL && level <= pool->set.log_level &&
         (category & pool->set.log_categories) != 0;
}

#define pool_log(pool, level, category, ...)                                 \
  do {                                                                       \
    if (pool_log_on((pool), (level), (category))) {                          \
      pool_log_emit((pool), (level), (category), __VA_ARGS__);               \
    }                                                                        \
  } while (0)

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static void
pool_log_emit(const rp_pool *pool, rp_log_level level, uint32_t category,
              rp_tstamp now, const char *fmt, ...) {
  char line[POOL_LOG_LINE];
  va_list ap;
  int n;

  n = snprintf(line, sizeof(line), "t=%.3f ", (double)now / POOL_NS_PER_S);
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

/* pool_rand64 draws 64 random bits in one call of callbacks.rand. */
static uint64_t pool_rand64(rp_pool *pool) {
  uint8_t b[8];
  uint64_t v = 0;
  size_t i;

  pool->cb.rand(b, sizeof(b), pool->user_data);
  for (i = 0; i < sizeof(b); ++i) {
    v = v << 8 | b[i];
  }
  return v;
}

static uint16_t pool_rand16(rp_pool *pool) {
  uint8_t b[2];

  pool->cb.rand(b, sizeof(b), pool->user_data);
  return (uint16_t)(b[0] << 8 | b[1]);
}

/* pool_less_wait orders waiting queries: the longest question name first
   (in a tunnel a long name carries data and a short one is an empty
   poll: a poll that waits costs the tunnel only window, data that waits
   a retransmission; measured with the real dnstt through one 30 q/s
   refusing resolver, 58-99 kbps in FIFO order, 92-96 like this), then
   the one that waited longest. */
static int pool_less_wait(const rp_pq_entry *a, const rp_pq_entry *b) {
  const rp_query *qa = rp_container_of_const(a, rp_query, e_wait);
  const rp_query *qb = rp_container_of_const(b, rp_query, e_wait);

  if (qa->question.name.len != qb->question.name.len) {
    return qa->question.name.len > qb->question.name.len;
  }
  if (qa->wait_end != qb->wait_end) {
    return qa->wait_end < qb->wait_end;
  }
  return qa->idx < qb->idx;
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

static rp_res *pool_res(const rp_pool *pool, uint32_t slot) {
  return slot < pool->res_cap ? pool->res[slot] : NULL;
}

static rp_tstamp pool_min(rp_tstamp a, rp_tstamp b) { return a < b ? a : b; }

/* pool_list_splice moves every node of |from| to the end of |to|. */
static void pool_list_splice(rp_list *to, rp_list *from) {
  if (rp_list_empty(from)) {
    return;
  }
  from->next->prev = to->prev;
  to->prev->next = from->next;
  from->prev->next = to;
  to->prev = from->prev;
  rp_list_init(from);
}

/* ---------------------------------------------------------------- */
/* Settings and strings                                               */
/* ---------------------------------------------------------------- */

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

/* ---------------------------------------------------------------- */
/* Pool lifecycle                                                     */
/* ---------------------------------------------------------------- */

int rp_pool_new(rp_pool **ppool, const rp_settings *settings,
                const rp_callbacks *callbacks, const rp_mem *mem,
                void *user_data) {
  rp_pool *pool;
  size_t i, nids;
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
    rv = RP_ERR_NOMEM;
    goto fail_pool;
  }
  pool->set = *settings;
  pool->set.probe_name[sizeof(pool->set.probe_name) - 1] = '\0';
  pool->cb = *callbacks;
  pool->mem = *mem;
  pool->user_data = user_data;
  mem = &pool->mem;
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
  rp_pq_init(&pool->waits, pool_less_wait, mem);
  rp_list_init(&pool->rr_ring);
  rp_list_init(&pool->down_wait);
  pool->rr_next = &pool->rr_ring;

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
  pool->last_submit = RP_TSTAMP_UNSET;
  pool->last_q = mem->malloc(pool->set.max_query_len, mem->user_data);
  if (pool->last_q == NULL) {
    rv = RP_ERR_NOMEM;
    goto fail_last_q;
  }
  for (i = 0; i < pool->set.max_inflight; ++i) {
    rp_query *q = &pool->queries[i];

    q->idx = (uint32_t)i;
    q->buf = pool->qbufs + i * pool->set.max_query_len;
    rp_pq_entry_init(&q->timer.pe);
    q->timer.kind = RP_TIMER_QUERY;
    rp_pq_entry_init(&q->e_wait);
    rp_list_push_back(&pool->free_q, &q->node);
  }
  rp_copies_init(&pool->copies, &pool->set, 0);
  *ppool = pool;
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
  /* |mem| points into |pool|: free with a copy. */
  {
    rp_mem m = pool->mem;

    m.free(pool, m.user_data);
  }
fail_pool:
  return rv;
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
    pool->by_kind[k].probe_name[sizeof(pool->by_kind[k].probe_name) - 1] =
        '\0';
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

/* pool_case_active returns 1 if new client queries may go with 0x20
   names: settings.case_randomize, and under kind auto only once the
   verdict is in (settings for dnstt and masterdns have it off). */
static int pool_case_active(const rp_pool *pool) {
  return pool->set.case_randomize &&
         (pool->by_kind == NULL || pool->sense.state == RP_SENSE_DONE);
}

/* pool_case_on returns 1 if a send of |q| to |r| with |sflags| goes
   with a 0x20 name: datagrams only (case.h). */
static int pool_case_on(const rp_query *q, const rp_res *r, uint32_t sflags) {
  return q->case_ok && !(sflags & RP_SEND_STREAM) &&
         !(r->flags & RP_RESOLVER_STREAM);
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
  pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CFG, now,
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
/* Tries                                                              */
/* ---------------------------------------------------------------- */

/* pool_query_live returns the number of open tries of |q| not judged
   lost. */
static unsigned pool_query_live(const rp_query *q) {
  unsigned n = 0;
  size_t i;

  for (i = 0; i < q->ntries; ++i) {
    n += q->tries[i].open && !q->tries[i].judged;
  }
  return n;
}

/* pool_linger_sync updates |q|'s linger flag and pool->nlinger after its
   tries or its answer changed. */
static void pool_linger_sync(rp_pool *pool, rp_query *q) {
  uint8_t linger = (uint8_t)(q->active && q->answered && q->nopen > 0 &&
                             pool_query_live(q) == 0);

  if (linger != q->linger) {
    q->linger = linger;
    if (linger) {
      ++pool->nlinger;
    } else {
      --pool->nlinger;
    }
  }
}

/* pool_copy_inflight returns the client queries in flight that the copy
   bound counts: those that do not linger. */
static size_t pool_copy_inflight(const rp_pool *pool) {
  assert(pool->nlinger <= pool->ninflight);
  return pool->ninflight - pool->nlinger;
}

/* pool_try_close closes the open try |t| of |q| without judging it. */
static void pool_try_close(rp_pool *pool, rp_query *q, rp_try *t,
                           rp_tstamp now) {
  rp_res *r = pool_res(pool, t->res);

  assert(t->open);
  t->open = 0;
  --q->nopen;
  pool_linger_sync(pool, q);
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

/* pool_rto returns |r|'s mean latency + hedge_devs deviations (of the
   cheapest resolver while |r|'s is unknown), or RP_TSTAMP_UNSET while
   no resolver's is known. */
static rp_duration pool_rto(const rp_pool *pool, const rp_res *r) {
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

/* pool_late returns the latency of |r|'s latest late answer of the last
   late_window at |now|, or 0 (none, or late_window 0). */
static rp_duration pool_late(const rp_pool *pool, const rp_res *r,
                             rp_tstamp now) {
  return pool->set.late_window > 0
             ? rp_rtt_late(&r->rtt, now, pool->set.late_window)
             : 0;
}

/* pool_judge_after returns how long after a send at |r| an overtaken
   try is judged lost at |now|: pool_rto, and not sooner than its latest
   late answer (pool_late); RP_TSTAMP_UNSET while no latency is known. */
static rp_duration pool_judge_after(const rp_pool *pool, const rp_res *r,
                                    rp_tstamp now) {
  rp_duration after = pool_rto(pool, r), late = pool_late(pool, r, now);

  return after != RP_TSTAMP_UNSET && late > after ? late : after;
}

/* pool_hedge_after returns how long after a send at |r| it is hedged,
   or RP_TSTAMP_UNSET for never (per_attempt comes first). While no
   latency is known it is hedge_initial (test_core_timing_first_loss_
   hedged); pool_hedge_known brings such a try's hedge forward once one
   is. */
static rp_duration pool_hedge_after(rp_pool *pool, const rp_res *r,
                                    rp_tstamp now) {
  const rp_settings *set = &pool->set;
  rp_duration rto = pool_rto(pool, r);
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

/* pool_kind_hedged returns 1 if a try of |kind| is hedged when it is
   slow: the tries a query depends on, not its copies and retries. */
static int pool_kind_hedged(rp_try_kind kind) {
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

/* pool_hedge_known gives the open tries sent while no latency was known
   (at start every resolver is new: they have no hedge time) the hedge
   time a send of theirs would get now that the first answer made one
   known. A query whose first try went to a dead resolver then goes to
   the one that answered at once, not after per_attempt (or
   hedge_initial, the time they got at their send, when that is later).
   Runs when the cost heap gains its first member: O(queries in
   flight), seldom. */
static void pool_hedge_known(rp_pool *pool, rp_tstamp now) {
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
      r = pool_res(pool, t->res);
      if (!t->open || t->hedged || !pool_kind_hedged((rp_try_kind)t->kind) ||
          r == NULL) {
        continue;
      }
      after = pool_hedge_after(pool, r, now);
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
      pool_query_schedule(pool, q, now);
    }
  }
}

/* pool_try_send sends |q| to |r| as a try of |kind|. Returns 1 if sent,
   0 if it could not be (no free try or ID), or RP_ERR_CALLBACK_FAILURE. */
static int pool_try_send(rp_pool *pool, rp_query *q, rp_res *r,
                         rp_try_kind kind, uint32_t sflags, int past_cap,
                         rp_tstamp now) {
  rp_try *t;
  uint16_t id = 0;
  int i, rv;
  rp_duration after;

  if (q->ntries >= RP_CORE_MAX_TRIES) {
    return 0;
  }
  for (i = 0; i < RP_CORE_ID_DRAWS; ++i) {
    id = pool_rand16(pool);
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
  if (pool_kind_hedged(kind)) {
    after = pool_hedge_after(pool, r, now);
    if (after != RP_TSTAMP_UNSET) {
      t->hedge_at = rp_tstamp_add(now, after);
    }
  }
  if (kind != RP_TRY_DOWNCOPY && kind != RP_TRY_STREAM && !r->down) {
    /* A datagram try is judged lost at the resolver's mean + 4
       deviations (or its latest late answer) if a later one overtook it
       (pool_try_judge). */
    after = pool_judge_after(pool, r, now);
    if (after != RP_TSTAMP_UNSET && after < pool->set.per_attempt) {
      t->judge_at = rp_tstamp_add(now, after);
    }
  }
  r->last_used = now;
  r->use_seq = ++pool->use_seq;
  if (rp_pq_entry_queued(&r->e_lru)) {
    rp_pq_update(rp_select_lru_heap(pool, r), &r->e_lru);
  }
  if (rp_pq_entry_queued(&r->e_strat)) {
    rp_pq_update(&pool->strat, &r->e_strat);
  }
  rp_ratelim_on_send(&r->rl, &pool->set, past_cap, now);
  if (past_cap && rp_pq_entry_queued(&r->e_pastcap)) {
    r->pastcap_at = rp_ratelim_past_cap_at(&r->rl, &pool->set);
    rp_pq_update(&pool->pastcap, &r->e_pastcap);
  }
  ++r->sent;
  ++pool->stats.sends;
  if (kind == RP_TRY_FIRST || kind == RP_TRY_COPY || kind == RP_TRY_HEDGE) {
    rp_copies_on_send(&pool->copies, &pool->set, kind != RP_TRY_FIRST, now);
  }
  pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_TX, now,
           "ev=send srv=%u id=%u kind=%d q=%u try=%u", r->slot, id, (int)kind,
           q->idx, (unsigned)(q->ntries - 1));
  rp_dns_set_id(q->buf, id);
  if (pool_case_on(q, r, sflags)) {
    /* Each try its own pattern; the client's bytes are written back
       after the send (case.h). */
    t->case_seed = pool_rand64(pool);
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

/* ---------------------------------------------------------------- */
/* Resolver state                                                     */
/* ---------------------------------------------------------------- */

/* pool_prob_sync counts |r| in pool->nprob_up while it is up, in
   probation and lost nothing yet: one that will soon take queries. */
static void pool_prob_sync(rp_pool *pool, rp_res *r) {
  int want = !r->down && r->probation && !r->prob_failed;

  if (want && !r->prob_counted) {
    ++pool->nprob_up;
  } else if (!want && r->prob_counted) {
    --pool->nprob_up;
  }
  r->prob_counted = want;
}

/* pool_res_down takes |r| down at |now|. */
static void pool_res_down(rp_pool *pool, rp_res *r, rp_tstamp now) {
  rp_select_unplace(pool, r);
  r->down = 1;
  r->where = RP_WHERE_DOWN;
  --pool->nup;
  pool_prob_sync(pool, r);
  if (rp_list_linked(&r->rr_node)) {
    if (pool->rr_next == &r->rr_node) {
      pool->rr_next = r->rr_node.next;
    }
    rp_list_remove(&r->rr_node);
  }
  rp_select_refresh(pool, r, now);
  r->last_down_copy = now;
  r->last_probe = now;
  rp_pool_timer_set(pool, &r->timer,
                    rp_tstamp_add(now, pool->set.down_copy_interval));
  pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_SEL, now,
           "ev=down srv=%u name=%s fails=%u", r->slot, r->name,
           r->health.fails_in_row);
}

static int pool_res_up(rp_pool *pool, rp_res *r, rp_tstamp now) {
  if (!r->down) {
    return 0;
  }
  rp_pool_timer_set(pool, &r->timer, RP_TSTAMP_UNSET);
  if (rp_list_linked(&r->down_node)) {
    rp_list_remove(&r->down_node);
  }
  r->down = 0;
  r->where = RP_WHERE_NONE;
  ++pool->nup;
  r->prob_failed = 0;
  pool_prob_sync(pool, r);
  /* What it lost while down (and the tries sent then that are still
     open) says nothing about it now that it answers again: a revived
     resolver starts with a clean loss record and no cap. */
  r->up_at = now;
  rp_health_revive(&r->health);
  rp_ratelim_revive(&r->rl);
  rp_list_push_back(&pool->rr_ring, &r->rr_node);
  rp_select_refresh(pool, r, now);
  rp_select_place(pool, r, now);
  pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_SEL, now, "ev=up srv=%u name=%s",
           r->slot, r->name);
  return 1;
}

/* pool_res_reply records a reply (answer or refusal) from |r| to a try
   sent at |sent|. */
static void pool_res_reply(rp_pool *pool, rp_res *r, rp_tstamp sent,
                           int score_delta, rp_tstamp now) {
  ++r->replies;
  if (sent > r->newest_reply_sent) {
    r->newest_reply_sent = sent;
  }
  rp_health_reply(&r->health, pool->set.loss_window, score_delta, now);
  if (r->probation && r->replies >= pool->set.probation_answers) {
    r->probation = 0;
    pool_prob_sync(pool, r);
  }
  rp_select_probation_sync(pool, r, now);
  pool_res_up(pool, r, now);
}

/* pool_res_failed records a timeout or network error of a try of |r|
   sent at |sent|; |is_drop| is 1 for a try lost without an answer,
   |overtaken| 1 if a try sent after it to |r| got a reply. Returns the
   number of losses counted in its health. */
static uint32_t pool_res_failed(rp_pool *pool, rp_res *r, rp_tstamp sent,
                                int is_drop, int overtaken, rp_tstamp now) {
  uint32_t count_loss = 1;

  if (sent < r->up_at) {
    /* Sent while it was down: judged when it went down. */
    return 0;
  }
  if (is_drop) {
    ++r->dropped;
    if (rp_ratelim_on_drop(&r->rl, &pool->set, sent, overtaken, now,
                           &count_loss)) {
      pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CAP, now,
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
    pool_prob_sync(pool, r);
    rp_select_probation_sync(pool, r, now);
  }
  if (!r->down && r->health.fails_in_row >= pool->set.down_after) {
    pool_res_down(pool, r, now);
  }
  rp_select_refresh(pool, r, now);
  return count_loss;
}

/* ---------------------------------------------------------------- */
/* Queries                                                            */
/* ---------------------------------------------------------------- */

/* pool_deliver hands |len| bytes to |q|'s client with its ID. */
static int pool_deliver(rp_pool *pool, rp_query *q, const uint8_t *data,
                        size_t len, uint32_t flags) {
  if (len > RP_DNS_MAX_MSG_LEN) {
    return 0;
  }
  if (data != pool->scratch) {
    memcpy(pool->scratch, data, len);
  }
  rp_dns_set_id(pool->scratch, q->client_id);
  if (rp_pq_entry_queued(&q->e_wait)) {
    /* Answered while waiting (a copy to a down resolver came back). */
    rp_pq_remove(&pool->waits, &q->e_wait);
    q->wait_until = RP_TSTAMP_UNSET;
  }
  if (q->answered) {
    flags |= RP_DELIVER_EXTRA;
    ++pool->stats.duplicates_delivered;
  } else {
    ++pool->stats.delivered;
  }
  q->answered = 1;
  pool_linger_sync(pool, q);
  if (pool->cb.deliver(pool, &q->client, pool->scratch, len, flags,
                       pool->now, pool->user_data) != 0) {
    return RP_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

/* pool_deliver_judged delivers an answer of |q|, judging a later one by
   what it carries (copies.h): one that repeats the bytes of an answer
   already delivered is not passed on (and judges the query's copies as
   carrying nothing), one with other bytes is passed on with
   RP_DELIVER_EXTRA. */
static int pool_deliver_judged(rp_pool *pool, rp_query *q,
                               const uint8_t *data, size_t len) {
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
          rp_copies_judge(&pool->copies, &pool->set, 0);
        }
        return 0;
      }
    }
    if (q->had_copy) {
      ++pool->stats.copies_data;
      rp_copies_judge(&pool->copies, &pool->set, 1);
    }
  }
  if (need && q->nseen < RP_COPIES_SEEN) {
    q->seen[q->nseen++] = h;
  }
  return pool_deliver(pool, q, data, len, 0);
}

/* pool_fail_bytes answers |len| bytes of a client query with |rcode|. */
static int pool_fail_bytes(rp_pool *pool, const rp_client *client,
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

/* pool_query_fail fails |q| with SERVFAIL (if not answered yet). */
static int pool_query_fail(rp_pool *pool, rp_query *q) {
  if (q->answered) {
    return 0;
  }
  q->answered = 1;
  pool_linger_sync(pool, q);
  return pool_fail_bytes(pool, &q->client, q->buf, q->len,
                         RP_DNS_RCODE_SERVFAIL);
}

/* pool_query_free ends |q|: its open tries are dropped unjudged. */
static void pool_query_free(rp_pool *pool, rp_query *q, rp_tstamp now) {
  size_t i;

  for (i = 0; i < q->ntries; ++i) {
    if (q->tries[i].open) {
      pool_try_close(pool, q, &q->tries[i], now);
    }
  }
  rp_pool_timer_set(pool, &q->timer, RP_TSTAMP_UNSET);
  rp_pq_remove(&pool->waits, &q->e_wait);
  rp_list_remove(&q->node);
  /* Last freed, first reused: its memory is still in the cache. */
  rp_list_push_front(&pool->free_q, &q->node);
  q->active = 0;
  pool_linger_sync(pool, q);
  --pool->ninflight;
}

/* POOL_PROBATION_STALE is how many tries per probation may be marked
   stale. */
#define POOL_PROBATION_STALE 8

/* pool_try_may_stale returns 1 if the open try |t| is at a resolver in
   probation and may be marked stale (pool_try_stale_at): a few times
   per probation (POOL_PROBATION_STALE), at most once more than the
   resolver replied (a dead resolver costs two queries: a live tunnel
   server that holds the first answers it when the second comes), and
   while it lost nothing in probation. */
static int pool_try_may_stale(const rp_pool *pool, const rp_try *t) {
  const rp_res *r = pool_res(pool, t->res);

  return r != NULL && r->probation && !t->stale && !t->judged &&
         t->kind != RP_TRY_DOWNCOPY && t->kind != RP_TRY_STREAM &&
         r->stale_used < POOL_PROBATION_STALE &&
         (uint64_t)r->stale_used <= r->replies && !r->prob_failed;
}

/* pool_try_stale_at returns when the open try |t| may be marked stale:
   its judge time (the resolver's mean latency + 4 deviations), but no
   sooner than past_cap_interval after its send (a burst limit it met
   refills meanwhile, as for a send past a cap). */
static rp_tstamp pool_try_stale_at(const rp_pool *pool, const rp_try *t) {
  rp_tstamp floor = rp_tstamp_add(t->sent, pool->set.past_cap_interval);

  return t->judge_at != RP_TSTAMP_UNSET && t->judge_at > floor ? t->judge_at
                                                               : floor;
}

/* pool_try_stale marks the open try |t| stale: its resolver may take
   its next probation query. */
static void pool_try_stale(rp_pool *pool, rp_try *t, rp_tstamp now) {
  rp_res *r = pool_res(pool, t->res);

  if (!pool_try_may_stale(pool, t)) {
    return;
  }
  ++r->stale_used;
  t->stale = 1;
  ++r->stale;
  /* Nothing is judged: an unanswered try may be a poll the tunnel
     server holds. If it was lost, the next try overtakes it and it is
     judged then (pool_try_judge). stale_caps restores the old rule that
     capped the resolver here, reading a held poll as a burst limit met
     (docs/simulator.md, "The stale-cap fixture"). */
  if (pool->set.stale_caps &&
      rp_ratelim_on_stale(&r->rl, &pool->set, t->sent, now)) {
    pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CAP, now,
             "ev=cap srv=%u why=stale cap_qps=%.1f", r->slot, r->rl.cap);
  }
  rp_select_probation_sync(pool, r, now);
}

/* pool_try_judge judges the open try |t| lost at |now|: a try sent after
   it to the same resolver got a reply (|overtaken| 1), or an answer
   came for it in another case than its 0x20 name (|overtaken| 0: no
   loss is counted, the resolver answered). It stays open until
   per_attempt (a late answer still counts), no longer holds a probation
   slot, and its query is sent again when nothing else of it is out.
   Returns 0 or a fatal error. */
static int pool_try_judge(rp_pool *pool, rp_try *t, int overtaken,
                          rp_tstamp now) {
  rp_query *q = t->query;
  rp_res *r = pool_res(pool, t->res);
  int rv = 0;

  assert(t->open && !t->judged && r != NULL);
  t->judged = 1;
  pool_linger_sync(pool, q);
  t->hedged = 1;
  rp_list_remove(&t->res_node);
  rp_list_push_back(&r->lost, &t->res_node);
  if (!t->stale) {
    t->stale = 1;
    ++r->stale;
  }
  if (overtaken) {
    pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_RX, now,
             "ev=lost srv=%u id=%u q=%u why=overtaken sent=%.6f newest=%.6f",
             r->slot, t->upstream_id, q->idx, (double)t->sent / POOL_NS_PER_S,
             (double)r->newest_reply_sent / POOL_NS_PER_S);
    t->judged_drop =
        pool_res_failed(pool, r, t->sent, 1, 1, now) > 0 ? RP_JUDGED_LOSS
                                                         : RP_JUDGED_RATE;
  }
  rp_select_probation_sync(pool, r, now);
  if (!q->answered && pool_query_live(q) == 0 &&
      !rp_pq_entry_queued(&q->e_wait) && now < q->deadline_at) {
    rv = pool_query_place(pool, q, RP_TRY_RESEND, now);
  }
  return rv;
}

/* pool_try_late takes back what the judgement of |t|, an open try of |r|
   judged lost (judged_drop), counted: its answer came at |now|, |lat|
   after its send; the resolver reorders (settings.late_window). */
static void pool_try_late(rp_pool *pool, rp_res *r, const rp_try *t,
                          rp_duration lat, rp_tstamp now) {
  ++r->late;
  ++pool->stats.late;
  if (pool->set.late_window == 0) {
    return;
  }
  rp_rtt_late_add(&r->rtt, lat, now, pool->set.late_window);
  if (t->judged_drop == RP_JUDGED_LOSS) {
    rp_health_late(&r->health, pool->set.loss_window, now);
  }
  if (rp_ratelim_on_late(&r->rl, &pool->set, t->sent, now)) {
    pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CAP, now,
             "ev=cap srv=%u why=late cap_qps=%.1f late=%u/%u", r->slot,
             r->rl.cap, r->rl.exp_late, r->rl.exp_drops);
  }
}

/* pool_res_overtaken judges lost the open datagram tries of |r| that a
   reply to a later try overtook, once |r|'s current mean latency + 4
   deviations (or its latest late answer, pool_judge_after) passed since
   their send. The tries are in send order and
   the time is the same for all, so the scan stops at the first that is
   not due. (Each try's own judge_at, from the latency when it was sent,
   is checked once by its timer; it is no order for the scan: a try sent
   before any latency was known has none, and one at the head of the
   list kept every later loss of its resolver unjudged until per_attempt
   expired: 2 s in which a resolver losing 10 % showed 1 %.) */
static int pool_res_overtaken(rp_pool *pool, rp_res *r, rp_tstamp now) {
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
      rto = pool_judge_after(pool, r, now);
      if (rto == RP_TSTAMP_UNSET || rto >= pool->set.per_attempt) {
        break;
      }
    }
    if (now < rp_tstamp_add(t->sent, rto)) {
      break;
    }
    rv = pool_try_judge(pool, t, 1, now);
    pool_query_finish(pool, t->query, now);
    if (rv < 0) {
      return rv;
    }
  }
  return 0;
}

/* pool_query_next returns |q|'s next event. */
static rp_tstamp pool_query_next(const rp_pool *pool, const rp_query *q) {
  rp_tstamp at = q->deadline_at;
  size_t i;

  if (q->wait_until != RP_TSTAMP_UNSET) {
    at = pool_min(at, q->wait_until);
  }
  if (!q->answered && q->copy_at != RP_TSTAMP_UNSET) {
    at = pool_min(at, q->copy_at);
  }
  for (i = 0; i < q->ntries; ++i) {
    const rp_try *t = &q->tries[i];

    if (!t->open) {
      continue;
    }
    at = pool_min(at, t->expire_at);
    if (!t->judged && !t->judge_checked && t->judge_at != RP_TSTAMP_UNSET) {
      at = pool_min(at, t->judge_at);
    }
    if (!q->answered && !t->hedged && t->hedge_at != RP_TSTAMP_UNSET &&
        q->nhedges < pool->set.max_hedges) {
      at = pool_min(at, t->hedge_at);
    }
    if (pool_try_may_stale(pool, t)) {
      at = pool_min(at, pool_try_stale_at(pool, t));
    }
  }
  return at;
}

static void pool_query_schedule(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_tstamp at = pool_query_next(pool, q);

  if (at <= now) {
    at = now + 1;
  }
  rp_pool_timer_set(pool, &q->timer, at);
}

/* pool_query_finish frees |q| if it is done, else reschedules it. */
static void pool_query_finish(rp_pool *pool, rp_query *q, rp_tstamp now) {
  if (q->answered && q->nopen == 0) {
    pool_query_free(pool, q, now);
  } else {
    pool_query_schedule(pool, q, now);
  }
}

static int pool_send_copies(rp_pool *pool, rp_query *q, rp_tstamp now);
static int pool_arm_copies(rp_pool *pool, rp_query *q, const rp_res *r,
                           rp_tstamp now);

/* pool_copy_at returns when |q|'s copies go: a quarter of a round trip
   of its first resolver after the first send, or with it when that is
   less than copy_min_delay. */
static rp_tstamp pool_copy_at(rp_pool *pool, const rp_res *r, rp_tstamp now) {
  rp_duration rtt = rp_rtt_fastest(&r->rtt), delay;
  const rp_pq_entry *pe;

  if (rtt == RP_TSTAMP_UNSET) {
    pe = rp_pq_top(&pool->unlim);
    rtt = pe ? rp_rtt_fastest(&rp_container_of_const(pe, rp_res, e_unlim)->rtt)
             : 0;
  }
  delay = (rp_duration)(pool->set.copy_delay_rtt * (double)rtt);
  return rp_tstamp_add(now, delay < pool->set.copy_min_delay ? 0 : delay);
}

/* pool_copies_fit trims |q|'s copies to what the client can take after
   its first send went to |r|. With copy_inflight_rtt 0: none while more
   than copy_max_inflight client queries are in flight, and the same over
   a resolver no slower than copy_inflight_rtt (answers come back
   together: two copies each on one fast resolver overflowed the real
   MasterDnsVPN client's sockets). Over a slower one the bound is on
   answers in flight, 2 x copy_max_inflight per copy_inflight_rtt of its
   fastest round trip, counting each query with its copies, and the
   copies may share a resolver. */
static void pool_copies_fit(const rp_pool *pool, rp_query *q,
                            const rp_res *r, rp_tstamp now) {
  rp_duration rtt = rp_rtt_fastest(&r->rtt), unit = pool->set.copy_inflight_rtt;
  double bound = (double)pool->set.copy_max_inflight, limit;

  if (pool->set.copy_ramp > 0 && now - pool->ramp_from < pool->set.copy_ramp) {
    bound *= (double)(now - pool->ramp_from) / (double)pool->set.copy_ramp;
  }
  q->copy_stack = 0;
  if (unit == 0 || rtt == RP_TSTAMP_UNSET || rtt <= unit) {
    if ((double)pool_copy_inflight(pool) > bound) {
      q->copies = 0;
    }
    return;
  }
  q->copy_stack = 1;
  limit = 2.0 * bound;
  limit *= (double)rtt / (double)unit;
  while (q->copies > 0 &&
         (double)pool_copy_inflight(pool) * (double)(1u + q->copies) > limit) {
    --q->copies;
  }
}

/* pool_query_spill sends |q|, which no resolver of the band can take,
   to the cheapest one out of the band with room (rp_select_spill), as a
   query would fail or wait on otherwise. Returns 1 when sent, 0 when
   none has room, or a fatal error. */
static int pool_query_spill(rp_pool *pool, rp_query *q, rp_tstamp now) {
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
  pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
           "ev=select q=%u srv=%u why=spill cost_ms=%.1f loss=%.3f "
           "cap_qps=%.1f band=%zu out=%zu",
           q->idx, r->slot, r->cost / POOL_NS_PER_MS,
           rp_health_loss_ratio(&r->health), r->rl.cap, pool->band.len,
           pool->out.len);
  ++pool->stats.spills;
  return pool_try_send(pool, q, r,
                       q->ntries == 0 ? RP_TRY_FIRST : RP_TRY_RESEND, 0, 0,
                       now);
}

/* pool_query_place sends |q| to the best resolver with capacity; when
   none has any it sends past a cap, waits or fails. Returns 0 or a fatal
   error. */
static int pool_query_place(rp_pool *pool, rp_query *q, rp_try_kind kind,
                            rp_tstamp now) {
  uint32_t slot;
  int past_cap = 0, rv;
  rp_res *r;

  if (rp_pq_entry_queued(&q->e_wait)) {
    /* Already waiting (a down copy of it failed): pool_drain places it. */
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
    pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
             "ev=select q=%u srv=%u why=%s cost_ms=%.1f loss=%.3f "
             "cap_qps=%.1f band=%zu out=%zu",
             q->idx, r->slot,
             past_cap           ? "past_cap"
             : rp_res_proven(r) ? "band"
                                : "unproven",
             r->cost / POOL_NS_PER_MS, rp_health_loss_ratio(&r->health),
             r->rl.cap, pool->band.len, pool->out.len);
    rv = pool_try_send(pool, q, r, past_cap ? RP_TRY_PASTCAP : kind, 0,
                       past_cap, now);
    if (rv < 0) {
      return rv;
    }
    if (rv == 1) {
      if (kind == RP_TRY_FIRST && q->copies > 0) {
        rv = pool_arm_copies(pool, q, r, now);
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
  if (pool_query_live(q) > 0 || q->answered) {
    return 0;
  }
  pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
           "ev=select q=%u srv=none why=%s band=%zu token=%zu", q->idx,
           pool->set.wait_for_token ? "wait" : "fail", pool->band.len,
           pool->pastcap.len);
  if (q->wait_end == RP_TSTAMP_UNSET) {
    q->wait_end =
        pool_min(rp_tstamp_add(now, pool->set.token_wait), q->deadline_at);
  }
  /* A resolver still in probation is no cap: while one is, the query is
     held (it takes the probation slot when it frees), never failed at
     once, whatever wait_for_token says. */
  if ((pool->set.wait_for_token || pool->nprob_up > 0) &&
      q->ntries < RP_CORE_MAX_TRIES && now < q->wait_end) {
    q->wait_until = q->wait_end;
    if (!q->waited) {
      ++pool->stats.waits;
    }
    q->waited = 1;
    rv = rp_pq_push(&pool->waits, &q->e_wait);
    /* Room for every query was reserved. */
    assert(rv == 0);
    return 0;
  }
  rv = pool_query_spill(pool, q, now);
  if (rv != 0) {
    return rv < 0 ? rv : 0;
  }
  return pool_query_fail(pool, q);
}

/* pool_pastcap_skip moves on a past-cap candidate whose time came but
   that could not take the query (probation with a query in flight), so
   that rp_pool_get_expiry never stays in the past. */
static void pool_pastcap_skip(rp_pool *pool, rp_tstamp now) {
  rp_pq_entry *pe = rp_pq_top(&pool->pastcap);
  rp_res *r;

  if (pe == NULL) {
    return;
  }
  r = rp_container_of(pe, rp_res, e_pastcap);
  if (r->pastcap_at <= now) {
    r->pastcap_at = rp_tstamp_add(now, pool->set.past_cap_interval);
    rp_pq_update(&pool->pastcap, &r->e_pastcap);
  }
}

/* pool_drain places waiting queries while some resolver has capacity. */
static int pool_drain(rp_pool *pool, rp_tstamp now) {
  rp_query *q;
  int rv;

  while (rp_pq_top(&pool->waits) != NULL) {
    uint32_t slot;
    int past_cap = 0;

    q = rp_container_of(rp_pq_top(&pool->waits), rp_query, e_wait);
    slot = rp_select_primary(pool, q, now);
    if (slot == RP_CORE_NONE && pool->set.load_balance == RP_BALANCE_AUTO) {
      slot = rp_select_past_cap(pool, q, now);
      past_cap = slot != RP_CORE_NONE;
    }
    if (slot == RP_CORE_NONE) {
      pool_pastcap_skip(pool, now);
      return 0;
    }
    rp_pq_pop(&pool->waits);
    q->wait_until = RP_TSTAMP_UNSET;
    rv = pool_try_send(pool, q, pool->res[slot],
                       past_cap         ? RP_TRY_PASTCAP
                       : q->ntries == 0 ? RP_TRY_FIRST
                                        : RP_TRY_RESEND,
                       0, past_cap, now);
    if (rv < 0) {
      return rv;
    }
    if (rv == 1 && q->ntries == 1 && q->copies > 0) {
      int crv = pool_arm_copies(pool, q, pool->res[slot], now);

      if (crv < 0) {
        return crv;
      }
    }
    if (rv == 0) {
      rv = pool_query_fail(pool, q);
      if (rv < 0) {
        return rv;
      }
    }
    pool_query_finish(pool, q, now);
  }
  return 0;
}

/* pool_arm_copies sets when |q|'s copies go after its first send to |r|;
   copies due at once (copy_delay_rtt 0) go now, not at the runtime's next
   timer (a millisecond: after a fast resolver's answer). Returns 0 or a
   fatal error. */
static int pool_arm_copies(rp_pool *pool, rp_query *q, const rp_res *r,
                           rp_tstamp now) {
  pool_copies_fit(pool, q, r, now);
  if (q->copies == 0) {
    return 0;
  }
  q->copy_at = pool_copy_at(pool, r, now);
  if (q->copy_at <= now) {
    return pool_send_copies(pool, q, now);
  }
  return 0;
}

/* pool_send_copies sends |q|'s copies. */
static int pool_send_copies(rp_pool *pool, rp_query *q, rp_tstamp now) {
  uint32_t slot;
  rp_res *r;
  int rv;

  q->copy_at = RP_TSTAMP_UNSET;
  while (q->copies > 0 && !q->answered) {
    if (!rp_copies_may_extra(&pool->copies, &pool->set, now)) {
      ++pool->stats.extras_skipped;
      break;
    }
    slot = rp_select_copy(pool, q, now);
    if (slot == RP_CORE_NONE) {
      break;
    }
    r = pool->res[slot];
    rv = pool_try_send(pool, q, r, RP_TRY_COPY, 0, 0, now);
    if (rv < 0) {
      return rv;
    }
    if (rv == 0) {
      break;
    }
    --q->copies;
    q->had_copy = 1;
    ++r->copies;
    ++pool->stats.copies;
  }
  return 0;
}

/* pool_try_expired judges an open try that reached per_attempt. */
static int pool_try_expired(rp_pool *pool, rp_query *q, rp_try *t,
                            rp_tstamp now) {
  rp_res *r = pool_res(pool, t->res);
  rp_tstamp sent = t->sent;
  int judged = t->judged;

  pool_try_close(pool, q, t, now);
  if (r != NULL && !judged) {
    pool_res_failed(pool, r, sent, 1, sent < r->newest_reply_sent, now);
  }
  if (!q->answered && q->nopen == 0 && now < q->deadline_at) {
    return pool_query_place(pool, q, RP_TRY_RESEND, now);
  }
  return 0;
}

/* pool_hedge_later re-arms the hedge of |t| that found no resolver with
   room while one that answered is up: it is tried again a hedge delay
   (at least token_wait) later, until one has room, instead of the query
   waiting out per_attempt. At a resolver that never replied (most
   likely dead) the room is a new one's probation slow start; at one
   that replied it is a token: a dropping resolver that took a burst
   holds every try of it, and with no later send there nothing overtakes
   them (the real MasterDnsVPN client's window stalled for per_attempt,
   2 s, at the start of three-limited-one-dead). */
static void pool_hedge_later(rp_pool *pool, rp_try *t, rp_tstamp now) {
  rp_res *r = pool_res(pool, t->res);
  rp_duration after;

  if (r == NULL || rp_pq_top(&pool->cost) == NULL) {
    return;
  }
  after = pool_hedge_after(pool, r, now);
  if (after != RP_TSTAMP_UNSET) {
    if (rp_res_proven(r) && after < pool->set.token_wait) {
      after = pool->set.token_wait;
    }
    t->hedged = 0;
    t->hedge_at = rp_tstamp_add(now, after);
  }
}

/* pool_hedge_nudge sends |q| again to the resolver of its slow try |t|
   when no other has room and nothing went to that resolver since |t|
   (a try is judged lost only when a later one overtakes it): a dropper
   that took a burst and then nothing (the client's window full of the
   dropped queries) showed no drop until per_attempt. The nudge's answer
   overtakes the burst's dropped tries, which are then resent; a dropped
   nudge is nudged in turn, at most one a past_cap_interval. Returns 1
   when sent, 0 when not, or a fatal error. */
static int pool_hedge_nudge(rp_pool *pool, rp_query *q, rp_try *t,
                            rp_tstamp now) {
  rp_res *r = pool_res(pool, t->res);
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
  pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
           "ev=select q=%u srv=%u why=nudge", q->idx, r->slot);
  rv = pool_try_send(pool, q, r, RP_TRY_HEDGE, 0, 0, now);
  if (rv == 1) {
    ++q->nhedges;
    ++r->hedges;
    ++pool->stats.hedges;
  }
  return rv;
}

/* pool_query_service runs |q|'s due events at |now|. */
static int pool_query_service(rp_pool *pool, rp_query *q, rp_tstamp now) {
  size_t i, n;
  uint32_t slot;
  rp_res *r;
  int rv;

  if (now >= q->deadline_at) {
    rv = pool_query_fail(pool, q);
    pool_query_free(pool, q, now);
    return rv;
  }
  if (q->wait_until != RP_TSTAMP_UNSET && now >= q->wait_until) {
    q->wait_until = RP_TSTAMP_UNSET;
    rv = pool_query_spill(pool, q, now);
    if (rv < 0) {
      return rv;
    }
    if (rv == 1) {
      rp_pq_remove(&pool->waits, &q->e_wait);
    } else if (pool->nprob_up > 0) {
      /* A resolver in probation that lost and refused nothing will soon
         take it (a slow one's first replies come after a round trip):
         wait one more token_wait, up to the deadline, instead of
         failing. */
      q->wait_until =
          pool_min(rp_tstamp_add(now, pool->set.token_wait), q->deadline_at);
    } else {
      rp_pq_remove(&pool->waits, &q->e_wait);
      rv = pool_query_fail(pool, q);
      if (rv < 0) {
        return rv;
      }
    }
  }
  if (!q->answered && q->copy_at != RP_TSTAMP_UNSET && now >= q->copy_at) {
    rv = pool_send_copies(pool, q, now);
    if (rv < 0) {
      return rv;
    }
  }
  n = q->ntries;
  for (i = 0; i < n; ++i) {
    rp_try *t = &q->tries[i];

    if (!t->open) {
      continue;
    }
    if (now >= t->expire_at) {
      rv = pool_try_expired(pool, q, t, now);
      if (rv < 0) {
        return rv;
      }
      continue;
    }
    if (!t->judged && !t->judge_checked && t->judge_at != RP_TSTAMP_UNSET &&
        now >= t->judge_at) {
      rp_res *tr = pool_res(pool, t->res);
      rp_duration late = tr != NULL ? pool_late(pool, tr, now) : 0;

      if (late > 0 && late < pool->set.per_attempt &&
          now < rp_tstamp_add(t->sent, late)) {
        /* A late answer since its send holds it back. */
        t->judge_at = rp_tstamp_add(t->sent, late);
      } else {
        t->judge_checked = 1;
        if (tr != NULL && t->sent < tr->newest_reply_sent &&
            late < pool->set.per_attempt) {
          rv = pool_try_judge(pool, t, 1, now);
          if (rv < 0) {
            return rv;
          }
          continue;
        }
      }
    }
    if (pool_try_may_stale(pool, t) && now >= pool_try_stale_at(pool, t)) {
      pool_try_stale(pool, t, now);
    }
    if (!q->answered && !t->hedged && t->hedge_at != RP_TSTAMP_UNSET &&
        now >= t->hedge_at && q->nhedges < pool->set.max_hedges) {
      t->hedged = 1;
      if (!rp_copies_may_extra(&pool->copies, &pool->set, now)) {
        ++pool->stats.extras_skipped;
        continue;
      }
      /* Over hedge_max_inflight its answer would come on top of a full
         stream: no hedge, as when none has room; a dropper that took a
         burst is still nudged (test_core_caps_hedge_waits_for_room). */
      slot = pool->set.hedge_max_inflight > 0 &&
                     pool_copy_inflight(pool) > pool->set.hedge_max_inflight
                 ? RP_CORE_NONE
                 : rp_select_hedge(pool, q, t->res, now);
      if (slot == RP_CORE_NONE) {
        rv = pool_hedge_nudge(pool, q, t, now);
        if (rv < 0) {
          return rv;
        }
        if (rv == 0) {
          pool_hedge_later(pool, t, now);
        }
        continue;
      }
      r = pool->res[slot];
      rv = pool_try_send(pool, q, r, RP_TRY_HEDGE, 0, 0, now);
      if (rv < 0) {
        return rv;
      }
      if (rv == 1) {
        ++q->nhedges;
        ++r->hedges;
        ++pool->stats.hedges;
      }
    }
  }
  pool_query_finish(pool, q, now);
  return 0;
}

/* ---------------------------------------------------------------- */
/* Resolvers: add, remove, timers                                     */
/* ---------------------------------------------------------------- */

/* pool_grow_res makes room for slot |slot| in the resolver array and in
   the Fenwick tree. Returns 0 or RP_ERR_NOMEM. */
static int pool_grow_res(rp_pool *pool, size_t slot) {
  size_t ncap = pool->res_cap ? pool->res_cap : 16, i, j;
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
  /* Rebuild the Fenwick tree for the new size. */
  for (i = 0; i < ncap; ++i) {
    uint64_t w = i < pool->res_cap && nres[i] ? nres[i]->fw_weight : 0;

    for (j = i + 1; j <= ncap && w; j += j & (~j + 1)) {
      nfw[j] += w;
    }
  }
  pool->mem.free(pool->fw, pool->mem.user_data);
  pool->fw = nfw;
  pool->res = nres;
  pool->res_cap = ncap;
  return 0;
}

int rp_pool_add_resolver(rp_pool *pool, const rp_resolver_config *config,
                         uint32_t *presolver_id, rp_tstamp now) {
  size_t slot, need;
  rp_res *r;
  int rv;

  if (pool == NULL || config == NULL || presolver_id == NULL) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  pool->now = now;
  if (pool->nres >= pool->set.max_resolvers) {
    return RP_ERR_FULL;
  }
  for (slot = pool->res_hint; slot < pool->res_cap && pool->res[slot] != NULL;
       ++slot) {
  }
  rv = pool_grow_res(pool, slot);
  if (rv != 0) {
    return rv;
  }
  need = pool->nres + 1;
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
  r = pool->mem.calloc(1, sizeof(*r), pool->mem.user_data);
  if (r == NULL) {
    return RP_ERR_NOMEM;
  }
  r->slot = (uint32_t)slot;
  r->flags = config->flags;
  r->user_data = config->user_data;
  if (config->name) {
    snprintf(r->name, sizeof(r->name), "%s", config->name);
  }
  r->where = RP_WHERE_NONE;
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
  pool->res[slot] = r;
  pool->res_hint = slot + 1;
  ++pool->nres;
  ++pool->nup;
  pool_prob_sync(pool, r);
  rp_list_push_back(&pool->rr_ring, &r->rr_node);
  rp_select_refresh(pool, r, now);
  rp_select_place(pool, r, now);
  *presolver_id = (uint32_t)slot;
  return pool_drain(pool, now);
}

int rp_pool_remove_resolver(rp_pool *pool, uint32_t resolver_id,
                            rp_tstamp now) {
  rp_res *r = pool ? pool_res(pool, resolver_id) : NULL;
  rp_query *q;
  rp_try *t;
  int rv = 0, rv2;

  if (r == NULL) {
    return RP_ERR_NOT_FOUND;
  }
  pool->now = now;
  /* Take it out of every set first so no resend picks it. */
  rp_select_unplace(pool, r);
  rp_pool_timer_set(pool, &r->timer, RP_TSTAMP_UNSET);
  if (!r->down) {
    --pool->nup;
  }
  r->down = 1;
  r->where = RP_WHERE_NONE;
  pool_prob_sync(pool, r);
  rp_select_refresh(pool, r, now);
  rp_select_fw_set(pool, r, 0);
  rp_pq_remove(&pool->strat, &r->e_strat);
  if (rp_list_linked(&r->rr_node)) {
    if (pool->rr_next == &r->rr_node) {
      pool->rr_next = r->rr_node.next;
    }
    rp_list_remove(&r->rr_node);
  }
  pool_list_splice(&r->tries, &r->lost);
  while (!rp_list_empty(&r->tries)) {
    t = rp_container_of(r->tries.next, rp_try, res_node);
    q = t->query;
    pool_try_close(pool, q, t, now);
    if (!q->answered && q->nopen == 0 && !rp_pq_entry_queued(&q->e_wait) &&
        rv == 0) {
      rv2 = pool_query_place(pool, q, RP_TRY_RESEND, now);
      if (rv2 < 0) {
        rv = rv2;
      }
    }
    pool_query_finish(pool, q, now);
  }
  if (r->probe_open) {
    rp_idmap_del(&pool->ids, r->slot, r->probe_id);
  }
  if (rp_list_linked(&r->down_node)) {
    rp_list_remove(&r->down_node);
  }
  pool->res[resolver_id] = NULL;
  if (resolver_id < pool->res_hint) {
    pool->res_hint = resolver_id;
  }
  --pool->nres;
  pool->mem.free(r, pool->mem.user_data);
  return rv;
}

/* pool_probe sends a standalone probe to the down resolver |r|: a copy
   of the most recent client query, else a query for probe_name. */
static int pool_probe(rp_pool *pool, rp_res *r, rp_tstamp now) {
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
    id = pool_rand16(pool);
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
  if (pool_case_active(pool) && !(r->flags & RP_RESOLVER_STREAM) &&
      rp_case_eligible(pool->scratch, len, &msg.question)) {
    r->probe_case_seed = pool_rand64(pool);
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

/* pool_down_may_copy returns 1 if the live query |q| may carry a copy to
   a down resolver: unanswered, with room left for its own hedges and
   resends, and no such copy yet. One a query: with thousands of down
   resolvers (listed unchecked), a copy a second to each filled every
   query's tries and multiplied the load by its number of tries. */
static int pool_down_may_copy(const rp_query *q) {
  size_t i;

  if (q->answered || q->ntries + POOL_DOWN_ROOM >= RP_CORE_MAX_TRIES) {
    return 0;
  }
  for (i = 0; i < q->ntries; ++i) {
    if (q->tries[i].kind == RP_TRY_DOWNCOPY) {
      return 0;
    }
  }
  return 1;
}

/* pool_down_timer copies a live query to the down resolver |r| once per
   down_copy_interval, or probes it every probe_interval when idle. */
static int pool_down_timer(rp_pool *pool, rp_res *r, rp_tstamp now) {
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
    rp_idmap_del(&pool->ids, r->slot, r->probe_id);
    r->probe_open = 0;
    ++r->dropped;
    rp_health_loss(&r->health, pool->set.loss_window, 1, 1,
                   pool->set.score_failure, now);
  }
  if (rp_tstamp_elapsed(r->last_down_copy, pool->set.down_copy_interval, now)) {
    for (n = pool->live_q.prev; n != &pool->live_q && scanned < POOL_DOWN_SCAN;
         n = n->prev, ++scanned) {
      q = rp_container_of(n, rp_query, node);
      if (pool_down_may_copy(q) && !rp_select_has_open(q, r->slot)) {
        pick = q;
        break;
      }
    }
    if (pick != NULL) {
      if (rp_list_linked(&r->down_node)) {
        rp_list_remove(&r->down_node);
      }
      rv = pool_try_send(pool, pick, r, RP_TRY_DOWNCOPY, RP_SEND_PROBE, 0, now);
      if (rv == 1) {
        r->last_down_copy = now;
        ++r->probes;
        ++pool->stats.probes;
        pool_query_schedule(pool, pick, now);
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
        rv = pool_probe(pool, r, now);
      }
    }
  }
  if (r->down && rp_list_linked(&r->down_node) && !idle_probe) {
    /* Nothing to do until a client query comes (pool_down_copies re-arms
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
      at = pool_min(at, rp_tstamp_add(r->probe_sent, pool->set.per_attempt));
    }
    rp_pool_timer_set(pool, &r->timer, at);
  }
  return rv < 0 ? rv : 0;
}

/* pool_down_copies sends a copy of the new query |q| to the first down
   resolver whose copy was due while no query could carry it; it leaves
   room in |q| for its own hedges and resends. */
static int pool_down_copies(rp_pool *pool, rp_query *q, rp_tstamp now) {
  rp_res *r;
  int rv;

  if (rp_list_empty(&pool->down_wait) || !pool_down_may_copy(q)) {
    return 0;
  }
  r = rp_container_of(pool->down_wait.next, rp_res, down_node);
  rv = pool_try_send(pool, q, r, RP_TRY_DOWNCOPY, RP_SEND_PROBE, 0, now);
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

/* pool_res_timer runs the resolver timer of |r|. */
static int pool_res_timer(rp_pool *pool, rp_res *r, rp_tstamp now) {
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
    return pool_down_timer(pool, r, now);
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

/* ---------------------------------------------------------------- */
/* Events                                                             */
/* ---------------------------------------------------------------- */

int rp_pool_submit(rp_pool *pool, const uint8_t *query, size_t len,
                   const rp_client *client, rp_tstamp now) {
  rp_dns_header hdr;
  rp_dns_brief msg;
  rp_query *q;
  uint32_t slot;
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
  rv = pool_drain(pool, now);
  if (rv < 0) {
    return rv;
  }
  if (rp_dns_parse_brief(&msg, query, len) != 0 || !msg.has_question) {
    ++pool->stats.malformed;
    return pool_fail_bytes(pool, client, query, len, RP_DNS_RCODE_FORMERR);
  }
  if (len > pool->set.max_query_len) {
    ++pool->stats.malformed;
    return pool_fail_bytes(pool, client, query, len, RP_DNS_RCODE_SERVFAIL);
  }
  if (pool->by_kind != NULL && pool->sense.state == RP_SENSE_SENSING) {
    pool_sense(pool, &msg.question, now);
  }
  if (rp_list_empty(&pool->free_q)) {
    ++pool->stats.full;
    return pool_fail_bytes(pool, client, query, len, RP_DNS_RCODE_SERVFAIL);
  }
  if (pool->last_submit == RP_TSTAMP_UNSET ||
      now - pool->last_submit >= pool->set.copy_ramp) {
    pool->ramp_from = now;
  }
  pool->last_submit = now;
  q = rp_container_of(pool->free_q.next, rp_query, node);
  rp_list_remove(&q->node);
  rp_list_push_back(&pool->live_q, &q->node);
  ++pool->ninflight;
  memcpy(q->buf, query, len);
  memcpy(pool->last_q, query, len);
  pool->last_q_len = len;
  pool->last_client = *client;
  q->len = len;
  q->client = *client;
  q->client_id = hdr.id;
  q->question = msg.question;
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
  q->case_ok = (uint8_t)(pool_case_active(pool) &&
                         rp_case_eligible(query, len, &msg.question));
  /* With the fixed bound a query over it takes no plan (a probe copy
     waits for a query that may have it); pool_copies_fit trims the rest
     once the first resolver is known. */
  q->copies = pool->set.copy_inflight_rtt == 0 &&
                      pool_copy_inflight(pool) > pool->set.copy_max_inflight
                  ? 0
                  : (uint8_t)rp_copies_plan(&pool->copies, &pool->set, now);
  rv = pool_query_place(pool, q, RP_TRY_FIRST, now);
  if (rv < 0) {
    return rv;
  }
  if (pool->set.load_balance == RP_BALANCE_AUTO && q->nopen > 0) {
    slot = rp_select_left_out(pool, q, now);
    if (slot != RP_CORE_NONE) {
      pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_SEL, now,
               "ev=select q=%u srv=%u why=retry replies=%llu fresh=%zu "
               "out=%zu",
               q->idx, slot, (unsigned long long)pool->res[slot]->replies,
               pool->fresh.len, pool->out.len);
      rv = pool_try_send(pool, q, pool->res[slot], RP_TRY_RETRY, 0, 0, now);
      if (rv < 0) {
        return rv;
      }
      pool->stats.retries += (uint64_t)rv;
    }
  }
  rv = pool_down_copies(pool, q, now);
  if (rv < 0) {
    return rv;
  }
  pool_query_finish(pool, q, now);
  return 0;
}

/* pool_on_refusal handles a refusal of the try |t| of |q| by |r|. */
static int pool_on_refusal(rp_pool *pool, rp_query *q, rp_try *t, rp_res *r,
                           rp_tstamp now) {
  rp_tstamp sent = t->sent;

  pool_try_close(pool, q, t, now);
  ++r->refused;
  if (rp_ratelim_on_refusal(&r->rl, &pool->set, sent, now)) {
    pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_CAP, now,
             "ev=cap srv=%u why=refusal cap_qps=%.1f", r->slot, r->rl.cap);
  }
  pool_res_reply(pool, r, sent, pool->set.score_refusal, now);
  if (r->probation && !r->prob_failed) {
    /* A refuser will not soon take the queries that wait for it. */
    r->prob_failed = 1;
    pool_prob_sync(pool, r);
  }
  rp_select_refresh(pool, r, now);
  if (!q->answered && q->wait_until == RP_TSTAMP_UNSET) {
    return pool_query_place(pool, q, RP_TRY_RESEND, now);
  }
  return 0;
}

/* pool_on_neterr handles a network error of the try |t|. */
static int pool_on_neterr(rp_pool *pool, rp_query *q, rp_try *t, rp_res *r,
                          rp_tstamp now) {
  rp_tstamp sent = t->sent;

  pool_try_close(pool, q, t, now);
  pool_res_failed(pool, r, sent, 0, 0, now);
  if (!q->answered && q->wait_until == RP_TSTAMP_UNSET) {
    return pool_query_place(pool, q, RP_TRY_RESEND, now);
  }
  return 0;
}

/* pool_case_answer judges an answer from |r| to a send with a 0x20 name
   whose case flags are |*pflags| (RP_CASE_MISSED is added on a miss):
   |verdict| is RP_CASE_MATCH or RP_CASE_FOLDED. Returns 1 when the
   answer is taken (its case repeated, or |r| has fallen back), 0 when it
   is dropped (counted spoofed). */
static int pool_case_answer(rp_pool *pool, rp_res *r, uint8_t *pflags,
                            rp_case_verdict verdict, rp_tstamp now) {
  int first;

  if (verdict == RP_CASE_MATCH) {
    if (rp_case_res_match(&r->cs, *pflags, now)) {
      pool_log(pool, RP_LOG_INFO, RP_LOG_CAT_RX, now,
               "ev=case_strict srv=%u name=%s why=proof", r->slot, r->name);
    }
    return 1;
  }
  ++pool->stats.case_mismatches;
  first = !(*pflags & RP_CASE_MISSED);
  *pflags |= RP_CASE_MISSED;
  if (rp_case_res_mismatch(&r->cs, first, &pool->set, now)) {
    ++pool->stats.case_fallbacks;
    pool_log(pool, RP_LOG_WARN, RP_LOG_CAT_RX, now,
             "ev=case_fallback srv=%u name=%s misses=%u why=another_case",
             r->slot, r->name, r->cs.misses);
  }
  if (r->cs.mode == RP_CASE_FALLBACK) {
    return 1;
  }
  ++pool->stats.spoofed;
  pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_RX, now,
           "ev=case_mismatch srv=%u misses=%u", r->slot, r->cs.misses);
  return 0;
}

int rp_pool_on_answer(rp_pool *pool, uint32_t resolver_id,
                      const uint8_t *answer, size_t len, uint32_t flags,
                      rp_tstamp now) {
  const rp_idmap_value *v;
  rp_dns_brief msg;
  rp_res *r;
  rp_query *q;
  rp_try *t;
  uint8_t rcode;
  rp_duration lat;
  rp_tstamp sent;
  rp_case_verdict verdict;
  int rv = 0, blind, cased;

  if (pool == NULL || answer == NULL) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  pool->now = now;
  r = pool_res(pool, resolver_id);
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
    cased = (r->probe_case_flags & RP_CASE_ON) != 0;
    verdict = rp_case_answer(&r->probe_q, r->probe_case_flags,
                             r->probe_case_seed, &msg.question, answer, len);
    if (verdict == RP_CASE_OTHER) {
      ++pool->stats.spoofed;
      return 0;
    }
    if (cased &&
        !pool_case_answer(pool, r, &r->probe_case_flags, verdict, now)) {
      return 0;
    }
    rp_idmap_del(&pool->ids, r->slot, r->probe_id);
    r->probe_open = 0;
    ++r->answered;
    pool_res_reply(pool, r, r->probe_sent, pool->set.score_answer, now);
    rp_select_refresh(pool, r, now);
    rcode = rp_dns_rcode(answer);
    if (r->probe_copy && rcode != RP_DNS_RCODE_REFUSED &&
        rcode != RP_DNS_RCODE_SERVFAIL) {
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
    }
    rv = pool_res_overtaken(pool, r, now);
    return rv < 0 ? rv : pool_drain(pool, now);
  }
  q = &pool->queries[v->query];
  t = &q->tries[v->try_index];
  cased = (t->case_flags & RP_CASE_ON) != 0;
  verdict = rp_case_answer(&q->question, t->case_flags, t->case_seed,
                           &msg.question, answer, len);
  if (verdict == RP_CASE_OTHER) {
    ++pool->stats.spoofed;
    return 0;
  }
  if (cased && !pool_case_answer(pool, r, &t->case_flags, verdict, now)) {
    /* Another case at a strict resolver: the query goes out again at
       once, and the try stays open for the genuine answer (case.h). */
    if (!t->judged) {
      rv = pool_try_judge(pool, t, 0, now);
    }
    if (q->active) {
      pool_query_finish(pool, q, now);
    }
    return rv < 0 ? rv : pool_drain(pool, now);
  }
  rcode = rp_dns_rcode(answer);
  if (((msg.hdr.flags ^ (uint16_t)((q->buf[2] << 8) | q->buf[3])) &
       RP_DNS_OPCODE_MASK) != 0 ||
      rcode > RP_DNS_RCODE_LAST_ASSIGNED) {
    /* Another opcode than the query's, or an unassigned rcode: not an
       answer to pass on. The try failed; the query goes elsewhere (or
       fails SERVFAIL at its deadline). */
    ++pool->stats.malformed;
    pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_RX, now,
             "ev=answer_rejected srv=%u q=%u flags=0x%04x", r->slot, q->idx,
             (unsigned)msg.hdr.flags);
    rv = pool_on_neterr(pool, q, t, r, now);
  } else if (rcode == RP_DNS_RCODE_REFUSED || rcode == RP_DNS_RCODE_SERVFAIL) {
    rv = pool_on_refusal(pool, q, t, r, now);
  } else if (rp_dns_is_truncated(answer) && !(flags & RP_ANSWER_STREAM) &&
             (r->flags & RP_RESOLVER_TCP_FALLBACK) &&
             q->nstreams < pool->set.tc_stream_tries) {
    sent = t->sent;
    pool_try_close(pool, q, t, now);
    pool_res_reply(pool, r, sent, 0, now);
    ++q->nstreams;
    rv = pool_try_send(pool, q, r, RP_TRY_STREAM, RP_SEND_STREAM, 0, now);
    rv = rv < 0 ? rv : 0;
  } else {
    sent = t->sent;
    lat = now - sent;
    pool_log(pool, RP_LOG_DEBUG, RP_LOG_CAT_RX, now,
             "ev=answer srv=%u id=%u q=%u try=%u lat_ms=%.3f", r->slot,
             t->upstream_id, q->idx, (unsigned)(t - q->tries),
             (double)lat / POOL_NS_PER_MS);
    if (t->judged_drop) {
      pool_try_late(pool, r, t, lat, now);
    }
    pool_try_close(pool, q, t, now);
    ++r->answered;
    blind = rp_pq_top(&pool->cost) == NULL;
    rp_rtt_add(&r->rtt, lat, now, pool->set.latency_window);
    rp_ratelim_on_answer(&r->rl, &pool->set, sent, now);
    pool_res_reply(pool, r, sent, pool->set.score_answer, now);
    rp_select_refresh(pool, r, now);
    if (blind && rp_pq_top(&pool->cost) != NULL) {
      pool_hedge_known(pool, now);
    }
    if (cased) {
      /* The client's case back, in the scratch pool_deliver uses. */
      rp_case_restore(pool->scratch, answer, len, &q->question.name);
      answer = pool->scratch;
    }
    rv = pool_deliver_judged(pool, q, answer, len);
  }
  if (q->active) {
    pool_query_finish(pool, q, now);
  }
  if (rv < 0) {
    return rv;
  }
  rv = pool_res_overtaken(pool, r, now);
  if (rv < 0) {
    return rv;
  }
  return pool_drain(pool, now);
}

/* pool_error_one applies |outcome| to one open try |t| at |r|. */
static int pool_error_one(rp_pool *pool, rp_res *r, rp_try *t,
                          rp_outcome outcome, rp_tstamp now) {
  rp_query *q = t->query;
  int rv = 0;

  switch (outcome) {
  case RP_OUTCOME_OK:
    return 0;
  case RP_OUTCOME_TIMEOUT:
    rv = pool_try_expired(pool, q, t, now);
    break;
  case RP_OUTCOME_SERVFAIL:
  case RP_OUTCOME_REFUSED:
  case RP_OUTCOME_HTTP_429:
    rv = pool_on_refusal(pool, q, t, r, now);
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
    rv = pool_on_neterr(pool, q, t, r, now);
    break;
  }
  if (q->active) {
    pool_query_finish(pool, q, now);
  }
  return rv;
}

int rp_pool_on_error(rp_pool *pool, uint32_t resolver_id, uint32_t upstream_id,
                     rp_outcome outcome, rp_tstamp now) {
  rp_res *r = pool ? pool_res(pool, resolver_id) : NULL;
  const rp_idmap_value *v;
  rp_list batch;
  rp_try *t;
  int rv = 0;

  if (r == NULL) {
    return RP_ERR_NOT_FOUND;
  }
  pool->now = now;
  if (upstream_id == RP_UPSTREAM_ID_ALL) {
    /* Move the open tries aside first: resends may add new ones. */
    rp_list_init(&batch);
    pool_list_splice(&batch, &r->lost);
    pool_list_splice(&batch, &r->tries);
    while (!rp_list_empty(&batch) && rv == 0) {
      t = rp_container_of(batch.next, rp_try, res_node);
      rp_list_remove(&t->res_node);
      rp_list_push_back(t->judged ? &r->lost : &r->tries, &t->res_node);
      rv = pool_error_one(pool, r, t, outcome, now);
    }
    while (!rp_list_empty(&batch)) {
      t = rp_container_of(batch.next, rp_try, res_node);
      rp_list_remove(&t->res_node);
      rp_list_push_back(t->judged ? &r->lost : &r->tries, &t->res_node);
    }
  } else if (upstream_id <= UINT16_MAX) {
    v = rp_idmap_get(&pool->ids, r->slot, (uint16_t)upstream_id);
    if (v == NULL) {
      return 0;
    }
    if (v->query == RP_IDMAP_PROBE) {
      rp_idmap_del(&pool->ids, r->slot, r->probe_id);
      r->probe_open = 0;
      rp_health_loss(&r->health, pool->set.loss_window, 1, 1,
                     pool->set.score_failure, now);
      return 0;
    }
    t = &pool->queries[v->query].tries[v->try_index];
    rv = pool_error_one(pool, r, t, outcome, now);
  }
  if (rv < 0) {
    return rv;
  }
  return pool_drain(pool, now);
}

rp_tstamp rp_pool_get_expiry(const rp_pool *pool) {
  const rp_pq_entry *pe = rp_pq_top(&pool->timers);
  rp_tstamp at =
      pe ? rp_container_of_const(pe, rp_timer, pe)->at : RP_TSTAMP_UNSET;

  if (pool->waits.len > 0) {
    pe = rp_pq_top(&pool->pastcap);
    if (pe != NULL) {
      at = pool_min(at,
                    rp_container_of_const(pe, rp_res, e_pastcap)->pastcap_at);
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
      rv = pool_query_service(pool, rp_container_of(t, rp_query, timer), now);
      break;
    case RP_TIMER_RES:
      rv = pool_res_timer(pool, rp_container_of(t, rp_res, timer), now);
      break;
    default:
      rp_unreachable();
    }
    if (rv < 0) {
      return rv;
    }
  }
  return pool_drain(pool, now);
}

/* ---------------------------------------------------------------- */
/* Stats                                                              */
/* ---------------------------------------------------------------- */

int rp_pool_get_resolver_stats(const rp_pool *pool, uint32_t resolver_id,
                               rp_resolver_stats *stats, rp_tstamp now) {
  const rp_res *r = pool ? pool_res(pool, resolver_id) : NULL;
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
