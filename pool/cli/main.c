/*
 * main.c: the respool command.
 *
 * respool runs a pool on 127.0.0.1 for a DNS tunnel client (or anything
 * that sends DNS queries) and prints the address it listens on as the
 * first line of its standard output. Exit codes: 0 after a clean
 * shutdown (SIGINT or SIGTERM), 1 on a runtime failure (cannot bind, out
 * of memory, scores not saved), 2 on a usage or configuration error.
 */
#include "respool_net.h"
#include "disc.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cjson/cJSON.h>

/* CLI_EXIT_OK, CLI_EXIT_RUNTIME and CLI_EXIT_USAGE are the exit codes. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_RUNTIME 1
#define CLI_EXIT_USAGE 2
/* CLI_DEFAULT_STATS is the --stats-json interval without --stats. */
#define CLI_DEFAULT_STATS (5 * RP_SECONDS)
/* CLI_NAME_WIDTH is the resolver column of the stats table. */
#define CLI_NAME_WIDTH 24
/* CLI_PERCENT turns a ratio into percent. */
#define CLI_PERCENT 100.0

typedef struct cli {
  uv_loop_t *loop;
  rp_net_pool *np;
  uv_signal_t sigint, sigterm;
  uv_timer_t stats_timer;
  int stats_on;
  rp_duration stats_interval;
  int print_table;
  const char *stats_json;
  rp_log_level log_level;
  int exit_code;
  int stopping;
} cli;

static void cli_usage(FILE *f) {
  fprintf(f,
          "Usage: respool [OPTION]...\n"
          "       respool discover [OPTION]...  (see respool discover "
          "--help)\n"
          "Run a smart DNS resolver pool on 127.0.0.1 for a DNS tunnel.\n"
          "The first line printed on standard output is the address the\n"
          "pool listens on (UDP and TCP).\n"
          "\n"
          "  -r, --resolver URL      add a resolver (repeatable): IP, "
          "IP:PORT,\n"
          "                          tcp://IP:PORT, dot://HOST[:853] "
          "(tls://),\n"
          "                          dot://NAME@IP:PORT, "
          "https://HOST[:PORT]/PATH,\n"
          "                          https://NAME@IP:PORT/PATH, or auto "
          "(discovery)\n"
          "  -c, --config FILE       read the smart_pool JSON object from "
          "FILE\n"
          "  -l, --listen ADDR:PORT  listen address (default 127.0.0.1:0, a "
          "free port)\n"
          "  -k, --kind KIND         dnstt, masterdns or generic (default "
          "generic)\n"
          "  -s, --stats INTERVAL    print a per-resolver table on stderr "
          "every\n"
          "                          INTERVAL (e.g. 5s)\n"
          "      --stats-json FILE   write the same figures as JSON to FILE "
          "(every\n"
          "                          INTERVAL, 5s by default, and at exit)\n"
          "      --scores FILE       keep resolver scores in FILE (read at "
          "start,\n"
          "                          written at exit)\n"
          "      --pretest NAME      domain of the start-up check (default "
          "example.com;\n"
          "                          \"\" adds every resolver unchecked)\n"
          "      --tls-ca FILE       also trust the CA certificates (PEM) in "
          "FILE for\n"
          "                          DoT and DoH (the system store is always "
          "used)\n"
          "      --tls-name NAME     name the DoT/DoH certificates must carry "
          "when\n"
          "                          the URL gives none (default: the host)\n"
          "      --resolver-list FILE  discovery candidates, one address a "
          "line\n"
          "                          (implies -r auto)\n"
          "  -v, --verbose           log more on stderr (twice for debug)\n"
          "  -h, --help              print this help and exit\n"
          "  -V, --version           print the version and exit\n"
          "\n"
          "Command-line options override the config file; -r resolvers are "
          "added\n"
          "to the file's. SIGINT or SIGTERM stops the pool and saves the "
          "scores.\n"
          "\n"
          "Exit status: 0 clean shutdown, 1 runtime failure, 2 usage or "
          "configuration\n"
          "error.\n");
}

