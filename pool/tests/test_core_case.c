/*
 * test_core_case.c: DNS 0x20 (pool/core/case.h): the pattern and the
 * check themselves, a resolver's fallback and proofs, and the pool with
 * the fake-clock harness: mixed case on the sends of the generic kind,
 * never on a tunnel's names, an answer in another case not delivered,
 * the client's own case back, a resolver that folds the case, a forger
 * who tries to make one fall back, and the same trace for the same seed.
 */
#include "test_core_harness.h"

#include <stdio.h>
#include <string.h>

#include "case.h"

/* ---------------------------------------------------------------- */
/* Helpers                                                            */
/* ---------------------------------------------------------------- */

/* REC_MAX is how many sends a recorder keeps. */
#define REC_MAX 8192

/* rec records the sends and checks the deliveries of a pool test. */
typedef struct rec {
  size_t nsends;
  /* names and ids of the sends, in order; flags their send flags. */
  rp_dns_name names[REC_MAX];
  uint16_t ids[REC_MAX];
  uint32_t res[REC_MAX];
  uint32_t flags[REC_MAX];
  /* label: the queries are h_submit_label(label) when not NULL, else
     h_submit: the deliver hook rebuilds the client's name from it. */
  const char *label;
  /* delivered answers whose question is not the client's byte for
     byte, and those that carry the forged payload; records owned by the
     question's name in another case than the client's. */
  size_t wrong_case, forged, wrong_owner;
  size_t checked;
} rec;

/* FORGED is the TXT payload of the tests' forgeries. */
static const uint8_t k_forged[] = "FORGED";

static rp_dns_question question_of(const uint8_t *data, size_t len) {
  rp_dns_msg msg;

  assert_int_equal(rp_dns_parse(&msg, data, len), 0);
  assert_true(msg.has_question);
  return msg.question;
}

static void rec_send(harness *h, uint32_t res, const uint8_t *data, size_t len,
                     uint32_t flags) {
  rec *r = h->hook_data;

  if (r->nsends < REC_MAX) {
    r->names[r->nsends] = question_of(data, len).name;
    r->ids[r->nsends] = rp_dns_get_id(data);
    r->res[r->nsends] = res;
    r->flags[r->nsends] = flags;
    ++r->nsends;
  }
}

/* client_name builds the name client query |qn| asked for. */
static rp_dns_name client_name(const rec *r, uint64_t qn) {
  rp_dns_name name;
  char text[160];

  if (r->label != NULL) {
    snprintf(text, sizeof(text), "%s.q%llu.t.example", r->label,
             (unsigned long long)qn);
  } else {
    h_query_name(qn, text, sizeof(text));
  }
  assert_int_equal(rp_dns_name_from_text(&name, text), 0);
  return name;
}

static void rec_deliver(harness *h, const rp_client *client,
                        const uint8_t *data, size_t len, uint32_t flags) {
  rec *r = h->hook_data;
  rp_dns_msg msg;
  rp_dns_name want = client_name(r, client->id);
  size_t i;

  assert_int_equal(rp_dns_parse(&msg, data, len), 0);
  ++r->checked;
  if (!msg.has_question || !rp_dns_name_equal(&msg.question.name, &want)) {
    ++r->wrong_case;
  }
  if (flags & RP_DELIVER_FAILED) {
    return;
  }
  for (i = 0; i < msg.nanswers; ++i) {
    uint8_t txt[64];
    rp_ssize n;

    if (rp_dns_name_equal_nocase(&msg.answers[i].name, &want) &&
        !rp_dns_name_equal(&msg.answers[i].name, &want)) {
      ++r->wrong_owner;
    }
    n = rp_dns_txt_read(&msg, &msg.answers[i], txt, sizeof(txt));

    if (n == (rp_ssize)(sizeof(k_forged) - 1) &&
        memcmp(txt, k_forged, sizeof(k_forged) - 1) == 0) {
      ++r->forged;
    }
  }
}

/* start starts |h| with |set| (NULL: h_default_settings) and seed
   |seed|, recording its sends and deliveries into |r|. */
static void start(harness *h, rec *r, const rp_settings *set, uint64_t seed) {
  rp_settings def;

  if (set == NULL) {
    h_default_settings(&def);
    set = &def;
  }
  assert_int_equal(h_init(h, set, seed), 0);
  memset(r, 0, sizeof(*r));
  h->send_hook = rec_send;
  h->deliver_hook = rec_deliver;
  h->hook_data = r;
}

/* assert_clean asserts that no query of |h| failed and that none was
   delivered in a case other than the client's (|r|). */
static void assert_clean(const harness *h, const rec *r) {
  assert_int_equal(r->wrong_case, 0);
  assert_int_equal(h->failed, 0);
}

