/*
 * simnet_nodes.c: the processes' logic of the loopback machine in
 * virtual time (see simnet.h): the tunnel client (tundrv.h) with an
 * in-process pool when the cell asks for one, a relay (the pool core as
 * respool runs it, or the dnsdist model of simnet_dnsdist.c), the fake
 * resolvers (simnet_fakeres.c) and the tunnel server (tunsrv.h); it
 * starts them and hands each its datagrams and timers.
 *
 * IMPLEMENTATION NOTES
 * - Start-up check: with cell.check a resolver joins the pool when its
 *   check passed (simnet_check.c), and the client starts with the first
 *   that joined: in its own process at the in-process pool's next poll
 *   for readiness (every NODES_READY_POLL from the start, tunpool.c),
 *   behind respool at once (the CLI prints its address before its
 *   checks end, and a client's start-up takes longer than their round
 *   trip). Without it every resolver is added unchecked at the start.
 * - The download's bytes: the server's source makes a pattern of its
 *   own (byte o is byte o mod 8 of the word (o / 8 + 1) x NODES_MUL,
 *   little-endian: a multiply and a store for 8 bytes, where the loopback
 *   programs' tun_xfer_pattern_fill spends a few operations a byte), and
 *   the client checks what it reads against it (the transfer's own check
 *   is off, this one is its write_down hook: the same down_ok). A byte
 *   out of place or from another offset shows. Only this check reads the
 *   download's bytes, and the CPU model charges per datagram, so the
 *   pattern moves no figure.
 */
#include "simnet_internal.h"

#include "tunsrv.h"

#include <string.h>

/* NODES_MUL is the download pattern's multiplier (odd: each word's
   offset gives a different word). */
#define NODES_MUL 0x9e3779b97f4a7c15ULL
/* NODES_KCP_INTERVAL is dnstt's KCP flush interval (kcp-go's floor of
   10 ms for SetNoDelay's interval 0). */
/* NODES_MD_MAX_ANSWER is the real MasterDnsVPN server's answer bound
   (bytes). */
#define NODES_MD_MAX_ANSWER 1500
#define NODES_KCP_INTERVAL (10 * RP_MILLISECONDS)
/* NODES_MD_SND_WND is the send ring of the real MasterDnsVPN server's
   model, segments: past a gap the client's window holds 2 000, and up
   to 800 more go out unacked beyond it. */
#define NODES_MD_SND_WND TUN_ARQ_MAX_WND
/* NODES_MD_RESEND_FRONT is how many of its oldest timed-out packets go
   ahead of the rest: min(64, ARQ_WINDOW_SIZE / 10), its
   retransmitPriorityKinds. */
#define NODES_MD_RESEND_FRONT 64
/* NODES_MD_TIMEOUT_TICK is how often its retransmit loop looks for
   timed-out packets: max(ARQ_INITIAL_RTO_SECONDS / 3, 50 ms) with the
   sample config's 0.5 s. */
#define NODES_MD_TIMEOUT_TICK (RP_SECONDS / 6)
/* NODES_SMUX_FIRST_READ is the real dnstt client's first read of its
   smux stream, bytes: the first frame dnstt-server sent, its first read
   of the TCP source (16 KiB in 5 of the baseline's 9 rounds behind
   limited resolvers, 32 KiB in the other 4). NODES_SMUX_EVERY_READ is
   half its MaxStreamBuffer of 1 MiB: the reads between later updates. */
#define NODES_SMUX_FIRST_READ 16384
#define NODES_SMUX_EVERY_READ (512 * 1024)
/* NODES_NOISE_MSG is the real dnstt server's Noise message, bytes of
   the stream (4 096 less its 2-byte length write; tunsrv.h's
   write_msg). */
#define NODES_NOISE_MSG 4094
/* NODES_DNSTT_QUEUE is dnstt-server's send queue per client, packets
   (turbotunnel.QueueSize at e5e873b). */
#define NODES_DNSTT_QUEUE 128
/* NODES_READY_POLL is how often the in-process pool looks whether a
   resolver passed its check (TUN_POOL_POLL_MS). */
