/*
 * test_arq.c: the reliable stream engine under loss, reordering and
 * duplication, with a fake clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arq.h"
#include "rp_test_mem.h"

/* Link model of one direction. */
#define LINK_SLOTS 4096
#define FRAME_MAX 1024

typedef struct link_frame {
  rp_tstamp due;
  size_t len;
  uint8_t data[FRAME_MAX];
} link_frame;

typedef struct link {
  link_frame *q;
  size_t n;
  /* loss_pct, dup_pct: chances in percent; jitter_ms: random extra delay
     that reorders frames. */
  unsigned loss_pct, dup_pct, jitter_ms, delay_ms;
} link;

static uint64_t rng_state;

static uint32_t rng(void) {
  /* xorshift64*: deterministic for a seed. */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}

static uint8_t pattern(uint64_t i, uint8_t seed) {
  return (uint8_t)(((i * 0x9E3779B97F4A7C15ULL) >> 56) ^ seed);
}

static void link_put(link *l, const uint8_t *data, size_t len, rp_tstamp now) {
  unsigned copies = 1, c;

  if (rng() % 100 < l->loss_pct) {
    return;
  }
  if (rng() % 100 < l->dup_pct) {
    copies = 2;
  }
  for (c = 0; c < copies && l->n < LINK_SLOTS; ++c) {
    link_frame *f = &l->q[l->n++];

    f->due = now + (l->delay_ms + (l->jitter_ms ? rng() % l->jitter_ms : 0)) *
                       RP_MILLISECONDS;
    f->len = len;
    memcpy(f->data, data, len);
  }
}

/* link_deliver feeds every due frame to |dst|. */
static void link_deliver(link *l, tun_arq *dst, rp_tstamp now) {
  size_t i = 0;

  while (i < l->n) {
    if (l->q[i].due <= now) {
      assert_true(tun_arq_input(dst, l->q[i].data, l->q[i].len, now) >= 0);
      l->q[i] = l->q[--l->n];
    } else {
      ++i;
    }
  }
}

typedef struct xfer_result {
  uint64_t retransmissions, fast;
  rp_tstamp took;
} xfer_result;

/* run_transfer moves |nbytes| each way between two arqs over links with
   the given behaviour and checks every byte. */
