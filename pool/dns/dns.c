/*
 * dns.c: the DNS wire codec (see dns.h).
 *
 * IMPLEMENTATION NOTES
 *
 * Reading. Every byte of a message is read through rp_dns_cursor, whose
 * reads check the remaining length first and leave the cursor unchanged
 * on failure. Names are decompressed into rp_dns_name (RFC 1035 4.1.4).
 * A compression pointer must point strictly before the start of the run
 * of labels it ends (the name's first byte, or the previous pointer's
 * target), so the starts of the runs strictly decrease and every chain
 * ends; DNS_MAX_POINTER_HOPS is a second, independent bound. Pointers
 * into the header (no name starts there; what one names there would
 * change with the ID the pool writes into a query it forwards: a query
 * that parsed when it came in was sent as bytes that no longer did) or
 * outside the message, labels over 63 bytes (RFC 1035 2.3.4), names over
 * 255 bytes and the reserved label types 0x40 and 0x80 (RFC 6891 5,
 * RFC 2673 is historic) are refused.
 *
 * rp_dns_parse keeps the first RP_DNS_MAX_RRS answer records and checks
 * the rdata of every answer record whatever the count: A is 4 bytes,
 * AAAA 16, TXT a sequence of character-strings that ends exactly at the
 * end of the rdata, CNAME one name that ends exactly there. Other types
 * are opaque. Authority records are only bounds-checked. In the
 * additional section one OPT record (RFC 6891 6.1) is understood: its
 * owner must be the root, there may be only one, and its options must
 * tile its rdata. Bytes after the last record are ignored, as most
 * resolvers do.
 *
 * Writing. The builder writes names uncompressed, except that
 * rp_dns_build_txt_answer writes its one TXT owner as a pointer to the
 * question at offset 12 (0xC00C). rp_dns_txt_room mirrors that layout
 * byte for byte; the tests check it is exact.
 */
#include "dns.h"

#include <string.h>

/* DNS_PTR_MASK marks a compression pointer in a label length octet. */
#define DNS_PTR_MASK 0xC0u
/* DNS_PTR_OFFSET_MASK is the 14-bit offset part of a pointer. */
#define DNS_PTR_OFFSET_MASK 0x3FFFu
/* DNS_PTR_LEN is the wire size of a compression pointer. */
#define DNS_PTR_LEN 2
/* DNS_QUESTION_PTR is the pointer to the question name at offset 12. */
#define DNS_QUESTION_PTR (0xC000u | RP_DNS_HEADER_LEN)
/* DNS_MAX_POINTER_HOPS bounds the pointers followed in one name. A name
   of at most 255 bytes has at most 127 labels, so 128 hops is generous;
   the strictly-backward rule already ends every chain. */
#define DNS_MAX_POINTER_HOPS 128
/* DNS_QFIXED_LEN is the type and class after a question name. */
#define DNS_QFIXED_LEN 4
/* DNS_RRFIXED_LEN is type, class, TTL and rdlength after an owner. */
#define DNS_RRFIXED_LEN 10
/* DNS_OPT_LEN is an OPT record with no options: root owner + fixed. */
#define DNS_OPT_LEN (1 + DNS_RRFIXED_LEN)
/* DNS_OPT_OPTION_HDR_LEN is an EDNS option's code and length. */
#define DNS_OPT_OPTION_HDR_LEN 4
/* The OPT TTL holds the extended rcode (top 8 bits), the version (next
   8) and the flags, DO first (low 16); RFC 6891 6.1.3. */
#define DNS_EDNS_EXT_RCODE_SHIFT 24
#define DNS_EDNS_VERSION_SHIFT 16
#define DNS_EDNS_BYTE_MASK 0xFFu
#define DNS_EDNS_DO 0x8000u
/* DNS_A_LEN and DNS_AAAA_LEN are the address rdata sizes. */
#define DNS_A_LEN 4
#define DNS_AAAA_LEN 16
/* DNS_RCODE_BITS is the width of the header rcode field. */
#define DNS_RCODE_BITS 4
/* DNS_MAX_COUNT is the largest section count. */
#define DNS_MAX_COUNT UINT16_MAX
/* DNS_MAX_RDATA is the largest rdata length. */
#define DNS_MAX_RDATA UINT16_MAX
/* DNS_TXT_CHUNK is one full character-string: length octet + bytes. */
#define DNS_TXT_CHUNK (1 + RP_DNS_MAX_TXT_STRING)
/* DNS_DDD_LEN is the size of a \DDD escape in presentation form. */
#define DNS_DDD_LEN 4
/* Header field offsets. */
#define DNS_OFF_FLAGS 2
#define DNS_OFF_QDCOUNT 4
#define DNS_OFF_ANCOUNT 6
#define DNS_OFF_NSCOUNT 8
#define DNS_OFF_ARCOUNT 10
/* Printable ASCII range for rp_dns_name_to_text. */
#define DNS_PRINT_MIN 0x21
#define DNS_PRINT_MAX 0x7E

/* ---------------------------------------------------------------- */
/* Small helpers                                                      */
/* ---------------------------------------------------------------- */

