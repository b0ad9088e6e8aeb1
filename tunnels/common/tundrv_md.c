/*
 * tundrv_md.c: the MasterDNS model of the tunnel clients' driver
 * (tundrv.h) once its MTU test passed (tundrv_probe.c): the slots, each
 * keeping one query out through the balancer with its copies, and the
 * chain model of MasterDnsVPN's send loop. The state is
 * tundrv_internal.h's.
 */
#include "tundrv_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* MD: queries                                                        */
/* ---------------------------------------------------------------- */

/* drv_send_alloc takes the lowest free send, or NULL when all are out. */
static drv_md_send *drv_send_alloc(tun_drv *d) {
  size_t i;

  for (i = d->sends_free; i < TUN_DRV_MD_MAX_SENDS; ++i) {
    if (!d->sends[i].used) {
      if (i + 1 > d->sends_hi) {
        d->sends_hi = i + 1;
      }
      d->sends_free = i + 1;
      return &d->sends[i];
    }
  }
  d->sends_free = TUN_DRV_MD_MAX_SENDS;
  return NULL;
}

/* drv_send_link puts send |s| (its id set) into its ID's list, which
   stays in index order. */
static void drv_send_link(tun_drv *d, drv_md_send *s) {
  uint16_t idx = (uint16_t)(s - d->sends + 1), *at = &d->id_head[s->id];

  while (*at != 0 && *at < idx) {
    at = &d->sends[*at - 1].next;
  }
  s->next = *at;
  *at = idx;
}

/* drv_send_free releases |s|, unlinks it from its ID's list and shrinks
   sends_hi. */
static void drv_send_free(tun_drv *d, drv_md_send *s) {
  uint16_t idx = (uint16_t)(s - d->sends + 1), *at = &d->id_head[s->id];

  while (*at != 0 && *at != idx) {
    at = &d->sends[*at - 1].next;
  }
  if (*at == idx) {
    *at = s->next;
  }
  s->next = 0;
  s->used = 0;
  if ((size_t)(idx - 1) < d->sends_free) {
    d->sends_free = (size_t)(idx - 1);
  }
  while (d->sends_hi > 0 && !d->sends[d->sends_hi - 1].used) {
    --d->sends_hi;
  }
}

/* drv_fanout sends the |len| bytes of query |id| in d->qbuf to the
   resolver the balancer picks and dup - 1 others (at most |cap| in all,
   0: no cap), tracked as sends of |slot| and |gen| carrying |acks|
   (chain) acks in |blocks| control blocks. Returns the number of sends
   made. */
static size_t drv_fanout(tun_drv *d, uint16_t id, size_t len, size_t slot,
                         uint64_t gen, size_t acks, size_t blocks, size_t cap,
                         rp_tstamp now) {
  size_t targets[TUN_DRV_MAX_DUP], nt = 1, k;
  size_t dup = d->set.dup;

  if (blocks >= 2 && d->set.dup_packed > dup) {
    /* A query packing blocks: dup_packed sends, one a resolver at most. */
    size_t nactive = tun_bal_nactive(&d->bal);

    dup = d->set.dup_packed < nactive ? d->set.dup_packed : nactive;
    if (dup < d->set.dup) {
      dup = d->set.dup;
    }
  }

  if (cap != 0 && dup > cap) {
    dup = cap;
  }
  targets[0] = tun_bal_pick(&d->bal);
  if (dup > 1) {
    nt += tun_bal_pick_copies(&d->bal, targets[0], dup - 1, targets + 1);
  }
  for (k = 0; k < nt; ++k) {
    drv_md_send *s = drv_send_alloc(d);

    if (s == NULL) {
      break;
    }
    *s = (drv_md_send){.used = 1,
                       .res = targets[k],
                       .id = id,
                       .slot = slot,
                       .gen = gen,
                       .acks = acks,
                       .sent_at = now,
                       .deadline = now + drv_md_timeout(&d->res[targets[k]])};
    drv_send_link(d, s);
    if (d->burst) {
      ++d->burst_sent[targets[k]];
    } else {
      tun_bal_on_sent(&d->bal, targets[k]);
    }
    if (k > 0) {
      ++d->st.copies;
    }
    drv_send(d, (uint32_t)targets[k], targets[k], d->qbuf, len, 0);
  }
  return k;
}

