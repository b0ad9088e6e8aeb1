/*
 * answer.h: what a resolver's reply or error does to a try (prefix
 * rp_answer_): an answer delivered, a refusal, a network error, a
 * truncated answer asked again over the stream, a 0x20 case mismatch.
 * It owns no state of its own: it acts through try.h, query.h, res.h
 * and case.h.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5)
 * - Classification: a reply whose (resolver, ID) matches no try is
 *   spoofed; one that does not parse is malformed; one whose question
 *   differs (byte for byte: 0x20 case is checked) is spoofed; the try
 *   stays open in the last two cases (the real answer may follow). A try
 *   sent with a 0x20 name (case.h) matches only the case it was sent
 *   with; an answer that differs in case only, from a resolver that has
 *   not fallen back, sets the try aside as if lost (without a loss) and
 *   sends its query again; the client gets its own case back.
 * - Another opcode than the query's, or an unassigned rcode, is no
 *   answer: the try failed as on a network error. REFUSED and SERVFAIL
 *   (and HTTP 429 through rp_pool_on_error) are refusals; TC over UDP
 *   is asked again over the stream when the resolver allows it
 *   (tc_stream_tries), else delivered; anything else is an answer.
 * - An answer is a latency sample (rtt.h), a reply (health.h) and an
 *   answer for the rate limit (ratelim.h); a refusal is a reply but no
 *   sample, and fails probation.
 */
#ifndef RP_CORE_ANSWER_H
#define RP_CORE_ANSWER_H

#include "core.h"

/* What rp_pool_on_answer does once an answer was handled (the values of
   rp_answer_query and rp_down_probe_answer): nothing more, place the
   waiting queries, or first judge lost the answering resolver's tries
   that the answer overtook (rp_try_judge_overtaken). */
#define RP_ANSWER_THEN_DONE 0
#define RP_ANSWER_THEN_DRAIN 1
#define RP_ANSWER_THEN_OVERTAKE 2

/* rp_answer_refusal handles a refusal of the try |t| of |q| by |r|. */
int rp_answer_refusal(rp_pool *pool, rp_query *q, rp_try *t, rp_res *r,
                      rp_tstamp now);

/* rp_answer_neterr handles a network error of the try |t|. */
int rp_answer_neterr(rp_pool *pool, rp_query *q, rp_try *t, rp_res *r,
                     rp_tstamp now);

/* rp_answer_case judges an answer from |r| to a send with a 0x20 name
   whose case flags are |*pflags| (RP_CASE_MISSED is added on a miss):
   |verdict| is RP_CASE_MATCH or RP_CASE_FOLDED. Returns 1 when the
   answer is taken (its case repeated, or |r| has fallen back), 0 when it
   is dropped (counted spoofed). */
int rp_answer_case(rp_pool *pool, rp_res *r, uint8_t *pflags,
                   rp_case_verdict verdict, rp_tstamp now);

/* rp_answer_error applies |outcome| to one open try |t| at |r|. */
int rp_answer_error(rp_pool *pool, rp_res *r, rp_try *t, rp_outcome outcome,
                    rp_tstamp now);

/* rp_answer_query handles the answer |answer| (|len| bytes, parsed in
   |msg|, |flags| a mask of RP_ANSWER_STREAM) of |r| to the try |t| of |q| at
   |now|: its 0x20 case, then an answer rejected, a refusal, a truncated answer
   asked again over the stream, or an answer delivered. Returns
   RP_ANSWER_THEN_DONE (another question: counted spoofed), RP_ANSWER_THEN_DRAIN
   (another case: the try set aside), RP_ANSWER_THEN_OVERTAKE, or a fatal
   error. */
int rp_answer_query(rp_pool *pool, rp_res *r, rp_query *q, rp_try *t,
                    const rp_dns_brief *msg, const uint8_t *answer, size_t len,
                    uint32_t flags, rp_tstamp now);

/* rp_answer_error_all applies |outcome| to every open try at |r| (a
   connection of |r| failed) at |now|, in the order they were sent.
   Returns 0 or the first fatal error (the tries after it are left
   open). */
int rp_answer_error_all(rp_pool *pool, rp_res *r, rp_outcome outcome,
                        rp_tstamp now);

#endif /* RP_CORE_ANSWER_H */
