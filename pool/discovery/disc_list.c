/*
 * disc_list.c: the candidate list of resolver discovery: the system
 * resolvers, the list file, the bundled public resolvers and samples of
 * a country's ranges, without duplicates (disc.c's IMPLEMENTATION NOTES
 * describe the compact store and the hash set).
 */
#include "disc_internal.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disc_data.h"

/* ------------------------------------------------------------------ */
/* Candidate list                                                       */
/* ------------------------------------------------------------------ */

static uint64_t disc_hash_addr(const disc_addr *a) {
  const uint8_t *p;
  size_t n, i;
  uint64_t h = DISC_FNV_OFFSET;
  uint16_t port;
  if (a->sa.sa_family == AF_INET6) {
    p = (const uint8_t *)&a->in6.sin6_addr;
    n = sizeof(a->in6.sin6_addr);
    port = a->in6.sin6_port;
  } else {
    p = (const uint8_t *)&a->in.sin_addr;
    n = sizeof(a->in.sin_addr);
    port = a->in.sin_port;
  }
  for (i = 0; i < n; ++i) {
    h = (h ^ p[i]) * DISC_FNV_PRIME;
  }
  h = (h ^ (port & 0xffu)) * DISC_FNV_PRIME;
  h = (h ^ (port >> 8)) * DISC_FNV_PRIME;
  h ^= (uint64_t)a->sa.sa_family;
  return h ? h : 1;
}

/* disc_hash_insert returns 1 if |h| was new (and adds it), 0 if it was
   there, or RP_ERR_NOMEM. The set doubles past half full. */
static int disc_hash_insert(rp_disc *d, uint64_t h) {
  size_t i, mask;
  if ((d->ncands + 1) * 2 > d->hash_cap) {
    size_t ncap = d->hash_cap ? d->hash_cap * 2 : DISC_HASH_MIN;
    uint64_t *nh = d->mem->calloc(ncap, sizeof(*nh), d->mem->user_data);
    size_t j;
    if (!nh) {
      return RP_ERR_NOMEM;
    }
    for (j = 0; j < d->hash_cap; ++j) {
      if (d->hash[j]) {
        i = (size_t)d->hash[j] & (ncap - 1);
        while (nh[i]) {
          i = (i + 1) & (ncap - 1);
        }
        nh[i] = d->hash[j];
      }
    }
    d->mem->free(d->hash, d->mem->user_data);
    d->hash = nh;
    d->hash_cap = ncap;
  }
  mask = d->hash_cap - 1;
  for (i = (size_t)h & mask; d->hash[i]; i = (i + 1) & mask) {
    if (d->hash[i] == h) {
      return 0;
    }
  }
  d->hash[i] = h;
  return 1;
}

static int disc_add_addr(rp_disc *d, const disc_addr *a, rp_disc_source src) {
  int rv;
  if (d->ncands >= RP_DISC_MAX_CANDIDATES) {
    return 0;
  }
  rv = disc_hash_insert(d, disc_hash_addr(a));
  if (rv <= 0) {
    return rv;
  }
  if (d->ncands == d->cap_cands) {
    size_t ncap = d->cap_cands ? d->cap_cands * 2 : DISC_INITIAL_CANDIDATES;
    disc_cand *n =
        d->mem->realloc(d->cands, ncap * sizeof(*n), d->mem->user_data);
    if (!n) {
      return RP_ERR_NOMEM;
    }
    d->cands = n;
    d->cap_cands = ncap;
  }
  d->cands[d->ncands].addr = *a;
  d->cands[d->ncands].source = (uint8_t)src;
  ++d->ncands;
  return 0;
}

/* disc_add_text adds the UDP address |text| ("IP", "IP:PORT",
   "[IPv6]:PORT", "udp://..."). Anything else is counted as skipped. */
static int disc_add_text(rp_disc *d, const char *text, rp_disc_source src) {
  rp_config_resolver res;
  disc_addr a;
  if (rp_config_parse_resolver(&res, text, NULL, 0) != 0 ||
      res.scheme != RP_SCHEME_UDP || !res.has_addr) {
    ++d->stats.skipped;
    return 0;
  }
  memset(&a, 0, sizeof(a));
  if (res.addr.ss_family == AF_INET6) {
    memcpy(&a.in6, &res.addr, sizeof(a.in6));
  } else {
    memcpy(&a.in, &res.addr, sizeof(a.in));
  }
  return disc_add_addr(d, &a, src);
}

