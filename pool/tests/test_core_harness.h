/*
 * test_core_harness.h: drives the pool core in the unit tests with a fake
 * clock, a scripted random source and simulated resolvers.
 *
 * A simulated resolver (h_fake) answers each send after |delay| with a
 * TXT answer of |payload| bytes, refuses or drops past |limit_qps| (a
 * token bucket of depth |burst|), loses |loss| of the queries, or is
 * dead. Client queries are numbered; query n has client id n and DNS ID
 * n & 0xffff and asks for "q<n>.t.example" TXT. Every action of the pool
 * is folded into a hash for the determinism test. Memory goes through
 * the shared leak-checking allocator (tests/lib/rp_test_mem.h), so leaks
 * fail the test.
 */
#ifndef TEST_CORE_HARNESS_H
#define TEST_CORE_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "respool.h"
#include "dns.h"
#include "rp_test_mem.h"

/* MS and S are the fake clock's usual steps in the harness tests. */
#define MS RP_MILLISECONDS
#define S RP_SECONDS

/* H_MAX_FAKES: room for a thousand dead resolvers listed unchecked beside
   a few live ones (test_core_select_unproven_dead). */
#define H_MAX_FAKES 1056
#define H_MAX_QUERIES (1u << 16)
#define H_MAX_SENDS (1u << 16)
#define H_MSG_MAX 1400

typedef struct h_fake {
  /* Behaviour. */
  rp_duration delay;
  /* delay_after/slow_delay: sends after |slow_from| take |slow_delay|. */
  rp_tstamp slow_from;
  rp_duration slow_delay;
  double loss;
  double limit_qps;
  double burst;
  int limit_drops;
  int dead;
  int truncate;
  int servfail;
  /* stream_dead: stream sends are never answered (no TCP service). */
  int stream_dead;
  /* mangle: 1 answers with the unassigned rcode 15, 2 with opcode 15. */
  int mangle;
  /* refuse: answer REFUSED to every send in [refuse_from, refuse_until). */
  int refuse;
  rp_tstamp refuse_from, refuse_until;
  /* jitter: a uniform extra delay 0 .. jitter. */
  rp_duration jitter;
  /* late_share of the answers, drawn at random, take from late_delay / 2
     to late_delay (uniform) instead of delay: a server that reorders without losing (the real
     MasterDnsVPN server under load answered some queries 10-30x later
     than the rest). */
  double late_share;
  rp_duration late_delay;
  /* fold_case: 1 answers with the question lower-cased (a resolver
     that does not keep the case of 0x20 names). */
  int fold_case;
  /* full_owner: the answer's record carries its owner name in full (as
     fakeres and resolvers that do not compress write it), not as a
     pointer to the question. */
  int full_owner;
  /* hold: a tunnel server's held poll, as dnstt-server: the answer to
     the newest query is held until the next query arrives (then it goes
     at once) or |hold| passes (0: no hold). */
  rp_duration hold;
  size_t payload;
  /* payload_copy: answer size for a second send of the same query. */
  size_t payload_copy;
  /* varied: every answer carries other bytes (a tunnel server answers
     each copy with other queued data); 0: the same bytes for the same
     question and size (a plain resolver). */
  int varied;
  /* empty_share: with |varied|, this share of the queries (drawn from
     the query's number) get the same bytes in every answer, as
     dnstt-server answers a poll and its copy empty when it has nothing
     queued: only the others' copies carry data (0: none). */
  double empty_share;
  uint64_t last_qn;
  uint32_t flags;
  int score;
  /* State. */
  uint32_t id;
  double tokens;
  rp_tstamp tok_at;
  uint32_t inflight;
  /* Counters. */
  uint64_t got, answered, refused, dropped, stream_got, probes_got;
  uint64_t copies_got;
  /* max_inflight_probation is the most sends in flight seen while the
     pool had it in probation. */
  uint32_t max_inflight_probation;
  /* held is the answer event being held (|hold|), or NULL. */
  struct h_event *held;
} h_fake;

typedef struct h_event {
  rp_tstamp at;
  uint64_t seq;
  size_t fake;
  size_t len;
  uint32_t flags;
  /* counted: 1 if the send counted in |inflight| of the fake. */
  int counted;
  /* cancelled: 1 once a held answer was released early (a copy of it
     went into the heap); the event is dropped when it comes up. */
  int cancelled;
  uint8_t buf[H_MSG_MAX];
} h_event;

