/*
 * select.h: resolver selection, the choice (prefix rp_select_): which
 * resolver takes a query's send, hedge, copy or retry. It chooses from
 * the sets select_set.h keeps (band, out, busy, fresh, token wait, the
 * cost, loss, copy-target and strategy heaps) and works on the pool's
 * internal structures (core.h); the query and try modules call it.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5, "Choice")
 * - The first send goes to the least recently used member of the
 *   equal-cost band (select_set.h) with a token and no probation query
 *   in flight; when none can take it, to a probation resolver past its
 *   limit that replied before (the busy heap), and only then to one
 *   that never replied.
 * - A resolver that never replied (answer or refusal) may be dead: it is
 *   in the fresh heap (LRU), not the band. It gets a query's only try
 *   only when no resolver that replied has room (the band, then a
 *   probation resolver past its limit): at start, when nothing replied,
 *   and when all are at their caps, as before. Otherwise it is explored
 *   by a retry riding along a client query placed on a resolver that
 *   replied (rp_select_left_out): at once, then its retry gap after its
 *   last send, and one retry a query in all (the fresh and the left-out
 *   heap take turns). A dead one costs a datagram per retry gap;
 *   a live one answers, leaves the fresh heap and starts its probation
 *   as before. A hedge goes to one that never replied only while nothing
 *   has answered; later a hedge of a try at one waits for room (query.c).
 * - A left-out resolver is re-checked on its own news (answer, loss) and
 *   when its retry is due (its retry gap after its last send). Only one
 *   retry rides along with each client query, so the cost of retries is
 *   bounded by the query rate, not by the number of resolvers; with many
 *   left-out (or never replied) resolvers each is retried less often than
 *   every 2 s.
 * - The retry gap is retry_left_out (2 s) stretched by loss: x (1 +
 *   retry_loss_stretch x its loss share over loss_window), 2 s for one
 *   that loses nothing, about 6 s at 10 %, 42 s at most. A retry is a
 *   copy of a live query: a tunnel server gives it data of its own, and
 *   a lost one loses that data. One due by retry_left_out but not by its
 *   gap goes behind the others of its heap, its last send unchanged.
 * - Copies go to the unlimited resolvers within the equal-cost band of
 *   the cheapest unlimited one (at most SELECT_COPY_SPREAD looked at),
 *   least recently used first, so equal resolvers share the copies.
 * - Other strategies: roundrobin (a ring), weighted (a Fenwick tree of
 *   weights score + 11, sampled in O(log n) with one draw of
 *   callbacks.rand), lowest_latency and least_loss (a heap by
 *   MasterDnsVPN's score, ties by last send). They ignore caps and
 *   probation; refusals are still resent at once, and down resolvers are
 *   left out and probed as in auto.
 * - Left out: any draw for a tie-break in auto (the LRU order and the
 *   tiebreak drawn at add decide), so a choice costs no random bytes.
 */
#ifndef RP_CORE_SELECT_H
#define RP_CORE_SELECT_H

#include "core.h"
#include "select_set.h"

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
   |q| (one placed already), or RP_CORE_NONE: a left-out one its retry
   gap after its last send, or one that never replied (the fresh heap)
   at once and then its retry gap after its last send; the
   two heaps take turns when both have one due. */
uint32_t rp_select_left_out(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_select_past_cap returns a resolver that may take a send past its
   cap now, or RP_CORE_NONE. */
uint32_t rp_select_past_cap(rp_pool *pool, rp_query *q, rp_tstamp now);

#endif /* RP_CORE_SELECT_H */
