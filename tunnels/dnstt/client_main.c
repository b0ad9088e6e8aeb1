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
 * then runs 300 long-lived workers (--udp-workers) against the pool's
 * 127.0.0.1 address, as a dnstt outbound with smart_pool does.
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
#include "tuncli.h"
#include "tunorig.h"
#include "tunapp.h"
#include "tunwire.h"
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
/* CLIENT_MAX_WORKERS bounds --workers and --udp-workers. */
#define CLIENT_MAX_WORKERS 4096
/* CLIENT_TIMEOUT_MS is how long a worker waits for an answer: past the
   server's 1 s hold plus a round trip. */
#define CLIENT_TIMEOUT_MS 1500
/* CLIENT_TICK_MS is the period of the timer that ends waits. */
#define CLIENT_TICK_MS 5
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

typedef struct worker_sock {
  uv_udp_t h;
  struct worker *w;
} worker_sock;

typedef struct worker {
  client_app *app;
  /* sock is the socket of the query out, or NULL. */
  worker_sock *sock;
  /* waiting is 1 while a query is out; resting 1 after an error answer
     until |deadline|. */
  int waiting;
  int resting;
  /* deadline ends the wait or the rest. */
  rp_tstamp deadline;
  /* id is the DNS ID of the query out: an answer with another ID (to a
     copy of an earlier query, from the pool) gives its data but does not
     end the wait. */
  uint16_t id;
  /* sent lists the upload segments of the query out. */
  tun_arq_sent sent;
} worker;

struct client_app {
  uv_loop_t *loop;
  uv_timer_t tick;
  struct sockaddr_storage resolver;
  tun_cli *cli;
  worker *workers;
  size_t nworkers;
  /* fresh is 1 for a new socket per query (direct mode). */
  int fresh;
  /* original is 1 for the original dnstt-client's sending (--model
     original):
     one worker, its socket kept, sends decided by |orig|. */
  int original;
  tun_orig orig;
  rp_duration timeout;
  tun_app_xfer xfer;
  int finished;
  /* pool is the in-process pool (pool mode), or NULL. */
  tun_pool *pool;
  /* exit_code is set to 1 when the pool fails. */
  int exit_code;
  uint64_t queries, answers, timeouts, rejected, send_errors;
  uint8_t recv_buf[CLIENT_RECV_BUF];
  uint8_t qbuf[TUN_WIRE_MAX_MSG];
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
      "                        and send to its 127.0.0.1 address with 300\n"
      "                        long-lived workers (--udp-workers)\n"
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
  *buf = uv_buf_init((char *)ws->w->app->recv_buf, CLIENT_RECV_BUF);
}

static void client_on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                           const struct sockaddr *addr, unsigned flags);

/* client_worker_send sends the worker's next query. */
static void client_worker_send(worker *w, rp_tstamp now) {
  client_app *app = w->app;
  struct sockaddr_storage any;
  uv_buf_t ub;
  uint8_t rnd[4];
  rp_ssize n;
  int rv;

  if (app->finished) {
    return;
  }
  if (w->sock != NULL && app->fresh) {
    client_sock_close(w->sock);
    w->sock = NULL;
  }
  if (w->sock == NULL) {
    w->sock = malloc(sizeof(*w->sock));
    if (w->sock == NULL) {
      return;
    }
    w->sock->w = w;
    uv_udp_init(app->loop, &w->sock->h);
    memset(&any, 0, sizeof(any));
    any.ss_family = app->resolver.ss_family;
    rv = uv_udp_bind(&w->sock->h, (const struct sockaddr *)&any, 0);
    if (rv == 0) {
      rv = uv_udp_recv_start(&w->sock->h, client_alloc, client_on_recv);
    }
    if (rv != 0) {
      ++app->send_errors;
    }
  }
  tun_app_random(rnd, sizeof(rnd));
  w->id = (uint16_t)(rnd[0] << 8 | rnd[1]);
  n = tun_cli_build_query(app->cli, app->qbuf, sizeof(app->qbuf), w->id,
                          (uint16_t)(rnd[2] << 8 | rnd[3]), now, &w->sent);
  w->waiting = 1;
  w->resting = 0;
  w->deadline = now + app->timeout;
  if (n < 0) {
    return;
  }
  ub = uv_buf_init((char *)app->qbuf, (unsigned)n);
  ++app->queries;
  if (uv_udp_try_send(&w->sock->h, &ub, 1,
                      (const struct sockaddr *)&app->resolver) < 0) {
    ++app->send_errors;
  }
}

