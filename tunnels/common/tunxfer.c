/*
 * tunxfer.c: the measured transfer (see tunxfer.h).
 */
#include "tunxfer.h"

#include "arq.h"
#include "tuncli.h"

/* XFER_CHUNK is the scratch size for moving bytes, bytes. */
#define XFER_CHUNK 4096
/* XFER_NS_PER_S converts ns to s. */
#define XFER_NS_PER_S 1e9
/* XFER_FNV_PRIME is the FNV-1a 64-bit prime. */
#define XFER_FNV_PRIME 0x100000001b3ULL

/* The pattern byte at offset o is the top byte of o x
   TUN_XFER_PATTERN_MUL (mod 2^64), so the next byte's product is this
   one's plus the multiplier: fill and check add instead of multiplying,
   eight bytes to a word. The word and the loads and stores are written
   out, not looped, so that the compiler keeps the shifts constant and
   the 8 byte moves become one (gcc -O2 does not unroll the loops). */

/* XFER_MUL is the pattern's multiplier (short for the word below). */
#define XFER_MUL TUN_XFER_PATTERN_MUL
/* XFER_BYTES spreads a byte to the 8 bytes of a word. */
#define XFER_BYTES 0x0101010101010101ULL

/* xfer_pattern_word returns the 8 pattern bytes from the product |v| of
   their first offset, in memory order (byte j in bits 8j..8j+7), before
   the stream's xor. */
static inline uint64_t xfer_pattern_word(uint64_t v) {
  return (v >> 56) | (((v + XFER_MUL) >> 56) << 8) |
         (((v + 2 * XFER_MUL) >> 56) << 16) |
         (((v + 3 * XFER_MUL) >> 56) << 24) |
         (((v + 4 * XFER_MUL) >> 56) << 32) |
         (((v + 5 * XFER_MUL) >> 56) << 40) |
         (((v + 6 * XFER_MUL) >> 56) << 48) |
         ((v + 7 * XFER_MUL) & 0xff00000000000000ULL);
}

void tun_xfer_pattern_fill(uint8_t *out, size_t len, uint64_t offset,
                           uint8_t stream) {
  uint64_t v = offset * XFER_MUL, s = XFER_BYTES * stream;
  size_t i = 0;

  for (; i + 8 <= len; i += 8, v += 8 * XFER_MUL) {
    tun_xfer_store64(out + i, xfer_pattern_word(v) ^ s);
  }
  for (; i < len; ++i, v += XFER_MUL) {
    out[i] = (uint8_t)((v >> 56) ^ stream);
  }
}

int tun_xfer_pattern_check(const uint8_t *data, size_t len, uint64_t offset,
                           uint8_t stream) {
  uint64_t v = offset * XFER_MUL, s = XFER_BYTES * stream, diff = 0;
  size_t i = 0;

  for (; i + 8 <= len; i += 8, v += 8 * XFER_MUL) {
    diff |= tun_xfer_load64(data + i) ^ xfer_pattern_word(v) ^ s;
  }
  for (; i < len; ++i, v += XFER_MUL) {
    diff |= data[i] ^ (uint8_t)((v >> 56) ^ stream);
  }
  return diff == 0;
}

uint64_t tun_xfer_fnv1a(uint64_t h, const uint8_t *data, size_t len) {
  size_t i;

  for (i = 0; i < len; ++i) {
    h ^= data[i];
    h *= XFER_FNV_PRIME;
  }
  return h;
}

void tun_xfer_init(tun_xfer *x, uint64_t down, uint64_t up, double seconds) {
  *x = (tun_xfer){
      .down_target = down,
      .up_target = up,
      .seconds = seconds,
      .start = RP_TSTAMP_UNSET,
      .down_done = RP_TSTAMP_UNSET,
      .up_done = RP_TSTAMP_UNSET,
      .down_fnv = TUN_XFER_FNV_INIT,
      .down_ok = 1,
      .check = 1,
      .hash = 1,
  };
}

int tun_xfer_pump(tun_xfer *x, tun_cli *cli, rp_tstamp now) {
  uint8_t buf[XFER_CHUNK];
  tun_arq *arq = tun_cli_arq(cli);
  size_t n;

  if (x->start == RP_TSTAMP_UNSET) {
    x->start = now;
  }
  if (tun_smux_on(&x->smux) && !x->up_held) {
    x->up_written = tun_smux_write_up(&x->smux, arq, x->up_target);
  }
  for (;;) {
    size_t cap = sizeof(buf);

    if (tun_smux_on(&x->smux)) {
      uint64_t c =
          tun_smux_read_cap(&x->smux, arq, x->bytes_down, x->up_target);

      if (c < cap) {
        cap = (size_t)c;
      }
      if (cap == 0) {
        break;
      }
    }
    n = tun_arq_read(arq, buf, cap);
    if (n == 0) {
      break;
    }
    if (x->check &&
        !tun_xfer_pattern_check(buf, n, x->bytes_down, TUN_XFER_STREAM_DOWN)) {
      x->down_ok = 0;
    }
    if (x->write_down != NULL && x->write_down(buf, n, x->io_data) != 0) {
      x->down_ok = 0;
    }
    if (x->hash) {
      x->down_fnv = tun_xfer_fnv1a(x->down_fnv, buf, n);
    }
    x->bytes_down += n;
    if (tun_smux_on(&x->smux)) {
      tun_smux_read(&x->smux, x->bytes_down);
    }
  }
  while (!tun_smux_on(&x->smux) && !x->up_held &&
         x->up_written < x->up_target) {
    uint64_t left = x->up_target - x->up_written;

    n = left < sizeof(buf) ? (size_t)left : sizeof(buf);
    if (n > tun_arq_send_space(arq)) {
      n = tun_arq_send_space(arq);
    }
    if (n == 0) {
      break;
    }
    if (x->read_up != NULL) {
      n = x->read_up(buf, n, x->io_data);
      if (n == 0) {
        /* The source shrank: upload what was there. */
        x->up_target = x->up_written;
        break;
      }
    } else {
      tun_xfer_pattern_fill(buf, n, x->up_written, TUN_XFER_STREAM_UP);
    }
    x->up_written += tun_arq_write(arq, buf, n);
  }
  if (x->down_done == RP_TSTAMP_UNSET && x->down_target != UINT64_MAX &&
      x->bytes_down >= x->down_target) {
    x->down_done = now;
  }
  if (x->up_done == RP_TSTAMP_UNSET && x->up_written == x->up_target &&
      tun_arq_send_idle(arq)) {
    x->up_done = now;
  }
  if (x->seconds > 0 &&
      (double)(now - x->start) / XFER_NS_PER_S >= x->seconds) {
    return 1;
  }
  return x->down_done != RP_TSTAMP_UNSET &&
         (x->up_done != RP_TSTAMP_UNSET || x->down_ends);
}

int tun_xfer_complete(const tun_xfer *x) {
  return (x->down_target == UINT64_MAX || x->down_done != RP_TSTAMP_UNSET) &&
         (x->up_done != RP_TSTAMP_UNSET || x->down_ends);
}

double tun_xfer_span(const tun_xfer *x, rp_tstamp to, rp_tstamp now) {
  if (x->start == RP_TSTAMP_UNSET) {
    return 0;
  }
  if (to == RP_TSTAMP_UNSET) {
    to = now;
  }
  return (double)(to - x->start) / XFER_NS_PER_S;
}
