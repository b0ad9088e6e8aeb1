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
#include "disc_internal.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



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

void rp_disc_log(rp_disc *d, rp_log_level level, const char *fmt, ...) {
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

uint64_t rp_disc_rand(rp_disc *d) {
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
  rp_disc_log(d, RP_LOG_INFO,
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
    rp_disc_log(d, RP_LOG_INFO,
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
  s->id = (uint16_t)rp_disc_rand(d);
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
  rv = rp_disc_build(d, cfg, err, errlen);
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
  rp_disc_log(d, RP_LOG_INFO,
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
