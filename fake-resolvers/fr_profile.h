/*
 * fr_profile.h: the behaviour of one fake resolver, as a pure module.
 *
 * A profile is what a public resolver does to a tunnel's queries: it
 * limits their rate (a token bucket) and refuses or silently drops the
 * excess, it answers after a latency with jitter, it loses a share of the
 * exchanges on the path, or it is dead. This module decides, for each
 * incoming query, which of those happens. It reads no clock (the caller
 * passes |now|, monotonic nanoseconds), draws randomness only from a
 * caller's source, opens no socket and allocates nothing, so the libuv
 * server (fakeres) and the simulator (sim/) run the very same resolvers.
 *
 * It also parses the textual spec of a resolver:
 *
 *   name=r1,rate=30,burst=3,over=refuse,latency=60ms,jitter=5ms,loss=10%,
 *   dead,addr=127.0.0.2,port=5300
 *
 * Every key is optional; an empty spec is an unlimited resolver that
 * answers at once.
 */
#ifndef FR_PROFILE_H
#define FR_PROFILE_H

#include "respool.h"

#include <stddef.h>
#include <stdint.h>

/* FR_NAME_MAX is the size of fr_spec.name, NUL included. */
#define FR_NAME_MAX 32

/* FR_ERRBUF_LEN is a good size for the error buffer of fr_spec_parse. */
#define FR_ERRBUF_LEN 160

/* fr_set_err formats |fmt| into |errbuf| (|errlen| bytes, truncated);
   with no buffer (NULL or |errlen| 0) it does nothing. Shared by the
   spec parser and the server's set-up. */
void fr_set_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* FR_MILLI is the fixed-point unit of rates and of the burst: one
   query per second is FR_MILLI milli-queries per second. */
#define FR_MILLI 1000u

/* FR_PPM is the loss fraction 1.0 in parts per million. */
#define FR_PPM 1000000u

/* fr_over is what a rate-limited resolver does with a query past its
   limit. */
typedef enum fr_over {
  FR_OVER_REFUSE = 0, /* answer REFUSED (as most public resolvers) */
  FR_OVER_SERVFAIL,   /* answer SERVFAIL */
  FR_OVER_DROP        /* answer nothing */
} fr_over;

/* fr_over_str returns the spec keyword of |over| ("refuse"...). */
const char *fr_over_str(fr_over over);

/*
 * fr_spec is one resolver's configuration. fr_spec_default fills the
 * defaults; fr_spec_parse overrides what the text sets.
 */
typedef struct fr_spec {
  /* name is the resolver's name, NUL ended; "" until set. Letters,
     digits, '-', '_' and '.' only, so it needs no escaping in JSON. */
  char name[FR_NAME_MAX];
  /* rate_mqps is the rate limit in milli-queries per second; 0 is
     unlimited. */
  uint64_t rate_mqps;
  /* burst_milli is the bucket depth in milli-tokens; 0 means the default
     of fr_spec_burst_milli (a tenth of a second of rate, at least one
     token). */
  uint64_t burst_milli;
  /* over is what happens to a query past the limit. */
  fr_over over;
  /* latency is the mean extra delay of every answer, ns. */
  rp_duration latency;
  /* jitter is the half-width of the uniform spread around latency, ns:
     each delay is drawn from [latency - jitter, latency + jitter],
     clamped at 0. */
  rp_duration jitter;
  /* loss_ppm is the share of exchanges lost, in parts per million. */
  uint32_t loss_ppm;
  /* dead is 1 if the resolver answers nothing. */
  int dead;
  /* addr is the IPv4 address to listen on, network byte order as four
     bytes; default 127.0.0.1. */
  uint8_t addr[4];
  /* port is the port to listen on (UDP and TCP); 0 is any free port. */
  uint16_t port;
} fr_spec;

/* fr_spec_default fills |spec| with an unnamed, unlimited resolver on
   127.0.0.1, any free port. */
void fr_spec_default(fr_spec *spec);

/*
 * fr_spec_parse parses |text| (comma-separated key=value items; "dead"
 * may stand alone) into |spec|, overriding only the keys the text sets:
 * the caller fills |spec| first (fr_spec_default, then its own defaults
 * such as another address). On failure |spec| may be partly changed.
 * Keys: name, rate (q/s, decimals allowed, 0 = unlimited), burst
 * (tokens), over (refuse|servfail|drop), latency and jitter (durations:
 * 300us, 60ms, 2s, 1m; "0" alone is allowed), loss (a percentage, "10%"
 * or "10"), dead (alone, or =1/0/yes/no/true/false), addr (dotted IPv4)
 * and port (0..65535). On failure |errbuf| (|errlen| bytes; may be NULL)
 * receives a message naming the key and the value, e.g.
 * "rate: bad value '3x' (want queries per second)".
 *
 * Returns 0, or RP_ERR_CONFIG for an unknown key, a bad value, a
 * repeated key, a missing '=' or an empty item.
 */
int fr_spec_parse(fr_spec *spec, const char *text, char *errbuf, size_t errlen);

