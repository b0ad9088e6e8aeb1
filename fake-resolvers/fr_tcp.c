/*
 * fr_tcp.c: the TCP side of the fake resolvers' server (fr_server.h,
 * private structs in fr_server_internal.h).
 *
 * It owns the accepted connections: their lifetime (a connection is freed
 * only when libuv has closed it and no delayed reply, upstream entry or
 * write still refers to it; when the client half-closes, pending answers
 * are still sent, then it is closed), the RFC 7766 framing (two-byte
 * length prefix, several queries per connection; each connection
 * accumulates bytes and takes out every complete frame), the writes of
 * replies (as they become ready, so delayed answers may overtake each
 * other: RFC 7766 section 7 allows it, clients match by ID) and the sweep
 * that closes idle connections.
 */
/* sendmmsg(2) and struct mmsghdr are Linux extensions. */
#define _GNU_SOURCE

#include "fr_server_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* TCP connections: lifetime                                           */
/* ------------------------------------------------------------------ */

static void conn_maybe_free(fr_conn *c) {
  fr_res *res = c->res;

  if (!c->closed || c->refs != 0) {
    return;
  }
  if (c->prev != NULL) {
    c->prev->next = c->next;
  } else {
    res->conns = c->next;
  }
  if (c->next != NULL) {
    c->next->prev = c->prev;
  }
  --res->nconns;
  free(c->buf);
  free(c);
}

static void on_conn_closed(uv_handle_t *h) {
  fr_conn *c = h->data;

  c->closed = 1;
  conn_maybe_free(c);
}

void fr_conn_close(fr_conn *c) {
  if (c->closing) {
    return;
  }
  c->closing = 1;
  uv_close((uv_handle_t *)&c->handle, on_conn_closed);
}

void fr_conn_ref(fr_conn *c) {
  if (c != NULL) {
    ++c->refs;
  }
}

void fr_conn_unref(fr_conn *c) {
  if (c == NULL) {
    return;
  }
  assert(c->refs > 0);
  --c->refs;
  if (c->closed) {
    conn_maybe_free(c);
  } else if (c->eof && c->refs == 0) {
    fr_conn_close(c);
  }
}

/* ------------------------------------------------------------------ */
/* Writing replies                                                      */
/* ------------------------------------------------------------------ */

static void on_tcp_written(uv_write_t *req, int status) {
  fr_write_req *w = req->data;
  fr_conn *c = w->conn;

  (void)status;
  --c->writes;
  free(w);
  fr_conn_unref(c);
}

void fr_tcp_deliver(fr_res *res, fr_conn *c, const uint8_t *data, size_t len,
                    fr_reply_kind kind) {
  fr_write_req *w;
  uv_buf_t buf;

  if (c->closing) {
    return; /* the client is gone: nobody to count it for */
  }
  if (c->writes >= FR_SERVER_TCP_WRITES_MAX) {
    ++res->counts.overflow;
    return;
  }
  w = malloc(sizeof(*w) + FR_TCP_PREFIX + len);
  if (w == NULL) {
    ++res->counts.overflow;
    return;
  }
  w->conn = c;
  w->len = FR_TCP_PREFIX + len;
  w->data[0] = (uint8_t)(len >> FR_BYTE_BITS);
  w->data[1] = (uint8_t)(len & FR_BYTE_MASK);
  memcpy(w->data + FR_TCP_PREFIX, data, len);
  w->req.data = w;
  buf = uv_buf_init((char *)w->data, (unsigned)w->len);
  if (uv_write(&w->req, (uv_stream_t *)&c->handle, &buf, 1, on_tcp_written) !=
      0) {
    free(w);
    ++res->counts.overflow;
    return;
  }
  ++c->writes;
  fr_conn_ref(c);
  c->last_active = fr_now_ns();
  fr_reply_count(res, kind);
}

/* ------------------------------------------------------------------ */
/* Reading: framing and the listener                                   */
/* ------------------------------------------------------------------ */

static void on_tcp_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  fr_conn *c = h->data;

  (void)suggested;
  assert(c->len < c->cap);
  *buf = uv_buf_init((char *)c->buf + c->len, (unsigned)(c->cap - c->len));
}

