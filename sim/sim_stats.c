/*
 * sim_stats.c: the simulator's timeline and client metrics (sim.h;
 * struct sim in sim_internal.h).
 *
 * It owns the timeline samples (every sample_interval: the client's
 * cumulative counts and, per resolver, the core's state, cap, answer
 * rate and inflight with the resolver's own counters) and the metrics
 * read from the client records: latency percentiles (nearest rank) and
 * answers or receptions over a time span.
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

/* sim_on_sample records a timeline sample and schedules the next. */
int sim_on_sample(sim *s) {
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
