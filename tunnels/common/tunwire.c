/*
 * tunwire.c: base32 names and TXT answers for the minimal tunnels.
 */
#include "tunwire.h"

#include <string.h>

/* WIRE_B32_BITS is the number of bits one base32 character carries. */
#define WIRE_B32_BITS 5
/* WIRE_PROBE_MUL spreads the probe pattern (a Knuth multiplicative hash
   constant), so a shifted or cut answer does not match. */
#define WIRE_PROBE_MUL 2654435761u

static const char wire_b32_alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";

rp_ssize tun_base32_encode(char *out, size_t cap, const uint8_t *in,
                           size_t len) {
  size_t need = (len * 8 + WIRE_B32_BITS - 1) / WIRE_B32_BITS, n = 0, i;
  uint32_t acc = 0;
  unsigned bits = 0;

  if (need > cap) {
    return RP_ERR_NOBUF;
  }
  for (i = 0; i < len; ++i) {
    acc = (acc << 8) | in[i];
    bits += 8;
    while (bits >= WIRE_B32_BITS) {
      bits -= WIRE_B32_BITS;
      out[n++] = wire_b32_alphabet[(acc >> bits) & 0x1fu];
    }
  }
  if (bits > 0) {
    out[n++] = wire_b32_alphabet[(acc << (WIRE_B32_BITS - bits)) & 0x1fu];
  }
  return (rp_ssize)n;
}

static int wire_b32_value(char c) {
  if (c >= 'a' && c <= 'z') {
    return c - 'a';
  }
  if (c >= 'A' && c <= 'Z') {
    return c - 'A';
  }
  if (c >= '2' && c <= '7') {
    return c - '2' + 26;
  }
  return -1;
}

rp_ssize tun_base32_decode(uint8_t *out, size_t cap, const char *in,
                           size_t len) {
  size_t n = 0, i, rem = len % 8;
  uint32_t acc = 0;
  unsigned bits = 0;

  /* 1, 3 and 6 trailing characters cannot come from whole bytes. */
  if (rem == 1 || rem == 3 || rem == 6) {
    return RP_ERR_MALFORMED;
  }
  if (len * WIRE_B32_BITS / 8 > cap) {
    return RP_ERR_NOBUF;
  }
  for (i = 0; i < len; ++i) {
    int v = wire_b32_value(in[i]);

    if (v < 0) {
      return RP_ERR_MALFORMED;
    }
    acc = ((acc << WIRE_B32_BITS) | (uint32_t)v) & 0xffffu;
    bits += WIRE_B32_BITS;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (uint8_t)(acc >> bits);
    }
  }
  return (rp_ssize)n;
}

size_t tun_wire_up_capacity(const rp_dns_name *domain) {
  size_t avail, chars;

  if (domain->len >= RP_DNS_MAX_NAME_LEN) {
    return 0;
  }
  avail = RP_DNS_MAX_NAME_LEN - domain->len;
  /* The most characters c with c + ceil(c / 63) <= avail: a full label
     takes 64 bytes for 63 characters, and a rest of r >= 2 bytes holds
     one more label of r - 1 characters. */
  chars = avail / (RP_DNS_MAX_LABEL_LEN + 1) * RP_DNS_MAX_LABEL_LEN;
  if (avail % (RP_DNS_MAX_LABEL_LEN + 1) >= 2) {
    chars += avail % (RP_DNS_MAX_LABEL_LEN + 1) - 1;
  }
  return chars * WIRE_B32_BITS / 8;
}

void tun_wire_hdr_write(uint8_t *out, const tun_wire_hdr *hdr) {
  int i;

  for (i = 0; i < 8; ++i) {
    out[i] = (uint8_t)(hdr->sid >> (56 - 8 * i));
  }
  out[8] = hdr->kind;
  out[9] = (uint8_t)(hdr->nonce >> 8);
  out[10] = (uint8_t)hdr->nonce;
  out[11] = (uint8_t)(hdr->down_limit >> 8);
  out[12] = (uint8_t)hdr->down_limit;
}

