/*
 * test_tundrv.c: the MD driver's chain model (tundrv.h, chain = 1: the
 * simulator's model of MasterDnsVPN's send loop) against the minimal
 * server in memory, on a fake clock: the opening queries, one query per
 * batch of acks owed, a chain that ends on an error answer, the pings,
 * the resend that a lost ack costs; with chain_up the upload as a query
 * per packet resent on its own timeout, and with lost_to_srv the lost
 * acks handed to the server model; a query packing acks sent on as many
 * resolvers as dup_packed asks; a timeout the balancer hears of late;
 * the NACKs of a gap (when data comes, and when none does) and the
 * server's resend of a NACKed segment; pings with ping_dup copies.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tuncli.h"
#include "tundrv.h"
#include "tunsrv.h"

#define Q_SLOTS 64
#define A_SLOTS 64
#define MSG_MAX 2048

/* wire holds the queries the driver sent and the answers the server
   made, each waiting for the test to deliver it. */
typedef struct wire {
  size_t nq;
  size_t qres[Q_SLOTS];
  size_t qlen[Q_SLOTS];
  uint8_t q[Q_SLOTS][MSG_MAX];
  size_t na;
  size_t ares[A_SLOTS];
  size_t alen[A_SLOTS];
  uint8_t a[A_SLOTS][MSG_MAX];
  uint64_t rng;
} wire;

static int drv_send_cb(uint32_t chan, size_t res, const uint8_t *data,
                       size_t len, uint32_t flags, void *user_data) {
  wire *w = user_data;

  (void)chan;
  (void)flags;
  assert_true(w->nq < Q_SLOTS && len <= MSG_MAX);
  w->qres[w->nq] = res;
  memcpy(w->q[w->nq], data, len);
  w->qlen[w->nq++] = len;
  return 0;
}

static uint64_t drv_rand_cb(void *user_data) {
  wire *w = user_data;

  w->rng = w->rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return w->rng >> 11;
}

static int srv_send_cb(const tun_peer *peer, const uint8_t *data, size_t len,
                       void *user_data) {
  wire *w = user_data;

  (void)peer;
  assert_true(w->na < A_SLOTS && len <= MSG_MAX);
  memcpy(w->a[w->na], data, len);
  w->alen[w->na++] = len;
  return 0;
}

static size_t srv_source_cb(uint64_t sid, uint64_t offset, uint8_t *out,
                            size_t cap, void *user_data) {
  (void)sid;
  (void)user_data;
  memset(out, (int)(offset & 0x7f), cap);
  return cap;
}

static void srv_sink_cb(uint64_t sid, uint64_t offset, const uint8_t *data,
                        size_t len, void *user_data) {
  (void)sid;
  (void)offset;
  (void)data;
  (void)len;
  (void)user_data;
}

/* serve hands every query sent so far to |srv| and forgets them. */
static void serve(wire *w, tun_srv *srv, rp_tstamp now) {
  tun_peer peer;
  size_t i;

  memset(&peer, 0, sizeof(peer));
  peer.addrlen = 4;
  for (i = 0; i < w->nq; ++i) {
    size_t before = w->na;

    assert_int_equal(tun_srv_on_datagram(srv, w->q[i], w->qlen[i], &peer, now),
                     0);
    if (w->na > before) {
      w->ares[w->na - 1] = w->qres[i];
    }
  }
  w->nq = 0;
}

/* answer delivers the answers |from| .. |to| - 1 to |drv|. */
static void answer(wire *w, tun_drv *drv, size_t from, size_t to,
                   rp_tstamp now) {
  size_t i;

  for (i = from; i < to; ++i) {
    tun_drv_on_answer(drv, (uint32_t)w->ares[i], w->ares[i], w->a[i],
                      w->alen[i], now);
  }
}

