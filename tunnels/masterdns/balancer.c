/*
 * balancer.c: MasterDnsVPN-style resolver balancing.
 *
 * IMPLEMENTATION NOTES
 *
 * The scores and their constants are MasterDnsVPN's (see balancer.h). The
 * scan starts at the rotation counter and keeps the first minimum, which
 * is how equal scores share the load; MasterDnsVPN's scorer loop over
 * activeIDs does the same in effect. Error answers (REFUSED, SERVFAIL)
 * count as lost for the loss score, since they carried no packet, but not
 * as silence for the disable rule. Left out: MasterDnsVPN merges
 * resolvers that share an IP address; here every address is its own.
 */
#include "balancer.h"

#include <string.h>

/* BAL_LOSS_SCALE turns a loss ratio into the score's per-mille. */
#define BAL_LOSS_SCALE 1000
/* BAL_NS_PER_US converts ns to microseconds. */
#define BAL_NS_PER_US 1000

int tun_bal_init(tun_bal *bal, size_t n, tun_bal_strategy strategy) {
  size_t i;

  if (n == 0 || n > TUN_BAL_MAX) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  memset(bal, 0, sizeof(*bal));
  bal->strategy = strategy;
  bal->n = n;
  for (i = 0; i < n; ++i) {
    bal->res[i].active = 1;
    bal->res[i].last_answer = RP_TSTAMP_UNSET;
    bal->res[i].first_silent_timeout = RP_TSTAMP_UNSET;
  }
  return 0;
}

void tun_bal_set_active(tun_bal *bal, size_t i, int active, rp_tstamp now) {
  tun_bal_res *r = &bal->res[i];

  if (r->active && !active) {
    ++bal->disabled_events;
    r->next_recheck = now + TUN_BAL_RECHECK_EVERY;
  }
  r->active = active;
  r->first_silent_timeout = RP_TSTAMP_UNSET;
}

size_t tun_bal_nactive(const tun_bal *bal) {
  size_t i, k = 0;

  for (i = 0; i < bal->n; ++i) {
    k += bal->res[i].active ? 1 : 0;
  }
  return k;
}

uint64_t tun_bal_loss_score(const tun_bal *bal, size_t i) {
  const tun_bal_res *r = &bal->res[i];

  if (r->sent < TUN_BAL_MIN_SAMPLES) {
    return TUN_BAL_NEUTRAL_LOSS;
  }
  if (r->lost == 0) {
    return 0;
  }
  return r->lost * BAL_LOSS_SCALE / r->sent;
}

uint64_t tun_bal_latency_score_us(const tun_bal *bal, size_t i) {
  const tun_bal_res *r = &bal->res[i];
  uint64_t sum = 0;
  size_t k;

  if (r->nrtt < TUN_BAL_MIN_SAMPLES) {
    return TUN_BAL_LATENCY_PENALTY_US;
  }
  for (k = 0; k < r->nrtt; ++k) {
    sum += r->rtt_us[k];
  }
  return sum / r->nrtt;
}

static uint64_t bal_score(const tun_bal *bal, size_t i) {
  switch (bal->strategy) {
  case TUN_BAL_ROUNDROBIN:
    return 0;
  case TUN_BAL_LEAST_LOSS:
    return tun_bal_loss_score(bal, i);
  case TUN_BAL_LOWEST_LATENCY:
    return tun_bal_latency_score_us(bal, i);
  }
  return 0;
}

/* bal_usable returns 1 if |i| may be picked: active, or every resolver
   is disabled. */
static int bal_usable(const tun_bal *bal, size_t i, int any_active) {
  return bal->res[i].active || !any_active;
}

/* bal_best returns the usable resolver with the lowest score, scanning
   from the rotation and skipping the |nskip| resolvers in |skip|, or
   SIZE_MAX when none is left. */
static size_t bal_best(tun_bal *bal, const size_t *skip, size_t nskip) {
  int any_active = tun_bal_nactive(bal) > 0;
  size_t best = SIZE_MAX, k, j, start = (size_t)(bal->rr++ % bal->n);
  uint64_t best_score = UINT64_MAX;

  for (k = 0; k < bal->n; ++k) {
    size_t i = (start + k) % bal->n;
    int skipped = 0;
    uint64_t sc;

    for (j = 0; j < nskip; ++j) {
      skipped |= skip[j] == i;
    }
    if (skipped || !bal_usable(bal, i, any_active)) {
      continue;
    }
    sc = bal_score(bal, i);
    if (best == SIZE_MAX || sc < best_score) {
      best = i;
      best_score = sc;
    }
  }
  return best;
}

size_t tun_bal_pick(tun_bal *bal) {
  size_t i = bal_best(bal, NULL, 0);

  return i == SIZE_MAX ? 0 : i;
}

size_t tun_bal_pick_copies(tun_bal *bal, size_t first, size_t ncopies,
                           size_t *out) {
  size_t skip[TUN_BAL_MAX];
  size_t nskip = 1, k = 0;

  skip[0] = first;
  while (k < ncopies && nskip < TUN_BAL_MAX) {
    size_t i = bal_best(bal, skip, nskip);

    if (i == SIZE_MAX) {
      break;
    }
    out[k++] = i;
    skip[nskip++] = i;
  }
  return k;
}

void tun_bal_on_sent(tun_bal *bal, size_t i) { ++bal->res[i].sent; }

void tun_bal_on_answer(tun_bal *bal, size_t i, rp_duration rtt, int ok,
                       rp_tstamp now) {
  tun_bal_res *r = &bal->res[i];

  ++r->answered;
  r->last_answer = now;
  r->first_silent_timeout = RP_TSTAMP_UNSET;
  if (!ok) {
    ++r->lost;
    return;
  }
  r->rtt_us[r->rtt_pos] = rtt / BAL_NS_PER_US;
  r->rtt_pos = (r->rtt_pos + 1) % TUN_BAL_RTT_WINDOW;
  if (r->nrtt < TUN_BAL_RTT_WINDOW) {
    ++r->nrtt;
  }
}

void tun_bal_on_timeout(tun_bal *bal, size_t i, rp_tstamp now) {
  tun_bal_res *r = &bal->res[i];

  ++r->lost;
  ++r->timeouts;
  if (r->first_silent_timeout == RP_TSTAMP_UNSET) {
    r->first_silent_timeout = now;
  }
  if (r->active &&
      rp_tstamp_elapsed(r->first_silent_timeout, TUN_BAL_DISABLE_AFTER, now)) {
    tun_bal_set_active(bal, i, 0, now);
  }
}

int tun_bal_recheck_due(tun_bal *bal, size_t i, rp_tstamp now) {
  tun_bal_res *r = &bal->res[i];

  if (r->active || now < r->next_recheck) {
    return 0;
  }
  r->next_recheck = now + TUN_BAL_RECHECK_EVERY;
  return 1;
}