int tun_wire_hdr_read(tun_wire_hdr *hdr, const uint8_t *in, size_t len) {
  uint64_t sid = 0;
  int i;

  if (len < TUN_WIRE_HDR_LEN ||
      (in[8] != TUN_WIRE_DATA && in[8] != TUN_WIRE_PROBE)) {
    return RP_ERR_MALFORMED;
  }
  for (i = 0; i < 8; ++i) {
    sid = (sid << 8) | in[i];
  }
  *hdr = (tun_wire_hdr){
      .sid = sid,
      .kind = in[8],
      .nonce = (uint16_t)((unsigned)in[9] << 8 | in[10]),
      .down_limit = (uint16_t)((unsigned)in[11] << 8 | in[12]),
  };
  return 0;
}

rp_ssize tun_wire_build_query(uint8_t *out, size_t cap, uint16_t id,
                              const rp_dns_name *domain, const uint8_t *msg,
                              size_t len, uint16_t edns_size) {
  char text[RP_DNS_MAX_NAME_LEN];
  rp_dns_name name;
  rp_ssize nchars;
  size_t pos = 0, off = 0;

  if (len > tun_wire_up_capacity(domain)) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  nchars = tun_base32_encode(text, sizeof(text), msg, len);
  if (nchars < 0) {
    return nchars;
  }
  while (off < (size_t)nchars) {
    size_t n = (size_t)nchars - off;

    if (n > RP_DNS_MAX_LABEL_LEN) {
      n = RP_DNS_MAX_LABEL_LEN;
    }
    name.wire[pos++] = (uint8_t)n;
    memcpy(name.wire + pos, text + off, n);
    pos += n;
    off += n;
  }
  if (pos + domain->len > RP_DNS_MAX_NAME_LEN) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  memcpy(name.wire + pos, domain->wire, domain->len);
  name.len = (uint8_t)(pos + domain->len);
  return rp_dns_build_query(out, cap, id, &name, RP_DNS_TYPE_TXT, edns_size);
}

rp_ssize tun_wire_query_message(const rp_dns_msg *q, const rp_dns_name *domain,
                                uint8_t *out, size_t cap) {
  char text[RP_DNS_MAX_NAME_LEN];
  const rp_dns_name *name = &q->question.name;
  size_t pos = 0, n = 0, prefix;

  if (!q->has_question || q->question.qtype != RP_DNS_TYPE_TXT ||
      !rp_dns_name_is_subdomain(name, domain)) {
    return RP_ERR_NOT_FOUND;
  }
  prefix = (size_t)name->len - domain->len;
  while (pos < prefix) {
    size_t l = name->wire[pos];

    if (l == 0 || pos + 1 + l > prefix) {
      return RP_ERR_MALFORMED;
    }
    memcpy(text + n, name->wire + pos + 1, l);
    n += l;
    pos += 1 + l;
  }
  return tun_base32_decode(out, cap, text, n);
}

size_t tun_wire_answer_room(const rp_dns_msg *q, size_t max_answer) {
  size_t limit = RP_DNS_MAX_UDP_DEFAULT;

  if (q->has_edns && q->edns_udp_size > limit) {
    limit = q->edns_udp_size;
  }
  if (limit > max_answer) {
    limit = max_answer;
  }
  return rp_dns_txt_room(&q->question.name, limit, q->has_edns);
}

rp_ssize tun_wire_answer_payload(const rp_dns_msg *a, uint8_t *out,
                                 size_t cap) {
  size_t i;

  if ((a->hdr.flags & RP_DNS_RCODE_MASK) != RP_DNS_RCODE_NOERROR) {
    return RP_ERR_PROTO;
  }
  for (i = 0; i < a->nanswers; ++i) {
    if (a->answers[i].type == RP_DNS_TYPE_TXT) {
      return rp_dns_txt_read(a, &a->answers[i], out, cap);
    }
  }
  return RP_ERR_NOT_FOUND;
}

uint8_t tun_wire_probe_byte(uint16_t nonce, size_t i) {
  uint32_t x = ((uint32_t)i + ((uint32_t)nonce << 16)) * WIRE_PROBE_MUL;

  return (uint8_t)(x >> 24);
}
