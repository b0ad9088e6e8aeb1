/*
 * tunapp.c: helpers of the tunnel programs.
 */
#include "tunapp.h"

#include "tuncli.h"

#include <uv.h>

#include <inttypes.h>

#include <stdlib.h>
#include <string.h>

/* APP_FNV_PRIME is the FNV-1a 64-bit prime. */
#define APP_FNV_PRIME 0x100000001b3ULL
/* APP_KIB is the multiplier of the K suffix. */
#define APP_KIB 1024ULL
/* APP_BITS_PER_KBIT converts bytes * 8 to kbit. */
#define APP_BITS_PER_KBIT 1000.0
/* APP_MAX_HOST is the longest host text accepted. */
#define APP_MAX_HOST 64

void tun_app_pattern_fill(uint8_t *out, size_t len, uint64_t offset,
                          uint8_t stream) {
  size_t i;

  for (i = 0; i < len; ++i) {
    out[i] = tun_app_pattern_byte(offset + i, stream);
  }
}

int tun_app_pattern_check(const uint8_t *data, size_t len, uint64_t offset,
                          uint8_t stream) {
  size_t i;

  for (i = 0; i < len; ++i) {
    if (data[i] != tun_app_pattern_byte(offset + i, stream)) {
      return 0;
    }
  }
  return 1;
}

uint64_t tun_app_fnv1a(uint64_t h, const uint8_t *data, size_t len) {
  size_t i;

  for (i = 0; i < len; ++i) {
    h ^= data[i];
    h *= APP_FNV_PRIME;
  }
  return h;
}

int tun_app_parse_addr(const char *text, struct sockaddr_storage *ss) {
  char host[APP_MAX_HOST];
  const char *colon;
  char *end;
  unsigned long port;
  size_t hlen;

  memset(ss, 0, sizeof(*ss));
  if (text[0] == '[') {
    const char *rb = strchr(text, ']');

    if (rb == NULL || rb[1] != ':') {
      return RP_ERR_CONFIG;
    }
    hlen = (size_t)(rb - text - 1);
    if (hlen >= sizeof(host)) {
      return RP_ERR_CONFIG;
    }
    memcpy(host, text + 1, hlen);
    host[hlen] = '\0';
    colon = rb + 1;
  } else {
    colon = strrchr(text, ':');
    if (colon == NULL) {
      return RP_ERR_CONFIG;
    }
    hlen = (size_t)(colon - text);
    if (hlen >= sizeof(host)) {
      return RP_ERR_CONFIG;
    }
    memcpy(host, text, hlen);
    host[hlen] = '\0';
  }
  port = strtoul(colon + 1, &end, 10);
  if (*end != '\0' || colon[1] == '\0' || port > UINT16_MAX) {
    return RP_ERR_CONFIG;
  }
  if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)(void *)ss) == 0) {
    return 0;
  }
  if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)(void *)ss) == 0) {
    return 0;
  }
  return RP_ERR_CONFIG;
}

void tun_app_format_addr(const struct sockaddr *sa, char *out, size_t cap) {
  char host[APP_MAX_HOST] = "?";
  int port = 0;

  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

    uv_ip4_name(in, host, sizeof(host));
    port = ntohs(in->sin_port);
    snprintf(out, cap, "%s:%d", host, port);
  } else {
    const struct sockaddr_in6 *in6 =
        (const struct sockaddr_in6 *)(const void *)sa;

    uv_ip6_name(in6, host, sizeof(host));
    port = ntohs(in6->sin6_port);
    snprintf(out, cap, "[%s]:%d", host, port);
  }
}

