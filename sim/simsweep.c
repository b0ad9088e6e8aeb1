/*
 * simsweep.c: `respool-sim table --sweep` and `--timeline` (see
 * simsweep.h).
 *
 * IMPLEMENTATION NOTES
 * - The table's own options (--setup, --column, --seed, --set, --quick,
 *   --cores, the files) are read by sim_table_parse; this file takes its
 *   own out of argv first. --seeds N is --rounds N: seeds seed ..
 *   seed + N - 1, the same for every value, so a point differs from the
 *   next by the value alone.
 * - The runs (value x setup x column x seed) go to sim_jobs_run, on
 *   --jobs workers like the table's cells; the CSV is written from their
 *   results in that order, so it does not depend on the workers. The
 *   progress lines come as runs end, in any order.
 * - A swept value is applied after the --set assignments, which come
 *   after the kind's defaults (sim_table_cell). Every value is checked
 *   with rp_settings_set before the first run, so a bad field or value
 *   is reported at once, in that function's words.
 * - A ratio (columns.json "ratios", both columns in the run) is taken
 *   seed by seed, num / den of the same seed (the same resolver draws),
 *   and its median, min and max are those of the seeds' ratios; the
 *   table's ratio is the ratio of the medians instead.
 * - The CSV holds only the seeds' figures, printed with a fixed number
 *   of decimals: the same seeds give the same bytes. Progress goes to
 *   stderr.
 * - The plots are gnuplot scripts written to `gnuplot` through a pipe;
 *   the sweep's data go inline (a datablock), the timeline's plot reads
 *   its CSV. No gnuplot: the CSV is still written, the exit status 1.
 * - A timeline samples the cell's pool through simnet's on_sample hook,
 *   which pushes no event: the run is the one the table makes.
 */
#include "simsweep.h"

#include "simjobs.h"
#include "simtable_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SWEEP_ASSIGN is the longest "field=value" kept. */
#define SWEEP_ASSIGN 128
/* SWEEP_SAMPLE is the default timeline step, ns (100 ms: a cap's growth
   step and the rate buckets' width are of that order). */
#define SWEEP_SAMPLE (100 * RP_MILLISECONDS)
/* SWEEP_LOG_SPAN: the sweep plot's y axis is logarithmic when the
   largest median is more than this many times the smallest. */
#define SWEEP_LOG_SPAN 20.0
/* SWEEP_NS_PER_S converts ns to s. */
#define SWEEP_NS_PER_S 1e9

typedef struct sweep_opts {
  /* sweep is "F=V1,V2,..." or NULL; timeline the CSV path or NULL. */
  const char *sweep, *timeline;
  /* csv (NULL: stdout) and plot (NULL: none) are output paths. */
  const char *csv, *plot;
  /* seeds is the runs per point (0: --rounds). */
  uint64_t seeds;
  /* sample is the timeline step, ns. */
  rp_duration sample;
} sweep_opts;

/* sweep_sample_ctx is the timeline's state during the run. */
typedef struct sweep_sample_ctx {
  FILE *fp;
  uint64_t nsamples;
} sweep_sample_ctx;

static void sweep_usage(FILE *fp) {
  fprintf(fp,
          "usage: respool-sim table --sweep F=V1,V2,... [--seeds N]\n"
          "                         [--csv FILE] [--plot FILE.png]\n"
          "                         [table options]\n"
          "       respool-sim table --timeline FILE.csv [--sample DUR]\n"
          "                         [--plot FILE.png] --setup S --column C\n"
          "                         [table options]\n"
          "\n"
          "--sweep runs every cell the table options pick (--setup,\n"
          "--column, --set, --quick...) once per value of the rp_settings\n"
          "field F and seed (seeds --seed .. --seed + N - 1, default N\n"
          "--rounds) and writes per value and cell the median, min and max\n"
          "kbps, and the same of the columns.json ratios whose two columns\n"
          "ran (taken seed by seed), as CSV: field,value,kind,setup,name,\n"
          "seeds,median,min,max (kind kbps: name is the column; kind\n"
          "ratio: num/den). --plot draws median kbps against the value with\n"
          "min-max bars, one line per cell (gnuplot).\n"
          "\n"
          "--timeline runs one cell (seed --seed) and writes its pool every\n"
          "--sample DUR of virtual time (default 100ms): per resolver its\n"
          "state, learned cap (0: none), answer rate and tries in flight.\n"
          "--plot draws caps and rates over time, and tries in flight.\n"
          "A cell whose column runs no pool (direct, dnsdist) has no\n"
          "timeline; no cell runs more than one pool.\n");
}

