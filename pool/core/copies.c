/*
 * copies.c: copy control and the budget on extra sends (see copies.h).
 */
#include "copies.h"

/* COPIES_FNV_OFFSET and COPIES_FNV_PRIME are FNV-1a 64's constants. */
#define COPIES_FNV_OFFSET 0xcbf29ce484222325ULL
#define COPIES_FNV_PRIME 0x100000001b3ULL
/* COPIES_ID_LEN is the DNS ID, left out of the comparison. */
#define COPIES_ID_LEN 2

void rp_copies_rescale(rp_copies *c, uint32_t old_max, uint32_t new_max) {
  if (c->level >= (double)old_max || c->level > (double)new_max) {
    c->level = (double)new_max;
  }
}

void rp_copies_init(rp_copies *c, const rp_settings *set, rp_tstamp now) {
  *c = (rp_copies){.level = (double)(set->duplicate - 1),
                   .probe_at = now,
                   .epoch = now / set->extra_window};
}

uint32_t rp_copies_plan(rp_copies *c, const rp_settings *set, rp_tstamp now) {
  uint32_t max = set->duplicate - 1, n;

  if (max == 0) {
    return 0;
  }
  if (c->level > 0.0) {
    c->credit += c->level;
    n = (uint32_t)c->credit;
    c->credit -= (double)n;
    return n < max ? n : max;
  }
  if (c->probe_left == 0 &&
      rp_tstamp_elapsed(c->probe_at, set->copy_probe_interval, now)) {
    c->probe_left = set->copy_probe_queries;
    c->probe_at = now;
  }
  if (c->probe_left > 0) {
    --c->probe_left;
    return 1;
  }
  return 0;
}

void rp_copies_judge(rp_copies *c, const rp_settings *set, int carried) {
  double max = (double)(set->duplicate - 1);
  uint32_t total;

  if (carried) {
    ++c->data;
  } else {
    ++c->repeat;
  }
  total = c->data + c->repeat;
  if (total < set->copy_window) {
    return;
  }
  if ((double)c->data <= set->copy_data_share * (double)total) {
    c->level -= set->copy_step;
    if (c->level < 0.0) {
      c->level = 0.0;
    }
  } else {
    c->level += set->copy_step;
    if (c->level > max) {
      c->level = max;
    }
  }
  c->data = 0;
  c->repeat = 0;
}

/* copies_roll moves the budget's windows to |now|. */
static void copies_roll(rp_copies *c, const rp_settings *set, rp_tstamp now) {
  uint64_t epoch = now / set->extra_window;

  if (epoch == c->epoch) {
    return;
  }
  if (epoch == c->epoch + 1) {
    c->firsts_prev = c->firsts_cur;
    c->extras_prev = c->extras_cur;
  } else {
    c->firsts_prev = 0.0;
    c->extras_prev = 0.0;
  }
  c->firsts_cur = 0.0;
  c->extras_cur = 0.0;
  c->epoch = epoch;
}

void rp_copies_on_send(rp_copies *c, const rp_settings *set, int extra,
                       rp_tstamp now) {
  copies_roll(c, set, now);
  if (extra) {
    c->extras_cur += 1.0;
  } else {
    c->firsts_cur += 1.0;
  }
}

int rp_copies_may_extra(rp_copies *c, const rp_settings *set, rp_tstamp now) {
  double keep, firsts, extras;

  copies_roll(c, set, now);
  /* The older window counts for the part of it still within one window
     of |now|. */
  keep = 1.0 - (double)(now % set->extra_window) / (double)set->extra_window;
  firsts = c->firsts_cur + keep * c->firsts_prev;
  extras = c->extras_cur + keep * c->extras_prev;
  return extras + 1.0 <= set->extra_budget * firsts;
}

uint64_t rp_copies_hash(const uint8_t *answer, size_t len) {
  uint64_t h = COPIES_FNV_OFFSET;
  size_t i;

  for (i = COPIES_ID_LEN; i < len; ++i) {
    h ^= answer[i];
    h *= COPIES_FNV_PRIME;
  }
  return h;
}