int tun_app_parse_size(const char *text, uint64_t *pv) {
  char *end;
  unsigned long long v = strtoull(text, &end, 10);
  unsigned long long mul = 1;

  if (end == text) {
    return RP_ERR_CONFIG;
  }
  switch (*end) {
  case '\0':
    break;
  case 'k':
  case 'K':
    mul = APP_KIB;
    break;
  case 'm':
  case 'M':
    mul = APP_KIB * APP_KIB;
    break;
  case 'g':
  case 'G':
    mul = APP_KIB * APP_KIB * APP_KIB;
    break;
  default:
    return RP_ERR_CONFIG;
  }
  if (*end != '\0' && end[1] != '\0') {
    return RP_ERR_CONFIG;
  }
  *pv = (uint64_t)(v * mul);
  return 0;
}

static uint64_t app_rng_state;

static uint64_t app_rng_next(void) {
  if (app_rng_state == 0) {
    FILE *f = fopen("/dev/urandom", "rb");

    if (f == NULL || fread(&app_rng_state, sizeof(app_rng_state), 1, f) != 1) {
      app_rng_state = uv_hrtime() ^ (uint64_t)uv_os_getpid();
    }
    if (f != NULL) {
      fclose(f);
    }
    app_rng_state |= 1;
  }
  app_rng_state ^= app_rng_state >> 12;
  app_rng_state ^= app_rng_state << 25;
  app_rng_state ^= app_rng_state >> 27;
  return app_rng_state * 2685821657736338717ULL;
}

void tun_app_random(uint8_t *out, size_t len) {
  size_t i;

  for (i = 0; i < len; ++i) {
    out[i] = (uint8_t)(app_rng_next() >> 56);
  }
}

uint64_t tun_app_random64(void) { return app_rng_next(); }

double tun_app_kbps(uint64_t bytes, double seconds) {
  if (seconds <= 0) {
    return 0;
  }
  return (double)bytes * 8.0 / APP_BITS_PER_KBIT / seconds;
}

/* ------------------------------------------------------------------ */
/* Measured transfers                                                   */
/* ------------------------------------------------------------------ */

/* APP_XFER_CHUNK is the scratch size for moving bytes, bytes. */
#define APP_XFER_CHUNK 4096
/* APP_NS_PER_S converts ns to s. */
#define APP_NS_PER_S 1e9

void tun_app_xfer_init(tun_app_xfer *x, uint64_t down, uint64_t up,
                       double seconds) {
  *x = (tun_app_xfer){
      .down_target = down,
      .up_target = up,
      .seconds = seconds,
      .start = RP_TSTAMP_UNSET,
      .down_done = RP_TSTAMP_UNSET,
      .up_done = RP_TSTAMP_UNSET,
      .down_fnv = TUN_APP_FNV_INIT,
      .down_ok = 1,
      .check = 1,
  };
}

int tun_app_xfer_open_files(tun_app_xfer *x, const char *in_path,
                            const char *out_path) {
  long len;

  if (in_path != NULL) {
    x->in = fopen(in_path, "rb");
    if (x->in == NULL || fseek(x->in, 0, SEEK_END) != 0 ||
        (len = ftell(x->in)) < 0 || fseek(x->in, 0, SEEK_SET) != 0) {
      return RP_ERR_IO;
    }
    x->up_target = (uint64_t)len;
  }
  if (out_path != NULL) {
    x->out = fopen(out_path, "wb");
    if (x->out == NULL) {
      return RP_ERR_IO;
    }
    x->check = 0;
  }
  return 0;
}

void tun_app_xfer_close_files(tun_app_xfer *x) {
  if (x->in != NULL) {
    fclose(x->in);
    x->in = NULL;
  }
  if (x->out != NULL) {
    fclose(x->out);
    x->out = NULL;
  }
}

