/*
 * client_main.c: tun-dnstt-client, the minimal DNSTT-style tunnel client.
 *
 * Workers keep queries in flight toward one resolver address. Direct mode
 * (default): 100 workers, each opening a fresh UDP socket for every query
 * (random source ports, as dnstt does toward real resolvers).
 * --udp-workers N (default 300): N workers each keeping one query out on
 * a long-lived socket. Pool mode (--pool): the client starts the pool
 * library on its own loop (tunpool.h) over the --resolver list and the
 * --pool-config file, waits until a resolver passed the start-up check,
 * then runs 300 workers (--udp-workers) that hand their queries to the
 * pool in process (tun_pool_query: no loopback hop, no socket of their
 * own); --pool-udp sends them to the pool's 127.0.0.1 address over
 * long-lived sockets instead, as a dnstt outbound with smart_pool does.
 *
 * A worker sends its next query as soon as an answer comes back. An answer
 * with an error rcode (REFUSED, SERVFAIL) carries nothing: like dnstt, the
 * worker then sends nothing for about a timeout (drawn from 0.5 to 1.5
 * timeouts, so that workers refused together do not return together),
 * and the upload segments of the refused query are resent at once. Every
 * NOERROR answer with a TXT record is taken, whatever its ID.
 *
 * --model original models the original dnstt-client instead (tunorig.h):
 * one
 * socket taking every answer, a query for each data packet or ack, a
 * poll permitted by each answer that carried data (16 at the start), an
 * idle poll timer from 500 ms doubling to 10 s, no timeout of its own,
 * and nothing at all for an error answer (no new poll, no resend before
 * the arq's own timer).
 *
 * Measurement mode (--measure, the only mode for now) moves generated
 * bytes and prints one JSON line (tunapp.h).
 */
#include "tundrv.h"
#include "tunapp.h"
#include "tunpool.h"
#include "tunmain.h"

#include <uv.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CLIENT_NAME "tun-dnstt-client"
/* CLIENT_DIRECT_WORKERS is dnstt-style direct mode's worker count. */
#define CLIENT_DIRECT_WORKERS 100
/* CLIENT_POOL_WORKERS is the default of --udp-workers. */
#define CLIENT_POOL_WORKERS 300
/* CLIENT_TIMEOUT_MS is how long a worker waits for an answer: past the
   server's 1 s hold plus a round trip. */
#define CLIENT_TIMEOUT_MS 1500
/* CLIENT_RECV_BUF is the receive buffer, bytes. */
#define CLIENT_RECV_BUF 65536
/* CLIENT_EXTRA_LEN is the room for the JSON fields the client adds
   (the pool's stats included). */
#define CLIENT_EXTRA_LEN 65536
/* CLIENT_CHECK_BYTES is the default test answer of the pool's start-up
   check: close to the 934-byte answers of the tunnel, so a resolver that
   cannot carry them (no EDNS 1232) stays out of the pool. */
#define CLIENT_CHECK_BYTES 900

typedef struct client_app client_app;

/* worker_sock is the socket of one worker (a channel of the driver). */
typedef struct worker_sock {
  uv_udp_t h;
  client_app *app;
  uint32_t chan;
} worker_sock;

struct client_app {
  uv_loop_t *loop;
  uv_timer_t tick;
  struct sockaddr_storage resolver;
  tun_drv *drv;
  tun_drv_settings ds;
  tun_app_files files;
  /* socks holds each worker's current socket, or NULL. */
  worker_sock **socks;
  int finished;
  /* pool is the in-process pool (pool mode), or NULL; direct is 1 when
     queries go to it in process (tun_pool_query, the worker's index as
     token) rather than to its address. */
  tun_pool *pool;
  int direct;
  /* exit_code is set to 1 when the pool fails. */
  int exit_code;
  uint8_t recv_buf[CLIENT_RECV_BUF];
};

