/*
 * arq.c: the reliable byte stream of the minimal tunnels.
 *
 * IMPLEMENTATION NOTES
 *
 * Model. KCP-like selective-repeat ARQ over unreliable frames. The sender
 * cuts the queued stream into segments when a frame is built (so a segment
 * fills the room the frame has left, up to mss), keeps every unacked
 * segment in a ring of snd_wnd slots indexed by sequence number, and sends
 * at most min(snd_wnd, peer's advertised window) segments past snd_una.
 * The receiver keeps rcv_wnd slots indexed by sequence number from the
 * first unread segment, so memory is fixed and a hostile peer cannot make
 * it grow.
 *
 * Acks. Every frame carries the cumulative ack (una) and a selective-ack
 * bitmap of the segments held past una, trimmed of trailing zero bytes.
 *
 * Timers. RFC 6298: the first sample sets srtt = r, rttvar = r / 2; later
 * rttvar = 3/4 rttvar + 1/4 |srtt - r|, srtt = 7/8 srtt + 1/8 r; rto =
 * srtt + max(1 ms, 4 rttvar), clamped to rto_min .. rto_max. Samples are
 * only taken from segments sent once (Karn). Each resend multiplies the
 * segment's own timeout by backoff_num / backoff_den.
 *
 * Fast retransmit. When a frame newly acks a segment that was sent after
 * an older segment still unacked, the older one gains a "fast ack"; at
 * fast_resend of them it is resent at once. Comparing the order of sends
 * (not sequence numbers) keeps a segment that was itself just resent from being
 * resent again by acks of segments sent before it. A segment younger than
 * 5/4 srtt gains no fast ack (RACK's reordering window, RFC 8985): copies
 * of queries through resolvers of different speeds reorder answers.
 *
 * Due segments. due_lb is a time before which no segment in flight is
 * due: a send lowers it to the segment's timeout, a resend flag to 0,
 * and acks leave it (a lower bound still). Output, want_output and
 * handle_expiry skip their walks of the window while now < due_lb, and a
 * walk of output sets it exactly again; the segments sent and their times
 * are the same as with the walks.
 *
 * Left out: congestion control (the DNS query rate is the tunnel's
 * congestion window; KCP's nocwnd mode), a FIN (the tunnels know their
 * transfer sizes), sequence number wrap (u32 segments: 4 G segments per
 * session).
 */
#include "arq_internal.h"

#include <assert.h>
#include <string.h>

/* ARQ_RTT_GRANULARITY is the smallest 4 rttvar term of the rto, ns. */
#define ARQ_RTT_GRANULARITY RP_MILLISECONDS
/* ARQ_REO_DIV sets the reordering window of fast retransmit to srtt /
   ARQ_REO_DIV past srtt (RACK's quarter of the round trip). */
#define ARQ_REO_DIV 4
/* ARQ_MAX_SEG_LEN is the largest segment length field. */
#define ARQ_MAX_SEG_LEN 65535u
/* Default settings, see tun_arq_settings_default. */
#define ARQ_DEFAULT_MSS 512
#define ARQ_DEFAULT_WND 128
#define ARQ_DEFAULT_SNDBUF (256 * 1024)
#define ARQ_DEFAULT_RTO_INITIAL RP_SECONDS
#define ARQ_DEFAULT_RTO_MIN (100 * RP_MILLISECONDS)
#define ARQ_DEFAULT_RTO_MAX (8 * RP_SECONDS)
#define ARQ_DEFAULT_BACKOFF_NUM 3
#define ARQ_DEFAULT_BACKOFF_DEN 2
#define ARQ_DEFAULT_FAST_RESEND 2

