/*
 * test_tundrv_blocks.c: the control blocks of the MD driver's chain model
 * (tundrv.h, the simulator's model of MasterDnsVPN's send loop) against
 * the minimal server in memory, on a fake clock: the NACKs of a gap
 * (when data comes, and when none does) and the server's resend of a
 * NACKed segment; acks that name their segments to the server; the
 * dispatcher of a busy client (chain_busy), and a client quiet again
 * after a quiet spell; the server's NACKs of the upload, which its
 * answer brings the client; a segment past the client's receive window,
 * dropped unacked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dns.h"
#include "tundrv_fixture.h"
#include "tunwire.h"

/* The client NACKs a gap when data comes once the gap is nack.delay
   old, in the query carrying that data's ack, and again only each
   nack.repeat; its server takes the NACK from that query and resends
   the segment (tun_srv_blocks). */
static void test_tundrv_chain_nack(void **state) {
  fixture f;
  tun_drv_stats st;
  tun_srv_stats s0, s1;
  tun_arq_sent sns, none;
  rp_tstamp seen, nacked;
  size_t na;

  (void)state;
  fx_chain_setup_full(&f, 0, 0, 1, fx_nacks_md);
  fx_gap_opening(&f);
  seen = f.now - RP_MICROSECONDS;
  /* The acks' answer brings the next segment before nack.delay: no
     NACK yet. */
  na = f.w.na;
  fx_serve(&f.w, f.srv, f.now);
  f.now = seen + 50 * RP_MILLISECONDS;
  fx_answer_dispatch(&f, na, na + 1);
  assert_int_equal(f.w.nq, 1);
  assert_int_equal(fx_take_nacks(&f, 0, &sns), 0);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.nacks, 0);
  /* That ack's answer after nack.delay: its ack and the NACK go in one
     query. */
  na = f.w.na;
  fx_serve(&f.w, f.srv, f.now);
  f.now = seen + 100 * RP_MILLISECONDS - RP_MILLISECONDS;
  fx_answer_dispatch(&f, na, na + 1);
  nacked = f.now;
  /* (A ping may follow it: the tick sends the acks first.) */
  assert_true(f.w.nq >= 1);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.nacks, 1);
  assert_int_equal(fx_take_nacks(&f, 0, &sns), 1);
  assert_int_equal(sns.sn[0], 1);
  /* Taken once: a later copy of the query carries none. */
  assert_int_equal(fx_take_nacks(&f, 0, &none), 0);
  /* The server resends segment 1 in its answer (lost here). */
  tun_srv_get_stats(f.srv, &s0);
  tun_srv_blocks(f.srv, &none, &sns);
  fx_serve(&f.w, f.srv, f.now);
  tun_srv_get_stats(f.srv, &s1);
  assert_int_equal(s1.retransmissions, s0.retransmissions + 1);
  /* More data within nack.repeat: no NACK; after it, one more. */
  f.now = nacked + 700 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  na = f.w.na;
  fx_serve(&f.w, f.srv, f.now);
  fx_answer_dispatch(&f, na, na + 1);
  assert_int_equal(fx_take_nacks(&f, 0, &sns), 0);
  f.w.nq = 0;
  f.now = nacked + 800 * RP_MILLISECONDS - RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  na = f.w.na;
  fx_serve(&f.w, f.srv, f.now);
  fx_answer_dispatch(&f, na, na + 1);
  assert_true(f.w.nq >= 1);
  assert_int_equal(fx_take_nacks(&f, 0, &sns), 1);
  assert_int_equal(sns.sn[0], 1);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.nacks, 2);
  fx_chain_teardown(&f);
}

/* With no data for nack.repeat, the tick NACKs a gap: a query of its
   own, no ack in it. */
static void test_tundrv_chain_nack_idle(void **state) {
  fixture f;
  tun_arq_sent sns;
  rp_tstamp seen;

  (void)state;
  fx_chain_setup_full(&f, 0, 0, 1, fx_nacks_md);
  fx_gap_opening(&f);
  f.w.nq = 0;
  seen = f.now - RP_MICROSECONDS;
  /* The pings go unanswered. */
  f.now = seen + 800 * RP_MILLISECONDS - RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  f.w.nq = 0;
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 0);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  assert_int_equal(fx_take_nacks(&f, 0, &sns), 1);
  assert_int_equal(sns.sn[0], 1);
  fx_chain_teardown(&f);
}

static void named(tun_drv_settings *ds, tun_srv_settings *ss) {
  (void)ss;
  ds->acks_named = 1;
}

/* acks_of returns how many acks query |i| of the wire names (in
   |*acks|), as its server would take them; it carries no NACK. */
static size_t acks_of(fixture *f, size_t i, tun_arq_sent *acks) {
  tun_arq_sent nacks;

  tun_drv_take_blocks(f->drv, f->w.q[i], f->w.qlen[i], acks, &nacks);
  assert_int_equal(nacks.n, 0);
  return acks->n;
}

