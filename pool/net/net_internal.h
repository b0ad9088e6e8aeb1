/*
 * net_internal.h: what the runtime's modules share (not installed).
 *
 * rp_net_pool owns the listener, the upstreams, the timers and the core.
 * Each configured resolver is an rp_net_upstream driven by a transport
 * (rp_net_transport, a vtable): UDP (with a TCP companion for truncated
 * answers) and TCP in upstream.c, DoT in dot.c and DoH in doh.c (both on
 * the TLS layer of tls.c); each reports back through
 * rp_net_upstream_on_answer and rp_net_upstream_on_error, so the core
 * only knows "datagram" or "stream". "auto" runs discovery
 * (pool/discovery), whose finds are added as UDP upstreams. The pool
 * itself is split over net.c, sendq.c, listen.c, check.c and
 * resolvers.c; the functions they share are declared at the end.
 */
#ifndef RP_NET_INTERNAL_H
#define RP_NET_INTERNAL_H

#include "respool_net.h"
#include "dns.h"
#include "scores.h"
#include "stream.h"
#include "tls.h"

#include <uv.h>

#include <string.h>

/* RP_NET_DGRAM_MAX is the largest UDP payload. */
#define RP_NET_DGRAM_MAX 65536u
/* RP_NET_MMSG_CHUNKS is how many datagrams one recvmmsg(2) reads (libuv
   UV_UDP_RECVMMSG cuts the buffer into RP_NET_DGRAM_MAX chunks). */
#define RP_NET_MMSG_CHUNKS 16u
/* RP_NET_RXBUF_LEN is the shared datagram receive buffer. One buffer
   serves every socket because libuv hands each batch to its callback
   before reading the next, and no callback reads a socket. */
#define RP_NET_RXBUF_LEN (RP_NET_DGRAM_MAX * RP_NET_MMSG_CHUNKS)
/* RP_NET_SEND_SLOTS and RP_NET_SEND_SLOT_LEN size the preallocated
   buffers used when a datagram cannot be sent at once (EAGAIN): 256
   slots of 4 KiB cover a burst without allocating per query. */
#define RP_NET_SEND_SLOTS 256u
#define RP_NET_SEND_SLOT_LEN 4096u
/* RP_NET_TX_MSGS and RP_NET_TX_BYTES size the send queue: datagrams
   sent during one loop iteration are copied there and leave in one
   sendmmsg(2) per socket before the loop waits again (a full queue is
   flushed at once). RP_NET_TX_DIRECT_LEN: a datagram longer than that
   skips the queue. */
#define RP_NET_TX_MSGS 512u
#define RP_NET_TX_BYTES (256u * 1024u)
#define RP_NET_TX_DIRECT_LEN 8192u
/* UDP segmentation offload (UDP_SEGMENT, Linux 4.18): queued datagrams
   of one socket with the same destination and the same length leave as
   one send of up to RP_NET_GSO_SEGS datagrams;
   the kernel splits them (on loopback after one pass through the IP
   stack instead of one per datagram). RP_NET_GSO_MAX_LEN keeps the
   segments under any path's MTU (IPv6's 1280 less its headers). */
#define RP_NET_GSO_SEGS 64u
#define RP_NET_GSO_MAX_LEN 1232u
/* RP_NET_GSO_OPEN: a datagram may join any of the last this many runs
   of its socket (answers to several clients, queries of a few lengths
   interleave; UDP keeps no order between datagrams anyway). */
#define RP_NET_GSO_OPEN 8u
/* RP_NET_RAND_LEN is how many random bytes are drawn from RAND_bytes at
   a time for the core's rand callback (it asks for 2 per query). */
#define RP_NET_RAND_LEN 512u
/* RP_NET_MAX_TCP_CLIENTS bounds the listener's TCP connections. */
#define RP_NET_MAX_TCP_CLIENTS 1024u
/* The defaults of the TCP client options (rp_net_options). */
#define RP_NET_TCP_IDLE_DEFAULT (10u * RP_SECONDS)
#define RP_NET_TCP_BUSY_IDLE_DEFAULT RP_SECONDS
#define RP_NET_TCP_CLIENT_PENDING_DEFAULT (128u * 1024u)
#define RP_NET_TCP_PENDING_DEFAULT (16u * 1024u * 1024u)
/* RP_NET_ERRQ_LEN bounds the errors raised inside a core callback and
   reported right after it returns (the core is not re-entered). */
