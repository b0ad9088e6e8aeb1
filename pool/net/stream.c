/*
 * stream.c: length-prefixed DNS over a TCP connection.
 *
 * IMPLEMENTATION NOTES
 * - Reading: libuv reads straight into the framer's free room
 *   (tcpframe.h); every whole frame is handed up, and the framer moves
 *   the remainder to the front before the next read. A zero length
 *   prefix is a protocol violation and ends the stream.
 * - Writing: with nothing queued the frame goes out by uv_try_write (no
 *   copy). Otherwise, or for what the kernel did not take, the bytes are
 *   appended to the accumulating buffer, which is handed to uv_write when
 *   the previous write completes (double buffering: one write request).
 * - Closing frees the buffers in the close callback, after libuv has
 *   cancelled the pending write, so no callback sees freed memory.
 */
#include "stream.h"

#include <string.h>

/* STREAM_WBUF_INITIAL is the first capacity of a write buffer. */
#define STREAM_WBUF_INITIAL 4096u
/* STREAM_PREFIX_LEN is the length prefix of a frame. */
#define STREAM_PREFIX_LEN RP_TCPFRAME_PREFIX_LEN

void rp_net_stream_init(rp_net_stream *s, const rp_net_stream_callbacks *cb,
                        const rp_mem *mem, void *user_data) {
  *s = (rp_net_stream){.cb = cb,
                       .mem = mem,
                       .user_data = user_data,
                       .state = RP_NET_STREAM_CLOSED,
                       .wbusy = -1,
                       .max_pending = RP_NET_STREAM_MAX_PENDING};
}

/* stream_unqueued takes |n| written or dropped bytes off the shared
   total. */
static void stream_unqueued(rp_net_stream *s, size_t n) {
  if (s->pending_total) {
    *s->pending_total -= n;
  }
}

static void stream_free_buffers(rp_net_stream *s) {
  stream_unqueued(s, s->wlen[0] + s->wlen[1]);
  s->mem->free(s->rframe.buf, s->mem->user_data);
  s->mem->free(s->wbuf[0], s->mem->user_data);
  s->mem->free(s->wbuf[1], s->mem->user_data);
  s->rframe = (rp_tcpframe){.buf = NULL};
  s->wbuf[0] = s->wbuf[1] = NULL;
  s->wlen[0] = s->wlen[1] = 0;
  s->wcap[0] = s->wcap[1] = 0;
  s->wbusy = -1;
}

static void stream_on_close(uv_handle_t *h) {
  rp_net_stream *s = h->data;
  stream_free_buffers(s);
  s->state = RP_NET_STREAM_CLOSED;
  if (s->cb->on_closed) {
    s->cb->on_closed(s);
  }
}

void rp_net_stream_close(rp_net_stream *s) {
  if (s->state == RP_NET_STREAM_CLOSED || s->state == RP_NET_STREAM_CLOSING) {
    return;
  }
  s->state = RP_NET_STREAM_CLOSING;
  uv_close((uv_handle_t *)&s->tcp, stream_on_close);
}

/* stream_end closes an open stream and reports |uverr|. */
static void stream_end(rp_net_stream *s, int uverr, rp_tstamp now) {
  if (s->state != RP_NET_STREAM_OPEN) {
    return;
  }
  rp_net_stream_close(s);
  if (s->cb->on_end) {
    s->cb->on_end(s, uverr, now);
  }
}

static int stream_alloc_buffers(rp_net_stream *s) {
  uint8_t *rbuf = s->mem->malloc(RP_NET_STREAM_FRAME_MAX, s->mem->user_data);
  if (!rbuf) {
    return RP_ERR_NOMEM;
  }
  rp_tcpframe_init(&s->rframe, rbuf, RP_NET_STREAM_FRAME_MAX);
  s->wbusy = -1;
  return 0;
}

static void stream_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  rp_net_stream *s = h->data;
  size_t room;
  (void)suggested;
  buf->base = (char *)rp_tcpframe_space(&s->rframe, &room);
  buf->len = room;
}

