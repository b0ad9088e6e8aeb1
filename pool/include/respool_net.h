/*
 * respool_net.h: the libuv runtime of respool (prefix rp_net_).
 *
 * A tunnel embeds a pool into its own uv loop: rp_net_pool_start binds
 * UDP and TCP on 127.0.0.1 (a free port unless the config names one),
 * checks the configured resolvers (best saved score first) and relays
 * every client query through the sans-I/O core (respool.h) to them.
 * rp_net_pool_get_address tells the tunnel where to send its queries;
 * rp_net_pool_stop closes everything, saves the scores and calls back
 * once the last handle is closed.
 *
 * The configuration object (rp_config, respool_config.h; parsed by pool/net/config.c) is
 * read at start and not kept: the caller may free it once
 * rp_net_pool_start returns.
 *
 * Embedding, in short:
 *
 *   rp_config cfg;
 *   rp_config_init(&cfg, NULL);
 *   rp_config_load_file(&cfg, "pool.json", err, sizeof(err));
 *   rp_net_options opts = {.config = &cfg, .kind = RP_KIND_DNSTT};
 *   rp_net_pool *np;
 *   if (rp_net_pool_start(&np, loop, &opts, err, sizeof(err)) == 0) {
 *     rp_net_pool_format_address(np, addr, sizeof(addr));  (tunnel -> addr)
 *   }
 *   rp_config_free(&cfg);
 *   ...
 *   rp_net_pool_stop(np, on_closed, ctx);  (scores saved, handles closed)
 *
 * Everything runs on the loop's thread; no function here is thread-safe.
 * The process should ignore SIGPIPE (a client closing its TCP connection
 * while an answer is written would otherwise kill it).
 */
#ifndef RESPOOL_NET_H
#define RESPOOL_NET_H

#include "respool.h"
#include "respool_config.h"

#include <sys/socket.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rp_net_pool rp_net_pool;

/* RP_NET_CHECK_WANT is how many working resolvers the start-up check
   aims for before it pauses when the config's discovery.want is 0
   (DESIGN.md section 5). */
#define RP_NET_CHECK_WANT 10

/* rp_net_check_state is where a configured resolver stands. */
typedef enum rp_net_check_state {
  RP_NET_CHECK_PENDING = 0, /* not checked yet */
  RP_NET_CHECK_RUNNING,     /* the start-up check is in flight */
  RP_NET_CHECK_FAILED,      /* failed its last check; re-checked later */
  RP_NET_CHECK_PASSED,      /* in the pool */
  RP_NET_CHECK_UNSUPPORTED, /* not a resolver itself: "auto" (discovery) */
  RP_NET_CHECK_REMOVED      /* taken out by rp_net_pool_reload */
} rp_net_check_state;

/* rp_net_check_state_str returns a static name for |state|. */
const char *rp_net_check_state_str(rp_net_check_state state);

/* rp_net_options configures rp_net_pool_start. Zero-initialise it and set
   what you need; |config| is required. */
