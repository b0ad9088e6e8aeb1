/*
 * fanout.h: the pool side of copies (prefix rp_fanout_): how many of
 * the copies copies.h plans a query keeps once its first resolver is
 * known, when they go and to which resolvers. It owns rp_query's
 * copies, copy_at, copy_stack and had_copy, and reads the copy bound's
 * ramp (rp_pool.ramp_from).
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5, "Copies")
 * - The copies go copy_delay_rtt x the first resolver's fastest round
 *   trip after the first send (the cheapest unlimited resolver's while
 *   its own is unknown), or with it when that is under copy_min_delay: a
 *   copy pays when the first send's answer may be lost, not when it is
 *   on its way.
 * - Bound (fanout_fit): with copy_inflight_rtt 0, no copies while more
 *   than copy_max_inflight client queries are in flight, and the same
 *   over a resolver no slower than copy_inflight_rtt; over a slower one
 *   the bound is on answers in flight, 2 x copy_max_inflight per
 *   copy_inflight_rtt of its fastest round trip, counting each query
 *   with its copies, and the copies may share a resolver. The bound
 *   ramps up over copy_ramp from the first client query (or the first
 *   after a pause). Queries that linger (only lost tries open) are not
 *   counted.
 * - Each copy must also fit copies.h's budget on extra sends; one that
 *   does not is skipped (counted), as is one with no target.
 */
#ifndef RP_CORE_FANOUT_H
#define RP_CORE_FANOUT_H

#include "core.h"

/* rp_fanout_inflight returns the client queries in flight that the copy
   bound counts: those that do not linger. */
size_t rp_fanout_inflight(const rp_pool *pool);

/* rp_fanout_arm sets when |q|'s copies go after its first send to |r|;
   copies due at once (copy_delay_rtt 0) go now, not at the runtime's next
   timer (a millisecond: after a fast resolver's answer). Returns 0 or a
   fatal error. */
int rp_fanout_arm(rp_pool *pool, rp_query *q, const rp_res *r, rp_tstamp now);

/* rp_fanout_send sends |q|'s copies. */
int rp_fanout_send(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_fanout_ramp notes a client query at |now|: the copy bound's ramp
   (copy_ramp) starts again after a pause of copy_ramp or more. */
void rp_fanout_ramp(rp_pool *pool, rp_tstamp now);

/* rp_fanout_plan sets how many copies the new query |q| gets at |now|
   (copies.h), none while the fixed bound is passed. */
void rp_fanout_plan(rp_pool *pool, rp_query *q, rp_tstamp now);

#endif /* RP_CORE_FANOUT_H */
