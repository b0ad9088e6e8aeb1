/*
 * tundrv_fixture.c: the tunnel driver tests' fixture (tundrv_fixture.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tundrv_fixture.h"

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

void fx_serve(wire *w, tun_srv *srv, rp_tstamp now) {
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

void fx_answer(wire *w, tun_drv *drv, size_t from, size_t to, rp_tstamp now) {
  size_t i;

  for (i = from; i < to; ++i) {
    tun_drv_on_answer(drv, (uint32_t)w->ares[i], w->ares[i], w->a[i],
                      w->alen[i], now);
  }
}

void fx_refuse(wire *w, tun_drv *drv, size_t i, rp_tstamp now) {
  uint8_t a[MSG_MAX];

  memcpy(a, w->q[i], w->qlen[i]);
  a[2] |= 0x80;                        /* QR */
  a[3] = (uint8_t)((a[3] & 0xf0) | 5); /* REFUSED */
  tun_drv_on_answer(drv, (uint32_t)w->qres[i], w->qres[i], a, w->qlen[i], now);
}

void fx_chain_setup_full(fixture *f, uint64_t up, int real, size_t nres,
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
    fx_serve(&f->w, f->srv, f->now);
    f->now += RP_MILLISECONDS;
    fx_answer(&f->w, f->drv, 0, f->w.na, f->now);
    f->w.na = 0;
  }
  /* The whole download MTU: the chain model's queries ask for it. */
  assert_int_equal(tun_drv_md_mtu(f->drv), 1232);
}

void fx_chain_setup_n(fixture *f, uint64_t up, int real, size_t nres) {
  fx_chain_setup_full(f, up, real, nres, NULL);
}

void fx_chain_setup_with(fixture *f, uint64_t up, int real) {
  fx_chain_setup_n(f, up, real, 1);
}

void fx_chain_setup(fixture *f) { fx_chain_setup_with(f, 0, 0); }

void fx_chain_teardown(fixture *f) {
  tun_drv_del(f->drv);
  tun_srv_del(f->srv);
}

void fx_answer_dispatch(fixture *f, size_t from, size_t to) {
  f->now += RP_MILLISECONDS;
  fx_answer(&f->w, f->drv, from, to, f->now);
  f->now += RP_MICROSECONDS;
  tun_drv_tick(f->drv, f->now);
}

void fx_nacks_md(tun_drv_settings *ds, tun_srv_settings *ss) {
  ds->nack = (tun_nack_settings){.gap = 32,
                                 .delay = 100 * RP_MILLISECONDS,
                                 .repeat = 800 * RP_MILLISECONDS};
  /* MasterDnsVPN's server: no fast resend, so only the NACK resends. */
  tun_arq_settings_md(&ss->arq);
}

uint32_t fx_rcv_next(fixture *f) {
  return tun_arq_rcv_next(tun_cli_arq(tun_drv_cli(f->drv)));
}

size_t fx_take_nacks(fixture *f, size_t i, tun_arq_sent *sns) {
  tun_arq_sent acks;

  tun_drv_take_blocks(f->drv, f->w.q[i], f->w.qlen[i], &acks, sns);
  return sns->n;
}

void fx_gap_opening(fixture *f) {
  tun_arq_sent sns;

  assert_int_equal(f->w.nq, 4);
  fx_serve(&f->w, f->srv, f->now);
  assert_int_equal(f->w.na, 4);
  f->now += RP_MILLISECONDS;
  fx_answer(&f->w, f->drv, 0, 1, f->now);
  fx_answer(&f->w, f->drv, 2, 4, f->now);
  assert_int_equal(fx_rcv_next(f), 1);
  f->now += RP_MICROSECONDS;
  tun_drv_tick(f->drv, f->now);
  assert_int_equal(f->w.nq, 1);
  /* No NACK at first sight. */
  assert_int_equal(fx_take_nacks(f, 0, &sns), 0);
}
