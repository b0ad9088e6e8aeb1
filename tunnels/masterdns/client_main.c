/*
 * client_main.c: tun-md-client, the minimal MasterDNS-style tunnel client.
 *
 * Start: an MTU test per resolver (a probe asks the server for an answer
 * of exactly N test bytes: the ceiling, 500 by default; after two failed
 * tries the floor, MD_MTU_FLOOR, to tell a dead resolver; if the floor
 * passes, 3/4 of the size after each two failed tries); the session's
 * download MTU is the smallest over the resolvers that pass, as
 * MasterDnsVPN does. Resolvers that fail are disabled.
 *
 * Run: --inflight slots (default 8) each keep one query out. A query
 * carries at most one upload packet and fetches one download packet; the
 * balancer (balancer.h) picks its resolver and, with --duplication N
 * (default 2), N - 1 other resolvers for copies of the same query. A slot
 * moves on at the first NOERROR answer; the answers to the copies are
 * taken too (the server answered each with its next packet). A send times
 * out after srtt + max(4 rttvar, srtt / 4) of its resolver (50 ms .. 1 s). An
 * error answer (REFUSED, SERVFAIL) makes the slot rest about one timeout and
 * resends its upload packet at once (no backoff: the loss is known).
 * Disabled resolvers are rechecked with a probe every 5 s.
 *
 * Pool mode (--pool): the client starts the pool library on its own loop
 * (tunpool.h, kind masterdns) over the --resolver list and the
 * --pool-config file, waits until a resolver passed the start-up check
 * and then sees one resolver, the pool, to which it hands its queries in
 * process (tun_pool_query; --pool-udp: to the pool's 127.0.0.1 address
 * over a socket): the MTU test,
 * the slots and the timeouts run against it as against any resolver, the
 * balancer has nothing to choose and the client sends no copies of its
 * own (duplication 1): the pool's duplicate setting applies.
 */
#include "tundrv.h"
#include "tunapp.h"
#include "tunpool.h"
#include "tunmain.h"

#include <uv.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CLIENT_NAME "tun-md-client"
/* MD_DEFAULT_INFLIGHT is the default number of queries out at once (see
   docs/tunnels.md: the real client's throughput over a 10 ms resolver
   matches about this many). */
#define MD_DEFAULT_INFLIGHT 8
/* MD_DEFAULT_DUP is MasterDnsVPN's default packet_duplication here. */
#define MD_DEFAULT_DUP 2
/* MD_MTU_CEILING is the default ceiling of the MTU test, bytes. */
#define MD_MTU_CEILING 500
/* MD_RECV_BUF is the receive buffer, bytes. */
#define MD_RECV_BUF 65536
/* MD_EXTRA_LEN is the room for the JSON fields the client adds (the
   pool's stats included). */
#define MD_EXTRA_LEN 65536

typedef struct md_app md_app;

/* md_res is one resolver's address and socket (the driver's channel of
   the same index). */
typedef struct md_res {
  md_app *app;
  size_t idx;
  struct sockaddr_storage addr;
  char name[64];
  uv_udp_t sock;
} md_res;

struct md_app {
  uv_loop_t *loop;
  uv_timer_t tick;
  md_res res[TUN_DRV_MAX_RESOLVERS];
  size_t nres;
  tun_drv *drv;
  tun_drv_settings ds;
  tun_app_files files;
  const char *balance_name;
  int finished;
  /* pool is the in-process pool (pool mode), or NULL; direct is 1 when
     queries go to it in process (tun_pool_query) rather than to its
     address. */
  tun_pool *pool;
  int direct;
  /* exit_code is set to 1 when the pool fails. */
  int exit_code;
  uint8_t recv_buf[MD_RECV_BUF];
};

