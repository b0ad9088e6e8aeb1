/*
 * sendq.c: the runtime's datagram sends: the batched send queue (one
 * sendmmsg(2) per socket, run from the loop's uv_check and uv_prepare),
 * the send slots used when the kernel pushes back, and the receive
 * batch clock. See net.c for the design notes.
 */
/* sendmmsg(2) and struct mmsghdr are GNU extensions. */
#define _GNU_SOURCE
#include "net_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/socket.h>

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
static void net_tx_failed(rp_net_txsock *tx, uint16_t upstream_id,
                          rp_tstamp now) {
  /* Only upstreams in the core queue datagrams (checks are sent at
     once); np->in_core is set, so the failure waits in errq. */
  if (tx->up && tx->up->check == RP_NET_CHECK_PASSED) {
    rp_net_upstream_on_error(tx->up, upstream_id, RP_OUTCOME_SEND_FAILED,
                             now);
  }
}

int rp_net_udp_queue(rp_net_pool *np, rp_net_txsock *tx, const uint8_t *data,
                     size_t len, const struct sockaddr *addr,
                     uint16_t upstream_id, rp_tstamp now) {
  rp_net_txmsg *m;
  int32_t i;
  if (len > RP_NET_TX_DIRECT_LEN || np->stopping) {
    int rv = rp_net_udp_send(np, tx->udp, data, len, addr);
    if (rv != 0 && tx->up) {
      rp_net_upstream_on_error(tx->up, upstream_id, RP_OUTCOME_SEND_FAILED,
                               now);
    }
    return rv;
  }
  if (np->ntx == RP_NET_TX_MSGS || RP_NET_TX_BYTES - np->txbuf_used < len) {
    rp_net_tx_flush(np, now);
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

/* net_tx_same reports whether datagram |b| can join a segmented send
   that |a| starts: same length, same destination. */
static int net_tx_same(const rp_net_txmsg *a, const rp_net_txmsg *b) {
  return a->len == b->len && a->addrlen == b->addrlen &&
         (a->addrlen == 0 || memcmp(&a->addr, &b->addr, a->addrlen) == 0);
}

/* net_tx_fail_run reports every datagram of |run| as not sent. */
static void net_tx_fail_run(rp_net_pool *np, rp_net_txsock *tx,
                            const rp_net_txrun *run, rp_tstamp now) {
  uint32_t j;
  np->counters.send_failures += run->n;
  for (j = 0; j < run->n; ++j) {
    net_tx_failed(tx, np->txmsgs[np->txorder[run->first + j]].upstream_id, now);
  }
}

/* net_tx_one_by_one hands the datagrams of |run| to libuv's queue (the
   socket buffer is full) or, with |direct|, sends them one by one (a
   segmented send was refused). */
static void net_tx_one_by_one(rp_net_pool *np, rp_net_txsock *tx,
                              const rp_net_txrun *run, int direct,
                              rp_tstamp now) {
  uint32_t j;
  for (j = 0; j < run->n; ++j) {
    const rp_net_txmsg *m = &np->txmsgs[np->txorder[run->first + j]];
    const struct sockaddr *addr =
        m->addrlen ? (const struct sockaddr *)&m->addr : NULL;
    int rv = direct ? rp_net_udp_send(np, tx->udp, np->txbuf + m->off,
                                      m->len, addr)
                    : net_slot_send(np, tx->udp, np->txbuf + m->off, m->len,
                                    addr);
    if (rv != 0) {
      net_tx_failed(tx, m->upstream_id, now);
    }
  }
}

/* net_tx_sort_runs sorts the datagrams queued for |tx| into runs (each
   joins one of the last few runs with its destination and length, or
   starts one) in np->txrun, and empties |tx|. Returns the number of
   runs. */
static size_t net_tx_sort_runs(rp_net_pool *np, rp_net_txsock *tx) {
  size_t nh = 0, r;
  int32_t k, next;
  for (k = tx->head; k >= 0; k = next) {
    rp_net_txmsg *m = &np->txmsgs[k];
    rp_net_txrun *run = NULL;
    next = m->next;
    m->next = -1;
    if (!np->gso_off && m->len <= RP_NET_GSO_MAX_LEN) {
      for (r = nh; r > 0 && nh - r < RP_NET_GSO_OPEN; --r) {
        rp_net_txrun *c = &np->txrun[r - 1];
        if (c->n < RP_NET_GSO_SEGS && net_tx_same(&np->txmsgs[c->head], m)) {
          run = c;
          break;
        }
      }
    }
    if (run) {
      np->txmsgs[run->tail].next = k;
      run->tail = k;
      ++run->n;
    } else {
      np->txrun[nh++] = (rp_net_txrun){.n = 1, .head = k, .tail = k};
    }
  }
  tx->head = tx->tail = -1;
  return nh;
}

/* net_tx_build_headers writes one header per run of the |nh| in
   np->txrun, its datagrams' buffers side by side; runs of two or more
   carry their segment size. */
static void net_tx_build_headers(rp_net_pool *np, size_t nh) {
  struct mmsghdr *h = np->txhdrs;
  size_t n = 0, r;
  int32_t k;
  for (r = 0; r < nh; ++r) {
    rp_net_txrun *run = &np->txrun[r];
    rp_net_txmsg *m0 = &np->txmsgs[run->head];
    struct cmsghdr *c;
    uint16_t seg;
    run->first = (uint32_t)n;
    h[r] = (struct mmsghdr){
        .msg_hdr = {.msg_name = m0->addrlen ? &m0->addr : NULL,
                    .msg_namelen = m0->addrlen,
                    .msg_iov = &np->txiov[n],
                    .msg_iovlen = run->n}};
    for (k = run->head; k >= 0; k = np->txmsgs[k].next) {
      const rp_net_txmsg *m = &np->txmsgs[k];
      np->txiov[n] =
          (struct iovec){.iov_base = np->txbuf + m->off, .iov_len = m->len};
      np->txorder[n++] = k;
    }
    if (run->n < 2) {
      continue;
    }
    h[r].msg_hdr.msg_control = run->cmsg.buf;
    h[r].msg_hdr.msg_controllen = sizeof(run->cmsg.buf);
    c = CMSG_FIRSTHDR(&h[r].msg_hdr);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    seg = (uint16_t)np->txmsgs[np->txorder[run->first]].len;
    memcpy(CMSG_DATA(c), &seg, sizeof(seg));
  }
}

/* net_tx_send_headers sends the |nh| headers on |fd| in as few
   sendmmsg(2) calls as the kernel takes; failures are reported at
   |now|. */
static void net_tx_send_headers(rp_net_pool *np, rp_net_txsock *tx, int fd,
                                size_t nh, rp_tstamp now) {
  struct mmsghdr *h = np->txhdrs;
  size_t i = 0, r;
  while (i < nh) {
    int rv = sendmmsg(fd, h + i, (unsigned int)(nh - i), 0);
    if (rv > 0) {
      for (r = i; r < i + (size_t)rv; ++r) {
        if (np->txrun[r].n > 1) {
          np->counters.udp_segmented += np->txrun[r].n;
        }
      }
      i += (size_t)rv;
      continue;
    }
    if (rv < 0 && errno == EINTR) {
      continue;
    }
    if (rv < 0 &&
        (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
      /* The socket buffer is full: libuv sends the rest when it can. */
      for (; i < nh; ++i) {
        net_tx_one_by_one(np, tx, &np->txrun[i], 0, now);
      }
      break;
    }
    if (np->txrun[i].n > 1 &&
        (errno == EIO || errno == EINVAL || errno == EOPNOTSUPP ||
         errno == ENOPROTOOPT || errno == EMSGSIZE)) {
      /* No segmentation on this path (an old kernel, a device without
         checksum offload): these go one by one, later ones unsegmented. */
      np->gso_off = 1;
      ++np->counters.udp_segment_refused;
      net_tx_one_by_one(np, tx, &np->txrun[i], 1, now);
      ++i;
      continue;
    }
    /* Header i failed (e.g. ECONNREFUSED after ICMP port unreachable on
       a connected socket): count its datagrams and go on. */
    net_tx_fail_run(np, tx, &np->txrun[i], now);
    ++i;
  }
}

/* net_tx_flush_sock sends the datagrams queued for |tx|: one header per
   run of datagrams that may leave as one segmented send, all headers in
   as few sendmmsg(2) calls as the kernel takes. Failures are reported at
   |now|. */
static void net_tx_flush_sock(rp_net_pool *np, rp_net_txsock *tx,
                              rp_tstamp now) {
  size_t i, nh = net_tx_sort_runs(np, tx);
  int fd = -1;
  net_tx_build_headers(np, nh);
  if (uv_is_closing((uv_handle_t *)tx->udp) ||
      uv_fileno((const uv_handle_t *)tx->udp, &fd) != 0) {
    for (i = 0; i < nh; ++i) {
      net_tx_fail_run(np, tx, &np->txrun[i], now);
    }
    return;
  }
  net_tx_send_headers(np, tx, fd, nh, now);
}

void rp_net_tx_flush(rp_net_pool *np, rp_tstamp now) {
  size_t d;
  if (np->ntx == 0) {
    return;
  }
  /* Failures go to errq: nothing is called back while the queue is
     walked. */
  ++np->in_core;
  for (d = 0; d < np->ntxdirty; ++d) {
    net_tx_flush_sock(np, np->txdirty[d], now);
  }
  --np->in_core;
  np->ntx = 0;
  np->txbuf_used = 0;
  np->ntxdirty = 0;
  if (!np->in_core && np->errq_len > 0) {
    rp_net_flush(np, now);
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

/* rp_net_tx_run sends the queue until it stays empty (reporting a failure
   may make the core send elsewhere). */
void rp_net_tx_run(rp_net_pool *np, rp_tstamp now) {
  np->rx_now = RP_TSTAMP_UNSET;
  while (np->ntx > 0 && !np->in_core) {
    rp_net_tx_flush(np, now);
  }
}

/* The answers of in-process clients are handed over first: the queries
   their callback makes then leave in the same sends. The clock is read
   only when there is something to send or hand over. */
void rp_net_tx_loop_work(rp_net_pool *np) {
  rp_tstamp now;
  if (np->ntx == 0 && np->dq_n == 0) {
    np->rx_now = RP_TSTAMP_UNSET;
    return;
  }
  now = rp_net_now();
  rp_net_direct_drain(np);
  rp_net_tx_run(np, now);
}

void rp_net_tx_prepare_cb(uv_prepare_t *h) { rp_net_tx_loop_work(h->data); }

void rp_net_tx_check_cb(uv_check_t *h) { rp_net_tx_loop_work(h->data); }
