/*
 * tls.h: a TLS client connection over a libuv TCP stream (prefix
 * rp_net_tls_).
 *
 * OpenSSL 3 runs on two memory BIOs: bytes read from the socket are
 * written into the read BIO and SSL_read/SSL_do_handshake consume them;
 * whatever OpenSSL wants to send lands in the write BIO and is written to
 * the socket with uv_try_write/uv_write. Nothing blocks the loop. DoT
 * (dot.c) and DoH (doh.c) are built on it.
 *
 * Life cycle: rp_net_tls_init (CLOSED) -> rp_net_tls_start (PREPARED: the
 * SSL object and buffers exist, no socket; plaintext written now is kept
 * until the handshake ends) -> rp_net_tls_connect (CONNECTING, a uv_tcp_t
 * exists) -> HANDSHAKE -> OPEN -> rp_net_tls_close or an error (CLOSING)
 * -> on_closed (CLOSED again; it may be started anew). A PREPARED
 * connection that never got a socket is released by rp_net_tls_close at
 * once, without callbacks.
 *
 * The SSL_CTX is shared (rp_net_tls_ctx_new); TLS 1.3 session tickets
 * arrive after the handshake and are stored in the slot the owner passed
 * to rp_net_tls_start, and offered on the next connection (resumption).
 */
#ifndef RP_NET_TLS_H
#define RP_NET_TLS_H

#include "respool.h"

#include <openssl/ssl.h>
#include <sys/socket.h>
#include <uv.h>

/* RP_NET_TLS_RBUF_LEN is the socket read buffer, bytes (one TLS record
   of 16 KiB plus its overhead). */
#define RP_NET_TLS_RBUF_LEN (16u * 1024u + 512u)
/* RP_NET_TLS_PLAIN_LEN is the buffer SSL_read decrypts into, bytes. */
#define RP_NET_TLS_PLAIN_LEN (16u * 1024u)
/* RP_NET_TLS_MAX_PENDING bounds both the plaintext kept before the
   handshake ends and the ciphertext queued for the socket, bytes. */
#define RP_NET_TLS_MAX_PENDING (1024u * 1024u)
/* RP_NET_TLS_REASON_LEN is the room for a failure reason. */
#define RP_NET_TLS_REASON_LEN 256u

typedef enum rp_net_tls_state {
  RP_NET_TLS_CLOSED = 0, /* nothing allocated */
  RP_NET_TLS_PREPARED,   /* SSL and buffers exist, no socket yet */
  RP_NET_TLS_CONNECTING, /* TCP connect in flight */
  RP_NET_TLS_HANDSHAKE,  /* TCP open, TLS handshake in flight */
  RP_NET_TLS_OPEN,       /* application data flows */
  RP_NET_TLS_CLOSING     /* uv_close called, waiting for its callback */
} rp_net_tls_state;

/* rp_net_tls_end is why an open or opening connection ended. */
typedef enum rp_net_tls_end {
  RP_NET_TLS_END_CONNECT = 0, /* the TCP connect failed */
  RP_NET_TLS_END_TLS,         /* the handshake or a record failed */
  RP_NET_TLS_END_EOF,         /* the peer closed (EOF or close_notify) */
  RP_NET_TLS_END_IO           /* a read or write error, or buffers full */
} rp_net_tls_end;

typedef struct rp_net_tls rp_net_tls;

/* rp_net_tls_callbacks are the events of a connection. Pointers passed
   to them are borrowed. */
typedef struct rp_net_tls_callbacks {
  /* on_open: the handshake finished at |now|; |resumed| is 1 when a
     saved session was accepted. */
  void (*on_open)(rp_net_tls *t, int resumed, rp_tstamp now);
  /* on_data: |len| bytes of plaintext, read at |now| (uv_hrtime). It may
     close the connection. */
  void (*on_data)(rp_net_tls *t, const uint8_t *data, size_t len,
                  rp_tstamp now);
  /* on_end: the connection ended for |why|; |reason| says more (the
     OpenSSL verify error or error queue, or the libuv error name). The
     connection is already closing. |now| is the one clock read of the
     libuv callback that found the end. */
  void (*on_end)(rp_net_tls *t, rp_net_tls_end why, const char *reason,
                 rp_tstamp now);
  /* on_closed: the socket is closed and everything freed; the owner may
     start the connection again. */
  void (*on_closed)(rp_net_tls *t);
} rp_net_tls_callbacks;

