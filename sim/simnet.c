/*
 * simnet.c: the engine of the loopback machine in virtual time (see
 * simnet.h): events, packets, the CPU model and the run. The processes'
 * logic is in simnet_nodes.c.
 */
#include "simnet_internal.h"

#include <stddef.h>
#include <string.h>

/* NET_FNV_OFFSET and NET_FNV_PRIME are FNV-1a 64's parameters. */
#define NET_FNV_OFFSET 0xcbf29ce484222325ULL
#define NET_FNV_PRIME 0x100000001b3ULL
/* NET_BYTE_BITS is the bits in a byte. */
#define NET_BYTE_BITS 8u
/* NET_INITIAL_CAP is the first size of the growable arrays. */
#define NET_INITIAL_CAP 256u

/* NET_US is a microsecond in ns. */
#define NET_US RP_MICROSECONDS

/* tunnels are the tunnel clients' and servers' costs, ns: per item,
   per send and per wake-up (the last row: the minimal DNSTT's, for any
   other name). The real dnstt's are its binaries' CPU per query on
   loopback. The real MasterDnsVPN client's are the time a datagram
   holds its one simulated core: its CPU per datagram via respool
   (23-28 us, in or out), not alone (51-56 us), since its Go runtime
   spreads a datagram's work over both cores; its server's are its CPU
   per query under load (25-35 us via respool or without duplication
   over three resolvers) and a fitted wake-up from idle (a lone query
   costs 98 us; alone the real server spends 71-76): docs/simulator.md,
   "The real MasterDnsVPN's server under load". The minimal ones' were
   measured on a machine twice as slow as the baseline of 2026-12-05
   and are halved (docs/simulator.md). */
typedef struct net_tunnel_costs {
  const char *name;
  rp_duration client_recv, client_send, client_wake;
  rp_duration server_recv, server_send, server_wake;
} net_tunnel_costs;

static const net_tunnel_costs tunnels[] = {
    {"real-dnstt", 50000, 40000, 10000, 45000, 35000, 10000},
    {"real-masterdns", 28000, 21000, 10000, 16000, 12000, 70000},
    {"masterdns", 2500, 2000, 4000, 2500, 2000, 4000},
    {"dnstt", 3000, 2500, 4000, 3000, 2500, 4000},
};

void sim_net_costs_default(sim_net_costs *c, const char *tunnel) {
  size_t i;
  const net_tunnel_costs *t;

  /* The fake resolvers and respool: half of what the baseline before
     2026-12-05 gave per query (2.5-3.6 us a datagram under load, 46 000
     q/s; 32 us more a query at 4 500 q/s, a wake-up for each datagram):
     the baseline of 2026-12-05 ran them at 4.6-4.9 us a query. */
  *c = (sim_net_costs){.fakeres_recv = 1500,
                       .fakeres_send = 1500,
                       .fakeres_wake = 4000,
                       .relay_recv = 1500,
                       .relay_send = 1000,
                       .relay_wake = 4000,
                       .pool_recv = 1500,
                       .pool_send = 1000,
                       .inproc = 750,
                       .client_fresh = 5500,
                       .timer = 500};
  for (i = 0; i + 1 < sizeof(tunnels) / sizeof(tunnels[0]); ++i) {
    if (strcmp(tunnel, tunnels[i].name) == 0) {
      break;
    }
  }
  t = &tunnels[i];
  c->client_recv = t->client_recv;
  c->client_send = t->client_send;
  c->client_wake = t->client_wake;
  c->server_recv = t->server_recv;
  c->server_send = t->server_send;
  c->server_wake = t->server_wake;
}

void sim_net_costs_scale(sim_net_costs *c, double factor) {
  rp_duration *fields[] = {
      &c->client_recv,  &c->client_send,  &c->client_wake, &c->client_fresh,
      &c->pool_recv,    &c->pool_send,    &c->inproc,      &c->server_recv,
      &c->server_send,  &c->server_wake,  &c->fakeres_recv, &c->fakeres_send,
      &c->fakeres_wake, &c->relay_recv,   &c->relay_send,  &c->relay_wake,
      &c->timer};
  size_t i;

  for (i = 0; i < sizeof(fields) / sizeof(fields[0]); ++i) {
    *fields[i] = (rp_duration)((double)*fields[i] * factor + 0.5);
  }
}

