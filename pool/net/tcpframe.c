/*
 * tcpframe.c: two-byte length framing of DNS messages on a stream.
 *
 * IMPLEMENTATION NOTES
 * - One flat buffer; held bytes are buf[head..tail). rp_tcpframe_next
 *   only advances |head|, so every message it hands out stays in place
 *   until the caller asks for room again; rp_tcpframe_space then moves
 *   the remainder (at most one partial frame) to the front. A message is
 *   never copied on the way out.
 * - Why the room is never zero after a drain: rp_tcpframe_next returns 0
 *   only with fewer than two bytes held or with a prefix whose frame
 *   fits in |cap| but has not all arrived, so fewer than |cap| bytes are
 *   held; a prefix whose frame cannot fit is an error at once instead.
 * - Errors are sticky: a stream whose framing is lost has no way to find
 *   the next frame boundary, so the owner closes it.
 */
#include "tcpframe.h"

#include <assert.h>
#include <string.h>

void rp_tcpframe_init(rp_tcpframe *f, uint8_t *buf, size_t cap) {
  assert(buf != NULL && cap >= RP_TCPFRAME_MIN_CAP);
  *f = (rp_tcpframe){.buf = buf, .cap = cap, .head = 0, .tail = 0, .err = 0};
}

void rp_tcpframe_reset(rp_tcpframe *f) {
  f->head = 0;
  f->tail = 0;
  f->err = 0;
}

uint8_t *rp_tcpframe_space(rp_tcpframe *f, size_t *proom) {
  if (f->head > 0) {
    memmove(f->buf, f->buf + f->head, f->tail - f->head);
    f->tail -= f->head;
    f->head = 0;
  }
  *proom = f->cap - f->tail;
  return f->buf + f->tail;
}

void rp_tcpframe_commit(rp_tcpframe *f, size_t n) {
  assert(n <= f->cap - f->tail);
  f->tail += n;
}

size_t rp_tcpframe_feed(rp_tcpframe *f, const uint8_t *data, size_t len) {
  size_t room;
  uint8_t *dst = rp_tcpframe_space(f, &room);
  size_t take = len < room ? len : room;
  if (take > 0) {
    memcpy(dst, data, take);
    f->tail += take;
  }
  return take;
}

int rp_tcpframe_next(rp_tcpframe *f, const uint8_t **pmsg, size_t *plen) {
  size_t held = f->tail - f->head;
  size_t mlen;
  if (f->err != 0) {
    return f->err;
  }
  if (held < RP_TCPFRAME_PREFIX_LEN) {
    return 0;
  }
  mlen = (size_t)f->buf[f->head] << 8 | (size_t)f->buf[f->head + 1];
  if (mlen == 0) {
    f->err = RP_ERR_PROTO;
    return f->err;
  }
  if (mlen > f->cap - RP_TCPFRAME_PREFIX_LEN) {
    f->err = RP_ERR_NOBUF;
    return f->err;
  }
  if (held - RP_TCPFRAME_PREFIX_LEN < mlen) {
    return 0;
  }
  *pmsg = f->buf + f->head + RP_TCPFRAME_PREFIX_LEN;
  *plen = mlen;
  f->head += RP_TCPFRAME_PREFIX_LEN + mlen;
  return 1;
}
