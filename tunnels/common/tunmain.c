/*
 * tunmain.c: what the two tunnel client programs share (see tunmain.h).
 */
#include "tunmain.h"

#include "dns.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tun_main_opts_init(tun_main_opts *o, const char *prog) {
  memset(o, 0, sizeof(*o));
  o->prog = prog;
}

void tun_main_opts_free(tun_main_opts *o) {
  free(o->resolvers);
  o->resolvers = NULL;
  o->nresolvers = 0;
}

/* main_common_opt takes option |a| with value |v| when both clients know
   it. Returns 1 when it did (|*pbad| set for a bad value), else 0. */
static int main_common_opt(tun_main_opts *o, const char *a, const char *v,
                           int *pbad) {
  if (strcmp(a, "--resolver") == 0 || strcmp(a, "-r") == 0) {
    o->resolvers[o->nresolvers++] = v;
  } else if (strcmp(a, "--pool-config") == 0) {
    o->pool_config = v;
    o->pool_mode = 1;
  } else if (strcmp(a, "--pool-check-bytes") == 0) {
    *pbad = tun_app_parse_size(v, &o->check_bytes) ||
            o->check_bytes > RP_DNS_EDNS_UDP_SIZE;
    o->have_check = 1;
  } else if (strcmp(a, "--domain") == 0) {
    o->domain = v;
  } else if (strcmp(a, "--in") == 0) {
    o->in_path = v;
  } else if (strcmp(a, "--out") == 0) {
    o->out_path = v;
  } else if (strcmp(a, "--upload-bytes") == 0) {
    *pbad = tun_app_parse_size(v, &o->up);
  } else if (strcmp(a, "--download-bytes") == 0) {
    *pbad = tun_app_parse_size(v, &o->down);
    o->have_down = 1;
  } else if (strcmp(a, "--seconds") == 0) {
    o->seconds = atof(v);
    *pbad = o->seconds <= 0;
  } else {
    return 0;
  }
  return 1;
}

int tun_main_parse(tun_main_opts *o, int argc, char **argv, void (*usage)(void),
                   tun_main_opt_fn opt, void *user_data) {
  int i;

  o->resolvers = calloc((size_t)argc + 1, sizeof(*o->resolvers));
  if (o->resolvers == NULL) {
    return 1;
  }
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;

    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage();
      tun_main_opts_free(o);
      return 0;
    }
    if (strcmp(a, "--measure") == 0) {
      continue;
    }
    if (strcmp(a, "--pool") == 0) {
      o->pool_mode = 1;
      continue;
    }
    if (strcmp(a, "--pool-verbose") == 0) {
      o->pool_verbose = 1;
      continue;
    }
    if (strcmp(a, "--pool-udp") == 0) {
      o->pool_udp = 1;
      o->pool_mode = 1;
      continue;
    }
    if (v == NULL) {
      fprintf(stderr, "%s: unknown option or missing value: %s (see --help)\n",
              o->prog, a);
      tun_main_opts_free(o);
      return 2;
    }
    ++i;
    if (!main_common_opt(o, a, v, &bad) && !opt(a, v, &bad, user_data)) {
      fprintf(stderr, "%s: unknown option %s (see --help)\n", o->prog, a);
      tun_main_opts_free(o);
      return 2;
    }
    if (bad) {
      fprintf(stderr, "%s: bad value %s for %s\n", o->prog, v, a);
      tun_main_opts_free(o);
      return 2;
    }
  }
  return TUN_MAIN_RUN;
}

void tun_main_xfer_targets(const tun_main_opts *o, uint64_t *pdown,
                           uint64_t *pup, double *pseconds) {
  *pdown = o->seconds > 0 && !o->have_down ? UINT64_MAX : o->down;
  *pup = o->up;
  *pseconds = o->seconds;
}

int tun_main_xfer_files(const tun_main_opts *o, tun_xfer *x, tun_app_files *f) {
  if (tun_app_xfer_open_files(x, f, o->in_path, o->out_path) != 0) {
    fprintf(stderr, "%s: cannot open --in or --out\n", o->prog);
    return 2;
  }
  return 0;
}