/* ---------------------------------------------------------------- */
/* Options                                                            */
/* ---------------------------------------------------------------- */

/* sweep_parse takes the sweep's options out of |argv| into |so| and
   the table's into |o|. Returns 0, -1 after --help, or 2. */
static int sweep_parse(int argc, char **argv, sweep_opts *so,
                       sim_table_opts *o) {
  char **targv = calloc((size_t)argc + 1, sizeof(*targv));
  int i, targc = 0, rv = 0, help = 0;
  char *end;

  if (targv == NULL) {
    return 1;
  }
  *so = (sweep_opts){.sample = SWEEP_SAMPLE};
  for (i = 1; i < argc; ++i) {
    /* Before the values are read: "--sweep --help" asks for this. */
    help |= strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0;
  }
  for (i = 0; i < argc && rv == 0 && !help; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int mine = strcmp(a, "--sweep") == 0 || strcmp(a, "--timeline") == 0 ||
               strcmp(a, "--csv") == 0 || strcmp(a, "--plot") == 0 ||
               strcmp(a, "--seeds") == 0 || strcmp(a, "--sample") == 0;

    if (i == 0 || !mine) {
      targv[targc++] = argv[i];
      continue;
    }
    if (v == NULL) {
      fprintf(stderr, "respool-sim table: %s needs a value\n", a);
      rv = 2;
      break;
    }
    ++i;
    if (strcmp(a, "--sweep") == 0) {
      so->sweep = v;
    } else if (strcmp(a, "--timeline") == 0) {
      so->timeline = v;
    } else if (strcmp(a, "--csv") == 0) {
      so->csv = v;
    } else if (strcmp(a, "--plot") == 0) {
      so->plot = v;
    } else if (strcmp(a, "--seeds") == 0) {
      errno = 0;
      so->seeds = strtoull(v, &end, 10);
      if (errno != 0 || *end != 0 || *v == '-' || so->seeds == 0 ||
          so->seeds > SIM_TABLE_MAX) {
        fprintf(stderr, "respool-sim table: bad value '%s' for --seeds "
                        "(1 to %d)\n", v, SIM_TABLE_MAX);
        rv = 2;
      }
    } else if (rp_duration_parse(v, &so->sample) != 0 || so->sample == 0 ||
               so->sample == RP_TSTAMP_UNSET) {
      fprintf(stderr, "respool-sim table: bad value '%s' for --sample "
                      "(want a duration such as 100ms)\n", v);
      rv = 2;
    }
  }
  if (help) {
    sweep_usage(stdout);
    rv = -1;
  }
  if (rv == 0) {
    rv = sim_table_parse(targc, targv, o);
  }
  free(targv);
  if (rv != 0) {
    return rv;
  }
  if (so->sweep != NULL && so->timeline != NULL) {
    fprintf(stderr, "respool-sim table: --sweep and --timeline are two runs; "
                    "give one\n");
    return 2;
  }
  if (o->json || o->list) {
    fprintf(stderr, "respool-sim table: --json and --list do not go with "
                    "--sweep or --timeline\n");
    return 2;
  }
  if (so->seeds == 0) {
    so->seeds = o->rounds;
  }
  o->rounds = so->seeds;
  return 0;
}