#define NODES_READY_POLL (5 * RP_MILLISECONDS)
/* The seed streams (odd constants). */
#define NODES_SEED_CLIENT 0x9e3779b97f4a7c15ULL
#define NODES_SEED_POOL 0xc2b2ae3d27d4eb4fULL
#define NODES_SEED_SERVER 0x27d4eb2f165667c5ULL
#define NODES_SEED_CHECK 0xd6e8feb86659fd93ULL

struct sim_net_nodes {
  /* The client. */
  tun_drv *drv;
  rp_tstamp next_tick;
  uint64_t rng_client;
  rp_tstamp finished_at;
  /* start_at is when the client starts (UNSET: not known yet); started
     is 1 once it did. */
  rp_tstamp start_at;
  int started;
  /* The pool, in the client's process (INPROC) or the relay's; check is
     the start-up check (nodes_in_pool). */
  rp_pool *pool;
  uint32_t pool_proc;
  uint32_t pool_ids[SIM_NET_MAX_RES];
  sim_net_check check;
  uint64_t rng_pool;
  /* The dnsdist model (its tables made only when it runs), the fake
     resolvers. */
  sim_net_dd dd;
  sim_net_fr fr;
  /* The server. */
  tun_srv *srv;
  uint8_t buf[SIM_NET_PKT_MAX];
};

/* ---------------------------------------------------------------- */
/* Callbacks of the engines                                           */
/* ---------------------------------------------------------------- */

static uint64_t nodes_client_rand(void *user_data) {
  sim_net *n = user_data;

  return sim_net_rng_next(&n->nodes->rng_client);
}

/* nodes_client_send is the client driver's send: to a resolver, to the
   in-process pool, or to the relay. */
static int nodes_client_send(uint32_t chan, size_t res, const uint8_t *data,
                             size_t len, uint32_t flags, void *user_data) {
  sim_net *n = user_data;

  if (flags & TUN_DRV_SEND_FRESH) {
    sim_net_charge(n, SIM_NET_CLIENT, n->cell.costs.client_fresh);
  }
  switch (n->cell.relay) {
  case SIM_NET_DIRECT:
    return sim_net_send(n, SIM_NET_CLIENT, chan, SIM_NET_FAKERES,
                        n->cell.first_only ? 0u : (uint32_t)res, data, len);
  case SIM_NET_INPROC:
    return sim_net_send(n, SIM_NET_CLIENT, chan, SIM_NET_CLIENT,
                        SIM_NET_PORT_POOL, data, len);
  case SIM_NET_RESPOOL:
  case SIM_NET_DNSDIST:
    return sim_net_send(n, SIM_NET_CLIENT, chan, SIM_NET_RELAY,
                        SIM_NET_PORT_POOL, data, len);
  }
  return 0;
}

static int nodes_pool_send(rp_pool *pool, uint32_t resolver_id,
                           void *resolver_user_data, uint16_t upstream_id,
                           const uint8_t *data, size_t len, uint32_t flags,
                           rp_tstamp now, void *user_data) {
  sim_net *n = user_data;
  uint32_t r = (uint32_t)(uintptr_t)resolver_user_data;

  (void)now;
  (void)pool;
  (void)resolver_id;
  (void)upstream_id;
  (void)flags;
  return sim_net_send(n, n->nodes->pool_proc, SIM_NET_PORT_UP + r,
                      SIM_NET_FAKERES, r, data, len);
}

static int nodes_pool_deliver(rp_pool *pool, const rp_client *client,
                              const uint8_t *data, size_t len, uint32_t flags,
                              rp_tstamp now, void *user_data) {
  sim_net *n = user_data;

  (void)now;
  (void)pool;
  (void)flags;
  return sim_net_send(n, n->nodes->pool_proc, SIM_NET_PORT_POOL,
                      SIM_NET_CLIENT, (uint32_t)client->id, data, len);
}

static void nodes_pool_rand(uint8_t *dest, size_t len, void *user_data) {
  sim_net *n = user_data;
  size_t i;
  uint64_t v = 0;

  for (i = 0; i < len; ++i) {
    if (i % sizeof(v) == 0) {
      v = sim_net_rng_next(&n->nodes->rng_pool);
    }
    dest[i] = (uint8_t)(v >> ((i % sizeof(v)) * 8u));
  }
}

