/*
 * fr_answer.c: answer-mode replies of the fake resolvers (see fr_answer.h).
 *
 * IMPLEMENTATION NOTES
 *
 * The TXT payload is a fixed pattern (FR_TXT_PATTERN repeated): the pool
 * never looks inside, and a fixed pattern keeps replies reproducible.
 * The room comes from rp_dns_txt_room, which mirrors the layout of
 * rp_dns_build_txt_answer byte for byte, so a filled answer is exactly
 * the client's limit, never over it.
 */
#include "fr_answer.h"

#include <string.h>

/* FR_TXT_PATTERN is the payload, repeated to the size asked for. */
static const char fr_txt_pattern[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/";

/* FR_TXT_PATTERN_LEN is its length without the NUL. */
#define FR_TXT_PATTERN_LEN (sizeof(fr_txt_pattern) - 1)

/* The answer of an A query, and of an AAAA query. */
static const uint8_t fr_answer_a[4] = {127, 0, 0, 1};
static const uint8_t fr_answer_aaaa[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                           0, 0, 0, 0, 0, 0, 0, 1};

/* The two spellings of the size label. */
#define FR_SIZE_PREFIX_SHORT "s"
#define FR_SIZE_PREFIX_LONG "size-"

/* Opcode QUERY, the only one answered. */
#define FR_OPCODE_QUERY 0u

/* FR_TXT_SCRATCH is the payload buffer: the largest TXT room of one
   message. */
#define FR_TXT_SCRATCH RP_DNS_MAX_MSG_LEN

/* lower returns |c| in ASCII lower case. */
static uint8_t lower(uint8_t c) {
  if (c >= 'A' && c <= 'Z') {
    return (uint8_t)(c - 'A' + 'a');
  }
  return c;
}

/* match_prefix returns the length of |prefix| if label |p| (|n| bytes)
   starts with it, ignoring case, else 0. */
static size_t match_prefix(const uint8_t *p, size_t n, const char *prefix) {
  size_t k = strlen(prefix);
  size_t i;

  if (n <= k) {
    return 0;
  }
  for (i = 0; i < k; ++i) {
    if (lower(p[i]) != (uint8_t)prefix[i]) {
      return 0;
    }
  }
  return k;
}

size_t fr_answer_txt_size(const rp_dns_name *qname) {
  const uint8_t *label;
  size_t n;
  size_t skip;
  size_t i;
  size_t v = 0;

  if (qname->len < 2 || qname->wire[0] == 0) {
    return FR_TXT_SIZE_NONE;
  }
  n = qname->wire[0];
  if ((size_t)qname->len < n + 1) {
    return FR_TXT_SIZE_NONE;
  }
  label = &qname->wire[1];
  skip = match_prefix(label, n, FR_SIZE_PREFIX_LONG);
  if (skip == 0) {
    skip = match_prefix(label, n, FR_SIZE_PREFIX_SHORT);
  }
  if (skip == 0) {
    return FR_TXT_SIZE_NONE;
  }
  for (i = skip; i < n; ++i) {
    if (label[i] < '0' || label[i] > '9') {
      return FR_TXT_SIZE_NONE;
    }
    if (v < RP_DNS_MAX_MSG_LEN) {
      v = v * 10 + (size_t)(label[i] - '0');
    }
  }
  return v > RP_DNS_MAX_MSG_LEN ? RP_DNS_MAX_MSG_LEN : v;
}

size_t fr_answer_udp_limit(const rp_dns_msg *query) {
  if (query->has_edns && query->edns_udp_size > RP_DNS_MAX_UDP_DEFAULT) {
    return query->edns_udp_size;
  }
  return RP_DNS_MAX_UDP_DEFAULT;
}

/* build_txt writes the TXT answer. */
static rp_ssize build_txt(uint8_t *out, size_t cap, const rp_dns_msg *query,
                          int stream) {
  static uint8_t payload[FR_TXT_SCRATCH];
  static int payload_ready = 0;
  size_t want = fr_answer_txt_size(&query->question.name);
  size_t limit = fr_answer_udp_limit(query);
  size_t room;

  if (!payload_ready) {
    size_t i;
    for (i = 0; i < sizeof(payload); ++i) {
      payload[i] = (uint8_t)fr_txt_pattern[i % FR_TXT_PATTERN_LEN];
    }
    payload_ready = 1;
  }
  if (stream && want != FR_TXT_SIZE_NONE) {
    limit = RP_DNS_MAX_MSG_LEN;
  }
  room = rp_dns_txt_room(&query->question.name, limit, query->has_edns);
  if (want == FR_TXT_SIZE_NONE || want > room) {
    want = room;
  }
  return rp_dns_build_txt_answer(out, cap, query, FR_ANSWER_TTL, payload, want);
}

rp_ssize fr_answer_build(uint8_t *out, size_t cap, const rp_dns_msg *query,
                         int stream) {
  rp_dns_builder b;
  uint16_t opcode_bits = query->hdr.flags & RP_DNS_OPCODE_MASK;
  uint16_t flags;
  const rp_dns_question *q = &query->question;

  if (!query->has_question) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  if (opcode_bits != FR_OPCODE_QUERY) {
    return rp_dns_build_error(out, cap, query->buf, query->len,
                              RP_DNS_RCODE_NOTIMP);
  }
  if (q->qtype == RP_DNS_TYPE_TXT) {
    return build_txt(out, cap, query, stream);
  }
  flags = (uint16_t)(RP_DNS_FLAG_QR | RP_DNS_FLAG_AA | RP_DNS_FLAG_RA |
                     (query->hdr.flags & RP_DNS_FLAG_RD));
  rp_dns_builder_init(&b, out, cap, query->hdr.id, flags);
  rp_dns_builder_question(&b, &q->name, q->qtype, q->qclass);
  if (q->qtype == RP_DNS_TYPE_A) {
    rp_dns_builder_rr_a(&b, &q->name, FR_ANSWER_TTL, fr_answer_a);
  } else if (q->qtype == RP_DNS_TYPE_AAAA) {
    rp_dns_builder_rr_aaaa(&b, &q->name, FR_ANSWER_TTL, fr_answer_aaaa);
  }
  if (query->has_edns) {
    rp_dns_builder_opt(&b, FR_ANSWER_EDNS_SIZE, query->edns_do);
  }
  return rp_dns_builder_finish(&b);
}