void tun_arq_settings_default(tun_arq_settings *s) {
  *s = (tun_arq_settings){
      .mss = ARQ_DEFAULT_MSS,
      .peer_mss = ARQ_DEFAULT_MSS,
      .snd_wnd = ARQ_DEFAULT_WND,
      .rcv_wnd = ARQ_DEFAULT_WND,
      .snd_buf = ARQ_DEFAULT_SNDBUF,
      .rto_initial = ARQ_DEFAULT_RTO_INITIAL,
      .rto_min = ARQ_DEFAULT_RTO_MIN,
      .rto_max = ARQ_DEFAULT_RTO_MAX,
      .backoff_num = ARQ_DEFAULT_BACKOFF_NUM,
      .backoff_den = ARQ_DEFAULT_BACKOFF_DEN,
      .fast_resend = ARQ_DEFAULT_FAST_RESEND,
      .max_segs = 0,
  };
}

/* kcp-go's IKCP_RTO_DEF, IKCP_RTO_MIN and IKCP_RTO_MAX. */
#define ARQ_KCP_RTO_INITIAL (200 * RP_MILLISECONDS)
#define ARQ_KCP_RTO_MIN (100 * RP_MILLISECONDS)
#define ARQ_KCP_RTO_MAX (60 * RP_SECONDS)

void tun_arq_settings_kcp(tun_arq_settings *s) {
  s->kcp_timers = 1;
  s->rto_initial = ARQ_KCP_RTO_INITIAL;
  s->rto_min = ARQ_KCP_RTO_MIN;
  s->rto_max = ARQ_KCP_RTO_MAX;
  s->fast_resend = 0;
}

/* MasterDnsVPN's data timers (tun_arq_settings_md). */
#define ARQ_MD_RTO_MIN (500 * RP_MILLISECONDS)
#define ARQ_MD_RTO_MAX (3 * RP_SECONDS)
#define ARQ_MD_GROW_NUM 27
#define ARQ_MD_GROW_DEN 20

void tun_arq_settings_md(tun_arq_settings *s) {
  s->snd_wnd = s->rcv_wnd = TUN_ARQ_MD_WND;
  s->unacked_max = TUN_ARQ_MD_UNACKED;
  s->rto_initial = s->rto_min = ARQ_MD_RTO_MIN;
  s->rto_max = ARQ_MD_RTO_MAX;
  s->backoff_num = ARQ_MD_GROW_NUM;
  s->backoff_den = ARQ_MD_GROW_DEN;
  s->fast_resend = 0;
}

/* arq_mul_ok stores a * b in |*pr| and returns 1 unless it overflows. */
static int arq_mul_ok(size_t a, size_t b, size_t *pr) {
  if (a != 0 && b > SIZE_MAX / a) {
    return 0;
  }
  *pr = a * b;
  return 1;
}

static int arq_add_ok(size_t *pacc, size_t v) {
  if (v > SIZE_MAX - *pacc) {
    return 0;
  }
  *pacc += v;
  return 1;
}

