/*
 * fr_server_internal.h: the private structs of the libuv server behind
 * `fakeres` (fr_server.h), shared by its modules. Not installed; no other
 * component includes it.
 *
 * It owns the limits and the layout of the server state (fr_server, one
 * fr_res per fake resolver, TCP connections, delayed replies, upstream
 * slots, the sendmmsg batch) and declares the functions one module of the
 * server calls in another:
 *   fr_server.c    life cycle, binding, handle_query, reports
 *   fr_reply.c     sending and counting replies, the delayed-reply heap
 *   fr_udp.c       the UDP front end and the sendmmsg batch
 *   fr_tcp.c       TCP connections with RFC 7766 framing, idle sweep
 *   fr_upstream.c  upstream mode: the forwarding table and its socket
 * Every file that includes this header defines _GNU_SOURCE first
 * (struct mmsghdr is a Linux extension).
 */
#ifndef FR_SERVER_INTERNAL_H
#define FR_SERVER_INTERNAL_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any include (struct mmsghdr)"
#endif

#include "fr_server.h"

#include "dns.h"

#include <arpa/inet.h>
#include <sys/socket.h>

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

/* fr_now_ns is the server's clock: uv_hrtime(), ns. */
static inline rp_tstamp fr_now_ns(void) { return uv_hrtime(); }

/* fr_wait_ms returns the whole milliseconds from |now| until |due|,
   rounded up. */
static inline uint64_t fr_wait_ms(rp_tstamp due, rp_tstamp now) {
  if (due <= now) {
    return 0;
  }
  return (due - now + FR_MS_ROUND) / RP_MILLISECONDS;
}

/* fr_server.c */

/* fr_server_handle_query runs one query (|len| bytes at |q|, which may be
   rewritten) received by |res| from |dest|. */
void fr_server_handle_query(fr_res *res, const fr_dest *dest, uint8_t *q,
                            size_t len);

/* fr_reply.c */

/* fr_reply_count counts one reply that left as |kind|. */
void fr_reply_count(fr_res *res, fr_reply_kind kind);

/* fr_reply_deliver sends |len| bytes to |dest| now (or with the burst's
   batch) and counts them as |kind|. A reply that cannot be sent is
   counted as overflow. */
void fr_reply_deliver(fr_res *res, const fr_dest *dest, const uint8_t *data,
                      size_t len, fr_reply_kind kind);

/* fr_reply_schedule sends |len| bytes to |dest| after |delay| ns (at once
   when 0), counting them as |kind| when they leave. */
void fr_reply_schedule(fr_res *res, const fr_dest *dest, const uint8_t *data,
                       size_t len, fr_reply_kind kind, rp_duration delay);

/* fr_reply_drop_all frees every delayed reply unsent (fr_server_close). */
void fr_reply_drop_all(fr_server *srv);

/* fr_udp.c */

/* fr_udp_deliver sends |len| bytes to |peer| from |res|'s UDP socket,
   with the burst's batch when one is open, and counts them as |kind|
   (as overflow when they cannot be sent). */
void fr_udp_deliver(fr_res *res, const struct sockaddr_in *peer,
                    const uint8_t *data, size_t len, fr_reply_kind kind);

/* fr_udp_batch_flush sends the collected replies with sendmmsg; those it
   does not take go through libuv's send path. */
void fr_udp_batch_flush(fr_server *srv);

/* fr_udp_batch_burst tracks libuv's recvmmsg bursts from a receive
   callback's |flags|: a chunk opens one, the final UV_UDP_MMSG_FREE call
   closes and flushes it. Returns 1 for that final call (no datagram). */
int fr_udp_batch_burst(fr_server *srv, unsigned flags);

/* fr_udp_on_alloc and fr_udp_on_recv are a resolver's UDP callbacks. */
void fr_udp_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
void fr_udp_on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                    const struct sockaddr *addr, unsigned flags);

/* fr_tcp.c */

/* fr_conn_ref and fr_conn_unref count a delayed reply, upstream entry or
   write that points to |c| (NULL: nothing to count); the last unref of a
   closed connection frees it, of a half-closed one closes it. */
void fr_conn_ref(fr_conn *c);
void fr_conn_unref(fr_conn *c);

/* fr_conn_close closes |c| (once); it is freed when no reference is
   left. */
void fr_conn_close(fr_conn *c);

/* fr_tcp_deliver writes |len| bytes with their length prefix on |c| and
   counts them as |kind| (as overflow when they cannot be written; not at
   all when the connection is closing). */
void fr_tcp_deliver(fr_res *res, fr_conn *c, const uint8_t *data, size_t len,
                    fr_reply_kind kind);

/* fr_tcp_on_connection is a resolver's TCP listener callback. */
void fr_tcp_on_connection(uv_stream_t *listener, int status);

/* fr_tcp_on_sweep_timer closes connections idle for FR_TCP_IDLE_TIMEOUT
   with nothing pending. */
void fr_tcp_on_sweep_timer(uv_timer_t *t);

/* fr_upstream.c */

/* fr_up_table_init allocates the upstream table of |srv| (upstream mode).
   Returns 0 or RP_ERR_NOMEM. */
int fr_up_table_init(fr_server *srv);

/* fr_up_open opens the socket connected to the upstream and starts
   reading it. Returns 0 or a libuv error. */
int fr_up_open(fr_server *srv);

/* fr_up_forward sends the query in |q| (|len| bytes, parsed as |msg|; its
   ID is rewritten in place) upstream. |lose| drops the answer, |delay|
   holds it back. */
void fr_up_forward(fr_res *res, const fr_dest *dest, const rp_dns_msg *msg,
                   uint8_t *q, size_t len, int lose, rp_duration delay);

/* fr_up_release frees upstream slot |i|: off the FIFO, onto the free
   list. */
void fr_up_release(fr_server *srv, uint32_t i);

#endif /* FR_SERVER_INTERNAL_H */