int tun_main_xfer_ok(const tun_main_opts *o, const tun_xfer *x) {
  return x->down_ok && x->bytes_down >= (o->have_down ? o->down : 0) &&
         x->up_done != RP_TSTAMP_UNSET;
}

int tun_main_pool_start(const tun_main_opts *o, rp_kind kind,
                        const rp_dns_name *domain, uint64_t check_bytes,
                        uv_loop_t *loop, tun_pool_ready_cb ready,
                        tun_pool_answer_cb answer, void *user_data,
                        tun_pool **ppool) {
  tun_pool_options po = {.kind = kind,
                         .config_file = o->pool_config,
                         .resolvers = o->resolvers,
                         .nresolvers = o->nresolvers,
                         .domain = domain,
                         .check_bytes = (uint16_t)check_bytes,
                         .log_level =
                             o->pool_verbose ? RP_LOG_INFO : RP_LOG_WARN,
                         .ready = ready,
                         .answer = o->pool_udp ? NULL : answer,
                         .user_data = user_data};
  char err[RP_CONFIG_ERRLEN];
  int rv;

  /* The pool may write to TCP upstreams: a closed one must not kill the
     process (respool_net.h). */
  signal(SIGPIPE, SIG_IGN);
  rv = tun_pool_start(ppool, loop, &po, err, sizeof(err));
  if (rv == 0) {
    return 0;
  }
  fprintf(stderr, "%s: pool: %s\n", o->prog,
          err[0] != '\0' ? err : rp_strerror(rv));
  return rv == RP_ERR_CONFIG || rv == RP_ERR_INVALID_ARGUMENT ? 2 : 1;
}

int tun_main_pool_ready(const char *prog, tun_pool *tp, int ok,
                        struct sockaddr_storage *addr, char *name,
                        size_t namelen) {
  if (!ok) {
    fprintf(stderr,
            "%s: no pool resolver passed the start-up check (see "
            "--pool-check-bytes)\n",
            prog);
    tun_pool_stop(tp);
    return 0;
  }
  tun_pool_get_address(tp, addr);
  tun_app_format_addr((const struct sockaddr *)addr, name, namelen);
  fprintf(stderr, "%s: pool listening on %s\n", prog, name);
  return 1;
}

void tun_main_pool_stop(const char *prog, tun_pool **ppool) {
  if (*ppool != NULL && tun_pool_stop(*ppool) != 0) {
    fprintf(stderr, "%s: the pool's scores were not saved\n", prog);
  }
  *ppool = NULL;
}

uint64_t tun_main_drv_rand(void *user_data) {
  (void)user_data;
  return tun_app_random64();
}

void tun_main_tick_start(uv_loop_t *loop, uv_timer_t *tick, const tun_drv *drv,
                         uv_timer_cb cb, void *data) {
  uint64_t ms = tun_drv_tick_interval(drv) / RP_MILLISECONDS;

  uv_timer_init(loop, tick);
  tick->data = data;
  uv_timer_start(tick, cb, ms, ms);
}

int tun_main_tick(tun_drv *drv, rp_tstamp *pnow) {
  *pnow = uv_hrtime();
  tun_drv_tick(drv, *pnow);
  return tun_drv_finished(drv);
}

int tun_main_answer(tun_drv *drv, uint32_t chan, size_t res,
                    const uint8_t *data, size_t len, rp_tstamp *pnow) {
  *pnow = uv_hrtime();
  tun_drv_on_answer(drv, chan, res, data, len, *pnow);
  return tun_drv_finished(drv);
}

int tun_main_run(uv_loop_t *loop, const int *pexit_code, tun_main_opts *o,
                 tun_app_files *files, tun_drv **pdrv) {
  int rv;

  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
  if (*pexit_code != 0) {
    rv = *pexit_code;
  } else {
    rv = *pdrv != NULL && !tun_drv_failed(*pdrv) &&
                 tun_main_xfer_ok(o, tun_drv_xfer(*pdrv))
             ? 0
             : 1;
  }
  tun_main_opts_free(o);
  tun_app_xfer_close_files(files);
  tun_drv_del(*pdrv);
  *pdrv = NULL;
  return rv;
}
