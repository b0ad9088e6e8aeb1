/*
 * tunnack.c: a MasterDnsVPN receiver's NACKs (tunnack.h).
 */
#include "tunnack.h"

#include <string.h>

void tun_nack_init(tun_nack *nk, const tun_nack_settings *s) {
  nk->s = *s;
  memset(nk->used, 0, sizeof(nk->used));
}

/* nack_one NACKs missing segment |sn| into |out| (holding |*n| of |max|)
   if it is due: not when first seen missing, then once it has been
   missing s.delay, and again each s.repeat. */
static void nack_one(tun_nack *nk, uint32_t sn, rp_tstamp now, uint32_t *out,
                     size_t *n, size_t max) {
  size_t k = sn % TUN_NACK_SLOTS;

  if (!nk->used[k] || nk->sn[k] != sn) {
    nk->used[k] = 1;
    nk->sn[k] = sn;
    nk->first[k] = now;
    nk->last[k] = RP_TSTAMP_UNSET;
    if (nk->s.delay > 0) {
      return;
    }
  }
  if (now - nk->first[k] < nk->s.delay ||
      (nk->last[k] != RP_TSTAMP_UNSET && now - nk->last[k] < nk->s.repeat)) {
    return;
  }
  if (*n == max) {
    return;
  }
  nk->last[k] = now;
  out[(*n)++] = sn;
}

size_t tun_nack_arrival(tun_nack *nk, const tun_arq *arq, rp_tstamp now,
                        uint32_t *out, size_t max) {
  uint32_t nxt = tun_arq_rcv_next(arq), sn = tun_arq_rcv_last(arq);
  uint32_t diff = sn - nxt, gap = (uint32_t)nk->s.gap, m, top = nxt;
  size_t sample = (nk->s.gap + 19) / 20, added = 0, n = 0;

  if (gap == 0 || diff == 0 || diff > TUN_ARQ_MD_WND) {
    /* Off, in order (already delivered), an old duplicate, or beyond
       the receive window. */
    return 0;
  }
  for (m = nxt; m != sn && (diff <= gap || added < sample); ++m) {
    if (!tun_arq_rcv_present(arq, m)) {
      nack_one(nk, m, now, out, &n, max);
      ++added;
      top = m;
    }
  }
  if (diff <= gap) {
    return n;
  }
  /* The frontier: the last missing within gap of the first. */
  for (m = nxt + gap - 1; m != nxt && tun_arq_rcv_present(arq, m); --m) {
  }
  if ((uint32_t)(m - nxt) > (uint32_t)(top - nxt)) {
    nack_one(nk, m, now, out, &n, max);
  }
  return n;
}

size_t tun_nack_idle(tun_nack *nk, const tun_arq *arq, rp_tstamp now,
                     uint32_t *out, size_t max) {
  uint32_t nxt = tun_arq_rcv_next(arq), m;
  size_t n = 0;
  int held = 0;

  for (m = nxt; m != nxt + (uint32_t)nk->s.gap && !held; ++m) {
    held = tun_arq_rcv_present(arq, m);
  }
  for (m = nxt; held && m != nxt + (uint32_t)nk->s.gap; ++m) {
    if (!tun_arq_rcv_present(arq, m)) {
      nack_one(nk, m, now, out, &n, max);
    }
  }
  return n;
}
