/*
 * fuzz_scores.c: libFuzzer target for the scores file (scores.h).
 *
 * rp_scores_load reads a path, so the input is written to a file made
 * once per process (mkstemp, in /dev/shm when there is one, else in
 * TMPDIR or /tmp, so that the fsync of every save costs nothing) and
 * loaded under each of the four keys a pool uses. Then:
 * - each load returns 0 or RP_ERR_MALFORMED (with a message), its entries
 *   sorted by name with no name twice, every score within -10 .. 10, and
 *   rp_scores_get finds each;
 * - the entries of the first key, with one more set, are saved to a
 *   second, fresh file and loaded back: the same entries must come back,
 *   and no other key is in that file;
 * - they are saved over the input file, which keeps its other keys
 *   ("saving replaces only its own key", docs/config.md): when the input
 *   was a JSON object, every other key must load as before, and the
 *   saved key as saved;
 * - every allocation made through the scores' rp_mem is given back.
 * Each failed check aborts with a message. The files are removed at
 * exit. The same function is replayed over the seed corpus by the ctest
 * unit.scores_fuzz_replay.
 *
 * Two bugs this target found, fixed since, have their reproducers in the
 * seed corpus (crash-*): a save removed only the first member named its
 * key, and a non-finite score under another key was written as null.
 */
#include "scores.h"
#include "respool.h"

#define FUZZ_NAME "fuzz_scores.c"
#include "../../core/fuzz/fuzz_common.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* FUZZ_NKEYS is the number of keys loaded from each input. */
#define FUZZ_NKEYS 4
/* FUZZ_PATH_LEN holds the directory and the mkstemp template. */
#define FUZZ_PATH_LEN 512
/* FUZZ_SHM is where the files go when it is a directory. */
#define FUZZ_SHM "/dev/shm"
/* FUZZ_ADDED is the name set before the saves; its score comes from the
   input's first byte. */
#define FUZZ_ADDED "fuzz://added"
/* FUZZ_SCORE_SPAN is the number of scores -10 .. 10. */
#define FUZZ_SCORE_SPAN 21

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_keys are the keys of the three kinds (rp_scores_key), dnstt with
   and without a type. */
static const char *const fuzz_keys[FUZZ_NKEYS] = {
    "generic_resolvers", "dnstt_resolvers", "dnstt_resolversTXT",
    "masterdns_resolvers"};

/* fuzz_in holds the input; fuzz_out gets the fresh save. */
static char fuzz_in[FUZZ_PATH_LEN];
static char fuzz_out[FUZZ_PATH_LEN];

static void fuzz_cleanup(void);

/* fuzz_before_fail removes the files: abort() runs no atexit handler. */
static void fuzz_before_fail(void) { fuzz_cleanup(); }

/* fuzz_cleanup removes the two files. */
static void fuzz_cleanup(void) {
  if (fuzz_in[0] != '\0') {
    unlink(fuzz_in);
  }
  if (fuzz_out[0] != '\0') {
    unlink(fuzz_out);
  }
}

/* fuzz_mkfile makes an empty file from the template |path|. */
static void fuzz_mkfile(char *path, const char *dir, const char *what) {
  int fd;

  snprintf(path, FUZZ_PATH_LEN, "%s/respool-fuzz-scores-%s-XXXXXX", dir, what);
  fd = mkstemp(path);
  FUZZ_CHECK(fd >= 0, "cannot make a file in %s", dir);
  close(fd);
}

/* fuzz_files makes the two files, once per process. */
static void fuzz_files(void) {
  struct stat st;
  const char *dir;

  if (fuzz_in[0] != '\0') {
    return;
  }
  if (stat(FUZZ_SHM, &st) == 0 && S_ISDIR(st.st_mode) &&
      access(FUZZ_SHM, W_OK) == 0) {
    dir = FUZZ_SHM;
  } else {
    dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0') {
      dir = "/tmp";
    }
  }
  fuzz_mkfile(fuzz_in, dir, "in");
  fuzz_mkfile(fuzz_out, dir, "out");
  atexit(fuzz_cleanup);
}

/* fuzz_write replaces the content of |path| with |size| bytes. */
static void fuzz_write(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");

  FUZZ_CHECK(f != NULL, "cannot write %s", path);
  FUZZ_CHECK(size == 0 || fwrite(data, 1, size, f) == size, "short write to %s",
             path);
  FUZZ_CHECK(fclose(f) == 0, "cannot close %s", path);
}