static void drv_slot_send(tun_drv *d, size_t si, rp_tstamp now) {
  drv_md_slot *slot = &d->slots[si];
  uint16_t id = drv_rand16(d);
  rp_ssize n;

  if (d->finished) {
    return;
  }
  n = tun_cli_build_query(d->cli, d->qbuf, sizeof(d->qbuf), id, drv_rand16(d),
                          now, &slot->sent);
  ++slot->gen;
  slot->waiting = 1;
  slot->resting = 0;
  slot->pending = 0;
  if (n < 0) {
    slot->waiting = 0;
    slot->resting = 1;
    slot->rest_until = now + DRV_MD_TIMEOUT_MIN;
    return;
  }
  ++d->st.queries;
  slot->pending = drv_fanout(d, id, (size_t)n, si, slot->gen, 0, 0, 0, now);
  if (slot->pending == 0) {
    slot->waiting = 0;
    slot->resting = 1;
    slot->rest_until = now + DRV_MD_TIMEOUT_MIN;
  }
}

/* drv_rec_put keeps the named acks (the first |acks| of ack_q, as many
   as it holds, at most TUN_ARQ_SENT_MAX) and the first |nacks| NACKs of
   nack_q of the query of key |key| for tun_drv_take_blocks: in a free
   record of its set, else in the one rec_serial picks. */
static void drv_rec_put(tun_drv *d, uint64_t key, size_t acks, size_t nacks) {
  drv_block_rec *set, *r = NULL;
  size_t i;

  acks = acks < d->ack_qn ? acks : d->ack_qn;
  acks = acks < TUN_ARQ_SENT_MAX ? acks : TUN_ARQ_SENT_MAX;
  if (acks + nacks == 0 || key == 0) {
    return;
  }
  set = &d->recs[key % (DRV_BLOCK_RECS / DRV_BLOCK_WAYS) * DRV_BLOCK_WAYS];
  for (i = 0; i < DRV_BLOCK_WAYS && r == NULL; ++i) {
    if (set[i].acks.n + set[i].nacks.n == 0) {
      r = &set[i];
    }
  }
  if (r == NULL) {
    r = &set[d->rec_serial++ % DRV_BLOCK_WAYS];
  } else {
    ++d->rec_live;
  }
  r->key = key;
  r->acks.n = acks;
  memcpy(r->acks.sn, d->ack_q, acks * sizeof(r->acks.sn[0]));
  r->nacks.n = nacks;
  memcpy(r->nacks.sn, d->nack_q, nacks * sizeof(r->nacks.sn[0]));
}

/* drv_ping_traffic tells the ping loop (ping_wake) of traffic at |now|
   (the chain runs); a ping its check finds due goes at the next tick
   (tun_drv_get_due). */
static void drv_ping_traffic(tun_drv *d, rp_tstamp now) {
  if (d->set.ping_wake && tun_ping_traffic(&d->ping, now) &&
      d->ping_owed_at == RP_TSTAMP_UNSET) {
    d->ping_owed_at = now;
  }
}

/* drv_chain_send sends one query of the chain model through the
   balancer with its copies (at most |cap|, 0: dup), carrying |acks| acks
   owed (named: the first in ack_q) and the |nacks| NACKs first in
   nack_q (at most TUN_ARQ_SENT_MAX). Returns the number of upload segments
   it carries, or -1 when nothing went. */
static long drv_chain_send(tun_drv *d, size_t acks, size_t nacks, size_t cap,
                           int ping, rp_tstamp now) {
  tun_arq_sent sent;
  uint16_t id = drv_rand16(d);
  rp_ssize n;
  long went = -1;
  size_t k;

  if (d->finished) {
    return -1;
  }
  n = tun_cli_build_query(d->cli, d->qbuf, sizeof(d->qbuf), id, drv_rand16(d),
                          now, &sent);
  if (n < 0) {
    return -1;
  }
  ++d->st.queries;
  ++d->chain_serial;
  k = drv_fanout(d, id, (size_t)n, DRV_MD_CHAIN, d->chain_serial, acks,
                 acks + nacks, cap, now);
  if (k > 0) {
    went = (long)sent.n;
    if (!ping) {
      drv_ping_traffic(d, now);
    }
  }
  if (k > 0 && (nacks > 0 || (acks > 0 && d->ack_qn > 0))) {
    drv_rec_put(d, drv_query_key(d->qbuf, (size_t)n), acks, nacks);
  }
  return went;
}

