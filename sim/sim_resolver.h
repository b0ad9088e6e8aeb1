/*
 * sim_resolver.h: one simulated resolver (the simulator's link).
 *
 * A simulated resolver IS a fake resolver: it wraps the pure profile of
 * fake-resolvers/fr_profile.h (rate limit with refuse, servfail or drop,
 * loss before or after the resolver, latency with jitter, dead) and
 * answers like `fakeres --answer` (fr_answer.h: a TXT record filled to the
 * query's EDNS size, or of the size its first label asks for). What a
 * resolver does to a query is decided when the query arrives; the driver
 * (sim.c) then schedules the reply after the decided delay.
 *
 * The profile can change at a virtual time (a hook): the new spec is the
 * old one with the keys of a spec text overridden ("dead", "dead=no",
 * "rate=20,over=refuse", "loss=30%"). The rate limiter restarts with a
 * full bucket then. The resolver's own counters survive the change.
 */
#ifndef SIM_RESOLVER_H
#define SIM_RESOLVER_H

#include "respool.h"
#include "fr_profile.h"

#include <stddef.h>
#include <stdint.h>

/* sim_resolver_counts is what the resolver saw and did, cumulative. */
typedef struct sim_resolver_counts {
  /* received counts queries that reached the resolver's address (the
     pool's sends, lost ones included). */
  uint64_t received;
  /* answered counts answers sent back (NOERROR with data). */
  uint64_t answered;
  /* refused counts REFUSED or SERVFAIL sent back for the rate limit. */
  uint64_t refused;
  /* dropped counts queries dropped silently for the rate limit. */
  uint64_t dropped;
  /* lost counts exchanges lost on the path (before or after). */
  uint64_t lost;
  /* dead counts queries that met a dead resolver. */
  uint64_t dead;
} sim_resolver_counts;

/* sim_resolver is one simulated resolver. Caller-owned storage. */
typedef struct sim_resolver {
  /* spec is the resolver's current spec (name set). */
  fr_spec spec;
  /* profile is the fake resolver's decision state. */
  fr_profile profile;
  /* rng is this resolver's own random stream (loss, jitter), seeded
     from the run's seed and the resolver's index. */
  fr_rng rng;
  /* counts is cumulative over profile changes. */
  sim_resolver_counts counts;
  /* pool_id is the id the pool gave the resolver. */
  uint32_t pool_id;
} sim_resolver;

/* sim_resolver_init starts |r| with a copy of |spec| at |now|, its
   random stream seeded with |seed|. */
void sim_resolver_init(sim_resolver *r, const fr_spec *spec, uint64_t seed,
                       rp_tstamp now);

/* sim_resolver_receive decides what happens to a query arriving at |now|
   and counts it. |decision| receives the verdict, the delay and the
   rcode of a refusal. */
void sim_resolver_receive(sim_resolver *r, rp_tstamp now,
                          fr_decision *decision);

/* sim_resolver_check_change returns 0 if |text| is a valid change of a
   spec, or RP_ERR_CONFIG with the reason in |errbuf| (|errlen| bytes, may
   be NULL). Nothing changes. */
int sim_resolver_check_change(const char *text, char *errbuf, size_t errlen);

/* sim_resolver_change overrides the keys |text| sets in the spec and
   restarts the profile at |now| (full bucket); the name is kept.
   Returns 0 or RP_ERR_CONFIG (|r| is then unchanged). */
int sim_resolver_change(sim_resolver *r, const char *text, rp_tstamp now,
                        char *errbuf, size_t errlen);

/*
 * sim_resolver_reply builds into |out| (|cap| bytes) the reply to the
 * query |query| (|qlen| bytes): for |verdict| FR_VERDICT_ANSWER the
 * answer-mode TXT answer of the fake resolvers (over a stream when
 * |stream|), for FR_VERDICT_REFUSE an error answer with |rcode|.
 * Returns the length, RP_ERR_MALFORMED if the query does not parse,
 * RP_ERR_NOBUF, or RP_ERR_INVALID_ARGUMENT for another verdict.
 */
rp_ssize sim_resolver_reply(const uint8_t *query, size_t qlen,
                            fr_verdict verdict, uint8_t rcode, int stream,
                            uint8_t *out, size_t cap);

#endif /* SIM_RESOLVER_H */
