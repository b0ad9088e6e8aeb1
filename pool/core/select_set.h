/*
 * select_set.h: the sets of resolver selection (prefix rp_select_):
 * which set each up resolver is in (band, out, busy, fresh, token wait,
 * none), the heaps that order them and the keys they are ordered by
 * (cost, loss, the strategies' keys, the weighted strategy's Fenwick
 * tree). It owns rp_res.where, the e_* heap entries and their keys
 * (cost, strat_key, pastcap_at, fw_weight) and the pool's heaps and
 * Fenwick tree; select.c chooses from them, the other modules move a
 * resolver only through rp_select_place, _unplace, _refresh and
 * _probation_sync.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5, "Choice")
 * - cost = fastest latency of the window / max(1 - loss, SELECT_MIN_OK):
 *   the expected time to a good answer when lost tries are tried again.
 *   Queries in flight do not count.
 * - The equal-cost band: cost <= band_ratio x cheapest + band_slack and
 *   loss lower bound (Wilson) <= lowest loss + band_loss. A resolver
 *   that replied but has no latency yet (it only refused) is in the band.
 *   When the cheapest is out on loss, the cost is measured from the
 *   surest one's (the loss heap's top) when that is higher, so the band
 *   is never empty while one that replied is up; a query that finds it
 *   empty moves the surest back in first when it qualifies.
 * - Data structures, so that a query costs O(log n) amortised at 10 000
 *   resolvers: min-heaps for the cheapest cost and the lowest loss (the
 *   band's thresholds are read at their tops), an LRU heap (by last
 *   send) of the band's members, another of the left-out ones and one
 *   of those that never replied (fresh), the pool's timer heap for
 *   resolvers waiting for a token, and a heap of those by when they may
 *   next get a send past the cap. Membership is
 *   checked lazily: a band member that no longer qualifies (the
 *   thresholds moved) is moved out when it comes to the top; one without
 *   a token moves to the token wait; a probation resolver with its one
 *   query moves to BUSY until the query closes. Each move is paid by an
 *   earlier insertion, so a selection is amortised O(log n).
 * - The weighted strategy's weights are kept in a Fenwick tree over the
 *   slots (score + SELECT_SCORE_OFFSET, 0 when down or removed), so a
 *   weight changes and a weight is found in O(log n).
 */
#ifndef RP_CORE_SELECT_SET_H
#define RP_CORE_SELECT_SET_H

#include "core.h"

/* rp_select_place puts an up resolver in the set it belongs in (the
   heaps have room: rp_pool_add_resolver reserved it). */
void rp_select_place(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_select_probation_sync moves a probation resolver in RP_WHERE_BUSY
   or RP_WHERE_UNPROVEN, or one in RP_WHERE_FRESH that replied, to the set
   it belongs in now, after a try of it closed or stopped holding the
   slot, a reply or a loss. */
void rp_select_probation_sync(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_select_lru_heap returns the LRU heap |r| is in (band, out, busy or
   fresh), or NULL. */
rp_pq *rp_select_lru_heap(rp_pool *pool, const rp_res *r);

/* rp_select_unplace takes |r| out of its set (band, out, token). */
void rp_select_unplace(rp_pool *pool, rp_res *r);

/* rp_select_set_down takes |r| out of every set and marks it down
   (RP_WHERE_DOWN): it is chosen only for down copies and probes. */
void rp_select_set_down(rp_pool *pool, rp_res *r);

/* rp_select_refresh recomputes |r|'s cost and keys after its stats
   changed, and moves it between band and out. */
void rp_select_refresh(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_select_has_open returns 1 if |q| has an open try at |slot|. */
int rp_select_has_open(const rp_query *q, uint32_t slot);

/* rp_select_fw_set sets the weighted strategy's weight of |r|. */
void rp_select_fw_set(rp_pool *pool, rp_res *r, uint64_t weight);

/* rp_select_fw_resize builds in |nfw| (|ncap| + 1 zeroed counters) the
   Fenwick tree of the weights of the resolvers of |nres| (|ncap| slots,
   the array replacing pool->res, its first pool->res_cap the old ones),
   frees the old tree and takes |nfw| in its place (res.c, growing the
   resolver array). */
void rp_select_fw_resize(rp_pool *pool, uint64_t *nfw, rp_res *const *nres,
                         size_t ncap);

/* rp_select_used moves |r| to the back of the LRU orders (its set's
   heap, the strategy heap) after a send at |now|. */
void rp_select_used(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_select_past_cap_used moves |r|, in the token wait, to its next
   time for a send past its cap after one (its rate limit counted the
   send). */
void rp_select_past_cap_used(rp_pool *pool, rp_res *r);

/* Heap orders. */
int rp_select_less_lru(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_cost(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_loss(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_unlim(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_strat(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_pastcap(const rp_pq_entry *a, const rp_pq_entry *b);

/* The helpers below are shared with select.c (the choice), which moves
   a resolver between the sets while it looks at them. */

/* rp_select_push pushes |pe| into |pq|; room was reserved at add. */
void rp_select_push(rp_pq *pq, rp_pq_entry *pe);

/* rp_select_loss_ok returns 1 if |r|'s loss (its lower bound) is within
   band_loss of the lowest. */
int rp_select_loss_ok(const rp_pool *pool, const rp_res *r);

/* rp_select_qualifies returns 1 if |r| is in the equal-cost band now. */
int rp_select_qualifies(const rp_pool *pool, const rp_res *r);

/* rp_select_surest_back moves the surest resolver (the loss heap's top)
   from the left-out set into the band when it qualifies now. Returns 1
   when moved. */
int rp_select_surest_back(rp_pool *pool);

/* rp_select_to_token moves |r| (in no set) to the token wait at |now|. */
void rp_select_to_token(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_select_may_overflow returns 1 if the probation resolver |r| may
   take queries past its one in flight when no other resolver can. */
int rp_select_may_overflow(const rp_pool *pool, const rp_res *r);

#endif /* RP_CORE_SELECT_SET_H */
