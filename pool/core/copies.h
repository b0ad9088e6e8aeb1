/*
 * copies.h: copy control (prefix rp_copies_): how many copies a query
 * gets, judged by what the copies' answers carried, and the budget on
 * extra sends (copies and hedges together).
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5, "Copies")
 * - A copy pays only when its answer carries what the first did not. A
 *   later answer to a query is compared, after its ID, with the answers
 *   already delivered for that query (a 64-bit FNV-1a hash of each, at
 *   most RP_COPIES_SEEN per query): the same bytes carried nothing (a
 *   plain resolver answers a copy with the same record; the answer is not
 *   passed on either), other bytes carried data (a tunnel server answers
 *   each copy with other queued packets). Only queries that had a copy
 *   judge the copies.
 * - The level (copies per query, 0 .. duplicate - 1) rises by copy_step
 *   after copy_window judgements of which most carried data, and falls by
 *   copy_step once half or more repeated. At level 0, copy_probe_queries
 *   queries get a copy every copy_probe_interval, so a tunnel that starts
 *   to carry data is found again.
 * - Budget: copies and hedges together may be at most extra_budget x the
 *   first sends of the last extra_window (two windows, the older one
 *   weighed by how much of it still overlaps), so no pattern of answers
 *   makes the pool multiply the resolvers' load without gain. A copy or
 *   hedge over the budget is not sent (counted).
 * - Left out: judging a copy by its answer's size (the earlier rule: an
 *   answer of the same size as the largest recent one counted as "full",
 *   so over plain resolvers every copy looked full and copies never
 *   stopped).
 */
#ifndef RP_CORE_COPIES_H
#define RP_CORE_COPIES_H

#include "respool.h"

/* RP_COPIES_SEEN is how many delivered answers of one query are kept
   (as hashes) to judge later ones. */
#define RP_COPIES_SEEN 4

typedef struct rp_copies {
  /* level is the copies per query, 0 .. duplicate - 1. */
  double level;
  /* credit carries the fraction of |level| between queries. */
  double credit;
  /* data and repeat count the judgements since the last change. */
  uint32_t data;
  uint32_t repeat;
  /* probe_at is the start of the last probe burst; probe_left the copies
     left in it. */
  rp_tstamp probe_at;
  uint32_t probe_left;
  /* Budget: first and extra sends in the window numbered |epoch|
     (now / extra_window) and in the one before. */
  uint64_t epoch;
  double firsts_cur, firsts_prev;
  double extras_cur, extras_prev;
} rp_copies;

/* rp_copies_init starts |c| for |set| at |now|: full level. */
void rp_copies_init(rp_copies *c, const rp_settings *set, rp_tstamp now);

/* rp_copies_rescale follows a change of the most copies per query from
   |old_max| to |new_max| (the kind sensed): a level at the old top or
   above the new one goes to the new top. */
void rp_copies_rescale(rp_copies *c, uint32_t old_max, uint32_t new_max);

/* rp_copies_plan returns how many copies a new query gets at |now|. */
uint32_t rp_copies_plan(rp_copies *c, const rp_settings *set, rp_tstamp now);

/* rp_copies_judge records one judgement of a query that had a copy:
   |carried| 1 when a later answer carried other bytes than the ones
   delivered before, 0 when it repeated one. */
void rp_copies_judge(rp_copies *c, const rp_settings *set, int carried);

/* rp_copies_on_send counts a send at |now|: |extra| 1 for a copy or a
   hedge, 0 for a first send. */
void rp_copies_on_send(rp_copies *c, const rp_settings *set, int extra,
                       rp_tstamp now);

/* rp_copies_may_extra returns 1 if one more copy or hedge fits in the
   budget at |now|. */
int rp_copies_may_extra(rp_copies *c, const rp_settings *set, rp_tstamp now);

/* rp_copies_hash returns the hash by which two answers to one query are
   compared: every byte after the ID. */
uint64_t rp_copies_hash(const uint8_t *answer, size_t len);

#endif /* RP_CORE_COPIES_H */
