/*
 * simjobs.c: cells on worker processes (see simjobs.h).
 */
#define _GNU_SOURCE
#include "simjobs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* jobs_shared heads the shared memory: the next job to take. After it
   come the jobs' outcomes (sim_job_out each), then their states (a byte
   each: 0 not taken, 1 running, 2 done). */
typedef struct jobs_shared {
  size_t next;
} jobs_shared;

static double jobs_wall(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* jobs_one builds and runs job |k| into |o| and reports it to |done|. */
static void jobs_one(size_t k, sim_jobs_make make, sim_jobs_done done, void *ud,
                     sim_job_out *o) {
  sim_net_cell cell;
  double w0 = jobs_wall();

  memset(o, 0, sizeof(*o));
  o->made = make(k, &cell, o->err, sizeof(o->err), ud);
  if (o->made == 0) {
    o->rv = sim_net_run(&cell, &o->res);
  }
  o->wall = jobs_wall() - w0;
  if (done != NULL) {
    done(k, o, ud);
  }
}

unsigned sim_jobs_default_workers(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);

  if (n < 1) {
    return 1;
  }
  return n > SIM_JOBS_MAX_WORKERS ? SIM_JOBS_MAX_WORKERS : (unsigned)n;
}

/* jobs_worker takes jobs from |sh| until none is left. */
static void jobs_worker(jobs_shared *sh, unsigned char *state,
                        sim_job_out *shout, size_t njobs, sim_jobs_make make,
                        sim_jobs_done done, void *ud) {
  for (;;) {
    size_t k = __atomic_fetch_add(&sh->next, 1, __ATOMIC_RELAXED);

    if (k >= njobs) {
      return;
    }
    __atomic_store_n(&state[k], 1, __ATOMIC_RELAXED);
    jobs_one(k, make, done, ud, &shout[k]);
    __atomic_store_n(&state[k], 2, __ATOMIC_RELEASE);
  }
}

void sim_jobs_run(size_t njobs, unsigned nworkers, sim_jobs_make make,
                  sim_jobs_done done, void *ud, sim_job_out *out) {
  size_t k, size, started = 0;
  pid_t pids[SIM_JOBS_MAX_WORKERS];
  unsigned w;
  void *mem;
  jobs_shared *sh;
  unsigned char *state;
  sim_job_out *shout;

  if (nworkers > njobs) {
    nworkers = (unsigned)njobs;
  }
  if (nworkers > SIM_JOBS_MAX_WORKERS) {
    nworkers = SIM_JOBS_MAX_WORKERS;
  }
  size = sizeof(jobs_shared) + njobs * sizeof(sim_job_out) + njobs;
  mem = nworkers > 1 ? mmap(NULL, size, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                     : MAP_FAILED;
  if (mem == MAP_FAILED) {
    for (k = 0; k < njobs; ++k) {
      jobs_one(k, make, done, ud, &out[k]);
    }
    return;
  }
  sh = mem;
  shout = (sim_job_out *)(sh + 1);
  state = (unsigned char *)(shout + njobs);
  memset(mem, 0, size);
  fflush(NULL);
  for (w = 0; w < nworkers; ++w) {
    pid_t pid = fork();

    if (pid == 0) {
      jobs_worker(sh, state, shout, njobs, make, done, ud);
      _exit(0);
    }
    if (pid > 0) {
      pids[started++] = pid;
    }
  }
  if (started == 0) {
    /* No worker could start: the jobs run here. */
    jobs_worker(sh, state, shout, njobs, make, done, ud);
  }
  for (k = 0; k < started; ++k) {
    while (waitpid(pids[k], NULL, 0) < 0 && errno == EINTR) {
    }
  }
  for (k = 0; k < njobs; ++k) {
    if (__atomic_load_n(&state[k], __ATOMIC_ACQUIRE) == 2) {
      out[k] = shout[k];
    } else {
      memset(&out[k], 0, sizeof(out[k]));
      out[k].rv = SIM_JOBS_LOST;
    }
  }
  munmap(mem, size);
}
