/*
 * doh.c: DNS over HTTPS (RFC 8484) on HTTP/2 (libnghttp2).
 *
 * IMPLEMENTATION NOTES
 * - One kept TLS connection per resolver with ALPN "h2" (dot.c's
 *   rp_net_tlsup_* open it, resolve host names and back off); every
 *   query is one POST stream (content-type application/dns-message), so
 *   many queries share the connection and answers come back in any
 *   order. Streams past the server's SETTINGS_MAX_CONCURRENT_STREAMS are
 *   queued by nghttp2; RP_NET_DOH_MAX_STREAMS bounds the total.
 * - The DNS ID on the wire is 0 (RFC 8484 4.1, cache friendly): each
 *   stream remembers the core's upstream ID and the answer gets it back
 *   before it is handed to the core, so the core matches it as usual.
 * - Status 200 with a body is an answer. 429 and 5xx are refusals for
 *   the core (RP_OUTCOME_HTTP_429, cap learning as for REFUSED); any
 *   other status is MALFORMED. A stream reset (RST_STREAM, or refused by
 *   a GOAWAY) fails its try with CONNECT_FAILED so the core places it
 *   elsewhere. After a GOAWAY no new stream is opened on the connection:
 *   new queries are held until its last stream ended and it is closed,
 *   then sent on a new connection (a drain lasts about one round trip;
 *   the core's per-try timeout covers a server that never finishes).
 * - Re-entrancy: answers are handed to the core from nghttp2 callbacks;
 *   the core may send at once. nghttp2_submit_request is allowed there,
 *   nghttp2_session_send is not: it runs once the outer nghttp2 call has
 *   returned. A connection that ends inside a callback is torn down the
 *   same way, after nghttp2 returns.
 * - Memory: one allocation per stream (the query copy and the answer
 *   body), freed when the stream closes.
 */
#include "net_internal.h"

#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* RP_NET_DOH_MAX_STREAMS bounds the streams open or queued on one
   connection; a send past it fails (the core places it elsewhere). */
#define RP_NET_DOH_MAX_STREAMS 4096u
/* DOH_BODY_MAX is the largest answer body (a DNS message). */
#define DOH_BODY_MAX 65535u
/* DOH_BODY_INITIAL is the first capacity of an answer body. */
#define DOH_BODY_INITIAL 512u
/* DOH_STATUS_OK, DOH_STATUS_TOO_MANY and DOH_STATUS_SERVER_ERROR are the
   HTTP statuses the transport tells apart (RFC 9110, RFC 6585). */
#define DOH_STATUS_OK 200
#define DOH_STATUS_TOO_MANY 429
#define DOH_STATUS_SERVER_ERROR 500
/* DOH_DRAIN_MAX is how long a connection may drain after a GOAWAY while
   queries wait for it; past it, it is closed (its streams fail) so the
   held queries go out on a new one. */
#define DOH_DRAIN_MAX (2 * RP_SECONDS)
/* DOH_PORT_HTTPS is the port left out of :authority. */
#define DOH_PORT_HTTPS 443
/* DOH_AUTHORITY_LEN is the room for host, brackets and port. */
#define DOH_AUTHORITY_LEN 280
/* DOH_LENGTH_LEN is the room for a content-length value. */
#define DOH_LENGTH_LEN 8
/* DOH_WINDOW is the connection and stream receive window we offer,
   bytes: large enough that answers never wait for WINDOW_UPDATE. */
#define DOH_WINDOW (1 << 20)
/* DOH_STATUS_NAME is the pseudo-header carrying the status. */
#define DOH_STATUS_NAME ":status"
/* DOH_ALPN is "h2" in ALPN wire format (RFC 7301). */
static const uint8_t doh_alpn[] = {2, 'h', '2'};

/* doh_stream is one query in flight. */
typedef struct doh_stream {
  struct doh_stream *prev, *next;
  /* upstream_id is the core's ID for the try. */
  uint16_t upstream_id;
  /* status is the HTTP status (0 until the headers came). */
  int status;
  /* q holds the query (ID 0), |qlen| bytes; |qoff| are sent. */
  size_t qlen, qoff;
  /* body holds |blen| bytes of the answer (|bcap| allocated). */
  uint8_t *body;
  size_t blen, bcap;
  /* overflow is 1 when the body grew past DOH_BODY_MAX. */
  int overflow;
  uint8_t q[];
} doh_stream;

