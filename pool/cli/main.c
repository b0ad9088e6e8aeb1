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

/* The values of the options without a short form. */
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

static const struct option cli_longopts[] = {
    CLI_OPT_ARG("resolver", 'r'),
    CLI_OPT_ARG("config", 'c'),
    CLI_OPT_ARG("listen", 'l'),
    CLI_OPT_ARG("kind", 'k'),
    CLI_OPT_ARG("stats", 's'),
    CLI_OPT_ARG("stats-json", OPT_STATS_JSON),
    CLI_OPT_ARG("scores", OPT_SCORES),
    CLI_OPT_ARG("pretest", OPT_PRETEST),
    CLI_OPT_ARG("tls-ca", OPT_TLS_CA),
    CLI_OPT_ARG("tls-name", OPT_TLS_NAME),
    CLI_OPT_ARG("resolver-list", OPT_RESOLVER_LIST),
    CLI_OPT_ARG("set", OPT_SET),
    CLI_OPT_FLAG("list-settings", OPT_LIST_SETTINGS),
    CLI_OPT_ARG("want", OPT_WANT),
    CLI_OPT_FLAG("allow-remote", OPT_ALLOW_REMOTE),
    CLI_OPT_ARG("resolvers-file", OPT_RESOLVERS_FILE),
    CLI_OPT_FLAG("check-config", OPT_CHECK_CONFIG),
    CLI_OPT_ARG("log-level", OPT_LOG_LEVEL),
    CLI_OPT_ARG("log-file", OPT_LOG_FILE),
    CLI_OPT_ARG("log-format", OPT_LOG_FORMAT),
    CLI_OPT_ARG("metrics", OPT_METRICS),
    CLI_OPT_FLAG("no-system", OPT_NO_SYSTEM),
    CLI_OPT_FLAG("no-bundled", OPT_NO_BUNDLED),
    CLI_OPT_FLAG("verbose", 'v'),
    CLI_OPT_FLAG("help", 'h'),
    CLI_OPT_FLAG("version", 'V'),
    {NULL, 0, NULL, 0}};

/* cli_opts are the options that shape the run rather than the
   configuration (pointers into argv). */
typedef struct cli_opts {
  const char *stats, *log_file, *log_format, *metrics;
  int list_settings, check_config, level_given;
} cli_opts;

/* cli_config_option keeps |opt| (with |arg|) in c->args when it is an
   option that makes the configuration; returns 1 when it was. */
static int cli_config_option(cli_args *a, int opt, const char *arg) {
  switch (opt) {
  case 'r':
    a->resolvers[a->nresolvers++] = arg;
    return 1;
  case 'c':
    a->config_file = arg;
    return 1;
  case 'l':
    a->listen = arg;
    return 1;
  case 'k':
    a->kind = arg;
    return 1;
  case OPT_SCORES:
    a->scores = arg;
    return 1;
  case OPT_PRETEST:
    a->pretest = arg;
    return 1;
  case OPT_TLS_CA:
    a->tls_ca = arg;
    return 1;
  case OPT_TLS_NAME:
    a->tls_name = arg;
    return 1;
  case OPT_RESOLVER_LIST:
    a->resolver_list = arg;
    return 1;
  case OPT_SET:
    a->sets[a->nsets++] = arg;
    return 1;
  case OPT_WANT:
    a->want = arg;
    return 1;
  case OPT_ALLOW_REMOTE:
    a->allow_remote = 1;
    return 1;
  case OPT_RESOLVERS_FILE:
    a->files[a->nfiles++] = arg;
    return 1;
  case OPT_NO_SYSTEM:
    a->no_system = 1;
    return 1;
  case OPT_NO_BUNDLED:
    a->no_bundled = 1;
    return 1;
  default:
    return 0;
  }
}

/* cli_run_option handles an option that shapes the run (any option
   cli_config_option does not take); returns CLI_CONTINUE or the exit
   code (help, version, a bad option or --log-level). */