static void run_transfer(size_t nbytes_ab, size_t nbytes_ba, unsigned loss,
                         unsigned dup, unsigned jitter, uint64_t seed,
                         xfer_result *res) {
  tun_arq_settings sa, sb;
  tun_arq *a, *b;
  link ab = {
      .loss_pct = loss, .dup_pct = dup, .jitter_ms = jitter, .delay_ms = 5};
  link ba = ab;
  size_t wa = 0, wb = 0, ra = 0, rb = 0, n, i;
  uint8_t buf[FRAME_MAX], src[512];
  rp_tstamp now = 0;
  tun_arq_stats st;
  int steps = 0;

  rng_state = seed;
  ab.q = test_calloc(LINK_SLOTS, sizeof(link_frame));
  ba.q = test_calloc(LINK_SLOTS, sizeof(link_frame));
  tun_arq_settings_default(&sa);
  sa.mss = 900;
  sa.peer_mss = 120;
  sb = sa;
  sb.mss = 120;
  sb.peer_mss = 900;
  assert_int_equal(tun_arq_new(&a, &sa, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_new(&b, &sb, rp_test_mem_plain()), 0);

  while (ra < nbytes_ba || rb < nbytes_ab) {
    rp_ssize flen;

    assert_true(++steps < 200000);
    /* Writers keep their buffers full. */
    while (wa < nbytes_ab) {
      n = nbytes_ab - wa < sizeof(src) ? nbytes_ab - wa : sizeof(src);
      for (i = 0; i < n; ++i) {
        src[i] = pattern(wa + i, 0x11);
      }
      n = tun_arq_write(a, src, n);
      if (n == 0) {
        break;
      }
      wa += n;
    }
    while (wb < nbytes_ba) {
      n = nbytes_ba - wb < sizeof(src) ? nbytes_ba - wb : sizeof(src);
      for (i = 0; i < n; ++i) {
        src[i] = pattern(wb + i, 0x22);
      }
      n = tun_arq_write(b, src, n);
      if (n == 0) {
        break;
      }
      wb += n;
    }
    /* Each side sends a few frames a step, like queries and answers. */
    for (i = 0; i < 4; ++i) {
      flen = tun_arq_output(a, buf, 940, now, NULL);
      assert_true(flen >= TUN_ARQ_HDR_FIXED);
      link_put(&ab, buf, (size_t)flen, now);
      flen = tun_arq_output(b, buf, 140, now, NULL);
      assert_true(flen >= TUN_ARQ_HDR_FIXED);
      link_put(&ba, buf, (size_t)flen, now);
    }
    now += 2 * RP_MILLISECONDS;
    link_deliver(&ab, b, now);
    link_deliver(&ba, a, now);
    tun_arq_handle_expiry(a, now);
    tun_arq_handle_expiry(b, now);
    while ((n = tun_arq_read(b, buf, sizeof(buf))) > 0) {
      for (i = 0; i < n; ++i) {
        assert_int_equal(buf[i], pattern(rb + i, 0x11));
      }
      rb += n;
    }
    while ((n = tun_arq_read(a, buf, sizeof(buf))) > 0) {
      for (i = 0; i < n; ++i) {
        assert_int_equal(buf[i], pattern(ra + i, 0x22));
      }
      ra += n;
    }
  }
  assert_int_equal(rb, nbytes_ab);
  assert_int_equal(ra, nbytes_ba);
  tun_arq_get_stats(a, &st);
  res->retransmissions = st.retransmissions;
  res->fast = st.fast_retransmits;
  res->took = now;
  tun_arq_del(a);
  tun_arq_del(b);
  test_free(ab.q);
  test_free(ba.q);
}

static void test_arq_clean(void **state) {
  xfer_result r;

  (void)state;
  run_transfer(300000, 30000, 0, 0, 0, 1, &r);
  assert_int_equal(r.retransmissions, 0);
}

static void test_arq_loss(void **state) {
  xfer_result r;

  (void)state;
  run_transfer(300000, 30000, 30, 0, 0, 2, &r);
  assert_true(r.retransmissions > 0);
}

static void test_arq_reorder_dup(void **state) {
  xfer_result r;

  (void)state;
  run_transfer(300000, 30000, 10, 20, 40, 3, &r);
}

static void test_arq_heavy_loss_fast_retransmit(void **state) {
  xfer_result r;

  (void)state;
  run_transfer(200000, 20000, 50, 10, 20, 4, &r);
  assert_true(r.fast > 0);
}

/* A single lost segment is resent after about one rto, and the rto
   follows srtt + 4 rttvar. */
static void test_arq_rto(void **state) {
  tun_arq_settings s;
  tun_arq *a, *b;
  uint8_t buf[1024], data[100];
  rp_ssize n;
  rp_tstamp now = 0;
  tun_arq_stats st;
  int i;

  (void)state;
  memset(data, 7, sizeof(data));
  tun_arq_settings_default(&s);
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_new(&b, &s, rp_test_mem_plain()), 0);
  /* Twenty exchanges with a 200 ms round trip. */
  for (i = 0; i < 20; ++i) {
    assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
    n = tun_arq_output(a, buf, sizeof(buf), now, NULL);
    now += 100 * RP_MILLISECONDS;
    assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 1);
    n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
    now += 100 * RP_MILLISECONDS;
    assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 0);
  }
  tun_arq_get_stats(a, &st);
  assert_true(st.srtt >= 190 * RP_MILLISECONDS &&
              st.srtt <= 210 * RP_MILLISECONDS);
  assert_true(st.rto >= 200 * RP_MILLISECONDS &&
              st.rto <= 300 * RP_MILLISECONDS);
  /* Lose one segment: nothing is due before the rto, it is due after. */
  assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
  n = tun_arq_output(a, buf, sizeof(buf), now, NULL);
  assert_true(n > 0);
  assert_int_equal(tun_arq_get_expiry(a), now + st.rto);
  tun_arq_handle_expiry(a, now + st.rto - 1);
  assert_int_equal(tun_arq_want_output(a, now + st.rto - 1), 0);
  tun_arq_handle_expiry(a, now + st.rto);
  assert_true(tun_arq_want_output(a, now + st.rto) & TUN_ARQ_WANT_DATA);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.timeouts, 1);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* Hostile frames never crash the engine nor break its state. */
