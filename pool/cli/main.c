/*
 * main.c: the respool command.
 *
 * respool runs a pool on 127.0.0.1 for a DNS tunnel client (or anything
 * that sends DNS queries) and prints the address it listens on as the
 * first line of its standard output. SIGHUP reloads the configuration
 * (cli_reload). Exit codes: 0 after a clean shutdown (SIGINT or SIGTERM), 1 on
 * a runtime failure (cannot bind, out of memory, scores not saved), 2 on a
 * usage or configuration error.
 *
 * main.c owns option parsing and the run (signals, reload, stop); the
 * configuration is built in load.c, the stats output is in stats.c,
 * "respool discover" in discover.c.
 */
#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <nghttp2/nghttp2.h>
#include <openssl/crypto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* RP_GIT_COMMIT is the commit the build was configured at (CMake). */
#ifndef RP_GIT_COMMIT
#define RP_GIT_COMMIT "unknown"
#endif

/* cli_version prints the version, the commit and the libraries in use
   (their run-time versions). */
static void cli_version(void) {
  printf("respool %s (commit %s)\nlibuv %s, %s, nghttp2 %s, cJSON %s\n",
         RP_VERSION, RP_GIT_COMMIT, uv_version_string(),
         OpenSSL_version(OPENSSL_VERSION), nghttp2_version(0)->version_str,
         cJSON_Version());
}

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
          "      --resolvers-file FILE  add the resolvers of FILE, one URL "
          "a line\n"
          "                          ('#' comments; repeatable)\n"
          "  -l, --listen ADDR:PORT  listen address (default 127.0.0.1:0, a "
          "free port)\n"
          "      --allow-remote      allow a listen address that is not "
          "loopback\n"
          "                          (anyone who reaches it may use the "
          "pool)\n"
          "  -k, --kind KIND         auto, dnstt, masterdns or generic "
          "(default auto:\n"
          "                          generic until the queries show dnstt "
          "or\n"
          "                          MasterDnsVPN, then that kind's "
          "defaults)\n"
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
          "      --want N            working resolvers to keep: checking "
          "pauses once\n"
          "                          N passed (default 10; every listed one "
          "is\n"
          "                          checked at once until then)\n"
          "      --tls-ca FILE       also trust the CA certificates (PEM) in "
          "FILE for\n"
          "                          DoT and DoH (the system store is always "
          "used)\n"
          "      --tls-name NAME     name the DoT/DoH certificates must carry "
          "when\n"
          "                          the URL gives none (default: the host)\n"
          "      --resolver-list FILE  discovery candidates, one address a "
          "line\n"
          "                          (implies -r auto over this list only)\n"
          "      --no-system         discovery skips /etc/resolv.conf\n"
          "      --no-bundled        discovery skips the bundled public "
          "resolvers\n"
          "      --set NAME=VALUE    set a tuning constant of the pool "
          "(repeatable;\n"
          "                          --list-settings shows every NAME, its "
          "unit and\n"
          "                          the value for --kind)\n"
          "      --list-settings     print the tuning constants and exit\n"
          "      --check-config      check the configuration and the options "
          "(paths,\n"
          "                          listen address, resolvers), say so and "
          "exit\n"
          "  -v, --verbose           log more on stderr (twice for debug)\n"
          "      --log-level LEVEL   error, warn (the pool's default), info "
          "or debug\n"
          "      --log-file FILE     append the event log to FILE instead of "
          "stderr\n"
          "      --log-format FMT    text (default) or json, one event a "
          "line\n"
          "      --metrics ADDR:PORT  serve Prometheus metrics at "
          "http://ADDR:PORT/metrics\n"
          "  -h, --help              print this help and exit\n"
          "  -V, --version           print the version and exit\n"
          "\n"
          "Command-line options override the config file; -r resolvers are "
          "added\n"
          "to the file's. SIGINT or SIGTERM stops the pool and saves the "
          "scores.\n"
          "SIGHUP reloads: the config and resolver files are read again; "
          "resolvers\n"
          "added or removed without losing queries; a bad configuration is "
          "rejected\n"
          "and the running one kept.\n"
          "\n"
          "Exit status: 0 clean shutdown, 1 runtime failure, 2 usage or "
          "configuration\n"
          "error.\n");
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
  uv_close((uv_handle_t *)&c->sighup, NULL);
  if (c->stats_on) {
    uv_close((uv_handle_t *)&c->stats_timer, NULL);
  }
  if (c->summary_on) {
    uv_close((uv_handle_t *)&c->summary_timer, NULL);
  }
  cli_metrics_stop(c);
  if (rp_net_pool_stop(c->np, cli_pool_closed, c) != 0) {
    c->exit_code = CLI_EXIT_RUNTIME;
  }
}