static void stream_read_cb(uv_stream_t *h, ssize_t nread, const uv_buf_t *buf) {
  rp_net_stream *s = h->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  const uint8_t *msg;
  size_t mlen;
  int rv;
  (void)buf;
  if (nread < 0) {
    stream_end(s, (int)nread, now);
    return;
  }
  rp_tcpframe_commit(&s->rframe, (size_t)nread);
  while (s->state == RP_NET_STREAM_OPEN) {
    rv = rp_tcpframe_next(&s->rframe, &msg, &mlen);
    if (rv == 0) {
      break;
    }
    if (rv < 0) {
      /* A zero length; with a buffer of RP_NET_STREAM_FRAME_MAX no
         length is too large. */
      stream_end(s, UV_EPROTO, now);
      return;
    }
    s->cb->on_message(s, msg, mlen, now);
  }
}

static void stream_write_cb(uv_write_t *req, int status);

/* stream_kick starts writing the accumulated buffer if none is busy. */
static void stream_kick(rp_net_stream *s, rp_tstamp now) {
  int idx;
  uv_buf_t b;
  int rv;
  if (s->state != RP_NET_STREAM_OPEN || s->wbusy >= 0) {
    return;
  }
  idx = s->wlen[0] ? 0 : (s->wlen[1] ? 1 : -1);
  if (idx < 0) {
    return;
  }
  b = uv_buf_init((char *)s->wbuf[idx], (unsigned int)s->wlen[idx]);
  rv = uv_write(&s->write_req, (uv_stream_t *)&s->tcp, &b, 1, stream_write_cb);
  if (rv != 0) {
    stream_end(s, rv, now);
    return;
  }
  s->wbusy = idx;
}

static void stream_write_cb(uv_write_t *req, int status) {
  rp_net_stream *s = req->handle->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  if (s->state != RP_NET_STREAM_OPEN) {
    return;
  }
  if (s->wbusy >= 0) {
    stream_unqueued(s, s->wlen[s->wbusy]);
    s->wlen[s->wbusy] = 0;
  }
  s->wbusy = -1;
  if (status < 0) {
    stream_end(s, status, now);
    return;
  }
  stream_kick(s, now);
}

/* stream_append copies |len| bytes to the accumulating buffer. */
static int stream_append(rp_net_stream *s, const uint8_t *data, size_t len) {
  int idx = s->wbusy == 0 ? 1 : 0;
  size_t need;
  if (s->wbusy < 0 && s->wlen[1] && !s->wlen[0]) {
    idx = 1;
  }
  need = s->wlen[idx] + len;
  if (s->wlen[0] + s->wlen[1] + len > s->max_pending ||
      (s->pending_total &&
       *s->pending_total + len > s->pending_total_max)) {
    return RP_ERR_FULL;
  }
  if (need > s->wcap[idx]) {
    size_t ncap = s->wcap[idx] ? s->wcap[idx] : STREAM_WBUF_INITIAL;
    uint8_t *nb;
    while (ncap < need) {
      ncap *= 2;
    }
    nb = s->mem->realloc(s->wbuf[idx], ncap, s->mem->user_data);
    if (!nb) {
      return RP_ERR_NOMEM;
    }
    s->wbuf[idx] = nb;
    s->wcap[idx] = ncap;
  }
  memcpy(s->wbuf[idx] + s->wlen[idx], data, len);
  s->wlen[idx] += len;
  if (s->pending_total) {
    *s->pending_total += len;
  }
  return 0;
}

