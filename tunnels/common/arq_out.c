/*
 * arq_out.c: the output half of the reliable byte stream (arq.h): which
 * frames are wanted, building one (the acks, the segments due and new
 * ones cut from the send queue) and taking back the segments of a frame
 * that was lost. The state is arq_internal.h's.
 */
#include "arq_internal.h"

#include <assert.h>
#include <string.h>

static void arq_put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static void arq_put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

/* arq_sndq_pop moves |n| queued bytes into |out|. */
static void arq_sndq_pop(tun_arq *arq, uint8_t *out, size_t n) {
  size_t done = 0;

  assert(n <= arq->sndq_len);
  while (done < n) {
    size_t chunk = arq->s.snd_buf - arq->sndq_head;

    if (chunk > n - done) {
      chunk = n - done;
    }
    memcpy(out + done, arq->sndq + arq->sndq_head, chunk);
    arq->sndq_head = (arq->sndq_head + chunk) % arq->s.snd_buf;
    arq->sndq_len -= chunk;
    done += chunk;
  }
}

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */

/* arq_splitmix draws from the splitmix64 stream |*state|. */
static uint64_t arq_splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* arq_walk_sn returns the |i|-th segment of a walk over the |span|
   segments in flight that starts |from| past snd_una and wraps. */
static uint32_t arq_walk_sn(const tun_arq *arq, uint32_t from, uint32_t span,
                            uint32_t i) {
  uint32_t k = from + i;

  return arq->snd_una + (k < span ? k : k - span);
}

/* arq_seg_due returns 1 if the in-flight segment must be sent at a time
   whose last timeout tick was |tick| (arq_tick_floor of it: its caller
   takes it once for a whole walk). */
static int arq_seg_due(const arq_sseg *g, rp_tstamp tick) {
  return g->used && !g->sacked &&
         (g->resend || rp_tstamp_elapsed(g->sent_at, g->rto, tick));
}

/* arq_front_from returns where a frame's resend walk starts with
   resend_front: the place past snd_una of one due segment drawn from the
   resend_front oldest due (|span| in flight, |tick| as arq_seg_due takes
   it), or |from| when none is due. */
static uint32_t arq_front_from(tun_arq *arq, uint32_t span, uint32_t from,
                               rp_tstamp tick) {
  uint32_t due[TUN_ARQ_MAX_FRONT];
  uint32_t i, k = 0;

  for (i = 0; i < span && k < arq->s.resend_front; ++i) {
    if (arq_seg_due(arq_sslot(arq, arq->snd_una + i), tick)) {
      due[k++] = i;
    }
  }
  return k > 0 ? due[arq_splitmix(&arq->resend_rng) % k] : from;
}

/* arq_can_open returns 1 if a new segment may be put in flight. */
static int arq_can_open(const tun_arq *arq) {
  uint32_t inflight = arq->snd_nxt - arq->snd_una;

  if (arq->s.send_held &&
      (uint32_t)(arq->flush_nxt - arq->snd_una) <= inflight) {
    return 0;
  }
  if (arq->s.unacked_max != 0 && arq->unacked >= arq->s.unacked_max) {
    return 0;
  }
  return arq->sndq_len > 0 && inflight < arq_peer_window(arq);
}

/* arq_frame_room returns 1 if a frame holding |nsegs| segments, |left|
   bytes short of its end, takes another (max_segs and a header's room). */
static int arq_frame_room(const tun_arq *arq, size_t nsegs, size_t left) {
  return (arq->s.max_segs == 0 || nsegs < arq->s.max_segs) &&
         left > arq->seg_hdr;
}

