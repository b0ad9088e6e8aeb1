/*
 * resolvers.c: which upstreams a pool runs: the configured resolvers,
 * with "auto" the bundled DoT/DoH ones, and discovery's finds.
 */
#include "net_internal.h"
#include "disc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* net_rank is a candidate in the check order. */
typedef struct net_rank {
  int score;
  size_t index;
} net_rank;

/* net_rank_cmp orders by saved score, best first, then by position. */
static int net_rank_cmp(const void *a, const void *b) {
  const net_rank *ra = a, *rb = b;
  if (ra->score != rb->score) {
    return ra->score > rb->score ? -1 : 1;
  }
  return ra->index < rb->index ? -1 : (ra->index > rb->index ? 1 : 0);
}

int rp_net_reserve_ups(rp_net_pool *np, size_t extra) {
  const rp_mem *mem = np->mem;
  size_t cap = np->cap_ups ? np->cap_ups : 8;
  rp_net_upstream **ups;
  size_t *order;
  if (extra <= np->cap_ups - np->nups) {
    return 0;
  }
  while (cap - np->nups < extra) {
    if (cap > SIZE_MAX / 2 / sizeof(*ups)) {
      return RP_ERR_NOMEM;
    }
    cap *= 2;
  }
  ups = mem->calloc(cap, sizeof(*ups), mem->user_data);
  order = mem->calloc(cap, sizeof(*order), mem->user_data);
  if (!ups || !order) {
    mem->free(ups, mem->user_data);
    mem->free(order, mem->user_data);
    return RP_ERR_NOMEM;
  }
  if (np->nups) {
    memcpy(ups, np->ups, np->nups * sizeof(*ups));
    memcpy(order, np->order, np->nups * sizeof(*order));
  }
  mem->free(np->ups, mem->user_data);
  mem->free(np->order, mem->user_data);
  np->ups = ups;
  np->order = order;
  np->cap_ups = cap;
  return 0;
}

void rp_net_upstream_free(rp_net_pool *np, rp_net_upstream *up) {
  const rp_mem *mem = np->mem;
  if (up->ops && up->ops->free) {
    up->ops->free(up);
  }
  mem->free(up->name, mem->user_data);
  mem->free(up->tcp_ids, mem->user_data);
  mem->free(up->host, mem->user_data);
  mem->free(up->tls_name, mem->user_data);
  mem->free(up->path, mem->user_data);
  mem->free(up, mem->user_data);
}

int rp_net_add_upstream(rp_net_pool *np, const rp_config_resolver *r,
                        int *pusable, char *err, size_t errlen) {
  const rp_mem *mem = np->mem;
  rp_net_upstream *up;
  size_t i;
  *pusable = 0;
  if (rp_net_reserve_ups(np, 1) != 0 ||
      !(up = mem->calloc(1, sizeof(*up), mem->user_data))) {
    return RP_ERR_NOMEM;
  }
  *up = (rp_net_upstream){.np = np,
                          .scheme = r->scheme,
                          .addr = r->addr,
                          .has_addr = r->has_addr,
                          .port = r->port,
                          .udp_cur = -1,
                          .tcp_retry_at = RP_TSTAMP_UNSET};
  for (i = 0; i < RP_NET_UDP_PORTS; ++i) {
    rp_net_udpsock *u = &up->udps[i];
    u->tx = (rp_net_txsock){.udp = &u->udp, .up = up, .head = -1, .tail = -1};
  }
  rp_net_stream_init(&up->tcp, NULL, mem, up);
  /* The name, what a TLS transport needs and what a reload compares. */
  if (rp_net_strdup(mem, &up->name, r->text) != 0 ||
      rp_net_strdup(mem, &up->host, r->host) != 0 ||
      rp_net_strdup(mem, &up->tls_name, r->tls_name) != 0 ||
      rp_net_strdup(mem, &up->path, r->path) != 0) {
    rp_net_upstream_free(np, up);
    return RP_ERR_NOMEM;
  }
  switch (r->scheme) {
  case RP_SCHEME_UDP:
  case RP_SCHEME_AUTO:
    up->ops = &rp_net_transport_udp;
    break;
  case RP_SCHEME_TCP:
    up->ops = &rp_net_transport_tcp;
    break;
  case RP_SCHEME_DOT:
  case RP_SCHEME_DOH:
    up->ops = r->scheme == RP_SCHEME_DOT ? &rp_net_transport_dot
                                         : &rp_net_transport_doh;
    if (!np->tls_ctx) {
      int rv = rp_net_tls_ctx_new(&np->tls_ctx, np->tls_ca, err, errlen);
      if (rv != 0) {
        rp_net_upstream_free(np, up);
        return rv == RP_ERR_TLS ? RP_ERR_CONFIG : rv;
      }
    }
    break;
  }
  np->ups[np->nups] = up;
  np->order[np->nups] = np->nups;
  ++np->nups;
  if (r->scheme == RP_SCHEME_AUTO) {
    /* Discovery feeds the pool; "auto" itself is no resolver. */
    up->check = RP_NET_CHECK_UNSUPPORTED;
    np->auto_on = 1;
    return 0;
  }
  rp_scores_get(&np->scores, up->name, &up->saved_score);
  *pusable = 1;
  return 0;
}