static void test_arq_hostile(void **state) {
  tun_arq_settings s;
  tun_arq *a;
  uint8_t buf[256];
  size_t i, len;
  int k;

  (void)state;
  rng_state = 99;
  tun_arq_settings_default(&s);
  s.peer_mss = 64;
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  for (k = 0; k < 20000; ++k) {
    len = rng() % sizeof(buf);
    for (i = 0; i < len; ++i) {
      buf[i] = (uint8_t)rng();
    }
    if (k % 3 == 0 && len > 7) {
      /* A plausible header with a wild segment. */
      buf[6] = (uint8_t)(rng() % 40);
    }
    (void)tun_arq_input(a, buf, len, (rp_tstamp)k);
    (void)tun_arq_output(a, buf, sizeof(buf), (rp_tstamp)k, NULL);
  }
  /* Too short, bad sack length, segment longer than the frame. */
  assert_int_equal(tun_arq_input(a, buf, 3, 0), RP_ERR_MALFORMED);
  memset(buf, 0, sizeof(buf));
  buf[6] = TUN_ARQ_MAX_SACK + 1;
  assert_int_equal(tun_arq_input(a, buf, 100, 0), RP_ERR_MALFORMED);
  buf[6] = 0;
  buf[11] = 0;
  buf[12] = 200;
  assert_int_equal(tun_arq_input(a, buf, 20, 0), RP_ERR_MALFORMED);
  tun_arq_del(a);
}

/* A nacked segment is due at once and keeps its timeout (no backoff). */
static void test_arq_nack(void **state) {
  tun_arq_settings s;
  tun_arq *a;
  tun_arq_sent sent;
  uint8_t buf[1024], data[300];
  rp_ssize n;
  rp_tstamp now = 0, exp1, exp2;

  (void)state;
  memset(data, 1, sizeof(data));
  tun_arq_settings_default(&s);
  s.mss = 100;
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
  n = tun_arq_output(a, buf, 113, now, &sent);
  assert_true(n > 0);
  assert_int_equal(sent.n, 1);
  assert_int_equal(sent.sn[0], 0);
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.n, 2);
  assert_int_equal(sent.sn[0], 1);
  assert_int_equal(sent.sn[1], 2);
  exp1 = tun_arq_get_expiry(a);
  assert_int_equal(exp1, now + s.rto_initial);
  now += RP_MILLISECONDS;
  sent = (tun_arq_sent){.n = 1, .sn = {1}};
  tun_arq_nack(a, &sent);
  assert_true(tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA);
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.n, 1);
  assert_int_equal(sent.sn[0], 1);
  /* Resent with the same timeout, from now. */
  exp2 = tun_arq_get_expiry(a);
  assert_int_equal(exp2, exp1);
  /* A nack of an unknown or acked segment does nothing. */
  sent = (tun_arq_sent){.n = 2, .sn = {7, 1000}};
  tun_arq_nack(a, &sent);
  assert_int_equal(tun_arq_want_output(a, now), 0);
  tun_arq_del(a);
}

/* tun_arq_output_repeat: a frame carrying again a segment the peer
   acked, which the peer counts as a duplicate; nothing before a segment
   went out. */