void tun_arq_send_flush(tun_arq *arq) {
  uint32_t sn;

  if (arq->s.send_held) {
    arq->flush_nxt = arq->snd_una + arq_peer_window(arq);
  }
  if (!arq->s.kcp_timers || arq_can_open(arq)) {
    return;
  }
  /* KCP's early retransmit: a flush that opens no new segment resends
     those an ack of a later one passed over, their timeout reset. */
  for (sn = arq->snd_una; sn != arq->snd_nxt; ++sn) {
    arq_sseg *g = arq_sslot(arq, sn);

    if (g->used && !g->sacked && !g->resend && g->fastack > 0) {
      g->fastack = 0;
      g->resend = 1;
      g->early = 1;
      arq->due_lb = 0;
      ++arq->st.fast_retransmits;
    }
  }
}

uint32_t tun_arq_want_output(const tun_arq *arq, rp_tstamp now) {
  uint32_t want = 0;
  uint32_t sn;
  rp_tstamp tick = arq_tick_floor(arq, now);

  if (arq->ack_pending) {
    want |= TUN_ARQ_WANT_ACK;
  }
  if (arq_can_open(arq)) {
    return want | TUN_ARQ_WANT_DATA;
  }
  if (now < arq->due_lb) {
    return want;
  }
  for (sn = arq->snd_una; sn != arq->snd_nxt; ++sn) {
    if (arq_seg_due(&arq->sseg[sn % arq->s.snd_wnd], tick)) {
      return want | TUN_ARQ_WANT_DATA;
    }
  }
  return want;
}

/* arq_bitmap_build writes the sack bitmap into |sack| and returns its
   trimmed length (at most |max|). */
static size_t arq_bitmap_build(tun_arq *arq, uint8_t *sack, size_t max) {
  size_t n = 0, i;
  uint32_t span = arq_rcv_free(arq);
  uint32_t ahead = arq->rcv_hi - arq->rcv_nxt;

  if (span > ahead) {
    span = ahead;
  }
  memset(sack, 0, max);
  for (i = 0; i < max * 8 && i + 1 < span; ++i) {
    uint32_t sn = arq->rcv_nxt + 1 + (uint32_t)i;

    if (arq_rslot(arq, sn)->present) {
      sack[i / 8] = (uint8_t)(sack[i / 8] | (1u << (i % 8)));
      n = i / 8 + 1;
    }
  }
  return n;
}

/* arq_sack_build writes the frame's sack area into |sack|: with
   kcp_timers the echo of the last received send time first (when it
   fits), then the bitmap. Returns its length (at most |max|). */
static size_t arq_sack_build(tun_arq *arq, uint8_t *sack, size_t max) {
  if (!arq->s.kcp_timers) {
    return arq_bitmap_build(arq, sack, max);
  }
  if (max < ARQ_KCP_TS) {
    return 0;
  }
  arq_put32(sack, arq->rx_ts);
  return ARQ_KCP_TS +
         arq_bitmap_build(arq, sack + ARQ_KCP_TS, max - ARQ_KCP_TS);
}

/* arq_emit writes segment |g| numbered |sn| at |out| and records the
   send. */
static void arq_emit(tun_arq *arq, arq_sseg *g, uint32_t sn, uint8_t *out,
                     rp_tstamp now) {
  arq_put32(out, sn);
  arq_put16(out + 4, g->len);
  if (arq->s.kcp_timers) {
    arq_put32(out + TUN_ARQ_SEG_HDR, arq_ms(now));
  }
  memcpy(out + arq->seg_hdr, g->data, g->len);
  if (g->xmit > 0) {
    uint64_t rto = (uint64_t)g->rto * arq->s.backoff_num / arq->s.backoff_den;

    if (!g->resend) {
      ++arq->st.timeouts;
    }
    if (g->early) {
      g->rto = arq->rto;
    } else if (g->nacked) {
      /* A known loss: the timeout stays. */
    } else if (arq->s.kcp_timers) {
      /* KCP without nodelay: the base rto added, no ceiling. */
      g->rto = g->rto > RP_TSTAMP_UNSET / 4 ? g->rto : g->rto + arq->rto;
    } else {
      g->rto = rto > arq->s.rto_max ? arq->s.rto_max : rto;
    }
    ++arq->st.retransmissions;
  } else {
    g->rto = arq->rto;
  }
  ++g->xmit;
  g->resend = 0;
  g->nacked = 0;
  g->early = 0;
  g->fastack = 0;
  g->sent_at = now;
  g->tx_order = ++arq->tx_count;
  if (rp_tstamp_add(now, g->rto) < arq->due_lb) {
    arq->due_lb = rp_tstamp_add(now, g->rto);
  }
  ++arq->st.segs_sent;
}

