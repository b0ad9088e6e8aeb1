/*
 * main.c: respool-sim, the pool core in virtual time.
 *
 *   respool-sim -r SPEC -r SPEC ... [--load rate=100,seconds=20 |
 *               --load workers=300,seconds=20] [--kind dnstt|masterdns|
 *               generic] [--seed N] [--set field=value ...] [--at
 *               T:NAME:CHANGE ...] [--scenario FILE] [--json]
 *               [--trace FILE] [--timeline] [--list-settings]
 *
 * Runs the pool core against simulated fake resolvers and prints the
 * per-resolver table and the totals (or JSON), with the speed as virtual
 * seconds per wall second. Exit codes: 0 done, 1 the run failed, 2 bad
 * usage or configuration.
 */
#include "sim.h"
#include "sim_report.h"
#include "sim_scenario.h"
#include "sim_settings.h"
#include "simtable.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* MAIN_EXIT_* are the exit codes. */
#define MAIN_EXIT_OK 0
#define MAIN_EXIT_RUN 1
#define MAIN_EXIT_USAGE 2

/* MAIN_MAX_ITEMS bounds -r, --set and --at (each). */
#define MAIN_MAX_ITEMS 1024

/* MAIN_ERRLEN is the size of error buffers. */
#define MAIN_ERRLEN 400

/* MAIN_PERCENT is 100 %. */
#define MAIN_PERCENT 100.0

/* MAIN_AT_PARTS is the parts of --at before CHANGE (time, name). */
#define MAIN_AT_PARTS 2

/* MAIN_KEY_MAX bounds a resolver name in --at. */
#define MAIN_KEY_MAX 64

/* main_opts collects the command line and scenario files. */
typedef struct main_opts {
  rp_kind kind;
  const char *kind_name;
  uint64_t seed;
  sim_load load;
  int have_load;
  rp_duration rtt;
  rp_duration sample;
  int json;
  int timeline;
  int list_settings;
  const char *trace_path;
  /* sweep is "NAME=V1,V2,..." or NULL; seeds is the runs per value. */
  const char *sweep;
  uint64_t seeds;
  /* resolvers, sets and ats hold copies of their arguments. */
  char *resolvers[MAIN_MAX_ITEMS];
  size_t nresolvers;
  char *sets[MAIN_MAX_ITEMS];
  size_t nsets;
  char *ats[MAIN_MAX_ITEMS];
  size_t nats;
} main_opts;

static void main_usage(FILE *fp) {
  fprintf(
      fp,
      "usage: respool-sim -r SPEC [-r SPEC ...] [options]\n"
      "\n"
      "Runs the respool pool core against simulated resolvers in virtual\n"
      "time and reports what each resolver got.\n"
      "\n"
      "  -r, --resolver SPEC   a simulated resolver, in the fakeres spec\n"
      "                        syntax: name=r1,rate=30,burst=3,over=refuse|\n"
      "                        servfail|drop,latency=60ms,jitter=5ms,\n"
      "                        loss=10%%,dead (unnamed ones are r1, r2...)\n"
      "  -l, --load SPEC       rate=Q,seconds=S (constant q/s, open loop) or\n"
      "                        workers=N,seconds=S (N workers, one query out\n"
      "                        each); also start=, size=BYTES|full, "
      "empty=P%%,\n"
      "                        think= (workers). Default rate=100,seconds=20\n"
      "  -k, --kind KIND       dnstt | masterdns | generic (default generic):\n"
      "                        the settings' defaults\n"
      "  -s, --seed N          the seed of every random draw (default 1)\n"
      "  -S, --set F=V         change an rp_settings field (see\n"
      "                        --list-settings); applied after --kind\n"
      "  -a, --at T:NAME:CHG   at virtual time T, resolver NAME becomes its\n"
      "                        spec with CHG's keys overridden (e.g.\n"
      "                        10s:r3:dead, 20s:r3:dead=no, 5s:r1:rate=20)\n"
      "  -f, --scenario FILE   read directives from FILE (sim/scenarios/)\n"
      "      --rtt DUR         path round trip added to every exchange (0)\n"
      "      --sample DUR      timeline step (default 1s; 0 = none)\n"
      "  -j, --json            print JSON instead of the table\n"
      "      --timeline        add the timeline to the table\n"
      "  -t, --trace FILE      write every event and the core's log lines\n"
      "                        (log_level debug unless --set log_level) to\n"
      "                        FILE\n"
      "      --sweep F=V1,V2   run once per value of the rp_settings field F\n"
      "                        and print one summary line per value\n"
      "      --seeds N         runs per configuration, seeds seed..seed+N-1\n"
      "                        (summary lines: the mean over the runs)\n"
      "      --list-settings   print the --set names with their values\n"
      "  -h, --help            this text\n"
      "\n"
      "Exit codes: 0 done, 1 the run failed, 2 bad usage or configuration.\n");
}

