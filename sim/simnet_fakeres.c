/*
 * simnet_fakeres.c: the fake resolvers of the loopback machine in
 * virtual time (prefix sim_net_fr_, state in simnet_internal.h's
 * sim_net_fr): one process, as `fakeres -r ... --upstream` runs them,
 * each resolver deciding by its profile (fake-resolvers/fr_profile.c).
 *
 * IMPLEMENTATION NOTES
 * - An answered query is forwarded to the tunnel server under an ID of
 *   the process's own (a table of SIM_NET_IDS entries) and its answer
 *   relayed back after the profile's delay, as fr_upstream.c does; a
 *   refusal is built at once (sim_resolver_reply) and leaves after the
 *   delay; drops, losses and a dead resolver answer nothing.
 * - Delayed replies leave at the first whole millisecond at or past their
 *   due time: fakeres's one libuv timer counts whole milliseconds
 *   (fr_reply.c).
 * - Resolver r's profile draws from its own stream, seeded from the
 *   cell's seed and r.
 */
#include "simnet_internal.h"

#include "dns.h"
#include "sim_resolver.h"

#include <string.h>

/* SIM_NET_FR_TICK is fakeres's timer resolution (libuv: 1 ms). */
#define SIM_NET_FR_TICK RP_MILLISECONDS
/* SIM_NET_FR_SEED is the resolvers' seed stream (an odd constant). */
#define SIM_NET_FR_SEED 0x165667b19e3779f9ULL

int sim_net_fr_init(sim_net *n, sim_net_fr *fr) {
  size_t r;

  memset(fr, 0, sizeof(*fr));
  fr->fwd = n->mem->calloc(SIM_NET_IDS, sizeof(*fr->fwd), n->mem->user_data);
  if (fr->fwd == NULL) {
    return RP_ERR_NOMEM;
  }
  for (r = 0; r < n->cell.nres; ++r) {
    fr_profile_init(&fr->prof[r], &n->cell.res[r], 0);
    fr_rng_seed(&fr->rng[r], n->cell.seed ^ (SIM_NET_FR_SEED * (r + 1)));
  }
  return 0;
}

void sim_net_fr_free(sim_net *n, sim_net_fr *fr) {
  n->mem->free(fr->fwd, n->mem->user_data);
  fr->fwd = NULL;
}

/* fr_leave_at returns when a reply delayed by |delay| leaves (see the
   notes). */
static rp_tstamp fr_leave_at(const sim_net *n, rp_duration delay) {
  rp_tstamp due = n->now + delay;

  return (due + SIM_NET_FR_TICK - 1) / SIM_NET_FR_TICK * SIM_NET_FR_TICK;
}

int sim_net_fr_query(sim_net *n, sim_net_fr *fr, const sim_net_pkt *pk,
                     uint32_t r) {
  fr_decision d;
  sim_net_fwd *e;
  rp_ssize len;
  uint16_t id;

  ++fr->received[r];
  fr_profile_decide(&fr->prof[r], n->now, fr_rng_next, &fr->rng[r], &d);
  switch (d.verdict) {
  case FR_VERDICT_ANSWER:
  case FR_VERDICT_LOSE_AFTER:
    if (pk->len < RP_DNS_HEADER_LEN) {
      return 0;
    }
    id = fr->fwd_next++;
    e = &fr->fwd[id];
    *e = (sim_net_fwd){.used = 1,
                       .res = r,
                       .src_proc = pk->src_proc,
                       .src_port = pk->src_port,
                       .id = rp_dns_get_id(pk->data),
                       .lose = d.verdict == FR_VERDICT_LOSE_AFTER,
                       .delay = d.delay};
    memcpy(fr->buf, pk->data, pk->len);
    rp_dns_set_id(fr->buf, id);
    return sim_net_send(n, SIM_NET_FAKERES, SIM_NET_PORT_UP + r, SIM_NET_SERVER,
                        0, fr->buf, pk->len);
  case FR_VERDICT_REFUSE:
    ++fr->refused[r];
    len = sim_resolver_reply(pk->data, pk->len, FR_VERDICT_REFUSE, d.rcode, 0,
                             fr->buf, sizeof(fr->buf));
    if (len < 0) {
      return 0;
    }
    if (d.delay == 0) {
      return sim_net_send(n, SIM_NET_FAKERES, r, pk->src_proc, pk->src_port,
                          fr->buf, (size_t)len);
    }
    return sim_net_send_at(n, fr_leave_at(n, d.delay), SIM_NET_FAKERES, r,
                           pk->src_proc, pk->src_port, fr->buf, (size_t)len);
  case FR_VERDICT_DROP:
    ++fr->dropped[r];
    return 0;
  case FR_VERDICT_LOSE_BEFORE:
  case FR_VERDICT_DEAD:
    ++fr->lost[r];
    return 0;
  }
  return 0;
}

int sim_net_fr_answer(sim_net *n, sim_net_fr *fr, const sim_net_pkt *pk) {
  sim_net_fwd *e;

  if (pk->len < RP_DNS_HEADER_LEN) {
    return 0;
  }
  e = &fr->fwd[rp_dns_get_id(pk->data)];
  if (!e->used || pk->dst_port != SIM_NET_PORT_UP + e->res) {
    return 0;
  }
  e->used = 0;
  if (e->lose) {
    ++fr->lost[e->res];
    return 0;
  }
  ++fr->answered[e->res];
  memcpy(fr->buf, pk->data, pk->len);
  rp_dns_set_id(fr->buf, e->id);
  if (e->delay == 0) {
    return sim_net_send(n, SIM_NET_FAKERES, e->res, e->src_proc, e->src_port,
                        fr->buf, pk->len);
  }
  return sim_net_send_at(n, fr_leave_at(n, e->delay), SIM_NET_FAKERES,
                         e->res, e->src_proc, e->src_port, fr->buf, pk->len);
}