#define RP_NET_ERRQ_LEN 1024u
/* RP_NET_CHECK_TICK_MS is how often running checks are timed out. */
#define RP_NET_CHECK_TICK_MS 100u
/* RP_NET_CHECK_MAX_RUNNING bounds the start-up checks in flight (each
   holds one socket until it ends). */
#define RP_NET_CHECK_MAX_RUNNING 16384u
/* RP_NET_CHECK_TIMEOUT is how long a start-up check waits. */
#define RP_NET_CHECK_TIMEOUT (2 * RP_SECONDS)
/* RP_NET_RECHECK_INTERVAL: when fewer than want resolvers work, the
   next candidates are checked this often (DESIGN.md section 5). */
#define RP_NET_RECHECK_INTERVAL (15 * RP_SECONDS)
/* RP_NET_TCP_BACKOFF_MIN and _MAX bound the wait before an upstream TCP
   connection is tried again after a failure; it doubles each time. */
#define RP_NET_TCP_BACKOFF_MIN (100 * RP_MILLISECONDS)
#define RP_NET_TCP_BACKOFF_MAX (10 * RP_SECONDS)
/* RP_NET_IDMAP_LEN is a bitmap of the 65536 DNS IDs, bytes. */
#define RP_NET_IDMAP_LEN (65536u / 8u)
/* RP_NET_SCORE_CHECK_FAILED is added to the saved score of a resolver
   that failed its check (and never worked) in this run. */
#define RP_NET_SCORE_CHECK_FAILED (-2)
/* RP_NET_SOCKBUF_LEN is the kernel receive buffer asked for the
   listener's UDP socket and each resolver's, bytes: bursts of client
   queries and of answers must not be dropped while the loop is busy. */
#define RP_NET_SOCKBUF_LEN (4 * 1024 * 1024)
/* RP_NET_LISTEN_BACKLOG is the TCP listen backlog. */
#define RP_NET_LISTEN_BACKLOG 128
/* RP_NET_BIND_TRIES is how many free UDP ports are tried for one whose
   TCP twin is also free. */
#define RP_NET_BIND_TRIES 20

typedef struct rp_net_upstream rp_net_upstream;

/* rp_net_txsock is a UDP socket's part of the send queue: the queued
   datagrams (indexes into rp_net_pool.txmsgs, -1 = none) in order. */
typedef struct rp_net_txsock {
  uv_udp_t *udp;
  /* up is the upstream the socket reaches (NULL: the listener). */
  rp_net_upstream *up;
  int32_t head, tail;
} rp_net_txsock;

/* rp_net_txrun is one header of a sendmmsg batch: |n| datagrams from
   txorder[first] on (while it is built: the chain head .. tail through
   rp_net_txmsg.next), sent as one segmented send when n > 1. */
typedef struct rp_net_txrun {
  uint32_t first;
  uint32_t n;
  int32_t head, tail;
  union {
    size_t align; /* a cmsghdr's alignment */
    uint8_t buf[CMSG_SPACE(sizeof(uint16_t))];
  } cmsg;
} rp_net_txrun;

/* rp_net_txmsg is one queued datagram. */
typedef struct rp_net_txmsg {
  /* off and len locate the bytes in rp_net_pool.txbuf. */
  uint32_t off;
  uint32_t len;
  /* upstream_id is the try to fail if the send fails (upstreams). */
  uint16_t upstream_id;
  int32_t next;
  /* addr is the destination (listener only; connected sockets need
     none); addrlen is 0 when unused. */
  socklen_t addrlen;
  struct sockaddr_in6 addr;
} rp_net_txmsg;

/* States of rp_net_upstream.udp_open: never opened, open, or failed to
   open the first socket (no socket is tried again). */
#define RP_NET_UDP_NONE 0
#define RP_NET_UDP_OPEN 1
#define RP_NET_UDP_FAILED 2

