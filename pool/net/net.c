/*
 * net.c: the libuv driver of the pool core: the pool's life cycle
 * (start, stop, free), the core glue (timer, send_query, deliver, rand
 * and log callbacks) and the accessors. Its parts live in sendq.c (the
 * batched send queue), listen.c (the client listener), check.c
 * (upstream events and the start-up check) and resolvers.c (which
 * upstreams run, discovery).
 *
 * IMPLEMENTATION NOTES
 * - Time: every libuv callback reads uv_hrtime() once and passes that
 *   value to every core call and transport step it makes (stream.h and
 *   tls.h callbacks carry it; doh.c keeps the time of the running
 *   nghttp2 call for nghttp2's callbacks). Log line stamps read the
 *   clock themselves: they are for the reader and decide nothing.
 * - One uv_timer_t per pool follows rp_pool_get_expiry; it is re-armed
 *   after each batch of core calls only when the expiry became earlier.
 *   libuv timers count whole milliseconds from the loop's cached time
 *   (uv_now, on the same monotonic clock as uv_hrtime), so the expiry is
 *   rounded up to a millisecond and the delay counted from uv_now.
 * - Re-entrancy: the core calls send_query and deliver while it runs. A
 *   send that fails inside send_query must not call back into the core,
 *   so the failure is queued (errq) and reported once the outer core call
 *   has returned.
 * - Hot path without allocation: datagrams are read with recvmmsg into
 *   one shared buffer (the clock is read once per batch), handed to the
 *   core (which copies what it keeps), and what the core sends is copied
 *   into a preallocated send queue. A uv_check (right after the loop's
 *   I/O callbacks) and a uv_prepare (right before it waits) send the
 *   queue with one sendmmsg per socket, so a busy loop makes a few
 *   system calls per batch, not one per datagram, and wakes each peer
 *   once per batch. Only when the kernel pushes back is a preallocated
 *   send slot used. Start-up checks are sent at once. TCP clients and
 *   upstream connections allocate their buffers when they open, not per
 *   message. Random bytes for the core are drawn RP_NET_RAND_LEN at a
 *   time.
 * - The timer is re-armed lazily: a later expiry leaves it armed at the
 *   earlier one (it then fires, finds nothing due and is re-armed), so
 *   the usual case, the oldest query answered, costs no timer update.
 * - UDP clients are identified by their address, stored in
 *   rp_client.opaque (an rp_net_client_addr, copied in and out) together
 *   with the UDP size the client accepts; an
 *   answer larger than that is sent truncated (TC) so the client retries
 *   over TCP. TCP clients are identified by a connection id (generation
 *   and slot); answers for a connection closed meanwhile are dropped.
 * - Start-up check (DESIGN.md section 5): candidates ordered by saved
 *   score, each sent one plain query of pretest_domain (type A, or the
 *   embedder's check); a resolver that answers NOERROR or NXDOMAIN with
 *   the right ID is added to the core. Every candidate is checked at
 *   once (up to RP_NET_CHECK_MAX_RUNNING) while fewer than |want|
 *   (discovery.want) resolvers work; every 15 s, when fewer work, the
 *   next candidates are checked (wrapping round to the failed ones).
 *   With the pretest off every candidate joins unchecked.
 */
/* sendmmsg(2) and struct mmsghdr are GNU extensions. */
#define _GNU_SOURCE
#include "net_internal.h"
#include "disc.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* NET_LOG_LINE is the longest log line, bytes. */
#define NET_LOG_LINE 512

rp_tstamp rp_net_now(void) { return (rp_tstamp)uv_hrtime(); }

int rp_net_err_from_uv(int uverr) {
  switch (uverr) {
  case 0:
    return 0;
  case UV_ENOMEM:
    return RP_ERR_NOMEM;
  case UV_EINVAL:
    return RP_ERR_INVALID_ARGUMENT;
  default:
    return RP_ERR_IO;
  }
}

