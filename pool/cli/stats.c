/*
 * stats.c: the respool command's stats output: the table printed to
 * standard error (--stats) and the JSON file (--stats-json).
 */
#include "cli.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* CLI_NAME_WIDTH is the resolver column of the stats table. */
#define CLI_NAME_WIDTH 24
/* CLI_PERCENT turns a ratio into percent. */
#define CLI_PERCENT 100.0

/* cli_ms prints a duration in ms, or "-" when unset. */
void cli_ms(char *out, size_t cap, rp_duration d) {
  if (d == RP_TSTAMP_UNSET) {
    snprintf(out, cap, "-");
  } else {
    snprintf(out, cap, "%.1f", (double)d / (double)RP_MILLISECONDS);
  }
}

void cli_print_table(cli *c, rp_tstamp now) {
  size_t i, n = rp_net_pool_resolver_count(c->np);
  uint64_t total = 0;
  rp_pool_stats ps;
  for (i = 0; i < n; ++i) {
    rp_net_resolver_info info;
    if (rp_net_pool_get_resolver(c->np, i, &info, now) == 0 && info.has_stats) {
      total += info.stats.sent;
    }
  }
  fprintf(stderr, "%-*s %-11s %8s %8s %9s %6s %6s %9s %9s %8s\n",
          CLI_NAME_WIDTH, "resolver", "state", "cap", "rate", "lat_ms", "loss%",
          "share%", "sent", "answered", "refused");
  for (i = 0; i < n; ++i) {
    rp_net_resolver_info info;
    char cap[16], lat[16];
    if (rp_net_pool_get_resolver(c->np, i, &info, now) != 0) {
      continue;
    }
    if (!info.has_stats) {
      fprintf(stderr, "%-*s %-11s\n", CLI_NAME_WIDTH, info.name,
              rp_net_check_state_str(info.check));
      continue;
    }
    if (info.stats.cap_qps > 0) {
      snprintf(cap, sizeof(cap), "%.1f", info.stats.cap_qps);
    } else {
      snprintf(cap, sizeof(cap), "-");
    }
    cli_ms(lat, sizeof(lat), info.stats.mean_latency);
    fprintf(stderr, "%-*s %-11s %8s %8.1f %9s %6.1f %6.1f %9llu %9llu %8llu\n",
            CLI_NAME_WIDTH, info.name, rp_resolver_state_str(info.stats.state),
            cap, info.stats.answer_rate_qps, lat, info.stats.loss * CLI_PERCENT,
            total ? (double)info.stats.sent * CLI_PERCENT / (double)total : 0.0,
            (unsigned long long)info.stats.sent,
            (unsigned long long)info.stats.answered,
            (unsigned long long)info.stats.refused);
  }
  rp_pool_get_stats(rp_net_pool_get_core(c->np), &ps);
  fprintf(stderr,
          "queries=%llu delivered=%llu failed=%llu waits=%llu copies=%llu "
          "(data %llu, repeat %llu) hedges=%llu spills=%llu retries=%llu "
          "repeats_dropped=%llu extras_skipped=%llu late=%llu spoofed=%llu "
          "case_mismatches=%llu case_fallbacks=%llu inflight=%zu up=%zu/%zu "
          "kind=%s\n",
          (unsigned long long)ps.queries, (unsigned long long)ps.delivered,
          (unsigned long long)ps.failed, (unsigned long long)ps.waits,
          (unsigned long long)ps.copies, (unsigned long long)ps.copies_data,
          (unsigned long long)ps.copies_repeat, (unsigned long long)ps.hedges,
          (unsigned long long)ps.spills, (unsigned long long)ps.retries,
          (unsigned long long)ps.repeats_dropped,
          (unsigned long long)ps.extras_skipped, (unsigned long long)ps.late,
          (unsigned long long)ps.spoofed,
          (unsigned long long)ps.case_mismatches,
          (unsigned long long)ps.case_fallbacks, ps.inflight, ps.nup,
          ps.nresolvers,
          rp_config_kind_str(rp_pool_kind(rp_net_pool_get_core(c->np))));
}

/* stats_u64 names one uint64_t counter of a stats struct: the JSON key is
   the field's name. */
typedef struct stats_u64 {
  const char *name;
  size_t off;
} stats_u64;

#define STATS_U64(type, field) {#field, offsetof(type, field)}