/* CLIENT_ORIG_BURST bounds the queries one pump of --model original
   sends. */
#define CLIENT_ORIG_BURST 512

/* client_orig_pump sends, with --model original, every query the original
   client would send now: one for each due data packet or owed ack, and
   the polls it may. */
static void client_orig_pump(client_app *app, rp_tstamp now) {
  uint32_t want, w;
  int k;

  for (k = 0; k < CLIENT_ORIG_BURST && !app->finished; ++k) {
    w = tun_arq_want_output(tun_cli_arq(app->cli), now);
    want = ((w & TUN_ARQ_WANT_DATA) ? TUN_ORIG_WANT_DATA : 0) |
           ((w & TUN_ARQ_WANT_ACK) ? TUN_ORIG_WANT_ACK : 0);
    if (!tun_orig_next(&app->orig, want, now)) {
      break;
    }
    client_worker_send(&app->workers[0], now);
  }
}

static void client_finish(client_app *app, rp_tstamp now) {
  static char extra[CLIENT_EXTRA_LEN];
  const char *mode = app->original ? "original"
                     : app->fresh  ? "direct"
                                   : "udp-workers";
  size_t i, pos;

  if (app->finished) {
    return;
  }
  app->finished = 1;
  pos = (size_t)snprintf(
      extra, sizeof(extra),
      ",\"workers\":%zu,\"fresh_sockets\":%s,\"send_errors\":%" PRIu64,
      app->nworkers, app->fresh ? "true" : "false", app->send_errors);
  if (app->pool != NULL) {
    mode = "pool";
    if (pos < sizeof(extra)) {
      pos += tun_pool_format_stats(app->pool, extra + pos, sizeof(extra) - pos);
      tun_pool_format_timeline(app->pool, extra + pos, sizeof(extra) - pos);
    }
  }
  tun_app_xfer_print(&app->xfer, app->cli, "dnstt", mode, app->queries,
                     app->answers, app->timeouts, app->rejected, now, extra);
  for (i = 0; i < app->nworkers; ++i) {
    if (app->workers[i].sock != NULL) {
      client_sock_close(app->workers[i].sock);
      app->workers[i].sock = NULL;
    }
  }
  uv_close((uv_handle_t *)&app->tick, NULL);
  tun_main_pool_stop(CLIENT_NAME, &app->pool);
}

static void client_progress(client_app *app, rp_tstamp now) {
  if (tun_app_xfer_pump(&app->xfer, app->cli, now)) {
    client_finish(app, now);
  }
}

/* client_rest returns how long a worker rests after an error answer: on
   average one timeout from the send, drawn uniformly from half to one and
   a half, so that workers refused together do not come back together. */
static rp_duration client_rest(const client_app *app) {
  uint64_t r = tun_app_random64() % (app->timeout + 1);

  return app->timeout / 2 + r;
}

static void client_on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                           const struct sockaddr *addr, unsigned flags) {
  worker_sock *ws = (worker_sock *)(void *)h;
  worker *w = ws->w;
  client_app *app = w->app;
  rp_tstamp now = uv_hrtime();
  int rv, mine;

  (void)addr;
  (void)flags;
  if (nread < RP_DNS_HEADER_LEN || app->finished) {
    return;
  }
  if (app->original) {
    /* The original client: any answer, data or not; an error answer
       changes nothing (no poll, no resend). */
    rv = tun_cli_on_answer(app->cli, (const uint8_t *)buf->base, (size_t)nread,
                           now);
    if (rv < 0) {
      ++app->rejected;
      return;
    }
    ++app->answers;
    tun_orig_on_answer(&app->orig, rv);
    client_progress(app, now);
    client_orig_pump(app, now);
    return;
  }
  mine = w->waiting && w->sock == ws &&
         rp_dns_get_id((const uint8_t *)buf->base) == w->id;
  rv = tun_cli_on_answer(app->cli, (const uint8_t *)buf->base, (size_t)nread,
                         now);
  if (rv < 0) {
    ++app->rejected;
    if (mine) {
      /* Like dnstt: no new query for an error answer until the wait
         would have ended. */
      w->waiting = 0;
      w->resting = 1;
      w->deadline = now + client_rest(app);
      /* Its upload segments are lost for sure: resend them at once. */
      tun_cli_nack(app->cli, &w->sent);
    }
    return;
  }
  ++app->answers;
  client_progress(app, now);
  if (mine) {
    w->waiting = 0;
    client_worker_send(w, now);
  }
}