int tun_arq_new(tun_arq **parq, const tun_arq_settings *settings,
                const rp_mem *mem) {
  const tun_arq_settings *s = settings;
  size_t sseg_sz, rseg_sz, sdata_sz, rdata_sz, total = 0;
  uint8_t *p;
  tun_arq *arq;
  uint32_t i;

  if (mem == NULL) {
    mem = rp_mem_default();
  }
  if (s->mss == 0 || s->mss > ARQ_MAX_SEG_LEN || s->peer_mss == 0 ||
      s->peer_mss > ARQ_MAX_SEG_LEN || s->snd_wnd == 0 ||
      s->snd_wnd > TUN_ARQ_MAX_WND || s->rcv_wnd == 0 ||
      s->rcv_wnd > TUN_ARQ_MAX_WND || s->snd_buf == 0 || s->backoff_den == 0 ||
      s->backoff_num < s->backoff_den || s->rto_min == 0 ||
      s->rto_min > s->rto_max || s->resend_front > TUN_ARQ_MAX_FRONT) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  if (s->kcp_timers && s->mss <= TUN_ARQ_KCP_OVERHEAD) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  if (!arq_mul_ok(s->snd_wnd, sizeof(arq_sseg), &sseg_sz) ||
      !arq_mul_ok(s->rcv_wnd, sizeof(arq_rseg), &rseg_sz) ||
      !arq_mul_ok(s->snd_wnd, s->mss, &sdata_sz) ||
      !arq_mul_ok(s->rcv_wnd, s->peer_mss, &rdata_sz) ||
      !arq_add_ok(&total, sizeof(tun_arq)) || !arq_add_ok(&total, sseg_sz) ||
      !arq_add_ok(&total, rseg_sz) || !arq_add_ok(&total, sdata_sz) ||
      !arq_add_ok(&total, rdata_sz) || !arq_add_ok(&total, s->snd_buf)) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  /* One block: the struct first (aligned by the allocator), then the two
     slot arrays (pointer-aligned as sizes are multiples of their
     alignment), then the byte buffers. */
  p = mem->calloc(1, total, mem->user_data);
  if (p == NULL) {
    return RP_ERR_NOMEM;
  }
  arq = (tun_arq *)(void *)p;
  arq->s = *s;
  arq->resend_rng = s->resend_seed;
  if (s->kcp_timers) {
    /* The send time after each segment's header and the echo in each
       frame's header come out of the payload: frames keep their size. */
    arq->s.mss -= TUN_ARQ_KCP_OVERHEAD;
  }
  arq->mem = mem;
  arq->block = p;
  arq->block_len = total;
  p += sizeof(tun_arq);
  arq->sseg = (arq_sseg *)(void *)p;
  p += sseg_sz;
  arq->rseg = (arq_rseg *)(void *)p;
  p += rseg_sz;
  for (i = 0; i < s->snd_wnd; ++i) {
    arq->sseg[i].data = p;
    p += s->mss;
  }
  for (i = 0; i < s->rcv_wnd; ++i) {
    arq->rseg[i].data = p;
    p += s->peer_mss;
  }
  arq->sndq = p;
  arq->peer_wnd = s->snd_wnd;
  arq->held_wnd = s->rcv_wnd;
  arq->srtt = RP_TSTAMP_UNSET;
  arq->rttvar = RP_TSTAMP_UNSET;
  arq->rto = s->rto_initial;
  arq->due_lb = RP_TSTAMP_UNSET;
  arq->seg_hdr = TUN_ARQ_SEG_HDR + (s->kcp_timers ? ARQ_KCP_TS : 0);
  *parq = arq;
  return 0;
}

void tun_arq_del(tun_arq *arq) {
  if (arq == NULL) {
    return;
  }
  arq->mem->free(arq->block, arq->mem->user_data);
}

size_t tun_arq_memory(const tun_arq *arq) { return arq->block_len; }

/* ------------------------------------------------------------------ */
/* Send buffer                                                          */
/* ------------------------------------------------------------------ */

size_t tun_arq_send_space(const tun_arq *arq) {
  return arq->s.snd_buf - arq->sndq_len;
}

size_t tun_arq_write(tun_arq *arq, const uint8_t *data, size_t len) {
  size_t take = tun_arq_send_space(arq), done = 0;

  if (len < take) {
    take = len;
  }
  while (done < take) {
    size_t tail = (arq->sndq_head + arq->sndq_len) % arq->s.snd_buf;
    size_t chunk = arq->s.snd_buf - tail;

    if (chunk > take - done) {
      chunk = take - done;
    }
    memcpy(arq->sndq + tail, data + done, chunk);
    arq->sndq_len += chunk;
    done += chunk;
  }
  return take;
}

int tun_arq_send_idle(const tun_arq *arq) {
  return arq->sndq_len == 0 && arq->snd_una == arq->snd_nxt;
}

/* arq_queued_segs returns how many segments the queued bytes make: each
   run between cuts at mss a segment. */
static uint64_t arq_queued_segs(const tun_arq *arq) {
  uint64_t segs = 0;
  size_t from = 0, i;

  for (i = 0; i < arq->ncut; ++i) {
    segs += (arq->cut[i] - from + arq->s.mss - 1) / arq->s.mss;
    from = arq->cut[i];
  }
  return segs + (arq->sndq_len - from + arq->s.mss - 1) / arq->s.mss;
}

