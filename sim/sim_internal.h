/*
 * sim_internal.h: the private state of the simulator's driver (sim.h),
 * shared by its modules. Not installed; only sim.c, sim_query.c and
 * sim_stats.c include it.
 *
 * It owns the layout of struct sim (the clock, the event heap, the
 * resolvers, the packet slots, the client records and the timeline) and
 * declares the functions one module calls in another:
 *   sim.c        life cycle, the event loop, small helpers, plain getters
 *   sim_query.c  the per-query path: packet slots, the core's callbacks,
 *                client submissions and resolver replies
 *   sim_stats.c  the timeline samples and the client metrics
 */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include "sim.h"

#include "dns.h"
#include "sim_heap.h"

#include <stddef.h>
#include <stdint.h>

/* SIM_PKT_MAX is the largest query kept for a reply, bytes. The load's
   queries and the pool's probes are far shorter; a longer send is
   counted as lost. */
#define SIM_PKT_MAX SIM_LOAD_QUERY_MAX

/* SIM_DEFAULT_SAMPLE is the default timeline step. */
#define SIM_DEFAULT_SAMPLE (1 * RP_SECONDS)

/* SIM_DEFAULT_MAX_EVENTS guards against runaway runs (about a minute of
   CPU). */
#define SIM_DEFAULT_MAX_EVENTS 100000000ULL

/* SIM_DRAIN_GRACE is added to the pool's deadline for the default drain
   and for a worker's give-up time: past it the pool must have answered
   or failed every query. */
#define SIM_DRAIN_GRACE (1 * RP_SECONDS)

/* SIM_STALL_LIMIT is how many expiry calls at one instant, with no event
   between, mean the core's expiry does not advance. */
#define SIM_STALL_LIMIT 100000u

/* SIM_TRACE_LINE is the size of one trace line. */
#define SIM_TRACE_LINE 512

/* SIM_INITIAL_CAP is the first size of the growable arrays. */
#define SIM_INITIAL_CAP 64u

/* SIM_SEED_* split the run's seed into streams (odd constants). */
#define SIM_SEED_POOL 0x9e3779b97f4a7c15ULL
#define SIM_SEED_LOAD 0xc2b2ae3d27d4eb4fULL
#define SIM_SEED_RES 0x165667b19e3779f9ULL

/* FNV-1a 64 parameters. */
#define SIM_FNV_OFFSET 0xcbf29ce484222325ULL
#define SIM_FNV_PRIME 0x100000001b3ULL

/* SIM_NO_WORKER marks a rate-load query. */
#define SIM_NO_WORKER UINT32_MAX

/* SIM_NO_SERIAL marks a worker with no query out. */
#define SIM_NO_SERIAL UINT64_MAX

/* SIM_REPLY_* pack a reply event's verdict, rcode and stream flag into
   sim_event.b. */
#define SIM_REPLY_RCODE_SHIFT 8
#define SIM_REPLY_STREAM_SHIFT 16
#define SIM_REPLY_BYTE_MASK 0xffu

/* SIM_BYTE_BITS is the bits in a byte (hash and rand byte splitting). */
#define SIM_BYTE_BITS 8u

/* SIM_HASH_HI, SIM_HASH_MID and SIM_HASH_LO place fields of one event in
   the 64-bit words mixed into the trace hash. */
#define SIM_HASH_HI 32
#define SIM_HASH_MID 16
#define SIM_HASH_LO 8

/* SIM_NLEVELS is the number of log levels counted. */
#define SIM_NLEVELS (RP_LOG_DEBUG + 1)

/* sim_ev_kind is the meaning of a heap event. */
typedef enum sim_ev_kind {
  SIM_EV_REPLY = 1,      /* a resolver's reply arrives: a = resolver, c =
                            slot, b = verdict | rcode | stream */
  SIM_EV_RATE,           /* the rate load's query b goes */
  SIM_EV_WORKER,         /* worker a sends its next query */
  SIM_EV_WORKER_TIMEOUT, /* worker a gives up query b */
  SIM_EV_HOOK,           /* hook a changes a profile */
  SIM_EV_SAMPLE          /* a timeline sample */
} sim_ev_kind;

/* sim_status is a client query's outcome so far. */
typedef enum sim_status {
  SIM_STATUS_PENDING = 0,
  SIM_STATUS_ANSWERED,
  SIM_STATUS_FAILED
} sim_status;