/* arq_note_sent appends |sn| to |psent| when not NULL. */
static void arq_note_sent(tun_arq_sent *psent, uint32_t sn) {
  if (psent == NULL) {
    return;
  }
  if (psent->n < TUN_ARQ_SENT_MAX) {
    psent->sn[psent->n] = sn;
  }
  ++psent->n;
}

/* arq_due_refresh sets due_lb to the earliest time a segment in flight
   is due (0 when one has its resend flag). */
static void arq_due_refresh(tun_arq *arq) {
  rp_tstamp best = RP_TSTAMP_UNSET;
  uint32_t sn;

  for (sn = arq->snd_una; sn != arq->snd_nxt; ++sn) {
    const arq_sseg *g = arq_sslot(arq, sn);
    rp_tstamp t;

    if (!g->used || g->sacked) {
      continue;
    }
    t = g->resend ? 0 : rp_tstamp_add(g->sent_at, g->rto);
    if (t < best) {
      best = t;
    }
  }
  arq->due_lb = best;
}

void tun_arq_ack_flush(tun_arq *arq) {
  size_t max = arq_sack_max(arq);

  if (!arq->s.ack_held) {
    return;
  }
  arq->held_una = arq->rcv_nxt;
  arq->held_wnd = arq_rcv_free(arq);
  arq->held_sack_len = arq_sack_build(arq, arq->held_sack, max);
}

/* arq_put_header writes the frame's ack header at |out|: the cumulative
   ack, the free receive slots and |sack_len| bytes of |sack|. */
static void arq_put_header(const tun_arq *arq, uint8_t *out,
                           const uint8_t *sack, size_t sack_len) {
  uint32_t free_slots = arq->s.ack_held ? arq->held_wnd : arq_rcv_free(arq);

  arq_put32(out, arq->s.ack_held ? arq->held_una : arq->rcv_nxt);
  arq_put16(out + 4,
            (uint16_t)(free_slots > UINT16_MAX ? UINT16_MAX : free_slots));
  out[6] = (uint8_t)sack_len;
  if (sack_len > 0) {
    memcpy(out + TUN_ARQ_HDR_FIXED, sack, sack_len);
  }
}

/* arq_frame_sack writes into |sack| the sack area of a frame of at
   most |cap| bytes (at least TUN_ARQ_HDR_FIXED): the held one with
   ack_held, else the state now. Returns its length. */
static size_t arq_frame_sack(tun_arq *arq, uint8_t *sack, size_t cap) {
  size_t sack_max = arq_sack_max(arq), sack_len;

  if (sack_max > cap - TUN_ARQ_HDR_FIXED) {
    sack_max = cap - TUN_ARQ_HDR_FIXED;
  }
  if (arq->s.ack_held) {
    sack_len = arq->held_sack_len < sack_max ? arq->held_sack_len : sack_max;
    memcpy(sack, arq->held_sack, sack_len);
    return sack_len;
  }
  return arq_sack_build(arq, sack, sack_max);
}

rp_ssize tun_arq_ack_header(tun_arq *arq, uint8_t *out, size_t cap) {
  uint8_t sack[TUN_ARQ_MAX_SACK];
  size_t sack_len;

  if (cap < TUN_ARQ_HDR_FIXED) {
    return RP_ERR_NOBUF;
  }
  sack_len = arq_frame_sack(arq, sack, cap);
  arq_put_header(arq, out, sack, sack_len);
  return (rp_ssize)(TUN_ARQ_HDR_FIXED + sack_len);
}

