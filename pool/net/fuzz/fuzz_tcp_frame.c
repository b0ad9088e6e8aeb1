/*
 * fuzz_tcp_frame.c: libFuzzer target for the two-byte length framing of
 * DNS over TCP and TLS (tcpframe.h), as stream.c (the listener's client
 * connections, the TCP upstream transport) and dot.c (DoT answers) use
 * it.
 *
 * The input is a header and a stream:
 *   byte 0      the buffer: below 0x80 the size the runtime uses
 *               (RP_TCPFRAME_FRAME_MAX); otherwise RP_TCPFRAME_MIN_CAP +
 *               4 * (byte & 0x7f), 3 .. 511 bytes, so that lengths past
 *               the buffer (RP_ERR_NOBUF) are reached;
 *   byte 1      k, the number of chunk bytes that follow (at most what
 *               the input holds);
 *   k bytes     the chunks the stream is cut into, used in turn and
 *               again from the first when they run out (none: the whole
 *               stream in one chunk). Chunk byte c: 0xff is the rest of
 *               the stream; otherwise (c & 0x7f) + 1 bytes, put in with
 *               rp_tcpframe_space and rp_tcpframe_commit (stream.c's
 *               path) when c has its top bit, else with rp_tcpframe_feed
 *               (dot.c's path);
 *   the rest    the stream.
 * After each chunk, messages are taken until rp_tcpframe_next returns 0
 * or an error, as the runtime does; an error ends the stream. Checks:
 * - the messages and the outcome (an error and which, or how many bytes
 *   are left held) equal those of a one-shot split of the whole stream
 *   by a reference cursor written separately below;
 * - every message lies inside the buffer, the held bytes never exceed
 *   it, and after a drain there is room for at least one byte;
 * - the framer allocates nothing: the buffer is one exact-size heap
 *   block, so ASan reports a read or write past it, and the input is
 *   libFuzzer's exact-size copy.
 * Each failed check aborts with a message. The same function is replayed
 * over the seed corpus by the ctest unit.tcp_frame_fuzz_replay.
 */
#include "tcpframe.h"
#include "respool.h"

#define FUZZ_NAME "fuzz_tcp_frame.c"
#include "../../core/fuzz/fuzz_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* FUZZ_HEADER_LEN is the buffer byte and the chunk count byte. */
#define FUZZ_HEADER_LEN 2u
/* FUZZ_SMALL_FLAG in byte 0 selects a small buffer. */
#define FUZZ_SMALL_FLAG 0x80u
/* FUZZ_SMALL_STEP is the step between small buffer sizes. */
#define FUZZ_SMALL_STEP 4u
/* FUZZ_CHUNK_REST is the chunk byte for the rest of the stream. */
#define FUZZ_CHUNK_REST 0xffu
/* FUZZ_CHUNK_DIRECT marks a chunk put in with space and commit. */
#define FUZZ_CHUNK_DIRECT 0x80u
/* FUZZ_CHUNK_LEN_MASK takes the length bits of a chunk byte. */
#define FUZZ_CHUNK_LEN_MASK 0x7fu

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_before_fail(void) {}

/* fuzz_ref is the reference split: a cursor over the whole stream. */
typedef struct fuzz_ref {
  const uint8_t *stream;
  size_t len;
  /* pos is the offset of the next frame's prefix. */
  size_t pos;
  /* max_msg is the largest message the buffer takes. */
  size_t max_msg;
} fuzz_ref;

/* fuzz_ref_next mirrors rp_tcpframe_next over the whole stream: 1 with a
   message, 0 at an incomplete end, or the error. */
static int fuzz_ref_next(fuzz_ref *r, const uint8_t **pmsg, size_t *plen) {
  size_t left = r->len - r->pos;
  size_t mlen;
  if (left < 2) {
    return 0;
  }
  mlen = (size_t)r->stream[r->pos] * 256u + r->stream[r->pos + 1];
  if (mlen == 0) {
    return RP_ERR_PROTO;
  }
  if (mlen > r->max_msg) {
    return RP_ERR_NOBUF;
  }
  if (left - 2 < mlen) {
    return 0;
  }
  *pmsg = r->stream + r->pos + 2;
  *plen = mlen;
  r->pos += 2 + mlen;
  return 1;
}

/* fuzz_check_state checks the framer's bounds. */
static void fuzz_check_state(const rp_tcpframe *f) {
  FUZZ_CHECK(f->head <= f->tail && f->tail <= f->cap,
             "head %zu tail %zu cap %zu", f->head, f->tail, f->cap);
}

/* fuzz_drain takes every message the framer holds and compares it with
   the reference's next one. Returns 0, or the framer's error. */
