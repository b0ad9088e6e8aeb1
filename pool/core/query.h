/*
 * query.h: client queries (prefix rp_query_): a query's life in its
 * slot of the table, from its placement on a resolver to its answer or
 * failure, its timer (the next of its events) and its end. It owns
 * rp_query's state of delivery (answered, nseen, seen, linger), its
 * timer and the pool's live list, free list, nlinger and ninflight
 * (rp_pool_submit takes a slot through rp_query_start); the tries of a
 * query are try.h's, its copies fanout.h's, its wait wait.h's.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5; docs/pool-behaviour.md has
 * each rule with its setting and its test)
 * - Every client query gets a slot of the preallocated table and one
 *   timer in the pool's timer heap, at its next event (query_next): a
 *   copy due, a hedge due, a try's judge time or per_attempt, a stale
 *   mark, the end of a wait, the deadline. Nothing on this path
 *   allocates; a freed slot goes to the front of the free list (last
 *   freed, first reused: its memory is still in the cache).
 * - Placement (rp_query_place): the best resolver with capacity
 *   (select.h), else one past its cap, else the query waits for
 *   capacity (wait.h) or is spilled to a resolver out of the band, and
 *   only then failed with SERVFAIL.
 * - Every answer is delivered, later ones with RP_DELIVER_EXTRA: tunnel
 *   answers carry data; a later answer that repeats the bytes of one
 *   already delivered is not passed on (copies.h). A query ends when it
 *   was answered (or failed) and no try is open, or at its deadline.
 * - A slow try is hedged to another resolver; when none has room, the
 *   slow try's own resolver is nudged (a dropper that took a burst), or
 *   the hedge is tried again later (query_hedge_later).
 * - Left out: no caching, no rewriting of questions, no merging.
 */
#ifndef RP_CORE_QUERY_H
#define RP_CORE_QUERY_H

#include "core.h"

/* rp_query_live returns the number of open tries of |q| not judged
   lost. */
unsigned rp_query_live(const rp_query *q);

/* rp_query_linger_sync updates |q|'s linger flag and pool->nlinger after its
   tries or its answer changed. */
void rp_query_linger_sync(rp_pool *pool, rp_query *q);

/* rp_query_deliver_judged delivers an answer of |q|, judging a later one by
   what it carries (copies.h): one that repeats the bytes of an answer
   already delivered is not passed on (and judges the query's copies as
   carrying nothing), one with other bytes is passed on with
   RP_DELIVER_EXTRA. */
int rp_query_deliver_judged(rp_pool *pool, rp_query *q, const uint8_t *data,
                            size_t len);

/* rp_query_fail_bytes answers |len| bytes of a client query with |rcode|. */
int rp_query_fail_bytes(rp_pool *pool, const rp_client *client,
                        const uint8_t *query, size_t len, uint8_t rcode);

/* rp_query_fail fails |q| with SERVFAIL (if not answered yet). */
int rp_query_fail(rp_pool *pool, rp_query *q);

/* rp_query_free ends |q|: its open tries are dropped unjudged. */
void rp_query_free(rp_pool *pool, rp_query *q, rp_tstamp now);

void rp_query_schedule(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_query_finish frees |q| if it is done, else reschedules it. */
void rp_query_finish(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_query_spill sends |q|, which no resolver of the band can take,
   to the cheapest one out of the band with room (rp_select_spill), as a
   query would fail or wait on otherwise. Returns 1 when sent, 0 when
   none has room, or a fatal error. */
int rp_query_spill(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_query_place sends |q| to the best resolver with capacity; when
   none has any it sends past a cap, waits or fails. Returns 0 or a fatal
   error. */
int rp_query_place(rp_pool *pool, rp_query *q, rp_try_kind kind, rp_tstamp now);

/* rp_query_service runs |q|'s due events at |now|. */
int rp_query_service(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_query_table_init links every slot of the query table to its bytes
   and puts it on the free list (rp_pool_new). */
void rp_query_table_init(rp_pool *pool);

/* rp_query_start takes a free slot (the caller checked there is one) for
   the client query |query| (|len| bytes, at most max_query_len, copied)
   of |client|, with the client's ID |client_id| and its |question|
   (copied), submitted at |now|, and returns it. Its copies are set by
   rp_fanout_plan. */
rp_query *rp_query_start(rp_pool *pool, const uint8_t *query, size_t len,
                         const rp_client *client, uint16_t client_id,
                         const rp_dns_question *question, rp_tstamp now);

#endif /* RP_CORE_QUERY_H */