static void client_usage(void) {
  printf(
      "usage: " CLIENT_NAME " --resolver HOST:PORT --domain DOMAIN\n"
      "         [--upload-bytes N] [--download-bytes N | --seconds S]\n"
      "         [--measure] [--workers N | --udp-workers N] [--timeout-ms MS]\n"
      "       " CLIENT_NAME " --pool -r R1 [-r R2 ...] [--pool-config FILE]\n"
      "         --domain DOMAIN [--udp-workers N] ...\n"
      "A minimal DNSTT-style DNS tunnel client (measurement mode).\n"
      "  -r, --resolver HOST:PORT  the resolver to send queries to; with\n"
      "                        --pool a pool resolver (repeatable, any URL\n"
      "                        respool takes)\n"
      "  --pool                pool mode: start the respool pool library\n"
      "                        in-process (kind dnstt) over the resolvers\n"
      "                        and hand it the queries of 300 workers\n"
      "                        (--udp-workers) in process\n"
      "  --pool-udp            pool mode, the workers sending to the pool's\n"
      "                        127.0.0.1 address on long-lived sockets\n"
      "  --pool-config FILE    smart_pool JSON for the pool (its resolvers\n"
      "                        are added; implies --pool)\n"
      "  --pool-check-bytes N  start-up check of each pool resolver: a\n"
      "                        tunnel probe whose answer must carry N test\n"
      "                        bytes (default 900; 0 = no check)\n"
      "  --pool-verbose        print the pool's info log on stderr\n"
      "  --domain DOMAIN       the tunnel domain\n"
      "  --upload-bytes N      upload N generated bytes (K/M/G suffixes)\n"
      "  --download-bytes N    download N bytes and check the pattern\n"
      "  --seconds S           download for S seconds instead\n"
      "  --measure             print one JSON line of results (default)\n"
      "  --workers N           direct mode: N workers, a fresh UDP socket\n"
      "                        per query (default 100)\n"
      "  --udp-workers N       pool mode: N workers on long-lived sockets\n"
      "                        (default 300 when given without --workers)\n"
      "  --timeout-ms MS       a worker's wait for an answer (default 1500)\n"
      "  --model M             workers (default) or original: send like the\n"
      "                        original dnstt-client (one socket, a poll per\n"
      "                        answer that carried data, 16 at the start,\n"
      "                        an idle poll timer 500 ms .. 10 s, no timeout,\n"
      "                        nothing for an error answer)\n"
      "  --in FILE             upload the bytes of FILE instead of a pattern\n"
      "  --out FILE            write the downloaded bytes to FILE (with a\n"
      "                        server's --serve-file; no pattern check)\n"
      "Exit status 0 when every byte arrived intact, 1 otherwise.\n");
}

static void client_sock_closed(uv_handle_t *h) { free(h->data); }

static void client_sock_close(worker_sock *ws) {
  uv_udp_recv_stop(&ws->h);
  ws->h.data = ws;
  uv_close((uv_handle_t *)&ws->h, client_sock_closed);
}

static void client_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  worker_sock *ws = (worker_sock *)(void *)h;

  (void)suggested;
  *buf = uv_buf_init((char *)ws->app->recv_buf, CLIENT_RECV_BUF);
}

static void client_on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                           const struct sockaddr *addr, unsigned flags);

/* client_sock_open gives worker |chan| a new socket. Returns it or NULL. */
static worker_sock *client_sock_open(client_app *app, uint32_t chan) {
  struct sockaddr_storage any;
  worker_sock *ws = malloc(sizeof(*ws));
  int rv;

  if (ws == NULL) {
    return NULL;
  }
  ws->app = app;
  ws->chan = chan;
  uv_udp_init(app->loop, &ws->h);
  memset(&any, 0, sizeof(any));
  any.ss_family = app->resolver.ss_family;
  rv = uv_udp_bind(&ws->h, (const struct sockaddr *)&any, 0);
  if (rv == 0) {
    rv = uv_udp_recv_start(&ws->h, client_alloc, client_on_recv);
  }
  if (rv != 0) {
    client_sock_close(ws);
    return NULL;
  }
  return ws;
}

/* client_send is the driver's send callback: a fresh send (or the
   worker's first) gets a new socket, the old one is closed. */
static int client_send(uint32_t chan, size_t res, const uint8_t *data,
                       size_t len, uint32_t flags, void *user_data) {
  client_app *app = user_data;
  uv_buf_t ub = uv_buf_init((char *)(uintptr_t)data, (unsigned)len);

  (void)res;
  if (app->direct) {
    return app->pool == NULL ||
           tun_pool_query(app->pool, data, len, chan, uv_hrtime()) != 0;
  }
  if (app->socks[chan] != NULL && (flags & TUN_DRV_SEND_FRESH)) {
    client_sock_close(app->socks[chan]);
    app->socks[chan] = NULL;
  }
  if (app->socks[chan] == NULL) {
    app->socks[chan] = client_sock_open(app, chan);
    if (app->socks[chan] == NULL) {
      return 1;
    }
  }
  return uv_udp_try_send(&app->socks[chan]->h, &ub, 1,
                         (const struct sockaddr *)&app->resolver) < 0;
}

