/*
 * simtable.c: `respool-sim table` (see simtable.h).
 *
 * IMPLEMENTATION NOTES
 * - The JSON files are read with cJSON; a setup or column this code does
 *   not know how to simulate is reported and left out, never guessed.
 * - Round k of every cell uses seed + k - 1, so the columns of a setup
 *   meet the same resolver draws.
 * - The JSON output holds one record a round, in the runner's round
 *   format (kbps_down, client, fakeres, cpu_seconds, the pool's
 *   counters), for scenarios/runner.py --sim-results.
 */
#include "simtable.h"

#include "simjobs.h"
#include "simsweep.h"
#include "simtable_internal.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef RP_SOURCE_DIR
#define RP_SOURCE_DIR "."
#endif

/* TABLE_LIMITED_LIMIT is the runner's client time limit of a byte
   transfer: 240 s (100 s for the real and original tunnels:
   timeout_limited; simtable_cell.c has the timed one's). */
#define TABLE_LIMITED_LIMIT 240
/* TABLE_CLIENT_LIMIT_LEAD and TABLE_CLIENT_LIMIT_MIN give the client's
   own limit where a tunnel's transfer takes "{client_limit}" (tcp_measure
   --limit): the runner's timeout less the lead, at least the minimum, s
   (scenarios/respool_bench/cell.py). */
#define TABLE_CLIENT_LIMIT_LEAD 10
#define TABLE_CLIENT_LIMIT_MIN 5
/* TABLE_MIB is a MiB in bytes. */
#define TABLE_MIB 1048576.0

/* table_takes_client_limit returns 1 when tunnel |tun|'s byte transfer
   passes the runner's {client_limit} to its client. */
static int table_takes_client_limit(const cJSON *tun) {
  const cJSON *a;

  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(tun,
                                                         "transfer_bytes")) {
    if (cJSON_IsString(a) && strstr(a->valuestring, "{client_limit}")) {
      return 1;
    }
  }
  return 0;
}

static void table_usage(FILE *fp) {
  fprintf(
      fp,
      "usage: respool-sim table [--setup S] [--column C] [--seed N]\n"
      "                         [--rounds R] [--quick] [--cores N]\n"
      "                         [--cost-scale X] [--jobs N]\n"
      "                         [--setups FILE] [--columns FILE]\n"
      "                         [--set NAME=VALUE ...] [--json] [--list]\n"
      "\n"
      "Runs the benchmark table in virtual time: every setup of\n"
      "scenarios/setups.json against every column of\n"
      "scenarios/columns.json, each cell a simulated loopback machine\n"
      "(the tunnel client and server, the fake resolvers and the\n"
      "relay as processes on --cores CPUs) driving the project's own\n"
      "engines. The same seed gives the same output, byte for byte.\n"
      "\n"
      "  --setup S, --column C  only these (repeatable, or a,b)\n"
      "  --seed N               the first round's seed (default 1)\n"
      "  --rounds R             rounds per cell, seeds N.. (default 1)\n"
      "  --quick                the QUICK transfers (64 KiB, 2 s)\n"
      "  --cores N              the machine's cores (default 2)\n"
      "  --cost-scale X         every process's CPU costs times X: a\n"
      "                         machine X times slower (default 1)\n"
      "  --jobs N               cells run on N processes at once (default:\n"
      "                         the cores online); the output is the same\n"
      "  --set NAME=VALUE       an rp_settings field of every pool (after\n"
      "                         the kind's defaults; respool-sim\n"
      "                         --list-settings names them)\n"
      "  --setups, --columns    the files (default the source tree's)\n"
      "  --json                 print the rounds as JSON for\n"
      "                         scenarios/runner.py --sim-results\n"
      "  --list                 list the setups and columns, exit\n"
      "  --sweep F=V1,V2,...    a sweep of an rp_settings field over the\n"
      "                         cells; --timeline FILE.csv one cell's\n"
      "                         resolvers in time (respool-sim table\n"
      "                         --sweep --help says more)\n"
      "\n"
      "Without --json: the median download kbps of each cell.\n"
      "Exit status 0, 1 when a run failed, 2 for bad usage.\n");
}