/* drv_chain_dispatch sends the queries that carry the acks and NACKs
   owed, chain_pack blocks a query. */
static void drv_chain_dispatch(tun_drv *d, rp_tstamp now) {
  d->dispatch_at = RP_TSTAMP_UNSET;
  d->disp_free = now + d->set.chain_busy;
  while (d->owed + d->nack_owed > 0) {
    size_t acks = d->owed > d->set.chain_pack ? d->set.chain_pack : d->owed;
    size_t nacks = d->set.chain_pack - acks;

    if (nacks > d->nack_owed) {
      nacks = d->nack_owed;
    }
    if (nacks > TUN_ARQ_SENT_MAX) {
      nacks = TUN_ARQ_SENT_MAX;
    }
    if (drv_chain_send(d, acks, nacks, 0, 0, now) < 0) {
      break;
    }
    d->owed -= acks;
    d->nack_owed -= nacks;
    memmove(d->nack_q, d->nack_q + nacks, d->nack_owed * sizeof(d->nack_q[0]));
    d->st.nacks += nacks;
    acks = acks < d->ack_qn ? acks : d->ack_qn;
    d->ack_qn -= acks;
    memmove(d->ack_q, d->ack_q + acks, d->ack_qn * sizeof(d->ack_q[0]));
  }
  d->owed = 0;
  d->nack_owed = 0;
  d->ack_qn = 0;
}

/* drv_owe owes one block more in |*owed| (acks or NACKs), dispatched
   chain_delay after the first owed, or once the dispatcher is free
   (chain_busy); at once when the client is busy and the dispatcher
   free (disp_now: the caller dispatches). */
static void drv_owe(tun_drv *d, size_t *owed, rp_tstamp now) {
  if (d->owed + d->nack_owed == 0) {
    d->dispatch_at = now + d->set.chain_delay;
    if (d->set.chain_busy > 0) {
      if (d->busy && now - d->busy_t0 < DRV_MD_BUSY_WINDOW &&
          now >= d->disp_free) {
        d->disp_now = 1;
      } else if (d->disp_free > d->dispatch_at) {
        d->dispatch_at = d->disp_free;
      }
    }
  }
  ++*owed;
}

/* drv_busy_count counts a data answer at |now| in the windows of
   DRV_MD_BUSY_WINDOW that say whether the client is busy: it is while
   the last whole window, ended within one window, had chain_busy_rate
   (busy, valid until a window after busy_t0: a NACK the tick owes after
   a quiet spell finds the client quiet). */
static void drv_busy_count(tun_drv *d, rp_tstamp now) {
  if (now - d->busy_t0 >= DRV_MD_BUSY_WINDOW) {
    d->busy = now - d->busy_t0 < 2 * DRV_MD_BUSY_WINDOW &&
              (uint64_t)d->busy_n * RP_SECONDS >=
                  (uint64_t)d->set.chain_busy_rate * DRV_MD_BUSY_WINDOW;
    d->busy_n = 0;
    d->busy_t0 = now;
  }
  ++d->busy_n;
}

/* drv_nack_owe queues the |n| NACKs tun_nack wrote at the end of nack_q
   for the dispatch. */
static void drv_nack_owe(tun_drv *d, size_t n, rp_tstamp now) {
  for (; n > 0; --n) {
    drv_owe(d, &d->nack_owed, now);
  }
}

/* drv_nack_arrival NACKs the gaps below the data segment that just came
   (tunnack.h); drv_nack_idle the gaps of a download quiet for
   nack.repeat. */
static void drv_nack_arrival(tun_drv *d, rp_tstamp now) {
  drv_nack_owe(d,
               tun_nack_arrival(&d->nack, tun_cli_arq(d->cli), now,
                                d->nack_q + d->nack_owed,
                                TUN_DRV_NACK_MAX - d->nack_owed),
               now);
}

static void drv_nack_idle(tun_drv *d, rp_tstamp now) {
  drv_nack_owe(d,
               tun_nack_idle(&d->nack, tun_cli_arq(d->cli), now,
                             d->nack_q + d->nack_owed,
                             TUN_DRV_NACK_MAX - d->nack_owed),
               now);
}