static uint16_t dns_load16(const uint8_t *p) {
  return (uint16_t)((unsigned)p[0] << 8 | (unsigned)p[1]);
}

static void dns_store16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)(v & 0xFFu);
}

static void dns_store32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)((v >> 16) & 0xFFu);
  p[2] = (uint8_t)((v >> 8) & 0xFFu);
  p[3] = (uint8_t)(v & 0xFFu);
}

static uint8_t dns_lower(uint8_t c) {
  if (c >= 'A' && c <= 'Z') {
    return (uint8_t)(c - 'A' + 'a');
  }
  return c;
}

/* dns_name_valid returns 1 if |name| is a well-formed uncompressed name
   whose labels end exactly at |name->len| with the root label. */
static int dns_name_valid(const rp_dns_name *name) {
  size_t pos = 0;
  if (name->len < 1) {
    return 0;
  }
  for (;;) {
    size_t lab;
    if (pos >= name->len) {
      return 0;
    }
    lab = name->wire[pos];
    if (lab == 0) {
      return pos + 1 == name->len;
    }
    if (lab > RP_DNS_MAX_LABEL_LEN) {
      return 0;
    }
    pos += 1 + lab;
  }
}

/* dns_name_labels returns the number of non-root labels of a valid
   |name|. */
static size_t dns_name_labels(const rp_dns_name *name) {
  size_t pos = 0;
  size_t n = 0;
  while (pos < name->len && name->wire[pos] != 0) {
    pos += 1 + (size_t)name->wire[pos];
    n++;
  }
  return n;
}

/* ---------------------------------------------------------------- */
/* Cursor                                                             */
/* ---------------------------------------------------------------- */

void rp_dns_cursor_init(rp_dns_cursor *cur, const uint8_t *buf, size_t len) {
  *cur = (rp_dns_cursor){.base = buf, .len = len, .pos = 0};
}

static size_t cursor_left(const rp_dns_cursor *cur) {
  return cur->pos <= cur->len ? cur->len - cur->pos : 0;
}

int rp_dns_cursor_u8(rp_dns_cursor *cur, uint8_t *pv) {
  if (cursor_left(cur) < 1) {
    return RP_ERR_MALFORMED;
  }
  *pv = cur->base[cur->pos];
  cur->pos++;
  return 0;
}

int rp_dns_cursor_u16(rp_dns_cursor *cur, uint16_t *pv) {
  if (cursor_left(cur) < 2) {
    return RP_ERR_MALFORMED;
  }
  *pv = dns_load16(cur->base + cur->pos);
  cur->pos += 2;
  return 0;
}

int rp_dns_cursor_u32(rp_dns_cursor *cur, uint32_t *pv) {
  const uint8_t *p;
  if (cursor_left(cur) < 4) {
    return RP_ERR_MALFORMED;
  }
  p = cur->base + cur->pos;
  *pv = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
        (uint32_t)p[3];
  cur->pos += 4;
  return 0;
}

int rp_dns_cursor_skip(rp_dns_cursor *cur, size_t n) {
  if (cursor_left(cur) < n) {
    return RP_ERR_MALFORMED;
  }
  cur->pos += n;
  return 0;
}

int rp_dns_cursor_name(rp_dns_cursor *cur, rp_dns_name *name) {
  /* pos walks the labels; run_start is where the current run of labels
     began; end is where the cursor resumes (set at the first pointer). */
  size_t pos = cur->pos;
  size_t run_start = cur->pos;
  size_t end = 0;
  int jumped = 0;
  int hops = 0;
  size_t out = 0;

  for (;;) {
    uint8_t lab;
    if (pos >= cur->len) {
      return RP_ERR_MALFORMED;
    }
    lab = cur->base[pos];
    if ((lab & DNS_PTR_MASK) == DNS_PTR_MASK) {
      size_t target;
      if (pos + DNS_PTR_LEN > cur->len) {
        return RP_ERR_MALFORMED;
      }
      target = dns_load16(cur->base + pos) & DNS_PTR_OFFSET_MASK;
      /* Strictly before the current run: chains always end. Every
         cursor that reads names starts at the message's first byte. */
      if (target < RP_DNS_HEADER_LEN || target >= run_start ||
          target >= cur->len ||
          ++hops > DNS_MAX_POINTER_HOPS) {
        return RP_ERR_MALFORMED;
      }
      if (!jumped) {
        end = pos + DNS_PTR_LEN;
        jumped = 1;
      }
      pos = target;
      run_start = target;
      continue;
    }
    if ((lab & DNS_PTR_MASK) != 0) {
      /* 0x40 (extended label types) and 0x80 are reserved. */
      return RP_ERR_MALFORMED;
    }
    if (out + 1 + (size_t)lab > RP_DNS_MAX_NAME_LEN) {
      return RP_ERR_MALFORMED;
    }
    if (lab == 0) {
      name->wire[out++] = 0;
      pos++;
      break;
    }
    if (pos + 1 + (size_t)lab > cur->len) {
      return RP_ERR_MALFORMED;
    }
    memcpy(name->wire + out, cur->base + pos, 1 + (size_t)lab);
    out += 1 + (size_t)lab;
    pos += 1 + (size_t)lab;
  }
  name->len = (uint8_t)out;
  cur->pos = jumped ? end : pos;
  return 0;
}

