/*
 * net.c: the libuv driver of the pool core.
 *
 * IMPLEMENTATION NOTES
 * - Time: every libuv callback reads uv_hrtime() once and passes that
 *   value to every core call it makes.
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
 *   rp_client.opaque together with the UDP size the client accepts; an
 *   answer larger than that is sent truncated (TC) so the client retries
 *   over TCP. TCP clients are identified by a connection id (generation
 *   and slot); answers for a connection closed meanwhile are dropped.
 * - Start-up check (DESIGN.md section 5): candidates ordered by saved
 *   score, each sent one plain query of pretest_domain (type A, or the
 *   embedder's check); a resolver that answers NOERROR or NXDOMAIN with
 *   the right ID is added to the core. Checks run while fewer than |want|
 *   resolvers work; every 15 s, when fewer work, the next candidates are
 *   checked (wrapping round to the failed ones).
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
/* NET_OPAQUE_UDPSIZE_OFF is where the client's UDP size is kept in
   rp_client.opaque, after a sockaddr_in6 (28 bytes). */
#define NET_OPAQUE_UDPSIZE_OFF 28
/* NET_CHECK_BUF_LEN is the buffer for one check query. */
#define NET_CHECK_BUF_LEN 512
/* NET_TC_FLAGS_OFF is the offset of the flags byte holding TC. */
#define NET_TC_FLAGS_OFF 2
/* NET_RCODE_OFF is the offset of the byte holding the rcode. */
#define NET_RCODE_OFF 3
/* NET_QDCOUNT_OFF is the offset of the header's QDCOUNT; the four
   section counts follow it, two bytes each. */
#define NET_QDCOUNT_OFF 4
#define NET_COUNTS_LEN 8
/* NET_ARCOUNT_OFF is the offset of the header's ARCOUNT. */
#define NET_ARCOUNT_OFF 10
/* NET_TTL_LEN is the length of a record's TTL. */
#define NET_TTL_LEN 4
/* NET_QTYPE_QCLASS_LEN is the length of a question's type and class. */
#define NET_QTYPE_QCLASS_LEN 4

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

static void net_handle_closed_cb(uv_handle_t *h) {
  rp_net_handle_closed(h->data);
}

/* ------------------------------------------------------------------ */
/* Datagram sends                                                       */
/* ------------------------------------------------------------------ */

static void net_slot_done(uv_udp_send_t *req, int status) {
  rp_net_send_slot *slot = (rp_net_send_slot *)req;
  rp_net_pool *np = slot->np;
  (void)status;
  slot->next = np->free_slots;
  np->free_slots = slot;
}

/* net_slot_send sends |len| bytes with libuv's queue, from a send slot
   (the kernel pushed back). Returns 0 or an RP_ERR_* (counted). */
static int net_slot_send(rp_net_pool *np, uv_udp_t *udp, const uint8_t *data,
                         size_t len, const struct sockaddr *addr) {
  rp_net_send_slot *slot = np->free_slots;
  uv_buf_t b;
  int rv;
  if (!slot || len > RP_NET_SEND_SLOT_LEN) {
    ++np->counters.send_failures;
    return RP_ERR_FULL;
  }
  memcpy(slot->buf, data, len);
  b = uv_buf_init((char *)slot->buf, (unsigned int)len);
  rv = uv_udp_send(&slot->req, udp, &b, 1, addr, net_slot_done);
  if (rv != 0) {
    ++np->counters.send_failures;
    return rp_net_err_from_uv(rv);
  }
  np->free_slots = slot->next;
  return 0;
}

int rp_net_udp_send(rp_net_pool *np, uv_udp_t *udp, const uint8_t *data,
                    size_t len, const struct sockaddr *addr) {
  uv_buf_t b = uv_buf_init((char *)(uintptr_t)data, (unsigned int)len);
  int rv = uv_udp_try_send(udp, &b, 1, addr);
  if (rv >= 0) {
    return 0;
  }
  if (rv != UV_EAGAIN) {
    ++np->counters.send_failures;
    return rp_net_err_from_uv(rv);
  }
  return net_slot_send(np, udp, data, len, addr);
}

/* net_tx_failed reports a datagram of |tx| that could not be sent. */
static void net_tx_failed(rp_net_pool *np, rp_net_txsock *tx,
                          uint16_t upstream_id) {
  /* Only upstreams in the core queue datagrams (checks are sent at
     once); np->in_core is set, so the failure waits in errq. */
  if (tx->up && tx->up->check == RP_NET_CHECK_PASSED) {
    rp_net_upstream_on_error(tx->up, upstream_id, RP_OUTCOME_SEND_FAILED,
                             np->now);
  }
}

int rp_net_udp_queue(rp_net_pool *np, rp_net_txsock *tx, const uint8_t *data,
                     size_t len, const struct sockaddr *addr,
                     uint16_t upstream_id) {
  rp_net_txmsg *m;
  int32_t i;
  if (len > RP_NET_TX_DIRECT_LEN || np->stopping) {
    int rv = rp_net_udp_send(np, tx->udp, data, len, addr);
    if (rv != 0 && tx->up) {
      rp_net_upstream_on_error(tx->up, upstream_id, RP_OUTCOME_SEND_FAILED,
                               np->now);
    }
    return rv;
  }
  if (np->ntx == RP_NET_TX_MSGS || RP_NET_TX_BYTES - np->txbuf_used < len) {
    rp_net_tx_flush(np);
  }
  i = (int32_t)np->ntx++;
  m = &np->txmsgs[i];
  memcpy(np->txbuf + np->txbuf_used, data, len);
  *m = (rp_net_txmsg){.off = (uint32_t)np->txbuf_used,
                      .len = (uint32_t)len,
                      .upstream_id = upstream_id,
                      .next = -1};
  np->txbuf_used += len;
  if (addr) {
    m->addrlen = addr->sa_family == AF_INET6
                     ? (socklen_t)sizeof(struct sockaddr_in6)
                     : (socklen_t)sizeof(struct sockaddr_in);
    memcpy(&m->addr, addr, m->addrlen);
  }
  if (tx->tail < 0) {
    tx->head = i;
    np->txdirty[np->ntxdirty++] = tx;
  } else {
    np->txmsgs[tx->tail].next = i;
  }
  tx->tail = i;
  return 0;
}

