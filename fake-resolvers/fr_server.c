/*
 * fr_server.c: the libuv server behind `fakeres` (see fr_server.h).
 *
 * IMPLEMENTATION NOTES
 *
 * Flow of one query: UDP datagram or TCP frame -> handle_query: dead
 * resolvers ignore everything; a query that does not parse is counted
 * and answered FORMERR when its header reads (never when it is a
 * response, so two fakes cannot loop); else fr_profile_decide picks the
 * verdict with now = uv_hrtime(). Replies leave through schedule_reply:
 * at once when the delay is 0, else from a binary min-heap ordered by
 * (due, seq), served by one timer. libuv timers count whole milliseconds
 * from a cached loop time, so the timer callback re-checks uv_hrtime()
 * and re-arms for whatever is not due yet: replies leave at most about a
 * millisecond late, never early.
 *
 * Upstream mode: one connected UDP socket to the upstream for the whole
 * process. A forwarded query gets a random free ID from a table of
 * FR_SERVER_UPSTREAM_MAX slots (an ID -> slot map of 65536 entries makes
 * lookups O(1)); the answer must come from the upstream (the socket is
 * connected), carry a pending ID and echo the question exactly, else it
 * is ignored. All entries share one timeout, so they expire in creation
 * order: a FIFO list and one timer suffice. The profile's delay applies
 * to the relayed answer (the forward leaves at once).
 *
 * TCP: each connection accumulates bytes and takes out every complete
 * frame; replies are written as they become ready, so delayed answers
 * may overtake each other (RFC 7766 section 7 allows it; clients match
 * by ID). A connection is freed only when libuv has closed it and no
 * delayed reply, upstream entry or write still refers to it. When the
 * client half-closes, pending answers are still sent, then it is closed.
 *
 * UDP replies to a burst of queries read by one recvmmsg call are
 * collected (up to FR_UDP_MMSG_WIDTH, each up to FR_BATCH_SLOT bytes)
 * and sent with one sendmmsg call when libuv signals the end of the
 * burst (UV_UDP_MMSG_FREE): about 20 % less CPU per query under dnsperf.
 * Whatever sendmmsg does not take goes through libuv's normal send path.
 *
 * UDP and TCP of one resolver share a port: the sockets are created and
 * bound by hand (socket/bind) and handed to libuv, so a port clash is
 * retried with another free port without any libuv handle to unwind.
 */
/* sendmmsg(2) and struct mmsghdr are Linux extensions. */
#define _GNU_SOURCE

#include "fr_server.h"

#include "dns.h"
#include "fr_answer.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* FR_UDP_DGRAM_MAX is the largest datagram. */
#define FR_UDP_DGRAM_MAX 65536u
/* FR_UDP_MMSG_WIDTH is how many datagrams one recvmmsg call may read
   (libuv reads up to 20 and wants a 64 KiB slot for each). */
#define FR_UDP_MMSG_WIDTH 20u
/* FR_UDP_RECV_BUF is the receive buffer shared by every UDP socket. */
#define FR_UDP_RECV_BUF (FR_UDP_DGRAM_MAX * FR_UDP_MMSG_WIDTH)
/* FR_TCP_PREFIX is the RFC 1035 4.2.2 two-byte length prefix. */
#define FR_TCP_PREFIX 2u
/* FR_OUT_BUF is the reply scratch: the largest message. */
#define FR_OUT_BUF RP_DNS_MAX_MSG_LEN
/* FR_TCP_BUF_INIT is a connection's first read buffer; it grows to the
   frame being read, up to FR_TCP_PREFIX + RP_DNS_MAX_MSG_LEN. */
#define FR_TCP_BUF_INIT 4096u
/* FR_TCP_BACKLOG is the listen backlog. */
#define FR_TCP_BACKLOG 128
/* FR_UDP_QUEUE_MAX caps UDP replies queued in libuv when the socket
   buffer is full. */
#define FR_UDP_QUEUE_MAX 4096u
/* FR_SOCKET_BUF asks the kernel for 4 MiB socket buffers so that bursts
   of a load generator are not lost before the fake sees them (the kernel
   caps it at net.core.rmem_max). */
#define FR_SOCKET_BUF (4 * 1024 * 1024)
/* FR_BIND_ATTEMPTS is how many free ports are tried to find one that is
   free for both UDP and TCP. */
#define FR_BIND_ATTEMPTS 32
/* FR_ID_SPACE is the number of DNS IDs. */
#define FR_ID_SPACE 65536u
/* FR_NIL ends the upstream lists. */
#define FR_NIL UINT32_MAX
/* FR_MS_ROUND rounds a nanosecond wait up to whole milliseconds. */
#define FR_MS_ROUND (RP_MILLISECONDS - 1)
/* FR_ID_MASK keeps the 16 bits of a DNS ID from a random draw. */
#define FR_ID_MASK 0xffffu
/* FR_BYTE_BITS and FR_BYTE_MASK split the TCP length prefix. */
#define FR_BYTE_BITS 8
#define FR_BYTE_MASK 0xffu
/* FR_TCP_IDLE_TIMEOUT closes a TCP connection with nothing pending after
   this long without a byte either way (RFC 7766 section 6.2.3 asks
   servers to time idle connections out; 10 s is generous for tests and
   keeps a client that opens and forgets connections from filling
   FR_SERVER_TCP_CONNS_MAX). */
#define FR_TCP_IDLE_TIMEOUT (10 * RP_SECONDS)
/* FR_TCP_SWEEP_MS is how often idle connections are looked for. */
#define FR_TCP_SWEEP_MS 1000u
/* FR_BATCH_SLOT is the largest reply batched for sendmmsg (a reply
   filled to EDNS 1232 or 4096 fits); larger ones are sent alone. */