/* ---------------------------------------------------------------- */
/* Reading the files                                                  */
/* ---------------------------------------------------------------- */

cJSON *sim_table_read_json(const char *path) {
  FILE *f = fopen(path, "rb");
  cJSON *j = NULL;
  char *buf;
  long len;

  if (f == NULL) {
    fprintf(stderr, "respool-sim table: %s: %s\n", path, strerror(errno));
    return NULL;
  }
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
      fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len + 1)) != NULL) {
    if (fread(buf, 1, (size_t)len, f) == (size_t)len) {
      buf[len] = 0;
      j = cJSON_Parse(buf);
    }
    free(buf);
  }
  fclose(f);
  if (j == NULL) {
    fprintf(stderr, "respool-sim table: %s: not JSON\n", path);
  }
  return j;
}

static double table_num(const cJSON *o, const char *key, double def) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

  return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static const char *table_str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

  return cJSON_IsString(v) ? v->valuestring : "";
}

static int table_wanted(const char *name, const char *const *only, size_t n) {
  size_t i;

  if (n == 0) {
    return 1;
  }
  for (i = 0; i < n; ++i) {
    if (strcmp(name, only[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

static char *table_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);

  if (d != NULL) {
    memcpy(d, s, n);
  }
  return d;
}

static int table_load_setups(sim_table *t, const sim_table_opts *o) {
  cJSON *j = sim_table_read_json(o->setups_path), *d, *s, *r;

  if (j == NULL) {
    return 2;
  }
  d = cJSON_GetObjectItemCaseSensitive(j, "defaults");
  t->bytes = (uint64_t)table_num(d, "bytes", 131072);
  t->seconds = table_num(d, "seconds", 5);
  t->quick_bytes = (uint64_t)table_num(d, "quick_bytes", 65536);
  t->quick_seconds = table_num(d, "quick_seconds", 2);
  t->upload_bytes = (uint64_t)table_num(d, "upload_bytes", 0);
  cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(j, "setups")) {
    sim_table_setup *ts;

    if (!table_wanted(table_str(s, "name"), o->only_setups, o->nonly_setups) ||
        t->nsetups == SIM_TABLE_MAX) {
      continue;
    }
    ts = &t->setups[t->nsetups++];
    snprintf(ts->name, sizeof(ts->name), "%s", table_str(s, "name"));
    ts->rate_limited =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "rate_limited"));
    ts->quick_seconds = table_num(s, "quick_seconds", 0);
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "resolvers")) {
      if (cJSON_IsString(r) && ts->nres < SIM_NET_MAX_RES) {
        ts->specs[ts->nres] = table_strdup(r->valuestring);
        if (ts->specs[ts->nres] == NULL) {
          cJSON_Delete(j);
          return 1;
        }
        ++ts->nres;
      }
    }
  }
  cJSON_Delete(j);
  return 0;
}

static int table_load_columns(sim_table *t, const sim_table_opts *o) {
  cJSON *j = sim_table_read_json(o->columns_path), *c, *a, *tun;

  if (j == NULL) {
    return 2;
  }
  snprintf(t->domain, sizeof(t->domain), "%s", table_str(j, "domain"));
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(j, "columns")) {
    sim_table_column *tc;

    if (!table_wanted(table_str(c, "name"), o->only_columns,
                      o->nonly_columns) ||
        t->ncolumns == SIM_TABLE_MAX) {
      continue;
    }
    tc = &t->columns[t->ncolumns++];
    snprintf(tc->name, sizeof(tc->name), "%s", table_str(c, "name"));
    snprintf(tc->tunnel, sizeof(tc->tunnel), "%s", table_str(c, "tunnel"));
    snprintf(tc->mode, sizeof(tc->mode), "%s", table_str(c, "mode"));
    snprintf(tc->relay, sizeof(tc->relay), "%s", table_str(c, "relay"));
    tun = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "tunnels"), tc->tunnel);
    tc->timeout_limited =
        table_num(tun, "timeout_limited", TABLE_LIMITED_LIMIT);
    if (table_takes_client_limit(tun)) {
      /* The client stops itself before the runner would. */
      tc->timeout_limited -= TABLE_CLIENT_LIMIT_LEAD;
      if (tc->timeout_limited < TABLE_CLIENT_LIMIT_MIN) {
        tc->timeout_limited = TABLE_CLIENT_LIMIT_MIN;
      }
    }
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(c, "mode_args")) {
      if (cJSON_IsString(a) && tc->nargs < SIM_TABLE_MAX) {
        tc->args[tc->nargs] = table_strdup(a->valuestring);
        if (tc->args[tc->nargs] == NULL) {
          cJSON_Delete(j);
          return 1;
        }
        ++tc->nargs;
      }
    }
  }
  cJSON_Delete(j);
  return 0;
}

