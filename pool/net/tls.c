/*
 * tls.c: TLS over a libuv TCP stream with OpenSSL memory BIOs.
 *
 * IMPLEMENTATION NOTES
 * - Pump: every socket read is written into the read BIO, then the
 *   handshake is driven (SSL_do_handshake) or records are decrypted
 *   (SSL_read until WANT_READ), then the write BIO is drained to the
 *   socket. Application writes (SSL_write) drain the write BIO too.
 * - Output: the write BIO's bytes go out by uv_try_write when nothing is
 *   queued; the rest is copied into one of two buffers handed in turn to
 *   a single uv_write request (as stream.c), bounded by
 *   RP_NET_TLS_MAX_PENDING.
 * - Failure reasons: a certificate that fails verification is named by
 *   X509_verify_cert_error_string; other failures drain the OpenSSL error
 *   queue (ERR_get_error) into the reason, which the owner logs. The
 *   queue is cleared before each SSL call so an old error is never
 *   blamed on this connection.
 * - Resumption: the SSL_CTX uses the client session cache without the
 *   internal store; the new-session callback hands each ticket to the
 *   owner's slot (psession), offered with SSL_set_session next time.
 * - close_notify is not sent: the connection carries only idempotent DNS
 *   exchanges and the peer sees EOF.
 */
#include "tls.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>

/* TLS_WBUF_INITIAL is the first capacity of an output buffer. */
#define TLS_WBUF_INITIAL 4096u
/* TLS_CHUNK is how much of the write BIO is read at a time. */
#define TLS_CHUNK 16384u

static void tls_set_reason(char *out, size_t cap, const char *prefix) {
  unsigned long e;
  size_t n = 0;
  int w = snprintf(out, cap, "%s", prefix);
  if (w > 0) {
    n = (size_t)w < cap ? (size_t)w : cap - 1;
  }
  while ((e = ERR_get_error()) != 0) {
    char buf[RP_NET_TLS_REASON_LEN];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (n + 2 < cap) {
      w = snprintf(out + n, cap - n, "%s%s", n ? "; " : "", buf);
      if (w > 0) {
        n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
      }
    }
  }
  if (n == 0) {
    snprintf(out, cap, "unknown TLS error");
  }
}

static int tls_new_session_cb(SSL *ssl, SSL_SESSION *sess) {
  rp_net_tls *t = SSL_get_app_data(ssl);
  if (!t || !t->psession) {
    return 0;
  }
  if (*t->psession) {
    SSL_SESSION_free(*t->psession);
  }
  /* Returning 1 keeps the reference OpenSSL passed to us. */
  *t->psession = sess;
  return 1;
}

int rp_net_tls_ctx_new(SSL_CTX **pctx, const char *ca_file, char *err,
                       size_t errlen) {
  SSL_CTX *ctx;
  ERR_clear_error();
  ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) {
    tls_set_reason(err, errlen, "SSL_CTX_new: ");
    return RP_ERR_NOMEM;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    /* No system store is not fatal when a CA file follows. */
    ERR_clear_error();
  }
  if (ca_file && SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) {
    char why[RP_NET_TLS_REASON_LEN];
    tls_set_reason(why, sizeof(why), "");
    snprintf(err, errlen, "tls_ca: cannot load %s: %s", ca_file, why);
    SSL_CTX_free(ctx);
    return RP_ERR_TLS;
  }
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT |
                                          SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, tls_new_session_cb);
  *pctx = ctx;
  return 0;
}

void rp_net_tls_init(rp_net_tls *t, const rp_net_tls_callbacks *cb,
                     const rp_mem *mem, void *user_data) {
  *t = (rp_net_tls){.cb = cb,
                    .mem = mem,
                    .user_data = user_data,
                    .state = RP_NET_TLS_CLOSED,
                    .wbusy = -1};
}