const char *rp_net_check_state_str(rp_net_check_state state) {
  switch (state) {
  case RP_NET_CHECK_PENDING:
    return "pending";
  case RP_NET_CHECK_RUNNING:
    return "checking";
  case RP_NET_CHECK_FAILED:
    return "failed";
  case RP_NET_CHECK_PASSED:
    return "in-pool";
  case RP_NET_CHECK_UNSUPPORTED:
    return "unsupported";
  case RP_NET_CHECK_REMOVED:
    return "removed";
  }
  return "unknown";
}

void rp_net_log(rp_net_pool *np, rp_log_level level, const char *fmt, ...) {
  char line[NET_LOG_LINE];
  va_list ap;
  int n;
  if (!np->opts.log || level > np->opts.log_level) {
    return;
  }
  n = snprintf(line, sizeof(line), "t=%.3f ",
               (double)rp_net_now() / (double)RP_SECONDS);
  if (n < 0 || (size_t)n >= sizeof(line)) {
    n = 0;
  }
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
  va_end(ap);
  np->opts.log(level, line, np->opts.user_data);
}

/* ------------------------------------------------------------------ */
/* Handles and shutdown                                                 */
/* ------------------------------------------------------------------ */

static void net_free(rp_net_pool *np);

void rp_net_handle_opened(rp_net_pool *np) { ++np->nhandles; }

void rp_net_handle_closed(rp_net_pool *np) {
  assert(np->nhandles > 0);
  --np->nhandles;
  if (np->stopping && np->nhandles == 0) {
    if (np->closed_cb) {
      np->closed_cb(np, np->closed_ud);
    }
    net_free(np);
  }
}

void rp_net_up_handle_opened(rp_net_upstream *up) {
  ++up->nhandles;
  rp_net_handle_opened(up->np);
}

void rp_net_up_handle_closed(rp_net_upstream *up) {
  rp_net_pool *np = up->np;
  assert(up->nhandles > 0);
  if (--up->nhandles == 0 && up->check == RP_NET_CHECK_REMOVED) {
    rp_net_upstream **pp = &np->removed;
    while (*pp && *pp != up) {
      pp = &(*pp)->next_removed;
    }
    if (*pp) {
      *pp = up->next_removed;
      rp_net_upstream_free(np, up);
    }
  }
  rp_net_handle_closed(np);
}

int rp_net_up_gone(const rp_net_upstream *up) {
  return up->np->stopping || up->check == RP_NET_CHECK_REMOVED;
}

static void net_handle_closed_cb(uv_handle_t *h) {
  rp_net_handle_closed(h->data);
}

/* ------------------------------------------------------------------ */
/* Core glue                                                            */
/* ------------------------------------------------------------------ */

static void net_timer_cb(uv_timer_t *t);

static void net_rearm(rp_net_pool *np) {
  rp_tstamp exp;
  uint64_t due_ms, loop_ms;
  if (np->stopping) {
    return;
  }
  exp = rp_pool_get_expiry(np->core);
  /* Armed at or before |exp| (or nothing due): leave it; when it fires
     early the callback re-arms. */
  if (np->armed != RP_TSTAMP_UNSET &&
      (exp == RP_TSTAMP_UNSET || exp >= np->armed)) {
    return;
  }
  if (exp == RP_TSTAMP_UNSET) {
    return;
  }
  np->armed = exp;
  due_ms = exp / RP_MILLISECONDS + (exp % RP_MILLISECONDS != 0);
  loop_ms = uv_now(np->loop);
  uv_timer_start(&np->timer, net_timer_cb,
                 due_ms > loop_ms ? due_ms - loop_ms : 0, 0);
}

void rp_net_core_result(rp_net_pool *np, int rv, const char *what) {
  if (rv != 0 && rp_err_is_fatal(rv)) {
    rp_net_log(np, RP_LOG_ERROR, "ev=core_error call=%s err=%s", what,
               rp_strerror(rv));
  }
}

/* rp_net_flush reports queued errors (each may queue more) and re-arms. */
void rp_net_flush(rp_net_pool *np, rp_tstamp now) {
  while (np->errq_len > 0 && !np->stopping) {
    rp_net_err e = np->errq[np->errq_head];
    np->errq_head = (np->errq_head + 1) % RP_NET_ERRQ_LEN;
    --np->errq_len;
    ++np->in_core;
    rp_net_core_result(np,
                       rp_pool_on_error(np->core, e.resolver_id, e.upstream_id,
                                        e.outcome, now),
                       "on_error");
    --np->in_core;
  }
  net_rearm(np);
}