/* With acks_named the query carrying acks names their segments to its
   server (tun_drv_take_blocks), once; without, it names none. */
static void test_tundrv_chain_acks_named(void **state) {
  static const chain_tweak tweak[] = {NULL, named};
  tun_arq_sent acks;
  size_t k, i;

  (void)state;
  for (k = 0; k < 2; ++k) {
    fixture f;

    fx_chain_setup_full(&f, 0, 0, 1, tweak[k]);
    fx_serve(&f.w, f.srv, f.now);
    fx_answer_dispatch(&f, 0, 4);
    assert_int_equal(f.w.nq, 1);
    assert_int_equal(acks_of(&f, 0, &acks), k == 0 ? 0 : 4);
    for (i = 0; i < acks.n; ++i) {
      assert_int_equal(acks.sn[i], (uint32_t)i);
    }
    assert_int_equal(acks_of(&f, 0, &acks), 0);
    fx_chain_teardown(&f);
  }
}

static void busy_100us(tun_drv_settings *ds, tun_srv_settings *ss) {
  (void)ss;
  ds->chain_busy = 100 * RP_MICROSECONDS;
  ds->chain_busy_rate = 100; /* one data answer in 10 ms */
  ds->acks_named = 1;
}

/* chain_busy: a busy client's first ack goes at once in a query of its
   own, the acks owed while its dispatcher is busy go together at the
   end; a quiet client packs the acks read together after chain_delay. */
static void test_tundrv_chain_busy(void **state) {
  fixture f;
  tun_arq_sent acks;
  rp_tstamp t;

  (void)state;
  fx_chain_setup_full(&f, 0, 0, 1, busy_100us);
  fx_serve(&f.w, f.srv, f.now);
  /* Quiet: the first answer's ack waits for the tick. */
  f.now += RP_MILLISECONDS;
  fx_answer(&f.w, f.drv, 0, 1, f.now);
  assert_int_equal(f.w.nq, 0);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  /* A window later the client is busy: the next ack goes at once. */
  t = f.now += 10 * RP_MILLISECONDS;
  fx_answer(&f.w, f.drv, 1, 2, f.now);
  assert_int_equal(f.w.nq, 2);
  assert_int_equal(acks_of(&f, 1, &acks), 1);
  /* Two more within the dispatcher's 100 us: one query at its end. */
  f.now += 10 * RP_MICROSECONDS;
  fx_answer(&f.w, f.drv, 2, 3, f.now);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  f.now += 10 * RP_MICROSECONDS;
  fx_answer(&f.w, f.drv, 3, 4, f.now);
  assert_int_equal(f.w.nq, 2);
  f.now = t + 100 * RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 3);
  assert_int_equal(acks_of(&f, 2, &acks), 2);
  /* Quiet again after two windows without data. */
  f.w.na = 0;
  fx_serve(&f.w, f.srv, f.now);
  f.now += 20 * RP_MILLISECONDS;
  fx_answer(&f.w, f.drv, 0, 1, f.now);
  assert_int_equal(f.w.nq, 0);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  fx_chain_teardown(&f);
}

static void nacks_busy(tun_drv_settings *ds, tun_srv_settings *ss) {
  fx_nacks_md(ds, ss);
  busy_100us(ds, ss);
}

/* A client busy before a quiet spell is quiet after it: the NACK the
   tick owes then waits for the tick, and so does the next answer's
   ack. */
static void test_tundrv_chain_busy_quiet(void **state) {
  fixture f;
  size_t na;

  (void)state;
  fx_chain_setup_full(&f, 0, 0, 1, nacks_busy);
  fx_gap_opening(&f);
  fx_serve(&f.w, f.srv, f.now);
  na = f.w.na;
  /* A window later: busy, its ack goes at once. */
  f.now += 10 * RP_MILLISECONDS;
  fx_answer(&f.w, f.drv, na - 1, na, f.now);
  assert_int_equal(f.w.nq, 1);
  /* No data for 800 ms: the tick's NACK, a microsecond later. */
  f.w.nq = 0;
  f.now += 800 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  f.w.nq = 0;
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  fx_serve(&f.w, f.srv, f.now);
  na = f.w.na;
  f.now += RP_MILLISECONDS;
  fx_answer(&f.w, f.drv, na - 1, na, f.now);
  assert_int_equal(f.w.nq, 0);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  fx_chain_teardown(&f);
}

static void srv_nacks_at_once(tun_drv_settings *ds, tun_srv_settings *ss) {
  (void)ds;
  ss->nack = (tun_nack_settings){.gap = 32, .repeat = 800 * RP_MILLISECONDS};
}

/* The server NACKs the upload's gap below a packet that came past it
   (tunsrv.h's nack), and the answer to that packet's query brings the
   NACKs to the client (tun_drv_srv_nacks): it resends those packets at
   once, before any timeout; the server then has the upload in order. */
