/*
 * sim.h: the discrete-event simulator (DESIGN.md section 3).
 *
 * A simulation runs the pool core (pool/core, the very code the libuv
 * runtime drives) against simulated resolvers (sim_resolver.h, which are
 * the fake resolvers' profiles) under a client load (sim_load.h), in
 * virtual time. Nothing sleeps and nothing reads a clock: an event heap
 * ordered by (ts, seq) holds the answers on their way back, the client
 * queries and the profile changes, and the driver calls
 * rp_pool_handle_expiry at the times rp_pool_get_expiry names. All
 * randomness comes from one seed (the pool's rand callback, each
 * resolver's stream and the load's stream are split from it), so the
 * same seed gives the same run and the same trace hash.
 *
 * Use: sim_config_default, adjust, sim_new, sim_add_resolver for each
 * resolver, sim_add_hook for timed changes, then sim_run (or
 * sim_run_until in steps, reading stats in between), then the getters.
 * Virtual time starts at 0.
 */
#ifndef SIM_H
#define SIM_H

#include "respool.h"
#include "fr_profile.h"
#include "sim_load.h"
#include "sim_resolver.h"

#include <stddef.h>
#include <stdint.h>

/* sim_trace_fn receives one trace line (no newline). */
typedef void (*sim_trace_fn)(const char *line, void *user_data);

/* sim_config is a run's configuration. */
typedef struct sim_config {
  /* settings is handed to rp_pool_new (the constants under test). */
  rp_settings settings;
  /* seed seeds every random stream of the run. */
  uint64_t seed;
  /* load is the client load. */
  sim_load load;
  /* rtt is a path round trip added to every exchange, ns (0: the
     resolver's latency is the whole delay, as on loopback). */
  rp_duration rtt;
  /* sample_interval is the step of the timeline (caps, states, rates
     over time), ns; 0 records none. */
  rp_duration sample_interval;
  /* drain is how long sim_run goes on after the load stops, ns; UNSET
     means settings.deadline + 1 s. */
  rp_duration drain;
  /* max_events stops a run that processes more events than this (a
     guard against a load that never lets time advance); 0 = no limit. */
  uint64_t max_events;
  /* trace, when not NULL, receives a line per event and every line the
     core logs (at settings.log_level), with the virtual time. */
  sim_trace_fn trace;
  void *trace_data;
} sim_config;

/* sim_config_default fills |cfg| with rp_settings_default(|kind|), seed
   1, no load, rtt 0, 1 s samples, the default drain and a limit of
   100 million events. */
void sim_config_default(sim_config *cfg, rp_kind kind);

typedef struct sim sim;

/* SIM_ERRLEN is a good size for error buffers of this module. */
#define SIM_ERRLEN 200

/* sim_new creates a run in |*psim| with a copy of |cfg|; |mem| (NULL for
   rp_mem_default()) allocates the run and the pool. Returns 0,
   RP_ERR_INVALID_ARGUMENT when rp_pool_new rejects the settings, or
   RP_ERR_NOMEM. */
int sim_new(sim **psim, const sim_config *cfg, const rp_mem *mem);

/* sim_del frees |s| and its pool. NULL is a no-op. */
void sim_del(sim *s);

/* sim_add_resolver adds a simulated resolver with a copy of |spec| to
   the simulation and to the pool, at the current virtual time. A spec
   without a name is named r<N> (N counting from 1). Its index (0-based,
   in order of addition) goes to |*pindex| when not NULL. Returns 0,
   RP_ERR_FULL, RP_ERR_NOMEM or an error of rp_pool_add_resolver. */
int sim_add_resolver(sim *s, const fr_spec *spec, uint32_t *pindex);

/* sim_find_resolver stores the index of the resolver called |name| in
   |*pindex|. Returns 0 or RP_ERR_NOT_FOUND. */
int sim_find_resolver(const sim *s, const char *name, uint32_t *pindex);

/* sim_add_hook schedules a profile change: at virtual time |at| the
   resolver |index| becomes its current spec with the keys of |text|
   overridden (sim_resolver_change). |text| is checked now and copied.
   Returns 0, RP_ERR_CONFIG (reason in |errbuf|), RP_ERR_NOT_FOUND for a
   bad index, or RP_ERR_NOMEM. */
int sim_add_hook(sim *s, rp_tstamp at, uint32_t index, const char *text,
                 char *errbuf, size_t errlen);

/* sim_run_until processes every event up to and including |until| and
   leaves the clock at |until| (never going back). Returns 0, a fatal
   error of the core, RP_ERR_NOMEM, or RP_ERR_PROTO when the run breaks a
   guard (max_events, or an expiry that never advances); sim_error then
   says why. */
