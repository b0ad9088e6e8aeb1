/*
 * tundrv.c: the minimal tunnel clients' drivers (see tundrv.h).
 *
 * IMPLEMENTATION NOTES
 * - One struct for the three models; the parts a model does not use stay
 *   zero. Memory is allocated at tun_drv_new (workers) and when MD's MTU
 *   test ends (the session); nothing per query.
 * - MD sends are tracked in a table of TUN_DRV_MD_MAX_SENDS entries taken
 *   lowest first, so scans stay short (sends_hi).
 * - Left out: the programs' sockets, files and JSON (their business).
 */
#include "tundrv.h"

#include "tunorig.h"
#include "tunwire.h"

#include <stdlib.h>
#include <string.h>

/* DRV_WORKERS_TICK and DRV_MD_TICK are the timer periods of the DNSTT
   models and of MD. */
#define DRV_WORKERS_TICK (5 * RP_MILLISECONDS)
#define DRV_MD_TICK (2 * RP_MILLISECONDS)
/* DRV_TIMEOUT is the workers' default wait: past the server's 1 s hold
   plus a round trip. */
#define DRV_TIMEOUT (1500 * RP_MILLISECONDS)
/* DRV_POOL_WORKERS is the default worker count. */
#define DRV_POOL_WORKERS 300
/* DRV_ORIG_BURST bounds the queries one pump of the original model
   sends. */
#define DRV_ORIG_BURST 512
/* MD: the default slots, duplication and MTU ceiling. */
#define DRV_MD_SLOTS 8
#define DRV_MD_DUP 2
#define DRV_MD_CEILING 500
/* DRV_MD_PROBE_TRIES is how many probes of one size fail before a
   smaller; DRV_MD_PROBE_TIMEOUT the wait for a probe's answer. */
#define DRV_MD_PROBE_TRIES 2
#define DRV_MD_PROBE_TIMEOUT RP_SECONDS
/* DRV_MD_TIMEOUT_MIN, _MAX clamp a send's timeout; _INIT is used before
   the resolver answered. */
#define DRV_MD_TIMEOUT_MIN (50 * RP_MILLISECONDS)
#define DRV_MD_TIMEOUT_MAX RP_SECONDS
#define DRV_MD_TIMEOUT_INIT RP_SECONDS
/* TUN_DRV_MD_MAX_SENDS bounds the MD sends tracked at once. */
#define TUN_DRV_MD_MAX_SENDS 4096
/* DRV_MTU_STEP_NUM / _DEN is the MTU test's step down. */
#define DRV_MTU_STEP_NUM 3
#define DRV_MTU_STEP_DEN 4

/* drv_worker is one DNSTT worker. */
typedef struct drv_worker {
  /* waiting is 1 while a query is out; resting 1 after an error answer
     until |deadline|. */
  int waiting;
  int resting;
  /* deadline ends the wait or the rest. */
  rp_tstamp deadline;
  /* id is the DNS ID of the query out: an answer with another ID (to a
     copy of an earlier query, from a pool) gives its data but does not
     end the wait. */
  uint16_t id;
  /* opened is 1 once the worker's socket exists (a fresh one per send
     when |fresh|). */
  int opened;
  /* sent lists the upload segments of the query out. */
  tun_arq_sent sent;
} drv_worker;

/* drv_probe_stage: the MTU test tries the ceiling first; if it fails,
   the floor tells a dead resolver from one that only drops large
   answers, which then steps down from the ceiling by 3/4. */
typedef enum drv_probe_stage {
  DRV_PROBE_CEILING = 0,
  DRV_PROBE_FLOOR,
  DRV_PROBE_DESCEND
} drv_probe_stage;

/* drv_md_res is one MD resolver. */
typedef struct drv_md_res {
  /* mtu is the size its MTU test passed at, 0 while unknown or failed. */
  uint16_t mtu;
  int probing;
  uint16_t probe_size;
  uint16_t probe_nonce;
  uint16_t probe_id;
  int probe_tries;
  int probe_stage;
  rp_tstamp probe_deadline;
  /* srtt and rttvar time its sends (RP_TSTAMP_UNSET: no sample). */
  rp_duration srtt;
  rp_duration rttvar;
} drv_md_res;