/* refuse delivers to |drv| a REFUSED answer to query |i| of |w|. */
static void refuse(wire *w, tun_drv *drv, size_t i, rp_tstamp now) {
  uint8_t a[MSG_MAX];

  memcpy(a, w->q[i], w->qlen[i]);
  a[2] |= 0x80; /* QR */
  a[3] = (uint8_t)((a[3] & 0xf0) | 5); /* REFUSED */
  tun_drv_on_answer(drv, (uint32_t)w->qres[i], w->qres[i], a, w->qlen[i], now);
}

typedef struct fixture {
  wire w;
  tun_drv *drv;
  tun_srv *srv;
  rp_tstamp now;
} fixture;

/* chain_tweak changes a test's settings before the driver and the
   server are made. */
typedef void (*chain_tweak)(tun_drv_settings *ds, tun_srv_settings *ss);

/* chain_setup_full runs the MTU test of a chain driver over |nres|
   resolvers and leaves the opening queries in |f->w|; |up| bytes to
   upload; |real| 1 sets chain_up and lost_to_srv, and the server's
   up_ack_only (the simulator's real MasterDnsVPN); dup 1; then
   |tweak| (NULL: none). */
static void chain_setup_full(fixture *f, uint64_t up, int real, size_t nres,
                             chain_tweak tweak) {
  tun_drv_settings ds;
  tun_srv_settings ss;
  tun_drv_callbacks dcb = {.send = drv_send_cb, .rand = drv_rand_cb};
  tun_srv_callbacks scb = {
      .send = srv_send_cb, .source = srv_source_cb, .sink = srv_sink_cb};
  int rounds = 0;

  memset(f, 0, sizeof(*f));
  f->w.rng = 7;
  tun_drv_settings_default(&ds, TUN_DRV_MD);
  ds.chain = 1;
  ds.dup = 1;
  ds.nres = nres;
  ds.strategy = TUN_BAL_LEAST_LOSS;
  ds.mtu_ceiling = 1232;
  ds.down_bytes = UINT64_MAX;
  ds.seconds = 1000;
  ds.up_bytes = up;
  ds.chain_up = real;
  ds.lost_to_srv = real;
  ds.no_down_hash = 1;
  assert_int_equal(rp_dns_name_from_text(&ds.domain, "t.example"), 0);
  tun_srv_settings_default(&ss, TUN_MODE_MD);
  ss.domain = ds.domain;
  ss.max_answer = 1500;
  ss.arq.snd_wnd = ss.arq.rcv_wnd = 1000;
  ss.up_ack_only = real;
  if (tweak != NULL) {
    tweak(&ds, &ss);
  }
  assert_int_equal(tun_drv_new(&f->drv, &ds, &dcb, NULL, &f->w), 0);
  assert_int_equal(tun_srv_new(&f->srv, &ss, &scb, NULL, &f->w), 0);
  assert_int_equal(tun_drv_start(f->drv, f->now), 0);
  /* The MTU test: probes answered at once until the run starts. */
  while (tun_drv_md_mtu(f->drv) == 0) {
    assert_true(++rounds < 10);
    f->w.na = 0;
    serve(&f->w, f->srv, f->now);
    f->now += RP_MILLISECONDS;
    answer(&f->w, f->drv, 0, f->w.na, f->now);
    f->w.na = 0;
  }
  /* The whole download MTU: the chain model's queries ask for it. */
  assert_int_equal(tun_drv_md_mtu(f->drv), 1232);
}

static void chain_setup_n(fixture *f, uint64_t up, int real, size_t nres) {
  chain_setup_full(f, up, real, nres, NULL);
}

static void chain_setup_with(fixture *f, uint64_t up, int real) {
  chain_setup_n(f, up, real, 1);
}

static void chain_setup(fixture *f) { chain_setup_with(f, 0, 0); }

static void chain_teardown(fixture *f) {
  tun_drv_del(f->drv);
  tun_srv_del(f->srv);
}

/* answer_dispatch delivers answers |from| .. |to| - 1 a millisecond
   later, then ticks the driver at the chain delay (1 us): the query
   carrying their acks goes. */