typedef struct rp_net_options {
  /* config is the parsed configuration (resolvers, listen, scores_file,
     pretest_domain and the settings overrides). Read at start only. */
  const rp_config *config;
  /* kind is used when config->has_kind is 0. RP_KIND_AUTO: the generic
     defaults until the client's queries show the tunnel, then that kind's
     (rp_pool_sense_kind), the config applied to each; not with
     |settings| given. */
  rp_kind kind;
  /* score_type is appended to "dnstt_resolvers" in the score file key
     (e.g. "TXT"); NULL for none. */
  const char *score_type;
  /* settings, when not NULL, are used as they are; when NULL the pool
     uses rp_settings_default(kind) with the config applied. */
  const rp_settings *settings;
  /* check_build, when not NULL, replaces the plain pretest query: it
     writes a query with ID |id| into |buf| (|cap| bytes) and returns its
     length or a negative error. check_verify then says whether |answer|
     passes (1) or not (0). Both get |user_data|. */
  rp_ssize (*check_build)(uint8_t *buf, size_t cap, uint16_t id,
                          void *user_data);
  int (*check_verify)(const uint8_t *answer, size_t len, void *user_data);
  /* check_timeout is how long one start-up check waits, ns (0: 2 s). */
  rp_duration check_timeout;
  /* recheck_interval is how often, while fewer than 10 resolvers work,
     the next candidates are checked, ns (0: 15 s). */
  rp_duration recheck_interval;
  /* tcp_idle_timeout closes a TCP client connection that sent no query
     and got no answer for this long, ns (0: 10 s; RFC 7766 6.2.3);
     tcp_busy_idle_timeout replaces it while three quarters of the client
     slots are taken (0: 1 s). A new client finding every slot taken
     closes the one idle longest instead of being refused. */
  rp_duration tcp_idle_timeout, tcp_busy_idle_timeout;
  /* tcp_client_max_pending bounds the answer bytes queued for one TCP
     client that does not read, tcp_max_pending those of all of them
     (0: 128 KiB and 16 MiB). A client past either is closed. */
  size_t tcp_client_max_pending, tcp_max_pending;
  /* log receives one key=value line (no newline) at |level| or below
     log_level; NULL prints nothing. */
  void (*log)(rp_log_level level, const char *line, void *user_data);
  /* log_level is the most verbose level passed to |log|. */
  rp_log_level log_level;
  /* mem is the allocator (NULL for rp_mem_default()). */
  const rp_mem *mem;
  /* user_data is passed to the callbacks above. */
  void *user_data;
} rp_net_options;

/* rp_net_pool_start creates a pool on |loop| and stores it in |*pnp|.
   It binds the listener (UDP and TCP on the same port), loads the scores
   file if one is configured and starts the start-up check. DoT (dot://,
   tls://) and DoH (https://) resolvers share one TLS client context
   (system trust store plus config tls_ca). "auto" starts discovery
   (pool/discovery): each candidate that passes its pretest joins the
   pool. On failure |err| (|errlen| bytes) says why and
   |*pnp| is not set; after an RP_ERR_IO from binding the listener, the
   handles already made are closing: run |loop| until it has no more work
   to release them (nothing else is left open). Returns 0,
   RP_ERR_INVALID_ARGUMENT (no usable resolver, bad options), RP_ERR_CONFIG (a
   scheme not supported yet while no other resolver is usable), RP_ERR_IO (bind
   or socket failure, or no secure random bytes: a RAND_bytes failure later
   aborts, never falls back to guessable DNS IDs) or RP_ERR_NOMEM. */
int rp_net_pool_start(rp_net_pool **pnp, uv_loop_t *loop,
                      const rp_net_options *options, char *err, size_t errlen);

/* rp_net_pool_get_address stores the listener's address (127.0.0.1 and
   the bound port; UDP and TCP share it) in |addr| and its length in
   |*plen|. Returns 0. */
int rp_net_pool_get_address(const rp_net_pool *np,
                            struct sockaddr_storage *addr, socklen_t *plen);

/* rp_net_pool_format_address writes "127.0.0.1:PORT" into |out|. */
void rp_net_pool_format_address(const rp_net_pool *np, char *out, size_t cap);

/* rp_net_format_sockaddr writes an IPv4 or IPv6 address with its port
   ("127.0.0.1:53", "[::1]:53") into |out|. */
void rp_net_format_sockaddr(const struct sockaddr_storage *ss, char *out,
                            size_t cap);

/* RP_NET_DIRECT_BYTES bounds the answers of in-process queries waiting
   to be handed to the answer callback, bytes; RP_NET_DIRECT_ANSWERS
   bounds their count. */
#define RP_NET_DIRECT_BYTES (1024u * 1024u)
#define RP_NET_DIRECT_ANSWERS 4096u

/* rp_net_answer_cb receives the answer to a query handed in by
   rp_net_pool_query: |token| as given there, |data| (|len| bytes) with
   the query's own DNS ID, valid only during the call. It runs from the
   loop (its check, prepare or idle phase), never inside a call into the
   pool, rp_net_pool_query included, so it may call rp_net_pool_query
   again. A query the pool cannot place gets
   its failure answer (SERVFAIL, or what fail_mode says) here too. */