/* drv_md_send is one MD send in flight. */
typedef struct drv_md_send {
  int used;
  size_t res;
  uint16_t id;
  size_t slot;
  /* gen is the slot's generation when sent. */
  uint64_t gen;
  rp_tstamp sent_at;
  rp_tstamp deadline;
} drv_md_send;

/* drv_md_slot is one MD slot. */
typedef struct drv_md_slot {
  int waiting;
  int resting;
  /* pending counts the sends of this generation still out. */
  size_t pending;
  uint64_t gen;
  rp_tstamp rest_until;
  tun_arq_sent sent;
} drv_md_slot;

struct tun_drv {
  tun_drv_settings set;
  tun_drv_callbacks cb;
  void *user_data;
  rp_mem mem;
  tun_cli *cli;
  tun_xfer xfer;
  tun_drv_stats st;
  int finished;
  /* Workers and the original model. */
  drv_worker *workers;
  tun_orig orig;
  /* MD. */
  int running;
  int failed;
  uint16_t mtu;
  tun_bal bal;
  drv_md_res res[TUN_DRV_MAX_RESOLVERS];
  drv_md_slot slots[TUN_DRV_MAX_SLOTS];
  drv_md_send *sends;
  size_t sends_hi;
  uint8_t qbuf[TUN_WIRE_MAX_MSG];
};

/* ---------------------------------------------------------------- */
/* Common                                                             */
/* ---------------------------------------------------------------- */

void tun_drv_settings_default(tun_drv_settings *s, tun_drv_model model) {
  *s = (tun_drv_settings){
      .model = model,
      .nworkers = model == TUN_DRV_ORIGINAL ? 1 : DRV_POOL_WORKERS,
      .timeout = DRV_TIMEOUT,
      .nres = 1,
      .nslots = DRV_MD_SLOTS,
      .dup = DRV_MD_DUP,
      .strategy = TUN_BAL_ROUNDROBIN,
      .mtu_ceiling = DRV_MD_CEILING,
  };
}

static uint16_t drv_rand16(tun_drv *d) {
  return (uint16_t)d->cb.rand(d->user_data);
}

static void drv_send(tun_drv *d, uint32_t chan, size_t res,
                     const uint8_t *data, size_t len, uint32_t flags) {
  if (d->cb.send(chan, res, data, len, flags, d->user_data) != 0) {
    ++d->st.send_errors;
  }
}

/* drv_progress pumps the transfer and ends the run when it is done. */
static void drv_progress(tun_drv *d, rp_tstamp now) {
  if (d->cli != NULL && !d->finished && tun_xfer_pump(&d->xfer, d->cli, now)) {
    d->finished = 1;
  }
}

static int drv_cli_new(tun_drv *d, tun_mode mode, uint16_t down_limit) {
  tun_cli_settings cs;

  tun_cli_settings_default(&cs, mode);
  if (d->set.model == TUN_DRV_ORIGINAL) {
    /* dnstt's KCP windows (turbotunnel.QueueSize / 2). */
    cs.arq.snd_wnd = cs.arq.rcv_wnd = TUN_DRV_ORIG_WINDOW;
  }
  cs.domain = d->set.domain;
  cs.sid = d->cb.rand(d->user_data);
  cs.down_limit = down_limit;
  return tun_cli_new(&d->cli, &cs, &d->mem);
}

