/*
 * reload.c: a running pool takes a new configuration
 * (rp_net_pool_reload): resolvers the new one lists that the pool lacks
 * are added and checked as at start; resolvers it no longer lists are
 * taken out of the core (their tries in flight go to other resolvers at
 * once) and their handles closed; what only a restart can change is
 * named, not applied.
 *
 * IMPLEMENTATION NOTES
 * - Matching is by target (transport, host, port, DoH path, TLS name:
 *   rp_config_target_cmp, the rule that merges duplicates), on two sorted
 *   index arrays: n log n for a hundred thousand resolvers.
 * - Everything that can fail (memory, the TLS context a first DoT or DoH
 *   resolver needs) happens before the first change, so a reload that
 *   fails changes nothing.
 * - A resolver in the core that the new configuration drops keeps
 *   serving until the checks of the resolvers it adds have ended
 *   (rp_net_reload_settle, from the check timer: at most one tick
 *   later), so replacing every resolver never leaves the core empty. It
 *   does not count towards discovery.want meanwhile.
 * - A removed upstream leaves np->ups at once (stats and the scores file
 *   no longer list it; its score is kept in the scores table) and waits
 *   on np->removed until its last handle closes (rp_net_up_handle_closed
 *   frees it).
 */
#include "net_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* reload_key is one resolver of either side in the sorted match. */
typedef struct reload_key {
  rp_config_target t;
  size_t idx;
} reload_key;