static int nodes_srv_send(const tun_peer *peer, const uint8_t *data,
                          size_t len, void *user_data) {
  sim_net *n = user_data;
  uint32_t proc, port;

  memcpy(&proc, peer->addr, sizeof(proc));
  memcpy(&port, peer->addr + sizeof(proc), sizeof(port));
  return sim_net_send(n, SIM_NET_SERVER, 0, proc, port, data, len);
}

/* nodes_byte returns the download pattern's byte at offset |o|. */
static uint8_t nodes_byte(uint64_t o) {
  return (uint8_t)(((o / 8 + 1) * NODES_MUL) >> (8 * (o % 8)));
}

/* nodes_fill writes the |len| pattern bytes at stream offset |offset|
   to |out|: the first bytes up to a word's start one at a time, then a
   word (8 bytes) a multiply. */
static void nodes_fill(uint8_t *out, size_t len, uint64_t offset) {
  size_t i = 0;

  for (; i < len && (offset + i) % 8 != 0; ++i) {
    out[i] = nodes_byte(offset + i);
  }
  for (; i + 8 <= len; i += 8) {
    tun_xfer_store64(out + i, ((offset + i) / 8 + 1) * NODES_MUL);
  }
  for (; i < len; ++i) {
    out[i] = nodes_byte(offset + i);
  }
}

/* nodes_differ returns 1 if the |len| bytes of |data| are not the
   pattern at stream offset |offset|. */
static int nodes_differ(const uint8_t *data, size_t len, uint64_t offset) {
  uint64_t diff = 0;
  size_t i = 0;

  for (; i < len && (offset + i) % 8 != 0; ++i) {
    diff |= data[i] ^ nodes_byte(offset + i);
  }
  for (; i + 8 <= len; i += 8) {
    diff |= tun_xfer_load64(data + i) ^ ((offset + i) / 8 + 1) * NODES_MUL;
  }
  for (; i < len; ++i) {
    diff |= data[i] ^ nodes_byte(offset + i);
  }
  return diff != 0;
}

/* nodes_down_check is the transfer's write_down hook: it checks the
   |len| bytes read at the transfer's offset against the pattern, and
   returns 1 if they differ. */
static int nodes_down_check(const uint8_t *data, size_t len,
                            void *user_data) {
  sim_net_nodes *no = ((sim_net *)user_data)->nodes;

  return nodes_differ(data, len, tun_drv_xfer(no->drv)->bytes_down);
}

static size_t nodes_srv_source(uint64_t sid, uint64_t offset, uint8_t *out,
                               size_t cap, void *user_data) {
  const sim_net *n = user_data;
  uint64_t total = n->cell.serve_bytes;

  (void)sid;
  if (offset >= total) {
    return 0;
  }
  if (cap > total - offset) {
    cap = (size_t)(total - offset);
  }
  nodes_fill(out, cap, offset);
  return cap;
}

/* ---------------------------------------------------------------- */
/* Start and end                                                      */
/* ---------------------------------------------------------------- */

/* nodes_pool_add adds resolver |r| to the pool at n->now. */
static int nodes_pool_add(sim_net *n, uint32_t r) {
  return rp_pool_add_resolver(
      n->nodes->pool,
      &(rp_resolver_config){.name = n->cell.res[r].name,
                            .user_data = (void *)(uintptr_t)r},
      &n->nodes->pool_ids[r], n->now);
}

/* nodes_in_pool returns 1 if resolver |r| is in the pool: every one
   without the check, one whose check passed with it (an add that failed
   ended the run). */
static int nodes_in_pool(const sim_net *n, uint32_t r) {
  return n->nodes->pool != NULL &&
         (!n->cell.check ||
          n->nodes->check.state[r] == SIM_NET_CHECK_PASSED);
}