typedef struct h_send {
  rp_tstamp at;
  uint32_t res;
  uint16_t id;
  uint32_t flags;
  uint64_t qn;
} h_send;

typedef struct harness {
  rp_pool *pool;
  rp_settings set;
  /* mem is the pool's allocator (never fails). */
  rp_test_mem mem;
  rp_tstamp now;
  h_fake fakes[H_MAX_FAKES];
  size_t nfakes;
  h_event **heap;
  size_t nheap, heapcap;
  uint64_t seq;
  uint64_t rng;
  uint64_t fake_rng;
  uint64_t qn;
  uint64_t delivered, extra, failed, formerr;
  uint64_t hash;
  h_send *sends;
  size_t nsends;
  /* Per query (index qn % H_MAX_QUERIES): answers seen, first answer. */
  uint8_t *answers;
  rp_tstamp *first_at;
  rp_tstamp *submit_at;
  uint8_t *failed_q;
  /* firsts counts first results (an answer without EXTRA, or a failure)
     per query: exactly one is right. */
  uint8_t *firsts;
  int id_mismatch;
  /* trace is 1 when H_TRACE is set: log lines go to stderr. */
  int trace;
  /* Log lines seen (callbacks.log), and the last one. */
  uint64_t nlog, nlog_down, nlog_cap;
  char last_log[256];
  /* last_send holds the bytes of the newest send (|last_send_len|). */
  uint8_t last_send[H_MSG_MAX];
  size_t last_send_len;
  /* send_hook and deliver_hook, when set, see every send and delivery
     (after the harness recorded it), with |hook_data|. */
  void (*send_hook)(struct harness *h, uint32_t res, const uint8_t *data,
                    size_t len, uint32_t flags);
  void (*deliver_hook)(struct harness *h, const rp_client *client,
                       const uint8_t *data, size_t len, uint32_t flags);
  void *hook_data;
} harness;

/* h_init starts a harness with |set| (copied), a pool and seed |seed|.
   Returns the rp_pool_new result. */
int h_init(harness *h, const rp_settings *set, uint64_t seed);

/* h_pool_new creates a pool with the harness callbacks (user data |h|)
   and the allocator |mem|. */
int h_pool_new(rp_pool **ppool, const rp_settings *set, const rp_mem *mem,
               harness *h);

/* h_free deletes the pool and frees the harness. */
void h_free(harness *h);

/* h_add adds a fake resolver like |proto| and returns its index. */
size_t h_add(harness *h, const h_fake *proto);

/* h_submit submits the next client query at h->now; returns its qn. */
uint64_t h_submit(harness *h);

/* h_submit_padded is h_submit with a label of |pad| (< 60) characters
   added to the name ("q<n>.ppp.t.example"): a longer question. */
uint64_t h_submit_padded(harness *h, size_t pad);

/* h_submit_label submits a TXT query for LABEL.qN.t.example (a tunnel
   client's name: its data in the first label) and returns N. */
uint64_t h_submit_label(harness *h, const char *label);

/* h_step_to runs every event up to |t| and sets now = |t|. */
void h_step_to(harness *h, rp_tstamp t);

/* h_run submits |qps| queries/s for |duration| from now. */
void h_run(harness *h, rp_duration duration, double qps);

/* h_rstats returns the pool's stats of fake |i|. */
rp_resolver_stats h_rstats(harness *h, size_t i);

/* h_pstats returns the pool's stats. */
rp_pool_stats h_pstats(harness *h);

/* h_query_name writes the question name of query |qn|. */
void h_query_name(uint64_t qn, char *out, size_t cap);

/* h_build_query builds query |qn| into |out|; returns its length. */
size_t h_build_query(uint64_t qn, uint8_t *out, size_t cap);

/* h_default_settings fills |set| for tests: the generic kind with
   copies off (duplicate 1) unless a test turns them on. */
void h_default_settings(rp_settings *set);

/* h_kind_settings is h_default_settings for |kind|'s defaults. */
void h_kind_settings(rp_settings *set, rp_kind kind);

/* h_sends_to counts recorded sends to fake |i| with all |flags|. */
size_t h_sends_to(const harness *h, size_t i, uint32_t flags);

/* h_fake_by_res returns the fake index of a pool resolver id. */
size_t h_fake_by_res(const harness *h, uint32_t res);

#endif /* TEST_CORE_HARNESS_H */
