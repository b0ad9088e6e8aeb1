/*
 * simjobs.h: runs a list of simulated cells on several worker processes
 * (prefix sim_jobs_), so `respool-sim table` uses every core. It owns
 * the workers and the shared memory their results come back in.
 *
 * IMPLEMENTATION NOTES
 * - Each worker is a fork of the caller: it sees the caller's tables as
 *   they were, builds each cell it takes with the caller's |make| and
 *   runs it (sim_net_run). Workers take the next job from a counter in
 *   shared memory, so a long cell does not hold back the others, and
 *   write its result into that job's slot of the shared array. Which
 *   worker ran a job changes nothing in its result: a run depends only
 *   on its cell (seed included), so the output is the same for any
 *   number of workers.
 * - One worker runs the jobs in the calling process, without fork (and
 *   where fork or the shared memory fails).
 * - A worker that dies leaves its job unfinished: that job is reported
 *   as failed (SIM_JOBS_LOST), the others stand.
 */
#ifndef SIM_JOBS_H
#define SIM_JOBS_H

#include "simnet.h"

#include <stddef.h>

/* SIM_JOBS_ERRLEN is the room for a job's error message. */
#define SIM_JOBS_ERRLEN 160
/* SIM_JOBS_LOST is the status of a job whose worker died. */
#define SIM_JOBS_LOST (-1000)
/* SIM_JOBS_MAX_WORKERS bounds the workers. */
#define SIM_JOBS_MAX_WORKERS 64

/* sim_jobs_make builds job |k|'s cell into |cell|. Returns 0, or
   non-zero with |err| (|errlen| bytes) saying why. */
typedef int (*sim_jobs_make)(size_t k, sim_net_cell *cell, char *err,
                             size_t errlen, void *user_data);

/* sim_job_out is one job's outcome. |made| is |make|'s return (non-zero:
   not run, |err| says why); else |rv| is sim_net_run's (or
   SIM_JOBS_LOST) and |res| its result; |wall| the seconds it took. */
typedef struct sim_job_out {
  int made;
  int rv;
  double wall;
  char err[SIM_JOBS_ERRLEN];
  sim_net_result res;
} sim_job_out;

/* sim_jobs_done, when given, is called in the worker right after job
   |k| ended (to report progress; jobs end in any order). */
typedef void (*sim_jobs_done)(size_t k, const sim_job_out *out,
                              void *user_data);

/* sim_jobs_default_workers returns the cores online (1..64). */
unsigned sim_jobs_default_workers(void);

/* sim_jobs_run runs jobs 0..|njobs|-1 on |nworkers| processes and fills
   out[0..njobs-1]; |done| may be NULL. */
void sim_jobs_run(size_t njobs, unsigned nworkers, sim_jobs_make make,
                  sim_jobs_done done, void *user_data, sim_job_out *out);

#endif /* SIM_JOBS_H */
