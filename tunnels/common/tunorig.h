/*
 * tunorig.h: when the original dnstt-client sends a query (prefix
 * tun_orig_), as a sans-I/O model the minimal DNSTT client (--original)
 * and the simulator drive.
 *
 * The pool's decisions depend on how the real client behaves, and the
 * original dnstt-client (e5e873b, dnstt-client/dns.go) is unlike a
 * worker that keeps one query out:
 * - It keeps one UDP socket and takes every answer that arrives on it,
 *   whatever its DNS ID: answers to copies and hedges all carry data.
 * - A data packet (KCP data or acks) goes out in a query of its own as
 *   soon as there is one. Otherwise it sends an empty poll when it may:
 *   each answer that carried at least one packet permits one poll (at
 *   most poll_limit pending, 16), and a data packet takes the place of a
 *   pending poll. The number of queries in flight therefore grows while
 *   answers carry data, like TCP slow start, and shrinks when they do
 *   not.
 * - An answer that is not NOERROR with one TXT record carries nothing:
 *   no packet, so no new poll. A refused or failed query costs the
 *   client a poll for good, and nothing is resent before KCP's own
 *   retransmission timer.
 * - With nothing to send, a poll timer fires after init_poll_delay
 *   (500 ms) and doubles each time it fires (to max_poll_delay, 10 s);
 *   any other send resets it.
 * - At the start of a session, a burst of polls goes out before any
 *   data flows (opening_polls; the handshake's packets come on top).
 *
 * KCP's acks are flushed once per interval (10 ms), as many packets as
 * the acks of the segments received since the last flush fill (a query
 * for every acks_per_query of them): at a high rate these ack queries
 * are polls too, and they grow the queries in flight as TCP's slow
 * start does (dns.go's "1 + f" polls per data packet).
 *
 * IMPLEMENTATION NOTES
 * - The model holds only the poll credit and the timer; the driver asks
 *   tun_orig_next whether to send a query now, after every answer and on
 *   its tick, until it says no, and builds each query from its arq.
 * - Left out: dnstt's separate send and receive goroutines (the order of
 *   sends within one instant), uTLS/DoH transports.
 */
#ifndef TUN_ORIG_H
#define TUN_ORIG_H

#include "respool.h"

#include <stdint.h>

typedef struct tun_orig_settings {
  /* poll_limit is the most polls that answers may permit at once (16). */
  uint32_t poll_limit;
  /* opening_polls is the burst of polls at the start (16). */
  uint32_t opening_polls;
  /* init_poll_delay is the idle poll timer's first delay, ns (500 ms). */
  rp_duration init_poll_delay;
  /* max_poll_delay is its largest delay, ns (10 s). */
  rp_duration max_poll_delay;
  /* ack_interval: owed acks go out at most this often, ns (10 ms, KCP's
     flush interval). */
  rp_duration ack_interval;
  /* acks_per_query is how many segments one ack query acknowledges (5:
     KCP writes a 24-byte ack a segment into packets of dnstt's 134-byte
     MTU); a flush sends one query for each such group received since
     the last flush, at least one. */
  uint32_t acks_per_query;
  /* ack_compact: 1 makes a flush one query, whatever the segments
     received since the last one (kcp-go v5, as the real dnstt-client is
     built, writes only the newest of the acks its cumulative ack covers:
     segments that came in order need one ack segment; the model counts
     every segment as in order); 0 (default, the minimal client's
     --original): a query for each acks_per_query of them. */
  int ack_compact;
} tun_orig_settings;

/* tun_orig_settings_default fills |s| with the values of dnstt e5e873b. */
void tun_orig_settings_default(tun_orig_settings *s);

typedef struct tun_orig {
  tun_orig_settings set;
  /* credit is the number of polls permitted now. */
  uint32_t credit;
  /* delay is the poll timer's current delay, ns. */
  rp_duration delay;
  /* timer_at is when the idle poll timer fires. */
  rp_tstamp timer_at;
  /* last_ack is the last flush of owed acks. */
  rp_tstamp last_ack;
  /* acks_owed counts the data segments received since the last flush;
     ack_burst the ack queries of the current flush still to send. */
  uint32_t acks_owed;
  uint32_t ack_burst;
} tun_orig;

/* tun_orig_init starts the model at |now| with |settings| (copied). */
void tun_orig_init(tun_orig *o, const tun_orig_settings *settings,
                   rp_tstamp now);

/* tun_orig_on_answer records an answer that carried |npackets| data
   packets (0 or less: an empty or error answer, which permits no
   poll). */
void tun_orig_on_answer(tun_orig *o, int npackets);

/* Flags of tun_orig_next's |want| (the arq's wants). */
#define TUN_ORIG_WANT_DATA 0x1u /* a segment is due */
#define TUN_ORIG_WANT_ACK 0x2u  /* an ack is owed */

/* tun_orig_next returns 1 if a query goes out now (the driver builds it
   and calls tun_orig_next again), 0 if not, given the arq's |want| (a
   mask of TUN_ORIG_WANT_*) at |now|. */
int tun_orig_next(tun_orig *o, uint32_t want, rp_tstamp now);

/* tun_orig_get_expiry returns when tun_orig_next may next say yes with
   the same |want| and no answer in between: the idle poll timer, or the
   next ack slot when an ack is owed. */
rp_tstamp tun_orig_get_expiry(const tun_orig *o, uint32_t want);

#endif /* TUN_ORIG_H */