static void net_timer_cb(uv_timer_t *t) {
  rp_net_pool *np = t->data;
  rp_tstamp now = rp_net_now();
  np->armed = RP_TSTAMP_UNSET;
  ++np->in_core;
  rp_net_core_result(np, rp_pool_handle_expiry(np->core, now), "expiry");
  --np->in_core;
  rp_net_flush(np, now);
}

static int net_cb_send_query(rp_pool *pool, uint32_t resolver_id,
                             void *resolver_user_data, uint16_t upstream_id,
                             const uint8_t *data, size_t len, uint32_t flags,
                             rp_tstamp now, void *user_data) {
  rp_net_upstream *up = resolver_user_data;
  (void)pool;
  (void)resolver_id;
  (void)user_data;
  return up->ops->send(up, data, len, upstream_id, flags, now);
}


static void net_deliver_tcp(rp_net_pool *np, uint64_t id, const uint8_t *data,
                            size_t len, rp_tstamp now) {
  uint32_t slot = (uint32_t)id;
  rp_net_client_conn *c;
  if (slot >= RP_NET_MAX_TCP_CLIENTS) {
    return;
  }
  c = np->clients[slot];
  if (!c || c->id != id || c->s.state != RP_NET_STREAM_OPEN) {
    ++np->counters.dropped_late;
    return;
  }
  rp_net_client_answer(c, data, len, now);
}

static int net_cb_deliver(rp_pool *pool, const rp_client *client,
                          const uint8_t *data, size_t len, uint32_t flags,
                          rp_tstamp now, void *user_data) {
  rp_net_pool *np = user_data;
  rp_net_client_addr ca;
  const struct sockaddr *sa = &ca.addr.sa;
  (void)pool;
  (void)flags;
  if (np->stopping) {
    return 0;
  }
  rp_net_client_load(client, &ca);
  if (ca.kind == RP_NET_CLIENT_DIRECT) {
    rp_net_direct_queue(np, client->id, data, len);
    return 0;
  }
  if (client->id != 0) {
    net_deliver_tcp(np, client->id, data, len, now);
    return 0;
  }
  if (len > ca.udp_size) {
    uint8_t
        tc[RP_DNS_HEADER_LEN + RP_DNS_MAX_NAME_LEN + RP_NET_QTYPE_QCLASS_LEN];
    rp_ssize tlen = rp_dns_build_truncated(tc, sizeof(tc), data, len);
    ++np->counters.truncated_to_client;
    if (tlen <= 0) {
      return 0;
    }
    rp_net_udp_queue(np, &np->lis_tx, tc, (size_t)tlen, sa, 0, now);
    return 0;
  }
  rp_net_udp_queue(np, &np->lis_tx, data, len, sa, 0, now);
  return 0;
}

/* net_rand_fill fills |dest| from RAND_bytes. DNS IDs and source ports
   that an off-path attacker could guess would let it forge answers, so
   there is no weaker fallback: the pool's start drew its first bytes
   (rp_net_pool_start fails when it cannot), and a CSPRNG that fails later
   stops the process. */
static void net_rand_fill(uint8_t *dest, size_t len) {
  if (RAND_bytes(dest, (int)len) != 1) {
    fprintf(stderr, "respool: RAND_bytes failed: no secure random bytes for "
                    "DNS IDs; stopping\n");
    abort();
  }
}

/* rp_net_cb_rand hands out bytes of np->rand_buf, refilled when used up
   (|user_data| NULL: straight from RAND_bytes). */
void rp_net_cb_rand(uint8_t *dest, size_t len, void *user_data) {
  rp_net_pool *np = user_data;
  if (!np || len > RP_NET_RAND_LEN) {
    net_rand_fill(dest, len);
    return;
  }
  if (RP_NET_RAND_LEN - np->rand_pos < len) {
    net_rand_fill(np->rand_buf, RP_NET_RAND_LEN);
    np->rand_pos = 0;
  }
  memcpy(dest, np->rand_buf + np->rand_pos, len);
  /* Each byte is handed out once. */
  memset(np->rand_buf + np->rand_pos, 0, len);
  np->rand_pos += len;
}