static void client_on_tick(uv_timer_t *t) {
  client_app *app = t->data;
  rp_tstamp now = uv_hrtime();
  size_t i;

  tun_arq_handle_expiry(tun_cli_arq(app->cli), now);
  client_progress(app, now);
  if (app->original) {
    client_orig_pump(app, now);
    return;
  }
  for (i = 0; i < app->nworkers && !app->finished; ++i) {
    worker *w = &app->workers[i];

    if ((w->waiting || w->resting) && now >= w->deadline) {
      if (w->waiting) {
        ++app->timeouts;
      }
      client_worker_send(w, now);
    }
  }
}

/* client_start starts the tick timer and the workers. */
static void client_start(client_app *app) {
  rp_tstamp now = uv_hrtime();
  size_t k;

  uv_timer_init(app->loop, &app->tick);
  app->tick.data = app;
  uv_timer_start(&app->tick, client_on_tick, CLIENT_TICK_MS, CLIENT_TICK_MS);
  client_progress(app, now);
  if (app->original) {
    tun_orig_settings os;

    tun_orig_settings_default(&os);
    tun_orig_init(&app->orig, &os, now);
    app->workers[0].app = app;
    client_orig_pump(app, now);
    return;
  }
  for (k = 0; k < app->nworkers; ++k) {
    app->workers[k].app = app;
    client_worker_send(&app->workers[k], now);
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
            co->workers > CLIENT_MAX_WORKERS;
  } else if (strcmp(a, "--udp-workers") == 0) {
    *pbad = tun_app_parse_size(v, &co->udp_workers) || co->udp_workers == 0 ||
            co->udp_workers > CLIENT_MAX_WORKERS;
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
  tun_cli_settings cs;
  tun_main_opts o;
  client_opts co = {0};
  int rv;

  tun_main_opts_init(&o, CLIENT_NAME);
  o.check_bytes = CLIENT_CHECK_BYTES;
  rv = tun_main_parse(&o, argc, argv, client_usage, client_opt, &co);
  if (rv != TUN_MAIN_RUN) {
    return rv;
  }
  rv = 0;
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
  }
  tun_cli_settings_default(&cs, TUN_MODE_DNSTT);
  if (rv == 0 && rp_dns_name_from_text(&cs.domain, o.domain) != 0) {
    fprintf(stderr, CLIENT_NAME ": bad --domain %s\n", o.domain);
    rv = 2;
  }
  if (rv != 0) {
    tun_main_opts_free(&o);
    return rv;
  }
  cs.sid = tun_app_random64();
  rv = tun_cli_new(&app.cli, &cs, NULL);
  if (rv != 0) {
    fprintf(stderr, CLIENT_NAME ": %s\n", rp_strerror(rv));
    tun_main_opts_free(&o);
    return 2;
  }
  if (co.original) {
    app.original = 1;
    app.nworkers = 1;
    app.fresh = 0;
  } else if (co.workers == 0 && (co.udp_workers != 0 || o.pool_mode)) {
    app.nworkers =
        co.udp_workers != 0 ? (size_t)co.udp_workers : CLIENT_POOL_WORKERS;
    app.fresh = 0;
  } else {
    app.nworkers = co.workers != 0 ? (size_t)co.workers : CLIENT_DIRECT_WORKERS;
    app.fresh = 1;
  }
  app.timeout = (co.timeout_ms != 0 ? co.timeout_ms : CLIENT_TIMEOUT_MS) *
                RP_MILLISECONDS;
  if (tun_main_xfer_open(&o, &app.xfer) != 0) {
    tun_cli_del(app.cli);
    tun_main_opts_free(&o);
    return 2;
  }
  app.workers = calloc(app.nworkers, sizeof(worker));
  if (app.workers == NULL) {
    tun_app_xfer_close_files(&app.xfer);
    tun_cli_del(app.cli);
    tun_main_opts_free(&o);
    return 1;
  }
  app.loop = uv_default_loop();
  if (o.pool_mode) {
    app.exit_code =
        tun_main_pool_start(&o, RP_KIND_DNSTT, &cs.domain, o.check_bytes,
                            app.loop, client_pool_ready, &app, &app.pool);
  } else {
    client_start(&app);
  }
  tun_main_opts_free(&o);
  uv_run(app.loop, UV_RUN_DEFAULT);
  uv_loop_close(app.loop);
  if (app.exit_code != 0) {
    rv = app.exit_code;
  } else {
    rv = tun_main_xfer_ok(&o, &app.xfer) ? 0 : 1;
  }
  tun_app_xfer_close_files(&app.xfer);
  tun_cli_del(app.cli);
  free(app.workers);
  return rv;
}
