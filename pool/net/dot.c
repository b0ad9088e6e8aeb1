/*
 * dot.c: DNS over TLS (RFC 7858) and the connection handling DoT and DoH
 * share (rp_net_tlsup_*).
 *
 * IMPLEMENTATION NOTES
 * - One kept TLS connection per resolver, opened on the first send.
 *   Queries are framed with the two-byte length of RFC 1035 4.2.2 and
 *   pipelined; answers are taken in any order (RFC 7766 6.2.1.1, RFC
 *   7858 3.3) and matched by the core on ID and question. A bitmap of
 *   the IDs in flight lets a lost connection fail exactly its tries.
 * - Queries written before the handshake ends are kept by the TLS layer
 *   and sent after it, so the first query costs one connection setup.
 * - Failures: a connection that fails to open (TCP or TLS) fails its
 *   tries (TLS_FAILED for a TLS failure, CONNECT_FAILED otherwise) and
 *   is retried after a backoff of 100 ms doubling to 10 s; sends during
 *   the backoff fail at once so the core places them elsewhere. A
 *   connection that worked and then closed (idle timeout, server
 *   restart) fails its tries and is reopened by the next send. A query
 *   sent while the old connection's handle is still closing (the core's
 *   resends of the tries just failed) is held and sent on the new one,
 *   so one reset costs each query one try, not the resolver all of its.
 * - Host names (dot://dns.example) are resolved once with
 *   uv_getaddrinfo (the libuv thread pool; the loop does not block).
 * - Verified name: the NAME of dot://NAME@IP:PORT, else the config's
 *   tls_name, else the host.
 */
#include "net_internal.h"

#include <netdb.h>
#include <stdio.h>
#include <string.h>

/* DOT_PREFIX_LEN is the length prefix of a frame. */
#define DOT_PREFIX_LEN RP_TCPFRAME_PREFIX_LEN

/* ------------------------------------------------------------------ */
/* Shared by DoT and DoH                                                */
/* ------------------------------------------------------------------ */

void rp_net_tlsup_init(rp_net_tlsup *b, rp_net_upstream *up,
                       const rp_net_tls_callbacks *cb) {
  memset(b, 0, sizeof(*b));
  b->up = up;
  b->retry_at = RP_TSTAMP_UNSET;
  rp_net_tls_init(&b->tls, cb, up->np->mem, b);
  if (up->has_addr) {
    b->addr = up->addr;
    b->has_addr = 1;
  }
}

rp_net_tlsup *rp_net_tlsup_new(rp_net_upstream *up, size_t size,
                               const rp_net_tls_callbacks *cb) {
  const rp_mem *mem = up->np->mem;
  rp_net_tlsup *b = mem->calloc(1, size, mem->user_data);
  if (b) {
    rp_net_tlsup_init(b, up, cb);
  }
  return b;
}

const char *rp_net_tlsup_name(const rp_net_upstream *up) {
  if (up->tls_name && up->tls_name[0]) {
    return up->tls_name;
  }
  if (up->np->tls_name && up->np->tls_name[0]) {
    return up->np->tls_name;
  }
  return up->host;
}

/* tlsup_fail_open ends a connection attempt that never reached the
   socket: the backoff applies as for a failed connect. */
static void tlsup_fail_open(rp_net_tlsup *b, const char *reason,
                            rp_tstamp now) {
  rp_net_tls_close(&b->tls);
  if (b->tls.cb->on_end) {
    b->tls.cb->on_end(&b->tls, RP_NET_TLS_END_CONNECT, reason, now);
  }
}

static void tlsup_gai_cb(uv_getaddrinfo_t *req, int status,
                         struct addrinfo *res) {
  rp_net_tlsup *b = req->data;
  rp_net_upstream *up = b->up;
  rp_net_pool *np = up->np;
  b->resolving = 0;
  if (status == 0 && res && res->ai_addrlen <= sizeof(b->addr)) {
    memcpy(&b->addr, res->ai_addr, res->ai_addrlen);
    b->has_addr = 1;
  }
  uv_freeaddrinfo(res);
  if (!rp_net_up_gone(up) && b->tls.state == RP_NET_TLS_PREPARED) {
    if (!b->has_addr) {
      tlsup_fail_open(b, status ? uv_err_name(status) : "no address",
                      rp_net_now());
    } else if (rp_net_tls_connect(&b->tls, np->loop,
                                  (const struct sockaddr *)&b->addr) != 0) {
      if (b->tls.state == RP_NET_TLS_CLOSING) {
        rp_net_up_handle_opened(up);
      }
      tlsup_fail_open(b, "socket", rp_net_now());
    } else {
      rp_net_up_handle_opened(up);
    }
  }
  rp_net_up_handle_closed(up);
}