/* tls_release frees the SSL object and the buffers. */
static void tls_release(rp_net_tls *t) {
  const rp_mem *m = t->mem;
  if (t->ssl) {
    SSL_set_app_data(t->ssl, NULL);
    /* Without this, SSL_free marks the session (the last ticket in TLS
       1.3) not resumable. The owner drops the ticket after a TLS
       failure. */
    SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(t->ssl);
  }
  m->free(t->rbuf, m->user_data);
  m->free(t->plain, m->user_data);
  m->free(t->early, m->user_data);
  m->free(t->wbuf[0], m->user_data);
  m->free(t->wbuf[1], m->user_data);
  rp_net_tls_init(t, t->cb, t->mem, t->user_data);
}

static void tls_on_close(uv_handle_t *h) {
  rp_net_tls *t = h->data;
  if (--t->nclosing > 0) {
    return;
  }
  tls_release(t);
  if (t->cb->on_closed) {
    t->cb->on_closed(t);
  }
}

void rp_net_tls_close(rp_net_tls *t) {
  switch (t->state) {
  case RP_NET_TLS_CLOSED:
  case RP_NET_TLS_CLOSING:
    return;
  case RP_NET_TLS_PREPARED:
    tls_release(t);
    return;
  case RP_NET_TLS_CONNECTING:
  case RP_NET_TLS_HANDSHAKE:
  case RP_NET_TLS_OPEN:
    t->state = RP_NET_TLS_CLOSING;
    t->nclosing = 2;
    uv_close((uv_handle_t *)&t->check, tls_on_close);
    uv_close((uv_handle_t *)&t->tcp, tls_on_close);
    return;
  }
}

/* tls_end closes |t| and reports |why|. */
static void tls_end(rp_net_tls *t, rp_net_tls_end why, const char *reason,
                    rp_tstamp now) {
  if (t->state != RP_NET_TLS_CONNECTING && t->state != RP_NET_TLS_HANDSHAKE &&
      t->state != RP_NET_TLS_OPEN) {
    return;
  }
  rp_net_tls_close(t);
  if (t->cb->on_end) {
    t->cb->on_end(t, why, reason, now);
  }
}

int rp_net_tls_start(rp_net_tls *t, SSL_CTX *ctx, const char *name,
                     const uint8_t *alpn, size_t alpn_len,
                     SSL_SESSION **psession) {
  const rp_mem *m = t->mem;
  unsigned char ipbuf[sizeof(struct in6_addr)];
  int is_ip;
  if (t->state != RP_NET_TLS_CLOSED || !ctx || !name || !*name) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  t->rbuf = m->malloc(RP_NET_TLS_RBUF_LEN, m->user_data);
  t->plain = m->malloc(RP_NET_TLS_PLAIN_LEN, m->user_data);
  ERR_clear_error();
  t->ssl = SSL_new(ctx);
  if (!t->rbuf || !t->plain || !t->ssl) {
    tls_release(t);
    return RP_ERR_NOMEM;
  }
  t->rbio = BIO_new(BIO_s_mem());
  t->wbio = BIO_new(BIO_s_mem());
  if (!t->rbio || !t->wbio) {
    BIO_free(t->rbio);
    BIO_free(t->wbio);
    tls_release(t);
    return RP_ERR_NOMEM;
  }
  SSL_set_bio(t->ssl, t->rbio, t->wbio);
  SSL_set_app_data(t->ssl, t);
  SSL_set_connect_state(t->ssl);
  is_ip = inet_pton(AF_INET, name, ipbuf) == 1 ||
          inet_pton(AF_INET6, name, ipbuf) == 1;
  if (is_ip) {
    if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), name) != 1) {
      tls_release(t);
      return RP_ERR_TLS;
    }
  } else if (SSL_set_tlsext_host_name(t->ssl, name) != 1 ||
             SSL_set1_host(t->ssl, name) != 1) {
    tls_release(t);
    return RP_ERR_TLS;
  }
  if (alpn && alpn_len &&
      SSL_set_alpn_protos(t->ssl, alpn, (unsigned int)alpn_len) != 0) {
    tls_release(t);
    return RP_ERR_TLS;
  }
  t->psession = psession;
  if (psession && *psession) {
    SSL_set_session(t->ssl, *psession);
  }
  ERR_clear_error();
  t->state = RP_NET_TLS_PREPARED;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */

