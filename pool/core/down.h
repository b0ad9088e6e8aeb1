/*
 * down.h: down resolvers (prefix rp_down_): taking one down and back up,
 * the copies of live queries it gets and the probes it gets when idle.
 * It owns rp_res's down, up_at, down_node, the probe_* fields,
 * last_probe and last_down_copy, and the pool's down_wait list.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5)
 * - A resolver goes down after down_after timeouts or errors in a row
 *   (res.h) and comes back up at its first reply. Down, it is in no set
 *   and takes no query's only try.
 * - Once per down_copy_interval it gets a copy of a live query (one of
 *   the DOWN_SCAN newest, unanswered, with DOWN_ROOM tries left for its
 *   own hedges and resends, and no such copy yet); with none live, the
 *   copy waits for the next client query (down_wait, those that replied
 *   before first), and its timer sleeps: no wake-up a second for each of
 *   thousands of dead resolvers.
 * - When idle (no live query) it is probed every probe_interval: a
 *   query for probe_name, else a copy of the latest client query, whose
 *   answer goes to that client as an extra answer. One that never
 *   replied is probed when idle only while no resolver is up. One probe
 *   at a time; an unanswered probe is a loss after per_attempt.
 * - Back up, it starts with a clean loss record and no cap
 *   (rp_health_revive, rp_ratelim_revive): what it lost while down says
 *   nothing about it now.
 */
#ifndef RP_CORE_DOWN_H
#define RP_CORE_DOWN_H

#include "core.h"

/* rp_down_enter takes |r| down at |now|. */
void rp_down_enter(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_down_leave brings |r| back up at |now| (its first reply) when it
   is down: its loss record and cap are forgotten and it is placed in
   its set again. Returns 1 when it was down, 0 otherwise. */
int rp_down_leave(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_down_timer copies a live query to the down resolver |r| once per
   down_copy_interval, or probes it every probe_interval when idle. */
int rp_down_timer(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_down_copy_new sends a copy of the new query |q| to the first down
   resolver whose copy was due while no query could carry it; it leaves
   room in |q| for its own hedges and resends. */
int rp_down_copy_new(rp_pool *pool, rp_query *q, rp_tstamp now);

/* rp_down_note_query keeps the client query |query| (|len| bytes, at
   most max_query_len) of |client| as the one an idle probe copies. */
void rp_down_note_query(rp_pool *pool, const uint8_t *query, size_t len,
                        const rp_client *client);

/* rp_down_probe_answer handles the answer |answer| (|len| bytes, parsed
   in |msg|) to the open probe of |r| at |now|: a reply of |r| (it comes
   back up), and, when the probe copied a client query, an extra answer
   to that client. Returns RP_ANSWER_THEN_DONE when it was not taken (another
   question, or another case at a strict resolver: counted spoofed),
   RP_ANSWER_THEN_OVERTAKE when it was, or RP_ERR_CALLBACK_FAILURE. */
int rp_down_probe_answer(rp_pool *pool, rp_res *r, const rp_dns_brief *msg,
                         const uint8_t *answer, size_t len, rp_tstamp now);

/* rp_down_probe_lost closes the open probe of |r| as lost at |now| (a
   loss and a failure in its health). */
void rp_down_probe_lost(rp_pool *pool, rp_res *r, rp_tstamp now);

/* rp_down_forget drops the probe and down-copy state of |r|, which is
   being removed. */
void rp_down_forget(rp_pool *pool, rp_res *r);

#endif /* RP_CORE_DOWN_H */
