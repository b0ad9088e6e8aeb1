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
 * and then sees one resolver, the pool's 127.0.0.1 address: the MTU test,
 * the slots and the timeouts run against it as against any resolver, the
 * balancer has nothing to choose and the client sends no copies of its
 * own (duplication 1): the pool's duplicate setting applies.
 */
#include "arq.h"
#include "tuncli.h"
#include "tunapp.h"
#include "tunwire.h"
#include "balancer.h"
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
/* MD_MAX_INFLIGHT bounds --inflight. */
#define MD_MAX_INFLIGHT 256
/* MD_DEFAULT_DUP is MasterDnsVPN's default packet_duplication here. */
#define MD_DEFAULT_DUP 2
/* MD_MAX_DUP is MasterDnsVPN's upper bound of packet_duplication. */
#define MD_MAX_DUP 10
/* MD_MTU_CEILING is the default ceiling of the MTU test, bytes. */
#define MD_MTU_CEILING 500
/* MD_MTU_FLOOR is the smallest MTU tried, bytes. */
#define MD_MTU_FLOOR 64
/* MD_PROBE_TRIES is how many probes of one size fail before a smaller. */
#define MD_PROBE_TRIES 2
/* MD_PROBE_TIMEOUT is the wait for a probe's answer. */
#define MD_PROBE_TIMEOUT RP_SECONDS
/* MD_TIMEOUT_MIN, MD_TIMEOUT_MAX clamp a send's timeout; MD_TIMEOUT_INIT
   is used before the resolver answered. */
#define MD_TIMEOUT_MIN (50 * RP_MILLISECONDS)
#define MD_TIMEOUT_MAX RP_SECONDS
#define MD_TIMEOUT_INIT RP_SECONDS
/* MD_MAX_SENDS bounds the sends tracked at once (slots x copies, plus
   late copies). */
#define MD_MAX_SENDS 4096
/* MD_MAX_RESOLVERS bounds --resolver. */
#define MD_MAX_RESOLVERS 32
/* MD_TICK_MS is the timer period. */
#define MD_TICK_MS 2
/* MD_RECV_BUF is the receive buffer, bytes. */
#define MD_RECV_BUF 65536
/* MD_EXTRA_LEN is the room for the JSON fields the client adds (the
   pool's stats included). */
#define MD_EXTRA_LEN 65536

typedef struct md_app md_app;

/* md_probe_stage: the MTU test tries the ceiling first (one round trip
   on a good resolver); if it fails, the floor tells a dead resolver
   (given up after 2 + 2 tries) from one that only drops large answers,
   which then steps down from the ceiling by 3/4. */
typedef enum md_probe_stage {
  MD_PROBE_CEILING = 0,
  MD_PROBE_FLOOR,
  MD_PROBE_DESCEND
} md_probe_stage;

typedef struct md_res {
  md_app *app;
  size_t idx;
  struct sockaddr_storage addr;
  char name[64];
  uv_udp_t sock;
  /* mtu is the size its MTU test passed at, 0 while unknown or failed. */
  uint16_t mtu;
  /* Probe state (MTU test and rechecks). */
  int probing;
  uint16_t probe_size;
  uint16_t probe_nonce;
  uint16_t probe_id;
  int probe_tries;
  /* probe_stage is where the MTU test stands (md_probe_stage). */
  int probe_stage;
  rp_tstamp probe_deadline;
  /* srtt and rttvar time its sends (RP_TSTAMP_UNSET: no sample). */
  rp_duration srtt;
  rp_duration rttvar;
} md_res;

typedef struct md_send {
  int used;
  size_t res;
  uint16_t id;
  size_t slot;
  /* gen is the slot's generation when sent. */
  uint64_t gen;
  rp_tstamp sent_at;
  rp_tstamp deadline;
} md_send;

typedef struct md_slot {
  int waiting;
  int resting;
  /* pending counts the sends of this generation still out. */
  size_t pending;
  uint64_t gen;
  rp_tstamp rest_until;
  /* sent lists the upload segments of the query out. */
  tun_arq_sent sent;
} md_slot;

