/*
 * sim_report.c: text and JSON reports of a run (see sim_report.h).
 *
 * IMPLEMENTATION NOTES
 * - The share of a resolver is of the queries the resolvers received
 *   (the pool's sends: first tries, resends, hedges, copies and probes),
 *   counted at the simulated resolver, not by the core.
 * - "lost" joins the path losses and the queries sent to a dead
 *   resolver: in both nothing comes back.
 * - JSON is written by hand: every string in it is a resolver name
 *   (letters, digits, '-', '_', '.'; fr_spec_parse enforces it) or a
 *   fixed word, so nothing needs escaping.
 */
#include "sim_report.h"

#include <inttypes.h>
#include <string.h>

/* REPORT_WINDOW is the tail of the load over which the answered rate is
   reported (the "over the last 10 s"). */
#define REPORT_WINDOW (10 * RP_SECONDS)

/* REPORT_CAP_LEN is the buffer of a formatted cap. */
#define REPORT_CAP_LEN 32

/* REPORT_PERCENT is 100 %. */
#define REPORT_PERCENT 100.0

/* report_ms returns |d| in milliseconds, or -1 when unset. */
static double report_ms(rp_duration d) {
  if (d == RP_TSTAMP_UNSET) {
    return -1.0;
  }
  return (double)d / (double)RP_MILLISECONDS;
}

/* report_total_received sums what every resolver received. */
static uint64_t report_total_received(const sim *s) {
  uint64_t total = 0;
  uint32_t i;
  for (i = 0; i < sim_resolver_count(s); ++i) {
    total += sim_get_resolver(s, i)->counts.received;
  }
  return total;
}

/* report_tail returns the answered rate over the last REPORT_WINDOW of
   the load (or all of it when shorter), q/s, and the window in
   |*pwindow_s|. */
static double report_tail(const sim *s, double *pwindow_s) {
  rp_tstamp end = sim_load_end(s);
  rp_tstamp t0 = end > REPORT_WINDOW ? end - REPORT_WINDOW : 0;
  double secs = (double)(end - t0) / (double)RP_SECONDS;
  *pwindow_s = secs;
  if (secs <= 0.0) {
    return 0.0;
  }
  return (double)sim_answered_between(s, t0, end) / secs;
}

/* report_totals are the numbers both reports print besides the rows of
   the resolvers. */
typedef struct report_totals {
  sim_client_stats cs;
  rp_pool_stats ps;
  /* total is what every resolver received. */
  uint64_t total;
  /* tail is the answered rate over the last window_s seconds of the
     load (report_tail). */
  double tail, window_s;
} report_totals;

/* report_gather fills |t|. Returns 0 or RP_ERR_NOMEM. */
static int report_gather(const sim *s, report_totals *t) {
  int rv;
  t->total = report_total_received(s);
  t->window_s = 0.0;
  rv = sim_get_client_stats(s, &t->cs);
  if (rv != 0) {
    return rv;
  }
  rp_pool_get_stats(sim_pool(s), &t->ps);
  t->tail = report_tail(s, &t->window_s);
  return 0;
}

/* report_speed returns virtual seconds per wall second, or 0. */
static double report_speed(const sim *s, const sim_report_info *info) {
  double virt = (double)sim_now(s) / (double)RP_SECONDS;
  return info->wall_seconds > 0.0 ? virt / info->wall_seconds : 0.0;
}