/* sim_record is one client query. */
typedef struct sim_record {
  /* submit is when it was submitted, ns. */
  rp_tstamp submit;
  /* first is when its first delivery came, or RP_TSTAMP_UNSET. */
  rp_tstamp first;
  /* worker is its worker, or SIM_NO_WORKER. */
  uint32_t worker;
  /* status is a sim_status. */
  uint8_t status;
} sim_record;

/* sim_slot is a query kept until its reply is built. */
typedef struct sim_slot {
  /* len is the query's length, bytes. */
  size_t len;
  /* data holds the query. */
  uint8_t data[SIM_PKT_MAX];
} sim_slot;

/* sim_hook is a scheduled profile change. */
typedef struct sim_hook {
  /* index is the resolver. */
  uint32_t index;
  /* text is the spec change, owned. */
  char *text;
} sim_hook;

struct sim {
  sim_config cfg;
  const rp_mem *mem;
  rp_pool *pool;
  sim_heap heap;
  /* now is the virtual time, ns. */
  rp_tstamp now;
  /* started is 1 after the first sim_run_until. */
  int started;
  /* cb_error is an error a callback met (reported after the core
     returns). */
  int cb_error;
  char err[SIM_ERRLEN];
  fr_rng pool_rng;
  fr_rng load_rng;
  sim_resolver *res;
  uint32_t nres, capres;
  sim_hook *hooks;
  uint32_t nhooks, caphooks;
  sim_slot *slots;
  uint32_t nslots;
  uint32_t *free_slots;
  uint32_t nfree;
  sim_record *rec;
  size_t nrec, caprec;
  /* worker_serial is each worker's query out, or SIM_NO_SERIAL. */
  uint64_t *worker_serial;
  sim_sample *samples;
  sim_sample_resolver *sres;
  size_t nsamples, capsamples;
  uint64_t hash;
  uint64_t events;
  uint64_t extra;
  uint64_t unknown_deliveries;
  uint64_t oversize;
  uint64_t worker_timeouts;
  uint64_t answered, failed;
  uint64_t log_lines[SIM_NLEVELS];
  /* reply is the buffer replies are built in. */
  uint8_t reply[RP_DNS_MAX_MSG_LEN];
  /* query is the buffer client queries are built in. */
  uint8_t query[SIM_LOAD_QUERY_MAX];
};

/* sim_secs returns |t| in seconds, for trace lines. */
static inline double sim_secs(rp_tstamp t) {
  return (double)t / (double)RP_SECONDS;
}

/* sim.c */

/* sim_set_error formats the run's error message (sim_error). */
void sim_set_error(sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* sim_hash_u64 mixes |v| into the trace hash, byte by byte. */
void sim_hash_u64(sim *s, uint64_t v);

/* sim_trace writes one trace line when tracing. */
void sim_trace(const sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* sim_grow makes room for one more element of |size| bytes in |*parr|
   (|*pcap| allocated). Returns 0 or RP_ERR_NOMEM. */
int sim_grow(sim *s, void **parr, size_t len, size_t *pcap, size_t size);

/* sim_push schedules an event. Returns 0 or RP_ERR_NOMEM. */
int sim_push(sim *s, rp_tstamp ts, sim_ev_kind kind, uint32_t a, uint64_t b,
             uint32_t c);

/* sim_core_rv turns a core return into the run's: a callback's error
   wins, a non-fatal error is noted and ignored. */
int sim_core_rv(sim *s, int rv, const char *what);

/* sim_query.c */

/* sim_cb_send_query, sim_cb_deliver, sim_cb_rand and sim_cb_log are the
   core's callbacks (rp_callbacks); user_data is the sim. */
int sim_cb_send_query(rp_pool *pool, uint32_t resolver_id,
                      void *resolver_user_data, uint16_t upstream_id,
                      const uint8_t *data, size_t len, uint32_t flags,
                      rp_tstamp now, void *user_data);
int sim_cb_deliver(rp_pool *pool, const rp_client *client, const uint8_t *data,
                   size_t len, uint32_t flags, rp_tstamp now, void *user_data);
void sim_cb_rand(uint8_t *dest, size_t len, void *user_data);
void sim_cb_log(rp_log_level level, uint32_t category, const char *line,
                void *user_data);

/* sim_submit sends a new client query for |worker| (or SIM_NO_WORKER). */
int sim_submit(sim *s, uint32_t worker);

/* sim_on_reply delivers a resolver's reply (a SIM_EV_REPLY event) to the
   pool. */
int sim_on_reply(sim *s, const sim_event *ev);

/* sim_stats.c */

/* sim_on_sample records a timeline sample and schedules the next. */
int sim_on_sample(sim *s);

#endif /* SIM_INTERNAL_H */
