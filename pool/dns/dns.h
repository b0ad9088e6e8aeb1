/*
 * dns.h: the DNS wire codec shared by every component (prefix rp_dns_).
 *
 * This module owns reading and writing DNS messages as far as respool
 * needs: the header, one question, answer records (A, AAAA, TXT, CNAME and
 * any other type kept as opaque rdata), the EDNS0 OPT record and rcodes.
 * Every read of untrusted bytes goes through rp_dns_cursor, which checks
 * bounds. Names are decompressed on read (loops and out-of-bounds pointers
 * are refused) and kept in uncompressed wire form with their case as sent
 * (0x20 randomisation survives a round trip). Nothing here allocates.
 */
#ifndef RP_DNS_H
#define RP_DNS_H

#include "respool.h"

#include <stddef.h>
#include <stdint.h>

#define RP_DNS_HEADER_LEN 12
#define RP_DNS_MAX_NAME_LEN 255 /* wire bytes, root label included */
#define RP_DNS_MAX_LABEL_LEN 63
#define RP_DNS_MAX_MSG_LEN 65535
#define RP_DNS_MAX_UDP_DEFAULT 512 /* without EDNS0 */
#define RP_DNS_EDNS_UDP_SIZE 1232  /* the common EDNS0 size today */
#define RP_DNS_MAX_TXT_STRING 255  /* bytes in one character-string */
/* RP_DNS_MAX_RRS is how many answer records rp_dns_parse keeps; later
   ones are skipped (their bytes are still bounds-checked). */
#define RP_DNS_MAX_RRS 32

/* Header flag bits (host order, as in rp_dns_header.flags). */
#define RP_DNS_FLAG_QR 0x8000u
#define RP_DNS_FLAG_AA 0x0400u
#define RP_DNS_FLAG_TC 0x0200u
#define RP_DNS_FLAG_RD 0x0100u
#define RP_DNS_FLAG_RA 0x0080u
#define RP_DNS_OPCODE_MASK 0x7800u
#define RP_DNS_RCODE_MASK 0x000fu

/* Rcodes (the low four bits; EDNS extended bits are ignored here). */
#define RP_DNS_RCODE_NOERROR 0
#define RP_DNS_RCODE_FORMERR 1
#define RP_DNS_RCODE_SERVFAIL 2
#define RP_DNS_RCODE_NXDOMAIN 3
#define RP_DNS_RCODE_NOTIMP 4
#define RP_DNS_RCODE_REFUSED 5
/* RP_DNS_RCODE_LAST_ASSIGNED is NOTZONE (10): 11-15 are unassigned. */
#define RP_DNS_RCODE_LAST_ASSIGNED 10

/* Record types and the one class used. */
#define RP_DNS_TYPE_A 1
#define RP_DNS_TYPE_NS 2
#define RP_DNS_TYPE_CNAME 5
#define RP_DNS_TYPE_NULL 10
#define RP_DNS_TYPE_PTR 12
#define RP_DNS_TYPE_TXT 16
#define RP_DNS_TYPE_AAAA 28
#define RP_DNS_TYPE_OPT 41
#define RP_DNS_CLASS_IN 1

/* rp_dns_cursor reads untrusted bytes with bounds checks. */
typedef struct rp_dns_cursor {
  /* base is the whole message (needed for compression pointers). */
  const uint8_t *base;
  /* len is the length of |base| in bytes. */
  size_t len;
  /* pos is the offset of the next byte to read. */
  size_t pos;
} rp_dns_cursor;

/* rp_dns_name is a name in uncompressed wire form, case preserved. */
typedef struct rp_dns_name {
  /* wire holds length-prefixed labels ending with the root label 0. */
  uint8_t wire[RP_DNS_MAX_NAME_LEN];
  /* len is the number of bytes used in |wire|, 1 for the root. */
  uint8_t len;
} rp_dns_name;

typedef struct rp_dns_header {
  uint16_t id;
  /* flags holds QR, opcode, AA, TC, RD, RA, Z and the rcode bits. */
  uint16_t flags;
  uint16_t qdcount;
  uint16_t ancount;
  uint16_t nscount;
  uint16_t arcount;
} rp_dns_header;

typedef struct rp_dns_question {
  rp_dns_name name;
  uint16_t qtype;
  uint16_t qclass;
} rp_dns_question;