#define FR_BATCH_SLOT 4096u
/* FR_ADDR_TEXT_LEN holds "255.255.255.255:65535" and its NUL. */
#define FR_ADDR_TEXT_LEN (INET_ADDRSTRLEN + sizeof(":65535"))

/* What a reply counts as when it leaves. */
typedef enum fr_reply_kind {
  FR_REPLY_ANSWER = 0, /* counts as answered */
  FR_REPLY_REFUSAL,    /* counts as refused */
  FR_REPLY_ERROR       /* FORMERR: already counted as malformed */
} fr_reply_kind;

typedef struct fr_res fr_res;

/* fr_conn is one accepted TCP connection. */
typedef struct fr_conn {
  /* handle is the libuv stream; handle.data points back here. */
  uv_tcp_t handle;
  fr_res *res;
  /* prev and next link the resolver's connections. */
  struct fr_conn *prev, *next;
  /* buf holds |len| unread bytes; |cap| is its size. */
  uint8_t *buf;
  size_t len, cap;
  /* refs counts delayed replies, upstream entries and writes that point
     here; the connection is freed when it is closed and refs is 0. */
  unsigned refs;
  /* writes counts writes in flight. */
  unsigned writes;
  /* closing: uv_close called; closed: its callback ran; eof: the client
     sent its last byte (answers still due are sent). */
  int closing, closed, eof;
  /* last_active is when a byte last came in or a reply went out
     (uv_hrtime ns). */
  rp_tstamp last_active;
} fr_conn;

/* fr_dest is where a reply goes: a TCP connection or a UDP peer. */
typedef struct fr_dest {
  /* conn is the connection, or NULL for UDP. */
  fr_conn *conn;
  /* peer is the UDP client's address (unused for TCP). */
  struct sockaddr_in peer;
} fr_dest;

/* fr_res is one fake resolver: its profile, sockets and counters. */
struct fr_res {
  /* srv is the owning server. */
  fr_server *srv;
  /* profile decides each query's fate. */
  fr_profile profile;
  /* udp is the UDP socket, tcp the TCP listener; data points here. */
  uv_udp_t udp;
  uv_tcp_t tcp;
  /* udp_open and tcp_open are 1 once the handle is initialised. */
  int udp_open, tcp_open;
  /* udp_addr and tcp_addr are the bound addresses. */
  struct sockaddr_in udp_addr, tcp_addr;
  fr_counts counts;
  /* conns is the list of connections, nconns its length. */
  fr_conn *conns;
  size_t nconns;
};

/* fr_delayed is a reply waiting for its delay. */
typedef struct fr_delayed {
  /* due is when it leaves (uv_hrtime ns); seq breaks ties in order of
     scheduling. */
  rp_tstamp due;
  uint64_t seq;
  /* res sends it from its socket to |dest| and counts it as |kind|. */
  fr_res *res;
  fr_dest dest;
  fr_reply_kind kind;
  /* len bytes of the reply follow in data. */
  size_t len;
  uint8_t data[];
} fr_delayed;

/* fr_up is a query forwarded upstream. */
typedef struct fr_up {
  /* used is 1 while the slot is taken. */
  int used;
  /* id is our ID toward the upstream; client_id the client's. */
  uint16_t id, client_id;
  /* lose is 1 to drop the answer (loss after the resolver). */
  int lose;
  /* delay is how long the answer waits before it leaves, ns. */
  rp_duration delay;
  /* deadline is when the upstream has timed out (uv_hrtime ns). */
  rp_tstamp deadline;
  /* res received the query from |dest|; the answer goes back there. */
  fr_res *res;
  fr_dest dest;
  /* question is the query's question, which the answer must echo. */
  rp_dns_question question;
  /* prev and next: the FIFO of used slots, or the free list (next). */
  uint32_t prev, next;
} fr_up;

/* fr_send_req is a UDP reply that libuv could not send at once. */
typedef struct fr_send_req {
  uv_udp_send_t req;
  size_t len;
  uint8_t data[];
} fr_send_req;

/* fr_batch collects UDP replies for one sendmmsg call. */
typedef struct fr_batch {
  /* active is 1 inside a recvmmsg burst: replies are collected. */
  int active;
  /* res is the resolver whose socket sends the batch (NULL: empty). */
  fr_res *res;
  /* n replies are collected; slot i has msgs[i], iov[i], peers[i],
     kinds[i] and data[i]. */
  unsigned n;
  struct mmsghdr msgs[FR_UDP_MMSG_WIDTH];
  struct iovec iov[FR_UDP_MMSG_WIDTH];
  struct sockaddr_in peers[FR_UDP_MMSG_WIDTH];
  fr_reply_kind kinds[FR_UDP_MMSG_WIDTH];
  uint8_t data[FR_UDP_MMSG_WIDTH][FR_BATCH_SLOT];
} fr_batch;

/* fr_write_req is a TCP reply being written. */
typedef struct fr_write_req {
  uv_write_t req;
  fr_conn *conn;
  size_t len;
  uint8_t data[];
} fr_write_req;

struct fr_server {
  /* loop runs every handle below. */
  uv_loop_t *loop;
  /* mode, upstream and upstream_timeout (ns) come from the config. */
  fr_mode mode;
  struct sockaddr_in upstream;
  rp_duration upstream_timeout;
  /* rng draws loss, jitter and upstream IDs. */
  fr_rng rng;
  /* res is the array of nres resolvers. */
  fr_res *res;
  size_t nres;
  /* closing is 1 once fr_server_close ran. */
  int closing;

  /* The delayed replies: a min-heap of |nheap| pointers (room for
     FR_SERVER_DELAYED_MAX) holding heap_bytes of replies; seq numbers
     them in order of scheduling. */
  fr_delayed **heap;
  size_t nheap;
  size_t heap_bytes;
  uint64_t seq;
  uv_timer_t delay_timer;
  int delay_timer_open;