static void net_cb_log(rp_log_level level, uint32_t category, const char *line,
                       void *user_data) {
  rp_net_pool *np = user_data;
  (void)category;
  if (np->opts.log && level <= np->opts.log_level && line) {
    np->opts.log(level, line, np->opts.user_data);
  }
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                       */
/* ------------------------------------------------------------------ */

int rp_net_strdup(const rp_mem *mem, char **pdst, const char *src) {
  size_t n = strlen(src) + 1;
  *pdst = mem->malloc(n, mem->user_data);
  if (!*pdst) {
    return RP_ERR_NOMEM;
  }
  memcpy(*pdst, src, n);
  return 0;
}

static void net_free(rp_net_pool *np) {
  const rp_mem *mem = np->mem;
  size_t i;
  for (i = 0; i < np->nups; ++i) {
    rp_net_upstream_free(np, np->ups[i]);
  }
  while (np->removed) {
    rp_net_upstream *up = np->removed;
    np->removed = up->next_removed;
    rp_net_upstream_free(np, up);
  }
  mem->free(np->tls_ca, mem->user_data);
  mem->free(np->tls_name, mem->user_data);
  if (np->tls_ctx) {
    SSL_CTX_free(np->tls_ctx);
  }
  mem->free(np->ups, mem->user_data);
  mem->free(np->order, mem->user_data);
  mem->free(np->rxbuf, mem->user_data);
  rp_net_direct_free(np);
  mem->free(np->slots, mem->user_data);
  mem->free(np->clients, mem->user_data);
  mem->free(np->client_gen, mem->user_data);
  mem->free(np->txmsgs, mem->user_data);
  mem->free(np->txbuf, mem->user_data);
  mem->free(np->txdirty, mem->user_data);
  mem->free(np->txhdrs, mem->user_data);
  mem->free(np->txiov, mem->user_data);
  mem->free(np->txorder, mem->user_data);
  mem->free(np->txrun, mem->user_data);
  mem->free(np->scores_file, mem->user_data);
  rp_scores_free(&np->scores);
  rp_pool_del(np->core);
  mem->free(np, mem->user_data);
}

/* NET_POOL_HANDLES is the number of handles the pool itself embeds. */
#define NET_POOL_HANDLES 7

/* net_pool_handles lists the handles the pool itself embeds (not its
   upstreams' or clients'): net_init_handles opens and counts them,
   net_close_all closes them, so the count cannot go stale. */
static void net_pool_handles(rp_net_pool *np,
                             uv_handle_t *out[NET_POOL_HANDLES]) {
  uv_handle_t *const handles[NET_POOL_HANDLES] = {
      (uv_handle_t *)&np->lis_udp,       (uv_handle_t *)&np->lis_tcp,
      (uv_handle_t *)&np->timer,         (uv_handle_t *)&np->check_timer,
      (uv_handle_t *)&np->flush_prepare, (uv_handle_t *)&np->flush_check,
      (uv_handle_t *)&np->direct_idle};
  memcpy(out, handles, sizeof(handles));
}

/* net_close_all closes every handle; rp_net_handle_closed finishes. */
static void net_close_all(rp_net_pool *np) {
  uv_handle_t *handles[NET_POOL_HANDLES];
  size_t i;
  if (np->disc) {
    rp_disc_stop(np->disc, rp_net_disc_closed, np);
  }
  net_pool_handles(np, handles);
  for (i = 0; i < NET_POOL_HANDLES; ++i) {
    uv_close(handles[i], net_handle_closed_cb);
  }
  for (i = 0; i < RP_NET_MAX_TCP_CLIENTS; ++i) {
    if (np->clients[i]) {
      rp_net_stream_close(&np->clients[i]->s);
      np->clients[i] = NULL;
    }
  }
  np->nclients = 0;
  for (i = 0; i < np->nups; ++i) {
    np->ups[i]->ops->close(np->ups[i]);
  }
}

static int net_save_scores(rp_net_pool *np, rp_tstamp now) {
  char err[RP_CONFIG_ERRLEN];
  size_t i;
  int rv = 0;
  if (!np->scores_file) {
    return 0;
  }
  for (i = 0; i < np->nups && rv == 0; ++i) {
    rp_net_upstream *up = np->ups[i];
    rp_resolver_stats st;
    if (up->check == RP_NET_CHECK_PASSED &&
        rp_pool_get_resolver_stats(np->core, up->resolver_id, &st, now) == 0) {
      rv = rp_scores_set(&np->scores, up->name, st.score);
    } else if (up->check == RP_NET_CHECK_FAILED) {
      rv = rp_scores_set(&np->scores, up->name,
                         up->saved_score + RP_NET_SCORE_CHECK_FAILED);
    }
  }
  if (rv == 0) {
    rv = rp_scores_save(&np->scores, np->scores_file, np->score_key, err,
                        sizeof(err));
  }
  if (rv != 0) {
    rp_net_log(np, RP_LOG_ERROR, "ev=scores_save_failed err=\"%s\"",
               rv == RP_ERR_IO ? err : rp_strerror(rv));
  } else {
    rp_net_log(np, RP_LOG_INFO, "ev=scores_saved file=%s n=%zu",
               np->scores_file, np->scores.n);
  }
  return rv == 0 ? 0 : RP_ERR_IO;
}

int rp_net_pool_stop(rp_net_pool *np, rp_net_pool_closed_cb closed_cb,
                     void *user_data) {
  rp_tstamp now;
  int rv;
  if (np->stopping) {
    return 0;
  }
  now = rp_net_now();
  rv = net_save_scores(np, now);
  /* Answers already given by the core leave before the sockets close. */
  rp_net_tx_run(np, now);
  np->stopping = 1;
  np->closed_cb = closed_cb;
  np->closed_ud = user_data;
  net_close_all(np);
  return rv;
}

/* net_init_options fills |np| from |options| and |cfg|: the limits,
   the kind and the settings (the config applied to the kind's defaults
   unless options->settings gives them whole). */
static void net_init_options(rp_net_pool *np, const rp_net_options *options,
                             const rp_config *cfg) {
  np->opts = *options;
  np->opts.config = NULL;
  np->opts.settings = NULL;
  np->armed = RP_TSTAMP_UNSET;
  np->rx_now = RP_TSTAMP_UNSET;
  np->refuse_log_at = RP_TSTAMP_UNSET;
  np->kind = cfg->has_kind ? cfg->kind : options->kind;
  np->cfg_has_listen = cfg->has_listen;
  np->cfg_listen = cfg->listen;
  np->fixed_settings = options->settings != NULL;
  np->want = cfg->discovery.want ? cfg->discovery.want : RP_NET_CHECK_WANT;
  np->check_timeout =
      options->check_timeout ? options->check_timeout : RP_NET_CHECK_TIMEOUT;
  np->recheck_interval = options->recheck_interval ? options->recheck_interval
                                                   : RP_NET_RECHECK_INTERVAL;
  np->tcp_idle_timeout = options->tcp_idle_timeout ? options->tcp_idle_timeout
                                                   : RP_NET_TCP_IDLE_DEFAULT;
  np->tcp_busy_idle_timeout = options->tcp_busy_idle_timeout
                                  ? options->tcp_busy_idle_timeout
                                  : RP_NET_TCP_BUSY_IDLE_DEFAULT;
  np->tcp_client_max_pending = options->tcp_client_max_pending
                                   ? options->tcp_client_max_pending
                                   : RP_NET_TCP_CLIENT_PENDING_DEFAULT;
  np->tcp_max_pending = options->tcp_max_pending ? options->tcp_max_pending
                                                 : RP_NET_TCP_PENDING_DEFAULT;
  if (options->settings) {
    np->settings = *options->settings;
  } else {
    rp_settings_default(&np->settings, np->kind);
    rp_config_apply(cfg, &np->settings);
    np->settings.log_level = options->log ? options->log_level : RP_LOG_ERROR;
    np->settings.log_categories = RP_LOG_CAT_ALL;
  }
  if (rp_settings_restrict(&np->settings, np->kind)) {
    /* A tunnel's names carry its data: never 0x20 (case.h). */
    rp_net_log(np, RP_LOG_WARN,
               "ev=setting_ignored name=case_randomize kind=%s "
               "why=tunnel_names_carry_data",
               rp_config_kind_str(np->kind));
  }
}

/* net_load_scores reads the saved scores (they order the checks); a
   missing or corrupt file is logged and the pool starts without. Returns
   0 or RP_ERR_NOMEM. */
static int net_load_scores(rp_net_pool *np, const rp_net_options *options,
                           const rp_config *cfg) {
  char msg[RP_CONFIG_ERRLEN];
  int rv;
  rp_scores_key(np->kind, options->score_type, np->score_key,
                sizeof(np->score_key));
  if (!cfg->scores_file) {
    return 0;
  }
  if ((rv = rp_net_strdup(np->mem, &np->scores_file, cfg->scores_file)) !=
      0) {
    return rv;
  }
  rv = rp_scores_load(&np->scores, np->scores_file, np->score_key, msg,
                      sizeof(msg));
  if (rv == RP_ERR_NOT_FOUND) {
    rp_net_log(np, RP_LOG_INFO, "ev=scores_missing file=%s", np->scores_file);
  } else if (rv != 0 && rv != RP_ERR_NOMEM) {
    rp_net_log(np, RP_LOG_WARN, "ev=scores_ignored why=\"%s\"", msg);
  }
  return rv == RP_ERR_NOMEM ? rv : 0;
}

/* net_init_pretest takes the start-up check's domain and the TLS names
   of |cfg|. Returns 0, RP_ERR_CONFIG (a bad domain, |err| says so) or
   RP_ERR_NOMEM. */
static int net_init_pretest(rp_net_pool *np, const rp_net_options *options,
                            const rp_config *cfg, char *err, size_t errlen) {
  const rp_mem *mem = np->mem;
  const char *pretest = cfg->pretest_domain ? cfg->pretest_domain
                                            : RP_CONFIG_DEFAULT_PRETEST_DOMAIN;
  np->pretest_on = options->check_build != NULL || pretest[0] != '\0';
  snprintf(np->pretest_text, sizeof(np->pretest_text), "%s", pretest);
  if (!options->check_build && pretest[0] &&
      rp_dns_name_from_text(&np->pretest_name, pretest) != 0) {
    snprintf(err, errlen, "pretest_domain: bad name (%s)", pretest);
    return RP_ERR_CONFIG;
  }
  if ((cfg->tls_ca && rp_net_strdup(mem, &np->tls_ca, cfg->tls_ca) != 0) ||
      (cfg->tls_name &&
       rp_net_strdup(mem, &np->tls_name, cfg->tls_name) != 0)) {
    return RP_ERR_NOMEM;
  }
  return 0;
}

/* net_alloc_buffers allocates the receive buffer, the send queue, the
   send slots and the TCP client table. Returns 0 or RP_ERR_NOMEM (what
   was allocated is freed by net_free). */
static int net_alloc_buffers(rp_net_pool *np) {
  const rp_mem *mem = np->mem;
  void *ud = mem->user_data;
  size_t i;
  np->rxbuf = mem->malloc(RP_NET_RXBUF_LEN, ud);
  np->slots = mem->calloc(RP_NET_SEND_SLOTS, sizeof(*np->slots), ud);
  np->clients = mem->calloc(RP_NET_MAX_TCP_CLIENTS, sizeof(*np->clients), ud);
  np->client_gen =
      mem->calloc(RP_NET_MAX_TCP_CLIENTS, sizeof(*np->client_gen), ud);
  np->txmsgs = mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txmsgs), ud);
  np->txbuf = mem->malloc(RP_NET_TX_BYTES, ud);
  np->txdirty = mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txdirty), ud);
  np->txhdrs = mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txhdrs), ud);
  np->txiov = mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txiov), ud);
  np->txorder = mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txorder), ud);
  np->txrun = mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txrun), ud);
  if (!np->rxbuf || !np->slots || !np->clients || !np->client_gen ||
      !np->txmsgs || !np->txbuf || !np->txdirty || !np->txhdrs || !np->txiov ||
      !np->txorder || !np->txrun) {
    return RP_ERR_NOMEM;
  }
  for (i = 0; i < RP_NET_SEND_SLOTS; ++i) {
    np->slots[i].np = np;
    np->slots[i].next = i + 1 < RP_NET_SEND_SLOTS ? &np->slots[i + 1] : NULL;
  }
  np->free_slots = &np->slots[0];
  return 0;
}