static void tls_write_cb(uv_write_t *req, int status);

static void tls_kick(rp_net_tls *t, rp_tstamp now) {
  int idx;
  int n;
  uv_buf_t b;
  if ((t->state != RP_NET_TLS_HANDSHAKE && t->state != RP_NET_TLS_OPEN) ||
      t->wbusy >= 0) {
    return;
  }
  idx = t->wlen[0] ? 0 : (t->wlen[1] ? 1 : -1);
  if (idx < 0) {
    return;
  }
  b = uv_buf_init((char *)t->wbuf[idx], (unsigned int)t->wlen[idx]);
  n = uv_try_write((uv_stream_t *)&t->tcp, &b, 1);
  if (n == (int)t->wlen[idx]) {
    t->wlen[idx] = 0;
    return;
  }
  if (n < 0 && n != UV_EAGAIN) {
    tls_end(t, RP_NET_TLS_END_IO, uv_err_name(n), now);
    return;
  }
  if (n > 0) {
    memmove(t->wbuf[idx], t->wbuf[idx] + n, t->wlen[idx] - (size_t)n);
    t->wlen[idx] -= (size_t)n;
  }
  b = uv_buf_init((char *)t->wbuf[idx], (unsigned int)t->wlen[idx]);
  n = uv_write(&t->write_req, (uv_stream_t *)&t->tcp, &b, 1, tls_write_cb);
  if (n != 0) {
    tls_end(t, RP_NET_TLS_END_IO, uv_err_name(n), now);
    return;
  }
  t->wbusy = idx;
}

static void tls_write_cb(uv_write_t *req, int status) {
  rp_net_tls *t = req->handle->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  if (t->state != RP_NET_TLS_HANDSHAKE && t->state != RP_NET_TLS_OPEN) {
    return;
  }
  if (t->wbusy >= 0) {
    t->wlen[t->wbusy] = 0;
  }
  t->wbusy = -1;
  if (status < 0) {
    tls_end(t, RP_NET_TLS_END_IO, uv_err_name(status), now);
    return;
  }
  tls_kick(t, now);
}

/* tls_grow makes room for |need| bytes in the buffer |*pbuf|. */
static int tls_grow(const rp_mem *m, uint8_t **pbuf, size_t *pcap,
                    size_t need) {
  size_t ncap = *pcap ? *pcap : TLS_WBUF_INITIAL;
  uint8_t *nb;
  if (need <= *pcap) {
    return 0;
  }
  while (ncap < need) {
    ncap *= 2;
  }
  nb = m->realloc(*pbuf, ncap, m->user_data);
  if (!nb) {
    return RP_ERR_NOMEM;
  }
  *pbuf = nb;
  *pcap = ncap;
  return 0;
}

/* tls_flush moves the write BIO into the output buffers and kicks the
   socket. Returns 0 or an error (the connection is then ending). */