static void client_finish(client_app *app, rp_tstamp now) {
  static char extra[CLIENT_EXTRA_LEN];
  const char *mode = app->ds.model == TUN_DRV_ORIGINAL ? "original"
                     : app->ds.fresh                   ? "direct"
                                                       : "udp-workers";
  tun_drv_stats st;
  size_t i, pos;

  if (app->finished) {
    return;
  }
  app->finished = 1;
  tun_drv_get_stats(app->drv, &st);
  pos = (size_t)snprintf(
      extra, sizeof(extra),
      ",\"workers\":%zu,\"fresh_sockets\":%s,\"send_errors\":%" PRIu64,
      app->ds.nworkers, app->ds.fresh ? "true" : "false", st.send_errors);
  if (app->pool != NULL) {
    mode = "pool";
    if (pos < sizeof(extra)) {
      pos += tun_pool_format_stats(app->pool, extra + pos, sizeof(extra) - pos);
      tun_pool_format_timeline(app->pool, extra + pos, sizeof(extra) - pos);
    }
  }
  tun_app_xfer_print(tun_drv_xfer(app->drv), tun_drv_cli(app->drv), "dnstt",
                     mode, st.queries, st.answers, st.timeouts, st.rejected,
                     now, extra);
  for (i = 0; i < app->ds.nworkers; ++i) {
    if (app->socks[i] != NULL) {
      client_sock_close(app->socks[i]);
      app->socks[i] = NULL;
    }
  }
  uv_close((uv_handle_t *)&app->tick, NULL);
  tun_main_pool_stop(CLIENT_NAME, &app->pool);
}

static void client_on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                           const struct sockaddr *addr, unsigned flags) {
  worker_sock *ws = (worker_sock *)(void *)h;
  client_app *app = ws->app;
  rp_tstamp now;

  (void)addr;
  (void)flags;
  if (nread <= 0 || app->finished || app->socks[ws->chan] != ws) {
    return;
  }
  if (tun_main_answer(app->drv, ws->chan, 0, (const uint8_t *)buf->base,
                      (size_t)nread, &now)) {
    client_finish(app, now);
  }
}

/* client_pool_answer takes an in-process answer for worker |token|
   (tun_pool_answer_cb). */
static void client_pool_answer(tun_pool *tp, uint64_t token,
                               const uint8_t *data, size_t len,
                               void *user_data) {
  client_app *app = user_data;
  rp_tstamp now;

  (void)tp;
  if (app->finished || token >= app->ds.nworkers) {
    return;
  }
  if (tun_main_answer(app->drv, (uint32_t)token, 0, data, len, &now)) {
    client_finish(app, now);
  }
}

static void client_on_tick(uv_timer_t *t) {
  client_app *app = t->data;
  rp_tstamp now;

  if (tun_main_tick(app->drv, &now)) {
    client_finish(app, now);
  }
}

/* client_start starts the tick timer and the driver. */
static void client_start(client_app *app) {
  rp_tstamp now = uv_hrtime();

  tun_main_tick_start(app->loop, &app->tick, app->drv, client_on_tick, app);
  tun_drv_start(app->drv, now);
  if (tun_drv_finished(app->drv)) {
    client_finish(app, now);
  }
}

/* client_pool_ready runs once the pool's start-up check has a result. */
static void client_pool_ready(tun_pool *tp, int ok, void *user_data) {
  client_app *app = user_data;
  char addr[TUN_APP_ADDR_LEN];

  if (!tun_main_pool_ready(CLIENT_NAME, tp, ok, &app->resolver, addr,
                           sizeof(addr))) {
    app->exit_code = 1;
    app->finished = 1;
    app->pool = NULL;
    return;
  }
  client_start(app);
}

/* client_opts holds the options of tun-dnstt-client's own. */
typedef struct client_opts {
  uint64_t workers, udp_workers, timeout_ms;
  int original;
} client_opts;

/* client_opt takes an option of tun-dnstt-client's own
   (tun_main_opt_fn). */
