/*
 * tunsmux.h: the layers the real dnstt client puts between its TCP
 * stream and its KCP session (prefix tun_smux_), as the writes they make
 * into an arq: an smux (v2) session inside a Noise channel. The
 * simulator's model of the real client needs them because they tie the
 * download to the upload:
 *
 * - Noise sends each message of up to 4 096 bytes of plaintext as two
 *   writes to KCP, its 2-byte length and then the ciphertext (16 bytes
 *   of tag more). kcp-go, its write delay off, flushes after each write,
 *   so the length goes in a segment of its own (tun_arq_write_msg).
 * - kcp-go's Write blocks while the segments waiting (in flight or
 *   queued) are as many as the send window or the peer's
 *   (tun_arq_kcp_writable), and takes the whole write once they are
 *   fewer.
 * - smux writes one frame at a time: a stream's SYN when it opens, then
 *   the upload as a frame (8-byte header), then a window update (UPD, 8
 *   bytes of header and 8 of window) after the reader's first read and
 *   each further every_read bytes read. The reader waits until its
 *   update is written: a download read stops there, behind the whole
 *   upload and the window. Behind a resolver that refuses most queries,
 *   the upload's segments go slowly and the download stops with them
 *   (docs/simulator.md, "The real dnstt's smux").
 *
 * The bytes written are the upload's pattern, framing included: only
 * their lengths model anything (the simulator's server reads no upload).
 */
#ifndef TUN_SMUX_H
#define TUN_SMUX_H

#include "arq.h"

#include <stddef.h>
#include <stdint.h>

/* TUN_SMUX_MSG_MAX is the largest write the layers make, bytes: a Noise
   message's ciphertext. */
#define TUN_SMUX_MSG_MAX (4096 + 16)

/* tun_smux follows the writes of one client stream. Zeroed: off. */
typedef struct tun_smux {
  /* first_read is the download bytes of the reader's first read (the
     first smux frame the server sent), every_read the bytes read between
     later updates (half smux's MaxStreamBuffer); first_read 0: off. */
  uint64_t first_read;
  uint64_t every_read;
  /* next_update is the download offset of the next update; waiting is
     1 while the reader waits for one to be written. */
  uint64_t next_update;
  int waiting;
  /* step counts the writes made: the SYN's two, then the upload's. */
  uint32_t step;
  /* frame_done is the upload frame's bytes (header and upload) written;
     upd_step the current update's writes (0, 1 or 2). */
  uint64_t frame_done;
  uint32_t upd_step;
  /* stream is the bytes written in all, the offset of the pattern. */
  uint64_t stream;
} tun_smux;

/* tun_smux_init turns |m| on: the first update after |first_read|
   download bytes, later ones every |every_read|. */
void tun_smux_init(tun_smux *m, uint64_t first_read, uint64_t every_read);

/* tun_smux_on returns 1 when |m| was initialised. */
static inline int tun_smux_on(const tun_smux *m) { return m->first_read > 0; }

/* tun_smux_write_up makes the writes of the SYN and of the upload of
   |up_target| bytes into |arq| that kcp-go takes now, and returns how
   many upload bytes (the frame's header not counted) are written. */
uint64_t tun_smux_write_up(tun_smux *m, tun_arq *arq, uint64_t up_target);

/* tun_smux_read_cap returns how many download bytes the reader may read
   at |bytes_down| before it waits (UINT64_MAX: no bound), after trying
   to write a pending update into |arq| (behind an upload of |up_target|
   bytes, all of it written first). */
uint64_t tun_smux_read_cap(tun_smux *m, tun_arq *arq, uint64_t bytes_down,
                           uint64_t up_target);

/* tun_smux_read notes that the reader reached |bytes_down|: at an
   update's offset it starts waiting. */
void tun_smux_read(tun_smux *m, uint64_t bytes_down);

#endif /* TUN_SMUX_H */