void sim_table_free(sim_table *t) {
  size_t i, k;

  for (i = 0; i < t->nsetups; ++i) {
    for (k = 0; k < t->setups[i].nres; ++k) {
      free(t->setups[i].specs[k]);
    }
  }
  for (i = 0; i < t->ncolumns; ++i) {
    for (k = 0; k < t->columns[i].nargs; ++k) {
      free(t->columns[i].args[k]);
    }
  }
}

int sim_table_load(sim_table *t, const sim_table_opts *o) {
  int rv;

  memset(t, 0, sizeof(*t));
  rv = table_load_setups(t, o);

  if (rv == 0) {
    rv = table_load_columns(t, o);
  }
  if (rv == 0 && (t->nsetups == 0 || t->ncolumns == 0)) {
    fprintf(stderr, "respool-sim table: no setup or no column matches\n");
    rv = 2;
  }
  if (rv != 0) {
    sim_table_free(t);
  }
  return rv;
}

/* ---------------------------------------------------------------- */
/* Output                                                             */
/* ---------------------------------------------------------------- */

static cJSON *table_round_json(const sim_table_setup *s,
                               const sim_table_column *c, uint64_t round,
                               const sim_net_result *r) {
  cJSON *o = cJSON_CreateObject(), *cl, *fr, *cpu, *sv;
  double total = 0, secs = r->seconds > 0 ? r->seconds : 1;
  uint64_t q = 0;
  size_t i;

  cJSON_AddStringToObject(o, "setup", s->name);
  cJSON_AddStringToObject(o, "column", c->name);
  cJSON_AddNumberToObject(o, "round", (double)round);
  cJSON_AddBoolToObject(o, "ok", r->bytes_down > 0);
  if (!r->finished) {
    cJSON_AddBoolToObject(o, "partial", 1);
  }
  cJSON_AddNumberToObject(o, "kbps_down", r->kbps_down);
  cJSON_AddNullToObject(o, "kbps_up");
  cl = cJSON_AddObjectToObject(o, "client");
  cJSON_AddBoolToObject(cl, "complete", r->finished);
  cJSON_AddNumberToObject(cl, "bytes_down", (double)r->bytes_down);
  cJSON_AddNumberToObject(cl, "seconds", r->seconds);
  cJSON_AddNumberToObject(cl, "kbps_down", r->kbps_down);
  cJSON_AddBoolToObject(cl, "down_ok", r->down_ok);
  cJSON_AddNumberToObject(cl, "queries", (double)r->client.queries);
  cJSON_AddNumberToObject(cl, "answers", (double)r->client.answers);
  cJSON_AddNumberToObject(cl, "timeouts", (double)r->client.timeouts);
  cJSON_AddNumberToObject(cl, "rejected", (double)r->client.rejected);
  if (r->client.nacks > 0) {
    cJSON_AddNumberToObject(cl, "nacks", (double)r->client.nacks);
  }
  for (i = 0; i < s->nres; ++i) {
    q += r->received[i];
  }
  fr = cJSON_AddArrayToObject(o, "fakeres");
  for (i = 0; i < s->nres; ++i) {
    cJSON *x = cJSON_CreateObject();
    char name[SIM_TABLE_NAME];
    const char *p = strstr(s->specs[i], "name=");

    snprintf(name, sizeof(name), "r%zu", i + 1);
    if (p != NULL) {
      size_t k = 0;

      for (p += 5; *p && *p != ',' && k + 1 < sizeof(name); ++p) {
        name[k++] = *p;
      }
      name[k] = 0;
    }
    cJSON_AddStringToObject(x, "name", name);
    cJSON_AddNumberToObject(x, "queries", (double)r->received[i]);
    cJSON_AddNumberToObject(x, "answered", (double)r->answered[i]);
    cJSON_AddNumberToObject(x, "refused", (double)r->refused[i]);
    cJSON_AddNumberToObject(x, "dropped", (double)r->dropped[i]);
    cJSON_AddNumberToObject(x, "lost", (double)r->lost[i]);
    cJSON_AddNumberToObject(x, "overflow", (double)r->overflow[i]);
    cJSON_AddNumberToObject(x, "share",
                            q ? (double)r->received[i] / (double)q : 0);
    cJSON_AddNumberToObject(x, "qps", (double)r->received[i] / secs);
    cJSON_AddItemToArray(fr, x);
  }
  sv = cJSON_AddObjectToObject(o, "server");
  cJSON_AddStringToObject(sv, "server", c->tunnel);
  cJSON_AddNumberToObject(sv, "queries", (double)r->server.queries);
  cJSON_AddNumberToObject(sv, "answers", (double)r->server.answers);
  cJSON_AddNumberToObject(sv, "answered_empty",
                          (double)r->server.answered_empty);
  cJSON_AddNumberToObject(sv, "bytes_down_acked",
                          (double)r->server.bytes_down);
  cJSON_AddNumberToObject(sv, "retransmissions",
                          (double)r->server.retransmissions);
  cJSON_AddNumberToObject(sv, "timeouts", (double)r->server.timeouts);
  cJSON_AddNumberToObject(sv, "fast_retransmits",
                          (double)r->server.fast_retransmits);
  cJSON_AddNumberToObject(sv, "window_full", (double)r->server.window_full);
  if (r->server.resends > 0) {
    cJSON_AddNumberToObject(sv, "resends", (double)r->server.resends);
  }
  cpu = cJSON_AddObjectToObject(o, "cpu_seconds");
  cJSON_AddNumberToObject(cpu, "client",
                          (double)r->cpu_client / SIM_TABLE_NS_PER_S);
  cJSON_AddNumberToObject(cpu, "server",
                          (double)r->cpu_server / SIM_TABLE_NS_PER_S);
  cJSON_AddNumberToObject(cpu, "fakeres",
                          (double)r->cpu_fakeres / SIM_TABLE_NS_PER_S);
  if (r->cpu_relay > 0) {
    cJSON_AddNumberToObject(cpu, "relay",
                            (double)r->cpu_relay / SIM_TABLE_NS_PER_S);
  }
  total =
      (double)(r->cpu_client + r->cpu_server + r->cpu_fakeres + r->cpu_relay) /
      SIM_TABLE_NS_PER_S;
  cJSON_AddNumberToObject(cpu, "total", total);
  if (r->bytes_down > 0) {
    cJSON_AddNumberToObject(o, "cpu_s_per_mib",
                            total / ((double)r->bytes_down / TABLE_MIB));
  }
  if (r->pool.sends > 0) {
    static const char *const kinds[] = {"generic", "dnstt", "masterdns",
                                        "auto"};

    cJSON_AddStringToObject(o, "kind", kinds[r->kind]);
    cJSON_AddNumberToObject(o, "copies", (double)r->pool.copies);
    cJSON_AddNumberToObject(o, "hedges", (double)r->pool.hedges);
    cJSON_AddNumberToObject(o, "resends", (double)r->pool.resends);
    cJSON_AddNumberToObject(o, "spills", (double)r->pool.spills);
    cJSON_AddNumberToObject(o, "failed", (double)r->pool.failed);
    cJSON_AddNumberToObject(o, "waits", (double)r->pool.waits);
    cJSON_AddNumberToObject(o, "copies_data", (double)r->pool.copies_data);
    cJSON_AddNumberToObject(o, "copies_repeat", (double)r->pool.copies_repeat);
  }
  cl = cJSON_AddObjectToObject(o, "sim");
  cJSON_AddNumberToObject(cl, "events", (double)r->events);
  {
    char h[20];

    snprintf(h, sizeof(h), "%016" PRIx64, r->hash);
    cJSON_AddStringToObject(cl, "trace_hash", h);
  }
  return o;
}