/* cli_raise_nofile lifts the open-file limit to its hard maximum: each
   resolver in use holds a UDP socket (and maybe a TCP connection). */
void cli_raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

/* cli_reload reads the configuration again (the files the options
   name, the options over them) and hands it to the pool; a
   configuration a start would reject is rejected whole, the running one
   kept. */
static void cli_reload(cli *c) {
  rp_config cfg;
  rp_net_reload_report rep;
  char err[RP_CONFIG_ERRLEN];
  int rv;

  if (c->stopping || !c->np) {
    return;
  }
  err[0] = '\0';
  rv = cli_load_config(&c->args, &cfg, err, sizeof(err));
  if (rv == 0) {
    rv = cli_check_config(&c->args, &cfg, err, sizeof(err));
  }
  if (rv == 0) {
    rv = rp_net_pool_reload(c->np, &cfg, &rep, err, sizeof(err));
  }
  if (rv != 0) {
    cli_logf(RP_LOG_ERROR,
             "SIGHUP: new configuration rejected, the running one kept: %s",
             rv == RP_ERR_NOMEM ? "out of memory"
                                : (err[0] ? err : rp_strerror(rv)));
  } else {
    c->want = cfg.discovery.want;
    cli_logf(RP_LOG_INFO,
             "SIGHUP: configuration reloaded: %zu resolver%s added, %zu "
             "removed, %zu kept",
             rep.added, rep.added == 1 ? "" : "s", rep.removed, rep.kept);
    if (rep.restart[0]) {
      cli_logf(RP_LOG_WARN,
               "SIGHUP: changed, but applied only at a restart: %s",
               rep.restart);
    }
  }
  rp_config_free(&cfg);
}

static void cli_signal_cb(uv_signal_t *s, int signum) {
  cli *c = s->data;
  if (signum == SIGHUP) {
    cli_reload(c);
    return;
  }
  cli_stop(c);
}

