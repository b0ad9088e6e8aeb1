/*
 * upstream.c: the UDP and TCP transports.
 *
 * IMPLEMENTATION NOTES
 * - UDP: connected sockets (uv_udp_connect), so the kernel drops
 *   datagrams from any other source address or port; the core then
 *   checks ID and question. New sends take a new socket, so a new random
 *   source port, once the current one is udp_port_life old (1 s): a
 *   blind forger must find the port as well as the ID, and a port found
 *   (by a scan) is stale a second later. An older socket stays open for
 *   the answers to its sends until per_attempt after its last one, then
 *   closes at the next rotation; at most RP_NET_UDP_PORTS are open, and
 *   when all are busy the current one is kept. Sends to a resolver in the pool
 *   are queued and leave with one sendmmsg per loop iteration (net.c);
 *   a start-up check goes out at once with uv_udp_try_send. Both fall
 *   back to a preallocated slot on EAGAIN. A truncated answer
 *   makes the core resend with RP_SEND_STREAM, which goes to a TCP
 *   companion connection opened on first use and kept.
 * - TCP (tcp:// and the companion): one kept connection, queries
 *   pipelined, answers taken in any order (RFC 7766 6.2.1.1). A bitmap
 *   of the IDs in flight lets a lost connection fail exactly the tries
 *   it carried. A connection that fails to open is retried after a
 *   backoff of 100 ms doubling to 10 s; sends meanwhile fail at once
 *   (RP_OUTCOME_CONNECT_FAILED) so the core places them elsewhere.
 * - ICMP port unreachable on a connected UDP socket shows up as a read
 *   error. During the start-up check it fails the check at once; later
 *   it is logged and otherwise ignored: the core's timeouts already
 *   handle a resolver that does not answer.
 */
#include "net_internal.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* TCP (shared by tcp:// and the UDP resolver's companion)              */
/* ------------------------------------------------------------------ */

static void tcp_fail_inflight(rp_net_upstream *up, rp_tstamp now) {
  size_t i;
  if (!up->tcp_ids) {
    return;
  }
  if (up->ops == &rp_net_transport_tcp) {
    memset(up->tcp_ids, 0, RP_NET_IDMAP_LEN);
    rp_net_upstream_on_error(up, RP_UPSTREAM_ID_ALL, RP_OUTCOME_CONNECT_FAILED,
                             now);
    return;
  }
  for (i = 0; i < RP_NET_IDMAP_LEN; ++i) {
    uint8_t b = up->tcp_ids[i];
    unsigned bit;
    if (!b) {
      continue;
    }
    up->tcp_ids[i] = 0;
    for (bit = 0; bit < 8; ++bit) {
      if (b & (1u << bit)) {
        rp_net_upstream_on_error(up, (uint32_t)(i * 8 + bit),
                                 RP_OUTCOME_CONNECT_FAILED, now);
      }
    }
  }
}

static void tcp_on_message(rp_net_stream *s, const uint8_t *msg, size_t len,
                           rp_tstamp now) {
  rp_net_upstream *up = s->user_data;
  if (len >= 2 && up->tcp_ids) {
    uint16_t id = rp_dns_get_id(msg);
    up->tcp_ids[id >> 3] &= (uint8_t) ~(1u << (id & 7u));
  }
  up->tcp_backoff = 0;
  rp_net_upstream_on_answer(up, msg, len, RP_ANSWER_STREAM, now);
}