typedef void (*rp_net_answer_cb)(rp_net_pool *np, uint64_t token,
                                 const uint8_t *data, size_t len,
                                 void *user_data);

/* rp_net_pool_set_answer_cb lets the embedder hand queries to the pool in
   process (rp_net_pool_query) instead of over the loopback listener,
   which keeps serving beside it. Answers of those queries go to |cb|.
   It sets up the answer queue (RP_NET_DIRECT_BYTES bytes) on the first
   call. Returns 0, RP_ERR_INVALID_ARGUMENT (|cb| NULL) or
   RP_ERR_NOMEM. */
int rp_net_pool_set_answer_cb(rp_net_pool *np, rp_net_answer_cb cb,
                              void *user_data);

/* rp_net_pool_query hands query |q| (|len| bytes, a DNS message; the
   answer keeps its ID) to the pool, read at |now| (uv_hrtime()), as if
   it had come to the listener from a client that takes answers of any
   size. Its answer goes to the answer callback with |token|. An answer
   that finds the queue full (the embedder has not returned to the loop
   for RP_NET_DIRECT_BYTES of answers) is dropped and counted, as a full
   socket buffer would drop it. Must not be called from inside a pool
   callback other than the answer callback. Returns 0,
   RP_ERR_INVALID_ARGUMENT (no answer callback, the pool stopping) or
   RP_ERR_MALFORMED (not a query the pool relays: counted, dropped). */
int rp_net_pool_query(rp_net_pool *np, const uint8_t *q, size_t len,
                      uint64_t token, rp_tstamp now);

/* rp_net_pool_closed_cb is called once every handle of |np| is closed;
   |np| is freed right after it returns. */
typedef void (*rp_net_pool_closed_cb)(rp_net_pool *np, void *user_data);

/* rp_net_pool_stop stops relaying, saves the scores (when a scores file
   is configured), closes every socket and timer and calls |closed_cb|
   (may be NULL) from the loop when the last one is closed; then |np| is
   freed. Calling it again does nothing. Returns 0, or RP_ERR_IO if the
   scores could not be saved (the pool is still stopped). */
int rp_net_pool_stop(rp_net_pool *np, rp_net_pool_closed_cb closed_cb,
                     void *user_data);

/* rp_net_reload_report says what rp_net_pool_reload did. */
typedef struct rp_net_reload_report {
  /* added: resolvers new to the pool (checked as at start); removed:
     resolvers the new configuration no longer lists; kept: the others
     (including what "auto" brought, which a reload leaves alone). */
  size_t added, removed, kept;
  /* restart names, comma separated, what the new configuration changes
     that only a restart applies ("listen, tuning hedge_after"); "" when
     nothing. */
  char restart[256];
} rp_net_reload_report;

/* rp_net_pool_reload makes |np| run the resolvers of |cfg| (merge its
   duplicates first, as the CLI does): new ones are added and checked as
   at start (while fewer than discovery.want work), ones it no longer
   lists leave the pool at once, their tries in flight placed on the
   others (no query is lost with them). discovery.want applies at once;
   the other fields only at a restart (named in |rep|, may be NULL). A
   reload that fails changes nothing. Returns 0, RP_ERR_INVALID_ARGUMENT
   (no resolver; |err| says so), RP_ERR_CONFIG (a DoT or DoH resolver but
   no TLS context) or RP_ERR_NOMEM. */
int rp_net_pool_reload(rp_net_pool *np, const rp_config *cfg,
                       rp_net_reload_report *rep, char *err, size_t errlen);

/* rp_net_pool_get_core returns the core, for rp_pool_get_stats and
   rp_pool_get_resolver_stats. Do not call its input functions. */
rp_pool *rp_net_pool_get_core(rp_net_pool *np);