/* net_tx_flush_sock sends the datagrams queued for |tx|. */
static void net_tx_flush_sock(rp_net_pool *np, rp_net_txsock *tx) {
  struct mmsghdr *h = np->txhdrs;
  size_t n = 0, i = 0;
  int32_t k;
  int fd = -1;
  for (k = tx->head; k >= 0; k = np->txmsgs[k].next) {
    rp_net_txmsg *m = &np->txmsgs[k];
    np->txiov[n] =
        (struct iovec){.iov_base = np->txbuf + m->off, .iov_len = m->len};
    h[n] =
        (struct mmsghdr){.msg_hdr = {.msg_name = m->addrlen ? &m->addr : NULL,
                                     .msg_namelen = m->addrlen,
                                     .msg_iov = &np->txiov[n],
                                     .msg_iovlen = 1}};
    np->txorder[n++] = k;
  }
  tx->head = tx->tail = -1;
  if (uv_is_closing((uv_handle_t *)tx->udp) ||
      uv_fileno((const uv_handle_t *)tx->udp, &fd) != 0) {
    np->counters.send_failures += n;
    for (i = 0; i < n; ++i) {
      net_tx_failed(np, tx, np->txmsgs[np->txorder[i]].upstream_id);
    }
    return;
  }
  while (i < n) {
    int rv = sendmmsg(fd, h + i, (unsigned int)(n - i), 0);
    if (rv > 0) {
      i += (size_t)rv;
      continue;
    }
    if (rv < 0 && errno == EINTR) {
      continue;
    }
    if (rv < 0 &&
        (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
      /* The socket buffer is full: libuv sends the rest when it can. */
      for (; i < n; ++i) {
        rp_net_txmsg *m = &np->txmsgs[np->txorder[i]];
        if (net_slot_send(np, tx->udp, np->txbuf + m->off, m->len,
                          m->addrlen ? (const struct sockaddr *)&m->addr
                                     : NULL) != 0) {
          net_tx_failed(np, tx, m->upstream_id);
        }
      }
      break;
    }
    /* Datagram i failed (e.g. ECONNREFUSED after ICMP port unreachable
       on a connected socket): count it and go on with the next. */
    ++np->counters.send_failures;
    net_tx_failed(np, tx, np->txmsgs[np->txorder[i]].upstream_id);
    ++i;
  }
}

static void net_flush(rp_net_pool *np, rp_tstamp now);

void rp_net_tx_flush(rp_net_pool *np) {
  size_t d;
  if (np->ntx == 0) {
    return;
  }
  /* Failures go to errq: nothing is called back while the queue is
     walked. */
  ++np->in_core;
  for (d = 0; d < np->ntxdirty; ++d) {
    net_tx_flush_sock(np, np->txdirty[d]);
  }
  --np->in_core;
  np->ntx = 0;
  np->txbuf_used = 0;
  np->ntxdirty = 0;
  if (!np->in_core && np->errq_len > 0) {
    net_flush(np, rp_net_now());
  }
}

rp_tstamp rp_net_rx_now(rp_net_pool *np, unsigned flags) {
  if (!(flags & UV_UDP_MMSG_CHUNK)) {
    return rp_net_now();
  }
  if (np->rx_now == RP_TSTAMP_UNSET) {
    np->rx_now = rp_net_now();
  }
  return np->rx_now;
}

/* net_tx_run sends the queue until it stays empty (reporting a failure
   may make the core send elsewhere). */
static void net_tx_run(rp_net_pool *np) {
  np->rx_now = RP_TSTAMP_UNSET;
  while (np->ntx > 0 && !np->in_core) {
    rp_net_tx_flush(np);
  }
}

static void net_prepare_cb(uv_prepare_t *h) { net_tx_run(h->data); }

static void net_check_cb(uv_check_t *h) { net_tx_run(h->data); }

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

static void net_core_result(rp_net_pool *np, int rv, const char *what) {
  if (rv != 0 && rp_err_is_fatal(rv)) {
    rp_net_log(np, RP_LOG_ERROR, "ev=core_error call=%s err=%s", what,
               rp_strerror(rv));
  }
}

/* net_flush reports queued errors (each may queue more) and re-arms. */
static void net_flush(rp_net_pool *np, rp_tstamp now) {
  while (np->errq_len > 0 && !np->stopping) {
    rp_net_err e = np->errq[np->errq_head];
    np->errq_head = (np->errq_head + 1) % RP_NET_ERRQ_LEN;
    --np->errq_len;
    ++np->in_core;
    net_core_result(np,
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
  np->now = now;
  ++np->in_core;
  net_core_result(np, rp_pool_handle_expiry(np->core, now), "expiry");
  --np->in_core;
  net_flush(np, now);
}

static int net_cb_send_query(rp_pool *pool, uint32_t resolver_id,
                             void *resolver_user_data, uint16_t upstream_id,
                             const uint8_t *data, size_t len, uint32_t flags,
                             void *user_data) {
  rp_net_upstream *up = resolver_user_data;
  rp_net_pool *np = user_data;
  (void)pool;
  (void)resolver_id;
  /* The time of the callback that entered the core. */
  return up->ops->send(up, data, len, upstream_id, flags, np->now);
}

/* net_truncate writes into |out| a copy of the answer's header and
   question with TC set and no records. Returns its length or 0. */
static size_t net_truncate(const uint8_t *data, size_t len, uint8_t *out,
                           size_t cap) {
  rp_dns_cursor cur;
  rp_dns_name name;
  uint16_t qd;
  size_t end;
  if (len < RP_DNS_HEADER_LEN || cap < RP_DNS_HEADER_LEN) {
    return 0;
  }
  qd = (uint16_t)((data[NET_QDCOUNT_OFF] << 8) | data[NET_QDCOUNT_OFF + 1]);
  rp_dns_cursor_init(&cur, data, len);
  cur.pos = RP_DNS_HEADER_LEN;
  if (qd == 1) {
    if (rp_dns_cursor_name(&cur, &name) != 0 ||
        rp_dns_cursor_skip(&cur, NET_QTYPE_QCLASS_LEN) != 0) {
      qd = 0;
      cur.pos = RP_DNS_HEADER_LEN;
    }
  } else {
    qd = 0;
  }
  end = cur.pos;
  if (end > cap) {
    return 0;
  }
  memcpy(out, data, end);
  out[NET_TC_FLAGS_OFF] |= (uint8_t)(RP_DNS_FLAG_TC >> 8);
  memset(out + NET_QDCOUNT_OFF, 0, NET_COUNTS_LEN);
  out[NET_QDCOUNT_OFF + 1] = (uint8_t)qd;
  return end;
}

static void net_deliver_tcp(rp_net_pool *np, uint64_t id, const uint8_t *data,
                            size_t len) {
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
  if (rp_net_stream_write(&c->s, data, len) != 0) {
    ++np->counters.send_failures;
  }
}

static int net_cb_deliver(rp_pool *pool, const rp_client *client,
                          const uint8_t *data, size_t len, uint32_t flags,
                          void *user_data) {
  rp_net_pool *np = user_data;
  uint16_t max;
  const struct sockaddr *sa = (const struct sockaddr *)client->opaque;
  (void)pool;
  (void)flags;
  if (np->stopping) {
    return 0;
  }
  if (client->id != 0) {
    net_deliver_tcp(np, client->id, data, len);
    return 0;
  }
  max = (uint16_t)((client->opaque[NET_OPAQUE_UDPSIZE_OFF] << 8) |
                   client->opaque[NET_OPAQUE_UDPSIZE_OFF + 1]);
  if (len > max) {
    uint8_t tc[RP_DNS_HEADER_LEN + RP_DNS_MAX_NAME_LEN + NET_QTYPE_QCLASS_LEN];
    size_t tlen = net_truncate(data, len, tc, sizeof(tc));
    ++np->counters.truncated_to_client;
    if (tlen == 0) {
      return 0;
    }
    rp_net_udp_queue(np, &np->lis_tx, tc, tlen, sa, 0);
    return 0;
  }
  rp_net_udp_queue(np, &np->lis_tx, data, len, sa, 0);
  return 0;
}

/* net_rand_fill fills |dest| from RAND_bytes. */
static void net_rand_fill(uint8_t *dest, size_t len) {
  if (RAND_bytes(dest, (int)len) != 1) {
    /* RAND_bytes fails only when the CSPRNG cannot be seeded; fall back
       to libc rather than leave the buffer unset. */
    size_t i;
    for (i = 0; i < len; ++i) {
      dest[i] = (uint8_t)rand();
    }
  }
}

/* net_cb_rand hands out bytes of np->rand_buf, refilled when used up
   (|user_data| NULL: straight from RAND_bytes). */
static void net_cb_rand(uint8_t *dest, size_t len, void *user_data) {
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
/* Listener                                                             */
/* ------------------------------------------------------------------ */

/* net_client_udpsize returns the UDP size a client query accepts: the
   size of its OPT record, found by walking the records without a full
   parse (the core parses the query anyway); 512 when there is none or
   the walk fails. */
static uint16_t net_client_udpsize(const uint8_t *q, size_t len) {
  rp_dns_cursor cur;
  rp_dns_name name;
  uint32_t i, nskip, nrr;
  uint16_t qd, type, cls, rdlen;
  if (len < RP_DNS_HEADER_LEN ||
      (q[NET_ARCOUNT_OFF] | q[NET_ARCOUNT_OFF + 1]) == 0) {
    return RP_DNS_MAX_UDP_DEFAULT;
  }
  qd = (uint16_t)((q[NET_QDCOUNT_OFF] << 8) | q[NET_QDCOUNT_OFF + 1]);
  nskip = (uint32_t)((q[NET_QDCOUNT_OFF + 2] << 8) | q[NET_QDCOUNT_OFF + 3]) +
          (uint32_t)((q[NET_QDCOUNT_OFF + 4] << 8) | q[NET_QDCOUNT_OFF + 5]);
  nrr = nskip + (uint32_t)((q[NET_ARCOUNT_OFF] << 8) | q[NET_ARCOUNT_OFF + 1]);
  rp_dns_cursor_init(&cur, q, len);
  cur.pos = RP_DNS_HEADER_LEN;
  if (qd > 1 ||
      (qd == 1 && (rp_dns_cursor_name(&cur, &name) != 0 ||
                   rp_dns_cursor_skip(&cur, NET_QTYPE_QCLASS_LEN) != 0))) {
    return RP_DNS_MAX_UDP_DEFAULT;
  }
  for (i = 0; i < nrr; ++i) {
    if (rp_dns_cursor_name(&cur, &name) != 0 ||
        rp_dns_cursor_u16(&cur, &type) != 0 ||
        rp_dns_cursor_u16(&cur, &cls) != 0 ||
        rp_dns_cursor_skip(&cur, NET_TTL_LEN) != 0 ||
        rp_dns_cursor_u16(&cur, &rdlen) != 0 ||
        rp_dns_cursor_skip(&cur, rdlen) != 0) {
      return RP_DNS_MAX_UDP_DEFAULT;
    }
    if (i >= nskip && type == RP_DNS_TYPE_OPT) {
      return name.len == 1 && cls >= RP_DNS_MAX_UDP_DEFAULT
                 ? cls
                 : RP_DNS_MAX_UDP_DEFAULT;
    }
  }
  return RP_DNS_MAX_UDP_DEFAULT;
}

static void net_submit(rp_net_pool *np, const uint8_t *q, size_t len,
                       const rp_client *client, rp_tstamp now) {
  int rv;
  np->now = now;
  ++np->in_core;
  rv = rp_pool_submit(np->core, q, len, client, now);
  --np->in_core;
  if (rv == RP_ERR_MALFORMED) {
    ++np->counters.dropped_malformed;
  } else {
    net_core_result(np, rv, "submit");
  }
  net_flush(np, now);
}

static void net_lis_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  rp_net_pool *np = h->data;
  (void)suggested;
  buf->base = (char *)np->rxbuf;
  buf->len = RP_NET_RXBUF_LEN;
}

static void net_lis_recv_cb(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                            const struct sockaddr *addr, unsigned flags) {
  rp_net_pool *np = h->data;
  rp_client client = {.id = 0};
  size_t alen;
  uint16_t size;
  if (nread <= 0 || !addr) {
    /* The end of a recvmmsg batch (or an error). */
    np->rx_now = RP_TSTAMP_UNSET;
    return;
  }
  if ((flags & UV_UDP_PARTIAL) || np->stopping) {
    return;
  }
  alen = addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                     : sizeof(struct sockaddr_in);
  memcpy(client.opaque, addr, alen);
  size = net_client_udpsize((const uint8_t *)buf->base, (size_t)nread);
  client.opaque[NET_OPAQUE_UDPSIZE_OFF] = (uint8_t)(size >> 8);
  client.opaque[NET_OPAQUE_UDPSIZE_OFF + 1] = (uint8_t)size;
  ++np->counters.udp_queries;
  net_submit(np, (const uint8_t *)buf->base, (size_t)nread, &client,
             rp_net_rx_now(np, flags));
}

static void net_client_on_message(rp_net_stream *s, const uint8_t *msg,
                                  size_t len, rp_tstamp now) {
  rp_net_client_conn *c = s->user_data;
  rp_client client = {.id = c->id};
  if (c->np->stopping) {
    return;
  }
  ++c->np->counters.tcp_queries;
  net_submit(c->np, msg, len, &client, now);
}

static void net_client_release(rp_net_client_conn *c) {
  rp_net_pool *np = c->np;
  if (np->clients[c->slot] == c) {
    np->clients[c->slot] = NULL;
  }
}

static void net_client_on_end(rp_net_stream *s, int uverr) {
  (void)uverr;
  net_client_release(s->user_data);
}

static void net_client_on_connect(rp_net_stream *s, int uverr) {
  (void)s;
  (void)uverr;
}

static void net_client_on_closed(rp_net_stream *s) {
  rp_net_client_conn *c = s->user_data;
  rp_net_pool *np = c->np;
  net_client_release(c);
  np->mem->free(c, np->mem->user_data);
  rp_net_handle_closed(np);
}

static const rp_net_stream_callbacks net_client_cb = {
    .on_message = net_client_on_message,
    .on_connect = net_client_on_connect,
    .on_end = net_client_on_end,
    .on_closed = net_client_on_closed,
};

static void net_tmp_closed_cb(uv_handle_t *h) {
  rp_net_pool *np = h->data;
  np->mem->free(h, np->mem->user_data);
  rp_net_handle_closed(np);
}

static void net_lis_connection_cb(uv_stream_t *server, int status) {
  rp_net_pool *np = server->data;
  rp_net_client_conn *c;
  uint32_t slot;
  if (status < 0 || np->stopping) {
    return;
  }
  for (slot = 0; slot < RP_NET_MAX_TCP_CLIENTS; ++slot) {
    if (!np->clients[slot]) {
      break;
    }
  }
  c = slot < RP_NET_MAX_TCP_CLIENTS
          ? np->mem->calloc(1, sizeof(*c), np->mem->user_data)
          : NULL;
  if (!c) {
    /* Accept and drop, so the backlog does not fill with it. */
    uv_tcp_t *tmp = np->mem->malloc(sizeof(*tmp), np->mem->user_data);
    rp_net_log(np, RP_LOG_WARN, "ev=tcp_client_refused why=%s",
               slot < RP_NET_MAX_TCP_CLIENTS ? "nomem" : "too_many");
    if (tmp && uv_tcp_init(np->loop, tmp) == 0) {
      tmp->data = np;
      rp_net_handle_opened(np);
      uv_accept(server, (uv_stream_t *)tmp);
      uv_close((uv_handle_t *)tmp, net_tmp_closed_cb);
    } else {
      np->mem->free(tmp, np->mem->user_data);
    }
    return;
  }
  ++np->client_gen[slot];
  c->np = np;
  c->slot = slot;
  c->id = ((uint64_t)np->client_gen[slot] << 32) | slot;
  rp_net_stream_init(&c->s, &net_client_cb, np->mem, c);
  if (rp_net_stream_accept(&c->s, np->loop, server) != 0) {
    if (c->s.state == RP_NET_STREAM_CLOSED) {
      np->mem->free(c, np->mem->user_data);
    } else {
      rp_net_handle_opened(np);
    }
    return;
  }
  np->clients[slot] = c;
  rp_net_handle_opened(np);
}

/* net_bind_pair binds a UDP and a TCP socket of |want|'s family to the
   same port of |want| (port 0: a free one, tried until the TCP twin of a
   free UDP port is free too). Raw sockets are used so that a retry never
   re-initialises a libuv handle that is still closing. Returns 0 with
   the two descriptors and the bound address, or an errno value. */
static int net_bind_pair(const struct sockaddr_storage *want, int *pudp,
                         int *ptcp, struct sockaddr_storage *bound,
                         socklen_t *plen) {
  socklen_t alen = want->ss_family == AF_INET6
                       ? (socklen_t)sizeof(struct sockaddr_in6)
                       : (socklen_t)sizeof(struct sockaddr_in);
  int port0 = ((const struct sockaddr_in *)want)->sin_port == 0;
  int tries, e = 0, one = 1;
  for (tries = 0; tries < RP_NET_BIND_TRIES; ++tries) {
    int udp = socket(want->ss_family, SOCK_DGRAM, 0), tcp = -1;
    *plen = sizeof(*bound);
    if (udp < 0 || bind(udp, (const struct sockaddr *)want, alen) != 0 ||
        getsockname(udp, (struct sockaddr *)bound, plen) != 0) {
      e = errno;
      if (udp >= 0) {
        close(udp);
      }
      return e;
    }
    tcp = socket(want->ss_family, SOCK_STREAM, 0);
    if (tcp >= 0 &&
        setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
        bind(tcp, (const struct sockaddr *)bound, *plen) == 0) {
      *pudp = udp;
      *ptcp = tcp;
      return 0;
    }
    e = errno;
    close(udp);
    if (tcp >= 0) {
      close(tcp);
    }
    if (!port0) {
      break;
    }
  }
  return e;
}

/* net_bind opens the listener: UDP and TCP on the same port of |want|. */
static int net_bind(rp_net_pool *np, const struct sockaddr_storage *want,
                    char *err, size_t errlen) {
  int sockbuf = RP_NET_SOCKBUF_LEN;
  int udp = -1, tcp = -1, e, rv;
  const char *why;

  e = net_bind_pair(want, &udp, &tcp, &np->lis_addr, &np->lis_addrlen);
  if (e != 0) {
    why = strerror(e);
    goto fail;
  }
  rv = uv_udp_open(&np->lis_udp, udp);
  if (rv != 0) {
    close(udp);
    close(tcp);
    why = uv_strerror(rv);
    goto fail;
  }
  rv = uv_tcp_open(&np->lis_tcp, tcp);
  if (rv != 0) {
    close(tcp);
    why = uv_strerror(rv);
    goto fail;
  }
  rv = uv_listen((uv_stream_t *)&np->lis_tcp, RP_NET_LISTEN_BACKLOG,
                 net_lis_connection_cb);
  if (rv == 0) {
    uv_recv_buffer_size((uv_handle_t *)&np->lis_udp, &sockbuf);
    sockbuf = RP_NET_SOCKBUF_LEN;
    uv_send_buffer_size((uv_handle_t *)&np->lis_udp, &sockbuf);
    rv = uv_udp_recv_start(&np->lis_udp, net_lis_alloc_cb, net_lis_recv_cb);
  }
  if (rv != 0) {
    why = uv_strerror(rv);
    goto fail;
  }
  return 0;

fail : {
  char host[INET6_ADDRSTRLEN] = "?";
  if (want->ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)want)->sin6_addr, host,
              sizeof(host));
  } else {
    inet_ntop(AF_INET, &((const struct sockaddr_in *)want)->sin_addr, host,
              sizeof(host));
  }
  snprintf(err, errlen, "cannot listen on %s port %u: %s", host,
           ntohs(((const struct sockaddr_in *)want)->sin_port), why);
}
  return RP_ERR_IO;
}

