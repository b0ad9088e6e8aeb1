/*
 * fr_server.h: the libuv server behind `fakeres`.
 *
 * One fr_server runs any number of fake resolvers on one libuv loop. Each
 * resolver listens on UDP and TCP (RFC 7766: two-byte length framing,
 * several queries per connection, answers in the order they are ready)
 * on its own address, and applies its fr_profile to every query. In
 * answer mode it builds the reply itself (fr_answer); in upstream mode it
 * forwards the query over UDP to one upstream with a fresh ID and relays
 * the answer with the client's ID restored.
 *
 * Memory is bounded: the delayed replies, the upstream table and the TCP
 * connections have fixed caps (FR_SERVER_*_MAX); what does not fit is
 * dropped and counted as overflow.
 */
#ifndef FR_SERVER_H
#define FR_SERVER_H

#include "fr_profile.h"

#include <netinet/in.h>
#include <stdio.h>

#include <uv.h>

/* FR_SERVER_DELAYED_MAX caps the replies waiting for their delay. */
#define FR_SERVER_DELAYED_MAX 65536u
/* FR_SERVER_DELAYED_BYTES_MAX caps their bytes (32 MiB). */
#define FR_SERVER_DELAYED_BYTES_MAX (32u * 1024u * 1024u)
/* FR_SERVER_UPSTREAM_MAX caps the queries waiting for the upstream. It
   is well under the 65536 IDs, so a free random ID is found quickly. */
#define FR_SERVER_UPSTREAM_MAX 8192u
/* FR_SERVER_TCP_CONNS_MAX caps the TCP connections of one resolver. */
#define FR_SERVER_TCP_CONNS_MAX 256u
/* FR_SERVER_TCP_WRITES_MAX caps the replies queued on one connection
   whose client does not read. */
#define FR_SERVER_TCP_WRITES_MAX 1024u

typedef enum fr_mode {
  FR_MODE_ANSWER = 0, /* answer every query itself */
  FR_MODE_UPSTREAM    /* forward to an upstream resolver */
} fr_mode;

typedef struct fr_server_config {
  /* mode is answer or upstream. */
  fr_mode mode;
  /* upstream is the upstream resolver (FR_MODE_UPSTREAM only). */
  struct sockaddr_in upstream;
  /* upstream_timeout is how long a forwarded query waits, ns. */
  rp_duration upstream_timeout;
  /* specs are the resolvers (copied), nspecs of them, at least one. */
  const fr_spec *specs;
  size_t nspecs;
  /* seed seeds the profiles' random source. */
  uint64_t seed;
} fr_server_config;

/* fr_counts are one resolver's counters, as printed on exit. */
typedef struct fr_counts {
  /* queries: every packet or TCP frame received. */
  uint64_t queries;
  /* answered: answers sent (answer mode, or relayed from upstream). */
  uint64_t answered;
  /* refused: REFUSED or SERVFAIL sent past the rate limit. */
  uint64_t refused;
  /* dropped: queries dropped past the rate limit (over=drop). */
  uint64_t dropped;
  /* lost: exchanges lost by the loss profile, before or after. */
  uint64_t lost;
  /* malformed: queries that did not parse (FORMERR sent when the header
     did, nothing otherwise). */
  uint64_t malformed;
  /* upstream_timeouts: forwarded queries the upstream never answered. */
  uint64_t upstream_timeouts;
  /* dead: queries ignored because the resolver is dead. */
  uint64_t dead;
  /* overflow: queries or replies dropped because a table was full or a
     send failed. */
  uint64_t overflow;
} fr_counts;

typedef struct fr_server fr_server;

/*
 * fr_server_new binds every resolver of |config| on |loop| and stores the
 * server in |*psrv|. Each resolver's UDP and TCP sockets share one port
 * when it can be had. On failure |errbuf| (|errlen| bytes) says which
 * resolver and why.
 *
 * Returns 0, RP_ERR_INVALID_ARGUMENT (no resolver), RP_ERR_IO (a bind or
 * listen failed), or RP_ERR_NOMEM. On failure nothing is left open, but
 * the caller must still run |loop| once so that closed handles finish.
 */
int fr_server_new(fr_server **psrv, uv_loop_t *loop,
                  const fr_server_config *config, char *errbuf, size_t errlen);

/* fr_server_print_addresses writes one JSON line
   {"resolvers":[{"name":..,"udp":"ip:port","tcp":"ip:port"},..]} to |out|
   and flushes it. */
void fr_server_print_addresses(const fr_server *srv, FILE *out);

/* fr_server_print_counts writes one JSON line {"resolvers":[{"name":..,
   "queries":..,..},..]} with every fr_counts field to |out| and flushes
   it. */
void fr_server_print_counts(const fr_server *srv, FILE *out);

/* fr_server_address copies resolver |i|'s bound UDP and TCP addresses
   into |udp| and |tcp| (either may be NULL). Returns 0 or
   RP_ERR_NOT_FOUND. */
int fr_server_address(const fr_server *srv, size_t i, struct sockaddr_in *udp,
                      struct sockaddr_in *tcp);

/* fr_server_counts returns resolver |i|'s counters, or NULL. */
const fr_counts *fr_server_counts(const fr_server *srv, size_t i);

/* fr_server_close closes every handle and frees every pending reply and
   upstream entry; once the loop has run the close callbacks, the loop
   has nothing left from the server. Counters stay readable. Calling it
   twice is a no-op. */
void fr_server_close(fr_server *srv);

/* fr_server_del frees |srv| after fr_server_close and the loop run that
   finished the closes. NULL is a no-op. */
void fr_server_del(fr_server *srv);

#endif /* FR_SERVER_H */