/* ---------------------------------------------------------------- */
/* The sweep                                                          */
/* ---------------------------------------------------------------- */

/* sweep_values splits |spec| ("F=V1,V2") into |assign|, one "F=Vi" a
   value, each checked with rp_settings_set. Returns the count, or 0
   after saying why on stderr. */
static size_t sweep_values(const char *spec, char (*assign)[SWEEP_ASSIGN],
                           const char **values) {
  const char *eq = strchr(spec, '='), *p, *comma;
  char err[SIM_TABLE_ERRLEN];
  size_t flen, vlen, n = 0;
  rp_settings probe;

  if (eq == NULL || eq == spec || eq[1] == 0 ||
      (size_t)(eq - spec) + 2 >= SWEEP_ASSIGN) {
    fprintf(stderr, "respool-sim table: --sweep '%s': want FIELD=V1,V2,...\n",
            spec);
    return 0;
  }
  flen = (size_t)(eq - spec);
  for (p = eq + 1; *p != 0; p = *comma ? comma + 1 : comma) {
    comma = strchr(p, ',');
    if (comma == NULL) {
      comma = p + strlen(p);
    }
    vlen = (size_t)(comma - p);
    if (vlen == 0 || n == SIM_TABLE_MAX || flen + 1 + vlen >= SWEEP_ASSIGN) {
      fprintf(stderr, "respool-sim table: --sweep '%s': %s\n", spec,
              n == SIM_TABLE_MAX ? "too many values" : "an empty or long value");
      return 0;
    }
    snprintf(assign[n], SWEEP_ASSIGN, "%.*s=%.*s", (int)flen, spec, (int)vlen,
             p);
    values[n] = assign[n] + flen + 1;
    rp_settings_default(&probe, RP_KIND_GENERIC);
    if (rp_settings_set(&probe, assign[n], err, sizeof(err)) != 0) {
      fprintf(stderr, "respool-sim table: --sweep: %s\n", err);
      return 0;
    }
    ++n;
  }
  return n;
}

/* sweep_stats sets |out| to the median, min and max of |v| (|n| > 0). */
static void sweep_stats(const double *v, size_t n, double out[3]) {
  double tmp[SIM_TABLE_MAX];

  memcpy(tmp, v, n * sizeof(*v));
  out[0] = sim_table_median(tmp, n);
  out[1] = tmp[0];
  out[2] = tmp[n - 1];
}

/* sweep_column returns the index of column |name| in |t|, or -1. */
static long sweep_column(const sim_table *t, const char *name) {
  size_t i;

  for (i = 0; i < t->ncolumns; ++i) {
    if (strcmp(t->columns[i].name, name) == 0) {
      return (long)i;
    }
  }
  return -1;
}

/* sweep_write_csv writes the sweep's CSV to |fp|: |kbps| holds
   [value][setup][column][seed]. */
static void sweep_write_csv(FILE *fp, const sim_table *t,
                            const sim_table_opts *o, const cJSON *ratios,
                            const char *field, const char *const *values,
                            size_t nval, const double *kbps) {
  size_t ns = t->nsetups, nc = t->ncolumns, nk = (size_t)o->rounds;
  size_t v, s, c, k;
  double st[3], rat[SIM_TABLE_MAX];
  const cJSON *r;

  fprintf(fp, "field,value,kind,setup,name,seeds,median,min,max\n");
  for (v = 0; v < nval; ++v) {
    for (s = 0; s < ns; ++s) {
      for (c = 0; c < nc; ++c) {
        sweep_stats(&kbps[((v * ns + s) * nc + c) * nk], nk, st);
        fprintf(fp, "%s,%s,kbps,%s,%s,%zu,%.1f,%.1f,%.1f\n", field,
                values[v], t->setups[s].name, t->columns[c].name, nk, st[0],
                st[1], st[2]);
      }
      cJSON_ArrayForEach(r, ratios) {
        const cJSON *num = cJSON_GetObjectItemCaseSensitive(r, "num");
        const cJSON *den = cJSON_GetObjectItemCaseSensitive(r, "den");
        long a, b;
        size_t nr = 0;

        if (!cJSON_IsString(num) || !cJSON_IsString(den) ||
            (a = sweep_column(t, num->valuestring)) < 0 ||
            (b = sweep_column(t, den->valuestring)) < 0) {
          continue;
        }
        for (k = 0; k < nk; ++k) {
          double d = kbps[((v * ns + s) * nc + (size_t)b) * nk + k];

          if (d > 0) {
            rat[nr++] = kbps[((v * ns + s) * nc + (size_t)a) * nk + k] / d;
          }
        }
        if (nr > 0) {
          sweep_stats(rat, nr, st);
          fprintf(fp, "%s,%s,ratio,%s,%s/%s,%zu,%.4f,%.4f,%.4f\n", field,
                  values[v], t->setups[s].name, num->valuestring,
                  den->valuestring, nr, st[0], st[1], st[2]);
        }
      }
    }
  }
}

