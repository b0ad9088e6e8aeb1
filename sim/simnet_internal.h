/*
 * simnet_internal.h: the private state of the loopback machine in
 * virtual time (simnet.h), shared by its two files:
 *   simnet.c        events, packets, the CPU model, the run
 *   simnet_nodes.c  the processes' logic: the tunnel client (and an
 *                   in-process pool), a relay (the pool core or the
 *                   dnsdist model), the fake resolvers, the tunnel
 *                   server
 *   simnet_check.c  the pools' start-up check
 *   simnet_dnsdist.c  the dnsdist model
 *   simnet_fakeres.c  the fake resolvers
 */
#ifndef SIM_NET_INTERNAL_H
#define SIM_NET_INTERNAL_H

#include "simnet.h"

#include "fr_profile.h"
#include "sim_heap.h"

#include <stddef.h>
#include <stdint.h>

/* SIM_NET_PKT_MAX is the largest datagram carried, bytes (every tunnel
   message and answer is shorter). */
#define SIM_NET_PKT_MAX 4096
/* SIM_NET_IDS is the size of an ID space (fake resolvers, dnsdist). */
#define SIM_NET_IDS 65536u

/* The processes of a cell. */
#define SIM_NET_CLIENT 0u
#define SIM_NET_RELAY 1u
#define SIM_NET_FAKERES 2u
#define SIM_NET_SERVER 3u
#define SIM_NET_NPROCS 4u

/* Ports. A client's channel c is port c; the pool's listener (in the
   client's process or the relay's) is SIM_NET_PORT_POOL; the upstream
   socket toward resolver r (the pool's, or the fake resolvers' toward
   the server) is SIM_NET_PORT_UP + r. */
#define SIM_NET_PORT_POOL 0x10000u
#define SIM_NET_PORT_UP 0x20000u

typedef struct sim_net_pkt {
  uint32_t src_proc, src_port, dst_proc, dst_port;
  uint32_t len;
  uint8_t data[SIM_NET_PKT_MAX];
} sim_net_pkt;

typedef enum sim_net_ev_kind {
  SIM_NET_EV_ARRIVE = 1, /* a datagram reaches process a: c = packet */
  SIM_NET_EV_TIMER,      /* process a's timer (net_next makes it from the
                            process's timer_ts, timer_seq; never pushed) */
  SIM_NET_EV_DONE,       /* process a spent its item's cost */
  SIM_NET_EV_FREE        /* process a's sends left: its core is free */
} sim_net_ev_kind;

typedef enum sim_net_item_kind {
  SIM_NET_ITEM_DGRAM = 0, /* arg = packet */
  SIM_NET_ITEM_TIMER
} sim_net_item_kind;

typedef struct sim_net_item {
  sim_net_item_kind kind;
  uint32_t arg;
} sim_net_item;

typedef enum sim_net_state {
  SIM_NET_IDLE = 0,
  SIM_NET_READY,
  SIM_NET_RUNNING
} sim_net_state;

typedef struct sim_net_proc {
  sim_net_state state;
  rp_duration cost_recv, cost_send, cost_wake;
  /* woke is 1 while the item in progress is the first after idling. */
  int woke;
  /* items is a ring of |nitems| work items from item_head. */
  sim_net_item *items;
  size_t nitems, capitems, item_head;
  /* cur is the item being worked on. */
  sim_net_item cur;
  /* busy_from is when it took its core; cpu sums its busy time, ns. */
  rp_tstamp busy_from;
  uint64_t cpu;
  /* send_clock is when its last send of the current item leaves. */
  rp_tstamp send_clock;
  /* timer_at is the expiry last asked for (UNSET: none); timer_queued
     is 1 while a timer item waits. The timer is not in the event heap:
     when timer_armed, it fires at (timer_ts, timer_seq), the place in
     the heap's order a push at its arming would have had (simnet.c). */
  rp_tstamp timer_at;
  rp_tstamp timer_ts;
  uint64_t timer_seq;
  int timer_armed;
  int timer_queued;
} sim_net_proc;

