/*
 * simnet.h: a loopback machine in virtual time (prefix sim_net_): the
 * processes of one benchmark cell (tunnel client, relay, fake resolvers,
 * tunnel server) exchanging datagrams, each on a CPU of a machine of a
 * few cores, driving the project's own sans-I/O engines: the tunnel
 * clients' drivers (tundrv.h), the tunnel server (tunsrv.h), the fake
 * resolvers' profiles (fr_profile.h) and the pool core (respool.h).
 *
 * The cost model. Every process is single-threaded: it handles one work
 * item at a time (a datagram that arrived, a timer), and an item costs
 * CPU time: cost_recv for the item, cost_send for each datagram it sends.
 * A process runs only while it holds one of the machine's |ncores| cores;
 * processes with work queue for a core in the order they became ready,
 * and a process that still has work after an item goes to the back of
 * that queue. An item's logic runs when its cost_recv has been spent (a
 * reply leaves after the work that made it); its sends leave one after
 * another, each after its cost_send, and reach the other process after
 * the link's latency. So a cell with more work than the cores can do is
 * bound by CPU, as on the 2-core loopback machine, and a cell with slow
 * resolvers by their latency.
 *
 * Determinism: one event heap ordered by (time, sequence); every random
 * draw comes from a stream split from the cell's seed. Same seed, same
 * run.
 *
 * IMPLEMENTATION NOTES
 * - Datagrams wait in a pool of packet slots; an event carries the slot.
 * - A process's work items are a FIFO of (kind, slot or argument); its
 *   timers are one "next expiry" per process, asked from the node after
 *   each item (as a libuv program re-arms its timer).
 * - Left out: kernel socket buffers (no loss for a full buffer), batching
 *   (recvmmsg), scheduling jitter.
 */
#ifndef SIM_NET_H
#define SIM_NET_H

#include "respool.h"
#include "fr_profile.h"
#include "tundrv.h"
#include "tunsrv.h"

#include <stddef.h>
#include <stdint.h>

/* SIM_NET_MAX_RES is the most resolvers in a cell. */
#define SIM_NET_MAX_RES 16

/* sim_net_relay is what stands between the client and the resolvers. */
typedef enum sim_net_relay {
  SIM_NET_DIRECT = 0,  /* the client sends to the resolvers itself */
  SIM_NET_INPROC,      /* the pool core inside the client's process */
  SIM_NET_RESPOOL,     /* the pool core in a relay process (respool) */
  SIM_NET_DNSDIST      /* a relay that picks the backend with the fewest
                          queries outstanding (dnsdist leastOutstanding) */
} sim_net_relay;

/* sim_net_costs is the CPU cost of each process, ns: per work item
   (recv), per datagram sent (send), and per wake-up (wake: a process
   that had nothing to do pays it before its first item, the poll and
   the switch a busy process saves by reading in batches). */
typedef struct sim_net_costs {
  /* client_*: the tunnel client's own datagrams; client_fresh is added
     to a send from a new socket (a DNSTT direct client opens and closes
     one per query). pool_*: a pool's datagrams (its listener and its
     upstream sockets), in whichever process runs it. */
  rp_duration client_recv, client_send, client_wake, client_fresh;
  rp_duration pool_recv, pool_send;
  /* inproc is the cost of a message a process hands itself (the
     tunnel client and its in-process pool, rp_net_pool_query and the
     answer queue), at each end, the core's own work included; such a
     message crosses no link. 0.75 us puts the simulated DNSTT pool /
     first at 1.34x on one-unlimited and 1.21x on three-lossy where
     loopback measured 1.33-1.39x (MasterDNS: 1.81x against 1.11-1.14x,
     the MD client model being off already over the socket). */
  rp_duration inproc;
  rp_duration server_recv, server_send, server_wake;
  rp_duration fakeres_recv, fakeres_send, fakeres_wake;
  rp_duration relay_recv, relay_send, relay_wake;
  /* timer is the cost of a timer item in any process. */
  rp_duration timer;
} sim_net_costs;

/* sim_net_sample_fn is called every sample_every of virtual time with
   |pool|, the cell's one pool (NULL for a cell without one), and
   |ids|[r], resolver r's id in it (SIM_NET_NO_ID: not in the pool, a
   dead one its check kept out). It reads the pool (rp_pool_get_resolver_
   stats at |now|) and changes nothing, so the run is the same with it.
   Returns 0, or an error that ends the run. */
typedef int (*sim_net_sample_fn)(void *arg, rp_tstamp now,
                                 const rp_pool *pool, const uint32_t *ids,
                                 size_t nres);

/* SIM_NET_NO_ID marks a resolver that is not in the pool. */
#define SIM_NET_NO_ID UINT32_MAX