void sim_net_cell_default(sim_net_cell *cell) {
  memset(cell, 0, sizeof(*cell));
  tun_drv_settings_default(&cell->drv, TUN_DRV_WORKERS);
  rp_settings_default(&cell->pool, RP_KIND_GENERIC);
  sim_net_costs_default(&cell->costs, "dnstt");
  cell->ncores = 2;
  cell->link = 20 * NET_US;
  cell->link_jitter = 20 * NET_US;
  cell->fr_late = 90 * NET_US;
  cell->fr_late_jitter = 80 * NET_US;
  cell->seed = 1;
  cell->limit = 120 * RP_SECONDS;
}

/* ---------------------------------------------------------------- */
/* Small helpers                                                      */
/* ---------------------------------------------------------------- */

void sim_net_hash(sim_net *n, uint64_t v) {
  unsigned i;

  for (i = 0; i < sizeof(v); ++i) {
    n->hash ^= (v >> (i * NET_BYTE_BITS)) & 0xffu;
    n->hash *= NET_FNV_PRIME;
  }
}

uint64_t sim_net_rng_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int net_grow(sim_net *n, void **parr, size_t len, size_t *pcap,
                    size_t size) {
  size_t ncap;
  void *p;

  if (len < *pcap) {
    return 0;
  }
  ncap = *pcap ? *pcap * 2 : NET_INITIAL_CAP;
  p = n->mem->realloc(*parr, ncap * size, n->mem->user_data);
  if (p == NULL) {
    return RP_ERR_NOMEM;
  }
  *parr = p;
  *pcap = ncap;
  return 0;
}

static int net_push(sim_net *n, rp_tstamp ts, uint32_t kind, uint32_t a,
                    uint64_t b, uint32_t c) {
  sim_event ev = {.ts = ts, .kind = kind, .a = a, .b = b, .c = c};

  return sim_heap_push(&n->heap, &ev);
}

/* ---------------------------------------------------------------- */
/* Packets                                                            */
/* ---------------------------------------------------------------- */

int sim_net_pkt_alloc(sim_net *n, uint32_t *pidx) {
  int rv;

  if (n->nfree > 0) {
    *pidx = n->free_pkts[--n->nfree];
    return 0;
  }
  rv = net_grow(n, (void **)&n->pkts, n->npkts, &n->cappkts, sizeof(*n->pkts));
  if (rv != 0) {
    return rv;
  }
  rv = net_grow(n, (void **)&n->free_pkts, n->npkts, &n->capfree,
                sizeof(*n->free_pkts));
  if (rv != 0) {
    return rv;
  }
  *pidx = (uint32_t)n->npkts++;
  return 0;
}

void sim_net_pkt_free(sim_net *n, uint32_t idx) {
  n->free_pkts[n->nfree++] = idx;
}

/* ---------------------------------------------------------------- */
/* The CPU                                                            */
/* ---------------------------------------------------------------- */

/* net_item_cost returns the CPU a work item costs before its logic. */
static rp_duration net_item_cost(const sim_net *n, uint32_t proc,
                                 const sim_net_item *it) {
  const sim_net_proc *p = &n->procs[proc];
  rp_duration c = n->cell.costs.timer;

  if (it->kind == SIM_NET_ITEM_DGRAM) {
    const sim_net_pkt *pk = &n->pkts[it->arg];

    c = pk->src_proc == proc ? n->cell.costs.inproc
        : proc == n->pool_proc && pk->dst_port >= SIM_NET_PORT_POOL
            ? n->cell.costs.pool_recv
            : p->cost_recv;
  }
  return c + (p->woke ? p->cost_wake : 0);
}