int tun_arq_kcp_writable(const tun_arq *arq) {
  uint64_t wait =
      (uint64_t)(arq->snd_nxt - arq->snd_una) + arq_queued_segs(arq);
  uint32_t wnd = arq->s.snd_wnd < arq->peer_wnd ? arq->s.snd_wnd
                                                : arq->peer_wnd;

  return wait < wnd;
}

size_t tun_arq_write_msg(tun_arq *arq, const uint8_t *data, size_t len) {
  size_t before = arq->sndq_len, taken;

  if (len == 0 || len > tun_arq_send_space(arq)) {
    return 0;
  }
  /* KCP's stream mode fills the last segment still queued; one already
     cut ends where the bytes before these end. */
  if (before > 0 && arq->ncut < ARQ_MAX_CUTS &&
      (arq->ncut == 0 || arq->cut[arq->ncut - 1] != before) &&
      (uint64_t)(arq->snd_nxt - arq->snd_una) + arq_queued_segs(arq) <=
          arq_peer_window(arq)) {
    arq->cut[arq->ncut++] = before;
  }
  taken = tun_arq_write(arq, data, len);
  assert(taken == len);
  return taken;
}

/* ------------------------------------------------------------------ */
/* Receive buffer                                                       */
/* ------------------------------------------------------------------ */

size_t tun_arq_read(tun_arq *arq, uint8_t *out, size_t cap) {
  size_t done = 0;

  while (done < cap && arq->rd_sn != arq->rcv_nxt) {
    arq_rseg *r = arq_rslot(arq, arq->rd_sn);
    size_t chunk = r->len - arq->rd_off;

    assert(r->present);
    if (chunk > cap - done) {
      chunk = cap - done;
    }
    memcpy(out + done, r->data + arq->rd_off, chunk);
    done += chunk;
    arq->rd_off += chunk;
    if (arq->rd_off == r->len) {
      r->present = 0;
      arq->rd_off = 0;
      ++arq->rd_sn;
    }
  }
  return done;
}

/* ------------------------------------------------------------------ */
/* Wire helpers                                                         */
/* ------------------------------------------------------------------ */

static uint32_t arq_get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

static uint16_t arq_get16(const uint8_t *p) {
  return (uint16_t)((unsigned)p[0] << 8 | (unsigned)p[1]);
}

/* ------------------------------------------------------------------ */
/* Input                                                                */
/* ------------------------------------------------------------------ */

void tun_arq_rtt_update(rp_duration *psrtt, rp_duration *prttvar,
                        rp_duration rtt) {
  if (*psrtt == RP_TSTAMP_UNSET) {
    *psrtt = rtt;
    *prttvar = rtt / 2;
  } else {
    rp_duration diff = *psrtt > rtt ? *psrtt - rtt : rtt - *psrtt;

    *prttvar = (3 * *prttvar + diff) / 4;
    *psrtt = (7 * *psrtt + rtt) / 8;
  }
}

/* arq_kcp_rtt_update is kcp-go's estimator (its update_ack): as RFC
   6298 but a sample under srtt - rttvar moves rttvar by 1/32. */
static void arq_kcp_rtt_update(tun_arq *arq, rp_duration rtt) {
  rp_duration diff;

  if (arq->srtt == RP_TSTAMP_UNSET) {
    arq->srtt = rtt;
    arq->rttvar = rtt / 2;
    return;
  }
  diff = arq->srtt > rtt ? arq->srtt - rtt : rtt - arq->srtt;
  arq->srtt = (7 * arq->srtt + rtt) / 8;
  if (rtt + arq->rttvar < arq->srtt) {
    arq->rttvar = (31 * arq->rttvar + diff) / 32;
  } else {
    arq->rttvar = (3 * arq->rttvar + diff) / 4;
  }
}

static void arq_rtt_sample(tun_arq *arq, rp_duration r) {
  rp_duration var4, rto;

  if (arq->s.kcp_timers) {
    arq_kcp_rtt_update(arq, r);
  } else {
    tun_arq_rtt_update(&arq->srtt, &arq->rttvar, r);
  }
  var4 = 4 * arq->rttvar;
  if (var4 < ARQ_RTT_GRANULARITY) {
    var4 = ARQ_RTT_GRANULARITY;
  }
  rto = arq->srtt + var4;
  if (rto < arq->s.rto_min) {
    rto = arq->s.rto_min;
  }
  if (rto > arq->s.rto_max) {
    rto = arq->s.rto_max;
  }
  arq->rto = rto;
}

