/*
 * respool.h: the public API of librespool.
 *
 * respool is a smart resolver pool for DNS tunnels. This header owns the
 * names every component shares: time, errors, the allocator, and the
 * sans-I/O pool core (rp_pool). The libuv runtime (rp_net_*) has its own
 * header, pool/include/respool_net.h.
 *
 * Time is always passed in by the caller as rp_tstamp (monotonic
 * nanoseconds). Nothing in the core reads a clock.
 */
#ifndef RESPOOL_H
#define RESPOOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RP_VERSION "0.1.0"

/* ------------------------------------------------------------------ */
/* Time                                                                 */
/* ------------------------------------------------------------------ */

/* rp_tstamp is a monotonic time in nanoseconds. UINT64_MAX means unset. */
typedef uint64_t rp_tstamp;
/* rp_duration is a span of time in nanoseconds. UINT64_MAX means unset. */
typedef uint64_t rp_duration;

#define RP_TSTAMP_UNSET UINT64_MAX
#define RP_NANOSECONDS ((rp_duration)1ULL)
#define RP_MICROSECONDS ((rp_duration)1000ULL)
#define RP_MILLISECONDS ((rp_duration)1000000ULL)
#define RP_SECONDS ((rp_duration)1000000000ULL)

/* rp_tstamp_elapsed returns 1 if |base| + |d| <= |now|, without
   overflowing when |d| is UINT64_MAX (then it returns 0). */
static inline int rp_tstamp_elapsed(rp_tstamp base, rp_duration d,
                                    rp_tstamp now) {
  return base <= now && d <= now - base;
}

/* rp_tstamp_add returns |t| + |d|, saturating at UINT64_MAX. */
static inline rp_tstamp rp_tstamp_add(rp_tstamp t, rp_duration d) {
  return d > UINT64_MAX - t ? UINT64_MAX : t + d;
}

/* rp_ssize is a length or, when negative, an RP_ERR_* code. */
typedef ptrdiff_t rp_ssize;

/* ------------------------------------------------------------------ */
/* Errors                                                               */
/* ------------------------------------------------------------------ */

/* Library error codes. Negative; codes below RP_ERR_FATAL are fatal. */
#define RP_ERR_INVALID_ARGUMENT -201 /* a parameter is out of range */
#define RP_ERR_MALFORMED -202        /* bytes do not parse */
#define RP_ERR_NOBUF -203            /* an output buffer is too small */
#define RP_ERR_FULL -204             /* a bounded table is full */
#define RP_ERR_NOT_FOUND -205        /* no such resolver, query or key */
#define RP_ERR_CONFIG -206           /* a configuration value is bad */
#define RP_ERR_TLS -207              /* a TLS operation failed */
#define RP_ERR_IO -208               /* a socket or file operation failed */
#define RP_ERR_PROTO -209            /* the peer broke the protocol */
#define RP_ERR_FATAL -500
#define RP_ERR_NOMEM -501            /* out of memory */
#define RP_ERR_CALLBACK_FAILURE -502 /* a callback returned an error */

/* rp_strerror returns a static description of |liberr|. */
const char *rp_strerror(int liberr);

/* rp_err_is_fatal returns 1 if |liberr| is a fatal error. */
int rp_err_is_fatal(int liberr);

/* ------------------------------------------------------------------ */
/* Memory                                                               */
/* ------------------------------------------------------------------ */

/* rp_mem is an allocator passed to every object that allocates. */
typedef struct rp_mem {
  /* user_data is passed to every function below. */
  void *user_data;
  void *(*malloc)(size_t size, void *user_data);
  void (*free)(void *ptr, void *user_data);
  void *(*calloc)(size_t nmemb, size_t size, void *user_data);
  void *(*realloc)(void *ptr, size_t size, void *user_data);
} rp_mem;

/* rp_mem_default returns the allocator backed by libc. */
const rp_mem *rp_mem_default(void);


/* ------------------------------------------------------------------ */
/* The pool core (sans-I/O)                                             */
/* ------------------------------------------------------------------ */

/*
 * rp_pool is the decision engine: it takes client queries, answers and
 * errors from resolvers, and timer expiries, each with the current time,
 * and acts through the callbacks in rp_callbacks (send a query to a
 * resolver, deliver an answer to a client). It opens no socket, reads no
 * clock and draws randomness only from callbacks.rand. The libuv runtime
 * (pool/net) and the simulator (sim/) drive the same core.
 */
typedef struct rp_pool rp_pool;

/* rp_kind selects defaults that depend on the tunnel behind the pool. */
typedef enum rp_kind {
  RP_KIND_GENERIC = 0, /* a client the pool knows nothing about */
  RP_KIND_DNSTT,
  RP_KIND_MASTERDNS,
  /* auto: generic until the client's queries show dnstt or MasterDNS
     (rp_pool_sense_kind); rp_settings_default gives generic's values. */
  RP_KIND_AUTO
} rp_kind;

/* RP_KIND_COUNT is the number of concrete kinds (auto left out). */
#define RP_KIND_COUNT 3

/* rp_balance is the load_balance strategy. */
typedef enum rp_balance {
  RP_BALANCE_AUTO = 0, /* spare capacity, DESIGN.md section 5 */
  RP_BALANCE_ROUNDROBIN,
  RP_BALANCE_WEIGHTED,
  RP_BALANCE_LOWEST_LATENCY,
  RP_BALANCE_LEAST_LOSS
} rp_balance;