typedef struct sim_net_nodes sim_net_nodes;

/* The start-up check of a resolver (simnet_check.c). */
typedef enum sim_net_check_state {
  SIM_NET_CHECK_NONE = 0, /* not checked (no check) */
  SIM_NET_CHECK_RUNNING,  /* its check query is out */
  SIM_NET_CHECK_FAILED,   /* failed; checked again at |recheck| */
  SIM_NET_CHECK_PASSED    /* passed: in the pool */
} sim_net_check_state;

typedef struct sim_net_check {
  uint8_t state[SIM_NET_MAX_RES];
  /* id and deadline of each running check. */
  uint16_t id[SIM_NET_MAX_RES];
  rp_tstamp deadline[SIM_NET_MAX_RES];
  /* recheck is when the failed ones are checked again. */
  rp_tstamp recheck;
  /* rng draws the checks' IDs. */
  uint64_t rng;
} sim_net_check;

typedef struct sim_net {
  sim_net_cell cell;
  const rp_mem *mem;
  sim_heap heap;
  rp_tstamp now;
  uint64_t events;
  uint64_t hash;
  uint64_t oversize;
  /* rng_link draws the links' jitter. */
  uint64_t rng_link;
  /* stop is set when the client's transfer ended. */
  int stop;
  sim_net_proc procs[SIM_NET_NPROCS];
  uint32_t free_cores;
  /* ready is a ring of |nready| processes waiting for a core. */
  uint32_t ready[SIM_NET_NPROCS];
  uint32_t ready_head, nready;
  sim_net_pkt *pkts;
  size_t npkts, cappkts;
  uint32_t *free_pkts;
  size_t nfree, capfree;
  /* rx is the datagram being handled (copied out of the pool). */
  sim_net_pkt rx;
  /* pool_proc is the process that runs a pool (its datagrams cost
     costs.pool_*), or SIM_NET_NPROCS when none does. */
  uint32_t pool_proc;
  /* nodes is the processes' logic (simnet_nodes.c). */
  sim_net_nodes *nodes;
} sim_net;

/* simnet.c */

/* sim_net_hash mixes |v| into the trace hash. */
void sim_net_hash(sim_net *n, uint64_t v);

/* sim_net_rng_next draws from the splitmix64 stream |*state|. */
uint64_t sim_net_rng_next(uint64_t *state);

/* sim_net_pkt_alloc takes a packet slot. Returns 0 or RP_ERR_NOMEM. */
int sim_net_pkt_alloc(sim_net *n, uint32_t *pidx);

/* sim_net_pkt_free returns a packet slot. */
void sim_net_pkt_free(sim_net *n, uint32_t idx);

/* sim_net_work queues a work item for |proc|. */
int sim_net_work(sim_net *n, uint32_t proc, sim_net_item_kind kind,
                 uint32_t arg);

/* sim_net_send sends a datagram from the process doing its work now: it
   leaves after the sender's cost_send (and those of its earlier sends of
   the item) and arrives after the link's latency. */
int sim_net_send(sim_net *n, uint32_t src_proc, uint32_t src_port,
                 uint32_t dst_proc, uint32_t dst_port, const uint8_t *data,
                 size_t len);

/* sim_net_pkt_new copies the datagram |data| of |len| bytes from
   |src_proc|:|src_port| to |dst_proc|:|dst_port| into a free packet,
   |*pidx|, to be sent later. Returns 0, SIM_NET_PKT_OVERSIZE when it is
   larger than SIM_NET_PKT_MAX (counted in oversize and dropped), or
   sim_net_pkt_alloc's error. */
#define SIM_NET_PKT_OVERSIZE 1
int sim_net_pkt_new(sim_net *n, uint32_t src_proc, uint32_t src_port,
                    uint32_t dst_proc, uint32_t dst_port, const uint8_t *data,
                    size_t len, uint32_t *pidx);

/* sim_net_charge adds |ns| of CPU to the item |proc| is working on (a
   socket opened for a send). */
