/*
 * ratelim.h: a resolver's learned rate cap, its token bucket and its
 * recent answer rate.
 *
 * IMPLEMENTATION NOTES (DESIGN.md section 5, "Rate caps, learned")
 * - The answer rate is counted in RP_RATELIM_NBUCKETS buckets of
 *   RP_RATELIM_BUCKET (100 ms), enough for settings.rate_window (3 s)
 *   plus the two whole seconds of the raise. A resolver in use for less
 *   than rate_window is measured over its time in use (never less than
 *   one bucket), so a fresh resolver is not measured over seconds in
 *   which it got nothing.
 * - Refusal: cap = cap_refusal_factor (1.2) x rate; a refused query is
 *   resent at once, so a little overshoot keeps the resolver saturated.
 *   The refusal empties the bucket. Before assume_answers (10) answers
 *   the rate is taken as assume_qps (40 q/s), for a refusal and for a
 *   drop: a resolver that refuses does at least some tens a second, and
 *   two answers over 20 ms (or one at a time in probation) say nothing. After a quiet spell (no trouble for quiet_spell) the cap
 *   drops by at most quiet_max_step (30 %): a quiet resolver's answer
 *   rate only shows how little it was sent.
 * - Drop (a try lost while a try sent after it to the same resolver
 *   got a reply: it was overtaken): cap = cap_drop_factor (0.9) x rate.
 *   A try that was not overtaken says nothing about a rate: a tunnel
 *   server holds its newest poll up to a second and answers in order, so
 *   a held poll is never overtaken. No cap is assumed or lowered without
 *   a refusal or an overtaken drop.
 * - Overflow grace: refusals and drops of tries sent before the cap was
 *   last set, or within overflow_grace (1 s) of the last cap change or of
 *   a send past the cap, do not lower the cap again: a tunnel keeps
 *   hundreds of queries in flight, and each of their refusals would
 *   otherwise lower the cap once more.
 * - Loss or overflow: a resolver that drops past its rate and one that
 *   loses at random look the same at one rate. So once the rate window
 *   holds loss_verdict_drops overtaken drops, an episode starts: the cap
 *   is set (0.9 x rate), and the replies and drops of the tries sent
 *   under each cap the episode sets are counted apart from those sent
 *   before. A dropper's share of drops falls under a lower cap (1 -
 *   limit/cap, none once the cap is under the limit); random loss keeps
 *   its share. A cap of the episode is lowered again only after
 *   loss_verdict_drops of its tries dropped. When at least that many
 *   tries sent under the episode's second (or a later) cap dropped and
 *   their share is at least drop_min_share and loss_verdict_ratio of the
 *   share under the cap before (under the first cap: before the
 *   episode, when that saw twice as many drops), it is
 *   random loss (with fewer drops before the episode, a new resolver's
 *   burst allowance and a rate measured over a short time in use make
 *   that share too low to judge by):
 *   the cap goes back to what it was before the episode, the episode's
 *   drops count as loss, and for random_loss_hold every drop is loss
 *   without a cap (a lone resolver losing a few percent must not be
 *   capped to nothing). When per_attempt + overflow_grace pass without
 *   a drop, the cap worked: overflow, forgiven. A resolver that drops
 *   past its rate keeps a clean loss record; one that loses at random
 *   shows its loss within about ten drops.
 * - Late answers (settings.late_window): a drop answered after all was
 *   reordering (Eifel's undo, RFC 3522, for a cap): it leaves the rate
 *   window's count, and an episode half of whose drops came late puts
 *   the cap back to what it was before.
 * - Growth: +cap_growth (10 %)/s while the resolver answered within the
 *   last second and had no trouble for trouble_recent. Two whole seconds
 *   of answers above the cap raise it at once to the lower of the two.
 *   A cap that held nothing back, with no trouble, for cap_lift_after is
 *   lifted (the resolver is unlimited again). The lifted cap is kept: a
 *   refusal after a quiet spell cuts at most quiet_max_step from it, as
 *   from a cap in force (an idle client's answer rate says nothing of
 *   the resolver's limit).
 * - Left out: no smoothing of refusal bursts beyond the grace; no
 *   per-resolver configured rate (the caps are learned only).
 */
#ifndef RP_CORE_RATELIM_H
#define RP_CORE_RATELIM_H

#include "respool.h"

/* RP_RATELIM_BUCKET is the width of one answer-count bucket, ns. */
#define RP_RATELIM_BUCKET (100 * RP_MILLISECONDS)
/* RP_RATELIM_NBUCKETS is how many buckets are kept (3.2 s). */
#define RP_RATELIM_NBUCKETS 32
/* RP_RATELIM_MIN_CAP is the smallest cap, queries/s: 0 means "none". */
#define RP_RATELIM_MIN_CAP 1.0

