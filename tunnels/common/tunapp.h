/*
 * tunapp.h: helpers of the tunnel programs (prefix tun_app_): the test
 * byte pattern and its checksum, address and size parsing, randomness and
 * the measurement JSON. Not part of the sans-I/O core: this module may
 * read clocks and files.
 */
#ifndef TUN_APP_H
#define TUN_APP_H

#include "respool.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

/* The two generated streams: what the server serves and what the client
   uploads. */
#define TUN_APP_STREAM_DOWN 0x5au
#define TUN_APP_STREAM_UP 0xa5u

/* TUN_APP_FNV_INIT is the FNV-1a 64-bit offset basis. */
#define TUN_APP_FNV_INIT 0xcbf29ce484222325ULL

/* tun_app_pattern_byte returns byte |offset| of generated stream
   |stream| (a multiplicative hash of the offset: a lost, repeated or
   misplaced segment changes the bytes). */
static inline uint8_t tun_app_pattern_byte(uint64_t offset, uint8_t stream) {
  return (uint8_t)(((offset * 0x9E3779B97F4A7C15ULL) >> 56) ^ stream);
}

/* tun_app_pattern_fill writes |len| bytes of |stream| from |offset|. */
void tun_app_pattern_fill(uint8_t *out, size_t len, uint64_t offset,
                          uint8_t stream);

/* tun_app_pattern_check returns 1 if |len| bytes match |stream| from
   |offset|. */
int tun_app_pattern_check(const uint8_t *data, size_t len, uint64_t offset,
                          uint8_t stream);

/* tun_app_fnv1a updates the FNV-1a 64 hash |h| with |len| bytes. */
uint64_t tun_app_fnv1a(uint64_t h, const uint8_t *data, size_t len);

/* tun_app_parse_addr parses "a.b.c.d:port" or "[v6]:port" into |ss|.
   Returns 0 or RP_ERR_CONFIG. */
int tun_app_parse_addr(const char *text, struct sockaddr_storage *ss);

/* TUN_APP_ADDR_LEN is enough for "[v6 address]:port" with its NUL. */
#define TUN_APP_ADDR_LEN 64

/* tun_app_format_addr writes |sa| as "host:port" into |out|. */
void tun_app_format_addr(const struct sockaddr *sa, char *out, size_t cap);

/* tun_app_parse_size parses a byte count with an optional K, M or G
   suffix (powers of 1024). Returns 0 or RP_ERR_CONFIG. */
int tun_app_parse_size(const char *text, uint64_t *pv);

/* tun_app_random fills |out| with |len| random bytes (seeded once from
   /dev/urandom, then xorshift). */
void tun_app_random(uint8_t *out, size_t len);

/* tun_app_random64 returns a random 64-bit value. */
uint64_t tun_app_random64(void);

/* tun_app_kbps returns |bytes| over |seconds| in kbit/s (0 when the time
   is 0). */
double tun_app_kbps(uint64_t bytes, double seconds);

/* tun_app_xfer follows one measured transfer through a client session:
   generated upload bytes in, generated download bytes out and checked. */
typedef struct tun_app_xfer {
  /* down_target and up_target are the bytes to move (0 = none);
     down_target UINT64_MAX = until |seconds| pass. */
  uint64_t down_target;
  uint64_t up_target;
  /* seconds ends the transfer after so long when non-zero. */
  double seconds;
  /* start is when the first query went out (RP_TSTAMP_UNSET before). */
  rp_tstamp start;
  /* down_done and up_done are when each direction finished. */
  rp_tstamp down_done;
  rp_tstamp up_done;
  /* bytes_down: received in order; up_written: handed to the arq. */
  uint64_t bytes_down;
  uint64_t up_written;
  uint64_t down_fnv;
  /* down_ok is 0 once a byte differs from the pattern. */
  int down_ok;
  /* check is 1 to compare downloaded bytes with the pattern (0 when the
     server serves a file). */
  int check;
  /* in, when not NULL, is uploaded instead of the pattern (up_target
     must be its size); out, when not NULL, receives the download. */
  FILE *in;
  FILE *out;
} tun_app_xfer;

struct tun_cli;

/* tun_app_xfer_init sets targets; pattern checks on, no files. */
void tun_app_xfer_init(tun_app_xfer *x, uint64_t down, uint64_t up,
                       double seconds);

/* tun_app_xfer_pump moves bytes between |cli| and the pattern (or the
   files) at |now| and returns 1 once the transfer is finished. */
int tun_app_xfer_pump(tun_app_xfer *x, struct tun_cli *cli, rp_tstamp now);

/* tun_app_xfer_open_files opens |in_path| (upload, sets up_target to its
   size) and |out_path| (download) when not NULL; with |out_path| the
   pattern check is off. Returns 0 or RP_ERR_IO. */
int tun_app_xfer_open_files(tun_app_xfer *x, const char *in_path,
                            const char *out_path);

/* tun_app_xfer_close_files closes the files. */
void tun_app_xfer_close_files(tun_app_xfer *x);

/* tun_app_xfer_print writes the measurement JSON line: |kind| and
   |mode| name the tunnel, |queries|, |answers|, |timeouts| and
   |rejected| are the driver's counters; |extra| (may be NULL) is
   appended verbatim inside the object (",\"key\":value..."). */
void tun_app_xfer_print(const tun_app_xfer *x, struct tun_cli *cli,
                        const char *kind, const char *mode, uint64_t queries,
                        uint64_t answers, uint64_t timeouts, uint64_t rejected,
                        rp_tstamp now, const char *extra);

#endif /* TUN_APP_H */