int rp_net_tlsup_connect(rp_net_tlsup *b, const uint8_t *alpn, size_t alpn_len,
                         rp_tstamp now) {
  rp_net_upstream *up = b->up;
  rp_net_pool *np = up->np;
  struct addrinfo hints;
  char port[8];
  int rv;
  if (b->tls.state != RP_NET_TLS_CLOSED) {
    return b->tls.state == RP_NET_TLS_CLOSING ? RP_ERR_IO : 0;
  }
  if (b->retry_at != RP_TSTAMP_UNSET && now < b->retry_at) {
    return RP_ERR_FULL;
  }
  if (!np->tls_ctx) {
    return RP_ERR_TLS;
  }
  rv = rp_net_tls_start(&b->tls, np->tls_ctx, rp_net_tlsup_name(up), alpn,
                        alpn_len, &b->session);
  if (rv != 0) {
    rp_net_log(np, RP_LOG_WARN, "ev=tls_setup_failed res=%s name=%s err=%s",
               up->name, rp_net_tlsup_name(up), rp_strerror(rv));
    return rv;
  }
  b->opened = 0;
  if (b->has_addr) {
    rv = rp_net_tls_connect(&b->tls, np->loop,
                            (const struct sockaddr *)&b->addr);
    if (b->tls.state != RP_NET_TLS_CLOSED) {
      rp_net_up_handle_opened(up);
    }
    if (rv != 0) {
      /* No socket: back off as after a failed connect. */
      b->backoff = b->backoff ? b->backoff * 2 : RP_NET_TLS_BACKOFF_MIN;
      if (b->backoff > RP_NET_TLS_BACKOFF_MAX) {
        b->backoff = RP_NET_TLS_BACKOFF_MAX;
      }
      b->retry_at = now + b->backoff;
    }
    return rv;
  }
  if (b->resolving) {
    return 0;
  }
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  snprintf(port, sizeof(port), "%u", up->port);
  b->gai.data = b;
  rv = uv_getaddrinfo(np->loop, &b->gai, tlsup_gai_cb, up->host, port, &hints);
  if (rv != 0) {
    rp_net_tls_close(&b->tls);
    return rp_net_err_from_uv(rv);
  }
  b->resolving = 1;
  rp_net_up_handle_opened(up);
  return 0;
}

rp_outcome rp_net_tlsup_on_end(rp_net_tlsup *b, rp_net_tls_end why,
                               const char *reason, rp_tstamp now) {
  rp_net_upstream *up = b->up;
  rp_net_pool *np = up->np;
  rp_outcome outcome = RP_OUTCOME_CONNECT_FAILED;
  const char *what = "connection_closed";
  switch (why) {
  case RP_NET_TLS_END_CONNECT:
    what = "connect_failed";
    ++np->counters.tcp_connect_failures;
    break;
  case RP_NET_TLS_END_TLS:
    what = "tls_failed";
    outcome = RP_OUTCOME_TLS_FAILED;
    ++np->counters.tls_failures;
    /* Do not offer a session the server may have been the cause of. */
    rp_net_tlsup_free(b);
    break;
  case RP_NET_TLS_END_EOF:
  case RP_NET_TLS_END_IO:
    break;
  }
  if (b->opened) {
    /* It worked: reopen at the next send. */
    b->backoff = 0;
    b->retry_at = RP_TSTAMP_UNSET;
  } else {
    b->backoff = b->backoff ? b->backoff * 2 : RP_NET_TLS_BACKOFF_MIN;
    if (b->backoff > RP_NET_TLS_BACKOFF_MAX) {
      b->backoff = RP_NET_TLS_BACKOFF_MAX;
    }
    b->retry_at = now + b->backoff;
  }
  snprintf(up->last_error, sizeof(up->last_error), "%s: %s", what, reason);
  rp_net_log(
      np, why == RP_NET_TLS_END_TLS || !b->opened ? RP_LOG_WARN : RP_LOG_DEBUG,
      "ev=%s res=%s name=%s reason=\"%s\" backoff_ms=%llu", what, up->name,
      rp_net_tlsup_name(up), reason,
      (unsigned long long)(b->opened ? 0 : b->backoff / RP_MILLISECONDS));
  b->opened = 0;
  return outcome;
}

void rp_net_tlsup_on_open(rp_net_tlsup *b, int resumed) {
  rp_net_pool *np = b->up->np;
  b->opened = 1;
  b->backoff = 0;
  b->retry_at = RP_TSTAMP_UNSET;
  ++np->counters.tls_handshakes;
  if (resumed) {
    ++np->counters.tls_resumed;
  }
  rp_net_log(np, RP_LOG_DEBUG,
             "ev=tls_connected res=%s resumed=%d had_session=%d", b->up->name,
             resumed, b->session != NULL);
}