/* doh_conn is the DoH state of one resolver (transport_data). */
typedef struct doh_conn {
  rp_net_tlsup base;
  nghttp2_session *ng;
  /* streams lists the streams of |ng|; nstreams counts them. */
  doh_stream *streams;
  size_t nstreams;
  /* in_ng counts nested nghttp2 calls; want_send asks for a send once
     they return; ending asks for a teardown with |end_outcome|. ng_now
     is the time of the outermost running nghttp2 call, for its
     callbacks (set before in_ng rises from 0). */
  int in_ng;
  rp_tstamp ng_now;
  int want_send;
  int ending;
  rp_outcome end_outcome;
  /* goaway is 1 once the server sent GOAWAY on this connection, at
     |goaway_at|. */
  int goaway;
  rp_tstamp goaway_at;
  /* held lists (FIFO, |nheld|) the queries that arrived while the
     connection drained after a GOAWAY or was closing; they are sent on
     the next connection once this one is closed. */
  doh_stream *held, *held_tail;
  size_t nheld;
  char authority[DOH_AUTHORITY_LEN];
} doh_conn;

static void doh_stream_free(doh_conn *d, doh_stream *s) {
  const rp_mem *mem = d->base.up->np->mem;
  mem->free(s->body, mem->user_data);
  mem->free(s, mem->user_data);
}

static void doh_unlink(doh_conn *d, doh_stream *s) {
  if (s->prev) {
    s->prev->next = s->next;
  } else {
    d->streams = s->next;
  }
  if (s->next) {
    s->next->prev = s->prev;
  }
  s->prev = s->next = NULL;
  --d->nstreams;
}

/* doh_teardown drops the session and fails every stream it carried. */
static void doh_teardown(doh_conn *d, rp_tstamp now) {
  rp_net_upstream *up = d->base.up;
  nghttp2_session *ng = d->ng;
  doh_stream *list = d->streams;
  rp_outcome outcome = d->end_outcome;
  d->ng = NULL;
  d->streams = NULL;
  d->nstreams = 0;
  d->ending = 0;
  d->goaway = 0;
  d->want_send = 0;
  if (ng) {
    nghttp2_session_del(ng);
  }
  while (list) {
    doh_stream *s = list;
    list = s->next;
    rp_net_upstream_on_error(up, s->upstream_id, outcome, now);
    doh_stream_free(d, s);
  }
}

/* doh_end records the end of the connection (already closing) and tears
   the session down now or after the running nghttp2 call. */
static void doh_end(doh_conn *d, rp_net_tls_end why, const char *reason,
                    rp_tstamp now) {
  d->end_outcome = rp_net_tlsup_on_end(&d->base, why, reason, now);
  d->ending = 1;
  if (d->in_ng == 0) {
    doh_teardown(d, now);
  }
}

/* doh_close_conn closes the connection on our side for |reason|. */
static void doh_close_conn(doh_conn *d, rp_net_tls_end why,
                           const char *reason, rp_tstamp now) {
  if (d->base.tls.state == RP_NET_TLS_CLOSED ||
      d->base.tls.state == RP_NET_TLS_CLOSING) {
    return;
  }
  rp_net_tls_close(&d->base.tls);
  doh_end(d, why, reason, now);
}

/* doh_after_ng runs what nghttp2 callbacks asked for, once the outer
   nghttp2 call has returned. */
static void doh_after_ng(doh_conn *d, rp_tstamp now) {
  if (d->in_ng > 0) {
    return;
  }
  if (d->ending) {
    doh_teardown(d, now);
    return;
  }
  while (d->ng && d->want_send && !d->ending) {
    int rv;
    d->want_send = 0;
    d->ng_now = now;
    ++d->in_ng;
    rv = nghttp2_session_send(d->ng);
    --d->in_ng;
    if (d->ending) {
      doh_teardown(d, now);
      return;
    }
    if (rv != 0) {
      doh_close_conn(d, RP_NET_TLS_END_IO, nghttp2_strerror(rv), now);
      return;
    }
  }
  if (d->ng && d->goaway && d->nstreams == 0) {
    doh_close_conn(d, RP_NET_TLS_END_EOF, "goaway", now);
  } else if (d->ng && !nghttp2_session_want_read(d->ng) &&
             !nghttp2_session_want_write(d->ng)) {
    doh_close_conn(d, RP_NET_TLS_END_EOF, "session finished", now);
  }
}

