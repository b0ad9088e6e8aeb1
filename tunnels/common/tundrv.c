/*
 * tundrv.c: the minimal tunnel clients' drivers (see tundrv.h).
 *
 * IMPLEMENTATION NOTES
 * - One struct for the three models; the parts a model does not use stay
 *   zero. Memory is allocated at tun_drv_new (workers) and when MD's MTU
 *   test ends (the session); nothing per query.
 * - MD sends are tracked in a table of TUN_DRV_MD_MAX_SENDS entries taken
 *   lowest first, so scans stay short (sends_hi), with the sends of each
 *   DNS ID linked in index order (id_head) for the answers' lookups.
 * - Left out: the programs' sockets, files and JSON (their business).
 */
#include "tundrv_internal.h"

#include <stdlib.h>
#include <string.h>

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
      .chain_open = DRV_MD_CHAIN_OPEN,
      .chain_delay = DRV_MD_CHAIN_DELAY,
      .chain_pack = DRV_MD_CHAIN_PACK,
      .ping_interval = DRV_MD_PING_INTERVAL,
  };
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
  if (callbacks == NULL || callbacks->send == NULL || callbacks->rand == NULL ||
      (s->model != TUN_DRV_MD &&
       (s->nworkers == 0 || s->nworkers > TUN_DRV_MAX_WORKERS)) ||
      (s->model == TUN_DRV_MD &&
       (s->nres == 0 || s->nres > TUN_DRV_MAX_RESOLVERS || s->nslots == 0 ||
        s->nslots > TUN_DRV_MAX_SLOTS || s->dup == 0 ||
        s->dup > TUN_DRV_MAX_DUP || s->dup_packed > TUN_DRV_MAX_DUP ||
        s->nack.gap > TUN_DRV_NACK_MAX ||
        s->mtu_ceiling < TUN_DRV_MTU_FLOOR ||
        (s->chain && (s->chain_pack == 0 || s->ping_interval == 0))))) {
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
  tun_nack_init(&d->nack, &s->nack);
  /* dnstt-client opens its stream only once its Noise handshake is
     answered: until the first answer it sends polls and no stream
     byte. */
  d->xfer.up_held = d->set.model == TUN_DRV_ORIGINAL;
  d->xfer.hash = !s->no_down_hash;
  if (s->model == TUN_DRV_MD) {
    d->sends =
        mem->calloc(TUN_DRV_MD_MAX_SENDS, sizeof(drv_md_send), mem->user_data);
    d->id_head = mem->calloc(DRV_MD_IDS, sizeof(uint16_t), mem->user_data);
    if (s->chain) {
      d->recs =
          mem->calloc(DRV_BLOCK_RECS, sizeof(drv_block_rec), mem->user_data);
    }
    rv = d->sends == NULL || d->id_head == NULL || (s->chain && d->recs == NULL)
             ? RP_ERR_NOMEM
             : tun_bal_init(&d->bal, s->nres, s->strategy);
  } else {
    d->workers =
        mem->calloc(d->set.nworkers, sizeof(drv_worker), mem->user_data);
    rv = d->workers == NULL ? RP_ERR_NOMEM : drv_cli_new(d, TUN_MODE_DNSTT, 0);
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
  d->mem.free(d->id_head, d->mem.user_data);
  d->mem.free(d->recs, d->mem.user_data);
  d->mem.free(d->srv_nacks, d->mem.user_data);
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
  rp_tstamp flushed;
  uint32_t want, w;
  int k;

  for (k = 0; k < DRV_ORIG_BURST && !d->finished; ++k) {
    w = tun_arq_want_output(tun_cli_arq(d->cli), now);
    want = ((w & TUN_ARQ_WANT_DATA) ? TUN_ORIG_WANT_DATA : 0) |
           ((w & TUN_ARQ_WANT_ACK) ? TUN_ORIG_WANT_ACK : 0);
    flushed = d->orig.last_ack;
    if (!tun_orig_next(&d->orig, want, now)) {
      break;
    }
    if (d->orig.last_ack != flushed) {
      /* A KCP flush: the acks it sends are those owed now, and the
         early resends it makes (kcp). */
      tun_arq_ack_flush(tun_cli_arq(d->cli));
      tun_arq_send_flush(tun_cli_arq(d->cli));
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
    /* dnstt-client's KCP (kcp-go v5) acks segments that came in order
       with one ack segment a flush. */
    os.ack_compact = d->set.kcp;
    tun_orig_init(&d->orig, &os, now);
    drv_orig_pump(d, now);
    return;
  }
  for (k = 0; k < d->set.nworkers; ++k) {
    drv_worker_send(d, k, now);
  }
}

/* ---------------------------------------------------------------- */
/* Dispatch                                                           */
/* ---------------------------------------------------------------- */

int tun_drv_start(tun_drv *d, rp_tstamp now) {
  if (d->set.model == TUN_DRV_MD) {
    tun_drv_md_start(d, now);
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
    tun_drv_md_answer(d, res, data, len, now);
  } else {
    drv_workers_answer(d, chan, data, len, now);
  }
}

size_t tun_drv_take_lost_acks(tun_drv *d) {
  size_t n = d->set.lost_to_srv ? d->lost_acks : 0;

  d->lost_acks -= n;
  return n;
}

uint64_t drv_query_key(const uint8_t *q, size_t len) {
  size_t pos = RP_DNS_HEADER_LEN;

  /* The name's labels up to its root label, whole. */
  while (pos < len && q[pos] != 0) {
    if (q[pos] > 63 || pos + 1 + q[pos] > len) {
      return 0;
    }
    pos += 1 + (size_t)q[pos];
  }
  return pos < len ? tun_xfer_fnv1a(TUN_XFER_FNV_INIT, q + RP_DNS_HEADER_LEN,
                                    pos - RP_DNS_HEADER_LEN)
                   : 0;
}

void tun_drv_take_blocks(tun_drv *d, const uint8_t *q, size_t len,
                         tun_arq_sent *acks, tun_arq_sent *nacks) {
  drv_block_rec *set;
  uint64_t key;
  size_t i;

  acks->n = nacks->n = 0;
  if (d->rec_live == 0 || (key = drv_query_key(q, len)) == 0) {
    /* Nothing to find: no hash of the query on the server's path. */
    return;
  }
  set = &d->recs[key % (DRV_BLOCK_RECS / DRV_BLOCK_WAYS) * DRV_BLOCK_WAYS];
  for (i = 0; i < DRV_BLOCK_WAYS; ++i) {
    drv_block_rec *r = &set[i];

    if (r->key == key && r->acks.n + r->nacks.n > 0) {
      *acks = r->acks;
      *nacks = r->nacks;
      r->acks.n = r->nacks.n = 0;
      --d->rec_live;
      return;
    }
  }
}

void tun_drv_srv_nacks(tun_drv *d, const uint8_t *q, size_t len,
                       const uint32_t *sn, size_t n) {
  uint64_t key = drv_query_key(q, len);
  drv_srv_nack_rec *r;

  if (n == 0 || key == 0 || d->set.model != TUN_DRV_MD) {
    return;
  }
  if (d->srv_nacks == NULL) {
    d->srv_nacks = d->mem.calloc(DRV_SRV_NACK_RECS, sizeof(*d->srv_nacks),
                                 d->mem.user_data);
    if (d->srv_nacks == NULL) {
      /* Out of memory: NACKs lost. */
      return;
    }
  }
  r = &d->srv_nacks[key % DRV_SRV_NACK_RECS];
  r->key = key;
  r->n = n < TUN_NACK_GAP_MAX ? n : TUN_NACK_GAP_MAX;
  memcpy(r->sn, sn, r->n * sizeof(r->sn[0]));
}

rp_tstamp tun_drv_get_due(const tun_drv *d) {
  rp_tstamp due, ping;

  if (d->set.model != TUN_DRV_MD || !d->set.chain || d->finished) {
    return RP_TSTAMP_UNSET;
  }
  due = d->dispatch_at;
  if (d->set.ping_wake && d->running) {
    ping = d->ping_owed_at != RP_TSTAMP_UNSET ? d->ping_owed_at
                                              : tun_ping_due(&d->ping);
    due = ping < due ? ping : due;
  }
  return due;
}

void tun_drv_tick(tun_drv *d, rp_tstamp now) {
  if (d->finished) {
    return;
  }
  if (d->set.model == TUN_DRV_MD) {
    tun_drv_md_tick(d, now);
  } else {
    drv_workers_tick(d, now);
  }
}
