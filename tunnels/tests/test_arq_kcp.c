/*
 * test_arq_kcp.c: the arq's kcp-go mode (kcp_timers: timeouts that grow
 * by the base rto, early resends, round trips from echoed send times),
 * its KCP-style writes (tun_arq_write_msg, tun_arq_kcp_writable) and the
 * ack header alone (tun_arq_ack_header), with a fake clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arq.h"
#include "rp_test_mem.h"

#define MS RP_MILLISECONDS

/* kcp_pair makes two kcp_timers arqs of payload |mss| and window |wnd|,
   one segment a frame. */
static void kcp_pair(tun_arq **a, tun_arq **b, size_t mss, uint32_t wnd) {
  tun_arq_settings s;

  tun_arq_settings_default(&s);
  tun_arq_settings_kcp(&s);
  s.mss = s.peer_mss = mss + TUN_ARQ_KCP_OVERHEAD;
  s.snd_wnd = s.rcv_wnd = wnd;
  s.max_segs = 1;
  assert_int_equal(tun_arq_new(a, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_new(b, &s, rp_test_mem_plain()), 0);
}

static void test_arq_kcp_settings(void **state) {
  tun_arq_settings s;
  tun_arq *a;
  uint8_t data[300], seg[300];

  (void)state;
  tun_arq_settings_default(&s);
  tun_arq_settings_kcp(&s);
  assert_int_equal(s.kcp_timers, 1);
  assert_int_equal(s.rto_initial, 200 * MS);
  assert_int_equal(s.rto_min, 100 * MS);
  assert_int_equal(s.rto_max, 60 * RP_SECONDS);
  assert_int_equal(s.fast_resend, 0);
  /* The send time and its echo come out of the mss. */
  s.mss = TUN_ARQ_KCP_OVERHEAD;
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()),
                   RP_ERR_INVALID_ARGUMENT);
  s.mss = 100 + TUN_ARQ_KCP_OVERHEAD;
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  memset(data, 1, sizeof(data));
  assert_int_equal(tun_arq_write(a, data, 150), 150);
  /* A segment of 100 bytes: its header, its send time, its payload. */
  assert_int_equal(tun_arq_output_seg(a, seg, sizeof(seg), 0),
                   TUN_ARQ_SEG_HDR + TUN_ARQ_KCP_OVERHEAD / 2 + 100);
  tun_arq_del(a);
}

/* A timed-out segment's timeout grows by the base rto at each resend,
   without rto_max's ceiling (kcp-go with nodelay off). */
