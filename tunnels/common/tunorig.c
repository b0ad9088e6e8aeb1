/*
 * tunorig.c: the original dnstt-client's send decisions (see tunorig.h).
 */
#include "tunorig.h"

/* Defaults of dnstt e5e873b (dnstt-client/dns.go; KCP's flush). */
#define ORIG_POLL_LIMIT 16
#define ORIG_INIT_POLL_DELAY (500 * RP_MILLISECONDS)
#define ORIG_MAX_POLL_DELAY (10 * RP_SECONDS)
#define ORIG_ACK_INTERVAL (10 * RP_MILLISECONDS)
/* ORIG_ACKS_PER_QUERY: KCP's 24-byte acks in dnstt's 134-byte MTU. */
#define ORIG_ACKS_PER_QUERY 5
/* ORIG_POLL_DELAY_MULT is pollDelayMultiplier. */
#define ORIG_POLL_DELAY_MULT 2

void tun_orig_settings_default(tun_orig_settings *s) {
  *s = (tun_orig_settings){.poll_limit = ORIG_POLL_LIMIT,
                           .opening_polls = ORIG_POLL_LIMIT,
                           .init_poll_delay = ORIG_INIT_POLL_DELAY,
                           .max_poll_delay = ORIG_MAX_POLL_DELAY,
                           .ack_interval = ORIG_ACK_INTERVAL,
                           .acks_per_query = ORIG_ACKS_PER_QUERY};
}

void tun_orig_init(tun_orig *o, const tun_orig_settings *settings,
                   rp_tstamp now) {
  *o = (tun_orig){.set = *settings,
                  .credit = settings->opening_polls,
                  .delay = settings->init_poll_delay,
                  .timer_at = rp_tstamp_add(now, settings->init_poll_delay),
                  /* KCP flushes on its own clock, every ack_interval from
                     the start: acks owed wait for it (the poll an answer
                     permits goes at once, before them). */
                  .last_ack = now};
}

void tun_orig_on_answer(tun_orig *o, int npackets) {
  if (npackets > 0) {
    o->acks_owed += (uint32_t)npackets;
    if (o->credit < o->set.poll_limit) {
      ++o->credit;
    }
  }
}

/* orig_sent restarts the poll timer after a send that the timer did not
   cause. */
static void orig_sent(tun_orig *o, rp_tstamp now) {
  o->delay = o->set.init_poll_delay;
  o->timer_at = rp_tstamp_add(now, o->delay);
}

/* orig_ack_due returns 1 if an owed ack may go out at |now|. */
static int orig_ack_due(const tun_orig *o, rp_tstamp now) {
  return o->last_ack == RP_TSTAMP_UNSET ||
         rp_tstamp_elapsed(o->last_ack, o->set.ack_interval, now);
}

int tun_orig_next(tun_orig *o, uint32_t want, rp_tstamp now) {
  uint32_t per = o->set.acks_per_query > 0 ? o->set.acks_per_query : 1;

  if (want & TUN_ORIG_WANT_DATA) {
    /* A data packet goes first and takes the place of a pending poll. */
    if (o->credit > 0) {
      --o->credit;
    }
    orig_sent(o, now);
    return 1;
  }
  if (o->credit > 0) {
    /* The poll an answer permitted leaves as the answer is read, before
       KCP's next flush. */
    --o->credit;
    orig_sent(o, now);
    return 1;
  }
  if (o->ack_burst == 0 &&
      (o->acks_owed > 0 || (want & TUN_ORIG_WANT_ACK)) &&
      orig_ack_due(o, now)) {
    /* A flush: a query for each group of acks owed, at least one. KCP
       sends its acks in packets of their own, whatever polls went out
       since (a poll is an empty query), so the segments received count,
       not whether an arq frame carried their ack already. */
    o->last_ack = now;
    o->ack_burst = o->set.ack_compact ? 1 : (o->acks_owed + per - 1) / per;
    if (o->ack_burst == 0) {
      o->ack_burst = 1;
    }
    o->acks_owed = 0;
  }
  if (o->ack_burst > 0) {
    --o->ack_burst;
    orig_sent(o, now);
    return 1;
  }
  if (now >= o->timer_at) {
    o->delay *= ORIG_POLL_DELAY_MULT;
    if (o->delay > o->set.max_poll_delay) {
      o->delay = o->set.max_poll_delay;
    }
    o->timer_at = rp_tstamp_add(now, o->delay);
    return 1;
  }
  return 0;
}

rp_tstamp tun_orig_get_expiry(const tun_orig *o, uint32_t want) {
  rp_tstamp at = o->timer_at, ack;

  if ((o->acks_owed > 0 || (want & TUN_ORIG_WANT_ACK)) &&
      o->last_ack != RP_TSTAMP_UNSET) {
    ack = rp_tstamp_add(o->last_ack, o->set.ack_interval);
    if (ack < at) {
      at = ack;
    }
  }
  return at;
}
