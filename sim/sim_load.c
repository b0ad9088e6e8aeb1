/*
 * sim_load.c: load specs and the queries they send (see sim_load.h).
 *
 * IMPLEMENTATION NOTES
 * - The parser follows fr_spec_parse: comma-separated key=value items,
 *   an error names the key and the value.
 * - Answers' sizes are asked for in the first label, the syntax the fake
 *   resolvers' answer mode reads (fr_answer_txt_size), so the same names
 *   would work against a loopback fakeres --answer.
 */
#include "sim_load.h"

#include "dns.h"
#include "fr_profile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SIM_LOAD_DEFAULT_SECONDS is the default length of a load. */
#define SIM_LOAD_DEFAULT_SECONDS (20 * RP_SECONDS)

/* SIM_LOAD_DEFAULT_THINK: a worker's pause between an answer and its
   next query. A real tunnel client spends some CPU and two loopback hops
   there; without it a zero-latency resolver would let the closed loop
   run at an infinite rate in virtual time. */
#define SIM_LOAD_DEFAULT_THINK (1 * RP_MILLISECONDS)

/* SIM_LOAD_MAX_RATE bounds rate= (q/s); past it a run would take ages. */
#define SIM_LOAD_MAX_RATE 1000000.0

/* SIM_LOAD_MAX_WORKERS bounds workers=. */
#define SIM_LOAD_MAX_WORKERS 100000u

/* SIM_LOAD_EDNS_SIZE is the EDNS UDP size of every query (the tunnels'
   1232). */
#define SIM_LOAD_EDNS_SIZE RP_DNS_EDNS_UDP_SIZE

/* SIM_LOAD_DOMAIN is the zone every query name is under. */
#define SIM_LOAD_DOMAIN "t.sim.example"

/* SIM_LOAD_ITEM_MAX is the longest key=value item read. */
#define SIM_LOAD_ITEM_MAX 128

/* SIM_LOAD_NAME_MAX is a buffer for one query name as text. */
#define SIM_LOAD_NAME_MAX 96

/* SIM_LOAD_PERCENT is 100 %. */
#define SIM_LOAD_PERCENT 100.0

/* SIM_LOAD_ID_MASK takes the DNS ID from a serial. */
#define SIM_LOAD_ID_MASK 0xffffu

void sim_load_default(sim_load *load) {
  *load = (sim_load){.kind = SIM_LOAD_NONE,
                     .rate_qps = 0.0,
                     .workers = 0,
                     .start = 0,
                     .duration = SIM_LOAD_DEFAULT_SECONDS,
                     .think = SIM_LOAD_DEFAULT_THINK,
                     .fail_pause = RP_TSTAMP_UNSET,
                     .size = SIM_LOAD_SIZE_FULL,
                     .empty_ppm = 0};
}

/* load_number reads a finite non-negative decimal. Returns 0 or -1. */
static int load_number(const char *text, double *pv) {
  char *end = NULL;
  double v;
  if (text[0] < '0' || text[0] > '9') {
    return -1;
  }
  errno = 0;
  v = strtod(text, &end);
  if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0.0) {
    return -1;
  }
  *pv = v;
  return 0;
}

/* load_seconds reads a duration: a plain number of seconds or a
   duration with a unit. Returns 0 or -1. */
static int load_seconds(const char *text, rp_duration *pv) {
  double v;
  if (load_number(text, &v) == 0) {
    if (v > (double)(UINT64_MAX / RP_SECONDS)) {
      return -1;
    }
    *pv = (rp_duration)(v * (double)RP_SECONDS);
    return 0;
  }
  return fr_parse_duration(text, pv) == 0 ? 0 : -1;
}

/* load_item applies one key=value item. Returns 0 or RP_ERR_CONFIG. */
static int load_item(sim_load *load, const char *key, const char *val,
                     char *errbuf, size_t errlen) {
  double v;
  if (strcmp(key, "rate") == 0) {
    if (load_number(val, &v) != 0 || v <= 0.0 || v > SIM_LOAD_MAX_RATE) {
      fr_set_err(errbuf, errlen,
               "rate: bad value '%s' (want queries per second, > 0)", val);
      return RP_ERR_CONFIG;
    }
    load->rate_qps = v;
    return 0;
  }
  if (strcmp(key, "workers") == 0) {
    if (load_number(val, &v) != 0 || v < 1.0 ||
        v > (double)SIM_LOAD_MAX_WORKERS || v != floor(v)) {
      fr_set_err(errbuf, errlen, "workers: bad value '%s' (want 1..%u)", val,
               SIM_LOAD_MAX_WORKERS);
      return RP_ERR_CONFIG;
    }
    load->workers = (uint32_t)v;
    return 0;
  }
  if (strcmp(key, "seconds") == 0 || strcmp(key, "start") == 0 ||
      strcmp(key, "think") == 0 || strcmp(key, "failpause") == 0) {
    rp_duration d = 0;
    if (load_seconds(val, &d) != 0) {
      fr_set_err(errbuf, errlen,
               "%s: bad value '%s' (want seconds or a duration like 500ms)",
               key, val);
      return RP_ERR_CONFIG;
    }
    if (key[0] == 's' && key[1] == 'e') {
      load->duration = d;
    } else if (key[0] == 's') {
      load->start = d;
    } else if (key[0] == 'f') {
      load->fail_pause = d;
    } else {
      load->think = d;
    }
    return 0;
  }
  if (strcmp(key, "size") == 0) {
    if (strcmp(val, "full") == 0) {
      load->size = SIM_LOAD_SIZE_FULL;
      return 0;
    }
    if (load_number(val, &v) != 0 || v != floor(v) ||
        v > (double)RP_DNS_MAX_MSG_LEN) {
      fr_set_err(errbuf, errlen,
               "size: bad value '%s' (want payload bytes or full)", val);
      return RP_ERR_CONFIG;
    }
    load->size = (size_t)v;
    return 0;
  }
  if (strcmp(key, "empty") == 0) {
    char num[SIM_LOAD_ITEM_MAX];
    size_t n = strlen(val);
    snprintf(num, sizeof(num), "%s", val);
    if (n > 0 && num[n - 1] == '%') {
      num[n - 1] = '\0';
    }
    if (load_number(num, &v) != 0 || v > SIM_LOAD_PERCENT) {
      fr_set_err(errbuf, errlen, "empty: bad value '%s' (want a percentage)",
               val);
      return RP_ERR_CONFIG;
    }
    load->empty_ppm = (uint32_t)lround(v / SIM_LOAD_PERCENT * FR_PPM);
    return 0;
  }
  fr_set_err(errbuf, errlen,
           "unknown load key '%s' (rate, workers, seconds, start, size, "
           "empty, think, failpause)",
           key);
  return RP_ERR_CONFIG;
}