/* net_new_core creates the core and, for kind auto, hands it each
   kind's settings to switch to. Returns 0 or the core's error (|err|
   says which step). */
static int net_new_core(rp_net_pool *np, const rp_net_options *options,
                        const rp_config *cfg, char *err, size_t errlen) {
  rp_callbacks cbs = {.send_query = net_cb_send_query,
                      .deliver = net_cb_deliver,
                      .rand = rp_net_cb_rand,
                      .log = net_cb_log};
  rp_settings by_kind[RP_KIND_COUNT];
  size_t i;
  int rv = rp_pool_new(&np->core, &np->settings, &cbs, np->mem, np);
  if (rv != 0) {
    snprintf(err, errlen, "cannot create the pool: %s", rp_strerror(rv));
    return rv;
  }
  if (np->kind != RP_KIND_AUTO || options->settings != NULL) {
    return 0;
  }
  /* Each kind's defaults with the same config and overrides. */
  for (i = 0; i < RP_KIND_COUNT; ++i) {
    rp_settings_default(&by_kind[i], (rp_kind)i);
    rp_config_apply(cfg, &by_kind[i]);
    by_kind[i].log_level = np->settings.log_level;
    by_kind[i].log_categories = np->settings.log_categories;
  }
  rv = rp_pool_sense_kind(np->core, by_kind);
  if (rv != 0) {
    snprintf(err, errlen, "cannot sense the kind: %s", rp_strerror(rv));
  }
  return rv;
}