/* main_dup_item appends a copy of |arg| to |arr|. Returns 0 or -1. */
static int main_dup_item(char **arr, size_t *pn, const char *arg,
                         const char *what, char *errbuf, size_t errlen) {
  size_t len = strlen(arg);
  char *copy;
  if (*pn >= MAIN_MAX_ITEMS) {
    snprintf(errbuf, errlen, "too many %s (at most %d)", what, MAIN_MAX_ITEMS);
    return -1;
  }
  copy = malloc(len + 1);
  if (!copy) {
    snprintf(errbuf, errlen, "out of memory");
    return -1;
  }
  memcpy(copy, arg, len + 1);
  arr[(*pn)++] = copy;
  return 0;
}

/* main_parse_kind reads a kind name. Returns 0 or -1. */
static int main_parse_kind(main_opts *o, const char *arg) {
  if (strcmp(arg, "dnstt") == 0) {
    o->kind = RP_KIND_DNSTT;
  } else if (strcmp(arg, "masterdns") == 0) {
    o->kind = RP_KIND_MASTERDNS;
  } else if (strcmp(arg, "generic") == 0) {
    o->kind = RP_KIND_GENERIC;
  } else {
    return -1;
  }
  o->kind_name = arg[0] == 'd'   ? "dnstt"
                 : arg[0] == 'm' ? "masterdns"
                                 : "generic";
  return 0;
}

/* main_parse_duration reads a duration option. Returns 0 or -1. */
static int main_parse_duration(const char *arg, rp_duration *pd) {
  return fr_parse_duration(arg, pd) == 0 ? 0 : -1;
}

/* main_apply handles one option or scenario directive by its long
   name. Returns 0 or -1 with a message in |errbuf|. */
static int main_apply(const char *key, const char *arg, void *user_data,
                      char *errbuf, size_t errlen) {
  main_opts *o = user_data;
  if (strcmp(key, "resolver") == 0) {
    return main_dup_item(o->resolvers, &o->nresolvers, arg, "resolvers", errbuf,
                         errlen);
  }
  if (strcmp(key, "load") == 0) {
    char err[SIM_LOAD_ERRLEN];
    if (sim_load_parse(&o->load, arg, err, sizeof(err)) != 0) {
      snprintf(errbuf, errlen, "--load: %s", err);
      return -1;
    }
    o->have_load = 1;
    return 0;
  }
  if (strcmp(key, "kind") == 0) {
    if (main_parse_kind(o, arg) != 0) {
      snprintf(errbuf, errlen,
               "--kind: bad value '%s' (want dnstt, masterdns or generic)",
               arg);
      return -1;
    }
    return 0;
  }
  if (strcmp(key, "seed") == 0) {
    char *end = NULL;
    unsigned long long v;
    errno = 0;
    v = strtoull(arg, &end, 0);
    if (errno != 0 || !end || *end != '\0' || arg[0] == '-' || arg[0] == '\0') {
      snprintf(errbuf, errlen, "--seed: bad value '%s' (want an integer)", arg);
      return -1;
    }
    o->seed = (uint64_t)v;
    return 0;
  }
  if (strcmp(key, "set") == 0) {
    return main_dup_item(o->sets, &o->nsets, arg, "--set items", errbuf,
                         errlen);
  }
  if (strcmp(key, "at") == 0) {
    return main_dup_item(o->ats, &o->nats, arg, "--at items", errbuf, errlen);
  }
  if (strcmp(key, "rtt") == 0 || strcmp(key, "sample") == 0) {
    rp_duration *pd = key[0] == 'r' ? &o->rtt : &o->sample;
    if (main_parse_duration(arg, pd) != 0) {
      snprintf(errbuf, errlen, "--%s: bad value '%s' (want a duration)", key,
               arg);
      return -1;
    }
    return 0;
  }
  snprintf(errbuf, errlen, "unknown directive '%s'", key);
  return -1;
}