static void test_arq_output_repeat(void **state) {
  tun_arq_settings s;
  tun_arq *a, *b;
  tun_arq_stats st;
  uint8_t buf[1024], data[250];
  rp_ssize n;
  rp_tstamp now = 0;

  (void)state;
  memset(data, 3, sizeof(data));
  tun_arq_settings_default(&s);
  s.mss = 100;
  s.peer_mss = 100;
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_new(&b, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_output_repeat(a, buf, sizeof(buf)), 0);
  assert_int_equal(tun_arq_output_repeat(a, buf, TUN_ARQ_HDR_FIXED - 1),
                   RP_ERR_NOBUF);
  assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
  n = tun_arq_output(a, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 3);
  n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 0);
  assert_true(tun_arq_send_idle(a));
  assert_int_equal(tun_arq_read(b, buf, sizeof(buf)), sizeof(data));
  /* No room for a segment: nothing. */
  assert_int_equal(tun_arq_output_repeat(
                       a, buf, TUN_ARQ_HDR_FIXED + TUN_ARQ_SEG_HDR),
                   0);
  n = tun_arq_output_repeat(a, buf, sizeof(buf));
  assert_int_equal(n, TUN_ARQ_HDR_FIXED + TUN_ARQ_SEG_HDR + 100);
  assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 1);
  tun_arq_get_stats(b, &st);
  assert_int_equal(st.dup_received, 1);
  assert_int_equal(tun_arq_read(b, buf, sizeof(buf)), 0);
  /* Its timers untouched: nothing due. */
  assert_int_equal(tun_arq_get_expiry(a), RP_TSTAMP_UNSET);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* tun_arq_output_seg: one segment at a time, resends due first, each
   marked sent (timed) as tun_arq_output marks it; the peer takes them
   framed behind an ack header. */
static void test_arq_output_seg(void **state) {
  tun_arq_settings s;
  tun_arq *a, *b;
  uint8_t seg[3][200], frame[1024], data[250], buf[512];
  rp_ssize n[3];
  rp_tstamp now = 0;
  size_t pos;
  int i;

  (void)state;
  memset(data, 5, sizeof(data));
  tun_arq_settings_default(&s);
  s.mss = 100;
  s.peer_mss = 100;
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_new(&b, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_output_seg(a, seg[0], TUN_ARQ_SEG_HDR, now),
                   RP_ERR_NOBUF);
  assert_int_equal(tun_arq_output_seg(a, seg[0], sizeof(seg[0]), now), 0);
  assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
  for (i = 0; i < 3; ++i) {
    n[i] = tun_arq_output_seg(a, seg[i], sizeof(seg[i]), now);
  }
  assert_int_equal(n[0], TUN_ARQ_SEG_HDR + 100);
  assert_int_equal(n[2], TUN_ARQ_SEG_HDR + 50);
  assert_int_equal(tun_arq_output_seg(a, seg[0], sizeof(seg[0]), now), 0);
  assert_int_equal(tun_arq_get_expiry(a), now + s.rto_initial);
  /* Framed in the order 2, 0 behind a's ack header: b holds both. */
  pos = (size_t)tun_arq_output(a, frame, TUN_ARQ_HDR_FIXED, now, NULL);
  memcpy(frame + pos, seg[2], (size_t)n[2]);
  pos += (size_t)n[2];
  memcpy(frame + pos, seg[0], (size_t)n[0]);
  pos += (size_t)n[0];
  assert_int_equal(tun_arq_input(b, frame, pos, now), 2);
  assert_int_equal(tun_arq_read(b, buf, sizeof(buf)), 100);
  /* b's ack covers 0 and 2: segment 1 alone is due after its timeout. */
  pos = (size_t)tun_arq_output(b, frame, sizeof(frame), now, NULL);
  assert_int_equal(tun_arq_input(a, frame, pos, now), 0);
  now += s.rto_initial;
  n[1] = tun_arq_output_seg(a, seg[1], sizeof(seg[1]), now);
  assert_int_equal(n[1], TUN_ARQ_SEG_HDR + 100);
  assert_int_equal(seg[1][3], 1);
  assert_int_equal(tun_arq_output_seg(a, seg[0], sizeof(seg[0]), now), 0);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* ack_held: frames ack what had arrived at the last tun_arq_ack_flush,
   not what arrived since (KCP sends its acks when it flushes). */
static void test_arq_ack_held(void **state) {
  tun_arq_settings s;
  tun_arq *a, *b;
  tun_arq_stats st;
  uint8_t buf[1024], data[100];
  rp_ssize n;
  rp_tstamp now = 0;

  (void)state;
  memset(data, 3, sizeof(data));
  tun_arq_settings_default(&s);
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  s.ack_held = 1;
  assert_int_equal(tun_arq_new(&b, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
  n = tun_arq_output(a, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 1);
  /* b's next frame, before a flush, acks nothing: a still waits. */
  n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 0);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.bytes_acked, 0);
  /* After the flush the ack goes out, in every frame from then on. */
  tun_arq_ack_flush(b);
  n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 0);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.bytes_acked, sizeof(data));
  /* Without ack_held the flush is a no-op and every frame acks. */
  tun_arq_ack_flush(a);
  assert_int_equal(tun_arq_write(b, data, sizeof(data)), sizeof(data));
  n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 1);
  n = tun_arq_output(a, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 0);
  tun_arq_get_stats(b, &st);
  assert_int_equal(st.bytes_acked, sizeof(data));
  tun_arq_del(a);
  tun_arq_del(b);
}