struct md_app {
  uv_loop_t *loop;
  uv_timer_t tick;
  md_res res[MD_MAX_RESOLVERS];
  size_t nres;
  tun_bal bal;
  rp_dns_name domain;
  tun_cli *cli;
  md_slot slots[MD_MAX_INFLIGHT];
  size_t nslots;
  md_send sends[MD_MAX_SENDS];
  /* sends_hi is one past the highest used entry of |sends| (sends are
     taken lowest first, so scans stay short). */
  size_t sends_hi;
  size_t dup;
  uint16_t mtu_ceiling;
  uint16_t mtu;
  int running;
  int finished;
  int failed;
  const char *balance_name;
  /* pool is the in-process pool (pool mode), or NULL. */
  tun_pool *pool;
  /* exit_code is set to 1 when the pool fails. */
  int exit_code;
  tun_app_xfer xfer;
  uint64_t queries, answers, timeouts, rejected, copies, send_errors;
  uint64_t unmatched;
  uint8_t recv_buf[MD_RECV_BUF];
  uint8_t qbuf[TUN_WIRE_MAX_MSG];
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
      "                        the pool's duplicate setting applies\n"
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

static rp_duration md_res_timeout(const md_res *r) {
  rp_duration t;

  if (r->srtt == RP_TSTAMP_UNSET) {
    return MD_TIMEOUT_INIT;
  }
  /* A steady resolver has a tiny rttvar: keep a quarter of srtt as a
     floor of the margin so that it does not time out on jitter. */
  t = r->srtt + (4 * r->rttvar > r->srtt / 4 ? 4 * r->rttvar : r->srtt / 4);
  if (t < MD_TIMEOUT_MIN) {
    t = MD_TIMEOUT_MIN;
  }
  return t > MD_TIMEOUT_MAX ? MD_TIMEOUT_MAX : t;
}

static uint16_t md_rand16(void) { return (uint16_t)tun_app_random64(); }

static void md_send_bytes(md_app *app, md_res *r, const uint8_t *data,
                          size_t len) {
  uv_buf_t ub = uv_buf_init((char *)(uintptr_t)data, (unsigned)len);

  if (uv_udp_try_send(&r->sock, &ub, 1, (const struct sockaddr *)&r->addr) <
      0) {
    ++app->send_errors;
  }
}

/* ------------------------------------------------------------------ */
/* Probes: the MTU test and background rechecks                         */
/* ------------------------------------------------------------------ */

static void md_probe_send(md_app *app, md_res *r, rp_tstamp now) {
  rp_ssize n;

  r->probing = 1;
  r->probe_nonce = md_rand16();
  r->probe_id = md_rand16();
  r->probe_deadline = now + MD_PROBE_TIMEOUT;
  n = tun_cli_build_probe(app->qbuf, sizeof(app->qbuf), r->probe_id,
                          &app->domain, r->probe_nonce, r->probe_size);
  if (n > 0) {
    md_send_bytes(app, r, app->qbuf, (size_t)n);
  }
}

static void md_start_run(md_app *app, rp_tstamp now);

/* md_mtu_check ends the MTU test once no resolver is probing. */
static void md_mtu_check(md_app *app, rp_tstamp now) {
  size_t i;
  uint16_t mtu = 0;

  if (app->running) {
    return;
  }
  for (i = 0; i < app->nres; ++i) {
    if (app->res[i].probing) {
      return;
    }
  }
  for (i = 0; i < app->nres; ++i) {
    md_res *r = &app->res[i];

    tun_bal_set_active(&app->bal, i, r->mtu != 0, now);
    if (r->mtu != 0 && (mtu == 0 || r->mtu < mtu)) {
      mtu = r->mtu;
    }
  }
  if (mtu == 0) {
    fprintf(stderr, CLIENT_NAME ": no resolver passed the MTU test\n");
    app->failed = 1;
    app->finished = 1;
    return;
  }
  app->mtu = mtu;
  md_start_run(app, now);
}

static void md_probe_answer(md_app *app, md_res *r, const uint8_t *data,
                            size_t len, rp_tstamp now) {
  if (!tun_cli_check_probe(data, len, r->probe_nonce, r->probe_size)) {
    return;
  }
  r->probing = 0;
  if (!app->running && r->probe_stage == MD_PROBE_FLOOR) {
    /* Alive: find the size between the floor and the ceiling. */
    r->probe_stage = MD_PROBE_DESCEND;
    r->probe_tries = 0;
    r->probe_size = (uint16_t)(app->mtu_ceiling * 3 / 4);
    if (r->probe_size > MD_MTU_FLOOR) {
      md_probe_send(app, r, now);
      return;
    }
    r->probe_size = MD_MTU_FLOOR;
  }
  if (!app->running) {
    r->mtu = r->probe_size;
    md_mtu_check(app, now);
  } else if (!app->bal.res[r->idx].active) {
    /* A background recheck passed. */
    tun_bal_set_active(&app->bal, r->idx, 1, now);
  }
}

static void md_probe_timeout(md_app *app, md_res *r, rp_tstamp now) {
  r->probing = 0;
  if (app->running) {
    return;
  }
  if (++r->probe_tries < MD_PROBE_TRIES) {
    md_probe_send(app, r, now);
    return;
  }
  r->probe_tries = 0;
  switch ((md_probe_stage)r->probe_stage) {
  case MD_PROBE_CEILING:
    r->probe_stage = MD_PROBE_FLOOR;
    r->probe_size = MD_MTU_FLOOR;
    break;
  case MD_PROBE_FLOOR:
    /* Dead, or not even the floor gets through. */
    r->mtu = 0;
    md_mtu_check(app, now);
    return;
  case MD_PROBE_DESCEND:
    r->probe_size = (uint16_t)(r->probe_size * 3 / 4);
    if (r->probe_size <= MD_MTU_FLOOR) {
      /* The floor passed before. */
      r->mtu = MD_MTU_FLOOR;
      md_mtu_check(app, now);
      return;
    }
    break;
  }
  md_probe_send(app, r, now);
}

/* ------------------------------------------------------------------ */
/* Queries                                                              */
/* ------------------------------------------------------------------ */

static md_send *md_send_alloc(md_app *app) {
  size_t i;

  for (i = 0; i < MD_MAX_SENDS; ++i) {
    if (!app->sends[i].used) {
      if (i + 1 > app->sends_hi) {
        app->sends_hi = i + 1;
      }
      return &app->sends[i];
    }
  }
  return NULL;
}

/* md_send_free releases |s| and shrinks sends_hi. */
static void md_send_free(md_app *app, md_send *s) {
  s->used = 0;
  while (app->sends_hi > 0 && !app->sends[app->sends_hi - 1].used) {
    --app->sends_hi;
  }
}

static void md_slot_send(md_app *app, size_t si, rp_tstamp now) {
  md_slot *slot = &app->slots[si];
  size_t targets[MD_MAX_DUP], nt = 1, k;
  uint16_t id = md_rand16();
  rp_ssize n;

  if (app->finished) {
    return;
  }
  n = tun_cli_build_query(app->cli, app->qbuf, sizeof(app->qbuf), id,
                          md_rand16(), now, &slot->sent);
  ++slot->gen;
  slot->waiting = 1;
  slot->resting = 0;
  slot->pending = 0;
  if (n < 0) {
    slot->waiting = 0;
    slot->resting = 1;
    slot->rest_until = now + MD_TIMEOUT_MIN;
    return;
  }
  ++app->queries;
  targets[0] = tun_bal_pick(&app->bal);
  if (app->dup > 1) {
    nt += tun_bal_pick_copies(&app->bal, targets[0], app->dup - 1, targets + 1);
  }
  for (k = 0; k < nt; ++k) {
    md_res *r = &app->res[targets[k]];
    md_send *s = md_send_alloc(app);

    if (s == NULL) {
      break;
    }
    *s = (md_send){.used = 1,
                   .res = targets[k],
                   .id = id,
                   .slot = si,
                   .gen = slot->gen,
                   .sent_at = now,
                   .deadline = now + md_res_timeout(r)};
    ++slot->pending;
    tun_bal_on_sent(&app->bal, targets[k]);
    if (k > 0) {
      ++app->copies;
    }
    md_send_bytes(app, r, app->qbuf, (size_t)n);
  }
  if (slot->pending == 0) {
    slot->waiting = 0;
    slot->resting = 1;
    slot->rest_until = now + MD_TIMEOUT_MIN;
  }
}

static void md_finish(md_app *app, rp_tstamp now);

static void md_progress(md_app *app, rp_tstamp now) {
  if (app->running && tun_app_xfer_pump(&app->xfer, app->cli, now)) {
    md_finish(app, now);
  }
}

static void md_start_run(md_app *app, rp_tstamp now) {
  tun_cli_settings cs;
  size_t i;
  int rv;

  tun_cli_settings_default(&cs, TUN_MODE_MD);
  cs.domain = app->domain;
  cs.sid = tun_app_random64();
  cs.down_limit = app->mtu;
  rv = tun_cli_new(&app->cli, &cs, NULL);
  if (rv != 0) {
    fprintf(stderr, CLIENT_NAME ": %s\n", rp_strerror(rv));
    app->failed = 1;
    app->finished = 1;
    return;
  }
  app->running = 1;
  md_progress(app, now);
  for (i = 0; i < app->nslots; ++i) {
    md_slot_send(app, i, now);
  }
}

/* md_send_done ends send |s|; |ok| is 1 for a NOERROR answer, 0 for an
   error answer, -1 for a timeout. */
static void md_send_done(md_app *app, md_send *s, int ok, rp_tstamp now) {
  md_slot *slot = &app->slots[s->slot];
  md_res *r = &app->res[s->res];

  md_send_free(app, s);
  if (s->gen != slot->gen || !slot->waiting) {
    return;
  }
  if (ok > 0) {
    slot->waiting = 0;
    md_slot_send(app, s->slot, now);
    return;
  }
  if (--slot->pending == 0) {
    if (ok == 0) {
      /* Refused: its upload packet is lost for sure. */
      tun_cli_nack(app->cli, &slot->sent);
    }
    slot->waiting = 0;
    slot->resting = 1;
    slot->rest_until = now + md_res_timeout(r);
  }
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
  const uint8_t *data = (const uint8_t *)buf->base;
  rp_tstamp now = uv_hrtime();
  uint16_t id;
  size_t i;
  int rv, ok;

  (void)addr;
  (void)flags;
  if (nread < RP_DNS_HEADER_LEN || app->finished) {
    return;
  }
  id = rp_dns_get_id(data);
  if (r->probing && id == r->probe_id) {
    md_probe_answer(app, r, data, (size_t)nread, now);
    return;
  }
  if (!app->running) {
    return;
  }
  rv = tun_cli_on_answer(app->cli, data, (size_t)nread, now);
  ok = rv >= 0;
  if (ok) {
    ++app->answers;
  } else {
    ++app->rejected;
  }
  for (i = 0; i < app->sends_hi; ++i) {
    md_send *s = &app->sends[i];

    if (s->used && s->res == r->idx && s->id == id) {
      rp_duration rtt = now - s->sent_at;

      if (ok) {
        tun_arq_rtt_update(&r->srtt, &r->rttvar, rtt);
      }
      tun_bal_on_answer(&app->bal, r->idx, rtt, ok, now);
      md_progress(app, now);
      md_send_done(app, s, ok, now);
      return;
    }
  }
  ++app->unmatched;
  md_progress(app, now);
}

static void md_on_tick(uv_timer_t *t) {
  md_app *app = t->data;
  rp_tstamp now = uv_hrtime();
  size_t i;

  for (i = 0; i < app->nres && !app->finished; ++i) {
    md_res *r = &app->res[i];

    if (r->probing && now >= r->probe_deadline) {
      md_probe_timeout(app, r, now);
    } else if (app->running && !r->probing &&
               tun_bal_recheck_due(&app->bal, i, now)) {
      r->probe_size = app->mtu;
      md_probe_send(app, r, now);
    }
  }
  if (!app->running) {
    if (app->finished) {
      md_finish(app, now);
    }
    return;
  }
  tun_arq_handle_expiry(tun_cli_arq(app->cli), now);
  for (i = 0; i < app->sends_hi && !app->finished; ++i) {
    md_send *s = &app->sends[i];

    if (s->used && now >= s->deadline) {
      ++app->timeouts;
      tun_bal_on_timeout(&app->bal, s->res, now);
      md_send_done(app, s, -1, now);
    }
  }
  for (i = 0; i < app->nslots && !app->finished; ++i) {
    md_slot *slot = &app->slots[i];

    if (slot->resting && now >= slot->rest_until) {
      md_slot_send(app, i, now);
    }
  }
  md_progress(app, now);
}

static void md_finish(md_app *app, rp_tstamp now) {
  static char extra[MD_EXTRA_LEN];
  size_t i, pos;

  if (uv_is_closing((uv_handle_t *)&app->tick)) {
    return;
  }
  app->finished = 1;
  if (app->cli != NULL) {
    pos = (size_t)snprintf(
        extra, sizeof(extra),
        ",\"balance\":\"%s\",\"duplication\":%zu,\"inflight\":%zu"
        ",\"mtu\":%u,\"copies\":%" PRIu64 ",\"unmatched\":%" PRIu64
        ",\"send_errors\":%" PRIu64 ",\"disabled_events\":%" PRIu64
        ",\"resolvers\":[",
        app->balance_name, app->dup, app->nslots, (unsigned)app->mtu,
        app->copies, app->unmatched, app->send_errors,
        app->bal.disabled_events);
    for (i = 0; i < app->nres && pos < sizeof(extra); ++i) {
      const tun_bal_res *b = &app->bal.res[i];

      pos += (size_t)snprintf(
          extra + pos, sizeof(extra) - pos,
          "%s{\"addr\":\"%s\",\"mtu\":%u,\"active\":%s,\"sent\":%" PRIu64
          ",\"answered\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"timeouts\":%" PRIu64
          ",\"loss_score\":%" PRIu64 ",\"latency_us\":%" PRIu64 "}",
          i > 0 ? "," : "", app->res[i].name, (unsigned)app->res[i].mtu,
          b->active ? "true" : "false", b->sent, b->answered, b->lost,
          b->timeouts, tun_bal_loss_score(&app->bal, i),
          tun_bal_latency_score_us(&app->bal, i));
    }
    if (pos < sizeof(extra)) {
      pos += (size_t)snprintf(extra + pos, sizeof(extra) - pos, "]");
    }
    if (app->pool != NULL && pos < sizeof(extra)) {
      pos += tun_pool_format_stats(app->pool, extra + pos, sizeof(extra) - pos);
      tun_pool_format_timeline(app->pool, extra + pos, sizeof(extra) - pos);
    }
    tun_app_xfer_print(&app->xfer, app->cli, "masterdns",
                       app->pool != NULL ? "pool" : "own-balancer",
                       app->queries, app->answers, app->timeouts, app->rejected,
                       now, extra);
  }
  for (i = 0; i < app->nres; ++i) {
    uv_udp_recv_stop(&app->res[i].sock);
    uv_close((uv_handle_t *)&app->res[i].sock, NULL);
  }
  uv_close((uv_handle_t *)&app->tick, NULL);
  tun_main_pool_stop(CLIENT_NAME, &app->pool);
}

/* md_begin opens one socket per resolver, starts the MTU test and the
   tick timer. Returns 0 or 1 (socket failure, printed). */
static int md_begin(md_app *app) {
  rp_tstamp now = uv_hrtime();
  size_t k;
  int rv;

  for (k = 0; k < app->nres; ++k) {
    md_res *r = &app->res[k];
    struct sockaddr_storage any;

    r->app = app;
    r->idx = k;
    r->srtt = RP_TSTAMP_UNSET;
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
    r->probe_size = app->mtu_ceiling;
    md_probe_send(app, r, now);
  }
  uv_timer_init(app->loop, &app->tick);
  app->tick.data = app;
  uv_timer_start(&app->tick, md_on_tick, MD_TICK_MS, MD_TICK_MS);
  return 0;
}

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
  tun_bal_init(&app->bal, app->nres, TUN_BAL_ROUNDROBIN);
  if (md_begin(app) != 0) {
    app->exit_code = 1;
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
    *pbad =
        tun_app_parse_size(v, &mo->dup) || mo->dup == 0 || mo->dup > MD_MAX_DUP;
  } else if (strcmp(a, "--inflight") == 0) {
    *pbad = tun_app_parse_size(v, &mo->inflight) || mo->inflight == 0 ||
            mo->inflight > MD_MAX_INFLIGHT;
  } else if (strcmp(a, "--mtu-ceiling") == 0) {
    *pbad = tun_app_parse_size(v, &mo->ceiling) || mo->ceiling < MD_MTU_FLOOR ||
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
  size_t k;
  int rv;

  tun_main_opts_init(&o, CLIENT_NAME);
  rv = tun_main_parse(&o, argc, argv, md_usage, md_opt, &mo);
  if (rv != TUN_MAIN_RUN) {
    return rv;
  }
  rv = 0;
  if (o.domain == NULL || (o.nresolvers == 0 && o.pool_config == NULL) ||
      (!o.pool_mode && o.nresolvers == 0)) {
    fprintf(stderr, CLIENT_NAME ": --resolver (or --pool-config) and "
                                "--domain are required\n");
    rv = 2;
  }
  if (rv == 0 && !o.pool_mode && o.nresolvers > MD_MAX_RESOLVERS) {
    fprintf(stderr, CLIENT_NAME ": at most %d resolvers\n", MD_MAX_RESOLVERS);
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
  if (rv == 0 && rp_dns_name_from_text(&app.domain, o.domain) != 0) {
    fprintf(stderr, CLIENT_NAME ": bad --domain %s\n", o.domain);
    rv = 2;
  }
  if (rv != 0) {
    tun_main_opts_free(&o);
    return rv;
  }
  tun_bal_init(&app.bal, app.nres, mo.strategy);
  app.balance_name = o.pool_mode ? "pool" : mo.balance;
  /* Through the pool there are no copies of the client's own. */
  app.dup = o.pool_mode ? 1 : (size_t)mo.dup;
  app.nslots = (size_t)mo.inflight;
  app.mtu_ceiling = (uint16_t)mo.ceiling;
  if (tun_main_xfer_open(&o, &app.xfer) != 0) {
    tun_main_opts_free(&o);
    return 2;
  }
  app.loop = uv_default_loop();
  if (o.pool_mode) {
    app.exit_code =
        tun_main_pool_start(&o, RP_KIND_MASTERDNS, &app.domain,
                            o.have_check ? o.check_bytes : mo.ceiling, app.loop,
                            md_pool_ready, &app, &app.pool);
  } else {
    app.exit_code = md_begin(&app);
  }
  tun_main_opts_free(&o);
  uv_run(app.loop, UV_RUN_DEFAULT);
  uv_loop_close(app.loop);
  if (app.exit_code != 0) {
    rv = app.exit_code;
  } else {
    rv = !app.failed && tun_main_xfer_ok(&o, &app.xfer) ? 0 : 1;
  }
  tun_app_xfer_close_files(&app.xfer);
  tun_cli_del(app.cli);
  return rv;
}