static int net_ready_push(sim_net *n, uint32_t proc) {
  n->ready[(n->ready_head + n->nready) % SIM_NET_NPROCS] = proc;
  ++n->nready;
  return 0;
}

/* net_dispatch gives free cores to ready processes, in ready order. */
static int net_dispatch(sim_net *n) {
  sim_net_proc *p;
  int rv;

  while (n->free_cores > 0 && n->nready > 0) {
    uint32_t proc = n->ready[n->ready_head];

    n->ready_head = (n->ready_head + 1) % SIM_NET_NPROCS;
    --n->nready;
    p = &n->procs[proc];
    p->state = SIM_NET_RUNNING;
    --n->free_cores;
    p->cur = p->items[p->item_head];
    p->item_head = (p->item_head + 1) % p->capitems;
    --p->nitems;
    p->busy_from = n->now;
    rv = net_push(n, n->now + net_item_cost(n, proc, &p->cur), SIM_NET_EV_DONE,
                  proc, 0, 0);
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

int sim_net_work(sim_net *n, uint32_t proc, sim_net_item_kind kind,
                 uint32_t arg) {
  sim_net_proc *p = &n->procs[proc];
  size_t i;

  if (p->nitems == p->capitems) {
    size_t ncap = p->capitems ? p->capitems * 2 : NET_INITIAL_CAP;
    sim_net_item *ni = n->mem->malloc(ncap * sizeof(*ni), n->mem->user_data);

    if (ni == NULL) {
      return RP_ERR_NOMEM;
    }
    for (i = 0; i < p->nitems; ++i) {
      ni[i] = p->items[(p->item_head + i) % p->capitems];
    }
    n->mem->free(p->items, n->mem->user_data);
    p->items = ni;
    p->capitems = ncap;
    p->item_head = 0;
  }
  p->items[(p->item_head + p->nitems) % p->capitems] =
      (sim_net_item){.kind = kind, .arg = arg};
  ++p->nitems;
  if (p->state == SIM_NET_IDLE) {
    p->state = SIM_NET_READY;
    p->woke = 1;
    net_ready_push(n, proc);
    return net_dispatch(n);
  }
  return 0;
}

/* net_jitter draws a link's extra delay. */
static rp_duration net_jitter(sim_net *n) {
  if (n->cell.link_jitter == 0) {
    return 0;
  }
  return sim_net_rng_next(&n->rng_link) % (n->cell.link_jitter + 1);
}

int sim_net_pkt_new(sim_net *n, uint32_t src_proc, uint32_t src_port,
                    uint32_t dst_proc, uint32_t dst_port, const uint8_t *data,
                    size_t len, uint32_t *pidx) {
  sim_net_pkt *pk;
  int rv;

  if (len > SIM_NET_PKT_MAX) {
    ++n->oversize;
    return SIM_NET_PKT_OVERSIZE;
  }
  rv = sim_net_pkt_alloc(n, pidx);
  if (rv != 0) {
    return rv;
  }
  pk = &n->pkts[*pidx];
  pk->src_proc = src_proc;
  pk->src_port = src_port;
  pk->dst_proc = dst_proc;
  pk->dst_port = dst_port;
  pk->len = (uint32_t)len;
  memcpy(pk->data, data, len);
  return 0;
}

int sim_net_send(sim_net *n, uint32_t src_proc, uint32_t src_port,
                 uint32_t dst_proc, uint32_t dst_port, const uint8_t *data,
                 size_t len) {
  sim_net_proc *p = &n->procs[src_proc];
  uint32_t idx;
  int rv = sim_net_pkt_new(n, src_proc, src_port, dst_proc, dst_port, data,
                           len, &idx);

  if (rv != 0) {
    return rv == SIM_NET_PKT_OVERSIZE ? 0 : rv;
  }
  /* Sends leave one after another, each after its cost. */
  if (p->send_clock < n->now) {
    p->send_clock = n->now;
  }
  p->send_clock += src_proc == dst_proc ? n->cell.costs.inproc
                   : src_proc == n->pool_proc && src_port >= SIM_NET_PORT_POOL
                       ? n->cell.costs.pool_send
                       : p->cost_send;
  sim_net_hash(n, ((uint64_t)src_proc << 48) ^ ((uint64_t)dst_proc << 40) ^
                      ((uint64_t)dst_port << 16) ^ len);
  if (src_proc == dst_proc) {
    /* Handed over in process: no link, no socket. */
    return net_push(n, p->send_clock, SIM_NET_EV_ARRIVE, dst_proc, 0, idx);
  }
  return net_push(n, p->send_clock + n->cell.link + net_jitter(n),
                  SIM_NET_EV_ARRIVE, dst_proc, 0, idx);
}

int sim_net_rearm(sim_net *n, uint32_t proc) {
  sim_net_proc *p = &n->procs[proc];
  rp_tstamp at = sim_net_node_expiry(n, proc);

  if (at == p->timer_at) {
    return 0;
  }
  p->timer_at = at;
  p->timer_armed = at != RP_TSTAMP_UNSET;
  if (p->timer_armed) {
    /* Where a push of the timer event would have put it. */
    p->timer_ts = at > n->now ? at : n->now;
    p->timer_seq = sim_heap_take_seq(&n->heap);
  }
  return 0;
}

/* net_done runs the logic of |proc|'s current item, then frees its core
   once its sends have left. */
static int net_done(sim_net *n, uint32_t proc) {
  sim_net_proc *p = &n->procs[proc];
  sim_net_item it = p->cur;
  int rv;

  p->send_clock = n->now;
  if (it.kind != SIM_NET_ITEM_TIMER) {
    /* Out of the pool first: the logic's sends may grow it. */
    sim_net_pkt *pk = &n->pkts[it.arg];

    memcpy(&n->rx, pk, offsetof(sim_net_pkt, data) + pk->len);
    sim_net_pkt_free(n, it.arg);
  }
  if (it.kind == SIM_NET_ITEM_DGRAM) {
    rv = sim_net_node_datagram(n, proc, &n->rx);
  } else {
    p->timer_queued = 0;
    rv = sim_net_node_timer(n, proc);
  }
  if (rv != 0) {
    return rv;
  }
  rv = sim_net_rearm(n, proc);
  if (rv != 0) {
    return rv;
  }
  if (p->send_clock > n->now) {
    return net_push(n, p->send_clock, SIM_NET_EV_FREE, proc, 0, 0);
  }
  return sim_net_free_core(n, proc);
}

void sim_net_charge(sim_net *n, uint32_t proc, rp_duration ns) {
  sim_net_proc *p = &n->procs[proc];

  if (p->send_clock < n->now) {
    p->send_clock = n->now;
  }
  p->send_clock += ns;
}

int sim_net_free_core(sim_net *n, uint32_t proc) {
  sim_net_proc *p = &n->procs[proc];

  p->cpu += n->now - p->busy_from;
  p->woke = 0;
  ++n->free_cores;
  if (p->nitems > 0) {
    p->state = SIM_NET_READY;
    net_ready_push(n, proc);
  } else {
    p->state = SIM_NET_IDLE;
  }
  return net_dispatch(n);
}

/* ---------------------------------------------------------------- */
/* The run                                                            */
/* ---------------------------------------------------------------- */

static int net_event(sim_net *n, const sim_event *ev) {
  sim_net_proc *p = &n->procs[ev->a];

  sim_net_hash(n, ev->ts ^ ((uint64_t)ev->kind << 56) ^ ev->a);
  switch ((sim_net_ev_kind)ev->kind) {
  case SIM_NET_EV_ARRIVE:
    return sim_net_work(n, ev->a, SIM_NET_ITEM_DGRAM, ev->c);
  case SIM_NET_EV_TIMER:
    if (p->timer_queued) {
      return 0;
    }
    p->timer_queued = 1;
    p->timer_at = RP_TSTAMP_UNSET;
    return sim_net_work(n, ev->a, SIM_NET_ITEM_TIMER, 0);
  case SIM_NET_EV_DONE:
    return net_done(n, ev->a);
  case SIM_NET_EV_FREE:
    return sim_net_free_core(n, ev->a);
  }
  return 0;
}

/* net_next takes the next event into |*pev|: the heap's first or an
   armed timer, whichever comes first in (ts, seq) order. Returns 0 when
   there is none. */
static int net_next(sim_net *n, sim_event *pev) {
  const sim_event *top = sim_heap_top(&n->heap);
  sim_net_proc *best = NULL;
  uint32_t i, bi = 0;

  for (i = 0; i < SIM_NET_NPROCS; ++i) {
    sim_net_proc *p = &n->procs[i];

    if (p->timer_armed &&
        (best == NULL || p->timer_ts < best->timer_ts ||
         (p->timer_ts == best->timer_ts && p->timer_seq < best->timer_seq))) {
      best = p;
      bi = i;
    }
  }
  if (best != NULL &&
      (top == NULL || best->timer_ts < top->ts ||
       (best->timer_ts == top->ts && best->timer_seq < top->seq))) {
    best->timer_armed = 0;
    *pev = (sim_event){.ts = best->timer_ts,
                       .seq = best->timer_seq,
                       .kind = SIM_NET_EV_TIMER,
                       .a = bi};
    return 1;
  }
  return sim_heap_pop(&n->heap, pev) == 0;
}

int sim_net_run(const sim_net_cell *cell, sim_net_result *res) {
  sim_net *n;
  sim_event ev;
  rp_tstamp limit = cell->limit, next_sample = 0;
  uint32_t i;
  int rv;

  n = rp_mem_default()->calloc(1, sizeof(*n), NULL);
  if (n == NULL) {
    return RP_ERR_NOMEM;
  }
  n->mem = rp_mem_default();
  n->cell = *cell;
  n->hash = NET_FNV_OFFSET;
  n->free_cores = cell->ncores > 0 ? cell->ncores : 1;
  n->pool_proc = SIM_NET_NPROCS;
  n->rng_link = cell->seed ^ 0x94d049bb133111ebULL;
  sim_heap_init(&n->heap, n->mem);
  for (i = 0; i < SIM_NET_NPROCS; ++i) {
    n->procs[i].timer_at = RP_TSTAMP_UNSET;
  }
  memset(res, 0, sizeof(*res));
  rv = sim_net_nodes_start(n);
  for (i = 0; rv == 0 && i < SIM_NET_NPROCS; ++i) {
    rv = sim_net_rearm(n, i);
  }
  while (rv == 0 && !n->stop && net_next(n, &ev)) {
    /* Samples see the state after every event before them; they push no
       event, so the run is the same with them. */
    while (rv == 0 && cell->sample_every > 0 && cell->on_sample != NULL &&
           next_sample <= ev.ts && next_sample <= limit) {
      rv = sim_net_nodes_sample(n, next_sample);
      next_sample += cell->sample_every;
    }
    if (rv != 0) {
      break;
    }
    if (ev.ts > limit) {
      n->now = limit;
      break;
    }
    n->now = ev.ts;
    ++n->events;
    rv = net_event(n, &ev);
  }
  if (rv == 0) {
    sim_net_nodes_result(n, res);
    res->cpu_client = n->procs[SIM_NET_CLIENT].cpu;
    res->cpu_relay = n->procs[SIM_NET_RELAY].cpu;
    res->cpu_fakeres = n->procs[SIM_NET_FAKERES].cpu;
    res->cpu_server = n->procs[SIM_NET_SERVER].cpu;
    res->events = n->events;
    res->hash = n->hash;
  }
  sim_net_nodes_free(n);
  for (i = 0; i < SIM_NET_NPROCS; ++i) {
    n->mem->free(n->procs[i].items, n->mem->user_data);
  }
  sim_heap_free(&n->heap);
  n->mem->free(n->pkts, n->mem->user_data);
  n->mem->free(n->free_pkts, n->mem->user_data);
  n->mem->free(n, n->mem->user_data);
  return rv;
}