int tun_drv_new(tun_drv **pdrv, const tun_drv_settings *settings,
                const tun_drv_callbacks *callbacks, const rp_mem *mem,
                void *user_data) {
  const tun_drv_settings *s = settings;
  tun_drv *d;
  int rv;

  if (mem == NULL) {
    mem = rp_mem_default();
  }
  if (callbacks == NULL || callbacks->send == NULL ||
      callbacks->rand == NULL ||
      (s->model != TUN_DRV_MD &&
       (s->nworkers == 0 || s->nworkers > TUN_DRV_MAX_WORKERS)) ||
      (s->model == TUN_DRV_MD &&
       (s->nres == 0 || s->nres > TUN_DRV_MAX_RESOLVERS || s->nslots == 0 ||
        s->nslots > TUN_DRV_MAX_SLOTS || s->dup == 0 ||
        s->dup > TUN_DRV_MAX_DUP || s->mtu_ceiling < TUN_DRV_MTU_FLOOR))) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  d = mem->calloc(1, sizeof(*d), mem->user_data);
  if (d == NULL) {
    return RP_ERR_NOMEM;
  }
  d->set = *s;
  if (d->set.model == TUN_DRV_ORIGINAL) {
    d->set.nworkers = 1;
    d->set.fresh = 0;
  }
  d->cb = *callbacks;
  d->user_data = user_data;
  d->mem = *mem;
  tun_xfer_init(&d->xfer, s->down_bytes, s->up_bytes, s->seconds);
  /* dnstt-client opens its stream only once its Noise handshake is
     answered: until the first answer it sends polls and no stream
     byte. */
  d->xfer.up_held = d->set.model == TUN_DRV_ORIGINAL;
  d->xfer.hash = !s->no_down_hash;
  if (s->model == TUN_DRV_MD) {
    d->sends = mem->calloc(TUN_DRV_MD_MAX_SENDS, sizeof(drv_md_send),
                           mem->user_data);
    rv = d->sends == NULL ? RP_ERR_NOMEM
                          : tun_bal_init(&d->bal, s->nres, s->strategy);
  } else {
    d->workers = mem->calloc(d->set.nworkers, sizeof(drv_worker),
                             mem->user_data);
    rv = d->workers == NULL ? RP_ERR_NOMEM
                            : drv_cli_new(d, TUN_MODE_DNSTT, 0);
  }
  if (rv != 0) {
    tun_drv_del(d);
    return rv;
  }
  *pdrv = d;
  return 0;
}

void tun_drv_del(tun_drv *d) {
  if (d == NULL) {
    return;
  }
  tun_cli_del(d->cli);
  d->mem.free(d->workers, d->mem.user_data);
  d->mem.free(d->sends, d->mem.user_data);
  d->mem.free(d, d->mem.user_data);
}

tun_xfer *tun_drv_xfer(tun_drv *d) { return &d->xfer; }

tun_cli *tun_drv_cli(tun_drv *d) { return d->cli; }

int tun_drv_finished(const tun_drv *d) { return d->finished; }

int tun_drv_failed(const tun_drv *d) { return d->failed; }

void tun_drv_get_stats(const tun_drv *d, tun_drv_stats *stats) {
  *stats = d->st;
}

rp_duration tun_drv_tick_interval(const tun_drv *d) {
  return d->set.model == TUN_DRV_MD ? DRV_MD_TICK : DRV_WORKERS_TICK;
}

uint16_t tun_drv_md_mtu(const tun_drv *d) { return d->mtu; }

uint16_t tun_drv_md_res_mtu(const tun_drv *d, size_t i) {
  return i < TUN_DRV_MAX_RESOLVERS ? d->res[i].mtu : 0;
}

const tun_bal *tun_drv_md_bal(const tun_drv *d) { return &d->bal; }

/* ---------------------------------------------------------------- */
/* Workers and the original model                                     */
/* ---------------------------------------------------------------- */

/* drv_worker_send sends worker |i|'s next query. */
static void drv_worker_send(tun_drv *d, size_t i, rp_tstamp now) {
  drv_worker *w = &d->workers[i];
  uint32_t flags = 0;
  rp_ssize n;

  if (d->finished) {
    return;
  }
  if (!w->opened || d->set.fresh) {
    flags |= d->set.fresh ? TUN_DRV_SEND_FRESH : 0;
    w->opened = 1;
  }
  w->id = drv_rand16(d);
  n = tun_cli_build_query(d->cli, d->qbuf, sizeof(d->qbuf), w->id,
                          drv_rand16(d), now, &w->sent);
  w->waiting = 1;
  w->resting = 0;
  w->deadline = now + d->set.timeout;
  if (n < 0) {
    return;
  }
  ++d->st.queries;
  drv_send(d, (uint32_t)i, 0, d->qbuf, (size_t)n, flags);
}

/* drv_orig_pump sends every query the original client would send now:
   one for each due data packet or owed ack, and the polls it may. */