/* main_split_at splits "T:NAME:CHANGE" or "T NAME CHANGE" into its three
   parts (in |buf|, which it modifies). Returns 0 or -1. */
static int main_split_at(char *buf, char **pt, char **pname, char **pchg) {
  char *p = buf;
  char *parts[MAIN_AT_PARTS];
  int i;
  for (i = 0; i < MAIN_AT_PARTS; ++i) {
    p += strcspn(p, ": \t");
    if (*p == '\0') {
      return -1;
    }
    *p++ = '\0';
    while (*p == ' ' || *p == '\t') {
      ++p;
    }
    parts[i] = p;
  }
  *pt = buf;
  *pname = parts[0];
  *pchg = parts[1];
  return **pchg ? 0 : -1;
}

/* main_free_opts frees the copies in |o|. */
static void main_free_opts(main_opts *o) {
  size_t i;
  for (i = 0; i < o->nresolvers; ++i) {
    free(o->resolvers[i]);
  }
  for (i = 0; i < o->nsets; ++i) {
    free(o->sets[i]);
  }
  for (i = 0; i < o->nats; ++i) {
    free(o->ats[i]);
  }
}

/* main_trace_line writes a trace line to the trace file. */
static void main_trace_line(const char *line, void *user_data) {
  FILE *fp = user_data;
  fputs(line, fp);
  fputc('\n', fp);
}

/* main_wall returns a monotonic wall clock in seconds (the simulator
   itself reads none; this is for the speed report only). */
static double main_wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / (double)RP_SECONDS;
}

/* main_build creates the run from |o| into |*psim|. Returns an exit
   code. */
static int main_build(const main_opts *o, const sim_config *cfg, sim **psim) {
  char err[MAIN_ERRLEN];
  size_t i;
  int rv;
  rv = sim_new(psim, cfg, NULL);
  if (rv != 0) {
    fprintf(stderr, "respool-sim: cannot create the pool: %s%s\n",
            rp_strerror(rv),
            rv == RP_ERR_INVALID_ARGUMENT ? " (a --set value is out of range)"
                                          : "");
    return MAIN_EXIT_USAGE;
  }
  for (i = 0; i < o->nresolvers; ++i) {
    fr_spec spec;
    fr_spec_default(&spec);
    if (fr_spec_parse(&spec, o->resolvers[i], err, sizeof(err)) != 0) {
      fprintf(stderr, "respool-sim: -r '%s': %s\n", o->resolvers[i], err);
      return MAIN_EXIT_USAGE;
    }
    rv = sim_add_resolver(*psim, &spec, NULL);
    if (rv != 0) {
      fprintf(stderr, "respool-sim: -r '%s': %s\n", o->resolvers[i],
              rp_strerror(rv));
      return MAIN_EXIT_USAGE;
    }
  }
  for (i = 0; i < o->nats; ++i) {
    char buf[SIM_SCENARIO_LINE_MAX];
    char *t = NULL;
    char *name = NULL;
    char *chg = NULL;
    rp_duration at = 0;
    uint32_t idx = 0;
    snprintf(buf, sizeof(buf), "%s", o->ats[i]);
    if (main_split_at(buf, &t, &name, &chg) != 0 ||
        fr_parse_duration(t, &at) != 0) {
      fprintf(stderr,
              "respool-sim: --at '%s': want TIME:NAME:CHANGE, e.g. "
              "10s:r3:dead\n",
              o->ats[i]);
      return MAIN_EXIT_USAGE;
    }
    if (sim_find_resolver(*psim, name, &idx) != 0) {
      fprintf(stderr, "respool-sim: --at '%s': no resolver named '%s'\n",
              o->ats[i], name);
      return MAIN_EXIT_USAGE;
    }
    if (sim_add_hook(*psim, at, idx, chg, err, sizeof(err)) != 0) {
      fprintf(stderr, "respool-sim: --at '%s': %s\n", o->ats[i], err);
      return MAIN_EXIT_USAGE;
    }
  }
  return MAIN_EXIT_OK;
}

