/*
 * tunsrvq.c: a server session's send queue of arq packets (tunsrvq.h).
 */
#include "tunsrvq.h"

#include <string.h>

int tun_srvq_init(tun_srvq *q, size_t cap, size_t mss, int ack_queued,
                  tun_arq *arq, const rp_mem *mem) {
  *q = (tun_srvq){.cap = cap, .slot = TUN_ARQ_SEG_HDR + mss};
  q->data = mem->calloc(cap, q->slot, mem->user_data);
  q->len = mem->calloc(cap, sizeof(uint16_t), mem->user_data);
  q->drop = mem->calloc(1, q->slot, mem->user_data);
  if (ack_queued) {
    q->hdr = mem->calloc(cap, TUN_SRVQ_HDR, mem->user_data);
    q->hlen = mem->calloc(cap, 1, mem->user_data);
  }
  if (q->data == NULL || q->len == NULL || q->drop == NULL ||
      (ack_queued && (q->hdr == NULL || q->hlen == NULL))) {
    tun_srvq_free(q, mem);
    return RP_ERR_NOMEM;
  }
  if (ack_queued) {
    /* What answers carry until a flush queues acks: nothing received
       yet, the whole window free. */
    q->hdr_sent_len =
        (size_t)tun_arq_ack_header(arq, q->hdr_sent, sizeof(q->hdr_sent));
    memcpy(q->hdr_queued, q->hdr_sent, q->hdr_sent_len);
    q->hdr_queued_len = q->hdr_sent_len;
  }
  return 0;
}

void tun_srvq_free(tun_srvq *q, const rp_mem *mem) {
  mem->free(q->data, mem->user_data);
  mem->free(q->len, mem->user_data);
  mem->free(q->drop, mem->user_data);
  mem->free(q->hdr, mem->user_data);
  mem->free(q->hlen, mem->user_data);
  *q = (tun_srvq){0};
}

/* srvq_push puts the packet of |n| bytes at the ring's tail (written
   there already) with the ack header |hdr| of |hlen| bytes. */
static void srvq_push(tun_srvq *q, size_t n, const uint8_t *hdr,
                      size_t hlen) {
  size_t tail = (q->head + q->count) % q->cap;

  q->len[tail] = (uint16_t)n;
  if (q->hdr != NULL) {
    memcpy(q->hdr + tail * TUN_SRVQ_HDR, hdr, hlen);
    q->hlen[tail] = (uint8_t)hlen;
  }
  ++q->count;
}

uint64_t tun_srvq_fill(tun_srvq *q, tun_arq *arq, int serving,
                       rp_tstamp now) {
  uint8_t hdr[TUN_SRVQ_HDR];
  size_t hlen = 0, queued = 0;
  uint64_t drops = 0;

  if (q->hdr != NULL) {
    hlen = (size_t)tun_arq_ack_header(arq, hdr, sizeof(hdr));
  }
  while (serving) {
    int full = q->count == q->cap;
    uint8_t *slot =
        full ? q->drop : q->data + ((q->head + q->count) % q->cap) * q->slot;
    rp_ssize n = tun_arq_output_seg(arq, slot, q->slot, now);

    if (n <= 0) {
      break;
    }
    if (full) {
      ++drops;
      continue;
    }
    srvq_push(q, (size_t)n, hdr, hlen);
    ++queued;
  }
  if (q->hdr == NULL ||
      (hlen == q->hdr_queued_len && memcmp(hdr, q->hdr_queued, hlen) == 0)) {
    return drops;
  }
  if (queued == 0 && q->count < q->cap) {
    /* New acks and no packet to carry them: a packet of acks alone. */
    srvq_push(q, 0, hdr, hlen);
  }
  memcpy(q->hdr_queued, hdr, hlen);
  q->hdr_queued_len = hlen;
  return drops;
}

/* srvq_pop drops the ring's head. */
static void srvq_pop(tun_srvq *q) {
  q->head = (q->head + 1) % q->cap;
  --q->count;
}

/* srvq_take writes the oldest packets that fit into |out| from |pos| up
   to |room| and returns the end: a first packet that cannot fit is
   dropped (a query asking for less than the queue's packets:
   dnstt-server sends it truncated and the client drops it, so it is
   gone), counted in |*pdrops|. With ack_queued, each packet taken (acks
   alone included) makes its ack header the one sent. */
static size_t srvq_take(tun_srvq *q, uint8_t *out, size_t pos, size_t room,
                        tun_arq_sent *psent, uint64_t *pdrops) {
  while (q->count > 0) {
    size_t len = q->len[q->head];

    if (len > 0 && pos + len > room) {
      if (psent->n > 0) {
        break;
      }
      ++*pdrops;
    } else {
      if (len > 0) {
        memcpy(out + pos, q->data + q->head * q->slot, len);
        pos += len;
        ++psent->n;
      }
      if (q->hdr != NULL) {
        q->hdr_sent_len = q->hlen[q->head];
        memcpy(q->hdr_sent, q->hdr + q->head * TUN_SRVQ_HDR,
               q->hdr_sent_len);
      }
    }
    srvq_pop(q);
  }
  return pos;
}

rp_ssize tun_srvq_frame(tun_srvq *q, tun_arq *arq, uint8_t *out, size_t room,
                        rp_tstamp now, tun_arq_sent *psent,
                        uint64_t *pdrops) {
  rp_ssize flen;
  size_t data, hlen;

  psent->n = 0;
  if (q->hdr == NULL) {
    /* The ack header of now, then the packets. */
    flen = tun_arq_output(arq, out, TUN_ARQ_HDR_FIXED, now, NULL);
    if (flen < 0) {
      return flen;
    }
    return (rp_ssize)srvq_take(q, out, (size_t)flen, room, psent, pdrops);
  }
  /* ack_queued: the packets after room for the fixed header, then the
     header the last one took in front of them, its sack cut to the room
     left (it only reports less). */
  if (room < TUN_ARQ_HDR_FIXED) {
    return RP_ERR_NOBUF;
  }
  data = srvq_take(q, out, TUN_ARQ_HDR_FIXED, room, psent, pdrops) -
         TUN_ARQ_HDR_FIXED;
  hlen = q->hdr_sent_len;
  if (hlen > room - data) {
    hlen = room - data;
  }
  memmove(out + hlen, out + TUN_ARQ_HDR_FIXED, data);
  memcpy(out, q->hdr_sent, hlen);
  out[TUN_ARQ_HDR_FIXED - 1] = (uint8_t)(hlen - TUN_ARQ_HDR_FIXED);
  return (rp_ssize)(hlen + data);
}