static void tcp_on_connect(rp_net_stream *s, int uverr, rp_tstamp now) {
  rp_net_upstream *up = s->user_data;
  rp_net_pool *np = up->np;
  if (uverr == 0) {
    ++np->counters.tcp_connects;
    rp_net_log(np, RP_LOG_DEBUG, "ev=tcp_connected res=%s", up->name);
    return;
  }
  ++np->counters.tcp_connect_failures;
  up->tcp_backoff =
      up->tcp_backoff ? up->tcp_backoff * 2 : RP_NET_TCP_BACKOFF_MIN;
  if (up->tcp_backoff > RP_NET_TCP_BACKOFF_MAX) {
    up->tcp_backoff = RP_NET_TCP_BACKOFF_MAX;
  }
  up->tcp_retry_at = now + up->tcp_backoff;
  rp_net_log(np, RP_LOG_INFO,
             "ev=tcp_connect_failed res=%s err=%s backoff_ms=%llu", up->name,
             uv_err_name(uverr),
             (unsigned long long)(up->tcp_backoff / RP_MILLISECONDS));
  tcp_fail_inflight(up, now);
}

static void tcp_on_end(rp_net_stream *s, int uverr, rp_tstamp now) {
  rp_net_upstream *up = s->user_data;
  rp_net_log(up->np, RP_LOG_DEBUG, "ev=tcp_closed res=%s err=%s", up->name,
             uv_err_name(uverr));
  tcp_fail_inflight(up, now);
}

static void tcp_on_closed(rp_net_stream *s) {
  rp_net_upstream *up = s->user_data;
  rp_net_up_handle_closed(up);
}

static const rp_net_stream_callbacks tcp_stream_cb = {
    .on_message = tcp_on_message,
    .on_connect = tcp_on_connect,
    .on_end = tcp_on_end,
    .on_closed = tcp_on_closed,
};

/* tcp_send sends over |up|'s TCP connection, connecting if needed. */
static int tcp_send(rp_net_upstream *up, const uint8_t *data, size_t len,
                    uint16_t upstream_id, rp_tstamp now) {
  rp_net_pool *np = up->np;
  int rv;
  if (!up->tcp_ids) {
    up->tcp_ids = np->mem->calloc(1, RP_NET_IDMAP_LEN, np->mem->user_data);
    if (!up->tcp_ids) {
      ++np->counters.send_failures;
      rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_SEND_FAILED, now);
      return 0;
    }
  }
  if (up->tcp.state == RP_NET_STREAM_CLOSED) {
    if (up->tcp_retry_at != RP_TSTAMP_UNSET && now < up->tcp_retry_at) {
      rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_CONNECT_FAILED, now);
      return 0;
    }
    rp_net_stream_init(&up->tcp, &tcp_stream_cb, np->mem, up);
    rv = rp_net_stream_connect(&up->tcp, np->loop,
                               (const struct sockaddr *)&up->addr);
    if (up->tcp.state != RP_NET_STREAM_CLOSED) {
      rp_net_up_handle_opened(up);
    }
    if (rv != 0) {
      ++np->counters.tcp_connect_failures;
      up->tcp_retry_at = now + RP_NET_TCP_BACKOFF_MIN;
      rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_CONNECT_FAILED, now);
      return 0;
    }
  }
  rv = rp_net_stream_write(&up->tcp, data, len, now);
  if (rv != 0) {
    /* CLOSING (the old connection is going) or full: fail this one. */
    ++np->counters.send_failures;
    rp_net_upstream_on_error(up, upstream_id,
                             up->tcp.state == RP_NET_STREAM_CLOSING
                                 ? RP_OUTCOME_CONNECT_FAILED
                                 : RP_OUTCOME_SEND_FAILED,
                             now);
    return 0;
  }
  up->tcp_ids[upstream_id >> 3] |= (uint8_t)(1u << (upstream_id & 7u));
  return 0;
}

static void tcp_close(rp_net_upstream *up) { rp_net_stream_close(&up->tcp); }

/* ------------------------------------------------------------------ */
/* UDP                                                                  */
/* ------------------------------------------------------------------ */

static void udp_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  rp_net_upstream *up = h->data;
  (void)suggested;
  buf->base = (char *)up->np->rxbuf;
  buf->len = RP_NET_RXBUF_LEN;
}