/* seg_pair makes |*a| and |*b|: segments of 100 bytes, one a frame, a
   send window of |wnd|; |*a| with |send_held| and |unacked_max|, and the
   |len| bytes of |data| (filled here) written to it. */
static void seg_pair(tun_arq **a, tun_arq **b, uint32_t wnd, int send_held,
                     uint32_t unacked_max, uint8_t *data, size_t len) {
  tun_arq_settings s;

  memset(data, 5, len);
  tun_arq_settings_default(&s);
  s.mss = 100;
  s.snd_wnd = wnd;
  s.max_segs = 1;
  assert_int_equal(tun_arq_new(b, &s, rp_test_mem_plain()), 0);
  s.send_held = send_held;
  s.unacked_max = unacked_max;
  assert_int_equal(tun_arq_new(a, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_write(*a, data, len), len);
}

/* send_held: new segments go in flight only up to the window as it was
   at the last tun_arq_send_flush (KCP moves queued data into flight when
   it flushes). */
static void test_arq_send_held(void **state) {
  tun_arq *a, *b;
  tun_arq_sent sent;
  uint8_t buf[1024], data[1000];
  rp_ssize n;
  rp_tstamp now = 0;
  int i;

  (void)state;
  seg_pair(&a, &b, 4, 1, 0, data, sizeof(data));
  /* Nothing before the first flush. */
  assert_int_equal(tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA, 0);
  tun_arq_send_flush(a);
  /* Then the window: four segments, one a frame. */
  for (i = 0; i < 4; ++i) {
    assert_true(tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA);
    n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
    assert_int_equal(sent.n, 1);
    assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 1);
  }
  assert_int_equal(tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA, 0);
  /* b acks all four: the window is open, but nothing new goes before
     the next flush. */
  n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 0);
  assert_int_equal(tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA, 0);
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.n, 0);
  tun_arq_send_flush(a);
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.n, 1);
  assert_int_equal(sent.sn[0], 4);
  /* Without send_held the flush is a no-op: b sends as its window
     allows. */
  tun_arq_send_flush(b);
  assert_int_equal(tun_arq_write(b, data, 200), 200);
  assert_true(tun_arq_want_output(b, now) & TUN_ARQ_WANT_DATA);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* window_full counts the frames that had room and bytes queued but
   could open no segment: the window full of segments not yet acked. A
   frame with nothing queued, or one a resend filled, is not counted. */