/* stats_resolver_u64 are the counters of rp_resolver_stats, in the order
   of the JSON file. */
static const stats_u64 stats_resolver_u64[] = {
    STATS_U64(rp_resolver_stats, sent),
    STATS_U64(rp_resolver_stats, answered),
    STATS_U64(rp_resolver_stats, refused),
    STATS_U64(rp_resolver_stats, dropped),
    STATS_U64(rp_resolver_stats, late),
    STATS_U64(rp_resolver_stats, errors),
    STATS_U64(rp_resolver_stats, copies),
    STATS_U64(rp_resolver_stats, hedges),
    STATS_U64(rp_resolver_stats, probes),
    STATS_U64(rp_resolver_stats, case_mismatches),
};

/* stats_pool_u64 are the counters of rp_pool_stats, in file order. */
static const stats_u64 stats_pool_u64[] = {
    STATS_U64(rp_pool_stats, queries),
    STATS_U64(rp_pool_stats, delivered),
    STATS_U64(rp_pool_stats, failed),
    STATS_U64(rp_pool_stats, waits),
    STATS_U64(rp_pool_stats, sends),
    STATS_U64(rp_pool_stats, copies),
    STATS_U64(rp_pool_stats, copies_data),
    STATS_U64(rp_pool_stats, copies_repeat),
    STATS_U64(rp_pool_stats, repeats_dropped),
    STATS_U64(rp_pool_stats, extras_skipped),
    STATS_U64(rp_pool_stats, late),
    STATS_U64(rp_pool_stats, hedges),
    STATS_U64(rp_pool_stats, resends),
    STATS_U64(rp_pool_stats, spills),
    STATS_U64(rp_pool_stats, retries),
    STATS_U64(rp_pool_stats, probes),
    STATS_U64(rp_pool_stats, malformed),
    STATS_U64(rp_pool_stats, spoofed),
    STATS_U64(rp_pool_stats, case_mismatches),
    STATS_U64(rp_pool_stats, case_fallbacks),
};

/* stats_net_u64 are the counters of rp_net_counters, in file order. */
static const stats_u64 stats_net_u64[] = {
    STATS_U64(rp_net_counters, udp_queries),
    STATS_U64(rp_net_counters, tcp_queries),
    STATS_U64(rp_net_counters, truncated_to_client),
    STATS_U64(rp_net_counters, tcp_connects),
    STATS_U64(rp_net_counters, send_failures),
    STATS_U64(rp_net_counters, tcp_clients),
    STATS_U64(rp_net_counters, tcp_idle_closed),
    STATS_U64(rp_net_counters, tcp_evicted),
    STATS_U64(rp_net_counters, tcp_slow_closed),
    STATS_U64(rp_net_counters, tcp_refused),
    STATS_U64(rp_net_counters, udp_segmented),
    STATS_U64(rp_net_counters, udp_segment_refused),
    STATS_U64(rp_net_counters, tls_handshakes),
    STATS_U64(rp_net_counters, tls_resumed),
    STATS_U64(rp_net_counters, tls_failures),
    STATS_U64(rp_net_counters, doh_http_refusals),
    STATS_U64(rp_net_counters, doh_goaways),
    STATS_U64(rp_net_counters, doh_resets),
    STATS_U64(rp_net_counters, tcp_connect_failures),
    STATS_U64(rp_net_counters, checks_failed),
    STATS_U64(rp_net_counters, discovery_found),
};

/* stats_add_u64s adds the |n| counters |fields| of the struct at |base|
   to |o| as numbers. */
static void stats_add_u64s(cJSON *o, const void *base, const stats_u64 *fields,
                           size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    uint64_t v;
    memcpy(&v, (const char *)base + fields[i].off, sizeof(v));
    cJSON_AddNumberToObject(o, fields[i].name, (double)v);
  }
}

/* stats_json_resolver adds resolver |i| to |arr| (nothing when the pool
   has no such resolver or out of memory). */
