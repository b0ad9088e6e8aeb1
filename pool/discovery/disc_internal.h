/*
 * disc_internal.h: what the files of discovery share (not installed):
 * the constants, the discoverer's state (struct rp_disc) and the steps
 * one file calls in another. disc.c runs the pretests, disc_list.c
 * builds the candidate list.
 */
#ifndef RP_DISC_INTERNAL_H
#define RP_DISC_INTERNAL_H

#include "disc.h"
#include "dns.h"

#include <netinet/in.h>
#include <stdint.h>

/* DISC_TICK_MS is the period of the timeout and pace timer. */
#define DISC_TICK_MS 10u
/* DISC_LINE_MAX is the longest list file line kept. */
#define DISC_LINE_MAX 600
/* DISC_LOG_LINE is the longest log line. */
#define DISC_LOG_LINE 512
/* DISC_QBUF_LEN is the pretest query buffer; DISC_RBUF_LEN the answer
   buffer (longer answers are truncated and still judged by header). */
#define DISC_QBUF_LEN 512
#define DISC_RBUF_LEN 4096
/* DISC_INITIAL_CANDIDATES is the first capacity of the list. */
#define DISC_INITIAL_CANDIDATES 64u
/* DISC_HASH_MIN is the smallest hash set (a power of two). */
#define DISC_HASH_MIN 1024u
/* DISC_PORT_DNS is the port of addresses given without one. */
#define DISC_PORT_DNS 53
/* DISC_IPV4_BITS is the length of an IPv4 address, bits. */
#define DISC_IPV4_BITS 32u
/* DISC_FNV_OFFSET and DISC_FNV_PRIME are the 64-bit FNV-1a constants. */
#define DISC_FNV_OFFSET 1469598103934665603ull
#define DISC_FNV_PRIME 1099511628211ull
/* DISC_DEFAULT_PRETEST is queried when no pretest domain is given. */
#define DISC_DEFAULT_PRETEST "example.com"
/* DISC_SHIFT_A, _B, _C are Marsaglia's xorshift64 shifts. */
#define DISC_SHIFT_A 13
#define DISC_SHIFT_B 7
#define DISC_SHIFT_C 17

/* disc_addr is a compact IPv4 or IPv6 address with its port. */
typedef union disc_addr {
  struct sockaddr sa;
  struct sockaddr_in in;
  struct sockaddr_in6 in6;
} disc_addr;

typedef struct disc_cand {
  disc_addr addr;
  uint8_t source;
} disc_cand;

/* Slot states. */
#define DISC_SLOT_FREE 0
#define DISC_SLOT_ACTIVE 1
#define DISC_SLOT_CLOSING 2

typedef struct disc_slot {
  uv_udp_t udp;
  rp_disc *d;
  int state;
  size_t cand;
  uint16_t id;
  rp_tstamp sent_at;
  rp_tstamp deadline;
} disc_slot;

struct rp_disc {
  uv_loop_t *loop;
  const rp_mem *mem;
  rp_disc_options opts;
  /* Settings copied from the config. */
  uint32_t want, concurrency;
  rp_duration pace, timeout;
  rp_dns_name pretest;
  /* Candidates and the duplicate filter (hashes, 0 = empty). */
  disc_cand *cands;
  size_t ncands, cap_cands, next;
  uint64_t *hash;
  size_t hash_cap;
  /* Slots; free ones are listed in free_idx (nfree of them). */
  disc_slot *slots;
  size_t *free_idx;
  size_t nfree, nactive;
  uv_timer_t timer;
  rp_tstamp start_at, next_start_at;
  uint64_t rng;
  uint8_t qbuf[DISC_QBUF_LEN];
  uint8_t rbuf[DISC_RBUF_LEN];
  rp_disc_stats stats;
  int done;
  int stopping;
  size_t nhandles;
  rp_disc_closed_cb closed_cb;
  void *closed_ud;
};

/* rp_disc_log writes a log line at |level| (filtered by the options). */
void rp_disc_log(rp_disc *d, rp_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* rp_disc_rand returns the next number of the xorshift64 generator. */
uint64_t rp_disc_rand(rp_disc *d);

/* rp_disc_build fills the candidate list of |d| from |cfg| (the system
   resolvers, the list file, the bundled list and its country's ranges,
   in that order). Returns 0, RP_ERR_CONFIG (|err| says why) or
   RP_ERR_NOMEM (disc_list.c). */
int rp_disc_build(rp_disc *d, const rp_config_discovery *cfg, char *err,
                  size_t errlen);

#endif /* RP_DISC_INTERNAL_H */