/* RP_NET_UDP_PORTS is how many UDP sockets (source ports) one resolver
   may have open at once: the one new sends take and older ones kept
   for the answers to their last sends (settings.udp_port_life). */
#define RP_NET_UDP_PORTS 4

/* States of rp_net_udpsock.state. */
#define RP_NET_UDPSOCK_FREE 0
#define RP_NET_UDPSOCK_OPEN 1
#define RP_NET_UDPSOCK_CLOSING 2

/* rp_net_udpsock is one connected UDP socket to a resolver, with its own
   source port (the kernel's random pick at connect) and send queue. */
typedef struct rp_net_udpsock {
  uv_udp_t udp;
  rp_net_txsock tx;
  /* state is RP_NET_UDPSOCK_*; a FREE slot's handle may be initialised
     again. */
  int state;
  /* opened_at is when it was connected, last_send when a datagram was
     last handed to it. */
  rp_tstamp opened_at;
  rp_tstamp last_send;
} rp_net_udpsock;

/* rp_net_transport is one way of reaching a resolver. */
typedef struct rp_net_transport {
  /* name is for logs ("udp", "tcp"). */
  const char *name;
  /* resolver_flags are the RP_RESOLVER_* flags given to the core. */
  uint32_t resolver_flags;
  /* open prepares |up| (sockets may open lazily). Returns 0 or an
     RP_ERR_*. */
  int (*open)(rp_net_upstream *up, rp_tstamp now);
  /* send sends |len| bytes (ID already |upstream_id|) with RP_SEND_*
     |flags|. A failure is reported with rp_net_upstream_on_error (now or
     later); the return value is 0 or a fatal error. */
  int (*send)(rp_net_upstream *up, const uint8_t *data, size_t len,
              uint16_t upstream_id, uint32_t flags, rp_tstamp now);
  /* close closes every handle of |up|; each closed handle calls
     rp_net_handle_closed. */
  void (*close)(rp_net_upstream *up);
  /* free releases |up|->transport_data once every handle is closed (NULL
     when the transport keeps none). */
  void (*free)(rp_net_upstream *up);
} rp_net_transport;

extern const rp_net_transport rp_net_transport_udp;
extern const rp_net_transport rp_net_transport_tcp;
/* rp_net_transport_dot is DNS over TLS (RFC 7858), dot.c. */
extern const rp_net_transport rp_net_transport_dot;
/* rp_net_transport_doh is DNS over HTTPS on HTTP/2 (RFC 8484), doh.c. */
extern const rp_net_transport rp_net_transport_doh;

/* RP_NET_TLS_BACKOFF_MIN and _MAX bound the wait before a DoT or DoH
   connection is tried again after it failed to open; it doubles each
   time (a connection that worked and then closed is reopened at once). */
#define RP_NET_TLS_BACKOFF_MIN (100 * RP_MILLISECONDS)
#define RP_NET_TLS_BACKOFF_MAX (10 * RP_SECONDS)
/* RP_NET_LAST_ERROR_LEN is the room for a resolver's last failure. */
#define RP_NET_LAST_ERROR_LEN 160u

/* rp_net_tlsup is what DoT and DoH share: the TLS connection, the saved
   session, the reconnect backoff and the name resolution of a host. */
typedef struct rp_net_tlsup {
  rp_net_tls tls;
  rp_net_upstream *up;
  /* session is the TLS session to resume (owned), or NULL. */
  SSL_SESSION *session;
  /* backoff is the current wait after a failed open, ns (0 = none);
     retry_at is when a new connection may be tried (UNSET = now). */
  rp_duration backoff;
  rp_tstamp retry_at;
  /* opened is 1 once the current connection finished its handshake. */
  int opened;
  /* gai resolves |up->host| when it is a name; resolving is 1 while it
     runs; addr/has_addr hold the result (kept for reconnects). */
  uv_getaddrinfo_t gai;
  int resolving;
  struct sockaddr_storage addr;
  int has_addr;
} rp_net_tlsup;

/* rp_net_tlsup_init prepares |b| for |up| with the TLS callbacks |cb|. */
void rp_net_tlsup_init(rp_net_tlsup *b, rp_net_upstream *up,
                       const rp_net_tls_callbacks *cb);