int sim_load_parse(sim_load *load, const char *text, char *errbuf,
                   size_t errlen) {
  const char *p = text;
  sim_load_default(load);
  while (*p) {
    char item[SIM_LOAD_ITEM_MAX];
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    char *eq;
    int rv;
    if (n == 0 || n >= sizeof(item)) {
      fr_set_err(errbuf, errlen, "load: empty or overlong item in '%s'", text);
      return RP_ERR_CONFIG;
    }
    memcpy(item, p, n);
    item[n] = '\0';
    eq = strchr(item, '=');
    if (!eq) {
      fr_set_err(errbuf, errlen, "load: '%s' is not key=value", item);
      return RP_ERR_CONFIG;
    }
    *eq = '\0';
    rv = load_item(load, item, eq + 1, errbuf, errlen);
    if (rv != 0) {
      return rv;
    }
    p += n;
    if (*p == ',') {
      ++p;
    }
  }
  if ((load->rate_qps > 0.0) == (load->workers > 0)) {
    fr_set_err(errbuf, errlen, "load: set exactly one of rate= and workers=");
    return RP_ERR_CONFIG;
  }
  load->kind = load->rate_qps > 0.0 ? SIM_LOAD_RATE : SIM_LOAD_WORKERS;
  return 0;
}

void sim_load_format(const sim_load *load, char *out, size_t cap) {
  char size[SIM_LOAD_ITEM_MAX];
  if (load->size == SIM_LOAD_SIZE_FULL) {
    snprintf(size, sizeof(size), "full");
  } else {
    snprintf(size, sizeof(size), "%zu", load->size);
  }
  switch (load->kind) {
  case SIM_LOAD_NONE:
    snprintf(out, cap, "none");
    return;
  case SIM_LOAD_RATE:
    snprintf(out, cap, "rate=%g,seconds=%g,start=%g,size=%s,empty=%g%%",
             load->rate_qps, (double)load->duration / (double)RP_SECONDS,
             (double)load->start / (double)RP_SECONDS, size,
             (double)load->empty_ppm * SIM_LOAD_PERCENT / FR_PPM);
    return;
  case SIM_LOAD_WORKERS: {
    char fail[SIM_LOAD_ITEM_MAX];
    if (load->fail_pause == RP_TSTAMP_UNSET) {
      fail[0] = '\0';
    } else {
      snprintf(fail, sizeof(fail), ",failpause=%gms",
               (double)load->fail_pause / (double)RP_MILLISECONDS);
    }
    snprintf(out, cap,
             "workers=%" PRIu32 ",seconds=%g,start=%g,size=%s,empty=%g%%,"
             "think=%gms%s",
             load->workers, (double)load->duration / (double)RP_SECONDS,
             (double)load->start / (double)RP_SECONDS, size,
             (double)load->empty_ppm * SIM_LOAD_PERCENT / FR_PPM,
             (double)load->think / (double)RP_MILLISECONDS, fail);
    return;
  }
  }
}

rp_ssize sim_load_build_query(const sim_load *load, uint64_t serial, int empty,
                              uint8_t *out, size_t cap) {
  char text[SIM_LOAD_NAME_MAX];
  rp_dns_name name;
  if (empty) {
    snprintf(text, sizeof(text), "s0.q%" PRIu64 "." SIM_LOAD_DOMAIN, serial);
  } else if (load->size != SIM_LOAD_SIZE_FULL) {
    snprintf(text, sizeof(text), "s%zu.q%" PRIu64 "." SIM_LOAD_DOMAIN,
             load->size, serial);
  } else {
    snprintf(text, sizeof(text), "q%" PRIu64 "." SIM_LOAD_DOMAIN, serial);
  }
  if (rp_dns_name_from_text(&name, text) != 0) {
    return RP_ERR_NOBUF;
  }
  return rp_dns_build_query(out, cap, (uint16_t)(serial & SIM_LOAD_ID_MASK),
                            &name, RP_DNS_TYPE_TXT, SIM_LOAD_EDNS_SIZE);
}
