/*
 * health.c: loss estimate, Wilson interval and score.
 */
#include "health.h"

#include <math.h>

static int health_clamp(int score) {
  if (score < RP_HEALTH_SCORE_MIN) {
    return RP_HEALTH_SCORE_MIN;
  }
  if (score > RP_HEALTH_SCORE_MAX) {
    return RP_HEALTH_SCORE_MAX;
  }
  return score;
}

void rp_health_init(rp_health *h, int score) {
  *h = (rp_health){
      .n = 0.0,
      .decayed_at = 0,
      .lost = 0.0,
      .fails_in_row = 0,
      .score = health_clamp(score),
      .last_loss = RP_TSTAMP_UNSET,
      .total_closed = 0,
      .total_lost = 0,
  };
}

/* HEALTH_NS_PER_S converts seconds to ns. */
#define HEALTH_NS_PER_S 1e9

/* health_decay decays the counts to |now| with time constant |window_s|
   seconds. */
static void health_decay(rp_health *h, double window_s, rp_tstamp now) {
  double keep;

  if (now > h->decayed_at) {
    keep = exp(-(double)(now - h->decayed_at) / (window_s * HEALTH_NS_PER_S));
    h->decayed_at = now;
    h->n *= keep;
    h->lost *= keep;
  }
}

/* health_add adds one closed try (|lost| 0 or 1) at |now|, after
   decaying the counts. */
static void health_add(rp_health *h, double window_s, double lost,
                       rp_tstamp now) {
  health_decay(h, window_s, now);
  h->n += 1.0;
  h->lost += lost;
}

void rp_health_reply(rp_health *h, double window_s, int score_delta,
                     rp_tstamp now) {
  health_add(h, window_s, 0.0, now);
  h->fails_in_row = 0;
  ++h->total_closed;
  h->score = health_clamp(h->score + score_delta);
}

void rp_health_loss(rp_health *h, double window_s, uint32_t count_loss,
                    int count_fail, int score_delta, rp_tstamp now) {
  uint32_t i;

  for (i = 0; i < count_loss; ++i) {
    health_add(h, window_s, 1.0, now);
    ++h->total_lost;
    ++h->total_closed;
  }
  /* Only a loss counted as such makes the resolver one that lost
     lately (early hedges, hedges to any resolver): a drop that may be
     overflow of its rate, or congestion on the way, does not. */
  if (count_loss > 0) {
    h->last_loss = now;
  }
  if (count_fail) {
    ++h->fails_in_row;
  }
  h->score = health_clamp(h->score + score_delta);
}

void rp_health_revive(rp_health *h) {
  h->n = 0.0;
  h->lost = 0.0;
  h->last_loss = RP_TSTAMP_UNSET;
}

void rp_health_late(rp_health *h, double window_s, rp_tstamp now) {
  /* The answer comes as a reply (rp_health_reply): the try counted lost
     leaves. */
  health_decay(h, window_s, now);
  h->n = h->n > 1.0 ? h->n - 1.0 : 0.0;
  h->lost = h->lost > 1.0 ? h->lost - 1.0 : 0.0;
  if (h->total_lost > 0) {
    --h->total_lost;
  }
  if (h->total_closed > 0) {
    --h->total_closed;
  }
}

double rp_health_loss_ratio(const rp_health *h) {
  return h->n > 0.0 ? h->lost / h->n : 0.0;
}

/* health_wilson returns the Wilson bound for |sign| -1 (lower) or +1. */
static double health_wilson(const rp_health *h, double z, double sign) {
  double n = h->n, p, z2, denom, centre, half, v;

  if (n <= 0.0) {
    return sign < 0.0 ? 0.0 : 1.0;
  }
  if (h->lost <= 0.0 && sign < 0.0) {
    return 0.0; /* exactly what the formula gives, without the sqrt */
  }
  p = h->lost / n;
  z2 = z * z;
  denom = 1.0 + z2 / n;
  centre = p + z2 / (2.0 * n);
  half = z * sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n));
  v = (centre + sign * half) / denom;
  if (v < 0.0) {
    v = 0.0;
  }
  if (v > 1.0) {
    v = 1.0;
  }
  return v;
}

double rp_health_loss_lower(const rp_health *h, double z) {
  return health_wilson(h, z, -1.0);
}

double rp_health_loss_upper(const rp_health *h, double z) {
  return health_wilson(h, z, 1.0);
}

int rp_health_lost_lately(const rp_health *h, rp_duration recent,
                          rp_tstamp now) {
  return h->last_loss != RP_TSTAMP_UNSET &&
         !rp_tstamp_elapsed(h->last_loss, recent, now);
}