/* ------------------------------------------------------------------ */
/* nghttp2 callbacks                                                    */
/* ------------------------------------------------------------------ */

static ssize_t doh_send_cb(nghttp2_session *ng, const uint8_t *data,
                           size_t length, int flags, void *user_data) {
  doh_conn *d = user_data;
  int rv;
  (void)ng;
  (void)flags;
  if (d->ending) {
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  rv = rp_net_tls_write(&d->base.tls, data, length);
  if (rv == RP_ERR_FULL) {
    return NGHTTP2_ERR_WOULDBLOCK;
  }
  if (rv != 0 || d->ending) {
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  return (ssize_t)length;
}

static int doh_on_header_cb(nghttp2_session *ng, const nghttp2_frame *frame,
                            const uint8_t *name, size_t namelen,
                            const uint8_t *value, size_t valuelen,
                            uint8_t flags, void *user_data) {
  doh_stream *s;
  size_t i;
  int status = 0;
  (void)flags;
  (void)user_data;
  if (frame->hd.type != NGHTTP2_HEADERS ||
      namelen != sizeof(DOH_STATUS_NAME) - 1 ||
      memcmp(name, DOH_STATUS_NAME, namelen) != 0) {
    return 0;
  }
  s = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
  if (!s) {
    return 0;
  }
  for (i = 0; i < valuelen && i < 3; ++i) {
    if (value[i] < '0' || value[i] > '9') {
      return 0;
    }
    status = status * 10 + (value[i] - '0');
  }
  s->status = status;
  return 0;
}

static int doh_on_data_cb(nghttp2_session *ng, uint8_t flags, int32_t stream_id,
                          const uint8_t *data, size_t len, void *user_data) {
  doh_conn *d = user_data;
  const rp_mem *mem = d->base.up->np->mem;
  doh_stream *s = nghttp2_session_get_stream_user_data(ng, stream_id);
  (void)flags;
  if (!s || s->overflow) {
    return 0;
  }
  if (s->blen + len > DOH_BODY_MAX) {
    s->overflow = 1;
    return 0;
  }
  if (s->blen + len > s->bcap) {
    size_t ncap = s->bcap ? s->bcap : DOH_BODY_INITIAL;
    uint8_t *nb;
    while (ncap < s->blen + len) {
      ncap *= 2;
    }
    nb = mem->realloc(s->body, ncap, mem->user_data);
    if (!nb) {
      s->overflow = 1;
      return 0;
    }
    s->body = nb;
    s->bcap = ncap;
  }
  memcpy(s->body + s->blen, data, len);
  s->blen += len;
  return 0;
}

static int doh_on_frame_cb(nghttp2_session *ng, const nghttp2_frame *frame,
                           void *user_data) {
  doh_conn *d = user_data;
  rp_net_upstream *up = d->base.up;
  (void)ng;
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    if (!d->goaway) {
      d->goaway_at = d->ng_now;
    }
    d->goaway = 1;
    ++up->np->counters.doh_goaways;
    rp_net_log(up->np, RP_LOG_INFO,
               "ev=doh_goaway res=%s last_stream=%d error=%u streams=%zu",
               up->name, frame->goaway.last_stream_id, frame->goaway.error_code,
               d->nstreams);
  } else if (frame->hd.type == NGHTTP2_RST_STREAM) {
    ++up->np->counters.doh_resets;
  }
  return 0;
}

static int doh_on_close_cb(nghttp2_session *ng, int32_t stream_id,
                           uint32_t error_code, void *user_data) {
  doh_conn *d = user_data;
  rp_net_upstream *up = d->base.up;
  rp_net_pool *np = up->np;
  doh_stream *s = nghttp2_session_get_stream_user_data(ng, stream_id);
  rp_tstamp now = d->ng_now;
  if (!s) {
    return 0;
  }
  nghttp2_session_set_stream_user_data(ng, stream_id, NULL);
  doh_unlink(d, s);
  if (s->status == DOH_STATUS_OK && error_code == NGHTTP2_NO_ERROR &&
      !s->overflow && s->blen >= RP_DNS_HEADER_LEN) {
    rp_dns_set_id(s->body, s->upstream_id);
    rp_net_upstream_on_answer(up, s->body, s->blen, RP_ANSWER_STREAM, now);
  } else if (s->status == DOH_STATUS_TOO_MANY ||
             s->status >= DOH_STATUS_SERVER_ERROR) {
    ++np->counters.doh_http_refusals;
    rp_net_log(np, RP_LOG_DEBUG, "ev=doh_refused res=%s status=%d", up->name,
               s->status);
    rp_net_upstream_on_error(up, s->upstream_id, RP_OUTCOME_HTTP_429, now);
  } else if (error_code != NGHTTP2_NO_ERROR || s->status == 0) {
    rp_net_log(np, RP_LOG_DEBUG, "ev=doh_stream_reset res=%s error=%s",
               up->name, nghttp2_http2_strerror(error_code));
    rp_net_upstream_on_error(up, s->upstream_id, RP_OUTCOME_CONNECT_FAILED,
                             now);
  } else {
    rp_net_log(np, RP_LOG_INFO, "ev=doh_bad_answer res=%s status=%d len=%zu",
               up->name, s->status, s->blen);
    rp_net_upstream_on_error(up, s->upstream_id, RP_OUTCOME_MALFORMED, now);
  }
  doh_stream_free(d, s);
  return 0;
}

static ssize_t doh_read_cb(nghttp2_session *ng, int32_t stream_id, uint8_t *buf,
                           size_t length, uint32_t *data_flags,
                           nghttp2_data_source *source, void *user_data) {
  doh_stream *s = source->ptr;
  size_t n = s->qlen - s->qoff;
  (void)ng;
  (void)stream_id;
  (void)user_data;
  if (n > length) {
    n = length;
  }
  memcpy(buf, s->q + s->qoff, n);
  s->qoff += n;
  if (s->qoff == s->qlen) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
  }
  return (ssize_t)n;
}