/* fuzz_load loads |key| of |path| into |s| and checks the result. */
static int fuzz_load(rp_scores *s, const char *path, const char *key) {
  char err[RP_SCORES_KEYLEN + FUZZ_PATH_LEN] = "";
  size_t i;
  int rv, score;

  rv = rp_scores_load(s, path, key, err, sizeof(err));
  FUZZ_CHECK(rv == 0 || rv == RP_ERR_MALFORMED, "load %s: %d", key, rv);
  if (rv != 0) {
    FUZZ_CHECK(s->n == 0, "load %s failed with %zu entries", key, s->n);
    FUZZ_CHECK(err[0] != '\0', "load %s failed without a message", key);
  }
  for (i = 0; i < s->n; ++i) {
    const rp_scores_entry *e = &s->entries[i];

    FUZZ_CHECK(e->score >= RP_SCORES_MIN && e->score <= RP_SCORES_MAX,
               "load %s: score %d", key, e->score);
    FUZZ_CHECK(i == 0 || strcmp(s->entries[i - 1].name, e->name) < 0,
               "load %s: entries %zu and %zu out of order", key, i - 1, i);
    FUZZ_CHECK(rp_scores_get(s, e->name, &score) == 0 && score == e->score,
               "load %s: entry %zu not found", key, i);
  }
  return rv;
}

/* fuzz_same returns 1 if |a| and |b| hold the same entries. */
static int fuzz_same(const rp_scores *a, const rp_scores *b) {
  size_t i;

  if (a->n != b->n) {
    return 0;
  }
  for (i = 0; i < a->n; ++i) {
    if (strcmp(a->entries[i].name, b->entries[i].name) != 0 ||
        a->entries[i].score != b->entries[i].score) {
      return 0;
    }
  }
  return 1;
}

static void fuzz_save(const rp_scores *s, const char *path, const char *key) {
  char err[RP_SCORES_KEYLEN + 2 * FUZZ_PATH_LEN] = "";
  int rv = rp_scores_save(s, path, key, err, sizeof(err));

  FUZZ_CHECK(rv == 0, "save %s to %s: %d (%s)", key, path, rv, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rp_scores before[FUZZ_NKEYS], after;
  int rv[FUZZ_NKEYS], any_ok = 0, arv;
  size_t k;

  fuzz_files();
  fuzz_live = 0;
  fuzz_write(fuzz_in, data, size);
  for (k = 0; k < FUZZ_NKEYS; ++k) {
    rp_scores_init(&before[k], &fuzz_mem);
    rv[k] = fuzz_load(&before[k], fuzz_in, fuzz_keys[k]);
    any_ok |= rv[k] == 0;
  }
  FUZZ_CHECK(rp_scores_set(&before[0], FUZZ_ADDED,
                           (size > 0 ? data[0] % FUZZ_SCORE_SPAN : 0) +
                               RP_SCORES_MIN) == 0,
             "rp_scores_set failed");
  rp_scores_init(&after, &fuzz_mem);

  /* A fresh file: only the saved key, with exactly what was saved. */
  FUZZ_CHECK(unlink(fuzz_out) == 0 || access(fuzz_out, F_OK) != 0,
             "cannot remove %s", fuzz_out);
  fuzz_save(&before[0], fuzz_out, fuzz_keys[0]);
  arv = fuzz_load(&after, fuzz_out, fuzz_keys[0]);
  FUZZ_CHECK(arv == 0 && fuzz_same(&before[0], &after),
             "saved %zu entries, loaded %zu back (%d)", before[0].n, after.n,
             arv);
  for (k = 1; k < FUZZ_NKEYS; ++k) {
    arv = fuzz_load(&after, fuzz_out, fuzz_keys[k]);
    FUZZ_CHECK(arv == 0 && after.n == 0, "a fresh save holds %s (%d, %zu)",
               fuzz_keys[k], arv, after.n);
  }

  /* Over the input: its other keys stay as they were. */
  fuzz_save(&before[0], fuzz_in, fuzz_keys[0]);
  arv = fuzz_load(&after, fuzz_in, fuzz_keys[0]);
  FUZZ_CHECK(arv == 0 && fuzz_same(&before[0], &after),
             "saved %zu entries over the input, loaded %zu back (%d)",
             before[0].n, after.n, arv);
  if (any_ok) {
    for (k = 1; k < FUZZ_NKEYS; ++k) {
      arv = fuzz_load(&after, fuzz_in, fuzz_keys[k]);
      FUZZ_CHECK(arv == rv[k] && fuzz_same(&before[k], &after),
                 "%s changed by a save of %s: %d and %zu entries before, %d "
                 "and %zu after",
                 fuzz_keys[k], fuzz_keys[0], rv[k], before[k].n, arv, after.n);
    }
  }

  rp_scores_free(&after);
  for (k = 0; k < FUZZ_NKEYS; ++k) {
    rp_scores_free(&before[k]);
  }
  FUZZ_CHECK(fuzz_live == 0, "%ld blocks not freed", fuzz_live);
  return 0;
}
