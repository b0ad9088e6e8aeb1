/*
 * tunsrvq.h: one server session's send queue of arq packets (prefix
 * tun_srvq_), as dnstt-server keeps one per client
 * (turbotunnel.QueueSize): the arq's flush writes each segment due as a
 * packet into the queue, a packet that finds it full is dropped (the arq
 * counts it sent and times it from then), and each answer takes the
 * oldest packets that fit. tun_srv's out_queue setting turns it on; the
 * simulator's model of the real dnstt server sets it.
 *
 * With ack_queued the ack state (cumulative ack, window, sack, and with
 * kcp_timers the echo) goes in the queue too, as dnstt-server's KCP
 * writes its acks into the same queue at its flush: each packet keeps the
 * state of its flush, a flush that changed the state and queued no
 * packet queues one of acks alone, and an answer's header is the newest
 * its packets took (the last one sent when it took none). Acks then wait
 * behind the data queued before them.
 */
#ifndef TUN_SRVQ_H
#define TUN_SRVQ_H

#include "arq.h"

#include <stddef.h>
#include <stdint.h>

/* TUN_SRVQ_HDR is the largest ack header a queued packet keeps, bytes. */
#define TUN_SRVQ_HDR (TUN_ARQ_HDR_FIXED + TUN_ARQ_MAX_SACK)

typedef struct tun_srvq {
  /* A ring of cap packets of slot bytes from head, count of them, each
     len[i] long (0: acks alone); drop is one more slot, where a packet
     that finds the ring full is written and dropped. */
  uint8_t *data;
  uint16_t *len;
  uint8_t *drop;
  size_t cap, slot, head, count;
  /* With ack_queued: hdr holds each packet's ack header (hlen[i] bytes);
     hdr_queued is the last queued, hdr_sent the last an answer took. */
  uint8_t *hdr;
  uint8_t *hlen;
  uint8_t hdr_queued[TUN_SRVQ_HDR], hdr_sent[TUN_SRVQ_HDR];
  size_t hdr_queued_len, hdr_sent_len;
} tun_srvq;

/* tun_srvq_init makes |q| a queue of |cap| packets of segments up to
   |mss| bytes of payload for |arq|'s session, queuing acks when
   |ack_queued|, with memory from |mem|. Returns 0 or RP_ERR_NOMEM (|q|
   then holds nothing; tun_srvq_free is still safe). */
int tun_srvq_init(tun_srvq *q, size_t cap, size_t mss, int ack_queued,
                  tun_arq *arq, const rp_mem *mem);

/* tun_srvq_free frees what |q| holds (a zeroed |q|: a no-op). */
void tun_srvq_free(tun_srvq *q, const rp_mem *mem);

/* tun_srvq_fill is the flush at |now|: every segment |arq| has due goes
   into |q| in order (only acks when not |serving| yet), and with
   ack_queued the ack state. Returns how many packets found the queue
   full. */
uint64_t tun_srvq_fill(tun_srvq *q, tun_arq *arq, int serving, rp_tstamp now);

/* tun_srvq_frame writes into |out| a frame of at most |room| bytes: the
   ack header (|arq|'s at |now|, or the newest the packets took with
   ack_queued), then the oldest packets that fit (a first one that cannot
   fit is dropped, counted in |*pdrops|). Counts the data packets in
   |psent|. Returns the frame length or RP_ERR_NOBUF. */
rp_ssize tun_srvq_frame(tun_srvq *q, tun_arq *arq, uint8_t *out, size_t room,
                        rp_tstamp now, tun_arq_sent *psent, uint64_t *pdrops);

#endif /* TUN_SRVQ_H */