static void test_arq_window_full(void **state) {
  tun_arq *a, *b;
  tun_arq_stats st;
  tun_arq_sent sent;
  uint8_t buf[1024], data[500];
  rp_ssize n;
  rp_tstamp now = 0;
  int i;

  (void)state;
  seg_pair(&a, &b, 2, 0, 0, data, sizeof(data));
  for (i = 0; i < 2; ++i) {
    n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
    assert_int_equal(sent.n, 1);
    assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 1);
  }
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.window_full, 0);
  /* Two in flight, three segments' bytes queued: acks only. */
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.n, 0);
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.window_full, 2);
  /* A due resend fills the frame (one segment a frame): not counted. */
  now += 2 * RP_SECONDS;
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.n, 1);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.window_full, 2);
  /* b's acks open the window: new segments go, until nothing is queued
     (then nothing is counted either). */
  n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 0);
  for (i = 0; i < 3; ++i) {
    n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
    assert_int_equal(sent.n, 1);
    assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 1);
    n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
    assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 0);
  }
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.n, 0);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.window_full, 2);
  (void)n;
  tun_arq_del(a);
  tun_arq_del(b);
}

/* lose_first_of_three sends three segments from |a| (unacked_max 3),
   then nothing: 0 is lost, 1 and 2 reach |b|. */
static void lose_first_of_three(tun_arq *a, tun_arq *b, rp_tstamp now) {
  tun_arq_sent sent;
  uint8_t buf[1024];
  rp_ssize n;
  int i;

  for (i = 0; i < 3; ++i) {
    assert_true(tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA);
    n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
    assert_int_equal(sent.n, 1);
    assert_int_equal(sent.sn[0], (uint32_t)i);
    if (i > 0) {
      assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 1);
    }
  }
  assert_int_equal(tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA, 0);
}

/* unacked_max bounds the segments sent and not acked, not their span:
   with the oldest lost, the segments the peer sacked make room for new
   ones beyond it; the receiver's gaps (tun_arq_rcv_next, _last,
   _present) show the lost one. */
static void test_arq_unacked_max(void **state) {
  tun_arq *a, *b;
  tun_arq_sent sent;
  uint8_t buf[1024], data[1000];
  rp_ssize n;
  rp_tstamp now = 0;
  int i;

  (void)state;
  seg_pair(&a, &b, 16, 0, 3, data, sizeof(data));
  lose_first_of_three(a, b, now);
  assert_int_equal(tun_arq_rcv_next(b), 0);
  assert_int_equal(tun_arq_rcv_last(b), 2);
  assert_false(tun_arq_rcv_present(b, 0));
  assert_true(tun_arq_rcv_present(b, 1));
  assert_true(tun_arq_rcv_present(b, 2));
  assert_false(tun_arq_rcv_present(b, 3));
  /* b sacks 1 and 2: two new segments go beyond the lost one. */
  n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 0);
  for (i = 3; i < 5; ++i) {
    n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
    assert_int_equal(sent.n, 1);
    assert_int_equal(sent.sn[0], (uint32_t)i);
  }
  assert_int_equal(tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA, 0);
  /* Segment 0 delivered at last: b's gap is gone. */
  sent = (tun_arq_sent){.n = 1, .sn = {0}};
  tun_arq_nack(a, &sent);
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.sn[0], 0);
  assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 1);
  assert_int_equal(tun_arq_rcv_next(b), 3);
  assert_int_equal(tun_arq_rcv_last(b), 0);
  assert_false(tun_arq_rcv_present(b, 0));
  tun_arq_del(a);
  tun_arq_del(b);
}

/* tun_arq_ack_list: acks that name their segments free the unacked
   bound as a sack would, past any sack's reach; a segment not in
   flight, or already acked, changes nothing; the cumulative ack still
   passes the named ones. */
