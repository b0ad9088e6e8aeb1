/*
 * core.h: internal structures of the pool core, shared by its modules
 * (pool.c and the modules it is split into: query.c, try.c, fanout.c,
 * res.c, down.c, wait.c, answer.c, stats.c; select.c, select_set.c,
 * settings.c), and the helpers they all use (logging, random draws,
 * timers). Not public API.
 *
 * Ownership: the pool owns every rp_res (one allocation each, at
 * rp_pool_add_resolver), the query table (one allocation of
 * max_inflight slots at rp_pool_new, with their byte slots) and the ID
 * map. Nothing on the query path allocates.
 */
#ifndef RP_CORE_CORE_H
#define RP_CORE_CORE_H

#include "respool.h"
#include "dns.h"
#include "case.h"
#include "health.h"
#include "idmap.h"
#include "copies.h"
#include "pq.h"
#include "ratelim.h"
#include "rtt.h"
#include "sense.h"
#include "util.h"

/* RP_CORE_MAX_TRIES is the most tries one query may have over its life
   (first send, copies, hedges, resends, a down copy, a TCP retry). */
#define RP_CORE_MAX_TRIES 12
/* RP_CORE_MAX_DUPLICATE is the largest settings.duplicate. */
#define RP_CORE_MAX_DUPLICATE 10
/* RP_CORE_TRIES_PER_QUERY sizes the ID map: open tries per query on
   average at the most (a full map makes a send find no capacity). */
#define RP_CORE_TRIES_PER_QUERY 6
/* RP_CORE_MAX_RESOLVERS is the largest settings.max_resolvers. */
#define RP_CORE_MAX_RESOLVERS ((size_t)1 << 24)
/* RP_CORE_RES_MAX_INFLIGHT is the most tries open at one resolver: the
   16-bit ID space must keep random draws cheap. */
#define RP_CORE_RES_MAX_INFLIGHT 16384
/* RP_CORE_ID_DRAWS is how many random IDs are drawn before giving up. */
#define RP_CORE_ID_DRAWS 16
/* RP_CORE_NAME_LEN is the room for a resolver's name in logs. */
#define RP_CORE_NAME_LEN 48
/* RP_CORE_NONE is "no resolver". */
#define RP_CORE_NONE UINT32_MAX
/* RP_CORE_NS_PER_MS converts ns to ms in logs. */
#define RP_CORE_NS_PER_MS 1e6
/* RP_CORE_NS_PER_S converts ns to s in logs. */
#define RP_CORE_NS_PER_S 1e9

/* Kinds of a try. */
typedef enum rp_try_kind {
  RP_TRY_FIRST = 0, /* the query's first send */
  RP_TRY_RESEND,    /* after a refusal, error or timeout */
  RP_TRY_HEDGE,     /* past mean + 4 deviations */
  RP_TRY_COPY,      /* duplicate > 1 */
  RP_TRY_RETRY,     /* a left-out resolver tried again */
  RP_TRY_DOWNCOPY,  /* a copy to a down resolver */
  RP_TRY_STREAM,    /* a truncated answer asked again over the stream */
  RP_TRY_PASTCAP    /* a waiting query sent past the cap */
} rp_try_kind;

/* Where an up resolver is, for load_balance auto. */
typedef enum rp_where {
  RP_WHERE_NONE = 0, /* in no set (being moved) */
  RP_WHERE_BAND,     /* equally good: the LRU heap */
  RP_WHERE_OUT,      /* left out: retried every retry_left_out */
  RP_WHERE_TOKEN,    /* no token: waits on its timer */
  RP_WHERE_BUSY,     /* in probation with its one query in flight, and
                        proven enough to take overflow: the busy heap */
  RP_WHERE_UNPROVEN, /* in probation with its one query in flight, not
                        yet answered (or it lost one): in no heap */
  RP_WHERE_FRESH,    /* never replied, no query in flight: the fresh heap;
                        explored by retries riding along client queries,
                        a query's only try only when no resolver that
                        replied has room */
  RP_WHERE_DOWN      /* down: copies and probes on its timer */
} rp_where;