/* net_init_handles opens the pool's own handles (net_pool_handles),
   counting each, and starts the send-queue flushers. */
static void net_init_handles(rp_net_pool *np) {
  uv_handle_t *handles[NET_POOL_HANDLES];
  size_t i;
  uv_udp_init_ex(np->loop, &np->lis_udp, AF_UNSPEC | UV_UDP_RECVMMSG);
  uv_tcp_init(np->loop, &np->lis_tcp);
  uv_timer_init(np->loop, &np->timer);
  uv_timer_init(np->loop, &np->check_timer);
  uv_prepare_init(np->loop, &np->flush_prepare);
  uv_check_init(np->loop, &np->flush_check);
  uv_idle_init(np->loop, &np->direct_idle);
  net_pool_handles(np, handles);
  for (i = 0; i < NET_POOL_HANDLES; ++i) {
    handles[i]->data = np;
    rp_net_handle_opened(np);
  }
  np->lis_tx = (rp_net_txsock){.udp = &np->lis_udp, .head = -1, .tail = -1};
  /* Neither keeps the loop alive on its own. */
  uv_prepare_start(&np->flush_prepare, rp_net_tx_prepare_cb);
  uv_check_start(&np->flush_check, rp_net_tx_check_cb);
  uv_unref((uv_handle_t *)&np->flush_prepare);
  uv_unref((uv_handle_t *)&np->flush_check);
}