void rp_net_tlsup_close(rp_net_tlsup *b) {
  if (b->resolving) {
    /* The callback still runs (UV_ECANCELED) and releases the count. */
    uv_cancel((uv_req_t *)&b->gai);
  }
  rp_net_tls_close(&b->tls);
}

void rp_net_tlsup_free(rp_net_tlsup *b) {
  if (b->session) {
    SSL_SESSION_free(b->session);
    b->session = NULL;
  }
}

/* ------------------------------------------------------------------ */
/* DoT                                                                  */
/* ------------------------------------------------------------------ */

/* dot_conn is the DoT state of one resolver (transport_data). */
typedef struct dot_conn {
  rp_net_tlsup base;
  /* ids marks the upstream IDs in flight on the connection. */
  uint8_t ids[RP_NET_IDMAP_LEN];
  /* rframe splits the decrypted bytes into answers, in |rbuf|. */
  rp_tcpframe rframe;
  uint8_t rbuf[RP_NET_STREAM_FRAME_MAX];
  /* frame is where one query is framed before it is written. */
  uint8_t frame[RP_NET_STREAM_FRAME_MAX];
  /* held keeps |held_len| bytes of framed queries sent while the
     connection was closing; they go out on the next one (dot_on_closed).
     Their IDs are marked in |ids|. */
  uint8_t *held;
  size_t held_len;
  size_t held_cap;
  /* failing is the copy of |ids| a failure walks: the core's resends
     during the walk mark new IDs that this failure must not take. */
  uint8_t failing[RP_NET_IDMAP_LEN];
} dot_conn;

static void dot_fail_inflight(dot_conn *d, rp_outcome outcome,
                              rp_tstamp now) {
  rp_net_upstream *up = d->base.up;
  size_t i;
  memcpy(d->failing, d->ids, sizeof(d->ids));
  memset(d->ids, 0, sizeof(d->ids));
  for (i = 0; i < RP_NET_IDMAP_LEN; ++i) {
    uint8_t bits = d->failing[i];
    unsigned bit;
    if (!bits) {
      continue;
    }
    for (bit = 0; bit < 8; ++bit) {
      if (bits & (1u << bit)) {
        rp_net_upstream_on_error(up, (uint32_t)(i * 8 + bit), outcome, now);
      }
    }
  }
}

static void dot_on_open(rp_net_tls *t, int resumed, rp_tstamp now) {
  (void)now;
  rp_net_tlsup_on_open(t->user_data, resumed);
}

static void dot_on_data(rp_net_tls *t, const uint8_t *data, size_t len,
                        rp_tstamp now) {
  dot_conn *d = t->user_data;
  rp_net_upstream *up = d->base.up;
  while (len > 0 && t->state == RP_NET_TLS_OPEN) {
    size_t take = rp_tcpframe_feed(&d->rframe, data, len);
    const uint8_t *msg;
    size_t mlen;
    int rv;
    data += take;
    len -= take;
    while (t->state == RP_NET_TLS_OPEN) {
      rv = rp_tcpframe_next(&d->rframe, &msg, &mlen);
      if (rv == 0) {
        break;
      }
      if (rv < 0) {
        /* A zero length; with a buffer of RP_NET_STREAM_FRAME_MAX no
           length is too large. */
        rp_net_log(up->np, RP_LOG_WARN, "ev=dot_bad_frame res=%s", up->name);
        rp_net_tls_close(t);
        dot_fail_inflight(d, RP_OUTCOME_MALFORMED, now);
        return;
      }
      if (mlen >= 2) {
        uint16_t id = rp_dns_get_id(msg);
        d->ids[id >> 3] &= (uint8_t) ~(1u << (id & 7u));
      }
      rp_net_upstream_on_answer(up, msg, mlen, RP_ANSWER_STREAM, now);
    }
  }
}

static void dot_on_end(rp_net_tls *t, rp_net_tls_end why, const char *reason,
                       rp_tstamp now) {
  dot_conn *d = t->user_data;
  rp_outcome outcome = rp_net_tlsup_on_end(&d->base, why, reason, now);
  rp_tcpframe_reset(&d->rframe);
  dot_fail_inflight(d, outcome, now);
}

/* dot_send_held sends the queries held while the last connection closed
   on a new one, or fails them. */
static void dot_send_held(dot_conn *d, rp_tstamp now) {
  rp_net_upstream *up = d->base.up;
  int rv = rp_net_tlsup_connect(&d->base, NULL, 0, now);
  if (rv == 0) {
    rv = rp_net_tls_write(&d->base.tls, d->held, d->held_len);
  }
  d->held_len = 0;
  if (rv != 0) {
    ++up->np->counters.send_failures;
    dot_fail_inflight(d, rv == RP_ERR_TLS ? RP_OUTCOME_TLS_FAILED
                                          : RP_OUTCOME_CONNECT_FAILED,
                      now);
  }
}

