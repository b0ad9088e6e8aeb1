/*
 * scores.h: saved resolver scores (prefix rp_scores_).
 *
 * This module owns the score cache file: a JSON object whose members are
 * per-kind keys ("dnstt_resolvers<type>", "masterdns_resolvers",
 * "generic_resolvers"), each an object mapping a resolver (its URL as
 * written in the config) to an integer score -10 .. 10. One file may be
 * shared by several tunnels: saving replaces only its own key and keeps
 * the others. A save writes a temporary file beside the target and
 * renames it over the target, so a crash never leaves half a file.
 */
#ifndef RP_SCORES_H
#define RP_SCORES_H

#include "respool.h"

#include <stddef.h>

/* RP_SCORES_MIN and RP_SCORES_MAX bound a score. */
#define RP_SCORES_MIN (-10)
#define RP_SCORES_MAX 10
/* RP_SCORES_KEYLEN is a comfortable size for a key buffer. */
#define RP_SCORES_KEYLEN 64

/* rp_scores_entry is one resolver's score. */
typedef struct rp_scores_entry {
  /* name is the resolver URL (owned, NUL ended). */
  char *name;
  /* score is -10 .. 10. */
  int score;
} rp_scores_entry;

/* rp_scores is the set of scores under one key, sorted by name. */
typedef struct rp_scores {
  const rp_mem *mem;
  rp_scores_entry *entries;
  size_t n;
  size_t cap;
} rp_scores;

/* rp_scores_init makes |scores| empty, allocating with |mem| (NULL for
   rp_mem_default()). */
void rp_scores_init(rp_scores *scores, const rp_mem *mem);

/* rp_scores_free frees every entry and leaves |scores| empty. */
void rp_scores_free(rp_scores *scores);

/* rp_scores_key writes the key of |kind| into |buf| (|cap| bytes):
   "dnstt_resolvers" followed by |type| (may be NULL or "", e.g. "TXT"),
   "masterdns_resolvers" or "generic_resolvers". Returns |buf|. */
const char *rp_scores_key(rp_kind kind, const char *type, char *buf,
                          size_t cap);

/* rp_scores_load replaces the content of |scores| with the member |key|
   of the file |path|. A missing file, a file that is not JSON, or a key
   that is not an object leaves |scores| empty and returns RP_ERR_NOT_FOUND
   (missing) or RP_ERR_MALFORMED (corrupt) with a message in |err|;
   callers report it and go on. Entries that are not numbers are skipped;
   scores are clamped to -10 .. 10. Returns 0, RP_ERR_NOT_FOUND,
   RP_ERR_MALFORMED or RP_ERR_NOMEM. */
int rp_scores_load(rp_scores *scores, const char *path, const char *key,
                   char *err, size_t errlen);

/* rp_scores_get stores the score of |name| in |*pscore|. Returns 0 or
   RP_ERR_NOT_FOUND (|*pscore| is then 0). */
int rp_scores_get(const rp_scores *scores, const char *name, int *pscore);

/* rp_scores_set sets the score of |name| (copied) to |score| clamped to
   -10 .. 10. Returns 0 or RP_ERR_NOMEM. */
int rp_scores_set(rp_scores *scores, const char *name, int score);

/* rp_scores_save writes |scores| under |key| into |path|, keeping the
   other keys of an existing valid file, through a temporary file in the
   same directory and rename(2). Returns 0, RP_ERR_IO (|err| says why) or
   RP_ERR_NOMEM. */
int rp_scores_save(const rp_scores *scores, const char *path, const char *key,
                   char *err, size_t errlen);

#endif /* RP_SCORES_H */