/* ------------------------------------------------------------------ */
/* Upstream events and the start-up check                               */
/* ------------------------------------------------------------------ */

static void net_check_more(rp_net_pool *np, rp_tstamp now);

static void net_check_done(rp_net_upstream *up, int passed, const char *why,
                           rp_tstamp now) {
  rp_net_pool *np = up->np;
  int rv;
  --np->nchecking;
  if (passed && !up->is_open) {
    /* Added without a check (pretest off, or found by discovery). */
    if (up->ops->open(up) == 0) {
      up->is_open = 1;
    } else {
      passed = 0;
      why = "open_failed";
    }
  }
  if (!passed) {
    up->check = RP_NET_CHECK_FAILED;
    ++np->counters.checks_failed;
    rp_net_log(np, RP_LOG_INFO, "ev=check_failed res=%s why=%s", up->name, why);
    net_check_more(np, now);
    return;
  }
  {
    rp_resolver_config rc = {.name = up->name,
                             .flags = up->ops->resolver_flags,
                             .score = up->saved_score,
                             .user_data = up};
    np->now = now;
    ++np->in_core;
    rv = rp_pool_add_resolver(np->core, &rc, &up->resolver_id, now);
    --np->in_core;
  }
  if (rv != 0) {
    up->check = RP_NET_CHECK_FAILED;
    rp_net_log(np, RP_LOG_WARN, "ev=add_failed res=%s err=%s", up->name,
               rp_strerror(rv));
    net_flush(np, now);
    return;
  }
  up->check = RP_NET_CHECK_PASSED;
  ++np->npassed;
  ++np->counters.checks_passed;
  rp_net_log(np, RP_LOG_INFO, "ev=check_passed res=%s id=%u", up->name,
             up->resolver_id);
  net_flush(np, now);
  net_check_more(np, now);
}

