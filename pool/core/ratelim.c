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
  rl->exp_at = RP_TSTAMP_UNSET;
  rl->lifted_at = RP_TSTAMP_UNSET;
  rl->lifted_cap = 0.0;
  rl->random_until = RP_TSTAMP_UNSET;
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
    memset(rl->dbuckets, 0, sizeof(rl->dbuckets));
  } else {
    for (i = rl->bucket_no + 1; i <= no; ++i) {
      rl->buckets[i % RP_RATELIM_NBUCKETS] = 0;
      rl->dbuckets[i % RP_RATELIM_NBUCKETS] = 0;
    }
  }
  rl->bucket_no = no;
}

/* ratelim_sum_of returns the counts of |b| (buckets or dbuckets) in
   buckets [first, last]. */
static uint64_t ratelim_sum_of(const rp_ratelim *rl, const uint32_t *b,
                               uint64_t first, uint64_t last) {
  uint64_t i, sum = 0;

  for (i = first; i <= last; ++i) {
    if (i + RP_RATELIM_NBUCKETS <= rl->bucket_no || i > rl->bucket_no) {
      continue;
    }
    sum += b[i % RP_RATELIM_NBUCKETS];
  }
  return sum;
}

/* ratelim_spread returns how many buckets in [first, last] hold a drop. */
static uint32_t ratelim_spread(const rp_ratelim *rl, uint64_t first,
                               uint64_t last) {
  uint64_t i;
  uint32_t n = 0;

  for (i = first; i <= last; ++i) {
    if (i + RP_RATELIM_NBUCKETS <= rl->bucket_no || i > rl->bucket_no) {
      continue;
    }
    n += rl->dbuckets[i % RP_RATELIM_NBUCKETS] > 0;
  }
  return n;
}

/* ratelim_saturated_rate returns the answer rate of the buckets of the
   rate window that hold a drop (the resolver was sent more than it
   answered then), queries/s, or 0 when none does. */
static double ratelim_saturated_rate(const rp_ratelim *rl,
                                     const rp_settings *set) {
  uint64_t span = set->rate_window / RP_RATELIM_BUCKET, i, first, answers = 0;
  uint32_t n = 0;

  if (span >= RP_RATELIM_NBUCKETS) {
    span = RP_RATELIM_NBUCKETS - 1;
  }
  first = rl->bucket_no > span ? rl->bucket_no - span : 0;
  for (i = first; i <= rl->bucket_no; ++i) {
    if (rl->dbuckets[i % RP_RATELIM_NBUCKETS] > 0) {
      answers += rl->buckets[i % RP_RATELIM_NBUCKETS];
      ++n;
    }
  }
  return n > 0 ? (double)answers /
                     ((double)n * ratelim_seconds(RP_RATELIM_BUCKET))
               : 0.0;
}

/* ratelim_sum returns the answers in buckets [first, last]. */
static uint64_t ratelim_sum(const rp_ratelim *rl, uint64_t first,
                            uint64_t last) {
  return ratelim_sum_of(rl, rl->buckets, first, last);
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
        !ratelim_recent(rl->last_trouble, set->trouble_recent, now) &&
        rl->exp_at == RP_TSTAMP_UNSET) {
      /* Not in a drop episode: its test (do the drops stop under a
         lower cap?) needs the lower cap to stay lower. Grown back past
         a dropper's limit, the drops under it look like random loss. */
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
    rl->lifted_cap = rl->cap;
    rl->cap = 0.0;
    rl->tokens = 0.0;
    rl->lifted_at = now;
    return 1;
  }
  return 0;
}