/* sweep_gnuplot runs |script| through gnuplot. Returns 0 or 1. */
static int sweep_gnuplot(const char *script) {
  FILE *gp = popen("gnuplot", "w");
  int rc;

  if (gp == NULL) {
    fprintf(stderr, "respool-sim table: cannot run gnuplot: %s\n",
            strerror(errno));
    return 1;
  }
  fputs(script, gp);
  rc = pclose(gp);
  if (rc != 0) {
    fprintf(stderr, "respool-sim table: gnuplot failed (status %d)\n", rc);
    return 1;
  }
  return 0;
}

/* sweep_plot draws the sweep's median kbps per cell against the value
   into |path|. Returns 0 or 1. */
static int sweep_plot(const char *path, const sim_table *t,
                      const sim_table_opts *o, const char *field,
                      const char *const *values, size_t nval,
                      const double *kbps) {
  size_t ns = t->nsetups, nc = t->ncolumns, nk = (size_t)o->rounds;
  size_t v, s, c, len = 0;
  double st[3], lo = INFINITY, hi = 0;
  char *buf = NULL;
  FILE *fp = open_memstream(&buf, &len);
  int rv;

  if (fp == NULL) {
    return 1;
  }
  fprintf(fp, "$d << EOD\n");
  for (v = 0; v < nval; ++v) {
    fprintf(fp, "\"%s\"", values[v]);
    for (s = 0; s < ns; ++s) {
      for (c = 0; c < nc; ++c) {
        sweep_stats(&kbps[((v * ns + s) * nc + c) * nk], nk, st);
        fprintf(fp, " %.1f %.1f %.1f", st[0], st[1], st[2]);
        lo = st[0] > 0 && st[0] < lo ? st[0] : lo;
        hi = st[0] > hi ? st[0] : hi;
      }
    }
    fprintf(fp, "\n");
  }
  fprintf(fp,
          "EOD\n"
          "set terminal pngcairo size 1000,600 noenhanced\n"
          "set output '%s'\n"
          "set title 'respool-sim table --sweep %s, %zu seed(s) from %" PRIu64
          ": median kbps, min-max bars'\n"
          "set xlabel '%s'\nset ylabel 'download kbps'\n"
          "set key below\nset grid\nset offsets 0.3, 0.3, 0, 0\n%s"
          "plot ",
          path, field, nk, o->seed, field,
          hi > SWEEP_LOG_SPAN * lo ? "set logscale y\n" : "");
  for (s = 0; s < ns; ++s) {
    for (c = 0; c < nc; ++c) {
      size_t col = 2 + 3 * (s * nc + c);

      fprintf(fp, "%s$d using 0:%zu:%zu:%zu:xtic(1) with yerrorlines "
                  "title '%s / %s'",
              s + c > 0 ? ", " : "", col, col + 1, col + 2, t->setups[s].name,
              t->columns[c].name);
    }
  }
  fprintf(fp, "\n");
  fclose(fp);
  rv = buf != NULL ? sweep_gnuplot(buf) : 1;
  free(buf);
  return rv;
}