static void answer_dispatch(fixture *f, size_t from, size_t to) {
  f->now += RP_MILLISECONDS;
  answer(&f->w, f->drv, from, to, f->now);
  f->now += RP_MICROSECONDS;
  tun_drv_tick(f->drv, f->now);
}

/* refuse_acks serves the opening: its four answers owe four acks, one
   query carries them, and it is refused. */
static void refuse_acks(fixture *f) {
  serve(&f->w, f->srv, f->now);
  answer(&f->w, f->drv, 0, 4, f->now);
  f->now += RP_MICROSECONDS;
  tun_drv_tick(f->drv, f->now);
  assert_int_equal(f->w.nq, 1);
  refuse(&f->w, f->drv, 0, f->now);
  f->w.nq = 0;
}

static void test_tundrv_chain_acks(void **state) {
  fixture f;
  tun_drv_stats st;

  (void)state;
  chain_setup(&f);
  /* The opening: chain_open (4) queries, nothing more until answers. */
  assert_int_equal(f.w.nq, 4);
  serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 4);
  assert_int_equal(tun_drv_get_due(f.drv), RP_TSTAMP_UNSET);

  /* Four data answers read together owe four acks: one query, after
     the chain delay. */
  f.now += RP_MILLISECONDS;
  answer(&f.w, f.drv, 0, 4, f.now);
  assert_int_equal(f.w.nq, 0);
  assert_int_equal(tun_drv_get_due(f.drv), f.now + RP_MICROSECONDS);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  assert_int_equal(tun_drv_get_due(f.drv), RP_TSTAMP_UNSET);

  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.queries, 5);
  chain_teardown(&f);
}

static void test_tundrv_chain_pack(void **state) {
  fixture f;
  size_t i;
  uint8_t q[MSG_MAX];
  size_t qlen;
  tun_peer peer;

  (void)state;
  chain_setup(&f);
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
  answer_dispatch(&f, 0, 9);
  assert_int_equal(f.w.nq, 2);
  chain_teardown(&f);
}

static void test_tundrv_chain_error_ends(void **state) {
  fixture f;
  tun_drv_stats st;

  (void)state;
  chain_setup(&f);
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
  serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 1);
  answer(&f.w, f.drv, 0, 1, f.now);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.resent, 1);
  assert_int_equal(st.rejected, 1);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  chain_teardown(&f);
}