int main(int argc, char **argv) {
  enum {
    OPT_STATS_JSON = 256,
    OPT_SCORES,
    OPT_PRETEST,
    OPT_TLS_CA,
    OPT_TLS_NAME,
    OPT_RESOLVER_LIST,
    OPT_SET,
    OPT_LIST_SETTINGS,
    OPT_WANT,
    OPT_ALLOW_REMOTE,
    OPT_RESOLVERS_FILE,
    OPT_CHECK_CONFIG,
    OPT_LOG_LEVEL,
    OPT_LOG_FILE,
    OPT_LOG_FORMAT,
    OPT_METRICS,
    OPT_NO_SYSTEM,
    OPT_NO_BUNDLED
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
      {"set", required_argument, NULL, OPT_SET},
      {"list-settings", no_argument, NULL, OPT_LIST_SETTINGS},
      {"want", required_argument, NULL, OPT_WANT},
      {"allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE},
      {"resolvers-file", required_argument, NULL, OPT_RESOLVERS_FILE},
      {"check-config", no_argument, NULL, OPT_CHECK_CONFIG},
      {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
      {"log-file", required_argument, NULL, OPT_LOG_FILE},
      {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
      {"metrics", required_argument, NULL, OPT_METRICS},
      {"no-system", no_argument, NULL, OPT_NO_SYSTEM},
      {"no-bundled", no_argument, NULL, OPT_NO_BUNDLED},
      {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0}};
  cli c = {.log_level = RP_LOG_WARN, .exit_code = CLI_EXIT_OK};
  rp_config cfg;
  rp_net_options opts = {0};
  char err[RP_CONFIG_ERRLEN], addr[64];
  cli_args *a = &c.args;
  const char *stats = NULL;
  size_t i;
  int opt, rv, list_settings = 0, remote, checked;
  int check_config = 0, level_given = 0;
  const char *log_file = NULL, *log_format = NULL, *metrics = NULL;
  struct sockaddr_storage metrics_addr;
  cli_log_format format = CLI_LOG_TEXT;
  char check_name[256];

  if (argc > 1 && strcmp(argv[1], "discover") == 0) {
    return cli_discover(argc - 1, argv + 1);
  }
  a->resolvers = calloc((size_t)argc + 1, sizeof(*a->resolvers));
  a->sets = calloc((size_t)argc + 1, sizeof(*a->sets));
  a->files = calloc((size_t)argc + 1, sizeof(*a->files));
  if (!a->resolvers || !a->sets || !a->files) {
    fprintf(stderr, "respool: out of memory\n");
    cli_free_args(&c);
    return CLI_EXIT_RUNTIME;
  }
  while ((opt = getopt_long(argc, argv, "r:c:l:k:s:vhV", longopts, NULL)) !=
         -1) {
    switch (opt) {
    case 'r':
      a->resolvers[a->nresolvers++] = optarg;
      break;
    case 'c':
      a->config_file = optarg;
      break;
    case 'l':
      a->listen = optarg;
      break;
    case 'k':
      a->kind = optarg;
      break;
    case 's':
      stats = optarg;
      break;
    case OPT_STATS_JSON:
      c.stats_json = optarg;
      break;
    case OPT_SCORES:
      a->scores = optarg;
      break;
    case OPT_PRETEST:
      a->pretest = optarg;
      break;
    case OPT_TLS_CA:
      a->tls_ca = optarg;
      break;
    case OPT_TLS_NAME:
      a->tls_name = optarg;
      break;
    case OPT_RESOLVER_LIST:
      a->resolver_list = optarg;
      break;
    case OPT_SET:
      a->sets[a->nsets++] = optarg;
      break;
    case OPT_LIST_SETTINGS:
      list_settings = 1;
      break;
    case OPT_WANT:
      a->want = optarg;
      break;
    case OPT_ALLOW_REMOTE:
      a->allow_remote = 1;
      break;
    case OPT_RESOLVERS_FILE:
      a->files[a->nfiles++] = optarg;
      break;
    case OPT_CHECK_CONFIG:
      check_config = 1;
      break;
    case OPT_LOG_LEVEL:
      if (cli_log_parse_level(optarg, &c.log_level) != 0) {
        fprintf(stderr,
                "respool: command line: --log-level: expected error, warn, "
                "info or debug (%s)\n",
                optarg);
        cli_free_args(&c);
        return CLI_EXIT_USAGE;
      }
      level_given = 1;
      break;
    case OPT_LOG_FILE:
      log_file = optarg;
      break;
    case OPT_LOG_FORMAT:
      log_format = optarg;
      break;
    case OPT_METRICS:
      metrics = optarg;
      break;
    case OPT_NO_SYSTEM:
      a->no_system = 1;
      break;
    case OPT_NO_BUNDLED:
      a->no_bundled = 1;
      break;
    case 'v':
      if (c.log_level < RP_LOG_DEBUG) {
        c.log_level = (rp_log_level)(c.log_level + 1);
      }
      break;
    case 'h':
      cli_usage(stdout);
      cli_free_args(&c);
      return CLI_EXIT_OK;
    case 'V':
      cli_version();
      cli_free_args(&c);
      return CLI_EXIT_OK;
    default:
      cli_usage(stderr);
      cli_free_args(&c);
      return CLI_EXIT_USAGE;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "respool: unexpected argument: %s\n", argv[optind]);
    cli_usage(stderr);
    cli_free_args(&c);
    return CLI_EXIT_USAGE;
  }

  if (log_format != NULL) {
    if (strcmp(log_format, "json") == 0) {
      format = CLI_LOG_JSON;
    } else if (strcmp(log_format, "text") != 0) {
      fprintf(stderr,
              "respool: command line: --log-format: expected text or json "
              "(%s)\n",
              log_format);
      cli_free_args(&c);
      return CLI_EXIT_USAGE;
    }
  }
  /* The command's own events (start-up, notes) show at info unless a
     level was asked for; the pool's at warn unless -v. */
  if (cli_log_open(log_file, format,
                   level_given || c.log_level > RP_LOG_INFO ? c.log_level
                                                            : RP_LOG_INFO,
                   err, sizeof(err)) != 0) {
    fprintf(stderr, "respool: %s\n", err);
    cli_free_args(&c);
    return CLI_EXIT_USAGE;
  }

  rv = cli_load_config(&c.args, &cfg, err, sizeof(err));
  if (rv == 0 && stats) {
    rv = rp_config_parse_duration(stats, 0, &c.stats_interval);
    if (rv != 0) {
      snprintf(err, sizeof(err),
               "command line: --stats: bad duration (%s; use e.g. 5s)", stats);
    }
    c.print_table = 1;
  }
  if (rv == 0 && list_settings) {
    rp_settings set;
    size_t n;
    const rp_settings_field *f = rp_settings_fields(&n);
    char value[RP_SETTINGS_VALUELEN];

    rp_kind lk = cfg.has_kind ? cfg.kind : RP_KIND_AUTO;

    rp_settings_default(&set, lk);
    rp_config_apply(&cfg, &set);
    rp_settings_restrict(&set, lk);
    printf("tuning constants for kind %s%s (--set NAME=VALUE, or \"tuning\" "
           "in the config):\n",
           rp_config_kind_str(lk),
           lk == RP_KIND_AUTO ? " (generic's until the queries show the "
                                "tunnel)"
                              : "");
    for (i = 0; i < n; ++i) {
      rp_settings_format(&set, &f[i], value, sizeof(value));
      printf("  %-20s %-10s %s\n", f[i].name, value, f[i].help);
    }
    rp_config_free(&cfg);
    cli_free_args(&c);
    cli_log_close();
    return CLI_EXIT_OK;
  }
  if (rv == 0) {
    rv = cli_check_config(&c.args, &cfg, err, sizeof(err));
  }
  if (rv == 0 && metrics) {
    rp_config probe;

    probe.has_listen = 1;
    if (rp_config_parse_listen(metrics, &probe.listen) != 0) {
      snprintf(err, sizeof(err),
               "command line: --metrics: bad address (%s; use e.g. "
               "127.0.0.1:9100)",
               metrics);
      rv = RP_ERR_CONFIG;
    } else if (!c.args.allow_remote && !rp_config_listen_is_loopback(&probe)) {
      snprintf(err, sizeof(err),
               "command line: --metrics: %s is not a loopback address; add "
               "--allow-remote to serve the metrics there anyway",
               metrics);
      rv = RP_ERR_CONFIG;
    }
    metrics_addr = probe.listen;
  }
  if (rv == 0 && c.stats_json &&
      cli_check_writable(c.stats_json, "command line: --stats-json", err,
                         sizeof(err)) != 0) {
    rv = RP_ERR_CONFIG;
  }
  if (rv != 0) {
    fprintf(stderr, "respool: %s\n",
            rv == RP_ERR_NOMEM ? "out of memory" : err);
    if (rv != RP_ERR_NOMEM && !c.args.config_file && c.args.nresolvers == 0 &&
        c.args.nfiles == 0) {
      cli_usage(stderr);
    }
    rp_config_free(&cfg);
    cli_free_args(&c);
    cli_log_close();
    return rv == RP_ERR_NOMEM ? CLI_EXIT_RUNTIME : CLI_EXIT_USAGE;
  }

  if (check_config) {
    char host[64] = "127.0.0.1:0";

    if (cfg.has_listen) {
      rp_net_format_sockaddr(&cfg.listen, host, sizeof(host));
    }
    printf("configuration OK: %zu resolver%s, listen %s, kind %s, "
           "start-up check %s\n",
           cfg.nresolvers, cfg.nresolvers == 1 ? "" : "s", host,
           rp_config_kind_str(cfg.has_kind ? cfg.kind : RP_KIND_AUTO),
           cfg.pretest_domain && cfg.pretest_domain[0] == '\0'
               ? "off"
               : (cfg.pretest_domain ? cfg.pretest_domain : "example.com"));
    rp_config_free(&cfg);
    cli_free_args(&c);
    cli_log_close();
    return CLI_EXIT_OK;
  }
  cli_raise_nofile();
  c.loop = uv_default_loop();
  opts.config = &cfg;
  opts.kind = RP_KIND_AUTO;
  opts.log = cli_log;
  opts.log_level = c.log_level;
  opts.user_data = &c;
  c.want = cfg.discovery.want;
  remote = !rp_config_listen_is_loopback(&cfg);
  checked = !(cfg.pretest_domain && cfg.pretest_domain[0] == '\0');
  snprintf(check_name, sizeof(check_name), "%s",
           cfg.pretest_domain ? cfg.pretest_domain : "example.com");
  if (metrics && cli_metrics_start(&c, &metrics_addr, err, sizeof(err)) != 0) {
    fprintf(stderr, "respool: %s\n", err);
    rp_config_free(&cfg);
    uv_run(c.loop, UV_RUN_DEFAULT);
    uv_loop_close(c.loop);
    cli_free_args(&c);
    cli_log_close();
    return CLI_EXIT_RUNTIME;
  }
  rv = rp_net_pool_start(&c.np, c.loop, &opts, err, sizeof(err));
  rp_config_free(&cfg);
  if (rv != 0) {
    fprintf(stderr, "respool: %s\n", err[0] ? err : rp_strerror(rv));
    uv_run(c.loop, UV_RUN_DEFAULT);
    uv_loop_close(c.loop);
    cli_free_args(&c);
    cli_log_close();
    return rv == RP_ERR_CONFIG || rv == RP_ERR_INVALID_ARGUMENT
               ? CLI_EXIT_USAGE
               : CLI_EXIT_RUNTIME;
  }
  rp_net_pool_format_address(c.np, addr, sizeof(addr));
  printf("%s\n", addr);
  fflush(stdout);
  cli_summary_start(&c, addr, checked, check_name);
  if (c.metrics_on) {
    char maddr[96];

    cli_metrics_address(&c, maddr, sizeof(maddr));
    cli_logf(RP_LOG_INFO, "metrics on http://%s/metrics", maddr);
  }
  if (remote) {
    cli_logf(RP_LOG_WARN, "--allow-remote: whoever reaches %s may use the pool",
             addr);
  }

  uv_signal_init(c.loop, &c.sigint);
  uv_signal_init(c.loop, &c.sigterm);
  uv_signal_init(c.loop, &c.sighup);
  c.sigint.data = c.sigterm.data = c.sighup.data = &c;
  uv_signal_start(&c.sigint, cli_signal_cb, SIGINT);
  uv_signal_start(&c.sigterm, cli_signal_cb, SIGTERM);
  uv_signal_start(&c.sighup, cli_signal_cb, SIGHUP);
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
    cli_logf(RP_LOG_WARN, "handles left open at exit");
  }
  cli_free_args(&c);
  cli_log_close();
  return c.exit_code;
}
