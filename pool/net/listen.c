/*
 * listen.c: the runtime's client listener: the UDP socket (queries read
 * in recvmmsg batches, the client's address and UDP size kept in
 * rp_client.opaque as an rp_net_client_addr)
 * and the TCP clients (one rp_net_stream each), and binding both on one
 * port.
 *
 * IMPLEMENTATION NOTES
 * - TCP clients (RFC 7766): at most RP_NET_MAX_TCP_CLIENTS. One that
 *   neither sends a query nor gets an answer for tcp_idle_timeout is
 *   closed (tcp_busy_idle_timeout while three quarters of the slots are
 *   taken), swept from the check timer's 100 ms tick. A new client that
 *   finds every slot taken closes the client idle longest and takes its
 *   slot (RFC 7766 6.2.3 lets a server close any connection; a client
 *   that was active recently is the last to go), so idle connections
 *   cannot lock fresh ones out.
 * - Answers queued for a client that does not read are bounded per client
 *   and over all clients; a client past a bound is closed (its queries
 *   are answered no more; others are not held up).
 * - Refusals and closings are logged at most once a second, with the
 *   count of those not logged.
 */
#include "net_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Listener                                                             */
/* ------------------------------------------------------------------ */

/* net_client_udpsize returns the UDP size a client query accepts: the
   size of its OPT record (the codec's brief parse); 512 when there is
   none, it is smaller, or the query does not parse. */
static uint16_t net_client_udpsize(const uint8_t *q, size_t len) {
  rp_dns_brief b;
  if (rp_dns_parse_brief(&b, q, len) != 0 ||
      b.edns_udp_size < RP_DNS_MAX_UDP_DEFAULT) {
    return RP_DNS_MAX_UDP_DEFAULT;
  }
  return b.edns_udp_size;
}

int rp_net_submit(rp_net_pool *np, const uint8_t *q, size_t len,
                  const rp_client *client, rp_tstamp now) {
  int rv;
  ++np->in_core;
  rv = rp_pool_submit(np->core, q, len, client, now);
  --np->in_core;
  if (rv == RP_ERR_MALFORMED) {
    ++np->counters.dropped_malformed;
  } else {
    rp_net_core_result(np, rv, "submit");
  }
  rp_net_flush(np, now);
  return rv;
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
  rp_net_client_addr ca = {.kind = RP_NET_CLIENT_UDP};
  if (nread <= 0 || !addr) {
    /* The end of a recvmmsg batch (or an error). */
    np->rx_now = RP_TSTAMP_UNSET;
    return;
  }
  if ((flags & UV_UDP_PARTIAL) || np->stopping) {
    return;
  }
  if (addr->sa_family == AF_INET6) {
    memcpy(&ca.addr.in6, addr, sizeof(ca.addr.in6));
  } else {
    memcpy(&ca.addr.in, addr, sizeof(ca.addr.in));
  }
  ca.udp_size = net_client_udpsize((const uint8_t *)buf->base, (size_t)nread);
  rp_net_client_save(&client, &ca);
  ++np->counters.udp_queries;
  rp_net_submit(np, (const uint8_t *)buf->base, (size_t)nread, &client,
                rp_net_rx_now(np, flags));
}

static void net_client_on_message(rp_net_stream *s, const uint8_t *msg,
                                  size_t len, rp_tstamp now) {
  rp_net_client_conn *c = s->user_data;
  rp_client client = {.id = c->id};
  if (c->np->stopping) {
    return;
  }
  c->last_active = now;
  ++c->np->counters.tcp_queries;
  rp_net_submit(c->np, msg, len, &client, now);
}

static void net_client_release(rp_net_client_conn *c) {
  rp_net_pool *np = c->np;
  if (np->clients[c->slot] == c) {
    np->clients[c->slot] = NULL;
    --np->nclients;
  }
}

/* net_tcp_note logs a TCP refusal or closing (|what|, |why|) at most once
   a second, with the count of those not logged since. */
static void net_tcp_note(rp_net_pool *np, const char *what, const char *why,
                         rp_tstamp now) {
  if (np->refuse_log_at != RP_TSTAMP_UNSET &&
      now < np->refuse_log_at + RP_SECONDS) {
    ++np->refuse_unlogged;
    return;
  }
  rp_net_log(np, RP_LOG_WARN, "ev=%s why=%s clients=%u unlogged=%llu", what,
             why, np->nclients, (unsigned long long)np->refuse_unlogged);
  np->refuse_log_at = now;
  np->refuse_unlogged = 0;
}

/* net_client_drop closes client |c| now and frees its slot at once. */
static void net_client_drop(rp_net_client_conn *c) {
  net_client_release(c);
  rp_net_stream_close(&c->s);
}

/* net_idle_limit is the idle timeout that applies with the slots taken
   now. */
static rp_duration net_idle_limit(const rp_net_pool *np) {
  return np->nclients * 4u >= RP_NET_MAX_TCP_CLIENTS * 3u
             ? np->tcp_busy_idle_timeout
             : np->tcp_idle_timeout;
}

