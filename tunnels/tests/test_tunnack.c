/*
 * test_tunnack.c: MasterDnsVPN's loss recovery as the simulator models
 * it, on a fake clock: which missing segments a receiver NACKs and when
 * (tunnack.h: the delay, the repeat, the sample past the gap, the
 * watchdog, a full output), the order of a sender's due resends
 * (tun_arq_settings.resend_seed, resend_front) and when its timeouts
 * are noticed (timeout_tick), and a sender that ignores its peer's
 * window beside a receiver that drops what lies past its own
 * (ignore_peer_wnd, tun_arq_rcv_beyond).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arq.h"
#include "tunnack.h"
#include "rp_test_mem.h"

/* SEGS is how many one-byte segments a test's sender has in flight;
   FRAME_MAX bounds a frame. */
#define SEGS 48
#define FRAME_MAX 256

/* pair is a sender of SEGS segments, each in a frame of its own, a
   receiver the test hands the frames it picks, and the receiver's NACKs
   (nk, their output in out). Tests keep it static: it is large. */
typedef struct pair {
  tun_arq *snd;
  tun_arq *rcv;
  uint8_t frame[SEGS][FRAME_MAX];
  size_t len[SEGS];
  tun_nack nk;
  uint32_t out[TUN_NACK_GAP_MAX];
} pair;

/* pair_setup_front sets up |p|: its sender's resends walk from random
   places with |resend_seed|, from the |front| oldest due with |front|;
   its receiver holds |rcv_wnd| segments. */
static void pair_setup_front(pair *p, uint64_t resend_seed, uint32_t front,
                             uint32_t rcv_wnd) {
  tun_arq_settings s;
  uint8_t data[SEGS];
  size_t i;

  memset(p, 0, sizeof(*p));
  tun_arq_settings_default(&s);
  tun_arq_settings_md(&s);
  s.mss = 1;
  s.max_segs = 1;
  s.resend_seed = resend_seed;
  s.resend_front = front;
  assert_int_equal(tun_arq_new(&p->snd, &s, rp_test_mem_plain()), 0);
  s.resend_seed = 0;
  s.resend_front = 0;
  s.rcv_wnd = rcv_wnd;
  assert_int_equal(tun_arq_new(&p->rcv, &s, rp_test_mem_plain()), 0);
  memset(data, 'x', sizeof(data));
  assert_int_equal(tun_arq_write(p->snd, data, SEGS), SEGS);
  for (i = 0; i < SEGS; ++i) {
    rp_ssize n = tun_arq_output(p->snd, p->frame[i], FRAME_MAX, 0, NULL);

    assert_true(n > 0);
    p->len[i] = (size_t)n;
  }
}

static void pair_setup(pair *p, uint64_t resend_seed) {
  pair_setup_front(p, resend_seed, 0, TUN_ARQ_MD_WND);
}

static void pair_teardown(pair *p) {
  tun_arq_del(p->snd);
  tun_arq_del(p->rcv);
}

/* pair_deliver hands segment |sn|'s frame to the receiver at |now|. */
static void pair_deliver(pair *p, uint32_t sn, rp_tstamp now) {
  assert_int_equal(tun_arq_input(p->rcv, p->frame[sn], p->len[sn], now), 1);
}

/* pair_nacks sets up |p| with no resend seed and NACKs as MasterDnsVPN's
   client's (a gap of 32, 800 ms between two) with a first |delay|. */
static void pair_nacks(pair *p, rp_duration delay) {
  pair_setup(p, 0);
  tun_nack_init(&p->nk, &(tun_nack_settings){.gap = 32,
                                             .delay = delay,
                                             .repeat = 800 * RP_MILLISECONDS});
}

/* arrival is tun_nack_arrival of |p|'s receiver at |now|, |max| out. */
static size_t arrival(pair *p, rp_tstamp now, size_t max) {
  return tun_nack_arrival(&p->nk, p->rcv, now, p->out, max);
}

/* A gap is not NACKed when first seen, then once it is delay old, and
   again only each repeat; a segment that came is not NACKed. */