static int tls_flush(rp_net_tls *t, rp_tstamp now) {
  size_t pending;
  while ((pending = BIO_ctrl_pending(t->wbio)) > 0) {
    int idx = t->wbusy == 0 ? 1 : 0;
    size_t take = pending < TLS_CHUNK ? pending : TLS_CHUNK;
    int n;
    if (t->wbusy < 0 && t->wlen[1] && !t->wlen[0]) {
      idx = 1;
    }
    if (t->wlen[0] + t->wlen[1] + take > RP_NET_TLS_MAX_PENDING) {
      tls_end(t, RP_NET_TLS_END_IO, "output buffer full", now);
      return RP_ERR_FULL;
    }
    if (tls_grow(t->mem, &t->wbuf[idx], &t->wcap[idx], t->wlen[idx] + take) !=
        0) {
      tls_end(t, RP_NET_TLS_END_IO, "out of memory", now);
      return RP_ERR_NOMEM;
    }
    n = BIO_read(t->wbio, t->wbuf[idx] + t->wlen[idx], (int)take);
    if (n <= 0) {
      break;
    }
    t->wlen[idx] += (size_t)n;
  }
  tls_kick(t, now);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Input                                                                */
/* ------------------------------------------------------------------ */

/* tls_fail ends |t| after an SSL call failed with |code|. */
static void tls_fail(rp_net_tls *t, int code, rp_tstamp now) {
  char reason[RP_NET_TLS_REASON_LEN];
  long vr = SSL_get_verify_result(t->ssl);
  if (code == SSL_ERROR_ZERO_RETURN) {
    tls_end(t, RP_NET_TLS_END_EOF, "close_notify", now);
    return;
  }
  if (vr != X509_V_OK) {
    snprintf(reason, sizeof(reason), "certificate verify failed: %s",
             X509_verify_cert_error_string(vr));
    ERR_clear_error();
  } else {
    tls_set_reason(reason, sizeof(reason), "");
  }
  /* Whatever OpenSSL queued (an alert) is best effort. */
  tls_end(t, RP_NET_TLS_END_TLS, reason, now);
}

/* tls_send_early encrypts the plaintext kept during the handshake. */
static int tls_send_early(rp_net_tls *t, rp_tstamp now) {
  size_t off = 0;
  while (off < t->elen) {
    int n;
    ERR_clear_error();
    n = SSL_write(t->ssl, t->early + off, (int)(t->elen - off));
    if (n <= 0) {
      tls_fail(t, SSL_get_error(t->ssl, n), now);
      return RP_ERR_TLS;
    }
    off += (size_t)n;
  }
  t->elen = 0;
  return 0;
}

/* tls_pump drives the handshake or reads records; then flushes. */
static void tls_pump(rp_net_tls *t, rp_tstamp now) {
  int n, code;
  if (t->state == RP_NET_TLS_HANDSHAKE) {
    ERR_clear_error();
    n = SSL_do_handshake(t->ssl);
    if (n != 1) {
      code = SSL_get_error(t->ssl, n);
      if (code != SSL_ERROR_WANT_READ && code != SSL_ERROR_WANT_WRITE) {
        tls_fail(t, code, now);
        return;
      }
      tls_flush(t, now);
      return;
    }
    t->state = RP_NET_TLS_OPEN;
    if (tls_send_early(t, now) != 0) {
      return;
    }
    if (tls_flush(t, now) != 0) {
      return;
    }
    if (t->cb->on_open) {
      t->cb->on_open(t, SSL_session_reused(t->ssl), now);
    }
  }
  while (t->state == RP_NET_TLS_OPEN) {
    ERR_clear_error();
    n = SSL_read(t->ssl, t->plain, (int)RP_NET_TLS_PLAIN_LEN);
    if (n <= 0) {
      code = SSL_get_error(t->ssl, n);
      if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) {
        break;
      }
      tls_fail(t, code, now);
      return;
    }
    t->cb->on_data(t, t->plain, (size_t)n, now);
  }
  if (t->state == RP_NET_TLS_OPEN) {
    /* SSL_read may have queued a key update or ticket reply. */
    tls_flush(t, now);
  }
}

static void tls_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  rp_net_tls *t = h->data;
  (void)suggested;
  buf->base = (char *)t->rbuf;
  buf->len = RP_NET_TLS_RBUF_LEN;
}