/* rp_dns_rr is one resource record; its rdata stays in the message. */
typedef struct rp_dns_rr {
  rp_dns_name name;
  uint16_t type;
  uint16_t rclass;
  uint32_t ttl;
  /* rdata_off is the offset of the rdata within the parsed message. */
  size_t rdata_off;
  /* rdata_len is the rdata length in bytes. */
  uint16_t rdata_len;
} rp_dns_rr;

/* rp_dns_msg is a parsed message. It borrows the bytes it was parsed
   from: they must outlive it. */
typedef struct rp_dns_msg {
  const uint8_t *buf;
  size_t len;
  rp_dns_header hdr;
  /* has_question is 1 if qdcount >= 1 and the question parsed. */
  int has_question;
  rp_dns_question question;
  /* has_edns is 1 if an OPT record was found in the additional section. */
  int has_edns;
  /* edns_udp_size is the OPT record's UDP payload size (0 if none). */
  uint16_t edns_udp_size;
  uint8_t edns_version;
  /* edns_do is 1 if the DO bit is set. */
  int edns_do;
  /* rcode is the full rcode: header bits plus EDNS extended bits. */
  uint16_t rcode;
  /* nanswers is the number of answer records kept (<= RP_DNS_MAX_RRS). */
  size_t nanswers;
  /* answers holds the records kept; rp_dns_parse leaves the slots past
     nanswers as they were (it clears the fields above only, not ~9 KB of
     records on every message). */
  rp_dns_rr answers[RP_DNS_MAX_RRS];
} rp_dns_msg;

/* ---------------------------------------------------------------- */
/* Cursor                                                             */
/* ---------------------------------------------------------------- */

/* rp_dns_cursor_init points |cur| at |len| bytes of |buf|, at 0. */
void rp_dns_cursor_init(rp_dns_cursor *cur, const uint8_t *buf, size_t len);

/* rp_dns_cursor_u8/u16/u32 read big-endian integers. They return 0, or
   RP_ERR_MALFORMED if the bytes run out (|cur| is then unchanged). */
int rp_dns_cursor_u8(rp_dns_cursor *cur, uint8_t *pv);
int rp_dns_cursor_u16(rp_dns_cursor *cur, uint16_t *pv);
int rp_dns_cursor_u32(rp_dns_cursor *cur, uint32_t *pv);

/* rp_dns_cursor_skip skips |n| bytes, or returns RP_ERR_MALFORMED. */
int rp_dns_cursor_skip(rp_dns_cursor *cur, size_t n);

/* rp_dns_cursor_name reads a possibly compressed name into |name|.
   Returns RP_ERR_MALFORMED on truncation, a pointer loop, a pointer
   outside the message, a label over 63 bytes, a name over 255 bytes, or
   a reserved label type. */
int rp_dns_cursor_name(rp_dns_cursor *cur, rp_dns_name *name);

/* ---------------------------------------------------------------- */
/* Reading                                                            */
/* ---------------------------------------------------------------- */

/* rp_dns_parse_header reads the 12-byte header. Returns 0 or
   RP_ERR_MALFORMED when |len| < 12. */
int rp_dns_parse_header(rp_dns_header *hdr, const uint8_t *buf, size_t len);

/* rp_dns_parse parses the header, the first question (more than one
   question is RP_ERR_MALFORMED), the answer section, skips the authority
   section and finds the OPT record in the additional section. Returns 0,
   or RP_ERR_MALFORMED when anything is out of bounds or invalid. |msg|
   borrows |buf|; answers past nanswers are not set. */
int rp_dns_parse(rp_dns_msg *msg, const uint8_t *buf, size_t len);

/* rp_dns_brief is what rp_dns_parse_brief keeps of a message: the
   header, the first question and the full rcode; small enough to live
   on the stack of a hot path (rp_dns_msg is over 8 KB). */
typedef struct rp_dns_brief {
  rp_dns_header hdr;
  /* has_question is 1 if qdcount >= 1 and the question parsed. */
  int has_question;
  rp_dns_question question;
  /* rcode is the full rcode: header bits plus EDNS extended bits. */
  uint16_t rcode;
  /* edns_udp_size is the OPT record's UDP payload size, 0 without one. */
  uint16_t edns_udp_size;
} rp_dns_brief;

/* rp_dns_parse_brief checks a message exactly as rp_dns_parse does
   (returns 0 or RP_ERR_MALFORMED for the same inputs) but keeps only
   the header, the question and the rcode, without filling an
   rp_dns_msg. */