/* arq_ack_seg releases the acked segment |g| and returns the order of its
   last send. */
static uint64_t arq_ack_seg(tun_arq *arq, arq_sseg *g, rp_tstamp now) {
  uint64_t order = g->tx_order;

  if (!arq->s.kcp_timers && g->xmit == 1 && now >= g->sent_at) {
    arq_rtt_sample(arq, now - g->sent_at);
  }
  arq->st.bytes_acked += g->len;
  --arq->unacked;
  g->used = 0;
  g->sacked = 0;
  g->resend = 0;
  return order;
}

/* arq_sack_seg acks segment |sn| alone if it is in flight and not yet
   acked, keeping its slot until the cumulative ack passes it, and
   stores the order of its last send in |*porder|. Returns 1 if it was
   acked now. */
static int arq_sack_seg(tun_arq *arq, uint32_t sn, rp_tstamp now,
                        uint64_t *porder) {
  arq_sseg *g = arq_sslot(arq, sn);

  if ((uint32_t)(sn - arq->snd_una) >=
          (uint32_t)(arq->snd_nxt - arq->snd_una) ||
      !g->used || g->sacked) {
    return 0;
  }
  *porder = arq_ack_seg(arq, g, now);
  g->used = 1;
  g->sacked = 1;
  return 1;
}

void tun_arq_ack_list(tun_arq *arq, const tun_arq_sent *sent, rp_tstamp now) {
  size_t i, n = sent->n < TUN_ARQ_SENT_MAX ? sent->n : TUN_ARQ_SENT_MAX;
  uint64_t order;

  for (i = 0; i < n; ++i) {
    (void)arq_sack_seg(arq, sent->sn[i], now, &order);
  }
}

/* arq_kcp_fastacks counts KCP's fast acks of an ack frame (kcp-go's
   parse_fastack): for each segment of |fresh| (the |n| the frame's sack
   acked first: KCP acks a segment past its cumulative ack once), each
   segment still in flight below it that was sent before it. The
   cumulative ack counts none, as KCP's una does not. */
static void arq_kcp_fastacks(tun_arq *arq, const uint32_t *fresh, size_t n) {
  size_t i;

  for (i = 0; i < n; ++i) {
    uint64_t order = arq_sslot(arq, fresh[i])->tx_order;
    uint32_t sn;

    for (sn = arq->snd_una; sn != fresh[i]; ++sn) {
      arq_sseg *g = arq_sslot(arq, sn);

      if (g->used && !g->sacked && g->tx_order < order) {
        ++g->fastack;
      }
    }
  }
}

