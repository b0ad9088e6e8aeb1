/*
 * test_tundrv.c: the MD driver's chain model (tundrv.h, chain = 1: the
 * simulator's model of MasterDnsVPN's send loop) against the minimal
 * server in memory, on a fake clock: the opening queries, one query per
 * batch of acks owed, a chain that ends on an error answer, the pings,
 * the resend that a lost ack costs; with chain_up the upload as a query
 * per packet resent on its own timeout, and with lost_to_srv the lost
 * acks handed to the server model; a query packing acks sent on as many
 * resolvers as dup_packed asks; a timeout the balancer hears of late;
 * pings with ping_dup copies, and sent when the ping loop sends them
 * (ping_wake). The control blocks (NACKs, acks by name,
 * the busy dispatcher) are test_tundrv_blocks.c's; the fixture is
 * tundrv_fixture.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tundrv_fixture.h"

/* refuse_acks serves the opening: its four answers owe four acks, one
   query carries them, and it is refused. */
static void refuse_acks(fixture *f) {
  fx_serve(&f->w, f->srv, f->now);
  fx_answer(&f->w, f->drv, 0, 4, f->now);
  f->now += RP_MICROSECONDS;
  tun_drv_tick(f->drv, f->now);
  assert_int_equal(f->w.nq, 1);
  fx_refuse(&f->w, f->drv, 0, f->now);
  f->w.nq = 0;
}

static void test_tundrv_chain_acks(void **state) {
  fixture f;
  tun_drv_stats st;

  (void)state;
  fx_chain_setup(&f);
  /* The opening: chain_open (4) queries, nothing more until answers. */
  assert_int_equal(f.w.nq, 4);
  fx_serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 4);
  assert_int_equal(tun_drv_get_due(f.drv), RP_TSTAMP_UNSET);

  /* Four data answers read together owe four acks: one query, after
     the chain delay. */
  f.now += RP_MILLISECONDS;
  fx_answer(&f.w, f.drv, 0, 4, f.now);
  assert_int_equal(f.w.nq, 0);
  assert_int_equal(tun_drv_get_due(f.drv), f.now + RP_MICROSECONDS);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  assert_int_equal(tun_drv_get_due(f.drv), RP_TSTAMP_UNSET);

  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.queries, 5);
  fx_chain_teardown(&f);
}

static void test_tundrv_chain_pack(void **state) {
  fixture f;
  size_t i;
  uint8_t q[MSG_MAX];
  size_t qlen;
  tun_peer peer;

  (void)state;
  fx_chain_setup(&f);
  memset(&peer, 0, sizeof(peer));
  peer.addrlen = 4;
  /* One opening query answered nine times (copies of it through a pool:
     each one new data): nine acks owed, two queries. */
  memcpy(q, f.w.q[0], f.w.qlen[0]);
  qlen = f.w.qlen[0];
  f.w.nq = 0;
  f.w.na = 0;
  for (i = 0; i < 9; ++i) {
    assert_int_equal(tun_srv_on_datagram(f.srv, q, qlen, &peer, f.now), 0);
  }
  assert_int_equal(f.w.na, 9);
  fx_answer_dispatch(&f, 0, 9);
  assert_int_equal(f.w.nq, 2);
  fx_chain_teardown(&f);
}

static void test_tundrv_chain_error_ends(void **state) {
  fixture f;
  tun_drv_stats st;

  (void)state;
  fx_chain_setup(&f);
  /* It is refused: no ack owed, no query; the chain ends. */
  refuse_acks(&f);
  assert_int_equal(tun_drv_get_due(f.drv), RP_TSTAMP_UNSET);
  f.now += 50 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 0);
  /* The ping at 100 ms starts a new chain. */
  f.now += 60 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  /* And one ping per interval, not one per tick. */
  f.now += 10 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  /* The refused query's four acks never reached the server: the ping's
     data answer is taken as a resend (its data dropped, tundrv.h), and
     still owes its ack. */
  f.w.na = 0;
  fx_serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 1);
  fx_answer(&f.w, f.drv, 0, 1, f.now);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.resent, 1);
  assert_int_equal(st.rejected, 1);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  fx_chain_teardown(&f);
}

static void test_tundrv_chain_empty_refused(void **state) {
  fixture f;
  tun_drv_stats st;
  size_t i;

  (void)state;
  fx_chain_setup(&f);
  /* The opening queries carry no acks: refused, they cost no resend. */
  for (i = 0; i < 4; ++i) {
    fx_refuse(&f.w, f.drv, i, f.now);
  }
  f.w.nq = 0;
  f.now += 100 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  f.w.na = 0;
  fx_serve(&f.w, f.srv, f.now);
  fx_answer(&f.w, f.drv, 0, 1, f.now);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.resent, 0);
  assert_int_equal(st.rejected, 4);
  fx_chain_teardown(&f);
}

/* chain_up: the upload goes at once, a query per packet, beside the
   opening; refused, it goes again only after its own timeout (0.5 s),
   the next time 1.35 times later. */
