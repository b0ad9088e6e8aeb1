/*
 * try.h: tries (prefix rp_try_): one send of a query to a resolver, its
 * times (hedge, judge, per_attempt), its closing and its judgement as
 * lost. It owns rp_try and, of the resolver, its lists of open tries
 * (tries, lost), inflight, stale and stale_used, and the ID map entries
 * of the tries.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5)
 * - A try is one send of a query to a resolver under an upstream ID the
 *   core draws through callbacks.rand (RP_CORE_ID_DRAWS draws at most)
 *   and checks for collisions in the ID map; the client's ID is restored
 *   after the send. A try sent with a 0x20 name (case.h) draws its own
 *   pattern seed after the ID, and the client's bytes are written back
 *   after the send.
 * - Its hedge time is the resolver's mean + hedge_devs deviations (the
 *   cheapest resolver's while its own is unknown, hedge_initial while
 *   none is), sooner (early_hedge_rtts x its fastest answer, not under
 *   hedge_min_dev) at a resolver that lost lately; never past
 *   per_attempt. Copies, retries and down copies are not hedged.
 * - Overtaken: a datagram try that a reply to a later try at the same
 *   resolver overtook is judged lost at mean + 4 deviations after its
 *   send (not sooner than the resolver's latest late answer,
 *   late_window), without waiting for per_attempt; it stays open for a
 *   late answer until per_attempt, and its query goes out again when
 *   nothing else of it is out. A late answer takes back what the
 *   judgement counted (rtt.h, health.h, ratelim.h).
 * - Stale: at a resolver in probation, a try unanswered at its judge
 *   time (not before past_cap_interval) stops holding the probation
 *   slot, a few times per probation (TRY_PROBATION_STALE); nothing is
 *   judged then (an unanswered try may be a poll the tunnel server
 *   holds).
 */
#ifndef RP_CORE_TRY_H
#define RP_CORE_TRY_H

#include "core.h"

/* rp_try_close closes the open try |t| of |q| without judging it. */
void rp_try_close(rp_pool *pool, rp_query *q, rp_try *t, rp_tstamp now);

/* rp_try_hedge_after returns how long after a send at |r| it is hedged,
   or RP_TSTAMP_UNSET for never (per_attempt comes first). While no
   latency is known it is hedge_initial (test_core_timing_first_loss_
   hedged); rp_try_hedge_known brings such a try's hedge forward once one
   is. */
rp_duration rp_try_hedge_after(rp_pool *pool, const rp_res *r, rp_tstamp now);

/* rp_try_kind_hedged returns 1 if a try of |kind| is hedged when it is
   slow: the tries a query depends on, not its copies and retries. */
int rp_try_kind_hedged(rp_try_kind kind);

/* rp_try_hedge_known gives the open tries sent while no latency was known
   (at start every resolver is new: they have no hedge time) the hedge
   time a send of theirs would get now that the first answer made one
   known. A query whose first try went to a dead resolver then goes to
   the one that answered at once, not after per_attempt (or
   hedge_initial, the time they got at their send, when that is later).
   Runs when the cost heap gains its first member: O(queries in
   flight), seldom. */
void rp_try_hedge_known(rp_pool *pool, rp_tstamp now);

/* rp_try_send sends |q| to |r| as a try of |kind|. Returns 1 if sent,
   0 if it could not be (no free try or ID), or RP_ERR_CALLBACK_FAILURE. */
int rp_try_send(rp_pool *pool, rp_query *q, rp_res *r, rp_try_kind kind,
                uint32_t sflags, int past_cap, rp_tstamp now);

/* rp_try_may_stale returns 1 if the open try |t| is at a resolver in
   probation and may be marked stale (rp_try_stale_at): a few times
   per probation (TRY_PROBATION_STALE), at most once more than the
   resolver replied (a dead resolver costs two queries: a live tunnel
   server that holds the first answers it when the second comes), and
   while it lost nothing in probation. */
int rp_try_may_stale(const rp_pool *pool, const rp_try *t);

/* rp_try_stale_at returns when the open try |t| may be marked stale:
   its judge time (the resolver's mean latency + 4 deviations), but no
   sooner than past_cap_interval after its send (a burst limit it met
   refills meanwhile, as for a send past a cap). */
rp_tstamp rp_try_stale_at(const rp_pool *pool, const rp_try *t);

/* rp_try_stale marks the open try |t| stale: its resolver may take
   its next probation query. */
void rp_try_stale(rp_pool *pool, rp_try *t, rp_tstamp now);

/* rp_try_judge judges the open try |t| lost at |now|: a try sent after
   it to the same resolver got a reply (|overtaken| 1), or an answer
   came for it in another case than its 0x20 name (|overtaken| 0: no
   loss is counted, the resolver answered). It stays open until
   per_attempt (a late answer still counts), no longer holds a probation
   slot, and its query is sent again when nothing else of it is out.
   Returns 0 or a fatal error. */
int rp_try_judge(rp_pool *pool, rp_try *t, int overtaken, rp_tstamp now);

/* rp_try_late takes back what the judgement of |t|, an open try of |r|
   judged lost (judged_drop), counted: its answer came at |now|, |lat|
   after its send; the resolver reorders (settings.late_window). */
void rp_try_late(rp_pool *pool, rp_res *r, const rp_try *t, rp_duration lat,
                 rp_tstamp now);

/* rp_try_judge_overtaken judges lost the open datagram tries of |r| that a
   reply to a later try overtook, once |r|'s current mean latency + 4
   deviations (or its latest late answer, try_judge_after) passed since
   their send. The tries are in send order and
   the time is the same for all, so the scan stops at the first that is
   not due. (Each try's own judge_at, from the latency when it was sent,
   is checked once by its timer; it is no order for the scan: a try sent
   before any latency was known has none, and one at the head of the
   list kept every later loss of its resolver unjudged until per_attempt
   expired: 2 s in which a resolver losing 10 % showed 1 %.) */
int rp_try_judge_overtaken(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_try_expired judges an open try that reached per_attempt. */
int rp_try_expired(rp_pool *pool, rp_query *q, rp_try *t, rp_tstamp now);

/* rp_try_check_judge looks at the open try |t| at its judge time (once,
   at |now|): a late answer of its resolver since its send holds the
   judgement back to then; else, when a later try to its resolver got a
   reply, it is judged lost (rp_try_judge). Returns 1 when judged, 0 when
   not (or not due), or a fatal error. */
int rp_try_check_judge(rp_pool *pool, rp_try *t, rp_tstamp now);

#endif /* RP_CORE_TRY_H */