/* disc_read_file reads |path| whole into a NUL-ended buffer. */
static int disc_read_file(const rp_mem *mem, const char *path, char **pbuf,
                          size_t *plen, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  int rv;
  if (!f) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return RP_ERR_CONFIG;
  }
  rv = rp_config_read_stream(mem, f, SIZE_MAX, pbuf, plen);
  fclose(f);
  if (rv == RP_ERR_FULL || rv == RP_ERR_IO) {
    snprintf(err, errlen, "%s: read error", path);
    rv = RP_ERR_CONFIG;
  }
  return rv;
}

/* disc_add_lines adds every line of |text| (comments after '#', blank
   lines skipped). With |resolv_conf| only "nameserver X" lines count. */
static int disc_add_lines(rp_disc *d, char *text, int resolv_conf,
                          rp_disc_source src) {
  char *line = text;
  while (line && *line) {
    char *end = strchr(line, '\n');
    char *p, *q;
    int rv;
    if (end) {
      *end = '\0';
    }
    p = line;
    line = end ? end + 1 : NULL;
    if ((q = strchr(p, '#')) != NULL) {
      *q = '\0';
    }
    while (*p && isspace((unsigned char)*p)) {
      ++p;
    }
    if (resolv_conf) {
      if (strncmp(p, "nameserver", strlen("nameserver")) != 0) {
        continue;
      }
      p += strlen("nameserver");
      while (*p && isspace((unsigned char)*p)) {
        ++p;
      }
    }
    q = p + strlen(p);
    while (q > p && isspace((unsigned char)q[-1])) {
      *--q = '\0';
    }
    if (*p == '\0' || strlen(p) >= DISC_LINE_MAX) {
      continue;
    }
    rv = disc_add_text(d, p, src);
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

/* disc_load_data parses the bundled data (or |path|). */
static cJSON *disc_load_data(const rp_mem *mem, const char *path, char *err,
                             size_t errlen) {
  cJSON *root;
  if (path) {
    char *buf;
    size_t len;
    if (disc_read_file(mem, path, &buf, &len, err, errlen) != 0) {
      return NULL;
    }
    root = cJSON_ParseWithLength(buf, len);
    mem->free(buf, mem->user_data);
  } else {
    root =
        cJSON_ParseWithLength((const char *)disc_data, sizeof(disc_data) - 1);
  }
  if (!cJSON_IsObject(root)) {
    snprintf(err, errlen, "%s: not a JSON object",
             path ? path : "bundled resolver list");
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

/* disc_section returns the object of |country| ("global" or a code). */
static const cJSON *disc_section(const cJSON *root, const char *country) {
  const cJSON *c;
  if (strcmp(country, "global") == 0) {
    return cJSON_GetObjectItemCaseSensitive(root, "global");
  }
  c = cJSON_GetObjectItemCaseSensitive(root, "countries");
  return c ? cJSON_GetObjectItemCaseSensitive(c, country) : NULL;
}

static int disc_add_array(rp_disc *d, const cJSON *sec, const char *key,
                          rp_disc_source src) {
  const cJSON *arr = sec ? cJSON_GetObjectItemCaseSensitive(sec, key) : NULL;
  const cJSON *it;
  int rv;
  cJSON_ArrayForEach(it, arr) {
    if (cJSON_IsString(it) && (rv = disc_add_text(d, it->valuestring, src))) {
      return rv;
    }
  }
  return 0;
}

/* disc_add_ranges adds |n| sample addresses spread over the IPv4 CIDR
   ranges of |sec|. */
static int disc_add_ranges(rp_disc *d, const cJSON *sec, uint32_t n) {
  const cJSON *arr =
      sec ? cJSON_GetObjectItemCaseSensitive(sec, "ranges") : NULL;
  int nr = cJSON_GetArraySize(arr);
  uint32_t i;
  if (nr <= 0) {
    return 0;
  }
  for (i = 0; i < n; ++i) {
    const cJSON *it = cJSON_GetArrayItem(arr, (int)(i % (uint32_t)nr));
    char buf[INET_ADDRSTRLEN + 4];
    char *slash;
    unsigned long bits;
    struct in_addr base;
    uint32_t host, hostmask;
    disc_addr a;
    int rv;
    if (!cJSON_IsString(it) || strlen(it->valuestring) >= sizeof(buf)) {
      continue;
    }
    strcpy(buf, it->valuestring);
    slash = strchr(buf, '/');
    if (!slash) {
      continue;
    }
    *slash = '\0';
    bits = strtoul(slash + 1, NULL, 10);
    if (bits == 0 || bits > DISC_IPV4_BITS ||
        inet_pton(AF_INET, buf, &base) != 1) {
      continue;
    }
    hostmask = bits == DISC_IPV4_BITS
                   ? 0
                   : (uint32_t)((1ull << (DISC_IPV4_BITS - bits)) - 1u);
    host =
        (ntohl(base.s_addr) & ~hostmask) | ((uint32_t)rp_disc_rand(d) & hostmask);
    memset(&a, 0, sizeof(a));
    a.in.sin_family = AF_INET;
    a.in.sin_port = htons(DISC_PORT_DNS);
    a.in.sin_addr.s_addr = htonl(host);
    if ((rv = disc_add_addr(d, &a, RP_DISC_SOURCE_RANGE)) != 0) {
      return rv;
    }
  }
  return 0;
}

int rp_disc_build(rp_disc *d, const rp_config_discovery *cfg, char *err,
                      size_t errlen) {
  size_t i;
  int rv = 0;
  cJSON *root = NULL;
  const cJSON *country = NULL, *global = NULL;
  for (i = 0; i < d->opts.nfirst && rv == 0; ++i) {
    rv = disc_add_text(d, d->opts.first[i], RP_DISC_SOURCE_SAVED);
  }
  if (rv == 0 && cfg->system) {
    const char *path =
        d->opts.resolv_conf ? d->opts.resolv_conf : RP_DISC_RESOLV_CONF;
    char *buf;
    size_t len;
    char why[RP_CONFIG_ERRLEN];
    if (disc_read_file(d->mem, path, &buf, &len, why, sizeof(why)) == 0) {
      rv = disc_add_lines(d, buf, 1, RP_DISC_SOURCE_SYSTEM);
      d->mem->free(buf, d->mem->user_data);
    } else {
      rp_disc_log(d, RP_LOG_INFO, "ev=disc_no_system why=\"%s\"", why);
    }
  }
  if (rv == 0 && (cfg->bundled || cfg->sample_ranges)) {
    root = disc_load_data(d->mem, cfg->data_file, err, errlen);
    if (!root) {
      return RP_ERR_CONFIG;
    }
    if (cfg->country[0]) {
      country = disc_section(root, cfg->country);
      if (!country) {
        rp_disc_log(d, RP_LOG_WARN,
                 "ev=disc_unknown_country country=%s why=\"not in the "
                 "bundled list\"",
                 cfg->country);
      }
    }
    global = disc_section(root, "global");
  }
  if (rv == 0 && cfg->bundled) {
    rv = disc_add_array(d, country, "udp", RP_DISC_SOURCE_COUNTRY);
    if (rv == 0) {
      rv = disc_add_array(d, global, "udp", RP_DISC_SOURCE_GLOBAL);
    }
  }
  if (rv == 0 && cfg->sample_ranges) {
    rv = disc_add_ranges(d, country, cfg->sample_ranges);
  }
  cJSON_Delete(root);
  if (rv == 0 && cfg->list_file) {
    char *buf;
    size_t len;
    rv = disc_read_file(d->mem, cfg->list_file, &buf, &len, err, errlen);
    if (rv == 0) {
      rv = disc_add_lines(d, buf, 0, RP_DISC_SOURCE_LIST);
      d->mem->free(buf, d->mem->user_data);
    }
  }
  return rv;
}

int rp_disc_bundled_tls(const char *data_file, const char *country,
                        int (*fn)(const char *url, void *user_data),
                        void *user_data, char *err, size_t errlen) {
  static const char *const keys[] = {"dot", "doh"};
  cJSON *root = disc_load_data(rp_mem_default(), data_file, err, errlen);
  const cJSON *secs[2];
  size_t s, k;
  if (!root) {
    return RP_ERR_CONFIG;
  }
  secs[0] = country && country[0] ? disc_section(root, country) : NULL;
  secs[1] = disc_section(root, "global");
  for (s = 0; s < 2; ++s) {
    for (k = 0; k < sizeof(keys) / sizeof(keys[0]); ++k) {
      const cJSON *arr =
          secs[s] ? cJSON_GetObjectItemCaseSensitive(secs[s], keys[k]) : NULL;
      const cJSON *it;
      cJSON_ArrayForEach(it, arr) {
        if (cJSON_IsString(it) && fn(it->valuestring, user_data) != 0) {
          cJSON_Delete(root);
          return 0;
        }
      }
    }
  }
  cJSON_Delete(root);
  return 0;
}
