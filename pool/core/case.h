/*
 * case.h: DNS 0x20 case randomisation of the question name (prefix
 * rp_case_), settings.case_randomize.
 *
 * IMPLEMENTATION NOTES
 * - The model (draft-vixie-dnsext-dns0x20-00; Unbound's use-caps-for-id,
 *   RFC 4343 for the case rules): a resolver copies the question of a
 *   query into its answer as it got it, case included, while the names
 *   are compared without regard to case. Each datagram try of a query
 *   goes out with the 0x20 bit of every ASCII letter of its question
 *   name flipped at random, and only an answer that repeats the flips
 *   matches it: a blind forger must guess one bit per letter on top of
 *   the 16-bit ID and the source port. The client gets its own bytes
 *   back (its question is written over the answer's), so a client that
 *   does 0x20 itself still sees its own case.
 * - The pattern: a try keeps a 64-bit seed drawn from callbacks.rand (8
 *   bytes in rp_try), not the name it sent: the check and the restore
 *   recompute it. The name is handled 8 bytes at a time (SWAR: a mask of
 *   its letters, computed with a few additions, no branch per byte):
 *   byte j of the k-th 8 bytes flips its case when it is a letter and bit
 *   5 of byte j of the k-th splitmix64 output of the seed is set. Every
 *   letter gets its own random bit; the seed bounds the entropy of a try
 *   at min(letters, 64) bits. Sending flips the client's bytes in place
 *   and writes them back after the send; checking compares the answer's
 *   name with the expected one word by word. Nothing is allocated. A
 *   byte-by-byte loop with a branch per letter cost 312
 *   instructions a send and 304 an answer for "b123.t.example"
 *   (callgrind, bench_core); this costs 160 and 144.
 * - The client gets its own bytes back: the answer's question name, and
 *   every later copy of it in the same case (an owner name written out in
 *   full by a resolver that does not compress, as fakeres does), get the
 *   client's case. Without the second part the answers to two sends of
 *   one query differed in those bytes and the copies' judge (copies.h)
 *   took a plain resolver's repeats for data: 2 985 copies for 3 000
 *   queries to fakeres --answer, against 24 with 0x20 off.
 * - Letters are found over the whole wire name, length bytes included:
 *   a length byte is 0..63, never an ASCII letter, so no label walk is
 *   needed.
 * - Not randomised, sent as the client wrote them: a question of type
 *   PTR (Unbound does not check PTR either: middleboxes that rewrite
 *   reverse names, and the letters of in-addr.arpa are few and fixed), a
 *   name with no letter, a name that is not in wire form right after the
 *   header (a compression pointer there is no real query's), and sends
 *   over a stream (TCP, DoT, DoH: a blind forger would need the
 *   connection's sequence numbers or its keys, so 0x20 adds nothing).
 * - A resolver that does not keep the case (it answers the right
 *   question in another case: a forwarder that lower-cases names, a
 *   cache that answers in the case it first saw) must not lose every
 *   answer. Each resolver has a mode (rp_case_res): strict, its answers'
 *   case is checked; or fallen back, it still gets 0x20 names but an
 *   answer of the right name in any case is taken. An answer that
 *   repeats a name with both cases in it is a proof that the resolver
 *   keeps the case, when it has at least RP_CASE_PROOF_LETTERS (8)
 *   letters: no lower-casing or upper-casing resolver makes it, one that
 *   answers in a stored case by a chance of 2^-letters (1/256 at most).
 *   A proof puts a fallen-back resolver back to strict. A strict one
 *   falls back after case_fallback (3) tries answered in another case
 *   with no proof in between, and none in the last case_proof_life
 *   (1 min).
 * - Why this resists a forger. An off-path forger can make answers in
 *   another case only by hitting the ID (and port) of an open try, and
 *   can never make a proof. Against a resolver that answers, every
 *   genuine answer is a proof: the misses start again from 0, and for
 *   case_proof_life after it no count of forged misses makes the
 *   resolver fall back. A try answered in another case is not closed:
 *   its query goes out again at once (a new ID, a new case) but the try
 *   stays open until per_attempt, so the genuine answer that follows a
 *   forgery is still taken (and is a proof); a forger cannot cancel
 *   tries to keep proofs from coming. Each miss sends its query once more
 *   (at most RP_CORE_MAX_TRIES tries a query), as a forged REFUSED with
 *   the right ID already does. What is left: a resolver that
 *   sends no genuine answer for case_proof_life (dead, or kept from
 *   answering by a flood) can be made to fall back by case_fallback
 *   forged answers that each hit an open try's ID; its answers are then
 *   checked by ID and question alone, as without 0x20, until it answers
 *   once in the case sent. 3 is small because a resolver that folds the
 *   case costs each of its first misses a round trip more (the query is
 *   sent again at once), and the count protects nothing by itself: the
 *   proof rule does.
 * - Left out: Unbound's fallback per query (on a mismatch it asks every
 *   server again without 0x20 and takes the answer only if they agree):
 *   the servers here are different recursive resolvers whose answers
 *   may differ, and a query asked again without 0x20 on a forgery would
 *   cost the forger one more 16-bit guess, not 2^letters. A list of
 *   names exempt from 0x20 (Unbound's caps-exempt).
 */