/* assert_case_stats asserts resolver |i|'s case_fallback and
   case_mismatches counters. */
static void assert_case_stats(harness *h, size_t i, uint64_t fallback,
                              uint64_t mismatches) {
  assert_int_equal(h_rstats(h, i).case_fallback, fallback);
  assert_int_equal(h_rstats(h, i).case_mismatches, mismatches);
}

/* case_differs returns 1 if |a| and |b| are the same name in another
   case, 0 if they are the same bytes; it fails on another name. */
static int case_differs(const rp_dns_name *a, const rp_dns_name *b) {
  assert_true(rp_dns_name_equal_nocase(a, b));
  return !rp_dns_name_equal(a, b);
}

/* forge answers the send |k| of |r| with the question in the case of
   |how| (0: every letter swapped, 1: lower case) and the forged
   payload, as a forger who knows the ID and the name but not the case
   would. */
static void forge(harness *h, const rec *r, size_t k, int how) {
  uint8_t q[512], a[1024];
  rp_dns_msg msg;
  rp_dns_name name = r->names[k];
  rp_ssize n;
  size_t i;

  for (i = 0; i < name.len; ++i) {
    uint8_t c = name.wire[i];
    int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');

    if (letter) {
      name.wire[i] = how == 0 ? (uint8_t)(c ^ 0x20) : (uint8_t)(c | 0x20);
    }
  }
  n = rp_dns_build_query(q, sizeof(q), r->ids[k], &name, RP_DNS_TYPE_TXT,
                         RP_DNS_EDNS_UDP_SIZE);
  assert_true(n > 0);
  assert_int_equal(rp_dns_parse(&msg, q, (size_t)n), 0);
  n = rp_dns_build_txt_answer(a, sizeof(a), &msg, 0, k_forged,
                              sizeof(k_forged) - 1);
  assert_true(n > 0);
  assert_int_equal(
      rp_pool_on_answer(h->pool, r->res[k], a, (size_t)n, 0, h->now), 0);
}

static rp_dns_question q_text(const char *text, uint16_t qtype) {
  rp_dns_question q;

  memset(&q, 0, sizeof(q));
  assert_int_equal(rp_dns_name_from_text(&q.name, text), 0);
  q.qtype = qtype;
  q.qclass = RP_DNS_CLASS_IN;
  return q;
}

/* ---------------------------------------------------------------- */
/* The module                                                         */
/* ---------------------------------------------------------------- */

/* The pattern flips letters only, each about half the time over seeds,
   and twice gives the bytes back; different seeds give different
   names. */
static void test_core_case_apply(void **state) {
  rp_dns_question base = q_text("abc-12.xyz_9.EXAMPLE.org", RP_DNS_TYPE_A);
  uint32_t flips[RP_DNS_MAX_NAME_LEN] = {0};
  rp_dns_name first = base.name;
  size_t i, distinct = 0;
  uint64_t seed;

  (void)state;
  for (seed = 1; seed <= 1000; ++seed) {
    rp_dns_name n = base.name;

    rp_case_apply(n.wire, n.len, seed * 0x9e3779b97f4a7c15ULL);
    assert_true(rp_dns_name_equal_nocase(&n, &base.name));
    for (i = 0; i < n.len; ++i) {
      flips[i] += n.wire[i] != base.name.wire[i];
    }
    if (seed == 1) {
      first = n;
    } else {
      distinct += !rp_dns_name_equal(&n, &first);
    }
    rp_case_apply(n.wire, n.len, seed * 0x9e3779b97f4a7c15ULL);
    assert_true(rp_dns_name_equal(&n, &base.name));
  }
  for (i = 0; i < base.name.len; ++i) {
    uint8_t c = base.name.wire[i];
    int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');

    if (letter) {
      assert_in_range(flips[i], 400, 600);
    } else {
      /* Length bytes, digits, '-' and '_' never change. */
      assert_int_equal(flips[i], 0);
    }
  }
  assert_true(distinct >= 995);
}

/* An answer matches only in the case sent; the same name in another
   case is FOLDED, anything else OTHER. */
