/*
 * disc.c: candidates and pretests of resolver discovery.
 *
 * IMPLEMENTATION NOTES
 * - Candidates are kept compactly (a sockaddr_in6-sized union and the
 *   source, 32 bytes), so a 58 000-line list costs about 2 MB. A hash
 *   set of the addresses drops duplicates across sources (a public
 *   resolver that is also in the list file is tried once, as early as
 *   its first source says).
 * - Each pretest owns a connected UDP socket taken from a pool of
 *   |concurrency| slots: the kernel drops answers from other addresses,
 *   and an ICMP port unreachable shows up as a read error that ends the
 *   check at once (on loopback most dead candidates end this way). A
 *   slot is reused once its handle's close callback ran.
 * - One repeating timer (DISC_TICK_MS) times out checks and, when a pace
 *   is set, starts the next one; without a pace, a finished check starts
 *   the next at once. Total time is about candidates x timeout /
 *   concurrency for candidates that stay silent, far less for those that
 *   refuse or are unreachable.
 * - The check is the runtime's start-up check: one query of the pretest
 *   domain (type A, EDNS 1232) with a random ID; NOERROR or NXDOMAIN with
 *   the right ID and QR set passes.
 * - Sample addresses of the country's ranges are drawn with a xorshift
 *   generator seeded from the clock: they only need to spread, not to be
 *   unpredictable.
 * - Left out: DoT and DoH candidates (the pool checks the bundled ones
 *   with its own transports), IPv6 ranges.
 */
#include "disc.h"
#include "dns.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disc_data.h"

/* DISC_TICK_MS is the period of the timeout and pace timer. */
#define DISC_TICK_MS 10u
/* DISC_LINE_MAX is the longest list file line kept. */
#define DISC_LINE_MAX 600
/* DISC_LOG_LINE is the longest log line. */
#define DISC_LOG_LINE 512
/* DISC_QBUF_LEN is the pretest query buffer; DISC_RBUF_LEN the answer
   buffer (longer answers are truncated and still judged by header). */
#define DISC_QBUF_LEN 512
#define DISC_RBUF_LEN 4096
/* DISC_INITIAL_CANDIDATES is the first capacity of the list. */
#define DISC_INITIAL_CANDIDATES 64u
/* DISC_HASH_MIN is the smallest hash set (a power of two). */
#define DISC_HASH_MIN 1024u
/* DISC_PORT_DNS is the port of addresses given without one. */
#define DISC_PORT_DNS 53
/* DISC_IPV4_BITS is the length of an IPv4 address, bits. */
#define DISC_IPV4_BITS 32u
/* DISC_FNV_OFFSET and DISC_FNV_PRIME are the 64-bit FNV-1a constants. */
#define DISC_FNV_OFFSET 1469598103934665603ull
#define DISC_FNV_PRIME 1099511628211ull
/* DISC_DEFAULT_PRETEST is queried when no pretest domain is given. */
#define DISC_DEFAULT_PRETEST "example.com"
/* DISC_SHIFT_A, _B, _C are Marsaglia's xorshift64 shifts. */
#define DISC_SHIFT_A 13
#define DISC_SHIFT_B 7
#define DISC_SHIFT_C 17

/* disc_addr is a compact IPv4 or IPv6 address with its port. */
typedef union disc_addr {
  struct sockaddr sa;
  struct sockaddr_in in;
  struct sockaddr_in6 in6;
} disc_addr;

typedef struct disc_cand {
  disc_addr addr;
  uint8_t source;
} disc_cand;

/* Slot states. */
#define DISC_SLOT_FREE 0
#define DISC_SLOT_ACTIVE 1
#define DISC_SLOT_CLOSING 2

typedef struct disc_slot {
  uv_udp_t udp;
  rp_disc *d;
  int state;
  size_t cand;
  uint16_t id;
  rp_tstamp sent_at;
  rp_tstamp deadline;
} disc_slot;