/* Kinds of a timer. */
typedef enum rp_timer_kind { RP_TIMER_QUERY = 0, RP_TIMER_RES } rp_timer_kind;

typedef struct rp_timer {
  rp_pq_entry pe;
  /* at is when the timer fires, ns. */
  rp_tstamp at;
  /* seq orders timers that fire at once (deterministic ties). */
  uint64_t seq;
  rp_timer_kind kind;
} rp_timer;

typedef struct rp_query rp_query;

/* The values of rp_try.judged_drop: judged lost as overtaken, and taken
   as a drop that may be a rate limit's (RP_JUDGED_RATE) or counted as
   loss (RP_JUDGED_LOSS). */
#define RP_JUDGED_RATE 1
#define RP_JUDGED_LOSS 2

typedef struct rp_try {
  /* res_node links the try into its resolver's open tries. */
  rp_list res_node;
  /* query is the query the try belongs to. */
  rp_query *query;
  /* sent is when the try was sent. */
  rp_tstamp sent;
  /* hedge_at is when to hedge it, RP_TSTAMP_UNSET for never. */
  rp_tstamp hedge_at;
  /* expire_at is sent + per_attempt. */
  rp_tstamp expire_at;
  /* judge_at is when the try, if a try sent after it to the same
     resolver got a reply by then (it was overtaken), is judged lost
     without waiting for per_attempt: the resolver's mean latency + 4
     deviations after the send. RP_TSTAMP_UNSET: only at expire_at. */
  rp_tstamp judge_at;
  /* res is the resolver slot. */
  uint32_t res;
  uint16_t upstream_id;
  uint8_t kind;
  /* open is 1 until an answer, refusal, error or expiry closes it. */
  uint8_t open;
  /* hedged is 1 once a hedge was sent for it. */
  uint8_t hedged;
  /* past_cap is 1 for a send past the cap. */
  uint8_t past_cap;
  /* stale is 1 once the try, at a resolver in probation, passed its
     hedge time unanswered (or was judged lost): it no longer holds the
     probation slot. */
  uint8_t stale;
  /* judge_checked is 1 once the try was looked at at judge_at. */
  uint8_t judge_checked;
  /* judged is 1 once the try was judged lost (overtaken), or set aside
     after an answer in another case than its 0x20 name (RP_CASE_MISSED):
     it stays open for a late answer until expire_at, on its resolver's
     |lost| list. */
  uint8_t judged;
  /* judged_drop is RP_JUDGED_RATE or RP_JUDGED_LOSS (counted as loss)
     when it was judged lost because a later try to its resolver was
     answered first, 0 otherwise: an answer to it is a late answer. */
  uint8_t judged_drop;
  /* case_flags holds RP_CASE_ON when the try went with a 0x20 name
     (case.h), RP_CASE_PROOF and RP_CASE_MISSED. */
  uint8_t case_flags;
  /* case_seed is the seed of its 0x20 pattern (with RP_CASE_ON). */
  uint64_t case_seed;
} rp_try;

struct rp_query {
  rp_timer timer;
  /* node links the query into the live list or the free list. */
  rp_list node;
  /* e_wait is in the pool's heap of queries waiting for capacity. */
  rp_pq_entry e_wait;
  rp_client client;
  rp_dns_question question;
  /* buf holds |len| bytes of the query as the client sent it. */
  uint8_t *buf;
  size_t len;
  uint16_t client_id;
  uint32_t idx;
  rp_tstamp submitted;
  rp_tstamp deadline_at;
  /* wait_until is the end of a wait for a token, or UNSET. */
  rp_tstamp wait_until;
  /* wait_end is the end of the query's wait budget (token_wait after it
     first waited), or UNSET before it waited. */
  rp_tstamp wait_end;
  /* copy_at is when the copies go, or UNSET. */
  rp_tstamp copy_at;
  /* active is 1 while the slot is in use. */
  uint8_t active;
  /* answered is 1 once the client got an answer or a failure. */
  uint8_t answered;
  uint8_t ntries;
  uint8_t nopen;
  uint8_t nhedges;
  /* copies is how many copies this query is still to get. */
  uint8_t copies;
  /* copy_stack is 1 when its copies may share a resolver with another
     copy of it (a slow resolver: see copy_inflight_rtt). */
  uint8_t copy_stack;
  /* had_copy is 1 once a copy of it went out. */
  uint8_t had_copy;
  /* linger is 1 while it is answered and its only open tries were
     judged lost: it waits for late answers that are unlikely to come
     (counted in rp_pool.nlinger). */
  uint8_t linger;
  /* nseen hashes (rp_copies_hash) of the answers delivered: a later
     answer with one of them repeats it. */
  uint8_t nseen;
  uint64_t seen[RP_COPIES_SEEN];
  uint8_t waited;
  /* nstreams counts the stream tries sent after truncated answers. */
  uint8_t nstreams;
  /* case_ok is 1 when its datagram tries go with 0x20 names (case.h:
     settings.case_randomize, the kind, rp_case_eligible). */
  uint8_t case_ok;
  rp_try tries[RP_CORE_MAX_TRIES];
};