static void md_usage(void) {
  printf(
      "usage: " CLIENT_NAME
      " --resolver HOST:PORT [--resolver ...] --domain D\n"
      "         [--upload-bytes N] [--download-bytes N | --seconds S]\n"
      "         [--measure] [--balance rr|loss|latency] [--duplication N]\n"
      "         [--inflight N] [--mtu-ceiling N]\n"
      "       " CLIENT_NAME " --pool -r R1 [-r R2 ...] [--pool-config FILE]\n"
      "         --domain D ...\n"
      "A minimal MasterDNS-style DNS tunnel client (measurement mode).\n"
      "  -r, --resolver HOST:PORT  a resolver (repeatable; its own\n"
      "                        balancer); with --pool a pool resolver (any\n"
      "                        URL respool takes)\n"
      "  --pool                pool mode: start the respool pool library\n"
      "                        in-process (kind masterdns) over the\n"
      "                        resolvers; the client sees one resolver (the\n"
      "                        pool) and sends no copies (duplication 1):\n"
      "                        the pool's duplicate setting applies; the\n"
      "                        queries go to the pool in process\n"
      "  --pool-udp            pool mode, the queries sent to the pool's\n"
      "                        127.0.0.1 address over a socket\n"
      "  --pool-config FILE    smart_pool JSON for the pool (its resolvers\n"
      "                        are added; implies --pool)\n"
      "  --pool-check-bytes N  start-up check of each pool resolver: a\n"
      "                        tunnel probe whose answer must carry N test\n"
      "                        bytes (default: the MTU ceiling; 0 = none)\n"
      "  --pool-verbose        print the pool's info log on stderr\n"
      "  --domain D            the tunnel domain\n"
      "  --upload-bytes N      upload N generated bytes (K/M/G suffixes)\n"
      "  --download-bytes N    download N bytes and check the pattern\n"
      "  --seconds S           download for S seconds instead\n"
      "  --balance B           rr (round robin, default), loss (least\n"
      "                        loss) or latency (lowest latency)\n"
      "  --duplication N       sends per query, copies included, each to a\n"
      "                        different resolver (1..10, default 2)\n"
      "  --inflight N          queries out at once (default 8)\n"
      "  --mtu-ceiling N       largest download MTU tested (default 500)\n"
      "  --in FILE             upload the bytes of FILE instead of a pattern\n"
      "  --out FILE            write the downloaded bytes to FILE (with a\n"
      "                        server's --serve-file; no pattern check)\n"
      "Exit status 0 when every byte arrived intact, 1 otherwise.\n");
}

static int md_send(uint32_t chan, size_t res, const uint8_t *data, size_t len,
                   uint32_t flags, void *user_data) {
  md_app *app = user_data;
  md_res *r = &app->res[res];
  uv_buf_t ub = uv_buf_init((char *)(uintptr_t)data, (unsigned)len);

  (void)chan;
  (void)flags;
  if (app->direct) {
    return app->pool == NULL ||
           tun_pool_query(app->pool, data, len, res, uv_hrtime()) != 0;
  }
  return uv_udp_try_send(&r->sock, &ub, 1, (const struct sockaddr *)&r->addr) <
         0;
}

static void md_finish(md_app *app, rp_tstamp now) {
  static char extra[MD_EXTRA_LEN];
  const tun_bal *bal = tun_drv_md_bal(app->drv);
  tun_drv_stats st;
  size_t i, pos;

  if (app->finished) {
    return;
  }
  app->finished = 1;
  tun_drv_get_stats(app->drv, &st);
  if (tun_drv_failed(app->drv)) {
    fprintf(stderr, CLIENT_NAME ": no resolver passed the MTU test\n");
  }
  if (tun_drv_cli(app->drv) != NULL) {
    pos = (size_t)snprintf(
        extra, sizeof(extra),
        ",\"balance\":\"%s\",\"duplication\":%zu,\"inflight\":%zu"
        ",\"mtu\":%u,\"copies\":%" PRIu64 ",\"unmatched\":%" PRIu64
        ",\"send_errors\":%" PRIu64 ",\"disabled_events\":%" PRIu64
        ",\"resolvers\":[",
        app->balance_name, app->ds.dup, app->ds.nslots,
        (unsigned)tun_drv_md_mtu(app->drv), st.copies, st.unmatched,
        st.send_errors, bal->disabled_events);
    for (i = 0; i < app->nres && pos < sizeof(extra); ++i) {
      const tun_bal_res *b = &bal->res[i];

      pos += (size_t)snprintf(
          extra + pos, sizeof(extra) - pos,
          "%s{\"addr\":\"%s\",\"mtu\":%u,\"active\":%s,\"sent\":%" PRIu64
          ",\"answered\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"timeouts\":%" PRIu64
          ",\"loss_score\":%" PRIu64 ",\"latency_us\":%" PRIu64 "}",
          i > 0 ? "," : "", app->res[i].name,
          (unsigned)tun_drv_md_res_mtu(app->drv, i),
          b->active ? "true" : "false", b->sent, b->answered, b->lost,
          b->timeouts, tun_bal_loss_score(bal, i),
          tun_bal_latency_score_us(bal, i));
    }
    if (pos < sizeof(extra)) {
      pos += (size_t)snprintf(extra + pos, sizeof(extra) - pos, "]");
    }
    if (app->pool != NULL && pos < sizeof(extra)) {
      pos += tun_pool_format_stats(app->pool, extra + pos, sizeof(extra) - pos);
      tun_pool_format_timeline(app->pool, extra + pos, sizeof(extra) - pos);
    }
    tun_app_xfer_print(tun_drv_xfer(app->drv), tun_drv_cli(app->drv),
                       "masterdns", app->pool != NULL ? "pool" : "own-balancer",
                       st.queries, st.answers, st.timeouts, st.rejected, now,
                       extra);
  }
  for (i = 0; i < app->nres; ++i) {
    uv_udp_recv_stop(&app->res[i].sock);
    uv_close((uv_handle_t *)&app->res[i].sock, NULL);
  }
  uv_close((uv_handle_t *)&app->tick, NULL);
  tun_main_pool_stop(CLIENT_NAME, &app->pool);
}