static int nodes_pool_start(sim_net *n, uint32_t proc) {
  sim_net_nodes *no = n->nodes;
  rp_callbacks cb = {.send_query = nodes_pool_send,
                     .deliver = nodes_pool_deliver,
                     .rand = nodes_pool_rand};
  size_t r;
  int rv;

  no->pool_proc = proc;
  n->pool_proc = proc;
  if (n->cell.sense) {
    rp_settings by_kind[RP_KIND_COUNT];

    by_kind[RP_KIND_GENERIC] = n->cell.pool_generic;
    by_kind[RP_KIND_DNSTT] = n->cell.pool;
    by_kind[RP_KIND_MASTERDNS] = n->cell.pool;
    rv = rp_pool_new(&no->pool, &n->cell.pool_generic, &cb, n->mem, n);
    if (rv == 0) {
      rv = rp_pool_sense_kind(no->pool, by_kind);
    }
  } else {
    rv = rp_pool_new(&no->pool, &n->cell.pool, &cb, n->mem, n);
  }
  if (rv == 0 && n->cell.check) {
    /* The pool's process sends the checks as it starts. */
    n->procs[proc].send_clock = 0;
    return sim_net_check_start(n, &no->check, proc,
                               n->cell.seed ^ NODES_SEED_CHECK);
  }
  for (r = 0; rv == 0 && r < n->cell.nres; ++r) {
    rv = nodes_pool_add(n, (uint32_t)r);
  }
  return rv;
}

/* nodes_cost sets the costs of process |proc|. */
static void nodes_cost(sim_net *n, uint32_t proc, rp_duration recv,
                       rp_duration send, rp_duration wake) {
  n->procs[proc].cost_recv = recv;
  n->procs[proc].cost_send = send;
  n->procs[proc].cost_wake = wake;
}

static void nodes_set_costs(sim_net *n) {
  const sim_net_costs *c = &n->cell.costs;

  nodes_cost(n, SIM_NET_CLIENT, c->client_recv, c->client_send,
             c->client_wake);
  nodes_cost(n, SIM_NET_RELAY, c->relay_recv, c->relay_send, c->relay_wake);
  nodes_cost(n, SIM_NET_FAKERES, c->fakeres_recv, c->fakeres_send,
             c->fakeres_wake);
  nodes_cost(n, SIM_NET_SERVER, c->server_recv, c->server_send,
             c->server_wake);
}

/* nodes_client_start starts the client at n->now. */
static int nodes_client_start(sim_net *n) {
  sim_net_nodes *no = n->nodes;

  no->started = 1;
  no->next_tick = n->now + tun_drv_tick_interval(no->drv);
  return tun_drv_start(no->drv, n->now);
}