  /* Upstream mode: up_udp is connected to the upstream; ups is the
     table of FR_SERVER_UPSTREAM_MAX slots, nup of them used. */
  uv_udp_t up_udp;
  int up_open;
  fr_up *ups;
  /* up_free heads the free list; up_head and up_tail the FIFO. */
  uint32_t up_free, up_head, up_tail;
  size_t nup;
  /* id_map maps an upstream ID to slot + 1 (0: free). */
  uint32_t *id_map;
  uv_timer_t up_timer;
  int up_timer_open;

  /* sweep_timer closes idle TCP connections. */
  uv_timer_t sweep_timer;
  int sweep_timer_open;

  /* batch collects the UDP replies of one recvmmsg burst. */
  fr_batch batch;
  /* rbuf receives every UDP datagram (the loop is single-threaded). */
  uint8_t rbuf[FR_UDP_RECV_BUF];
  /* obuf is the scratch where replies are built. */
  uint8_t obuf[FR_OUT_BUF];
};

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...) {
  va_list ap;

  if (errbuf == NULL || errlen == 0) {
    return;
  }
  va_start(ap, fmt);
  vsnprintf(errbuf, errlen, fmt, ap);
  va_end(ap);
}

static rp_tstamp now_ns(void) { return uv_hrtime(); }

/* wait_ms returns the whole milliseconds from |now| until |due|, rounded
   up. */
static uint64_t wait_ms(rp_tstamp due, rp_tstamp now) {
  if (due <= now) {
    return 0;
  }
  return (due - now + FR_MS_ROUND) / RP_MILLISECONDS;
}

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

static void conn_close(fr_conn *c) {
  if (c->closing) {
    return;
  }
  c->closing = 1;
  uv_close((uv_handle_t *)&c->handle, on_conn_closed);
}

static void conn_ref(fr_conn *c) {
  if (c != NULL) {
    ++c->refs;
  }
}

static void conn_unref(fr_conn *c) {
  if (c == NULL) {
    return;
  }
  assert(c->refs > 0);
  --c->refs;
  if (c->closed) {
    conn_maybe_free(c);
  } else if (c->eof && c->refs == 0) {
    conn_close(c);
  }
}

/* ------------------------------------------------------------------ */
/* Sending replies                                                      */
/* ------------------------------------------------------------------ */

static void count_reply(fr_res *res, fr_reply_kind kind) {
  switch (kind) {
  case FR_REPLY_ANSWER:
    ++res->counts.answered;
    break;
  case FR_REPLY_REFUSAL:
    ++res->counts.refused;
    break;
  case FR_REPLY_ERROR:
    break;
  }
}

static void on_udp_sent(uv_udp_send_t *req, int status) {
  (void)status;
  free(req->data);
}

static void on_tcp_written(uv_write_t *req, int status) {
  fr_write_req *w = req->data;
  fr_conn *c = w->conn;

  (void)status;
  --c->writes;
  free(w);
  conn_unref(c);
}

/* deliver_udp sends |len| bytes to |peer| from |res|'s socket through
   libuv, and counts them as |kind| (as overflow when it cannot). */
static void deliver_udp(fr_res *res, const struct sockaddr_in *peer,
                        const uint8_t *data, size_t len, fr_reply_kind kind) {
  /* libuv's API takes a non-const base; the bytes are not changed. */
  uv_buf_t buf = uv_buf_init((char *)(uintptr_t)data, (unsigned)len);
  const struct sockaddr *sa = (const struct sockaddr *)peer;
  int rv = uv_udp_try_send(&res->udp, &buf, 1, sa);
  fr_send_req *s;

  if (rv >= 0) {
    count_reply(res, kind);
    return;
  }
  if (rv != UV_EAGAIN || res->udp.send_queue_count >= FR_UDP_QUEUE_MAX) {
    ++res->counts.overflow;
    return;
  }
  s = malloc(sizeof(*s) + len);
  if (s == NULL) {
    ++res->counts.overflow;
    return;
  }
  s->len = len;
  memcpy(s->data, data, len);
  s->req.data = s;
  buf = uv_buf_init((char *)s->data, (unsigned)len);
  if (uv_udp_send(&s->req, &res->udp, &buf, 1, sa, on_udp_sent) != 0) {
    free(s);
    ++res->counts.overflow;
    return;
  }
  count_reply(res, kind);
}

/* batch_flush sends the collected replies with sendmmsg; those it does
   not take go through deliver_udp. */
static void batch_flush(fr_server *srv) {
  fr_batch *b = &srv->batch;
  fr_res *res = b->res;
  unsigned sent = 0;
  unsigned i;
  uv_os_fd_t fd;

  if (b->n == 0) {
    return;
  }
  if (uv_fileno((const uv_handle_t *)&res->udp, &fd) == 0 &&
      res->udp.send_queue_count == 0) {
    while (sent < b->n) {
      int r = sendmmsg(fd, &b->msgs[sent], b->n - sent, 0);
      if (r < 0) {
        if (errno == EINTR) {
          continue;
        }
        break;
      }
      sent += (unsigned)r;
    }
  }
  for (i = 0; i < sent; ++i) {
    count_reply(res, b->kinds[i]);
  }
  for (i = sent; i < b->n; ++i) {
    deliver_udp(res, &b->peers[i], b->data[i], b->iov[i].iov_len, b->kinds[i]);
  }
  b->n = 0;
  b->res = NULL;
}

/* batch_add collects one reply; returns 0, or -1 when it must be sent
   alone (no burst, or too large). */
