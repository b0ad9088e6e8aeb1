/*
 * res.h: resolvers (prefix rp_res_): their slots (add, remove, the
 * array and its growth), what a reply or a failure of a try does to
 * them (health.h, ratelim.h through their calls, probation, down after
 * down_after failures in a row) and their timer. It owns the pool's
 * resolver array (res, res_cap, res_hint, nres), nprob_up and rp_res's
 * counters, probation and prob_* fields; a down resolver's state is
 * down.h's, its set select_set.h's.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5)
 * - A resolver is one allocation (rp_res) in a slot of an array that
 *   doubles as slots are needed, up to max_resolvers; the heaps and the
 *   timer heap reserve room for it at add, so nothing on the query path
 *   allocates. A removed resolver leaves at once: its open tries are
 *   closed and their queries placed elsewhere.
 * - Probation: a new resolver takes one query at a time until it has
 *   probation_answers replies. It counts in nprob_up while up, in
 *   probation and without a loss, failure or refusal: while one does, a
 *   query that finds no capacity waits for it instead of failing.
 * - A failure sent before the resolver last came back up (up_at) is not
 *   counted; a drop feeds the rate limit's detection (ratelim.h), which
 *   may count it as overflow rather than loss; a resolver that replied
 *   to a later try, or answered after the send, is capped, never taken
 *   down by it.
 * - Its timer is its token (RP_WHERE_TOKEN) or its down copies and
 *   probes (down.h).
 */
#ifndef RP_CORE_RES_H
#define RP_CORE_RES_H

#include "core.h"

/* rp_res_prob_sync counts |r| in pool->nprob_up while it is up, in
   probation and lost nothing yet: one that will soon take queries. */
void rp_res_prob_sync(rp_pool *pool, rp_res *r);

/* rp_res_reply records a reply (answer or refusal) from |r| to a try
   sent at |sent|. */
void rp_res_reply(rp_pool *pool, rp_res *r, rp_tstamp sent, int score_delta,
                  rp_tstamp now);

/* rp_res_failed records a timeout or network error of a try of |r|
   sent at |sent|; |is_drop| is 1 for a try lost without an answer,
   |overtaken| 1 if a try sent after it to |r| got a reply. Returns the
   number of losses counted in its health. */
uint32_t rp_res_failed(rp_pool *pool, rp_res *r, rp_tstamp sent, int is_drop,
                       int overtaken, rp_tstamp now);

/* rp_res_timer runs the resolver timer of |r|. */
int rp_res_timer(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_res_add adds a resolver configured by |config| at |now| in the
   first free slot, and stores the slot in |*presolver_id|. Its tiebreak
   is one draw of callbacks.rand. Returns 0, RP_ERR_FULL (max_resolvers
   reached) or RP_ERR_NOMEM (nothing changed). */
int rp_res_add(rp_pool *pool, const rp_resolver_config *config,
               uint32_t *presolver_id, rp_tstamp now);

/* rp_res_remove removes |r| at |now| and frees it: it leaves every set
   first, its open tries are closed and their queries placed elsewhere.
   Returns 0 or a fatal error of a send (the removal is done). */
int rp_res_remove(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_res_ring_leave takes |r| out of the round robin ring (the cursor
   moves on when it points at |r|). */
void rp_res_ring_leave(rp_pool *pool, rp_res *r);

#endif /* RP_CORE_RES_H */