/* rp_outcome is what happened to one try at one resolver. An upstream
   failure is data for selection, not an error of the library. */
typedef enum rp_outcome {
  RP_OUTCOME_OK = 0,
  RP_OUTCOME_TIMEOUT,
  RP_OUTCOME_SERVFAIL,
  RP_OUTCOME_REFUSED,
  RP_OUTCOME_FORMERR,
  RP_OUTCOME_TRUNCATED,
  RP_OUTCOME_MALFORMED,
  RP_OUTCOME_ID_MISMATCH,
  RP_OUTCOME_CONNECT_FAILED,
  RP_OUTCOME_TLS_FAILED,
  RP_OUTCOME_HTTP_429, /* a DoH refusal: treated like REFUSED */
  RP_OUTCOME_SEND_FAILED
} rp_outcome;

/* rp_outcome_str returns a static name for |outcome|. */
const char *rp_outcome_str(rp_outcome outcome);

/* Log levels and categories for callbacks.log. */
typedef enum rp_log_level {
  RP_LOG_ERROR = 0,
  RP_LOG_WARN,
  RP_LOG_INFO,
  RP_LOG_DEBUG
} rp_log_level;

#define RP_LOG_CAT_SEL 0x01u /* selection decisions */
#define RP_LOG_CAT_RTT 0x02u /* latency estimates */
#define RP_LOG_CAT_TX 0x04u  /* sends */
#define RP_LOG_CAT_RX 0x08u  /* answers and errors */
#define RP_LOG_CAT_CAP 0x10u /* rate caps */
#define RP_LOG_CAT_CFG 0x20u /* configuration */
#define RP_LOG_CAT_ALL 0xffu

/*
 * rp_settings holds every constant that tunes the pool, with its unit.
 * rp_settings_default fills it for a kind; config and simulator may
 * change any field before rp_pool_new. The pool copies it.
 */