static int batch_add(fr_res *res, const struct sockaddr_in *peer,
                     const uint8_t *data, size_t len, fr_reply_kind kind) {
  fr_server *srv = res->srv;
  fr_batch *b = &srv->batch;
  unsigned i;

  if (!b->active || len > FR_BATCH_SLOT) {
    return -1;
  }
  if (b->n == FR_UDP_MMSG_WIDTH || (b->n > 0 && b->res != res)) {
    batch_flush(srv);
  }
  i = b->n++;
  b->res = res;
  b->peers[i] = *peer;
  b->kinds[i] = kind;
  memcpy(b->data[i], data, len);
  b->iov[i] = (struct iovec){.iov_base = b->data[i], .iov_len = len};
  b->msgs[i] = (struct mmsghdr){
      .msg_hdr =
          {
              .msg_name = &b->peers[i],
              .msg_namelen = sizeof(b->peers[i]),
              .msg_iov = &b->iov[i],
              .msg_iovlen = 1,
          },
  };
  return 0;
}

/* batch_burst tracks libuv's recvmmsg bursts from a receive callback's
   |flags|: a chunk opens one, the final UV_UDP_MMSG_FREE call closes
   and flushes it. Returns 1 for that final call (no datagram). */
static int batch_burst(fr_server *srv, unsigned flags) {
  if (flags & UV_UDP_MMSG_FREE) {
    batch_flush(srv);
    srv->batch.active = 0;
    return 1;
  }
  if (flags & UV_UDP_MMSG_CHUNK) {
    srv->batch.active = 1;
  }
  return 0;
}

/* deliver sends |len| bytes to |dest| now (or with the burst's batch)
   and counts them as |kind|. A reply that cannot be sent is counted as
   overflow. */
static void deliver(fr_res *res, const fr_dest *dest, const uint8_t *data,
                    size_t len, fr_reply_kind kind) {
  if (dest->conn != NULL) {
    fr_conn *c = dest->conn;
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
    conn_ref(c);
    c->last_active = now_ns();
    count_reply(res, kind);
    return;
  }
  if (batch_add(res, &dest->peer, data, len, kind) != 0) {
    deliver_udp(res, &dest->peer, data, len, kind);
  }
}

/* ------------------------------------------------------------------ */
/* Delayed replies: a (due, seq) min-heap                               */
/* ------------------------------------------------------------------ */

static int delayed_less(const fr_delayed *a, const fr_delayed *b) {
  return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_swap(fr_delayed **h, size_t i, size_t j) {
  fr_delayed *t = h[i];
  h[i] = h[j];
  h[j] = t;
}

static void heap_up(fr_delayed **h, size_t i) {
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!delayed_less(h[i], h[parent])) {
      break;
    }
    heap_swap(h, i, parent);
    i = parent;
  }
}

static void heap_down(fr_delayed **h, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1;
    size_t r = l + 1;
    size_t m = i;
    if (l < n && delayed_less(h[l], h[m])) {
      m = l;
    }
    if (r < n && delayed_less(h[r], h[m])) {
      m = r;
    }
    if (m == i) {
      break;
    }
    heap_swap(h, i, m);
    i = m;
  }
}

static fr_delayed *heap_pop(fr_server *srv) {
  fr_delayed *top = srv->heap[0];

  --srv->nheap;
  if (srv->nheap > 0) {
    srv->heap[0] = srv->heap[srv->nheap];
    heap_down(srv->heap, srv->nheap, 0);
  }
  srv->heap_bytes -= top->len;
  return top;
}

static void on_delay_timer(uv_timer_t *t);

/* delay_timer_rearm starts the timer for the heap's top. */
static void delay_timer_rearm(fr_server *srv) {
  rp_tstamp now;

  if (srv->nheap == 0) {
    uv_timer_stop(&srv->delay_timer);
    return;
  }
  uv_update_time(srv->loop);
  now = now_ns();
  uv_timer_start(&srv->delay_timer, on_delay_timer,
                 wait_ms(srv->heap[0]->due, now), 0);
}

static void on_delay_timer(uv_timer_t *t) {
  fr_server *srv = t->data;
  rp_tstamp now = now_ns();

  while (srv->nheap > 0 && srv->heap[0]->due <= now) {
    fr_delayed *d = heap_pop(srv);
    deliver(d->res, &d->dest, d->data, d->len, d->kind);
    conn_unref(d->dest.conn);
    free(d);
  }
  delay_timer_rearm(srv);
}

/* schedule_reply sends |len| bytes to |dest| after |delay| ns (at once
   when 0), counting them as |kind| when they leave. */
static void schedule_reply(fr_res *res, const fr_dest *dest,
                           const uint8_t *data, size_t len, fr_reply_kind kind,
                           rp_duration delay) {
  fr_server *srv = res->srv;
  fr_delayed *d;

  if (delay == 0) {
    deliver(res, dest, data, len, kind);
    return;
  }
  if (srv->nheap >= FR_SERVER_DELAYED_MAX ||
      srv->heap_bytes + len > FR_SERVER_DELAYED_BYTES_MAX) {
    ++res->counts.overflow;
    return;
  }
  d = malloc(sizeof(*d) + len);
  if (d == NULL) {
    ++res->counts.overflow;
    return;
  }
  *d = (fr_delayed){
      .due = rp_tstamp_add(now_ns(), delay),
      .seq = srv->seq++,
      .res = res,
      .dest = *dest,
      .kind = kind,
      .len = len,
  };
  memcpy(d->data, data, len);
  conn_ref(dest->conn);
  srv->heap[srv->nheap] = d;
  heap_up(srv->heap, srv->nheap);
  ++srv->nheap;
  srv->heap_bytes += len;
  if (srv->heap[0] == d) {
    delay_timer_rearm(srv);
  }
}

/* ------------------------------------------------------------------ */
/* Upstream mode                                                        */
/* ------------------------------------------------------------------ */

static void on_up_timer(uv_timer_t *t);

