/*
 * stats.c: the respool command's stats output: the table printed to
 * standard error (--stats) and the JSON file (--stats-json).
 */
#include "cli.h"

#include <errno.h>
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

/* cli_write_json writes the stats to c->stats_json (temp + rename). */
void cli_write_json(cli *c, rp_tstamp now) {
  cJSON *root = cJSON_CreateObject(), *arr, *pool;
  size_t i, n = rp_net_pool_resolver_count(c->np);
  rp_pool_stats ps;
  rp_net_counters nc;
  char tmp[4096], *text;
  FILE *f;
  int written = 0;
  if (!root) {
    return;
  }
  arr = cJSON_AddArrayToObject(root, "resolvers");
  for (i = 0; arr && i < n; ++i) {
    rp_net_resolver_info info;
    cJSON *o;
    if (rp_net_pool_get_resolver(c->np, i, &info, now) != 0 ||
        !(o = cJSON_CreateObject())) {
      continue;
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
      continue;
    }
    cJSON_AddStringToObject(o, "state",
                            rp_resolver_state_str(info.stats.state));
    cJSON_AddNumberToObject(o, "cap_qps", info.stats.cap_qps);
    cJSON_AddNumberToObject(o, "answer_rate_qps", info.stats.answer_rate_qps);
    cJSON_AddNumberToObject(o, "mean_latency_ms",
                            info.stats.mean_latency == RP_TSTAMP_UNSET
                                ? -1.0
                                : (double)info.stats.mean_latency /
                                      (double)RP_MILLISECONDS);
    cJSON_AddNumberToObject(o, "loss", info.stats.loss);
    cJSON_AddNumberToObject(o, "sent", (double)info.stats.sent);
    cJSON_AddNumberToObject(o, "answered", (double)info.stats.answered);
    cJSON_AddNumberToObject(o, "refused", (double)info.stats.refused);
    cJSON_AddNumberToObject(o, "dropped", (double)info.stats.dropped);
    cJSON_AddNumberToObject(o, "late", (double)info.stats.late);
    cJSON_AddNumberToObject(o, "errors", (double)info.stats.errors);
    cJSON_AddNumberToObject(o, "copies", (double)info.stats.copies);
    cJSON_AddNumberToObject(o, "hedges", (double)info.stats.hedges);
    cJSON_AddNumberToObject(o, "probes", (double)info.stats.probes);
    cJSON_AddNumberToObject(o, "case_mismatches",
                            (double)info.stats.case_mismatches);
    cJSON_AddBoolToObject(o, "case_fallback", info.stats.case_fallback);
    cJSON_AddNumberToObject(o, "score", info.stats.score);
  }
  rp_pool_get_stats(rp_net_pool_get_core(c->np), &ps);
  rp_net_pool_get_counters(c->np, &nc);
  pool = cJSON_AddObjectToObject(root, "pool");
  if (pool) {
    cJSON_AddStringToObject(
        pool, "kind",
        rp_config_kind_str(rp_pool_kind(rp_net_pool_get_core(c->np))));
    cJSON_AddNumberToObject(pool, "queries", (double)ps.queries);
    cJSON_AddNumberToObject(pool, "delivered", (double)ps.delivered);
    cJSON_AddNumberToObject(pool, "failed", (double)ps.failed);
    cJSON_AddNumberToObject(pool, "waits", (double)ps.waits);
    cJSON_AddNumberToObject(pool, "sends", (double)ps.sends);
    cJSON_AddNumberToObject(pool, "copies", (double)ps.copies);
    cJSON_AddNumberToObject(pool, "copies_data", (double)ps.copies_data);
    cJSON_AddNumberToObject(pool, "copies_repeat", (double)ps.copies_repeat);
    cJSON_AddNumberToObject(pool, "repeats_dropped",
                            (double)ps.repeats_dropped);
    cJSON_AddNumberToObject(pool, "extras_skipped", (double)ps.extras_skipped);
    cJSON_AddNumberToObject(pool, "late", (double)ps.late);
    cJSON_AddNumberToObject(pool, "hedges", (double)ps.hedges);
    cJSON_AddNumberToObject(pool, "resends", (double)ps.resends);
    cJSON_AddNumberToObject(pool, "spills", (double)ps.spills);
    cJSON_AddNumberToObject(pool, "retries", (double)ps.retries);
    cJSON_AddNumberToObject(pool, "probes", (double)ps.probes);
    cJSON_AddNumberToObject(pool, "malformed", (double)ps.malformed);
    cJSON_AddNumberToObject(pool, "spoofed", (double)ps.spoofed);
    cJSON_AddNumberToObject(pool, "case_mismatches",
                            (double)ps.case_mismatches);
    cJSON_AddNumberToObject(pool, "case_fallbacks", (double)ps.case_fallbacks);
    cJSON_AddNumberToObject(pool, "nup", (double)ps.nup);
    cJSON_AddNumberToObject(pool, "udp_queries", (double)nc.udp_queries);
    cJSON_AddNumberToObject(pool, "tcp_queries", (double)nc.tcp_queries);
    cJSON_AddNumberToObject(pool, "truncated_to_client",
                            (double)nc.truncated_to_client);
    cJSON_AddNumberToObject(pool, "tcp_connects", (double)nc.tcp_connects);
    cJSON_AddNumberToObject(pool, "send_failures", (double)nc.send_failures);
    cJSON_AddNumberToObject(pool, "tcp_clients", (double)nc.tcp_clients);
    cJSON_AddNumberToObject(pool, "tcp_idle_closed",
                            (double)nc.tcp_idle_closed);
    cJSON_AddNumberToObject(pool, "tcp_evicted", (double)nc.tcp_evicted);
    cJSON_AddNumberToObject(pool, "tcp_slow_closed",
                            (double)nc.tcp_slow_closed);
    cJSON_AddNumberToObject(pool, "tcp_refused", (double)nc.tcp_refused);
    cJSON_AddNumberToObject(pool, "udp_segmented", (double)nc.udp_segmented);
    cJSON_AddNumberToObject(pool, "udp_segment_refused",
                            (double)nc.udp_segment_refused);
    cJSON_AddNumberToObject(pool, "tls_handshakes", (double)nc.tls_handshakes);
    cJSON_AddNumberToObject(pool, "tls_resumed", (double)nc.tls_resumed);
    cJSON_AddNumberToObject(pool, "tls_failures", (double)nc.tls_failures);
    cJSON_AddNumberToObject(pool, "doh_http_refusals",
                            (double)nc.doh_http_refusals);
    cJSON_AddNumberToObject(pool, "doh_goaways", (double)nc.doh_goaways);
    cJSON_AddNumberToObject(pool, "doh_resets", (double)nc.doh_resets);
    cJSON_AddNumberToObject(pool, "tcp_connect_failures",
                            (double)nc.tcp_connect_failures);
    cJSON_AddNumberToObject(pool, "checks_failed", (double)nc.checks_failed);
    cJSON_AddNumberToObject(pool, "discovery_found",
                            (double)nc.discovery_found);
  }
  text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) {
    return;
  }
  snprintf(tmp, sizeof(tmp), "%s.tmp", c->stats_json);
  errno = 0;
  f = fopen(tmp, "w");
  if (f) {
    int ok = fputs(text, f) != EOF && fputc('\n', f) != EOF;
    ok = fclose(f) == 0 && ok;
    written = ok && rename(tmp, c->stats_json) == 0;
  }
  cJSON_free(text);
  /* Reported when it starts failing and when it works again, not at
     every tick. */
  if (!written && !c->json_failing) {
    cli_logf(RP_LOG_WARN, "--stats-json: cannot write %s: %s", c->stats_json,
             errno ? strerror(errno) : "write failed");
  } else if (written && c->json_failing) {
    cli_logf(RP_LOG_INFO, "--stats-json: %s written again", c->stats_json);
  }
  c->json_failing = !written;
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