/* rp_net_tlsup_new allocates |size| zeroed bytes from the pool's
   allocator for a transport's connection whose first member is an
   rp_net_tlsup, and prepares that member for |up| with |cb|. Returns it,
   or NULL when out of memory. */
rp_net_tlsup *rp_net_tlsup_new(rp_net_upstream *up, size_t size,
                               const rp_net_tls_callbacks *cb);

/* rp_net_tlsup_connect starts a connection (TLS with |alpn|, |alpn_len|
   bytes in wire format) unless one exists or the backoff forbids it at
   |now|. Plaintext may be written to b->tls at once when it returns 0.
   Returns 0, RP_ERR_FULL (backing off) or another RP_ERR_* (the try
   should fail with CONNECT_FAILED). */
int rp_net_tlsup_connect(rp_net_tlsup *b, const uint8_t *alpn, size_t alpn_len,
                         rp_tstamp now);

/* rp_net_tlsup_on_end records the end of a connection: logs |reason|,
   counts a TLS failure, sets the backoff and the upstream's last error.
   Returns the outcome for the tries it carried. */
rp_outcome rp_net_tlsup_on_end(rp_net_tlsup *b, rp_net_tls_end why,
                               const char *reason, rp_tstamp now);

/* rp_net_tlsup_on_open records a finished handshake. */
void rp_net_tlsup_on_open(rp_net_tlsup *b, int resumed);

/* rp_net_tlsup_close closes the connection and cancels a resolution. */
void rp_net_tlsup_close(rp_net_tlsup *b);

/* rp_net_tlsup_name returns the name |up|'s certificate must carry: the
   NAME of dot://NAME@IP, else the config's tls_name, else the host. */
const char *rp_net_tlsup_name(const rp_net_upstream *up);

/* rp_net_tlsup_free frees the saved session. */
void rp_net_tlsup_free(rp_net_tlsup *b);

struct rp_net_upstream {
  rp_net_pool *np;
  const rp_net_transport *ops;
  /* nhandles counts this upstream's open handles and requests (a part of
     np->nhandles); a removed upstream is freed when it reaches 0. */
  size_t nhandles;
  /* from_auto is 1 for a resolver that "auto" brought (bundled or found
     by discovery; a reload keeps it); next_removed links the removed
     upstreams whose handles are still closing (np->removed). */
  int from_auto;
  /* joining: added by a reload, its check not settled; leaving: a reload
     dropped it, it leaves once no joining one is being checked. */
  int joining;
  int leaving;
  struct rp_net_upstream *next_removed;
  /* name is the URL as configured (owned). */
  char *name;
  rp_scheme scheme;
  /* addr is the resolver's address when the URL holds an IP literal
     (always for UDP and TCP); has_addr says whether it is set. */
  struct sockaddr_storage addr;
  int has_addr;
  /* host, tls_name and path are copies of the URL's parts (owned; ""
     when the URL has none; used by DoT and DoH and compared by a
     reload); port is in host order. */
  char *host;
  char *tls_name;
  char *path;
  uint16_t port;
  rp_net_check_state check;
  /* resolver_id is the core's id once PASSED. */
  uint32_t resolver_id;
  int saved_score;
  /* is_open is 1 after ops->open succeeded. */
  int is_open;
  /* check_id and check_deadline describe the running check. */
  uint16_t check_id;
  rp_tstamp check_deadline;
  /* udps are the connected datagram sockets, udps[udp_cur] the one new
     sends take (-1: none yet); udp_open is RP_NET_UDP_*; udp_ports
     counts the sockets ever opened (one source port each). */
  rp_net_udpsock udps[RP_NET_UDP_PORTS];
  int udp_cur;
  int udp_open;
  uint64_t udp_ports;
  /* tcp is the TCP connection (tcp:// or the companion of a UDP
     resolver); tcp_ids marks the IDs in flight on it. */
  rp_net_stream tcp;
  uint8_t *tcp_ids;
  rp_duration tcp_backoff;
  rp_tstamp tcp_retry_at;
  /* transport_data is free for other transports (DoT, DoH). */
  void *transport_data;
  /* last_error is the last connection or TLS failure ("" when none). */
  char last_error[RP_NET_LAST_ERROR_LEN];
};