/* doh_session_new creates the HTTP/2 session and queues its preface. */
static int doh_session_new(doh_conn *d) {
  nghttp2_session_callbacks *cbs;
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, DOH_WINDOW},
  };
  int rv;
  if (nghttp2_session_callbacks_new(&cbs) != 0) {
    return RP_ERR_NOMEM;
  }
  nghttp2_session_callbacks_set_send_callback(cbs, doh_send_cb);
  nghttp2_session_callbacks_set_on_header_callback(cbs, doh_on_header_cb);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs,
                                                            doh_on_data_cb);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, doh_on_frame_cb);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, doh_on_close_cb);
  rv = nghttp2_session_client_new(&d->ng, cbs, d);
  nghttp2_session_callbacks_del(cbs);
  if (rv != 0) {
    d->ng = NULL;
    return RP_ERR_NOMEM;
  }
  rv = nghttp2_submit_settings(d->ng, NGHTTP2_FLAG_NONE, settings,
                               sizeof(settings) / sizeof(settings[0]));
  if (rv == 0) {
    rv = nghttp2_session_set_local_window_size(d->ng, NGHTTP2_FLAG_NONE, 0,
                                               DOH_WINDOW);
  }
  if (rv != 0) {
    nghttp2_session_del(d->ng);
    d->ng = NULL;
    return RP_ERR_NOMEM;
  }
  d->goaway = 0;
  d->want_send = 1;
  return 0;
}

/* ------------------------------------------------------------------ */
/* TLS callbacks                                                        */
/* ------------------------------------------------------------------ */

static void doh_on_open(rp_net_tls *t, int resumed, rp_tstamp now) {
  doh_conn *d = t->user_data;
  size_t alen;
  const uint8_t *alpn = rp_net_tls_alpn(t, &alen);
  rp_net_tlsup_on_open(&d->base, resumed);
  if (!alpn || alen != sizeof(doh_alpn) - 1 ||
      memcmp(alpn, doh_alpn + 1, alen) != 0) {
    /* Counted as a TLS failure: the server does not speak HTTP/2. */
    d->base.opened = 0;
    rp_net_tls_close(t);
    doh_end(d, RP_NET_TLS_END_TLS, "server did not select ALPN h2", now);
    return;
  }
  d->want_send = 1;
  doh_after_ng(d, now);
}

static void doh_on_data(rp_net_tls *t, const uint8_t *data, size_t len,
                        rp_tstamp now) {
  doh_conn *d = t->user_data;
  ssize_t rv;
  if (!d->ng || d->ending) {
    return;
  }
  if (d->in_ng == 0) {
    d->ng_now = now;
  }
  ++d->in_ng;
  rv = nghttp2_session_mem_recv(d->ng, data, len);
  --d->in_ng;
  if (rv < 0 && !d->ending) {
    rp_net_tls_close(t);
    doh_end(d, RP_NET_TLS_END_IO, nghttp2_strerror((int)rv), now);
  }
  d->want_send = 1;
  doh_after_ng(d, now);
}