/* sweep_job is what the sweep's jobs share: job k is value v, setup s,
   column c and seed k' in the order ((v * ns + s) * nc + c) * nk + k'. */
typedef struct sweep_job {
  const sim_table *t;
  const sim_table_opts *o;
  const char *const *assign;
  size_t nval, njobs;
} sweep_job;

/* sweep_job_at decodes job |k| of |j|. */
static void sweep_job_at(const sweep_job *j, size_t k, size_t *pv, size_t *ps,
                         size_t *pc, size_t *pk) {
  size_t nk = (size_t)j->o->rounds, nc = j->t->ncolumns, ns = j->t->nsetups;

  *pk = k % nk;
  *pc = k / nk % nc;
  *ps = k / nk / nc % ns;
  *pv = k / nk / nc / ns;
}

/* sweep_make builds job |k|'s cell: the table's options with the job's
   value assigned after the --set ones. */
static int sweep_make(size_t k, sim_net_cell *cell, char *err, size_t errlen,
                      void *ud) {
  const sweep_job *j = ud;
  sim_table_opts ov = *j->o;
  size_t v, s, c, r;

  sweep_job_at(j, k, &v, &s, &c, &r);
  ov.sets[ov.nsets++] = j->assign[v];
  return sim_table_cell(j->t, &ov, &j->t->setups[s], &j->t->columns[c],
                        j->o->seed + r, cell, err, errlen);
}

/* sweep_done prints job |k|'s progress line on stderr (in its worker;
   jobs end in any order). */
static void sweep_done(size_t k, const sim_job_out *out, void *ud) {
  const sweep_job *j = ud;
  size_t v, s, c, r;

  sweep_job_at(j, k, &v, &s, &c, &r);
  if (out->made == 0 && out->rv == 0) {
    fprintf(stderr,
            "[sweep %zu/%zu] %s / %s / %s / seed %" PRIu64 ": %.0f kbps\n",
            k + 1, j->njobs, j->assign[v], j->t->setups[s].name,
            j->t->columns[c].name, j->o->seed + r, out->res.kbps_down);
  }
}

static int sweep_run(const sweep_opts *so, const sim_table *t,
                     const sim_table_opts *o) {
  static char assign[SIM_TABLE_MAX][SWEEP_ASSIGN];
  const char *values[SIM_TABLE_MAX], *assigns[SIM_TABLE_MAX];
  size_t ns = t->nsetups, nc = t->ncolumns, nk = (size_t)o->rounds;
  size_t nval = sweep_values(so->sweep, assign, values), k, v, s, c, r;
  char field[SWEEP_ASSIGN];
  sweep_job job;
  sim_job_out *outs;
  cJSON *cols = NULL;
  double *kbps;
  FILE *fp = stdout;
  int rv = 0;

  if (nval == 0) {
    return 2;
  }
  if (o->nsets == SIM_TABLE_MAX) {
    fprintf(stderr, "respool-sim table: too many --set\n");
    return 2;
  }
  snprintf(field, sizeof(field), "%.*s", (int)(values[0] - assign[0] - 1),
           assign[0]);
  for (v = 0; v < nval; ++v) {
    assigns[v] = assign[v];
  }
  job = (sweep_job){.t = t, .o = o, .assign = assigns, .nval = nval,
                    .njobs = nval * ns * nc * nk};
  kbps = calloc(job.njobs ? job.njobs : 1, sizeof(*kbps));
  outs = calloc(job.njobs ? job.njobs : 1, sizeof(*outs));
  if (kbps == NULL || outs == NULL) {
    free(kbps);
    free(outs);
    return 1;
  }
  sim_jobs_run(job.njobs, o->jobs, sweep_make, sweep_done, &job, outs);
  for (k = 0; k < job.njobs && rv == 0; ++k) {
    const sim_job_out *out = &outs[k];

    if (out->made != 0 || out->rv != 0) {
      sweep_job_at(&job, k, &v, &s, &c, &r);
      fprintf(stderr, "respool-sim table: %s / %s / %s: %s\n", assign[v],
              t->setups[s].name, t->columns[c].name,
              out->made != 0          ? out->err
              : out->rv == SIM_JOBS_LOST ? "its worker died"
                                         : rp_strerror(out->rv));
      rv = 1;
    }
    kbps[k] = out->res.kbps_down;
  }
  free(outs);
  if (rv == 0 && so->csv != NULL && (fp = fopen(so->csv, "w")) == NULL) {
    fprintf(stderr, "respool-sim table: %s: %s\n", so->csv, strerror(errno));
    rv = 1;
  }
  if (rv == 0) {
    cols = sim_table_read_json(o->columns_path);
    sweep_write_csv(fp, t, o,
                    cJSON_GetObjectItemCaseSensitive(cols, "ratios"), field,
                    values, nval, kbps);
    cJSON_Delete(cols);
    if (fp != stdout && fclose(fp) != 0) {
      rv = 1;
    }
  }
  if (rv == 0 && so->plot != NULL) {
    rv = sweep_plot(so->plot, t, o, field, values, nval, kbps);
  }
  free(kbps);
  return rv;
}