static void test_tundrv_chain_srv_nacks(void **state) {
  fixture f;
  tun_drv_stats st;
  tun_srv_stats ss;
  tun_peer peer = {.addrlen = 4};
  uint32_t sn[TUN_NACK_GAP_MAX];
  size_t n, na;

  (void)state;
  fx_chain_setup_full(&f, 2000, 1, 1, srv_nacks_at_once);
  /* The upload's packets went first, a query each: only the fourth
     reaches the server. */
  assert_true(f.w.nq > 8);
  assert_int_equal(
      tun_srv_on_datagram(f.srv, f.w.q[3], f.w.qlen[3], &peer, f.now), 0);
  n = tun_srv_take_nacks(f.srv, sn, TUN_NACK_GAP_MAX);
  assert_int_equal(n, 3);
  assert_int_equal(sn[0], 0);
  assert_int_equal(sn[2], 2);
  assert_int_equal(tun_srv_take_nacks(f.srv, sn, TUN_NACK_GAP_MAX), 0);
  tun_drv_srv_nacks(f.drv, f.w.q[3], f.w.qlen[3], sn, n);
  na = f.w.na;
  f.w.ares[na - 1] = f.w.qres[3];
  f.w.nq = 0;
  f.now += RP_MILLISECONDS;
  fx_answer(&f.w, f.drv, na - 1, na, f.now);
  /* The three packets again at once (their timeout is 0.5 s away). */
  assert_int_equal(f.w.nq, 3);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.srv_nacks, 3);
  fx_serve(&f.w, f.srv, f.now);
  tun_srv_get_stats(f.srv, &ss);
  assert_true(ss.bytes_up > 0);
  assert_int_equal(tun_srv_take_nacks(f.srv, sn, TUN_NACK_GAP_MAX), 0);
  /* The same answer again (a copy's): its NACKs were taken. */
  f.w.nq = 0;
  fx_answer(&f.w, f.drv, na - 1, na, f.now);
  assert_int_equal(f.w.nq, 0);
  fx_chain_teardown(&f);
}

/* beyond_patch moves the segment of answer |i| of the wire |ahead|
   numbers on (as the server would send one that far). */
static void beyond_patch(fixture *f, size_t i, uint32_t ahead) {
  uint8_t frame[MSG_MAX], out[MSG_MAX];
  rp_dns_msg a;
  rp_ssize n, m;
  size_t at;
  uint32_t sn;

  assert_int_equal(rp_dns_parse(&a, f->w.a[i], f->w.alen[i]), 0);
  n = tun_wire_answer_payload(&a, frame, sizeof(frame));
  assert_true(n > TUN_ARQ_HDR_FIXED);
  at = TUN_ARQ_HDR_FIXED + frame[6];
  assert_true((size_t)n > at + TUN_ARQ_SEG_HDR);
  sn = ((uint32_t)frame[at] << 24 | (uint32_t)frame[at + 1] << 16 |
        (uint32_t)frame[at + 2] << 8 | frame[at + 3]) +
       ahead;
  frame[at] = (uint8_t)(sn >> 24);
  frame[at + 1] = (uint8_t)(sn >> 16);
  frame[at + 2] = (uint8_t)(sn >> 8);
  frame[at + 3] = (uint8_t)sn;
  m = rp_dns_build_txt_answer(out, sizeof(out), &a, 0, frame, (size_t)n);
  assert_true(m > 0);
  memcpy(f->w.a[i], out, (size_t)m);
  f->w.alen[i] = (size_t)m;
}

/* With acks_named a segment past the client's receive window (its
   server sends past it: ignore_peer_wnd) is dropped: no ack names it,
   and its answer alone owes no query. */
static void test_tundrv_chain_beyond(void **state) {
  fixture f;
  tun_arq_sent acks;
  tun_arq_stats st;

  (void)state;
  fx_chain_setup_full(&f, 0, 0, 1, named);
  fx_serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 4);
  beyond_patch(&f, 1, 2 * TUN_ARQ_MD_WND);
  fx_answer_dispatch(&f, 0, 4);
  assert_int_equal(f.w.nq, 1);
  assert_int_equal(acks_of(&f, 0, &acks), 3);
  assert_int_equal(acks.sn[0], 0);
  assert_int_equal(acks.sn[1], 2);
  assert_int_equal(acks.sn[2], 3);
  /* The same answer again, alone: nothing owed, no query. */
  f.w.nq = 0;
  fx_answer_dispatch(&f, 1, 2);
  assert_int_equal(f.w.nq, 0);
  tun_arq_get_stats(tun_cli_arq(tun_drv_cli(f.drv)), &st);
  assert_int_equal(st.beyond, 2);
  fx_chain_teardown(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tundrv_chain_nack),
      cmocka_unit_test(test_tundrv_chain_nack_idle),
      cmocka_unit_test(test_tundrv_chain_acks_named),
      cmocka_unit_test(test_tundrv_chain_busy),
      cmocka_unit_test(test_tundrv_chain_busy_quiet),
      cmocka_unit_test(test_tundrv_chain_srv_nacks),
      cmocka_unit_test(test_tundrv_chain_beyond),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