static void md_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  md_res *r = h->data;

  (void)suggested;
  *buf = uv_buf_init((char *)r->app->recv_buf, MD_RECV_BUF);
}

static void md_on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                       const struct sockaddr *addr, unsigned flags) {
  md_res *r = h->data;
  md_app *app = r->app;
  rp_tstamp now;

  (void)addr;
  (void)flags;
  if (nread <= 0 || app->finished) {
    return;
  }
  if (tun_main_answer(app->drv, (uint32_t)r->idx, r->idx,
                      (const uint8_t *)buf->base, (size_t)nread, &now)) {
    md_finish(app, now);
  }
}

/* md_pool_answer takes an in-process answer (tun_pool_answer_cb): the
   pool is resolver 0. */
static void md_pool_answer(tun_pool *tp, uint64_t token, const uint8_t *data,
                           size_t len, void *user_data) {
  md_app *app = user_data;
  rp_tstamp now;

  (void)tp;
  if (app->finished || app->drv == NULL || token >= app->nres) {
    return;
  }
  if (tun_main_answer(app->drv, (uint32_t)token, (size_t)token, data, len,
                      &now)) {
    md_finish(app, now);
  }
}

static void md_on_tick(uv_timer_t *t) {
  md_app *app = t->data;
  rp_tstamp now;

  if (tun_main_tick(app->drv, &now)) {
    md_finish(app, now);
  }
}

/* md_begin creates the driver, opens one socket per resolver, starts
   the MTU test and the tick timer. Returns 0 or the exit status
   (printed). */
static int md_begin(md_app *app, const tun_main_opts *o) {
  tun_drv_callbacks cb = {.send = md_send, .rand = tun_main_drv_rand};
  rp_tstamp now = uv_hrtime();
  size_t k;
  int rv;

  app->ds.nres = app->nres;
  rv = tun_drv_new(&app->drv, &app->ds, &cb, NULL, app);
  if (rv != 0) {
    fprintf(stderr, CLIENT_NAME ": %s\n", rp_strerror(rv));
    return 2;
  }
  if (tun_main_xfer_files(o, tun_drv_xfer(app->drv), &app->files) != 0) {
    return 2;
  }
  for (k = 0; k < app->nres; ++k) {
    md_res *r = &app->res[k];
    struct sockaddr_storage any;

    r->app = app;
    r->idx = k;
    uv_udp_init(app->loop, &r->sock);
    r->sock.data = r;
    memset(&any, 0, sizeof(any));
    any.ss_family = r->addr.ss_family;
    rv = uv_udp_bind(&r->sock, (const struct sockaddr *)&any, 0);
    if (rv == 0) {
      rv = uv_udp_recv_start(&r->sock, md_alloc, md_on_recv);
    }
    if (rv != 0) {
      size_t j;

      fprintf(stderr, CLIENT_NAME ": socket: %s\n", uv_strerror(rv));
      for (j = 0; j <= k; ++j) {
        uv_close((uv_handle_t *)&app->res[j].sock, NULL);
      }
      return 1;
    }
  }
  tun_main_tick_start(app->loop, &app->tick, app->drv, md_on_tick, app);
  tun_drv_start(app->drv, now);
  return 0;
}

/* md_pool_opts carries the options to md_pool_ready (one client per
   process). */
static const tun_main_opts *md_pool_opts;

/* md_pool_ready runs once the pool's start-up check has a result: the
   pool becomes the client's one resolver. */
static void md_pool_ready(tun_pool *tp, int ok, void *user_data) {
  md_app *app = user_data;
  md_res *r = &app->res[0];

  if (!tun_main_pool_ready(CLIENT_NAME, tp, ok, &r->addr, r->name,
                           sizeof(r->name))) {
    app->exit_code = 1;
    app->finished = 1;
    app->pool = NULL;
    return;
  }
  app->nres = 1;
  app->exit_code = md_begin(app, md_pool_opts);
  if (app->exit_code != 0) {
    app->finished = 1;
    tun_pool_stop(tp);
    app->pool = NULL;
  }
}

/* md_opts holds the options of tun-md-client's own. */
typedef struct md_opts {
  const char *balance;
  tun_bal_strategy strategy;
  uint64_t dup, inflight, ceiling;
} md_opts;