/* ---------------------------------------------------------------- */
/* Reading                                                            */
/* ---------------------------------------------------------------- */

int rp_dns_parse_header(rp_dns_header *hdr, const uint8_t *buf, size_t len) {
  if (len < RP_DNS_HEADER_LEN) {
    return RP_ERR_MALFORMED;
  }
  *hdr = (rp_dns_header){
      .id = dns_load16(buf),
      .flags = dns_load16(buf + DNS_OFF_FLAGS),
      .qdcount = dns_load16(buf + DNS_OFF_QDCOUNT),
      .ancount = dns_load16(buf + DNS_OFF_ANCOUNT),
      .nscount = dns_load16(buf + DNS_OFF_NSCOUNT),
      .arcount = dns_load16(buf + DNS_OFF_ARCOUNT),
  };
  return 0;
}

/* dns_read_question reads a question at |cur|. */
static int dns_read_question(rp_dns_cursor *cur, rp_dns_question *q) {
  int rv = rp_dns_cursor_name(cur, &q->name);
  if (rv != 0) {
    return rv;
  }
  rv = rp_dns_cursor_u16(cur, &q->qtype);
  if (rv != 0) {
    return rv;
  }
  return rp_dns_cursor_u16(cur, &q->qclass);
}

/* dns_read_rr reads one record and checks its rdata lies inside the
   message; the cursor ends after the rdata. */
static int dns_read_rr(rp_dns_cursor *cur, rp_dns_rr *rr) {
  int rv = rp_dns_cursor_name(cur, &rr->name);
  if (rv == 0) {
    rv = rp_dns_cursor_u16(cur, &rr->type);
  }
  if (rv == 0) {
    rv = rp_dns_cursor_u16(cur, &rr->rclass);
  }
  if (rv == 0) {
    rv = rp_dns_cursor_u32(cur, &rr->ttl);
  }
  if (rv == 0) {
    rv = rp_dns_cursor_u16(cur, &rr->rdata_len);
  }
  if (rv == 0) {
    rr->rdata_off = cur->pos;
    rv = rp_dns_cursor_skip(cur, rr->rdata_len);
  }
  return rv;
}

/* dns_txt_walk checks that |len| bytes at |off| of |buf| are a sequence
   of character-strings and returns the sum of their lengths, or
   RP_ERR_MALFORMED. */
static rp_ssize dns_txt_walk(const uint8_t *buf, size_t buflen, size_t off,
                             size_t len) {
  rp_dns_cursor cur;
  size_t total = 0;
  if (off > buflen || len > buflen - off) {
    return RP_ERR_MALFORMED;
  }
  rp_dns_cursor_init(&cur, buf + off, len);
  while (cursor_left(&cur) > 0) {
    uint8_t slen;
    if (rp_dns_cursor_u8(&cur, &slen) != 0 ||
        rp_dns_cursor_skip(&cur, slen) != 0) {
      return RP_ERR_MALFORMED;
    }
    total += slen;
  }
  return (rp_ssize)total;
}

/* dns_check_rdata checks the rdata of an answer record of a known
   type. */
static int dns_check_rdata(const rp_dns_cursor *msg, const rp_dns_rr *rr) {
  switch (rr->type) {
  case RP_DNS_TYPE_A:
    return rr->rdata_len == DNS_A_LEN ? 0 : RP_ERR_MALFORMED;
  case RP_DNS_TYPE_AAAA:
    return rr->rdata_len == DNS_AAAA_LEN ? 0 : RP_ERR_MALFORMED;
  case RP_DNS_TYPE_TXT:
    return dns_txt_walk(msg->base, msg->len, rr->rdata_off, rr->rdata_len) < 0
               ? RP_ERR_MALFORMED
               : 0;
  case RP_DNS_TYPE_CNAME: {
    rp_dns_cursor c = {.base = msg->base, .len = msg->len,
                       .pos = rr->rdata_off};
    rp_dns_name target;
    if (rp_dns_cursor_name(&c, &target) != 0 ||
        c.pos != rr->rdata_off + rr->rdata_len) {
      return RP_ERR_MALFORMED;
    }
    return 0;
  }
  default:
    return 0;
  }
}

/* dns_check_opt checks an OPT record |rr| of |buf|: the root as owner,
   the first OPT of the message (|*phas_edns| is 0), options that fill its
   rdata exactly. On success it sets |*phas_edns| and folds the extended
   rcode bits into |*prcode|. */