int sim_report_text(const sim *s, const sim_report_info *info, FILE *fp) {
  report_totals t;
  uint32_t i;
  int rv = report_gather(s, &t);
  if (rv != 0) {
    return rv;
  }
  fprintf(fp, "%-12s %8s %8s %8s %8s %8s %7s %8s %-10s\n", "resolver", "sent",
          "answered", "refused", "dropped", "lost", "share%", "cap", "state");
  for (i = 0; i < sim_resolver_count(s); ++i) {
    const sim_resolver *r = sim_get_resolver(s, i);
    rp_resolver_stats st;
    char cap[REPORT_CAP_LEN];
    const char *state = "?";
    memset(&st, 0, sizeof(st));
    if (sim_get_resolver_stats(s, i, &st) == 0) {
      state = rp_resolver_state_str(st.state);
    }
    if (st.cap_qps > 0.0) {
      snprintf(cap, sizeof(cap), "%.1f", st.cap_qps);
    } else {
      snprintf(cap, sizeof(cap), "-");
    }
    fprintf(
        fp,
        "%-12s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
        " %7.1f %8s %-10s\n",
        r->spec.name, r->counts.received, r->counts.answered, r->counts.refused,
        r->counts.dropped, r->counts.lost + r->counts.dead,
        t.total ? (double)r->counts.received * REPORT_PERCENT / (double)t.total
                : 0.0,
        cap, state);
  }
  fprintf(fp,
          "client: queries=%" PRIu64 " answered=%" PRIu64 " (%.1f%%) "
          "failed=%" PRIu64 " unanswered=%" PRIu64 " extra=%" PRIu64
          " worker_timeouts=%" PRIu64 "\n",
          t.cs.queries, t.cs.answered,
          t.cs.queries
              ? (double)t.cs.answered * REPORT_PERCENT / (double)t.cs.queries
              : 0.0,
          t.cs.failed, t.cs.unanswered, t.cs.extra, t.cs.worker_timeouts);
  fprintf(fp,
          "latency_ms: p50=%.2f p90=%.2f p99=%.2f max=%.2f; answered "
          "%.1f q/s over the last %.0f s of load\n",
          report_ms(t.cs.p50), report_ms(t.cs.p90), report_ms(t.cs.p99),
          report_ms(t.cs.max), t.tail, t.window_s);
  fprintf(fp,
          "pool: sends=%" PRIu64 " copies=%" PRIu64 " hedges=%" PRIu64
          " resends=%" PRIu64 " spills=%" PRIu64 " retries=%" PRIu64
          " probes=%" PRIu64 " waits=%" PRIu64 " spoofed=%" PRIu64
          " full=%" PRIu64 " up=%zu/%zu\n",
          t.ps.sends, t.ps.copies, t.ps.hedges, t.ps.resends, t.ps.spills,
          t.ps.retries, t.ps.probes,
          t.ps.waits, t.ps.spoofed, t.ps.full, t.ps.nup, t.ps.nresolvers);
  fprintf(fp,
          "run: kind=%s virtual=%.3f s wall=%.4f s speed=%.0fx events=%" PRIu64
          " trace_hash=%016" PRIx64 "\n",
          info->kind, (double)sim_now(s) / (double)RP_SECONDS,
          info->wall_seconds, report_speed(s, info), sim_events(s),
          sim_trace_hash(s));
  if (info->timeline && sim_nsamples(s) > 0) {
    size_t k;
    fprintf(fp, "timeline (t_s answered_qps, then per resolver "
                "state/cap/received_qps):\n");
    for (k = 0; k < sim_nsamples(s); ++k) {
      const sim_sample *sm = sim_get_sample(s, k);
      const sim_sample *prev = k ? sim_get_sample(s, k - 1) : NULL;
      double dt = (double)(sm->ts - (prev ? prev->ts : 0)) / (double)RP_SECONDS;
      fprintf(fp, "%7.1f %7.1f", (double)sm->ts / (double)RP_SECONDS,
              dt > 0.0
                  ? (double)(sm->answered - (prev ? prev->answered : 0)) / dt
                  : 0.0);
      for (i = 0; i < sim_resolver_count(s); ++i) {
        const sim_sample_resolver *sr = sim_get_sample_resolver(s, k, i);
        const sim_sample_resolver *pr =
            k ? sim_get_sample_resolver(s, k - 1, i) : NULL;
        uint64_t rec = sr->counts.received - (pr ? pr->counts.received : 0);
        fprintf(fp, "  %s/%.0f/%.0f", rp_resolver_state_str(sr->state),
                sr->cap_qps, dt > 0.0 ? (double)rec / dt : 0.0);
      }
      fprintf(fp, "\n");
    }
  }
  return 0;
}

/* report_json_resolver writes one resolver object. */
static void report_json_resolver(const sim *s, uint32_t i, uint64_t total,
                                 FILE *fp) {
  const sim_resolver *r = sim_get_resolver(s, i);
  rp_resolver_stats st;
  int have = sim_get_resolver_stats(s, i, &st) == 0;
  if (!have) {
    memset(&st, 0, sizeof(st));
  }
  fprintf(fp,
          "    {\"name\": \"%s\", \"rate_qps\": %.3f, \"over\": \"%s\", "
          "\"latency_ms\": %.3f, \"jitter_ms\": %.3f, \"loss_pct\": %.4f, "
          "\"dead\": %s,\n",
          r->spec.name, (double)r->spec.rate_mqps / FR_MILLI,
          fr_over_str(r->spec.over),
          (double)r->spec.latency / (double)RP_MILLISECONDS,
          (double)r->spec.jitter / (double)RP_MILLISECONDS,
          (double)r->spec.loss_ppm * REPORT_PERCENT / FR_PPM,
          r->spec.dead ? "true" : "false");
  fprintf(fp,
          "     \"sent\": %" PRIu64 ", \"answered\": %" PRIu64
          ", \"refused\": %" PRIu64 ", \"dropped\": %" PRIu64
          ", \"lost\": %" PRIu64 ", \"dead_queries\": %" PRIu64
          ", \"share_pct\": %.3f,\n",
          r->counts.received, r->counts.answered, r->counts.refused,
          r->counts.dropped, r->counts.lost, r->counts.dead,
          total ? (double)r->counts.received * REPORT_PERCENT / (double)total
                : 0.0);
  fprintf(fp,
          "     \"state\": \"%s\", \"cap_qps\": %.3f, \"answer_rate_qps\": "
          "%.3f, \"fastest_ms\": %.3f, \"mean_ms\": %.3f, \"loss\": %.4f, "
          "\"core\": {\"sent\": %" PRIu64 ", \"answered\": %" PRIu64
          ", \"refused\": %" PRIu64 ", \"dropped\": %" PRIu64
          ", \"errors\": %" PRIu64 ", \"copies\": %" PRIu64
          ", \"hedges\": %" PRIu64 ", \"probes\": %" PRIu64 "}}",
          have ? rp_resolver_state_str(st.state) : "unknown", st.cap_qps,
          st.answer_rate_qps, report_ms(st.fastest_latency),
          report_ms(st.mean_latency), st.loss, st.sent, st.answered, st.refused,
          st.dropped, st.errors, st.copies, st.hedges, st.probes);
}

