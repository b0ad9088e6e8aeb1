/*
 * case.c: DNS 0x20 case randomisation (see case.h).
 */
#include "case.h"

#include <string.h>

/* CASE_BIT is the bit that tells an ASCII letter's two cases apart. */
#define CASE_BIT 0x20u
/* CASE_ALPHABET is the number of ASCII letters of one case. */
#define CASE_ALPHABET 26u
/* CASE_WORD_BITS is how many pattern bits one splitmix64 output gives. */
#define CASE_WORD_BITS 64u
/* CASE_SM_* are splitmix64's increment and multipliers (Steele, Lea and
   Flood, "Fast splittable pseudorandom number generators", 2014): a
   bijection of the 64-bit state, so the first 64 bits of a pattern are
   as random as the seed. */
#define CASE_SM_GAMMA 0x9e3779b97f4a7c15ULL
#define CASE_SM_MUL1 0xbf58476d1ce4e5b9ULL
#define CASE_SM_MUL2 0x94d049bb133111ebULL
#define CASE_SM_SHIFT1 30
#define CASE_SM_SHIFT2 27
#define CASE_SM_SHIFT3 31

/* case_is_letter returns 1 for an ASCII letter of either case. */
static inline int case_is_letter(uint8_t c) {
  return (uint8_t)((c | CASE_BIT) - 'a') < CASE_ALPHABET;
}

/* case_bits is a pattern read one bit per letter. */
typedef struct case_bits {
  uint64_t state;
  uint64_t word;
  unsigned left;
} case_bits;

static inline void case_bits_init(case_bits *b, uint64_t seed) {
  *b = (case_bits){.state = seed, .word = 0, .left = 0};
}

/* case_bits_next returns the next flip: CASE_BIT or 0. */
static inline uint8_t case_bits_next(case_bits *b) {
  uint8_t flip;

  if (b->left == 0) {
    uint64_t z = (b->state += CASE_SM_GAMMA);

    z = (z ^ (z >> CASE_SM_SHIFT1)) * CASE_SM_MUL1;
    z = (z ^ (z >> CASE_SM_SHIFT2)) * CASE_SM_MUL2;
    b->word = z ^ (z >> CASE_SM_SHIFT3);
    b->left = CASE_WORD_BITS;
  }
  flip = (uint8_t)((b->word & 1u) * CASE_BIT);
  b->word >>= 1;
  --b->left;
  return flip;
}

int rp_case_name_in_place(const uint8_t *msg, size_t len,
                          const rp_dns_name *name) {
  return len >= RP_DNS_HEADER_LEN + (size_t)name->len &&
         memcmp(msg + RP_DNS_HEADER_LEN, name->wire, name->len) == 0;
}

int rp_case_eligible(const uint8_t *msg, size_t len, const rp_dns_question *q) {
  size_t i;

  if (q->qtype == RP_DNS_TYPE_PTR ||
      !rp_case_name_in_place(msg, len, &q->name)) {
    return 0;
  }
  for (i = 0; i < q->name.len; ++i) {
    if (case_is_letter(q->name.wire[i])) {
      return 1;
    }
  }
  return 0;
}

uint32_t rp_case_apply(uint8_t *wire, size_t len, uint64_t seed) {
  case_bits b;
  size_t i, letters = 0;
  int upper = 0, lower = 0;

  case_bits_init(&b, seed);
  for (i = 0; i < len; ++i) {
    uint8_t c = wire[i];

    if (!case_is_letter(c)) {
      continue;
    }
    c ^= case_bits_next(&b);
    wire[i] = c;
    ++letters;
    if (c & CASE_BIT) {
      lower = 1;
    } else {
      upper = 1;
    }
  }
  return upper && lower && letters >= RP_CASE_PROOF_LETTERS ? RP_CASE_PROOF : 0;
}

rp_case_verdict rp_case_check(const rp_dns_question *base, uint64_t seed,
                              const rp_dns_question *got) {
  case_bits b;
  size_t i;
  int folded = 0;

  if (base->qtype != got->qtype || base->qclass != got->qclass ||
      base->name.len != got->name.len) {
    return RP_CASE_OTHER;
  }
  case_bits_init(&b, seed);
  for (i = 0; i < base->name.len; ++i) {
    uint8_t want = base->name.wire[i], c = got->name.wire[i];

    if (!case_is_letter(want)) {
      if (c != want) {
        return RP_CASE_OTHER;
      }
      continue;
    }
    want ^= case_bits_next(&b);
    if (c == want) {
      continue;
    }
    if ((uint8_t)(c ^ CASE_BIT) != want) {
      return RP_CASE_OTHER;
    }
    folded = 1;
  }
  return folded ? RP_CASE_FOLDED : RP_CASE_MATCH;
}

rp_case_verdict rp_case_answer(const rp_dns_question *base, uint32_t flags,
                               uint64_t seed, const rp_dns_question *got,
                               const uint8_t *answer, size_t len) {
  if (!(flags & RP_CASE_ON)) {
    return rp_dns_question_equal(got, base) ? RP_CASE_MATCH : RP_CASE_OTHER;
  }
  if (!rp_case_name_in_place(answer, len, &got->name)) {
    return RP_CASE_OTHER;
  }
  return rp_case_check(base, seed, got);
}

void rp_case_restore(uint8_t *out, const uint8_t *answer, size_t len,
                     const rp_dns_name *name) {
  memcpy(out, answer, len);
  memcpy(out + RP_DNS_HEADER_LEN, name->wire, name->len);
}

void rp_case_res_init(rp_case_res *c) {
  *c = (rp_case_res){.mode = RP_CASE_STRICT,
                     .misses = 0,
                     .proven_at = RP_TSTAMP_UNSET,
                     .mismatches = 0};
}

int rp_case_res_match(rp_case_res *c, uint32_t flags, rp_tstamp now) {
  if (!(flags & RP_CASE_PROOF)) {
    return 0;
  }
  c->proven_at = now;
  c->misses = 0;
  if (c->mode == RP_CASE_FALLBACK) {
    c->mode = RP_CASE_STRICT;
    return 1;
  }
  return 0;
}

int rp_case_res_mismatch(rp_case_res *c, int first, const rp_settings *set,
                         rp_tstamp now) {
  ++c->mismatches;
  if (c->mode != RP_CASE_STRICT || !first) {
    return 0;
  }
  ++c->misses;
  if (set->case_fallback == 0 || c->misses < set->case_fallback) {
    return 0;
  }
  if (c->proven_at != RP_TSTAMP_UNSET &&
      !rp_tstamp_elapsed(c->proven_at, set->case_proof_life, now)) {
    return 0;
  }
  c->mode = RP_CASE_FALLBACK;
  return 1;
}