/* rp_net_send_slot is a preallocated datagram being sent. */
typedef struct rp_net_send_slot {
  uv_udp_send_t req;
  rp_net_pool *np;
  struct rp_net_send_slot *next;
  uint8_t buf[RP_NET_SEND_SLOT_LEN];
} rp_net_send_slot;

/* rp_net_client_conn is one TCP client connection of the listener. */
typedef struct rp_net_client_conn {
  rp_net_stream s;
  rp_net_pool *np;
  /* id is (generation << 32 | slot), handed to the core in
     rp_client.id; 0 is never used (it marks UDP clients). */
  uint64_t id;
  uint32_t slot;
  /* last_active is when the client last sent a query or got an answer. */
  rp_tstamp last_active;
} rp_net_client_conn;

/* rp_net_err is an error waiting to be reported to the core. */
typedef struct rp_net_err {
  uint32_t resolver_id;
  uint32_t upstream_id;
  rp_outcome outcome;
} rp_net_err;

struct rp_net_pool {
  uv_loop_t *loop;
  const rp_mem *mem;
  rp_net_options opts;
  rp_kind kind;
  rp_settings settings;
  rp_pool *core;
  /* Listener. */
  uv_udp_t lis_udp;
  uv_tcp_t lis_tcp;
  struct sockaddr_storage lis_addr;
  socklen_t lis_addrlen;
  /* timer runs rp_pool_handle_expiry; armed is its expiry or UNSET. */
  uv_timer_t timer;
  rp_tstamp armed;
  /* flush_prepare and flush_check send the queued datagrams before the
     loop waits for I/O and right after its I/O callbacks. */
  uv_prepare_t flush_prepare;
  uv_check_t flush_check;
  /* direct_idle runs while answers of in-process clients wait (direct.c),
     so that the loop does not block on them. */
  uv_idle_t direct_idle;
  /* Send queue: messages, their bytes and the sockets holding some. */
  rp_net_txsock lis_tx;
  rp_net_txmsg *txmsgs;
  size_t ntx;
  uint8_t *txbuf;
  size_t txbuf_used;
  rp_net_txsock **txdirty;
  size_t ntxdirty;
  struct mmsghdr *txhdrs;
  struct iovec *txiov;
  int32_t *txorder;
  /* txrun is, per header of txhdrs, its first datagram (an index into
     txorder), how many it carries and its UDP_SEGMENT control message. */
  rp_net_txrun *txrun;
  /* gso_off is set when the kernel refused a segmented send: from then
     on every datagram leaves on its own. */
  int gso_off;
  /* rx_now is the time read at the start of the recvmmsg batch being
     handed over (UNSET between batches). */
  rp_tstamp rx_now;
  /* rand_buf holds random bytes for the core, rand_pos the next one. */
  uint8_t rand_buf[RP_NET_RAND_LEN];
  size_t rand_pos;
  /* check_timer times out checks and starts re-checks. */
  uv_timer_t check_timer;
  /* Upstreams in configuration order (each allocated on its own: its
     handles are embedded); order[] is the check order (best saved score
     first, resolvers added by a reload last). removed lists upstreams
     taken out by a reload until their handles have closed. */
  rp_net_upstream **ups;
  rp_net_upstream *removed;
  /* nleaving counts upstreams with |leaving| set. */
  size_t nleaving;
  /* What a reload compares: the listen address asked for (cfg_has_listen
     0: the default), the start-up check's domain, and fixed_settings 1
     when the embedder gave the settings. */
  int cfg_has_listen;
  struct sockaddr_storage cfg_listen;
  char pretest_text[RP_DNS_MAX_NAME_LEN + 2];
  int fixed_settings;
  size_t nups;
  size_t *order;
  size_t check_cursor;
  size_t nchecking;
  size_t npassed;
  rp_tstamp next_recheck;
  rp_duration check_timeout;
  rp_duration recheck_interval;
  int pretest_on;
  rp_dns_name pretest_name;
  uint32_t want;
  /* rxbuf is the shared datagram receive buffer. */
  uint8_t *rxbuf;
  /* Send slots and their free list. */
  rp_net_send_slot *slots;
  rp_net_send_slot *free_slots;
  /* TCP clients by slot, with the generation of each slot; nclients of
     the slots are taken. tcp_pending is the answer bytes queued for all
     of them (bounded by tcp_max_pending). The idle timeouts and bounds
     are the options' with their defaults applied. */
  rp_net_client_conn **clients;
  uint32_t *client_gen;
  uint32_t nclients;
  size_t tcp_pending;
  rp_duration tcp_idle_timeout, tcp_busy_idle_timeout;
  size_t tcp_client_max_pending, tcp_max_pending;
  /* refuse_log_at is when a TCP refusal or closing was last logged;
     refuse_unlogged counts those not logged since (one line a second). */
  rp_tstamp refuse_log_at;
  uint64_t refuse_unlogged;
  /* Errors to report after the current core call. */
  rp_net_err errq[RP_NET_ERRQ_LEN];
  size_t errq_head, errq_len;
  int in_core;
  /* in_check_more guards rp_net_check_more against re-entry. */
  int in_check_more;
  rp_net_counters counters;
  /* The in-process clients (direct.c): their answer callback and the
     queue of answers waiting for it, records dq_next..dq_n of dq_recs
     with their bytes in dq_buf (dq_used taken; both reset when the queue
     runs empty). dq_draining guards the drain against re-entry. */
  rp_net_answer_cb direct_cb;
  void *direct_user_data;
  struct rp_net_direct_rec *dq_recs;
  uint8_t *dq_buf;
  size_t dq_n, dq_next, dq_used;
  int dq_draining;
  /* dq_idle is 1 while direct_idle runs. */
  int dq_idle;
  /* tls_ca and tls_name are the config's TLS settings for DoT and DoH
     (owned, NULL when not given). */
  char *tls_ca;
  char *tls_name;
  /* tls_ctx is the shared client context (NULL until a DoT or DoH
     resolver needs it). */
  SSL_CTX *tls_ctx;
  /* auto_on is 1 when "auto" is among the resolvers (discovery runs);
     disc is the running discovery (NULL once it closed). */
  int auto_on;
  struct rp_disc *disc;
  /* cap_ups is the room of |ups| and |order|; max_ups bounds what
     discovery adds: the configured resolvers, plus with "auto" the
     bundled DoT/DoH ones and discovery.want. */
  size_t cap_ups;
  size_t max_ups;
  /* Scores. */
  char *scores_file;
  char score_key[RP_SCORES_KEYLEN];
  rp_scores scores;
  /* Shutdown. */
  int stopping;
  size_t nhandles;
  rp_net_pool_closed_cb closed_cb;
  void *closed_ud;
};