/* net_listen_addr is the address |cfg| listens on (127.0.0.1:0 when it
   names none). */
static struct sockaddr_storage net_listen_addr(const rp_config *cfg) {
  struct sockaddr_storage listen;
  struct sockaddr_in sin = {.sin_family = AF_INET};
  if (cfg->has_listen) {
    return cfg->listen;
  }
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  memset(&listen, 0, sizeof(listen));
  memcpy(&listen, &sin, sizeof(sin));
  return listen;
}

/* net_run binds the listeners and starts the check timer (the first
   re-check due a recheck_interval after |now|) and discovery; on failure
   the pool is stopped (it frees itself once its handles closed) without
   touching the scores file of a pool that never ran. Returns 0 or the
   error of the failing step. */
static int net_run(rp_net_pool *np, const rp_config *cfg, rp_tstamp now,
                   char *err, size_t errlen) {
  struct sockaddr_storage listen = net_listen_addr(cfg);
  int rv = rp_net_bind(np, &listen, err, errlen);
  if (rv == 0) {
    np->next_recheck = now + np->recheck_interval;
    uv_timer_start(&np->check_timer, rp_net_check_timer_cb,
                   RP_NET_CHECK_TICK_MS, RP_NET_CHECK_TICK_MS);
    if (np->auto_on) {
      rv = rp_net_disc_start(np, cfg, err, errlen);
    }
  }
  if (rv != 0) {
    np->mem->free(np->scores_file, np->mem->user_data);
    np->scores_file = NULL;
    rp_net_pool_stop(np, NULL, NULL);
  }
  return rv;
}