static int dns_check_opt(const uint8_t *buf, const rp_dns_rr *rr,
                         int *phas_edns, uint16_t *prcode) {
  rp_dns_cursor c;
  if (*phas_edns || rr->name.len != 1) {
    return RP_ERR_MALFORMED;
  }
  rp_dns_cursor_init(&c, buf + rr->rdata_off, rr->rdata_len);
  while (cursor_left(&c) > 0) {
    uint16_t code;
    uint16_t olen;
    if (rp_dns_cursor_u16(&c, &code) != 0 ||
        rp_dns_cursor_u16(&c, &olen) != 0 ||
        rp_dns_cursor_skip(&c, olen) != 0) {
      return RP_ERR_MALFORMED;
    }
  }
  *phas_edns = 1;
  *prcode = (uint16_t)((*prcode & RP_DNS_RCODE_MASK) |
                       ((rr->ttl >> DNS_EDNS_EXT_RCODE_SHIFT)
                        << DNS_RCODE_BITS));
  return 0;
}

/* dns_walk checks every section of the |len| bytes of |buf| and fills
   |brief|. When |msg| is not NULL it also keeps the answer records and
   the OPT record's fields in it (the caller zeroed it). rp_dns_parse and
   rp_dns_parse_brief share it, so both accept exactly the same inputs. */