/* rp_net_upstream_on_answer hands an answer read from |up| to the check
   or the core. |flags| is a mask of RP_ANSWER_*. */
void rp_net_upstream_on_answer(rp_net_upstream *up, const uint8_t *data,
                               size_t len, uint32_t flags, rp_tstamp now);

/* rp_net_upstream_on_error reports that |upstream_id| (or
   RP_UPSTREAM_ID_ALL) at |up| failed with |outcome|. Safe to call from
   inside a core callback (it is then queued). */
void rp_net_upstream_on_error(rp_net_upstream *up, uint32_t upstream_id,
                              rp_outcome outcome, rp_tstamp now);

/* rp_net_handle_opened and rp_net_handle_closed count the pool's open
   handles; the pool finishes stopping when the count reaches 0. */
void rp_net_handle_opened(rp_net_pool *np);
void rp_net_handle_closed(rp_net_pool *np);

/* rp_net_up_handle_opened and rp_net_up_handle_closed count a handle (or
   request) of |up|, and of its pool; a removed upstream is freed when its
   last handle closes. */
void rp_net_up_handle_opened(rp_net_upstream *up);
void rp_net_up_handle_closed(rp_net_upstream *up);

/* rp_net_up_gone returns 1 once |up| must not open anything again: the
   pool stops or a reload removed it. */
int rp_net_up_gone(const rp_net_upstream *up);

/* rp_net_udp_send sends |len| bytes on |udp| to |addr| (NULL when
   connected): uv_udp_try_send, else a send slot. Returns 0 or an
   RP_ERR_* (counted as a send failure). */