static void cli_log(rp_log_level level, const char *line, void *user_data) {
  static const char *const names[] = {"error", "warn", "info", "debug"};
  (void)user_data;
  fprintf(stderr, "respool: %s %s\n",
          (size_t)level < sizeof(names) / sizeof(names[0]) ? names[level] : "?",
          line);
}

/* cli_ms prints a duration in ms, or "-" when unset. */
static void cli_ms(char *out, size_t cap, rp_duration d) {
  if (d == RP_TSTAMP_UNSET) {
    snprintf(out, cap, "-");
  } else {
    snprintf(out, cap, "%.1f", (double)d / (double)RP_MILLISECONDS);
  }
}

static void cli_print_table(cli *c, rp_tstamp now) {
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
          "hedges=%llu inflight=%zu up=%zu/%zu\n",
          (unsigned long long)ps.queries, (unsigned long long)ps.delivered,
          (unsigned long long)ps.failed, (unsigned long long)ps.waits,
          (unsigned long long)ps.copies, (unsigned long long)ps.hedges,
          ps.inflight, ps.nup, ps.nresolvers);
}

/* cli_write_json writes the stats to c->stats_json (temp + rename). */
static void cli_write_json(cli *c, rp_tstamp now) {
  cJSON *root = cJSON_CreateObject(), *arr, *pool;
  size_t i, n = rp_net_pool_resolver_count(c->np);
  rp_pool_stats ps;
  rp_net_counters nc;
  char tmp[4096], *text;
  FILE *f;
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
    cJSON_AddNumberToObject(o, "errors", (double)info.stats.errors);
    cJSON_AddNumberToObject(o, "copies", (double)info.stats.copies);
    cJSON_AddNumberToObject(o, "hedges", (double)info.stats.hedges);
    cJSON_AddNumberToObject(o, "probes", (double)info.stats.probes);
    cJSON_AddNumberToObject(o, "score", info.stats.score);
  }
  rp_pool_get_stats(rp_net_pool_get_core(c->np), &ps);
  rp_net_pool_get_counters(c->np, &nc);
  pool = cJSON_AddObjectToObject(root, "pool");
  if (pool) {
    cJSON_AddNumberToObject(pool, "queries", (double)ps.queries);
    cJSON_AddNumberToObject(pool, "delivered", (double)ps.delivered);
    cJSON_AddNumberToObject(pool, "failed", (double)ps.failed);
    cJSON_AddNumberToObject(pool, "waits", (double)ps.waits);
    cJSON_AddNumberToObject(pool, "sends", (double)ps.sends);
    cJSON_AddNumberToObject(pool, "copies", (double)ps.copies);
    cJSON_AddNumberToObject(pool, "hedges", (double)ps.hedges);
    cJSON_AddNumberToObject(pool, "resends", (double)ps.resends);
    cJSON_AddNumberToObject(pool, "probes", (double)ps.probes);
    cJSON_AddNumberToObject(pool, "malformed", (double)ps.malformed);
    cJSON_AddNumberToObject(pool, "spoofed", (double)ps.spoofed);
    cJSON_AddNumberToObject(pool, "nup", (double)ps.nup);
    cJSON_AddNumberToObject(pool, "udp_queries", (double)nc.udp_queries);
    cJSON_AddNumberToObject(pool, "tcp_queries", (double)nc.tcp_queries);
    cJSON_AddNumberToObject(pool, "truncated_to_client",
                            (double)nc.truncated_to_client);
    cJSON_AddNumberToObject(pool, "tcp_connects", (double)nc.tcp_connects);
    cJSON_AddNumberToObject(pool, "send_failures", (double)nc.send_failures);
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
  f = fopen(tmp, "w");
  if (f) {
    int ok = fputs(text, f) != EOF && fputc('\n', f) != EOF;
    if (fclose(f) == 0 && ok) {
      rename(tmp, c->stats_json);
    }
  }
  cJSON_free(text);
}