/* net_bundled_ctx carries rp_disc_bundled_tls's callback state. */
typedef struct net_bundled_ctx {
  rp_net_pool *np;
  /* count only counts when |add| is 0. */
  int add;
  size_t count;
  int rv;
  size_t nusable;
  char *err;
  size_t errlen;
} net_bundled_ctx;

static int net_bundled_cb(const char *url, void *user_data) {
  net_bundled_ctx *b = user_data;
  rp_config_resolver r;
  int usable;
  if (rp_config_parse_resolver(&r, url, NULL, 0) != 0 ||
      (r.scheme != RP_SCHEME_DOT && r.scheme != RP_SCHEME_DOH)) {
    return 0;
  }
  if (!b->add) {
    ++b->count;
    return 0;
  }
  if (b->np->nups >= b->np->max_ups) {
    return 1;
  }
  b->rv = rp_net_add_upstream(b->np, &r, &usable, b->err, b->errlen);
  if (b->rv == 0) {
    b->np->ups[b->np->nups - 1]->from_auto = 1;
  }
  b->nusable += (size_t)usable;
  return b->rv != 0;
}

/* rp_net_setup_upstreams copies the usable resolvers of the config; with
   "auto" it adds the bundled DoT and DoH resolvers (checked as
   configured ones) and reserves room for what discovery finds. */