/* rp_net_resolver_info describes one configured resolver. */
typedef struct rp_net_resolver_info {
  /* name is the URL as configured (borrowed from the pool). */
  const char *name;
  rp_net_check_state check;
  /* resolver_id is the core's id when |check| is PASSED. */
  uint32_t resolver_id;
  /* saved_score is the score read from the file (0 when none). */
  int saved_score;
  /* has_stats is 1 when |stats| is filled (the resolver is in the
     core). */
  int has_stats;
  rp_resolver_stats stats;
  /* last_error is the last connection or TLS failure, e.g.
     "tls_failed: certificate verify failed: ..." ("" when none;
     borrowed from the pool). */
  const char *last_error;
  /* udp_ports counts the UDP sockets (source ports) opened to it. */
  uint64_t udp_ports;
} rp_net_resolver_info;

/* rp_net_pool_resolver_count returns how many resolvers were
   configured. */
size_t rp_net_pool_resolver_count(const rp_net_pool *np);

/* rp_net_pool_get_resolver fills |info| for the |i|-th configured
   resolver at |now| (uv_hrtime()). Returns 0 or RP_ERR_NOT_FOUND. */
int rp_net_pool_get_resolver(const rp_net_pool *np, size_t i,
                             rp_net_resolver_info *info, rp_tstamp now);

/* rp_net_counters are the runtime's own counters (the core's are in
   rp_pool_get_stats). */
typedef struct rp_net_counters {
  /* udp_queries, tcp_queries: client queries received. */
  uint64_t udp_queries, tcp_queries;
  /* dropped_malformed: client queries without a DNS header. */
  uint64_t dropped_malformed;
  /* dropped_late: answers for a TCP client connection already closed. */
  uint64_t dropped_late;
  /* truncated_to_client: answers too large for the client's UDP size,
     sent with TC set. */
  uint64_t truncated_to_client;
  /* send_failures: sends that failed (socket error or no buffer). */
  uint64_t send_failures;
  /* tcp_connects, tcp_connect_failures: upstream TCP connections. */
  uint64_t tcp_connects, tcp_connect_failures;
  /* checks_passed, checks_failed: start-up checks. */
  uint64_t checks_passed, checks_failed;
  /* tls_handshakes: DoT/DoH connections that finished the handshake, of
     which tls_resumed resumed a saved session; tls_failures: handshakes
     or records that failed (a bad certificate among them; the reason is
     logged and kept in rp_net_resolver_info.last_error). */
  uint64_t tls_handshakes, tls_resumed, tls_failures;
  /* doh_http_refusals: DoH answers with status 429 or 5xx (reported to
     the core as refusals); doh_goaways, doh_resets: GOAWAY and
     RST_STREAM frames received. */
  uint64_t doh_http_refusals, doh_goaways, doh_resets;
  /* discovery_found: resolvers that discovery ("auto") added. */
  uint64_t discovery_found;
  /* udp_segmented: datagrams that left in segmented sends (UDP_SEGMENT:
     same destination and length, one pass through the kernel's stack);
     udp_segment_refused: segmented sends the kernel refused (their
     datagrams then left one by one, and segmenting stopped). */
  uint64_t udp_segmented, udp_segment_refused;
  /* tcp_clients: TCP client connections accepted; tcp_idle_closed: closed
     idle (tcp_idle_timeout); tcp_evicted: closed idle to make room for a
     new one; tcp_slow_closed: closed because their queued answers passed
     a bound; tcp_refused: refused (no memory). */
  uint64_t tcp_clients, tcp_idle_closed, tcp_evicted, tcp_slow_closed,
      tcp_refused;
  /* direct_queries: queries handed in by rp_net_pool_query;
     direct_dropped: their answers dropped because the answer queue was
     full. */
  uint64_t direct_queries, direct_dropped;
} rp_net_counters;

/* rp_net_pool_get_counters copies the runtime's counters. */
void rp_net_pool_get_counters(const rp_net_pool *np, rp_net_counters *counters);

/* rp_net_err_from_uv maps a libuv error (negative errno) to RP_ERR_*:
   UV_ENOMEM -> RP_ERR_NOMEM, UV_EINVAL -> RP_ERR_INVALID_ARGUMENT,
   anything else -> RP_ERR_IO. 0 stays 0. */
int rp_net_err_from_uv(int uverr);

#ifdef __cplusplus
}
#endif

#endif /* RESPOOL_NET_H */