/* fr_parse_duration parses |text| ("0", or a number with a unit us, ms,
   s or m, decimals allowed, at most one hour) into |*pval| in ns.
   Returns 0 or RP_ERR_CONFIG. */
int fr_parse_duration(const char *text, rp_duration *pval);

/* fr_spec_burst_milli returns the bucket depth of |spec| in milli-tokens:
   burst_milli when set, else a tenth of a second of the
   rate and at least one token. 0 when the resolver is unlimited. */
uint64_t fr_spec_burst_milli(const fr_spec *spec);

/* ------------------------------------------------------------------ */
/* Decisions                                                            */
/* ------------------------------------------------------------------ */

/* fr_rand_fn returns 64 uniformly random bits. */
typedef uint64_t (*fr_rand_fn)(void *user_data);

/* fr_rng is a small seeded generator (splitmix64) the caller may pass as
   the random source of fr_profile_decide through fr_rng_next. */
typedef struct fr_rng {
  /* state advances by a fixed odd constant per draw. */
  uint64_t state;
} fr_rng;

/* fr_rng_seed seeds |rng|; the same seed gives the same sequence. */
void fr_rng_seed(fr_rng *rng, uint64_t seed);

/* fr_rng_next is an fr_rand_fn: |user_data| is an fr_rng. */
uint64_t fr_rng_next(void *user_data);

/* fr_verdict is what happens to one query. */
typedef enum fr_verdict {
  /* FR_VERDICT_ANSWER: answer (or forward upstream and relay the answer)
     after fr_decision.delay. */
  FR_VERDICT_ANSWER = 0,
  /* FR_VERDICT_REFUSE: over the limit; answer fr_decision.rcode
     (REFUSED or SERVFAIL) after fr_decision.delay. */
  FR_VERDICT_REFUSE,
  /* FR_VERDICT_DROP: over the limit with over=drop; answer nothing. */
  FR_VERDICT_DROP,
  /* FR_VERDICT_LOSE_BEFORE: lost on the way in; the resolver never saw
     it (no token spent, nothing forwarded). */
  FR_VERDICT_LOSE_BEFORE,
  /* FR_VERDICT_LOSE_AFTER: the resolver handled it (a token spent, the
     query forwarded upstream) but its answer is lost on the way out. */
  FR_VERDICT_LOSE_AFTER,
  /* FR_VERDICT_DEAD: the resolver is dead; nothing happens. */
  FR_VERDICT_DEAD
} fr_verdict;

/* fr_verdict_str returns a static name for |verdict|. */
const char *fr_verdict_str(fr_verdict verdict);

typedef struct fr_decision {
  /* verdict is what happens to the query. */
  fr_verdict verdict;
  /* delay is how long after |now| the answer or refusal leaves, ns; 0
     for the other verdicts. */
  rp_duration delay;
  /* rcode is RP_DNS_RCODE_REFUSED or RP_DNS_RCODE_SERVFAIL for
     FR_VERDICT_REFUSE, else 0 (NOERROR). */
  uint8_t rcode;
} fr_decision;

/* fr_profile_stats counts decisions by verdict. */
typedef struct fr_profile_stats {
  /* queries is the number of decisions taken. */
  uint64_t queries;
  /* answered, refused, dropped, lost_before, lost_after and dead count
     the decisions of each verdict; they sum to queries. */
  uint64_t answered, refused, dropped, lost_before, lost_after, dead;
} fr_profile_stats;

/* fr_profile is one resolver's state. It owns nothing. */
typedef struct fr_profile {
  /* spec is a copy of the resolver's spec. */
  fr_spec spec;
  /* burst is the bucket depth in bucket units (see FR_BUCKET_UNIT). */
  uint64_t burst;
  /* level is the bucket's content in bucket units. */
  uint64_t level;
  /* last is when |level| was last brought up to date, ns. */
  rp_tstamp last;
  /* stats counts the decisions. */
  fr_profile_stats stats;
} fr_profile;

/* fr_profile_init starts |profile| for a copy of |spec| at |now| with a
   full bucket. */
void fr_profile_init(fr_profile *profile, const fr_spec *spec, rp_tstamp now);

/*
 * fr_profile_decide decides what happens to a query arriving at |now|
 * (which must not go back in time) and writes it to |decision|. |rand_fn|
 * (with |rand_data|) is called at most twice: once for the loss draw when
 * loss is set (which also picks before or after), once for the jitter
 * when jitter is set. The order of checks: dead; loss before the
 * resolver; the rate limit (a query under the limit takes one token);
 * loss after the resolver; else an answer after latency +- jitter.
 */
void fr_profile_decide(fr_profile *profile, rp_tstamp now, fr_rand_fn rand_fn,
                       void *rand_data, fr_decision *decision);

/* fr_profile_tokens returns the whole tokens in the bucket at |now|
   (without changing |profile|), or UINT64_MAX when unlimited. */
uint64_t fr_profile_tokens(const fr_profile *profile, rp_tstamp now);

#endif /* FR_PROFILE_H */
