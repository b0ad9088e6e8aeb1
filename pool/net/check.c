/*
 * check.c: upstream events and the start-up check (DESIGN.md section
 * 5): answers and errors of the upstreams, routed to the core or to a
 * running check, and the check queue and its timer.
 */
#include "net_internal.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Upstream events and the start-up check                               */
/* ------------------------------------------------------------------ */

void rp_net_check_done(rp_net_upstream *up, int passed, const char *why,
                       rp_tstamp now) {
  rp_net_pool *np = up->np;
  int rv;
  --np->nchecking;
  if (passed && !up->is_open) {
    /* Added without a check (pretest off, or found by discovery). */
    if (up->ops->open(up, now) == 0) {
      up->is_open = 1;
    } else {
      passed = 0;
      why = "open_failed";
    }
  }
  if (!passed) {
    up->check = RP_NET_CHECK_FAILED;
    ++np->counters.checks_failed;
    rp_net_log(np, RP_LOG_INFO, "ev=check_failed res=%s why=%s", up->name, why);
    rp_net_check_more(np, now);
    return;
  }
  {
    rp_resolver_config rc = {.name = up->name,
                             .flags = up->ops->resolver_flags,
                             .score = up->saved_score,
                             .user_data = up};
    ++np->in_core;
    rv = rp_pool_add_resolver(np->core, &rc, &up->resolver_id, now);
    --np->in_core;
  }
  if (rv != 0) {
    up->check = RP_NET_CHECK_FAILED;
    rp_net_log(np, RP_LOG_WARN, "ev=add_failed res=%s err=%s", up->name,
               rp_strerror(rv));
    rp_net_flush(np, now);
    return;
  }
  up->check = RP_NET_CHECK_PASSED;
  ++np->npassed;
  ++np->counters.checks_passed;
  rp_net_log(np, RP_LOG_INFO, "ev=check_passed res=%s id=%u", up->name,
             up->resolver_id);
  rp_net_flush(np, now);
  rp_net_check_more(np, now);
}

static int net_check_verify(rp_net_pool *np, rp_net_upstream *up,
                            const uint8_t *data, size_t len, const char **why) {
  rp_dns_reply reply = rp_dns_check_reply(data, len, up->check_id);
  if (reply == RP_DNS_REPLY_OTHER) {
    *why = NULL; /* not the check's answer: ignore it */
    return 0;
  }
  if (np->opts.check_verify) {
    *why = "check_rejected";
    return np->opts.check_verify(data, len, np->opts.user_data) ? 1 : 0;
  }
  if (reply != RP_DNS_REPLY_WORKS) {
    *why = reply == RP_DNS_REPLY_REFUSED ? "refused" : "bad_rcode";
    return 0;
  }
  if (rp_dns_is_truncated(data)) {
    /* A truncated answer to a tiny query still shows the resolver
       works. */
    return 1;
  }
  return 1;
}

void rp_net_upstream_on_answer(rp_net_upstream *up, const uint8_t *data,
                               size_t len, uint32_t flags, rp_tstamp now) {
  rp_net_pool *np = up->np;
  int rv;
  if (np->stopping) {
    return;
  }
  if (up->check == RP_NET_CHECK_RUNNING) {
    const char *why = NULL;
    int ok = net_check_verify(np, up, data, len, &why);
    if (ok || why) {
      rp_net_check_done(up, ok, why, now);
    }
    return;
  }
  if (up->check != RP_NET_CHECK_PASSED) {
    return;
  }
  ++np->in_core;
  rv = rp_pool_on_answer(np->core, up->resolver_id, data, len, flags, now);
  --np->in_core;
  rp_net_core_result(np, rv, "on_answer");
  rp_net_flush(np, now);
}

void rp_net_upstream_on_error(rp_net_upstream *up, uint32_t upstream_id,
                              rp_outcome outcome, rp_tstamp now) {
  rp_net_pool *np = up->np;
  if (np->stopping) {
    return;
  }
  rp_net_log(np, RP_LOG_DEBUG, "ev=upstream_error res=%s id=%u outcome=%s",
             up->name, upstream_id, rp_outcome_str(outcome));
  if (up->check == RP_NET_CHECK_RUNNING) {
    if (upstream_id == up->check_id || upstream_id == RP_UPSTREAM_ID_ALL) {
      rp_net_check_done(up, 0, rp_outcome_str(outcome), now);
    }
    return;
  }
  if (up->check != RP_NET_CHECK_PASSED) {
    return;
  }
  if (np->in_core) {
    if (np->errq_len == RP_NET_ERRQ_LEN) {
      /* The core's own timeout will fail this try. */
      return;
    }
    np->errq[(np->errq_head + np->errq_len) % RP_NET_ERRQ_LEN] =
        (rp_net_err){.resolver_id = up->resolver_id,
                     .upstream_id = upstream_id,
                     .outcome = outcome};
    ++np->errq_len;
    return;
  }
  ++np->in_core;
  rp_net_core_result(
      np,
      rp_pool_on_error(np->core, up->resolver_id, upstream_id, outcome, now),
      "on_error");
  --np->in_core;
  rp_net_flush(np, now);
}