typedef struct rp_settings {
  /* load_balance is the strategy. */
  rp_balance load_balance;
  /* deadline is the longest time for one query over all tries, ns. */
  rp_duration deadline;
  /* per_attempt is the longest try at one resolver, ns. */
  rp_duration per_attempt;
  /* probe_interval is how often an idle down resolver is probed, ns. */
  rp_duration probe_interval;
  /* down_after is how many timeouts or network errors in a row, with no
     answer at all, mark a resolver down. */
  uint32_t down_after;
  /* duplicate is the most sends per query, copies included (>= 1; 2,
     kind masterdns 5). */
  uint32_t duplicate;
  /* wait_for_token is 1 to hold a query that finds every resolver at its
     cap (up to token_wait), 0 to fail it at once with SERVFAIL. */
  int wait_for_token;
  /* max_inflight is the cap on client queries in flight; a query past it
     is failed with SERVFAIL. */
  size_t max_inflight;
  /* max_resolvers is the cap on resolvers in the pool. */
  size_t max_resolvers;
  /* log_level is the most verbose level passed to callbacks.log. */
  rp_log_level log_level;
  /* log_categories is a mask of RP_LOG_CAT_* passed to callbacks.log. */
  uint32_t log_categories;
  /* The tuning constants of DESIGN.md section 5 follow; each documents
     its unit. docs/pool-behaviour.md says why each is there and which
     test covers it. */

  /* --- Choice (load_balance auto) --- */
  /* latency_window is the span of the fastest-answer latency, ns (10 s). */
  rp_duration latency_window;
  /* band_ratio: a resolver costing at most band_ratio x the cheapest
     cost + band_slack is equally good (1.2). */
  double band_ratio;
  /* band_slack is the additive part of the equal-cost band, ns (5 ms). */
  rp_duration band_slack;
  /* band_loss is how far above the lowest loss a resolver's loss may be
     (its lower confidence bound) and still be equally good, ratio
     (0.02 = 2 points). */
  double band_loss;
  /* loss_z is the z of the Wilson interval of the loss (1.96 = 95 %). */
  double loss_z;
  /* loss_window is the time constant of the loss estimate's exponential
     decay, in seconds (10.0): the same memory at 1 q/s and at 10 000
     q/s. (A double in seconds, not an rp_duration, for compatibility.) */
  double loss_window;
  /* probation_answers is how many answers (refusals count) a new
     resolver gives before it may have more than one query in flight
     (8). */
  uint32_t probation_answers;
  /* stale_caps, 0 or 1 (0): 1 restores a rule removed as wrong, for the
     simulator's collapse fixture (docs/simulator.md): a try of a
     resolver in probation unanswered by its judge time (marked stale)
     caps the resolver at cap_drop_factor x its answer rate. A tunnel
     server that holds a poll for a second makes that a cap of a few
     dozen q/s on a resolver that takes thousands. */
  int stale_caps;
  /* probation_strict, 0 or 1 (0): 1 restores the probation removed as
     wrong, for the simulator's collapse fixture with stale_caps
     (docs/simulator.md): a resolver in probation holds one query in
     flight (plus its stale tries) even when no other resolver can take
     the query, where 0 lets one that replied take up to one more than
     its replies. Behind a tunnel server that holds its newest poll,
     that one query sits there for a second. */
  int probation_strict;
  /* tc_stream_tries is how many times one query is asked again over a
     stream after a truncated UDP answer (2); past it a truncated answer
     is delivered as it is (the client may ask over TCP itself), so a
     resolver that truncates and has no TCP service costs a bounded
     number of sends. */
  uint32_t tc_stream_tries;
  /* retry_left_out is how often a resolver left out of the band gets a
     query again, ns (2 s). At most one such retry goes with each client
     query, so many left-out resolvers are retried less often. */
  rp_duration retry_left_out;
  /* retry_loss_stretch stretches that gap for a resolver that loses:
     retry_left_out x (1 + this x its loss share over loss_window), so
     at most about one retry in retry_left_out x this is lost, whatever
     the loss (20: 42 s at most; 0: every retry_left_out). A retry is a
     copy of a live query: through a tunnel whose server gives each query
     new data, a lost one loses that data (the real dnstt-client then
     waits for its KCP timer and can fall idle for its 500 ms poll). */
  double retry_loss_stretch;

  /* --- Learned caps --- */
  /* cap_refusal_factor: after a refusal, cap = this x recent answer
     rate (1.2). */
  double cap_refusal_factor;
  /* cap_drop_factor: after a drop while answering others, cap = this x
     recent answer rate (0.9). */
  double cap_drop_factor;
  /* cap_growth is the cap's growth per second while the resolver answers
     without trouble, ratio/s (0.10). */
  double cap_growth;
  /* cap_lift_after: a cap that held nothing back and saw no trouble for
     this long is lifted, ns (3 s). */
  rp_duration cap_lift_after;
  /* rate_window is the span of the recent answer rate, ns (3 s); a
     resolver in use for less is measured over its time in use. */
  rp_duration rate_window;
  /* overflow_grace: for this long after the pool sent a resolver
     overflow (a send past the cap, or queries in flight when the cap was
     lowered), its refusals and drops do not lower the cap, ns (1 s). */
  rp_duration overflow_grace;
  /* quiet_spell: a refusal with no trouble for this long before it is
     after a quiet spell, ns (3 s). */
  rp_duration quiet_spell;
  /* quiet_max_step is the largest fraction a refusal after a quiet spell
     lowers the cap by (0.3). */
  double quiet_max_step;
  /* assume_answers: a first refusal before this many answers assumes
     assume_qps (10; 40 for kinds dnstt and masterdns); a drop before
     then too. */
  uint32_t assume_answers;
  /* assume_qps is the answer rate assumed then, queries/s (40: a
     refusing resolver starts at cap 48, a dropping one at 36; too high
     costs a few refusals, resent at once, too low starves it while the
     cap grows at cap_growth). */
  double assume_qps;
  /* bucket_depth is the token bucket's depth as a span of the cap, ns
     (200 ms: cap 30 q/s -> 6 tokens; never below one token). */
  rp_duration bucket_depth;
  /* token_wait is how long a query waits for a token when
     wait_for_token, ns (300 ms; kind masterdns 50 ms). */
  rp_duration token_wait;
  /* past_cap_interval: one waiting query per resolver per this span is
     sent past the cap, ns (100 ms). */
  rp_duration past_cap_interval;
  /* trouble_recent: a resolver that refused or lost a query this recently
     gets no send past its cap, and its cap does not grow, ns (2 s; kind
     masterdns 1 s). */
  rp_duration trouble_recent;
  /* loss_verdict_drops: a drop episode (caps set for overtaken drops)
     shows random loss once this many tries sent under its second or a
     later cap dropped (5) ... */
  uint32_t loss_verdict_drops;
  /* ... and their share of those tries' replies and drops is at least
     drop_min_share and loss_verdict_ratio x the share under the cap
     before, ratio (0.5): a resolver that drops past its rate drops a
     much smaller share under a lower cap (1 - limit/cap, about none
     under its limit), one that loses at random the same share. */
  double loss_verdict_ratio;
  /* random_loss_hold: after such a verdict, drops are counted as loss
     without a cap for this long, ns (10 s). */
  rp_duration random_loss_hold;
  /* verdict_min_use: the first cap of an episode is judged against the
     time before it only when the resolver was in use this long before,
     and no cap was lifted in the rate window before, ns (1 s); otherwise
     two caps are compared. At the opening, a resolver's burst allowance
     and a rate measured over a short time put the first cap above the
     real rate; after a lift the window mixes quiet and loaded times. In
     both the share before is no measure (a 40 q/s dropper offered
     200 q/s was judged random 0.4 s after its first query, and left
     nearly unused). */
  rp_duration verdict_min_use;
  /* drop_min_share: overtaken drops start an episode (a cap) only when
     they are at least this share of the rate window's answers and drops,
     ratio (0.05): a resolver that loses a datagram in a hundred under a
     heavy load or a burst is not rate-limited, and drops that few are
     sent again at once. (It was 0.10 while the pool's sockets to the
     resolvers had the kernel's default buffer and a loopback resolver
     under 300 tunnel workers seemed to lose 2 to 5 %: the pool lost
     them itself. At 0.10 a resolver losing 10 % started its episode
     only when the window's share happened to cross it, up to 1.8 s.) */
  double drop_min_share;
  /* drop_min_spread: ... and only when they fall in at least this many
     of the window's 100 ms buckets (2): a burst of queries that cannot
     be answered at all is no rate. */
  uint32_t drop_min_spread;
  /* early_drop_loss, 0, 1 or 2 (2): which overtaken drops at a resolver
     without a cap count as loss at once, before any episode's verdict
     (the equal-cost band's loss bound then sees them). 2: every drop
     that does not start an episode, once the rate window's drops are
     random_min_share of its answers and drops. 1: only while the window
     holds fewer than loss_verdict_drops, at least drop_min_share. 0, the
     oldest rule: none; they wait, uncounted, for an episode's verdict.
     A resolver losing 10 % took about 400 of a tunnel's first 3 000
     queries before the verdict under 0, and under 1 its drops past the
     fourth waited for an episode that needs two 100 ms buckets: 250 of
     a MasterDNS opening's first 2 500 queries, 23 of them lost (2: 120,
     9 lost), and the real MasterDnsVPN client then crawled for seconds. */
  uint32_t early_drop_loss;
  /* random_min_share: an episode judges random loss only when the drops
     under its cap are at least this share of those tries' replies and
     drops, ratio (0.025). Below drop_min_share: a resolver losing 10 %
     shows 10 % only on average, and with the verdict at its share (then
     0.10) it was a coin toss (half of the tunnel's queries went on to
     it, its loss read 0). */
  double random_min_share;
  /* level_min_tries: a cap of an episode that has had loss_verdict_drops
     drops is lowered again once this many of the tries sent under it
     were answered or dropped, without waiting out overflow_grace (50):
     each cap's tries are counted apart, so the grace, there for the
     tries in flight before a cap, is not needed to judge it, and at the
     thousands of queries a second of a tunnel over a fast resolver a
     random loser was judged only after 1.1-1.8 s (the whole of a short
     transfer). A slow resolver still gets overflow_grace. */
  uint32_t level_min_tries;

  /* --- Hedging --- */
  /* hedge_devs is the number of deviations past the mean after which a
     query is also tried elsewhere (4). */
  double hedge_devs;
  /* hedge_min_dev is the smallest deviation term of that, ns (10 ms). */
  rp_duration hedge_min_dev;
  /* hedge_max_inflight: no hedge while more client queries than this are
     in flight, queries (0: no bound; kinds masterdns and dnstt 24). */
  uint32_t hedge_max_inflight;
  /* late_window, ns (0: off; kind masterdns 10 s): a try overtaken by a
     reply to a later one is judged lost once mean + hedge_devs
     deviations passed since its send, and not before the latency of
     the latest answer that came to a try already judged lost at that
     resolver in the last late_window (a resolver that reorders its
     answers, as the real MasterDnsVPN server does under load, does not
     lose them). Whatever the window, a late answer takes back what its
     judgement counted: its loss, its drop, its share of a cap
     (docs/pool-behaviour.md). */
  rp_duration late_window;
  /* hedge_initial: while no resolver's latency is known (nothing has
     answered yet), a try is hedged this long after its send, ns (300
     ms; 0: never, until an answer makes a latency known). A third of
     the tunnel clients' first timeouts (MasterDnsVPN's MTU test waits
     1 s for each probe), so a hedge and its answer come before them:
     without it a probe lost at a lossy resolver at start had no hedge
     time and the minimal MasterDNS client stalled for that second. */
  rp_duration hedge_initial;
  /* early_hedge_rtts: a query at a resolver that lost lately is hedged
     after this many fastest latencies when that is sooner (2). */
  double early_hedge_rtts;
  /* lossy_recent: a resolver lost something "lately" when its last loss
     is this recent, ns (10 s). */
  rp_duration lossy_recent;
  /* hedge_lossy_loss: a first resolver whose loss lower bound exceeds
     this "really loses": its hedge may go to any resolver (0.05). */
  double hedge_lossy_loss;
  /* max_hedges is the most hedges per query (2). */
  uint32_t max_hedges;

  /* --- Copies --- */
  /* copy_delay_rtt is the delay of a copy after the first send, in round
     trips of the first resolver (0.25). */
  double copy_delay_rtt;
  /* copy_min_delay: a copy due sooner than this after its first send
     goes with it, ns (1 ms, the runtime's timer step). A quarter of a
     0.3 ms round trip waited for the next millisecond tick, after the
     answer: the copy never went (the real MasterDnsVPN client, one fast
     resolver: 3 200 copies, 58 000-71 000 kbps; with them at once
     21 000-23 000 copies, 104 000-107 000 kbps). */
  rp_duration copy_min_delay;
  /* copy_window is how many judgements of copies (did a later answer to
     a query with a copy carry other bytes than the first?) change the
     copies per query at once (8). */
  uint32_t copy_window;
  /* copy_step is how much the copies per query change per judgement
     (0.5). */
  double copy_step;
  /* copy_data_share: the copies per query rise after a window of
     copy_window judgements in which more than this share of the copies
     carried data, and fall otherwise, 0..1 (0.5). */
  double copy_data_share;
  /* copy_probe_interval: when no copies are sent, a few are tried this
     often, ns (2 s). */
  rp_duration copy_probe_interval;
  /* copy_probe_queries is how many queries get a copy then (4). */
  uint32_t copy_probe_queries;
  /* copy_max_inflight: no copies for a new query while more client
     queries than this are in flight, queries (24). A copy pays while the
     client waits on few answers (over a slow resolver it carried 10x the
     data); with many in flight its answers come on top of a full stream
     and overflow the client's socket (the real MasterDnsVPN client lost
     hundreds a second so and stalled for seconds). With
     copy_inflight_rtt set, the bound is on answers instead (see there). */
  uint32_t copy_max_inflight;
  /* copy_inflight_rtt, duration (0: the fixed bound above; 4 ms for kind
     masterdns): copies go while the client's queries in flight, each
     counted with its copies, are at most 2 x copy_max_inflight answers
     per this much of the first resolver's fastest round trip. Answers
     come spread over one round trip: over a 20 ms resolver 240 answers
     in flight arrive no faster than 48 over 4 ms; and the copies may
     share a resolver. Over a resolver no slower than this the fixed
     bound holds. */
  rp_duration copy_inflight_rtt;
  /* copy_ramp, duration (0: none): the bound on copies above grows from
     0 to its full value over this long after the first client query,
     and after any pause of as long without one. A client starting a
     session has the most work of its life then (the real MasterDnsVPN
     client's sockets overflowed in its first two seconds). */
  rp_duration copy_ramp;
  /* extra_budget: copies and hedges together are at most this x the
     first sends of the last extra_window, ratio (2.5: duplicate 3
     fits; kind masterdns 4.5, for its duplicate 5). */
  double extra_budget;
  /* extra_window is the span of that budget, ns (2 s). */
  rp_duration extra_window;

  /* --- Down and back --- */
  /* down_copy_interval: a down resolver gets a copy of a live query this
     often, ns (1 s). */
  rp_duration down_copy_interval;
  /* probe_name is the name of a built probe query ("" = none: probes are
     then copies of the most recent client query). */
  char probe_name[256];
  /* probe_qtype is the type of the built probe query (TXT). */
  uint16_t probe_qtype;

  /* --- Scores and other strategies --- */
  /* score_answer, score_refusal and score_failure change the score on an
     answer (+1), a refusal (-4) and a timeout or network error (-4). */
  int score_answer;
  int score_refusal;
  int score_failure;
  /* stat_min_samples: lowest_latency and least_loss count a resolver's
     latency and loss after this many samples (5, as MasterDnsVPN). */
  uint32_t stat_min_samples;
  /* ll_unknown_latency is the latency assumed before that, ns (999 ms). */
  rp_duration ll_unknown_latency;
  /* ll_unknown_loss is the loss score (per mille) assumed before that
     (200). */
  uint32_t ll_unknown_loss;

  /* --- Upstream entropy: 0x20 (pool/core/case.h) --- */
  /* case_randomize is 1 to send every datagram try of a query with the
     case of each ASCII letter of its question name drawn at random (one
     pattern per try, from callbacks.rand), to accept only an answer that
     repeats that case byte for byte, and to give the client back its own
     case (draft-vixie-dnsext-dns0x20-00; Unbound's use-caps-for-id): a
     blind forger must guess one more bit per letter, on top of the
     16-bit ID and the source port. 1 for kind generic; 0 for kinds
     dnstt and masterdns, whose names carry the tunnel's data, and
     rp_settings_restrict keeps it 0 for them whatever is asked. Under
     kind auto the names are never touched before the verdict, and only
     when it is generic after it. Streams (TCP, DoT, DoH) and PTR
     questions are sent as the client wrote them. */
  int case_randomize;
  /* case_fallback: a resolver that answered this many tries with the
     right ID and question but another case, with no proof for
     case_proof_life that it keeps the case, falls back: it still gets
     0x20 names but the case of its answers is no longer checked, and
     its first answer that repeats a mixed case checks it again; 0 =
     never fall back (3). Until then each such answer is dropped (and
     counted spoofed) and its query sent again at once. */
  uint32_t case_fallback;
  /* case_proof_life: an answer that repeated a mixed-case name proves
     that its resolver keeps the case; for this long after one, no count
     of answers with another case makes it fall back (a forger can send
     those, never a proof), ns (1 min; none = for ever, 0 = proofs do
     not protect). */
  rp_duration case_proof_life;

  /* --- Bounds --- */
  /* max_query_len is the longest client query kept, bytes (1232; longer
     queries are failed with SERVFAIL). Each in-flight slot holds this
     many bytes. */
  size_t max_query_len;

  /* --- Runtime (the core does not read these) --- */
  /* udp_port_life: new UDP sends to a resolver take a new socket, so a
     new random source port, once the current one is this old, ns (1 s;
     0 = one port for the process's life). A blind forger must then find
     the port as well as the 16-bit ID, and a port found is soon stale. */
  rp_duration udp_port_life;
} rp_settings;