static int cli_run_option(cli *c, cli_opts *o, int opt, const char *arg) {
  switch (opt) {
  case 's':
    o->stats = arg;
    break;
  case OPT_STATS_JSON:
    c->stats_json = arg;
    break;
  case OPT_LIST_SETTINGS:
    o->list_settings = 1;
    break;
  case OPT_CHECK_CONFIG:
    o->check_config = 1;
    break;
  case OPT_LOG_LEVEL:
    if (cli_log_parse_level(arg, &c->log_level) != 0) {
      fprintf(stderr,
              "respool: command line: --log-level: expected error, warn, "
              "info or debug (%s)\n",
              arg);
      return CLI_EXIT_USAGE;
    }
    o->level_given = 1;
    break;
  case OPT_LOG_FILE:
    o->log_file = arg;
    break;
  case OPT_LOG_FORMAT:
    o->log_format = arg;
    break;
  case OPT_METRICS:
    o->metrics = arg;
    break;
  case 'v':
    if (c->log_level < RP_LOG_DEBUG) {
      c->log_level = (rp_log_level)(c->log_level + 1);
    }
    break;
  case 'h':
    cli_usage(stdout);
    return CLI_EXIT_OK;
  case 'V':
    cli_version();
    return CLI_EXIT_OK;
  default:
    cli_usage(stderr);
    return CLI_EXIT_USAGE;
  }
  return CLI_CONTINUE;
}

/* cli_parse_args reads the command line into c->args (allocated here;
   cli_free_args frees them) and |o|; returns CLI_CONTINUE or the exit
   code. */
static int cli_parse_args(cli *c, cli_opts *o, int argc, char **argv) {
  cli_args *a = &c->args;
  int opt, rv = CLI_CONTINUE;

  a->resolvers = calloc((size_t)argc + 1, sizeof(*a->resolvers));
  a->sets = calloc((size_t)argc + 1, sizeof(*a->sets));
  a->files = calloc((size_t)argc + 1, sizeof(*a->files));
  if (!a->resolvers || !a->sets || !a->files) {
    fprintf(stderr, "respool: out of memory\n");
    return CLI_EXIT_RUNTIME;
  }
  while (rv == CLI_CONTINUE &&
         (opt = getopt_long(argc, argv, "r:c:l:k:s:vhV", cli_longopts,
                            NULL)) != -1) {
    if (!cli_config_option(a, opt, optarg)) {
      rv = cli_run_option(c, o, opt, optarg);
    }
  }
  if (rv == CLI_CONTINUE && optind < argc) {
    fprintf(stderr, "respool: unexpected argument: %s\n", argv[optind]);
    cli_usage(stderr);
    rv = CLI_EXIT_USAGE;
  }
  return rv;
}

/* cli_open_log opens the event log that |o| asks for; returns
   CLI_CONTINUE or the exit code. */
static int cli_open_log(const cli *c, const cli_opts *o) {
  cli_log_format format = CLI_LOG_TEXT;
  char err[RP_CONFIG_ERRLEN];

  if (o->log_format != NULL) {
    if (strcmp(o->log_format, "json") == 0) {
      format = CLI_LOG_JSON;
    } else if (strcmp(o->log_format, "text") != 0) {
      fprintf(stderr,
              "respool: command line: --log-format: expected text or json "
              "(%s)\n",
              o->log_format);
      return CLI_EXIT_USAGE;
    }
  }
  /* The command's own events (start-up, notes) show at info unless a
     level was asked for; the pool's at warn unless -v. */
  if (cli_log_open(o->log_file, format,
                   o->level_given || c->log_level > RP_LOG_INFO ? c->log_level
                                                                : RP_LOG_INFO,
                   err, sizeof(err)) != 0) {
    fprintf(stderr, "respool: %s\n", err);
    return CLI_EXIT_USAGE;
  }
  return CLI_CONTINUE;
}

/* cli_list_settings prints the tuning constants |cfg| gives for its
   kind (--list-settings). */
static void cli_list_settings(const rp_config *cfg) {
  rp_settings set;
  size_t i, n;
  const rp_settings_field *f = rp_settings_fields(&n);
  char value[RP_SETTINGS_VALUELEN];
  rp_kind lk = cfg->has_kind ? cfg->kind : RP_KIND_AUTO;

  rp_settings_default(&set, lk);
  rp_config_apply(cfg, &set);
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
}

/* cli_parse_metrics checks the --metrics address |text| into |*addr|;
   returns 0 or RP_ERR_CONFIG with |err| naming the value. */