static int net_check_start(rp_net_pool *np, rp_net_upstream *up,
                           rp_tstamp now) {
  uint8_t buf[RP_NET_CHECK_BUF_LEN];
  rp_ssize n;
  int rv;
  if (!up->is_open) {
    rv = up->ops->open(up, now);
    if (rv != 0) {
      return rv;
    }
    up->is_open = 1;
  }
  rp_net_cb_rand((uint8_t *)&up->check_id, sizeof(up->check_id), NULL);
  if (np->opts.check_build) {
    n = np->opts.check_build(buf, sizeof(buf), up->check_id,
                             np->opts.user_data);
  } else {
    n = rp_dns_build_query(buf, sizeof(buf), up->check_id, &np->pretest_name,
                           RP_DNS_TYPE_A, RP_DNS_EDNS_UDP_SIZE);
  }
  if (n <= 0) {
    return n < 0 ? (int)n : RP_ERR_INVALID_ARGUMENT;
  }
  up->check = RP_NET_CHECK_RUNNING;
  up->check_deadline = now + np->check_timeout;
  ++np->nchecking;
  rp_net_log(np, RP_LOG_DEBUG, "ev=check_start res=%s", up->name);
  /* A send failure comes back through rp_net_upstream_on_error, which
     ends the check. */
  return up->ops->send(up, buf, (size_t)n, up->check_id, 0, now);
}

/* net_working returns how many resolvers in the core are not down. */
static size_t net_working(rp_net_pool *np) {
  rp_pool_stats st;
  rp_pool_get_stats(np->core, &st);
  /* Resolvers a reload dropped are about to go. */
  return st.nup > np->nleaving ? st.nup - np->nleaving : 0;
}

void rp_net_check_more(rp_net_pool *np, rp_tstamp now) {
  if (np->stopping || np->in_check_more) {
    return;
  }
  np->in_check_more = 1;
  /* Every listed candidate is checked at once (a dead one holds nothing
     but its socket, and a live one answers in a round trip, so ten
     thousand dead listed first keep a live one out for one round trip,
     not for thousands of check timeouts); checking pauses once |want|
     work. With the pretest off every candidate joins unchecked: the
     pool's size is the user's list. */
  while (np->check_cursor < np->nups &&
         np->nchecking < RP_NET_CHECK_MAX_RUNNING &&
         (!np->pretest_on || net_working(np) < np->want) && !np->stopping) {
    rp_net_upstream *up = np->ups[np->order[np->check_cursor++]];
    if (up->check != RP_NET_CHECK_PENDING && up->check != RP_NET_CHECK_FAILED) {
      continue;
    }
    if (!np->pretest_on) {
      ++np->nchecking;
      up->check = RP_NET_CHECK_RUNNING;
      rp_net_check_done(up, 1, NULL, now);
      continue;
    }
    if (net_check_start(np, up, now) != 0) {
      if (up->check == RP_NET_CHECK_RUNNING) {
        rp_net_check_done(up, 0, "send_failed", now);
      } else {
        up->check = RP_NET_CHECK_FAILED;
        ++np->counters.checks_failed;
      }
    }
  }
  np->in_check_more = 0;
}

void rp_net_check_timer_cb(uv_timer_t *t) {
  rp_net_pool *np = t->data;
  rp_tstamp now = rp_net_now();
  size_t i;
  if (np->stopping) {
    return;
  }
  rp_net_clients_sweep(np, now);
  for (i = 0; i < np->nups && np->nchecking > 0; ++i) {
    rp_net_upstream *up = np->ups[i];
    if (up->check == RP_NET_CHECK_RUNNING && now >= up->check_deadline) {
      rp_net_check_done(up, 0, "timeout", now);
    }
  }
  if (now >= np->next_recheck) {
    np->next_recheck = now + np->recheck_interval;
    if (net_working(np) < np->want && np->check_cursor >= np->nups) {
      np->check_cursor = 0;
    }
  }
  rp_net_check_more(np, now);
  rp_net_reload_settle(np, now);
}