static void drv_orig_pump(tun_drv *d, rp_tstamp now) {
  uint32_t want, w;
  int k;

  for (k = 0; k < DRV_ORIG_BURST && !d->finished; ++k) {
    w = tun_arq_want_output(tun_cli_arq(d->cli), now);
    want = ((w & TUN_ARQ_WANT_DATA) ? TUN_ORIG_WANT_DATA : 0) |
           ((w & TUN_ARQ_WANT_ACK) ? TUN_ORIG_WANT_ACK : 0);
    if (!tun_orig_next(&d->orig, want, now)) {
      break;
    }
    drv_worker_send(d, 0, now);
  }
}

/* drv_rest returns how long a worker rests after an error answer: on
   average one timeout from the send, drawn uniformly from half to one and
   a half, so that workers refused together do not come back together. */
static rp_duration drv_rest(tun_drv *d) {
  uint64_t r = d->cb.rand(d->user_data) % (d->set.timeout + 1);

  return d->set.timeout / 2 + r;
}

static void drv_workers_answer(tun_drv *d, uint32_t chan, const uint8_t *data,
                               size_t len, rp_tstamp now) {
  drv_worker *w;
  int rv, mine;

  if (chan >= d->set.nworkers) {
    return;
  }
  w = &d->workers[chan];
  if (d->set.model == TUN_DRV_ORIGINAL) {
    /* The original client: any answer, data or not; an error answer
       changes nothing (no poll, no resend). */
    rv = tun_cli_on_answer(d->cli, data, len, now);
    if (rv < 0) {
      ++d->st.rejected;
      return;
    }
    ++d->st.answers;
    tun_orig_on_answer(&d->orig, rv);
    /* The first answer opens the session (the Noise handshake's round
       trip): the stream's bytes may go from now on. */
    d->xfer.up_held = 0;
    drv_progress(d, now);
    drv_orig_pump(d, now);
    return;
  }
  mine = w->waiting && rp_dns_get_id(data) == w->id;
  rv = tun_cli_on_answer(d->cli, data, len, now);
  if (rv < 0) {
    ++d->st.rejected;
    if (mine) {
      /* Like dnstt: no new query for an error answer until the wait
         would have ended. */
      w->waiting = 0;
      w->resting = 1;
      w->deadline = now + drv_rest(d);
      /* Its upload segments are lost for sure: resend them at once. */
      tun_cli_nack(d->cli, &w->sent);
    }
    return;
  }
  ++d->st.answers;
  drv_progress(d, now);
  if (mine) {
    w->waiting = 0;
    drv_worker_send(d, chan, now);
  }
}

static void drv_workers_tick(tun_drv *d, rp_tstamp now) {
  size_t i;

  tun_arq_handle_expiry(tun_cli_arq(d->cli), now);
  drv_progress(d, now);
  if (d->set.model == TUN_DRV_ORIGINAL) {
    drv_orig_pump(d, now);
    return;
  }
  for (i = 0; i < d->set.nworkers && !d->finished; ++i) {
    drv_worker *w = &d->workers[i];

    if ((w->waiting || w->resting) && now >= w->deadline) {
      if (w->waiting) {
        ++d->st.timeouts;
      }
      drv_worker_send(d, i, now);
    }
  }
}

static void drv_workers_start(tun_drv *d, rp_tstamp now) {
  size_t k;

  drv_progress(d, now);
  if (d->set.model == TUN_DRV_ORIGINAL) {
    tun_orig_settings os;

    tun_orig_settings_default(&os);
    tun_orig_init(&d->orig, &os, now);
    drv_orig_pump(d, now);
    return;
  }
  for (k = 0; k < d->set.nworkers; ++k) {
    drv_worker_send(d, k, now);
  }
}

/* ---------------------------------------------------------------- */
/* MD: probes (the MTU test and background rechecks)                  */
/* ---------------------------------------------------------------- */