int sim_net_nodes_start(sim_net *n) {
  const sim_net_cell *cell = &n->cell;
  sim_net_nodes *no;
  tun_drv_settings ds = cell->drv;
  tun_drv_callbacks dcb = {.send = nodes_client_send,
                           .rand = nodes_client_rand};
  tun_srv_settings ss;
  tun_srv_callbacks scb = {.send = nodes_srv_send,
                           .source = nodes_srv_source};
  int rv;

  if (cell->nres == 0 || cell->nres > SIM_NET_MAX_RES) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  no = n->mem->calloc(1, sizeof(*no), n->mem->user_data);
  if (no == NULL) {
    return RP_ERR_NOMEM;
  }
  n->nodes = no;
  nodes_set_costs(n);
  no->rng_client = cell->seed ^ NODES_SEED_CLIENT;
  no->rng_pool = cell->seed ^ NODES_SEED_POOL;
  no->finished_at = RP_TSTAMP_UNSET;
  rv = sim_net_fr_init(n, &no->fr);
  if (rv != 0) {
    return rv;
  }
  tun_srv_settings_default(
      &ss, cell->drv.model == TUN_DRV_MD ? TUN_MODE_MD : TUN_MODE_DNSTT);
  ss.domain = cell->drv.domain;
  if (cell->orig_server) {
    /* As the table's dnstt-orig server: --max-held 1 --serve-after
       300ms --window 64. */
    ss.max_held = 1;
    ss.serve_delay = 300 * RP_MILLISECONDS;
    ss.arq.snd_wnd = ss.arq.rcv_wnd = TUN_DRV_ORIG_WINDOW;
    if (cell->drv.ack_held) {
      /* The real dnstt-server's KCP: queued data goes in flight at its
         flush, every 10 ms (the client's side: ack_held). */
      ss.flush_interval = NODES_KCP_INTERVAL;
      /* Its KCP's packets wait in a send queue that polls drain,
         dropped past turbotunnel.QueueSize (tunsrv.h's out_queue). */
      ss.out_queue = NODES_DNSTT_QUEUE;
      /* Its acks wait in that queue too, and its KCP runs kcp-go's
         timers as the client's does. */
      ss.ack_queued = 1;
      tun_arq_settings_kcp(&ss.arq);
      /* Its KCP's writes: Noise messages, each flushed at once. */
      ss.write_msg = NODES_NOISE_MSG;
    }
  }
  if (cell->drv.chain) {
    /* MasterDnsVPN's server: answers that carry the whole download MTU
       (about 1 400 bytes on loopback for an MTU of 1 232). */
    ss.max_answer = NODES_MD_MAX_ANSWER;
    /* Its data packets are answered with their acks (tunsrv.h). */
    ss.up_ack_only = cell->drv.chain_up;
    /* Its ARQ: a window of unacked packets, its timeouts, no fast
       resend (a loss goes again on its timeout or the client's NACK). */
    tun_arq_settings_md(&ss.arq);
    /* It sends while fewer than 800 packets are unacked, whatever the
       client's window (which drops what lies past it, unacked), and its
       timed-out packets queue in its map's order, the 64 oldest first,
       each time its retransmit loop looks (docs/simulator.md, "Its
       server past the client's window"). */
    ss.arq.snd_wnd = NODES_MD_SND_WND;
    ss.arq.ignore_peer_wnd = 1;
    ss.arq.resend_front = NODES_MD_RESEND_FRONT;
    ss.arq.resend_seed = (cell->seed ^ NODES_SEED_SERVER) | 1;
    ss.arq.timeout_tick = NODES_MD_TIMEOUT_TICK;
  }
  ss.nack = cell->srv_nack;
  rv = tun_srv_new(&no->srv, &ss, &scb, n->mem, n);
  if (rv != 0) {
    return rv;
  }
  switch (cell->relay) {
  case SIM_NET_DIRECT:
    break;
  case SIM_NET_INPROC:
    rv = nodes_pool_start(n, SIM_NET_CLIENT);
    break;
  case SIM_NET_RESPOOL:
    rv = nodes_pool_start(n, SIM_NET_RELAY);
    break;
  case SIM_NET_DNSDIST:
    rv = sim_net_dd_init(n, &no->dd);
    break;
  }
  if (rv != 0) {
    return rv;
  }
  if (cell->relay != SIM_NET_DIRECT || cell->first_only) {
    ds.nres = 1;
  } else {
    ds.nres = cell->nres;
  }
  /* Nothing reads the download's hash here: its per-byte work saved. */
  ds.no_down_hash = 1;
  rv = tun_drv_new(&no->drv, &ds, &dcb, n->mem, n);
  if (rv != 0) {
    return rv;
  }
  /* The download's pattern check (see the notes). */
  tun_drv_xfer(no->drv)->check = 0;
  tun_drv_xfer(no->drv)->write_down = nodes_down_check;
  tun_drv_xfer(no->drv)->io_data = n;
  tun_drv_xfer(no->drv)->down_ends = cell->down_ends;
  if (cell->drv.kcp) {
    /* The real dnstt client's smux and Noise writes (tunsmux.h). */
    tun_smux_init(&tun_drv_xfer(no->drv)->smux, NODES_SMUX_FIRST_READ,
                  NODES_SMUX_EVERY_READ);
  }
  if (cell->check) {
    /* The client starts once a resolver passed its check. */
    no->start_at = RP_TSTAMP_UNSET;
    return 0;
  }
  /* The client starts as a program does: on its own CPU. */
  n->procs[SIM_NET_CLIENT].send_clock = 0;
  return nodes_client_start(n);
}

