/*
 * sense.c: recognising the tunnel from its query names (see sense.h).
 */
#include "sense.h"

/* sense_label_class is 2 for base36 text, 1 for base32 text, 0 for a
   label not looked at. */
static int sense_label_class(const uint8_t *label, size_t len) {
  size_t i;
  int base36 = 0;

  if (len < RP_SENSE_MIN_LABEL) {
    return 0;
  }
  for (i = 0; i < len; ++i) {
    uint8_t c = label[i];
    if (c >= 'A' && c <= 'Z') {
      c = (uint8_t)(c - 'A' + 'a');
    }
    if (c == '0' || c == '1' || c == '8' || c == '9') {
      base36 = 1;
    } else if (!((c >= 'a' && c <= 'z') || (c >= '2' && c <= '7'))) {
      return 0;
    }
  }
  return base36 ? 2 : 1;
}

void rp_sense_init(rp_sense *s) {
  *s = (rp_sense){.state = RP_SENSE_SENSING, .kind = RP_KIND_GENERIC};
}

int rp_sense_feed(rp_sense *s, const rp_dns_question *question) {
  const rp_dns_name *name = &question->name;
  int cls = 0;

  if (s->state == RP_SENSE_DONE) {
    return 0;
  }
  ++s->seen;
  /* wire[0] is the first label's length; the root alone is len 1. */
  if (question->qtype == RP_DNS_TYPE_TXT && name->len > 1 &&
      (size_t)name->wire[0] + 1 < name->len) {
    cls = sense_label_class(name->wire + 1, name->wire[0]);
  }
  if (cls != 0) {
    ++s->looked;
    s->base36 += cls == 2;
  }
  if (s->looked >= RP_SENSE_QUERIES) {
    if (2 * s->base36 >= s->looked) {
      s->kind = RP_KIND_MASTERDNS;
    } else if (s->base36 == 0) {
      s->kind = RP_KIND_DNSTT;
    }
    s->state = RP_SENSE_DONE;
    return 1;
  }
  if (s->seen >= RP_SENSE_GIVE_UP) {
    s->state = RP_SENSE_DONE;
    return 1;
  }
  return 0;
}