static void test_tundrv_chain_upload(void **state) {
  fixture f;
  tun_drv_stats st;
  size_t i, nup;
  rp_tstamp t0;

  (void)state;
  fx_chain_setup_with(&f, 2000, 1);
  t0 = f.now;
  /* Beside the opening, the upload's packets took a query each. */
  nup = f.w.nq - 4;
  assert_true(nup > 10);
  for (i = 0; i < nup + 4; ++i) {
    fx_refuse(&f.w, f.drv, i, f.now);
  }
  f.w.nq = 0;
  /* Pings only (one each 100 ms) until the timeout. */
  for (i = 1; i <= 4; ++i) {
    f.now = t0 + (rp_tstamp)i * 100 * RP_MILLISECONDS + RP_MILLISECONDS;
    tun_drv_tick(f.drv, f.now);
    assert_int_equal(f.w.nq, i);
  }
  fx_refuse(&f.w, f.drv, 0, f.now);
  f.w.nq = 0;
  f.now = t0 + 500 * RP_MILLISECONDS + RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  /* The ping and every packet again. */
  assert_int_equal(f.w.nq, nup + 1);
  for (i = 0; i < f.w.nq; ++i) {
    fx_refuse(&f.w, f.drv, i, f.now);
  }
  f.w.nq = 0;
  /* 675 ms later, not at 500. */
  f.now = t0 + 1100 * RP_MILLISECONDS + RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  fx_refuse(&f.w, f.drv, 0, f.now);
  f.w.nq = 0;
  f.now = t0 + 1180 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, nup);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.resent, 0);
  fx_chain_teardown(&f);
}

/* lost_to_srv: the acks of a refused query are handed over (once), no
   data answer is dropped; the server spends answers on them (resends of
   packets the client has: each still owes its ack). A query with upload
   data is answered with the ack alone. */
static void test_tundrv_chain_lost_to_srv(void **state) {
  fixture f;
  tun_drv_stats st;
  tun_srv_stats ss;
  size_t i, n;

  (void)state;
  fx_chain_setup_with(&f, 0, 1);
  refuse_acks(&f);
  assert_int_equal(tun_drv_take_lost_acks(f.drv), 4);
  assert_int_equal(tun_drv_take_lost_acks(f.drv), 0);
  tun_srv_add_resends(f.srv, 4);
  /* Five pings: four answers are resends, the fifth new data. */
  f.w.na = 0;
  for (i = 0; i < 5; ++i) {
    f.now += 100 * RP_MILLISECONDS;
    tun_drv_tick(f.drv, f.now);
  }
  assert_int_equal(f.w.nq, 5);
  fx_serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 5);
  fx_answer(&f.w, f.drv, 0, 5, f.now);
  tun_srv_get_stats(f.srv, &ss);
  assert_int_equal(ss.resends, 4);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.resent, 0);
  assert_int_equal(st.answers, 9);
  /* Each of the five owes an ack: one query carries them. */
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  fx_chain_teardown(&f);

  /* An upload query's answer: the ack alone, no ack owed for it. */
  fx_chain_setup_with(&f, 300, 1);
  n = f.w.nq;
  f.w.na = 0;
  fx_serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, n);
  fx_answer(&f.w, f.drv, 0, n, f.now);
  tun_srv_get_stats(f.srv, &ss);
  assert_true(n > 4);
  assert_int_equal(ss.answered_empty, n - 4);
  /* The four opening answers owe their acks: one query. */
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  fx_chain_teardown(&f);
}

/* The upload's burst reaches the balancer's counts at its end (the real
   client's writer reports the sends after its dispatcher picked every
   resolver): over three equal resolvers the least-loss balancer spreads
   the burst, where counting each send at once would leave the two it
   picks last under the 5 sends that make a score. */
static void test_tundrv_chain_burst_spread(void **state) {
  fixture f;
  size_t per[3] = {0, 0, 0}, i;

  (void)state;
  fx_chain_setup_n(&f, 2000, 1, 3);
  for (i = 0; i < f.w.nq; ++i) {
    ++per[f.w.qres[i]];
  }
  assert_true(f.w.nq > 15);
  for (i = 0; i < 3; ++i) {
    assert_true(per[i] >= 5);
  }
  fx_chain_teardown(&f);
}

static void dup_packed_4(tun_drv_settings *ds, tun_srv_settings *ss) {
  (void)ss;
  ds->dup_packed = 4;
}

/* A query that packs acks goes with dup_packed sends, one a resolver
   (MasterDnsVPN's packed blocks: SETUP_PACKET_DUPLICATION_COUNT, 4,
   over 3 resolvers); a query with one ack goes with dup (1). */
static void test_tundrv_chain_dup_packed(void **state) {
  fixture f;
  size_t seen[3] = {0, 0, 0}, i, na;

  (void)state;
  fx_chain_setup_full(&f, 0, 0, 3, dup_packed_4);
  assert_int_equal(f.w.nq, 4);
  fx_serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 4);
  fx_answer_dispatch(&f, 0, 4);
  assert_int_equal(f.w.nq, 3);
  for (i = 0; i < 3; ++i) {
    ++seen[f.w.qres[i]];
  }
  assert_true(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
  /* Its three sends bring three answers; one of them alone owes one
     ack: one query, one send. */
  na = f.w.na;
  fx_serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, na + 3);
  fx_answer_dispatch(&f, na, na + 1);
  assert_int_equal(f.w.nq, 1);
  fx_chain_teardown(&f);
}