static void tls_read_cb(uv_stream_t *h, ssize_t nread, const uv_buf_t *buf) {
  rp_net_tls *t = h->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  if (nread < 0) {
    tls_end(t,
            nread == UV_EOF                    ? RP_NET_TLS_END_EOF
            : t->state == RP_NET_TLS_HANDSHAKE ? RP_NET_TLS_END_TLS
                                               : RP_NET_TLS_END_IO,
            nread == UV_EOF && t->state == RP_NET_TLS_HANDSHAKE
                ? "connection closed during the handshake"
                : uv_err_name((int)nread), now);
    return;
  }
  if (nread == 0) {
    return;
  }
  if (BIO_write(t->rbio, buf->base, (int)nread) != (int)nread) {
    tls_end(t, RP_NET_TLS_END_IO, "out of memory", now);
    return;
  }
  tls_pump(t, now);
}

static void tls_connect_cb(uv_connect_t *req, int status) {
  rp_net_tls *t = req->handle->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  int rv;
  if (t->state != RP_NET_TLS_CONNECTING) {
    return;
  }
  if (status < 0) {
    tls_end(t, RP_NET_TLS_END_CONNECT, uv_err_name(status), now);
    return;
  }
  uv_tcp_nodelay(&t->tcp, 1);
  rv = uv_read_start((uv_stream_t *)&t->tcp, tls_alloc_cb, tls_read_cb);
  if (rv != 0) {
    tls_end(t, RP_NET_TLS_END_CONNECT, uv_err_name(rv), now);
    return;
  }
  t->state = RP_NET_TLS_HANDSHAKE;
  tls_pump(t, now);
}

int rp_net_tls_connect(rp_net_tls *t, uv_loop_t *loop,
                       const struct sockaddr *addr) {
  int rv;
  if (t->state != RP_NET_TLS_PREPARED) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  if (uv_tcp_init(loop, &t->tcp) != 0) {
    tls_release(t);
    return RP_ERR_IO;
  }
  uv_check_init(loop, &t->check);
  t->tcp.data = t;
  t->check.data = t;
  t->check_on = 0;
  t->state = RP_NET_TLS_CONNECTING;
  rv = uv_tcp_connect(&t->connect_req, &t->tcp, addr, tls_connect_cb);
  if (rv != 0) {
    rp_net_tls_close(t);
    return RP_ERR_IO;
  }
  return 0;
}

static void tls_check_cb(uv_check_t *c) {
  rp_net_tls *t = c->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  uv_check_stop(c);
  t->check_on = 0;
  if (t->state == RP_NET_TLS_OPEN && t->elen > 0 && tls_send_early(t, now) == 0) {
    tls_flush(t, now);
  }
}

int rp_net_tls_write(rp_net_tls *t, const uint8_t *data, size_t len) {
  switch (t->state) {
  case RP_NET_TLS_CLOSED:
  case RP_NET_TLS_CLOSING:
    return RP_ERR_INVALID_ARGUMENT;
  case RP_NET_TLS_PREPARED:
  case RP_NET_TLS_CONNECTING:
  case RP_NET_TLS_HANDSHAKE:
  case RP_NET_TLS_OPEN:
    break;
  }
  if (t->elen + t->wlen[0] + t->wlen[1] + len > RP_NET_TLS_MAX_PENDING) {
    return RP_ERR_FULL;
  }
  if (tls_grow(t->mem, &t->early, &t->ecap, t->elen + len) != 0) {
    return RP_ERR_NOMEM;
  }
  memcpy(t->early + t->elen, data, len);
  t->elen += len;
  if (t->state == RP_NET_TLS_OPEN && !t->check_on) {
    uv_check_start(&t->check, tls_check_cb);
    t->check_on = 1;
  }
  return 0;
}

const uint8_t *rp_net_tls_alpn(const rp_net_tls *t, size_t *plen) {
  const unsigned char *p = NULL;
  unsigned int n = 0;
  if (!t->ssl) {
    *plen = 0;
    return NULL;
  }
  SSL_get0_alpn_selected(t->ssl, &p, &n);
  *plen = n;
  return p;
}