static void up_timer_rearm(fr_server *srv) {
  if (srv->up_head == FR_NIL) {
    uv_timer_stop(&srv->up_timer);
    return;
  }
  uv_update_time(srv->loop);
  uv_timer_start(&srv->up_timer, on_up_timer,
                 wait_ms(srv->ups[srv->up_head].deadline, now_ns()), 0);
}

/* up_release frees slot |i|: off the FIFO, onto the free list. */
static void up_release(fr_server *srv, uint32_t i) {
  fr_up *e = &srv->ups[i];
  fr_conn *c = e->dest.conn;

  if (e->prev != FR_NIL) {
    srv->ups[e->prev].next = e->next;
  } else {
    srv->up_head = e->next;
  }
  if (e->next != FR_NIL) {
    srv->ups[e->next].prev = e->prev;
  } else {
    srv->up_tail = e->prev;
  }
  srv->id_map[e->id] = 0;
  e->used = 0;
  e->dest.conn = NULL;
  e->prev = FR_NIL;
  e->next = srv->up_free;
  srv->up_free = i;
  --srv->nup;
  conn_unref(c);
}

static void on_up_timer(uv_timer_t *t) {
  fr_server *srv = t->data;
  rp_tstamp now = now_ns();

  while (srv->up_head != FR_NIL && srv->ups[srv->up_head].deadline <= now) {
    ++srv->ups[srv->up_head].res->counts.upstream_timeouts;
    up_release(srv, srv->up_head);
  }
  up_timer_rearm(srv);
}

/* forward sends the query in |q| (|len| bytes, parsed as |msg|; its ID
   is rewritten in place) upstream. |lose| drops the answer, |delay|
   holds it back. */
static void forward(fr_res *res, const fr_dest *dest, const rp_dns_msg *msg,
                    uint8_t *q, size_t len, int lose, rp_duration delay) {
  fr_server *srv = res->srv;
  uint32_t i;
  fr_up *e;
  uint16_t id;
  uv_buf_t buf;
  int rv;
  int was_empty = srv->up_head == FR_NIL;

  if (srv->up_free == FR_NIL) {
    ++res->counts.overflow;
    return;
  }
  do {
    id = (uint16_t)(fr_rng_next(&srv->rng) & FR_ID_MASK);
  } while (srv->id_map[id] != 0);
  rp_dns_set_id(q, id);
  buf = uv_buf_init((char *)q, (unsigned)len);
  rv = uv_udp_try_send(&srv->up_udp, &buf, 1, NULL);
  if (rv < 0) {
    /* A full socket buffer toward a loopback upstream: count, do not
       queue (the upstream is overloaded anyway). */
    ++res->counts.overflow;
    return;
  }
  i = srv->up_free;
  e = &srv->ups[i];
  srv->up_free = e->next;
  *e = (fr_up){
      .used = 1,
      .id = id,
      .client_id = msg->hdr.id,
      .lose = lose,
      .delay = delay,
      .deadline = rp_tstamp_add(now_ns(), srv->upstream_timeout),
      .res = res,
      .dest = *dest,
      .question = msg->question,
      .prev = srv->up_tail,
      .next = FR_NIL,
  };
  if (srv->up_tail != FR_NIL) {
    srv->ups[srv->up_tail].next = i;
  } else {
    srv->up_head = i;
  }
  srv->up_tail = i;
  srv->id_map[id] = i + 1;
  ++srv->nup;
  conn_ref(dest->conn);
  if (was_empty) {
    up_timer_rearm(srv);
  }
}

static void on_up_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  fr_server *srv = h->data;

  (void)suggested;
  *buf = uv_buf_init((char *)srv->rbuf, sizeof(srv->rbuf));
}

static void on_up_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                       const struct sockaddr *addr, unsigned flags) {
  fr_server *srv = h->data;
  uint8_t *p = (uint8_t *)buf->base;
  size_t len;
  uint32_t slot;
  fr_up *e;
  rp_dns_msg msg;
  fr_dest dest;

  (void)addr;
  if (batch_burst(srv, flags)) {
    return;
  }
  if (nread < RP_DNS_HEADER_LEN || (flags & UV_UDP_PARTIAL)) {
    return;
  }
  len = (size_t)nread;
  slot = srv->id_map[rp_dns_get_id(p)];
  if (slot == 0) {
    return; /* late (timed out) or spoofed */
  }
  e = &srv->ups[slot - 1];
  if (rp_dns_parse(&msg, p, len) != 0 || !msg.has_question ||
      !rp_dns_question_equal(&msg.question, &e->question)) {
    return; /* not the answer to this query: keep waiting */
  }
  rp_dns_set_id(p, e->client_id);
  dest = e->dest;
  if (!e->lose) {
    schedule_reply(e->res, &dest, p, len, FR_REPLY_ANSWER, e->delay);
  }
  up_release(srv, slot - 1);
}

/* ------------------------------------------------------------------ */
/* Queries                                                              */
/* ------------------------------------------------------------------ */

/* handle_query runs one query (|len| bytes at |q|, which may be rewritten)
   received by |res| from |dest|. */