static void test_nack_delay_repeat(void **state) {
  static pair p;
  rp_tstamp t = RP_SECONDS, ms = RP_MILLISECONDS;

  (void)state;
  pair_nacks(&p, 100 * ms);
  pair_deliver(&p, 0, t);
  assert_int_equal(arrival(&p, t, 8), 0);
  pair_deliver(&p, 3, t);
  /* 1 and 2 missing: seen now. */
  assert_int_equal(arrival(&p, t, 8), 0);
  pair_deliver(&p, 4, t + 99 * ms);
  assert_int_equal(arrival(&p, t + 99 * ms, 8), 0);
  pair_deliver(&p, 5, t + 100 * ms);
  assert_int_equal(arrival(&p, t + 100 * ms, 8), 2);
  assert_int_equal(p.out[0], 1);
  assert_int_equal(p.out[1], 2);
  /* 2 came; 1 again only 800 ms after its NACK. */
  pair_deliver(&p, 2, t + 200 * ms);
  pair_deliver(&p, 6, t + 899 * ms);
  assert_int_equal(arrival(&p, t + 899 * ms, 8), 0);
  pair_deliver(&p, 7, t + 900 * ms);
  assert_int_equal(arrival(&p, t + 900 * ms, 8), 1);
  assert_int_equal(p.out[0], 1);
  pair_teardown(&p);
}

/* delay 0 (the rule's "at once"): a gap is NACKed when first seen; gap
   0: no NACKs. */
static void test_nack_no_delay(void **state) {
  static pair p;

  (void)state;
  pair_nacks(&p, 0);
  pair_deliver(&p, 2, 0);
  assert_int_equal(arrival(&p, 0, 8), 2);
  assert_int_equal(p.out[0], 0);
  assert_int_equal(p.out[1], 1);
  tun_nack_init(&p.nk, &(tun_nack_settings){.gap = 0});
  pair_deliver(&p, 3, 0);
  assert_int_equal(arrival(&p, 0, 8), 0);
  pair_teardown(&p);
}

/* A segment past the gap: a sample, the first two missing and the last
   missing within the gap of the first. */
static void test_nack_sample(void **state) {
  static pair p;

  (void)state;
  pair_nacks(&p, 0);
  /* Held: 30 and 40; missing 0-29, 31-39. */
  pair_deliver(&p, 30, 0);
  pair_deliver(&p, 40, 0);
  assert_int_equal(arrival(&p, 0, 8), 3);
  assert_int_equal(p.out[0], 0);
  assert_int_equal(p.out[1], 1);
  assert_int_equal(p.out[2], 31);
  pair_teardown(&p);
}

/* A full output: what did not fit stays due and comes next time. */
static void test_nack_out_full(void **state) {
  static pair p;

  (void)state;
  pair_nacks(&p, 0);
  pair_deliver(&p, 3, 0);
  assert_int_equal(arrival(&p, 0, 1), 1);
  assert_int_equal(p.out[0], 0);
  pair_deliver(&p, 4, RP_MILLISECONDS);
  assert_int_equal(arrival(&p, RP_MILLISECONDS, 8), 2);
  assert_int_equal(p.out[0], 1);
  assert_int_equal(p.out[1], 2);
  pair_teardown(&p);
}

/* The watchdog's pass: every missing one within the gap of the first
   (held or not beyond it) when one is held; nothing when none is. */
static void test_nack_idle(void **state) {
  static pair p;

  (void)state;
  pair_nacks(&p, 100 * RP_MILLISECONDS);
  pair_deliver(&p, 0, 0);
  assert_int_equal(tun_nack_idle(&p.nk, p.rcv, 0, p.out, 8), 0);
  pair_deliver(&p, 3, 0);
  /* Seen now, NACKed once delay old. */
  assert_int_equal(tun_nack_idle(&p.nk, p.rcv, 0, p.out, 8), 0);
  assert_int_equal(
      tun_nack_idle(&p.nk, p.rcv, RP_SECONDS, p.out, TUN_NACK_GAP_MAX), 31);
  assert_int_equal(p.out[0], 1);
  assert_int_equal(p.out[1], 2);
  assert_int_equal(p.out[2], 4);
  assert_int_equal(p.out[30], 32);
  pair_teardown(&p);
}

/* resends_order sends the |p| sender's SEGS segments again once they
   have all timed out, each in a frame of its own, and writes the order
   they went in to |order|. */
static void resends_order(pair *p, uint32_t *order) {
  uint8_t frame[FRAME_MAX];
  rp_tstamp late = 10 * RP_SECONDS;
  size_t i;

  for (i = 0; i < SEGS; ++i) {
    tun_arq_sent sent;

    assert_true(tun_arq_output(p->snd, frame, sizeof(frame), late, &sent) > 0);
    assert_int_equal(sent.n, 1);
    order[i] = sent.sn[0];
  }
}

/* resend_seed: the due resends go in a random order, each once, the same
   for the same seed; without it, oldest first. */
