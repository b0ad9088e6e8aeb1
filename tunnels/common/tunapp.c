/*
 * tunapp.c: helpers of the tunnel programs.
 */
#include "tunapp.h"

#include "tuncli.h"

#include <uv.h>

#include <inttypes.h>

#include <stdlib.h>
#include <string.h>

/* APP_KIB is the multiplier of the K suffix. */
#define APP_KIB 1024ULL
/* APP_BITS_PER_KBIT converts bytes * 8 to kbit. */
#define APP_BITS_PER_KBIT 1000.0
/* APP_MAX_HOST is the longest host text accepted. */
#define APP_MAX_HOST 64

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

static size_t app_file_read(uint8_t *out, size_t cap, void *user_data) {
  tun_app_files *f = user_data;

  return fread(out, 1, cap, f->in);
}

static int app_file_write(const uint8_t *data, size_t len, void *user_data) {
  tun_app_files *f = user_data;

  return fwrite(data, 1, len, f->out) != len;
}

int tun_app_xfer_open_files(tun_xfer *x, tun_app_files *f, const char *in_path,
                            const char *out_path) {
  long len;

  *f = (tun_app_files){0};
  if (in_path != NULL) {
    f->in = fopen(in_path, "rb");
    if (f->in == NULL || fseek(f->in, 0, SEEK_END) != 0 ||
        (len = ftell(f->in)) < 0 || fseek(f->in, 0, SEEK_SET) != 0) {
      return RP_ERR_IO;
    }
    x->up_target = (uint64_t)len;
    x->read_up = app_file_read;
    x->io_data = f;
  }
  if (out_path != NULL) {
    f->out = fopen(out_path, "wb");
    if (f->out == NULL) {
      return RP_ERR_IO;
    }
    x->check = 0;
    x->write_down = app_file_write;
    x->io_data = f;
  }
  return 0;
}

void tun_app_xfer_close_files(tun_app_files *f) {
  if (f->in != NULL) {
    fclose(f->in);
    f->in = NULL;
  }
  if (f->out != NULL) {
    fclose(f->out);
    f->out = NULL;
  }
}

void tun_app_xfer_print(const tun_xfer *x, tun_cli *cli, const char *kind,
                        const char *mode, uint64_t queries, uint64_t answers,
                        uint64_t timeouts, uint64_t rejected, rp_tstamp now,
                        const char *extra) {
  tun_arq_stats as;
  double down_s = tun_xfer_span(x, x->down_done, now);
  double up_s = tun_xfer_span(x, x->up_done, now);
  double total = down_s > up_s ? down_s : up_s;
  uint64_t up_bytes;
  int complete = tun_xfer_complete(x);

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