static int net_check_verify(rp_net_pool *np, rp_net_upstream *up,
                            const uint8_t *data, size_t len, const char **why) {
  uint8_t rcode;
  if (len < RP_DNS_HEADER_LEN || rp_dns_get_id(data) != up->check_id ||
      !(data[NET_TC_FLAGS_OFF] & (RP_DNS_FLAG_QR >> 8))) {
    *why = NULL; /* not the check's answer: ignore it */
    return 0;
  }
  if (np->opts.check_verify) {
    *why = "check_rejected";
    return np->opts.check_verify(data, len, np->opts.user_data) ? 1 : 0;
  }
  rcode = data[NET_RCODE_OFF] & RP_DNS_RCODE_MASK;
  if (rcode != RP_DNS_RCODE_NOERROR && rcode != RP_DNS_RCODE_NXDOMAIN) {
    *why = rcode == RP_DNS_RCODE_REFUSED ? "refused" : "bad_rcode";
    return 0;
  }
  if (rp_dns_is_truncated(data)) {
    /* A truncated answer to a tiny query still shows the resolver
       works. */
    return 1;
  }
  return 1;
}

void rp_net_upstream_on_answer(rp_net_upstream *up, const uint8_t *data,
                               size_t len, uint32_t flags, rp_tstamp now) {
  rp_net_pool *np = up->np;
  int rv;
  if (np->stopping) {
    return;
  }
  if (up->check == RP_NET_CHECK_RUNNING) {
    const char *why = NULL;
    int ok = net_check_verify(np, up, data, len, &why);
    if (ok || why) {
      net_check_done(up, ok, why, now);
    }
    return;
  }
  if (up->check != RP_NET_CHECK_PASSED) {
    return;
  }
  np->now = now;
  ++np->in_core;
  rv = rp_pool_on_answer(np->core, up->resolver_id, data, len, flags, now);
  --np->in_core;
  net_core_result(np, rv, "on_answer");
  net_flush(np, now);
}