/* arq_input_acks applies una, wnd and the sack bitmap. */
static void arq_input_acks(tun_arq *arq, uint32_t una, uint32_t wnd,
                           const uint8_t *sack, size_t sack_len,
                           rp_tstamp now) {
  uint64_t newest = 0, t;
  /* fresh lists the segments this frame's sack acked first. */
  uint32_t fresh[TUN_ARQ_MAX_SACK * 8];
  size_t nfresh = 0;
  int any = 0;
  uint32_t sn;
  size_t i;

  /* An una past what we sent, or behind what is already acked, is stale
     or hostile: use only the part that makes sense. */
  if ((uint32_t)(una - arq->snd_una) <=
      (uint32_t)(arq->snd_nxt - arq->snd_una)) {
    while (arq->snd_una != una) {
      arq_sseg *g = arq_sslot(arq, arq->snd_una);

      if (g->used && !g->sacked) {
        t = arq_ack_seg(arq, g, now);
        newest = any && newest > t ? newest : t;
        any = 1;
      } else {
        g->used = 0;
        g->sacked = 0;
      }
      ++arq->snd_una;
    }
    arq->peer_wnd = wnd;
  }
  for (i = 0; i < sack_len * 8; ++i) {
    if (!(sack[i / 8] & (1u << (i % 8)))) {
      continue;
    }
    sn = una + 1 + (uint32_t)i;
    if (arq_sack_seg(arq, sn, now, &t)) {
      if (nfresh < sizeof(fresh) / sizeof(fresh[0])) {
        fresh[nfresh++] = sn;
      }
      newest = any && newest > t ? newest : t;
      any = 1;
    }
  }
  if (arq->s.kcp_timers) {
    arq_kcp_fastacks(arq, fresh, nfresh);
    return;
  }
  /* Release sacked segments that the una now covers (already done above)
     and apply fast retransmit. */
  if (!any || arq->s.fast_resend == 0) {
    return;
  }
  for (sn = arq->snd_una; sn != arq->snd_nxt; ++sn) {
    arq_sseg *g = arq_sslot(arq, sn);

    if (!g->used || g->sacked || g->resend || g->tx_order >= newest) {
      continue;
    }
    /* Reordering window (after RACK, RFC 8985): a segment younger than
       5/4 srtt may be on a slower path (another resolver), not lost. */
    if (arq->srtt != RP_TSTAMP_UNSET &&
        !rp_tstamp_elapsed(g->sent_at, arq->srtt + arq->srtt / ARQ_REO_DIV,
                           now)) {
      continue;
    }
    if (++g->fastack >= arq->s.fast_resend) {
      g->fastack = 0;
      g->resend = 1;
      arq->due_lb = 0;
      ++arq->st.fast_retransmits;
    }
  }
}

/* arq_input_kcp applies a kcp_timers frame's acks: its sack area is the
   echo of the peer's last received send time, then the bitmap. A new
   echo is a round-trip sample, as KCP times each packet of acks by the
   last one's echo. */
static void arq_input_kcp(tun_arq *arq, uint32_t una, uint32_t wnd,
                          const uint8_t *sack, size_t sack_len,
                          rp_tstamp now) {
  uint32_t echo;

  if (sack_len < ARQ_KCP_TS) {
    arq_input_acks(arq, una, wnd, NULL, 0, now);
    return;
  }
  arq_input_acks(arq, una, wnd, sack + ARQ_KCP_TS, sack_len - ARQ_KCP_TS,
                 now);
  echo = arq_get32(sack);
  if (echo != 0 && echo != arq->echo_seen &&
      (int32_t)(arq_ms(now) - echo) >= 0) {
    arq->echo_seen = echo;
    arq_rtt_sample(arq, (rp_duration)(arq_ms(now) - echo) * RP_MILLISECONDS);
  }
}