static void test_core_case_check(void **state) {
  rp_dns_question base = q_text("www.Example.com", RP_DNS_TYPE_A);
  rp_dns_question sent = base, got;
  const uint64_t seed = 0x1234567890abcdefULL;
  size_t i;

  (void)state;
  rp_case_apply(sent.name.wire, sent.name.len, seed);
  assert_int_equal(rp_case_check(&base, seed, &sent), RP_CASE_MATCH);
  /* The client's own case is another case (the pattern flips some). */
  assert_true(case_differs(&sent.name, &base.name));
  assert_int_equal(rp_case_check(&base, seed, &base), RP_CASE_FOLDED);
  /* One letter swapped. */
  got = sent;
  got.name.wire[2] ^= 0x20;
  assert_int_equal(rp_case_check(&base, seed, &got), RP_CASE_FOLDED);
  /* Lower-cased. */
  got = sent;
  for (i = 0; i < got.name.len; ++i) {
    if (got.name.wire[i] >= 'A' && got.name.wire[i] <= 'Z') {
      got.name.wire[i] = (uint8_t)(got.name.wire[i] | 0x20);
    }
  }
  assert_int_equal(rp_case_check(&base, seed, &got), RP_CASE_FOLDED);
  /* Another letter, another type, class or name. */
  got = sent;
  got.name.wire[2] = (uint8_t)(got.name.wire[2] == 'x' ? 'y' : 'x');
  assert_int_equal(rp_case_check(&base, seed, &got), RP_CASE_OTHER);
  got = sent;
  got.qtype = RP_DNS_TYPE_AAAA;
  assert_int_equal(rp_case_check(&base, seed, &got), RP_CASE_OTHER);
  got = sent;
  got.qclass = 3;
  assert_int_equal(rp_case_check(&base, seed, &got), RP_CASE_OTHER);
  got = q_text("www.Example.co", RP_DNS_TYPE_A);
  assert_int_equal(rp_case_check(&base, seed, &got), RP_CASE_OTHER);
  /* A non-letter byte whose 0x20 bit differs ('-' 0x2d, '\r' 0x0d). */
  base = q_text("a-b.example", RP_DNS_TYPE_A);
  sent = base;
  rp_case_apply(sent.name.wire, sent.name.len, seed);
  got = sent;
  got.name.wire[2] = 0x0d;
  assert_int_equal(rp_case_check(&base, seed, &got), RP_CASE_OTHER);
}

/* A proof needs both cases and RP_CASE_PROOF_LETTERS letters. */
static void test_core_case_proof_flag(void **state) {
  rp_dns_question q = q_text("abcdefgh.io", RP_DNS_TYPE_A);
  uint64_t seed;
  int proofs = 0, none = 0;

  (void)state;
  for (seed = 1; seed <= 200; ++seed) {
    rp_dns_name n = q.name;
    uint32_t f = rp_case_apply(n.wire, n.len, seed);
    int up = 0, low = 0;
    size_t i;

    for (i = 0; i < n.len; ++i) {
      up |= n.wire[i] >= 'A' && n.wire[i] <= 'Z';
      low |= n.wire[i] >= 'a' && n.wire[i] <= 'z';
    }
    assert_int_equal(f == RP_CASE_PROOF, up && low);
    proofs += f == RP_CASE_PROOF;
    none += f == 0;
  }
  assert_true(proofs > 190);
  /* Seven letters are too few. */
  q = q_text("abcdefg", RP_DNS_TYPE_A);
  for (seed = 1; seed <= 50; ++seed) {
    rp_dns_name n = q.name;

    assert_int_equal(rp_case_apply(n.wire, n.len, seed), 0);
  }
  (void)none;
}

/* Only a question of a type other than PTR, with a letter, in wire form
   after the header, may go with 0x20. */
static void test_core_case_eligible(void **state) {
  uint8_t buf[512];
  rp_dns_name name;
  rp_dns_brief b;
  rp_ssize n;

  (void)state;
  assert_int_equal(rp_dns_name_from_text(&name, "q1.example"), 0);
  n = rp_dns_build_query(buf, sizeof(buf), 7, &name, RP_DNS_TYPE_TXT, 0);
  assert_int_equal(rp_dns_parse_brief(&b, buf, (size_t)n), 0);
  assert_true(rp_case_eligible(buf, (size_t)n, &b.question));
  n = rp_dns_build_query(buf, sizeof(buf), 7, &name, RP_DNS_TYPE_PTR, 0);
  assert_int_equal(rp_dns_parse_brief(&b, buf, (size_t)n), 0);
  assert_false(rp_case_eligible(buf, (size_t)n, &b.question));
  assert_int_equal(rp_dns_name_from_text(&name, "1.2.3.4"), 0);
  n = rp_dns_build_query(buf, sizeof(buf), 7, &name, RP_DNS_TYPE_A, 0);
  assert_int_equal(rp_dns_parse_brief(&b, buf, (size_t)n), 0);
  assert_false(rp_case_eligible(buf, (size_t)n, &b.question));
  /* A question name written as a pointer into the header ("\x01" at
     offset 4 then the root): parses, but is not in wire form there. */
  {
    static const uint8_t ptr[] = {0, 7, 1, 0,    0, 1, 0, 0, 0,
                                  0, 0, 0, 0xc0, 4, 0, 1, 0, 1};

    if (rp_dns_parse_brief(&b, ptr, sizeof(ptr)) == 0 && b.has_question) {
      assert_false(rp_case_eligible(ptr, sizeof(ptr), &b.question));
    }
  }
}