static int cli_parse_metrics(const cli *c, const char *text,
                             struct sockaddr_storage *addr, char *err,
                             size_t errlen) {
  rp_config probe;
  int rv = 0;

  probe.has_listen = 1;
  if (rp_config_parse_listen(text, &probe.listen) != 0) {
    snprintf(err, errlen,
             "command line: --metrics: bad address (%s; use e.g. "
             "127.0.0.1:9100)",
             text);
    rv = RP_ERR_CONFIG;
  } else if (!c->args.allow_remote && !rp_config_listen_is_loopback(&probe)) {
    snprintf(err, errlen,
             "command line: --metrics: %s is not a loopback address; add "
             "--allow-remote to serve the metrics there anyway",
             text);
    rv = RP_ERR_CONFIG;
  }
  *addr = probe.listen;
  return rv;
}

/* cli_print_config_ok prints the --check-config verdict for |cfg|. */
static void cli_print_config_ok(const rp_config *cfg) {
  char host[64] = "127.0.0.1:0";

  if (cfg->has_listen) {
    rp_net_format_sockaddr(&cfg->listen, host, sizeof(host));
  }
  printf("configuration OK: %zu resolver%s, listen %s, kind %s, "
         "start-up check %s\n",
         cfg->nresolvers, cfg->nresolvers == 1 ? "" : "s", host,
         rp_config_kind_str(cfg->has_kind ? cfg->kind : RP_KIND_AUTO),
         cfg->pretest_domain && cfg->pretest_domain[0] == '\0'
             ? "off"
             : (cfg->pretest_domain ? cfg->pretest_domain : "example.com"));
}

/* cli_configure builds and checks |cfg| (and the --stats, --metrics and
   --stats-json values) and answers --list-settings and --check-config.
   Returns CLI_CONTINUE with |cfg| to run, or the exit code with |cfg|
   freed. */
static int cli_configure(cli *c, const cli_opts *o, rp_config *cfg,
                         struct sockaddr_storage *metrics_addr) {
  char err[RP_CONFIG_ERRLEN];
  int rv = cli_load_config(&c->args, cfg, err, sizeof(err));

  if (rv == 0 && o->stats) {
    rv = rp_config_parse_duration(o->stats, 0, &c->stats_interval);
    if (rv != 0) {
      snprintf(err, sizeof(err),
               "command line: --stats: bad duration (%s; use e.g. 5s)",
               o->stats);
    }
    c->print_table = 1;
  }
  if (rv == 0 && o->list_settings) {
    cli_list_settings(cfg);
    rp_config_free(cfg);
    return CLI_EXIT_OK;
  }
  if (rv == 0) {
    rv = cli_check_config(&c->args, cfg, err, sizeof(err));
  }
  if (rv == 0 && o->metrics) {
    rv = cli_parse_metrics(c, o->metrics, metrics_addr, err, sizeof(err));
  }
  if (rv == 0 && c->stats_json &&
      cli_check_writable(c->stats_json, "command line: --stats-json", err,
                         sizeof(err)) != 0) {
    rv = RP_ERR_CONFIG;
  }
  if (rv != 0) {
    fprintf(stderr, "respool: %s\n",
            rv == RP_ERR_NOMEM ? "out of memory" : err);
    if (rv != RP_ERR_NOMEM && !c->args.config_file &&
        c->args.nresolvers == 0 && c->args.nfiles == 0) {
      cli_usage(stderr);
    }
    rp_config_free(cfg);
    return rv == RP_ERR_NOMEM ? CLI_EXIT_RUNTIME : CLI_EXIT_USAGE;
  }
  if (o->check_config) {
    cli_print_config_ok(cfg);
    rp_config_free(cfg);
    return CLI_EXIT_OK;
  }
  return CLI_CONTINUE;
}

/* cli_close_loop runs the loop until the handles opened so far closed,
   then closes it (a start that failed). */
static void cli_close_loop(cli *c) {
  uv_run(c->loop, UV_RUN_DEFAULT);
  uv_loop_close(c->loop);
}

