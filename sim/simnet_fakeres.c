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
 * - Delayed replies leave from fakeres's one libuv timer (fr_reply.c),
 *   modelled with the loop around it. The timer counts whole
 *   milliseconds of the loop's time, its milliseconds truncated: armed
 *   at x for the heap's top, it is due at the boundary
 *   B = floor(x) + ceil(top.due - x). The loop runs it at its first
 *   wake whose floor(time) >= B, and the callback sends what is due by
 *   then (a reply not yet due waits for the next boundary). The loop
 *   wakes on each datagram it handles and from its epoll timeout, taken
 *   at each wake y as B - floor(y) whole milliseconds: so that wake
 *   comes at B plus the fraction of a millisecond of the loop's last
 *   wake, plus the kernel's lateness (cell.fr_late, fr_late_jitter).
 *   The replies so leave at any fraction of a millisecond, as the real
 *   fakeres's do, and the phase moves with each wake.
 * - Resolver r's profile draws from its own stream, seeded from the
 *   cell's seed and r.
 */
#include "simnet_internal.h"

#include "dns.h"
#include "sim_resolver.h"

#include <string.h>

/* SIM_NET_FR_TICK is fakeres's timer resolution (libuv: 1 ms). */
#define SIM_NET_FR_TICK RP_MILLISECONDS
/* SIM_NET_FR_SEED is the resolvers' seed stream (an odd constant);
   SIM_NET_FR_SEED_LATE the loop's lateness stream. */
#define SIM_NET_FR_SEED 0x165667b19e3779f9ULL
#define SIM_NET_FR_SEED_LATE 0x27d4eb2f165667c5ULL
/* SIM_NET_FR_HELD_MAX caps the replies waiting for their delay, as
   fakeres's FR_SERVER_DELAYED_MAX does; one more is counted as
   overflow. */
#define SIM_NET_FR_HELD_MAX 65536u

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
  sim_heap_init(&fr->held, n->mem);
  fr->rng_late = n->cell.seed ^ SIM_NET_FR_SEED_LATE;
  fr->wake = RP_TSTAMP_UNSET;
  return 0;
}

void sim_net_fr_free(sim_net *n, sim_net_fr *fr) {
  sim_event ev;

  while (sim_heap_pop(&fr->held, &ev) == 0) {
    sim_net_pkt_free(n, ev.c);
  }
  sim_heap_free(&fr->held);
  n->mem->free(fr->fwd, n->mem->user_data);
  fr->fwd = NULL;
}

/* ---------------------------------------------------------------- */
/* The delayed replies and the loop's timer                           */
/* ---------------------------------------------------------------- */

static rp_tstamp fr_floor(rp_tstamp t) {
  return t / SIM_NET_FR_TICK * SIM_NET_FR_TICK;
}

rp_tstamp sim_net_fr_boundary(rp_tstamp now, rp_tstamp due) {
  rp_tstamp b = fr_floor(now);

  if (due > now) {
    b += (due - now + SIM_NET_FR_TICK - 1) / SIM_NET_FR_TICK * SIM_NET_FR_TICK;
  }
  return b;
}

int sim_net_fr_timer_due(rp_tstamp now, rp_tstamp boundary) {
  return fr_floor(now) >= boundary;
}

rp_tstamp sim_net_fr_sleep(rp_tstamp now, rp_tstamp boundary,
                           rp_duration late) {
  rp_tstamp floor_now = fr_floor(now);

  return now + (boundary > floor_now ? boundary - floor_now : 0) + late;
}

/* fr_arm arms the timer at n->now for the earliest reply held
   (fr_reply.c's delay_timer_rearm), or stops it. */
static void fr_arm(const sim_net *n, sim_net_fr *fr) {
  const sim_event *top = sim_heap_top(&fr->held);

  fr->armed = top != NULL;
  if (fr->armed) {
    fr->boundary = sim_net_fr_boundary(n->now, top->ts);
  }
}

/* fr_later holds a reply of |len| bytes in fr->buf from resolver |r| to
   |proc|:|port| for |delay|. */
static int fr_later(sim_net *n, sim_net_fr *fr, uint32_t r, uint32_t proc,
                    uint32_t port, size_t len, rp_duration delay) {
  sim_event ev = {0};
  int rv;

  if (sim_heap_len(&fr->held) >= SIM_NET_FR_HELD_MAX) {
    ++fr->overflow[r];
    return 0;
  }
  rv = sim_net_pkt_new(n, SIM_NET_FAKERES, r, proc, port, fr->buf, len, &ev.c);
  if (rv != 0) {
    return rv == SIM_NET_PKT_OVERSIZE ? 0 : rv;
  }
  ev.ts = n->now + delay;
  rv = sim_heap_push(&fr->held, &ev);
  if (rv != 0) {
    sim_net_pkt_free(n, ev.c);
    return rv;
  }
  /* The new earliest (its packet is held once): the timer is armed
     again for it. */
  if (sim_heap_top(&fr->held)->c == ev.c) {
    fr_arm(n, fr);
  }
  return 0;
}

int sim_net_fr_wake(sim_net *n, sim_net_fr *fr) {
  rp_duration late = n->cell.fr_late;

  /* The timers run after the datagrams of the wake (libuv's next
     iteration), then the loop sleeps. */
  if (fr->armed && sim_net_fr_timer_due(n->now, fr->boundary)) {
    const sim_event *top;

    while ((top = sim_heap_top(&fr->held)) != NULL && top->ts <= n->now) {
      sim_event ev;
      const sim_net_pkt *pk;
      int rv;

      sim_heap_pop(&fr->held, &ev);
      pk = &n->pkts[ev.c];
      /* Copied out first: the send's packet may move n->pkts. */
      memcpy(fr->buf, pk->data, pk->len);
      rv = sim_net_send(n, SIM_NET_FAKERES, pk->src_port, pk->dst_proc,
                        pk->dst_port, fr->buf, pk->len);
      sim_net_pkt_free(n, ev.c);
      if (rv != 0) {
        return rv;
      }
    }
    fr_arm(n, fr);
  }
  if (!fr->armed) {
    fr->wake = RP_TSTAMP_UNSET;
    return 0;
  }
  if (n->cell.fr_late_jitter > 0) {
    late += sim_net_rng_next(&fr->rng_late) % (n->cell.fr_late_jitter + 1);
  }
  fr->wake = sim_net_fr_sleep(n->now, fr->boundary, late);
  return 0;
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
    return fr_later(n, fr, r, pk->src_proc, pk->src_port, (size_t)len,
                    d.delay);
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
  return fr_later(n, fr, e->res, e->src_proc, e->src_port, pk->len,
                  e->delay);
}