/* drv_burst_begin starts a burst of sends whose counts reach the
   balancer at drv_burst_end (chain_up only: tundrv_internal.h). */
static void drv_burst_begin(tun_drv *d) {
  d->burst = d->set.chain_up;
}

static void drv_burst_end(tun_drv *d) {
  size_t i;

  d->burst = 0;
  for (i = 0; i < d->set.nres; ++i) {
    for (; d->burst_sent[i] > 0; --d->burst_sent[i]) {
      tun_bal_on_sent(&d->bal, i);
    }
  }
}

/* drv_chain_upload sends, with chain_up, a query for each upload packet
   due (new or past its timeout), as MasterDnsVPN does. */
static void drv_chain_upload(tun_drv *d, rp_tstamp now) {
  size_t i;

  drv_burst_begin(d);
  for (i = 0; d->set.chain_up && i < TUN_ARQ_MD_WND &&
              (tun_arq_want_output(tun_cli_arq(d->cli), now) &
               TUN_ARQ_WANT_DATA) != 0;
       ++i) {
    if (drv_chain_send(d, 0, 0, 0, 0, now) <= 0) {
      break;
    }
  }
  drv_burst_end(d);
}

/* drv_chain_start opens the chain model's run with chain_open queries
   (MasterDnsVPN sends its stream's opening packets
   SETUP_PACKET_DUPLICATION_COUNT times; each answer brings data). */
static void drv_chain_start(tun_drv *d, rp_tstamp now) {
  size_t i;

  d->next_ping = now + d->set.ping_interval;
  d->ping_owed_at = RP_TSTAMP_UNSET;
  tun_ping_start(&d->ping, d->set.ping_interval, d->set.ping_late, now);
  drv_chain_upload(d, now);
  drv_burst_begin(d);
  for (i = 0; i < d->set.chain_open; ++i) {
    drv_chain_send(d, 0, 0, 0, 0, now);
  }
  drv_burst_end(d);
}

/* drv_chain_done ends chain send |s| (already freed). The chain's next
   query, if any, comes from the data it got. The acks of a query none of
   whose copies was answered never reached the server. */
static void drv_chain_done(tun_drv *d, const drv_md_send *s, int ok) {
  size_t i;
  int out = 0;

  /* Its copies share its ID (drv_fanout). */
  for (i = d->id_head[s->id]; i != 0; i = d->sends[i - 1].next) {
    drv_md_send *o = &d->sends[i - 1];

    if (o->used && o->slot == DRV_MD_CHAIN && o->gen == s->gen) {
      o->copy_ok |= ok > 0;
      out = 1;
    }
  }
  if (ok <= 0 && !s->copy_ok && !out) {
    d->lost_acks += s->acks;
    if (d->lost_acks > DRV_MD_CHAIN_LOST_MAX) {
      d->lost_acks = DRV_MD_CHAIN_LOST_MAX;
    }
  }
}

void drv_md_start_run(tun_drv *d, rp_tstamp now) {
  size_t i;

  if (drv_cli_new(d, TUN_MODE_MD, d->mtu) != 0) {
    d->failed = 1;
    d->finished = 1;
    return;
  }
  d->running = 1;
  drv_progress(d, now);
  if (d->set.chain) {
    drv_chain_start(d, now);
    return;
  }
  for (i = 0; i < d->set.nslots; ++i) {
    drv_slot_send(d, i, now);
  }
}

/* drv_md_send_done ends send |s|; |ok| is 1 for a NOERROR answer, 0 for
   an error answer, -1 for a timeout. */
static void drv_md_send_done(tun_drv *d, drv_md_send *s, int ok,
                             rp_tstamp now) {
  drv_md_slot *slot;
  drv_md_res *r = &d->res[s->res];

  drv_send_free(d, s);
  if (s->slot == DRV_MD_CHAIN) {
    drv_chain_done(d, s, ok);
    return;
  }
  slot = &d->slots[s->slot];
  if (s->gen != slot->gen || !slot->waiting) {
    return;
  }
  if (ok > 0) {
    slot->waiting = 0;
    drv_slot_send(d, s->slot, now);
    return;
  }
  if (--slot->pending == 0) {
    if (ok == 0) {
      /* Refused: its upload packet is lost for sure. */
      tun_cli_nack(d->cli, &slot->sent);
    }
    slot->waiting = 0;
    slot->resting = 1;
    slot->rest_until = now + drv_md_timeout(r);
  }
}

