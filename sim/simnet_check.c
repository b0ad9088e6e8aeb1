/*
 * simnet_check.c: the pools' start-up check in virtual time (prefix
 * sim_net_check_, state in simnet_internal.h's sim_net_check): what the
 * pool library's check (pool/net/check.c) does before a resolver joins.
 *
 * IMPLEMENTATION NOTES
 * - At the pool's start every resolver gets one check query from the
 *   pool's upstream socket toward it. It is a real query in the model:
 *   it takes a token of the fake resolver's bucket, may be lost, and the
 *   tunnel server answers it (a probe for SIM_NET_CHECK_BYTES test
 *   bytes, as the minimal DNSTT client's in-process pool asks; the
 *   minimal MasterDNS client's asks for its MTU ceiling, 500 bytes, and
 *   respool's own check for a name outside the tunnel, which the real
 *   servers answer too: the size of their answers is not modelled).
 * - A NOERROR answer with the check's ID passes (rp_dns_check_reply);
 *   a refusal or another rcode fails; no answer within
 *   SIM_NET_CHECK_TIMEOUT fails. A resolver that passed joins the core
 *   then (the caller adds it); one that failed is checked again every
 *   SIM_NET_CHECK_RECHECK from the start, as the pool does while fewer
 *   than its wanted ten resolvers work.
 * - The loopback table measured why the model needs this: the in-process
 *   DNSTT pool over three-limited moved 625-655 kbps with its check
 *   (median 635) and 579-634 without it (median 597), the rounds
 *   interleaved (the check's token and the few milliseconds before the
 *   client starts decide how the first refusals fall); a lost check
 *   keeps a lossy resolver out of a timed run (three-lossy: the 30 %
 *   resolver got one query, its check, in one of three baseline rounds
 *   of the in-process DNSTT pool).
 */
#include "simnet_internal.h"

#include "dns.h"
#include "tuncli.h"

#include <string.h>

/* SIM_NET_CHECK_BYTES is the check's test answer size (the minimal
   DNSTT client's --pool-check-bytes default). */
#define SIM_NET_CHECK_BYTES 900
/* SIM_NET_CHECK_TIMEOUT and SIM_NET_CHECK_RECHECK are the pool
   library's check timeout and re-check interval (RP_NET_CHECK_TIMEOUT,
   RP_NET_RECHECK_INTERVAL, private to pool/net: keep them equal). */
#define SIM_NET_CHECK_TIMEOUT (2 * RP_SECONDS)
#define SIM_NET_CHECK_RECHECK (15 * RP_SECONDS)
/* SIM_NET_CHECK_NONCE_MASK makes the probe's nonce from its ID. */
#define SIM_NET_CHECK_NONCE_MASK 0x5a5au

/* check_send sends resolver |r|'s check from |proc| at n->now. */
static int check_send(sim_net *n, sim_net_check *c, uint32_t proc,
                      uint32_t r) {
  uint8_t buf[SIM_NET_PKT_MAX];
  rp_ssize len;

  c->id[r] = (uint16_t)sim_net_rng_next(&c->rng);
  len = tun_cli_build_probe(buf, sizeof(buf), c->id[r], &n->cell.drv.domain,
                            (uint16_t)(c->id[r] ^ SIM_NET_CHECK_NONCE_MASK),
                            SIM_NET_CHECK_BYTES, RP_DNS_EDNS_UDP_SIZE);
  if (len < 0) {
    return (int)len;
  }
  c->state[r] = SIM_NET_CHECK_RUNNING;
  c->deadline[r] = n->now + SIM_NET_CHECK_TIMEOUT;
  return sim_net_send(n, proc, SIM_NET_PORT_UP + r, SIM_NET_FAKERES, r, buf,
                      (size_t)len);
}

int sim_net_check_start(sim_net *n, sim_net_check *c, uint32_t proc,
                        uint64_t seed) {
  uint32_t r;
  int rv = 0;

  memset(c, 0, sizeof(*c));
  c->rng = seed;
  c->recheck = n->now + SIM_NET_CHECK_RECHECK;
  for (r = 0; rv == 0 && r < n->cell.nres; ++r) {
    rv = check_send(n, c, proc, r);
  }
  return rv;
}

int sim_net_check_answer(sim_net_check *c, uint32_t r, const uint8_t *data,
                         size_t len) {
  rp_dns_reply reply;

  if (c->state[r] != SIM_NET_CHECK_RUNNING) {
    return 0;
  }
  reply = rp_dns_check_reply(data, len, c->id[r]);
  if (reply == RP_DNS_REPLY_OTHER) {
    return 0;
  }
  c->state[r] = reply == RP_DNS_REPLY_WORKS ? SIM_NET_CHECK_PASSED
                                            : SIM_NET_CHECK_FAILED;
  return c->state[r] == SIM_NET_CHECK_PASSED;
}

rp_tstamp sim_net_check_expiry(const sim_net_check *c, size_t nres) {
  rp_tstamp at = RP_TSTAMP_UNSET;
  size_t r;

  for (r = 0; r < nres; ++r) {
    if (c->state[r] == SIM_NET_CHECK_RUNNING && c->deadline[r] < at) {
      at = c->deadline[r];
    }
    if (c->state[r] == SIM_NET_CHECK_FAILED && c->recheck < at) {
      at = c->recheck;
    }
  }
  return at;
}

int sim_net_check_expire(sim_net *n, sim_net_check *c, uint32_t proc) {
  uint32_t r;
  int rv = 0;

  for (r = 0; r < n->cell.nres; ++r) {
    if (c->state[r] == SIM_NET_CHECK_RUNNING && c->deadline[r] <= n->now) {
      c->state[r] = SIM_NET_CHECK_FAILED;
    }
  }
  if (c->recheck > n->now) {
    return 0;
  }
  while (c->recheck <= n->now) {
    c->recheck += SIM_NET_CHECK_RECHECK;
  }
  for (r = 0; rv == 0 && r < n->cell.nres; ++r) {
    if (c->state[r] == SIM_NET_CHECK_FAILED) {
      rv = check_send(n, c, proc, r);
    }
  }
  return rv;
}
