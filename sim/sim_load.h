/*
 * sim_load.h: the client load of a simulation.
 *
 * Two models, given as a spec of comma-separated key=value items:
 *
 *   rate=150,seconds=20           open loop: unique queries at a constant
 *                                 rate (q/s, decimals allowed), evenly
 *                                 spaced, whatever the pool answers.
 *   workers=300,seconds=20        closed loop, like a tunnel client: N
 *                                 workers each keep one query out; a
 *                                 worker sends its next query |think|
 *                                 after the first answer or failure of
 *                                 the last one (or after the pool's
 *                                 deadline + 1 s when nothing came).
 *
 * Common keys: seconds (how long queries are started; a duration such as
 * 20s or 500ms is accepted too), start (when the first query goes,
 * duration, default 0), size (TXT payload bytes the answer carries; the
 * default is full: filled to the EDNS size 1232, as a tunnel server with
 * data queued answers), empty (percentage of queries whose answer is an
 * empty TXT, like idle polls), think (workers only: time between an
 * answer and the next query, default 1ms, the tunnel client's own
 * processing and loopback hops), failpause (workers only: pause after a
 * failed query instead of think; default: think. A client that drops a
 * SERVFAIL and polls again only on its poll timer has a long one).
 *
 * Every query has a unique name (no cache could answer it), type TXT,
 * EDNS 1232: [s<size>.]q<serial>.t.sim.example.
 */
#ifndef SIM_LOAD_H
#define SIM_LOAD_H

#include "respool.h"

#include <stddef.h>
#include <stdint.h>

/* SIM_LOAD_SIZE_FULL: the answer fills the query's EDNS size. */
#define SIM_LOAD_SIZE_FULL SIZE_MAX

/* sim_load_kind is the load model. */
typedef enum sim_load_kind {
  SIM_LOAD_NONE = 0, /* no client queries */
  SIM_LOAD_RATE,     /* constant rate, open loop */
  SIM_LOAD_WORKERS   /* N workers with one query out each */
} sim_load_kind;

/* sim_load is one load spec. */
typedef struct sim_load {
  sim_load_kind kind;
  /* rate_qps is the query rate of SIM_LOAD_RATE, q/s. */
  double rate_qps;
  /* workers is the worker count of SIM_LOAD_WORKERS. */
  uint32_t workers;
  /* start is when the first query goes, ns of virtual time. */
  rp_duration start;
  /* duration is how long queries are started, ns. */
  rp_duration duration;
  /* think is a worker's pause between an answer and its next query,
     ns. */
  rp_duration think;
  /* fail_pause is a worker's pause after a failed query, ns, or
     RP_TSTAMP_UNSET to use |think|. */
  rp_duration fail_pause;
  /* size is the TXT payload asked for, bytes, or SIM_LOAD_SIZE_FULL. */
  size_t size;
  /* empty_ppm is the share of queries asking for an empty answer, parts
     per million. */
  uint32_t empty_ppm;
} sim_load;

/* SIM_LOAD_ERRLEN is a good size for the error buffer of
   sim_load_parse. */
#define SIM_LOAD_ERRLEN 160

/* SIM_LOAD_QUERY_MAX is the largest query sim_load_build_query writes,
   bytes. */
#define SIM_LOAD_QUERY_MAX 512

/* sim_load_default fills |load| with no load (kind NONE), 20 s, start
   0, think 1 ms, full answers, no empty ones. */
void sim_load_default(sim_load *load);

/* sim_load_parse reads |text| into |load| (defaults first). Exactly one
   of rate and workers must be set. On failure |errbuf| names the key and
   the value. Returns 0 or RP_ERR_CONFIG. */
int sim_load_parse(sim_load *load, const char *text, char *errbuf,
                   size_t errlen);

/* sim_load_format writes |load| back as a spec into |out| (|cap|
   bytes). */
void sim_load_format(const sim_load *load, char *out, size_t cap);

/* sim_load_build_query writes the query of client serial |serial| into
   |out| (|cap| bytes), with DNS ID the low 16 bits of |serial|, asking
   for an empty answer when |empty|. Returns the length or
   RP_ERR_NOBUF. */
rp_ssize sim_load_build_query(const sim_load *load, uint64_t serial, int empty,
                              uint8_t *out, size_t cap);

#endif /* SIM_LOAD_H */