static void handle_query(fr_res *res, const fr_dest *dest, uint8_t *q,
                         size_t len) {
  fr_server *srv = res->srv;
  rp_dns_msg msg;
  fr_decision d;
  rp_ssize n;
  rp_dns_header hdr;
  int is_response;

  ++res->counts.queries;
  if (res->profile.spec.dead) {
    ++res->counts.dead;
    return;
  }
  is_response = rp_dns_parse_header(&hdr, q, len) == 0 &&
                (hdr.flags & RP_DNS_FLAG_QR) != 0;
  if (is_response || rp_dns_parse(&msg, q, len) != 0 || !msg.has_question) {
    ++res->counts.malformed;
    if (len >= RP_DNS_HEADER_LEN && !is_response) {
      n = rp_dns_build_error(srv->obuf, sizeof(srv->obuf), q, len,
                             RP_DNS_RCODE_FORMERR);
      if (n > 0) {
        deliver(res, dest, srv->obuf, (size_t)n, FR_REPLY_ERROR);
      }
    }
    return;
  }
  fr_profile_decide(&res->profile, now_ns(), fr_rng_next, &srv->rng, &d);
  switch (d.verdict) {
  case FR_VERDICT_ANSWER:
    if (srv->mode == FR_MODE_UPSTREAM) {
      forward(res, dest, &msg, q, len, 0, d.delay);
      break;
    }
    n = fr_answer_build(srv->obuf, sizeof(srv->obuf), &msg, dest->conn != NULL);
    if (n < 0) {
      ++res->counts.overflow;
      break;
    }
    schedule_reply(res, dest, srv->obuf, (size_t)n, FR_REPLY_ANSWER, d.delay);
    break;
  case FR_VERDICT_REFUSE:
    n = rp_dns_build_error(srv->obuf, sizeof(srv->obuf), q, len, d.rcode);
    if (n < 0) {
      ++res->counts.overflow;
      break;
    }
    schedule_reply(res, dest, srv->obuf, (size_t)n, FR_REPLY_REFUSAL, d.delay);
    break;
  case FR_VERDICT_DROP:
    ++res->counts.dropped;
    break;
  case FR_VERDICT_LOSE_BEFORE:
    ++res->counts.lost;
    break;
  case FR_VERDICT_LOSE_AFTER:
    ++res->counts.lost;
    if (srv->mode == FR_MODE_UPSTREAM) {
      forward(res, dest, &msg, q, len, 1, 0);
    }
    break;
  case FR_VERDICT_DEAD:
    ++res->counts.dead;
    break;
  }
}

/* ------------------------------------------------------------------ */
/* UDP and TCP front ends                                              */
/* ------------------------------------------------------------------ */

static void on_udp_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  fr_res *res = h->data;

  (void)suggested;
  *buf = uv_buf_init((char *)res->srv->rbuf, sizeof(res->srv->rbuf));
}

static void on_udp_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                        const struct sockaddr *addr, unsigned flags) {
  fr_res *res = h->data;
  fr_dest dest = {.conn = NULL};

  if (batch_burst(res->srv, flags)) {
    return;
  }
  if (nread <= 0 || addr == NULL || addr->sa_family != AF_INET) {
    return;
  }
  if (flags & UV_UDP_PARTIAL) {
    ++res->counts.queries;
    ++res->counts.malformed;
    return;
  }
  memcpy(&dest.peer, addr, sizeof(dest.peer));
  handle_query(res, &dest, (uint8_t *)buf->base, (size_t)nread);
}

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
    handle_query(c->res, &dest, c->buf + off + FR_TCP_PREFIX, flen);
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
      conn_close(c);
    }
    return;
  }
  c->len += (size_t)nread;
  c->last_active = now_ns();
  if (conn_frames(c) != 0) {
    uv_read_stop(s);
    conn_close(c);
  }
}

static void on_tcp_connection(uv_stream_t *listener, int status) {
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
  c->last_active = now_ns();
  c->handle.data = c;
  c->next = res->conns;
  if (res->conns != NULL) {
    res->conns->prev = c;
  }
  res->conns = c;
  ++res->nconns;
  if (uv_accept(listener, (uv_stream_t *)&c->handle) != 0) {
    conn_close(c);
    return;
  }
  if (res->nconns > FR_SERVER_TCP_CONNS_MAX || res->srv->closing) {
    ++res->counts.overflow;
    conn_close(c);
    return;
  }
  uv_tcp_nodelay(&c->handle, 1);
  if (uv_read_start((uv_stream_t *)&c->handle, on_tcp_alloc, on_tcp_read) !=
      0) {
    conn_close(c);
  }
}

/* on_sweep_timer closes connections idle for FR_TCP_IDLE_TIMEOUT with
   nothing pending. */
static void on_sweep_timer(uv_timer_t *t) {
  fr_server *srv = t->data;
  rp_tstamp now = now_ns();
  size_t i;

  for (i = 0; i < srv->nres; ++i) {
    fr_conn *c;
    for (c = srv->res[i].conns; c != NULL; c = c->next) {
      if (!c->closing && c->refs == 0 &&
          rp_tstamp_elapsed(c->last_active, FR_TCP_IDLE_TIMEOUT, now)) {
        conn_close(c);
      }
    }
  }
}

/* ------------------------------------------------------------------ */
/* Binding                                                              */
/* ------------------------------------------------------------------ */

/* bind_pair creates a UDP and a TCP socket bound to |addr| on one port
   (|addr|'s port, or a free one when 0). When no shared free port is
   found, the TCP socket takes its own free port. Returns 0 or -errno. */