int rp_dns_parse_brief(rp_dns_brief *brief, const uint8_t *buf, size_t len);

/* rp_dns_get_id returns the ID of a message of at least 2 bytes. */
uint16_t rp_dns_get_id(const uint8_t *buf);

/* rp_dns_set_id rewrites the ID of a message of at least 2 bytes. */
void rp_dns_set_id(uint8_t *buf, uint16_t id);

/* rp_dns_rcode returns the header rcode of a message of >= 4 bytes. */
uint8_t rp_dns_rcode(const uint8_t *buf);

/* rp_dns_is_truncated returns 1 if the TC bit of a >= 4 byte message is
   set. */
int rp_dns_is_truncated(const uint8_t *buf);

/* rp_dns_is_response returns 1 if the QR bit of a >= 4 byte message is
   set. */
int rp_dns_is_response(const uint8_t *buf);

/* rp_dns_reply says what a resolver's reply to a check query shows
   (rp_dns_check_reply). */
typedef enum rp_dns_reply {
  /* Not a reply to that query: too short, another ID, or QR clear. */
  RP_DNS_REPLY_OTHER = 0,
  /* NOERROR or NXDOMAIN: the resolver resolves. */
  RP_DNS_REPLY_WORKS,
  /* REFUSED. */
  RP_DNS_REPLY_REFUSED,
  /* Any other rcode. */
  RP_DNS_REPLY_BAD_RCODE
} rp_dns_reply;

/* rp_dns_check_reply judges |len| bytes that came back for a check query
   of ID |id| by their header alone (the start-up check and discovery
   share it). */
rp_dns_reply rp_dns_check_reply(const uint8_t *buf, size_t len, uint16_t id);

/* rp_dns_name_equal compares two names byte for byte, case included. */
int rp_dns_name_equal(const rp_dns_name *a, const rp_dns_name *b);

/* rp_dns_name_equal_nocase compares two names ignoring ASCII case. */
int rp_dns_name_equal_nocase(const rp_dns_name *a, const rp_dns_name *b);

/* rp_dns_question_equal returns 1 if the two questions have the same
   type, class and name (case-sensitive, so 0x20 is checked). */
int rp_dns_question_equal(const rp_dns_question *a,
                          const rp_dns_question *b);

/* rp_dns_name_is_subdomain returns 1 if |name| equals |zone| or is below
   it, ignoring case. */
int rp_dns_name_is_subdomain(const rp_dns_name *name, const rp_dns_name *zone);

/* rp_dns_name_from_text converts "a.b.c" or "a.b.c." into |name|.
   Returns RP_ERR_MALFORMED on an empty label, a label over 63 bytes or a
   name over 255 bytes. No escapes are understood. */
int rp_dns_name_from_text(rp_dns_name *name, const char *text);

/* rp_dns_name_to_text writes |name| as "a.b.c." into |out|, NUL ended.
   Bytes outside printable ASCII and '.' inside labels are written as
   \DDD. Returns the length written, or RP_ERR_NOBUF. */
rp_ssize rp_dns_name_to_text(const rp_dns_name *name, char *out, size_t cap);

/* rp_dns_txt_payload_size returns the sum of the character-string bytes
   (length octets excluded) of every TXT answer in |msg|, or
   RP_ERR_MALFORMED if a TXT rdata is not a sequence of strings. */
rp_ssize rp_dns_txt_payload_size(const rp_dns_msg *msg);

/* rp_dns_txt_read concatenates the character-strings of the TXT record
   |rr| of |msg| into |out|. Returns the number of bytes, RP_ERR_NOBUF if
   |cap| is too small, RP_ERR_MALFORMED if the rdata is not strings or
   |rr| is not TXT. */
rp_ssize rp_dns_txt_read(const rp_dns_msg *msg, const rp_dns_rr *rr,
                         uint8_t *out, size_t cap);

/* ---------------------------------------------------------------- */
/* Writing                                                            */
/* ---------------------------------------------------------------- */

/* rp_dns_builder writes a message into a caller's buffer. Names are
   written uncompressed. A failed step sets |err| and later steps do
   nothing, so a caller may check once at rp_dns_builder_finish. Sections
   must be written in order: header, question, answers, additional. */
typedef struct rp_dns_builder {
  uint8_t *buf;
  size_t cap;
  size_t len;
  /* err is 0 or the first error (RP_ERR_NOBUF, RP_ERR_INVALID_ARGUMENT). */
  int err;
  uint16_t qdcount, ancount, nscount, arcount;
} rp_dns_builder;

