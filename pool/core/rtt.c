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
  }
  rtt->mean = RP_TSTAMP_UNSET;
  rtt->dev = 0;
  rtt->nsamples = 0;
}

/* rtt_reset_min makes (|now|, |latency|) every sample of the minimum. */
static void rtt_reset_min(rp_rtt *rtt, rp_duration latency, rp_tstamp now) {
  size_t i;

  for (i = 0; i < RP_RTT_NSAMPLES; ++i) {
    rtt->min[i] = (rp_rtt_sample){.at = now, .value = latency};
  }
}

/* rtt_update_min is the running minimum of Kathleen Nichols: min[0] is
   the best of the window, min[1] the best after it, min[2] the best
   after that; samples age out one by one. */
static void rtt_update_min(rp_rtt *rtt, rp_duration latency, rp_tstamp now,
                           rp_duration window) {
  rp_rtt_sample s = {.at = now, .value = latency};
  rp_duration dt;

  if (rtt->min[0].value == RP_TSTAMP_UNSET || latency <= rtt->min[0].value ||
      now - rtt->min[2].at > window) {
    rtt_reset_min(rtt, latency, now);
    return;
  }
  if (latency <= rtt->min[1].value) {
    rtt->min[1] = s;
    rtt->min[2] = s;
  } else if (latency <= rtt->min[2].value) {
    rtt->min[2] = s;
  }
  dt = now - rtt->min[0].at;
  if (dt > window) {
    /* The best has aged out: promote the next ones. */
    rtt->min[0] = rtt->min[1];
    rtt->min[1] = rtt->min[2];
    rtt->min[2] = s;
    if (now - rtt->min[0].at > window) {
      rtt->min[0] = rtt->min[1];
      rtt->min[1] = rtt->min[2];
    }
  } else if (rtt->min[1].at == rtt->min[0].at && dt > window / 4) {
    /* A quarter window passed without a second choice: take one. */
    rtt->min[1] = s;
    rtt->min[2] = s;
  } else if (rtt->min[2].at == rtt->min[1].at && dt > window / 2) {
    rtt->min[2] = s;
  }
}

void rp_rtt_add(rp_rtt *rtt, rp_duration latency, rp_tstamp now,
                rp_duration window) {
  rp_duration diff;

  rtt_update_min(rtt, latency, now, window);
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