static void bal_loss_5s(tun_drv_settings *ds, tun_srv_settings *ss) {
  (void)ss;
  ds->bal_loss_after = 5 * RP_SECONDS;
}

/* With bal_loss_after the balancer hears of a timed-out send only that
   long after it was sent (MasterDnsVPN's request timeout); without it,
   at the driver's timeout. */
static void test_tundrv_chain_bal_loss_after(void **state) {
  static const rp_duration after[] = {0, 5 * RP_SECONDS};
  static const chain_tweak tweak[] = {NULL, bal_loss_5s};
  size_t k;

  (void)state;
  for (k = 0; k < 2; ++k) {
    fixture f;
    rp_tstamp t0;
    tun_drv_stats st;

    fx_chain_setup_full(&f, 0, 0, 1, tweak[k]);
    t0 = f.now;
    assert_int_equal(f.w.nq, 4);
    f.w.nq = 0;
    /* The four opening queries are never answered (their timeout: 1 s,
       before any round trip). */
    f.now = t0 + 1100 * RP_MILLISECONDS;
    tun_drv_tick(f.drv, f.now);
    tun_drv_get_stats(f.drv, &st);
    assert_int_equal(st.timeouts, 4);
    assert_int_equal(tun_drv_md_bal(f.drv)->res[0].timeouts, k == 0 ? 4 : 0);
    f.now = (after[k] > 0 ? t0 + after[k] : f.now) + RP_MILLISECONDS;
    tun_drv_tick(f.drv, f.now);
    assert_int_equal(tun_drv_md_bal(f.drv)->res[0].timeouts, 4);
    fx_chain_teardown(&f);
  }
}

static void dup3_ping2(tun_drv_settings *ds, tun_srv_settings *ss) {
  (void)ss;
  ds->dup = 3;
  ds->ping_dup = 2;
}

/* A ping goes with ping_dup sends at most (MasterDnsVPN: 2), other
   queries with dup. */
static void test_tundrv_chain_ping_dup(void **state) {
  fixture f;
  rp_tstamp t0;

  (void)state;
  fx_chain_setup_full(&f, 0, 0, 3, dup3_ping2);
  t0 = f.now;
  /* The opening: 4 queries of 3 sends. */
  assert_int_equal(f.w.nq, 12);
  f.w.nq = 0;
  f.now = t0 + 100 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 2);
  assert_true(f.w.qres[0] != f.w.qres[1]);
  fx_chain_teardown(&f);
}

static void ping_loop(tun_drv_settings *ds, tun_srv_settings *ss) {
  (void)ss;
  ds->ping_wake = 1;
  ds->ping_late = 1500 * RP_MICROSECONDS;
}

/* ping_wake: the pings go when MasterDnsVPN's ping loop sends them
   (tunping.h): the first at 101.5 ms (the timer late by 1.5 ms); its
   answer with data 0.8 ms later wakes the loop too early for a ping
   and restarts the timer, so the next goes 100 + 1.5 ms after that
   answer, not after the ping. */
static void test_tundrv_chain_ping_wake(void **state) {
  fixture f;
  rp_tstamp t0, ans;

  (void)state;
  fx_chain_setup_full(&f, 0, 0, 1, ping_loop);
  t0 = f.now;
  f.w.nq = 0;
  assert_int_equal(tun_drv_get_due(f.drv), t0 + 101500 * RP_MICROSECONDS);
  f.now = t0 + 100 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 0);
  f.now = tun_drv_get_due(f.drv);
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  /* Its answer with data, and the query with its ack. */
  f.w.na = 0;
  fx_serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 1);
  ans = f.now += 800 * RP_MICROSECONDS;
  fx_answer(&f.w, f.drv, 0, 1, f.now);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  f.w.nq = 0;
  assert_int_equal(tun_drv_get_due(f.drv), ans + 101500 * RP_MICROSECONDS);
  f.now = t0 + 203 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 0);
  f.now = ans + 101500 * RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  fx_chain_teardown(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tundrv_chain_acks),
      cmocka_unit_test(test_tundrv_chain_pack),
      cmocka_unit_test(test_tundrv_chain_error_ends),
      cmocka_unit_test(test_tundrv_chain_empty_refused),
      cmocka_unit_test(test_tundrv_chain_upload),
      cmocka_unit_test(test_tundrv_chain_lost_to_srv),
      cmocka_unit_test(test_tundrv_chain_burst_spread),
      cmocka_unit_test(test_tundrv_chain_dup_packed),
      cmocka_unit_test(test_tundrv_chain_bal_loss_after),
      cmocka_unit_test(test_tundrv_chain_ping_dup),
      cmocka_unit_test(test_tundrv_chain_ping_wake),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