static void test_resend_random(void **state) {
  uint32_t a[SEGS], b[SEGS], c[SEGS];
  int seen[SEGS] = {0};
  size_t i, in_order = 0;
  static pair p;

  (void)state;
  pair_setup(&p, 0);
  resends_order(&p, a);
  for (i = 0; i < SEGS; ++i) {
    assert_int_equal(a[i], i);
  }
  pair_teardown(&p);
  pair_setup(&p, 12345);
  resends_order(&p, b);
  pair_teardown(&p);
  pair_setup(&p, 12345);
  resends_order(&p, c);
  pair_teardown(&p);
  assert_memory_equal(b, c, sizeof(b));
  for (i = 0; i < SEGS; ++i) {
    assert_true(b[i] < SEGS);
    assert_false(seen[b[i]]);
    seen[b[i]] = 1;
    in_order += i > 0 && b[i] == b[i - 1] + 1;
  }
  /* Not the oldest-first walk: most neighbours are not in sequence. */
  assert_true(in_order < SEGS / 2);
}

/* resend_front: each resend is drawn from the resend_front oldest still
   due, each segment once, the same order for the same seed; not the
   oldest-first walk. */
static void test_resend_front(void **state) {
  enum { FRONT = 8 };
  uint32_t a[SEGS], b[SEGS];
  int seen[SEGS] = {0};
  size_t i, in_order = 0;
  static pair p;

  (void)state;
  pair_setup_front(&p, 777, FRONT, TUN_ARQ_MD_WND);
  resends_order(&p, a);
  pair_teardown(&p);
  pair_setup_front(&p, 777, FRONT, TUN_ARQ_MD_WND);
  resends_order(&p, b);
  pair_teardown(&p);
  assert_memory_equal(a, b, sizeof(a));
  for (i = 0; i < SEGS; ++i) {
    /* Of the i + FRONT oldest, at most i went before: the FRONT oldest
       still due lie among them. */
    assert_true(a[i] < i + FRONT);
    assert_false(seen[a[i]]);
    seen[a[i]] = 1;
    in_order += i > 0 && a[i] == a[i - 1] + 1;
  }
  assert_true(in_order < SEGS / 2);
  /* More than TUN_ARQ_MAX_FRONT is refused. */
  {
    tun_arq_settings s;
    tun_arq *arq;

    tun_arq_settings_default(&s);
    s.resend_front = TUN_ARQ_MAX_FRONT + 1;
    assert_int_equal(tun_arq_new(&arq, &s, rp_test_mem_plain()),
                     RP_ERR_INVALID_ARGUMENT);
  }
}

/* A receiver of 8 slots with segment 0 missing holds 1 .. 7 and drops 8
   on unheld (tun_arq_rcv_beyond, the beyond counter); a segment it holds
   again is no such drop. */
static void test_rcv_beyond(void **state) {
  tun_arq_stats st;
  uint8_t buf[SEGS];
  uint32_t sn;
  static pair p;

  (void)state;
  pair_setup_front(&p, 0, 0, 8);
  for (sn = 1; sn < 8; ++sn) {
    pair_deliver(&p, sn, 0);
    assert_int_equal(tun_arq_rcv_beyond(p.rcv), 0);
    assert_true(tun_arq_rcv_present(p.rcv, sn));
  }
  pair_deliver(&p, 8, 0);
  assert_int_equal(tun_arq_rcv_last(p.rcv), 8);
  assert_int_equal(tun_arq_rcv_beyond(p.rcv), 1);
  assert_false(tun_arq_rcv_present(p.rcv, 8));
  pair_deliver(&p, 3, 0);
  assert_int_equal(tun_arq_rcv_beyond(p.rcv), 0);
  tun_arq_get_stats(p.rcv, &st);
  assert_int_equal(st.beyond, 1);
  assert_int_equal(st.dup_received, 2);
  /* Segment 0 fills the hole, and 0 .. 7 are read: 8 is within the
     window now. */
  pair_deliver(&p, 0, 0);
  assert_int_equal(tun_arq_read(p.rcv, buf, sizeof(buf)), 8);
  pair_deliver(&p, 8, 0);
  assert_int_equal(tun_arq_rcv_beyond(p.rcv), 0);
  assert_int_equal(tun_arq_rcv_next(p.rcv), 9);
  pair_teardown(&p);
}

/* A peer that advertises 2 free slots stops a sender with 4 in flight;
   with ignore_peer_wnd the sender opens new segments still. */