/* The fallback: case_fallback first misses with no proof in between,
   none within case_proof_life; a proof ends it. */
static void test_core_case_fallback_rule(void **state) {
  rp_settings set;
  rp_case_res c;
  rp_tstamp now = 1 * S;

  (void)state;
  rp_settings_default(&set, RP_KIND_GENERIC);
  assert_int_equal(set.case_fallback, 3);
  rp_case_res_init(&c);
  /* Never proven: three first misses. A second miss of a try counts
     as a mismatch only. */
  assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 0);
  assert_int_equal(rp_case_res_mismatch(&c, 0, &set, now), 0);
  assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 0);
  assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 1);
  assert_int_equal(c.mode, RP_CASE_FALLBACK);
  assert_int_equal(c.mismatches, 4);
  /* A match that is no proof changes nothing; a proof checks again. */
  assert_int_equal(rp_case_res_match(&c, 0, now), 0);
  assert_int_equal(c.mode, RP_CASE_FALLBACK);
  assert_int_equal(rp_case_res_match(&c, RP_CASE_PROOF, now), 1);
  assert_int_equal(c.mode, RP_CASE_STRICT);
  assert_int_equal(c.misses, 0);
  /* Within case_proof_life of the proof no count of misses falls back. */
  for (int i = 0; i < 100; ++i) {
    now += 100 * MS;
    assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 0);
  }
  /* Past it, the next miss does (misses since the proof >= 3). */
  now += set.case_proof_life;
  assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 1);
  /* A proof between misses starts the count again. */
  rp_case_res_match(&c, RP_CASE_PROOF, now);
  set.case_proof_life = 0;
  assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 0);
  assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 0);
  rp_case_res_match(&c, RP_CASE_PROOF, now);
  assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 0);
  assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 0);
  assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 1);
  /* case_fallback 0: never; case_proof_life none: a proof holds for
     ever. */
  rp_case_res_init(&c);
  set.case_fallback = 0;
  for (int i = 0; i < 100; ++i) {
    assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 0);
  }
  rp_case_res_init(&c);
  set.case_fallback = 3;
  set.case_proof_life = RP_TSTAMP_UNSET;
  rp_case_res_match(&c, RP_CASE_PROOF, now);
  now += 24 * 3600 * S;
  for (int i = 0; i < 100; ++i) {
    assert_int_equal(rp_case_res_mismatch(&c, 1, &set, now), 0);
  }
}

/* ---------------------------------------------------------------- */
/* The pool                                                           */
/* ---------------------------------------------------------------- */

/* Kind generic: every send carries the client's name in a case of its
   own (a pattern per try), every answer goes back in the client's case,
   and copies' answers that repeat one are still judged repeats. */
static void test_core_case_generic_sends(void **state) {
  static harness h;
  static rec r;
  rp_settings set;
  size_t k, differ = 0, distinct = 0;

  (void)state;
  h_default_settings(&set);
  set.duplicate = 2;
  assert_int_equal(set.case_randomize, 1);
  start(&h, &r, &set, 11);
  r.label = "MiXeDcAsE";
  h_add(&h, &(h_fake){.delay = 20 * MS});
  h_add(&h, &(h_fake){.delay = 20 * MS});
  for (k = 0; k < 200; ++k) {
    h_submit_label(&h, r.label);
    h_step_to(&h, h.now + 10 * MS);
  }
  h_step_to(&h, h.now + 3 * S);
  assert_int_equal(h.delivered, 200);
  assert_int_equal(h.failed, 0);
  assert_true(r.nsends > 200);
  for (k = 0; k < r.nsends; ++k) {
    rp_dns_name want;
    char text[160];

    snprintf(text, sizeof(text), "%s.q%llu.t.example", r.label,
             (unsigned long long)h.sends[k].qn);
    assert_int_equal(rp_dns_name_from_text(&want, text), 0);
    differ += (size_t)case_differs(&r.names[k], &want);
    distinct +=
        (size_t)(k > 0 && !rp_dns_name_equal(&r.names[k], &r.names[k - 1]));
  }
  print_message("%zu sends, %zu in another case than the client's, %zu "
                "deliveries checked\n",
                r.nsends, differ, r.checked);
  /* 18 letters: the client's own case comes up once in 2^18. */
  assert_int_equal(differ, r.nsends);
  assert_int_equal(distinct, r.nsends - 1);
  assert_int_equal(r.wrong_case, 0);
  assert_int_equal(r.checked, h.delivered + h.extra);
  /* The copies' answers repeat the first (a plain resolver): after the
     client's case is restored they are the same bytes. */
  assert_true(h_pstats(&h).copies > 0);
  assert_true(h_pstats(&h).repeats_dropped > 0);
  assert_int_equal(h_pstats(&h).spoofed, 0);
  assert_int_equal(h_pstats(&h).case_mismatches, 0);
  assert_int_equal(h.id_mismatch, 0);
  h_free(&h);
}

