/*
 * sim.c: the simulator's driver (see sim.h).
 *
 * IMPLEMENTATION NOTES
 * - Time. The clock is |now|, a plain variable. The loop takes the
 *   earlier of the heap's first event and rp_pool_get_expiry(); on a tie
 *   the pool's expiry runs first (both orders are deterministic; this
 *   one lets timers that fall due at an event's instant fire before the
 *   event, as a libuv loop runs timers before I/O). An expiry in the
 *   past runs at |now|; time never goes back.
 * - Re-entrancy. The core's callbacks must not call the core, so they
 *   only record and push events: a resolver's reply is decided in
 *   send_query (the fake resolver sees the query when it is sent, as on
 *   loopback) and arrives later as an event; a worker's next query is an
 *   event after its answer.
 * - Packets. A query waiting for its reply is kept in a slot of a
 *   growable arena (no allocation per packet once warm); the reply is
 *   built from it when the reply event fires, by the fake resolvers' own
 *   answer code.
 * - Randomness. One seed; the pool's rand callback, the load's draws and
 *   each resolver's stream are separate splitmix64 streams split from it,
 *   so adding a resolver does not shift the others' draws.
 * - Trace hash. FNV-1a 64 over a fixed tuple per event (time, kind,
 *   arguments), per send (resolver, upstream id, length, verdict) and per
 *   delivery (client, flags, length): any change of behaviour changes it.
 * - Guards. max_events stops a closed loop that never lets time advance;
 *   an expiry that stays at |now| after SIM_STALL_LIMIT calls is a core
 *   bug reported as such rather than a hang.
 */
#include "sim.h"

#include "dns.h"
#include "sim_heap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SIM_PKT_MAX is the largest query kept for a reply, bytes. The load's
   queries and the pool's probes are far shorter; a longer send is
   counted as lost. */
#define SIM_PKT_MAX SIM_LOAD_QUERY_MAX

/* SIM_DEFAULT_SAMPLE is the default timeline step. */
#define SIM_DEFAULT_SAMPLE (1 * RP_SECONDS)

/* SIM_DEFAULT_MAX_EVENTS guards against runaway runs (about a minute of
   CPU). */
#define SIM_DEFAULT_MAX_EVENTS 100000000ULL

/* SIM_DRAIN_GRACE is added to the pool's deadline for the default drain
   and for a worker's give-up time: past it the pool must have answered
   or failed every query. */
#define SIM_DRAIN_GRACE (1 * RP_SECONDS)

/* SIM_STALL_LIMIT is how many expiry calls at one instant, with no event
   between, mean the core's expiry does not advance. */
#define SIM_STALL_LIMIT 100000u

/* SIM_TRACE_LINE is the size of one trace line. */
#define SIM_TRACE_LINE 512

/* SIM_INITIAL_CAP is the first size of the growable arrays. */
#define SIM_INITIAL_CAP 64u

/* SIM_SEED_* split the run's seed into streams (odd constants). */
#define SIM_SEED_POOL 0x9e3779b97f4a7c15ULL
#define SIM_SEED_LOAD 0xc2b2ae3d27d4eb4fULL
#define SIM_SEED_RES 0x165667b19e3779f9ULL

/* FNV-1a 64 parameters. */
#define SIM_FNV_OFFSET 0xcbf29ce484222325ULL
#define SIM_FNV_PRIME 0x100000001b3ULL

/* SIM_NO_WORKER marks a rate-load query. */
#define SIM_NO_WORKER UINT32_MAX

/* SIM_NO_SERIAL marks a worker with no query out. */
#define SIM_NO_SERIAL UINT64_MAX

/* SIM_REPLY_* pack a reply event's verdict, rcode and stream flag into
   sim_event.b. */
#define SIM_REPLY_RCODE_SHIFT 8
#define SIM_REPLY_STREAM_SHIFT 16
#define SIM_REPLY_BYTE_MASK 0xffu

/* SIM_BYTE_BITS is the bits in a byte (hash and rand byte splitting). */
#define SIM_BYTE_BITS 8u

/* SIM_HASH_HI, SIM_HASH_MID and SIM_HASH_LO place fields of one event in
   the 64-bit words mixed into the trace hash. */
#define SIM_HASH_HI 32
#define SIM_HASH_MID 16
#define SIM_HASH_LO 8

/* SIM_NLEVELS is the number of log levels counted. */
#define SIM_NLEVELS (RP_LOG_DEBUG + 1)

/* sim_ev_kind is the meaning of a heap event. */
typedef enum sim_ev_kind {
  SIM_EV_REPLY = 1,      /* a resolver's reply arrives: a = resolver, c =
                            slot, b = verdict | rcode | stream */
  SIM_EV_RATE,           /* the rate load's query b goes */
  SIM_EV_WORKER,         /* worker a sends its next query */
  SIM_EV_WORKER_TIMEOUT, /* worker a gives up query b */
  SIM_EV_HOOK,           /* hook a changes a profile */
  SIM_EV_SAMPLE          /* a timeline sample */
} sim_ev_kind;

