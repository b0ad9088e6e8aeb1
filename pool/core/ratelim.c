/*
 * ratelim.c: learned caps, token buckets, answer rates.
 */
#include "ratelim.h"

#include <string.h>

/* RATELIM_NS_PER_S converts ns to seconds. */
#define RATELIM_NS_PER_S 1e9
/* RATELIM_GROWTH_MAX_STEP bounds one growth step (a long pause between
   updates does not compound into a jump), ns. */
#define RATELIM_GROWTH_MAX_STEP RP_SECONDS
/* RATELIM_ANSWERING is how recent an answer keeps the cap growing. */
#define RATELIM_ANSWERING RP_SECONDS
/* RATELIM_BUCKETS_PER_S is the number of buckets in one second. */
#define RATELIM_BUCKETS_PER_S (RP_SECONDS / RP_RATELIM_BUCKET)

static double ratelim_seconds(rp_duration d) {
  return (double)d / RATELIM_NS_PER_S;
}

/* ratelim_recent returns 1 if |t| is set and within |d| before |now|. */
static int ratelim_recent(rp_tstamp t, rp_duration d, rp_tstamp now) {
  return t != RP_TSTAMP_UNSET && !rp_tstamp_elapsed(t, d, now);
}

void rp_ratelim_init(rp_ratelim *rl) {
  memset(rl, 0, sizeof(*rl));
  rl->cap = 0.0;
  rl->tokens = 0.0;
  rl->tokens_at = 0;
  rl->in_use_since = RP_TSTAMP_UNSET;
  rl->last_answer = RP_TSTAMP_UNSET;
  rl->last_trouble = RP_TSTAMP_UNSET;
  rl->last_held_back = RP_TSTAMP_UNSET;
  rl->capped_at = RP_TSTAMP_UNSET;
  rl->overflow_until = 0;
  rl->last_past_cap = RP_TSTAMP_UNSET;
  rl->last_growth = 0;
  rl->drop_capped_at = RP_TSTAMP_UNSET;
  rl->last_drop = RP_TSTAMP_UNSET;
}

/* ratelim_advance rotates the buckets so the newest one holds |now|. */
static void ratelim_advance(rp_ratelim *rl, rp_tstamp now) {
  uint64_t no = now / RP_RATELIM_BUCKET;
  uint64_t i;

  if (no <= rl->bucket_no) {
    return;
  }
  if (no - rl->bucket_no >= RP_RATELIM_NBUCKETS) {
    memset(rl->buckets, 0, sizeof(rl->buckets));
  } else {
    for (i = rl->bucket_no + 1; i <= no; ++i) {
      rl->buckets[i % RP_RATELIM_NBUCKETS] = 0;
    }
  }
  rl->bucket_no = no;
}

/* ratelim_sum returns the answers in buckets [first, last]. */
static uint64_t ratelim_sum(const rp_ratelim *rl, uint64_t first,
                            uint64_t last) {
  uint64_t i, sum = 0;

  for (i = first; i <= last; ++i) {
    if (i + RP_RATELIM_NBUCKETS <= rl->bucket_no || i > rl->bucket_no) {
      continue;
    }
    sum += rl->buckets[i % RP_RATELIM_NBUCKETS];
  }
  return sum;
}

/* ratelim_depth returns the bucket depth, tokens. */
static double ratelim_depth(const rp_ratelim *rl, const rp_settings *set) {
  double depth = rl->cap * ratelim_seconds(set->bucket_depth);

  return depth < 1.0 ? 1.0 : depth;
}

void rp_ratelim_on_send(rp_ratelim *rl, const rp_settings *set, int past_cap,
                        rp_tstamp now) {
  rp_tstamp until;

  if (rl->in_use_since == RP_TSTAMP_UNSET) {
    rl->in_use_since = now;
  }
  if (past_cap) {
    rl->last_past_cap = now;
    until = rp_tstamp_add(now, set->overflow_grace);
    if (until > rl->overflow_until) {
      rl->overflow_until = until;
    }
  }
}