int tun_app_xfer_pump(tun_app_xfer *x, tun_cli *cli, rp_tstamp now) {
  uint8_t buf[APP_XFER_CHUNK];
  tun_arq *arq = tun_cli_arq(cli);
  size_t n;

  if (x->start == RP_TSTAMP_UNSET) {
    x->start = now;
  }
  while ((n = tun_arq_read(arq, buf, sizeof(buf))) > 0) {
    if (x->check &&
        !tun_app_pattern_check(buf, n, x->bytes_down, TUN_APP_STREAM_DOWN)) {
      x->down_ok = 0;
    }
    if (x->out != NULL && fwrite(buf, 1, n, x->out) != n) {
      x->down_ok = 0;
    }
    x->down_fnv = tun_app_fnv1a(x->down_fnv, buf, n);
    x->bytes_down += n;
  }
  while (x->up_written < x->up_target) {
    uint64_t left = x->up_target - x->up_written;

    n = left < sizeof(buf) ? (size_t)left : sizeof(buf);
    if (n > tun_arq_send_space(arq)) {
      n = tun_arq_send_space(arq);
    }
    if (n == 0) {
      break;
    }
    if (x->in != NULL) {
      n = fread(buf, 1, n, x->in);
      if (n == 0) {
        /* The file shrank: upload what was there. */
        x->up_target = x->up_written;
        break;
      }
    } else {
      tun_app_pattern_fill(buf, n, x->up_written, TUN_APP_STREAM_UP);
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
  if (x->seconds > 0 && (double)(now - x->start) / APP_NS_PER_S >= x->seconds) {
    return 1;
  }
  return x->down_done != RP_TSTAMP_UNSET && x->up_done != RP_TSTAMP_UNSET;
}

static double app_span(rp_tstamp from, rp_tstamp to, rp_tstamp now) {
  if (from == RP_TSTAMP_UNSET) {
    return 0;
  }
  if (to == RP_TSTAMP_UNSET) {
    to = now;
  }
  return (double)(to - from) / APP_NS_PER_S;
}

void tun_app_xfer_print(const tun_app_xfer *x, tun_cli *cli, const char *kind,
                        const char *mode, uint64_t queries, uint64_t answers,
                        uint64_t timeouts, uint64_t rejected, rp_tstamp now,
                        const char *extra) {
  tun_arq_stats as;
  double down_s = app_span(x->start, x->down_done, now);
  double up_s = app_span(x->start, x->up_done, now);
  double total = down_s > up_s ? down_s : up_s;
  uint64_t up_bytes;
  int complete =
      (x->down_target == UINT64_MAX || x->down_done != RP_TSTAMP_UNSET) &&
      x->up_done != RP_TSTAMP_UNSET;

  tun_arq_get_stats(tun_cli_arq(cli), &as);
  up_bytes = as.bytes_acked;
  printf("{\"tunnel\":\"%s\",\"mode\":\"%s\",\"complete\":%s"
         ",\"bytes_down\":%" PRIu64 ",\"bytes_up\":%" PRIu64
         ",\"seconds\":%.3f,\"seconds_down\":%.3f,\"seconds_up\":%.3f"
         ",\"kbps_down\":%.1f,\"kbps_up\":%.1f"
         ",\"queries\":%" PRIu64 ",\"answers\":%" PRIu64
         ",\"timeouts\":%" PRIu64 ",\"rejected\":%" PRIu64
         ",\"retransmissions\":%" PRIu64 ",\"fast_retransmits\":%" PRIu64
         ",\"segments_received\":%" PRIu64 ",\"duplicates_received\":%" PRIu64
         ",\"down_ok\":%s,\"down_checked\":%s"
         ",\"down_fnv\":\"%016" PRIx64 "\"%s}\n",
         kind, mode, complete ? "true" : "false", x->bytes_down, up_bytes,
         total, down_s, up_s, tun_app_kbps(x->bytes_down, down_s),
         tun_app_kbps(up_bytes, up_s), queries, answers, timeouts, rejected,
         as.retransmissions, as.fast_retransmits, as.segs_received,
         as.dup_received, x->down_ok ? "true" : "false",
         x->check ? "true" : "false", x->down_fnv, extra != NULL ? extra : "");
  fflush(stdout);
}