/* A resolver that writes its records' owner name in full (no pointer
   to the question) echoes the 0x20 case there too: the client gets its
   own case in those records as well, and the answers to a query's
   copies, the same record, are judged repeats, not data. */
static void test_core_case_full_owner(void **state) {
  static harness h;
  static rec r;
  rp_settings set;
  rp_pool_stats ps;
  size_t k;

  (void)state;
  h_default_settings(&set);
  set.duplicate = 2;
  start(&h, &r, &set, 13);
  h_add(&h, &(h_fake){.delay = 20 * MS, .full_owner = 1});
  h_add(&h, &(h_fake){.delay = 20 * MS, .full_owner = 1});
  for (k = 0; k < 300; ++k) {
    h_submit(&h);
    h_step_to(&h, h.now + 10 * MS);
  }
  h_step_to(&h, h.now + 3 * S);
  ps = h_pstats(&h);
  print_message(
      "copies %llu: data %llu, repeat %llu\n", (unsigned long long)ps.copies,
      (unsigned long long)ps.copies_data, (unsigned long long)ps.copies_repeat);
  assert_int_equal(h.delivered, 300);
  assert_int_equal(r.wrong_case, 0);
  assert_int_equal(r.wrong_owner, 0);
  assert_true(ps.copies > 0);
  assert_int_equal(ps.copies_data, 0);
  assert_true(ps.copies_repeat > 0);
  /* Copies stop paying: a few probes every copy_probe_interval. */
  assert_true(ps.copies < 40);
  h_free(&h);
}

/* sends_untouched checks that every recorded send carries its client's
   name byte for byte. */
static void sends_untouched(const harness *h, const rec *r, size_t from) {
  size_t k;

  for (k = from; k < r->nsends; ++k) {
    rp_dns_name want = client_name(r, h->sends[k].qn);

    assert_true(rp_dns_name_equal(&r->names[k], &want));
  }
}

/* dnstt and masterdns never touch a name, nor does generic with the
   setting off; a stream retry and a PTR question go as the client wrote
   them. */
static void test_core_case_untouched(void **state) {
  static const rp_kind kinds[] = {RP_KIND_DNSTT, RP_KIND_MASTERDNS,
                                  RP_KIND_GENERIC};
  static harness h;
  static rec r;
  rp_settings set;
  size_t i, k;

  (void)state;
  for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i) {
    h_kind_settings(&set, kinds[i]);
    if (kinds[i] == RP_KIND_GENERIC) {
      assert_int_equal(set.case_randomize, 1);
      set.case_randomize = 0;
    } else {
      assert_int_equal(set.case_randomize, 0);
      /* Whatever a config asks. */
      set.case_randomize = 1;
      assert_int_equal(rp_settings_restrict(&set, kinds[i]), 1);
      assert_int_equal(set.case_randomize, 0);
    }
    start(&h, &r, &set, 5);
    r.label = "AbCdEfGhIjKlMnOpQrStUvWxYz234567";
    h_add(&h, &(h_fake){.delay = 10 * MS, .varied = 1});
    h_add(&h, &(h_fake){.delay = 15 * MS, .varied = 1});
    for (k = 0; k < 100; ++k) {
      h_submit_label(&h, r.label);
      h_step_to(&h, h.now + 5 * MS);
    }
    h_step_to(&h, h.now + 3 * S);
    assert_int_equal(h.delivered, 100);
    sends_untouched(&h, &r, 0);
    assert_int_equal(r.wrong_case, 0);
    h_free(&h);
  }
  /* Generic on: the stream retry of a truncated answer, and PTR. */
  start(&h, &r, NULL, 6);
  h_add(&h, &(h_fake){.delay = 10 * MS,
                      .truncate = 1,
                      .flags = RP_RESOLVER_TCP_FALLBACK});
  h_submit(&h);
  h_step_to(&h, h.now + 1 * S);
  assert_int_equal(h.delivered, 1);
  assert_int_equal(r.nsends, 2);
  assert_int_equal(r.flags[1], RP_SEND_STREAM);
  assert_true(case_differs(&r.names[0], &r.names[1]));
  sends_untouched(&h, &r, 1);
  assert_int_equal(r.wrong_case, 0);
  {
    uint8_t buf[512];
    rp_dns_name name;
    rp_client client = {.id = 1};
    rp_ssize n;

    assert_int_equal(rp_dns_name_from_text(&name, "q1.t.example"), 0);
    n = rp_dns_build_query(buf, sizeof(buf), 1, &name, RP_DNS_TYPE_PTR, 0);
    h.qn = 2;
    assert_int_equal(rp_pool_submit(h.pool, buf, (size_t)n, &client, h.now), 0);
    h_step_to(&h, h.now + 1 * S);
    /* Over UDP, then over the stream after the truncated answer. */
    assert_int_equal(r.nsends, 4);
    assert_true(rp_dns_name_equal(&r.names[2], &name));
    assert_true(rp_dns_name_equal(&r.names[3], &name));
  }
  h_free(&h);
}