static void dot_on_closed(rp_net_tls *t) {
  dot_conn *d = t->user_data;
  /* A connection closed for a bad frame (dot_on_data) ends without
     on_end: what it left in the framer, and the framer's error, must not
     meet the next connection's bytes. */
  rp_tcpframe_reset(&d->rframe);
  if (d->held_len > 0 && !rp_net_up_gone(d->base.up)) {
    dot_send_held(d, rp_net_now());
  }
  rp_net_up_handle_closed(d->base.up);
}

/* dot_hold keeps a framed query of |len| bytes (in d->frame) for the next
   connection. Returns 0 or RP_ERR_FULL / RP_ERR_NOMEM. */
static int dot_hold(dot_conn *d, size_t len) {
  const rp_mem *mem = d->base.up->np->mem;
  if (d->held_len + len > RP_NET_TLS_MAX_PENDING) {
    return RP_ERR_FULL;
  }
  if (d->held_len + len > d->held_cap) {
    size_t cap = d->held_cap ? d->held_cap : 4096u;
    uint8_t *p;
    while (cap < d->held_len + len) {
      cap *= 2;
    }
    p = mem->realloc(d->held, cap, mem->user_data);
    if (!p) {
      return RP_ERR_NOMEM;
    }
    d->held = p;
    d->held_cap = cap;
  }
  memcpy(d->held + d->held_len, d->frame, len);
  d->held_len += len;
  return 0;
}

static const rp_net_tls_callbacks dot_tls_cb = {
    .on_open = dot_on_open,
    .on_data = dot_on_data,
    .on_end = dot_on_end,
    .on_closed = dot_on_closed,
};

static int dot_open(rp_net_upstream *up, rp_tstamp now) {
  dot_conn *d;
  (void)now;
  if (up->transport_data) {
    return 0;
  }
  d = (dot_conn *)rp_net_tlsup_new(up, sizeof(*d), &dot_tls_cb);
  if (!d) {
    return RP_ERR_NOMEM;
  }
  rp_tcpframe_init(&d->rframe, d->rbuf, sizeof(d->rbuf));
  up->transport_data = d;
  return 0;
}

static int dot_send(rp_net_upstream *up, const uint8_t *data, size_t len,
                    uint16_t upstream_id, uint32_t flags, rp_tstamp now) {
  rp_net_pool *np = up->np;
  dot_conn *d = up->transport_data;
  int rv;
  (void)flags;
  if (!d || len == 0 || len > UINT16_MAX) {
    rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_SEND_FAILED, now);
    return 0;
  }
  d->frame[0] = (uint8_t)(len >> 8);
  d->frame[1] = (uint8_t)len;
  memcpy(d->frame + DOT_PREFIX_LEN, data, len);
  if (d->base.tls.state == RP_NET_TLS_CLOSING) {
    /* The connection ended and its handle is still closing (a reset found
       while sending, or the resends of its own failed tries): keep the
       query for the next connection rather than fail it at once. */
    rv = dot_hold(d, len + DOT_PREFIX_LEN);
    if (rv != 0) {
      ++np->counters.send_failures;
      rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_SEND_FAILED, now);
      return 0;
    }
    d->ids[upstream_id >> 3] |= (uint8_t)(1u << (upstream_id & 7u));
    return 0;
  }
  rv = rp_net_tlsup_connect(&d->base, NULL, 0, now);
  if (rv != 0) {
    rp_net_upstream_on_error(up, upstream_id,
                             rv == RP_ERR_TLS ? RP_OUTCOME_TLS_FAILED
                                              : RP_OUTCOME_CONNECT_FAILED,
                             now);
    return 0;
  }
  /* Mark first: a write that fails ends the connection, which fails the
     marked tries. */
  d->ids[upstream_id >> 3] |= (uint8_t)(1u << (upstream_id & 7u));
  rv = rp_net_tls_write(&d->base.tls, d->frame, len + DOT_PREFIX_LEN);
  if (rv != 0) {
    d->ids[upstream_id >> 3] &= (uint8_t) ~(1u << (upstream_id & 7u));
    ++np->counters.send_failures;
    rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_SEND_FAILED, now);
  }
  return 0;
}

static void dot_close(rp_net_upstream *up) {
  dot_conn *d = up->transport_data;
  if (d) {
    rp_net_tlsup_close(&d->base);
  }
}

static void dot_free(rp_net_upstream *up) {
  dot_conn *d = up->transport_data;
  if (d) {
    rp_net_tlsup_free(&d->base);
    up->np->mem->free(d->held, up->np->mem->user_data);
    up->np->mem->free(d, up->np->mem->user_data);
    up->transport_data = NULL;
  }
}

const rp_net_transport rp_net_transport_dot = {
    .name = "dot",
    .resolver_flags = RP_RESOLVER_STREAM,
    .open = dot_open,
    .send = dot_send,
    .close = dot_close,
    .free = dot_free,
};
