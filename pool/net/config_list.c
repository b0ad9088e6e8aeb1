/*
 * config_list.c: the resolver list of a configuration beyond one URL: a
 * list file (one URL a line) and merging resolvers listed twice (see
 * respool_config.h).
 */
#include "respool_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CONFIG_LIST_MAX_LINE is the longest line of a resolver list file. */
#define CONFIG_LIST_MAX_LINE 1024

int rp_config_add_resolver_file(rp_config *cfg, const char *path, char *err,
                                size_t errlen) {
  char line[CONFIG_LIST_MAX_LINE], where[64];
  FILE *f = fopen(path, "r");
  size_t lineno = 0;
  int rv = 0;

  if (f == NULL) {
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    return RP_ERR_IO;
  }
  while (rv == 0 && fgets(line, sizeof(line), f) != NULL) {
    char *p = line, *end;

    ++lineno;
    if (strchr(line, '\n') == NULL && !feof(f)) {
      snprintf(err, errlen, "%s: line %zu: longer than %d characters", path,
               lineno, CONFIG_LIST_MAX_LINE - 2);
      rv = RP_ERR_CONFIG;
      break;
    }
    /* A '#' starts a comment; blanks around the URL are dropped. */
    end = strchr(p, '#');
    if (end == NULL) {
      end = p + strlen(p);
    }
    while (p < end && (*p == ' ' || *p == '\t')) {
      ++p;
    }
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
                       end[-1] == '\r')) {
      --end;
    }
    if (p == end) {
      continue;
    }
    *end = '\0';
    snprintf(where, sizeof(where), "line %zu", lineno);
    rv = rp_config_add_resolver(cfg, p, path, where, err, errlen);
  }
  if (rv == 0 && ferror(f)) {
    snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
    rv = RP_ERR_IO;
  }
  fclose(f);
  return rv;
}

/* config_dup_entry is one resolver in the duplicate sort: the entry and
   its place in the list. */
typedef struct config_dup_entry {
  const rp_config_resolver *res;
  size_t idx;
} config_dup_entry;

rp_config_target rp_config_target_of(const rp_config_resolver *r) {
  return (rp_config_target){.scheme = r->scheme,
                            .host = r->host,
                            .port = r->port,
                            .path = r->path,
                            .tls_name = r->tls_name};
}

int rp_config_target_cmp(const rp_config_target *a,
                         const rp_config_target *b) {
  int c;

  if (a->scheme != b->scheme) {
    return a->scheme < b->scheme ? -1 : 1;
  }
  if ((c = strcmp(a->host, b->host)) != 0) {
    return c;
  }
  if (a->port != b->port) {
    return a->port < b->port ? -1 : 1;
  }
  if ((c = strcmp(a->path, b->path)) != 0) {
    return c;
  }
  return strcmp(a->tls_name, b->tls_name);
}

/* config_cmp_target orders resolvers by what they reach, nothing else. */
static int config_cmp_target(const rp_config_resolver *a,
                             const rp_config_resolver *b) {
  rp_config_target ta = rp_config_target_of(a), tb = rp_config_target_of(b);

  return rp_config_target_cmp(&ta, &tb);
}

/* config_cmp_dup sorts by target, then by place (the first one kept). */
static int config_cmp_dup(const void *pa, const void *pb) {
  const config_dup_entry *a = pa, *b = pb;
  int c = config_cmp_target(a->res, b->res);

  if (c != 0) {
    return c;
  }
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

size_t rp_config_merge_duplicates(rp_config *cfg, rp_config_dup_fn fn,
                                  void *user_data) {
  const rp_mem *mem = cfg->mem;
  config_dup_entry *e;
  unsigned char *drop;
  size_t n = cfg->nresolvers, i, out, first, ndrop = 0;

  if (n < 2) {
    return 0;
  }
  e = mem->calloc(n, sizeof(*e), mem->user_data);
  drop = mem->calloc(n, 1, mem->user_data);
  if (!e || !drop) {
    mem->free(e, mem->user_data);
    mem->free(drop, mem->user_data);
    return (size_t)-1;
  }
  for (i = 0; i < n; ++i) {
    e[i].res = &cfg->resolvers[i];
    e[i].idx = i;
  }
  qsort(e, n, sizeof(*e), config_cmp_dup);
  /* In each run of equal targets the first (lowest place) is kept. */
  for (i = 1, first = 0; i < n; ++i) {
    if (config_cmp_target(e[first].res, e[i].res) != 0) {
      first = i;
      continue;
    }
    drop[e[i].idx] = 1;
    ++ndrop;
    if (fn) {
      fn(e[i].res->text, e[first].res->text, user_data);
    }
  }
  mem->free(e, mem->user_data);
  for (i = 0, out = 0; i < n; ++i) {
    if (!drop[i]) {
      cfg->resolvers[out++] = cfg->resolvers[i];
    }
  }
  cfg->nresolvers = out;
  mem->free(drop, mem->user_data);
  return ndrop;
}