/* rp_dns_builder_init starts a message with |id| and |flags| (rcode
   bits included) in |buf| of |cap| bytes. */
void rp_dns_builder_init(rp_dns_builder *b, uint8_t *buf, size_t cap,
                         uint16_t id, uint16_t flags);

void rp_dns_builder_question(rp_dns_builder *b, const rp_dns_name *name,
                             uint16_t qtype, uint16_t qclass);

/* rp_dns_builder_rr_a adds an A record with the 4 bytes of |addr|. */
void rp_dns_builder_rr_a(rp_dns_builder *b, const rp_dns_name *name,
                         uint32_t ttl, const uint8_t addr[4]);

/* rp_dns_builder_rr_aaaa adds an AAAA record. */
void rp_dns_builder_rr_aaaa(rp_dns_builder *b, const rp_dns_name *name,
                            uint32_t ttl, const uint8_t addr[16]);

/* rp_dns_builder_rr_cname adds a CNAME record pointing at |target|. */
void rp_dns_builder_rr_cname(rp_dns_builder *b, const rp_dns_name *name,
                             uint32_t ttl, const rp_dns_name *target);

/* rp_dns_builder_rr_txt adds one TXT record holding |len| bytes of
   |data|, split into character-strings of at most 255 bytes. An empty
   |data| gives one empty string. */
void rp_dns_builder_rr_txt(rp_dns_builder *b, const rp_dns_name *name,
                           uint32_t ttl, const uint8_t *data, size_t len);

/* rp_dns_builder_opt adds an EDNS0 OPT record to the additional
   section. */
void rp_dns_builder_opt(rp_dns_builder *b, uint16_t udp_size, int dnssec_ok);

/* rp_dns_builder_finish writes the section counts and returns the
   message length, or the first error. */
rp_ssize rp_dns_builder_finish(rp_dns_builder *b);

/* rp_dns_txt_room returns how many TXT payload bytes fit in one TXT
   answer to a question named |qname| (compressed owner name, as built by
   rp_dns_build_txt_answer) when the answer may be |msg_limit| bytes and
   carries an OPT record if |with_opt|. Returns 0 if none fit. */
size_t rp_dns_txt_room(const rp_dns_name *qname, size_t msg_limit,
                       int with_opt);

/* rp_dns_build_txt_answer builds an answer to the parsed |query|: same
   ID, RD copied, QR and AA set, NOERROR, the question echoed, one TXT
   record owned by the question name (written as a compression pointer)
   holding |len| bytes of |data|, and an OPT record if the query had one.
   Returns the length, RP_ERR_NOBUF, or RP_ERR_INVALID_ARGUMENT if |query|
   has no question or |len| is more than one rdata can hold. */
rp_ssize rp_dns_build_txt_answer(uint8_t *out, size_t cap,
                                 const rp_dns_msg *query, uint32_t ttl,
                                 const uint8_t *data, size_t len);

/* rp_dns_build_error builds an answer to |query| (|qlen| bytes) with
   |rcode| (FORMERR, SERVFAIL, REFUSED...): the query's ID, opcode and RD,
   QR and RA set, the question echoed when it parses, no records but an
   OPT record when the query had one. When only the header parses the
   answer is a bare header. Returns the length, RP_ERR_MALFORMED if
   |qlen| < 12, or RP_ERR_NOBUF. */
rp_ssize rp_dns_build_error(uint8_t *out, size_t cap, const uint8_t *query,
                            size_t qlen, uint8_t rcode);

/* rp_dns_build_truncated builds from the message |msg| (|len| bytes) a
   copy of its header with TC set and no records but its question (none
   when the question does not read): what a UDP client that cannot take
   the whole answer gets, so that it asks again over TCP. Returns the
   length, RP_ERR_MALFORMED if |len| < 12, or RP_ERR_NOBUF. */
rp_ssize rp_dns_build_truncated(uint8_t *out, size_t cap, const uint8_t *msg,
                                size_t len);

/* rp_dns_build_query builds a query with |id|, RD set, one question and
   an OPT record of |edns_udp_size| when it is non-zero. Returns the
   length or RP_ERR_NOBUF. */
rp_ssize rp_dns_build_query(uint8_t *out, size_t cap, uint16_t id,
                            const rp_dns_name *name, uint16_t qtype,
                            uint16_t edns_udp_size);

#endif /* RP_DNS_H */