/* Kind auto: nothing is touched before the verdict, nor after a dnstt
   one (even when its settings ask for 0x20); after a generic one (a
   stub's names), the sends are mixed. */
static void test_core_case_auto_kind(void **state) {
  static harness h;
  static rec r;
  rp_settings set, by_kind[RP_KIND_COUNT];
  size_t k, before, differ = 0;

  (void)state;
  for (int run = 0; run < 2; ++run) {
    h_default_settings(&set);
    start(&h, &r, &set, 21 + (uint64_t)run);
    for (k = 0; k < RP_KIND_COUNT; ++k) {
      rp_settings_default(&by_kind[k], (rp_kind)k);
      by_kind[k].max_inflight = set.max_inflight;
      by_kind[k].max_resolvers = set.max_resolvers;
      by_kind[k].duplicate = 1;
      /* As a config's "tuning" or --set would for every kind. */
      by_kind[k].case_randomize = 1;
    }
    assert_int_equal(rp_pool_sense_kind(h.pool, by_kind), 0);
    h_add(&h, &(h_fake){.delay = 5 * MS, .varied = 1});
    if (run == 0) {
      /* dnstt's base32 first labels. */
      r.label = "j6r5hluc45znabcdefgh";
      for (k = 0; k < 100; ++k) {
        h_submit_label(&h, r.label);
        h_step_to(&h, h.now + 5 * MS);
      }
      assert_int_equal(rp_pool_kind(h.pool), RP_KIND_DNSTT);
      h_step_to(&h, h.now + 2 * S);
      sends_untouched(&h, &r, 0);
      assert_int_equal(h.delivered, 100);
    } else {
      /* A stub's names: no verdict until RP_SENSE_GIVE_UP (1024). */
      for (k = 0; k < 1023; ++k) {
        h_submit(&h);
        h_step_to(&h, h.now + 2 * MS);
      }
      assert_int_equal(rp_pool_kind(h.pool), RP_KIND_AUTO);
      h_step_to(&h, h.now + 1 * S);
      sends_untouched(&h, &r, 0);
      before = r.nsends;
      for (k = 0; k < 100; ++k) {
        h_submit(&h);
        h_step_to(&h, h.now + 2 * MS);
      }
      assert_int_equal(rp_pool_kind(h.pool), RP_KIND_GENERIC);
      h_step_to(&h, h.now + 1 * S);
      for (k = before; k < r.nsends; ++k) {
        rp_dns_name want = client_name(&r, h.sends[k].qn);

        differ += (size_t)case_differs(&r.names[k], &want);
      }
      print_message("after the generic verdict: %zu of %zu sends in "
                    "another case\n",
                    differ, r.nsends - before);
      /* "q1100.t.example": 9 letters, the client's case once in 512. */
      assert_true(differ + 3 >= r.nsends - before);
      assert_int_equal(h.delivered, 1123);
    }
    assert_clean(&h, &r);
    h_free(&h);
  }
}

/* A forgery with the right ID and question in another case is not
   delivered (counted spoofed): the query goes out again at once, the
   try stays open, and the genuine answer is delivered in the client's
   case. */
static void test_core_case_wrong_case_rejected(void **state) {
  static harness h;
  static rec r;
  rp_pool_stats ps;

  (void)state;
  start(&h, &r, NULL, 31);
  h_add(&h, &(h_fake){.delay = 50 * MS});
  h_submit(&h);
  assert_int_equal(r.nsends, 1);
  h_step_to(&h, h.now + 1 * MS);
  /* Swapped case, then lower case: neither is delivered. */
  forge(&h, &r, 0, 0);
  ps = h_pstats(&h);
  assert_int_equal(ps.spoofed, 1);
  assert_int_equal(ps.case_mismatches, 1);
  assert_int_equal(h.delivered, 0);
  /* Sent again at once (the only resolver: there), its own pattern. */
  assert_int_equal(r.nsends, 2);
  assert_true(r.ids[1] != r.ids[0]);
  assert_true(case_differs(&r.names[0], &r.names[1]));
  forge(&h, &r, 0, 1);
  assert_int_equal(h_pstats(&h).spoofed, 2);
  assert_int_equal(h.delivered, 0);
  /* The genuine answers come: the first try's is delivered. */
  h_step_to(&h, h.now + 1 * S);
  assert_int_equal(h.delivered, 1);
  assert_int_equal(r.forged, 0);
  assert_clean(&h, &r);
  assert_case_stats(&h, 0, 0, 2);
  assert_int_equal(h_rstats(&h, 0).dropped, 0);
  assert_int_equal(h_pstats(&h).inflight, 0);
  h_free(&h);
}

