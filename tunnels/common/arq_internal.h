/*
 * arq_internal.h: the state of a tun_arq (arq.h), shared by the two
 * files of the module: arq.c owns its life cycle, the send queue, the
 * receive buffer, the input of frames and the timers; arq_out.c owns the
 * building of frames (tun_arq_want_output, tun_arq_output, tun_arq_nack).
 * Nothing outside those two files includes it.
 */
#ifndef TUN_ARQ_INTERNAL_H
#define TUN_ARQ_INTERNAL_H

#include "arq.h"

/* ARQ_MAX_CUTS bounds the segment ends tun_arq_write_msg keeps; past it
   a message's bytes merge with the next (as KCP's stream mode does). */
#define ARQ_MAX_CUTS 16

typedef struct arq_sseg {
  /* used is 1 while the slot holds an unacked segment. */
  uint8_t used;
  /* sacked is 1 once a selective ack covered it. */
  uint8_t sacked;
  /* resend is 1 when the segment must go out in the next frame. */
  uint8_t resend;
  /* nacked is 1 when the resend is for a known loss (no backoff). */
  uint8_t nacked;
  /* early is 1 when kcp_timers' early retransmit marked the resend (its
     timeout back to the base rto). */
  uint8_t early;
  /* len is the payload length, bytes. */
  uint16_t len;
  /* xmit counts the sends. */
  uint32_t xmit;
  /* fastack counts frames that acked a later-sent segment. */
  uint32_t fastack;
  /* sent_at is the time of the last send. */
  rp_tstamp sent_at;
  /* tx_order numbers the last send among all sends of the arq. */
  uint64_t tx_order;
  /* rto is this segment's current timeout, ns. */
  rp_duration rto;
  /* data points to mss bytes in the arq's buffer. */
  uint8_t *data;
} arq_sseg;

typedef struct arq_rseg {
  /* present is 1 when the slot holds a received segment. */
  uint8_t present;
  /* len is the payload length, bytes. */
  uint16_t len;
  /* data points to peer_mss bytes in the arq's buffer. */
  uint8_t *data;
} arq_rseg;

struct tun_arq {
  tun_arq_settings s;
  const rp_mem *mem;
  /* block is the single allocation holding every buffer. */
  void *block;
  size_t block_len;
  /* Send side. */
  arq_sseg *sseg;
  /* snd_una is the oldest unacked sequence number; snd_nxt the next new. */
  uint32_t snd_una;
  uint32_t snd_nxt;
  /* unacked counts the segments sent and not yet acked (unacked_max). */
  uint32_t unacked;
  /* resend_rng: the stream of resend_seed. */
  uint64_t resend_rng;
  /* peer_wnd is the window the peer last advertised, segments. */
  uint32_t peer_wnd;
  /* sndq is a ring of snd_buf bytes: head is the first queued byte. */
  uint8_t *sndq;
  size_t sndq_head;
  size_t sndq_len;
  /* cut: the queued bytes' segment ends from tun_arq_write_msg, as
     counts of queued bytes from the head (ARQ_MAX_CUTS of them, oldest
     first). */
  size_t cut[ARQ_MAX_CUTS];
  size_t ncut;
  /* Receive side. */
  arq_rseg *rseg;
  /* rd_sn is the first segment not fully read; rd_off the bytes read of
     it; rcv_nxt the first segment not received. */
  uint32_t rd_sn;
  size_t rd_off;
  uint32_t rcv_nxt;
  /* rcv_hi is one past the highest segment received (no slot past it is
     present: the sack walks no further). */
  uint32_t rcv_hi;
  /* rcv_last is the last data segment input took (tun_arq_rcv_last). */
  uint32_t rcv_last;
  /* rcv_beyond is 1 when rcv_last lay past the receive window. */
  int rcv_beyond;
  /* tx_count numbers segment sends, for tx_order. */
  uint64_t tx_count;
  /* due_lb is a time before which no segment is due (see the notes). */
  rp_tstamp due_lb;
  /* ack_pending is 1 when data arrived since the last frame. */
  int ack_pending;
  /* With ack_held: the ack state of the last tun_arq_ack_flush (una,
     free slots, the sack bitmap and its length). */
  uint32_t held_una;
  uint32_t held_wnd;
  size_t held_sack_len;
  uint8_t held_sack[TUN_ARQ_MAX_SACK];
  /* With send_held: new segments go in flight only below flush_nxt (the
     window's end at the last tun_arq_send_flush). */
  uint32_t flush_nxt;
  /* Timers. */
  /* seg_hdr is a segment's header on the wire: TUN_ARQ_SEG_HDR, and
     ARQ_KCP_TS more with kcp_timers (its send time). */
  size_t seg_hdr;
  /* With kcp_timers: rx_ts is the send time (ms, the peer's clock) of the
     last data segment received, which acks echo; echo_seen the last echo
     taken from the peer. */
  uint32_t rx_ts;
  uint32_t echo_seen;
  rp_duration srtt;
  rp_duration rttvar;
  rp_duration rto;
  tun_arq_stats st;
};