static void test_arq_ack_list(void **state) {
  tun_arq *a, *b;
  tun_arq_sent sent, named;
  tun_arq_stats st;
  uint8_t buf[1024], data[1000];
  rp_ssize n;
  rp_tstamp now = 0;
  int i;

  (void)state;
  seg_pair(&a, &b, 16, 0, 3, data, sizeof(data));
  lose_first_of_three(a, b, now);
  /* 1 and 2 acked by name (and 2 twice, and 9 never sent): two new
     segments go beyond the lost 0. */
  named = (tun_arq_sent){.n = 4, .sn = {1, 2, 2, 9}};
  tun_arq_ack_list(a, &named, now);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.bytes_acked, 200);
  for (i = 3; i < 5; ++i) {
    n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
    assert_int_equal(sent.n, 1);
    assert_int_equal(sent.sn[0], (uint32_t)i);
  }
  assert_int_equal(tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA, 0);
  /* 0 arrives; b's cumulative ack (through 2) passes the named ones and
     acks 0 alone. */
  sent = (tun_arq_sent){.n = 1, .sn = {0}};
  tun_arq_nack(a, &sent);
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.sn[0], 0);
  assert_int_equal(tun_arq_input(b, buf, (size_t)n, now), 1);
  n = tun_arq_output(b, buf, sizeof(buf), now, NULL);
  assert_int_equal(tun_arq_input(a, buf, (size_t)n, now), 0);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.bytes_acked, 300);
  n = tun_arq_output(a, buf, sizeof(buf), now, &sent);
  assert_int_equal(sent.n, 1);
  assert_int_equal(sent.sn[0], 5);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* tun_arq_settings_md: MasterDnsVPN's windows and timers, and no fast
   resend. */
static void test_arq_settings_md(void **state) {
  tun_arq_settings s;
  tun_arq *a;

  (void)state;
  tun_arq_settings_default(&s);
  tun_arq_settings_md(&s);
  assert_int_equal(s.snd_wnd, TUN_ARQ_MD_WND);
  assert_int_equal(s.rcv_wnd, TUN_ARQ_MD_WND);
  assert_int_equal(s.unacked_max, TUN_ARQ_MD_UNACKED);
  assert_int_equal(s.rto_initial, 500 * RP_MILLISECONDS);
  assert_int_equal(s.rto_min, 500 * RP_MILLISECONDS);
  assert_int_equal(s.rto_max, 3 * RP_SECONDS);
  assert_int_equal(s.fast_resend, 0);
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  tun_arq_del(a);
}

static void test_arq_failmalloc(void **state) {
  tun_arq_settings s;
  tun_arq *a = NULL;
  rp_test_mem tm;
  long n;
  int rv;

  (void)state;
  tun_arq_settings_default(&s);
  rp_test_mem_init(&tm);
  for (n = 0;; ++n) {
    rv =
        tun_arq_new(&a, &s, rp_test_mem_fail_at(&tm, n, RP_TEST_MEM_FAIL_FROM));
    if (rv == 0) {
      break;
    }
    assert_int_equal(rv, RP_ERR_NOMEM);
  }
  tun_arq_del(a);
  s.snd_wnd = 0;
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()),
                   RP_ERR_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arq_clean),
      cmocka_unit_test(test_arq_loss),
      cmocka_unit_test(test_arq_reorder_dup),
      cmocka_unit_test(test_arq_heavy_loss_fast_retransmit),
      cmocka_unit_test(test_arq_rto),
      cmocka_unit_test(test_arq_hostile),
      cmocka_unit_test(test_arq_nack),
      cmocka_unit_test(test_arq_output_repeat),
      cmocka_unit_test(test_arq_output_seg),
      cmocka_unit_test(test_arq_ack_held),
      cmocka_unit_test(test_arq_send_held),
      cmocka_unit_test(test_arq_window_full),
      cmocka_unit_test(test_arq_unacked_max),
      cmocka_unit_test(test_arq_ack_list),
      cmocka_unit_test(test_arq_settings_md),
      cmocka_unit_test(test_arq_failmalloc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