static void test_tundrv_chain_empty_refused(void **state) {
  fixture f;
  tun_drv_stats st;
  size_t i;

  (void)state;
  chain_setup(&f);
  /* The opening queries carry no acks: refused, they cost no resend. */
  for (i = 0; i < 4; ++i) {
    refuse(&f.w, f.drv, i, f.now);
  }
  f.w.nq = 0;
  f.now += 100 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  f.w.na = 0;
  serve(&f.w, f.srv, f.now);
  answer(&f.w, f.drv, 0, 1, f.now);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.resent, 0);
  assert_int_equal(st.rejected, 4);
  chain_teardown(&f);
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
  chain_setup_with(&f, 2000, 1);
  t0 = f.now;
  /* Beside the opening, the upload's packets took a query each. */
  nup = f.w.nq - 4;
  assert_true(nup > 10);
  for (i = 0; i < nup + 4; ++i) {
    refuse(&f.w, f.drv, i, f.now);
  }
  f.w.nq = 0;
  /* Pings only (one each 100 ms) until the timeout. */
  for (i = 1; i <= 4; ++i) {
    f.now = t0 + (rp_tstamp)i * 100 * RP_MILLISECONDS + RP_MILLISECONDS;
    tun_drv_tick(f.drv, f.now);
    assert_int_equal(f.w.nq, i);
  }
  refuse(&f.w, f.drv, 0, f.now);
  f.w.nq = 0;
  f.now = t0 + 500 * RP_MILLISECONDS + RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  /* The ping and every packet again. */
  assert_int_equal(f.w.nq, nup + 1);
  for (i = 0; i < f.w.nq; ++i) {
    refuse(&f.w, f.drv, i, f.now);
  }
  f.w.nq = 0;
  /* 675 ms later, not at 500. */
  f.now = t0 + 1100 * RP_MILLISECONDS + RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  refuse(&f.w, f.drv, 0, f.now);
  f.w.nq = 0;
  f.now = t0 + 1180 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, nup);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.resent, 0);
  chain_teardown(&f);
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
  chain_setup_with(&f, 0, 1);
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
  serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 5);
  answer(&f.w, f.drv, 0, 5, f.now);
  tun_srv_get_stats(f.srv, &ss);
  assert_int_equal(ss.resends, 4);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.resent, 0);
  assert_int_equal(st.answers, 9);
  /* Each of the five owes an ack: one query carries them. */
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  chain_teardown(&f);

  /* An upload query's answer: the ack alone, no ack owed for it. */
  chain_setup_with(&f, 300, 1);
  n = f.w.nq;
  f.w.na = 0;
  serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, n);
  answer(&f.w, f.drv, 0, n, f.now);
  tun_srv_get_stats(f.srv, &ss);
  assert_true(n > 4);
  assert_int_equal(ss.answered_empty, n - 4);
  /* The four opening answers owe their acks: one query. */
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  chain_teardown(&f);
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
  chain_setup_n(&f, 2000, 1, 3);
  for (i = 0; i < f.w.nq; ++i) {
    ++per[f.w.qres[i]];
  }
  assert_true(f.w.nq > 15);
  for (i = 0; i < 3; ++i) {
    assert_true(per[i] >= 5);
  }
  chain_teardown(&f);
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
  chain_setup_full(&f, 0, 0, 3, dup_packed_4);
  assert_int_equal(f.w.nq, 4);
  serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, 4);
  answer_dispatch(&f, 0, 4);
  assert_int_equal(f.w.nq, 3);
  for (i = 0; i < 3; ++i) {
    ++seen[f.w.qres[i]];
  }
  assert_true(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
  /* Its three sends bring three answers; one of them alone owes one
     ack: one query, one send. */
  na = f.w.na;
  serve(&f.w, f.srv, f.now);
  assert_int_equal(f.w.na, na + 3);
  answer_dispatch(&f, na, na + 1);
  assert_int_equal(f.w.nq, 1);
  chain_teardown(&f);
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

    chain_setup_full(&f, 0, 0, 1, tweak[k]);
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
    chain_teardown(&f);
  }
}

static void nacks_md(tun_drv_settings *ds, tun_srv_settings *ss) {
  ds->nack_gap = 32;
  ds->nack_delay = 100 * RP_MILLISECONDS;
  ds->nack_repeat = 800 * RP_MILLISECONDS;
  /* MasterDnsVPN's server: no fast resend, so only the NACK resends. */
  tun_arq_settings_md(&ss->arq);
}

/* rcv_next returns the first segment the driver's client lacks. */
static uint32_t rcv_next(fixture *f) {
  return tun_arq_rcv_next(tun_cli_arq(tun_drv_cli(f->drv)));
}

/* take_nacks returns how many NACKs query |i| of the wire carries (the
   first in |*first|), as its server would take them. */
static size_t take_nacks(fixture *f, size_t i, tun_arq_sent *sns) {
  tun_arq_sent acks;

  tun_drv_take_blocks(f->drv, f->w.q[i], f->w.qlen[i], &acks, sns);
  return sns->n;
}

/* gap_opening serves the opening and delivers its answers but the
   second: one segment missing, first seen now; the query carrying the
   three acks goes (left in the wire). */
static void gap_opening(fixture *f) {
  tun_arq_sent sns;

  assert_int_equal(f->w.nq, 4);
  serve(&f->w, f->srv, f->now);
  assert_int_equal(f->w.na, 4);
  f->now += RP_MILLISECONDS;
  answer(&f->w, f->drv, 0, 1, f->now);
  answer(&f->w, f->drv, 2, 4, f->now);
  assert_int_equal(rcv_next(f), 1);
  f->now += RP_MICROSECONDS;
  tun_drv_tick(f->drv, f->now);
  assert_int_equal(f->w.nq, 1);
  /* No NACK at first sight. */
  assert_int_equal(take_nacks(f, 0, &sns), 0);
}