/* A resolver that lower-cases its answers' questions falls back after
   case_fallback misses and then serves every query; a proof turns the
   check on again. Beside a resolver that keeps the case, nothing is
   lost either. */
static void test_core_case_folding_resolver(void **state) {
  static harness h;
  static rec r;
  rp_resolver_stats rs;
  rp_tstamp first_answer;

  (void)state;
  start(&h, &r, NULL, 41);
  h_add(&h, &(h_fake){.delay = 20 * MS, .fold_case = 1});
  h_submit(&h);
  h_step_to(&h, h.now + 1 * S);
  /* The first query: three answers in another case, then the fourth
     taken (four round trips). */
  assert_int_equal(h.delivered, 1);
  first_answer = h.first_at[0] - h.submit_at[0];
  print_message("first answer after %.0f ms, %zu sends\n",
                (double)first_answer / 1e6, r.nsends);
  assert_true(first_answer <= 4 * 20 * MS + 1 * MS);
  assert_int_equal(r.nsends, 3);
  rs = h_rstats(&h, 0);
  assert_int_equal(rs.case_fallback, 1);
  assert_int_equal(rs.case_mismatches, 3);
  assert_int_equal(h_pstats(&h).case_fallbacks, 1);
  assert_int_equal(h_pstats(&h).spoofed, 2);
  assert_non_null(strstr(h.last_log, "ev=case_fallback"));
  /* Then every query, still with 0x20 names. */
  h_run(&h, 5 * S, 50.0);
  h_step_to(&h, h.now + 3 * S);
  assert_int_equal(h.delivered, h.qn);
  assert_clean(&h, &r);
  {
    /* Fallen back, it still gets 0x20 names. */
    size_t k, differ = 0;

    for (k = 3; k < r.nsends; ++k) {
      rp_dns_name want = client_name(&r, h.sends[k].qn);

      differ += (size_t)case_differs(&r.names[k], &want);
    }
    assert_true(differ + 3 >= r.nsends - 3);
  }
  rs = h_rstats(&h, 0);
  assert_int_equal(rs.dropped, 0);
  assert_int_equal(rs.state, RP_RESOLVER_ACTIVE);
  /* It keeps the case again: its first proof checks it again. */
  h.fakes[0].fold_case = 0;
  h_run(&h, 1 * S, 10.0);
  h_step_to(&h, h.now + 1 * S);
  assert_int_equal(h_rstats(&h, 0).case_fallback, 0);
  assert_int_equal(h.delivered, h.qn);
  h_free(&h);

  /* A folding and a keeping resolver. */
  start(&h, &r, NULL, 43);
  h_add(&h, &(h_fake){.delay = 20 * MS, .fold_case = 1});
  h_add(&h, &(h_fake){.delay = 20 * MS});
  h_run(&h, 5 * S, 100.0);
  h_step_to(&h, h.now + 3 * S);
  assert_int_equal(h.delivered, h.qn);
  assert_clean(&h, &r);
  assert_int_equal(h_rstats(&h, 0).case_fallback, 1);
  assert_case_stats(&h, 1, 0, 0);
  assert_int_equal(h_pstats(&h).case_fallbacks, 1);
  h_free(&h);
}

/* A forger who knows every ID and name (the best a blind one gets by
   luck) answers each first try at once in another case: nothing forged
   is delivered and the resolver, whose genuine answers are proofs, never
   falls back. */
static void test_core_case_forger_no_fallback(void **state) {
  static harness h;
  static rec r;
  static uint8_t done[600];
  size_t seen = 0, forged = 0, k;

  (void)state;
  start(&h, &r, NULL, 51);
  h_add(&h, &(h_fake){.delay = 30 * MS});
  for (int i = 0; i < 500; ++i) {
    h_submit(&h);
    h_step_to(&h, h.now + 5 * MS);
    for (k = seen; k < r.nsends; ++k) {
      if (!done[h.sends[k].qn]) {
        done[h.sends[k].qn] = 1;
        forge(&h, &r, k, (int)(k & 1));
        ++forged;
      }
    }
    seen = r.nsends;
  }
  h_step_to(&h, h.now + 3 * S);
  print_message("%zu forgeries, %llu spoofed, %zu sends for %llu queries\n",
                forged, (unsigned long long)h_pstats(&h).spoofed, r.nsends,
                (unsigned long long)h.qn);
  assert_int_equal(forged, 500);
  assert_int_equal(h.delivered, 500);
  assert_int_equal(r.forged, 0);
  assert_clean(&h, &r);
  assert_int_equal(h_rstats(&h, 0).case_fallback, 0);
  assert_int_equal(h_pstats(&h).case_fallbacks, 0);
  assert_true(h_pstats(&h).spoofed >= 500);
  h_free(&h);
}

