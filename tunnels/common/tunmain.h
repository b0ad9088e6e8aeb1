/*
 * tunmain.h: what the two tunnel client programs share (prefix
 * tun_main_): dnstt/client_main.c (tun-dnstt-client) and
 * masterdns/client_main.c (tun-md-client).
 *
 *   tun_main_parse        the command line: the options both take
 *                         (--resolver, --domain, the transfer and pool
 *                         options), the program's own through a callback
 *   tun_main_xfer_targets the transfer's targets from those options
 *   tun_main_xfer_files   its --in and --out files (tunapp.h)
 *   tun_main_xfer_ok      whether every byte arrived intact
 *   tun_main_pool_start   pool mode: start the in-process pool (tunpool.h)
 *   tun_main_pool_ready   the report of its start-up check
 *   tun_main_pool_stop    stop it at the end of the run
 *   tun_main_drv_rand     the driver's rand callback
 *   tun_main_tick_start   start the driver's tick timer
 *   tun_main_tick, tun_main_answer  feed the driver a tick or an answer
 *   tun_main_run          run the loop, free, give the exit status
 *
 * Messages go to stderr, prefixed with the program's name. Everything
 * runs on the loop's thread. Not part of the sans-I/O core.
 */
#ifndef TUN_MAIN_H
#define TUN_MAIN_H

#include "tunapp.h"
#include "tundrv.h"
#include "tunpool.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

/* TUN_MAIN_RUN is tun_main_parse's "go on" (not an exit status). */
#define TUN_MAIN_RUN (-1)

/* tun_main_opts are the options both clients take. */
typedef struct tun_main_opts {
  /* prog is the program's name, for messages. */
  const char *prog;
  /* domain, in_path, out_path and pool_config are the values of
     --domain, --in, --out and --pool-config, or NULL (borrowed from
     argv). */
  const char *domain, *in_path, *out_path, *pool_config;
  /* resolvers holds the |nresolvers| values of --resolver (-r); the
     array is owned (tun_main_opts_free), the strings are argv's. */
  const char **resolvers;
  size_t nresolvers;
  /* up, down and seconds are --upload-bytes, --download-bytes and
     --seconds; have_down is 1 when --download-bytes was given. */
  uint64_t up, down;
  double seconds;
  int have_down;
  /* check_bytes is --pool-check-bytes (keeps the caller's default when
     not given); have_check is 1 when it was given. */
  uint64_t check_bytes;
  int have_check;
  /* pool_mode is 1 with --pool or --pool-config; pool_verbose with
     --pool-verbose; pool_udp with --pool-udp (queries go to the pool's
     loopback address instead of in process). */
  int pool_mode, pool_verbose, pool_udp;
} tun_main_opts;

/* tun_main_opt_fn takes a program's own option |a| with its value |v|:
   it returns 1 when it knows |a| (setting |*pbad| to 1 for a bad value),
   0 when it does not. */
typedef int (*tun_main_opt_fn)(const char *a, const char *v, int *pbad,
                               void *user_data);

/* tun_main_opts_init clears |o| for the program |prog| (check_bytes 0). */
void tun_main_opts_init(tun_main_opts *o, const char *prog);

/* tun_main_parse reads |argv| into |o|: --help (-h) calls |usage|,
   --measure is taken and ignored, any other option takes a value, and
   those |o| does not know go to |opt| (with |user_data|). It stops at
   the first error, printing "unknown option or missing value", "unknown
   option" or "bad value". Returns TUN_MAIN_RUN to go on, else the exit
   status: 0 after --help, 1 when out of memory, 2 for a usage error; on
   those |o| has nothing left to free. */
int tun_main_parse(tun_main_opts *o, int argc, char **argv, void (*usage)(void),
                   tun_main_opt_fn opt, void *user_data);

/* tun_main_opts_free frees |o|'s resolver array (again: no-op). */
void tun_main_opts_free(tun_main_opts *o);

