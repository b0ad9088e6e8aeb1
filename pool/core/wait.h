/*
 * wait.h: queries waiting for capacity (prefix rp_wait_): the heap they
 * wait in, placing them when a resolver has room (drain), and the end
 * of a wait. It owns the pool's waits heap and rp_query's e_wait,
 * wait_until, wait_end and waited.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5)
 * - A query that finds no resolver with capacity waits when
 *   wait_for_token is set, or while a resolver in probation that lost
 *   nothing is up (it will soon take it), up to token_wait after it
 *   first waited and never past its deadline. At the end of its wait it
 *   is spilled to a resolver out of the band, waits one more token_wait
 *   while such a probation resolver is up, or fails.
 * - Order: the longest question name first (in a tunnel a long name
 *   carries data and a short one is an empty poll: a poll that waits
 *   costs the tunnel only window, data that waits a retransmission;
 *   measured with the real dnstt through one 30 q/s refusing resolver,
 *   58-99 kbps in FIFO order, 92-96 like this), then the one that
 *   waited longest.
 * - Drain runs after every event that may free capacity (an answer, an
 *   error, a timer, a new resolver, a new query). A past-cap candidate
 *   whose time came but that could not take the query is moved on, so
 *   that rp_pool_get_expiry never stays in the past.
 */
#ifndef RP_CORE_WAIT_H
#define RP_CORE_WAIT_H

#include "core.h"

/* rp_wait_less orders waiting queries: the longest question name first
   (in a tunnel a long name carries data and a short one is an empty
   poll: a poll that waits costs the tunnel only window, data that waits
   a retransmission; measured with the real dnstt through one 30 q/s
   refusing resolver, 58-99 kbps in FIFO order, 92-96 like this), then
   the one that waited longest. */
int rp_wait_less(const rp_pq_entry *a, const rp_pq_entry *b);

/* rp_wait_drain places waiting queries while some resolver has capacity. */
int rp_wait_drain(rp_pool *pool, rp_tstamp now);

/* rp_wait_hold puts |q|, which found no resolver with capacity at
   |now|, in the wait when it may wait (wait_for_token, or a probation
   resolver that lost nothing is up; within token_wait of its first wait
   and its deadline; tries left). Returns 1 when it waits, 0 when the
   caller must spill or fail it. */
int rp_wait_hold(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_wait_expired ends |q|'s wait when its time came at |now|: it is
   spilled to a resolver out of the band, waits one more token_wait
   while a probation resolver that lost nothing is up, or fails. Returns
   0 or a fatal error. */
int rp_wait_expired(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_wait_cancel takes |q| out of the wait, if it waits (answered, or
   its slot freed). */
void rp_wait_cancel(rp_pool *pool, rp_query *q);

#endif /* RP_CORE_WAIT_H */
