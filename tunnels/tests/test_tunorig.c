/*
 * test_tunorig.c: the original dnstt-client's send decisions (tunorig.h)
 * with a fake clock: the polls answers permit, a data packet in place of
 * a pending poll, and the ack queries of a KCP flush, with and without
 * kcp-go's ack compaction.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tunorig.h"

#define MS RP_MILLISECONDS

/* drain counts the queries tun_orig_next lets go at |now| with |want|. */
static int drain(tun_orig *o, uint32_t want, rp_tstamp now) {
  int n = 0;

  while (n < 100 && tun_orig_next(o, want, now)) {
    ++n;
  }
  return n;
}

static void test_tunorig_polls(void **state) {
  tun_orig_settings s;
  tun_orig o;

  (void)state;
  tun_orig_settings_default(&s);
  assert_int_equal(s.ack_compact, 0);
  tun_orig_init(&o, &s, 0);
  /* The opening burst, then nothing until the idle timer. */
  assert_int_equal(drain(&o, 0, 0), 16);
  /* Two answers with data permit two polls; an empty one none. */
  tun_orig_on_answer(&o, 1);
  tun_orig_on_answer(&o, 2);
  tun_orig_on_answer(&o, 0);
  /* A data packet goes first and takes one poll's place. */
  assert_int_equal(tun_orig_next(&o, TUN_ORIG_WANT_DATA, MS), 1);
  assert_int_equal(drain(&o, 0, MS), 1);
}

/* A flush sends a query for each 5 segments received since the last
   one; with ack_compact (kcp-go v5) one. */
static void test_tunorig_ack_flush(void **state) {
  tun_orig_settings s;
  tun_orig o;
  int compact, i;

  (void)state;
  for (compact = 0; compact <= 1; ++compact) {
    tun_orig_settings_default(&s);
    s.opening_polls = 0;
    s.poll_limit = 0;
    s.ack_compact = compact;
    tun_orig_init(&o, &s, 0);
    /* 12 segments arrive; no poll is permitted (poll_limit 0). */
    for (i = 0; i < 12; ++i) {
      tun_orig_on_answer(&o, 1);
    }
    /* Before the flush interval: nothing. */
    assert_int_equal(drain(&o, 0, 5 * MS), 0);
    assert_int_equal(tun_orig_get_expiry(&o, 0), 10 * MS);
    /* The flush: 3 queries (12 acks, 5 a query), or 1. */
    assert_int_equal(drain(&o, 0, 10 * MS), compact ? 1 : 3);
    /* Nothing owed until the next segment. */
    assert_int_equal(drain(&o, 0, 20 * MS), 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tunorig_polls),
      cmocka_unit_test(test_tunorig_ack_flush),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