int sim_report_json(const sim *s, const sim_report_info *info, FILE *fp) {
  report_totals t;
  uint32_t i;
  size_t k;
  int rv = report_gather(s, &t);
  if (rv != 0) {
    return rv;
  }
  fprintf(fp,
          "{\n  \"kind\": \"%s\", \"virtual_seconds\": %.6f, "
          "\"wall_seconds\": %.6f, \"speed\": %.1f, \"events\": %" PRIu64
          ", \"trace_hash\": \"%016" PRIx64 "\",\n",
          info->kind, (double)sim_now(s) / (double)RP_SECONDS,
          info->wall_seconds, report_speed(s, info), sim_events(s),
          sim_trace_hash(s));
  fprintf(fp, "  \"resolvers\": [\n");
  for (i = 0; i < sim_resolver_count(s); ++i) {
    report_json_resolver(s, i, t.total, fp);
    fprintf(fp, "%s\n", i + 1 < sim_resolver_count(s) ? "," : "");
  }
  fprintf(fp, "  ],\n");
  fprintf(fp,
          "  \"client\": {\"queries\": %" PRIu64 ", \"answered\": %" PRIu64
          ", \"failed\": %" PRIu64 ", \"unanswered\": %" PRIu64
          ", \"extra\": %" PRIu64 ", \"worker_timeouts\": %" PRIu64
          ", \"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f, "
          "\"max_ms\": %.3f, \"tail_answered_qps\": %.3f, "
          "\"tail_seconds\": %.3f},\n",
          t.cs.queries, t.cs.answered, t.cs.failed, t.cs.unanswered, t.cs.extra,
          t.cs.worker_timeouts, report_ms(t.cs.p50), report_ms(t.cs.p90),
          report_ms(t.cs.p99), report_ms(t.cs.max), t.tail, t.window_s);
  fprintf(fp,
          "  \"pool\": {\"queries\": %" PRIu64 ", \"delivered\": %" PRIu64
          ", \"failed\": %" PRIu64 ", \"waits\": %" PRIu64
          ", \"duplicates_delivered\": %" PRIu64 ", \"sends\": %" PRIu64
          ", \"copies\": %" PRIu64 ", \"hedges\": %" PRIu64
          ", \"resends\": %" PRIu64 ", \"spills\": %" PRIu64
          ", \"retries\": %" PRIu64 ", \"probes\": %" PRIu64 ", \"spoofed\": %" PRIu64
          ", \"malformed\": %" PRIu64 ", \"full\": %" PRIu64
          ", \"nup\": %zu},\n",
          t.ps.queries, t.ps.delivered, t.ps.failed, t.ps.waits,
          t.ps.duplicates_delivered, t.ps.sends, t.ps.copies, t.ps.hedges,
          t.ps.resends, t.ps.spills, t.ps.retries, t.ps.probes, t.ps.spoofed, t.ps.malformed, t.ps.full,
          t.ps.nup);
  fprintf(fp, "  \"timeline\": [\n");
  for (k = 0; k < sim_nsamples(s); ++k) {
    const sim_sample *sm = sim_get_sample(s, k);
    fprintf(fp,
            "    {\"t\": %.3f, \"queries\": %" PRIu64 ", \"answered\": %" PRIu64
            ", \"failed\": %" PRIu64 ", \"resolvers\": [",
            (double)sm->ts / (double)RP_SECONDS, sm->queries, sm->answered,
            sm->failed);
    for (i = 0; i < sim_resolver_count(s); ++i) {
      const sim_sample_resolver *sr = sim_get_sample_resolver(s, k, i);
      fprintf(fp,
              "%s{\"state\": \"%s\", \"cap_qps\": %.3f, \"rate_qps\": %.3f, "
              "\"inflight\": %" PRIu32 ", \"received\": %" PRIu64 "}",
              i ? ", " : "", rp_resolver_state_str(sr->state), sr->cap_qps,
              sr->answer_rate_qps, sr->inflight, sr->counts.received);
    }
    fprintf(fp, "]}%s\n", k + 1 < sim_nsamples(s) ? "," : "");
  }
  fprintf(fp, "  ]\n}\n");
  return 0;
}