void rp_net_upstream_on_error(rp_net_upstream *up, uint32_t upstream_id,
                              rp_outcome outcome, rp_tstamp now) {
  rp_net_pool *np = up->np;
  if (np->stopping) {
    return;
  }
  rp_net_log(np, RP_LOG_DEBUG, "ev=upstream_error res=%s id=%u outcome=%s",
             up->name, upstream_id, rp_outcome_str(outcome));
  if (up->check == RP_NET_CHECK_RUNNING) {
    if (upstream_id == up->check_id || upstream_id == RP_UPSTREAM_ID_ALL) {
      net_check_done(up, 0, rp_outcome_str(outcome), now);
    }
    return;
  }
  if (up->check != RP_NET_CHECK_PASSED) {
    return;
  }
  if (np->in_core) {
    if (np->errq_len == RP_NET_ERRQ_LEN) {
      /* The core's own timeout will fail this try. */
      return;
    }
    np->errq[(np->errq_head + np->errq_len) % RP_NET_ERRQ_LEN] =
        (rp_net_err){.resolver_id = up->resolver_id,
                     .upstream_id = upstream_id,
                     .outcome = outcome};
    ++np->errq_len;
    return;
  }
  np->now = now;
  ++np->in_core;
  net_core_result(
      np,
      rp_pool_on_error(np->core, up->resolver_id, upstream_id, outcome, now),
      "on_error");
  --np->in_core;
  net_flush(np, now);
}

static int net_check_start(rp_net_pool *np, rp_net_upstream *up,
                           rp_tstamp now) {
  uint8_t buf[NET_CHECK_BUF_LEN];
  rp_ssize n;
  int rv;
  if (!up->is_open) {
    rv = up->ops->open(up);
    if (rv != 0) {
      return rv;
    }
    up->is_open = 1;
  }
  net_cb_rand((uint8_t *)&up->check_id, sizeof(up->check_id), NULL);
  if (np->opts.check_build) {
    n = np->opts.check_build(buf, sizeof(buf), up->check_id,
                             np->opts.user_data);
  } else {
    n = rp_dns_build_query(buf, sizeof(buf), up->check_id, &np->pretest_name,
                           RP_DNS_TYPE_A, RP_DNS_EDNS_UDP_SIZE);
  }
  if (n <= 0) {
    return n < 0 ? (int)n : RP_ERR_INVALID_ARGUMENT;
  }
  up->check = RP_NET_CHECK_RUNNING;
  up->check_deadline = now + np->check_timeout;
  ++np->nchecking;
  rp_net_log(np, RP_LOG_DEBUG, "ev=check_start res=%s", up->name);
  /* A send failure comes back through rp_net_upstream_on_error, which
     ends the check. */
  return up->ops->send(up, buf, (size_t)n, up->check_id, 0, now);
}

/* net_working returns how many resolvers in the core are not down. */
static size_t net_working(rp_net_pool *np) {
  rp_pool_stats st;
  rp_pool_get_stats(np->core, &st);
  return st.nup;
}

static void net_check_more(rp_net_pool *np, rp_tstamp now) {
  if (np->stopping || np->in_check_more) {
    return;
  }
  np->in_check_more = 1;
  while (np->check_cursor < np->nups && np->nchecking < np->concurrency &&
         net_working(np) + np->nchecking < np->want && !np->stopping) {
    rp_net_upstream *up = &np->ups[np->order[np->check_cursor++]];
    if (up->check != RP_NET_CHECK_PENDING && up->check != RP_NET_CHECK_FAILED) {
      continue;
    }
    if (!np->pretest_on) {
      ++np->nchecking;
      up->check = RP_NET_CHECK_RUNNING;
      net_check_done(up, 1, NULL, now);
      continue;
    }
    if (net_check_start(np, up, now) != 0) {
      if (up->check == RP_NET_CHECK_RUNNING) {
        net_check_done(up, 0, "send_failed", now);
      } else {
        up->check = RP_NET_CHECK_FAILED;
        ++np->counters.checks_failed;
      }
    }
  }
  np->in_check_more = 0;
}