int tun_arq_input(tun_arq *arq, const uint8_t *data, size_t len,
                  rp_tstamp now) {
  size_t pos, sack_len;
  uint32_t una, wnd;
  int nsegs = 0;

  if (len < TUN_ARQ_HDR_FIXED) {
    ++arq->st.malformed;
    return RP_ERR_MALFORMED;
  }
  una = arq_get32(data);
  wnd = arq_get16(data + 4);
  sack_len = data[6];
  if (sack_len > TUN_ARQ_MAX_SACK || len < TUN_ARQ_HDR_FIXED + sack_len) {
    ++arq->st.malformed;
    return RP_ERR_MALFORMED;
  }
  if (arq->s.kcp_timers) {
    arq_input_kcp(arq, una, wnd, data + TUN_ARQ_HDR_FIXED, sack_len, now);
  } else {
    arq_input_acks(arq, una, wnd, data + TUN_ARQ_HDR_FIXED, sack_len, now);
  }
  pos = TUN_ARQ_HDR_FIXED + sack_len;
  while (pos < len) {
    uint32_t sn;
    size_t slen;

    if (len - pos < arq->seg_hdr) {
      ++arq->st.malformed;
      return RP_ERR_MALFORMED;
    }
    sn = arq_get32(data + pos);
    slen = arq_get16(data + pos + 4);
    if (arq->s.kcp_timers &&
        (int32_t)(sn - (arq->rd_sn + arq->s.rcv_wnd)) < 0) {
      /* KCP acks, with its send time, every segment short of the
         window's end: duplicates of delivered ones too. */
      arq->rx_ts = arq_get32(data + pos + TUN_ARQ_SEG_HDR);
    }
    pos += arq->seg_hdr;
    if (slen == 0 || slen > arq->s.peer_mss || slen > len - pos) {
      ++arq->st.malformed;
      return RP_ERR_MALFORMED;
    }
    ++nsegs;
    ++arq->st.segs_received;
    arq->rcv_last = sn;
    arq->rcv_beyond = 0;
    arq->ack_pending = 1;
    if ((uint32_t)(sn - arq->rcv_nxt) >= arq_rcv_free(arq)) {
      /* Already delivered, or beyond the window. */
      ++arq->st.dup_received;
      if ((int32_t)(sn - arq->rcv_nxt) >= 0) {
        arq->rcv_beyond = 1;
        ++arq->st.beyond;
      }
    } else {
      arq_rseg *r = arq_rslot(arq, sn);

      if (r->present) {
        ++arq->st.dup_received;
      } else {
        memcpy(r->data, data + pos, slen);
        r->len = (uint16_t)slen;
        r->present = 1;
        if ((uint32_t)(sn + 1 - arq->rcv_nxt) >
            (uint32_t)(arq->rcv_hi - arq->rcv_nxt)) {
          arq->rcv_hi = sn + 1;
        }
        while (arq_rcv_free(arq) > 0 && arq_rslot(arq, arq->rcv_nxt)->present) {
          ++arq->rcv_nxt;
        }
      }
    }
    pos += slen;
  }
  return nsegs;
}

/* ------------------------------------------------------------------ */
/* Timers                                                               */
/* ------------------------------------------------------------------ */

rp_tstamp tun_arq_get_expiry(const tun_arq *arq) {
  rp_tstamp best = RP_TSTAMP_UNSET;
  uint32_t sn;

  for (sn = arq->snd_una; sn != arq->snd_nxt; ++sn) {
    const arq_sseg *g = &arq->sseg[sn % arq->s.snd_wnd];
    rp_tstamp t;

    if (!g->used || g->sacked || g->resend) {
      continue;
    }
    t = rp_tstamp_add(g->sent_at, g->rto);
    if (t < best) {
      best = t;
    }
  }
  if (best != RP_TSTAMP_UNSET && arq->s.timeout_tick > 0 &&
      best % arq->s.timeout_tick != 0) {
    /* Noticed at the next tick. */
    best = rp_tstamp_add(best - best % arq->s.timeout_tick,
                         arq->s.timeout_tick);
  }
  return best;
}

void tun_arq_handle_expiry(tun_arq *arq, rp_tstamp now) {
  uint32_t sn;

  now = arq_tick_floor(arq, now);
  if (now < arq->due_lb) {
    return;
  }
  for (sn = arq->snd_una; sn != arq->snd_nxt; ++sn) {
    arq_sseg *g = arq_sslot(arq, sn);

    if (g->used && !g->sacked && !g->resend &&
        rp_tstamp_elapsed(g->sent_at, g->rto, now)) {
      g->resend = 1;
      arq->due_lb = 0;
      ++arq->st.timeouts;
    }
  }
}

uint32_t tun_arq_rcv_next(const tun_arq *arq) { return arq->rcv_nxt; }

uint32_t tun_arq_rcv_last(const tun_arq *arq) { return arq->rcv_last; }

int tun_arq_rcv_beyond(const tun_arq *arq) { return arq->rcv_beyond; }

int tun_arq_rcv_present(const tun_arq *arq, uint32_t sn) {
  uint32_t ahead = arq->rcv_hi - arq->rcv_nxt;

  return (uint32_t)(sn - arq->rcv_nxt) < ahead &&
         arq->rseg[sn % arq->s.rcv_wnd].present;
}

void tun_arq_get_stats(const tun_arq *arq, tun_arq_stats *stats) {
  *stats = arq->st;
  stats->srtt = arq->srtt;
  stats->rttvar = arq->rttvar;
  stats->rto = arq->rto;
}
