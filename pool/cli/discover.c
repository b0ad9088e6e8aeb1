/*
 * discover.c: "respool discover": runs resolver discovery alone and
 * prints what it found (a table, or JSON with --json).
 */
#include "cli.h"
#include "disc.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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

/* disc_optname returns the long name of the option |val| in |lo|. */
static const char *disc_optname(const struct option *lo, int val) {
  for (; lo->name != NULL; ++lo) {
    if (lo->val == val) {
      return lo->name;
    }
  }
  return "?";
}

int cli_discover(int argc, char **argv) {
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
        fprintf(stderr,
                "respool discover: command line: --%s: bad number (%s; %d "
                "to 1000000)\n",
                disc_optname(longopts, opt), optarg, opt == D_SAMPLE ? 0 : 1);
        return CLI_EXIT_USAGE;
      }
      *(opt == D_WANT ? &want : opt == D_CONC ? &conc : &sample) = v;
      break;
    }
    case D_TIMEOUT:
    case D_PACE:
      if (rp_config_parse_duration(optarg, opt == D_PACE,
                                   opt == D_PACE ? &pace : &timeout) != 0) {
        fprintf(stderr,
                "respool discover: command line: --%s: bad duration (%s; use "
                "e.g. 500ms)\n",
                disc_optname(longopts, opt), optarg);
        return CLI_EXIT_USAGE;
      }
      break;
    case D_COUNTRY:
      if (strlen(optarg) != 2) {
        fprintf(stderr,
                "respool discover: command line: --country: expected a "
                "two-letter code (%s)\n",
                optarg);
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