static int bind_pair(const struct sockaddr_in *addr, int *pufd, int *ptfd) {
  int attempt;
  int ufd = -1;
  int tfd = -1;
  int err = 0;
  const int one = 1;

  for (attempt = 0; attempt < FR_BIND_ATTEMPTS; ++attempt) {
    struct sockaddr_in a = *addr;
    socklen_t alen = sizeof(a);

    ufd = socket(AF_INET, SOCK_DGRAM, 0);
    if (ufd < 0) {
      return -errno;
    }
    if (bind(ufd, (const struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(ufd, (struct sockaddr *)&a, &alen) != 0) {
      err = -errno;
      close(ufd);
      return err;
    }
    tfd = socket(AF_INET, SOCK_STREAM, 0);
    if (tfd < 0) {
      err = -errno;
      close(ufd);
      return err;
    }
    setsockopt(tfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(tfd, (const struct sockaddr *)&a, sizeof(a)) == 0) {
      *pufd = ufd;
      *ptfd = tfd;
      return 0;
    }
    err = -errno;
    close(tfd);
    if (addr->sin_port != 0) {
      close(ufd);
      return err;
    }
    if (attempt + 1 < FR_BIND_ATTEMPTS) {
      close(ufd);
    }
  }
  /* Give TCP a port of its own. */
  tfd = socket(AF_INET, SOCK_STREAM, 0);
  if (tfd < 0 || bind(tfd, (const struct sockaddr *)addr, sizeof(*addr)) != 0) {
    err = -errno;
    if (tfd >= 0) {
      close(tfd);
    }
    close(ufd);
    return err;
  }
  *pufd = ufd;
  *ptfd = tfd;
  return 0;
}

static int res_open(fr_server *srv, fr_res *res, char *errbuf, size_t errlen) {
  struct sockaddr_in addr = {.sin_family = AF_INET};
  int ufd = -1;
  int tfd = -1;
  int rv;
  int len;
  int bufsize = FR_SOCKET_BUF;
  const char *name = res->profile.spec.name;
  char ip[INET_ADDRSTRLEN];

  memcpy(&addr.sin_addr, res->profile.spec.addr, sizeof(addr.sin_addr));
  addr.sin_port = htons(res->profile.spec.port);
  inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof(ip));
  rv = bind_pair(&addr, &ufd, &tfd);
  if (rv != 0) {
    set_err(errbuf, errlen, "resolver %s: cannot bind %s:%u: %s", name, ip,
            (unsigned)res->profile.spec.port, strerror(-rv));
    return RP_ERR_IO;
  }
  /* recvmmsg: one system call reads a burst of queries. */
  uv_udp_init_ex(srv->loop, &res->udp, AF_UNSPEC | UV_UDP_RECVMMSG);
  res->udp.data = res;
  res->udp_open = 1;
  uv_tcp_init(srv->loop, &res->tcp);
  res->tcp.data = res;
  res->tcp_open = 1;
  if ((rv = uv_udp_open(&res->udp, ufd)) != 0) {
    close(ufd);
    close(tfd);
    goto fail;
  }
  if ((rv = uv_tcp_open(&res->tcp, tfd)) != 0) {
    close(tfd);
    goto fail;
  }
  uv_recv_buffer_size((uv_handle_t *)&res->udp, &bufsize);
  bufsize = FR_SOCKET_BUF;
  uv_send_buffer_size((uv_handle_t *)&res->udp, &bufsize);
  if ((rv = uv_listen((uv_stream_t *)&res->tcp, FR_TCP_BACKLOG,
                      on_tcp_connection)) != 0) {
    goto fail;
  }
  if ((rv = uv_udp_recv_start(&res->udp, on_udp_alloc, on_udp_recv)) != 0) {
    goto fail;
  }
  len = sizeof(res->udp_addr);
  uv_udp_getsockname(&res->udp, (struct sockaddr *)&res->udp_addr, &len);
  len = sizeof(res->tcp_addr);
  uv_tcp_getsockname(&res->tcp, (struct sockaddr *)&res->tcp_addr, &len);
  return 0;
fail:
  set_err(errbuf, errlen, "resolver %s: cannot listen on %s: %s", name, ip,
          uv_strerror(rv));
  return RP_ERR_IO;
}

static int upstream_open(fr_server *srv, char *errbuf, size_t errlen) {
  int rv;
  int bufsize = FR_SOCKET_BUF;

  uv_udp_init_ex(srv->loop, &srv->up_udp, AF_UNSPEC | UV_UDP_RECVMMSG);
  srv->up_udp.data = srv;
  srv->up_open = 1;
  rv = uv_udp_connect(&srv->up_udp, (const struct sockaddr *)&srv->upstream);
  if (rv == 0) {
    uv_recv_buffer_size((uv_handle_t *)&srv->up_udp, &bufsize);
    rv = uv_udp_recv_start(&srv->up_udp, on_up_alloc, on_up_recv);
  }
  if (rv != 0) {
    set_err(errbuf, errlen, "upstream: %s", uv_strerror(rv));
    return RP_ERR_IO;
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                           */
/* ------------------------------------------------------------------ */

int fr_server_new(fr_server **psrv, uv_loop_t *loop,
                  const fr_server_config *config, char *errbuf, size_t errlen) {
  fr_server *srv;
  size_t i;
  int rv;
  rp_tstamp now = now_ns();

  if (config->nspecs == 0) {
    set_err(errbuf, errlen, "no resolver");
    return RP_ERR_INVALID_ARGUMENT;
  }
  srv = calloc(1, sizeof(*srv));
  if (srv == NULL) {
    return RP_ERR_NOMEM;
  }
  srv->loop = loop;
  srv->mode = config->mode;
  srv->upstream = config->upstream;
  srv->upstream_timeout = config->upstream_timeout;
  srv->up_free = FR_NIL;
  srv->up_head = FR_NIL;
  srv->up_tail = FR_NIL;
  fr_rng_seed(&srv->rng, config->seed);
  srv->res = calloc(config->nspecs, sizeof(*srv->res));
  srv->heap = calloc(FR_SERVER_DELAYED_MAX, sizeof(*srv->heap));
  if (srv->res == NULL || srv->heap == NULL) {
    rv = RP_ERR_NOMEM;
    goto fail;
  }
  srv->nres = config->nspecs;
  if (srv->mode == FR_MODE_UPSTREAM) {
    srv->ups = calloc(FR_SERVER_UPSTREAM_MAX, sizeof(*srv->ups));
    srv->id_map = calloc(FR_ID_SPACE, sizeof(*srv->id_map));
    if (srv->ups == NULL || srv->id_map == NULL) {
      rv = RP_ERR_NOMEM;
      goto fail;
    }
    for (i = 0; i < FR_SERVER_UPSTREAM_MAX; ++i) {
      srv->ups[i].prev = FR_NIL;
      srv->ups[i].next =
          i + 1 < FR_SERVER_UPSTREAM_MAX ? (uint32_t)(i + 1) : FR_NIL;
    }
    srv->up_free = 0;
  }
  uv_timer_init(loop, &srv->delay_timer);
  srv->delay_timer.data = srv;
  srv->delay_timer_open = 1;
  uv_timer_init(loop, &srv->up_timer);
  srv->up_timer.data = srv;
  srv->up_timer_open = 1;
  uv_timer_init(loop, &srv->sweep_timer);
  srv->sweep_timer.data = srv;
  srv->sweep_timer_open = 1;
  uv_timer_start(&srv->sweep_timer, on_sweep_timer, FR_TCP_SWEEP_MS,
                 FR_TCP_SWEEP_MS);
  for (i = 0; i < srv->nres; ++i) {
    srv->res[i].srv = srv;
    fr_profile_init(&srv->res[i].profile, &config->specs[i], now);
  }
  if (srv->mode == FR_MODE_UPSTREAM) {
    rv = upstream_open(srv, errbuf, errlen);
    if (rv != 0) {
      goto fail;
    }
  }
  for (i = 0; i < srv->nres; ++i) {
    rv = res_open(srv, &srv->res[i], errbuf, errlen);
    if (rv != 0) {
      goto fail;
    }
  }
  *psrv = srv;
  return 0;
fail:
  fr_server_close(srv);
  /* One pass runs the close callbacks of the handles opened so far. */
  uv_run(loop, UV_RUN_NOWAIT);
  fr_server_del(srv);
  return rv;
}

void fr_server_close(fr_server *srv) {
  size_t i;

  if (srv->closing) {
    return;
  }
  srv->closing = 1;
  batch_flush(srv);
  srv->batch.active = 0;
  while (srv->nheap > 0) {
    fr_delayed *d = heap_pop(srv);
    conn_unref(d->dest.conn);
    free(d);
  }
  while (srv->up_head != FR_NIL) {
    up_release(srv, srv->up_head);
  }
  if (srv->delay_timer_open) {
    uv_close((uv_handle_t *)&srv->delay_timer, NULL);
  }
  if (srv->up_timer_open) {
    uv_close((uv_handle_t *)&srv->up_timer, NULL);
  }
  if (srv->sweep_timer_open) {
    uv_close((uv_handle_t *)&srv->sweep_timer, NULL);
  }
  if (srv->up_open) {
    uv_close((uv_handle_t *)&srv->up_udp, NULL);
  }
  for (i = 0; i < srv->nres; ++i) {
    fr_res *res = &srv->res[i];
    fr_conn *c;
    fr_conn *next;
    if (res->udp_open) {
      uv_close((uv_handle_t *)&res->udp, NULL);
    }
    if (res->tcp_open) {
      uv_close((uv_handle_t *)&res->tcp, NULL);
    }
    for (c = res->conns; c != NULL; c = next) {
      next = c->next;
      conn_close(c);
    }
  }
}

void fr_server_del(fr_server *srv) {
  if (srv == NULL) {
    return;
  }
  free(srv->heap);
  free(srv->ups);
  free(srv->id_map);
  free(srv->res);
  free(srv);
}

/* ------------------------------------------------------------------ */
/* Reports                                                              */
/* ------------------------------------------------------------------ */

static void addr_text(const struct sockaddr_in *a, char *out, size_t cap) {
  char ip[INET_ADDRSTRLEN];

  inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
  snprintf(out, cap, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
}

void fr_server_print_addresses(const fr_server *srv, FILE *out) {
  size_t i;
  char u[FR_ADDR_TEXT_LEN];
  char t[FR_ADDR_TEXT_LEN];

  fputs("{\"resolvers\":[", out);
  for (i = 0; i < srv->nres; ++i) {
    const fr_res *res = &srv->res[i];
    addr_text(&res->udp_addr, u, sizeof(u));
    addr_text(&res->tcp_addr, t, sizeof(t));
    fprintf(out, "%s{\"name\":\"%s\",\"udp\":\"%s\",\"tcp\":\"%s\"}",
            i > 0 ? "," : "", res->profile.spec.name, u, t);
  }
  fputs("]}\n", out);
  fflush(out);
}

void fr_server_print_counts(const fr_server *srv, FILE *out) {
  size_t i;

  fputs("{\"resolvers\":[", out);
  for (i = 0; i < srv->nres; ++i) {
    const fr_res *res = &srv->res[i];
    const fr_counts *k = &res->counts;
    fprintf(out,
            "%s{\"name\":\"%s\",\"queries\":%llu,\"answered\":%llu,"
            "\"refused\":%llu,\"dropped\":%llu,\"lost\":%llu,"
            "\"malformed\":%llu,\"upstream_timeouts\":%llu,\"dead\":%llu,"
            "\"overflow\":%llu}",
            i > 0 ? "," : "", res->profile.spec.name,
            (unsigned long long)k->queries, (unsigned long long)k->answered,
            (unsigned long long)k->refused, (unsigned long long)k->dropped,
            (unsigned long long)k->lost, (unsigned long long)k->malformed,
            (unsigned long long)k->upstream_timeouts,
            (unsigned long long)k->dead, (unsigned long long)k->overflow);
  }
  fputs("]}\n", out);
  fflush(out);
}

const fr_counts *fr_server_counts(const fr_server *srv, size_t i) {
  return i < srv->nres ? &srv->res[i].counts : NULL;
}

int fr_server_address(const fr_server *srv, size_t i, struct sockaddr_in *udp,
                      struct sockaddr_in *tcp) {
  if (i >= srv->nres) {
    return RP_ERR_NOT_FOUND;
  }
  if (udp != NULL) {
    *udp = srv->res[i].udp_addr;
  }
  if (tcp != NULL) {
    *tcp = srv->res[i].tcp_addr;
  }
  return 0;
}
