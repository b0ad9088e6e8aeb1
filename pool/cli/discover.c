/*
 * discover.c: "respool discover": runs resolver discovery alone and
 * prints what it found (a table, or JSON with --json).
 */
#include "cli.h"
#include "disc.h"

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

/* The values of the options without a short form. */
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

static const struct option disc_longopts[] = {
    CLI_OPT_ARG("config", 'c'),
    CLI_OPT_ARG("resolver-list", D_LIST),
    CLI_OPT_ARG("want", D_WANT),
    CLI_OPT_ARG("concurrency", D_CONC),
    CLI_OPT_ARG("timeout", D_TIMEOUT),
    CLI_OPT_ARG("pace", D_PACE),
    CLI_OPT_ARG("country", D_COUNTRY),
    CLI_OPT_ARG("sample-ranges", D_SAMPLE),
    CLI_OPT_FLAG("no-system", D_NOSYS),
    CLI_OPT_FLAG("no-bundled", D_NOBUNDLED),
    CLI_OPT_ARG("pretest", D_PRETEST),
    CLI_OPT_FLAG("all", D_ALL),
    CLI_OPT_FLAG("json", D_JSON),
    CLI_OPT_FLAG("verbose", 'v'),
    CLI_OPT_FLAG("help", 'h'),
    {NULL, 0, NULL, 0}};

/* DISC_MAX_COUNT is the largest --want, --concurrency or
   --sample-ranges. */
#define DISC_MAX_COUNT 1000000

/* disc_opts is the discover command line (pointers into argv). */
typedef struct disc_opts {
  const char *config_file, *list, *pretest;
  int json, nosys, nobundled;
  /* want and conc are 0, sample -1, when not given. */
  long want, conc, sample;
  /* timeout and pace are 0 when not given, ns. */
  rp_duration timeout, pace;
  /* country is "" when not given. */
  char country[8];
  rp_log_level level;
} disc_opts;

/* disc_number parses the count option |opt| (--want, --concurrency or
   --sample-ranges) into |o|; returns CLI_CONTINUE or CLI_EXIT_USAGE. */
static int disc_number(disc_opts *o, int opt, const char *arg) {
  char *end;
  long least = opt == D_SAMPLE ? 0 : 1;
  long v = strtol(arg, &end, 10);
  if (*end || v < least || v > DISC_MAX_COUNT) {
    fprintf(stderr,
            "respool discover: command line: --%s: bad number (%s; %d "
            "to 1000000)\n",
            disc_optname(disc_longopts, opt), arg, (int)least);
    return CLI_EXIT_USAGE;
  }
  *(opt == D_WANT ? &o->want : opt == D_CONC ? &o->conc : &o->sample) = v;
  return CLI_CONTINUE;
}

/* disc_value handles an option that carries a value to check; returns
   CLI_CONTINUE or CLI_EXIT_USAGE. */
static int disc_value(disc_opts *o, int opt, const char *arg) {
  switch (opt) {
  case D_WANT:
  case D_CONC:
  case D_SAMPLE:
    return disc_number(o, opt, arg);
  case D_TIMEOUT:
  case D_PACE:
    if (rp_config_parse_duration(arg, opt == D_PACE,
                                 opt == D_PACE ? &o->pace : &o->timeout) !=
        0) {
      fprintf(stderr,
              "respool discover: command line: --%s: bad duration (%s; use "
              "e.g. 500ms)\n",
              disc_optname(disc_longopts, opt), arg);
      return CLI_EXIT_USAGE;
    }
    return CLI_CONTINUE;
  default:
    if (strlen(arg) != 2) {
      fprintf(stderr,
              "respool discover: command line: --country: expected a "
              "two-letter code (%s)\n",
              arg);
      return CLI_EXIT_USAGE;
    }
    snprintf(o->country, sizeof(o->country), "%s", arg);
    return CLI_CONTINUE;
  }
}

/* disc_option handles one option; returns CLI_CONTINUE or the exit
   code. */