struct rp_net_tls {
  /* tcp is the socket; its data points at the connection. */
  uv_tcp_t tcp;
  /* check flushes the plaintext written during one loop iteration as
     few records and one socket write (running while |check_on|). */
  uv_check_t check;
  int check_on;
  /* nclosing counts the handles whose close callback is pending. */
  int nclosing;
  uv_connect_t connect_req;
  uv_write_t write_req;
  const rp_net_tls_callbacks *cb;
  const rp_mem *mem;
  /* user_data is the owner's. */
  void *user_data;
  rp_net_tls_state state;
  SSL *ssl;
  /* rbio and wbio are owned by |ssl|. */
  BIO *rbio, *wbio;
  /* psession is the owner's slot for the session ticket (may be NULL). */
  SSL_SESSION **psession;
  /* rbuf receives socket bytes; plain receives SSL_read output. */
  uint8_t *rbuf;
  uint8_t *plain;
  /* early holds |elen| bytes of plaintext not encrypted yet: written
     before the handshake finished, or during this loop iteration
     (|ecap| allocated). */
  uint8_t *early;
  size_t elen, ecap;
  /* wbuf[0..1] hold ciphertext for the socket: |wbusy| is the index
     being written by |write_req|, or -1. */
  uint8_t *wbuf[2];
  size_t wlen[2], wcap[2];
  int wbusy;
};

/* rp_net_tls_ctx_new creates a client SSL_CTX in |*pctx|: TLS 1.2 or
   newer, peer verification on, the system trust store plus the PEM file
   |ca_file| (NULL for none), client session cache for resumption. On
   failure |err| (|errlen| bytes) names the file and the OpenSSL reason.
   Returns 0, RP_ERR_TLS (the CA file cannot be loaded) or RP_ERR_NOMEM. */
int rp_net_tls_ctx_new(SSL_CTX **pctx, const char *ca_file, char *err,
                       size_t errlen);

/* rp_net_tls_init makes |t| CLOSED with |cb|, |mem| and |user_data|. */
void rp_net_tls_init(rp_net_tls *t, const rp_net_tls_callbacks *cb,
                     const rp_mem *mem, void *user_data);

/* rp_net_tls_start prepares a client connection from |ctx|: SNI and the
   verified name are |name| (an IP literal is checked against the
   certificate's IP addresses and sent without SNI); |alpn| is an ALPN
   list in wire format (NULL for none, |alpn_len| bytes); |psession|
   (may be NULL) holds a session to resume and receives new ones. |t|
   must be CLOSED. Returns 0, RP_ERR_INVALID_ARGUMENT, RP_ERR_NOMEM or
   RP_ERR_TLS (OpenSSL refused a setting; |t| stays CLOSED). */
int rp_net_tls_start(rp_net_tls *t, SSL_CTX *ctx, const char *name,
                     const uint8_t *alpn, size_t alpn_len,
                     SSL_SESSION **psession);

/* rp_net_tls_connect opens the TCP connection of a PREPARED |t| to
   |addr| on |loop|; the handshake follows. Returns 0, or RP_ERR_IO when
   the socket cannot be made: |t| is then CLOSING (on_closed follows, no
   on_end) if a handle exists, else CLOSED. */
int rp_net_tls_connect(rp_net_tls *t, uv_loop_t *loop,
                       const struct sockaddr *addr);

/* rp_net_tls_write queues |len| bytes of plaintext; they are encrypted
   and sent at the end of the current loop iteration (a uv_check_t), so
   the writes of one iteration share records and one socket write; before
   the handshake ends they are kept and sent after it. Returns 0,
   RP_ERR_INVALID_ARGUMENT (closed or closing), RP_ERR_FULL (more than
   RP_NET_TLS_MAX_PENDING bytes waiting) or RP_ERR_NOMEM. A failure found
   while sending ends the connection through on_end. */
int rp_net_tls_write(rp_net_tls *t, const uint8_t *data, size_t len);

/* rp_net_tls_close closes |t|: a handle is closed (on_closed follows
   from the loop); a PREPARED connection is freed at once without
   callbacks. CLOSED and CLOSING do nothing. */
void rp_net_tls_close(rp_net_tls *t);

/* rp_net_tls_alpn returns the protocol the server selected (not NUL
   terminated, |*plen| bytes) or NULL. */
const uint8_t *rp_net_tls_alpn(const rp_net_tls *t, size_t *plen);

#endif /* RP_NET_TLS_H */