static void doh_on_end(rp_net_tls *t, rp_net_tls_end why, const char *reason,
                       rp_tstamp now) {
  doh_end(t->user_data, why, reason, now);
}

static void doh_submit_held(doh_conn *d, rp_tstamp now);

static void doh_on_closed(rp_net_tls *t) {
  doh_conn *d = t->user_data;
  if (d->held && !rp_net_up_gone(d->base.up)) {
    doh_submit_held(d, rp_net_now());
  }
  rp_net_up_handle_closed(d->base.up);
}

static const rp_net_tls_callbacks doh_tls_cb = {
    .on_open = doh_on_open,
    .on_data = doh_on_data,
    .on_end = doh_on_end,
    .on_closed = doh_on_closed,
};

/* ------------------------------------------------------------------ */
/* Transport                                                            */
/* ------------------------------------------------------------------ */

static int doh_open(rp_net_upstream *up, rp_tstamp now) {
  const char *name;
  doh_conn *d;
  (void)now;
  if (up->transport_data) {
    return 0;
  }
  d = (doh_conn *)rp_net_tlsup_new(up, sizeof(*d), &doh_tls_cb);
  if (!d) {
    return RP_ERR_NOMEM;
  }
  name = rp_net_tlsup_name(up);
  snprintf(d->authority, sizeof(d->authority), "%s%s%s",
           strchr(name, ':') ? "[" : "", name, strchr(name, ':') ? "]" : "");
  if (up->port != DOH_PORT_HTTPS) {
    size_t n = strlen(d->authority);
    snprintf(d->authority + n, sizeof(d->authority) - n, ":%u", up->port);
  }
  up->transport_data = d;
  return 0;
}

/* DOH_NV makes an nghttp2 header from two NUL-terminated strings;
   nghttp2 does not write through the pointers (NO_COPY flags are not
   used, so it copies them). */
#define DOH_NV(n, v, vlen)                                                     \
  {                                                                            \
    (uint8_t *)(uintptr_t)(n), (uint8_t *)(uintptr_t)(v), sizeof(n) - 1,       \
        (vlen), NGHTTP2_NV_FLAG_NONE                                           \
  }

/* doh_ensure_conn opens a connection and its session unless one is
   usable. Returns 0 or the outcome to fail a try with (as a positive
   rp_outcome). */
static int doh_ensure_conn(doh_conn *d, rp_tstamp now) {
  int rv;
  if (d->base.tls.state == RP_NET_TLS_CLOSED) {
    rv = rp_net_tlsup_connect(&d->base, doh_alpn, sizeof(doh_alpn), now);
    if (rv == 0 && !d->ng && d->base.tls.state != RP_NET_TLS_CLOSED) {
      rv = doh_session_new(d);
      if (rv != 0) {
        rp_net_tls_close(&d->base.tls);
      }
    }
    if (rv != 0 || !d->ng) {
      return rv == RP_ERR_TLS ? RP_OUTCOME_TLS_FAILED
                              : RP_OUTCOME_CONNECT_FAILED;
    }
  }
  if (!d->ng || d->base.tls.state == RP_NET_TLS_CLOSING) {
    return RP_OUTCOME_CONNECT_FAILED;
  }
  return 0;
}

/* doh_submit opens stream |s| on the current session (taking it) or
   fails its try. */