/* rp_settings_default fills |settings| with the defaults for |kind|. */
void rp_settings_default(rp_settings *settings, rp_kind kind);

/* rp_settings_restrict clears in |settings| what |kind| never allows,
   whatever a config or --set asked: case_randomize for dnstt and
   masterdns (a tunnel's query names carry its data, and its server may
   decode them case by case). Drivers call it after the overrides for an
   explicit kind; rp_pool_sense_kind does it for kind auto. Returns 1 if
   it changed a field, else 0. */
int rp_settings_restrict(rp_settings *settings, rp_kind kind);

/* rp_duration_parse reads a duration: "0", or one or more decimal
   numbers each with a unit us, ms, s, m or h ("300ms", "1.5s", "1m30s",
   "1h"), at most a day and not under a nanosecond. Returns 0 or
   RP_ERR_CONFIG. */
int rp_duration_parse(const char *text, rp_duration *pd);

/* rp_settings_type is how a field of rp_settings is read and written by
   name. */
typedef enum rp_settings_type {
  RP_SETTINGS_DURATION = 0, /* rp_duration, ns: "300ms", "2s", "none" */
  RP_SETTINGS_U32,          /* uint32_t */
  RP_SETTINGS_U16,          /* uint16_t */
  RP_SETTINGS_INT,          /* int, may be negative */
  RP_SETTINGS_SIZE,         /* size_t */
  RP_SETTINGS_DOUBLE,       /* double */
  RP_SETTINGS_BOOL,         /* int used as 0/1: 0/1, yes/no, true/false */
  RP_SETTINGS_BALANCE,      /* rp_balance: auto, roundrobin, ... */
  RP_SETTINGS_LOG_LEVEL,    /* rp_log_level: error, warn, info, debug */
  RP_SETTINGS_STRING        /* char array, NUL ended */
} rp_settings_type;