int rp_net_pool_start(rp_net_pool **pnp, uv_loop_t *loop,
                      const rp_net_options *options, char *err, size_t errlen) {
  const rp_mem *mem = options && options->mem ? options->mem : rp_mem_default();
  const rp_config *cfg = options ? options->config : NULL;
  rp_net_pool *np;
  char msg[RP_CONFIG_ERRLEN];
  rp_tstamp now;
  int rv;

  if (!err || errlen == 0) {
    err = msg;
    errlen = sizeof(msg);
  }
  err[0] = '\0';
  if (!cfg || !loop || !pnp) {
    snprintf(err, errlen, "no config");
    return RP_ERR_INVALID_ARGUMENT;
  }
  np = mem->calloc(1, sizeof(*np), mem->user_data);
  if (!np) {
    return RP_ERR_NOMEM;
  }
  np->loop = loop;
  np->mem = mem;
  if (RAND_bytes(np->rand_buf, RP_NET_RAND_LEN) != 1) {
    snprintf(err, errlen, "no secure random bytes (RAND_bytes failed)");
    mem->free(np, mem->user_data);
    return RP_ERR_IO;
  }
  np->rand_pos = 0;
  rp_scores_init(&np->scores, mem);
  net_init_options(np, options, cfg);
  if ((rv = net_load_scores(np, options, cfg)) != 0 ||
      (rv = net_init_pretest(np, options, cfg, err, errlen)) != 0 ||
      (rv = rp_net_setup_upstreams(np, cfg, err, errlen)) != 0 ||
      (rv = net_alloc_buffers(np)) != 0 ||
      (rv = net_new_core(np, options, cfg, err, errlen)) != 0) {
    net_free(np);
    return rv;
  }
  /* From here on handles exist: failures close them through stop. */
  net_init_handles(np);
  now = rp_net_now();
  rv = net_run(np, cfg, now, err, errlen);
  if (rv == 0) {
    *pnp = np;
    rp_net_check_more(np, now);
  }
  return rv;
}

int rp_net_pool_get_address(const rp_net_pool *np,
                            struct sockaddr_storage *addr, socklen_t *plen) {
  *addr = np->lis_addr;
  *plen = np->lis_addrlen;
  return 0;
}

void rp_net_pool_format_address(const rp_net_pool *np, char *out, size_t cap) {
  rp_net_format_sockaddr(&np->lis_addr, out, cap);
}

rp_pool *rp_net_pool_get_core(rp_net_pool *np) { return np->core; }

size_t rp_net_pool_resolver_count(const rp_net_pool *np) { return np->nups; }

int rp_net_pool_get_resolver(const rp_net_pool *np, size_t i,
                             rp_net_resolver_info *info, rp_tstamp now) {
  const rp_net_upstream *up;
  if (i >= np->nups) {
    return RP_ERR_NOT_FOUND;
  }
  up = np->ups[i];
  *info = (rp_net_resolver_info){.name = up->name,
                                 .check = up->check,
                                 .resolver_id = up->resolver_id,
                                 .saved_score = up->saved_score,
                                 .last_error = up->last_error,
                                 .udp_ports = up->udp_ports};
  if (up->check == RP_NET_CHECK_PASSED &&
      rp_pool_get_resolver_stats(np->core, up->resolver_id, &info->stats,
                                 now) == 0) {
    info->has_stats = 1;
  }
  return 0;
}

void rp_net_pool_get_counters(const rp_net_pool *np,
                              rp_net_counters *counters) {
  *counters = np->counters;
}