/* arq_cuts_consume moves the segment ends |n| bytes nearer the head
   (the bytes were cut) and drops those reached. */
static void arq_cuts_consume(tun_arq *arq, size_t n) {
  size_t i, k = 0;

  for (i = 0; i < arq->ncut; ++i) {
    if (arq->cut[i] > n) {
      arq->cut[k++] = arq->cut[i] - n;
    }
  }
  arq->ncut = k;
}

/* arq_cut_new cuts a new segment from the send buffer (up to mss and
   |room| - its header; the caller checked arq_can_open and room for a
   byte), writes it at |out| as sent and returns its length. */
static size_t arq_cut_new(tun_arq *arq, uint8_t *out, size_t room,
                          rp_tstamp now) {
  size_t n = arq->sndq_len;
  arq_sseg *g = arq_sslot(arq, arq->snd_nxt);

  if (n > arq->s.mss) {
    n = arq->s.mss;
  }
  if (n > room - arq->seg_hdr) {
    n = room - arq->seg_hdr;
  }
  if (arq->ncut > 0 && n > arq->cut[0]) {
    n = arq->cut[0];
  }
  assert(!g->used);
  arq_sndq_pop(arq, g->data, n);
  arq_cuts_consume(arq, n);
  *g = (arq_sseg){.used = 1, .len = (uint16_t)n, .data = g->data};
  arq_emit(arq, g, arq->snd_nxt, out, now);
  ++arq->snd_nxt;
  ++arq->unacked;
  return arq->seg_hdr + n;
}

rp_ssize tun_arq_output(tun_arq *arq, uint8_t *out, size_t cap, rp_tstamp now,
                        tun_arq_sent *psent) {
  uint8_t sack[TUN_ARQ_MAX_SACK];
  size_t sack_len, pos, nsegs = 0;
  uint32_t sn, i, span = arq->snd_nxt - arq->snd_una;
  /* walk is 1 when a segment may be due (else the walks find none);
     the walks start |from| segments past snd_una (resend_seed,
     resend_front); a segment is due by the last timeout tick. */
  int walk = now >= arq->due_lb;
  rp_tstamp tick = arq_tick_floor(arq, now);
  uint32_t from =
      walk && span > 0 && arq->s.resend_seed != 0 && arq->s.resend_front == 0
          ? (uint32_t)(arq_splitmix(&arq->resend_rng) % span)
          : 0;

  if (psent != NULL) {
    psent->n = 0;
  }
  if (cap < TUN_ARQ_HDR_FIXED) {
    return RP_ERR_NOBUF;
  }
  if (walk && span > 0 && arq->s.resend_front > 0) {
    from = arq_front_from(arq, span, from, tick);
  }
  sack_len = arq_frame_sack(arq, sack, cap);
  /* A due resend keeps its size: shorten the sack (it only reports less)
     rather than starve the resend of room. */
  for (i = 0; walk && i < span; ++i) {
    arq_sseg *g = arq_sslot(arq, sn = arq_walk_sn(arq, from, span, i));
    size_t need = TUN_ARQ_HDR_FIXED + arq->seg_hdr + (size_t)g->len;

    if (!arq_seg_due(g, tick)) {
      continue;
    }
    if (need + sack_len > cap && need <= cap) {
      sack_len = cap - need;
    }
    break;
  }
  arq_put_header(arq, out, sack, sack_len);
  pos = TUN_ARQ_HDR_FIXED + sack_len;
  arq->ack_pending = 0;

  /* Resends first, oldest first (or from |from| on: resend_seed,
     resend_front). */
  for (i = 0; walk && i < span; ++i) {
    arq_sseg *g = arq_sslot(arq, sn = arq_walk_sn(arq, from, span, i));

    if (arq->s.max_segs != 0 && nsegs >= arq->s.max_segs) {
      break;
    }
    if (!arq_seg_due(g, tick) ||
        cap - pos < arq->seg_hdr + (size_t)g->len) {
      continue;
    }
    arq_emit(arq, g, sn, out + pos, now);
    arq_note_sent(psent, sn);
    pos += arq->seg_hdr + g->len;
    ++nsegs;
  }
  if (walk) {
    arq_due_refresh(arq);
  }
  /* Then new segments, cut to the room left. */
  if (arq_frame_room(arq, nsegs, cap - pos) && !arq_can_open(arq)) {
    arq->st.window_full += arq->sndq_len > 0;
  }
  while (arq_frame_room(arq, nsegs, cap - pos) && arq_can_open(arq)) {
    arq_note_sent(psent, arq->snd_nxt);
    pos += arq_cut_new(arq, out + pos, cap - pos, now);
    ++nsegs;
  }
  return (rp_ssize)pos;
}

