/*
 * rtt.h: per-resolver latency: the fastest answer of a sliding window
 * and the smoothed mean and deviation (RFC 6298).
 *
 * IMPLEMENTATION NOTES
 * - Cost uses the fastest answer of the last settings.latency_window
 *   (10 s): a tunnel server holds polls up to a second, so the mean says
 *   more about the tunnel than about the resolver. The window minimum is
 *   kept with Kathleen Nichols' three-sample running minimum (the filter
 *   BBR uses): O(1) memory and time per sample. When no sample arrives
 *   for a whole window the last minimum is kept (no answer is no news).
 * - Hedging uses mean + 4 deviations (RFC 6298 / RFC 9002 constants:
 *   first sample mean = rtt, dev = rtt / 2; then dev = 3/4 dev + 1/4
 *   |mean - rtt|, mean = 7/8 mean + 1/8 rtt).
 * - Late answers: an answer to a try already judged lost (a later try
 *   to the same resolver was answered first, and mean + 4 deviations
 *   had passed) shows how late a resolver that reorders may answer.
 *   Their windowed maximum (the same filter, keeping the largest) holds
 *   later judgements back; it is 0 once none came for a window.
 * - Refusals are not samples: a refusal comes back at once and would
 *   make a refusing resolver look fastest (dnsdist's leastOutstanding
 *   trap, ANCHORS.md).
 */
#ifndef RP_CORE_RTT_H
#define RP_CORE_RTT_H

#include "respool.h"

/* RP_RTT_NSAMPLES is the number of samples of the running minimum. */
#define RP_RTT_NSAMPLES 3

typedef struct rp_rtt_sample {
  /* at is when the sample was taken, ns. */
  rp_tstamp at;
  /* value is the latency, ns. */
  rp_duration value;
} rp_rtt_sample;

typedef struct rp_rtt {
  /* min holds the best, second and third best of the window. */
  rp_rtt_sample min[RP_RTT_NSAMPLES];
  /* late holds the latest, second and third latest late answer of the
     window (rp_rtt_late_add). */
  rp_rtt_sample late[RP_RTT_NSAMPLES];
  /* mean is the smoothed latency, ns, RP_TSTAMP_UNSET before a sample. */
  rp_duration mean;
  /* dev is the smoothed mean deviation, ns. */
  rp_duration dev;
  /* nsamples counts samples since init. */
  uint64_t nsamples;
} rp_rtt;

/* rp_rtt_init resets |rtt| to "no sample". */
void rp_rtt_init(rp_rtt *rtt);

/* rp_rtt_sample adds the latency |latency| measured at |now|; |window|
   is the span of the running minimum, ns. */
void rp_rtt_add(rp_rtt *rtt, rp_duration latency, rp_tstamp now,
                rp_duration window);

/* rp_rtt_fastest returns the fastest latency of the window, ns, or
   RP_TSTAMP_UNSET when there is no sample. */
rp_duration rp_rtt_fastest(const rp_rtt *rtt);

/* rp_rtt_rto returns mean + |ndev| deviations, with the deviation term
   at least |min_dev_term|, or RP_TSTAMP_UNSET when there is no sample. */
rp_duration rp_rtt_rto(const rp_rtt *rtt, double ndev,
                       rp_duration min_dev_term);

/* rp_rtt_late_add adds the latency |latency| of a late answer (to a try
   judged lost) at |now|; |window| is the span of the maximum, ns. */
void rp_rtt_late_add(rp_rtt *rtt, rp_duration latency, rp_tstamp now,
                     rp_duration window);

/* rp_rtt_late returns the latency of the latest late answer of the last
   |window| before |now|, ns, or 0 when none came in it. */
rp_duration rp_rtt_late(const rp_rtt *rtt, rp_tstamp now, rp_duration window);

#endif /* RP_CORE_RTT_H */