int rp_net_setup_upstreams(rp_net_pool *np, const rp_config *cfg, char *err,
                           size_t errlen) {
  const rp_mem *mem = np->mem;
  size_t i, nusable = 0, cap = cfg->nresolvers;
  int has_auto = 0;
  net_bundled_ctx bctx = {.np = np, .err = err, .errlen = errlen};
  for (i = 0; i < cfg->nresolvers; ++i) {
    has_auto |= cfg->resolvers[i].scheme == RP_SCHEME_AUTO;
  }
  if (has_auto) {
    if (cfg->discovery.bundled &&
        rp_disc_bundled_tls(cfg->discovery.data_file, cfg->discovery.country,
                            net_bundled_cb, &bctx, err, errlen) != 0) {
      return RP_ERR_CONFIG;
    }
    cap += bctx.count + cfg->discovery.want;
  }
  np->max_ups = cap;
  for (i = 0; i < cfg->nresolvers; ++i) {
    int usable,
        rv = rp_net_add_upstream(np, &cfg->resolvers[i], &usable, err, errlen);
    if (rv != 0) {
      return rv;
    }
    nusable += (size_t)usable;
  }
  if (has_auto && cfg->discovery.bundled) {
    bctx.add = 1;
    rp_disc_bundled_tls(cfg->discovery.data_file, cfg->discovery.country,
                        net_bundled_cb, &bctx, err, errlen);
    if (bctx.rv != 0) {
      return bctx.rv;
    }
    nusable += bctx.nusable;
  }
  if (nusable == 0 && !np->auto_on) {
    snprintf(err, errlen, "no resolvers configured");
    return RP_ERR_INVALID_ARGUMENT;
  }
  {
    net_rank *rank =
        mem->calloc(np->nups ? np->nups : 1, sizeof(*rank), mem->user_data);
    if (!rank) {
      return RP_ERR_NOMEM;
    }
    for (i = 0; i < np->nups; ++i) {
      rank[i] = (net_rank){.score = np->ups[i]->saved_score, .index = i};
    }
    qsort(rank, np->nups, sizeof(*rank), net_rank_cmp);
    for (i = 0; i < np->nups; ++i) {
      np->order[i] = rank[i].index;
    }
    mem->free(rank, mem->user_data);
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Discovery ("auto")                                                   */
/* ------------------------------------------------------------------ */

static void net_disc_found(const rp_disc_report *rep, void *user_data) {
  rp_net_pool *np = user_data;
  rp_config_resolver r;
  rp_net_upstream *up;
  rp_tstamp now = rp_net_now();
  size_t i;
  int usable;
  if (np->stopping || np->nups >= np->max_ups) {
    return;
  }
  for (i = 0; i < np->nups; ++i) {
    const rp_net_upstream *o = np->ups[i];
    if (o->scheme == RP_SCHEME_UDP && o->has_addr &&
        o->addr.ss_family == rep->sa->sa_family &&
        memcmp(&o->addr, rep->sa,
               rep->sa->sa_family == AF_INET6
                   ? sizeof(struct sockaddr_in6)
                   : sizeof(struct sockaddr_in)) == 0) {
      return; /* configured already */
    }
  }
  if (rp_config_parse_resolver(&r, rep->addr, NULL, 0) != 0 ||
      rp_net_add_upstream(np, &r, &usable, NULL, 0) != 0) {
    return;
  }
  up = np->ups[np->nups - 1];
  up->from_auto = 1;
  ++np->counters.discovery_found;
  /* The pretest was the start-up check: add it to the core at once. */
  up->check = RP_NET_CHECK_RUNNING;
  ++np->nchecking;
  rp_net_check_done(up, 1, NULL, now);
}

static void net_disc_done(const rp_disc_stats *st, void *user_data) {
  rp_net_pool *np = user_data;
  rp_net_log(np, st->passed ? RP_LOG_INFO : RP_LOG_WARN,
             "ev=discovery_done found=%zu tested=%zu candidates=%zu "
             "elapsed_ms=%llu",
             st->passed, st->tested, st->candidates,
             (unsigned long long)(st->elapsed / RP_MILLISECONDS));
}

static void net_disc_log(rp_log_level level, const char *line,
                         void *user_data) {
  rp_net_pool *np = user_data;
  if (np->opts.log && level <= np->opts.log_level) {
    np->opts.log(level, line, np->opts.user_data);
  }
}

void rp_net_disc_closed(rp_disc *d, void *user_data) {
  rp_net_pool *np = user_data;
  (void)d;
  np->disc = NULL;
  rp_net_handle_closed(np);
}

/* net_score_cmp orders score entries best first. */
static int net_score_cmp(const void *a, const void *b) {
  const rp_scores_entry *ea = *(const rp_scores_entry *const *)a;
  const rp_scores_entry *eb = *(const rp_scores_entry *const *)b;
  return ea->score > eb->score ? -1 : (ea->score < eb->score ? 1 : 0);
}

/* rp_net_disc_start runs discovery; saved scores of 0 or more are tried
   first, best first. */
int rp_net_disc_start(rp_net_pool *np, const rp_config *cfg, char *err,
                      size_t errlen) {
  const rp_mem *mem = np->mem;
  const rp_scores_entry **ents = NULL;
  const char **first = NULL;
  size_t i, n = 0;
  rp_disc_options o = {.config = &cfg->discovery,
                       .pretest_domain = cfg->pretest_domain,
                       .on_found = net_disc_found,
                       .on_done = net_disc_done,
                       .log = net_disc_log,
                       .log_level = np->opts.log_level,
                       .mem = mem,
                       .user_data = np};
  int rv;
  if (np->scores.n) {
    ents = mem->calloc(np->scores.n, sizeof(*ents), mem->user_data);
    first = mem->calloc(np->scores.n, sizeof(*first), mem->user_data);
    if (!ents || !first) {
      mem->free(ents, mem->user_data);
      mem->free(first, mem->user_data);
      return RP_ERR_NOMEM;
    }
    for (i = 0; i < np->scores.n; ++i) {
      if (np->scores.entries[i].score >= 0) {
        ents[n++] = &np->scores.entries[i];
      }
    }
    qsort(ents, n, sizeof(*ents), net_score_cmp);
    for (i = 0; i < n; ++i) {
      first[i] = ents[i]->name;
    }
  }
  o.first = first;
  o.nfirst = n;
  rv = rp_disc_start(&np->disc, np->loop, &o, err, errlen);
  mem->free(ents, mem->user_data);
  mem->free(first, mem->user_data);
  if (rv == 0) {
    rp_net_handle_opened(np);
  }
  return rv;
}