int rp_net_udp_send(rp_net_pool *np, uv_udp_t *udp, const uint8_t *data,
                    size_t len, const struct sockaddr *addr);

/* rp_net_udp_queue queues |len| bytes for |tx|'s socket, to |addr| (NULL
   when connected); they leave in rp_net_tx_flush, before the loop waits.
   A failure is counted and, for an upstream, reported as SEND_FAILED of
   |upstream_id| at |now| (the time the calling libuv callback read).
   Returns 0 or an RP_ERR_* when the datagram could not be sent at once
   (too long for the queue and refused). */
int rp_net_udp_queue(rp_net_pool *np, rp_net_txsock *tx, const uint8_t *data,
                     size_t len, const struct sockaddr *addr,
                     uint16_t upstream_id, rp_tstamp now);

/* rp_net_tx_flush sends every queued datagram; a failure is reported at
   |now|, the time the calling libuv callback read. */
void rp_net_tx_flush(rp_net_pool *np, rp_tstamp now);

/* rp_net_rx_now returns the time for a datagram read with |flags| (the
   libuv recv flags): read once per recvmmsg batch. */
rp_tstamp rp_net_rx_now(rp_net_pool *np, unsigned flags);

/* rp_net_log formats a line and passes it to options.log. */
void rp_net_log(rp_net_pool *np, rp_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* rp_net_now returns uv_hrtime() as an rp_tstamp. */
rp_tstamp rp_net_now(void);

/* Constants shared by net.c, listen.c and check.c. */
/* rp_net_client_addr is what the runtime keeps of a client in
   rp_client.opaque (rp_net_client_save / _load copy it in and out, so
   nothing reads the bytes through a cast): a UDP client's address and
   the UDP size it accepts, or the kind of client that rp_client.id
   names (a TCP connection, an in-process client's token). */
typedef enum rp_net_client_kind {
  RP_NET_CLIENT_UDP = 0, /* zeroed opaque: a UDP client, or a TCP one */
  RP_NET_CLIENT_DIRECT   /* in process: rp_client.id is its token */
} rp_net_client_kind;

typedef struct rp_net_client_addr {
  union {
    struct sockaddr sa;
    struct sockaddr_in in;
    struct sockaddr_in6 in6;
  } addr;
  uint16_t udp_size;
  uint8_t kind;
} rp_net_client_addr;

static inline void rp_net_client_save(rp_client *c,
                                      const rp_net_client_addr *a) {
  _Static_assert(sizeof(rp_net_client_addr) <= sizeof(c->opaque),
                 "rp_net_client_addr must fit rp_client.opaque");
  memcpy(c->opaque, a, sizeof(*a));
}

static inline void rp_net_client_load(const rp_client *c,
                                      rp_net_client_addr *a) {
  memcpy(a, c->opaque, sizeof(*a));
}
/* RP_NET_CHECK_BUF_LEN is the buffer for one check query. */
#define RP_NET_CHECK_BUF_LEN 512
/* RP_NET_QTYPE_QCLASS_LEN is the length of a question's type and class
   (the runtime reads and builds DNS only through the codec, dns.h; this
   sizes the buffer of a truncated answer). */
#define RP_NET_QTYPE_QCLASS_LEN 4

/* Shared between the runtime's modules (net.c, sendq.c, listen.c,
   check.c, resolvers.c). */

/* rp_net_core_result logs a fatal error |rv| of the core call |what|. */
void rp_net_core_result(rp_net_pool *np, int rv, const char *what);

/* rp_net_cb_rand is the core's rand callback: bytes of np->rand_buf. */
void rp_net_cb_rand(uint8_t *dest, size_t len, void *user_data);

/* rp_net_submit hands a client's query to the core at |now| and flushes
   (listen.c). Returns the core's result (RP_ERR_MALFORMED counted). */
int rp_net_submit(rp_net_pool *np, const uint8_t *q, size_t len,
                  const rp_client *client, rp_tstamp now);

/* rp_net_direct_queue queues an answer for in-process client |token|
   (from inside the core's deliver); rp_net_direct_drain hands the
   answers queued so far to the answer callback (from the loop's check,
   prepare and idle callbacks only); rp_net_direct_idle_cb drains;
   rp_net_direct_free releases the queue (direct.c). */
void rp_net_direct_queue(rp_net_pool *np, uint64_t token, const uint8_t *data,
                         size_t len);
void rp_net_direct_drain(rp_net_pool *np);
void rp_net_direct_idle_cb(uv_idle_t *h);
void rp_net_direct_free(rp_net_pool *np);

/* rp_net_flush reports queued errors (each may queue more) and re-arms
   the timer. */
void rp_net_flush(rp_net_pool *np, rp_tstamp now);

/* rp_net_tx_run sends the queue until it stays empty; failures are
   reported at |now|. */
void rp_net_tx_run(rp_net_pool *np, rp_tstamp now);

/* rp_net_tx_loop_work is the work of the prepare, check and direct idle
   callbacks: it reads the clock once when there is anything to do, hands
   in-process clients their answers and sends the queue. */
void rp_net_tx_loop_work(rp_net_pool *np);

/* rp_net_tx_prepare_cb and rp_net_tx_check_cb run the send queue. */
void rp_net_tx_prepare_cb(uv_prepare_t *h);
void rp_net_tx_check_cb(uv_check_t *h);

/* rp_net_bind opens the listener: UDP and TCP on the same port of
   |want|. */
int rp_net_bind(rp_net_pool *np, const struct sockaddr_storage *want, char *err,
                size_t errlen);

/* rp_net_check_done ends the check of |up|: passed or failed (|why|). */
void rp_net_check_done(rp_net_upstream *up, int passed, const char *why,
                       rp_tstamp now);

/* rp_net_check_more starts checks while fewer than |want| work. */
void rp_net_check_more(rp_net_pool *np, rp_tstamp now);

/* rp_net_clients_sweep closes the TCP clients idle past their timeout
   (listen.c); run from the check timer's tick. */
void rp_net_clients_sweep(rp_net_pool *np, rp_tstamp now);
/* rp_net_client_answer delivers an answer for TCP client |c| at |now|:
   it is written, or the client is closed when its queue is past a
   bound. */
void rp_net_client_answer(rp_net_client_conn *c, const uint8_t *data,
                          size_t len, rp_tstamp now);

/* rp_net_check_timer_cb is the check timer's tick. */
void rp_net_check_timer_cb(uv_timer_t *t);

/* rp_net_strdup copies |src| with |mem| into |*pdst|. */
int rp_net_strdup(const rp_mem *mem, char **pdst, const char *src);

/* rp_net_reload_settle removes the upstreams a reload dropped once no
   upstream it added is being checked (reload.c; from the check timer). */
void rp_net_reload_settle(rp_net_pool *np, rp_tstamp now);

/* rp_net_reserve_ups makes room for |extra| more upstreams in np->ups
   and np->order. Returns 0 or RP_ERR_NOMEM. */
int rp_net_reserve_ups(rp_net_pool *np, size_t extra);

/* rp_net_add_upstream appends |r| to np->ups, last in the check order
   (nothing changes on failure). Sets |*pusable| to 1 unless it is
   "auto". Returns 0, RP_ERR_CONFIG (no TLS context; |err| says why) or
   RP_ERR_NOMEM. */
int rp_net_add_upstream(rp_net_pool *np, const rp_config_resolver *r,
                        int *pusable, char *err, size_t errlen);

/* rp_net_upstream_free frees |up| and what it owns (its handles are
   closed). */
void rp_net_upstream_free(rp_net_pool *np, rp_net_upstream *up);

/* rp_net_setup_upstreams copies the usable resolvers of |cfg|. */
int rp_net_setup_upstreams(rp_net_pool *np, const rp_config *cfg, char *err,
                           size_t errlen);

/* rp_net_disc_start runs discovery ("auto"). */
int rp_net_disc_start(rp_net_pool *np, const rp_config *cfg, char *err,
                      size_t errlen);

/* rp_net_disc_closed is discovery's closed callback. */
void rp_net_disc_closed(struct rp_disc *d, void *user_data);

#endif /* RP_NET_INTERNAL_H */