/* tun_main_xfer_targets gives the transfer's targets from |o|: the
   download (unbounded when only --seconds is given), the upload and the
   seconds. */
void tun_main_xfer_targets(const tun_main_opts *o, uint64_t *pdown,
                           uint64_t *pup, double *pseconds);

/* tun_main_xfer_files opens --in and --out into |f| and hooks them to
   |x|. Returns 0, or 2 when a file cannot be opened (printed). */
int tun_main_xfer_files(const tun_main_opts *o, tun_xfer *x, tun_app_files *f);

/* tun_main_xfer_ok returns 1 when |x| downloaded intact at least what
   --download-bytes asked and finished its upload, else 0. */
int tun_main_xfer_ok(const tun_main_opts *o, const tun_xfer *x);

/* tun_main_pool_start starts the in-process pool of |kind| over |o|'s
   resolvers and --pool-config on |loop|, with the start-up check of
   |check_bytes| under |domain|, and stores it in |*ppool|; |ready| is
   called with |user_data| (tunpool.h). Unless --pool-udp, |answer| takes
   the answers of queries handed in by tun_pool_query. SIGPIPE is ignored from
   then on (the pool may write to TCP upstreams; respool_net.h). Returns 0, or
   the exit status (printed): 2 for a config or argument error, else 1. */
int tun_main_pool_start(const tun_main_opts *o, rp_kind kind,
                        const rp_dns_name *domain, uint64_t check_bytes,
                        uv_loop_t *loop, tun_pool_ready_cb ready,
                        tun_pool_answer_cb answer, void *user_data,
                        tun_pool **ppool);

/* tun_main_pool_ready reports the start-up check of |tp|: with |ok| it
   stores the pool's address in |addr| and as text in |name| (|namelen|
   bytes) and prints where the pool listens; else it prints that no
   resolver passed and stops |tp|. Returns |ok|. */
int tun_main_pool_ready(const char *prog, tun_pool *tp, int ok,
                        struct sockaddr_storage *addr, char *name,
                        size_t namelen);

/* tun_main_pool_stop stops |*ppool| when not NULL, printing when its
   scores were not saved, and sets it to NULL. */
void tun_main_pool_stop(const char *prog, tun_pool **ppool);

/* tun_main_drv_rand is the driver's rand callback (tun_drv_callbacks):
   tun_app_random64; |user_data| is not used. */
uint64_t tun_main_drv_rand(void *user_data);

/* tun_main_tick_start starts |tick| on |loop| to call |cb| (with
   |data| as the handle's data) every tick interval of |drv|. */
void tun_main_tick_start(uv_loop_t *loop, uv_timer_t *tick, const tun_drv *drv,
                         uv_timer_cb cb, void *data);

/* tun_main_tick ticks |drv| at the current time, stored in |*pnow|.
   Returns tun_drv_finished. */
int tun_main_tick(tun_drv *drv, rp_tstamp *pnow);

/* tun_main_answer hands |drv| the answer |data| of |len| bytes on
   channel |chan| from resolver |res| at the current time, stored in
   |*pnow|. Returns tun_drv_finished. */
int tun_main_answer(tun_drv *drv, uint32_t chan, size_t res,
                    const uint8_t *data, size_t len, rp_tstamp *pnow);

/* tun_main_run runs |loop| until nothing is left on it, closes it, and
   frees |o|, |files| and |*pdrv| (which may be NULL; set to NULL). The
   exit code and the driver are read after the run, through |pexit_code|
   and |pdrv|: the callbacks may set them (pool mode creates the driver
   once the pool is ready). Returns |*pexit_code| when it is not 0, else
   0 when the driver passed its MTU test (MD) and its transfer arrived
   intact (tun_main_xfer_ok), else 1. */
int tun_main_run(uv_loop_t *loop, const int *pexit_code, tun_main_opts *o,
                 tun_app_files *files, tun_drv **pdrv);

#endif /* TUN_MAIN_H */