static void net_check_timer_cb(uv_timer_t *t) {
  rp_net_pool *np = t->data;
  rp_tstamp now = rp_net_now();
  size_t i;
  if (np->stopping) {
    return;
  }
  for (i = 0; i < np->nups && np->nchecking > 0; ++i) {
    rp_net_upstream *up = &np->ups[i];
    if (up->check == RP_NET_CHECK_RUNNING && now >= up->check_deadline) {
      net_check_done(up, 0, "timeout", now);
    }
  }
  if (now >= np->next_recheck) {
    np->next_recheck = now + np->recheck_interval;
    if (net_working(np) < np->want && np->check_cursor >= np->nups) {
      np->check_cursor = 0;
    }
  }
  net_check_more(np, now);
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                       */
/* ------------------------------------------------------------------ */

static int net_strdup(const rp_mem *mem, char **pdst, const char *src) {
  size_t n = strlen(src) + 1;
  *pdst = mem->malloc(n, mem->user_data);
  if (!*pdst) {
    return RP_ERR_NOMEM;
  }
  memcpy(*pdst, src, n);
  return 0;
}

/* net_rank is a candidate in the check order. */
typedef struct net_rank {
  int score;
  size_t index;
} net_rank;

/* net_rank_cmp orders by saved score, best first, then by position. */
static int net_rank_cmp(const void *a, const void *b) {
  const net_rank *ra = a, *rb = b;
  if (ra->score != rb->score) {
    return ra->score > rb->score ? -1 : 1;
  }
  return ra->index < rb->index ? -1 : (ra->index > rb->index ? 1 : 0);
}

static void net_free(rp_net_pool *np) {
  const rp_mem *mem = np->mem;
  size_t i;
  for (i = 0; i < np->nups; ++i) {
    if (np->ups[i].ops && np->ups[i].ops->free) {
      np->ups[i].ops->free(&np->ups[i]);
    }
    mem->free(np->ups[i].name, mem->user_data);
    mem->free(np->ups[i].tcp_ids, mem->user_data);
    mem->free(np->ups[i].host, mem->user_data);
    mem->free(np->ups[i].tls_name, mem->user_data);
    mem->free(np->ups[i].path, mem->user_data);
  }
  mem->free(np->tls_ca, mem->user_data);
  mem->free(np->tls_name, mem->user_data);
  if (np->tls_ctx) {
    SSL_CTX_free(np->tls_ctx);
  }
  mem->free(np->ups, mem->user_data);
  mem->free(np->order, mem->user_data);
  mem->free(np->rxbuf, mem->user_data);
  mem->free(np->slots, mem->user_data);
  mem->free(np->clients, mem->user_data);
  mem->free(np->client_gen, mem->user_data);
  mem->free(np->txmsgs, mem->user_data);
  mem->free(np->txbuf, mem->user_data);
  mem->free(np->txdirty, mem->user_data);
  mem->free(np->txhdrs, mem->user_data);
  mem->free(np->txiov, mem->user_data);
  mem->free(np->txorder, mem->user_data);
  mem->free(np->scores_file, mem->user_data);
  rp_scores_free(&np->scores);
  rp_pool_del(np->core);
  mem->free(np, mem->user_data);
}

static void net_disc_closed(rp_disc *d, void *user_data);

/* net_close_all closes every handle; rp_net_handle_closed finishes. */
static void net_close_all(rp_net_pool *np) {
  size_t i;
  if (np->disc) {
    rp_disc_stop(np->disc, net_disc_closed, np);
  }
  uv_close((uv_handle_t *)&np->lis_udp, net_handle_closed_cb);
  uv_close((uv_handle_t *)&np->lis_tcp, net_handle_closed_cb);
  uv_close((uv_handle_t *)&np->timer, net_handle_closed_cb);
  uv_close((uv_handle_t *)&np->check_timer, net_handle_closed_cb);
  uv_close((uv_handle_t *)&np->flush_prepare, net_handle_closed_cb);
  uv_close((uv_handle_t *)&np->flush_check, net_handle_closed_cb);
  for (i = 0; i < RP_NET_MAX_TCP_CLIENTS; ++i) {
    if (np->clients[i]) {
      rp_net_stream_close(&np->clients[i]->s);
      np->clients[i] = NULL;
    }
  }
  for (i = 0; i < np->nups; ++i) {
    np->ups[i].ops->close(&np->ups[i]);
  }
}

static int net_save_scores(rp_net_pool *np) {
  char err[RP_CONFIG_ERRLEN];
  rp_tstamp now = rp_net_now();
  size_t i;
  int rv = 0;
  if (!np->scores_file) {
    return 0;
  }
  for (i = 0; i < np->nups && rv == 0; ++i) {
    rp_net_upstream *up = &np->ups[i];
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
  int rv;
  if (np->stopping) {
    return 0;
  }
  rv = net_save_scores(np);
  /* Answers already given by the core leave before the sockets close. */
  net_tx_run(np);
  np->stopping = 1;
  np->closed_cb = closed_cb;
  np->closed_ud = user_data;
  net_close_all(np);
  return rv;
}

/* net_init_upstream appends |r| to np->ups (room was reserved). Sets
   |*pusable| to 1 unless it is "auto". */
static int net_init_upstream(rp_net_pool *np, const rp_config_resolver *r,
                             int *pusable, char *err, size_t errlen) {
  const rp_mem *mem = np->mem;
  rp_net_upstream *up = &np->ups[np->nups];
  *pusable = 0;
  *up = (rp_net_upstream){.np = np,
                          .index = np->nups,
                          .scheme = r->scheme,
                          .addr = r->addr,
                          .has_addr = r->has_addr,
                          .port = r->port,
                          .tcp_retry_at = RP_TSTAMP_UNSET};
  up->tx = (rp_net_txsock){.udp = &up->udp, .up = up, .head = -1, .tail = -1};
  rp_net_stream_init(&up->tcp, NULL, mem, up);
  if (net_strdup(mem, &up->name, r->text) != 0) {
    return RP_ERR_NOMEM;
  }
  np->order[np->nups] = np->nups;
  ++np->nups;
  switch (r->scheme) {
  case RP_SCHEME_UDP:
    up->ops = &rp_net_transport_udp;
    break;
  case RP_SCHEME_TCP:
    up->ops = &rp_net_transport_tcp;
    break;
  case RP_SCHEME_DOT:
  case RP_SCHEME_DOH:
    /* Keep what a TLS transport needs. */
    if (net_strdup(mem, &up->host, r->host) != 0 ||
        net_strdup(mem, &up->tls_name, r->tls_name) != 0 ||
        net_strdup(mem, &up->path, r->path) != 0) {
      return RP_ERR_NOMEM;
    }
    up->ops = r->scheme == RP_SCHEME_DOT ? &rp_net_transport_dot
                                         : &rp_net_transport_doh;
    if (!np->tls_ctx) {
      int rv = rp_net_tls_ctx_new(&np->tls_ctx, np->tls_ca, err, errlen);
      if (rv != 0) {
        return rv == RP_ERR_TLS ? RP_ERR_CONFIG : rv;
      }
    }
    break;
  case RP_SCHEME_AUTO:
    /* Discovery feeds the pool; "auto" itself is no resolver. */
    up->ops = &rp_net_transport_udp;
    up->check = RP_NET_CHECK_UNSUPPORTED;
    np->auto_on = 1;
    return 0;
  }
  rp_scores_get(&np->scores, up->name, &up->saved_score);
  *pusable = 1;
  return 0;
}

/* net_bundled_ctx carries rp_disc_bundled_tls's callback state. */
typedef struct net_bundled_ctx {
  rp_net_pool *np;
  /* count only counts when |add| is 0. */
  int add;
  size_t count;
  int rv;
  size_t nusable;
  char *err;
  size_t errlen;
} net_bundled_ctx;

static int net_bundled_cb(const char *url, void *user_data) {
  net_bundled_ctx *b = user_data;
  rp_config_resolver r;
  int usable;
  if (rp_config_parse_resolver(&r, url, NULL, 0) != 0 ||
      (r.scheme != RP_SCHEME_DOT && r.scheme != RP_SCHEME_DOH)) {
    return 0;
  }
  if (!b->add) {
    ++b->count;
    return 0;
  }
  if (b->np->nups >= b->np->cap_ups) {
    return 1;
  }
  b->rv = net_init_upstream(b->np, &r, &usable, b->err, b->errlen);
  b->nusable += (size_t)usable;
  return b->rv != 0;
}

/* net_setup_upstreams copies the usable resolvers of the config; with
   "auto" it adds the bundled DoT and DoH resolvers (checked as
   configured ones) and reserves room for what discovery finds. */
static int net_setup_upstreams(rp_net_pool *np, const rp_config *cfg, char *err,
                               size_t errlen) {
  const rp_mem *mem = np->mem;
  size_t i, nusable = 0, cap = cfg->nresolvers;
  int has_auto = 0;
  net_bundled_ctx bctx = {.np = np, .err = err, .errlen = errlen};
  for (i = 0; i < cfg->nresolvers; ++i) {
    has_auto |= cfg->resolvers[i].scheme == RP_SCHEME_AUTO;
  }
  if (has_auto) {
    if (cfg->discovery.bundled &&
        rp_disc_bundled_tls(cfg->discovery.data_file, cfg->discovery.country,
                            net_bundled_cb, &bctx, err, errlen) != 0) {
      return RP_ERR_CONFIG;
    }
    cap += bctx.count + cfg->discovery.want;
  }
  np->cap_ups = cap;
  np->ups = mem->calloc(cap ? cap : 1, sizeof(*np->ups), mem->user_data);
  np->order = mem->calloc(cap ? cap : 1, sizeof(*np->order), mem->user_data);
  if (!np->ups || !np->order) {
    return RP_ERR_NOMEM;
  }
  for (i = 0; i < cfg->nresolvers; ++i) {
    int usable,
        rv = net_init_upstream(np, &cfg->resolvers[i], &usable, err, errlen);
    if (rv != 0) {
      return rv;
    }
    nusable += (size_t)usable;
  }
  if (has_auto && cfg->discovery.bundled) {
    bctx.add = 1;
    rp_disc_bundled_tls(cfg->discovery.data_file, cfg->discovery.country,
                        net_bundled_cb, &bctx, err, errlen);
    if (bctx.rv != 0) {
      return bctx.rv;
    }
    nusable += bctx.nusable;
  }
  if (nusable == 0 && !np->auto_on) {
    snprintf(err, errlen, "no resolvers configured");
    return RP_ERR_INVALID_ARGUMENT;
  }
  {
    net_rank *rank =
        mem->calloc(np->nups ? np->nups : 1, sizeof(*rank), mem->user_data);
    if (!rank) {
      return RP_ERR_NOMEM;
    }
    for (i = 0; i < np->nups; ++i) {
      rank[i] = (net_rank){.score = np->ups[i].saved_score, .index = i};
    }
    qsort(rank, np->nups, sizeof(*rank), net_rank_cmp);
    for (i = 0; i < np->nups; ++i) {
      np->order[i] = rank[i].index;
    }
    mem->free(rank, mem->user_data);
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Discovery ("auto")                                                   */
/* ------------------------------------------------------------------ */

static void net_disc_found(const rp_disc_report *rep, void *user_data) {
  rp_net_pool *np = user_data;
  rp_config_resolver r;
  rp_net_upstream *up;
  rp_tstamp now = rp_net_now();
  size_t i;
  int usable;
  if (np->stopping || np->nups >= np->cap_ups) {
    return;
  }
  for (i = 0; i < np->nups; ++i) {
    const rp_net_upstream *o = &np->ups[i];
    if (o->scheme == RP_SCHEME_UDP && o->has_addr &&
        o->addr.ss_family == rep->sa->sa_family &&
        memcmp(&o->addr, rep->sa,
               rep->sa->sa_family == AF_INET6
                   ? sizeof(struct sockaddr_in6)
                   : sizeof(struct sockaddr_in)) == 0) {
      return; /* configured already */
    }
  }
  if (rp_config_parse_resolver(&r, rep->addr, NULL, 0) != 0 ||
      net_init_upstream(np, &r, &usable, NULL, 0) != 0) {
    return;
  }
  up = &np->ups[np->nups - 1];
  ++np->counters.discovery_found;
  /* The pretest was the start-up check: add it to the core at once. */
  up->check = RP_NET_CHECK_RUNNING;
  ++np->nchecking;
  net_check_done(up, 1, NULL, now);
}

static void net_disc_done(const rp_disc_stats *st, void *user_data) {
  rp_net_pool *np = user_data;
  rp_net_log(np, st->passed ? RP_LOG_INFO : RP_LOG_WARN,
             "ev=discovery_done found=%zu tested=%zu candidates=%zu "
             "elapsed_ms=%llu",
             st->passed, st->tested, st->candidates,
             (unsigned long long)(st->elapsed / RP_MILLISECONDS));
}

static void net_disc_log(rp_log_level level, const char *line,
                         void *user_data) {
  rp_net_pool *np = user_data;
  if (np->opts.log && level <= np->opts.log_level) {
    np->opts.log(level, line, np->opts.user_data);
  }
}

static void net_disc_closed(rp_disc *d, void *user_data) {
  rp_net_pool *np = user_data;
  (void)d;
  np->disc = NULL;
  rp_net_handle_closed(np);
}

/* net_score_cmp orders score entries best first. */
static int net_score_cmp(const void *a, const void *b) {
  const rp_scores_entry *ea = *(const rp_scores_entry *const *)a;
  const rp_scores_entry *eb = *(const rp_scores_entry *const *)b;
  return ea->score > eb->score ? -1 : (ea->score < eb->score ? 1 : 0);
}

/* net_disc_start runs discovery; saved scores of 0 or more are tried
   first, best first. */
static int net_disc_start(rp_net_pool *np, const rp_config *cfg, char *err,
                          size_t errlen) {
  const rp_mem *mem = np->mem;
  const rp_scores_entry **ents = NULL;
  const char **first = NULL;
  size_t i, n = 0;
  rp_disc_options o = {.config = &cfg->discovery,
                       .pretest_domain = cfg->pretest_domain,
                       .on_found = net_disc_found,
                       .on_done = net_disc_done,
                       .log = net_disc_log,
                       .log_level = np->opts.log_level,
                       .mem = mem,
                       .user_data = np};
  int rv;
  if (np->scores.n) {
    ents = mem->calloc(np->scores.n, sizeof(*ents), mem->user_data);
    first = mem->calloc(np->scores.n, sizeof(*first), mem->user_data);
    if (!ents || !first) {
      mem->free(ents, mem->user_data);
      mem->free(first, mem->user_data);
      return RP_ERR_NOMEM;
    }
    for (i = 0; i < np->scores.n; ++i) {
      if (np->scores.entries[i].score >= 0) {
        ents[n++] = &np->scores.entries[i];
      }
    }
    qsort(ents, n, sizeof(*ents), net_score_cmp);
    for (i = 0; i < n; ++i) {
      first[i] = ents[i]->name;
    }
  }
  o.first = first;
  o.nfirst = n;
  rv = rp_disc_start(&np->disc, np->loop, &o, err, errlen);
  mem->free(ents, mem->user_data);
  mem->free(first, mem->user_data);
  if (rv == 0) {
    rp_net_handle_opened(np);
  }
  return rv;
}

int rp_net_pool_start(rp_net_pool **pnp, uv_loop_t *loop,
                      const rp_net_options *options, char *err, size_t errlen) {
  const rp_mem *mem = options && options->mem ? options->mem : rp_mem_default();
  const rp_config *cfg = options ? options->config : NULL;
  rp_net_pool *np;
  rp_callbacks cbs = {.send_query = net_cb_send_query,
                      .deliver = net_cb_deliver,
                      .rand = net_cb_rand,
                      .log = net_cb_log};
  struct sockaddr_storage listen;
  const char *pretest;
  char msg[RP_CONFIG_ERRLEN];
  size_t i;
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
  np->opts = *options;
  np->opts.config = NULL;
  np->opts.settings = NULL;
  np->armed = RP_TSTAMP_UNSET;
  np->rx_now = RP_TSTAMP_UNSET;
  np->rand_pos = RP_NET_RAND_LEN;
  np->kind = cfg->has_kind ? cfg->kind : options->kind;
  np->want = RP_NET_CHECK_WANT;
  np->check_timeout =
      options->check_timeout ? options->check_timeout : RP_NET_CHECK_TIMEOUT;
  np->recheck_interval = options->recheck_interval ? options->recheck_interval
                                                   : RP_NET_RECHECK_INTERVAL;
  np->concurrency = cfg->discovery.concurrency ? cfg->discovery.concurrency
                                               : RP_NET_CHECK_WANT;
  rp_scores_init(&np->scores, mem);
  if (options->settings) {
    np->settings = *options->settings;
  } else {
    rp_settings_default(&np->settings, np->kind);
    rp_config_apply(cfg, &np->settings);
    np->settings.log_level = options->log ? options->log_level : RP_LOG_ERROR;
    np->settings.log_categories = RP_LOG_CAT_ALL;
  }

  /* Scores first: they order the checks. */
  rp_scores_key(np->kind, options->score_type, np->score_key,
                sizeof(np->score_key));
  if (cfg->scores_file) {
    if ((rv = net_strdup(mem, &np->scores_file, cfg->scores_file)) != 0) {
      goto fail_early;
    }
    rv = rp_scores_load(&np->scores, np->scores_file, np->score_key, msg,
                        sizeof(msg));
    if (rv == RP_ERR_NOMEM) {
      goto fail_early;
    }
    if (rv == RP_ERR_NOT_FOUND) {
      rp_net_log(np, RP_LOG_INFO, "ev=scores_missing file=%s", np->scores_file);
    } else if (rv != 0) {
      rp_net_log(np, RP_LOG_WARN, "ev=scores_ignored why=\"%s\"", msg);
    }
  }

  pretest = cfg->pretest_domain ? cfg->pretest_domain
                                : RP_CONFIG_DEFAULT_PRETEST_DOMAIN;
  np->pretest_on = options->check_build != NULL || pretest[0] != '\0';
  if (!options->check_build && pretest[0] &&
      rp_dns_name_from_text(&np->pretest_name, pretest) != 0) {
    snprintf(err, errlen, "pretest_domain: bad name (%s)", pretest);
    rv = RP_ERR_CONFIG;
    goto fail_early;
  }

  if ((cfg->tls_ca && net_strdup(mem, &np->tls_ca, cfg->tls_ca) != 0) ||
      (cfg->tls_name && net_strdup(mem, &np->tls_name, cfg->tls_name) != 0)) {
    rv = RP_ERR_NOMEM;
    goto fail_early;
  }
  rv = net_setup_upstreams(np, cfg, err, errlen);
  if (rv != 0) {
    goto fail_early;
  }
  np->rxbuf = mem->malloc(RP_NET_RXBUF_LEN, mem->user_data);
  np->slots =
      mem->calloc(RP_NET_SEND_SLOTS, sizeof(*np->slots), mem->user_data);
  np->clients =
      mem->calloc(RP_NET_MAX_TCP_CLIENTS, sizeof(*np->clients), mem->user_data);
  np->client_gen = mem->calloc(RP_NET_MAX_TCP_CLIENTS, sizeof(*np->client_gen),
                               mem->user_data);
  np->txmsgs = mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txmsgs), mem->user_data);
  np->txbuf = mem->malloc(RP_NET_TX_BYTES, mem->user_data);
  np->txdirty =
      mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txdirty), mem->user_data);
  np->txhdrs = mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txhdrs), mem->user_data);
  np->txiov = mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txiov), mem->user_data);
  np->txorder =
      mem->calloc(RP_NET_TX_MSGS, sizeof(*np->txorder), mem->user_data);
  if (!np->rxbuf || !np->slots || !np->clients || !np->client_gen ||
      !np->txmsgs || !np->txbuf || !np->txdirty || !np->txhdrs || !np->txiov ||
      !np->txorder) {
    rv = RP_ERR_NOMEM;
    goto fail_early;
  }
  for (i = 0; i < RP_NET_SEND_SLOTS; ++i) {
    np->slots[i].np = np;
    np->slots[i].next = i + 1 < RP_NET_SEND_SLOTS ? &np->slots[i + 1] : NULL;
  }
  np->free_slots = &np->slots[0];

  rv = rp_pool_new(&np->core, &np->settings, &cbs, mem, np);
  if (rv != 0) {
    snprintf(err, errlen, "cannot create the pool: %s", rp_strerror(rv));
    goto fail_early;
  }

  if (cfg->has_listen) {
    listen = cfg->listen;
  } else {
    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    memset(&listen, 0, sizeof(listen));
    memcpy(&listen, &sin, sizeof(sin));
  }

  /* From here on handles exist: failures close them through stop. */
  uv_udp_init_ex(loop, &np->lis_udp, AF_UNSPEC | UV_UDP_RECVMMSG);
  uv_tcp_init(loop, &np->lis_tcp);
  uv_timer_init(loop, &np->timer);
  uv_timer_init(loop, &np->check_timer);
  uv_prepare_init(loop, &np->flush_prepare);
  uv_check_init(loop, &np->flush_check);
  np->lis_udp.data = np->lis_tcp.data = np;
  np->timer.data = np->check_timer.data = np;
  np->flush_prepare.data = np->flush_check.data = np;
  np->lis_tx = (rp_net_txsock){.udp = &np->lis_udp, .head = -1, .tail = -1};
  np->nhandles = 6;
  /* Neither keeps the loop alive on its own. */
  uv_prepare_start(&np->flush_prepare, net_prepare_cb);
  uv_check_start(&np->flush_check, net_check_cb);
  uv_unref((uv_handle_t *)&np->flush_prepare);
  uv_unref((uv_handle_t *)&np->flush_check);

  rv = net_bind(np, &listen, err, errlen);
  if (rv != 0) {
    /* Do not touch the scores file for a pool that never ran. */
    mem->free(np->scores_file, mem->user_data);
    np->scores_file = NULL;
    rp_net_pool_stop(np, NULL, NULL);
    return rv;
  }

  np->next_recheck = rp_net_now() + np->recheck_interval;
  uv_timer_start(&np->check_timer, net_check_timer_cb, RP_NET_CHECK_TICK_MS,
                 RP_NET_CHECK_TICK_MS);
  if (np->auto_on) {
    rv = net_disc_start(np, cfg, err, errlen);
    if (rv != 0) {
      mem->free(np->scores_file, mem->user_data);
      np->scores_file = NULL;
      rp_net_pool_stop(np, NULL, NULL);
      return rv;
    }
  }
  *pnp = np;
  net_check_more(np, rp_net_now());
  return 0;