void sim_net_charge(sim_net *n, uint32_t proc, rp_duration ns);

/* sim_net_free_core ends |proc|'s item: its core goes to the next ready
   process. */
int sim_net_free_core(sim_net *n, uint32_t proc);

/* The dnsdist model (simnet_dnsdist.c): a query it forwarded. */
typedef struct sim_net_dd_query {
  uint32_t used;
  uint32_t backend;
  uint32_t src_port;
  uint16_t id;
  rp_tstamp at;
} sim_net_dd_query;

typedef struct sim_net_dd {
  /* q is the table of SIM_NET_IDS queries by the relay's ID; next is the
     next ID. */
  sim_net_dd_query *q;
  uint16_t next;
  uint32_t outstanding[SIM_NET_MAX_RES];
  /* sweep is when old queries are next forgotten (0: not yet). */
  rp_tstamp sweep;
  uint8_t buf[SIM_NET_PKT_MAX];
} sim_net_dd;

/* The fake resolvers (simnet_fakeres.c): a query forwarded to the
   server. */
typedef struct sim_net_fwd {
  uint32_t used;
  uint32_t res;
  uint32_t src_proc, src_port;
  uint16_t id;
  uint8_t lose;
  rp_duration delay;
} sim_net_fwd;

typedef struct sim_net_fr {
  fr_profile prof[SIM_NET_MAX_RES];
  fr_rng rng[SIM_NET_MAX_RES];
  /* fwd is the table of SIM_NET_IDS forwarded queries by the process's
     ID; fwd_next is the next ID. */
  sim_net_fwd *fwd;
  uint16_t fwd_next;
  /* Per resolver: queries received, answers relayed, refused, dropped
     past the limit, lost (before or after, or dead), replies past the
     cap of those held for their delay. */
  uint64_t received[SIM_NET_MAX_RES], answered[SIM_NET_MAX_RES],
      refused[SIM_NET_MAX_RES], dropped[SIM_NET_MAX_RES],
      lost[SIM_NET_MAX_RES], overflow[SIM_NET_MAX_RES];
  /* held is the delayed replies (ts: due; c: the packet, not yet
     sent), and fakeres's libuv loop: its delay timer (armed, at the loop
     time boundary, whole ms) and the loop's next wake from its epoll
     timeout (wake; UNSET: none). rng_late draws each wake's lateness. */
  sim_heap held;
  int armed;
  rp_tstamp boundary, wake;
  uint64_t rng_late;
  uint8_t buf[SIM_NET_PKT_MAX];
} sim_net_fr;

/* sim_net_rearm asks the node of |proc| for its next expiry and
   schedules its timer (a process's logic may change another's). */
int sim_net_rearm(sim_net *n, uint32_t proc);

/* simnet_check.c */

/* sim_net_check_start sends every resolver's check from |proc| (the
   pool's process) at n->now; |seed| seeds the IDs. Returns 0 or an
   error of the send. */
int sim_net_check_start(sim_net *n, sim_net_check *c, uint32_t proc,
                        uint64_t seed);

/* sim_net_check_answer takes |len| bytes that reached the pool from
   resolver |r|, which is not in the pool. Returns 1 when they are its
   running check's answer and it passed (the caller adds it to the pool),
   else 0 (a failed check is marked so). */
int sim_net_check_answer(sim_net_check *c, uint32_t r, const uint8_t *data,
                         size_t len);

/* sim_net_check_expiry returns when sim_net_check_expire is next due for
   the first |nres| resolvers (RP_TSTAMP_UNSET: never). */
rp_tstamp sim_net_check_expiry(const sim_net_check *c, size_t nres);

/* sim_net_check_expire fails the checks past their deadline and sends
   the re-checks due at n->now from |proc|. Returns 0 or an error of the
   send. */
int sim_net_check_expire(sim_net *n, sim_net_check *c, uint32_t proc);

/* simnet_dnsdist.c */

