/*
 * tuncli.h: the sans-I/O tunnel client session shared by the DNSTT-style
 * and MasterDNS-style clients (prefix tun_cli_).
 *
 * The driver decides when a query goes out and where (workers, balancer);
 * this module builds each query from the session's arq (acks plus upload
 * segments) and takes every answer that comes back. An answer is accepted
 * whatever its DNS ID as long as it is NOERROR with a TXT record (the
 * frame inside is checked by the arq), so the answers to copies of a
 * query all carry data.
 */
#ifndef TUN_CLI_H
#define TUN_CLI_H

#include "respool.h"
#include "dns.h"
#include "arq.h"
#include "tunsrv.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tun_cli tun_cli;

typedef struct tun_cli_settings {
  tun_mode mode;
  /* domain is the tunnel domain. */
  rp_dns_name domain;
  /* sid is the session id (the driver draws it at random). */
  uint64_t sid;
  /* edns_size is the EDNS0 size of the queries, bytes. */
  uint16_t edns_size;
  /* down_limit is the MD download MTU, bytes (0 in DNSTT mode). */
  uint16_t down_limit;
  /* arq is the template of the session's arq; mss and peer_mss are set
     by the client. */
  tun_arq_settings arq;
} tun_cli_settings;

typedef struct tun_cli_stats {
  /* answers: accepted answers; rejected: error rcodes, no TXT, bad
     frames. */
  uint64_t queries, answers, rejected, empty_answers;
} tun_cli_stats;

/* tun_cli_settings_default fills |s| for |mode| (windows 128 for DNSTT,
   32 and one segment per query for MD, EDNS 1232). */
void tun_cli_settings_default(tun_cli_settings *s, tun_mode mode);

/* tun_cli_new creates a client session. Returns 0,
   RP_ERR_INVALID_ARGUMENT (domain too long, MD MTU too small) or
   RP_ERR_NOMEM. */
int tun_cli_new(tun_cli **pcli, const tun_cli_settings *settings,
                const rp_mem *mem);

/* tun_cli_del frees |cli|. NULL is a no-op. */
void tun_cli_del(tun_cli *cli);

/* tun_cli_arq returns the session's arq (write uploads, read downloads,
   timers). */
tun_arq *tun_cli_arq(tun_cli *cli);

/* tun_cli_build_query builds the next query with DNS |id| and |nonce| at
   |now| into |out|. Lists the upload segments it carries in |*psent|
   (may be NULL; keep it to tun_cli_nack the query if it is refused).
   Returns the length or RP_ERR_NOBUF. */
rp_ssize tun_cli_build_query(tun_cli *cli, uint8_t *out, size_t cap,
                             uint16_t id, uint16_t nonce, rp_tstamp now,
                             tun_arq_sent *psent);

/* tun_cli_nack resends at once the segments of a query known lost. */
void tun_cli_nack(tun_cli *cli, const tun_arq_sent *sent);

/* tun_cli_on_answer takes |len| bytes of answer at |now|. Returns the
   number of data segments in it, RP_ERR_PROTO for an error rcode,
   RP_ERR_NOT_FOUND without a TXT record, RP_ERR_MALFORMED. */
int tun_cli_on_answer(tun_cli *cli, const uint8_t *data, size_t len,
                      rp_tstamp now);

/* tun_cli_get_stats fills |stats|. */
void tun_cli_get_stats(const tun_cli *cli, tun_cli_stats *stats);

/* tun_cli_build_probe builds an MD MTU probe asking for exactly |size|
   bytes under |domain|, with EDNS size |edns| (RP_DNS_EDNS_UDP_SIZE
   but for the simulator's MasterDnsVPN model). Returns the length or an
   error of tun_wire_build_query. */
rp_ssize tun_cli_build_probe(uint8_t *out, size_t cap, uint16_t id,
                             const rp_dns_name *domain, uint16_t nonce,
                             uint16_t size, uint16_t edns);

/* tun_cli_check_probe returns 1 if |len| bytes are an answer carrying the
   |size| test bytes of |nonce|, else 0. */
int tun_cli_check_probe(const uint8_t *data, size_t len, uint16_t nonce,
                        uint16_t size);

#endif /* TUN_CLI_H */