fail_early:
  net_free(np);
  return rv;
}

int rp_net_pool_get_address(const rp_net_pool *np,
                            struct sockaddr_storage *addr, socklen_t *plen) {
  *addr = np->lis_addr;
  *plen = np->lis_addrlen;
  return 0;
}

void rp_net_pool_format_address(const rp_net_pool *np, char *out, size_t cap) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (np->lis_addr.ss_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&np->lis_addr;
    inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
    snprintf(out, cap, "[%s]:%u", host, ntohs(s6->sin6_port));
  } else {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)&np->lis_addr;
    inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
    snprintf(out, cap, "%s:%u", host, ntohs(s4->sin_port));
  }
}

rp_pool *rp_net_pool_get_core(rp_net_pool *np) { return np->core; }

size_t rp_net_pool_resolver_count(const rp_net_pool *np) { return np->nups; }

int rp_net_pool_get_resolver(const rp_net_pool *np, size_t i,
                             rp_net_resolver_info *info, rp_tstamp now) {
  const rp_net_upstream *up;
  if (i >= np->nups) {
    return RP_ERR_NOT_FOUND;
  }
  up = &np->ups[i];
  *info = (rp_net_resolver_info){.name = up->name,
                                 .check = up->check,
                                 .resolver_id = up->resolver_id,
                                 .saved_score = up->saved_score,
                                 .last_error = up->last_error};
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
