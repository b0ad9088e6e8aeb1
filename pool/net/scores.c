/*
 * scores.c: the score cache file.
 *
 * IMPLEMENTATION NOTES
 * - Entries are kept sorted by name so that a list of tens of thousands
 *   of candidates is looked up by binary search; an insert moves the
 *   tail (inserts happen at start and at save time, not per query).
 * - The temporary file is "<path>.tmp.<pid>" in the same directory, so
 *   rename(2) is atomic (same file system). It is fsync'd before the
 *   rename so a crash right after the rename cannot leave an empty file.
 */
#include "scores.h"
#include "respool_config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* SCORES_MAX_FILE bounds a score file read into memory, bytes. */
#define SCORES_MAX_FILE (64u * 1024u * 1024u)
/* SCORES_INITIAL_CAP is the first capacity of the entry array. */
#define SCORES_INITIAL_CAP 16
/* SCORES_TMP_SUFFIX_LEN is room for ".tmp.<pid>" and the NUL. */
#define SCORES_TMP_SUFFIX_LEN 32

void rp_scores_init(rp_scores *scores, const rp_mem *mem) {
  *scores = (rp_scores){.mem = mem ? mem : rp_mem_default()};
}

void rp_scores_free(rp_scores *scores) {
  const rp_mem *mem = scores->mem;
  size_t i;
  for (i = 0; i < scores->n; ++i) {
    mem->free(scores->entries[i].name, mem->user_data);
  }
  mem->free(scores->entries, mem->user_data);
  rp_scores_init(scores, mem);
}

const char *rp_scores_key(rp_kind kind, const char *type, char *buf,
                          size_t cap) {
  switch (kind) {
  case RP_KIND_DNSTT:
    snprintf(buf, cap, "dnstt_resolvers%s", type ? type : "");
    break;
  case RP_KIND_MASTERDNS:
    snprintf(buf, cap, "masterdns_resolvers");
    break;
  case RP_KIND_GENERIC:
  case RP_KIND_AUTO:
    /* auto starts generic; the scores were kept there before it. */
    snprintf(buf, cap, "generic_resolvers");
    break;
  }
  return buf;
}

static int scores_clamp(double v) {
  if (!(v >= RP_SCORES_MIN)) {
    return RP_SCORES_MIN;
  }
  if (v > RP_SCORES_MAX) {
    return RP_SCORES_MAX;
  }
  return (int)v;
}

/* scores_find returns the index of |name| or where it would go, and sets
   |*pfound|. */
static size_t scores_find(const rp_scores *scores, const char *name,
                          int *pfound) {
  size_t lo = 0, hi = scores->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(scores->entries[mid].name, name);
    if (c == 0) {
      *pfound = 1;
      return mid;
    }
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *pfound = 0;
  return lo;
}

int rp_scores_get(const rp_scores *scores, const char *name, int *pscore) {
  int found;
  size_t i = scores_find(scores, name, &found);
  *pscore = found ? scores->entries[i].score : 0;
  return found ? 0 : RP_ERR_NOT_FOUND;
}

int rp_scores_set(rp_scores *scores, const char *name, int score) {
  const rp_mem *mem = scores->mem;
  int found;
  size_t i = scores_find(scores, name, &found), len;
  char *copy;
  if (found) {
    scores->entries[i].score = scores_clamp(score);
    return 0;
  }
  if (scores->n == scores->cap) {
    size_t ncap = scores->cap ? scores->cap * 2 : SCORES_INITIAL_CAP;
    rp_scores_entry *ne;
    if (ncap > SIZE_MAX / sizeof(*ne)) {
      return RP_ERR_NOMEM;
    }
    ne = mem->realloc(scores->entries, ncap * sizeof(*ne), mem->user_data);
    if (!ne) {
      return RP_ERR_NOMEM;
    }
    scores->entries = ne;
    scores->cap = ncap;
  }
  len = strlen(name) + 1;
  copy = mem->malloc(len, mem->user_data);
  if (!copy) {
    return RP_ERR_NOMEM;
  }
  memcpy(copy, name, len);
  memmove(&scores->entries[i + 1], &scores->entries[i],
          (scores->n - i) * sizeof(scores->entries[0]));
  scores->entries[i] =
      (rp_scores_entry){.name = copy, .score = scores_clamp(score)};
  ++scores->n;
  return 0;
}

/* scores_read_file reads |path| into a NUL-ended buffer from |mem|.
   Returns 0, RP_ERR_NOT_FOUND (no file), RP_ERR_IO or RP_ERR_NOMEM. */
static int scores_read_file(const rp_mem *mem, const char *path, char **pbuf,
                            size_t *plen, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  int rv;
  if (!f) {
    int e = errno;
    if (err && errlen) {
      snprintf(err, errlen, "%s: %s", path, strerror(e));
    }
    return e == ENOENT ? RP_ERR_NOT_FOUND : RP_ERR_IO;
  }
  rv = rp_config_read_stream(mem, f, SCORES_MAX_FILE, pbuf, plen);
  fclose(f);
  if ((rv == RP_ERR_FULL || rv == RP_ERR_IO) && err && errlen) {
    snprintf(err, errlen, "%s: %s", path,
             rv == RP_ERR_FULL ? "file too large" : "read error");
  }
  return rv == RP_ERR_FULL ? RP_ERR_IO : rv;
}