/* sim_net_cell is one run: a setup (resolvers), a client, a relay. */
typedef struct sim_net_cell {
  /* res and nres are the setup's fake resolvers. */
  fr_spec res[SIM_NET_MAX_RES];
  size_t nres;
  /* first_only: the client is pointed at the first resolver alone. */
  int first_only;
  /* drv is the client driver's settings (model, workers, transfer...);
     nres is set from the cell. */
  tun_drv_settings drv;
  /* orig_server: the server holds only its newest poll and serves a new
     session nothing for its first 300 ms (the real dnstt-server). */
  int orig_server;
  /* srv_nack: the server NACKs the upload's gaps (tunsrv.h's nack; the
     real MasterDnsVPN's server) and its answers carry them to the client
     (tun_drv_srv_nacks); gap 0: none. */
  tun_nack_settings srv_nack;
  /* serve_bytes is what the server serves a session (the runner: the
     transfer's bytes when rate-limited, 1 GiB otherwise). */
  uint64_t serve_bytes;
  /* relay and, for a pool, its settings; check 1: the pool checks each
     resolver with a query of its own and adds it once that was answered,
     and the client starts with the first (simnet_check.c); 0: every
     resolver is added unchecked and the client starts at once. */
  sim_net_relay relay;
  rp_settings pool;
  /* kind is the kind |pool|'s settings are (reported in the result). */
  rp_kind kind;
  /* down_ends 1: the run ends with the client's download, the upload as
     far as it went (tunxfer.h): a real client's run, which tcp_measure
     ends so. */
  int down_ends;
  /* sense 1: the pool starts with |pool_generic| and takes |pool| once
     it has seen the client's queries (respool's kind auto; the model's
     names, base32 whatever the tunnel, sense as the tunnel it is). */
  int sense;
  rp_settings pool_generic;
  int check;
  /* ncores is the machine's cores; link is the loopback latency of one
     datagram, ns, plus a uniform draw of up to link_jitter (a loaded
     machine's scheduling: no two processes stay in lockstep). */
  uint32_t ncores;
  rp_duration link;
  rp_duration link_jitter;
  /* fr_late is how late the fake resolvers' loop wakes from its epoll
     timeout, ns, plus a uniform draw of up to fr_late_jitter: the
     kernel's timer slack (50 us) and the wake-up. 90-170 us: the real
     fakeres's timeouts, perf tracepoints of its epoll_wait with the real
     MasterDnsVPN alone over one 10 ms resolver, were late by p10 93 us,
     p50 127, p90 169 (simnet_fakeres.c has the loop). */
  rp_duration fr_late;
  rp_duration fr_late_jitter;
  sim_net_costs costs;
  /* seed seeds every random stream. */
  uint64_t seed;
  /* limit ends a run that has not finished after so long, ns. */
  rp_duration limit;
  /* sample_every, ns (0: never), calls on_sample(sample_arg, ...) at
     every multiple of it up to the run's end (a timeline). */
  rp_duration sample_every;
  sim_net_sample_fn on_sample;
  void *sample_arg;
} sim_net_cell;

/* sim_net_result is what a run measured. */
typedef struct sim_net_result {
  /* finished is 1 when the transfer ended before |limit|. */
  int finished;
  /* kbps_down as the clients print it: bytes down over the seconds to
     the end of the download. */
  double kbps_down;
  double seconds;
  uint64_t bytes_down;
  int down_ok;
  tun_drv_stats client;
  /* server is the tunnel server's counters (its queries, empty answers,
     retransmissions...), as the tunnels' servers print them. */
  tun_srv_stats server;
  /* Per resolver: queries received, answered, refused, dropped, lost,
     overflow (fakeres's JSON names). */
  uint64_t received[SIM_NET_MAX_RES], answered[SIM_NET_MAX_RES],
      refused[SIM_NET_MAX_RES], dropped[SIM_NET_MAX_RES],
      lost[SIM_NET_MAX_RES], overflow[SIM_NET_MAX_RES];
  /* The pool's counters (a pool relay), else zero; kind is the kind
     whose settings it runs at the end (the cell's, or with sense:
     generic before and after no verdict, RP_KIND_AUTO while sensing). */
  rp_pool_stats pool;
  rp_kind kind;
  /* cpu_ns per process kind: client, server, fakeres, relay. */
  uint64_t cpu_client, cpu_server, cpu_fakeres, cpu_relay;
  /* events processed and the trace hash. */
  uint64_t events;
  uint64_t hash;
} sim_net_result;

/* sim_net_cell_default fills |cell| with no resolvers, the DNSTT workers
   model, no relay, the default costs (sim_net_costs_default), 2 cores,
   a 20 us link with up to 20 us of jitter, seed 1, a 120 s limit. */
void sim_net_cell_default(sim_net_cell *cell);

/* sim_net_costs_default fills |costs| for |tunnel| ("dnstt",
   "masterdns", "dnstt-orig", "real-dnstt", "real-masterdns"; unknown:
   the minimal DNSTT's). docs/simulator.md says where each came from. */
void sim_net_costs_default(sim_net_costs *costs, const char *tunnel);

/* sim_net_costs_scale multiplies every cost of |costs| by |factor| (a
   machine that much slower; respool-sim table --cost-scale). */
void sim_net_costs_scale(sim_net_costs *costs, double factor);

/* sim_net_run runs |cell| and fills |res|. Returns 0, RP_ERR_NOMEM,
   RP_ERR_INVALID_ARGUMENT (bad settings), or a fatal error of an
   engine. */
int sim_net_run(const sim_net_cell *cell, sim_net_result *res);

#endif /* SIM_NET_H */