static void doh_submit(doh_conn *d, doh_stream *s, rp_tstamp now) {
  rp_net_upstream *up = d->base.up;
  char clen[DOH_LENGTH_LEN];
  nghttp2_data_provider prd;
  int32_t sid;
  int outcome = doh_ensure_conn(d, now);
  if (outcome != 0) {
    uint16_t id = s->upstream_id;
    doh_stream_free(d, s);
    rp_net_upstream_on_error(up, id, (rp_outcome)outcome, now);
    return;
  }
  snprintf(clen, sizeof(clen), "%zu", s->qlen);
  {
    const nghttp2_nv nva[] = {
        DOH_NV(":method", "POST", sizeof("POST") - 1),
        DOH_NV(":scheme", "https", sizeof("https") - 1),
        DOH_NV(":authority", d->authority, strlen(d->authority)),
        DOH_NV(":path", up->path, strlen(up->path)),
        DOH_NV("content-type", "application/dns-message",
               sizeof("application/dns-message") - 1),
        DOH_NV("accept", "application/dns-message",
               sizeof("application/dns-message") - 1),
        DOH_NV("content-length", clen, strlen(clen)),
    };
    prd.source.ptr = s;
    prd.read_callback = doh_read_cb;
    sid = nghttp2_submit_request(d->ng, NULL, nva, sizeof(nva) / sizeof(nva[0]),
                                 &prd, s);
  }
  if (sid < 0) {
    uint16_t id = s->upstream_id;
    doh_stream_free(d, s);
    ++up->np->counters.send_failures;
    rp_net_upstream_on_error(up, id, RP_OUTCOME_SEND_FAILED, now);
    return;
  }
  s->prev = NULL;
  s->next = d->streams;
  if (d->streams) {
    d->streams->prev = s;
  }
  d->streams = s;
  ++d->nstreams;
  d->want_send = 1;
}

/* doh_submit_held sends the queries held during a GOAWAY drain on a new
   connection (the old one is closed). */
static void doh_submit_held(doh_conn *d, rp_tstamp now) {
  doh_stream *list = d->held;
  d->held = d->held_tail = NULL;
  d->nheld = 0;
  while (list) {
    doh_stream *s = list;
    list = s->next;
    s->next = NULL;
    doh_submit(d, s, now);
  }
  doh_after_ng(d, now);
}

static int doh_send(rp_net_upstream *up, const uint8_t *data, size_t len,
                    uint16_t upstream_id, uint32_t flags, rp_tstamp now) {
  rp_net_pool *np = up->np;
  const rp_mem *mem = np->mem;
  doh_conn *d = up->transport_data;
  doh_stream *s;
  int draining;
  (void)flags;
  if (!d || len < RP_DNS_HEADER_LEN || len > UINT16_MAX ||
      d->nstreams + d->nheld >= RP_NET_DOH_MAX_STREAMS) {
    ++np->counters.send_failures;
    rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_SEND_FAILED, now);
    return 0;
  }
  s = mem->calloc(1, sizeof(*s) + len, mem->user_data);
  if (!s) {
    ++np->counters.send_failures;
    rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_SEND_FAILED, now);
    return 0;
  }
  s->upstream_id = upstream_id;
  s->qlen = len;
  memcpy(s->q, data, len);
  rp_dns_set_id(s->q, 0);
  /* After a GOAWAY the old connection takes no new stream: hold the query
     until it closed, then send it on a new one (doh_on_closed). */
  draining = d->goaway || d->ending ||
             (d->nheld > 0 && d->base.tls.state != RP_NET_TLS_CLOSED) ||
             d->base.tls.state == RP_NET_TLS_CLOSING;
  if (draining && d->base.tls.state != RP_NET_TLS_CLOSED) {
    if (d->held_tail) {
      d->held_tail->next = s;
    } else {
      d->held = s;
    }
    d->held_tail = s;
    ++d->nheld;
    if (d->goaway && !d->ending && now > d->goaway_at + DOH_DRAIN_MAX) {
      doh_close_conn(d, RP_NET_TLS_END_IO, "goaway drain too long", now);
    }
    return 0;
  }
  doh_submit(d, s, now);
  doh_after_ng(d, now);
  return 0;
}

static void doh_close(rp_net_upstream *up) {
  doh_conn *d = up->transport_data;
  if (d) {
    rp_net_tlsup_close(&d->base);
  }
}

static void doh_free(rp_net_upstream *up) {
  doh_conn *d = up->transport_data;
  if (!d) {
    return;
  }
  if (d->ng) {
    nghttp2_session_del(d->ng);
    d->ng = NULL;
  }
  while (d->streams) {
    doh_stream *s = d->streams;
    d->streams = s->next;
    doh_stream_free(d, s);
  }
  while (d->held) {
    doh_stream *s = d->held;
    d->held = s->next;
    doh_stream_free(d, s);
  }
  rp_net_tlsup_free(&d->base);
  up->np->mem->free(d, up->np->mem->user_data);
  up->transport_data = NULL;
}

const rp_net_transport rp_net_transport_doh = {
    .name = "doh",
    .resolver_flags = RP_RESOLVER_STREAM,
    .open = doh_open,
    .send = doh_send,
    .close = doh_close,
    .free = doh_free,
};