int sim_run_until(sim *s, rp_tstamp until);

/* sim_run runs until sim_end_time. Returns as sim_run_until. */
int sim_run(sim *s);

/* sim_error returns the last error message ("" when none). */
const char *sim_error(const sim *s);

/* sim_now returns the virtual time, ns. */
rp_tstamp sim_now(const sim *s);

/* sim_load_end returns when the load stops starting queries. */
rp_tstamp sim_load_end(const sim *s);

/* sim_end_time returns where sim_run stops: the load's end plus the
   drain. */
rp_tstamp sim_end_time(const sim *s);

/* sim_trace_hash returns the FNV-1a hash of every event so far (time,
   kind, resolver, ids, lengths, verdicts, deliveries). Equal seeds and
   configurations give equal hashes. */
uint64_t sim_trace_hash(const sim *s);

/* sim_events returns the number of events processed (heap events and
   expiry calls). */
uint64_t sim_events(const sim *s);

/* sim_pool returns the pool (for rp_pool_get_* calls). */
const rp_pool *sim_pool(const sim *s);

/* sim_resolver_count returns the number of resolvers. */
uint32_t sim_resolver_count(const sim *s);

/* sim_get_resolver returns resolver |index| (or NULL). */
const sim_resolver *sim_get_resolver(const sim *s, uint32_t index);

/* sim_get_resolver_stats fills |st| with the core's view of resolver
   |index| now. Returns 0 or RP_ERR_NOT_FOUND. */
int sim_get_resolver_stats(const sim *s, uint32_t index, rp_resolver_stats *st);

/* sim_client_stats is the client side of a run. */
typedef struct sim_client_stats {
  /* queries counts client queries submitted. */
  uint64_t queries;
  /* answered counts queries whose first delivery was NOERROR. */
  uint64_t answered;
  /* failed counts queries whose first delivery was an error (SERVFAIL
     from the pool, or a resolver's error passed on). */
  uint64_t failed;
  /* unanswered counts queries with no delivery at all yet. */
  uint64_t unanswered;
  /* extra counts further deliveries (copies and hedges answered too). */
  uint64_t extra;
  /* worker_timeouts counts worker queries given up (workers load). */
  uint64_t worker_timeouts;
  /* p50, p90, p99 and max are latencies of answered queries (submit to
     first answer), ns; RP_TSTAMP_UNSET when none answered. */
  rp_duration p50, p90, p99, max;
} sim_client_stats;

/* sim_get_client_stats fills |cs|. Returns 0 or RP_ERR_NOMEM. */
int sim_get_client_stats(const sim *s, sim_client_stats *cs);

/* sim_answered_between returns how many client queries got their first
   NOERROR answer at a time in [t0, t1). */
uint64_t sim_answered_between(const sim *s, rp_tstamp t0, rp_tstamp t1);

/* sim_received_between returns how many queries resolver |index|
   received with a time in [t0, t1) (counted per timeline sample: t0 and
   t1 are rounded to sample boundaries; 0 without samples). */
uint64_t sim_received_between(const sim *s, uint32_t index, rp_tstamp t0,
                              rp_tstamp t1);

/* sim_sample_resolver is one resolver at one sample time. */
typedef struct sim_sample_resolver {
  /* state is the core's state of the resolver. */
  rp_resolver_state state;
  /* cap_qps is the core's learned cap (0 = none), q/s. */
  double cap_qps;
  /* answer_rate_qps is the core's recent answer rate, q/s. */
  double answer_rate_qps;
  /* inflight is the core's tries in flight. */
  uint32_t inflight;
  /* counts is the resolver's own cumulative counters then. */
  sim_resolver_counts counts;
} sim_sample_resolver;

/* sim_sample is the pool and client at one sample time. */
typedef struct sim_sample {
  /* ts is the virtual time of the sample, ns. */
  rp_tstamp ts;
  /* queries, answered and failed are cumulative client counts. */
  uint64_t queries, answered, failed;
} sim_sample;

/* sim_nsamples returns the number of timeline samples. */
size_t sim_nsamples(const sim *s);

/* sim_get_sample returns sample |i| (or NULL). */
const sim_sample *sim_get_sample(const sim *s, size_t i);

/* sim_get_sample_resolver returns resolver |index| at sample |i| (or
   NULL). */
const sim_sample_resolver *sim_get_sample_resolver(const sim *s, size_t i,
                                                   uint32_t index);

/* sim_core_log_lines returns how many lines the core logged, by level
   (RP_LOG_ERROR .. RP_LOG_DEBUG). */
uint64_t sim_core_log_lines(const sim *s, rp_log_level level);

#endif /* SIM_H */