typedef struct rp_res {
  uint32_t slot;
  uint32_t flags;
  void *user_data;
  char name[RP_CORE_NAME_LEN];
  rp_where where;
  /* probation is 1 until probation_answers replies. */
  int probation;
  /* tiebreak orders resolvers never used (random at add). */
  uint64_t tiebreak;
  rp_tstamp added;
  /* up_at is when the resolver last came back up (0 before): losses of
     tries sent before it are not counted. */
  rp_tstamp up_at;
  /* last_used is the last send, 0 before any. */
  rp_tstamp last_used;
  /* use_seq orders sends (LRU): many sends share one |now| when a
     driver handles a batch, and time alone would not order them. */
  uint64_t use_seq;
  /* e_lru is in the band heap or the out heap (by last_used). */
  rp_pq_entry e_lru;
  /* e_cost is in the cost heap (up, latency known). */
  rp_pq_entry e_cost;
  /* e_loss is in the loss heap (up, some tries closed). */
  rp_pq_entry e_loss;
  /* e_unlim is in the copy-target heap (up, uncapped, no probation). */
  rp_pq_entry e_unlim;
  /* e_strat is in the heap of lowest_latency or least_loss. */
  rp_pq_entry e_strat;
  /* e_pastcap is in the past-cap heap while in RP_WHERE_TOKEN. */
  rp_pq_entry e_pastcap;
  /* timer: next token (TOKEN) or next copy/probe (DOWN). */
  rp_timer timer;
  /* tries lists the open tries not judged lost, in the order they were
     sent; lost lists the open tries judged lost (rp_try.judged). */
  rp_list tries;
  rp_list lost;
  /* newest_reply_sent is the send time of the newest try that got a
     reply (answer or refusal), 0 before any: a try sent before it and
     still open was overtaken. */
  rp_tstamp newest_reply_sent;
  /* rr_node links the resolver into the round robin ring. */
  rp_list rr_node;
  /* down_node links a down resolver whose live copy is due into the
     pool's down_wait list (no live query was there at its timer). */
  rp_list down_node;
  uint32_t inflight;
  /* stale counts open tries marked stale (rp_try.stale). */
  uint32_t stale;
  /* prob_counted is 1 while |r| counts in pool->nprob_up; prob_failed
     is 1 once a try of it was lost, failed or refused in probation. */
  int prob_counted;
  int prob_failed;
  /* stale_used counts tries marked stale in this probation. */
  int stale_used;
  /* cost is latency / (1 - loss), ns as double; < 0 when unknown. */
  double cost;
  /* strat_key is the key of e_strat. */
  double strat_key;
  /* pastcap_at is the key of e_pastcap. */
  rp_tstamp pastcap_at;
  /* fw_weight is the resolver's weight in the weighted Fenwick tree. */
  uint64_t fw_weight;
  int down;
  rp_rtt rtt;
  rp_health health;
  rp_ratelim rl;
  /* replies counts answers and refusals (probation). */
  uint64_t replies;
  uint64_t sent, answered, refused, dropped, errors, copies, hedges, probes;
  /* late counts answers to tries judged lost (judged_drop). */
  uint64_t late;
  /* Probe state: one standalone probe at a time. */
  int probe_open;
  uint16_t probe_id;
  rp_tstamp probe_sent;
  rp_tstamp last_probe;
  rp_tstamp last_down_copy;
  rp_dns_question probe_q;
  /* probe_copy is 1 when the probe copies a client query: its answer
     goes to |probe_client| (ID |probe_client_id|) as an extra answer. */
  int probe_copy;
  rp_client probe_client;
  uint16_t probe_client_id;
  /* probe_case_flags and probe_case_seed are the probe's 0x20 (as
     rp_try's; |probe_q| keeps the question as built or copied). */
  uint8_t probe_case_flags;
  uint64_t probe_case_seed;
  /* cs is its 0x20 mode and proofs. */
  rp_case_res cs;
} rp_res;

