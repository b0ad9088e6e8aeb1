/*
 * select.h: resolver selection. The functions are declared in core.h
 * (they work on the pool's internal structures); this header exists so
 * that the module has its .h/.c pair and its notes.
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

#endif /* RP_CORE_SELECT_H */