static rp_duration drv_md_timeout(const drv_md_res *r) {
  rp_duration t;

  if (r->srtt == RP_TSTAMP_UNSET) {
    return DRV_MD_TIMEOUT_INIT;
  }
  /* A steady resolver has a tiny rttvar: keep a quarter of srtt as a
     floor of the margin so that it does not time out on jitter. */
  t = r->srtt + (4 * r->rttvar > r->srtt / 4 ? 4 * r->rttvar : r->srtt / 4);
  if (t < DRV_MD_TIMEOUT_MIN) {
    t = DRV_MD_TIMEOUT_MIN;
  }
  return t > DRV_MD_TIMEOUT_MAX ? DRV_MD_TIMEOUT_MAX : t;
}

static void drv_probe_send(tun_drv *d, size_t i, rp_tstamp now) {
  drv_md_res *r = &d->res[i];
  rp_ssize n;

  r->probing = 1;
  r->probe_nonce = drv_rand16(d);
  r->probe_id = drv_rand16(d);
  r->probe_deadline = now + DRV_MD_PROBE_TIMEOUT;
  n = tun_cli_build_probe(d->qbuf, sizeof(d->qbuf), r->probe_id,
                          &d->set.domain, r->probe_nonce, r->probe_size);
  if (n > 0) {
    drv_send(d, (uint32_t)i, i, d->qbuf, (size_t)n, TUN_DRV_SEND_PROBE);
  }
}

static void drv_md_start_run(tun_drv *d, rp_tstamp now);

/* drv_mtu_check ends the MTU test once no resolver is probing. */
static void drv_mtu_check(tun_drv *d, rp_tstamp now) {
  size_t i;
  uint16_t mtu = 0;

  if (d->running) {
    return;
  }
  for (i = 0; i < d->set.nres; ++i) {
    if (d->res[i].probing) {
      return;
    }
  }
  for (i = 0; i < d->set.nres; ++i) {
    drv_md_res *r = &d->res[i];

    tun_bal_set_active(&d->bal, i, r->mtu != 0, now);
    if (r->mtu != 0 && (mtu == 0 || r->mtu < mtu)) {
      mtu = r->mtu;
    }
  }
  if (mtu == 0) {
    d->failed = 1;
    d->finished = 1;
    return;
  }
  d->mtu = mtu;
  drv_md_start_run(d, now);
}

static void drv_probe_answer(tun_drv *d, size_t i, const uint8_t *data,
                             size_t len, rp_tstamp now) {
  drv_md_res *r = &d->res[i];

  if (!tun_cli_check_probe(data, len, r->probe_nonce, r->probe_size)) {
    return;
  }
  r->probing = 0;
  if (!d->running && r->probe_stage == DRV_PROBE_FLOOR) {
    /* Alive: find the size between the floor and the ceiling. */
    r->probe_stage = DRV_PROBE_DESCEND;
    r->probe_tries = 0;
    r->probe_size =
        (uint16_t)(d->set.mtu_ceiling * DRV_MTU_STEP_NUM / DRV_MTU_STEP_DEN);
    if (r->probe_size > TUN_DRV_MTU_FLOOR) {
      drv_probe_send(d, i, now);
      return;
    }
    r->probe_size = TUN_DRV_MTU_FLOOR;
  }
  if (!d->running) {
    r->mtu = r->probe_size;
    drv_mtu_check(d, now);
  } else if (!d->bal.res[i].active) {
    /* A background recheck passed. */
    tun_bal_set_active(&d->bal, i, 1, now);
  }
}

static void drv_probe_timeout(tun_drv *d, size_t i, rp_tstamp now) {
  drv_md_res *r = &d->res[i];

  r->probing = 0;
  if (d->running) {
    return;
  }
  if (++r->probe_tries < DRV_MD_PROBE_TRIES) {
    drv_probe_send(d, i, now);
    return;
  }
  r->probe_tries = 0;
  switch ((drv_probe_stage)r->probe_stage) {
  case DRV_PROBE_CEILING:
    r->probe_stage = DRV_PROBE_FLOOR;
    r->probe_size = TUN_DRV_MTU_FLOOR;
    break;
  case DRV_PROBE_FLOOR:
    /* Dead, or not even the floor gets through. */
    r->mtu = 0;
    drv_mtu_check(d, now);
    return;
  case DRV_PROBE_DESCEND:
    r->probe_size =
        (uint16_t)(r->probe_size * DRV_MTU_STEP_NUM / DRV_MTU_STEP_DEN);
    if (r->probe_size <= TUN_DRV_MTU_FLOOR) {
      /* The floor passed before. */
      r->mtu = TUN_DRV_MTU_FLOOR;
      drv_mtu_check(d, now);
      return;
    }
    break;
  }
  drv_probe_send(d, i, now);
}