/* sim_net_dd_init makes |dd|'s tables. Returns 0 or RP_ERR_NOMEM. */
int sim_net_dd_init(sim_net *n, sim_net_dd *dd);

/* sim_net_dd_free frees them (none made: nothing to free). */
void sim_net_dd_free(sim_net *n, sim_net_dd *dd);

/* sim_net_dd_datagram handles what reaches the relay: a client query on
   its listener (forwarded to the backend with the fewest outstanding),
   an answer on a backend socket (back to its client). */
int sim_net_dd_datagram(sim_net *n, sim_net_dd *dd, const sim_net_pkt *pk);

/* sim_net_dd_sweep forgets the queries unanswered too long. */
void sim_net_dd_sweep(sim_net *n, sim_net_dd *dd);

/* sim_net_dd_expiry returns when the next sweep is due. */
rp_tstamp sim_net_dd_expiry(const sim_net_dd *dd);

/* simnet_fakeres.c */

/* sim_net_fr_init makes |fr|'s profiles (from n->cell.res, seeded from
   n->cell.seed) and table. Returns 0 or RP_ERR_NOMEM. */
int sim_net_fr_init(sim_net *n, sim_net_fr *fr);

/* sim_net_fr_free frees the table. */
void sim_net_fr_free(sim_net *n, sim_net_fr *fr);

/* sim_net_fr_query handles a query that reached resolver |r|. */
int sim_net_fr_query(sim_net *n, sim_net_fr *fr, const sim_net_pkt *pk,
                     uint32_t r);

/* sim_net_fr_answer handles the server's answer to a forwarded query. */
int sim_net_fr_answer(sim_net *n, sim_net_fr *fr, const sim_net_pkt *pk);

/* sim_net_fr_wake ends a wake of the fake resolvers' loop at n->now (a
   datagram handled, or fr->wake reached): runs the delay timer when it
   is due, sending the replies due, and sets fr->wake, when the loop
   next wakes on its own. */
int sim_net_fr_wake(sim_net *n, sim_net_fr *fr);

/* The rules of fakeres's delay timer (fr_reply.c), ns; a libuv loop's
   time is whole milliseconds, truncated. sim_net_fr_boundary: the loop
   time at which the timer armed at |now| for a reply due at |due| is due
   (fr_wait_ms rounds the wait up). sim_net_fr_timer_due: whether a wake
   at |now| runs that timer. sim_net_fr_sleep: when the loop, going to
   sleep at |now| with the timer due at |boundary|, wakes from epoll's
   timeout (whole milliseconds from its time), |late| after it. */
rp_tstamp sim_net_fr_boundary(rp_tstamp now, rp_tstamp due);
int sim_net_fr_timer_due(rp_tstamp now, rp_tstamp boundary);
rp_tstamp sim_net_fr_sleep(rp_tstamp now, rp_tstamp boundary,
                           rp_duration late);

/* simnet_nodes.c */

/* sim_net_nodes_start creates the processes' engines for n->cell, sets
   the costs and starts the client. */
int sim_net_nodes_start(sim_net *n);

/* sim_net_node_datagram handles a datagram that reached |proc|. */
int sim_net_node_datagram(sim_net *n, uint32_t proc, const sim_net_pkt *pk);

/* sim_net_node_timer runs |proc|'s timers due now. */
int sim_net_node_timer(sim_net *n, uint32_t proc);

/* sim_net_node_expiry returns when |proc| next needs its timer, or
   RP_TSTAMP_UNSET. */
rp_tstamp sim_net_node_expiry(sim_net *n, uint32_t proc);

/* sim_net_nodes_result fills |res| from the engines. */
void sim_net_nodes_result(sim_net *n, sim_net_result *res);

/* sim_net_nodes_sample calls the cell's on_sample at |now| with its pool
   and the resolvers' ids. Returns what on_sample returns. */
int sim_net_nodes_sample(sim_net *n, rp_tstamp now);

/* sim_net_nodes_free frees the engines. */
void sim_net_nodes_free(sim_net *n);

#endif /* SIM_NET_INTERNAL_H */
