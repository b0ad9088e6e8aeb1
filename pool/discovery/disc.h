/*
 * disc.h: resolver discovery for "auto" (prefix rp_disc_).
 *
 * Discovery builds a list of candidate UDP resolvers, in this order:
 * addresses tried first by the caller (the best saved scores of the last
 * run), the system's resolvers (/etc/resolv.conf), the bundled list for
 * discovery.country, the global public resolvers, sample addresses of the
 * country's ranges (discovery.sample_ranges) and the resolver list file
 * (one address per line; 58 000 lines are fine). Duplicates are dropped.
 * It then pretests them on a libuv loop, |concurrency| at a time, each
 * with one query of the pretest domain from its own connected UDP socket
 * (so an ICMP port unreachable ends a check at once), at most one start
 * per |pace|, and reports every candidate that answers NOERROR or
 * NXDOMAIN with the right ID through on_found as soon as it passes. It
 * stops once |want| passed or the list is done, then calls on_done.
 *
 * The bundled data (resolvers.json, compiled in) also lists DoT and DoH
 * endpoints: rp_disc_bundled_tls returns them so that the pool can check
 * them with its own transports (discovery itself only speaks UDP).
 *
 * Everything runs on the loop's thread; nothing blocks it except reading
 * the list file and the data at start.
 */
#ifndef RP_DISC_H
#define RP_DISC_H

#include "respool.h"
#include "respool_config.h"

#include <sys/socket.h>
#include <uv.h>

/* RP_DISC_ADDR_LEN is the room for "[v6]:port" with NUL. */
#define RP_DISC_ADDR_LEN 64
/* RP_DISC_RESOLV_CONF is the system resolver file. */
#define RP_DISC_RESOLV_CONF "/etc/resolv.conf"
/* RP_DISC_MAX_CANDIDATES bounds the candidate list. */
#define RP_DISC_MAX_CANDIDATES 1000000u

/* rp_disc_source says where a candidate came from. */
typedef enum rp_disc_source {
  RP_DISC_SOURCE_SAVED = 0, /* a good score in the last run */
  RP_DISC_SOURCE_SYSTEM,    /* /etc/resolv.conf */
  RP_DISC_SOURCE_COUNTRY,   /* bundled list of discovery.country */
  RP_DISC_SOURCE_GLOBAL,    /* bundled global public resolvers */
  RP_DISC_SOURCE_RANGE,     /* a sample address of the country's ranges */
  RP_DISC_SOURCE_LIST       /* the resolver list file */
} rp_disc_source;

/* rp_disc_source_str returns a static name for |source|. */
const char *rp_disc_source_str(rp_disc_source source);

/* rp_disc_result is the outcome of one pretest. */
typedef enum rp_disc_result {
  RP_DISC_PASSED = 0,  /* NOERROR or NXDOMAIN with the right ID */
  RP_DISC_TIMEOUT,     /* no answer within the timeout */
  RP_DISC_REFUSED,     /* answered REFUSED */
  RP_DISC_BAD_RCODE,   /* answered another rcode (SERVFAIL, ...) */
  RP_DISC_UNREACHABLE, /* ICMP unreachable or another socket error */
  RP_DISC_SEND_FAILED  /* the query could not be sent */
} rp_disc_result;

#define RP_DISC_NRESULTS (RP_DISC_SEND_FAILED + 1)

/* rp_disc_result_str returns a static name for |result|. */
const char *rp_disc_result_str(rp_disc_result result);

/* rp_disc_report is one tested candidate, passed to the callbacks
   (borrowed, valid during the call). */
typedef struct rp_disc_report {
  /* addr is "IP:PORT" ("[IPv6]:PORT"); sa is the same address. */
  const char *addr;
  const struct sockaddr *sa;
  rp_disc_source source;
  rp_disc_result result;
  /* latency is the time to the answer, ns (UNSET when none). */
  rp_duration latency;
} rp_disc_report;

/* rp_disc_stats sums up a run. */
typedef struct rp_disc_stats {
  /* candidates is the list's length after duplicates were dropped;
     tested how many got a pretest; passed how many passed. */
  size_t candidates, tested, passed;
  /* by_result counts the pretests by rp_disc_result. */
  size_t by_result[RP_DISC_NRESULTS];
  /* skipped counts list lines that were not a usable UDP address. */
  size_t skipped;
  /* elapsed is the time from start to done, ns. */
  rp_duration elapsed;
} rp_disc_stats;

typedef struct rp_disc rp_disc;

/* rp_disc_options configures a run. Zero-initialise, then set. */
typedef struct rp_disc_options {
  /* config gives country, sample_ranges, want, concurrency, pace,
     timeout, list_file, data_file, system and bundled (read at start). */
  const rp_config_discovery *config;
  /* pretest_domain is the name queried (type A); NULL for example.com. */
  const char *pretest_domain;
  /* first lists addresses ("IP" or "IP:PORT") to try before the others,
     in order (the best saved scores); |nfirst| entries. */
  const char *const *first;
  size_t nfirst;
  /* resolv_conf replaces /etc/resolv.conf (tests); NULL for the real
     one. */
  const char *resolv_conf;
  /* on_found is called for each candidate that passes, at once. */
  void (*on_found)(const rp_disc_report *report, void *user_data);
  /* on_result, when not NULL, is called for every tested candidate. */
  void (*on_result)(const rp_disc_report *report, void *user_data);
  /* on_done is called once, when |want| passed or every candidate was
     tested (or after rp_disc_stop, with what was done). */
  void (*on_done)(const rp_disc_stats *stats, void *user_data);
  /* log receives key=value lines at |log_level| or below. */
  void (*log)(rp_log_level level, const char *line, void *user_data);
  rp_log_level log_level;
  /* mem is the allocator (NULL for rp_mem_default()). */
  const rp_mem *mem;
  void *user_data;
} rp_disc_options;

/* rp_disc_start builds the candidate list and starts pretesting on
   |loop|; |*pd| receives the run. On failure |err| (|errlen| bytes) says
   why. Returns 0, RP_ERR_CONFIG (an unreadable list or data file, an
   unknown country, a bad pretest name), RP_ERR_NOMEM or RP_ERR_IO. */
int rp_disc_start(rp_disc **pd, uv_loop_t *loop, const rp_disc_options *opts,
                  char *err, size_t errlen);

/* rp_disc_closed_cb is called when every handle of |d| is closed; |d|
   is freed right after. */
typedef void (*rp_disc_closed_cb)(rp_disc *d, void *user_data);

/* rp_disc_stop stops testing (on_done is called if it was not yet),
   closes every handle and calls |closed_cb| (may be NULL) from the loop
   when done; then |d| is freed. Calling it twice does nothing. */
void rp_disc_stop(rp_disc *d, rp_disc_closed_cb closed_cb, void *user_data);

/* rp_disc_get_stats copies the counts so far. */
void rp_disc_get_stats(const rp_disc *d, rp_disc_stats *stats);

/* rp_disc_bundled_tls calls |fn| for each DoT and DoH URL of the bundled
   data for |country| ("" for none) and "global" (in that order); |fn|
   returns non-zero to stop. |data_file| replaces the bundled data (NULL
   for the built-in copy). Returns 0, RP_ERR_CONFIG (bad data; |err|
   says why) or RP_ERR_NOMEM. */
int rp_disc_bundled_tls(const char *data_file, const char *country,
                        int (*fn)(const char *url, void *user_data),
                        void *user_data, char *err, size_t errlen);

#endif /* RP_DISC_H */