int rp_ratelim_update(rp_ratelim *rl, const rp_settings *set, rp_tstamp now) {
  rp_duration dt;
  double depth;

  if (rl->cap <= 0.0) {
    return 0;
  }
  if (now > rl->tokens_at) {
    rl->tokens += rl->cap * ratelim_seconds(now - rl->tokens_at);
    rl->tokens_at = now;
  }
  if (now > rl->last_growth) {
    dt = now - rl->last_growth;
    if (dt > RATELIM_GROWTH_MAX_STEP) {
      dt = RATELIM_GROWTH_MAX_STEP;
    }
    if (ratelim_recent(rl->last_answer, RATELIM_ANSWERING, now) &&
        !ratelim_recent(rl->last_trouble, set->trouble_recent, now)) {
      rl->cap *= 1.0 + set->cap_growth * ratelim_seconds(dt);
    }
    rl->last_growth = now;
  }
  depth = ratelim_depth(rl, set);
  if (rl->tokens > depth) {
    rl->tokens = depth;
  }
  if (!ratelim_recent(rl->last_held_back, set->cap_lift_after, now) &&
      !ratelim_recent(rl->last_trouble, set->cap_lift_after, now) &&
      !ratelim_recent(rl->capped_at, set->cap_lift_after, now)) {
    rl->cap = 0.0;
    rl->tokens = 0.0;
    return 1;
  }
  return 0;
}

int rp_ratelim_take(rp_ratelim *rl) {
  if (rl->cap <= 0.0) {
    return 1;
  }
  if (rl->tokens >= 1.0) {
    rl->tokens -= 1.0;
    return 1;
  }
  return 0;
}

rp_tstamp rp_ratelim_next_token(const rp_ratelim *rl) {
  double need;

  if (rl->cap <= 0.0 || rl->tokens >= 1.0) {
    return rl->tokens_at;
  }
  need = (1.0 - rl->tokens) / rl->cap * RATELIM_NS_PER_S;
  /* Round up so that the bucket really holds a token then. */
  return rp_tstamp_add(rl->tokens_at, (rp_duration)need + 1);
}

double rp_ratelim_rate(rp_ratelim *rl, const rp_settings *set, rp_tstamp now) {
  rp_tstamp start, span_start;
  rp_duration window = set->rate_window;
  uint64_t first, sum;

  ratelim_advance(rl, now);
  if (rl->in_use_since == RP_TSTAMP_UNSET) {
    return 0.0;
  }
  if (window > (RP_RATELIM_NBUCKETS - 2) * RP_RATELIM_BUCKET) {
    window = (RP_RATELIM_NBUCKETS - 2) * RP_RATELIM_BUCKET;
  }
  start = now > window ? now - window : 0;
  if (start < rl->in_use_since) {
    start = rl->in_use_since;
  }
  first = start / RP_RATELIM_BUCKET;
  sum = ratelim_sum(rl, first, rl->bucket_no);
  span_start = first * RP_RATELIM_BUCKET;
  if (span_start < rl->in_use_since) {
    span_start = rl->in_use_since;
  }
  if (now < span_start + RP_RATELIM_BUCKET) {
    return (double)sum / ratelim_seconds(RP_RATELIM_BUCKET);
  }
  return (double)sum / ratelim_seconds(now - span_start);
}

int rp_ratelim_on_answer(rp_ratelim *rl, const rp_settings *set,
                         rp_tstamp now) {
  uint64_t sec = now / RP_SECONDS;
  uint64_t c1, c2, low;

  ratelim_advance(rl, now);
  ++rl->buckets[rl->bucket_no % RP_RATELIM_NBUCKETS];
  ++rl->answers;
  rl->last_answer = now;
  if (rl->last_drop != RP_TSTAMP_UNSET &&
      rp_tstamp_elapsed(rl->last_drop,
                        rp_tstamp_add(set->per_attempt, set->overflow_grace),
                        now)) {
    /* No drop for a whole try since the cap was lowered: forgiven. */
    rl->pending = 0;
    rl->drop_capped_at = RP_TSTAMP_UNSET;
    rl->last_drop = RP_TSTAMP_UNSET;
  }
  if (rl->cap <= 0.0 || sec < 2 || rl->raise_checked == sec) {
    return 0;
  }
  rl->raise_checked = sec;
  if (rl->in_use_since == RP_TSTAMP_UNSET ||
      rl->in_use_since > (sec - 2) * RP_SECONDS) {
    return 0;
  }
  c1 = ratelim_sum(rl, (sec - 2) * RATELIM_BUCKETS_PER_S,
                   (sec - 1) * RATELIM_BUCKETS_PER_S - 1);
  c2 = ratelim_sum(rl, (sec - 1) * RATELIM_BUCKETS_PER_S,
                   sec * RATELIM_BUCKETS_PER_S - 1);
  if ((double)c1 <= rl->cap || (double)c2 <= rl->cap) {
    return 0;
  }
  low = c1 < c2 ? c1 : c2;
  rl->cap = (double)low;
  return 1;
}

