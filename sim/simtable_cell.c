/*
 * simtable_cell.c: the simulated cell of `respool-sim table`: from a
 * setup (its resolvers and transfer) and a column (tunnel, mode and
 * client arguments) to the sim_net_cell that simnet.h runs
 * (sim_table_cell, simtable_internal.h). The table (simtable.c) and its
 * sweeps and timelines (simsweep.c) both build their cells here.
 */
#include "simtable_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CELL_TIMED_SLACK is the runner's client time limit of a timed
   transfer past its seconds, s. */
#define CELL_TIMED_SLACK 30
/* CELL_SERVE_TIMED is what the server serves in a timed cell (the
   runner's serve_bytes_timed, 1G). */
#define CELL_SERVE_TIMED (1ULL << 30)

/* table_arg returns the value of client flag |flag| in |c|'s mode_args,
   or NULL. */
static const char *table_arg(const sim_table_column *c, const char *flag) {
  size_t i;

  for (i = 0; i + 1 < c->nargs; ++i) {
    if (strcmp(c->args[i], flag) == 0) {
      return c->args[i + 1];
    }
  }
  return NULL;
}

static int table_has_arg(const sim_table_column *c, const char *flag) {
  size_t i;

  for (i = 0; i < c->nargs; ++i) {
    if (strcmp(c->args[i], flag) == 0) {
      return 1;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- */
/* A cell                                                             */
/* ---------------------------------------------------------------- */

/* sim_table_cell builds the simulated cell of |s| x |c| for |seed|. Returns
   0, or 2 with the reason in |err| (a column it cannot simulate). */
/* table_cell_tunnel gives |cell| the driver defaults of |c|'s tunnel
   and sets |*pmd| to 1 for a MasterDNS one (else 0). Returns 0, or 2
   with the reason in |err| (a tunnel it cannot simulate). */
static int table_cell_tunnel(const sim_table_column *c, sim_net_cell *cell,
                             int *pmd, char *err, size_t errlen) {
  tun_drv_settings *ds = &cell->drv;

  *pmd = 0;
  if (strcmp(c->tunnel, "dnstt") == 0 || strcmp(c->tunnel, "dnstt-orig") == 0 ||
      strcmp(c->tunnel, "real-dnstt") == 0) {
    int orig = strcmp(c->tunnel, "dnstt") != 0;

    tun_drv_settings_default(ds, orig ? TUN_DRV_ORIGINAL : TUN_DRV_WORKERS);
    cell->orig_server = orig;
    /* dnstt's KCP acks only when it flushes (docs/simulator.md). */
    ds->ack_held = strcmp(c->tunnel, "real-dnstt") == 0;
    cell->down_ends = ds->ack_held;
    ds->kcp = ds->ack_held;
  } else if (strcmp(c->tunnel, "masterdns") == 0 ||
             strcmp(c->tunnel, "real-masterdns") == 0) {
    tun_drv_settings_default(ds, TUN_DRV_MD);
    *pmd = 1;
    if (strcmp(c->tunnel, "real-masterdns") == 0) {
      /* The sample config: least loss, duplication 3, MTU 1232. */
      ds->strategy = TUN_BAL_LEAST_LOSS;
      ds->dup = 3;
      ds->mtu_ceiling = 1232;
      /* Its send loop: a query per batch of owed acks, the upload a
         query per packet; an ack lost is a packet the server sends
         again (tundrv.h). */
      ds->chain = 1;
      ds->chain_up = 1;
      /* Its packed acks go with SETUP_PACKET_DUPLICATION_COUNT (4). */
      ds->dup_packed = 4;
      /* Its balancer counts a query lost at its request timeout (5 s
         with 3 resolvers or fewer). */
      ds->bal_loss_after = 5 * RP_SECONDS;
      /* Its pings go with 2 copies at most, when its ping loop sends
         them, the loop's timer 1.5 ms late (the median measured on
         loopback: docs/simulator.md, "Its ping loop"). */
      ds->ping_dup = 2;
      ds->ping_wake = 1;
      ds->ping_late = 1500 * RP_MICROSECONDS;
      /* Its NACKs (the sample config's ARQ_DATA_NACK_*). */
      ds->nack = (tun_nack_settings){.gap = 32,
                                     .delay = 100 * RP_MILLISECONDS,
                                     .repeat = 800 * RP_MILLISECONDS};
      /* Its server NACKs the upload's gaps (the sample server config's
         ARQ_DATA_NACK_*: a gap of 32, 300 ms, 800 ms), and the client
         resends its upload's packets in its map's order: the bursts of
         resends after an upload query's answer (docs/simulator.md, "Its
         upload's resends"). */
      cell->srv_nack = (tun_nack_settings){.gap = 32,
                                           .delay = 300 * RP_MILLISECONDS,
                                           .repeat = 800 * RP_MILLISECONDS};
      ds->resend_random = 1;
      /* Its acks name their packets. */
      ds->acks_named = 1;
      /* Its dispatcher beside a busy client's readers. */
      ds->chain_busy = 100 * RP_MICROSECONDS;
      ds->chain_busy_rate = 2000;
      ds->lost_to_srv = 1;
      cell->down_ends = 1;
    }
  } else {
    snprintf(err, errlen, "tunnel %s is not simulated", c->tunnel);
    return 2;
  }
  return 0;
}

/* table_cell_client takes the client arguments of |c| that the driver
   models (workers, copies, slots) into |cell|. */
static void table_cell_client(const sim_table_column *c, int md,
                              sim_net_cell *cell) {
  tun_drv_settings *ds = &cell->drv;
  const char *v;

  if (!md && !cell->orig_server) {
    v = table_arg(c, "--udp-workers");
    ds->fresh = v == NULL;
    ds->nworkers = v != NULL ? (size_t)strtoull(v, NULL, 10) : 100;
  }
  if (md && (v = table_arg(c, "--duplication")) != NULL) {
    ds->dup = (size_t)strtoull(v, NULL, 10);
  }
  if (md && (v = table_arg(c, "-packet-duplication-count")) != NULL) {
    ds->dup = (size_t)strtoull(v, NULL, 10);
  }
  if (md && (v = table_arg(c, "--inflight")) != NULL) {
    ds->nslots = (size_t)strtoull(v, NULL, 10);
  }
}

/* table_cell_mode gives |cell| the relay of |c|'s mode. Returns 0, or 2
   with the reason in |err| (a mode it cannot simulate). */
static int table_cell_mode(const sim_table_column *c, int md,
                           sim_net_cell *cell, char *err, size_t errlen) {
  if (strcmp(c->mode, "direct-first") == 0) {
    cell->relay = SIM_NET_DIRECT;
    cell->first_only = 1;
  } else if (strcmp(c->mode, "own-balancer") == 0 ||
             strcmp(c->mode, "own-no-dup") == 0) {
    cell->relay = SIM_NET_DIRECT;
  } else if (strcmp(c->mode, "pool") == 0 || table_has_arg(c, "--pool")) {
    cell->relay = SIM_NET_INPROC;
    cell->check = 1;
  } else if (strcmp(c->mode, "respool") == 0) {
    cell->relay = SIM_NET_RESPOOL;
    /* respool-cli: the default start-up check; respool: --pretest "". */
    cell->check = strcmp(c->relay, "respool-cli") == 0;
  } else if (strcmp(c->mode, "dnsdist") == 0) {
    cell->relay = SIM_NET_DNSDIST;
  } else {
    snprintf(err, errlen, "mode %s is not simulated", c->mode);
    return 2;
  }
  if (cell->relay != SIM_NET_DIRECT) {
    /* Through a pool or relay the client sees one resolver: MD sends no
       copies of its own. */
    if (md && cell->relay != SIM_NET_DNSDIST) {
      cell->drv.dup = 1;
      cell->drv.strategy = TUN_BAL_ROUNDROBIN;
    }
  }
  return 0;
}

/* table_cell_transfer gives |cell| the transfer of setup |s|: a fixed
   download through rate-limited resolvers, else a timed one. */
static void table_cell_transfer(const sim_table *t, const sim_table_opts *o,
                                const sim_table_setup *s,
                                const sim_table_column *c, sim_net_cell *cell) {
  tun_drv_settings *ds = &cell->drv;

  if (s->rate_limited) {
    ds->down_bytes = o->quick ? t->quick_bytes : t->bytes;
    cell->serve_bytes = ds->down_bytes;
    ds->seconds = 0;
    cell->limit = (rp_duration)(c->timeout_limited * SIM_TABLE_NS_PER_S);
  } else {
    ds->down_bytes = UINT64_MAX;
    cell->serve_bytes = CELL_SERVE_TIMED;
    ds->seconds =
        o->quick ? (s->quick_seconds > 0 ? s->quick_seconds : t->quick_seconds)
                 : t->seconds;
    cell->limit =
        (rp_duration)((ds->seconds + CELL_TIMED_SLACK) * SIM_TABLE_NS_PER_S);
  }
  ds->up_bytes = t->upload_bytes;
}

int sim_table_cell(const sim_table *t, const sim_table_opts *o,
                   const sim_table_setup *s, const sim_table_column *c,
                   uint64_t seed, sim_net_cell *cell, char *err,
                   size_t errlen) {
  int md;
  size_t i;

  sim_net_cell_default(cell);
  cell->seed = seed;
  cell->ncores = o->cores;
  if (table_cell_tunnel(c, cell, &md, err, errlen) != 0) {
    return 2;
  }
  sim_net_costs_default(&cell->costs, c->tunnel);
  sim_net_costs_scale(&cell->costs, o->cost_scale);
  if (rp_dns_name_from_text(&cell->drv.domain, t->domain) != 0) {
    snprintf(err, errlen, "bad domain %s", t->domain);
    return 2;
  }
  table_cell_client(c, md, cell);
  if (table_cell_mode(c, md, cell, err, errlen) != 0) {
    return 2;
  }
  cell->kind = md ? RP_KIND_MASTERDNS : RP_KIND_DNSTT;
  rp_settings_default(&cell->pool, cell->kind);
  rp_settings_default(&cell->pool_generic, RP_KIND_GENERIC);
  for (i = 0; i < o->nsets; ++i) {
    if (rp_settings_set(&cell->pool, o->sets[i], err, errlen) != 0 ||
        rp_settings_set(&cell->pool_generic, o->sets[i], err, errlen) != 0) {
      return 2;
    }
  }
  /* respool-cli runs kind auto: generic until it has seen the client's
     queries. */
  cell->sense = cell->relay == SIM_NET_RESPOOL &&
                strcmp(c->relay, "respool-cli") == 0;
  cell->nres = s->nres;
  for (i = 0; i < s->nres; ++i) {
    if (fr_spec_parse(&cell->res[i], s->specs[i], err, errlen) != 0) {
      return 2;
    }
  }
  table_cell_transfer(t, o, s, c, cell);
  return 0;
}