/* rp_settings_field describes one field of rp_settings settable by
   name (the CLI's --set, the config's "tuning", respool-sim --set). */
typedef struct rp_settings_field {
  /* name is the field's C name. */
  const char *name;
  /* offset is offsetof(rp_settings, field). */
  size_t offset;
  /* size is sizeof the field, bytes. */
  size_t size;
  /* type says how to parse and format it. */
  rp_settings_type type;
  /* help is a short description with the unit. */
  const char *help;
} rp_settings_field;

/* RP_SETTINGS_ERRLEN and RP_SETTINGS_VALUELEN are good sizes for the
   error buffer of rp_settings_set and the output of rp_settings_format. */
#define RP_SETTINGS_ERRLEN 200
#define RP_SETTINGS_VALUELEN 280

/* rp_settings_fields returns the static table of every field of
   rp_settings and stores its length in |*plen|. */
const rp_settings_field *rp_settings_fields(size_t *plen);

/* rp_settings_find returns the field called |name| (|namelen| bytes), or
   NULL. */
const rp_settings_field *rp_settings_find(const char *name, size_t namelen);

/* rp_settings_set applies |assignment| ("name=value") to |settings|. On
   failure |errbuf| (|errlen| bytes, may be NULL) names the field and the
   value ("unknown setting 'band_ration'", "band_ratio: bad value 'x'
   (want a decimal number)") and |settings| is unchanged. Returns 0 or
   RP_ERR_CONFIG. rp_pool_new still checks the whole struct. */
