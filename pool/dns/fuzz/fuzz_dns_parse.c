/*
 * fuzz_dns_parse.c: libFuzzer target for the DNS codec's reader.
 *
 * Parses the input as a DNS message; when it parses, reads every TXT
 * answer, prints every name, builds error answers and a TXT answer to it.
 * It checks nothing itself: the sanitizers (ASan, UBSan) are the oracle.
 * The same function is replayed over the seed corpus by the ctest
 * unit.dns_fuzz_replay (replay_main.c), in ordinary builds.
 */
#include "dns.h"

#include <stddef.h>
#include <stdint.h>

/* FUZZ_TEXT_LEN holds any name in presentation form (255 x "\DDD"). */
#define FUZZ_TEXT_LEN 1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static uint8_t out[RP_DNS_MAX_MSG_LEN];
  static rp_dns_msg msg;
  char text[FUZZ_TEXT_LEN];
  size_t i;

  (void)rp_dns_build_error(out, sizeof(out), data, size,
                           RP_DNS_RCODE_FORMERR);
  if (rp_dns_parse(&msg, data, size) != 0) {
    return 0;
  }
  (void)rp_dns_txt_payload_size(&msg);
  for (i = 0; i < msg.nanswers; i++) {
    const rp_dns_rr *rr = &msg.answers[i];
    (void)rp_dns_name_to_text(&rr->name, text, sizeof(text));
    if (rr->type == RP_DNS_TYPE_TXT) {
      (void)rp_dns_txt_read(&msg, rr, out, sizeof(out));
      /* A short output buffer takes the RP_ERR_NOBUF path. */
      (void)rp_dns_txt_read(&msg, rr, out, rr->rdata_len / 2);
    } else if (rr->type == RP_DNS_TYPE_CNAME) {
      rp_dns_cursor cur;
      rp_dns_name target;
      rp_dns_cursor_init(&cur, data, size);
      cur.pos = rr->rdata_off;
      if (rp_dns_cursor_name(&cur, &target) == 0) {
        (void)rp_dns_name_to_text(&target, text, sizeof(text));
      }
    }
  }
  (void)rp_dns_build_error(out, sizeof(out), data, size,
                           RP_DNS_RCODE_REFUSED);
  (void)rp_dns_build_error(out, RP_DNS_HEADER_LEN + 1, data, size,
                           RP_DNS_RCODE_SERVFAIL);
  if (msg.has_question) {
    size_t room;
    (void)rp_dns_name_to_text(&msg.question.name, text, sizeof(text));
    room = rp_dns_txt_room(&msg.question.name, RP_DNS_EDNS_UDP_SIZE,
                           msg.has_edns);
    (void)rp_dns_build_txt_answer(out, RP_DNS_EDNS_UDP_SIZE, &msg, 0, data,
                                  room < size ? room : size);
  }
  return 0;
}
