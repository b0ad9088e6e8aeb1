/*
 * test_tunnack.c: MasterDnsVPN's loss recovery as the simulator models
 * it, on a fake clock: which missing segments a receiver NACKs and when
 * (tunnack.h: the delay, the repeat, the sample past the gap, the
 * watchdog, a full output), and the order of a sender's due resends
 * (tun_arq_settings.resend_seed).
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

static void pair_setup(pair *p, uint64_t resend_seed) {
  tun_arq_settings s;
  uint8_t data[SEGS];
  size_t i;

  memset(p, 0, sizeof(*p));
  tun_arq_settings_default(&s);
  tun_arq_settings_md(&s);
  s.mss = 1;
  s.max_segs = 1;
  s.resend_seed = resend_seed;
  assert_int_equal(tun_arq_new(&p->snd, &s, rp_test_mem_plain()), 0);
  s.resend_seed = 0;
  assert_int_equal(tun_arq_new(&p->rcv, &s, rp_test_mem_plain()), 0);
  memset(data, 'x', sizeof(data));
  assert_int_equal(tun_arq_write(p->snd, data, SEGS), SEGS);
  for (i = 0; i < SEGS; ++i) {
    rp_ssize n = tun_arq_output(p->snd, p->frame[i], FRAME_MAX, 0, NULL);

    assert_true(n > 0);
    p->len[i] = (size_t)n;
  }
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nack_delay_repeat),
      cmocka_unit_test(test_nack_no_delay),
      cmocka_unit_test(test_nack_sample),
      cmocka_unit_test(test_nack_out_full),
      cmocka_unit_test(test_nack_idle),
      cmocka_unit_test(test_resend_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