static int table_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;

  return (x > y) - (x < y);
}

double sim_table_median(double *v, size_t n) {
  qsort(v, n, sizeof(v[0]), table_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---------------------------------------------------------------- */
/* Options                                                            */
/* ---------------------------------------------------------------- */

static int table_split(char *arg, const char **arr, size_t *pn) {
  char *save = NULL, *tok;

  for (tok = strtok_r(arg, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    if (*pn == SIM_TABLE_MAX) {
      return 2;
    }
    arr[(*pn)++] = tok;
  }
  return 0;
}

int sim_table_parse(int argc, char **argv, sim_table_opts *o) {
  int i;
  char *end;

  *o = (sim_table_opts){
      .setups_path = RP_SOURCE_DIR "/scenarios/setups.json",
      .columns_path = RP_SOURCE_DIR "/scenarios/columns.json",
      .seed = 1,
      .rounds = 1,
      .cores = 2,
      .cost_scale = 1.0,
      .jobs = sim_jobs_default_workers(),
  };
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i];
    char *v = i + 1 < argc ? argv[i + 1] : NULL;

    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      table_usage(stdout);
      return -1;
    } else if (strcmp(a, "--quick") == 0) {
      o->quick = 1;
      continue;
    } else if (strcmp(a, "--json") == 0) {
      o->json = 1;
      continue;
    } else if (strcmp(a, "--list") == 0) {
      o->list = 1;
      continue;
    }
    if (v == NULL) {
      fprintf(stderr, "respool-sim table: %s needs a value\n", a);
      return 2;
    }
    ++i;
    if (strcmp(a, "--setup") == 0) {
      if (table_split(v, o->only_setups, &o->nonly_setups) != 0) {
        return 2;
      }
    } else if (strcmp(a, "--column") == 0) {
      if (table_split(v, o->only_columns, &o->nonly_columns) != 0) {
        return 2;
      }
    } else if (strcmp(a, "--set") == 0) {
      char errbuf[SIM_TABLE_ERRLEN];
      rp_settings probe;

      rp_settings_default(&probe, RP_KIND_GENERIC);
      if (o->nsets == SIM_TABLE_MAX ||
          rp_settings_set(&probe, v, errbuf, sizeof(errbuf)) != 0) {
        fprintf(stderr, "respool-sim table: --set %s: %s\n", v,
                o->nsets == SIM_TABLE_MAX ? "too many" : errbuf);
        return 2;
      }
      o->sets[o->nsets++] = v;
    } else if (strcmp(a, "--cost-scale") == 0) {
      double x;

      errno = 0;
      x = strtod(v, &end);
      if (errno != 0 || end == v || *end != 0 || !(x > 0.0) || x > 100.0) {
        fprintf(stderr,
                "respool-sim table: bad value '%s' for --cost-scale (want a "
                "number above 0, at most 100)\n",
                v);
        return 2;
      }
      o->cost_scale = x;
    } else if (strcmp(a, "--setups") == 0) {
      o->setups_path = v;
    } else if (strcmp(a, "--columns") == 0) {
      o->columns_path = v;
    } else if (strcmp(a, "--seed") == 0 || strcmp(a, "--rounds") == 0 ||
               strcmp(a, "--cores") == 0 || strcmp(a, "--jobs") == 0) {
      uint64_t n;

      errno = 0;
      n = strtoull(v, &end, 10);
      if (errno != 0 || *end != 0 || *v == '-' ||
          (strcmp(a, "--seed") != 0 && (n == 0 || n > 1024)) ||
          (strcmp(a, "--jobs") == 0 && n > SIM_JOBS_MAX_WORKERS)) {
        fprintf(stderr, "respool-sim table: bad value '%s' for %s\n", v, a);
        return 2;
      }
      if (strcmp(a, "--seed") == 0) {
        o->seed = n;
      } else if (strcmp(a, "--rounds") == 0) {
        o->rounds = n;
      } else if (strcmp(a, "--jobs") == 0) {
        o->jobs = (unsigned)n;
      } else {
        o->cores = (uint32_t)n;
      }
    } else {
      fprintf(stderr, "respool-sim table: unknown option %s (see --help)\n", a);
      return 2;
    }
  }
  return 0;
}

