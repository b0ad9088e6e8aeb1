/*
 * case.c: DNS 0x20 case randomisation (see case.h).
 */
#include "case.h"

#include <string.h>

/* CASE_BIT is the bit that tells an ASCII letter's two cases apart. */
#define CASE_BIT 0x20u
/* CASE_WORD is the bytes of the name handled at once (one uint64_t). */
#define CASE_WORD 8u
/* CASE_ONES has 1 in every byte; CASE_LOW7 and CASE_HIGH the low seven
   bits and the high bit of every byte; CASE_BITS CASE_BIT in every
   byte. */
#define CASE_ONES 0x0101010101010101ULL
#define CASE_LOW7 (CASE_ONES * 0x7fu)
#define CASE_HIGH (CASE_ONES * 0x80u)
#define CASE_BITS (CASE_ONES * CASE_BIT)
/* CASE_HIGH_TO_BIT shifts a byte's high bit to CASE_BIT. */
#define CASE_HIGH_TO_BIT 2
/* CASE_TOP_BYTE is the shift that reads a product's top byte. */
#define CASE_TOP_BYTE 56
/* CASE_SM_* are splitmix64's increment and multipliers (Steele, Lea and
   Flood, "Fast splittable pseudorandom number generators", 2014): a
   bijection of the 64-bit state, so the outputs of one seed are as
   random as the seed. */
#define CASE_SM_GAMMA 0x9e3779b97f4a7c15ULL
#define CASE_SM_MUL1 0xbf58476d1ce4e5b9ULL
#define CASE_SM_MUL2 0x94d049bb133111ebULL
#define CASE_SM_SHIFT1 30
#define CASE_SM_SHIFT2 27
#define CASE_SM_SHIFT3 31

/* case_next returns the next 64 pattern bits of |*state|. */
static inline uint64_t case_next(uint64_t *state) {
  uint64_t z = (*state += CASE_SM_GAMMA);

  z = (z ^ (z >> CASE_SM_SHIFT1)) * CASE_SM_MUL1;
  z = (z ^ (z >> CASE_SM_SHIFT2)) * CASE_SM_MUL2;
  return z ^ (z >> CASE_SM_SHIFT3);
}

/* case_load reads |n| (<= CASE_WORD) bytes at |p| into a word, the rest
   0 (no letter). A whole word is one load; only the last few bytes of a
   name go one by one (a copy of variable length was a libc call). */
static inline uint64_t case_load(const uint8_t *p, size_t n) {
  uint64_t x = 0;
  size_t k;

  if (n == CASE_WORD) {
    memcpy(&x, p, CASE_WORD);
    return x;
  }
  for (k = 0; k < n; ++k) {
    ((uint8_t *)&x)[k] = p[k];
  }
  return x;
}

/* case_store writes the first |n| (<= CASE_WORD) bytes of |x| to |p|. */
static inline void case_store(uint8_t *p, uint64_t x, size_t n) {
  size_t k;

  if (n == CASE_WORD) {
    memcpy(p, &x, CASE_WORD);
    return;
  }
  for (k = 0; k < n; ++k) {
    p[k] = ((const uint8_t *)&x)[k];
  }
}

/* case_letters returns CASE_BIT in each byte of |x| that is an ASCII
   letter, 0 in the others. Each byte, its high bit cleared and folded to
   lower case, is at most 0x7f, so adding 0x80 - 'a' (or 0x80 - 'z' - 1)
   carries into no other byte and sets its high bit exactly when it is
   >= 'a' (or > 'z'); bytes >= 0x80 are no letters. */
static inline uint64_t case_letters(uint64_t x) {
  uint64_t f = (x | CASE_BITS) & CASE_LOW7;
  uint64_t ge = f + CASE_ONES * (0x80u - 'a');
  uint64_t gt = f + CASE_ONES * (0x80u - 'z' - 1u);

  return (ge & ~gt & ~x & CASE_HIGH) >> CASE_HIGH_TO_BIT;
}

/* case_count returns the number of letters marked in |m|
   (case_letters): the bytes' sum lands in the top byte. */
static inline size_t case_count(uint64_t m) {
  return (size_t)((((m / CASE_BIT) & CASE_ONES) * CASE_ONES) >> CASE_TOP_BYTE);
}

int rp_case_name_in_place(const uint8_t *msg, size_t len,
                          const rp_dns_name *name) {
  return len >= RP_DNS_HEADER_LEN + (size_t)name->len &&
         memcmp(msg + RP_DNS_HEADER_LEN, name->wire, name->len) == 0;
}

int rp_case_eligible(const uint8_t *msg, size_t len, const rp_dns_question *q) {
  size_t i, n;

  if (q->qtype == RP_DNS_TYPE_PTR ||
      !rp_case_name_in_place(msg, len, &q->name)) {
    return 0;
  }
  for (i = 0; i < q->name.len; i += n) {
    n = q->name.len - i < CASE_WORD ? q->name.len - i : CASE_WORD;
    if (case_letters(case_load(q->name.wire + i, n)) != 0) {
      return 1;
    }
  }
  return 0;
}

uint32_t rp_case_apply(uint8_t *wire, size_t len, uint64_t seed) {
  uint64_t state = seed, x, m, upper = 0, lower = 0;
  size_t i, n, letters = 0;

  for (i = 0; i < len; i += n) {
    n = len - i < CASE_WORD ? len - i : CASE_WORD;
    x = case_load(wire + i, n);
    m = case_letters(x);
    x ^= case_next(&state) & m;
    case_store(wire + i, x, n);
    lower |= x & m;
    upper |= ~x & m;
    letters += case_count(m);
  }
  return upper && lower && letters >= RP_CASE_PROOF_LETTERS ? RP_CASE_PROOF : 0;
}

rp_case_verdict rp_case_check(const rp_dns_question *base, uint64_t seed,
                              const rp_dns_question *got) {
  uint64_t state = seed, b, m, d;
  size_t i, n, len = base->name.len;
  int folded = 0;

  if (base->qtype != got->qtype || base->qclass != got->qclass ||
      len != got->name.len) {
    return RP_CASE_OTHER;
  }
  for (i = 0; i < len; i += n) {
    n = len - i < CASE_WORD ? len - i : CASE_WORD;
    b = case_load(base->name.wire + i, n);
    m = case_letters(b);
    d = (b ^ (case_next(&state) & m)) ^ case_load(got->name.wire + i, n);
    if (d == 0) {
      continue;
    }
    if (d & ~m) {
      /* Another byte, or a bit other than a letter's case. */
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

/* CASE_QTAIL is the type and class after a question's name, bytes. */
#define CASE_QTAIL 4u

void rp_case_restore(uint8_t *out, const uint8_t *answer, size_t len,
                     const rp_dns_name *name) {
  const uint8_t *sent = answer + RP_DNS_HEADER_LEN, *hit;
  size_t n = name->len, pos = RP_DNS_HEADER_LEN + n + CASE_QTAIL;

  memcpy(out, answer, len);
  memcpy(out + RP_DNS_HEADER_LEN, name->wire, n);
  /* Owner names written out in full (not as a pointer to the question)
     repeat the case the resolver got: the client's there too. */
  while (pos + n <= len &&
         (hit = memchr(answer + pos, sent[0], len - n + 1 - pos)) != NULL) {
    pos = (size_t)(hit - answer);
    if (memcmp(hit, sent, n) == 0) {
      memcpy(out + pos, name->wire, n);
      pos += n;
    } else {
      ++pos;
    }
  }
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
