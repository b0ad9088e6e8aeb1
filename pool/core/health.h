/*
 * health.h: loss with its uncertainty, failures in a row, and the score.
 *
 * IMPLEMENTATION NOTES
 * - Loss is an exponentially decayed ratio of lost tries to closed
 *   tries, decaying with time constant settings.loss_window (10 s), so
 *   that its memory is the same at any query rate. A try is
 *   lost when per_attempt passes without any reply, or on a network
 *   error. A refusal is not a loss (the resolver is reachable).
 * - The loss is compared with its uncertainty through the Wilson score
 *   interval (E. B. Wilson, 1927) at settings.loss_z, over the decayed
 *   sample count: with two samples a clean resolver's lower bound is 0
 *   (not shut out), and after about ten tries a 30 % loss has a lower
 *   bound well above 2 points (not passed as clean).
 * - fails_in_row counts timeouts and network errors with no reply in
 *   between (down_after). Any reply, refusals included, resets it.
 * - Score -10 .. 10 as hmrd_multi_resolver_dns: +1 answer, -4 refusal,
 *   -4 timeout or error (settings.score_*).
 * - Plain totals (sent, lost) are kept for least_loss, which uses
 *   MasterDnsVPN's per-mille formula.
 */
#ifndef RP_CORE_HEALTH_H
#define RP_CORE_HEALTH_H

#include "respool.h"

/* RP_HEALTH_SCORE_MIN and _MAX bound the score. */
#define RP_HEALTH_SCORE_MIN (-10)
#define RP_HEALTH_SCORE_MAX 10

typedef struct rp_health {
  /* n is the decayed number of closed tries. */
  double n;
  /* decayed_at is when |n| and |lost| were last decayed. */
  rp_tstamp decayed_at;
  /* lost is the decayed number of lost tries among them. */
  double lost;
  /* fails_in_row counts timeouts and errors since the last reply. */
  uint32_t fails_in_row;
  /* score is -10 .. 10. */
  int score;
  /* last_loss is when a try was last lost, RP_TSTAMP_UNSET if never. */
  rp_tstamp last_loss;
  /* total_closed and total_lost are plain counts (least_loss). */
  uint64_t total_closed;
  uint64_t total_lost;
} rp_health;

/* rp_health_init resets |h| with the saved |score| (clamped). */
void rp_health_init(rp_health *h, int score);

/* rp_health_reply records a reply (answer or refusal) to a try at
   |now|, and adds |score_delta| to the score. |window_s| is
   settings.loss_window, seconds. */
void rp_health_reply(rp_health *h, double window_s, int score_delta,
                     rp_tstamp now);

/* rp_health_revive forgets the loss record (a resolver back up: what it
   lost while down says nothing about it now); the score, the totals and
   the failures in a row stay. */
void rp_health_revive(rp_health *h);

/* rp_health_late takes back one loss counted by rp_health_loss: the
   try was answered after all (|window_s| as there). The score and the
   time of the last loss stay. */
void rp_health_late(rp_health *h, double window_s, rp_tstamp now);

/* rp_health_loss records a lost try at |now| (last_loss is set when
   |count_loss| > 0); |count_loss| is how many losses to count in the
   loss ratio
   (0 when the loss may be overflow, more when earlier pending drops are
   judged loss now); |count_fail| is 0 when the resolver answered
   something after the try was sent (it still answers: capped, never
   down). */
void rp_health_loss(rp_health *h, double window_s, uint32_t count_loss,
                    int count_fail, int score_delta, rp_tstamp now);

/* rp_health_loss_ratio returns the loss point estimate, 0..1. */
double rp_health_loss_ratio(const rp_health *h);

/* rp_health_loss_lower returns the lower bound of the Wilson interval of
   the loss at |z|, and rp_health_loss_upper the upper bound. */
double rp_health_loss_lower(const rp_health *h, double z);
double rp_health_loss_upper(const rp_health *h, double z);

/* rp_health_lost_lately returns 1 if a try was lost within |recent|
   before |now|. */
int rp_health_lost_lately(const rp_health *h, rp_duration recent,
                          rp_tstamp now);

#endif /* RP_CORE_HEALTH_H */