/* ---------------------------------------------------------------- */
/* The timeline                                                       */
/* ---------------------------------------------------------------- */

static int sweep_on_sample(void *arg, rp_tstamp now, const rp_pool *pool,
                           const uint32_t *ids, size_t nres) {
  sweep_sample_ctx *ctx = arg;
  rp_resolver_stats st;
  size_t r;

  fprintf(ctx->fp, "%.3f", (double)now / SWEEP_NS_PER_S);
  for (r = 0; r < nres; ++r) {
    if (ids[r] == SIM_NET_NO_ID ||
        rp_pool_get_resolver_stats(pool, ids[r], &st, now) != 0) {
      fprintf(ctx->fp, ",absent,0,0,0");
      continue;
    }
    fprintf(ctx->fp, ",%s,%.1f,%.1f,%" PRIu32, rp_resolver_state_str(st.state),
            st.cap_qps, st.answer_rate_qps, st.inflight);
  }
  fprintf(ctx->fp, "\n");
  ++ctx->nsamples;
  return 0;
}

/* sweep_timeline_plot draws the timeline CSV |csv| of |nres| resolvers
   into |path|. Returns 0 or 1. */
static int sweep_timeline_plot(const char *path, const char *csv,
                               const char *title, size_t nres) {
  size_t r, len = 0;
  char *buf = NULL;
  FILE *fp = open_memstream(&buf, &len);
  int rv;

  if (fp == NULL) {
    return 1;
  }
  fprintf(fp,
          "set terminal pngcairo size 1000,800 noenhanced\n"
          "set output '%s'\n"
          "set datafile separator ','\n"
          "set key outside right\nset grid\n"
          "set multiplot layout 2,1 title '%s'\n"
          "set ylabel 'q/s'\nset title 'learned cap (solid; none: no "
          "point) and answer rate (dashed)'\nplot ",
          path, title);
  for (r = 0; r < nres; ++r) {
    fprintf(fp, "%s'%s' skip 1 using 1:($%zu > 0 ? $%zu : NaN) with lines "
                "lw 2 lc %zu title 'r%zu cap', '%s' skip 1 using 1:%zu with "
                "lines dt 2 lc %zu title 'r%zu rate'",
            r > 0 ? ", " : "", csv, 3 + 4 * r, 3 + 4 * r, r + 1, r + 1, csv,
            4 + 4 * r, r + 1, r + 1);
  }
  fprintf(fp, "\nset title 'tries in flight'\nset xlabel 'virtual time, s'\n"
              "set ylabel 'tries'\nplot ");
  for (r = 0; r < nres; ++r) {
    fprintf(fp, "%s'%s' skip 1 using 1:%zu with steps lc %zu title 'r%zu'",
            r > 0 ? ", " : "", csv, 5 + 4 * r, r + 1, r + 1);
  }
  fprintf(fp, "\nunset multiplot\n");
  fclose(fp);
  rv = buf != NULL ? sweep_gnuplot(buf) : 1;
  free(buf);
  return rv;
}