int rp_settings_set(rp_settings *settings, const char *assignment,
                    char *errbuf, size_t errlen);

/* rp_settings_format writes the value of |field| in |settings| into |out|
   (|cap| bytes, NUL ended, truncated if needed) in the syntax
   rp_settings_set reads. */
void rp_settings_format(const rp_settings *settings,
                        const rp_settings_field *field, char *out, size_t cap);

/* rp_client identifies the client of one query. The core copies it by
   value and hands it back with every delivery; what it holds is the
   driver's business (a socket address, a connection id). */
typedef struct rp_client {
  /* id is free for the driver. */
  uint64_t id;
  /* opaque is free for the driver (room for a sockaddr_in6). */
  uint8_t opaque[32];
} rp_client;

/* Flags of rp_callbacks.send_query. */
/* RP_SEND_STREAM: send over the resolver's stream companion (TCP retry
   of a truncated UDP answer). */
#define RP_SEND_STREAM 0x1u
/* RP_SEND_PROBE: the send probes a down resolver (informational). */
#define RP_SEND_PROBE 0x2u

/* Flags of rp_callbacks.deliver. */
/* RP_DELIVER_FAILED: the bytes are an error answer built by the pool
   (SERVFAIL or FORMERR) rather than a resolver's answer. */
#define RP_DELIVER_FAILED 0x1u
/* RP_DELIVER_EXTRA: a further answer to a query already answered (a copy
   or a hedge that also came back). */
#define RP_DELIVER_EXTRA 0x2u

/* Flags of rp_pool_on_answer. */
/* RP_ANSWER_STREAM: the answer came over the stream companion. */
#define RP_ANSWER_STREAM 0x1u

/* rp_callbacks is how the core acts. Pointers passed to a callback are
   borrowed and valid only during the call. A callback returning non-zero
   makes the calling function return RP_ERR_CALLBACK_FAILURE. A callback
   must not call an rp_pool_* function of the same pool (the core is not
   re-entrant): report a send that fails inline later, from the loop. */