static int disc_option(cli_disc *cd, disc_opts *o, int opt, const char *arg) {
  switch (opt) {
  case 'c':
    o->config_file = arg;
    break;
  case D_LIST:
    o->list = arg;
    break;
  case D_WANT:
  case D_CONC:
  case D_SAMPLE:
  case D_TIMEOUT:
  case D_PACE:
  case D_COUNTRY:
    return disc_value(o, opt, arg);
  case D_NOSYS:
    o->nosys = 1;
    break;
  case D_NOBUNDLED:
    o->nobundled = 1;
    break;
  case D_PRETEST:
    o->pretest = arg;
    break;
  case D_ALL:
    cd->all = 1;
    break;
  case D_JSON:
    o->json = 1;
    break;
  case 'v':
    if (o->level < RP_LOG_DEBUG) {
      o->level = (rp_log_level)(o->level + 1);
    }
    break;
  case 'h':
    cli_disc_usage(stdout);
    return CLI_EXIT_OK;
  default:
    cli_disc_usage(stderr);
    return CLI_EXIT_USAGE;
  }
  return CLI_CONTINUE;
}

/* disc_config reads --config and applies the options over its discovery
   object into |cfg| (initialised here; freed on failure). Returns
   CLI_CONTINUE or the exit code. */
static int disc_config(const disc_opts *o, rp_config *cfg) {
  rp_config_discovery *dc = &cfg->discovery;
  char err[RP_CONFIG_ERRLEN] = "";
  int rv = 0;

  rp_config_init(cfg, NULL);
  if (o->config_file) {
    rv = rp_config_load_file(cfg, o->config_file, err, sizeof(err));
  }
  if (rv == 0 && o->list) {
    rv = rp_config_set_string(cfg, RP_CONFIG_LIST_FILE, o->list);
  }
  if (rv != 0) {
    fprintf(stderr, "respool discover: %s\n",
            rv == RP_ERR_NOMEM ? "out of memory" : err);
    rp_config_free(cfg);
    return rv == RP_ERR_NOMEM ? CLI_EXIT_RUNTIME : CLI_EXIT_USAGE;
  }
  dc->want = o->want ? (uint32_t)o->want : dc->want;
  dc->concurrency = o->conc ? (uint32_t)o->conc : dc->concurrency;
  dc->sample_ranges = o->sample >= 0 ? (uint32_t)o->sample : dc->sample_ranges;
  dc->timeout = o->timeout ? o->timeout : dc->timeout;
  dc->pace = o->pace ? o->pace : dc->pace;
  if (o->country[0]) {
    memcpy(dc->country, o->country, sizeof(o->country));
  }
  dc->system = o->nosys ? 0 : dc->system;
  dc->bundled = o->nobundled ? 0 : dc->bundled;
  return CLI_CONTINUE;
}

/* disc_run runs discovery on |cfg| (freed here) until it is done or
   stopped and prints what it found; returns the exit code. */
static int disc_run(cli_disc *cd, const disc_opts *o, rp_config *cfg) {
  rp_disc_options opts = {0};
  char err[RP_CONFIG_ERRLEN] = "";
  uv_loop_t *loop;
  int rv;

  cli_raise_nofile();
  loop = uv_default_loop();
  opts.config = &cfg->discovery;
  opts.pretest_domain = o->pretest ? o->pretest : cfg->pretest_domain;
  opts.on_result = cli_disc_result;
  opts.on_done = cli_disc_done;
  opts.log = cli_log;
  opts.log_level = o->level;
  opts.user_data = cd;
  uv_signal_init(loop, &cd->sigint);
  cd->sigint.data = cd;
  uv_signal_start(&cd->sigint, cli_disc_signal, SIGINT);
  rv = rp_disc_start(&cd->d, loop, &opts, err, sizeof(err));
  rp_config_free(cfg);
  if (rv != 0) {
    fprintf(stderr, "respool discover: %s\n", err[0] ? err : rp_strerror(rv));
    uv_close((uv_handle_t *)&cd->sigint, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return rv == RP_ERR_NOMEM ? CLI_EXIT_RUNTIME : CLI_EXIT_USAGE;
  }
  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
  cli_disc_print(cd, o->json);
  return cd->stats.passed > 0 ? CLI_EXIT_OK : CLI_EXIT_RUNTIME;
}

int cli_discover(int argc, char **argv) {
  rp_config cfg;
  cli_disc cd = {0};
  disc_opts o = {.sample = -1, .level = RP_LOG_WARN};
  int opt, rv = CLI_CONTINUE;

  optind = 1;
  while (rv == CLI_CONTINUE &&
         (opt = getopt_long(argc, argv, "c:vh", disc_longopts, NULL)) != -1) {
    rv = disc_option(&cd, &o, opt, optarg);
  }
  if (rv == CLI_CONTINUE) {
    rv = disc_config(&o, &cfg);
  }
  if (rv == CLI_CONTINUE) {
    rv = disc_run(&cd, &o, &cfg);
  }
  free(cd.rows);
  return rv;
}