static void test_arq_kcp_backoff(void **state) {
  tun_arq *a, *b;
  uint8_t data[10] = {0}, frame[256];
  rp_tstamp now = 0, due;
  int i;

  (void)state;
  kcp_pair(&a, &b, 100, 8);
  assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
  assert_true(tun_arq_output(a, frame, sizeof(frame), now, NULL) > 0);
  due = tun_arq_get_expiry(a);
  assert_int_equal(due - now, 200 * MS);
  for (i = 2; i <= 400; ++i) {
    now = due;
    tun_arq_handle_expiry(a, now);
    assert_true(tun_arq_output(a, frame, sizeof(frame), now, NULL) > 0);
    due = tun_arq_get_expiry(a);
    assert_int_equal(due - now, (rp_duration)i * 200 * MS);
  }
  /* 400 x 200 ms: past rto_max, which bounds only the base rto. */
  assert_true(due - now > 60 * RP_SECONDS);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* The round trip is timed from the send time the peer echoes: the copy
   it received, however long its ack waited; an echo seen before is no
   new sample. */
static void test_arq_kcp_echo(void **state) {
  tun_arq *a, *b;
  tun_arq_stats st;
  uint8_t data[10] = {0}, fa[256], fb[256];
  rp_ssize na, nb;

  (void)state;
  kcp_pair(&a, &b, 100, 8);
  assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
  na = tun_arq_output(a, fa, sizeof(fa), 0, NULL);
  assert_int_equal(tun_arq_input(b, fa, (size_t)na, 50 * MS), 1);
  /* b's ack leaves late: the sample is the whole 700 ms. */
  nb = tun_arq_output(b, fb, sizeof(fb), 600 * MS, NULL);
  assert_int_equal(tun_arq_input(a, fb, (size_t)nb, 700 * MS), 0);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.srtt, 700 * MS);
  assert_int_equal(st.rto, 700 * MS + 4 * 350 * MS);
  assert_int_equal(st.bytes_acked, sizeof(data));
  /* The same header again: nothing new. */
  assert_int_equal(tun_arq_input(a, fb, (size_t)nb, 900 * MS), 0);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.srtt, 700 * MS);
  /* Segment 1 goes at 800 ms and again at 850 (nacked). b gets the
     resend, then the late original: KCP acks a duplicate too, with its
     own send time, and the echo is the last one received (800 ms). */
  {
    uint8_t f1[256], f2[256];
    rp_ssize n1, n2;
    tun_arq_sent sent;

    assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
    n1 = tun_arq_output(a, f1, sizeof(f1), 800 * MS, &sent);
    tun_arq_nack(a, &sent);
    n2 = tun_arq_output(a, f2, sizeof(f2), 850 * MS, NULL);
    assert_int_equal(tun_arq_input(b, f2, (size_t)n2, 860 * MS), 1);
    assert_int_equal(tun_arq_input(b, f1, (size_t)n1, 870 * MS), 1);
  }
  nb = tun_arq_output(b, fb, sizeof(fb), 990 * MS, NULL);
  assert_int_equal(tun_arq_input(a, fb, (size_t)nb, 1000 * MS), 0);
  tun_arq_get_stats(a, &st);
  assert_int_equal(st.srtt, (7 * 700 * MS + 200 * MS) / 8);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* A segment sent before one an ack newly covered goes again at the next
   flush that opens no new segment (KCP's early retransmit), its timeout
   back to the base rto; a flush that opens one leaves it. */
static void test_arq_kcp_early(void **state) {
  tun_arq *a, *b;
  tun_arq_sent sent;
  uint8_t data[300] = {0}, f[3][256], fb[256];
  rp_ssize n[3], nb;
  rp_tstamp now = 10 * MS;
  int i;

  (void)state;
  kcp_pair(&a, &b, 100, 8);
  assert_int_equal(tun_arq_write(a, data, 300), 300);
  for (i = 0; i < 3; ++i) {
    n[i] = tun_arq_output(a, f[i], sizeof(f[i]), now, &sent);
    assert_int_equal(sent.n, 1);
  }
  /* Only segment 2 arrives; b's ack makes 0 and 1 fast-acked. */
  assert_int_equal(tun_arq_input(b, f[2], (size_t)n[2], now), 1);
  nb = tun_arq_output(b, fb, sizeof(fb), now, NULL);
  assert_int_equal(tun_arq_input(a, fb, (size_t)nb, now + MS), 0);
  /* New data opens a segment at this flush: no early resend. */
  assert_int_equal(tun_arq_write(a, data, 50), 50);
  tun_arq_send_flush(a);
  n[0] = tun_arq_output(a, f[0], sizeof(f[0]), now + MS, &sent);
  assert_int_equal(sent.n, 1);
  assert_int_equal(sent.sn[0], 3);
  /* Nothing new at the next one: 0 and 1 go at once, long before their
     200 ms timeout. */
  tun_arq_send_flush(a);
  for (i = 0; i < 2; ++i) {
    assert_true(tun_arq_want_output(a, now + 2 * MS) & TUN_ARQ_WANT_DATA);
    (void)tun_arq_output(a, f[i], sizeof(f[i]), now + 2 * MS, &sent);
    assert_int_equal(sent.n, 1);
    assert_int_equal(sent.sn[0], (uint32_t)i);
  }
  assert_int_equal(tun_arq_want_output(a, now + 2 * MS) & TUN_ARQ_WANT_DATA,
                   0);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* KCP counts fast acks from its per-segment acks only: a cumulative ack
   that covers a resent segment gives none to the segments sent before
   the resend (they were sent after it the first time, and a later
   sequence number is not passed over), and a sack counts none for the
   segments above it. Without the rule each early resend made more. */
static void test_arq_kcp_fastack_rule(void **state) {
  tun_arq *a, *b;
  tun_arq_sent sent, first;
  uint8_t data[400] = {0}, f[4][256], r0[256], fb[256];
  rp_ssize n[4], n0, nb;
  rp_tstamp now = 10 * MS;
  int i;

  (void)state;
  kcp_pair(&a, &b, 100, 8);
  assert_int_equal(tun_arq_write(a, data, 400), 400);
  for (i = 0; i < 4; ++i) {
    n[i] = tun_arq_output(a, f[i], sizeof(f[i]), now, &sent);
    assert_int_equal(sent.n, 1);
    assert_int_equal(sent.sn[0], (uint32_t)i);
    if (i == 0) {
      first = sent;
    }
  }
  tun_arq_nack(a, &first);
  /* Segment 0 goes again, after 1-3. b gets only that resend and acks
     it cumulatively. */
  n0 = tun_arq_output(a, r0, sizeof(r0), now + MS, &sent);
  assert_int_equal(sent.n, 1);
  assert_int_equal(sent.sn[0], 0);
  assert_int_equal(tun_arq_input(b, r0, (size_t)n0, now + 2 * MS), 1);
  nb = tun_arq_output(b, fb, sizeof(fb), now + 2 * MS, NULL);
  assert_int_equal(tun_arq_input(a, fb, (size_t)nb, now + 3 * MS), 0);
  /* A flush that opens nothing resends none of 1-3. */
  tun_arq_send_flush(a);
  assert_int_equal(tun_arq_want_output(a, now + 4 * MS) & TUN_ARQ_WANT_DATA,
                   0);
  /* b gets 2: its sack passes over 1 (sent before 2), not 3. */
  assert_int_equal(tun_arq_input(b, f[2], (size_t)n[2], now + 5 * MS), 1);
  nb = tun_arq_output(b, fb, sizeof(fb), now + 5 * MS, NULL);
  assert_int_equal(tun_arq_input(a, fb, (size_t)nb, now + 6 * MS), 0);
  tun_arq_send_flush(a);
  assert_true(tun_arq_want_output(a, now + 7 * MS) & TUN_ARQ_WANT_DATA);
  (void)tun_arq_output(a, f[0], sizeof(f[0]), now + 7 * MS, &sent);
  assert_int_equal(sent.n, 1);
  assert_int_equal(sent.sn[0], 1);
  assert_int_equal(tun_arq_want_output(a, now + 7 * MS) & TUN_ARQ_WANT_DATA,
                   0);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* tun_arq_write_msg: a write starts a segment of its own while the
   window takes what was queued before it (kcp-go flushes after each
   write), and fills the last queued segment once it does not;
   tun_arq_kcp_writable counts segments in flight and queued. */
static void test_arq_write_msg(void **state) {
  tun_arq_settings s;
  tun_arq *a, *b;
  uint8_t data[400] = {0}, seg[256], f[512];
  rp_ssize n;
  size_t lens[8], k = 0, pos;

  (void)state;
  tun_arq_settings_default(&s);
  s.mss = s.peer_mss = 100;
  s.snd_wnd = s.rcv_wnd = 3;
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_new(&b, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_write_msg(a, data, 0), 0);
  assert_int_equal(tun_arq_write_msg(a, data, 2), 2);
  assert_int_equal(tun_arq_kcp_writable(a), 1);
  /* 2 and 250: four segments, one past the window of 3. */
  assert_int_equal(tun_arq_write_msg(a, data, 250), 250);
  assert_int_equal(tun_arq_kcp_writable(a), 0);
  /* The window leaves the 50-byte segment queued: these fill it. */
  assert_int_equal(tun_arq_write_msg(a, data, 30), 30);
  pos = (size_t)tun_arq_output(a, f, TUN_ARQ_HDR_FIXED, 0, NULL);
  while ((n = tun_arq_output_seg(a, seg, sizeof(seg), 0)) > 0) {
    lens[k++] = (size_t)n - TUN_ARQ_SEG_HDR;
    memcpy(f + pos, seg, (size_t)n);
    pos += (size_t)n;
  }
  assert_int_equal(k, 3);
  assert_int_equal(lens[0], 2);
  assert_int_equal(lens[1], 100);
  assert_int_equal(lens[2], 100);
  /* Acked, the window lets the last one go. */
  assert_int_equal(tun_arq_input(b, f, pos, 0), 3);
  assert_int_equal(tun_arq_read(b, f, sizeof(f)), 202);
  n = tun_arq_output(b, f, sizeof(f), 0, NULL);
  assert_int_equal(tun_arq_input(a, f, (size_t)n, 0), 0);
  assert_int_equal(tun_arq_kcp_writable(a), 1);
  n = tun_arq_output_seg(a, seg, sizeof(seg), 0);
  assert_int_equal(n, TUN_ARQ_SEG_HDR + 80);
  /* With room in the window, the next write starts a new segment. */
  assert_int_equal(tun_arq_write_msg(a, data, 5), 5);
  assert_int_equal(tun_arq_write_msg(a, data, 5), 5);
  assert_int_equal(tun_arq_output_seg(a, seg, sizeof(seg), 0),
                   TUN_ARQ_SEG_HDR + 5);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* tun_arq_ack_header: the header a frame would carry, nothing sent. */
static void test_arq_ack_header(void **state) {
  tun_arq_settings s;
  tun_arq *a, *b;
  uint8_t data[50] = {0}, f[256], h[64];
  rp_ssize n;

  (void)state;
  tun_arq_settings_default(&s);
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_new(&b, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_ack_header(b, h, TUN_ARQ_HDR_FIXED - 1),
                   RP_ERR_NOBUF);
  assert_int_equal(tun_arq_write(a, data, sizeof(data)), sizeof(data));
  n = tun_arq_output(a, f, sizeof(f), 0, NULL);
  assert_int_equal(tun_arq_input(b, f, (size_t)n, 0), 1);
  n = tun_arq_ack_header(b, h, sizeof(h));
  assert_int_equal(n, TUN_ARQ_HDR_FIXED);
  assert_int_equal(h[3], 1);
  /* It is what the next frame carries, and an ack is still owed. */
  assert_true(tun_arq_want_output(b, 0) & TUN_ARQ_WANT_ACK);
  assert_int_equal(tun_arq_output(b, f, sizeof(f), 0, NULL), n);
  assert_memory_equal(f, h, (size_t)n);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* Both ends in kcp mode over a lossy, reordering link: every byte
   arrives in order. */
static void test_arq_kcp_transfer(void **state) {
  enum { N = 40000, STEPS = 200000 };
  tun_arq *a, *b;
  uint8_t src[100], f[256], out[512];
  size_t wrote = 0, got = 0, i;
  uint64_t rng = 7;
  rp_tstamp now = 0;
  int step;

  (void)state;
  kcp_pair(&a, &b, 100, 32);
  for (step = 0; step < STEPS && got < N; ++step) {
    rp_ssize n;
    size_t k;

    while (wrote < N && tun_arq_kcp_writable(a)) {
      k = N - wrote < sizeof(src) ? N - wrote : sizeof(src);
      for (i = 0; i < k; ++i) {
        src[i] = (uint8_t)((wrote + i) * 7);
      }
      assert_int_equal(tun_arq_write_msg(a, src, k), k);
      wrote += k;
    }
    now += MS;
    tun_arq_handle_expiry(a, now);
    if (step % 10 == 0) {
      tun_arq_send_flush(a);
    }
    n = tun_arq_output(a, f, sizeof(f), now, NULL);
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    if ((rng >> 33) % 10 != 0) {
      assert_true(tun_arq_input(b, f, (size_t)n, now) >= 0);
    }
    if (step % 3 == 0) {
      n = tun_arq_output(b, f, sizeof(f), now, NULL);
      rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
      if ((rng >> 33) % 10 != 0) {
        assert_true(tun_arq_input(a, f, (size_t)n, now) >= 0);
      }
    }
    while ((k = tun_arq_read(b, out, sizeof(out))) > 0) {
      for (i = 0; i < k; ++i) {
        assert_int_equal(out[i], (uint8_t)((got + i) * 7));
      }
      got += k;
    }
  }
  assert_int_equal(got, N);
  tun_arq_del(a);
  tun_arq_del(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arq_kcp_settings),
      cmocka_unit_test(test_arq_kcp_backoff),
      cmocka_unit_test(test_arq_kcp_echo),
      cmocka_unit_test(test_arq_kcp_early),
      cmocka_unit_test(test_arq_kcp_fastack_rule),
      cmocka_unit_test(test_arq_write_msg),
      cmocka_unit_test(test_arq_ack_header),
      cmocka_unit_test(test_arq_kcp_transfer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