void sim_net_nodes_result(sim_net *n, sim_net_result *res) {
  sim_net_nodes *no = n->nodes;
  const tun_xfer *x = tun_drv_xfer(no->drv);
  rp_tstamp end = no->finished_at != RP_TSTAMP_UNSET ? no->finished_at : n->now;
  double down_s = tun_xfer_span(x, x->down_done, end);
  size_t r;

  res->finished = no->finished_at != RP_TSTAMP_UNSET &&
                  !tun_drv_failed(no->drv) && tun_xfer_complete(x);
  res->seconds = down_s;
  res->bytes_down = x->bytes_down;
  res->down_ok = x->down_ok;
  res->kbps_down = down_s > 0 ? (double)x->bytes_down * 8.0 / 1000.0 / down_s
                              : 0.0;
  tun_drv_get_stats(no->drv, &res->client);
  tun_srv_get_stats(no->srv, &res->server);
  for (r = 0; r < n->cell.nres; ++r) {
    res->received[r] = no->fr.received[r];
    res->answered[r] = no->fr.answered[r];
    res->refused[r] = no->fr.refused[r];
    res->dropped[r] = no->fr.dropped[r];
    res->lost[r] = no->fr.lost[r];
    res->overflow[r] = no->fr.overflow[r];
  }
  if (no->pool != NULL) {
    rp_pool_get_stats(no->pool, &res->pool);
    res->kind = n->cell.kind;
    if (n->cell.sense && (rp_pool_kind(no->pool) == RP_KIND_AUTO ||
                          rp_pool_kind(no->pool) == RP_KIND_GENERIC)) {
      res->kind = rp_pool_kind(no->pool);
    }
  }
}

int sim_net_nodes_sample(sim_net *n, rp_tstamp now) {
  sim_net_nodes *no = n->nodes;
  uint32_t ids[SIM_NET_MAX_RES];
  size_t r;

  for (r = 0; r < n->cell.nres; ++r) {
    ids[r] = nodes_in_pool(n, (uint32_t)r) ? no->pool_ids[r] : SIM_NET_NO_ID;
  }
  return n->cell.on_sample(n->cell.sample_arg, now, no->pool, ids,
                           n->cell.nres);
}

void sim_net_nodes_free(sim_net *n) {
  sim_net_nodes *no = n->nodes;

  if (no == NULL) {
    return;
  }
  tun_drv_del(no->drv);
  rp_pool_del(no->pool);
  tun_srv_del(no->srv);
  sim_net_fr_free(n, &no->fr);
  sim_net_dd_free(n, &no->dd);
  n->mem->free(no, n->mem->user_data);
  n->nodes = NULL;
}

/* ---------------------------------------------------------------- */
/* The client and the pools                                           */
/* ---------------------------------------------------------------- */

static void nodes_client_check(sim_net *n) {
  sim_net_nodes *no = n->nodes;

  if (tun_drv_finished(no->drv) && no->finished_at == RP_TSTAMP_UNSET) {
    no->finished_at = n->now;
    n->stop = 1;
  }
}

/* nodes_pool_join adds resolver |r|, whose check passed, to the pool,
   and sets when the client starts if it is the first (see the notes). */
static int nodes_pool_join(sim_net *n, uint32_t r) {
  sim_net_nodes *no = n->nodes;
  int rv = nodes_pool_add(n, r);

  if (rv != 0 || no->start_at != RP_TSTAMP_UNSET) {
    return rv;
  }
  if (no->pool_proc == SIM_NET_CLIENT) {
    no->start_at = (n->now / NODES_READY_POLL + 1) * NODES_READY_POLL;
    return 0;
  }
  no->start_at = n->now;
  return sim_net_rearm(n, SIM_NET_CLIENT);
}

/* nodes_pool_datagram handles what reaches a pool: a client query on its
   listener, an answer on an upstream socket. */
static int nodes_pool_datagram(sim_net *n, const sim_net_pkt *pk) {
  sim_net_nodes *no = n->nodes;
  rp_client client;
  uint32_t r;
  int rv;

  if (pk->dst_port == SIM_NET_PORT_POOL) {
    memset(&client, 0, sizeof(client));
    client.id = pk->src_port;
    rv = rp_pool_submit(no->pool, pk->data, pk->len, &client, n->now);
    return rv == RP_ERR_MALFORMED ? 0 : rv;
  }
  r = pk->dst_port - SIM_NET_PORT_UP;
  if (r >= n->cell.nres) {
    return 0;
  }
  if (!nodes_in_pool(n, r)) {
    return n->cell.check &&
                   sim_net_check_answer(&no->check, r, pk->data, pk->len)
               ? nodes_pool_join(n, r)
               : 0;
  }
  return rp_pool_on_answer(no->pool, no->pool_ids[r], pk->data, pk->len, 0,
                           n->now);
}

