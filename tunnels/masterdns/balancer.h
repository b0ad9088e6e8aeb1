/*
 * balancer.h: the MasterDnsVPN-style client balancer over a resolver list
 * (prefix tun_bal_). Sans-I/O: every call takes |now|.
 *
 * Strategies, as MasterDnsVPN's internal/client/balancer.go documents
 * them:
 *   round robin     an atomic-counter rotation over the active resolvers;
 *   least loss      lowest lost * 1000 / sent, 200 until 5 sent, 0 when
 *                   nothing was lost;
 *   lowest latency  lowest mean RTT of the last TUN_BAL_RTT_WINDOW
 *                   replies, 999 ms until 5 replies.
 * Ties go to the resolver the rotation reaches first, so equal resolvers
 * share the load.
 *
 * Duplication: tun_bal_pick_copies picks the resolvers for the copies of
 * a query, never the resolver of the first send and never one twice.
 *
 * Health: a resolver that only timed out (no answer at all) for
 * TUN_BAL_DISABLE_AFTER is disabled; the driver rechecks disabled
 * resolvers in the background (tun_bal_recheck_due) and enables them on
 * an answer. When every resolver is disabled, picks fall back to all of
 * them (a tunnel with no resolver left would stop for good).
 */
#ifndef TUN_BAL_H
#define TUN_BAL_H

#include "respool.h"

#include <stddef.h>
#include <stdint.h>

/* TUN_BAL_MAX is the most resolvers in a balancer. */
#define TUN_BAL_MAX 64
/* TUN_BAL_RTT_WINDOW is how many recent replies the latency averages. */
#define TUN_BAL_RTT_WINDOW 32
/* TUN_BAL_MIN_SAMPLES is the sends or replies before a score counts. */
#define TUN_BAL_MIN_SAMPLES 5
/* TUN_BAL_NEUTRAL_LOSS is the loss score before enough sends. */
#define TUN_BAL_NEUTRAL_LOSS 200
/* TUN_BAL_LATENCY_PENALTY_US is the latency score before enough
   replies, microseconds. */
#define TUN_BAL_LATENCY_PENALTY_US 999000
/* TUN_BAL_DISABLE_AFTER is how long only timeouts disable a resolver. */
#define TUN_BAL_DISABLE_AFTER (30 * RP_SECONDS)
/* TUN_BAL_RECHECK_EVERY is the period of a disabled resolver's check. */
#define TUN_BAL_RECHECK_EVERY (5 * RP_SECONDS)

typedef enum tun_bal_strategy {
  TUN_BAL_ROUNDROBIN = 0,
  TUN_BAL_LEAST_LOSS,
  TUN_BAL_LOWEST_LATENCY
} tun_bal_strategy;

typedef struct tun_bal_res {
  /* active is 0 while disabled. */
  int active;
  /* sent, answered, lost (timeouts and error answers) count sends. */
  uint64_t sent, answered, lost, timeouts;
  /* rtt_us holds the last replies' round trips, microseconds. */
  uint64_t rtt_us[TUN_BAL_RTT_WINDOW];
  /* nrtt is how many of rtt_us are filled; rtt_pos the next slot. */
  size_t nrtt, rtt_pos;
  /* last_answer is the last answer's time (RP_TSTAMP_UNSET: none). */
  rp_tstamp last_answer;
  /* first_silent_timeout is the first timeout since the last answer
     (RP_TSTAMP_UNSET: none). */
  rp_tstamp first_silent_timeout;
  /* next_recheck is when a disabled resolver is checked next. */
  rp_tstamp next_recheck;
} tun_bal_res;

typedef struct tun_bal {
  tun_bal_strategy strategy;
  size_t n;
  /* rr is the rotation counter. */
  uint64_t rr;
  tun_bal_res res[TUN_BAL_MAX];
  /* disabled_events counts disablings. */
  uint64_t disabled_events;
} tun_bal;

/* tun_bal_init sets up |n| resolvers (at most TUN_BAL_MAX), all active.
   Returns 0 or RP_ERR_INVALID_ARGUMENT. */
int tun_bal_init(tun_bal *bal, size_t n, tun_bal_strategy strategy);

/* tun_bal_set_active enables or disables resolver |i| (the MTU test
   disables those that fail it). */
void tun_bal_set_active(tun_bal *bal, size_t i, int active, rp_tstamp now);

/* tun_bal_pick returns the resolver for the next query. */
size_t tun_bal_pick(tun_bal *bal);

/* tun_bal_pick_copies stores up to |ncopies| distinct resolvers other
   than |first| in |out| and returns how many. */
size_t tun_bal_pick_copies(tun_bal *bal, size_t first, size_t ncopies,
                           size_t *out);

/* tun_bal_on_sent counts a send to |i|. */
void tun_bal_on_sent(tun_bal *bal, size_t i);

/* tun_bal_on_answer counts an answer from |i| after |rtt|; |ok| is 0 for
   an error rcode (counted as lost, but it proves the resolver alive). */
void tun_bal_on_answer(tun_bal *bal, size_t i, rp_duration rtt, int ok,
                       rp_tstamp now);

/* tun_bal_on_timeout counts a send to |i| that got no answer, and
   disables |i| once it has only timed out for TUN_BAL_DISABLE_AFTER. */
void tun_bal_on_timeout(tun_bal *bal, size_t i, rp_tstamp now);

/* tun_bal_recheck_due returns 1 if disabled resolver |i| should be
   checked at |now|, and schedules the next check. */
int tun_bal_recheck_due(tun_bal *bal, size_t i, rp_tstamp now);

/* tun_bal_loss_score and tun_bal_latency_score_us are the scores. */
uint64_t tun_bal_loss_score(const tun_bal *bal, size_t i);
uint64_t tun_bal_latency_score_us(const tun_bal *bal, size_t i);

/* tun_bal_nactive returns the number of active resolvers. */
size_t tun_bal_nactive(const tun_bal *bal);

#endif /* TUN_BAL_H */