/* drv_answer_has_data returns 1 if |len| bytes are a NOERROR answer
   whose frame carries a data segment. */
static int drv_answer_has_data(const uint8_t *data, size_t len) {
  uint8_t buf[TUN_WIRE_MAX_MSG];
  rp_dns_msg a;
  rp_ssize n;

  if (rp_dns_parse(&a, data, len) != 0 ||
      (a.hdr.flags & RP_DNS_RCODE_MASK) != RP_DNS_RCODE_NOERROR) {
    return 0;
  }
  n = tun_wire_answer_payload(&a, buf, sizeof(buf));
  return n > (rp_ssize)TUN_ARQ_HDR_FIXED;
}

/* drv_srv_nacks_take finds the server's NACKs the answer of |len| bytes
   at |data| carries (tun_drv_srv_nacks): the upload's segments they name
   that are still unacked go again at once. */
static void drv_srv_nacks_take(tun_drv *d, const uint8_t *data, size_t len,
                               rp_tstamp now) {
  uint64_t key = drv_query_key(data, len);
  drv_srv_nack_rec *r = &d->srv_nacks[key % DRV_SRV_NACK_RECS];

  if (key == 0 || r->n == 0 || r->key != key) {
    return;
  }
  tun_arq_nack_list(tun_cli_arq(d->cli), r->sn, r->n);
  d->st.srv_nacks += r->n;
  r->n = 0;
  drv_chain_upload(d, now);
}

void tun_drv_md_answer(tun_drv *d, size_t ri, const uint8_t *data, size_t len,
                       rp_tstamp now) {
  drv_md_res *r;
  uint16_t id;
  size_t i;
  int rv, ok;

  if (ri >= d->set.nres) {
    return;
  }
  r = &d->res[ri];
  id = rp_dns_get_id(data);
  if (r->probing && id == r->probe_id) {
    drv_probe_answer(d, ri, data, len, now);
    return;
  }
  if (!d->running) {
    return;
  }
  if (d->set.chain && !d->set.lost_to_srv && d->lost_acks > 0 &&
      drv_answer_has_data(data, len)) {
    /* The resend of a packet whose ack was lost: nothing new (tundrv.h). */
    --d->lost_acks;
    ++d->st.resent;
    rv = 1;
  } else {
    rv = tun_cli_on_answer(d->cli, data, len, now);
    if (rv > 0 && d->set.acks_named &&
        tun_arq_rcv_beyond(tun_cli_arq(d->cli))) {
      /* A packet past the receive window: dropped unacked, its chain
         ends (tundrv.h). */
      rv = 0;
    }
  }
  ok = rv >= 0;
  if (d->set.chain && rv > 0) {
    /* It carried data: it wakes the ping loop, its ack is owed, and the
       gaps it shows may be NACKed. */
    drv_ping_traffic(d, now);
    if (d->set.chain_busy > 0) {
      drv_busy_count(d, now);
    }
    drv_owe(d, &d->owed, now);
    if (d->set.acks_named && d->ack_qn < DRV_ACK_Q) {
      d->ack_q[d->ack_qn++] = tun_arq_rcv_last(tun_cli_arq(d->cli));
    }
    d->last_data = now;
    if (d->set.nack.gap > 0) {
      drv_nack_arrival(d, now);
    }
    if (d->disp_now) {
      /* A busy client's dispatcher takes the first ack at once. */
      d->disp_now = 0;
      drv_chain_dispatch(d, now);
    }
  }
  if (ok && d->srv_nacks != NULL && d->cli != NULL) {
    drv_srv_nacks_take(d, data, len, now);
  }
  if (ok) {
    ++d->st.answers;
  } else {
    ++d->st.rejected;
  }
  for (i = d->id_head[id]; i != 0; i = d->sends[i - 1].next) {
    drv_md_send *s = &d->sends[i - 1];

    if (s->used && s->res == ri) {
      rp_duration rtt = now - s->sent_at;

      if (ok) {
        tun_arq_rtt_update(&r->srtt, &r->rttvar, rtt);
      }
      tun_bal_on_answer(&d->bal, ri, rtt, ok, now);
      drv_progress(d, now);
      drv_md_send_done(d, s, ok, now);
      return;
    }
  }
  ++d->st.unmatched;
  drv_progress(d, now);
}