/* cli_start_handles starts the signal handlers and the stats timer. */
static void cli_start_handles(cli *c) {
  uv_signal_init(c->loop, &c->sigint);
  uv_signal_init(c->loop, &c->sigterm);
  uv_signal_init(c->loop, &c->sighup);
  c->sigint.data = c->sigterm.data = c->sighup.data = c;
  uv_signal_start(&c->sigint, cli_signal_cb, SIGINT);
  uv_signal_start(&c->sigterm, cli_signal_cb, SIGTERM);
  uv_signal_start(&c->sighup, cli_signal_cb, SIGHUP);
  signal(SIGPIPE, SIG_IGN);
  if (c->print_table || c->stats_json) {
    uint64_t ms;
    if (!c->stats_interval) {
      c->stats_interval = CLI_DEFAULT_STATS;
    }
    ms = c->stats_interval / RP_MILLISECONDS;
    uv_timer_init(c->loop, &c->stats_timer);
    c->stats_timer.data = c;
    uv_timer_start(&c->stats_timer, cli_stats_cb, ms ? ms : 1, ms ? ms : 1);
    c->stats_on = 1;
  }
}

/* cli_announce prints the address the pool listens on (the first line
   of standard output) and logs the start-up summary. */
static void cli_announce(cli *c, int remote, int checked,
                         const char *check_name) {
  char addr[64];

  rp_net_pool_format_address(c->np, addr, sizeof(addr));
  printf("%s\n", addr);
  fflush(stdout);
  cli_summary_start(c, addr, checked, check_name);
  if (c->metrics_on) {
    char maddr[96];

    cli_metrics_address(c, maddr, sizeof(maddr));
    cli_logf(RP_LOG_INFO, "metrics on http://%s/metrics", maddr);
  }
  if (remote) {
    cli_logf(RP_LOG_WARN, "--allow-remote: whoever reaches %s may use the pool",
             addr);
  }
}

/* cli_run starts the pool on |cfg| (freed here) and runs the loop until
   the pool stopped; returns the exit code. */
static int cli_run(cli *c, const cli_opts *o, rp_config *cfg,
                   const struct sockaddr_storage *metrics_addr) {
  rp_net_options opts = {0};
  char err[RP_CONFIG_ERRLEN], check_name[256];
  int rv, remote, checked;

  cli_raise_nofile();
  c->loop = uv_default_loop();
  opts.config = cfg;
  opts.kind = RP_KIND_AUTO;
  opts.log = cli_log;
  opts.log_level = c->log_level;
  opts.user_data = c;
  c->want = cfg->discovery.want;
  remote = !rp_config_listen_is_loopback(cfg);
  checked = !(cfg->pretest_domain && cfg->pretest_domain[0] == '\0');
  snprintf(check_name, sizeof(check_name), "%s",
           cfg->pretest_domain ? cfg->pretest_domain : "example.com");
  if (o->metrics && cli_metrics_start(c, metrics_addr, err, sizeof(err)) != 0) {
    fprintf(stderr, "respool: %s\n", err);
    rp_config_free(cfg);
    cli_close_loop(c);
    return CLI_EXIT_RUNTIME;
  }
  rv = rp_net_pool_start(&c->np, c->loop, &opts, err, sizeof(err));
  rp_config_free(cfg);
  if (rv != 0) {
    fprintf(stderr, "respool: %s\n", err[0] ? err : rp_strerror(rv));
    cli_close_loop(c);
    return rv == RP_ERR_CONFIG || rv == RP_ERR_INVALID_ARGUMENT
               ? CLI_EXIT_USAGE
               : CLI_EXIT_RUNTIME;
  }
  cli_announce(c, remote, checked, check_name);
  cli_start_handles(c);
  uv_run(c->loop, UV_RUN_DEFAULT);
  if (uv_loop_close(c->loop) != 0) {
    cli_logf(RP_LOG_WARN, "handles left open at exit");
  }
  return c->exit_code;
}

int main(int argc, char **argv) {
  cli c = {.log_level = RP_LOG_WARN, .exit_code = CLI_EXIT_OK};
  cli_opts o = {0};
  rp_config cfg;
  struct sockaddr_storage metrics_addr;
  int rv;

  if (argc > 1 && strcmp(argv[1], "discover") == 0) {
    return cli_discover(argc - 1, argv + 1);
  }
  rv = cli_parse_args(&c, &o, argc, argv);
  if (rv == CLI_CONTINUE) {
    rv = cli_open_log(&c, &o);
  }
  if (rv != CLI_CONTINUE) {
    cli_free_args(&c);
    return rv;
  }
  rv = cli_configure(&c, &o, &cfg, &metrics_addr);
  if (rv == CLI_CONTINUE) {
    rv = cli_run(&c, &o, &cfg, &metrics_addr);
  }
  cli_free_args(&c);
  cli_log_close();
  return rv;
}
