/*
 * sim_query.c: the simulator's per-query path (sim.h; struct sim in
 * sim_internal.h).
 *
 * It owns the packet slots (a query waiting for its reply is kept in a
 * slot of a growable arena, no allocation per packet once warm; the
 * reply is built from it when the reply event fires, by the fake
 * resolvers' own answer code), the core's callbacks and the client
 * records. The callbacks must not call the core, so they only record and
 * push events: a resolver's reply is decided in send_query (the fake
 * resolver sees the query when it is sent, as on loopback) and arrives
 * later as an event; a worker's next query is an event after its answer.
 * Every send (resolver, upstream id, length, verdict) and delivery
 * (client, flags, length) is mixed into the trace hash.
 */
#include "sim_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

int sim_cb_send_query(rp_pool *pool, uint32_t resolver_id,
                      void *resolver_user_data, uint16_t upstream_id,
                      const uint8_t *data, size_t len, uint32_t flags,
                      rp_tstamp now, void *user_data) {
  sim *s = user_data;
  uint32_t idx = (uint32_t)(uintptr_t)resolver_user_data;
  sim_resolver *r;
  fr_decision d;
  uint32_t slot = 0;
  uint64_t b;
  int stream = (flags & RP_SEND_STREAM) != 0;
  (void)now;
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

int sim_cb_deliver(rp_pool *pool, const rp_client *client, const uint8_t *data,
                   size_t len, uint32_t flags, rp_tstamp now, void *user_data) {
  sim *s = user_data;
  sim_record *rec;
  uint64_t serial = client->id;
  int ok;
  (void)now;
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

void sim_cb_rand(uint8_t *dest, size_t len, void *user_data) {
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

void sim_cb_log(rp_log_level level, uint32_t category, const char *line,
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
/* Client queries and resolver replies                                 */
/* ------------------------------------------------------------------ */

/* sim_submit sends a new client query for |worker| (or SIM_NO_WORKER). */
int sim_submit(sim *s, uint32_t worker) {
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
int sim_on_reply(sim *s, const sim_event *ev) {
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
