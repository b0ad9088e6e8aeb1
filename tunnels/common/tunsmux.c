/*
 * tunsmux.c: the real dnstt client's smux and Noise writes (tunsmux.h).
 */
#include "tunsmux.h"

#include "tunxfer.h"

/* SMUX_NOISE_LEN is a Noise message's length prefix, bytes. */
#define SMUX_NOISE_LEN 2
/* SMUX_NOISE_TAG is a Noise message's authentication tag, bytes. */
#define SMUX_NOISE_TAG 16
/* SMUX_NOISE_MAX is a Noise message's largest plaintext, bytes. */
#define SMUX_NOISE_MAX 4096
/* SMUX_HDR is an smux frame's header, bytes. */
#define SMUX_HDR 8
/* SMUX_UPD is an smux window update's body (consumed, window), bytes. */
#define SMUX_UPD 8
/* SMUX_SYN_STEPS is the SYN's writes: its length and its message. */
#define SMUX_SYN_STEPS 2

void tun_smux_init(tun_smux *m, uint64_t first_read, uint64_t every_read) {
  *m = (tun_smux){
      .first_read = first_read,
      .every_read = every_read,
      .next_update = first_read,
  };
}

/* smux_write makes one write of |len| bytes into |arq| when kcp-go takes
   it now. Returns 1 if it did. */
static int smux_write(tun_smux *m, tun_arq *arq, size_t len) {
  uint8_t buf[TUN_SMUX_MSG_MAX];

  if (!tun_arq_kcp_writable(arq) || len > tun_arq_send_space(arq)) {
    return 0;
  }
  tun_xfer_pattern_fill(buf, len, m->stream, TUN_XFER_STREAM_UP);
  (void)tun_arq_write_msg(arq, buf, len);
  m->stream += len;
  return 1;
}

/* smux_frame_len returns the upload frame's bytes (0: no upload). */
static uint64_t smux_frame_len(uint64_t up_target) {
  return up_target > 0 ? SMUX_HDR + up_target : 0;
}

uint64_t tun_smux_write_up(tun_smux *m, tun_arq *arq, uint64_t up_target) {
  uint64_t frame = smux_frame_len(up_target);

  for (;;) {
    if (m->step < SMUX_SYN_STEPS) {
      size_t len = m->step == 0 ? SMUX_NOISE_LEN : SMUX_HDR + SMUX_NOISE_TAG;

      if (!smux_write(m, arq, len)) {
        break;
      }
      ++m->step;
      continue;
    }
    if (m->frame_done >= frame) {
      break;
    }
    {
      uint64_t left = frame - m->frame_done;
      size_t plain = left < SMUX_NOISE_MAX ? (size_t)left : SMUX_NOISE_MAX;
      int is_len = (m->step - SMUX_SYN_STEPS) % 2 == 0;

      if (!smux_write(m, arq,
                      is_len ? SMUX_NOISE_LEN : plain + SMUX_NOISE_TAG)) {
        break;
      }
      ++m->step;
      if (!is_len) {
        m->frame_done += plain;
      }
    }
  }
  return m->frame_done <= SMUX_HDR ? 0 : m->frame_done - SMUX_HDR;
}

uint64_t tun_smux_read_cap(tun_smux *m, tun_arq *arq, uint64_t bytes_down,
                           uint64_t up_target) {
  if (m->waiting) {
    /* smux writes a frame at a time: the update goes after the upload
       frame, its length and its message each when kcp-go takes them. */
    if (m->step < SMUX_SYN_STEPS ||
        m->frame_done < smux_frame_len(up_target)) {
      return 0;
    }
    while (m->upd_step < 2) {
      size_t len = m->upd_step == 0 ? SMUX_NOISE_LEN
                                    : SMUX_HDR + SMUX_UPD + SMUX_NOISE_TAG;

      if (!smux_write(m, arq, len)) {
        return 0;
      }
      ++m->upd_step;
    }
    m->waiting = 0;
    m->upd_step = 0;
    m->next_update = bytes_down + m->every_read;
  }
  return m->next_update > bytes_down ? m->next_update - bytes_down : 0;
}

void tun_smux_read(tun_smux *m, uint64_t bytes_down) {
  if (!m->waiting && bytes_down >= m->next_update) {
    m->waiting = 1;

  }
}