/* MAIN_TAIL is the tail of the load whose answered rate is summarised. */
#define MAIN_TAIL (10 * RP_SECONDS)

/* MAIN_MAX_SHARES is how many resolver shares a summary line shows. */
#define MAIN_MAX_SHARES 16

/* main_sum accumulates summary figures over runs. */
typedef struct main_sum {
  double runs, answered_pct, failed_pct, tail_qps, p50_ms, p99_ms, speed;
  double share[MAIN_MAX_SHARES];
} main_sum;

/* main_sum_add adds run |s| (taking |wall_s|) to |sum|. Returns 0 or an
   error. */
static int main_sum_add(main_sum *sum, const sim *s, double wall_s) {
  sim_client_stats cs;
  uint64_t total = 0;
  uint32_t i;
  rp_tstamp end = sim_load_end(s);
  rp_tstamp t0 = end > MAIN_TAIL ? end - MAIN_TAIL : 0;
  int rv = sim_get_client_stats(s, &cs);
  if (rv != 0) {
    return rv;
  }
  sum->runs += 1.0;
  if (cs.queries) {
    sum->answered_pct +=
        MAIN_PERCENT * (double)cs.answered / (double)cs.queries;
    sum->failed_pct += MAIN_PERCENT * (double)cs.failed / (double)cs.queries;
  }
  if (end > t0) {
    sum->tail_qps += (double)sim_answered_between(s, t0, end) /
                     ((double)(end - t0) / (double)RP_SECONDS);
  }
  sum->p50_ms += cs.p50 == RP_TSTAMP_UNSET
                     ? 0.0
                     : (double)cs.p50 / (double)RP_MILLISECONDS;
  sum->p99_ms += cs.p99 == RP_TSTAMP_UNSET
                     ? 0.0
                     : (double)cs.p99 / (double)RP_MILLISECONDS;
  sum->speed +=
      wall_s > 0.0 ? ((double)sim_now(s) / (double)RP_SECONDS) / wall_s : 0.0;
  for (i = 0; i < sim_resolver_count(s); ++i) {
    total += sim_get_resolver(s, i)->counts.received;
  }
  for (i = 0; i < sim_resolver_count(s) && i < MAIN_MAX_SHARES; ++i) {
    sum->share[i] +=
        total ? MAIN_PERCENT * (double)sim_get_resolver(s, i)->counts.received /
                    (double)total
              : 0.0;
  }
  return 0;
}

/* main_sum_print prints one summary line for |label|. */
static void main_sum_print(const main_sum *sum, const char *label, size_t nres,
                           int json) {
  double n = sum->runs > 0.0 ? sum->runs : 1.0;
  size_t i;
  if (json) {
    printf("{\"value\": \"%s\", \"runs\": %.0f, \"answered_pct\": %.3f, "
           "\"failed_pct\": %.3f, \"tail_answered_qps\": %.3f, "
           "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"speed\": %.1f, "
           "\"share_pct\": [",
           label, sum->runs, sum->answered_pct / n, sum->failed_pct / n,
           sum->tail_qps / n, sum->p50_ms / n, sum->p99_ms / n, sum->speed / n);
    for (i = 0; i < nres && i < MAIN_MAX_SHARES; ++i) {
      printf("%s%.3f", i ? ", " : "", sum->share[i] / n);
    }
    printf("]}\n");
    return;
  }
  printf("%-14s %4.0f %9.1f %8.1f %9.1f %8.2f %8.2f ", label, sum->runs,
         sum->answered_pct / n, sum->failed_pct / n, sum->tail_qps / n,
         sum->p50_ms / n, sum->p99_ms / n);
  for (i = 0; i < nres && i < MAIN_MAX_SHARES; ++i) {
    printf("%s%.1f", i ? "/" : "", sum->share[i] / n);
  }
  printf("  %.0fx\n", sum->speed / n);
}

/* main_summary runs |o| once per sweep value (or once) and seed and
   prints one line per value. Returns an exit code. */
