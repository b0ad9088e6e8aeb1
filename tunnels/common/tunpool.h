/*
 * tunpool.h: the in-process pool of the tunnel clients (prefix
 * tun_pool_).
 *
 * Pool mode of tun-dnstt-client and tun-md-client embeds the pool
 * library exactly as an outbound with smart_pool does: rp_net_pool_start
 * on the client's own uv loop, with the resolvers of the command line
 * and an optional smart_pool JSON file, then the client's workers send
 * to the pool's 127.0.0.1 address. This module wraps that:
 *
 *   tun_pool_start   builds the rp_config, starts the pool with the
 *                    tunnel's start-up check (below), and calls |ready|
 *                    once from the loop when the first resolver passed
 *                    (ok = 1) or every check failed (ok = 0);
 *   tun_pool_get_address  where the workers send;
 *   tun_pool_format_stats the pool's counters as JSON for the
 *                    measurement line;
 *   tun_pool_format_timeline  each resolver's cap, answer rate and
 *                    answers sampled every second, as JSON;
 *   tun_pool_stop    stops the pool (scores saved) and frees it once
 *                    its handles are closed.
 *
 * Start-up check: the pool's plain pretest (type A of example.com)
 * cannot pass through a tunnel's resolvers on loopback (they forward to
 * the tunnel server, which refuses foreign names), so the check is the
 * tunnel's own MTU probe under the tunnel domain: a PROBE query asking
 * for exactly |check_bytes| test bytes, passed only when the answer
 * carries all of them. It proves the whole path (resolver -> tunnel
 * server -> resolver) and that the resolver carries answers that large.
 * check_bytes 0, or "pretest_domain": "" in the config file, adds every
 * resolver unchecked.
 *
 * Everything runs on the loop's thread. Not part of the sans-I/O core.
 */
#ifndef TUN_POOL_H
#define TUN_POOL_H

#include "respool_net.h"
#include "dns.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

typedef struct tun_pool tun_pool;

/* tun_pool_ready_cb is called once, from the loop: |ok| 1 when a
   resolver passed the start-up check, 0 when every one failed. */
typedef void (*tun_pool_ready_cb)(tun_pool *tp, int ok, void *user_data);

/* tun_pool_answer_cb receives, from the loop, the answer to a query
   handed in by tun_pool_query, with its |token|; |data| is valid only
   during the call, which may send the next query. */
typedef void (*tun_pool_answer_cb)(tun_pool *tp, uint64_t token,
                                   const uint8_t *data, size_t len,
                                   void *user_data);

/* tun_pool_options configures tun_pool_start. */
typedef struct tun_pool_options {
  /* kind is the tunnel behind the pool (RP_KIND_DNSTT, RP_KIND_MASTERDNS);
     a "kind" in the config file wins. */
  rp_kind kind;
  /* config_file is a smart_pool JSON file (DESIGN.md section 4), or
     NULL. Its resolvers come first. */
  const char *config_file;
  /* resolvers holds |nresolvers| resolver URLs of the command line. */
  const char *const *resolvers;
  size_t nresolvers;
  /* domain is the tunnel domain (for the start-up check). */
  const rp_dns_name *domain;
  /* check_bytes is the test answer size of the start-up check; 0 turns
     the check off. */
  uint16_t check_bytes;
  /* log_level is the most verbose pool log line printed on stderr. */
  rp_log_level log_level;
  /* ready and user_data: see tun_pool_ready_cb. */
  tun_pool_ready_cb ready;
  void *user_data;
  /* answer, when set, takes the answers of tun_pool_query (in process,
     no loopback socket); NULL leaves the client on the pool's address. */
  tun_pool_answer_cb answer;
} tun_pool_options;

/* tun_pool_start starts a pool on |loop| and stores it in |*ptp|. The
   config is read and released before it returns. On failure |err|
   (|errlen| bytes) says why and |*ptp| is not set; run |loop| until it
   has no more work to release handles already made. Returns 0,
   RP_ERR_CONFIG (bad config file or resolver URL, no resolver),
   RP_ERR_IO (config file unreadable, bind failure),
   RP_ERR_INVALID_ARGUMENT or RP_ERR_NOMEM. */
int tun_pool_start(tun_pool **ptp, uv_loop_t *loop,
                   const tun_pool_options *options, char *err, size_t errlen);

/* tun_pool_get_address stores the pool's UDP address (127.0.0.1:port) in
   |addr|. */
void tun_pool_get_address(const tun_pool *tp, struct sockaddr_storage *addr);

/* tun_pool_query hands query |q| (|len| bytes) to the pool in process at
   |now|; its answer goes to the options' answer callback with |token|.
   Returns 0, or an RP_ERR_* (no answer callback, pool stopping, not a
   query). */
int tun_pool_query(tun_pool *tp, const uint8_t *q, size_t len, uint64_t token,
                   rp_tstamp now);

/* tun_pool_format_stats writes ,"pool_stats":{"resolvers":[...],
   "pool":{...}} into |out| (|cap| bytes; the same shape as respool's
   --stats-json file): per configured resolver its name, check, state,
   cap_qps, sent, answered, refused, dropped, errors, copies, hedges,
   probes, loss, mean_latency_ms and score; the pool's totals (queries,
   delivered, failed, waits, sends, copies, hedges, resends, probes, nup,
   udp_queries, send_failures...). Writes "" when |cap| is too small.
   Returns the length written. */
size_t tun_pool_format_stats(tun_pool *tp, char *out, size_t cap);

/* tun_pool_format_timeline writes ',"pool_timeline":{...}' into |out|:
   period_ms, the names of the first (up to eight) resolvers, and per
   sample (one a second from the start, ten minutes at most) their cap
   (q/s, 0 = none), answer rate (q/s) and answers so far. Writes "" when
   |cap| is too small. Returns the length written. */
size_t tun_pool_format_timeline(tun_pool *tp, char *out, size_t cap);

/* tun_pool_stop stops the pool (saving scores when a scores file is
   configured), closes its handles and frees |tp| once they are closed.
   Returns 0, or RP_ERR_IO when the scores could not be saved. NULL is a
   no-op. */
int tun_pool_stop(tun_pool *tp);

#endif /* TUN_POOL_H */