/* table_list prints the setups and columns of |t| (--list). */
static void table_list(const sim_table *t) {
  size_t si, ci;

  for (si = 0; si < t->nsetups; ++si) {
    printf("setup  %s\n", t->setups[si].name);
  }
  for (ci = 0; ci < t->ncolumns; ++ci) {
    printf("column %-22s %s %s\n", t->columns[ci].name, t->columns[ci].tunnel,
           t->columns[ci].mode);
  }
}

/* table_head starts the output: with --json the document |*pout| and
   its results array (returned), else the Markdown table's head
   (returns NULL). */
static cJSON *table_head(const sim_table *t, const sim_table_opts *o,
                         cJSON **pout) {
  size_t ci;

  if (o->json) {
    *pout = cJSON_CreateObject();
    cJSON_AddStringToObject(*pout, "simulator", "respool-sim table");
    cJSON_AddNumberToObject(*pout, "seed", (double)o->seed);
    cJSON_AddNumberToObject(*pout, "rounds", (double)o->rounds);
    cJSON_AddNumberToObject(*pout, "cores", (double)o->cores);
    cJSON_AddNumberToObject(*pout, "cost_scale", o->cost_scale);
    cJSON_AddBoolToObject(*pout, "quick", o->quick);
    return cJSON_AddArrayToObject(*pout, "results");
  }
  printf("| setup |");
  for (ci = 0; ci < t->ncolumns; ++ci) {
    printf(" %s |", t->columns[ci].name);
  }
  printf("\n|---|");
  for (ci = 0; ci < t->ncolumns; ++ci) {
    printf("---|");
  }
  printf("\n");
  return NULL;
}