static void cli_stats_cb(uv_timer_t *t) {
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

static void cli_pool_closed(rp_net_pool *np, void *user_data) {
  cli *c = user_data;
  (void)np;
  c->np = NULL;
}

static void cli_stop(cli *c) {
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  if (c->stopping) {
    return;
  }
  c->stopping = 1;
  if (c->print_table) {
    cli_print_table(c, now);
  }
  if (c->stats_json) {
    cli_write_json(c, now);
  }
  uv_close((uv_handle_t *)&c->sigint, NULL);
  uv_close((uv_handle_t *)&c->sigterm, NULL);
  if (c->stats_on) {
    uv_close((uv_handle_t *)&c->stats_timer, NULL);
  }
  if (rp_net_pool_stop(c->np, cli_pool_closed, c) != 0) {
    c->exit_code = CLI_EXIT_RUNTIME;
  }
}

/* cli_raise_nofile lifts the open-file limit to its hard maximum: each
   resolver in use holds a UDP socket (and maybe a TCP connection). */
static void cli_raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

static void cli_signal_cb(uv_signal_t *s, int signum) {
  cli *c = s->data;
  (void)signum;
  cli_stop(c);
}

/* ------------------------------------------------------------------ */
/* respool discover                                                     */
/* ------------------------------------------------------------------ */

/* CLI_ADDR_WIDTH is the address column of the discover table. */
#define CLI_ADDR_WIDTH 40

/* cli_disc_row is one line of the discover output. */
typedef struct cli_disc_row {
  char addr[RP_DISC_ADDR_LEN];
  rp_disc_source source;
  rp_disc_result result;
  rp_duration latency;
} cli_disc_row;

typedef struct cli_disc {
  cli_disc_row *rows;
  size_t nrows, cap;
  int all;
  int oom;
  rp_disc_stats stats;
  uv_signal_t sigint;
  rp_disc *d;
} cli_disc;

static void cli_disc_keep(cli_disc *cd, const rp_disc_report *rep) {
  if (cd->nrows == cd->cap) {
    size_t ncap = cd->cap ? cd->cap * 2 : 64;
    cli_disc_row *n = realloc(cd->rows, ncap * sizeof(*n));
    if (!n) {
      cd->oom = 1;
      return;
    }
    cd->rows = n;
    cd->cap = ncap;
  }
  snprintf(cd->rows[cd->nrows].addr, RP_DISC_ADDR_LEN, "%s", rep->addr);
  cd->rows[cd->nrows].source = rep->source;
  cd->rows[cd->nrows].result = rep->result;
  cd->rows[cd->nrows].latency = rep->latency;
  ++cd->nrows;
}

static void cli_disc_result(const rp_disc_report *rep, void *user_data) {
  cli_disc *cd = user_data;
  if (cd->all || rep->result == RP_DISC_PASSED) {
    cli_disc_keep(cd, rep);
  }
}

static void cli_disc_done(const rp_disc_stats *st, void *user_data) {
  cli_disc *cd = user_data;
  cd->stats = *st;
  if (!uv_is_closing((uv_handle_t *)&cd->sigint)) {
    uv_close((uv_handle_t *)&cd->sigint, NULL);
  }
  rp_disc_stop(cd->d, NULL, NULL);
}

static void cli_disc_signal(uv_signal_t *s, int signum) {
  cli_disc *cd = s->data;
  (void)signum;
  rp_disc_stop(cd->d, NULL, NULL);
}

static void cli_disc_print(const cli_disc *cd, int json) {
  size_t i;
  if (json) {
    cJSON *root = cJSON_CreateObject(), *arr, *by;
    char *text;
    if (!root) {
      return;
    }
    arr = cJSON_AddArrayToObject(root, cd->all ? "results" : "found");
    for (i = 0; arr && i < cd->nrows; ++i) {
      const cli_disc_row *r = &cd->rows[i];
      cJSON *o = cJSON_CreateObject();
      if (!o) {
        continue;
      }
      cJSON_AddItemToArray(arr, o);
      cJSON_AddStringToObject(o, "address", r->addr);
      cJSON_AddStringToObject(o, "source", rp_disc_source_str(r->source));
      cJSON_AddStringToObject(o, "result", rp_disc_result_str(r->result));
      if (r->latency == RP_TSTAMP_UNSET) {
        cJSON_AddNullToObject(o, "latency_ms");
      } else {
        cJSON_AddNumberToObject(o, "latency_ms",
                                (double)r->latency / (double)RP_MILLISECONDS);
      }
    }
    cJSON_AddNumberToObject(root, "candidates", (double)cd->stats.candidates);
    cJSON_AddNumberToObject(root, "tested", (double)cd->stats.tested);
    cJSON_AddNumberToObject(root, "passed", (double)cd->stats.passed);
    cJSON_AddNumberToObject(root, "skipped", (double)cd->stats.skipped);
    cJSON_AddNumberToObject(root, "elapsed_s",
                            (double)cd->stats.elapsed / (double)RP_SECONDS);
    by = cJSON_AddObjectToObject(root, "by_result");
    for (i = 0; by && i < RP_DISC_NRESULTS; ++i) {
      cJSON_AddNumberToObject(by, rp_disc_result_str((rp_disc_result)i),
                              (double)cd->stats.by_result[i]);
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text) {
      printf("%s\n", text);
      cJSON_free(text);
    }
    return;
  }
  printf("%-*s %-8s %10s  %s\n", CLI_ADDR_WIDTH, "address", "source",
         "latency_ms", "pretest");
  for (i = 0; i < cd->nrows; ++i) {
    const cli_disc_row *r = &cd->rows[i];
    char lat[16];
    cli_ms(lat, sizeof(lat), r->latency);
    printf("%-*s %-8s %10s  %s\n", CLI_ADDR_WIDTH, r->addr,
           rp_disc_source_str(r->source), lat, rp_disc_result_str(r->result));
  }
  printf("found %zu; tested %zu of %zu candidates in %.2f s (timeout %zu, "
         "unreachable %zu, refused %zu, bad_rcode %zu, send_failed %zu; "
         "skipped lines %zu)\n",
         cd->stats.passed, cd->stats.tested, cd->stats.candidates,
         (double)cd->stats.elapsed / (double)RP_SECONDS,
         cd->stats.by_result[RP_DISC_TIMEOUT],
         cd->stats.by_result[RP_DISC_UNREACHABLE],
         cd->stats.by_result[RP_DISC_REFUSED],
         cd->stats.by_result[RP_DISC_BAD_RCODE],
         cd->stats.by_result[RP_DISC_SEND_FAILED], cd->stats.skipped);
}

static void cli_disc_usage(FILE *f) {
  fprintf(f,
          "Usage: respool discover [OPTION]...\n"
          "Find working UDP resolvers as \"auto\" does and print them with "
          "their\nlatency and pretest result (a table, or JSON).\n"
          "\n"
          "  -c, --config FILE         read the discovery object of FILE\n"
          "      --resolver-list FILE  candidates, one address a line "
          "(tried last)\n"
          "      --want N              stop after N pass (default 10)\n"
          "      --concurrency N       pretests at once (default 100)\n"
          "      --timeout DUR         one pretest's wait (default 1s)\n"
          "      --pace DUR            least gap between two pretests "
          "(default 0)\n"
          "      --country CC          bundled list of country CC\n"
          "      --sample-ranges N     try N addresses of the country's "
          "ranges\n"
          "      --no-system           skip /etc/resolv.conf\n"
          "      --no-bundled          skip the bundled public resolvers\n"
          "      --pretest NAME        domain queried (default example.com)\n"
          "      --all                 print every tested candidate\n"
          "      --json                print JSON instead of a table\n"
          "  -v, --verbose             log progress on stderr\n"
          "\nExit status: 0 when at least one resolver passed, 1 when none "
          "did, 2\non a usage or configuration error.\n");
}

static int cli_discover(int argc, char **argv) {
  enum {
    D_LIST = 256,
    D_WANT,
    D_CONC,
    D_TIMEOUT,
    D_PACE,
    D_COUNTRY,
    D_SAMPLE,
    D_NOSYS,
    D_NOBUNDLED,
    D_PRETEST,
    D_ALL,
    D_JSON
  };
  static const struct option longopts[] = {
      {"config", required_argument, NULL, 'c'},
      {"resolver-list", required_argument, NULL, D_LIST},
      {"want", required_argument, NULL, D_WANT},
      {"concurrency", required_argument, NULL, D_CONC},
      {"timeout", required_argument, NULL, D_TIMEOUT},
      {"pace", required_argument, NULL, D_PACE},
      {"country", required_argument, NULL, D_COUNTRY},
      {"sample-ranges", required_argument, NULL, D_SAMPLE},
      {"no-system", no_argument, NULL, D_NOSYS},
      {"no-bundled", no_argument, NULL, D_NOBUNDLED},
      {"pretest", required_argument, NULL, D_PRETEST},
      {"all", no_argument, NULL, D_ALL},
      {"json", no_argument, NULL, D_JSON},
      {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  rp_config cfg;
  cli_disc cd = {0};
  rp_disc_options o = {0};
  rp_log_level level = RP_LOG_WARN;
  char err[RP_CONFIG_ERRLEN] = "";
  const char *config_file = NULL, *list = NULL, *pretest = NULL;
  int opt, rv = 0, json = 0, nosys = 0, nobundled = 0;
  long want = 0, conc = 0, sample = -1;
  rp_duration timeout = 0, pace = 0;
  char country[8] = "";
  uv_loop_t *loop;

  optind = 1;
  while ((opt = getopt_long(argc, argv, "c:vh", longopts, NULL)) != -1) {
    switch (opt) {
    case 'c':
      config_file = optarg;
      break;
    case D_LIST:
      list = optarg;
      break;
    case D_WANT:
    case D_CONC:
    case D_SAMPLE: {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (*end || v < (opt == D_SAMPLE ? 0 : 1) || v > 1000000) {
        fprintf(stderr, "respool discover: bad number: %s\n", optarg);
        return CLI_EXIT_USAGE;
      }
      *(opt == D_WANT ? &want : opt == D_CONC ? &conc : &sample) = v;
      break;
    }
    case D_TIMEOUT:
    case D_PACE:
      if (rp_config_parse_duration(optarg, opt == D_PACE,
                                   opt == D_PACE ? &pace : &timeout) != 0) {
        fprintf(stderr, "respool discover: bad duration: %s\n", optarg);
        return CLI_EXIT_USAGE;
      }
      break;
    case D_COUNTRY:
      if (strlen(optarg) != 2) {
        fprintf(stderr, "respool discover: bad country code: %s\n", optarg);
        return CLI_EXIT_USAGE;
      }
      snprintf(country, sizeof(country), "%s", optarg);
      break;
    case D_NOSYS:
      nosys = 1;
      break;
    case D_NOBUNDLED:
      nobundled = 1;
      break;
    case D_PRETEST:
      pretest = optarg;
      break;
    case D_ALL:
      cd.all = 1;
      break;
    case D_JSON:
      json = 1;
      break;
    case 'v':
      if (level < RP_LOG_DEBUG) {
        level = (rp_log_level)(level + 1);
      }
      break;
    case 'h':
      cli_disc_usage(stdout);
      return CLI_EXIT_OK;
    default:
      cli_disc_usage(stderr);
      return CLI_EXIT_USAGE;
    }
  }
  rp_config_init(&cfg, NULL);
  if (config_file) {
    rv = rp_config_load_file(&cfg, config_file, err, sizeof(err));
  }
  if (rv == 0 && list) {
    free(cfg.discovery.list_file);
    cfg.discovery.list_file = strdup(list);
    rv = cfg.discovery.list_file ? 0 : RP_ERR_NOMEM;
  }
  if (rv != 0) {
    fprintf(stderr, "respool discover: %s\n",
            rv == RP_ERR_NOMEM ? "out of memory" : err);
    rp_config_free(&cfg);
    return rv == RP_ERR_NOMEM ? CLI_EXIT_RUNTIME : CLI_EXIT_USAGE;
  }
  if (want) {
    cfg.discovery.want = (uint32_t)want;
  }
  if (conc) {
    cfg.discovery.concurrency = (uint32_t)conc;
  }
  if (sample >= 0) {
    cfg.discovery.sample_ranges = (uint32_t)sample;
  }
  if (timeout) {
    cfg.discovery.timeout = timeout;
  }
  if (pace) {
    cfg.discovery.pace = pace;
  }
  if (country[0]) {
    memcpy(cfg.discovery.country, country, sizeof(country));
  }
  if (nosys) {
    cfg.discovery.system = 0;
  }
  if (nobundled) {
    cfg.discovery.bundled = 0;
  }
  cli_raise_nofile();
  loop = uv_default_loop();
  o.config = &cfg.discovery;
  o.pretest_domain = pretest ? pretest : cfg.pretest_domain;
  o.on_result = cli_disc_result;
  o.on_done = cli_disc_done;
  o.log = cli_log;
  o.log_level = level;
  o.user_data = &cd;
  uv_signal_init(loop, &cd.sigint);
  cd.sigint.data = &cd;
  uv_signal_start(&cd.sigint, cli_disc_signal, SIGINT);
  rv = rp_disc_start(&cd.d, loop, &o, err, sizeof(err));
  rp_config_free(&cfg);
  if (rv != 0) {
    fprintf(stderr, "respool discover: %s\n", err[0] ? err : rp_strerror(rv));
    uv_close((uv_handle_t *)&cd.sigint, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return rv == RP_ERR_NOMEM ? CLI_EXIT_RUNTIME : CLI_EXIT_USAGE;
  }
  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
  cli_disc_print(&cd, json);
  free(cd.rows);
  return cd.stats.passed > 0 ? CLI_EXIT_OK : CLI_EXIT_RUNTIME;
}

int main(int argc, char **argv) {
  enum {
    OPT_STATS_JSON = 256,
    OPT_SCORES,
    OPT_PRETEST,
    OPT_TLS_CA,
    OPT_TLS_NAME,
    OPT_RESOLVER_LIST
  };
  static const struct option longopts[] = {
      {"resolver", required_argument, NULL, 'r'},
      {"config", required_argument, NULL, 'c'},
      {"listen", required_argument, NULL, 'l'},
      {"kind", required_argument, NULL, 'k'},
      {"stats", required_argument, NULL, 's'},
      {"stats-json", required_argument, NULL, OPT_STATS_JSON},
      {"scores", required_argument, NULL, OPT_SCORES},
      {"pretest", required_argument, NULL, OPT_PRETEST},
      {"tls-ca", required_argument, NULL, OPT_TLS_CA},
      {"tls-name", required_argument, NULL, OPT_TLS_NAME},
      {"resolver-list", required_argument, NULL, OPT_RESOLVER_LIST},
      {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0}};
  cli c = {.log_level = RP_LOG_WARN, .exit_code = CLI_EXIT_OK};
  rp_config cfg;
  rp_net_options opts = {0};
  char err[RP_CONFIG_ERRLEN], addr[64];
  const char *config_file = NULL, *listen = NULL, *kind = NULL, *stats = NULL,
             *scores = NULL, *pretest = NULL, *tls_ca = NULL, *tls_name = NULL,
             *resolver_list = NULL;
  const char **resolvers = NULL;
  size_t nresolvers = 0, i;
  int opt, rv;

  if (argc > 1 && strcmp(argv[1], "discover") == 0) {
    return cli_discover(argc - 1, argv + 1);
  }
  resolvers = calloc((size_t)argc + 1, sizeof(*resolvers));
  if (!resolvers) {
    fprintf(stderr, "respool: out of memory\n");
    return CLI_EXIT_RUNTIME;
  }
  while ((opt = getopt_long(argc, argv, "r:c:l:k:s:vhV", longopts, NULL)) !=
         -1) {
    switch (opt) {
    case 'r':
      resolvers[nresolvers++] = optarg;
      break;
    case 'c':
      config_file = optarg;
      break;
    case 'l':
      listen = optarg;
      break;
    case 'k':
      kind = optarg;
      break;
    case 's':
      stats = optarg;
      break;
    case OPT_STATS_JSON:
      c.stats_json = optarg;
      break;
    case OPT_SCORES:
      scores = optarg;
      break;
    case OPT_PRETEST:
      pretest = optarg;
      break;
    case OPT_TLS_CA:
      tls_ca = optarg;
      break;
    case OPT_TLS_NAME:
      tls_name = optarg;
      break;
    case OPT_RESOLVER_LIST:
      resolver_list = optarg;
      break;
    case 'v':
      if (c.log_level < RP_LOG_DEBUG) {
        c.log_level = (rp_log_level)(c.log_level + 1);
      }
      break;
    case 'h':
      cli_usage(stdout);
      free(resolvers);
      return CLI_EXIT_OK;
    case 'V':
      printf("respool %s\n", RP_VERSION);
      free(resolvers);
      return CLI_EXIT_OK;
    default:
      cli_usage(stderr);
      free(resolvers);
      return CLI_EXIT_USAGE;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "respool: unexpected argument: %s\n", argv[optind]);
    cli_usage(stderr);
    free(resolvers);
    return CLI_EXIT_USAGE;
  }

  rp_config_init(&cfg, NULL);
  rv = 0;
  if (config_file) {
    rv = rp_config_load_file(&cfg, config_file, err, sizeof(err));
  }
  for (i = 0; rv == 0 && i < nresolvers; ++i) {
    rv = rp_config_add_resolver(&cfg, resolvers[i], "command line",
                                "--resolver", err, sizeof(err));
  }
  free(resolvers);
  if (rv == 0 && listen) {
    rv = rp_config_parse_listen(listen, &cfg.listen);
    cfg.has_listen = 1;
    if (rv != 0) {
      snprintf(err, sizeof(err), "command line: --listen: bad address (%s)",
               listen);
    }
  }
  if (rv == 0 && kind) {
    rv = rp_config_parse_kind(kind, &cfg.kind);
    cfg.has_kind = 1;
    if (rv != 0) {
      snprintf(err, sizeof(err),
               "command line: --kind: expected dnstt, masterdns or generic "
               "(%s)",
               kind);
    }
  }
  if (rv == 0 && stats) {
    rv = rp_config_parse_duration(stats, 0, &c.stats_interval);
    if (rv != 0) {
      snprintf(err, sizeof(err),
               "command line: --stats: bad duration (%s; use e.g. 5s)", stats);
    }
    c.print_table = 1;
  }
  if (rv == 0 && scores) {
    free(cfg.scores_file);
    cfg.scores_file = strdup(scores);
    rv = cfg.scores_file ? 0 : RP_ERR_NOMEM;
  }
  if (rv == 0 && pretest) {
    free(cfg.pretest_domain);
    cfg.pretest_domain = strdup(pretest);
    rv = cfg.pretest_domain ? 0 : RP_ERR_NOMEM;
  }
  if (rv == 0 && tls_ca) {
    free(cfg.tls_ca);
    cfg.tls_ca = strdup(tls_ca);
    rv = cfg.tls_ca ? 0 : RP_ERR_NOMEM;
  }
  if (rv == 0 && tls_name) {
    free(cfg.tls_name);
    cfg.tls_name = strdup(tls_name);
    rv = cfg.tls_name ? 0 : RP_ERR_NOMEM;
  }
  if (rv == 0 && resolver_list) {
    free(cfg.discovery.list_file);
    cfg.discovery.list_file = strdup(resolver_list);
    rv = cfg.discovery.list_file ? 0 : RP_ERR_NOMEM;
  }
  if (rv == 0 && resolver_list) {
    /* A resolver list means discovery: add "auto" unless it is there. */
    int has_auto = 0;
    for (i = 0; i < cfg.nresolvers; ++i) {
      has_auto |= cfg.resolvers[i].scheme == RP_SCHEME_AUTO;
    }
    if (!has_auto) {
      rv = rp_config_add_resolver(&cfg, "auto", "command line",
                                  "--resolver-list", err, sizeof(err));
    }
  }
  if (rv == 0 && cfg.nresolvers == 0) {
    snprintf(err, sizeof(err), "no resolvers: give -r URL or --config FILE");
    rv = RP_ERR_CONFIG;
  }
  if (rv != 0) {
    fprintf(stderr, "respool: %s\n",
            rv == RP_ERR_NOMEM ? "out of memory" : err);
    if (rv != RP_ERR_NOMEM && !config_file && nresolvers == 0) {
      cli_usage(stderr);
    }
    rp_config_free(&cfg);
    return rv == RP_ERR_NOMEM ? CLI_EXIT_RUNTIME : CLI_EXIT_USAGE;
  }

  cli_raise_nofile();
  c.loop = uv_default_loop();
  opts.config = &cfg;
  opts.kind = RP_KIND_GENERIC;
  opts.log = cli_log;
  opts.log_level = c.log_level;
  opts.user_data = &c;
  rv = rp_net_pool_start(&c.np, c.loop, &opts, err, sizeof(err));
  rp_config_free(&cfg);
  if (rv != 0) {
    fprintf(stderr, "respool: %s\n", err[0] ? err : rp_strerror(rv));
    uv_run(c.loop, UV_RUN_DEFAULT);
    uv_loop_close(c.loop);
    return rv == RP_ERR_CONFIG || rv == RP_ERR_INVALID_ARGUMENT
               ? CLI_EXIT_USAGE
               : CLI_EXIT_RUNTIME;
  }
  rp_net_pool_format_address(c.np, addr, sizeof(addr));
  printf("%s\n", addr);
  fflush(stdout);

  uv_signal_init(c.loop, &c.sigint);
  uv_signal_init(c.loop, &c.sigterm);
  c.sigint.data = c.sigterm.data = &c;
  uv_signal_start(&c.sigint, cli_signal_cb, SIGINT);
  uv_signal_start(&c.sigterm, cli_signal_cb, SIGTERM);
  signal(SIGPIPE, SIG_IGN);
  if (c.print_table || c.stats_json) {
    uint64_t ms;
    if (!c.stats_interval) {
      c.stats_interval = CLI_DEFAULT_STATS;
    }
    ms = c.stats_interval / RP_MILLISECONDS;
    uv_timer_init(c.loop, &c.stats_timer);
    c.stats_timer.data = &c;
    uv_timer_start(&c.stats_timer, cli_stats_cb, ms ? ms : 1, ms ? ms : 1);
    c.stats_on = 1;
  }
  uv_run(c.loop, UV_RUN_DEFAULT);
  if (uv_loop_close(c.loop) != 0) {
    fprintf(stderr, "respool: warning: handles left open at exit\n");
  }
  return c.exit_code;
}