struct rp_pool {
  rp_settings set;
  /* now is the |now| of the call into the core that is running (submit,
     on_answer, on_error, handle_expiry, add_resolver, remove_resolver),
     handed to the send_query and deliver callbacks it makes. */
  rp_tstamp now;
  /* by_kind holds the settings for each kind recognised (RP_KIND_COUNT
     of them), or NULL when the pool does not sense its kind. */
  rp_settings *by_kind;
  rp_sense sense;
  rp_callbacks cb;
  rp_mem mem;
  void *user_data;

  /* res is indexed by slot; |res_cap| slots, NULL when free. */
  rp_res **res;
  size_t res_cap;
  /* res_hint: every slot below it is in use. */
  size_t res_hint;
  size_t nres;
  size_t nup;
  /* nprob_up counts up resolvers still in probation that lost and
     refused nothing yet: while one is, a query that finds no capacity is
     held, never failed at once, and its wait is renewed (token_wait at a
     time, up to its deadline): that resolver will soon take it. */
  size_t nprob_up;

  /* The query table: max_inflight slots. */
  rp_query *queries;
  uint8_t *qbufs;
  rp_list free_q;
  rp_list live_q;
  /* waits holds the queries waiting for capacity, those with the
     longest question name first (rp_wait_less). */
  rp_pq waits;
  size_t ninflight;
  /* nlinger counts the queries in flight that linger (rp_query.linger):
     the copy bound leaves them out, since their lost tries would pin it
     until per_attempt. */
  size_t nlinger;

  rp_idmap ids;

  rp_pq timers;
  rp_pq band;
  rp_pq out;
  /* busy holds probation resolvers with their one query in flight that
     answered before and lost nothing (RP_WHERE_BUSY), by last use: they
     take a query past their probation limit when no other resolver can
     (a lone new resolver must not starve a client's opening burst). */
  rp_pq busy;
  /* fresh holds the up resolvers that never replied (RP_WHERE_FRESH), by
     last use: explored by retries, placed on only when no resolver that
     replied has room. */
  rp_pq fresh;
  /* retry_fresh is 1 when the next retry looks at the fresh heap first,
     0 when at the left-out one first: the two take turns. */
  int retry_fresh;
  rp_pq cost;
  rp_pq loss;
  rp_pq unlim;
  rp_pq strat;
  rp_pq pastcap;
  uint64_t timer_seq;
  /* use_seq numbers sends for the LRU order. */
  uint64_t use_seq;

  /* down_wait lists down resolvers waiting for a live query to copy. */
  rp_list down_wait;

  /* Round robin ring and cursor. */
  rp_list rr_ring;
  rp_list *rr_next;

  /* Fenwick tree of weights (weighted), |fw_n| = res_cap. */
  uint64_t *fw;

  /* scratch holds one answer being delivered (RP_DNS_MAX_MSG_LEN). */
  uint8_t *scratch;
  /* last_q holds the most recent client query (probes). */
  uint8_t *last_q;
  size_t last_q_len;
  /* last_client is the client of |last_q|. */
  rp_client last_client;
  /* ramp_from is when the copy bound's ramp (copy_ramp) began: the first
     client query, or the first after a pause; last_submit is the latest
     client query (RP_TSTAMP_UNSET: none yet). */
  rp_tstamp ramp_from;
  rp_tstamp last_submit;