static void udp_recv_cb(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                        const struct sockaddr *addr, unsigned flags) {
  rp_net_upstream *up = h->data;
  (void)addr;
  if (nread <= 0 || (flags & UV_UDP_MMSG_FREE)) {
    /* The end of a recvmmsg batch (or an error). */
    up->np->rx_now = RP_TSTAMP_UNSET;
  }
  if (nread < 0) {
    rp_net_log(up->np, RP_LOG_DEBUG, "ev=udp_error res=%s err=%s", up->name,
               uv_err_name((int)nread));
    if (up->check == RP_NET_CHECK_RUNNING) {
      /* Port unreachable during the check: no need to wait it out. */
      rp_net_upstream_on_error(up, up->check_id, RP_OUTCOME_CONNECT_FAILED,
                               rp_net_now());
    }
    return;
  }
  if (nread == 0 || (flags & UV_UDP_PARTIAL)) {
    return;
  }
  rp_net_upstream_on_answer(up, (const uint8_t *)buf->base, (size_t)nread, 0,
                            rp_net_rx_now(up->np, flags));
}

static void udpsock_closed_cb(uv_handle_t *h) {
  /* udp is the first member of rp_net_udpsock. */
  rp_net_udpsock *u = (rp_net_udpsock *)(void *)h;
  rp_net_upstream *up = u->tx.up;
  u->state = RP_NET_UDPSOCK_FREE;
  rp_net_up_handle_closed(up);
}

/* udpsock_close closes |u| unless it has datagrams queued. */
static void udpsock_close(rp_net_udpsock *u) {
  if (u->state != RP_NET_UDPSOCK_OPEN || u->tx.head >= 0) {
    return;
  }
  u->state = RP_NET_UDPSOCK_CLOSING;
  uv_close((uv_handle_t *)&u->udp, udpsock_closed_cb);
}

/* udpsock_open connects |u| to the resolver from a new source port (the
   kernel picks it at random from the ephemeral range). */
static int udpsock_open(rp_net_upstream *up, rp_net_udpsock *u, rp_tstamp now) {
  rp_net_pool *np = up->np;
  int rv;
  rv = uv_udp_init_ex(np->loop, &u->udp,
                      (unsigned)up->addr.ss_family | UV_UDP_RECVMMSG);
  if (rv != 0) {
    return rv;
  }
  u->udp.data = up;
  u->state = RP_NET_UDPSOCK_OPEN;
  u->opened_at = now;
  u->last_send = now;
  u->tx.head = u->tx.tail = -1;
  rp_net_up_handle_opened(up);
  rv = uv_udp_connect(&u->udp, (const struct sockaddr *)&up->addr);
  if (rv == 0) {
    /* The kernel's default (about 200 KiB) holds 200 tunnel answers: at
       tens of thousands a second, one slow turn of the loop lost
       thousands of them (data the tunnel server then had to send
       again). A larger buffer costs only what is queued. */
    int sockbuf = RP_NET_SOCKBUF_LEN;

    uv_recv_buffer_size((uv_handle_t *)&u->udp, &sockbuf);
    rv = uv_udp_recv_start(&u->udp, udp_alloc_cb, udp_recv_cb);
  }
  if (rv != 0) {
    u->state = RP_NET_UDPSOCK_CLOSING;
    uv_close((uv_handle_t *)&u->udp, udpsock_closed_cb);
    return rv;
  }
  ++up->udp_ports;
  return 0;
}

/* udp_current returns the socket a send at |now| takes: the current one
   while it is younger than udp_port_life, else a new one (older sockets
   stay open for answers until per_attempt after their last send). NULL
   when no socket can be opened. */