/* ---------------------------------------------------------------- */
/* MD: queries                                                        */
/* ---------------------------------------------------------------- */

static drv_md_send *drv_send_alloc(tun_drv *d) {
  size_t i;

  for (i = 0; i < TUN_DRV_MD_MAX_SENDS; ++i) {
    if (!d->sends[i].used) {
      if (i + 1 > d->sends_hi) {
        d->sends_hi = i + 1;
      }
      return &d->sends[i];
    }
  }
  return NULL;
}

/* drv_send_free releases |s| and shrinks sends_hi. */
static void drv_send_free(tun_drv *d, drv_md_send *s) {
  s->used = 0;
  while (d->sends_hi > 0 && !d->sends[d->sends_hi - 1].used) {
    --d->sends_hi;
  }
}

static void drv_slot_send(tun_drv *d, size_t si, rp_tstamp now) {
  drv_md_slot *slot = &d->slots[si];
  size_t targets[TUN_DRV_MAX_DUP], nt = 1, k;
  uint16_t id = drv_rand16(d);
  rp_ssize n;

  if (d->finished) {
    return;
  }
  n = tun_cli_build_query(d->cli, d->qbuf, sizeof(d->qbuf), id, drv_rand16(d),
                          now, &slot->sent);
  ++slot->gen;
  slot->waiting = 1;
  slot->resting = 0;
  slot->pending = 0;
  if (n < 0) {
    slot->waiting = 0;
    slot->resting = 1;
    slot->rest_until = now + DRV_MD_TIMEOUT_MIN;
    return;
  }
  ++d->st.queries;
  targets[0] = tun_bal_pick(&d->bal);
  if (d->set.dup > 1) {
    nt += tun_bal_pick_copies(&d->bal, targets[0], d->set.dup - 1,
                              targets + 1);
  }
  for (k = 0; k < nt; ++k) {
    drv_md_send *s = drv_send_alloc(d);

    if (s == NULL) {
      break;
    }
    *s = (drv_md_send){.used = 1,
                       .res = targets[k],
                       .id = id,
                       .slot = si,
                       .gen = slot->gen,
                       .sent_at = now,
                       .deadline = now + drv_md_timeout(&d->res[targets[k]])};
    ++slot->pending;
    tun_bal_on_sent(&d->bal, targets[k]);
    if (k > 0) {
      ++d->st.copies;
    }
    drv_send(d, (uint32_t)targets[k], targets[k], d->qbuf, (size_t)n, 0);
  }
  if (slot->pending == 0) {
    slot->waiting = 0;
    slot->resting = 1;
    slot->rest_until = now + DRV_MD_TIMEOUT_MIN;
  }
}

static void drv_md_start_run(tun_drv *d, rp_tstamp now) {
  size_t i;

  if (drv_cli_new(d, TUN_MODE_MD, d->mtu) != 0) {
    d->failed = 1;
    d->finished = 1;
    return;
  }
  d->running = 1;
  drv_progress(d, now);
  for (i = 0; i < d->set.nslots; ++i) {
    drv_slot_send(d, i, now);
  }
}

/* drv_md_send_done ends send |s|; |ok| is 1 for a NOERROR answer, 0 for
   an error answer, -1 for a timeout. */
static void drv_md_send_done(tun_drv *d, drv_md_send *s, int ok,
                             rp_tstamp now) {
  drv_md_slot *slot = &d->slots[s->slot];
  drv_md_res *r = &d->res[s->res];

  drv_send_free(d, s);
  if (s->gen != slot->gen || !slot->waiting) {
    return;
  }
  if (ok > 0) {
    slot->waiting = 0;
    drv_slot_send(d, s->slot, now);
    return;
  }
  if (--slot->pending == 0) {
    if (ok == 0) {
      /* Refused: its upload packet is lost for sure. */
      tun_cli_nack(d->cli, &slot->sent);
    }
    slot->waiting = 0;
    slot->resting = 1;
    slot->rest_until = now + drv_md_timeout(r);
  }
}