typedef struct rp_callbacks {
  /* send_query sends |len| bytes (ID already set to |upstream_id|) to the
     resolver |resolver_id|, whose user_data is |resolver_user_data|.
     |flags| is a mask of RP_SEND_*. |now| is the time given to the call
     into the pool that sends (a transport needs no clock of its own). A
     send that fails later is reported with rp_pool_on_error; returning
     non-zero is for fatal failures. */
  int (*send_query)(rp_pool *pool, uint32_t resolver_id,
                    void *resolver_user_data, uint16_t upstream_id,
                    const uint8_t *data, size_t len, uint32_t flags,
                    rp_tstamp now, void *user_data);
  /* deliver hands |len| bytes (the client's ID restored) to |client|.
     |flags| is a mask of RP_DELIVER_*; |now| as for send_query. */
  int (*deliver)(rp_pool *pool, const rp_client *client, const uint8_t *data,
                 size_t len, uint32_t flags, rp_tstamp now, void *user_data);
  /* rand fills |dest| with |len| random bytes. */
  void (*rand)(uint8_t *dest, size_t len, void *user_data);
  /* log receives one formatted key=value line (no newline), or NULL. */
  void (*log)(rp_log_level level, uint32_t category, const char *line,
              void *user_data);
} rp_callbacks;

/* rp_pool_new creates a pool in |*ppool| with a copy of |settings|,
   |callbacks| (send_query, deliver and rand are required), |mem| (NULL
   for rp_mem_default()) and |user_data| for the callbacks. Returns 0,
   RP_ERR_INVALID_ARGUMENT for a bad setting or a missing callback, or
   RP_ERR_NOMEM. */
int rp_pool_new(rp_pool **ppool, const rp_settings *settings,
                const rp_callbacks *callbacks, const rp_mem *mem,
                void *user_data);

/* rp_pool_sense_kind makes |pool| recognise the tunnel behind it from
   the names of its client queries (docs/pool-behaviour.md, "Kind auto")
   and then run with |by_kind[k]| (RP_KIND_COUNT entries, indexed by
   rp_kind; the generic entry is not used) for the kind k recognised. Each
   entry must pass rp_settings_check and keep the pool's max_inflight,
   max_resolvers, max_query_len and load_balance. Call it before the first
   rp_pool_submit. Returns 0, RP_ERR_INVALID_ARGUMENT or RP_ERR_NOMEM. */
int rp_pool_sense_kind(rp_pool *pool, const rp_settings *by_kind);

/* rp_pool_kind returns the kind |pool| recognised: RP_KIND_AUTO while it
   is still looking, RP_KIND_GENERIC when it found none or was not asked
   to look. */
rp_kind rp_pool_kind(const rp_pool *pool);

/* rp_pool_del frees |pool| without calling any callback. NULL is a
   no-op. */
void rp_pool_del(rp_pool *pool);

/* Flags of rp_resolver_config. */
/* RP_RESOLVER_STREAM: the transport is a stream (TCP, DoT, DoH): no
   datagram loss and no truncation. */
#define RP_RESOLVER_STREAM 0x1u
/* RP_RESOLVER_TCP_FALLBACK: a datagram resolver whose truncated answers
   may be retried with RP_SEND_STREAM. */
#define RP_RESOLVER_TCP_FALLBACK 0x2u

typedef struct rp_resolver_config {
  /* name is for logs (copied; may be NULL). */
  const char *name;
  /* flags is a mask of RP_RESOLVER_*. */
  uint32_t flags;
  /* score is the saved score, -10 .. 10 (0 when unknown). */
  int score;
  /* user_data is handed back in send_query. */
  void *user_data;
} rp_resolver_config;

/* rp_pool_add_resolver adds a resolver and stores its id in
   |*presolver_id|. Returns 0, RP_ERR_FULL past settings.max_resolvers,
   or RP_ERR_NOMEM. */
int rp_pool_add_resolver(rp_pool *pool, const rp_resolver_config *config,
                         uint32_t *presolver_id, rp_tstamp now);

/* rp_pool_remove_resolver removes a resolver; its tries in flight are
   treated as failed and their queries placed elsewhere. Returns 0 or
   RP_ERR_NOT_FOUND. */
int rp_pool_remove_resolver(rp_pool *pool, uint32_t resolver_id,
                            rp_tstamp now);

/* rp_pool_submit takes a client query. The core keeps a copy of the
   bytes. A query that cannot be placed is failed through deliver with
   RP_DELIVER_FAILED (SERVFAIL, or FORMERR when the question does not
   parse). Returns 0, RP_ERR_MALFORMED when not even a header parses (the
   caller drops it), or a fatal error. */
int rp_pool_submit(rp_pool *pool, const uint8_t *query, size_t len,
                   const rp_client *client, rp_tstamp now);

/* rp_pool_on_answer takes an answer from |resolver_id|. The core matches
   it to a try by ID and question and classifies it (answer, refusal,
   truncation, malformed, spoofed). Unmatched answers are dropped and
   counted. |flags| is a mask of RP_ANSWER_*. Returns 0 or a fatal
   error. */
int rp_pool_on_answer(rp_pool *pool, uint32_t resolver_id,
                      const uint8_t *answer, size_t len, uint32_t flags,
                      rp_tstamp now);

/* RP_UPSTREAM_ID_ALL in rp_pool_on_error applies the outcome to every
   try in flight at the resolver (a connection that failed). */
#define RP_UPSTREAM_ID_ALL 0xffffffffu

