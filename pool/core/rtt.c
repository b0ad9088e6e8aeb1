/*
 * rtt.c: windowed fastest latency and RFC 6298 smoothing.
 */
#include "rtt.h"

/* RTT_MEAN_SHIFT is log2 of 1/alpha (RFC 6298: alpha = 1/8). */
#define RTT_MEAN_SHIFT 3
/* RTT_DEV_SHIFT is log2 of 1/beta (RFC 6298: beta = 1/4). */
#define RTT_DEV_SHIFT 2

void rp_rtt_init(rp_rtt *rtt) {
  size_t i;

  for (i = 0; i < RP_RTT_NSAMPLES; ++i) {
    rtt->min[i] = (rp_rtt_sample){.at = 0, .value = RP_TSTAMP_UNSET};
    rtt->late[i] = (rp_rtt_sample){.at = 0, .value = RP_TSTAMP_UNSET};
  }
  rtt->mean = RP_TSTAMP_UNSET;
  rtt->dev = 0;
  rtt->nsamples = 0;
}

/* rtt_filter_reset makes (|now|, |latency|) every sample of |f|. */
static void rtt_filter_reset(rp_rtt_sample *f, rp_duration latency,
                             rp_tstamp now) {
  size_t i;

  for (i = 0; i < RP_RTT_NSAMPLES; ++i) {
    f[i] = (rp_rtt_sample){.at = now, .value = latency};
  }
}

/* rtt_better returns 1 if |a| is at least as good as |b|: no later for a
   running maximum (|max| 1), no sooner for a minimum. */
static int rtt_better(rp_duration a, rp_duration b, int max) {
  return max ? a >= b : a <= b;
}

/* rtt_filter_update is the running minimum (|max| 0) or maximum (|max|
   1) of Kathleen Nichols: f[0] is the best of the window, f[1] the best
   after it, f[2] the best after that; samples age out one by one. */
static void rtt_filter_update(rp_rtt_sample *f, rp_duration latency,
                              rp_tstamp now, rp_duration window, int max) {
  rp_rtt_sample s = {.at = now, .value = latency};
  rp_duration dt;

  if (f[0].value == RP_TSTAMP_UNSET || rtt_better(latency, f[0].value, max) ||
      now - f[2].at > window) {
    rtt_filter_reset(f, latency, now);
    return;
  }
  if (rtt_better(latency, f[1].value, max)) {
    f[1] = s;
    f[2] = s;
  } else if (rtt_better(latency, f[2].value, max)) {
    f[2] = s;
  }
  dt = now - f[0].at;
  if (dt > window) {
    /* The best has aged out: promote the next ones. */
    f[0] = f[1];
    f[1] = f[2];
    f[2] = s;
    if (now - f[0].at > window) {
      f[0] = f[1];
      f[1] = f[2];
    }
  } else if (f[1].at == f[0].at && dt > window / 4) {
    /* A quarter window passed without a second choice: take one. */
    f[1] = s;
    f[2] = s;
  } else if (f[2].at == f[1].at && dt > window / 2) {
    f[2] = s;
  }
}

void rp_rtt_add(rp_rtt *rtt, rp_duration latency, rp_tstamp now,
                rp_duration window) {
  rp_duration diff;

  rtt_filter_update(rtt->min, latency, now, window, 0);
  if (rtt->mean == RP_TSTAMP_UNSET) {
    rtt->mean = latency;
    rtt->dev = latency / 2;
  } else {
    diff = rtt->mean > latency ? rtt->mean - latency : latency - rtt->mean;
    rtt->dev = rtt->dev - (rtt->dev >> RTT_DEV_SHIFT) + (diff >> RTT_DEV_SHIFT);
    rtt->mean =
        rtt->mean - (rtt->mean >> RTT_MEAN_SHIFT) + (latency >> RTT_MEAN_SHIFT);
  }
  ++rtt->nsamples;
}

rp_duration rp_rtt_fastest(const rp_rtt *rtt) { return rtt->min[0].value; }

rp_duration rp_rtt_rto(const rp_rtt *rtt, double ndev,
                       rp_duration min_dev_term) {
  rp_duration term;

  if (rtt->mean == RP_TSTAMP_UNSET) {
    return RP_TSTAMP_UNSET;
  }
  term = (rp_duration)(ndev * (double)rtt->dev);
  if (term < min_dev_term) {
    term = min_dev_term;
  }
  return rp_tstamp_add(rtt->mean, term);
}

void rp_rtt_late_add(rp_rtt *rtt, rp_duration latency, rp_tstamp now,
                     rp_duration window) {
  rtt_filter_update(rtt->late, latency, now, window, 1);
}

rp_duration rp_rtt_late(const rp_rtt *rtt, rp_tstamp now,
                        rp_duration window) {
  size_t i;

  /* Unlike the minimum, no news is news here: once every sample is older
     than the window, the resolver has not answered late for a window. */
  for (i = 0; i < RP_RTT_NSAMPLES; ++i) {
    if (rtt->late[i].value != RP_TSTAMP_UNSET && now - rtt->late[i].at <= window) {
      return rtt->late[i].value;
    }
  }
  return 0;
}
