/*
 * tunapp.h: helpers of the tunnel programs (prefix tun_app_): address
 * and size parsing, randomness, the files of a transfer (the transfer
 * itself and the test patterns are tunxfer.h) and the measurement JSON. Not part of the sans-I/O core: this module may
 * read clocks and files.
 */
#ifndef TUN_APP_H
#define TUN_APP_H

#include "respool.h"
#include "tunxfer.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

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

/* tun_app_files holds the files of a transfer that moves --in and
   --out instead of the patterns. */
typedef struct tun_app_files {
  FILE *in;
  FILE *out;
} tun_app_files;

/* tun_app_xfer_open_files opens |in_path| (upload: sets |x|'s up_target
   to its size) and |out_path| (download: the pattern check is off) into
   |f| when not NULL, and hooks them to |x|. Returns 0 or RP_ERR_IO. */
int tun_app_xfer_open_files(tun_xfer *x, tun_app_files *f, const char *in_path,
                            const char *out_path);

/* tun_app_xfer_close_files closes the files of |f|. */
void tun_app_xfer_close_files(tun_app_files *f);

struct tun_cli;

/* tun_app_xfer_print writes the measurement JSON line: |kind| and
   |mode| name the tunnel, |queries|, |answers|, |timeouts| and
   |rejected| are the driver's counters; |extra| (may be NULL) is
   appended verbatim inside the object (",\"key\":value..."). */
void tun_app_xfer_print(const tun_xfer *x, struct tun_cli *cli,
                        const char *kind, const char *mode, uint64_t queries,
                        uint64_t answers, uint64_t timeouts, uint64_t rejected,
                        rp_tstamp now, const char *extra);

#endif /* TUN_APP_H */