/* table_job is what a job of the table needs to build its cell: job
   k is round k % rounds of column (k / rounds) % ncolumns of setup
   k / (rounds x ncolumns). */
typedef struct table_job {
  const sim_table *t;
  const sim_table_opts *o;
} table_job;

/* table_job_at gives job |k|'s setup, column and round (from 0). */
static void table_job_at(const table_job *j, size_t k,
                         const sim_table_setup **ps,
                         const sim_table_column **pc, size_t *pround) {
  size_t rest = k / j->o->rounds;

  *pround = k % j->o->rounds;
  *pc = &j->t->columns[rest % j->t->ncolumns];
  *ps = &j->t->setups[rest / j->t->ncolumns];
}

static int table_make(size_t k, sim_net_cell *cell, char *err, size_t errlen,
                      void *ud) {
  const table_job *j = ud;
  const sim_table_setup *s;
  const sim_table_column *c;
  size_t round;

  table_job_at(j, k, &s, &c, &round);
  return sim_table_cell(j->t, j->o, s, c, j->o->seed + round, cell, err,
                        errlen);
}

/* table_done prints job |k|'s progress line on stderr (in its worker). */
static void table_done(size_t k, const sim_job_out *out, void *ud) {
  const sim_table_setup *s;
  const sim_table_column *c;
  size_t round;

  table_job_at(ud, k, &s, &c, &round);
  if (out->made == 0 && out->rv == 0) {
    fprintf(stderr,
            "[sim] %s / %s / round %zu: %.0f kbps, %" PRIu64
            " events, %.2f s\n",
            s->name, c->name, round + 1, out->res.kbps_down, out->res.events,
            out->wall);
  }
}