/* ratelim_may_lower returns 1 if trouble with a try sent at |sent_at| may
   lower the cap at |now| (outside the overflow grace). */
static int ratelim_may_lower(const rp_ratelim *rl, rp_tstamp sent_at,
                             rp_tstamp now) {
  if (now < rl->overflow_until) {
    return 0;
  }
  if (rl->capped_at != RP_TSTAMP_UNSET && sent_at < rl->capped_at) {
    return 0;
  }
  return 1;
}

/* ratelim_set_cap sets the cap to |cap| at |now| and opens the grace. */
static void ratelim_set_cap(rp_ratelim *rl, const rp_settings *set, double cap,
                            rp_tstamp now) {
  if (cap < RP_RATELIM_MIN_CAP) {
    cap = RP_RATELIM_MIN_CAP;
  }
  if (rl->cap <= 0.0) {
    rl->tokens = 0.0;
    rl->tokens_at = now;
  }
  rl->cap = cap;
  rl->safe_cap = cap;
  rl->capped_at = now;
  rl->last_growth = now;
  rl->overflow_until = rp_tstamp_add(now, set->overflow_grace);
}

int rp_ratelim_on_refusal(rp_ratelim *rl, const rp_settings *set,
                          rp_tstamp sent_at, rp_tstamp now) {
  int changed = 0;
  int quiet;
  double rate, cap;

  if (ratelim_may_lower(rl, sent_at, now)) {
    quiet = !ratelim_recent(rl->last_trouble, set->quiet_spell, now);
    if (rl->answers < set->assume_answers) {
      rate = set->assume_qps;
    } else {
      rate = rp_ratelim_rate(rl, set, now);
    }
    cap = set->cap_refusal_factor * rate;
    if (quiet && rl->cap > 0.0 && cap < rl->cap * (1.0 - set->quiet_max_step)) {
      cap = rl->cap * (1.0 - set->quiet_max_step);
    }
    ratelim_set_cap(rl, set, cap, now);
    changed = 1;
  }
  /* The refuser has no capacity right now, whatever its cap. */
  rl->tokens = 0.0;
  rl->tokens_at = now;
  rl->last_trouble = now;
  return changed;
}

int rp_ratelim_on_drop(rp_ratelim *rl, const rp_settings *set,
                       rp_tstamp sent_at, int under_cap, rp_tstamp now,
                       uint32_t *pnloss) {
  int changed = 0;
  double rate;

  *pnloss = 1;
  if (ratelim_recent(rl->last_answer, set->rate_window, now)) {
    *pnloss = 0;
    if (under_cap) {
      if (rl->drop_capped_at != RP_TSTAMP_UNSET &&
          sent_at >= rl->drop_capped_at) {
        /* Lowering the cap did not stop the drops: loss. */
        *pnloss = 1 + rl->pending;
        rl->pending = 0;
      } else {
        ++rl->pending;
      }
    }
    if (ratelim_may_lower(rl, sent_at, now)) {
      rate = rp_ratelim_rate(rl, set, now);
      if (rl->answers < set->assume_answers && rate < set->assume_qps) {
        /* As for a refusal: a few answers (one at a time in probation)
           show only how little the resolver was sent. */
        rate = set->assume_qps;
      }
      ratelim_set_cap(rl, set, set->cap_drop_factor * rate, now);
      if (under_cap) {
        rl->drop_capped_at = now;
      }
      changed = 1;
    }
    rl->last_drop = now;
  }
  rl->last_trouble = now;
  return changed;
}

/* RATELIM_SAFE_SLACK lets rounding of the cap pass as "within". */
#define RATELIM_SAFE_SLACK 1.0001

int rp_ratelim_within_safe(const rp_ratelim *rl) {
  return rl->cap > 0.0 && rl->cap <= rl->safe_cap * RATELIM_SAFE_SLACK;
}

rp_tstamp rp_ratelim_past_cap_at(const rp_ratelim *rl, const rp_settings *set) {
  rp_tstamp at = 0, t;

  if (rl->last_past_cap != RP_TSTAMP_UNSET) {
    at = rp_tstamp_add(rl->last_past_cap, set->past_cap_interval);
  }
  if (rl->last_trouble != RP_TSTAMP_UNSET) {
    t = rp_tstamp_add(rl->last_trouble, set->trouble_recent);
    if (t > at) {
      at = t;
    }
  }
  return at;
}