static int sweep_timeline(const sweep_opts *so, const sim_table *t,
                          const sim_table_opts *o) {
  const sim_table_setup *s = &t->setups[0];
  const sim_table_column *c = &t->columns[0];
  sweep_sample_ctx ctx = {0};
  char err[SIM_TABLE_ERRLEN], title[2 * SIM_TABLE_ERRLEN];
  sim_net_cell cell;
  sim_net_result res;
  size_t r;
  int rv;

  if (t->nsetups != 1 || t->ncolumns != 1) {
    fprintf(stderr, "respool-sim table: --timeline takes one cell: "
                    "one --setup and one --column (%zu x %zu given)\n",
            t->nsetups, t->ncolumns);
    return 2;
  }
  rv = sim_table_cell(t, o, s, c, o->seed, &cell, err, sizeof(err));
  if (rv != 0) {
    fprintf(stderr, "respool-sim table: %s / %s: %s\n", s->name, c->name, err);
    return rv;
  }
  if (cell.relay == SIM_NET_DIRECT || cell.relay == SIM_NET_DNSDIST) {
    fprintf(stderr, "respool-sim table: --timeline: column %s (mode %s) "
                    "runs no pool: nothing to sample (the pool columns: "
                    "mode pool or respool)\n", c->name, c->mode);
    return 2;
  }
  ctx.fp = fopen(so->timeline, "w");
  if (ctx.fp == NULL) {
    fprintf(stderr, "respool-sim table: %s: %s\n", so->timeline,
            strerror(errno));
    return 1;
  }
  fprintf(ctx.fp, "t_s");
  for (r = 0; r < cell.nres; ++r) {
    fprintf(ctx.fp, ",r%zu_state,r%zu_cap_qps,r%zu_rate_qps,r%zu_inflight",
            r + 1, r + 1, r + 1, r + 1);
  }
  fprintf(ctx.fp, "\n");
  cell.sample_every = so->sample;
  cell.on_sample = sweep_on_sample;
  cell.sample_arg = &ctx;
  rv = sim_net_run(&cell, &res);
  if (fclose(ctx.fp) != 0 && rv == 0) {
    rv = RP_ERR_NOMEM;
  }
  if (rv != 0) {
    fprintf(stderr, "respool-sim table: %s / %s: %s\n", s->name, c->name,
            rp_strerror(rv));
    return 1;
  }
  printf("%s / %s / seed %" PRIu64 ": %.0f kbps, %" PRIu64
         " samples every %.0f ms -> %s\n",
         s->name, c->name, o->seed, res.kbps_down, ctx.nsamples,
         (double)so->sample / RP_MILLISECONDS, so->timeline);
  if (so->plot == NULL) {
    return 0;
  }
  snprintf(title, sizeof(title), "%s / %s, seed %" PRIu64 " (virtual time)",
           s->name, c->name, o->seed);
  return sweep_timeline_plot(so->plot, so->timeline, title, cell.nres);
}

int sim_sweep_main(int argc, char **argv) {
  static sim_table t;
  sweep_opts so;
  sim_table_opts o;
  int rv;

  rv = sweep_parse(argc, argv, &so, &o);
  if (rv == 0) {
    rv = sim_table_load(&t, &o);
  }
  if (rv != 0) {
    return rv < 0 ? 0 : rv;
  }
  rv = so.sweep != NULL ? sweep_run(&so, &t, &o) : sweep_timeline(&so, &t, &o);
  sim_table_free(&t);
  return rv;
}
