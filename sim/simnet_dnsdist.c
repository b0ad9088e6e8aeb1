/*
 * simnet_dnsdist.c: the dnsdist model of the loopback machine in virtual
 * time (prefix sim_net_dd_, state in simnet_internal.h's sim_net_dd):
 * dnsdist 1.7 as the table's `dnsdist` relay runs it (leastOutstanding,
 * no cache, health checks off).
 *
 * IMPLEMENTATION NOTES
 * - Each query goes to the backend with the fewest queries outstanding
 *   (ties: the lowest index), under an ID of the relay's (a table of
 *   SIM_NET_IDS entries; a query whose slot is taken again is forgotten);
 *   its answer, whatever its rcode, goes back to the client's port.
 * - A query unanswered for SIM_NET_DD_TIMEOUT is forgotten at the next
 *   sweep (every SIM_NET_DD_SWEEP): no retry, no hedge.
 */
#include "simnet_internal.h"

#include "dns.h"

#include <string.h>

/* SIM_NET_DD_TIMEOUT is how long the model keeps a query. */
#define SIM_NET_DD_TIMEOUT (2 * RP_SECONDS)
/* SIM_NET_DD_SWEEP is the period of its sweep of old queries. */
#define SIM_NET_DD_SWEEP (100 * RP_MILLISECONDS)

int sim_net_dd_init(sim_net *n, sim_net_dd *dd) {
  memset(dd, 0, sizeof(*dd));
  dd->q = n->mem->calloc(SIM_NET_IDS, sizeof(*dd->q), n->mem->user_data);
  return dd->q == NULL ? RP_ERR_NOMEM : 0;
}

void sim_net_dd_free(sim_net *n, sim_net_dd *dd) {
  n->mem->free(dd->q, n->mem->user_data);
  dd->q = NULL;
}

int sim_net_dd_datagram(sim_net *n, sim_net_dd *dd, const sim_net_pkt *pk) {
  sim_net_dd_query *e;
  uint32_t b, best = 0;
  uint16_t id;

  if (pk->len < RP_DNS_HEADER_LEN) {
    return 0;
  }
  if (pk->dst_port == SIM_NET_PORT_POOL) {
    for (b = 1; b < n->cell.nres; ++b) {
      if (dd->outstanding[b] < dd->outstanding[best]) {
        best = b;
      }
    }
    id = dd->next++;
    e = &dd->q[id];
    if (e->used) {
      --dd->outstanding[e->backend];
    }
    *e = (sim_net_dd_query){.used = 1,
                            .backend = best,
                            .src_port = pk->src_port,
                            .id = rp_dns_get_id(pk->data),
                            .at = n->now};
    ++dd->outstanding[best];
    memcpy(dd->buf, pk->data, pk->len);
    rp_dns_set_id(dd->buf, id);
    return sim_net_send(n, SIM_NET_RELAY, SIM_NET_PORT_UP + best,
                        SIM_NET_FAKERES, best, dd->buf, pk->len);
  }
  e = &dd->q[rp_dns_get_id(pk->data)];
  if (!e->used || pk->dst_port != SIM_NET_PORT_UP + e->backend) {
    return 0;
  }
  e->used = 0;
  --dd->outstanding[e->backend];
  memcpy(dd->buf, pk->data, pk->len);
  rp_dns_set_id(dd->buf, e->id);
  return sim_net_send(n, SIM_NET_RELAY, SIM_NET_PORT_POOL, SIM_NET_CLIENT,
                      e->src_port, dd->buf, pk->len);
}

void sim_net_dd_sweep(sim_net *n, sim_net_dd *dd) {
  uint32_t i;

  for (i = 0; i < SIM_NET_IDS; ++i) {
    sim_net_dd_query *e = &dd->q[i];

    if (e->used && n->now - e->at >= SIM_NET_DD_TIMEOUT) {
      e->used = 0;
      --dd->outstanding[e->backend];
    }
  }
  dd->sweep = n->now + SIM_NET_DD_SWEEP;
}

rp_tstamp sim_net_dd_expiry(const sim_net_dd *dd) {
  return dd->sweep > 0 ? dd->sweep : SIM_NET_DD_SWEEP;
}
