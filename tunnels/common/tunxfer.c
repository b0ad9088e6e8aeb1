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

void tun_xfer_pattern_fill(uint8_t *out, size_t len, uint64_t offset,
                           uint8_t stream) {
  size_t i;

  for (i = 0; i < len; ++i) {
    out[i] = tun_xfer_pattern_byte(offset + i, stream);
  }
}

int tun_xfer_pattern_check(const uint8_t *data, size_t len, uint64_t offset,
                           uint8_t stream) {
  size_t i;

  for (i = 0; i < len; ++i) {
    if (data[i] != tun_xfer_pattern_byte(offset + i, stream)) {
      return 0;
    }
  }
  return 1;
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
  };
}

int tun_xfer_pump(tun_xfer *x, tun_cli *cli, rp_tstamp now) {
  uint8_t buf[XFER_CHUNK];
  tun_arq *arq = tun_cli_arq(cli);
  size_t n;

  if (x->start == RP_TSTAMP_UNSET) {
    x->start = now;
  }
  while ((n = tun_arq_read(arq, buf, sizeof(buf))) > 0) {
    if (x->check &&
        !tun_xfer_pattern_check(buf, n, x->bytes_down, TUN_XFER_STREAM_DOWN)) {
      x->down_ok = 0;
    }
    if (x->write_down != NULL && x->write_down(buf, n, x->io_data) != 0) {
      x->down_ok = 0;
    }
    x->down_fnv = tun_xfer_fnv1a(x->down_fnv, buf, n);
    x->bytes_down += n;
  }
  while (!x->up_held && x->up_written < x->up_target) {
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
  return x->down_done != RP_TSTAMP_UNSET && x->up_done != RP_TSTAMP_UNSET;
}

int tun_xfer_complete(const tun_xfer *x) {
  return (x->down_target == UINT64_MAX || x->down_done != RP_TSTAMP_UNSET) &&
         x->up_done != RP_TSTAMP_UNSET;
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