/* The client NACKs a gap when data comes once the gap is nack_delay
   old, in the query carrying that data's ack, and again only each
   nack_repeat; its server takes the NACK from that query and resends
   the segment (tun_srv_blocks). */
static void test_tundrv_chain_nack(void **state) {
  fixture f;
  tun_drv_stats st;
  tun_srv_stats s0, s1;
  tun_arq_sent sns, none;
  rp_tstamp seen, nacked;
  size_t na;

  (void)state;
  chain_setup_full(&f, 0, 0, 1, nacks_md);
  gap_opening(&f);
  seen = f.now - RP_MICROSECONDS;
  /* The acks' answer brings the next segment before nack_delay: no
     NACK yet. */
  na = f.w.na;
  serve(&f.w, f.srv, f.now);
  f.now = seen + 50 * RP_MILLISECONDS;
  answer_dispatch(&f, na, na + 1);
  assert_int_equal(f.w.nq, 1);
  assert_int_equal(take_nacks(&f, 0, &sns), 0);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.nacks, 0);
  /* That ack's answer after nack_delay: its ack and the NACK go in one
     query. */
  na = f.w.na;
  serve(&f.w, f.srv, f.now);
  f.now = seen + 100 * RP_MILLISECONDS - RP_MILLISECONDS;
  answer_dispatch(&f, na, na + 1);
  nacked = f.now;
  /* (A ping may follow it: the tick sends the acks first.) */
  assert_true(f.w.nq >= 1);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.nacks, 1);
  assert_int_equal(take_nacks(&f, 0, &sns), 1);
  assert_int_equal(sns.sn[0], 1);
  /* Taken once: a later copy of the query carries none. */
  assert_int_equal(take_nacks(&f, 0, &none), 0);
  /* The server resends segment 1 in its answer (lost here). */
  tun_srv_get_stats(f.srv, &s0);
  tun_srv_blocks(f.srv, &none, &sns);
  serve(&f.w, f.srv, f.now);
  tun_srv_get_stats(f.srv, &s1);
  assert_int_equal(s1.retransmissions, s0.retransmissions + 1);
  /* More data within nack_repeat: no NACK; after it, one more. */
  f.now = nacked + 700 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  na = f.w.na;
  serve(&f.w, f.srv, f.now);
  answer_dispatch(&f, na, na + 1);
  assert_int_equal(take_nacks(&f, 0, &sns), 0);
  f.w.nq = 0;
  f.now = nacked + 800 * RP_MILLISECONDS - RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  na = f.w.na;
  serve(&f.w, f.srv, f.now);
  answer_dispatch(&f, na, na + 1);
  assert_true(f.w.nq >= 1);
  assert_int_equal(take_nacks(&f, 0, &sns), 1);
  assert_int_equal(sns.sn[0], 1);
  tun_drv_get_stats(f.drv, &st);
  assert_int_equal(st.nacks, 2);
  chain_teardown(&f);
}

/* With no data for nack_repeat, the tick NACKs a gap: a query of its
   own, no ack in it. */
