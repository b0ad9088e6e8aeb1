/*
 * tunwire.h: the DNS framing shared by the minimal tunnels (prefix
 * tun_wire_, tun_base32_).
 *
 * Upstream, a tunnel message rides in the query name: its bytes are
 * base32 encoded (RFC 4648 alphabet, lower case, no padding; decoding
 * ignores case so 0x20 randomisation survives), cut into labels of up to
 * 63 characters and put under the tunnel domain; the query is type TXT
 * with an EDNS0 OPT record of 1232 bytes. The message starts with a
 * header:
 *
 *   u64 sid          client session id (random)
 *   u8  kind         TUN_WIRE_DATA or TUN_WIRE_PROBE
 *   u16 nonce        random: two polls with equal state differ (caches)
 *   u16 down_limit   DATA: largest downstream frame wanted, 0 = as much
 *                    as fits; PROBE: exact size of the test answer
 *
 * followed, for DATA, by one arq frame (arq.h). Downstream, the answer's
 * first TXT record holds one arq frame (DATA) or down_limit test bytes
 * (PROBE). All integers are big-endian.
 */
#ifndef TUN_WIRE_H
#define TUN_WIRE_H

#include "respool.h"
#include "dns.h"

#include <stddef.h>
#include <stdint.h>

/* TUN_WIRE_HDR_LEN is the upstream header, bytes. */
#define TUN_WIRE_HDR_LEN 13
/* TUN_WIRE_MAX_UP is more than any upstream message can hold, bytes. */
#define TUN_WIRE_MAX_UP 160
/* TUN_WIRE_MAX_MSG bounds every DNS message the tunnels build, bytes. */
#define TUN_WIRE_MAX_MSG 4096

typedef enum tun_wire_kind {
  TUN_WIRE_DATA = 0,
  TUN_WIRE_PROBE = 1
} tun_wire_kind;

/* tun_wire_hdr is the upstream header. */
typedef struct tun_wire_hdr {
  uint64_t sid;
  /* kind is a tun_wire_kind. */
  uint8_t kind;
  uint16_t nonce;
  /* down_limit is in bytes; see above. */
  uint16_t down_limit;
} tun_wire_hdr;

/* tun_base32_encode writes the base32 text of |len| bytes of |in| into
   |out| (no NUL). Returns the number of characters, or RP_ERR_NOBUF. */
rp_ssize tun_base32_encode(char *out, size_t cap, const uint8_t *in,
                           size_t len);

/* tun_base32_decode decodes |len| characters of |in| (either case) into
   |out|. Returns the number of bytes, RP_ERR_MALFORMED for a character
   outside the alphabet or an impossible length, RP_ERR_NOBUF. */
rp_ssize tun_base32_decode(uint8_t *out, size_t cap, const char *in,
                           size_t len);

/* tun_wire_up_capacity returns how many message bytes (header included)
   fit in one query name under |domain|. */
size_t tun_wire_up_capacity(const rp_dns_name *domain);

/* tun_wire_hdr_write writes |hdr| into the first TUN_WIRE_HDR_LEN bytes
   of |out|. */
void tun_wire_hdr_write(uint8_t *out, const tun_wire_hdr *hdr);

/* tun_wire_hdr_read reads a header from |len| bytes of |in|. Returns 0
   or RP_ERR_MALFORMED (too short or an unknown kind). */
int tun_wire_hdr_read(tun_wire_hdr *hdr, const uint8_t *in, size_t len);

/* tun_wire_build_query builds a TXT query with |id| whose name carries
   |len| bytes of |msg| under |domain|, with EDNS0 |edns_size| (0 = no
   OPT). Returns its length, RP_ERR_NOBUF if |cap| is short, or
   RP_ERR_INVALID_ARGUMENT if |len| is over tun_wire_up_capacity. */
rp_ssize tun_wire_build_query(uint8_t *out, size_t cap, uint16_t id,
                              const rp_dns_name *domain, const uint8_t *msg,
                              size_t len, uint16_t edns_size);

/* tun_wire_query_message extracts the message bytes from the parsed
   query |q| into |out|. Returns their number, RP_ERR_NOT_FOUND when the
   name is not under |domain| or the type is not TXT, RP_ERR_MALFORMED
   for bad base32, RP_ERR_NOBUF. */
rp_ssize tun_wire_query_message(const rp_dns_msg *q, const rp_dns_name *domain,
                                uint8_t *out, size_t cap);

/* tun_wire_answer_room returns how many TXT payload bytes an answer to
   the parsed query |q| may carry when answers are limited to
   |max_answer| bytes: the query's EDNS size (512 without EDNS), capped
   at |max_answer|. */
size_t tun_wire_answer_room(const rp_dns_msg *q, size_t max_answer);

/* tun_wire_answer_payload copies the first TXT record of the parsed
   answer |a| into |out|. Returns its length, RP_ERR_NOT_FOUND when the
   answer has no TXT record, RP_ERR_PROTO when its rcode is not NOERROR,
   RP_ERR_MALFORMED, RP_ERR_NOBUF. */
rp_ssize tun_wire_answer_payload(const rp_dns_msg *a, uint8_t *out, size_t cap);

/* tun_wire_probe_byte returns byte |i| of the test answer for |nonce|. */
uint8_t tun_wire_probe_byte(uint16_t nonce, size_t i);

#endif /* TUN_WIRE_H */