/* RP_RATELIM_NSLOTS is how many send-time slots a cap level has (the
   last takes every later send); RP_RATELIM_MIN_SLOT is the narrowest,
   ns. A slot is an eighth of the time the drop that set the cap took to
   be judged, so the slots span four such times. */
#define RP_RATELIM_NSLOTS 32
#define RP_RATELIM_MIN_SLOT (100 * RP_MICROSECONDS)

/* rp_ratelim_level counts the replies and drops of the tries sent under
   one cap of a drop episode. A reply comes after a round trip, a drop is
   judged only a retransmission timeout after its send: a cap's share of
   drops counted as they come is too low while the cap is young (a
   resolver losing 10 % showed 1 % over its first 400 tries). So the
   share counts the replies of the tries sent no later than the newest
   judged drop: tries whose fate is known. */
typedef struct rp_ratelim_level {
  /* at is when the cap was set (tries sent from then on count). */
  rp_tstamp at;
  /* answers and drops count all of them. */
  uint32_t answers;
  uint32_t drops;
  /* whole is 1 when every answer counts (the time before an episode,
     measured over the rate window). */
  int whole;
  /* front is the newest send time of a judged drop, UNSET before. */
  rp_tstamp front;
  /* slot is the width of a send-time slot, ns. */
  rp_duration slot;
  /* by_sent counts the answers by the send time of their try, in slots
     of |slot| from |at|. */
  uint32_t by_sent[RP_RATELIM_NSLOTS];
} rp_ratelim_level;

typedef struct rp_ratelim {
  /* cap is the learned cap, queries/s; 0 when uncapped. */
  double cap;
  /* tokens is the bucket's content, queries, at |tokens_at|. */
  double tokens;
  rp_tstamp tokens_at;
  /* in_use_since is the first send, RP_TSTAMP_UNSET before. */
  rp_tstamp in_use_since;
  /* last_answer is the last answer, RP_TSTAMP_UNSET if none. */
  rp_tstamp last_answer;
  /* last_trouble is the last refusal or drop, RP_TSTAMP_UNSET if none. */
  rp_tstamp last_trouble;
  /* last_held_back is when the cap last held a query back. */
  rp_tstamp last_held_back;
  /* capped_at is when the cap was last set by a refusal or drop. */
  rp_tstamp capped_at;
  /* pending counts drops of the current drop episode not counted as
     loss (yet): overflow while the cap is being found. */
  uint32_t pending;
  /* exp_at is when the current drop episode first lowered the cap (the
     experiment: do the drops stop under a lower cap?), UNSET outside
     one. */
  rp_tstamp exp_at;
  /* exp_prev_cap is the cap before the episode (0: uncapped). */
  double exp_prev_cap;
  /* exp_drops counts the drops of the episode (those of the rate window
     that started it, then its own); exp_late those of them answered
     after all (rp_ratelim_on_late). */
  uint32_t exp_drops;
  uint32_t exp_late;
  /* nlevels counts the caps the episode set; lvl counts the tries sent
     under the current one, prev those sent under the one before (at
     first: the rate window before the episode). */
  uint32_t nlevels;
  rp_ratelim_level lvl;
  rp_ratelim_level prev;
  /* random_until: drops before it are random loss (an episode showed the
     cap did not stop them): counted as loss, no cap. UNSET if none. */
  rp_tstamp random_until;
  /* last_drop is the last overtaken drop of an episode, or UNSET. */
  rp_tstamp last_drop;
  /* overflow_until: refusals and drops before it do not lower the cap. */
  rp_tstamp overflow_until;
  /* last_past_cap is the last send past the cap. */
  rp_tstamp last_past_cap;
  /* lifted_at is when the cap was last lifted (UNSET: never);
     lifted_cap is the cap it had then (0: never lifted). */
  rp_tstamp lifted_at;
  double lifted_cap;
  /* last_growth is when growth was last applied. */
  rp_tstamp last_growth;
  /* buckets counts answers per RP_RATELIM_BUCKET; the newest bucket is
     number |bucket_no| (time / RP_RATELIM_BUCKET). dbuckets counts the
     overtaken drops the same way. */
  uint32_t buckets[RP_RATELIM_NBUCKETS];
  uint32_t dbuckets[RP_RATELIM_NBUCKETS];
  uint64_t bucket_no;
  /* answers is the number of answers since the resolver was added. */
  uint64_t answers;
  /* raise_checked is the last whole second checked for the raise. */
  uint64_t raise_checked;
} rp_ratelim;

/* rp_ratelim_share returns the share of drops among |l|'s tries whose
   fate is known (sent no later than its newest judged drop), 0..1. */
double rp_ratelim_share(const rp_ratelim_level *l);