int rp_scores_load(rp_scores *scores, const char *path, const char *key,
                   char *err, size_t errlen) {
  const rp_mem *mem = scores->mem;
  char *buf = NULL;
  size_t len = 0;
  cJSON *root = NULL;
  const cJSON *obj, *item;
  int rv;

  rp_scores_free(scores);
  rv = scores_read_file(mem, path, &buf, &len, err, errlen);
  if (rv == RP_ERR_IO) {
    rv = RP_ERR_MALFORMED;
  }
  if (rv != 0) {
    return rv;
  }
  root = cJSON_ParseWithLength(buf, len);
  mem->free(buf, mem->user_data);
  if (!cJSON_IsObject(root)) {
    if (err && errlen) {
      snprintf(err, errlen, "%s: corrupt score file (not a JSON object)", path);
    }
    rv = RP_ERR_MALFORMED;
    goto out;
  }
  obj = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!obj) {
    rv = 0;
    goto out;
  }
  if (!cJSON_IsObject(obj)) {
    if (err && errlen) {
      snprintf(err, errlen, "%s: corrupt score file (%s is not an object)",
               path, key);
    }
    rv = RP_ERR_MALFORMED;
    goto out;
  }
  cJSON_ArrayForEach(item, obj) {
    if (!cJSON_IsNumber(item) || !item->string) {
      continue;
    }
    rv = rp_scores_set(scores, item->string, scores_clamp(item->valuedouble));
    if (rv != 0) {
      rp_scores_free(scores);
      goto out;
    }
  }
  rv = 0;

out:
  cJSON_Delete(root);
  return rv;
}

/* scores_keep_others makes the other keys of |root| print as they load:
   a number out of the range of a double (1e999) loads as 10 or -10, but
   cJSON prints a non-finite number as null, which would drop it. */
static void scores_keep_others(cJSON *root, const char *key) {
  cJSON *obj, *item;

  cJSON_ArrayForEach(obj, root) {
    if (!cJSON_IsObject(obj) || (obj->string && strcmp(obj->string, key) == 0)) {
      continue;
    }
    cJSON_ArrayForEach(item, obj) {
      if (cJSON_IsNumber(item) && !isfinite(item->valuedouble)) {
        cJSON_SetNumberValue(item, scores_clamp(item->valuedouble));
      }
    }
  }
}

int rp_scores_save(const rp_scores *scores, const char *path, const char *key,
                   char *err, size_t errlen) {
  const rp_mem *mem = scores->mem;
  char *buf = NULL, *text = NULL, *tmp = NULL;
  size_t len = 0, i, tlen;
  cJSON *root = NULL, *obj;
  FILE *f = NULL;
  int rv = 0;

  if (scores_read_file(mem, path, &buf, &len, NULL, 0) == 0) {
    root = cJSON_ParseWithLength(buf, len);
    mem->free(buf, mem->user_data);
    if (root && !cJSON_IsObject(root)) {
      cJSON_Delete(root);
      root = NULL;
    }
  }
  if (!root && !(root = cJSON_CreateObject())) {
    return RP_ERR_NOMEM;
  }
  /* Every member named |key| goes (a file that holds it twice would
     otherwise load the old first one next time). */
  while (cJSON_GetObjectItemCaseSensitive(root, key) != NULL) {
    cJSON_DeleteItemFromObjectCaseSensitive(root, key);
  }
  scores_keep_others(root, key);
  obj = cJSON_AddObjectToObject(root, key);
  if (!obj) {
    rv = RP_ERR_NOMEM;
    goto fail;
  }
  for (i = 0; i < scores->n; ++i) {
    if (!cJSON_AddNumberToObject(obj, scores->entries[i].name,
                                 scores->entries[i].score)) {
      rv = RP_ERR_NOMEM;
      goto fail;
    }
  }
  text = cJSON_Print(root);
  if (!text) {
    rv = RP_ERR_NOMEM;
    goto fail;
  }
  tlen = strlen(path) + SCORES_TMP_SUFFIX_LEN;
  tmp = mem->malloc(tlen, mem->user_data);
  if (!tmp) {
    rv = RP_ERR_NOMEM;
    goto fail;
  }
  snprintf(tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
  f = fopen(tmp, "wb");
  if (!f) {
    if (err && errlen) {
      snprintf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
    }
    rv = RP_ERR_IO;
    goto fail;
  }
  if (fputs(text, f) == EOF || fputc('\n', f) == EOF || fflush(f) != 0 ||
      fsync(fileno(f)) != 0) {
    if (err && errlen) {
      snprintf(err, errlen, "%s: write failed: %s", tmp, strerror(errno));
    }
    fclose(f);
    f = NULL;
    remove(tmp);
    rv = RP_ERR_IO;
    goto fail;
  }
  if (fclose(f) != 0) {
    f = NULL;
    remove(tmp);
    rv = RP_ERR_IO;
    goto fail;
  }
  f = NULL;
  if (rename(tmp, path) != 0) {
    if (err && errlen) {
      snprintf(err, errlen, "%s: rename failed: %s", path, strerror(errno));
    }
    remove(tmp);
    rv = RP_ERR_IO;
    goto fail;
  }

fail:
  mem->free(tmp, mem->user_data);
  if (text) {
    cJSON_free(text);
  }
  cJSON_Delete(root);
  return rv;
}