rp_ssize tun_arq_output_seg(tun_arq *arq, uint8_t *out, size_t cap,
                            rp_tstamp now) {
  arq_sseg *g;
  uint32_t sn;
  rp_tstamp tick = arq_tick_floor(arq, now);

  if (cap <= arq->seg_hdr) {
    return RP_ERR_NOBUF;
  }
  for (sn = arq->snd_una; now >= arq->due_lb && sn != arq->snd_nxt; ++sn) {
    g = arq_sslot(arq, sn);
    if (arq_seg_due(g, tick) && cap >= arq->seg_hdr + (size_t)g->len) {
      arq_emit(arq, g, sn, out, now);
      return (rp_ssize)(arq->seg_hdr + g->len);
    }
  }
  if (now >= arq->due_lb) {
    /* No segment in flight is due: its bound, exactly. */
    arq_due_refresh(arq);
  }
  if (!arq_can_open(arq)) {
    arq->st.window_full += arq->sndq_len > 0;
    return 0;
  }
  return (rp_ssize)arq_cut_new(arq, out, cap, now);
}

rp_ssize tun_arq_output_repeat(tun_arq *arq, uint8_t *out, size_t cap) {
  size_t len = arq->s.mss;

  if (cap < TUN_ARQ_HDR_FIXED) {
    return RP_ERR_NOBUF;
  }
  if (arq->snd_una == 0 ||
      cap - TUN_ARQ_HDR_FIXED <= TUN_ARQ_SEG_HDR) {
    return 0;
  }
  if (len > cap - TUN_ARQ_HDR_FIXED - TUN_ARQ_SEG_HDR) {
    len = cap - TUN_ARQ_HDR_FIXED - TUN_ARQ_SEG_HDR;
  }
  arq_put_header(arq, out, NULL, 0);
  arq_put32(out + TUN_ARQ_HDR_FIXED, arq->snd_una - 1);
  arq_put16(out + TUN_ARQ_HDR_FIXED + 4, (uint16_t)len);
  memset(out + TUN_ARQ_HDR_FIXED + TUN_ARQ_SEG_HDR, 0, len);
  return (rp_ssize)(TUN_ARQ_HDR_FIXED + TUN_ARQ_SEG_HDR + len);
}

void tun_arq_nack(tun_arq *arq, const tun_arq_sent *sent) {
  tun_arq_nack_list(arq, sent->sn,
                    sent->n < TUN_ARQ_SENT_MAX ? sent->n : TUN_ARQ_SENT_MAX);
}

void tun_arq_nack_list(tun_arq *arq, const uint32_t *sns, size_t n) {
  size_t i;

  for (i = 0; i < n; ++i) {
    uint32_t sn = sns[i];
    arq_sseg *g;

    if ((uint32_t)(sn - arq->snd_una) >=
        (uint32_t)(arq->snd_nxt - arq->snd_una)) {
      continue;
    }
    g = arq_sslot(arq, sn);
    if (g->used && !g->sacked && !g->resend) {
      g->resend = 1;
      g->nacked = 1;
      arq->due_lb = 0;
    }
  }
}
