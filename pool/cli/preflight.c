/*
 * preflight.c: what the respool command checks before it starts and
 * what it says once it has: paths it will write, the listen address,
 * resolvers listed twice, and the start-up summary (see cli.h).
 *
 * Every failure here is loud and early: a path that cannot be written
 * is an error at start (exit 2), not a silent loss at the first write or
 * at exit after a long run.
 */
#include "cli.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PREFLIGHT_DUP_NOTES is how many duplicates are named one by one. */
#define PREFLIGHT_DUP_NOTES 5
/* PREFLIGHT_SUMMARY_MS is how often the start-up summary looks at the
   checks; PREFLIGHT_FAILED_NAMED how many failed resolvers it names. */
#define PREFLIGHT_SUMMARY_MS 100
#define PREFLIGHT_FAILED_NAMED 5

int cli_check_writable(const char *path, const char *what, char *err,
                       size_t errlen) {
  char *copy, *dir;
  int rv = 0;

  if (access(path, F_OK) == 0) {
    if (access(path, W_OK) != 0) {
      snprintf(err, errlen, "%s: cannot write %s: %s", what, path,
               strerror(errno));
      return -1;
    }
  }
  /* The file is replaced through a temporary beside it (stats) or
     created at exit (scores): the folder must take new files. */
  copy = strdup(path);
  if (copy == NULL) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  dir = dirname(copy);
  if (access(dir, W_OK | X_OK) != 0) {
    snprintf(err, errlen, "%s: cannot write in %s: %s", what, dir,
             strerror(errno));
    rv = -1;
  }
  free(copy);
  return rv;
}

/* preflight_dup_note prints the first few duplicates; the rest are
   counted (a list of thousands must not flood the log). */
static void preflight_dup_note(const char *dup, const char *kept, void *ud) {
  size_t *n = ud;

  if (++*n <= PREFLIGHT_DUP_NOTES) {
    cli_logf(RP_LOG_INFO, "resolver %s is the same as %s: used once", dup,
             kept);
  }
}

int cli_merge_duplicates(rp_config *cfg) {
  size_t n = 0,
         dropped = rp_config_merge_duplicates(cfg, preflight_dup_note, &n);

  if (dropped == (size_t)-1) {
    return RP_ERR_NOMEM;
  }
  if (dropped > PREFLIGHT_DUP_NOTES) {
    cli_logf(RP_LOG_INFO, "%zu more resolvers listed twice, used once",
             dropped - PREFLIGHT_DUP_NOTES);
  }
  return 0;
}

/* preflight_summary_cb prints the start-up summary once the checks
   settled: none running, and none waiting unless |want| passed. */
static void preflight_summary_cb(uv_timer_t *t) {
  cli *c = t->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  size_t i, n = rp_net_pool_resolver_count(c->np), passed = 0, failed = 0,
            busy = 0, pending = 0, named = 0;
  rp_net_resolver_info info;

  for (i = 0; i < n; ++i) {
    if (rp_net_pool_get_resolver(c->np, i, &info, now) != 0) {
      continue;
    }
    switch (info.check) {
    case RP_NET_CHECK_PASSED:
      ++passed;
      break;
    case RP_NET_CHECK_FAILED:
      ++failed;
      break;
    case RP_NET_CHECK_RUNNING:
      ++busy;
      break;
    case RP_NET_CHECK_PENDING:
      ++pending;
      break;
    case RP_NET_CHECK_UNSUPPORTED:
    case RP_NET_CHECK_REMOVED:
      break;
    }
  }
  if (busy > 0 || (pending > 0 && passed < c->want)) {
    return;
  }
  uv_timer_stop(t);
  cli_logf(RP_LOG_INFO, "start-up check: %zu of %zu resolvers passed%s", passed,
           passed + failed + pending,
           pending > 0 ? " (enough: the rest wait)" : "");
  for (i = 0; i < n && failed > 0 && named < PREFLIGHT_FAILED_NAMED; ++i) {
    if (rp_net_pool_get_resolver(c->np, i, &info, now) == 0 &&
        info.check == RP_NET_CHECK_FAILED) {
      ++named;
      cli_logf(RP_LOG_INFO, "start-up check: failed: %s%s%s", info.name,
               info.last_error && info.last_error[0] ? ": " : " (no answer)",
               info.last_error ? info.last_error : "");
    }
  }
  if (failed > named) {
    cli_logf(RP_LOG_INFO, "start-up check: and %zu more failed",
             failed - named);
  }
  if (passed == 0) {
    cli_logf(RP_LOG_WARN,
             "no resolver passed its start-up check: every query is answered "
             "SERVFAIL until one does (failed ones are checked again)");
  }
}

void cli_summary_start(cli *c, const char *addr, int checked,
                       const char *check_name) {
  size_t n = rp_net_pool_resolver_count(c->np);

  cli_logf(RP_LOG_INFO, "listening on %s (UDP and TCP), %zu resolver%s, %s%s",
           addr, n, n == 1 ? "" : "s",
           checked ? "start-up check: " : "no start-up check (--pretest \"\")",
           checked ? check_name : "");
  if (!checked) {
    return;
  }
  uv_timer_init(c->loop, &c->summary_timer);
  c->summary_timer.data = c;
  uv_timer_start(&c->summary_timer, preflight_summary_cb, PREFLIGHT_SUMMARY_MS,
                 PREFLIGHT_SUMMARY_MS);
  c->summary_on = 1;
}
