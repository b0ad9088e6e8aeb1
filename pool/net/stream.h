/*
 * stream.h: a TCP connection carrying DNS messages with the two-byte
 * length prefix of RFC 1035 4.2.2 / RFC 7766 (prefix rp_net_stream_).
 *
 * Used by the listener (one per client connection) and by the TCP
 * upstream transport. Messages are pipelined: any number may be written
 * before answers come back, and answers are handed up in the order they
 * arrive. The uv_tcp_t, the connect and the write requests are embedded;
 * the read buffer (2 + 65535 bytes) and the write buffers are allocated
 * when the connection opens and freed when it closes, never per message.
 * Writes first try uv_try_write; what the kernel does not take is copied
 * into a pending buffer bounded by RP_NET_STREAM_MAX_PENDING.
 */
#ifndef RP_NET_STREAM_H
#define RP_NET_STREAM_H

#include "respool.h"
#include "tcpframe.h"

#include <uv.h>

/* RP_NET_STREAM_MAX_PENDING bounds the bytes queued for writing on one
   connection; a write past it fails with RP_ERR_FULL. */
#define RP_NET_STREAM_MAX_PENDING (1024u * 1024u)
/* RP_NET_STREAM_FRAME_MAX is the largest frame: the prefix and a message
   of at most 65535 bytes. */
#define RP_NET_STREAM_FRAME_MAX RP_TCPFRAME_FRAME_MAX

typedef enum rp_net_stream_state {
  RP_NET_STREAM_CLOSED = 0, /* no handle: may be connected again */
  RP_NET_STREAM_CONNECTING,
  RP_NET_STREAM_OPEN,
  RP_NET_STREAM_CLOSING /* uv_close called, waiting for its callback */
} rp_net_stream_state;

typedef struct rp_net_stream rp_net_stream;

/* rp_net_stream_callbacks: events of a stream. Pointers are borrowed. */
typedef struct rp_net_stream_callbacks {
  /* on_message gets one whole message (prefix removed) and the time the
     read callback read once (uv_hrtime). It may close the stream. */
  void (*on_message)(rp_net_stream *s, const uint8_t *msg, size_t len,
                     rp_tstamp now);
  /* on_connect reports the outcome of rp_net_stream_connect: 0 or a
     libuv error (the stream is then already closing), at |now|, the
     connect callback's one clock read. */
  void (*on_connect)(rp_net_stream *s, int uverr, rp_tstamp now);
  /* on_end reports EOF or a read/write error (|uverr|) of an open
     stream; the stream is already closing. |now| is the time of the
     callback or call that found the end. */
  void (*on_end)(rp_net_stream *s, int uverr, rp_tstamp now);
  /* on_closed is called when the handle is closed and the buffers are
     freed; the owner may free or reuse the stream then. */
  void (*on_closed)(rp_net_stream *s);
} rp_net_stream_callbacks;

struct rp_net_stream {
  /* tcp is the handle; its data points at the stream. */
  uv_tcp_t tcp;
  uv_connect_t connect_req;
  uv_write_t write_req;
  const rp_net_stream_callbacks *cb;
  const rp_mem *mem;
  /* user_data is the owner's. */
  void *user_data;
  rp_net_stream_state state;
  /* rframe splits what is read into messages; its buffer
     (RP_NET_STREAM_FRAME_MAX bytes) is allocated while the stream has a
     handle, and rframe.buf is NULL otherwise. */
  rp_tcpframe rframe;
  /* wbuf[0..1] are the write buffers: |wbusy| is the index being written
     by |write_req| or -1; the other one accumulates. */
  uint8_t *wbuf[2];
  size_t wlen[2];
  size_t wcap[2];
  int wbusy;
  /* max_pending bounds wlen[0] + wlen[1] (RP_NET_STREAM_MAX_PENDING after
     init). pending_total, when not NULL, is a sum over several streams
     that this one keeps its queued bytes in, bounded by
     pending_total_max. */
  size_t max_pending;
  size_t *pending_total;
  size_t pending_total_max;
};

/* rp_net_stream_init prepares |s| (CLOSED) for |cb| and |mem|. */
void rp_net_stream_init(rp_net_stream *s, const rp_net_stream_callbacks *cb,
                        const rp_mem *mem, void *user_data);

/* rp_net_stream_connect opens a connection to |addr| on |loop|.
   Messages written meanwhile are queued. Returns 0, RP_ERR_NOMEM or
   RP_ERR_IO. After a failure the stream is CLOSED (nothing to wait for)
   or CLOSING (on_closed follows). */
int rp_net_stream_connect(rp_net_stream *s, uv_loop_t *loop,
                          const struct sockaddr *addr);

/* rp_net_stream_accept accepts a pending connection of |server| into
   |s| and starts reading. Returns 0, RP_ERR_NOMEM or RP_ERR_IO (nothing
   is left open). */
int rp_net_stream_accept(rp_net_stream *s, uv_loop_t *loop,
                         uv_stream_t *server);

/* rp_net_stream_write frames and sends |len| bytes (1 .. 65535). In
   CONNECTING they are queued. Returns 0, RP_ERR_INVALID_ARGUMENT (bad
   length, or the stream is closed or closing), RP_ERR_FULL (past
   max_pending or pending_total_max) or RP_ERR_NOMEM. |now| is the
   caller's time, handed to on_end if the write ends the stream; a
   write that fails later ends it through on_end too. */
int rp_net_stream_write(rp_net_stream *s, const uint8_t *msg, size_t len,
                        rp_tstamp now);

/* rp_net_stream_close closes |s| (any state but CLOSED/CLOSING);
   on_closed follows from the loop. */
void rp_net_stream_close(rp_net_stream *s);

#endif /* RP_NET_STREAM_H */