/* rp_pool_on_error reports that the try |upstream_id| (or every try when
   RP_UPSTREAM_ID_ALL) at |resolver_id| failed with |outcome| (a send
   error, a failed connection, HTTP 429). Returns 0, RP_ERR_NOT_FOUND for
   an unknown resolver, or a fatal error. */
int rp_pool_on_error(rp_pool *pool, uint32_t resolver_id,
                     uint32_t upstream_id, rp_outcome outcome,
                     rp_tstamp now);

/* rp_pool_get_expiry returns when rp_pool_handle_expiry must next be
   called, or RP_TSTAMP_UNSET if nothing is pending. */
rp_tstamp rp_pool_get_expiry(const rp_pool *pool);

/* rp_pool_handle_expiry runs everything due at |now|: hedges, copies,
   timeouts, waits, probes. Returns 0 or a fatal error. */
int rp_pool_handle_expiry(rp_pool *pool, rp_tstamp now);

typedef enum rp_resolver_state {
  RP_RESOLVER_PROBATION = 0, /* new: one query at a time */
  RP_RESOLVER_ACTIVE,
  RP_RESOLVER_CAPPED, /* a learned cap holds queries back */
  RP_RESOLVER_DOWN
} rp_resolver_state;

/* rp_resolver_state_str returns a static name for |state|. */
const char *rp_resolver_state_str(rp_resolver_state state);

typedef struct rp_resolver_stats {
  rp_resolver_state state;
  /* cap_qps is the learned cap in queries/s, or 0 when uncapped. */
  double cap_qps;
  /* answer_rate_qps is the recent answer rate, queries/s. */
  double answer_rate_qps;
  /* fastest_latency is the fastest answer of the last window, ns, or
     RP_TSTAMP_UNSET when none. */
  rp_duration fastest_latency;
  /* mean_latency and latency_dev are smoothed estimates, ns (UNSET when
     none). */
  rp_duration mean_latency;
  rp_duration latency_dev;
  /* loss is the recent loss ratio 0..1, loss_uncertainty its margin. */
  double loss;
  double loss_uncertainty;
  /* inflight is the number of tries in flight. */
  uint32_t inflight;
  /* Counters since the resolver was added. */
  uint64_t sent, answered, refused, dropped, errors, copies, hedges, probes;
  /* late counts answers to tries already judged lost (dropped counts the
     judgements): the resolver reordered, settings.late_window. */
  uint64_t late;
  /* case_mismatches counts its answers with the right ID and question
     but another case than the 0x20 name sent (settings.case_randomize). */
  uint64_t case_mismatches;
  /* case_fallback is 1 while the resolver has fallen back: it gets 0x20
     names but the case of its answers is not checked
     (settings.case_fallback). */
  int case_fallback;
  /* last_used is when a query was last sent, or RP_TSTAMP_UNSET. */
  rp_tstamp last_used;
  /* score is the current score, -10 .. 10. */
  int score;
} rp_resolver_stats;

/* rp_pool_get_resolver_stats fills |stats| for |resolver_id| at |now|.
   Returns 0 or RP_ERR_NOT_FOUND. */
int rp_pool_get_resolver_stats(const rp_pool *pool, uint32_t resolver_id,
                               rp_resolver_stats *stats, rp_tstamp now);

typedef struct rp_pool_stats {
  /* Client side counters. */
  uint64_t queries, delivered, failed, waits, duplicates_delivered;
  /* malformed: client queries or answers that did not parse, and answers
     with another opcode than their query's or an unassigned rcode
     (11-15; the try failed, the query went elsewhere). spoofed:
     answers whose ID or question matched no try (the case of a 0x20
     name included). full: queries failed because the in-flight table was
     full. */
  uint64_t malformed, spoofed, full;
  /* 0x20 (settings.case_randomize): case_mismatches counts answers with
     the right ID and question but another case than the name sent (those
     from a resolver that has not fallen back are also in spoofed, and
     not delivered); case_fallbacks counts the times a resolver fell back
     (its answers' case no longer checked). */
  uint64_t case_mismatches, case_fallbacks;
  /* Resolver side counters. spills counts queries that no resolver of
     the equal-cost band could take (each at its cap) sent to a slower or
     lossier one with room instead of failing. retries counts tries that
     rode along a client query to a resolver left out of the band or to
     one that never replied yet (exploration: at most one a query). */
  uint64_t sends, copies, hedges, resends, probes, spills, retries;
  /* Copies judged: copies_data counts later answers (to queries with a
     copy) that carried other bytes than the answers delivered before,
     copies_repeat those that repeated one. repeats_dropped counts later
     answers not passed on because they repeated one already delivered
     (copies' and hedges'). extras_skipped counts copies and hedges not
     sent for the budget (settings.extra_budget). */
  uint64_t copies_data, copies_repeat, repeats_dropped, extras_skipped;
  /* late counts answers to tries already judged lost: reordering taken
     for loss (settings.late_window). */
  uint64_t late;
  /* inflight is the number of client queries in flight. */
  size_t inflight;
  /* nresolvers is the number of resolvers; nup of those not down. */
  size_t nresolvers, nup;
} rp_pool_stats;

/* rp_pool_get_stats fills |stats|. */
void rp_pool_get_stats(const rp_pool *pool, rp_pool_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* RESPOOL_H */
