/*
 * sim_resolver.c: a simulated resolver around fr_profile (see
 * sim_resolver.h).
 *
 * IMPLEMENTATION NOTES
 * - No behaviour is written here: the verdicts come from fr_profile and
 *   the answers from fr_answer, the modules the loopback fakeres runs, so
 *   a profile tuned in the simulator means the same on loopback.
 * - Each resolver draws from its own splitmix64 stream. Adding a
 *   resolver or changing the load does not shift the draws of the
 *   others, which keeps runs comparable when one thing changes.
 */
#include "sim_resolver.h"

#include "dns.h"
#include "fr_answer.h"

#include <string.h>

void sim_resolver_init(sim_resolver *r, const fr_spec *spec, uint64_t seed,
                       rp_tstamp now) {
  memset(r, 0, sizeof(*r));
  r->spec = *spec;
  fr_profile_init(&r->profile, &r->spec, now);
  fr_rng_seed(&r->rng, seed);
}

void sim_resolver_receive(sim_resolver *r, rp_tstamp now,
                          fr_decision *decision) {
  fr_profile_decide(&r->profile, now, fr_rng_next, &r->rng, decision);
  ++r->counts.received;
  switch (decision->verdict) {
  case FR_VERDICT_ANSWER:
    ++r->counts.answered;
    break;
  case FR_VERDICT_REFUSE:
    ++r->counts.refused;
    break;
  case FR_VERDICT_DROP:
    ++r->counts.dropped;
    break;
  case FR_VERDICT_LOSE_BEFORE:
  case FR_VERDICT_LOSE_AFTER:
    ++r->counts.lost;
    break;
  case FR_VERDICT_DEAD:
    ++r->counts.dead;
    break;
  }
}

int sim_resolver_check_change(const char *text, char *errbuf, size_t errlen) {
  fr_spec spec;
  fr_spec_default(&spec);
  return fr_spec_parse(&spec, text, errbuf, errlen);
}

int sim_resolver_change(sim_resolver *r, const char *text, rp_tstamp now,
                        char *errbuf, size_t errlen) {
  fr_spec spec = r->spec;
  int rv = fr_spec_parse(&spec, text, errbuf, errlen);
  if (rv != 0) {
    return rv;
  }
  memcpy(spec.name, r->spec.name, sizeof(spec.name));
  r->spec = spec;
  fr_profile_init(&r->profile, &r->spec, now);
  return 0;
}

rp_ssize sim_resolver_reply(const uint8_t *query, size_t qlen,
                            fr_verdict verdict, uint8_t rcode, int stream,
                            uint8_t *out, size_t cap) {
  rp_dns_msg msg;
  switch (verdict) {
  case FR_VERDICT_ANSWER:
    if (rp_dns_parse(&msg, query, qlen) != 0 || !msg.has_question) {
      return RP_ERR_MALFORMED;
    }
    return fr_answer_build(out, cap, &msg, stream);
  case FR_VERDICT_REFUSE:
    return rp_dns_build_error(out, cap, query, qlen, rcode);
  case FR_VERDICT_DROP:
  case FR_VERDICT_LOSE_BEFORE:
  case FR_VERDICT_LOSE_AFTER:
  case FR_VERDICT_DEAD:
    break;
  }
  return RP_ERR_INVALID_ARGUMENT;
}