static void test_ignore_peer_wnd(void **state) {
  int ignore;

  (void)state;
  for (ignore = 0; ignore < 2; ++ignore) {
    tun_arq_settings s;
    tun_arq *snd, *rcv;
    tun_arq_sent sent;
    uint8_t frame[FRAME_MAX], data[8];
    rp_ssize n;
    int i;

    tun_arq_settings_default(&s);
    tun_arq_settings_md(&s);
    s.mss = 1;
    s.max_segs = 1;
    s.ignore_peer_wnd = ignore;
    assert_int_equal(tun_arq_new(&snd, &s, rp_test_mem_plain()), 0);
    s.ignore_peer_wnd = 0;
    s.rcv_wnd = 2;
    assert_int_equal(tun_arq_new(&rcv, &s, rp_test_mem_plain()), 0);
    memset(data, 'x', sizeof(data));
    assert_int_equal(tun_arq_write(snd, data, sizeof(data)), sizeof(data));
    for (i = 0; i < 4; ++i) {
      assert_true(tun_arq_output(snd, frame, sizeof(frame), 0, &sent) > 0);
      assert_int_equal(sent.n, 1);
    }
    /* The receiver's frame: nothing received, 2 slots free. */
    n = tun_arq_output(rcv, frame, sizeof(frame), 0, NULL);
    assert_true(n > 0);
    assert_int_equal(tun_arq_input(snd, frame, (size_t)n, 0), 0);
    assert_true(tun_arq_output(snd, frame, sizeof(frame), 0, &sent) > 0);
    assert_int_equal(sent.n, (size_t)ignore);
    tun_arq_del(snd);
    tun_arq_del(rcv);
  }
}

/* timeout_tick: a segment sent at 10 ms with a 500 ms timeout is due at
   the first tick of 200 ms past 510 ms (600 ms), not before; its expiry
   says so; a NACKed one goes at once. */
static void test_timeout_tick(void **state) {
  tun_arq_settings s;
  tun_arq *arq;
  tun_arq_sent sent;
  uint8_t frame[FRAME_MAX], data[2] = {'a', 'b'};
  rp_tstamp t0 = 10 * RP_MILLISECONDS;
  tun_arq_stats st;

  (void)state;
  tun_arq_settings_default(&s);
  tun_arq_settings_md(&s);
  s.mss = 1;
  s.max_segs = 1;
  s.timeout_tick = 200 * RP_MILLISECONDS;
  assert_int_equal(tun_arq_new(&arq, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_write(arq, data, 2), 2);
  assert_true(tun_arq_output(arq, frame, sizeof(frame), t0, &sent) > 0);
  assert_true(tun_arq_output(arq, frame, sizeof(frame), t0, &sent) > 0);
  assert_int_equal(sent.sn[0], 1);
  assert_int_equal(tun_arq_get_expiry(arq), 600 * RP_MILLISECONDS);
  /* At 550 ms the timeout passed, but no tick since. */
  tun_arq_handle_expiry(arq, 550 * RP_MILLISECONDS);
  assert_int_equal(tun_arq_want_output(arq, 550 * RP_MILLISECONDS), 0);
  assert_true(tun_arq_output(arq, frame, sizeof(frame), 550 * RP_MILLISECONDS,
                             &sent) > 0);
  assert_int_equal(sent.n, 0);
  /* A NACK does not wait for the tick. */
  tun_arq_nack_list(arq, &(uint32_t){1}, 1);
  assert_true(tun_arq_output(arq, frame, sizeof(frame), 560 * RP_MILLISECONDS,
                             &sent) > 0);
  assert_int_equal(sent.n, 1);
  assert_int_equal(sent.sn[0], 1);
  /* At 600 ms segment 0 is due. */
  tun_arq_handle_expiry(arq, 600 * RP_MILLISECONDS);
  tun_arq_get_stats(arq, &st);
  assert_int_equal(st.timeouts, 1);
  assert_true(tun_arq_output(arq, frame, sizeof(frame), 600 * RP_MILLISECONDS,
                             &sent) > 0);
  assert_int_equal(sent.n, 1);
  assert_int_equal(sent.sn[0], 0);
  tun_arq_del(arq);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nack_delay_repeat),
      cmocka_unit_test(test_nack_no_delay),
      cmocka_unit_test(test_nack_sample),
      cmocka_unit_test(test_nack_out_full),
      cmocka_unit_test(test_nack_idle),
      cmocka_unit_test(test_resend_random),
      cmocka_unit_test(test_resend_front),
      cmocka_unit_test(test_rcv_beyond),
      cmocka_unit_test(test_ignore_peer_wnd),
      cmocka_unit_test(test_timeout_tick),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