/* drv_bal_timeout tells the balancer that send |s| timed out: now, or
   bal_loss_after after it was sent. The ring keeps them in the order
   the timeouts were seen, so one may wait behind another due a little
   later (by at most the spread of the sends' timeouts, 1 s): never
   early. */
static void drv_bal_timeout(tun_drv *d, const drv_md_send *s, rp_tstamp now) {
  rp_tstamp at = s->sent_at + d->set.bal_loss_after;
  size_t tail;

  if (d->set.bal_loss_after == 0 || at <= now ||
      d->late_n == TUN_DRV_MD_MAX_SENDS) {
    tun_bal_on_timeout(&d->bal, s->res, now);
    return;
  }
  tail = (d->late_head + d->late_n) % TUN_DRV_MD_MAX_SENDS;
  d->late_res[tail] = (uint32_t)s->res;
  d->late_at[tail] = at;
  ++d->late_n;
}

/* drv_ping_tick sends the ping the loop owes (ping_wake): one a check
   that traffic woke found due, or one the timer's check finds due. */
static void drv_ping_tick(tun_drv *d, rp_tstamp now) {
  int due = d->ping_owed_at != RP_TSTAMP_UNSET;

  if (now >= tun_ping_due(&d->ping) && tun_ping_check(&d->ping, now)) {
    due = 1;
  }
  d->ping_owed_at = RP_TSTAMP_UNSET;
  if (due && drv_chain_send(d, 0, 0, d->set.ping_dup, 1, now) >= 0) {
    tun_ping_sent(&d->ping, now);
  }
}

void tun_drv_md_tick(tun_drv *d, rp_tstamp now) {
  size_t i;

  for (i = 0; i < d->set.nres && !d->finished; ++i) {
    drv_md_res *r = &d->res[i];

    if (r->probing && now >= r->probe_deadline) {
      drv_probe_timeout(d, i, now);
    } else if (d->running && !r->probing &&
               tun_bal_recheck_due(&d->bal, i, now)) {
      r->probe_size = d->mtu;
      drv_probe_send(d, i, now);
    }
  }
  if (!d->running) {
    return;
  }
  tun_arq_handle_expiry(tun_cli_arq(d->cli), now);
  for (i = 0; i < d->sends_hi && !d->finished; ++i) {
    drv_md_send *s = &d->sends[i];

    if (s->used && now >= s->deadline) {
      ++d->st.timeouts;
      drv_bal_timeout(d, s, now);
      drv_md_send_done(d, s, -1, now);
    }
  }
  while (d->late_n > 0 && d->late_at[d->late_head] <= now) {
    tun_bal_on_timeout(&d->bal, d->late_res[d->late_head], now);
    d->late_head = (d->late_head + 1) % TUN_DRV_MD_MAX_SENDS;
    --d->late_n;
  }
  if (d->set.chain) {
    /* The upload's packets first: the acks' and pings' queries carry
       none of them (with chain_up). */
    drv_chain_upload(d, now);
    if (d->set.nack.gap > 0 && now - d->last_data >= d->set.nack.repeat) {
      drv_nack_idle(d, now);
    }
    if (d->dispatch_at != RP_TSTAMP_UNSET && now >= d->dispatch_at) {
      drv_chain_dispatch(d, now);
    }
    if (d->set.ping_wake) {
      drv_ping_tick(d, now);
    } else if (now >= d->next_ping) {
      drv_chain_send(d, 0, 0, d->set.ping_dup, 1, now);
      while (d->next_ping <= now) {
        d->next_ping += d->set.ping_interval;
      }
    }
  }
  for (i = 0; i < d->set.nslots && !d->finished && !d->set.chain; ++i) {
    drv_md_slot *slot = &d->slots[i];

    if (slot->resting && now >= slot->rest_until) {
      drv_slot_send(d, i, now);
    }
  }
  drv_progress(d, now);
}

void tun_drv_md_start(tun_drv *d, rp_tstamp now) {
  size_t k;

  d->dispatch_at = RP_TSTAMP_UNSET;
  for (k = 0; k < d->set.nres; ++k) {
    d->res[k].srtt = RP_TSTAMP_UNSET;
    d->res[k].probe_size = d->set.mtu_ceiling;
    drv_probe_send(d, k, now);
  }
}