static void drv_md_answer(tun_drv *d, size_t ri, const uint8_t *data,
                          size_t len, rp_tstamp now) {
  drv_md_res *r;
  uint16_t id;
  size_t i;
  int rv, ok;

  if (ri >= d->set.nres) {
    return;
  }
  r = &d->res[ri];
  id = rp_dns_get_id(data);
  if (r->probing && id == r->probe_id) {
    drv_probe_answer(d, ri, data, len, now);
    return;
  }
  if (!d->running) {
    return;
  }
  rv = tun_cli_on_answer(d->cli, data, len, now);
  ok = rv >= 0;
  if (ok) {
    ++d->st.answers;
  } else {
    ++d->st.rejected;
  }
  for (i = 0; i < d->sends_hi; ++i) {
    drv_md_send *s = &d->sends[i];

    if (s->used && s->res == ri && s->id == id) {
      rp_duration rtt = now - s->sent_at;

      if (ok) {
        tun_arq_rtt_update(&r->srtt, &r->rttvar, rtt);
      }
      tun_bal_on_answer(&d->bal, ri, rtt, ok, now);
      drv_progress(d, now);
      drv_md_send_done(d, s, ok, now);
      return;
    }
  }
  ++d->st.unmatched;
  drv_progress(d, now);
}

static void drv_md_tick(tun_drv *d, rp_tstamp now) {
  size_t i;

  for (i = 0; i < d->set.nres && !d->finished; ++i) {
    drv_md_res *r = &d->res[i];

    if (r->probing && now >= r->probe_deadline) {
      drv_probe_timeout(d, i, now);
    } else if (d->running && !r->probing &&
               tun_bal_recheck_due(&d->bal, i, now)) {
      r->probe_size = d->mtu;
      drv_probe_send(d, i, now);
    }
  }
  if (!d->running) {
    return;
  }
  tun_arq_handle_expiry(tun_cli_arq(d->cli), now);
  for (i = 0; i < d->sends_hi && !d->finished; ++i) {
    drv_md_send *s = &d->sends[i];

    if (s->used && now >= s->deadline) {
      ++d->st.timeouts;
      tun_bal_on_timeout(&d->bal, s->res, now);
      drv_md_send_done(d, s, -1, now);
    }
  }
  for (i = 0; i < d->set.nslots && !d->finished; ++i) {
    drv_md_slot *slot = &d->slots[i];

    if (slot->resting && now >= slot->rest_until) {
      drv_slot_send(d, i, now);
    }
  }
  drv_progress(d, now);
}

static void drv_md_start(tun_drv *d, rp_tstamp now) {
  size_t k;

  for (k = 0; k < d->set.nres; ++k) {
    d->res[k].srtt = RP_TSTAMP_UNSET;
    d->res[k].probe_size = d->set.mtu_ceiling;
    drv_probe_send(d, k, now);
  }
}

/* ---------------------------------------------------------------- */
/* Dispatch                                                           */
/* ---------------------------------------------------------------- */

int tun_drv_start(tun_drv *d, rp_tstamp now) {
  if (d->set.model == TUN_DRV_MD) {
    drv_md_start(d, now);
  } else {
    drv_workers_start(d, now);
  }
  return 0;
}

void tun_drv_on_answer(tun_drv *d, uint32_t chan, size_t res,
                       const uint8_t *data, size_t len, rp_tstamp now) {
  if (len < RP_DNS_HEADER_LEN || d->finished) {
    return;
  }
  if (d->set.model == TUN_DRV_MD) {
    drv_md_answer(d, res, data, len, now);
  } else {
    drv_workers_answer(d, chan, data, len, now);
  }
}

void tun_drv_tick(tun_drv *d, rp_tstamp now) {
  if (d->finished) {
    return;
  }
  if (d->set.model == TUN_DRV_MD) {
    drv_md_tick(d, now);
  } else {
    drv_workers_tick(d, now);
  }
}