static rp_net_udpsock *udp_current(rp_net_upstream *up, rp_tstamp now) {
  rp_net_pool *np = up->np;
  rp_duration life = np->settings.udp_port_life;
  rp_net_udpsock *cur = up->udp_cur >= 0 ? &up->udps[up->udp_cur] : NULL;
  int i, slot = -1, rv;
  if (cur && (life == 0 || !rp_tstamp_elapsed(cur->opened_at, life, now))) {
    return cur;
  }
  if (up->udp_open == RP_NET_UDP_FAILED) {
    return NULL;
  }
  for (i = 0; i < RP_NET_UDP_PORTS; ++i) {
    rp_net_udpsock *u = &up->udps[i];
    if (u != cur && u->state == RP_NET_UDPSOCK_OPEN &&
        rp_tstamp_elapsed(u->last_send, np->settings.per_attempt, now)) {
      udpsock_close(u);
    }
    if (slot < 0 && u->state == RP_NET_UDPSOCK_FREE) {
      slot = i;
    }
  }
  if (slot < 0) {
    /* Every other socket still waits for answers: keep this one. */
    return cur;
  }
  rv = udpsock_open(up, &up->udps[slot], now);
  if (rv != 0) {
    rp_net_log(np, cur ? RP_LOG_DEBUG : RP_LOG_WARN,
               "ev=udp_open_failed res=%s err=%s", up->name, uv_err_name(rv));
    if (!cur) {
      up->udp_open = RP_NET_UDP_FAILED;
    }
    return cur;
  }
  up->udp_cur = slot;
  up->udp_open = RP_NET_UDP_OPEN;
  return &up->udps[slot];
}

static int udp_open(rp_net_upstream *up, rp_tstamp now) {
  if (up->udp_open == RP_NET_UDP_OPEN) {
    return 0;
  }
  return udp_current(up, now) ? 0 : RP_ERR_IO;
}

static int udp_send(rp_net_upstream *up, const uint8_t *data, size_t len,
                    uint16_t upstream_id, uint32_t flags, rp_tstamp now) {
  rp_net_udpsock *u;
  int rv;
  if (flags & RP_SEND_STREAM) {
    return tcp_send(up, data, len, upstream_id, now);
  }
  u = udp_current(up, now);
  if (!u) {
    rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_SEND_FAILED, now);
    return 0;
  }
  u->last_send = now;
  if (up->check == RP_NET_CHECK_PASSED) {
    /* Queued; a failure is reported when the queue is sent. */
    rp_net_udp_queue(up->np, &u->tx, data, len, NULL, upstream_id, now);
    return 0;
  }
  /* The start-up check: sent at once. */
  rv = rp_net_udp_send(up->np, &u->udp, data, len, NULL);
  if (rv != 0) {
    rp_net_upstream_on_error(up, upstream_id, RP_OUTCOME_SEND_FAILED, now);
  }
  return 0;
}

static void udp_close(rp_net_upstream *up) {
  int i;
  for (i = 0; i < RP_NET_UDP_PORTS; ++i) {
    rp_net_udpsock *u = &up->udps[i];
    if (u->state == RP_NET_UDPSOCK_OPEN) {
      /* Queued datagrams were sent before the sockets close (net.c). */
      u->state = RP_NET_UDPSOCK_CLOSING;
      uv_close((uv_handle_t *)&u->udp, udpsock_closed_cb);
    }
  }
  up->udp_cur = -1;
  tcp_close(up);
}

const rp_net_transport rp_net_transport_udp = {
    .name = "udp",
    .resolver_flags = RP_RESOLVER_TCP_FALLBACK,
    .open = udp_open,
    .send = udp_send,
    .close = udp_close,
};

/* ------------------------------------------------------------------ */
/* tcp://                                                               */
/* ------------------------------------------------------------------ */

static int tcp_open(rp_net_upstream *up, rp_tstamp now) {
  (void)up;
  (void)now;
  return 0;
}

static int tcp_transport_send(rp_net_upstream *up, const uint8_t *data,
                              size_t len, uint16_t upstream_id, uint32_t flags,
                              rp_tstamp now) {
  (void)flags;
  return tcp_send(up, data, len, upstream_id, now);
}

const rp_net_transport rp_net_transport_tcp = {
    .name = "tcp",
    .resolver_flags = RP_RESOLVER_STREAM,
    .open = tcp_open,
    .send = tcp_transport_send,
    .close = tcp_close,
};