/* sim_status is a client query's outcome so far. */
typedef enum sim_status {
  SIM_STATUS_PENDING = 0,
  SIM_STATUS_ANSWERED,
  SIM_STATUS_FAILED
} sim_status;

/* sim_record is one client query. */
typedef struct sim_record {
  /* submit is when it was submitted, ns. */
  rp_tstamp submit;
  /* first is when its first delivery came, or RP_TSTAMP_UNSET. */
  rp_tstamp first;
  /* worker is its worker, or SIM_NO_WORKER. */
  uint32_t worker;
  /* status is a sim_status. */
  uint8_t status;
} sim_record;

/* sim_slot is a query kept until its reply is built. */
typedef struct sim_slot {
  /* len is the query's length, bytes. */
  size_t len;
  /* data holds the query. */
  uint8_t data[SIM_PKT_MAX];
} sim_slot;

/* sim_hook is a scheduled profile change. */
typedef struct sim_hook {
  /* index is the resolver. */
  uint32_t index;
  /* text is the spec change, owned. */
  char *text;
} sim_hook;

struct sim {
  sim_config cfg;
  const rp_mem *mem;
  rp_pool *pool;
  sim_heap heap;
  /* now is the virtual time, ns. */
  rp_tstamp now;
  /* started is 1 after the first sim_run_until. */
  int started;
  /* cb_error is an error a callback met (reported after the core
     returns). */
  int cb_error;
  char err[SIM_ERRLEN];
  fr_rng pool_rng;
  fr_rng load_rng;
  sim_resolver *res;
  uint32_t nres, capres;
  sim_hook *hooks;
  uint32_t nhooks, caphooks;
  sim_slot *slots;
  uint32_t nslots;
  uint32_t *free_slots;
  uint32_t nfree;
  sim_record *rec;
  size_t nrec, caprec;
  /* worker_serial is each worker's query out, or SIM_NO_SERIAL. */
  uint64_t *worker_serial;
  sim_sample *samples;
  sim_sample_resolver *sres;
  size_t nsamples, capsamples;
  uint64_t hash;
  uint64_t events;
  uint64_t extra;
  uint64_t unknown_deliveries;
  uint64_t oversize;
  uint64_t worker_timeouts;
  uint64_t answered, failed;
  uint64_t log_lines[SIM_NLEVELS];
  /* reply is the buffer replies are built in. */
  uint8_t reply[RP_DNS_MAX_MSG_LEN];
  /* query is the buffer client queries are built in. */
  uint8_t query[SIM_LOAD_QUERY_MAX];
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

static void sim_set_error(sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sim_set_error(sim *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, sizeof(s->err), fmt, ap);
  va_end(ap);
}

/* sim_hash_u64 mixes |v| into the trace hash, byte by byte. */
static void sim_hash_u64(sim *s, uint64_t v) {
  size_t i;
  for (i = 0; i < sizeof(v); ++i) {
    s->hash ^= (v >> (i * SIM_BYTE_BITS)) & SIM_REPLY_BYTE_MASK;
    s->hash *= SIM_FNV_PRIME;
  }
}

/* sim_secs returns |t| in seconds, for trace lines. */
static double sim_secs(rp_tstamp t) { return (double)t / (double)RP_SECONDS; }

static void sim_trace(const sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* sim_trace writes one trace line when tracing. */
static void sim_trace(const sim *s, const char *fmt, ...) {
  char line[SIM_TRACE_LINE];
  int n;
  va_list ap;
  if (!s->cfg.trace) {
    return;
  }
  n = snprintf(line, sizeof(line), "t=%.6f ", sim_secs(s->now));
  if (n < 0 || (size_t)n >= sizeof(line)) {
    return;
  }
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
  va_end(ap);
  s->cfg.trace(line, s->cfg.trace_data);
}

/* sim_grow makes room for one more element of |size| bytes in |*parr|
   (|*pcap| allocated). Returns 0 or RP_ERR_NOMEM. */
static int sim_grow(sim *s, void **parr, size_t len, size_t *pcap,
                    size_t size) {
  size_t ncap;
  void *n;
  if (len < *pcap) {
    return 0;
  }
  ncap = *pcap ? *pcap * 2 : SIM_INITIAL_CAP;
  if (ncap < *pcap || ncap > SIZE_MAX / size) {
    return RP_ERR_NOMEM;
  }
  n = s->mem->realloc(*parr, ncap * size, s->mem->user_data);
  if (!n) {
    return RP_ERR_NOMEM;
  }
  *parr = n;
  *pcap = ncap;
  return 0;
}

/* sim_push schedules an event. Returns 0 or RP_ERR_NOMEM. */
static int sim_push(sim *s, rp_tstamp ts, sim_ev_kind kind, uint32_t a,
                    uint64_t b, uint32_t c) {
  sim_event ev = {
      .ts = ts, .seq = 0, .kind = (uint32_t)kind, .a = a, .b = b, .c = c};
  return sim_heap_push(&s->heap, &ev);
}

/* ------------------------------------------------------------------ */
/* Packet slots                                                         */
/* ------------------------------------------------------------------ */

/* slot_alloc takes a free slot into |*pslot|, doubling the arena when
   none is free. Returns 0 or RP_ERR_NOMEM. */
static int slot_alloc(sim *s, uint32_t *pslot) {
  if (s->nfree == 0) {
    size_t old = s->nslots;
    size_t ncap = old ? old * 2 : SIM_INITIAL_CAP;
    size_t i;
    sim_slot *ns;
    uint32_t *nf;
    if (ncap > UINT32_MAX || ncap > SIZE_MAX / sizeof(sim_slot)) {
      return RP_ERR_NOMEM;
    }
    ns = s->mem->realloc(s->slots, ncap * sizeof(sim_slot), s->mem->user_data);
    if (!ns) {
      return RP_ERR_NOMEM;
    }
    s->slots = ns;
    nf = s->mem->realloc(s->free_slots, ncap * sizeof(uint32_t),
                         s->mem->user_data);
    if (!nf) {
      return RP_ERR_NOMEM;
    }
    s->free_slots = nf;
    /* Highest first, so the lowest new slot is taken first. */
    for (i = ncap; i > old; --i) {
      s->free_slots[s->nfree++] = (uint32_t)(i - 1);
    }
    s->nslots = (uint32_t)ncap;
  }
  *pslot = s->free_slots[--s->nfree];
  return 0;
}

/* slot_free returns |slot| to the free list. */
static void slot_free(sim *s, uint32_t slot) {
  s->free_slots[s->nfree++] = slot;
}

/* ------------------------------------------------------------------ */
/* Core callbacks                                                       */
/* ------------------------------------------------------------------ */

static int sim_cb_send_query(rp_pool *pool, uint32_t resolver_id,
                             void *resolver_user_data, uint16_t upstream_id,
                             const uint8_t *data, size_t len, uint32_t flags,
                             void *user_data) {
  sim *s = user_data;
  uint32_t idx = (uint32_t)(uintptr_t)resolver_user_data;
  sim_resolver *r;
  fr_decision d;
  uint32_t slot = 0;
  uint64_t b;
  int stream = (flags & RP_SEND_STREAM) != 0;
  (void)pool;
  (void)resolver_id;
  if (idx >= s->nres) {
    s->cb_error = RP_ERR_NOT_FOUND;
    sim_set_error(s, "send_query for unknown resolver user data %" PRIu32, idx);
    return -1;
  }
  r = &s->res[idx];
  sim_resolver_receive(r, s->now, &d);
  sim_hash_u64(s, s->now);
  sim_hash_u64(s, ((uint64_t)idx << SIM_HASH_HI) |
                      ((uint64_t)upstream_id << SIM_HASH_MID) |
                      ((uint64_t)d.verdict << SIM_HASH_LO) | flags);
  sim_hash_u64(s, len);
  sim_trace(
      s,
      "ev=send srv=%s id=%u len=%zu flags=%" PRIu32 " verdict=%s delay_ms=%.3f",
      r->spec.name, (unsigned)upstream_id, len, flags,
      fr_verdict_str(d.verdict), (double)d.delay / (double)RP_MILLISECONDS);
  if (d.verdict != FR_VERDICT_ANSWER && d.verdict != FR_VERDICT_REFUSE) {
    return 0;
  }
  if (len > SIM_PKT_MAX) {
    ++s->oversize;
    return 0;
  }
  if (slot_alloc(s, &slot) != 0) {
    s->cb_error = RP_ERR_NOMEM;
    return -1;
  }
  memcpy(s->slots[slot].data, data, len);
  s->slots[slot].len = len;
  b = (uint64_t)d.verdict | ((uint64_t)d.rcode << SIM_REPLY_RCODE_SHIFT) |
      ((uint64_t)stream << SIM_REPLY_STREAM_SHIFT);
  if (sim_push(s, rp_tstamp_add(rp_tstamp_add(s->now, d.delay), s->cfg.rtt),
               SIM_EV_REPLY, idx, b, slot) != 0) {
    slot_free(s, slot);
    s->cb_error = RP_ERR_NOMEM;
    return -1;
  }
  return 0;
}

static int sim_cb_deliver(rp_pool *pool, const rp_client *client,
                          const uint8_t *data, size_t len, uint32_t flags,
                          void *user_data) {
  sim *s = user_data;
  sim_record *rec;
  uint64_t serial = client->id;
  int ok;
  (void)pool;
  sim_hash_u64(s, s->now);
  sim_hash_u64(s, serial);
  sim_hash_u64(s, ((uint64_t)flags << SIM_HASH_HI) | len);
  if (serial >= s->nrec) {
    ++s->unknown_deliveries;
    return 0;
  }
  rec = &s->rec[serial];
  if (rec->status != SIM_STATUS_PENDING) {
    ++s->extra;
    return 0;
  }
  ok = !(flags & RP_DELIVER_FAILED) && len >= RP_DNS_HEADER_LEN &&
       rp_dns_rcode(data) == RP_DNS_RCODE_NOERROR;
  rec->first = s->now;
  rec->status = (uint8_t)(ok ? SIM_STATUS_ANSWERED : SIM_STATUS_FAILED);
  if (ok) {
    ++s->answered;
  } else {
    ++s->failed;
  }
  sim_trace(s,
            "ev=deliver q=%" PRIu64 " len=%zu flags=%" PRIu32
            " ok=%d latency_ms=%.3f",
            serial, len, flags, ok,
            (double)(s->now - rec->submit) / (double)RP_MILLISECONDS);
  if (rec->worker != SIM_NO_WORKER && s->worker_serial[rec->worker] == serial) {
    s->worker_serial[rec->worker] = SIM_NO_SERIAL;
    rp_duration pause = s->cfg.load.think;
    if (!ok && s->cfg.load.fail_pause != RP_TSTAMP_UNSET) {
      pause = s->cfg.load.fail_pause;
    }
    if (sim_push(s, rp_tstamp_add(s->now, pause), SIM_EV_WORKER, rec->worker, 0,
                 0) != 0) {
      s->cb_error = RP_ERR_NOMEM;
      return -1;
    }
  }
  return 0;
}

static void sim_cb_rand(uint8_t *dest, size_t len, void *user_data) {
  sim *s = user_data;
  size_t i = 0;
  while (i < len) {
    uint64_t v = fr_rng_next(&s->pool_rng);
    size_t k;
    for (k = 0; k < sizeof(v) && i < len; ++k, ++i) {
      dest[i] = (uint8_t)(v >> (k * SIM_BYTE_BITS));
    }
  }
}

static void sim_cb_log(rp_log_level level, uint32_t category, const char *line,
                       void *user_data) {
  sim *s = user_data;
  (void)category;
  if ((unsigned)level < SIM_NLEVELS) {
    ++s->log_lines[level];
  }
  if (s->cfg.trace && line) {
    char buf[SIM_TRACE_LINE];
    snprintf(buf, sizeof(buf), "core %s", line);
    s->cfg.trace(buf, s->cfg.trace_data);
  }
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                            */
/* ------------------------------------------------------------------ */

void sim_config_default(sim_config *cfg, rp_kind kind) {
  memset(cfg, 0, sizeof(*cfg));
  rp_settings_default(&cfg->settings, kind);
  cfg->seed = 1;
  sim_load_default(&cfg->load);
  cfg->rtt = 0;
  cfg->sample_interval = SIM_DEFAULT_SAMPLE;
  cfg->drain = RP_TSTAMP_UNSET;
  cfg->max_events = SIM_DEFAULT_MAX_EVENTS;
  cfg->trace = NULL;
  cfg->trace_data = NULL;
}

rp_tstamp sim_load_end(const sim *s) {
  if (s->cfg.load.kind == SIM_LOAD_NONE) {
    return s->cfg.load.start;
  }
  return rp_tstamp_add(s->cfg.load.start, s->cfg.load.duration);
}

rp_tstamp sim_end_time(const sim *s) {
  rp_duration drain = s->cfg.drain;
  if (drain == RP_TSTAMP_UNSET) {
    drain = rp_tstamp_add(s->cfg.settings.deadline, SIM_DRAIN_GRACE);
  }
  return rp_tstamp_add(sim_load_end(s), drain);
}

/* sim_start_load schedules the load's first events. */
static int sim_start_load(sim *s) {
  uint32_t w;
  int rv = 0;
  switch (s->cfg.load.kind) {
  case SIM_LOAD_NONE:
    break;
  case SIM_LOAD_RATE:
    rv = sim_push(s, s->cfg.load.start, SIM_EV_RATE, 0, 0, 0);
    break;
  case SIM_LOAD_WORKERS:
    s->worker_serial = s->mem->malloc(
        (size_t)s->cfg.load.workers * sizeof(uint64_t), s->mem->user_data);
    if (!s->worker_serial) {
      return RP_ERR_NOMEM;
    }
    for (w = 0; w < s->cfg.load.workers; ++w) {
      s->worker_serial[w] = SIM_NO_SERIAL;
      rv = sim_push(s, s->cfg.load.start, SIM_EV_WORKER, w, 0, 0);
      if (rv != 0) {
        break;
      }
    }
    break;
  }
  return rv;
}

int sim_new(sim **psim, const sim_config *cfg, const rp_mem *mem) {
  sim *s;
  rp_callbacks cb = {.send_query = sim_cb_send_query,
                     .deliver = sim_cb_deliver,
                     .rand = sim_cb_rand,
                     .log = sim_cb_log};
  int rv;
  if (!mem) {
    mem = rp_mem_default();
  }
  s = mem->calloc(1, sizeof(*s), mem->user_data);
  if (!s) {
    return RP_ERR_NOMEM;
  }
  s->cfg = *cfg;
  s->mem = mem;
  s->hash = SIM_FNV_OFFSET;
  sim_heap_init(&s->heap, mem);
  fr_rng_seed(&s->pool_rng, cfg->seed ^ SIM_SEED_POOL);
  fr_rng_seed(&s->load_rng, cfg->seed ^ SIM_SEED_LOAD);
  rv = rp_pool_new(&s->pool, &s->cfg.settings, &cb, mem, s);
  if (rv != 0) {
    goto fail_pool;
  }
  rv = sim_start_load(s);
  if (rv != 0) {
    goto fail_load;
  }
  if (cfg->sample_interval != 0) {
    rv = sim_push(s, cfg->sample_interval, SIM_EV_SAMPLE, 0, 0, 0);
    if (rv != 0) {
      goto fail_load;
    }
  }
  *psim = s;
  return 0;

fail_load:
  rp_pool_del(s->pool);
  if (s->worker_serial) {
    mem->free(s->worker_serial, mem->user_data);
  }
fail_pool:
  sim_heap_free(&s->heap);
  mem->free(s, mem->user_data);
  return rv;
}

/* sim_free_ptr frees |p| when not NULL. */
static void sim_free_ptr(const sim *s, void *p) {
  if (p) {
    s->mem->free(p, s->mem->user_data);
  }
}

void sim_del(sim *s) {
  uint32_t i;
  if (!s) {
    return;
  }
  rp_pool_del(s->pool);
  sim_heap_free(&s->heap);
  for (i = 0; i < s->nhooks; ++i) {
    sim_free_ptr(s, s->hooks[i].text);
  }
  sim_free_ptr(s, s->hooks);
  sim_free_ptr(s, s->res);
  sim_free_ptr(s, s->slots);
  sim_free_ptr(s, s->free_slots);
  sim_free_ptr(s, s->rec);
  sim_free_ptr(s, s->worker_serial);
  sim_free_ptr(s, s->samples);
  sim_free_ptr(s, s->sres);
  s->mem->free(s, s->mem->user_data);
}

int sim_add_resolver(sim *s, const fr_spec *spec, uint32_t *pindex) {
  size_t cap = s->capres;
  void *arr = s->res;
  sim_resolver *r;
  rp_resolver_config rc;
  uint32_t idx = s->nres;
  int rv;
  if (s->started) {
    sim_set_error(s, "resolvers must be added before the run starts");
    return RP_ERR_INVALID_ARGUMENT;
  }
  if (s->nres == UINT32_MAX - 1) {
    return RP_ERR_FULL;
  }
  rv = sim_grow(s, &arr, s->nres, &cap, sizeof(sim_resolver));
  if (rv != 0) {
    return rv;
  }
  s->res = arr;
  s->capres = (uint32_t)cap;
  r = &s->res[idx];
  sim_resolver_init(r, spec,
                    (s->cfg.seed ^ SIM_SEED_RES) +
                        (uint64_t)(idx + 1) * SIM_SEED_POOL,
                    s->now);
  if (r->spec.name[0] == '\0') {
    snprintf(r->spec.name, sizeof(r->spec.name), "r%" PRIu32, idx + 1);
  }
  rc = (rp_resolver_config){.name = r->spec.name,
                            .flags = RP_RESOLVER_TCP_FALLBACK,
                            .score = 0,
                            .user_data = (void *)(uintptr_t)idx};
  rv = rp_pool_add_resolver(s->pool, &rc, &r->pool_id, s->now);
  if (rv != 0) {
    return rv;
  }
  ++s->nres;
  if (pindex) {
    *pindex = idx;
  }
  return 0;
}

int sim_find_resolver(const sim *s, const char *name, uint32_t *pindex) {
  uint32_t i;
  for (i = 0; i < s->nres; ++i) {
    if (strcmp(s->res[i].spec.name, name) == 0) {
      *pindex = i;
      return 0;
    }
  }
  return RP_ERR_NOT_FOUND;
}

int sim_add_hook(sim *s, rp_tstamp at, uint32_t index, const char *text,
                 char *errbuf, size_t errlen) {
  size_t cap = s->caphooks;
  void *arr = s->hooks;
  size_t len;
  char *copy;
  int rv;
  if (index >= s->nres) {
    return RP_ERR_NOT_FOUND;
  }
  rv = sim_resolver_check_change(text, errbuf, errlen);
  if (rv != 0) {
    return rv;
  }
  rv = sim_grow(s, &arr, s->nhooks, &cap, sizeof(sim_hook));
  if (rv != 0) {
    return rv;
  }
  s->hooks = arr;
  s->caphooks = (uint32_t)cap;
  len = strlen(text);
  copy = s->mem->malloc(len + 1, s->mem->user_data);
  if (!copy) {
    return RP_ERR_NOMEM;
  }
  memcpy(copy, text, len + 1);
  rv = sim_push(s, at < s->now ? s->now : at, SIM_EV_HOOK, s->nhooks, 0, 0);
  if (rv != 0) {
    s->mem->free(copy, s->mem->user_data);
    return rv;
  }
  s->hooks[s->nhooks++] = (sim_hook){.index = index, .text = copy};
  return 0;
}

/* ------------------------------------------------------------------ */
/* Events                                                               */
/* ------------------------------------------------------------------ */

/* sim_core_rv turns a core return into the run's: a callback's error
   wins, a non-fatal error is noted and ignored. */
static int sim_core_rv(sim *s, int rv, const char *what) {
  if (s->cb_error != 0) {
    rv = s->cb_error;
    if (s->err[0] == '\0') {
      sim_set_error(s, "%s: a callback failed: %s", what,
                    rp_strerror(s->cb_error));
    }
    return rv;
  }
  if (rv != 0 && rp_err_is_fatal(rv)) {
    sim_set_error(s, "%s: %s", what, rp_strerror(rv));
    return rv;
  }
  return 0;
}

/* sim_submit sends a new client query for |worker| (or SIM_NO_WORKER). */
static int sim_submit(sim *s, uint32_t worker) {
  void *arr = s->rec;
  uint64_t serial = s->nrec;
  rp_client client;
  rp_ssize len;
  int empty = 0;
  int rv = sim_grow(s, &arr, s->nrec, &s->caprec, sizeof(sim_record));
  if (rv != 0) {
    return rv;
  }
  s->rec = arr;
  s->rec[s->nrec++] = (sim_record){.submit = s->now,
                                   .first = RP_TSTAMP_UNSET,
                                   .worker = worker,
                                   .status = SIM_STATUS_PENDING};
  if (s->cfg.load.empty_ppm != 0) {
    empty = fr_rng_next(&s->load_rng) % FR_PPM < s->cfg.load.empty_ppm;
  }
  len = sim_load_build_query(&s->cfg.load, serial, empty, s->query,
                             sizeof(s->query));
  if (len < 0) {
    sim_set_error(s, "cannot build query %" PRIu64, serial);
    return RP_ERR_NOBUF;
  }
  if (worker != SIM_NO_WORKER) {
    s->worker_serial[worker] = serial;
    rv = sim_push(s,
                  rp_tstamp_add(s->now, rp_tstamp_add(s->cfg.settings.deadline,
                                                      SIM_DRAIN_GRACE)),
                  SIM_EV_WORKER_TIMEOUT, worker, serial, 0);
    if (rv != 0) {
      return rv;
    }
  }
  memset(&client, 0, sizeof(client));
  client.id = serial;
  sim_trace(s, "ev=submit q=%" PRIu64 " worker=%" PRId64 " len=%zd", serial,
            worker == SIM_NO_WORKER ? (int64_t)-1 : (int64_t)worker, len);
  rv = rp_pool_submit(s->pool, s->query, (size_t)len, &client, s->now);
  return sim_core_rv(s, rv, "rp_pool_submit");
}

/* sim_on_reply delivers a resolver's reply to the pool. */
static int sim_on_reply(sim *s, const sim_event *ev) {
  sim_resolver *r = &s->res[ev->a];
  sim_slot *slot = &s->slots[ev->c];
  fr_verdict verdict = (fr_verdict)(ev->b & SIM_REPLY_BYTE_MASK);
  uint8_t rcode =
      (uint8_t)((ev->b >> SIM_REPLY_RCODE_SHIFT) & SIM_REPLY_BYTE_MASK);
  int stream = (int)((ev->b >> SIM_REPLY_STREAM_SHIFT) & 1u);
  rp_ssize n = sim_resolver_reply(slot->data, slot->len, verdict, rcode, stream,
                                  s->reply, sizeof(s->reply));
  int rv;
  slot_free(s, ev->c);
  sim_hash_u64(s, (uint64_t)n);
  if (n < 0) {
    /* A query the fake cannot parse gets no answer, as on loopback. */
    sim_trace(s, "ev=reply srv=%s unparsable", r->spec.name);
    return 0;
  }
  sim_trace(s, "ev=reply srv=%s id=%u len=%zd rcode=%u", r->spec.name,
            (unsigned)rp_dns_get_id(s->reply), n, (unsigned)rcode);
  rv = rp_pool_on_answer(s->pool, r->pool_id, s->reply, (size_t)n,
                         stream ? RP_ANSWER_STREAM : 0u, s->now);
  return sim_core_rv(s, rv, "rp_pool_on_answer");
}

/* sim_on_sample records a timeline sample and schedules the next. */
static int sim_on_sample(sim *s) {
  size_t cap = s->capsamples;
  void *arr = s->samples;
  sim_sample_resolver *nsr;
  uint32_t i;
  int rv = sim_grow(s, &arr, s->nsamples, &cap, sizeof(sim_sample));
  if (rv != 0) {
    return rv;
  }
  s->samples = arr;
  if (s->nres > 0) {
    if (cap > SIZE_MAX / s->nres / sizeof(sim_sample_resolver)) {
      return RP_ERR_NOMEM;
    }
    nsr = s->mem->realloc(s->sres, cap * s->nres * sizeof(*nsr),
                          s->mem->user_data);
    if (!nsr) {
      return RP_ERR_NOMEM;
    }
    s->sres = nsr;
  }
  s->capsamples = cap;
  s->samples[s->nsamples] = (sim_sample){.ts = s->now,
                                         .queries = s->nrec,
                                         .answered = s->answered,
                                         .failed = s->failed};
  for (i = 0; i < s->nres; ++i) {
    rp_resolver_stats st;
    sim_sample_resolver *sr = &s->sres[s->nsamples * s->nres + i];
    memset(sr, 0, sizeof(*sr));
    if (rp_pool_get_resolver_stats(s->pool, s->res[i].pool_id, &st, s->now) ==
        0) {
      sr->state = st.state;
      sr->cap_qps = st.cap_qps;
      sr->answer_rate_qps = st.answer_rate_qps;
      sr->inflight = st.inflight;
    }
    sr->counts = s->res[i].counts;
    sim_trace(s, "ev=sample srv=%s state=%s cap_qps=%.1f rate_qps=%.1f",
              s->res[i].spec.name, rp_resolver_state_str(sr->state),
              sr->cap_qps, sr->answer_rate_qps);
  }
  ++s->nsamples;
  return sim_push(s, rp_tstamp_add(s->now, s->cfg.sample_interval),
                  SIM_EV_SAMPLE, 0, 0, 0);
}

/* sim_on_event runs one heap event. */
static int sim_on_event(sim *s, const sim_event *ev) {
  sim_hash_u64(s, ev->ts);
  sim_hash_u64(s, ((uint64_t)ev->kind << SIM_HASH_HI) | ev->a);
  sim_hash_u64(s, ev->b);
  switch ((sim_ev_kind)ev->kind) {
  case SIM_EV_REPLY:
    return sim_on_reply(s, ev);
  case SIM_EV_RATE: {
    uint64_t next = ev->b + 1;
    rp_tstamp ts =
        s->cfg.load.start +
        (rp_tstamp)((double)next * (double)RP_SECONDS / s->cfg.load.rate_qps);
    int rv;
    if (ts < sim_load_end(s)) {
      rv = sim_push(s, ts, SIM_EV_RATE, 0, next, 0);
      if (rv != 0) {
        return rv;
      }
    }
    return sim_submit(s, SIM_NO_WORKER);
  }
  case SIM_EV_WORKER:
    if (s->now >= sim_load_end(s)) {
      return 0;
    }
    return sim_submit(s, ev->a);
  case SIM_EV_WORKER_TIMEOUT:
    if (s->worker_serial[ev->a] != ev->b ||
        s->rec[ev->b].status != SIM_STATUS_PENDING) {
      return 0;
    }
    ++s->worker_timeouts;
    s->worker_serial[ev->a] = SIM_NO_SERIAL;
    if (s->now >= sim_load_end(s)) {
      return 0;
    }
    return sim_submit(s, ev->a);
  case SIM_EV_HOOK: {
    sim_hook *h = &s->hooks[ev->a];
    sim_resolver *r = &s->res[h->index];
    int rv = sim_resolver_change(r, h->text, s->now, s->err, sizeof(s->err));
    sim_trace(s, "ev=hook srv=%s change=%s", r->spec.name, h->text);
    return rv;
  }
  case SIM_EV_SAMPLE:
    return sim_on_sample(s);
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* The loop                                                             */
/* ------------------------------------------------------------------ */

int sim_run_until(sim *s, rp_tstamp until) {
  uint32_t stalls = 0;
  s->started = 1;
  for (;;) {
    const sim_event *top = sim_heap_top(&s->heap);
    rp_tstamp exp = rp_pool_get_expiry(s->pool);
    rp_tstamp next = top ? top->ts : RP_TSTAMP_UNSET;
    int rv;
    if (exp < next) {
      next = exp;
    }
    if (next == RP_TSTAMP_UNSET || next > until) {
      break;
    }
    if (s->cfg.max_events != 0 && s->events >= s->cfg.max_events) {
      sim_set_error(s,
                    "stopped after %" PRIu64 " events at t=%.6f s "
                    "(max_events; does the load let time advance?)",
                    s->events, sim_secs(s->now));
      return RP_ERR_PROTO;
    }
    ++s->events;
    if (!top || exp <= top->ts) {
      if (exp > s->now) {
        s->now = exp;
        stalls = 0;
      } else if (++stalls > SIM_STALL_LIMIT) {
        sim_set_error(s,
                      "the core's expiry stays at t=%.6f s after %u calls "
                      "of rp_pool_handle_expiry",
                      sim_secs(s->now), SIM_STALL_LIMIT);
        return RP_ERR_PROTO;
      }
      sim_hash_u64(s, s->now);
      rv = sim_core_rv(s, rp_pool_handle_expiry(s->pool, s->now),
                       "rp_pool_handle_expiry");
    } else {
      sim_event ev;
      sim_heap_pop(&s->heap, &ev);
      if (ev.ts > s->now) {
        s->now = ev.ts;
      }
      stalls = 0;
      rv = sim_on_event(s, &ev);
    }
    if (rv != 0) {
      if (s->err[0] == '\0') {
        sim_set_error(s, "run failed at t=%.6f s: %s", sim_secs(s->now),
                      rp_strerror(rv));
      }
      return rv;
    }
  }
  if (until > s->now) {
    s->now = until;
  }
  return 0;
}

int sim_run(sim *s) { return sim_run_until(s, sim_end_time(s)); }

/* ------------------------------------------------------------------ */
/* Getters                                                              */
/* ------------------------------------------------------------------ */

const char *sim_error(const sim *s) { return s->err; }

rp_tstamp sim_now(const sim *s) { return s->now; }

uint64_t sim_trace_hash(const sim *s) { return s->hash; }

uint64_t sim_events(const sim *s) { return s->events; }

const rp_pool *sim_pool(const sim *s) { return s->pool; }

uint32_t sim_resolver_count(const sim *s) { return s->nres; }

const sim_resolver *sim_get_resolver(const sim *s, uint32_t index) {
  return index < s->nres ? &s->res[index] : NULL;
}

int sim_get_resolver_stats(const sim *s, uint32_t index,
                           rp_resolver_stats *st) {
  if (index >= s->nres) {
    return RP_ERR_NOT_FOUND;
  }
  return rp_pool_get_resolver_stats(s->pool, s->res[index].pool_id, st, s->now);
}

/* sim_cmp_duration orders durations for qsort. */
static int sim_cmp_duration(const void *a, const void *b) {
  rp_duration x = *(const rp_duration *)a;
  rp_duration y = *(const rp_duration *)b;
  return (x > y) - (x < y);
}

/* SIM_PCT_* are the reported percentiles, in percent. */
#define SIM_PCT_50 50u
#define SIM_PCT_90 90u
#define SIM_PCT_99 99u
#define SIM_PCT_ALL 100u

/* sim_pct returns percentile |pct| of the sorted |v| (|n| > 0), nearest
   rank. */
static rp_duration sim_pct(const rp_duration *v, size_t n, unsigned pct) {
  size_t rank = (n * pct + SIM_PCT_ALL - 1) / SIM_PCT_ALL;
  return v[rank == 0 ? 0 : rank - 1];
}

int sim_get_client_stats(const sim *s, sim_client_stats *cs) {
  rp_duration *lat = NULL;
  size_t n = 0;
  size_t i;
  memset(cs, 0, sizeof(*cs));
  cs->queries = s->nrec;
  cs->answered = s->answered;
  cs->failed = s->failed;
  cs->unanswered = s->nrec - s->answered - s->failed;
  cs->extra = s->extra;
  cs->worker_timeouts = s->worker_timeouts;
  cs->p50 = cs->p90 = cs->p99 = cs->max = RP_TSTAMP_UNSET;
  if (s->answered == 0) {
    return 0;
  }
  lat = s->mem->malloc(s->answered * sizeof(*lat), s->mem->user_data);
  if (!lat) {
    return RP_ERR_NOMEM;
  }
  for (i = 0; i < s->nrec; ++i) {
    if (s->rec[i].status == SIM_STATUS_ANSWERED) {
      lat[n++] = s->rec[i].first - s->rec[i].submit;
    }
  }
  qsort(lat, n, sizeof(*lat), sim_cmp_duration);
  cs->p50 = sim_pct(lat, n, SIM_PCT_50);
  cs->p90 = sim_pct(lat, n, SIM_PCT_90);
  cs->p99 = sim_pct(lat, n, SIM_PCT_99);
  cs->max = lat[n - 1];
  s->mem->free(lat, s->mem->user_data);
  return 0;
}

uint64_t sim_answered_between(const sim *s, rp_tstamp t0, rp_tstamp t1) {
  uint64_t n = 0;
  size_t i;
  for (i = 0; i < s->nrec; ++i) {
    const sim_record *r = &s->rec[i];
    if (r->status == SIM_STATUS_ANSWERED && r->first >= t0 && r->first < t1) {
      ++n;
    }
  }
  return n;
}

/* sim_sample_at returns the index of the last sample at or before |t|,
   or SIZE_MAX when none. */
static size_t sim_sample_at(const sim *s, rp_tstamp t) {
  size_t i;
  size_t best = SIZE_MAX;
  for (i = 0; i < s->nsamples && s->samples[i].ts <= t; ++i) {
    best = i;
  }
  return best;
}

uint64_t sim_received_between(const sim *s, uint32_t index, rp_tstamp t0,
                              rp_tstamp t1) {
  size_t i0 = sim_sample_at(s, t0);
  size_t i1 = sim_sample_at(s, t1);
  uint64_t c0 = 0;
  if (index >= s->nres || i1 == SIZE_MAX) {
    return 0;
  }
  if (i0 != SIZE_MAX) {
    c0 = s->sres[i0 * s->nres + index].counts.received;
  }
  return s->sres[i1 * s->nres + index].counts.received - c0;
}

size_t sim_nsamples(const sim *s) { return s->nsamples; }

const sim_sample *sim_get_sample(const sim *s, size_t i) {
  return i < s->nsamples ? &s->samples[i] : NULL;
}

const sim_sample_resolver *sim_get_sample_resolver(const sim *s, size_t i,
                                                   uint32_t index) {
  if (i >= s->nsamples || index >= s->nres) {
    return NULL;
  }
  return &s->sres[i * s->nres + index];
}

uint64_t sim_core_log_lines(const sim *s, rp_log_level level) {
  return (unsigned)level < SIM_NLEVELS ? s->log_lines[level] : 0;
}
