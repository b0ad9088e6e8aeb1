/*
 * tundrv_fixture.h: the in-memory fixture of the tunnel driver's tests
 * (test_tundrv.c, test_tundrv_blocks.c): a chain driver (tundrv.h, the
 * simulator's model of MasterDnsVPN's send loop) and the minimal server
 * joined by a wire the test delivers by hand, on a fake clock.
 */
#ifndef TUNDRV_FIXTURE_H
#define TUNDRV_FIXTURE_H

#include "tuncli.h"
#include "tundrv.h"
#include "tunsrv.h"

#include <stddef.h>
#include <stdint.h>

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

typedef struct fixture {
  wire w;
  tun_drv *drv;
  tun_srv *srv;
  rp_tstamp now;
} fixture;

/* chain_tweak changes a test's settings before the driver and the
   server are made. */
typedef void (*chain_tweak)(tun_drv_settings *ds, tun_srv_settings *ss);

/* fx_serve hands every query sent so far to |srv| and forgets them. */
void fx_serve(wire *w, tun_srv *srv, rp_tstamp now);

/* fx_answer delivers the answers |from| .. |to| - 1 to |drv|. */
void fx_answer(wire *w, tun_drv *drv, size_t from, size_t to, rp_tstamp now);

/* fx_refuse delivers to |drv| a REFUSED answer to query |i| of |w|. */
void fx_refuse(wire *w, tun_drv *drv, size_t i, rp_tstamp now);

/* fx_chain_setup_full runs the MTU test of a chain driver over |nres|
   resolvers and leaves the opening queries in |f->w|; |up| bytes to
   upload; |real| 1 sets chain_up and lost_to_srv, and the server's
   up_ack_only (the simulator's real MasterDnsVPN); dup 1; then
   |tweak| (NULL: none). */
void fx_chain_setup_full(fixture *f, uint64_t up, int real, size_t nres,
                         chain_tweak tweak);

/* fx_chain_setup_n, fx_chain_setup_with and fx_chain_setup: the same
   with no tweak, over one resolver, and with nothing to upload and not
   real. fx_chain_teardown frees what they made. */
void fx_chain_setup_n(fixture *f, uint64_t up, int real, size_t nres);
void fx_chain_setup_with(fixture *f, uint64_t up, int real);
void fx_chain_setup(fixture *f);
void fx_chain_teardown(fixture *f);

/* fx_answer_dispatch delivers answers |from| .. |to| - 1 a millisecond
   later, then ticks the driver at the chain delay (1 us): the query
   carrying their acks goes. */
void fx_answer_dispatch(fixture *f, size_t from, size_t to);

/* fx_nacks_md is a chain_tweak: MasterDnsVPN's NACKs (a gap of 32,
   100 ms, 800 ms) and its server's ARQ (no fast resend). */
void fx_nacks_md(tun_drv_settings *ds, tun_srv_settings *ss);

/* fx_rcv_next returns the first segment the driver's client lacks. */
uint32_t fx_rcv_next(fixture *f);

/* fx_take_nacks returns how many NACKs query |i| of the wire carries
   (in |*sns|), as its server would take them. */
size_t fx_take_nacks(fixture *f, size_t i, tun_arq_sent *sns);

/* fx_gap_opening serves the opening and delivers its answers but the
   second: one segment missing, first seen now; the query carrying the
   three acks goes (left in the wire). */
void fx_gap_opening(fixture *f);

#endif