struct rp_disc {
  uv_loop_t *loop;
  const rp_mem *mem;
  rp_disc_options opts;
  /* Settings copied from the config. */
  uint32_t want, concurrency;
  rp_duration pace, timeout;
  rp_dns_name pretest;
  /* Candidates and the duplicate filter (hashes, 0 = empty). */
  disc_cand *cands;
  size_t ncands, cap_cands, next;
  uint64_t *hash;
  size_t hash_cap;
  /* Slots; free ones are listed in free_idx (nfree of them). */
  disc_slot *slots;
  size_t *free_idx;
  size_t nfree, nactive;
  uv_timer_t timer;
  rp_tstamp start_at, next_start_at;
  uint64_t rng;
  uint8_t qbuf[DISC_QBUF_LEN];
  uint8_t rbuf[DISC_RBUF_LEN];
  rp_disc_stats stats;
  int done;
  int stopping;
  size_t nhandles;
  rp_disc_closed_cb closed_cb;
  void *closed_ud;
};

const char *rp_disc_source_str(rp_disc_source source) {
  switch (source) {
  case RP_DISC_SOURCE_SAVED:
    return "saved";
  case RP_DISC_SOURCE_SYSTEM:
    return "system";
  case RP_DISC_SOURCE_COUNTRY:
    return "country";
  case RP_DISC_SOURCE_GLOBAL:
    return "global";
  case RP_DISC_SOURCE_RANGE:
    return "range";
  case RP_DISC_SOURCE_LIST:
    return "list";
  }
  return "unknown";
}

const char *rp_disc_result_str(rp_disc_result result) {
  switch (result) {
  case RP_DISC_PASSED:
    return "passed";
  case RP_DISC_TIMEOUT:
    return "timeout";
  case RP_DISC_REFUSED:
    return "refused";
  case RP_DISC_BAD_RCODE:
    return "bad_rcode";
  case RP_DISC_UNREACHABLE:
    return "unreachable";
  case RP_DISC_SEND_FAILED:
    return "send_failed";
  }
  return "unknown";
}

static void disc_log(rp_disc *d, rp_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void disc_log(rp_disc *d, rp_log_level level, const char *fmt, ...) {
  char line[DISC_LOG_LINE];
  va_list ap;
  int n;
  if (!d->opts.log || level > d->opts.log_level) {
    return;
  }
  n = snprintf(line, sizeof(line), "t=%.3f ",
               (double)uv_hrtime() / (double)RP_SECONDS);
  if (n < 0 || (size_t)n >= sizeof(line)) {
    n = 0;
  }
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
  va_end(ap);
  d->opts.log(level, line, d->opts.user_data);
}

static uint64_t disc_rand(rp_disc *d) {
  uint64_t x = d->rng;
  x ^= x << DISC_SHIFT_A;
  x ^= x >> DISC_SHIFT_B;
  x ^= x << DISC_SHIFT_C;
  d->rng = x;
  return x;
}

/* disc_format writes "IP:PORT" or "[IP]:PORT" for |a|. */
static void disc_format(const disc_addr *a, char *out, size_t cap) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (a->sa.sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &a->in6.sin6_addr, host, sizeof(host));
    snprintf(out, cap, "[%s]:%u", host, ntohs(a->in6.sin6_port));
  } else {
    inet_ntop(AF_INET, &a->in.sin_addr, host, sizeof(host));
    snprintf(out, cap, "%s:%u", host, ntohs(a->in.sin_port));
  }
}

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
  char *buf = NULL;
  size_t n = 0, cap = 0;
  if (!f) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return RP_ERR_CONFIG;
  }
  for (;;) {
    size_t got;
    if (cap - n < 2) {
      size_t ncap = cap ? cap * 2 : DISC_RBUF_LEN;
      char *nb = mem->realloc(buf, ncap, mem->user_data);
      if (!nb) {
        mem->free(buf, mem->user_data);
        fclose(f);
        return RP_ERR_NOMEM;
      }
      buf = nb;
      cap = ncap;
    }
    got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) {
      break;
    }
  }
  if (ferror(f)) {
    snprintf(err, errlen, "%s: read error", path);
    mem->free(buf, mem->user_data);
    fclose(f);
    return RP_ERR_CONFIG;
  }
  fclose(f);
  buf[n] = '\0';
  *pbuf = buf;
  *plen = n;
  return 0;
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
        (ntohl(base.s_addr) & ~hostmask) | ((uint32_t)disc_rand(d) & hostmask);
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