static int client_opt(const char *a, const char *v, int *pbad,
                      void *user_data) {
  client_opts *co = user_data;

  if (strcmp(a, "--workers") == 0) {
    *pbad = tun_app_parse_size(v, &co->workers) || co->workers == 0 ||
            co->workers > TUN_DRV_MAX_WORKERS;
  } else if (strcmp(a, "--udp-workers") == 0) {
    *pbad = tun_app_parse_size(v, &co->udp_workers) || co->udp_workers == 0 ||
            co->udp_workers > TUN_DRV_MAX_WORKERS;
  } else if (strcmp(a, "--timeout-ms") == 0) {
    *pbad = tun_app_parse_size(v, &co->timeout_ms) || co->timeout_ms == 0;
  } else if (strcmp(a, "--model") == 0) {
    co->original = strcmp(v, "original") == 0;
    *pbad = !co->original && strcmp(v, "workers") != 0;
  } else {
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  static client_app app;
  tun_main_opts o;
  client_opts co = {0};
  tun_drv_callbacks cb = {.send = client_send, .rand = tun_main_drv_rand};
  tun_drv_settings *ds = &app.ds;
  int rv;

  tun_main_opts_init(&o, CLIENT_NAME);
  o.check_bytes = CLIENT_CHECK_BYTES;
  rv = tun_main_parse(&o, argc, argv, client_usage, client_opt, &co);
  if (rv != TUN_MAIN_RUN) {
    return rv;
  }
  rv = 0;
  tun_drv_settings_default(ds,
                           co.original ? TUN_DRV_ORIGINAL : TUN_DRV_WORKERS);
  if (o.domain == NULL || (!o.pool_mode && o.nresolvers != 1) ||
      (o.pool_mode && o.nresolvers == 0 && o.pool_config == NULL)) {
    fprintf(stderr, CLIENT_NAME ": --domain and one --resolver (with --pool: "
                                "--resolver ... or --pool-config) are "
                                "required\n");
    rv = 2;
  } else if (!o.pool_mode &&
             tun_app_parse_addr(o.resolvers[0], &app.resolver) != 0) {
    fprintf(stderr, CLIENT_NAME ": bad --resolver %s\n", o.resolvers[0]);
    rv = 2;
  } else if (rp_dns_name_from_text(&ds->domain, o.domain) != 0) {
    fprintf(stderr, CLIENT_NAME ": bad --domain %s\n", o.domain);
    rv = 2;
  }
  if (rv != 0) {
    tun_main_opts_free(&o);
    return rv;
  }
  if (!co.original) {
    if (co.workers == 0 && (co.udp_workers != 0 || o.pool_mode)) {
      ds->nworkers =
          co.udp_workers != 0 ? (size_t)co.udp_workers : CLIENT_POOL_WORKERS;
      ds->fresh = 0;
    } else {
      ds->nworkers =
          co.workers != 0 ? (size_t)co.workers : CLIENT_DIRECT_WORKERS;
      ds->fresh = 1;
    }
  }
  ds->timeout = (co.timeout_ms != 0 ? co.timeout_ms : CLIENT_TIMEOUT_MS) *
                RP_MILLISECONDS;
  tun_main_xfer_targets(&o, &ds->down_bytes, &ds->up_bytes, &ds->seconds);
  rv = tun_drv_new(&app.drv, ds, &cb, NULL, &app);
  if (rv != 0) {
    fprintf(stderr, CLIENT_NAME ": %s\n", rp_strerror(rv));
    tun_main_opts_free(&o);
    return 2;
  }
  app.socks = calloc(ds->nworkers, sizeof(*app.socks));
  if (app.socks == NULL ||
      tun_main_xfer_files(&o, tun_drv_xfer(app.drv), &app.files) != 0) {
    rv = app.socks == NULL ? 1 : 2;
    tun_app_xfer_close_files(&app.files);
    tun_drv_del(app.drv);
    free(app.socks);
    tun_main_opts_free(&o);
    return rv;
  }
  app.loop = uv_default_loop();
  if (o.pool_mode) {
    app.direct = !o.pool_udp;
    app.exit_code = tun_main_pool_start(
        &o, RP_KIND_DNSTT, &ds->domain, o.check_bytes, app.loop,
        client_pool_ready, client_pool_answer, &app, &app.pool);
  } else {
    client_start(&app);
  }
  rv = tun_main_run(app.loop, &app.exit_code, &o, &app.files, &app.drv);
  free(app.socks);
  return rv;
}