int rp_net_stream_write(rp_net_stream *s, const uint8_t *msg, size_t len,
                        rp_tstamp now) {
  uint8_t prefix[STREAM_PREFIX_LEN];
  size_t done = 0;
  int rv;
  if (len == 0 || len > UINT16_MAX ||
      (s->state != RP_NET_STREAM_OPEN &&
       s->state != RP_NET_STREAM_CONNECTING)) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  prefix[0] = (uint8_t)(len >> 8);
  prefix[1] = (uint8_t)len;
  if (s->state == RP_NET_STREAM_OPEN && s->wbusy < 0 && !s->wlen[0] &&
      !s->wlen[1]) {
    uv_buf_t b[2] = {uv_buf_init((char *)prefix, STREAM_PREFIX_LEN),
                     uv_buf_init((char *)(uintptr_t)msg, (unsigned)len)};
    int n = uv_try_write((uv_stream_t *)&s->tcp, b, 2);
    if (n == (int)(len + STREAM_PREFIX_LEN)) {
      return 0;
    }
    if (n < 0 && n != UV_EAGAIN) {
      stream_end(s, n, now);
      return 0;
    }
    done = n > 0 ? (size_t)n : 0;
  }
  if (done < STREAM_PREFIX_LEN) {
    rv = stream_append(s, prefix + done, STREAM_PREFIX_LEN - done);
    if (rv == 0) {
      rv = stream_append(s, msg, len);
    }
  } else {
    rv = stream_append(s, msg + (done - STREAM_PREFIX_LEN),
                       len - (done - STREAM_PREFIX_LEN));
  }
  if (rv != 0) {
    if (done > 0) {
      /* Part of a frame is on the wire: the stream is unusable. */
      stream_end(s, UV_ENOBUFS, now);
    }
    return rv;
  }
  stream_kick(s, now);
  return 0;
}

static void stream_connect_cb(uv_connect_t *req, int status) {
  rp_net_stream *s = req->handle->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  int rv;
  if (s->state != RP_NET_STREAM_CONNECTING) {
    return;
  }
  if (status < 0) {
    rp_net_stream_close(s);
    s->cb->on_connect(s, status, now);
    return;
  }
  s->state = RP_NET_STREAM_OPEN;
  uv_tcp_nodelay(&s->tcp, 1);
  rv = uv_read_start((uv_stream_t *)&s->tcp, stream_alloc_cb, stream_read_cb);
  if (rv != 0) {
    s->state = RP_NET_STREAM_CONNECTING;
    rp_net_stream_close(s);
    s->cb->on_connect(s, rv, now);
    return;
  }
  s->cb->on_connect(s, 0, now);
  stream_kick(s, now);
}

/* stream_open takes a closed |s| to |state| with its buffers and an
   initialised TCP handle on |loop|. Returns 0, RP_ERR_INVALID_ARGUMENT
   (not closed), RP_ERR_NOMEM or RP_ERR_IO (nothing left open). */
static int stream_open(rp_net_stream *s, uv_loop_t *loop,
                       rp_net_stream_state state) {
  int rv;
  if (s->state != RP_NET_STREAM_CLOSED) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  rv = stream_alloc_buffers(s);
  if (rv != 0) {
    return rv;
  }
  if (uv_tcp_init(loop, &s->tcp) != 0) {
    stream_free_buffers(s);
    return RP_ERR_IO;
  }
  s->tcp.data = s;
  s->state = state;
  return 0;
}

int rp_net_stream_connect(rp_net_stream *s, uv_loop_t *loop,
                          const struct sockaddr *addr) {
  int rv = stream_open(s, loop, RP_NET_STREAM_CONNECTING);
  if (rv != 0) {
    return rv;
  }
  rv = uv_tcp_connect(&s->connect_req, &s->tcp, addr, stream_connect_cb);
  if (rv != 0) {
    /* The handle exists: close it; on_closed reports the end. */
    rp_net_stream_close(s);
    return RP_ERR_IO;
  }
  return 0;
}

int rp_net_stream_accept(rp_net_stream *s, uv_loop_t *loop,
                         uv_stream_t *server) {
  int rv = stream_open(s, loop, RP_NET_STREAM_OPEN);
  if (rv != 0) {
    return rv;
  }
  if (uv_accept(server, (uv_stream_t *)&s->tcp) != 0 ||
      uv_read_start((uv_stream_t *)&s->tcp, stream_alloc_cb, stream_read_cb) !=
          0) {
    rp_net_stream_close(s);
    return RP_ERR_IO;
  }
  uv_tcp_nodelay(&s->tcp, 1);
  return 0;
}