  /* copies: how many copies, judged by what they carried; the budget on
     extra sends. */
  rp_copies copies;

  rp_pool_stats stats;
};

/* rp_res_probation_busy returns 1 if |r| is in probation with its one
   query in flight. A try past its hedge time (a few per probation) no
   longer counts (a burst overflow must not keep a new resolver idle for
   per_attempt; a lossy resolver stays slow in probation). */
static inline int rp_res_probation_busy(const rp_res *r) {
  return r->probation && r->inflight > r->stale;
}

/* rp_res_proven returns 1 if |r| replied (an answer or a refusal) at
   least once: it is alive. One that never did may be dead, and gets no
   query's only try while a proven resolver has room. */
static inline int rp_res_proven(const rp_res *r) { return r->replies > 0; }

/* rp_res_overflow_room returns 1 if |r|, in probation, may take one more
   query past its probation limit (no other resolver can): it may hold
   one query more than it has replies, so that its share grows like a
   slow start with its answers and a resolver that drops what it cannot
   take is not flooded. */
static inline int rp_res_overflow_room(const rp_res *r) {
  return (uint64_t)(r->inflight - r->stale) < r->replies + 1;
}

/* rp_pool_res returns the resolver in |slot|, or NULL (free or out of
   range). */
static inline rp_res *rp_pool_res(const rp_pool *pool, uint32_t slot) {
  return slot < pool->res_cap ? pool->res[slot] : NULL;
}

/* --- pool.c helpers used by the other modules --- */

/* rp_tstamp_min returns the earlier of |a| and |b|. */
static inline rp_tstamp rp_tstamp_min(rp_tstamp a, rp_tstamp b) {
  return a < b ? a : b;
}

/* rp_pool_log_on reports whether a line of |level| and |category| would
   be logged; rp_pool_log checks it before anything is formatted or even
   passed (several debug lines lie on the path of every query). */
static inline int rp_pool_log_on(const rp_pool *pool, rp_log_level level,
                                 uint32_t category) {
  return pool->cb.log != NULL && level <= pool->set.log_level &&
         (category & pool->set.log_categories) != 0;
}

/* rp_pool_log logs one line (|now|, then the printf-style rest) through
   settings.log when rp_pool_log_on says it would be logged. */
#define rp_pool_log(pool, level, category, ...)                              \
  do {                                                                       \
    if (rp_pool_log_on((pool), (level), (category))) {                       \
      rp_pool_log_emit((pool), (level), (category), __VA_ARGS__);            \
    }                                                                        \
  } while (0)

/* rp_pool_log_emit formats "t=<now in s> " and |fmt| into one line of
   at most POOL_LOG_LINE bytes (a longer one is cut) and hands it to
   callbacks.log. Call it through rp_pool_log. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
void rp_pool_log_emit(const rp_pool *pool, rp_log_level level,
                      uint32_t category, rp_tstamp now, const char *fmt, ...);

/* rp_pool_timer_set arms |t| at |at| (RP_TSTAMP_UNSET disarms). */
void rp_pool_timer_set(rp_pool *pool, rp_timer *t, rp_tstamp at);

/* rp_pool_rand32 draws 32 random bits from callbacks.rand. */
uint32_t rp_pool_rand32(rp_pool *pool);

/* rp_pool_rand64 draws 64 random bits in one call of callbacks.rand. */
uint64_t rp_pool_rand64(rp_pool *pool);

/* rp_pool_rand16 draws 16 random bits in one call of callbacks.rand. */
uint16_t rp_pool_rand16(rp_pool *pool);

/* rp_pool_case_active returns 1 if new client queries may go with 0x20
   names: settings.case_randomize, and under kind auto only once the
   verdict is in (settings for dnstt and masterdns have it off). */
int rp_pool_case_active(const rp_pool *pool);

/* --- settings.c --- */

/* rp_settings_check returns 0 or RP_ERR_INVALID_ARGUMENT. */
int rp_settings_check(const rp_settings *set);

#endif /* RP_CORE_CORE_H */