/* conn_frames handles every complete frame in |c|'s buffer and makes room
   for the next one. Returns 0, or -1 when the connection must close. */
static int conn_frames(fr_conn *c) {
  size_t off = 0;
  size_t need;

  while (c->len - off >= FR_TCP_PREFIX) {
    size_t flen = ((size_t)c->buf[off] << FR_BYTE_BITS) | c->buf[off + 1];
    fr_dest dest = {.conn = c};
    if (flen == 0) {
      ++c->res->counts.queries;
      ++c->res->counts.malformed;
      off += FR_TCP_PREFIX;
      continue;
    }
    if (c->len - off < FR_TCP_PREFIX + flen) {
      break;
    }
    fr_server_handle_query(c->res, &dest, c->buf + off + FR_TCP_PREFIX, flen);
    off += FR_TCP_PREFIX + flen;
  }
  if (off > 0) {
    memmove(c->buf, c->buf + off, c->len - off);
    c->len -= off;
  }
  need = FR_TCP_PREFIX;
  if (c->len >= FR_TCP_PREFIX) {
    need += ((size_t)c->buf[0] << FR_BYTE_BITS) | c->buf[1];
  }
  if (need > c->cap) {
    uint8_t *nb = realloc(c->buf, need);
    if (nb == NULL) {
      ++c->res->counts.overflow;
      return -1;
    }
    c->buf = nb;
    c->cap = need;
  }
  return 0;
}

static void on_tcp_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  fr_conn *c = s->data;

  (void)buf;
  if (nread < 0) {
    uv_read_stop(s);
    if (nread == UV_EOF && c->refs > 0) {
      c->eof = 1; /* answers still due: send them, then close */
    } else {
      fr_conn_close(c);
    }
    return;
  }
  c->len += (size_t)nread;
  c->last_active = fr_now_ns();
  if (conn_frames(c) != 0) {
    uv_read_stop(s);
    fr_conn_close(c);
  }
}

void fr_tcp_on_connection(uv_stream_t *listener, int status) {
  fr_res *res = listener->data;
  fr_conn *c;

  if (status < 0) {
    return;
  }
  c = calloc(1, sizeof(*c));
  if (c == NULL) {
    ++res->counts.overflow;
    return;
  }
  c->buf = malloc(FR_TCP_BUF_INIT);
  if (c->buf == NULL || uv_tcp_init(res->srv->loop, &c->handle) != 0) {
    free(c->buf);
    free(c);
    ++res->counts.overflow;
    return;
  }
  c->cap = FR_TCP_BUF_INIT;
  c->res = res;
  c->last_active = fr_now_ns();
  c->handle.data = c;
  c->next = res->conns;
  if (res->conns != NULL) {
    res->conns->prev = c;
  }
  res->conns = c;
  ++res->nconns;
  if (uv_accept(listener, (uv_stream_t *)&c->handle) != 0) {
    fr_conn_close(c);
    return;
  }
  if (res->nconns > FR_SERVER_TCP_CONNS_MAX || res->srv->closing) {
    ++res->counts.overflow;
    fr_conn_close(c);
    return;
  }
  uv_tcp_nodelay(&c->handle, 1);
  if (uv_read_start((uv_stream_t *)&c->handle, on_tcp_alloc, on_tcp_read) !=
      0) {
    fr_conn_close(c);
  }
}

/* on_sweep_timer closes connections idle for FR_TCP_IDLE_TIMEOUT with
   nothing pending. */
void fr_tcp_on_sweep_timer(uv_timer_t *t) {
  fr_server *srv = t->data;
  rp_tstamp now = fr_now_ns();
  size_t i;

  for (i = 0; i < srv->nres; ++i) {
    fr_conn *c;
    for (c = srv->res[i].conns; c != NULL; c = c->next) {
      if (!c->closing && c->refs == 0 &&
          rp_tstamp_elapsed(c->last_active, FR_TCP_IDLE_TIMEOUT, now)) {
        fr_conn_close(c);
      }
    }
  }
}