/* ARQ_KCP_TS is the size of a kcp_timers send time on the wire, bytes:
   after each segment's header, and first in each frame's sack area (the
   echo): TUN_ARQ_KCP_OVERHEAD is two of them. */
#define ARQ_KCP_TS (TUN_ARQ_KCP_OVERHEAD / 2)

/* arq_ms returns |now| in the 32-bit milliseconds of kcp_timers' send
   times, from 1 (an echo of 0 means none). */
static inline uint32_t arq_ms(rp_tstamp now) {
  return (uint32_t)(now / RP_MILLISECONDS) + 1;
}

/* arq_peer_window returns how many segments may be in flight now: the
   send window, or the peer's when smaller (a zero window still lets one
   segment probe it). */
static inline uint32_t arq_peer_window(const tun_arq *arq) {
  uint32_t wnd = arq->s.snd_wnd;

  if (!arq->s.ignore_peer_wnd && arq->peer_wnd < wnd) {
    wnd = arq->peer_wnd == 0 ? 1 : arq->peer_wnd;
  }
  return wnd;
}

/* arq_sack_max returns the largest sack area of a frame, bytes: the
   bitmap of the receive window, and with kcp_timers the echo before it
   (at most TUN_ARQ_MAX_SACK). */
static inline size_t arq_sack_max(const tun_arq *arq) {
  size_t n = (arq->s.rcv_wnd + 7) / 8 + (arq->s.kcp_timers ? ARQ_KCP_TS : 0);

  return n < TUN_ARQ_MAX_SACK ? n : TUN_ARQ_MAX_SACK;
}

/* arq_rslot returns the receive slot of segment |sn|. */
static inline arq_rseg *arq_rslot(tun_arq *arq, uint32_t sn) {
  return &arq->rseg[sn % arq->s.rcv_wnd];
}

/* arq_tick_floor returns |now| down to a multiple of timeout_tick (|now|
   itself without one): the last time the sender looked for timeouts. */
static inline rp_tstamp arq_tick_floor(const tun_arq *arq, rp_tstamp now) {
  rp_duration tick = arq->s.timeout_tick;

  return tick > 0 ? now - now % tick : now;
}

/* arq_sslot returns the send slot of segment |sn|. */
static inline arq_sseg *arq_sslot(tun_arq *arq, uint32_t sn) {
  return &arq->sseg[sn % arq->s.snd_wnd];
}

/* arq_rcv_free returns the free receive slots counted from rcv_nxt. */
static inline uint32_t arq_rcv_free(const tun_arq *arq) {
  return arq->rd_sn + arq->s.rcv_wnd - arq->rcv_nxt;
}

#endif /* TUN_ARQ_INTERNAL_H */