/* table_report_cell reports the rounds |outs| of setup |s| under column
   |c|, adding each to |rounds| (--json) or printing the median kbps as
   the table's cell; a cell's rounds stop at its first failure. Sets
   |*pstatus| to 1 when a run failed. */
static void table_report_cell(const sim_table_opts *o, const sim_table_setup *s,
                              const sim_table_column *c,
                              const sim_job_out *outs, cJSON *rounds,
                              int *pstatus) {
  double kbps[SIM_TABLE_MAX];
  size_t nk = 0;
  uint64_t k;

  for (k = 0; k < o->rounds; ++k) {
    const sim_job_out *out = &outs[k];

    if (out->made != 0) {
      fprintf(stderr, "respool-sim table: %s / %s: %s\n", s->name, c->name,
              out->err);
      break;
    }
    if (out->rv != 0) {
      fprintf(stderr, "respool-sim table: %s / %s: %s\n", s->name, c->name,
              out->rv == SIM_JOBS_LOST ? "its worker died"
                                       : rp_strerror(out->rv));
      *pstatus = 1;
      break;
    }
    if (nk < SIM_TABLE_MAX) {
      kbps[nk++] = out->res.kbps_down;
    }
    if (o->json) {
      cJSON_AddItemToArray(rounds, table_round_json(s, c, k + 1, &out->res));
    }
  }
  if (!o->json) {
    if (nk == 0) {
      printf(" - |");
    } else {
      printf(" %.0f |", sim_table_median(kbps, nk));
    }
  }
}

/* table_print_json prints and frees |out|. Returns 0, or 1 when it
   cannot be printed (out of memory). */
static int table_print_json(cJSON *out) {
  char *text = cJSON_Print(out);
  int status = 0;

  if (text != NULL) {
    printf("%s\n", text);
    free(text);
  } else {
    status = 1;
  }
  cJSON_Delete(out);
  return status;
}

/* table_wants_sweep returns 1 when |argv| asks for a sweep or a
   timeline (simsweep.h), else 0. */
static int table_wants_sweep(int argc, char **argv) {
  int k;

  for (k = 1; k < argc; ++k) {
    if (strcmp(argv[k], "--sweep") == 0 || strcmp(argv[k], "--timeline") == 0) {
      return 1;
    }
  }
  return 0;
}

int sim_table_main(int argc, char **argv) {
  static sim_table t;
  sim_table_opts o;
  cJSON *out = NULL, *rounds;
  sim_job_out *outs;
  size_t si, ci, njobs;
  int rv, status = 0;

  if (table_wants_sweep(argc, argv)) {
    return sim_sweep_main(argc, argv);
  }
  rv = sim_table_parse(argc, argv, &o);
  if (rv == 0) {
    rv = sim_table_load(&t, &o);
  }
  if (rv != 0 || o.list) {
    if (rv == 0) {
      table_list(&t);
      sim_table_free(&t);
    }
    return rv < 0 ? 0 : rv;
  }
  njobs = t.nsetups * t.ncolumns * o.rounds;
  outs = calloc(njobs ? njobs : 1, sizeof(*outs));
  if (outs == NULL) {
    fprintf(stderr, "respool-sim table: out of memory\n");
    sim_table_free(&t);
    return 1;
  }
  sim_jobs_run(njobs, o.jobs, table_make, table_done,
               &(table_job){.t = &t, .o = &o}, outs);
  rounds = table_head(&t, &o, &out);
  for (si = 0; si < t.nsetups; ++si) {
    if (!o.json) {
      printf("| %s |", t.setups[si].name);
    }
    for (ci = 0; ci < t.ncolumns; ++ci) {
      table_report_cell(&o, &t.setups[si], &t.columns[ci],
                        &outs[(si * t.ncolumns + ci) * o.rounds], rounds,
                        &status);
    }
    if (!o.json) {
      printf("\n");
    }
  }
  free(outs);
  if (o.json && table_print_json(out) != 0) {
    status = 1;
  }
  sim_table_free(&t);
  return status;
}