void rp_ratelim_held_back(rp_ratelim *rl, rp_tstamp now) {
  rl->last_held_back = now;
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

/* ratelim_slot returns the send-time slot of a try sent at |sent_at|
   under |l|. */
static size_t ratelim_slot(const rp_ratelim_level *l, rp_tstamp sent_at) {
  uint64_t k = sent_at > l->at && l->slot > 0 ? (sent_at - l->at) / l->slot : 0;

  return k < RP_RATELIM_NSLOTS ? (size_t)k : RP_RATELIM_NSLOTS - 1;
}

/* ratelim_level_answer counts an answer to a try sent at |sent_at|. */
static void ratelim_level_answer(rp_ratelim_level *l, rp_tstamp sent_at) {
  ++l->answers;
  ++l->by_sent[ratelim_slot(l, sent_at)];
}

/* ratelim_level_drop counts the drop of a try sent at |sent_at|. */
static void ratelim_level_drop(rp_ratelim_level *l, rp_tstamp sent_at) {
  ++l->drops;
  if (l->front == RP_TSTAMP_UNSET || sent_at > l->front) {
    l->front = sent_at;
  }
}

int rp_ratelim_on_answer(rp_ratelim *rl, const rp_settings *set,
                         rp_tstamp sent_at, rp_tstamp now) {
  uint64_t sec = now / RP_SECONDS;
  uint64_t c1, c2, low;

  ratelim_advance(rl, now);
  ++rl->buckets[rl->bucket_no % RP_RATELIM_NBUCKETS];
  ++rl->answers;
  rl->last_answer = now;
  if (rl->exp_at != RP_TSTAMP_UNSET) {
    if (sent_at >= rl->lvl.at) {
      ratelim_level_answer(&rl->lvl, sent_at);
    } else if (sent_at >= rl->prev.at) {
      ratelim_level_answer(&rl->prev, sent_at);
    }
  }
  if (rl->last_drop != RP_TSTAMP_UNSET &&
      rp_tstamp_elapsed(rl->last_drop,
                        rp_tstamp_add(set->per_attempt, set->overflow_grace),
                        now)) {
    /* No drop for a whole try since the cap was lowered: the cap
       stopped them, they were overflow. Forgiven. */
    rl->pending = 0;
    rl->exp_at = RP_TSTAMP_UNSET;
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
  rl->capped_at = now;
  rl->last_growth = now;
  rl->overflow_until = rp_tstamp_add(now, set->overflow_grace);
}

int rp_ratelim_on_refusal(rp_ratelim *rl, const rp_settings *set,
                          rp_tstamp sent_at, rp_tstamp now) {
  int changed = 0;
  int quiet;
  double rate, cap, from;

  if (ratelim_may_lower(rl, sent_at, now)) {
    quiet = !ratelim_recent(rl->last_trouble, set->quiet_spell, now);
    if (rl->answers < set->assume_answers) {
      rate = set->assume_qps;
    } else {
      rate = rp_ratelim_rate(rl, set, now);
    }
    cap = set->cap_refusal_factor * rate;
    /* After a quiet spell the step is bounded, from the cap in force or
       from the one lifted for idleness. */
    from = rl->cap > 0.0 ? rl->cap : rl->lifted_cap;
    if (quiet && from > 0.0 && cap < from * (1.0 - set->quiet_max_step)) {
      cap = from * (1.0 - set->quiet_max_step);
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

double rp_ratelim_share(const rp_ratelim_level *l) {
  uint64_t n = 0;
  size_t k, last;

  if (l->whole) {
    n = l->answers;
  } else if (l->front != RP_TSTAMP_UNSET) {
    last = ratelim_slot(l, l->front);
    for (k = 0; k <= last; ++k) {
      n += l->by_sent[k];
    }
  }
  n += l->drops;
  return n > 0 ? (double)l->drops / (double)n : 0.0;
}

/* ratelim_episode_undo ends the drop episode at |now| as though it had
   not been: the cap goes back to what it was before it, its pending
   drops are forgotten (the caller counts them as it must). */
static void ratelim_episode_undo(rp_ratelim *rl, const rp_settings *set,
                                 rp_tstamp now) {
  rl->pending = 0;
  if (rl->exp_prev_cap > 0.0) {
    ratelim_set_cap(rl, set, rl->exp_prev_cap, now);
  } else {
    rl->cap = 0.0;
    rl->tokens = 0.0;
  }
  rl->exp_at = RP_TSTAMP_UNSET;
  rl->last_drop = RP_TSTAMP_UNSET;
}

/* ratelim_drops_reach returns 1 if |ndrops| are at least |share| of
   the tries, |ndrops| + |nanswers|. */
static int ratelim_drops_reach(uint64_t ndrops, uint64_t nanswers,
                               double share) {
  return (double)ndrops >= share * (double)(ndrops + nanswers);
}

/* ratelim_early_loss returns 1 if a drop at an uncapped resolver that
   starts no episode counts as loss at once (settings.early_drop_loss),
   with |ndrops| drops (this one included) and |nanswers| answers in the
   rate window. Rule 1: fewer than loss_verdict_drops, at least
   drop_min_share of the tries. Rule 2: any such drop, from
   random_min_share of the tries. A drop in a thousand is neither. */
static int ratelim_early_loss(const rp_settings *set, uint64_t ndrops,
                              uint64_t nanswers) {
  switch (set->early_drop_loss) {
  case 1:
    return ndrops < set->loss_verdict_drops &&
           ratelim_drops_reach(ndrops, nanswers, set->drop_min_share);
  case 2:
    return ratelim_drops_reach(ndrops, nanswers, set->random_min_share);
  default:
    return 0;
  }
}

/* ratelim_episode_drop judges a drop of a try sent at |sent_at| in an
   episode: counted to the level it was sent under, and when a lower cap
   did not lower the share of drops, the episode is undone as random
   loss (|*pnloss| the episode's drops). Returns 1 when undone. */
static int ratelim_episode_drop(rp_ratelim *rl, const rp_settings *set,
                                rp_tstamp sent_at, rp_tstamp now,
                                uint32_t *pnloss) {
  rp_duration window = set->rate_window;

  if (sent_at >= rl->lvl.at) {
    ratelim_level_drop(&rl->lvl, sent_at);
    /* The first cap is judged against the time before the episode
       only when that had twice the drops, the resolver had been in use
       verdict_min_use and no cap was lifted in the window: otherwise
       the drops that go on under a first cap above the real rate, at a
       lower share, look like random loss. Otherwise two caps are
       compared. */
    if ((rl->nlevels >= 2 ||
         (rl->prev.drops >= 2 * set->loss_verdict_drops &&
          rl->in_use_since != RP_TSTAMP_UNSET &&
          rp_tstamp_elapsed(rl->in_use_since, set->verdict_min_use,
                            rl->exp_at) &&
          (rl->lifted_at == RP_TSTAMP_UNSET ||
           rp_tstamp_elapsed(rl->lifted_at, window, rl->exp_at)))) &&
        rl->lvl.drops >= set->loss_verdict_drops &&
        rp_ratelim_share(&rl->lvl) >= set->random_min_share &&
        rp_ratelim_share(&rl->lvl) >=
            set->loss_verdict_ratio * rp_ratelim_share(&rl->prev)) {
      /* A lower cap did not lower the share of drops: random loss.
         The episode's drops count as loss, the cap goes back to what
         it was before. */
      *pnloss = rl->pending;
      ratelim_episode_undo(rl, set, now);
      rl->random_until = rp_tstamp_add(now, set->random_loss_hold);
      return 1;
    }
  } else if (sent_at >= rl->prev.at) {
    ratelim_level_drop(&rl->prev, sent_at);
  }
  return 0;
}

/* ratelim_drop_window returns the rate window a drop is judged over
   before an episode: rate_window, at most the buckets kept. */
static rp_duration ratelim_drop_window(const rp_settings *set) {
  rp_duration window = set->rate_window;

  if (window > (RP_RATELIM_NBUCKETS - 2) * RP_RATELIM_BUCKET) {
    window = (RP_RATELIM_NBUCKETS - 2) * RP_RATELIM_BUCKET;
  }
  return window;
}

/* ratelim_episode_due returns 1 if the drops of the rate window (their
   number in |*pndrops|, the answers' in |*pnanswers|) start an episode;
   0 if not, after counting a drop too many to ignore as loss now
   (|*pnloss| 1). */
static int ratelim_episode_due(rp_ratelim *rl, const rp_settings *set,
                               uint64_t *pndrops, uint64_t *pnanswers,
                               uint32_t *pnloss) {
  uint64_t span, last, first, ndrops, nanswers;
  int episode;

  /* No episode yet: it takes loss_verdict_drops drops in the rate
     window, drop_min_share of its tries, spread over drop_min_spread
     of its 100 ms buckets, to start one. A drop now and then is not
     worth a cap, the share before the cap needs that many to be
     measured, a fast resolver that loses a few datagrams to full
     socket buffers under a heavy load is not limited, and a burst of
     queries that cannot be answered (MasterDnsVPN's MTU test asks for
     answers too large for the path, 60 at once) is no rate. */
  span = ratelim_drop_window(set) / RP_RATELIM_BUCKET;
  last = rl->bucket_no;
  first = last > span ? last - span : 0;
  ndrops = ratelim_sum_of(rl, rl->dbuckets, first, last);
  nanswers = ratelim_sum(rl, first, last);
  *pndrops = ndrops;
  *pnanswers = nanswers;
  episode = ndrops >= set->loss_verdict_drops &&
            ratelim_drops_reach(ndrops, nanswers, set->drop_min_share) &&
            ratelim_spread(rl, first, last) >= set->drop_min_spread;
  if (!episode && rl->cap <= 0.0 && ratelim_early_loss(set, ndrops, nanswers)) {
    /* No episode (yet), too many drops to ignore: loss now, so that
       the band's loss bound sees it while an episode would still be
       gathering drops (a random loser kept its share meanwhile, a
       dropping rate limit its flood). An episode that starts later
       counts only its own drops. */
    --rl->pending;
    *pnloss = 1;
  }
  return episode;
}

/* ratelim_may_cap returns 1 if a drop of a try sent at |sent_at| may
   lower the cap at |now|. */
static int ratelim_may_cap(rp_ratelim *rl, const rp_settings *set,
                           rp_tstamp sent_at, rp_tstamp now) {
  if (rl->exp_at != RP_TSTAMP_UNSET) {
    /* In an episode: a cap that has had drops enough and tries enough
       under it is judged without waiting out the grace (its tries are
       counted apart from those sent before it). */
    return !(sent_at < rl->lvl.at || rl->lvl.drops < set->loss_verdict_drops ||
             (!ratelim_may_lower(rl, sent_at, now) &&
              rl->lvl.answers + rl->lvl.drops < set->level_min_tries));
  }
  /* Not in the grace. */
  return ratelim_may_lower(rl, sent_at, now);
}

/* ratelim_drop_rate returns the rate a new cap is measured from at
   |now|. */
static double ratelim_drop_rate(rp_ratelim *rl, const rp_settings *set,
                                rp_tstamp now) {
  double rate = rp_ratelim_rate(rl, set, now);
  double sat = ratelim_saturated_rate(rl, set);

  if (sat > rate) {
    /* It answered this fast while it dropped (sent more than it takes):
       its rate over the whole window counts the time it was sent less. */
    rate = sat;
  }
  if (rl->answers < set->assume_answers && rate < set->assume_qps) {
    /* As for a refusal: a few answers (one at a time in probation)
       show only how little the resolver was sent. */
    rate = set->assume_qps;
  }
  return rate;
}

/* ratelim_lower_cap sets a new, lower cap level at |now| after a drop of
   a try sent at |sent_at|, starting the episode when none is on (with
   the rate window's |ndrops| and |nanswers|). */
static void ratelim_lower_cap(rp_ratelim *rl, const rp_settings *set,
                              rp_tstamp sent_at, uint64_t ndrops,
                              uint64_t nanswers, rp_tstamp now) {
  double rate = ratelim_drop_rate(rl, set, now);
  rp_duration window = ratelim_drop_window(set), slot;

  if (rl->exp_at == RP_TSTAMP_UNSET) {
    /* The episode starts; the share before it is the rate window's (and
       that of tries sent in it whose fate comes later). */
    rl->exp_at = now;
    rl->exp_prev_cap = rl->cap;
    rl->exp_drops = (uint32_t)ndrops;
    rl->exp_late = 0;
    rl->nlevels = 0;
    rl->lvl = (rp_ratelim_level){.at = now > window ? now - window : 0,
                                 .answers = (uint32_t)nanswers,
                                 .drops = (uint32_t)ndrops,
                                 .whole = 1,
                                 .front = RP_TSTAMP_UNSET};
  }
  /* A new cap level: the tries sent under it are counted apart. */
  rl->prev = rl->lvl;
  slot = (now - sent_at) / 8;
  rl->lvl = (rp_ratelim_level){
      .at = now,
      .front = RP_TSTAMP_UNSET,
      .slot = slot > RP_RATELIM_MIN_SLOT ? slot : RP_RATELIM_MIN_SLOT};
  ++rl->nlevels;
  ratelim_set_cap(rl, set, set->cap_drop_factor * rate, now);
}

int rp_ratelim_on_drop(rp_ratelim *rl, const rp_settings *set,
                       rp_tstamp sent_at, int overtaken, rp_tstamp now,
                       uint32_t *pnloss) {
  uint64_t ndrops = 0, nanswers = 0;

  *pnloss = 1;
  if (!overtaken) {
    /* Nothing sent after it came back: a held poll that was never
       answered, or a resolver that answers nothing. No sign of a rate
       limit: the loss is counted, the cap left alone. */
    return 0;
  }
  ratelim_advance(rl, now);
  ++rl->dbuckets[rl->bucket_no % RP_RATELIM_NBUCKETS];
  if (!rp_ratelim_drop_may_be_rate(rl, now)) {
    /* It loses at random, as an episode showed: loss, no cap. */
    return 0;
  }
  *pnloss = 0;
  if (rl->exp_at != RP_TSTAMP_UNSET) {
    ++rl->exp_drops;
  }
  ++rl->pending;
  rl->last_drop = now;
  rl->last_trouble = now;
  if (rl->exp_at != RP_TSTAMP_UNSET) {
    if (ratelim_episode_drop(rl, set, sent_at, now, pnloss)) {
      return 1;
    }
  } else if (!ratelim_episode_due(rl, set, &ndrops, &nanswers, pnloss)) {
    return 0;
  }
  if (!ratelim_may_cap(rl, set, sent_at, now)) {
    return 0;
  }
  ratelim_lower_cap(rl, set, sent_at, ndrops, nanswers, now);
  return 1;
}

int rp_ratelim_on_late(rp_ratelim *rl, const rp_settings *set,
                       rp_tstamp sent_at, rp_tstamp now) {
  uint64_t i, first;

  ratelim_advance(rl, now);
  /* Its drop was counted in a bucket of the last rate window: the
     newest that holds one is as good as any for the count. */
  first = rl->bucket_no >= RP_RATELIM_NBUCKETS - 1
              ? rl->bucket_no - (RP_RATELIM_NBUCKETS - 1)
              : 0;
  for (i = rl->bucket_no + 1; i-- > first;) {
    if (rl->dbuckets[i % RP_RATELIM_NBUCKETS] > 0) {
      --rl->dbuckets[i % RP_RATELIM_NBUCKETS];
      break;
    }
  }
  if (rl->exp_at == RP_TSTAMP_UNSET || sent_at < rl->prev.at) {
    return 0;
  }
  if (sent_at >= rl->lvl.at && rl->lvl.drops > 0) {
    --rl->lvl.drops;
  } else if (sent_at < rl->lvl.at && rl->prev.drops > 0) {
    --rl->prev.drops;
  }
  if (rl->pending > 0) {
    --rl->pending;
  }
  ++rl->exp_late;
  if (2 * rl->exp_late < rl->exp_drops) {
    return 0;
  }
  /* Half its drops were answers that came late: no rate limit. */
  ratelim_episode_undo(rl, set, now);
  return 1;
}

int rp_ratelim_drop_may_be_rate(const rp_ratelim *rl, rp_tstamp now) {
  return rl->random_until == RP_TSTAMP_UNSET || now >= rl->random_until;
}

int rp_ratelim_on_stale(rp_ratelim *rl, const rp_settings *set,
                        rp_tstamp sent_at, rp_tstamp now) {
  double rate;

  if (rl->cap > 0.0 || !ratelim_recent(rl->last_answer, set->rate_window, now) ||
      !ratelim_may_lower(rl, sent_at, now)) {
    return 0;
  }
  rate = rp_ratelim_rate(rl, set, now);
  if (rl->answers < set->assume_answers && rate < set->assume_qps) {
    /* As for a refusal: a few answers (one at a time in probation) show
       only how little the resolver was sent. */
    rate = set->assume_qps;
  }
  ratelim_set_cap(rl, set, set->cap_drop_factor * rate, now);
  rl->last_trouble = now;
  return 1;
}

void rp_ratelim_revive(rp_ratelim *rl) {
  rl->cap = 0.0;
  rl->tokens = 0.0;
  rl->last_trouble = RP_TSTAMP_UNSET;
  rl->pending = 0;
  rl->exp_at = RP_TSTAMP_UNSET;
  rl->random_until = RP_TSTAMP_UNSET;
  rl->last_drop = RP_TSTAMP_UNSET;
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
  if (rl->exp_at != RP_TSTAMP_UNSET && rl->last_drop != RP_TSTAMP_UNSET) {
    /* A drop episode tests whether a lower cap stops the drops: a send
       past it would make drops of its own, and a dropper judged a
       random loser is left out. None until the episode could end. */
    t = rp_tstamp_add(rl->last_drop,
                      rp_tstamp_add(set->per_attempt, set->overflow_grace));
    if (t > at) {
      at = t;
    }
  }
  return at;
}
