/*
 * tunnack.h: which missing data segments a MasterDnsVPN receiver NACKs,
 * and when (prefix tun_nack_). Both of its ends run the same ARQ: the
 * client NACKs the download's gaps, the server the upload's. Sans-I/O:
 * it reads a tun_arq's receive side and keeps per segment when it was
 * first seen missing and last NACKed; the caller sends the NACKs.
 *
 * The rules, from MasterDnsVPN's ARQ (bc69a58, internal/arq/arq.go):
 * - a data segment that arrives past a gap makes the receiver look at
 *   the missing ones below it (maybeSendDataNacks): every one when the
 *   segment is within |gap| of the first missing, else a sample, the
 *   first (gap + 19) / 20 missing and the last missing within |gap| of
 *   the first;
 * - a missing segment is not NACKed when first seen missing, then once
 *   it has been missing |delay|, and again only each |repeat|
 *   (shouldSendDataNack; delay 0: at once);
 * - with data held beyond a gap and none arrived for |repeat|, every
 *   missing one within |gap| of the first (runGapRecoveryWatchdog).
 */
#ifndef TUN_NACK_H
#define TUN_NACK_H

#include "arq.h"

#include <stddef.h>
#include <stdint.h>

/* TUN_NACK_SLOTS is how many missing segments are tracked, by sequence
   number modulo it: more than a MasterDnsVPN receive window, so two
   segments missing at once never share a slot. TUN_NACK_GAP_MAX bounds
   |gap|. */
#define TUN_NACK_SLOTS 2048
#define TUN_NACK_GAP_MAX 64

typedef struct tun_nack_settings {
  /* gap: ARQ_DATA_NACK_MAX_GAP, segments (0: no NACKs, at most
     TUN_NACK_GAP_MAX); delay: ARQ_DATA_NACK_INITIAL_DELAY_SECONDS;
     repeat: ARQ_DATA_NACK_REPEAT_SECONDS. */
  size_t gap;
  rp_duration delay;
  rp_duration repeat;
} tun_nack_settings;

typedef struct tun_nack {
  tun_nack_settings s;
  /* Per missing segment, slot sn % TUN_NACK_SLOTS (valid while used and
     sn is the segment's): when it was first seen missing and last
     NACKed (RP_TSTAMP_UNSET: not yet). */
  uint32_t sn[TUN_NACK_SLOTS];
  uint8_t used[TUN_NACK_SLOTS];
  rp_tstamp first[TUN_NACK_SLOTS];
  rp_tstamp last[TUN_NACK_SLOTS];
} tun_nack;

/* tun_nack_init sets |nk|'s settings and forgets every segment. */
void tun_nack_init(tun_nack *nk, const tun_nack_settings *s);

/* tun_nack_arrival is called after a data segment arrived in |arq|
   (tun_arq_rcv_last) at |now|: it writes the missing segments due a NACK
   to |out|, at most |max| (one that finds |out| full stays due), and
   returns how many. */
size_t tun_nack_arrival(tun_nack *nk, const tun_arq *arq, rp_tstamp now,
                        uint32_t *out, size_t max);

/* tun_nack_idle is the watchdog's pass, for a receiver whose data
   stopped for s.repeat: as tun_nack_arrival, over every missing segment
   within |gap| of the first when one beyond them is held. */
size_t tun_nack_idle(tun_nack *nk, const tun_arq *arq, rp_tstamp now,
                     uint32_t *out, size_t max);

#endif