static int reload_key_cmp(const void *pa, const void *pb) {
  const reload_key *a = pa, *b = pb;
  int c = rp_config_target_cmp(&a->t, &b->t);
  if (c != 0) {
    return c;
  }
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static rp_config_target reload_target_of_up(const rp_net_upstream *up) {
  return (rp_config_target){.scheme = up->scheme,
                            .host = up->host ? up->host : "",
                            .port = up->port,
                            .path = up->path ? up->path : "",
                            .tls_name = up->tls_name ? up->tls_name : ""};
}

/* reload_note appends |what| to the report's restart list. */
static void reload_note(rp_net_reload_report *rep, const char *what) {
  size_t n = strlen(rep->restart);
  snprintf(rep->restart + n, sizeof(rep->restart) - n, "%s%s", n ? ", " : "",
           what);
}

static int reload_str_differs(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") != 0;
}

/* reload_compare names in |rep| what |cfg| changes that only a restart
   applies. */
static void reload_compare(const rp_net_pool *np, const rp_config *cfg,
                           int has_auto, rp_net_reload_report *rep) {
  rp_kind kind = cfg->has_kind ? cfg->kind : np->opts.kind;
  const char *pretest = cfg->pretest_domain ? cfg->pretest_domain
                                            : RP_CONFIG_DEFAULT_PRETEST_DOMAIN;
  if (cfg->has_listen != np->cfg_has_listen ||
      (cfg->has_listen &&
       memcmp(&cfg->listen, &np->cfg_listen, sizeof(cfg->listen)) != 0)) {
    reload_note(rep, "listen");
  }
  if (kind != np->kind) {
    reload_note(rep, "kind");
  }
  if (!np->fixed_settings) {
    rp_settings s;
    size_t i, n, changed = 0;
    const rp_settings_field *f = rp_settings_fields(&n);
    char a[RP_SETTINGS_VALUELEN], b[RP_SETTINGS_VALUELEN], what[96];
    rp_settings_default(&s, np->kind);
    rp_config_apply(cfg, &s);
    rp_settings_restrict(&s, np->kind);
    for (i = 0; i < n; ++i) {
      rp_settings_format(&s, &f[i], a, sizeof(a));
      rp_settings_format(&np->settings, &f[i], b, sizeof(b));
      if (strcmp(a, b) != 0 && strcmp(f[i].name, "log_level") != 0 &&
          strcmp(f[i].name, "log_categories") != 0) {
        if (changed++ < 3) {
          snprintf(what, sizeof(what), "tuning %s", f[i].name);
          reload_note(rep, what);
        }
      }
    }
    if (changed > 3) {
      snprintf(what, sizeof(what), "%zu more tuning fields", changed - 3);
      reload_note(rep, what);
    }
  }
  if (!np->opts.check_build && reload_str_differs(pretest, np->pretest_text)) {
    reload_note(rep, "pretest_domain");
  }
  if (reload_str_differs(cfg->scores_file, np->scores_file)) {
    reload_note(rep, "scores_file");
  }
  if (reload_str_differs(cfg->tls_ca, np->tls_ca)) {
    reload_note(rep, "tls_ca");
  }
  if (reload_str_differs(cfg->tls_name, np->tls_name)) {
    reload_note(rep, "tls_name");
  }
  if (has_auto != np->auto_on) {
    reload_note(rep, "auto (discovery)");
  }
}

/* reload_remove takes np->ups[i] out of the pool at |now|. */
static void reload_remove(rp_net_pool *np, size_t i, rp_tstamp now) {
  rp_net_upstream *up = np->ups[i];
  size_t k, out;
  if (up->check == RP_NET_CHECK_PASSED) {
    rp_resolver_stats st;
    if (rp_pool_get_resolver_stats(np->core, up->resolver_id, &st, now) == 0) {
      /* Remembered for the scores file (NOMEM: the old score stays). */
      (void)rp_scores_set(&np->scores, up->name, st.score);
    }
    ++np->in_core;
    rp_net_core_result(np,
                       rp_pool_remove_resolver(np->core, up->resolver_id, now),
                       "remove_resolver");
    --np->in_core;
    --np->npassed;
  } else if (up->check == RP_NET_CHECK_RUNNING) {
    --np->nchecking;
  }
  up->check = RP_NET_CHECK_REMOVED;
  rp_net_log(np, RP_LOG_INFO, "ev=resolver_removed res=%s", up->name);
  /* Out of the check order (indexes above |i| move down by one). */
  for (k = 0, out = 0; k < np->nups; ++k) {
    size_t o = np->order[k];
    if (o == i) {
      if (k < np->check_cursor) {
        --np->check_cursor;
      }
      continue;
    }
    np->order[out++] = o > i ? o - 1 : o;
  }
  memmove(&np->ups[i], &np->ups[i + 1], (np->nups - i - 1) * sizeof(*np->ups));
  --np->nups;
  /* Datagrams queued for its sockets leave before they close. */
  rp_net_tx_run(np, now);
  up->ops->close(up);
  if (up->nhandles == 0) {
    rp_net_upstream_free(np, up);
  } else {
    up->next_removed = np->removed;
    np->removed = up;
  }
}

void rp_net_reload_settle(rp_net_pool *np, rp_tstamp now) {
  size_t i;
  if (np->nleaving == 0 || np->stopping) {
    return;
  }
  for (i = 0; i < np->nups; ++i) {
    if (np->ups[i]->joining && np->ups[i]->check == RP_NET_CHECK_RUNNING) {
      return;
    }
  }
  for (i = np->nups; i-- > 0;) {
    rp_net_upstream *up = np->ups[i];
    up->joining = 0;
    if (up->leaving) {
      up->leaving = 0;
      --np->nleaving;
      reload_remove(np, i, now);
    }
  }
  rp_net_flush(np, now);
  rp_net_check_more(np, now);
}

/* reload_plan is what a reload compares and decides: the running
   upstreams (have, nhave) and the configured resolvers (want, nwant),
   each sorted by target; keep[i] marks np->ups[i] to keep, add[j]
   cfg->resolvers[j] to add. */
typedef struct reload_plan {
  reload_key *have, *want;
  unsigned char *keep, *add;
  size_t nhave, nwant;
} reload_plan;

/* reload_plan_free frees what reload_plan_alloc allocated. */
static void reload_plan_free(const rp_mem *mem, reload_plan *p) {
  mem->free(p->have, mem->user_data);
  mem->free(p->want, mem->user_data);
  mem->free(p->keep, mem->user_data);
  mem->free(p->add, mem->user_data);
}

/* reload_plan_alloc allocates |p| for |nhave| running upstreams and
   |nwant| configured resolvers. Returns 0 or RP_ERR_NOMEM. */
static int reload_plan_alloc(const rp_mem *mem, reload_plan *p, size_t nhave,
                             size_t nwant) {
  *p = (reload_plan){.nhave = nhave, .nwant = nwant};
  p->have = mem->calloc(nhave ? nhave : 1, sizeof(*p->have), mem->user_data);
  p->want = mem->calloc(nwant ? nwant : 1, sizeof(*p->want), mem->user_data);
  p->keep = mem->calloc(nhave ? nhave : 1, 1, mem->user_data);
  p->add = mem->calloc(nwant ? nwant : 1, 1, mem->user_data);
  return p->have && p->want && p->keep && p->add ? 0 : RP_ERR_NOMEM;
}

/* reload_match matches the running upstreams and |cfg|'s resolvers by
   target into |p|: a resolver running already is kept, one not running
   (and not a duplicate) is added; discovery's finds and "auto" stay. */
static void reload_match(rp_net_pool *np, const rp_config *cfg,
                         reload_plan *p) {
  size_t i, j;
  for (i = 0; i < p->nhave; ++i) {
    np->ups[i]->joining = 0;
    p->have[i] = (reload_key){.t = reload_target_of_up(np->ups[i]), .idx = i};
  }
  for (i = 0; i < p->nwant; ++i) {
    p->want[i] =
        (reload_key){.t = rp_config_target_of(&cfg->resolvers[i]), .idx = i};
  }
  qsort(p->have, p->nhave, sizeof(*p->have), reload_key_cmp);
  qsort(p->want, p->nwant, sizeof(*p->want), reload_key_cmp);
  for (i = 0, j = 0; j < p->nwant; ++j) {
    int c = 1;
    while (i < p->nhave &&
           (c = rp_config_target_cmp(&p->have[i].t, &p->want[j].t)) < 0) {
      ++i;
    }
    if (i < p->nhave && c == 0) {
      p->keep[p->have[i].idx] = 1;
    } else if (j == 0 ||
               rp_config_target_cmp(&p->want[j - 1].t, &p->want[j].t)) {
      /* Not running, and not a duplicate of the one before. */
      p->add[p->want[j].idx] = 1;
    }
  }
  for (i = 0; i < p->nhave; ++i) {
    const rp_net_upstream *up = np->ups[i];
    if (up->from_auto || up->scheme == RP_SCHEME_AUTO) {
      p->keep[i] = 1;
    }
  }
}

/* reload_add adds the resolvers |p| marks (counted in rep->added), room
   first so that adding cannot fail half-way. Returns 0 or RP_ERR_NOMEM
   (nothing added then). */
static int reload_add(rp_net_pool *np, const rp_config *cfg,
                      const reload_plan *p, rp_net_reload_report *rep,
                      char *err, size_t errlen) {
  size_t i, old_nups = np->nups;
  int rv;
  for (i = 0; i < p->nwant; ++i) {
    if (p->add[i] && cfg->resolvers[i].scheme != RP_SCHEME_AUTO) {
      ++rep->added;
    }
  }
  if ((rv = rp_net_reserve_ups(np, rep->added)) != 0) {
    return rv;
  }
  for (i = 0; i < p->nwant; ++i) {
    int usable;
    if (!p->add[i] || cfg->resolvers[i].scheme == RP_SCHEME_AUTO) {
      continue;
    }
    rv = rp_net_add_upstream(np, &cfg->resolvers[i], &usable, err, errlen);
    if (rv != 0) {
      /* Out of memory: take back what was added (nothing opened yet). */
      while (np->nups > old_nups) {
        rp_net_upstream_free(np, np->ups[--np->nups]);
      }
      return rv;
    }
  }
  for (i = old_nups; i < np->nups; ++i) {
    rp_net_log(np, RP_LOG_INFO, "ev=resolver_added res=%s", np->ups[i]->name);
  }
  np->max_ups += rep->added;
  return 0;
}

/* reload_retire marks the upstreams added since |old_nups| as joining
   and removes those |p| does not keep: at once when they carry no client
   query, else once the joining ones are checked (rp_net_reload_settle).
   From the end, so the indexes of the rest stay. */
static void reload_retire(rp_net_pool *np, const reload_plan *p,
                          size_t old_nups, rp_net_reload_report *rep,
                          rp_tstamp now) {
  size_t i;
  for (i = old_nups; i < np->nups; ++i) {
    np->ups[i]->joining = 1;
  }
  for (i = old_nups; i-- > 0;) {
    rp_net_upstream *up = np->ups[i];
    if (p->keep[i]) {
      ++rep->kept;
      if (up->leaving) {
        /* Listed again before it left. */
        up->leaving = 0;
        --np->nleaving;
      }
      continue;
    }
    ++rep->removed;
    if (up->check != RP_NET_CHECK_PASSED) {
      /* Carries no client query: out at once. */
      reload_remove(np, i, now);
    } else if (!up->leaving) {
      up->leaving = 1;
      ++np->nleaving;
    }
  }
}

/* reload_check_list checks that |cfg| lists a resolver and sets
   |*pneed_tls| when it lists DoT or DoH and |*phas_auto| when "auto".
   Returns 0 or RP_ERR_INVALID_ARGUMENT (|err| says why). */
static int reload_check_list(const rp_config *cfg, int *phas_auto,
                             int *pneed_tls, char *err, size_t errlen) {
  size_t i, nusable = 0;
  *phas_auto = *pneed_tls = 0;
  for (i = 0; i < cfg->nresolvers; ++i) {
    rp_scheme s = cfg->resolvers[i].scheme;
    *phas_auto |= s == RP_SCHEME_AUTO;
    nusable += s != RP_SCHEME_AUTO;
    *pneed_tls |= s == RP_SCHEME_DOT || s == RP_SCHEME_DOH;
  }
  if (nusable == 0 && !*phas_auto) {
    snprintf(err, errlen, "no resolvers configured");
    return RP_ERR_INVALID_ARGUMENT;
  }
  return 0;
}

int rp_net_pool_reload(rp_net_pool *np, const rp_config *cfg,
                       rp_net_reload_report *rep, char *err, size_t errlen) {
  const rp_mem *mem = np->mem;
  rp_net_reload_report dummy;
  reload_plan plan = {0};
  size_t old_nups = np->nups;
  rp_tstamp now = rp_net_now();
  int has_auto, need_tls, rv;
  char msg[RP_CONFIG_ERRLEN];

  if (!rep) {
    rep = &dummy;
  }
  if (!err || errlen == 0) {
    err = msg;
    errlen = sizeof(msg);
  }
  memset(rep, 0, sizeof(*rep));
  err[0] = '\0';
  if (np->stopping) {
    snprintf(err, errlen, "the pool is stopping");
    return RP_ERR_INVALID_ARGUMENT;
  }
  if ((rv = reload_check_list(cfg, &has_auto, &need_tls, err, errlen)) != 0) {
    return rv;
  }
  rv = reload_plan_alloc(mem, &plan, np->nups, cfg->nresolvers);
  if (rv == 0 && need_tls && !np->tls_ctx) {
    rv = rp_net_tls_ctx_new(&np->tls_ctx, np->tls_ca, err, errlen);
    rv = rv == RP_ERR_TLS ? RP_ERR_CONFIG : rv;
  }
  if (rv == 0) {
    reload_match(np, cfg, &plan);
    rv = reload_add(np, cfg, &plan, rep, err, errlen);
  }
  if (rv == 0) {
    reload_compare(np, cfg, has_auto, rep);
    np->want = cfg->discovery.want ? cfg->discovery.want : RP_NET_CHECK_WANT;
    reload_retire(np, &plan, old_nups, rep, now);
    rp_net_flush(np, now);
    rp_net_check_more(np, now);
    rp_net_reload_settle(np, now);
  }
  reload_plan_free(mem, &plan);
  return rv;
}