static int main_summary(const main_opts *o, const sim_config *base) {
  char name[MAIN_KEY_MAX];
  char values[SIM_SCENARIO_LINE_MAX];
  char err[MAIN_ERRLEN];
  char *save = NULL;
  char *v;
  const char *eq = o->sweep ? strchr(o->sweep, '=') : NULL;
  if (o->sweep) {
    if (!eq || (size_t)(eq - o->sweep) >= sizeof(name) || eq[1] == '\0') {
      fprintf(stderr, "respool-sim: --sweep '%s': want NAME=V1,V2,...\n",
              o->sweep);
      return MAIN_EXIT_USAGE;
    }
    memcpy(name, o->sweep, (size_t)(eq - o->sweep));
    name[eq - o->sweep] = '\0';
    snprintf(values, sizeof(values), "%s", eq + 1);
  } else {
    snprintf(name, sizeof(name), "config");
    snprintf(values, sizeof(values), "as-given");
  }
  if (!o->json) {
    printf("%-14s %4s %9s %8s %9s %8s %8s %s\n", name, "runs", "answer%",
           "fail%", "tail_qps", "p50_ms", "p99_ms", "share% per resolver");
  }
  for (v = strtok_r(values, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
    sim_config cfg = *base;
    main_sum sum;
    uint64_t k;
    memset(&sum, 0, sizeof(sum));
    if (o->sweep) {
      char assign[SIM_SCENARIO_LINE_MAX];
      snprintf(assign, sizeof(assign), "%s=%s", name, v);
      if (rp_settings_set(&cfg.settings, assign, err, sizeof(err)) != 0) {
        fprintf(stderr, "respool-sim: --sweep: %s\n", err);
        return MAIN_EXIT_USAGE;
      }
    }
    for (k = 0; k < o->seeds; ++k) {
      sim *s = NULL;
      double t0;
      int rv;
      int code;
      cfg.seed = base->seed + k;
      code = main_build(o, &cfg, &s);
      if (code != MAIN_EXIT_OK) {
        sim_del(s);
        return code;
      }
      t0 = main_wall();
      rv = sim_run(s);
      if (rv == 0) {
        rv = main_sum_add(&sum, s, main_wall() - t0);
      }
      if (rv != 0) {
        fprintf(stderr, "respool-sim: %s=%s seed %" PRIu64 ": %s\n", name, v,
                cfg.seed, sim_error(s)[0] ? sim_error(s) : rp_strerror(rv));
        sim_del(s);
        return MAIN_EXIT_RUN;
      }
      sim_del(s);
    }
    main_sum_print(&sum, v, o->nresolvers, o->json);
  }
  return MAIN_EXIT_OK;
}

/* MAIN_GO_ON is what the steps of main return to go on (not an exit
   code). */
#define MAIN_GO_ON (-1)

/* Long-only options of the command line. */
enum {
  MAIN_OPT_RTT = 256,
  MAIN_OPT_SAMPLE,
  MAIN_OPT_TIMELINE,
  MAIN_OPT_LIST_SETTINGS,
  MAIN_OPT_SWEEP,
  MAIN_OPT_SEEDS
};

static const struct option main_longopts[] = {
    {"resolver", required_argument, NULL, 'r'},
    {"load", required_argument, NULL, 'l'},
    {"kind", required_argument, NULL, 'k'},
    {"seed", required_argument, NULL, 's'},
    {"set", required_argument, NULL, 'S'},
    {"at", required_argument, NULL, 'a'},
    {"scenario", required_argument, NULL, 'f'},
    {"json", no_argument, NULL, 'j'},
    {"trace", required_argument, NULL, 't'},
    {"rtt", required_argument, NULL, MAIN_OPT_RTT},
    {"sample", required_argument, NULL, MAIN_OPT_SAMPLE},
    {"timeline", no_argument, NULL, MAIN_OPT_TIMELINE},
    {"list-settings", no_argument, NULL, MAIN_OPT_LIST_SETTINGS},
    {"sweep", required_argument, NULL, MAIN_OPT_SWEEP},
    {"seeds", required_argument, NULL, MAIN_OPT_SEEDS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

/* main_directive names the scenario directive (main_apply's key) that
   option |c| gives, or NULL when |c| is not one. */
static const char *main_directive(int c) {
  static const struct {
    int c;
    const char *key;
  } table[] = {{'r', "resolver"},     {'l', "load"},
               {'k', "kind"},         {'s', "seed"},
               {'S', "set"},          {'a', "at"},
               {MAIN_OPT_RTT, "rtt"}, {MAIN_OPT_SAMPLE, "sample"}};
  size_t i;
  for (i = 0; i < sizeof(table) / sizeof(table[0]); ++i) {
    if (table[i].c == c) {
      return table[i].key;
    }
  }
  return NULL;
}

/* main_parse_seeds reads --seeds |arg| into |o|. Returns MAIN_GO_ON or
   MAIN_EXIT_USAGE (printed). */
static int main_parse_seeds(main_opts *o, const char *arg) {
  char *end = NULL;
  unsigned long long v = strtoull(arg, &end, 10);
  if (!end || *end != '\0' || v == 0 || v > MAIN_MAX_ITEMS || arg[0] == '-') {
    fprintf(stderr, "respool-sim: --seeds: bad value '%s' (want 1..%d)\n", arg,
            MAIN_MAX_ITEMS);
    return MAIN_EXIT_USAGE;
  }
  o->seeds = (uint64_t)v;
  return MAIN_GO_ON;
}

/* main_take_opt takes option |c| with |arg| (one that is no directive)
   into |o|. Returns MAIN_GO_ON, or the exit code (printed). */
static int main_take_opt(main_opts *o, int c, const char *arg) {
  char err[MAIN_ERRLEN];
  err[0] = '\0';
  switch (c) {
  case 'f':
    if (sim_scenario_load(arg, main_apply, o, err, sizeof(err)) != 0) {
      fprintf(stderr, "respool-sim: %s\n", err);
      return MAIN_EXIT_USAGE;
    }
    return MAIN_GO_ON;
  case 'j':
    o->json = 1;
    return MAIN_GO_ON;
  case 't':
    o->trace_path = arg;
    return MAIN_GO_ON;
  case MAIN_OPT_TIMELINE:
    o->timeline = 1;
    return MAIN_GO_ON;
  case MAIN_OPT_LIST_SETTINGS:
    o->list_settings = 1;
    return MAIN_GO_ON;
  case MAIN_OPT_SWEEP:
    o->sweep = arg;
    return MAIN_GO_ON;
  case MAIN_OPT_SEEDS:
    return main_parse_seeds(o, arg);
  case 'h':
    main_usage(stdout);
    return MAIN_EXIT_OK;
  default:
    main_usage(stderr);
    return MAIN_EXIT_USAGE;
  }
}

/* main_parse reads the command line into |o| (cleared and given its
   defaults here). Returns MAIN_GO_ON, or the exit code (printed). */
static int main_parse(main_opts *o, int argc, char **argv) {
  char err[MAIN_ERRLEN];
  int c;
  memset(o, 0, sizeof(*o));
  o->kind = RP_KIND_GENERIC;
  o->kind_name = "generic";
  o->seed = 1;
  o->sample = RP_SECONDS;
  o->seeds = 1;
  sim_load_default(&o->load);
  while ((c = getopt_long(argc, argv, "r:l:k:s:S:a:f:jt:h", main_longopts,
                          NULL)) != -1) {
    const char *key = main_directive(c);
    int code;
    err[0] = '\0';
    if (key == NULL) {
      code = main_take_opt(o, c, optarg);
      if (code != MAIN_GO_ON) {
        return code;
      }
      continue;
    }
    if (main_apply(key, optarg, o, err, sizeof(err)) != 0) {
      fprintf(stderr, "respool-sim: %s\n", err);
      return MAIN_EXIT_USAGE;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "respool-sim: unexpected argument '%s'\n", argv[optind]);
    return MAIN_EXIT_USAGE;
  }
  return MAIN_GO_ON;
}

/* main_settings gives |cfg| the kind's settings with every --set of |o|
   and prints them for --list-settings. Sets |*plog_level_set| when a
   --set named log_level. Returns MAIN_GO_ON, or the exit code
   (printed). */
static int main_settings(const main_opts *o, sim_config *cfg,
                         int *plog_level_set) {
  char err[MAIN_ERRLEN];
  size_t i;
  sim_config_default(cfg, o->kind);
  for (i = 0; i < o->nsets; ++i) {
    if (rp_settings_set(&cfg->settings, o->sets[i], err, sizeof(err)) != 0) {
      fprintf(stderr, "respool-sim: --set: %s (--list-settings shows them)\n",
              err);
      return MAIN_EXIT_USAGE;
    }
    if (strncmp(o->sets[i], "log_level=", strlen("log_level=")) == 0) {
      *plog_level_set = 1;
    }
  }
  /* A tunnel's names are never given 0x20, whatever --set asks. */
  rp_settings_restrict(&cfg->settings, o->kind);
  if (o->list_settings) {
    printf("rp_settings for kind %s (--set NAME=VALUE):\n", o->kind_name);
    sim_settings_print(&cfg->settings, stdout);
    return MAIN_EXIT_OK;
  }
  return MAIN_GO_ON;
}

/* main_configure builds |cfg| from |o|: settings, load, timing and the
   trace file, opened into |*ptrace| (the caller closes it). Returns
   MAIN_GO_ON, or the exit code (printed). */
static int main_configure(main_opts *o, sim_config *cfg, FILE **ptrace) {
  int log_level_set = 0;
  int code = main_settings(o, cfg, &log_level_set);
  int rv;
  if (code != MAIN_GO_ON) {
    return code;
  }
  if (o->nresolvers == 0) {
    fprintf(stderr, "respool-sim: give at least one -r SPEC (--help)\n");
    return MAIN_EXIT_USAGE;
  }
  if (!o->have_load) {
    rv = sim_load_parse(&o->load, "rate=100,seconds=20", NULL, 0);
    (void)rv;
  }
  cfg->seed = o->seed;
  cfg->load = o->load;
  cfg->rtt = o->rtt;
  cfg->sample_interval = o->sample;
  if (o->trace_path) {
    *ptrace = fopen(o->trace_path, "w");
    if (!*ptrace) {
      fprintf(stderr, "respool-sim: --trace %s: %s\n", o->trace_path,
              strerror(errno));
      return MAIN_EXIT_USAGE;
    }
    cfg->trace = main_trace_line;
    cfg->trace_data = *ptrace;
    if (!log_level_set) {
      cfg->settings.log_level = RP_LOG_DEBUG;
    }
  }
  return MAIN_GO_ON;
}

/* main_single runs |cfg| once and prints its report (table or JSON).
   Returns an exit code. */
static int main_single(const main_opts *o, sim_config *cfg) {
  sim *s = NULL;
  sim_report_info info;
  double t0;
  double t1;
  int rv;
  int code = main_build(o, cfg, &s);
  if (code != MAIN_EXIT_OK) {
    sim_del(s);
    return code;
  }
  t0 = main_wall();
  rv = sim_run(s);
  t1 = main_wall();
  if (rv != 0) {
    fprintf(stderr, "respool-sim: %s\n", sim_error(s));
    code = MAIN_EXIT_RUN;
  }
  info = (sim_report_info){
      .kind = o->kind_name, .wall_seconds = t1 - t0, .timeline = o->timeline};
  if (o->json) {
    rv = sim_report_json(s, &info, stdout);
  } else {
    char load[MAIN_ERRLEN];
    sim_load_format(&o->load, load, sizeof(load));
    printf("respool-sim: kind=%s seed=%" PRIu64 " load=%s\n", o->kind_name,
           o->seed, load);
    rv = sim_report_text(s, &info, stdout);
  }
  if (rv != 0) {
    fprintf(stderr, "respool-sim: report: %s\n", rp_strerror(rv));
    code = MAIN_EXIT_RUN;
  }
  sim_del(s);
  return code;
}

int main(int argc, char **argv) {
  main_opts o;
  sim_config cfg;
  FILE *trace = NULL;
  int code;
  if (argc > 1 && strcmp(argv[1], "table") == 0) {
    return sim_table_main(argc - 1, argv + 1);
  }
  code = main_parse(&o, argc, argv);
  if (code == MAIN_GO_ON) {
    code = main_configure(&o, &cfg, &trace);
  }
  if (code == MAIN_GO_ON && (o.sweep || o.seeds > 1) && o.trace_path) {
    fprintf(stderr, "respool-sim: --trace goes with a single run\n");
    code = MAIN_EXIT_USAGE;
  } else if (code == MAIN_GO_ON && (o.sweep || o.seeds > 1)) {
    code = main_summary(&o, &cfg);
  } else if (code == MAIN_GO_ON) {
    code = main_single(&o, &cfg);
  }
  if (trace) {
    fclose(trace);
  }
  main_free_opts(&o);
  return code;
}