static int disc_build(rp_disc *d, const rp_config_discovery *cfg, char *err,
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
      disc_log(d, RP_LOG_INFO, "ev=disc_no_system why=\"%s\"", why);
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
        disc_log(d, RP_LOG_WARN,
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

/* ------------------------------------------------------------------ */
/* Pretests                                                             */
/* ------------------------------------------------------------------ */

static void disc_pump(rp_disc *d, rp_tstamp now);

static void disc_free(rp_disc *d) {
  const rp_mem *m = d->mem;
  m->free(d->cands, m->user_data);
  m->free(d->hash, m->user_data);
  m->free(d->slots, m->user_data);
  m->free(d->free_idx, m->user_data);
  m->free(d, m->user_data);
}

static void disc_handle_closed(rp_disc *d) {
  --d->nhandles;
  if (d->stopping && d->nhandles == 0) {
    if (d->closed_cb) {
      d->closed_cb(d, d->closed_ud);
    }
    disc_free(d);
  }
}

static void disc_timer_closed(uv_handle_t *h) { disc_handle_closed(h->data); }

static void disc_slot_closed(uv_handle_t *h) {
  disc_slot *s = h->data;
  rp_disc *d = s->d;
  s->state = DISC_SLOT_FREE;
  d->free_idx[d->nfree++] = (size_t)(s - d->slots);
  if (!d->stopping) {
    disc_pump(d, (rp_tstamp)uv_hrtime());
  }
  disc_handle_closed(d);
}

static void disc_finish_run(rp_disc *d, rp_tstamp now) {
  size_t i;
  if (d->done) {
    return;
  }
  d->done = 1;
  d->stats.elapsed = now - d->start_at;
  uv_timer_stop(&d->timer);
  /* Checks still in flight no longer matter. */
  for (i = 0; i < d->concurrency; ++i) {
    if (d->slots[i].state == DISC_SLOT_ACTIVE) {
      d->slots[i].state = DISC_SLOT_CLOSING;
      --d->nactive;
      uv_close((uv_handle_t *)&d->slots[i].udp, disc_slot_closed);
    }
  }
  disc_log(d, RP_LOG_INFO,
           "ev=disc_done candidates=%zu tested=%zu passed=%zu timeout=%zu "
           "unreachable=%zu refused=%zu elapsed_ms=%llu",
           d->stats.candidates, d->stats.tested, d->stats.passed,
           d->stats.by_result[RP_DISC_TIMEOUT],
           d->stats.by_result[RP_DISC_UNREACHABLE],
           d->stats.by_result[RP_DISC_REFUSED],
           (unsigned long long)(d->stats.elapsed / RP_MILLISECONDS));
  if (d->opts.on_done) {
    d->opts.on_done(&d->stats, d->opts.user_data);
  }
}

/* disc_slot_end reports the check of |s| and closes its socket. */
static void disc_slot_end(disc_slot *s, rp_disc_result result, rp_tstamp now) {
  rp_disc *d = s->d;
  const disc_cand *c = &d->cands[s->cand];
  char addr[RP_DISC_ADDR_LEN];
  rp_disc_report rep;
  if (s->state != DISC_SLOT_ACTIVE) {
    return;
  }
  s->state = DISC_SLOT_CLOSING;
  --d->nactive;
  uv_close((uv_handle_t *)&s->udp, disc_slot_closed);
  ++d->stats.by_result[result];
  disc_format(&c->addr, addr, sizeof(addr));
  rep = (rp_disc_report){.addr = addr,
                         .sa = &c->addr.sa,
                         .source = (rp_disc_source)c->source,
                         .result = result,
                         .latency = result == RP_DISC_PASSED ? now - s->sent_at
                                                             : RP_TSTAMP_UNSET};
  if (d->opts.on_result && !d->done) {
    d->opts.on_result(&rep, d->opts.user_data);
  }
  if (result == RP_DISC_PASSED && !d->done) {
    ++d->stats.passed;
    disc_log(d, RP_LOG_INFO,
             "ev=disc_found addr=%s source=%s latency_ms=%.1f n=%zu", addr,
             rp_disc_source_str(rep.source),
             (double)rep.latency / (double)RP_MILLISECONDS, d->stats.passed);
    if (d->opts.on_found) {
      d->opts.on_found(&rep, d->opts.user_data);
    }
  }
  if (!d->done && (d->stats.passed >= d->want ||
                   (d->next >= d->ncands && d->nactive == 0))) {
    disc_finish_run(d, now);
  }
}

static void disc_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  disc_slot *s = h->data;
  (void)suggested;
  buf->base = (char *)s->d->rbuf;
  buf->len = sizeof(s->d->rbuf);
}

static void disc_recv_cb(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                         const struct sockaddr *addr, unsigned flags) {
  disc_slot *s = h->data;
  const uint8_t *p = (const uint8_t *)buf->base;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  (void)addr;
  (void)flags;
  if (s->state != DISC_SLOT_ACTIVE) {
    return;
  }
  if (nread < 0) {
    disc_slot_end(s, RP_DISC_UNREACHABLE, now);
    return;
  }
  switch (rp_dns_check_reply(p, (size_t)nread, s->id)) {
  case RP_DNS_REPLY_OTHER:
    return; /* not our answer: keep waiting */
  case RP_DNS_REPLY_WORKS:
    disc_slot_end(s, RP_DISC_PASSED, now);
    break;
  case RP_DNS_REPLY_REFUSED:
    disc_slot_end(s, RP_DISC_REFUSED, now);
    break;
  case RP_DNS_REPLY_BAD_RCODE:
    disc_slot_end(s, RP_DISC_BAD_RCODE, now);
    break;
  }
}

/* disc_start_one starts the check of the next candidate in a free slot. */
static void disc_start_one(rp_disc *d, rp_tstamp now) {
  disc_slot *s = &d->slots[d->free_idx[--d->nfree]];
  const disc_cand *c;
  rp_ssize qlen;
  uv_buf_t b;
  int rv;
  s->cand = d->next++;
  c = &d->cands[s->cand];
  ++d->stats.tested;
  rv = uv_udp_init(d->loop, &s->udp);
  if (rv != 0) {
    /* No handle: the slot stays free; count the candidate as failed. */
    d->free_idx[d->nfree++] = (size_t)(s - d->slots);
    ++d->stats.by_result[RP_DISC_SEND_FAILED];
    return;
  }
  s->udp.data = s;
  s->state = DISC_SLOT_ACTIVE;
  ++d->nactive;
  ++d->nhandles;
  s->id = (uint16_t)disc_rand(d);
  s->sent_at = now;
  s->deadline = now + d->timeout;
  rv = uv_udp_connect(&s->udp, &c->addr.sa);
  if (rv == 0) {
    rv = uv_udp_recv_start(&s->udp, disc_alloc_cb, disc_recv_cb);
  }
  if (rv != 0) {
    disc_slot_end(s, RP_DISC_UNREACHABLE, now);
    return;
  }
  qlen = rp_dns_build_query(d->qbuf, sizeof(d->qbuf), s->id, &d->pretest,
                            RP_DNS_TYPE_A, RP_DNS_EDNS_UDP_SIZE);
  if (qlen <= 0) {
    disc_slot_end(s, RP_DISC_SEND_FAILED, now);
    return;
  }
  b = uv_buf_init((char *)d->qbuf, (unsigned int)qlen);
  rv = uv_udp_try_send(&s->udp, &b, 1, NULL);
  if (rv < 0) {
    disc_slot_end(
        s, rv == UV_ECONNREFUSED ? RP_DISC_UNREACHABLE : RP_DISC_SEND_FAILED,
        now);
  }
}

static void disc_pump(rp_disc *d, rp_tstamp now) {
  while (!d->done && !d->stopping && d->nfree > 0 && d->next < d->ncands &&
         d->stats.passed < d->want) {
    if (d->pace) {
      if (now < d->next_start_at) {
        break;
      }
      d->next_start_at = now + d->pace;
    }
    disc_start_one(d, now);
  }
  if (!d->done && d->next >= d->ncands && d->nactive == 0) {
    disc_finish_run(d, now);
  }
}

static void disc_timer_cb(uv_timer_t *t) {
  rp_disc *d = t->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  size_t i;
  for (i = 0; i < d->concurrency && !d->done; ++i) {
    disc_slot *s = &d->slots[i];
    if (s->state == DISC_SLOT_ACTIVE && now >= s->deadline) {
      disc_slot_end(s, RP_DISC_TIMEOUT, now);
    }
  }
  disc_pump(d, now);
}

int rp_disc_start(rp_disc **pd, uv_loop_t *loop, const rp_disc_options *opts,
                  char *err, size_t errlen) {
  const rp_mem *mem = opts->mem ? opts->mem : rp_mem_default();
  const rp_config_discovery *cfg = opts->config;
  rp_disc *d;
  size_t i;
  int rv;
  char msg[RP_CONFIG_ERRLEN];
  if (!err || !errlen) {
    err = msg;
    errlen = sizeof(msg);
  }
  err[0] = '\0';
  if (!cfg) {
    snprintf(err, errlen, "no discovery settings");
    return RP_ERR_INVALID_ARGUMENT;
  }
  d = mem->calloc(1, sizeof(*d), mem->user_data);
  if (!d) {
    return RP_ERR_NOMEM;
  }
  d->loop = loop;
  d->mem = mem;
  d->opts = *opts;
  d->want = cfg->want ? cfg->want : RP_CONFIG_DISCOVERY_WANT;
  d->concurrency =
      cfg->concurrency ? cfg->concurrency : RP_CONFIG_DISCOVERY_CONCURRENCY;
  d->pace = cfg->pace;
  d->timeout = cfg->timeout ? cfg->timeout : RP_CONFIG_DISCOVERY_TIMEOUT;
  d->rng = uv_hrtime() | 1u;
  d->start_at = (rp_tstamp)uv_hrtime();
  if (rp_dns_name_from_text(&d->pretest,
                            opts->pretest_domain && opts->pretest_domain[0]
                                ? opts->pretest_domain
                                : DISC_DEFAULT_PRETEST) != 0) {
    snprintf(err, errlen, "discovery: bad pretest domain");
    rv = RP_ERR_CONFIG;
    goto fail;
  }
  rv = disc_build(d, cfg, err, errlen);
  if (rv != 0) {
    goto fail;
  }
  d->stats.candidates = d->ncands;
  d->slots = mem->calloc(d->concurrency, sizeof(*d->slots), mem->user_data);
  d->free_idx =
      mem->calloc(d->concurrency, sizeof(*d->free_idx), mem->user_data);
  if (!d->slots || !d->free_idx) {
    rv = RP_ERR_NOMEM;
    goto fail;
  }
  for (i = 0; i < d->concurrency; ++i) {
    d->slots[i].d = d;
    d->free_idx[d->nfree++] = d->concurrency - 1 - i;
  }
  uv_timer_init(loop, &d->timer);
  d->timer.data = d;
  d->nhandles = 1;
  uv_timer_start(&d->timer, disc_timer_cb, DISC_TICK_MS, DISC_TICK_MS);
  disc_log(d, RP_LOG_INFO,
           "ev=disc_start candidates=%zu skipped=%zu want=%u concurrency=%u "
           "timeout_ms=%llu",
           d->ncands, d->stats.skipped, d->want, d->concurrency,
           (unsigned long long)(d->timeout / RP_MILLISECONDS));
  *pd = d;
  disc_pump(d, d->start_at);
  return 0;

fail:
  disc_free(d);
  return rv;
}

void rp_disc_stop(rp_disc *d, rp_disc_closed_cb closed_cb, void *user_data) {
  if (d->stopping) {
    return;
  }
  disc_finish_run(d, (rp_tstamp)uv_hrtime());
  d->stopping = 1;
  d->closed_cb = closed_cb;
  d->closed_ud = user_data;
  uv_close((uv_handle_t *)&d->timer, disc_timer_closed);
}

void rp_disc_get_stats(const rp_disc *d, rp_disc_stats *stats) {
  *stats = d->stats;
  if (!d->done) {
    stats->elapsed = (rp_tstamp)uv_hrtime() - d->start_at;
  }
}