static void test_tundrv_chain_nack_idle(void **state) {
  fixture f;
  tun_arq_sent sns;
  rp_tstamp seen;

  (void)state;
  chain_setup_full(&f, 0, 0, 1, nacks_md);
  gap_opening(&f);
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
  assert_int_equal(take_nacks(&f, 0, &sns), 1);
  assert_int_equal(sns.sn[0], 1);
  chain_teardown(&f);
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
  chain_setup_full(&f, 0, 0, 3, dup3_ping2);
  t0 = f.now;
  /* The opening: 4 queries of 3 sends. */
  assert_int_equal(f.w.nq, 12);
  f.w.nq = 0;
  f.now = t0 + 100 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 2);
  assert_true(f.w.qres[0] != f.w.qres[1]);
  chain_teardown(&f);
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

    chain_setup_full(&f, 0, 0, 1, tweak[k]);
    serve(&f.w, f.srv, f.now);
    answer_dispatch(&f, 0, 4);
    assert_int_equal(f.w.nq, 1);
    assert_int_equal(acks_of(&f, 0, &acks), k == 0 ? 0 : 4);
    for (i = 0; i < acks.n; ++i) {
      assert_int_equal(acks.sn[i], (uint32_t)i);
    }
    assert_int_equal(acks_of(&f, 0, &acks), 0);
    chain_teardown(&f);
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
  chain_setup_full(&f, 0, 0, 1, busy_100us);
  serve(&f.w, f.srv, f.now);
  /* Quiet: the first answer's ack waits for the tick. */
  f.now += RP_MILLISECONDS;
  answer(&f.w, f.drv, 0, 1, f.now);
  assert_int_equal(f.w.nq, 0);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  /* A window later the client is busy: the next ack goes at once. */
  t = f.now += 10 * RP_MILLISECONDS;
  answer(&f.w, f.drv, 1, 2, f.now);
  assert_int_equal(f.w.nq, 2);
  assert_int_equal(acks_of(&f, 1, &acks), 1);
  /* Two more within the dispatcher's 100 us: one query at its end. */
  f.now += 10 * RP_MICROSECONDS;
  answer(&f.w, f.drv, 2, 3, f.now);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  f.now += 10 * RP_MICROSECONDS;
  answer(&f.w, f.drv, 3, 4, f.now);
  assert_int_equal(f.w.nq, 2);
  f.now = t + 100 * RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 3);
  assert_int_equal(acks_of(&f, 2, &acks), 2);
  /* Quiet again after two windows without data. */
  f.w.na = 0;
  serve(&f.w, f.srv, f.now);
  f.now += 20 * RP_MILLISECONDS;
  answer(&f.w, f.drv, 0, 1, f.now);
  assert_int_equal(f.w.nq, 0);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  chain_teardown(&f);
}

static void nacks_busy(tun_drv_settings *ds, tun_srv_settings *ss) {
  nacks_md(ds, ss);
  busy_100us(ds, ss);
}

/* A client busy before a quiet spell is quiet after it: the NACK the
   tick owes then waits for the tick, and so does the next answer's
   ack. */
static void test_tundrv_chain_busy_quiet(void **state) {
  fixture f;
  size_t na;

  (void)state;
  chain_setup_full(&f, 0, 0, 1, nacks_busy);
  gap_opening(&f);
  serve(&f.w, f.srv, f.now);
  na = f.w.na;
  /* A window later: busy, its ack goes at once. */
  f.now += 10 * RP_MILLISECONDS;
  answer(&f.w, f.drv, na - 1, na, f.now);
  assert_int_equal(f.w.nq, 1);
  /* No data for 800 ms: the tick's NACK, a microsecond later. */
  f.w.nq = 0;
  f.now += 800 * RP_MILLISECONDS;
  tun_drv_tick(f.drv, f.now);
  f.w.nq = 0;
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  serve(&f.w, f.srv, f.now);
  na = f.w.na;
  f.now += RP_MILLISECONDS;
  answer(&f.w, f.drv, na - 1, na, f.now);
  assert_int_equal(f.w.nq, 0);
  f.now += RP_MICROSECONDS;
  tun_drv_tick(f.drv, f.now);
  assert_int_equal(f.w.nq, 1);
  chain_teardown(&f);
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
      cmocka_unit_test(test_tundrv_chain_nack),
      cmocka_unit_test(test_tundrv_chain_nack_idle),
      cmocka_unit_test(test_tundrv_chain_ping_dup),
      cmocka_unit_test(test_tundrv_chain_acks_named),
      cmocka_unit_test(test_tundrv_chain_busy),
      cmocka_unit_test(test_tundrv_chain_busy_quiet),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
