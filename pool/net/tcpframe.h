/*
 * tcpframe.h: the reading side of DNS over a byte stream, sans I/O
 * (prefix rp_tcpframe_).
 *
 * DNS over TCP and over TLS carries each message behind a two-byte
 * big-endian length (RFC 1035 4.2.2, RFC 7766 8, RFC 7858 3.3). A framer
 * takes the bytes of a stream in chunks of any size, as reads return
 * them, and hands back whole messages. It reads no socket and allocates
 * nothing: the caller owns the buffer, so memory is bounded by its
 * capacity. Used by stream.c (the listener's client connections and the
 * TCP upstream transport) and dot.c (answers over TLS), and fuzzed by
 * pool/net/fuzz/fuzz_tcp_frame.c.
 *
 * Two ways to put bytes in: rp_tcpframe_space and rp_tcpframe_commit let
 * a read land in the buffer directly (libuv's alloc callback), and
 * rp_tcpframe_feed copies from a chunk the caller holds (decrypted TLS).
 * After either, rp_tcpframe_next is called until it returns 0 or an
 * error.
 */
#ifndef RP_TCPFRAME_H
#define RP_TCPFRAME_H

#include "respool.h"

#include <stddef.h>
#include <stdint.h>

/* RP_TCPFRAME_PREFIX_LEN is the length prefix of a frame. */
#define RP_TCPFRAME_PREFIX_LEN 2u
/* RP_TCPFRAME_MIN_CAP is the smallest buffer: a prefix and one byte. */
#define RP_TCPFRAME_MIN_CAP (RP_TCPFRAME_PREFIX_LEN + 1u)
/* RP_TCPFRAME_FRAME_MAX is the largest frame: the prefix and a message
   of 65535 bytes. A buffer this large takes every message. */
#define RP_TCPFRAME_FRAME_MAX (RP_TCPFRAME_PREFIX_LEN + 65535u)

/* rp_tcpframe is the state of one stream's reading side. The caller owns
   it and |buf|; the framer never frees either. */
typedef struct rp_tcpframe {
  /* buf is the caller's storage of |cap| bytes. */
  uint8_t *buf;
  /* cap is the size of |buf| in bytes: the largest frame the framer
     takes (a message of at most cap - RP_TCPFRAME_PREFIX_LEN bytes). */
  size_t cap;
  /* head is the offset in |buf| of the first byte not yet handed out. */
  size_t head;
  /* tail is the offset just past the last byte put in; buf[head..tail)
     are the bytes held (at most one partial frame once
     rp_tcpframe_next has returned 0). */
  size_t tail;
  /* err is 0, or the error rp_tcpframe_next returned, which it returns
     again until rp_tcpframe_reset. */
  int err;
} rp_tcpframe;

/* rp_tcpframe_init prepares |f| over |buf| of |cap| bytes (at least
   RP_TCPFRAME_MIN_CAP), holding nothing. |buf| is borrowed for the life
   of |f|. */
void rp_tcpframe_init(rp_tcpframe *f, uint8_t *buf, size_t cap);

/* rp_tcpframe_reset drops the bytes held and the error, as for a new
   connection over the same buffer. */
void rp_tcpframe_reset(rp_tcpframe *f);

/* rp_tcpframe_space moves the bytes held to the front of the buffer and
   returns where the next bytes go, with their room in |*proom|. Once
   rp_tcpframe_next has returned 0 the room is at least 1. Pointers from
   rp_tcpframe_next are no longer valid after this call. */
uint8_t *rp_tcpframe_space(rp_tcpframe *f, size_t *proom);

/* rp_tcpframe_commit adds |n| bytes written at rp_tcpframe_space's
   pointer; |n| is at most its room (an assertion: the caller's
   invariant). */
void rp_tcpframe_commit(rp_tcpframe *f, size_t n);

/* rp_tcpframe_feed copies as many of the |len| bytes at |data| as there
   is room for (rp_tcpframe_space) and returns how many it took; the
   caller feeds the rest after draining rp_tcpframe_next. Pointers from
   rp_tcpframe_next are no longer valid after this call. */
size_t rp_tcpframe_feed(rp_tcpframe *f, const uint8_t *data, size_t len);

/* rp_tcpframe_next takes the next whole message. Returns 1 with the
   message (prefix removed) in |*pmsg| and its length (1 .. 65535) in
   |*plen|, pointing into the buffer and valid until the next
   rp_tcpframe_space, rp_tcpframe_feed or rp_tcpframe_reset; 0 when no
   whole message is held yet; RP_ERR_PROTO when a length prefix is zero
   (RFC 1035 messages have a 12-byte header); RP_ERR_NOBUF when a length
   prefix is larger than the buffer takes. The check is made as soon as
   the prefix is held, before the message arrives. After an error the
   stream cannot be resynchronised: the same error comes back until
   rp_tcpframe_reset. */
int rp_tcpframe_next(rp_tcpframe *f, const uint8_t **pmsg, size_t *plen);

#endif /* RP_TCPFRAME_H */