static int fuzz_drain(rp_tcpframe *f, fuzz_ref *r) {
  for (;;) {
    const uint8_t *msg = NULL, *want = NULL;
    size_t mlen = 0, wlen = 0;
    int rv = rp_tcpframe_next(f, &msg, &mlen);
    fuzz_check_state(f);
    if (rv == 0) {
      size_t room;
      rp_tcpframe_space(f, &room);
      FUZZ_CHECK(room >= 1, "no room after a drain (tail %zu cap %zu)",
                 f->tail, f->cap);
      return 0;
    }
    if (rv < 0) {
      int want_rv = fuzz_ref_next(r, &want, &wlen);
      FUZZ_CHECK(rv == want_rv, "framer error %d, reference %d at %zu", rv,
                 want_rv, r->pos);
      return rv;
    }
    FUZZ_CHECK(rv == 1, "rp_tcpframe_next returned %d", rv);
    FUZZ_CHECK(msg >= f->buf && mlen >= 1 && mlen <= f->cap - 2 &&
                   (size_t)(msg - f->buf) <= f->cap - mlen,
               "message of %zu bytes at %td outside the buffer of %zu", mlen,
               msg - f->buf, f->cap);
    FUZZ_CHECK(fuzz_ref_next(r, &want, &wlen) == 1,
               "a message the reference does not have, at %zu", r->pos);
    FUZZ_CHECK(mlen == wlen && memcmp(msg, want, mlen) == 0,
               "message of %zu bytes, reference %zu bytes, ending at %zu",
               mlen, wlen, r->pos);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *chunks, *stream;
  size_t nchunks, slen, cap, off = 0, ci = 0;
  uint8_t *buf;
  rp_tcpframe f;
  fuzz_ref ref;
  int rv = 0;

  if (size < FUZZ_HEADER_LEN) {
    return 0;
  }
  cap = data[0] & FUZZ_SMALL_FLAG
            ? RP_TCPFRAME_MIN_CAP +
                  FUZZ_SMALL_STEP * (data[0] & FUZZ_CHUNK_LEN_MASK)
            : RP_TCPFRAME_FRAME_MAX;
  nchunks = data[1];
  if (nchunks > size - FUZZ_HEADER_LEN) {
    nchunks = size - FUZZ_HEADER_LEN;
  }
  chunks = data + FUZZ_HEADER_LEN;
  stream = chunks + nchunks;
  slen = size - FUZZ_HEADER_LEN - nchunks;

  buf = fuzz_mem.malloc(cap, NULL);
  if (buf == NULL) {
    return 0;
  }
  rp_tcpframe_init(&f, buf, cap);
  ref = (fuzz_ref){.stream = stream,
                   .len = slen,
                   .pos = 0,
                   .max_msg = cap - RP_TCPFRAME_PREFIX_LEN};

  while (off < slen && rv == 0) {
    uint8_t c = nchunks ? chunks[ci++ % nchunks] : FUZZ_CHUNK_REST;
    size_t want = c == FUZZ_CHUNK_REST ? slen - off
                                       : (size_t)(c & FUZZ_CHUNK_LEN_MASK) + 1;
    size_t end = want < slen - off ? off + want : slen;
    /* One chunk may take several puts when the buffer is short of room:
       the runtime drains and reads again. */
    while (off < end && rv == 0) {
      size_t took;
      if (c != FUZZ_CHUNK_REST && (c & FUZZ_CHUNK_DIRECT)) {
        size_t room;
        uint8_t *p = rp_tcpframe_space(&f, &room);
        FUZZ_CHECK(p >= buf && room <= cap && (size_t)(p - buf) == cap - room,
                   "space at %td with room %zu in %zu", p - buf, room, cap);
        took = end - off < room ? end - off : room;
        memcpy(p, stream + off, took);
        rp_tcpframe_commit(&f, took);
      } else {
        took = rp_tcpframe_feed(&f, stream + off, end - off);
      }
      FUZZ_CHECK(took >= 1, "no byte taken at %zu of %zu", off, slen);
      off += took;
      fuzz_check_state(&f);
      rv = fuzz_drain(&f, &ref);
    }
  }

  if (rv == 0) {
    const uint8_t *want;
    size_t wlen;
    int want_rv = fuzz_ref_next(&ref, &want, &wlen);
    FUZZ_CHECK(want_rv == 0, "the reference has %d more at %zu", want_rv,
               ref.pos);
    FUZZ_CHECK(f.tail - f.head == slen - ref.pos,
               "%zu bytes held, the reference %zu", f.tail - f.head,
               slen - ref.pos);
    FUZZ_CHECK(memcmp(f.buf + f.head, stream + ref.pos, slen - ref.pos) == 0,
               "the held bytes differ from the stream's tail");
  }
  rp_tcpframe_reset(&f);
  FUZZ_CHECK(f.head == 0 && f.tail == 0 && f.err == 0, "reset left state");

  fuzz_mem.free(buf, NULL);
  FUZZ_CHECK(fuzz_live == 0, "%ld blocks not freed", fuzz_live);
  return 0;
}