static void stats_json_resolver(cJSON *arr, cli *c, size_t i, rp_tstamp now) {
  rp_net_resolver_info info;
  const rp_resolver_stats *st = &info.stats;
  cJSON *o;
  if (rp_net_pool_get_resolver(c->np, i, &info, now) != 0 ||
      !(o = cJSON_CreateObject())) {
    return;
  }
  cJSON_AddItemToArray(arr, o);
  cJSON_AddStringToObject(o, "name", info.name);
  cJSON_AddStringToObject(o, "check", rp_net_check_state_str(info.check));
  cJSON_AddNumberToObject(o, "saved_score", info.saved_score);
  if (info.udp_ports > 0) {
    cJSON_AddNumberToObject(o, "udp_ports", (double)info.udp_ports);
  }
  if (info.last_error && info.last_error[0]) {
    cJSON_AddStringToObject(o, "last_error", info.last_error);
  }
  if (!info.has_stats) {
    return;
  }
  cJSON_AddStringToObject(o, "state", rp_resolver_state_str(st->state));
  cJSON_AddNumberToObject(o, "cap_qps", st->cap_qps);
  cJSON_AddNumberToObject(o, "answer_rate_qps", st->answer_rate_qps);
  cJSON_AddNumberToObject(o, "mean_latency_ms",
                          st->mean_latency == RP_TSTAMP_UNSET
                              ? -1.0
                              : (double)st->mean_latency /
                                    (double)RP_MILLISECONDS);
  cJSON_AddNumberToObject(o, "loss", st->loss);
  stats_add_u64s(o, st, stats_resolver_u64,
                 sizeof(stats_resolver_u64) / sizeof(stats_resolver_u64[0]));
  cJSON_AddBoolToObject(o, "case_fallback", st->case_fallback);
  cJSON_AddNumberToObject(o, "score", st->score);
}

/* stats_json_pool adds the pool's totals to |root| as "pool". */
static void stats_json_pool(cJSON *root, cli *c) {
  rp_pool *core = rp_net_pool_get_core(c->np);
  rp_pool_stats ps;
  rp_net_counters nc;
  cJSON *pool = cJSON_AddObjectToObject(root, "pool");
  if (!pool) {
    return;
  }
  rp_pool_get_stats(core, &ps);
  rp_net_pool_get_counters(c->np, &nc);
  cJSON_AddStringToObject(pool, "kind", rp_config_kind_str(rp_pool_kind(core)));
  stats_add_u64s(pool, &ps, stats_pool_u64,
                 sizeof(stats_pool_u64) / sizeof(stats_pool_u64[0]));
  cJSON_AddNumberToObject(pool, "nup", (double)ps.nup);
  stats_add_u64s(pool, &nc, stats_net_u64,
                 sizeof(stats_net_u64) / sizeof(stats_net_u64[0]));
}

/* stats_json_save writes |text| to c->stats_json through a temporary
   file and rename; the failure is reported when it starts and when it
   ends, not at every tick. */
static void stats_json_save(cli *c, const char *text) {
  char tmp[4096];
  FILE *f;
  int written = 0;
  snprintf(tmp, sizeof(tmp), "%s.tmp", c->stats_json);
  errno = 0;
  f = fopen(tmp, "w");
  if (f) {
    int ok = fputs(text, f) != EOF && fputc('\n', f) != EOF;
    ok = fclose(f) == 0 && ok;
    written = ok && rename(tmp, c->stats_json) == 0;
  }
  if (!written && !c->json_failing) {
    cli_logf(RP_LOG_WARN, "--stats-json: cannot write %s: %s", c->stats_json,
             errno ? strerror(errno) : "write failed");
  } else if (written && c->json_failing) {
    cli_logf(RP_LOG_INFO, "--stats-json: %s written again", c->stats_json);
  }
  c->json_failing = !written;
}

/* cli_write_json writes the stats to c->stats_json (temp + rename). */
void cli_write_json(cli *c, rp_tstamp now) {
  cJSON *root = cJSON_CreateObject(), *arr;
  size_t i, n = rp_net_pool_resolver_count(c->np);
  char *text;
  if (!root) {
    return;
  }
  arr = cJSON_AddArrayToObject(root, "resolvers");
  for (i = 0; arr && i < n; ++i) {
    stats_json_resolver(arr, c, i, now);
  }
  stats_json_pool(root, c);
  text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) {
    return;
  }
  stats_json_save(c, text);
  cJSON_free(text);
}

void cli_stats_cb(uv_timer_t *t) {
  cli *c = t->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  if (c->stopping) {
    return;
  }
  if (c->print_table) {
    cli_print_table(c, now);
  }
  if (c->stats_json) {
    cli_write_json(c, now);
  }
}
