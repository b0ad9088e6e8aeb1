/*
 * select.h: resolver selection (prefix rp_select_): which resolver takes
 * a query's send, hedge, copy or retry, and the sets (band, out, fresh,
 * token wait) each up resolver is kept in. It works on the pool's
 * internal structures (core.h); pool.c calls it.
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
 * - A resolver that never replied (answer or refusal) may be dead: it is
 *   in the fresh heap (LRU), not the band. It gets a query's only try
 *   only when no resolver that replied has room (the band, then a
 *   probation resolver past its limit): at start, when nothing replied,
 *   and when all are at their caps, as before. Otherwise it is explored
 *   by a retry riding along a client query placed on a resolver that
 *   replied (rp_select_left_out): at once, then retry_left_out after its
 *   last send, and one retry a query in all (the fresh and the left-out
 *   heap take turns). A dead one costs a datagram per retry_left_out;
 *   a live one answers, leaves the fresh heap and starts its probation
 *   as before. A hedge goes to one that never replied only while nothing
 *   has answered; later a hedge of a try at one waits for room (pool.c).
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
 * - A left-out resolver is re-checked on its own news (answer, loss) and
 *   when its retry is due (retry_left_out after its last send). Only one
 *   retry rides along with each client query, so the cost of retries is
 *   bounded by the query rate, not by the number of resolvers; with many
 *   left-out (or never replied) resolvers each is retried less often than
 *   every 2 s.
 * - Copies go to the unlimited resolvers within the equal-cost band of
 *   the cheapest unlimited one (at most SELECT_COPY_SPREAD looked at),
 *   least recently used first, so equal resolvers share the copies.
 * - Other strategies: roundrobin (a ring), weighted (a Fenwick tree of
 *   weights score + 11, sampled in O(log n)), lowest_latency and
 *   least_loss (a heap by MasterDnsVPN's score, ties by last send). They
 *   ignore caps and probation; refusals are still resent at once, and
 *   down resolvers are left out and probed as in auto.
 */
#ifndef RP_CORE_SELECT_H
#define RP_CORE_SELECT_H

#include "core.h"

/* rp_select_primary picks a resolver for a send of |q| with the pool's
   strategy, taking a token; RP_CORE_NONE when none has capacity. In
   auto: the band, then a probation resolver past its limit, then, when
   no resolver that replied has room, one that never replied. */
uint32_t rp_select_primary(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_select_hedge picks the target of a hedge of |q| whose slow try is
   at |first|; RP_CORE_NONE when none fits. */
uint32_t rp_select_hedge(rp_pool *pool, rp_query *q, uint32_t first,
                         rp_tstamp now);

/* rp_select_spill picks, for |q| that no resolver of the band can take
   (each at its cap or holding a try of it), the cheapest resolver out of
   the band with room, taking its token, else one that never replied and
   holds no query; RP_CORE_NONE when none has. */
uint32_t rp_select_spill(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_select_copy picks a copy target for |q| (uncapped, soonest and
   surest); RP_CORE_NONE when none. */
uint32_t rp_select_copy(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_select_left_out returns a resolver due for a retry riding along
   |q| (one placed already), or RP_CORE_NONE: a left-out one
   retry_left_out after its last send, or one that never replied (the
   fresh heap) at once and then retry_left_out after its last send; the
   two heaps take turns when both have one due. */
uint32_t rp_select_left_out(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_select_past_cap returns a resolver that may take a send past its
   cap now, or RP_CORE_NONE. */
uint32_t rp_select_past_cap(rp_pool *pool, rp_query *q, rp_tstamp now);

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

/* rp_select_refresh recomputes |r|'s cost and keys after its stats
   changed, and moves it between band and out. */
void rp_select_refresh(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_select_has_open returns 1 if |q| has an open try at |slot|. */
int rp_select_has_open(const rp_query *q, uint32_t slot);

/* rp_select_fw_set sets the weighted strategy's weight of |r|. */
void rp_select_fw_set(rp_pool *pool, rp_res *r, uint64_t weight);

/* Heap orders (select.c). */
int rp_select_less_lru(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_cost(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_loss(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_unlim(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_strat(const rp_pq_entry *a, const rp_pq_entry *b);
int rp_select_less_pastcap(const rp_pq_entry *a, const rp_pq_entry *b);

#endif /* RP_CORE_SELECT_H */