/* rp_ratelim_init resets |rl| to uncapped, no answer. */
void rp_ratelim_init(rp_ratelim *rl);

/* rp_ratelim_on_send records a send at |now|; |past_cap| is 1 for a
   send past the cap (opens the overflow grace). */
void rp_ratelim_on_send(rp_ratelim *rl, const rp_settings *set, int past_cap,
                        rp_tstamp now);

/* rp_ratelim_update refills the bucket, grows the cap and lifts it when
   due at |now|. Returns 1 if the cap was lifted. */
int rp_ratelim_update(rp_ratelim *rl, const rp_settings *set, rp_tstamp now);

/* rp_ratelim_take takes a token at |now| (after rp_ratelim_update).
   Returns 1 if the send is within the cap (always when uncapped). */
int rp_ratelim_take(rp_ratelim *rl);

/* rp_ratelim_held_back records that the cap held a query back at |now|
   (a lift waits until it has not for cap_lift_after). */
void rp_ratelim_held_back(rp_ratelim *rl, rp_tstamp now);

/* rp_ratelim_next_token returns when the bucket next holds a token. */
rp_tstamp rp_ratelim_next_token(const rp_ratelim *rl);

/* rp_ratelim_rate returns the recent answer rate at |now|, queries/s. */
double rp_ratelim_rate(rp_ratelim *rl, const rp_settings *set, rp_tstamp now);

/* rp_ratelim_on_answer counts an answer at |now| of a try sent at
   |sent_at|. Returns 1 if the two-second rule raised the cap. */
int rp_ratelim_on_answer(rp_ratelim *rl, const rp_settings *set,
                         rp_tstamp sent_at, rp_tstamp now);

/* rp_ratelim_on_refusal applies a refusal of a try sent at |sent_at|.
   Returns 1 if the cap was set or changed. */
int rp_ratelim_on_refusal(rp_ratelim *rl, const rp_settings *set,
                          rp_tstamp sent_at, rp_tstamp now);

/* rp_ratelim_on_drop applies a try sent at |sent_at| lost at |now|;
   |overtaken| is 1 if a try sent after it to the same resolver got a
   reply (the only sign that the resolver drops while it answers: a
   tunnel server answers its queries in order and holds only the newest
   poll, so a held poll is never overtaken). Sets |*pnloss| to the number
   of losses to count now: 1 when it was not overtaken or the resolver
   is known to lose at random: the cap then stays as it is; 1 too for an
   early drop (settings.early_drop_loss: uncapped, and it starts no
   episode; rule 2 from random_min_share of the rate window's tries,
   rule 1 only while fewer than loss_verdict_drops, from drop_min_share); 0
   while a drop episode finds the cap (overflow); the episode's drops
   and this one when the episode shows random loss. Returns 1 if the cap
   was set or changed. */
int rp_ratelim_on_drop(rp_ratelim *rl, const rp_settings *set,
                       rp_tstamp sent_at, int overtaken, rp_tstamp now,
                       uint32_t *pnloss);

/* rp_ratelim_on_late applies an answer at |now| to a try sent at
   |sent_at| that rp_ratelim_on_drop had taken as dropped: the resolver
   reordered. The drop leaves the rate window's count; when at least half
   the drops of the current episode turned out late, the episode was no
   rate limit: its cap goes back to what it was before (none, mostly).
   Returns 1 if the cap was put back. */
int rp_ratelim_on_late(rp_ratelim *rl, const rp_settings *set,
                       rp_tstamp sent_at, rp_tstamp now);

/* rp_ratelim_drop_may_be_rate returns 1 if an overtaken drop at |now|
   may still be overflow of a rate limit (no random-loss verdict holds),
   even when it was counted as loss (an early drop). */
int rp_ratelim_drop_may_be_rate(const rp_ratelim *rl, rp_tstamp now);

/* rp_ratelim_on_stale applies a try sent at |sent_at| that probation
   marked stale at |now| (no answer by its judge time) when
   settings.stale_caps is on: the rule respool had before it knew held
   polls. An uncapped resolver that answered within the rate window gets
   cap_drop_factor x its answer rate (assume_qps while it has fewer than
   assume_answers answers and answers slower), as for a drop. Returns 1
   if the cap was set. */
int rp_ratelim_on_stale(rp_ratelim *rl, const rp_settings *set,
                        rp_tstamp sent_at, rp_tstamp now);

/* rp_ratelim_revive forgets the cap and every trouble of a resolver that
   comes back up: what it lost while down says nothing about it now. */
void rp_ratelim_revive(rp_ratelim *rl);

/* rp_ratelim_past_cap_at returns when the resolver may next get a send
   past its cap. */
rp_tstamp rp_ratelim_past_cap_at(const rp_ratelim *rl, const rp_settings *set);

#endif /* RP_CORE_RATELIM_H */