/* md_opt takes an option of tun-md-client's own (tun_main_opt_fn). */
static int md_opt(const char *a, const char *v, int *pbad, void *user_data) {
  md_opts *mo = user_data;

  if (strcmp(a, "--balance") == 0) {
    mo->balance = v;
    if (strcmp(v, "rr") == 0 || strcmp(v, "roundrobin") == 0) {
      mo->strategy = TUN_BAL_ROUNDROBIN;
    } else if (strcmp(v, "loss") == 0 || strcmp(v, "least_loss") == 0) {
      mo->strategy = TUN_BAL_LEAST_LOSS;
    } else if (strcmp(v, "latency") == 0 || strcmp(v, "lowest_latency") == 0) {
      mo->strategy = TUN_BAL_LOWEST_LATENCY;
    } else {
      *pbad = 1;
    }
  } else if (strcmp(a, "--duplication") == 0) {
    *pbad = tun_app_parse_size(v, &mo->dup) || mo->dup == 0 ||
            mo->dup > TUN_DRV_MAX_DUP;
  } else if (strcmp(a, "--inflight") == 0) {
    *pbad = tun_app_parse_size(v, &mo->inflight) || mo->inflight == 0 ||
            mo->inflight > TUN_DRV_MAX_SLOTS;
  } else if (strcmp(a, "--mtu-ceiling") == 0) {
    *pbad = tun_app_parse_size(v, &mo->ceiling) ||
            mo->ceiling < TUN_DRV_MTU_FLOOR ||
            mo->ceiling > RP_DNS_EDNS_UDP_SIZE;
  } else {
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  static md_app app;
  tun_main_opts o;
  md_opts mo = {.balance = "rr",
                .strategy = TUN_BAL_ROUNDROBIN,
                .dup = MD_DEFAULT_DUP,
                .inflight = MD_DEFAULT_INFLIGHT,
                .ceiling = MD_MTU_CEILING};
  tun_drv_settings *ds = &app.ds;
  size_t k;
  int rv;

  tun_main_opts_init(&o, CLIENT_NAME);
  rv = tun_main_parse(&o, argc, argv, md_usage, md_opt, &mo);
  if (rv != TUN_MAIN_RUN) {
    return rv;
  }
  rv = 0;
  tun_drv_settings_default(ds, TUN_DRV_MD);
  if (o.domain == NULL || (o.nresolvers == 0 && o.pool_config == NULL) ||
      (!o.pool_mode && o.nresolvers == 0)) {
    fprintf(stderr, CLIENT_NAME ": --resolver (or --pool-config) and "
                                "--domain are required\n");
    rv = 2;
  }
  if (rv == 0 && !o.pool_mode && o.nresolvers > TUN_DRV_MAX_RESOLVERS) {
    fprintf(stderr, CLIENT_NAME ": at most %d resolvers\n",
            TUN_DRV_MAX_RESOLVERS);
    rv = 2;
  }
  for (k = 0; rv == 0 && !o.pool_mode && k < o.nresolvers; ++k) {
    if (tun_app_parse_addr(o.resolvers[k], &app.res[k].addr) != 0) {
      fprintf(stderr, CLIENT_NAME ": bad value %s for --resolver\n",
              o.resolvers[k]);
      rv = 2;
    }
    snprintf(app.res[k].name, sizeof(app.res[k].name), "%s", o.resolvers[k]);
    app.nres = k + 1;
  }
  if (rv == 0 && rp_dns_name_from_text(&ds->domain, o.domain) != 0) {
    fprintf(stderr, CLIENT_NAME ": bad --domain %s\n", o.domain);
    rv = 2;
  }
  if (rv != 0) {
    tun_main_opts_free(&o);
    return rv;
  }
  ds->strategy = o.pool_mode ? TUN_BAL_ROUNDROBIN : mo.strategy;
  app.balance_name = o.pool_mode ? "pool" : mo.balance;
  /* Through the pool there are no copies of the client's own. */
  ds->dup = o.pool_mode ? 1 : (size_t)mo.dup;
  ds->nslots = (size_t)mo.inflight;
  ds->mtu_ceiling = (uint16_t)mo.ceiling;
  tun_main_xfer_targets(&o, &ds->down_bytes, &ds->up_bytes, &ds->seconds);
  app.loop = uv_default_loop();
  if (o.pool_mode) {
    md_pool_opts = &o;
    app.direct = !o.pool_udp;
    app.exit_code =
        tun_main_pool_start(&o, RP_KIND_MASTERDNS, &ds->domain,
                            o.have_check ? o.check_bytes : mo.ceiling, app.loop,
                            md_pool_ready, md_pool_answer, &app, &app.pool);
  } else {
    app.exit_code = md_begin(&app, &o);
  }
  return tun_main_run(app.loop, &app.exit_code, &o, &app.files, &app.drv);
}