static int nodes_client_datagram(sim_net *n, const sim_net_pkt *pk) {
  sim_net_nodes *no = n->nodes;
  size_t res = 0;

  if (pk->dst_port >= SIM_NET_PORT_POOL) {
    return no->pool != NULL && no->pool_proc == SIM_NET_CLIENT
               ? nodes_pool_datagram(n, pk)
               : 0;
  }
  if (n->cell.relay == SIM_NET_DIRECT && !n->cell.first_only) {
    res = pk->src_port;
  }
  tun_drv_on_answer(no->drv, pk->dst_port, res, pk->data, pk->len, n->now);
  nodes_client_check(n);
  return 0;
}

static int nodes_client_timer(sim_net *n) {
  sim_net_nodes *no = n->nodes;
  rp_duration tick = tun_drv_tick_interval(no->drv);
  int rv;

  if (no->pool != NULL && no->pool_proc == SIM_NET_CLIENT &&
      n->cell.check &&
      sim_net_check_expiry(&no->check, n->cell.nres) <= n->now) {
    rv = sim_net_check_expire(n, &no->check, SIM_NET_CLIENT);
    if (rv != 0) {
      return rv;
    }
  }
  if (!no->started) {
    if (no->start_at <= n->now) {
      rv = nodes_client_start(n);
      if (rv != 0) {
        return rv;
      }
      nodes_client_check(n);
    }
  } else if (n->now >= no->next_tick) {
    tun_drv_tick(no->drv, n->now);
    while (no->next_tick <= n->now) {
      no->next_tick += tick;
    }
    nodes_client_check(n);
  } else if (tun_drv_get_due(no->drv) <= n->now) {
    /* A finer timer of the driver (MD's ack dispatch). */
    tun_drv_tick(no->drv, n->now);
    nodes_client_check(n);
  }
  if (no->pool != NULL && no->pool_proc == SIM_NET_CLIENT &&
      rp_pool_get_expiry(no->pool) <= n->now) {
    rv = rp_pool_handle_expiry(no->pool, n->now);
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- */
/* The server                                                         */
/* ---------------------------------------------------------------- */

static int nodes_server_datagram(sim_net *n, const sim_net_pkt *pk) {
  tun_peer peer;
  int rv;

  memset(&peer, 0, sizeof(peer));
  memcpy(peer.addr, &pk->src_proc, sizeof(pk->src_proc));
  memcpy(peer.addr + sizeof(pk->src_proc), &pk->src_port,
         sizeof(pk->src_port));
  peer.addrlen = sizeof(pk->src_proc) + sizeof(pk->src_port);
  /* The packets whose acks the client lost are sent again (tundrv.h's
     lost_to_srv). */
  tun_srv_add_resends(n->nodes->srv, tun_drv_take_lost_acks(n->nodes->drv));
  if (n->cell.drv.nack.gap > 0 || n->cell.drv.acks_named) {
    /* The acks by name and the NACKs this query carries (tundrv.h's
       acks_named and nack). */
    tun_arq_sent acks, nacks;

    tun_drv_take_blocks(n->nodes->drv, pk->data, pk->len, &acks, &nacks);
    tun_srv_blocks(n->nodes->srv, &acks, &nacks);
  }
  rv = tun_srv_on_datagram(n->nodes->srv, pk->data, pk->len, &peer, n->now);
  if (rv == 0 && n->cell.srv_nack.gap > 0) {
    /* The NACKs of the upload's gaps go with this query's answer. */
    uint32_t sn[TUN_NACK_GAP_MAX];
    size_t k = tun_srv_take_nacks(n->nodes->srv, sn, TUN_NACK_GAP_MAX);

    tun_drv_srv_nacks(n->nodes->drv, pk->data, pk->len, sn, k);
  }
  return rv;
}

/* ---------------------------------------------------------------- */
/* Dispatch                                                           */
/* ---------------------------------------------------------------- */

int sim_net_node_datagram(sim_net *n, uint32_t proc, const sim_net_pkt *pk) {
  switch (proc) {
  case SIM_NET_CLIENT:
    return nodes_client_datagram(n, pk);
  case SIM_NET_RELAY:
    if (n->cell.relay == SIM_NET_DNSDIST) {
      return sim_net_dd_datagram(n, &n->nodes->dd, pk);
    }
    return n->nodes->pool != NULL ? nodes_pool_datagram(n, pk) : 0;
  case SIM_NET_FAKERES: {
    int rv = 0;

    if (pk->dst_port >= SIM_NET_PORT_UP) {
      rv = sim_net_fr_answer(n, &n->nodes->fr, pk);
    } else if (pk->dst_port < n->cell.nres) {
      rv = sim_net_fr_query(n, &n->nodes->fr, pk, pk->dst_port);
    }
    return rv != 0 ? rv : sim_net_fr_wake(n, &n->nodes->fr);
  }
  case SIM_NET_SERVER:
    return nodes_server_datagram(n, pk);
  default:
    return 0;
  }
}

int sim_net_node_timer(sim_net *n, uint32_t proc) {
  sim_net_nodes *no = n->nodes;

  switch (proc) {
  case SIM_NET_CLIENT:
    return nodes_client_timer(n);
  case SIM_NET_RELAY:
    if (n->cell.relay == SIM_NET_DNSDIST) {
      sim_net_dd_sweep(n, &no->dd);
      return 0;
    }
    if (no->pool != NULL && n->cell.check &&
        sim_net_check_expiry(&no->check, n->cell.nres) <= n->now) {
      int rv = sim_net_check_expire(n, &no->check, SIM_NET_RELAY);

      if (rv != 0) {
        return rv;
      }
    }
    if (no->pool != NULL && rp_pool_get_expiry(no->pool) <= n->now) {
      return rp_pool_handle_expiry(no->pool, n->now);
    }
    return 0;
  case SIM_NET_SERVER:
    return tun_srv_handle_expiry(no->srv, n->now);
  case SIM_NET_FAKERES:
    return sim_net_fr_wake(n, &no->fr);
  default:
    return 0;
  }
}

static rp_tstamp nodes_min(rp_tstamp a, rp_tstamp b) { return a < b ? a : b; }

/* nodes_pool_expiry returns the next expiry of the pool and its checks
   (UNSET: none, or no pool). */
static rp_tstamp nodes_pool_expiry(const sim_net *n) {
  const sim_net_nodes *no = n->nodes;

  if (no->pool == NULL) {
    return RP_TSTAMP_UNSET;
  }
  return nodes_min(rp_pool_get_expiry(no->pool),
                   n->cell.check
                       ? sim_net_check_expiry(&no->check, n->cell.nres)
                       : RP_TSTAMP_UNSET);
}

rp_tstamp sim_net_node_expiry(sim_net *n, uint32_t proc) {
  sim_net_nodes *no = n->nodes;

  switch (proc) {
  case SIM_NET_CLIENT:
    if (no->finished_at != RP_TSTAMP_UNSET) {
      return RP_TSTAMP_UNSET;
    }
    return nodes_min(no->started ? nodes_min(no->next_tick,
                                             tun_drv_get_due(no->drv))
                                 : no->start_at,
                     no->pool_proc == SIM_NET_CLIENT ? nodes_pool_expiry(n)
                                                     : RP_TSTAMP_UNSET);
  case SIM_NET_RELAY:
    if (n->cell.relay == SIM_NET_DNSDIST) {
      return sim_net_dd_expiry(&no->dd);
    }
    return no->pool_proc == SIM_NET_RELAY ? nodes_pool_expiry(n)
                                          : RP_TSTAMP_UNSET;
  case SIM_NET_SERVER:
    return tun_srv_get_expiry(no->srv);
  case SIM_NET_FAKERES:
    return no->fr.wake;
  default:
    return RP_TSTAMP_UNSET;
  }
}