#ifndef RP_CORE_CASE_H
#define RP_CORE_CASE_H

#include "dns.h"
#include "respool.h"

/* RP_CASE_PROOF_LETTERS is the fewest letters of a name whose repeated
   case is a proof (8): a resolver that answers in a case of its own (one
   it stored) repeats a random one by a chance of 2^-letters, at most
   1/256 then. */
#define RP_CASE_PROOF_LETTERS 8

/* Bits of rp_case_apply's result and of rp_try.case_flags. */
/* RP_CASE_PROOF: the name sent has upper-case and lower-case letters,
   at least RP_CASE_PROOF_LETTERS of them: an answer that repeats it is a
   proof that the resolver keeps the case. */
#define RP_CASE_PROOF 0x1u
/* RP_CASE_ON: the try was sent with a 0x20 name. */
#define RP_CASE_ON 0x2u
/* RP_CASE_MISSED: an answer in another case came for the try. */
#define RP_CASE_MISSED 0x4u

/* rp_case_verdict is how an answer's question compares with a try's. */
typedef enum rp_case_verdict {
  /* RP_CASE_MATCH: the same name, type and class, case included. */
  RP_CASE_MATCH = 0,
  /* RP_CASE_FOLDED: the same but for the case of some letter. */
  RP_CASE_FOLDED,
  /* RP_CASE_OTHER: another question. */
  RP_CASE_OTHER
} rp_case_verdict;

/* rp_case_mode is a resolver's 0x20 mode. */
typedef enum rp_case_mode {
  /* RP_CASE_STRICT: an answer in another case does not match. */
  RP_CASE_STRICT = 0,
  /* RP_CASE_FALLBACK: the case of its answers is not checked. */
  RP_CASE_FALLBACK
} rp_case_mode;

/* rp_case_res is one resolver's 0x20 state. */
typedef struct rp_case_res {
  rp_case_mode mode;
  /* misses counts tries answered in another case since the last proof
     (or since the resolver went back to strict). */
  uint32_t misses;
  /* proven_at is when its last proof came, RP_TSTAMP_UNSET before any. */
  rp_tstamp proven_at;
  /* mismatches counts its answers in another case, all time. */
  uint64_t mismatches;
} rp_case_res;

/* rp_case_eligible returns 1 if the question |q| of the query |msg|
   (|len| bytes) may be sent with a 0x20 name: its name is in wire form
   right after the header, it has a letter, and it is not of type PTR.
   Else 0. */
int rp_case_eligible(const uint8_t *msg, size_t len, const rp_dns_question *q);

/* rp_case_apply flips the case of the letters of the |len| wire bytes of
   the name at |wire| by the pattern of |seed|. Applied twice with the
   same seed it gives the bytes back. Returns RP_CASE_PROOF when the
   result may be a proof, else 0. */
uint32_t rp_case_apply(uint8_t *wire, size_t len, uint64_t seed);

/* rp_case_check compares |got| with |base| (the question as the client
   wrote it) sent with the pattern of |seed|. */
rp_case_verdict rp_case_check(const rp_dns_question *base, uint64_t seed,
                              const rp_dns_question *got);

/* rp_case_answer compares the question |got| of an answer (|answer|,
   |len| bytes) with |base|, the question as the client wrote it, sent
   with the pattern of |seed| when |flags| has RP_CASE_ON and as it is
   otherwise (then only RP_CASE_MATCH or RP_CASE_OTHER). The answer to a
   0x20 send must hold its question name in wire form after its header,
   where rp_case_restore writes the client's: else RP_CASE_OTHER. */
rp_case_verdict rp_case_answer(const rp_dns_question *base, uint32_t flags,
                               uint64_t seed, const rp_dns_question *got,
                               const uint8_t *answer, size_t len);

/* rp_case_restore copies |len| bytes of |answer| to |out| (room for
   |len|) with |name|, the client's, written over its question name and
   over every later copy of that name in the case the answer's question
   has (an owner name a resolver wrote out in full rather than as a
   pointer to the question); the answer was taken by rp_case_answer. */
void rp_case_restore(uint8_t *out, const uint8_t *answer, size_t len,
                     const rp_dns_name *name);

/* rp_case_name_in_place returns 1 if the message |msg| (|len| bytes)
   holds |name| in wire form right after the header (where the question
   of a query or answer starts), else 0. */
int rp_case_name_in_place(const uint8_t *msg, size_t len,
                          const rp_dns_name *name);

/* rp_case_res_init starts |c| strict, with no proof. */
void rp_case_res_init(rp_case_res *c);

/* rp_case_res_match records an answer that repeated the case sent;
   |flags| are the case bits of the name sent (a proof needs
   RP_CASE_PROOF). Returns 1 when this proof put a fallen-back resolver
   back to strict, else 0. */
int rp_case_res_match(rp_case_res *c, uint32_t flags, rp_tstamp now);

/* rp_case_res_mismatch records an answer in another case; |first| is 1
   for the first of its try (only those count toward the fallback).
   Returns 1 when the resolver falls back now (settings.case_fallback
   misses since the last proof, none in settings.case_proof_life), else
   0. */
int rp_case_res_mismatch(rp_case_res *c, int first, const rp_settings *set,
                         rp_tstamp now);

#endif /* RP_CORE_CASE_H */