static int dns_walk(rp_dns_brief *brief, rp_dns_msg *msg, const uint8_t *buf,
                    size_t len) {
  rp_dns_cursor cur;
  rp_dns_rr rr;
  size_t i;
  int rv, has_edns = 0;

  brief->has_question = 0;
  brief->edns_udp_size = 0;
  rv = rp_dns_parse_header(&brief->hdr, buf, len);
  if (rv != 0) {
    return rv;
  }
  brief->rcode = (uint16_t)(brief->hdr.flags & RP_DNS_RCODE_MASK);
  if (brief->hdr.qdcount > 1) {
    return RP_ERR_MALFORMED;
  }
  rp_dns_cursor_init(&cur, buf, len);
  cur.pos = RP_DNS_HEADER_LEN;
  if (brief->hdr.qdcount == 1) {
    rv = dns_read_question(&cur, &brief->question);
    if (rv != 0) {
      return rv;
    }
    brief->has_question = 1;
  }
  for (i = 0; i < brief->hdr.ancount; i++) {
    rv = dns_read_rr(&cur, &rr);
    if (rv == 0) {
      rv = dns_check_rdata(&cur, &rr);
    }
    if (rv != 0) {
      return rv;
    }
    if (msg != NULL && msg->nanswers < RP_DNS_MAX_RRS) {
      msg->answers[msg->nanswers++] = rr;
    }
  }
  for (i = 0; i < brief->hdr.nscount; i++) {
    rv = dns_read_rr(&cur, &rr);
    if (rv != 0) {
      return rv;
    }
  }
  for (i = 0; i < brief->hdr.arcount; i++) {
    rv = dns_read_rr(&cur, &rr);
    if (rv == 0 && rr.type == RP_DNS_TYPE_OPT) {
      rv = dns_check_opt(buf, &rr, &has_edns, &brief->rcode);
      if (rv == 0) {
        brief->edns_udp_size = rr.rclass;
      }
      if (rv == 0 && msg != NULL) {
        msg->has_edns = 1;
        msg->edns_udp_size = rr.rclass;
        msg->edns_version = (uint8_t)((rr.ttl >> DNS_EDNS_VERSION_SHIFT) &
                                      DNS_EDNS_BYTE_MASK);
        msg->edns_do = (rr.ttl & DNS_EDNS_DO) != 0;
      }
    }
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

int rp_dns_parse(rp_dns_msg *msg, const uint8_t *buf, size_t len) {
  rp_dns_brief brief = {.has_question = 0};
  int rv;

  memset(msg, 0, offsetof(rp_dns_msg, answers));
  msg->buf = buf;
  msg->len = len;
  rv = dns_walk(&brief, msg, buf, len);
  msg->hdr = brief.hdr;
  msg->rcode = brief.rcode;
  if (brief.has_question) {
    msg->has_question = 1;
    msg->question = brief.question;
  }
  return rv;
}

int rp_dns_parse_brief(rp_dns_brief *brief, const uint8_t *buf, size_t len) {
  return dns_walk(brief, NULL, buf, len);
}

uint16_t rp_dns_get_id(const uint8_t *buf) { return dns_load16(buf); }

void rp_dns_set_id(uint8_t *buf, uint16_t id) { dns_store16(buf, id); }

uint8_t rp_dns_rcode(const uint8_t *buf) {
  return (uint8_t)(buf[3] & RP_DNS_RCODE_MASK);
}

int rp_dns_is_truncated(const uint8_t *buf) {
  return (dns_load16(buf + DNS_OFF_FLAGS) & RP_DNS_FLAG_TC) != 0;
}

int rp_dns_is_response(const uint8_t *buf) {
  return (dns_load16(buf + DNS_OFF_FLAGS) & RP_DNS_FLAG_QR) != 0;
}

rp_dns_reply rp_dns_check_reply(const uint8_t *buf, size_t len, uint16_t id) {
  uint8_t rcode;

  if (len < RP_DNS_HEADER_LEN || rp_dns_get_id(buf) != id ||
      !rp_dns_is_response(buf)) {
    return RP_DNS_REPLY_OTHER;
  }
  rcode = rp_dns_rcode(buf);
  if (rcode == RP_DNS_RCODE_NOERROR || rcode == RP_DNS_RCODE_NXDOMAIN) {
    return RP_DNS_REPLY_WORKS;
  }
  return rcode == RP_DNS_RCODE_REFUSED ? RP_DNS_REPLY_REFUSED
                                       : RP_DNS_REPLY_BAD_RCODE;
}

int rp_dns_name_equal(const rp_dns_name *a, const rp_dns_name *b) {
  return a->len == b->len && memcmp(a->wire, b->wire, a->len) == 0;
}

int rp_dns_name_equal_nocase(const rp_dns_name *a, const rp_dns_name *b) {
  size_t i;
  if (a->len != b->len) {
    return 0;
  }
  for (i = 0; i < a->len; i++) {
    if (dns_lower(a->wire[i]) != dns_lower(b->wire[i])) {
      return 0;
    }
  }
  return 1;
}

int rp_dns_question_equal(const rp_dns_question *a,
                          const rp_dns_question *b) {
  return a->qtype == b->qtype && a->qclass == b->qclass &&
         rp_dns_name_equal(&a->name, &b->name);
}

int rp_dns_name_is_subdomain(const rp_dns_name *name, const rp_dns_name *zone) {
  size_t nlab;
  size_t zlab;
  size_t pos = 0;
  size_t i;
  if (!dns_name_valid(name) || !dns_name_valid(zone)) {
    return 0;
  }
  nlab = dns_name_labels(name);
  zlab = dns_name_labels(zone);
  if (nlab < zlab) {
    return 0;
  }
  for (i = 0; i < nlab - zlab; i++) {
    pos += 1 + (size_t)name->wire[pos];
  }
  if ((size_t)name->len - pos != zone->len) {
    return 0;
  }
  for (i = 0; i < zone->len; i++) {
    if (dns_lower(name->wire[pos + i]) != dns_lower(zone->wire[i])) {
      return 0;
    }
  }
  return 1;
}

int rp_dns_name_from_text(rp_dns_name *name, const char *text) {
  size_t tlen = strlen(text);
  size_t out = 0;
  size_t i = 0;

  if (tlen == 0 || (tlen == 1 && text[0] == '.')) {
    name->wire[0] = 0;
    name->len = 1;
    return 0;
  }
  if (text[tlen - 1] == '.') {
    tlen--;
  }
  while (i <= tlen) {
    size_t start = i;
    size_t lab;
    while (i < tlen && text[i] != '.') {
      i++;
    }
    lab = i - start;
    if (lab == 0 || lab > RP_DNS_MAX_LABEL_LEN ||
        out + 1 + lab + 1 > RP_DNS_MAX_NAME_LEN) {
      return RP_ERR_MALFORMED;
    }
    name->wire[out] = (uint8_t)lab;
    memcpy(name->wire + out + 1, text + start, lab);
    out += 1 + lab;
    i++; /* past the dot, or past the end to stop */
  }
  name->wire[out++] = 0;
  name->len = (uint8_t)out;
  return 0;
}

rp_ssize rp_dns_name_to_text(const rp_dns_name *name, char *out, size_t cap) {
  size_t pos = 0;
  size_t w = 0;
  static const char digits[] = "0123456789";

  if (!dns_name_valid(name)) {
    return RP_ERR_MALFORMED;
  }
  if (name->len == 1) {
    if (cap < 2) {
      return RP_ERR_NOBUF;
    }
    out[0] = '.';
    out[1] = '\0';
    return 1;
  }
  while (name->wire[pos] != 0) {
    size_t lab = name->wire[pos];
    size_t j;
    for (j = 1; j <= lab; j++) {
      uint8_t c = name->wire[pos + j];
      if (c < DNS_PRINT_MIN || c > DNS_PRINT_MAX || c == '.' || c == '\\') {
        if (cap - w < DNS_DDD_LEN + 1) {
          return RP_ERR_NOBUF;
        }
        out[w++] = '\\';
        out[w++] = digits[c / 100];
        out[w++] = digits[(c / 10) % 10];
        out[w++] = digits[c % 10];
      } else {
        if (cap - w < 2) {
          return RP_ERR_NOBUF;
        }
        out[w++] = (char)c;
      }
    }
    if (cap - w < 2) {
      return RP_ERR_NOBUF;
    }
    out[w++] = '.';
    pos += 1 + lab;
  }
  out[w] = '\0';
  return (rp_ssize)w;
}

rp_ssize rp_dns_txt_payload_size(const rp_dns_msg *msg) {
  size_t i;
  size_t total = 0;
  for (i = 0; i < msg->nanswers; i++) {
    const rp_dns_rr *rr = &msg->answers[i];
    rp_ssize n;
    if (rr->type != RP_DNS_TYPE_TXT) {
      continue;
    }
    n = dns_txt_walk(msg->buf, msg->len, rr->rdata_off, rr->rdata_len);
    if (n < 0) {
      return n;
    }
    total += (size_t)n;
  }
  return (rp_ssize)total;
}

rp_ssize rp_dns_txt_read(const rp_dns_msg *msg, const rp_dns_rr *rr,
                         uint8_t *out, size_t cap) {
  rp_dns_cursor cur;
  size_t w = 0;
  if (rr->type != RP_DNS_TYPE_TXT ||
      dns_txt_walk(msg->buf, msg->len, rr->rdata_off, rr->rdata_len) < 0) {
    return RP_ERR_MALFORMED;
  }
  rp_dns_cursor_init(&cur, msg->buf + rr->rdata_off, rr->rdata_len);
  while (cursor_left(&cur) > 0) {
    uint8_t slen = 0;
    (void)rp_dns_cursor_u8(&cur, &slen); /* checked by dns_txt_walk */
    if (cap - w < slen) {
      return RP_ERR_NOBUF;
    }
    if (slen > 0) {
      memcpy(out + w, cur.base + cur.pos, slen);
    }
    w += slen;
    (void)rp_dns_cursor_skip(&cur, slen);
  }
  return (rp_ssize)w;
}

/* ---------------------------------------------------------------- */
/* Writing                                                            */
/* ---------------------------------------------------------------- */

/* builder_room returns 1 if |n| more bytes fit, else records NOBUF. */
static int builder_room(rp_dns_builder *b, size_t n) {
  if (b->err != 0) {
    return 0;
  }
  if (b->cap - b->len < n) {
    b->err = RP_ERR_NOBUF;
    return 0;
  }
  return 1;
}

static void builder_fail(rp_dns_builder *b, int err) {
  if (b->err == 0) {
    b->err = err;
  }
}

void rp_dns_builder_init(rp_dns_builder *b, uint8_t *buf, size_t cap,
                         uint16_t id, uint16_t flags) {
  *b = (rp_dns_builder){.buf = buf, .cap = cap, .len = 0, .err = 0};
  if (!builder_room(b, RP_DNS_HEADER_LEN)) {
    return;
  }
  memset(buf, 0, RP_DNS_HEADER_LEN);
  dns_store16(buf, id);
  dns_store16(buf + DNS_OFF_FLAGS, flags);
  b->len = RP_DNS_HEADER_LEN;
}

/* builder_name appends an uncompressed |name|. */
static void builder_name(rp_dns_builder *b, const rp_dns_name *name) {
  if (b->err != 0) {
    return;
  }
  if (!dns_name_valid(name)) {
    builder_fail(b, RP_ERR_INVALID_ARGUMENT);
    return;
  }
  if (!builder_room(b, name->len)) {
    return;
  }
  memcpy(b->buf + b->len, name->wire, name->len);
  b->len += name->len;
}

static void builder_u16(rp_dns_builder *b, uint16_t v) {
  if (builder_room(b, 2)) {
    dns_store16(b->buf + b->len, v);
    b->len += 2;
  }
}

static void builder_u32(rp_dns_builder *b, uint32_t v) {
  if (builder_room(b, 4)) {
    dns_store32(b->buf + b->len, v);
    b->len += 4;
  }
}

void rp_dns_builder_question(rp_dns_builder *b, const rp_dns_name *name,
                             uint16_t qtype, uint16_t qclass) {
  if (b->err != 0) {
    return;
  }
  if (b->ancount != 0 || b->nscount != 0 || b->arcount != 0 ||
      b->qdcount == DNS_MAX_COUNT) {
    builder_fail(b, RP_ERR_INVALID_ARGUMENT);
    return;
  }
  builder_name(b, name);
  builder_u16(b, qtype);
  builder_u16(b, qclass);
  if (b->err == 0) {
    b->qdcount++;
  }
}

/* builder_rr_start writes an answer record's owner (uncompressed, or
   the question pointer when |owner| is NULL), type, class and TTL, and
   checks the section order. The caller writes rdlength and rdata. */
static void builder_rr_start(rp_dns_builder *b, const rp_dns_name *owner,
                             uint16_t type, uint32_t ttl) {
  if (b->err != 0) {
    return;
  }
  if (b->nscount != 0 || b->arcount != 0 || b->ancount == DNS_MAX_COUNT) {
    builder_fail(b, RP_ERR_INVALID_ARGUMENT);
    return;
  }
  if (owner != NULL) {
    builder_name(b, owner);
  } else {
    builder_u16(b, (uint16_t)DNS_QUESTION_PTR);
  }
  builder_u16(b, type);
  builder_u16(b, RP_DNS_CLASS_IN);
  builder_u32(b, ttl);
}

static void builder_rr_end(rp_dns_builder *b) {
  if (b->err == 0) {
    b->ancount++;
  }
}

static void builder_bytes(rp_dns_builder *b, const uint8_t *p, size_t n) {
  if (n > 0 && builder_room(b, n)) {
    memcpy(b->buf + b->len, p, n);
    b->len += n;
  }
}

void rp_dns_builder_rr_a(rp_dns_builder *b, const rp_dns_name *name,
                         uint32_t ttl, const uint8_t addr[4]) {
  builder_rr_start(b, name, RP_DNS_TYPE_A, ttl);
  builder_u16(b, DNS_A_LEN);
  builder_bytes(b, addr, DNS_A_LEN);
  builder_rr_end(b);
}

void rp_dns_builder_rr_aaaa(rp_dns_builder *b, const rp_dns_name *name,
                            uint32_t ttl, const uint8_t addr[16]) {
  builder_rr_start(b, name, RP_DNS_TYPE_AAAA, ttl);
  builder_u16(b, DNS_AAAA_LEN);
  builder_bytes(b, addr, DNS_AAAA_LEN);
  builder_rr_end(b);
}

void rp_dns_builder_rr_cname(rp_dns_builder *b, const rp_dns_name *name,
                             uint32_t ttl, const rp_dns_name *target) {
  if (b->err == 0 && !dns_name_valid(target)) {
    builder_fail(b, RP_ERR_INVALID_ARGUMENT);
  }
  builder_rr_start(b, name, RP_DNS_TYPE_CNAME, ttl);
  builder_u16(b, target->len);
  builder_name(b, target);
  builder_rr_end(b);
}

/* dns_txt_rdata_len returns the rdata size of |len| payload bytes split
   into strings of at most 255 bytes (one empty string for 0 bytes). */
static size_t dns_txt_rdata_len(size_t len) {
  size_t strings = (len + RP_DNS_MAX_TXT_STRING - 1) / RP_DNS_MAX_TXT_STRING;
  if (strings == 0) {
    strings = 1;
  }
  return len + strings;
}

/* builder_txt_rdata writes rdlength and the strings of |data|. */
static void builder_txt_rdata(rp_dns_builder *b, const uint8_t *data,
                              size_t len) {
  size_t rdlen;
  size_t off = 0;
  if (b->err != 0) {
    return;
  }
  if (len > DNS_MAX_RDATA) {
    builder_fail(b, RP_ERR_INVALID_ARGUMENT);
    return;
  }
  rdlen = dns_txt_rdata_len(len);
  if (rdlen > DNS_MAX_RDATA) {
    builder_fail(b, RP_ERR_INVALID_ARGUMENT);
    return;
  }
  if (!builder_room(b, 2 + rdlen)) {
    return;
  }
  builder_u16(b, (uint16_t)rdlen);
  do {
    size_t chunk = len - off;
    if (chunk > RP_DNS_MAX_TXT_STRING) {
      chunk = RP_DNS_MAX_TXT_STRING;
    }
    b->buf[b->len++] = (uint8_t)chunk;
    if (chunk > 0) {
      memcpy(b->buf + b->len, data + off, chunk);
    }
    b->len += chunk;
    off += chunk;
  } while (off < len);
}

void rp_dns_builder_rr_txt(rp_dns_builder *b, const rp_dns_name *name,
                           uint32_t ttl, const uint8_t *data, size_t len) {
  builder_rr_start(b, name, RP_DNS_TYPE_TXT, ttl);
  builder_txt_rdata(b, data, len);
  builder_rr_end(b);
}

/* builder_opt_ext writes an OPT record with the extended rcode bits
   |ext_rcode| (the rcode above the header's 4 bits). */
static void builder_opt_ext(rp_dns_builder *b, uint16_t udp_size,
                            int dnssec_ok, uint8_t ext_rcode) {
  uint32_t ttl = (uint32_t)ext_rcode << DNS_EDNS_EXT_RCODE_SHIFT;
  if (b->err != 0) {
    return;
  }
  if (b->arcount == DNS_MAX_COUNT) {
    builder_fail(b, RP_ERR_INVALID_ARGUMENT);
    return;
  }
  if (!builder_room(b, DNS_OPT_LEN)) {
    return;
  }
  if (dnssec_ok) {
    ttl |= DNS_EDNS_DO;
  }
  b->buf[b->len++] = 0; /* root owner */
  builder_u16(b, RP_DNS_TYPE_OPT);
  builder_u16(b, udp_size);
  builder_u32(b, ttl);
  builder_u16(b, 0); /* no options */
  b->arcount++;
}

void rp_dns_builder_opt(rp_dns_builder *b, uint16_t udp_size, int dnssec_ok) {
  builder_opt_ext(b, udp_size, dnssec_ok, 0);
}

rp_ssize rp_dns_builder_finish(rp_dns_builder *b) {
  if (b->err != 0) {
    return b->err;
  }
  dns_store16(b->buf + DNS_OFF_QDCOUNT, b->qdcount);
  dns_store16(b->buf + DNS_OFF_ANCOUNT, b->ancount);
  dns_store16(b->buf + DNS_OFF_NSCOUNT, b->nscount);
  dns_store16(b->buf + DNS_OFF_ARCOUNT, b->arcount);
  return (rp_ssize)b->len;
}

size_t rp_dns_txt_room(const rp_dns_name *qname, size_t msg_limit,
                       int with_opt) {
  /* Header, question, TXT owner pointer, fixed part, optional OPT. */
  size_t overhead = RP_DNS_HEADER_LEN + (size_t)qname->len + DNS_QFIXED_LEN +
                    DNS_PTR_LEN + DNS_RRFIXED_LEN +
                    (with_opt ? DNS_OPT_LEN : 0);
  size_t avail;
  size_t full;
  size_t rest;
  if (msg_limit > RP_DNS_MAX_MSG_LEN) {
    msg_limit = RP_DNS_MAX_MSG_LEN;
  }
  if (msg_limit <= overhead) {
    return 0;
  }
  avail = msg_limit - overhead;
  if (avail > DNS_MAX_RDATA) {
    avail = DNS_MAX_RDATA;
  }
  /* Each full string costs 256 bytes for 255 payload bytes; a partial
     tail of r bytes (r >= 1) carries r - 1. */
  full = avail / DNS_TXT_CHUNK;
  rest = avail % DNS_TXT_CHUNK;
  return full * RP_DNS_MAX_TXT_STRING + (rest > 0 ? rest - 1 : 0);
}

rp_ssize rp_dns_build_txt_answer(uint8_t *out, size_t cap,
                                 const rp_dns_msg *query, uint32_t ttl,
                                 const uint8_t *data, size_t len) {
  rp_dns_builder b;
  uint16_t flags = (uint16_t)(RP_DNS_FLAG_QR | RP_DNS_FLAG_AA |
                              (query->hdr.flags & RP_DNS_OPCODE_MASK) |
                              (query->hdr.flags & RP_DNS_FLAG_RD));
  if (!query->has_question) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  rp_dns_builder_init(&b, out, cap, query->hdr.id, flags);
  rp_dns_builder_question(&b, &query->question.name, query->question.qtype,
                          query->question.qclass);
  builder_rr_start(&b, NULL, RP_DNS_TYPE_TXT, ttl);
  builder_txt_rdata(&b, data, len);
  builder_rr_end(&b);
  if (query->has_edns) {
    rp_dns_builder_opt(&b, RP_DNS_EDNS_UDP_SIZE, query->edns_do);
  }
  return rp_dns_builder_finish(&b);
}

rp_ssize rp_dns_build_error(uint8_t *out, size_t cap, const uint8_t *query,
                            size_t qlen, uint8_t rcode) {
  rp_dns_msg msg;
  rp_dns_header hdr;
  rp_dns_builder b;
  rp_dns_question q;
  int has_q = 0;
  int has_opt = 0;
  int dnssec_ok = 0;
  uint16_t flags;

  if (rp_dns_parse_header(&hdr, query, qlen) != 0) {
    return RP_ERR_MALFORMED;
  }
  if (rp_dns_parse(&msg, query, qlen) == 0) {
    has_q = msg.has_question;
    q = msg.question;
    has_opt = msg.has_edns;
    dnssec_ok = msg.edns_do;
  } else if (hdr.qdcount == 1) {
    /* The rest is broken; echo the question alone if it reads. */
    rp_dns_cursor cur;
    rp_dns_cursor_init(&cur, query, qlen);
    cur.pos = RP_DNS_HEADER_LEN;
    has_q = dns_read_question(&cur, &q) == 0;
  }
  flags = (uint16_t)(RP_DNS_FLAG_QR | RP_DNS_FLAG_RA |
                     (hdr.flags & (RP_DNS_OPCODE_MASK | RP_DNS_FLAG_RD)) |
                     (rcode & RP_DNS_RCODE_MASK));
  rp_dns_builder_init(&b, out, cap, hdr.id, flags);
  if (has_q) {
    rp_dns_builder_question(&b, &q.name, q.qtype, q.qclass);
  }
  if (has_opt) {
    builder_opt_ext(&b, RP_DNS_EDNS_UDP_SIZE, dnssec_ok,
                    (uint8_t)(rcode >> DNS_RCODE_BITS));
  }
  return rp_dns_builder_finish(&b);
}

rp_ssize rp_dns_build_truncated(uint8_t *out, size_t cap, const uint8_t *msg,
                                size_t len) {
  rp_dns_header hdr;
  rp_dns_question q;
  rp_dns_cursor cur;
  rp_dns_builder b;

  if (rp_dns_parse_header(&hdr, msg, len) != 0) {
    return RP_ERR_MALFORMED;
  }
  rp_dns_builder_init(&b, out, cap, hdr.id,
                      (uint16_t)(hdr.flags | RP_DNS_FLAG_TC));
  if (hdr.qdcount == 1) {
    rp_dns_cursor_init(&cur, msg, len);
    cur.pos = RP_DNS_HEADER_LEN;
    if (dns_read_question(&cur, &q) == 0) {
      rp_dns_builder_question(&b, &q.name, q.qtype, q.qclass);
    }
  }
  return rp_dns_builder_finish(&b);
}

rp_ssize rp_dns_build_query(uint8_t *out, size_t cap, uint16_t id,
                            const rp_dns_name *name, uint16_t qtype,
                            uint16_t edns_udp_size) {
  rp_dns_builder b;
  rp_dns_builder_init(&b, out, cap, id, RP_DNS_FLAG_RD);
  rp_dns_builder_question(&b, name, qtype, RP_DNS_CLASS_IN);
  if (edns_udp_size != 0) {
    rp_dns_builder_opt(&b, edns_udp_size, 0);
  }
  return rp_dns_builder_finish(&b);
}