/* The probe of a down resolver (probe_name) goes with a 0x20 name; an
   answer in another case does not bring it back, the genuine one does. */
static void test_core_case_probe(void **state) {
  static harness h;
  static rec r;
  rp_settings set;
  size_t k;

  (void)state;
  h_default_settings(&set);
  snprintf(set.probe_name, sizeof(set.probe_name), "probe.example.net");
  start(&h, &r, &set, 61);
  h_add(&h, &(h_fake){.delay = 10 * MS, .dead = 1});
  for (k = 0; k < 10; ++k) {
    h_submit(&h);
    h_step_to(&h, h.now + 3 * S);
  }
  assert_int_equal(h_rstats(&h, 0).state, RP_RESOLVER_DOWN);
  /* Idle: the next probe is a built one; answer it while it is open. */
  h_step_to(&h, h.now + set.deadline);
  k = r.nsends;
  while (r.nsends == k) {
    h_step_to(&h, h.now + 10 * MS);
  }
  assert_int_equal(r.nsends, k + 1);
  assert_int_equal(r.flags[k], RP_SEND_PROBE);
  {
    rp_dns_name want;

    assert_int_equal(rp_dns_name_from_text(&want, "probe.example.net"), 0);
    assert_true(case_differs(&r.names[k], &want));
  }
  forge(&h, &r, k, 0);
  assert_int_equal(h_rstats(&h, 0).state, RP_RESOLVER_DOWN);
  assert_int_equal(h_pstats(&h).case_mismatches, 1);
  /* The genuine answer: the bytes sent, echoed. */
  {
    uint8_t a[1024];
    rp_dns_msg msg;
    rp_ssize n;

    assert_int_equal(rp_dns_parse(&msg, h.last_send, h.last_send_len), 0);
    n = rp_dns_build_txt_answer(a, sizeof(a), &msg, 0, (const uint8_t *)"ok",
                                2);
    assert_int_equal(
        rp_pool_on_answer(h.pool, r.res[k], a, (size_t)n, 0, h.now), 0);
  }
  assert_int_equal(h_rstats(&h, 0).state, RP_RESOLVER_PROBATION);
  h_free(&h);
}

/* The same seed gives the same sends, names included; another seed
   other names. */
static void test_core_case_determinism(void **state) {
  static harness h;
  static rec r;
  static rp_dns_name names[REC_MAX];
  rp_settings set;
  uint64_t hash[3];
  size_t n = 0;

  (void)state;
  for (int i = 0; i < 3; ++i) {
    h_default_settings(&set);
    set.duplicate = 2;
    start(&h, &r, &set, i < 2 ? 71 : 72);
    h_add(&h, &(h_fake){.delay = 20 * MS, .loss = 0.1});
    h_add(&h, &(h_fake){.delay = 30 * MS, .fold_case = 1});
    h_run(&h, 2 * S, 200.0);
    h_step_to(&h, h.now + 6 * S);
    hash[i] = h.hash;
    if (i == 0) {
      n = r.nsends;
      memcpy(names, r.names, n * sizeof(names[0]));
    } else if (i == 1) {
      assert_int_equal(r.nsends, n);
      assert_memory_equal(names, r.names, n * sizeof(names[0]));
    }
    h_free(&h);
  }
  assert_true(hash[0] == hash[1]);
  assert_true(hash[0] != hash[2]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_core_case_apply),
      cmocka_unit_test(test_core_case_check),
      cmocka_unit_test(test_core_case_proof_flag),
      cmocka_unit_test(test_core_case_eligible),
      cmocka_unit_test(test_core_case_fallback_rule),
      cmocka_unit_test(test_core_case_generic_sends),
      cmocka_unit_test(test_core_case_full_owner),
      cmocka_unit_test(test_core_case_untouched),
      cmocka_unit_test(test_core_case_auto_kind),
      cmocka_unit_test(test_core_case_wrong_case_rejected),
      cmocka_unit_test(test_core_case_folding_resolver),
      cmocka_unit_test(test_core_case_forger_no_fallback),
      cmocka_unit_test(test_core_case_probe),
      cmocka_unit_test(test_core_case_determinism),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
