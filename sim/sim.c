/*
 * sim.c: the simulator's driver (see sim.h): life cycle, the event loop
 * and the plain getters. The per-query path (packet slots, the core's
 * callbacks, submissions and replies) is in sim_query.c, the timeline
 * samples and client metrics in sim_stats.c; struct sim is in
 * sim_internal.h.
 *
 * IMPLEMENTATION NOTES
 * - Time. The clock is |now|, a plain variable. The loop takes the
 *   earlier of the heap's first event and rp_pool_get_expiry(); on a tie
 *   the pool's expiry runs first (both orders are deterministic; this
 *   one lets timers that fall due at an event's instant fire before the
 *   event, as a libuv loop runs timers before I/O). An expiry in the
 *   past runs at |now|; time never goes back.
 * - Re-entrancy (sim_query.c). The core's callbacks must not call the
 *   core, so they only record and push events: a resolver's reply is
 *   decided in send_query (the fake resolver sees the query when it is
 *   sent, as on loopback) and arrives later as an event; a worker's next
 *   query is an event after its answer.
 * - Packets (sim_query.c). A query waiting for its reply is kept in a
 *   slot of a growable arena (no allocation per packet once warm); the
 *   reply is built from it when the reply event fires, by the fake
 *   resolvers' own answer code.
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
#include "sim_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

void sim_set_error(sim *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, sizeof(s->err), fmt, ap);
  va_end(ap);
}

/* sim_hash_u64 mixes |v| into the trace hash, byte by byte. */
void sim_hash_u64(sim *s, uint64_t v) {
  size_t i;
  for (i = 0; i < sizeof(v); ++i) {
    s->hash ^= (v >> (i * SIM_BYTE_BITS)) & SIM_REPLY_BYTE_MASK;
    s->hash *= SIM_FNV_PRIME;
  }
}

/* sim_trace writes one trace line when tracing. */
void sim_trace(const sim *s, const char *fmt, ...) {
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
int sim_grow(sim *s, void **parr, size_t len, size_t *pcap, size_t size) {
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
int sim_push(sim *s, rp_tstamp ts, sim_ev_kind kind, uint32_t a, uint64_t b,
             uint32_t c) {
  sim_event ev = {
      .ts = ts, .seq = 0, .kind = (uint32_t)kind, .a = a, .b = b, .c = c};
  return sim_heap_push(&s->heap, &ev);
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
int sim_core_rv(sim *s, int rv, const char *what) {
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
