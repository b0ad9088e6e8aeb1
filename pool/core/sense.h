/*
 * sense.h: recognising the tunnel behind the pool from its client
 * queries (prefix rp_sense_), for kind auto.
 *
 * IMPLEMENTATION NOTES (docs/pool-behaviour.md, "Kind auto")
 * - A tunnel client writes its data into the first labels of TXT query
 *   names, as text of a fixed alphabet. dnstt writes base32 (a-z, 2-7);
 *   MasterDnsVPN writes base36 (a-z, 0-9). So a long first label that has
 *   a 0, 1, 8 or 9 is base36 text; one of letters and 2-7 alone is
 *   base32 text (or base36 that happens to have none of the four: about
 *   one label in eight at 18 characters).
 * - Only TXT queries whose first label has at least RP_SENSE_MIN_LABEL
 *   characters, all letters and digits, are looked at. After
 *   RP_SENSE_QUERIES of them: at least half base36, MasterDNS; none,
 *   dnstt; else no verdict (generic). A client that sends
 *   RP_SENSE_GIVE_UP queries without RP_SENSE_QUERIES such ones (a stub
 *   resolver asking for A records) gets no verdict either. Sensing ends
 *   with the first verdict or its absence: the kind is not changed twice.
 * - Left out: the rest of the name (a suffix shared by the queries),
 *   other tunnels' alphabets (base64 names of iodine-like tunnels), and
 *   any change once decided.
 */
#ifndef RP_CORE_SENSE_H
#define RP_CORE_SENSE_H

#include "dns.h"
#include "respool.h"

/* RP_SENSE_MIN_LABEL is the shortest first label looked at, bytes. */
#define RP_SENSE_MIN_LABEL 16
/* RP_SENSE_QUERIES is how many looked-at queries make a verdict. */
#define RP_SENSE_QUERIES 32
/* RP_SENSE_GIVE_UP is how many queries of any kind end the sensing. */
#define RP_SENSE_GIVE_UP 1024

/* rp_sense_state says where the sensing is. */
typedef enum rp_sense_state {
  RP_SENSE_SENSING = 0,
  RP_SENSE_DONE
} rp_sense_state;

typedef struct rp_sense {
  rp_sense_state state;
  /* kind is the verdict once DONE (RP_KIND_GENERIC for none). */
  rp_kind kind;
  /* seen counts every query fed; looked those looked at; base36 those
     of them whose first label is base36 text. */
  uint32_t seen, looked, base36;
} rp_sense;

/* rp_sense_init starts |s| sensing. */
void rp_sense_init(rp_sense *s);

/* rp_sense_feed looks at one client query's question. Returns 1 when
   this query ended the sensing (|s->kind| is then the verdict), else 0. */
int rp_sense_feed(rp_sense *s, const rp_dns_question *question);

#endif /* RP_CORE_SENSE_H */
