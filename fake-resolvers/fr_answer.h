/*
 * fr_answer.h: what a fake resolver in answer mode replies (pure).
 *
 * `fakeres --answer` answers every query itself, for pool benchmarks
 * without a tunnel server: A 127.0.0.1 for A, ::1 for AAAA, and for TXT a
 * record of the size the query asks for. The size is asked for in the
 * first label of the name: `s1000.x.example` or `size-1000.x.example`
 * asks for 1000 payload bytes; the size is capped to what fits in the
 * answer (rp_dns_txt_room: the client's EDNS UDP size, or 512 without
 * EDNS; over TCP an explicit size may go up to a 65535-byte message). A
 * TXT query without a size label gets the answer filled to the room of
 * the client's UDP size, even over TCP (that is what a tunnel server
 * does). Any other type gets NOERROR with no record.
 *
 * Nothing here allocates, reads a clock or touches a socket, so the
 * simulator can build the same answers. The TXT payload pattern is
 * filled into a static buffer on first use: callers must not build
 * answers from two threads at once (fakeres and the simulator are
 * single-threaded).
 */
#ifndef FR_ANSWER_H
#define FR_ANSWER_H

#include "respool.h"
#include "dns.h"

#include <stddef.h>
#include <stdint.h>

/* FR_ANSWER_TTL is the TTL of every answer record: 0, so that no cache
   between the pool and the fake keeps it. */
#define FR_ANSWER_TTL 0u

/* FR_ANSWER_EDNS_SIZE is the UDP size the fake advertises in its own OPT
   record. */
#define FR_ANSWER_EDNS_SIZE RP_DNS_EDNS_UDP_SIZE

/* FR_TXT_SIZE_NONE is what fr_answer_txt_size returns when the name asks
   for no size. */
#define FR_TXT_SIZE_NONE SIZE_MAX

/* fr_answer_txt_size returns the payload size asked for by the first
   label of |qname| ("s<digits>" or "size-<digits>", case-insensitive,
   saturating at RP_DNS_MAX_MSG_LEN), or FR_TXT_SIZE_NONE. */
size_t fr_answer_txt_size(const rp_dns_name *qname);

/* fr_answer_udp_limit returns the largest answer the client of |query|
   takes over UDP: its EDNS UDP size (at least 512) or 512. */
size_t fr_answer_udp_limit(const rp_dns_msg *query);

/*
 * fr_answer_build writes into |out| (|cap| bytes) the answer-mode reply
 * to the parsed |query|, which must have a question and be a query. It
 * carries the query's ID, RD, the question, QR, AA and RA set, NOERROR,
 * and an OPT record when the query had one. |stream| is 1 when the reply
 * goes over TCP (see the size rules above). A query with an opcode other
 * than QUERY gets NOTIMP.
 *
 * Returns the length written, RP_ERR_NOBUF if |cap| is too small, or
 * RP_ERR_INVALID_ARGUMENT if |query| has no question.
 */
rp_ssize fr_answer_build(uint8_t *out, size_t cap, const rp_dns_msg *query,
                         int stream);

#endif /* FR_ANSWER_H */