void rp_net_clients_sweep(rp_net_pool *np, rp_tstamp now) {
  uint32_t slot, closed = 0;
  rp_duration limit = net_idle_limit(np);
  for (slot = 0; slot < RP_NET_MAX_TCP_CLIENTS && np->nclients > 0; ++slot) {
    rp_net_client_conn *c = np->clients[slot];
    if (c && now >= c->last_active && now - c->last_active >= limit) {
      net_client_drop(c);
      ++np->counters.tcp_idle_closed;
      ++closed;
    }
  }
  if (closed > 0) {
    rp_net_log(np, RP_LOG_DEBUG, "ev=tcp_idle_closed n=%u clients=%u", closed,
               np->nclients);
  }
}

void rp_net_client_answer(rp_net_client_conn *c, const uint8_t *data,
                          size_t len, rp_tstamp now) {
  rp_net_pool *np = c->np;
  int rv = rp_net_stream_write(&c->s, data, len, now);
  c->last_active = now;
  if (rv == RP_ERR_FULL) {
    ++np->counters.tcp_slow_closed;
    net_tcp_note(np, "tcp_client_closed", "not_reading", now);
    net_client_drop(c);
  } else if (rv != 0) {
    ++np->counters.send_failures;
  }
}

/* net_client_evict closes the client idle longest and returns its slot
   (RP_NET_MAX_TCP_CLIENTS when there is none). */
static uint32_t net_client_evict(rp_net_pool *np, rp_tstamp now) {
  uint32_t slot, best = RP_NET_MAX_TCP_CLIENTS;
  rp_tstamp oldest = RP_TSTAMP_UNSET;
  for (slot = 0; slot < RP_NET_MAX_TCP_CLIENTS; ++slot) {
    rp_net_client_conn *c = np->clients[slot];
    if (c && c->last_active < oldest) {
      oldest = c->last_active;
      best = slot;
    }
  }
  if (best == RP_NET_MAX_TCP_CLIENTS) {
    return best;
  }
  net_client_drop(np->clients[best]);
  ++np->counters.tcp_evicted;
  net_tcp_note(np, "tcp_client_evicted", "idle_oldest", now);
  return best;
}

static void net_client_on_end(rp_net_stream *s, int uverr,
                              rp_tstamp now) {
  (void)uverr;
  (void)now;
  net_client_release(s->user_data);
}

static void net_client_on_connect(rp_net_stream *s, int uverr,
                                  rp_tstamp now) {
  (void)s;
  (void)uverr;
  (void)now;
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
  rp_tstamp now = rp_net_now();
  uint32_t slot = RP_NET_MAX_TCP_CLIENTS;
  if (status < 0 || np->stopping) {
    return;
  }
  if (np->nclients < RP_NET_MAX_TCP_CLIENTS) {
    for (slot = 0; slot < RP_NET_MAX_TCP_CLIENTS; ++slot) {
      if (!np->clients[slot]) {
        break;
      }
    }
  } else {
    slot = net_client_evict(np, now);
  }
  c = slot < RP_NET_MAX_TCP_CLIENTS
          ? np->mem->calloc(1, sizeof(*c), np->mem->user_data)
          : NULL;
  if (!c) {
    /* Accept and drop, so the backlog does not fill with it. */
    uv_tcp_t *tmp = np->mem->malloc(sizeof(*tmp), np->mem->user_data);
    ++np->counters.tcp_refused;
    net_tcp_note(np, "tcp_client_refused",
                 slot < RP_NET_MAX_TCP_CLIENTS ? "nomem" : "too_many", now);
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
  c->last_active = now;
  rp_net_stream_init(&c->s, &net_client_cb, np->mem, c);
  c->s.max_pending = np->tcp_client_max_pending;
  c->s.pending_total = &np->tcp_pending;
  c->s.pending_total_max = np->tcp_max_pending;
  if (rp_net_stream_accept(&c->s, np->loop, server) != 0) {
    if (c->s.state == RP_NET_STREAM_CLOSED) {
      np->mem->free(c, np->mem->user_data);
    } else {
      rp_net_handle_opened(np);
    }
    return;
  }
  np->clients[slot] = c;
  ++np->nclients;
  ++np->counters.tcp_clients;
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

/* rp_net_bind opens the listener: UDP and TCP on the same port of |want|. */
int rp_net_bind(rp_net_pool *np, const struct sockaddr_storage *want, char *err,
                size_t errlen) {
  int sockbuf = RP_NET_SOCKBUF_LEN;
  int udp = -1, tcp = -1, e, rv;
  const char *why;

  e = net_bind_pair(want, &udp, &tcp, &np->lis_addr, &np->lis_addrlen);
  if (e != 0) {
    why = strerror(e);
    goto fail;
  }
  if (want->ss_family == AF_INET &&
      (ntohl(((const struct sockaddr_in *)want)->sin_addr.s_addr) >> 24) ==
          IN_LOOPBACKNET) {
    /* Answers to a loopback client never need fragments: with DF set the
       kernel skips its IP ID hash for each one (unconnected socket). */
    int pmtu = IP_PMTUDISC_PROBE;
    (void)setsockopt(udp, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
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

void rp_net_format_sockaddr(const struct sockaddr_storage *ss, char *out,
                            size_t cap) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
    inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
    snprintf(out, cap, "[%s]:%u", host, ntohs(s6->sin6_port));
  } else {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
    inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
    snprintf(out, cap, "%s:%u", host, ntohs(s4->sin_port));
  }
}
