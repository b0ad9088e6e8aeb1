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
          "Run a smart DNS resolver pool on 127.0.0.1 for a DNS tunnel.\n"
          "The first line printed on standard output is the address the\n"
          "pool listens on (UDP and TCP).\n"
          "\n"
          "  -r, --resolver URL      add a resolver (repeatable): HOST, "
          "HOST:PORT,\n"
          "                          tcp://HOST:PORT (dot://, tls://, "
          "https:// and\n"
          "                          auto are parsed but not supported yet)\n"
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

int main(int argc, char **argv) {
  enum { OPT_STATS_JSON = 256, OPT_SCORES, OPT_PRETEST };
  static const struct option longopts[] = {
      {"resolver", required_argument, NULL, 'r'},
      {"config", required_argument, NULL, 'c'},
      {"listen", required_argument, NULL, 'l'},
      {"kind", required_argument, NULL, 'k'},
      {"stats", required_argument, NULL, 's'},
      {"stats-json", required_argument, NULL, OPT_STATS_JSON},
      {"scores", required_argument, NULL, OPT_SCORES},
      {"pretest", required_argument, NULL, OPT_PRETEST},
      {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0}};
  cli c = {.log_level = RP_LOG_WARN, .exit_code = CLI_EXIT_OK};
  rp_config cfg;
  rp_net_options opts = {0};
  char err[RP_CONFIG_ERRLEN], addr[64];
  const char *config_file = NULL, *listen = NULL, *kind = NULL, *stats = NULL,
             *scores = NULL, *pretest = NULL;
  const char **resolvers = NULL;
  size_t nresolvers = 0, i;
  int opt, rv;

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
