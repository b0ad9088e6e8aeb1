/*
 * test_core_harness.c: the simulated resolvers and clients of the core
 * unit tests (see test_core_harness.h).
 */
#include "test_core_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* H_FNV_* are the 64-bit FNV-1a constants. */
#define H_FNV_OFFSET 0xcbf29ce484222325ULL
#define H_FNV_PRIME 0x100000001b3ULL
/* H_MAX_STEPS guards against a pool that never lets time advance. */
#define H_MAX_STEPS 50000000UL

static uint64_t h_next(uint64_t *s) {
  /* xorshift64* */
  uint64_t x = *s;

  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545f4914f6cdd1dULL;
}

static double h_unit(uint64_t *s) {
  return (double)(h_next(s) >> 11) / 9007199254740992.0;
}

static void h_hash(harness *h, const void *data, size_t len) {
  const uint8_t *p = data;
  size_t i;

  for (i = 0; i < len; ++i) {
    h->hash ^= p[i];
    h->hash *= H_FNV_PRIME;
  }
}

static void h_hash_u64(harness *h, uint64_t v) { h_hash(h, &v, sizeof(v)); }

/* Event heap ------------------------------------------------------- */

static int h_ev_less(const h_event *a, const h_event *b) {
  return a->at != b->at ? a->at < b->at : a->seq < b->seq;
}

static void h_push(harness *h, h_event *e) {
  size_t i;

  if (h->nheap == h->heapcap) {
    h->heapcap = h->heapcap ? h->heapcap * 2 : 256;
    h->heap = test_realloc(h->heap, h->heapcap * sizeof(*h->heap));
    assert_non_null(h->heap);
  }
  i = h->nheap++;
  h->heap[i] = e;
  while (i > 0 && h_ev_less(h->heap[i], h->heap[(i - 1) / 2])) {
    h_event *t = h->heap[i];
    h->heap[i] = h->heap[(i - 1) / 2];
    h->heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static h_event *h_pop(harness *h) {
  h_event *top = h->heap[0];
  size_t i = 0, l, m;

  h->heap[0] = h->heap[--h->nheap];
  for (;;) {
    l = 2 * i + 1;
    m = i;
    if (l < h->nheap && h_ev_less(h->heap[l], h->heap[m])) {
      m = l;
    }
    if (l + 1 < h->nheap && h_ev_less(h->heap[l + 1], h->heap[m])) {
      m = l + 1;
    }
    if (m == i) {
      break;
    }
    h_event *t = h->heap[i];
    h->heap[i] = h->heap[m];
    h->heap[m] = t;
    i = m;
  }
  return top;
}

/* Callbacks -------------------------------------------------------- */

size_t h_fake_by_res(const harness *h, uint32_t res) {
  size_t i;

  for (i = 0; i < h->nfakes; ++i) {
    if (h->fakes[i].id == res) {
      return i;
    }
  }
  fail_msg("unknown resolver %u", res);
  return 0;
}

static uint64_t h_qn_of(const uint8_t *data, size_t len) {
  rp_dns_msg msg;
  char text[300];
  unsigned long long n = 0;

  if (rp_dns_parse(&msg, data, len) != 0 || !msg.has_question ||
      rp_dns_name_to_text(&msg.question.name, text, sizeof(text)) < 0) {
    return UINT64_MAX;
  }
  /* The pool may send the name with 0x20 case (case.h). */
  for (char *p = text; *p != '\0'; ++p) {
    if (*p >= 'A' && *p <= 'Z') {
      *p = (char)(*p - 'A' + 'a');
    }
  }
  if (sscanf(text, "q%llu.", &n) != 1) {
    /* h_submit_label's names: LABEL.qN.t.example */
    const char *dot = strchr(text, '.');
    if (dot == NULL || sscanf(dot + 1, "q%llu.", &n) != 1) {
      return UINT64_MAX;
    }
  }
  return n;
}

/* h_refuse answers |e|, made for the query |data| of |len| to fake |f|,
   REFUSED after |delay|, and counts it. */
static void h_refuse(harness *h, h_fake *f, h_event *e, const uint8_t *data,
                     size_t len, rp_duration delay) {
  rp_ssize n = rp_dns_build_error(e->buf, sizeof(e->buf), data, len,
                                  RP_DNS_RCODE_REFUSED);

  assert_true(n > 0);
  ++f->refused;
  e->len = (size_t)n;
  e->at = h->now + delay;
  h_push(h, e);
}

/* h_send_record hashes and records a send of |data| to |rid| and counts
   it at fake |f|. */
static void h_send_record(harness *h, h_fake *f, uint32_t rid, uint16_t upid,
                          const uint8_t *data, size_t len, uint32_t flags) {
  rp_resolver_stats rs;

  assert_int_equal(rp_dns_get_id(data), upid);
  h_hash_u64(h, 1);
  h_hash_u64(h, h->now);
  h_hash_u64(h, rid);
  h_hash_u64(h, upid);
  h_hash_u64(h, flags);
  h_hash(h, data, len);
  if (h->nsends < H_MAX_SENDS) {
    h->sends[h->nsends++] = (h_send){.at = h->now,
                                     .res = rid,
                                     .id = upid,
                                     .flags = flags,
                                     .qn = h_qn_of(data, len)};
  }
  if (len <= sizeof(h->last_send)) {
    memcpy(h->last_send, data, len);
    h->last_send_len = len;
  }
  if (h->send_hook != NULL) {
    h->send_hook(h, rid, data, len, flags);
  }
  ++f->got;
  if (flags & RP_SEND_STREAM) {
    ++f->stream_got;
  }
  if (flags & RP_SEND_PROBE) {
    ++f->probes_got;
  }
  if (rp_pool_get_resolver_stats(h->pool, rid, &rs, h->now) == 0 &&
      rs.state == RP_RESOLVER_PROBATION &&
      rs.inflight > f->max_inflight_probation) {
    f->max_inflight_probation = rs.inflight;
  }
}

/* h_fold_case lowers the question name of |msg| in place. */
static void h_fold_case(rp_dns_msg *msg) {
  size_t k;

  for (k = 0; k < msg->question.name.len; ++k) {
    uint8_t c = msg->question.name.wire[k];

    if (c >= 'A' && c <= 'Z') {
      msg->question.name.wire[k] = (uint8_t)(c - 'A' + 'a');
    }
  }
}

/* h_fake_turns_away applies |f|'s rate limit, loss and refusal window to
   the query |data| with its answer event |e|: returns 1 when the query
   is dropped (|e| freed) or refused (|e| scheduled), 0 to answer it. */
static int h_fake_turns_away(harness *h, h_fake *f, h_event *e,
                             const uint8_t *data, size_t len,
                             rp_duration delay) {
  if (f->limit_qps > 0.0) {
    f->tokens += f->limit_qps * (double)(h->now - f->tok_at) / 1e9;
    f->tok_at = h->now;
    if (f->tokens > f->burst) {
      f->tokens = f->burst;
    }
    if (f->tokens < 1.0) {
      if (f->limit_drops) {
        ++f->dropped;
        test_free(e);
        return 1;
      }
      h_refuse(h, f, e, data, len, delay);
      return 1;
    }
    f->tokens -= 1.0;
  }
  if (f->loss > 0.0 && h_unit(&h->fake_rng) < f->loss) {
    ++f->dropped;
    test_free(e);
    return 1;
  }
  if (f->refuse && h->now >= f->refuse_from &&
      (f->refuse_until == 0 || h->now < f->refuse_until)) {
    h_refuse(h, f, e, data, len, delay);
    return 1;
  }
  return 0;
}

/* h_fake_payload_len is the TXT payload length |f| answers the query
   numbered |qn| with: the copy length when the name was seen again
   among the last sends. */
static size_t h_fake_payload_len(const harness *h, h_fake *f, uint64_t qn) {
  size_t plen = f->payload;
  size_t k, seen = 0;

  if (f->payload_copy > 0 && h->nsends >= 2 && qn == f->last_qn) {
    plen = f->payload_copy;
  }
  for (k = h->nsends; k > 0 && k + 8 > h->nsends; --k) {
    seen += h->sends[k - 1].qn == qn;
  }
  if (f->payload_copy > 0 && seen > 1) {
    plen = f->payload_copy;
  }
  f->last_qn = qn;
  return plen;
}

/* h_fake_empty returns 1 if |f| answers query number |qn| empty (the
   same bytes each time): a fixed hash of |qn| under empty_share. */
static int h_fake_empty(const h_fake *f, uint64_t qn) {
  uint64_t z = qn * 0x9e3779b97f4a7c15ULL;

  z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
  z ^= z >> 29;
  return (double)(z >> 11) / 9007199254740992.0 < f->empty_share;
}

/* h_fake_answer builds |f|'s answer to |msg| (the query |data|) into
   |e|'s buffer and returns its length. */
static rp_ssize h_fake_answer(const harness *h, h_fake *f, h_event *e,
                              const rp_dns_msg *msg, const uint8_t *data,
                              size_t len) {
  uint8_t payload[H_MSG_MAX];
  size_t plen;
  uint64_t qn;

  if (f->servfail) {
    return rp_dns_build_error(e->buf, sizeof(e->buf), data, len,
                              RP_DNS_RCODE_SERVFAIL);
  }
  memset(payload, 'x', sizeof(payload));
  qn = h_qn_of(data, len);
  plen = h_fake_payload_len(h, f, qn);
  if (f->varied && !h_fake_empty(f, qn)) {
    snprintf((char *)payload, plen < 12 ? plen : 12, "%011llu",
             (unsigned long long)h->nsends);
  }
  if (f->full_owner) {
    rp_dns_builder b;

    rp_dns_builder_init(&b, e->buf, sizeof(e->buf), msg->hdr.id,
                        (uint16_t)(RP_DNS_FLAG_QR | RP_DNS_FLAG_RD |
                                   RP_DNS_FLAG_RA));
    rp_dns_builder_question(&b, &msg->question.name, msg->question.qtype,
                            msg->question.qclass);
    rp_dns_builder_rr_txt(&b, &msg->question.name, 0, payload, plen);
    return rp_dns_builder_finish(&b);
  }
  return rp_dns_build_txt_answer(e->buf, sizeof(e->buf), msg, 0, payload,
                                 plen);
}

/* h_fake_schedule mangles or truncates |e| as |f| says and queues it
   |delay| from now, or holds it (a held poll) until the next query. */
static void h_fake_schedule(harness *h, h_fake *f, h_event *e, uint32_t flags,
                            rp_duration delay) {
  if (f->mangle == 1) {
    e->buf[3] = (uint8_t)((e->buf[3] & 0xf0u) | 0x0fu);
  } else if (f->mangle == 2) {
    e->buf[2] |= 0x78u;
  }
  if (f->truncate && !(flags & RP_SEND_STREAM)) {
    e->buf[2] |= 0x02;
  }
  e->at = h->now + delay;
  e->counted = 1;
  ++f->inflight;
  if (f->hold > 0) {
    if (f->held != NULL) {
      /* The newer query releases the held one at once. */
      h_event *rel = test_malloc(sizeof(*rel));

      *rel = *f->held;
      rel->at = h->now + delay;
      rel->seq = h->seq++;
      f->held->cancelled = 1;
      h_push(h, rel);
    }
    e->at = h->now + f->hold;
    f->held = e;
  }
  h_push(h, e);
}

static int h_send_cb(rp_pool *pool, uint32_t rid, void *rud, uint16_t upid,
                     const uint8_t *data, size_t len, uint32_t flags,
                     rp_tstamp now, void *ud) {
  harness *h = ud;
  size_t fi = (size_t)(uintptr_t)rud;
  h_fake *f = &h->fakes[fi];
  rp_dns_msg msg;
  h_event *e;
  rp_ssize n;
  rp_duration delay = f->delay;

  (void)pool;
  /* The core hands on the time of the call that sends. */
  assert_int_equal(now, h->now);
  h_send_record(h, f, rid, upid, data, len, flags);
  if (f->dead || (f->stream_dead && (flags & RP_SEND_STREAM))) {
    return 0;
  }
  if (f->slow_from && h->now >= f->slow_from) {
    delay = f->slow_delay;
  }
  assert_int_equal(rp_dns_parse(&msg, data, len), 0);
  if (f->fold_case) {
    h_fold_case(&msg);
  }
  e = test_malloc(sizeof(*e));
  e->seq = h->seq++;
  e->fake = fi;
  e->flags = (flags & RP_SEND_STREAM) ? RP_ANSWER_STREAM : 0;
  e->counted = 0;
  e->cancelled = 0;
  if (h_fake_turns_away(h, f, e, data, len, delay)) {
    return 0;
  }
  if (f->jitter > 0) {
    delay += (rp_duration)(h_unit(&h->fake_rng) * (double)f->jitter);
  }
  if (f->late_share > 0.0 && h_unit(&h->fake_rng) < f->late_share) {
    delay = f->late_delay / 2 +
            (rp_duration)(h_unit(&h->fake_rng) * (double)(f->late_delay / 2));
  }
  n = h_fake_answer(h, f, e, &msg, data, len);
  assert_true(n > 0);
  e->len = (size_t)n;
  h_fake_schedule(h, f, e, flags, delay);
  return 0;
}

static int h_deliver_cb(rp_pool *pool, const rp_client *client,
                        const uint8_t *data, size_t len, uint32_t flags,
                        rp_tstamp now, void *ud) {
  harness *h = ud;
  size_t qi = (size_t)(client->id % H_MAX_QUERIES);

  assert_int_equal(now, h->now);

  (void)pool;
  h_hash_u64(h, 2);
  h_hash_u64(h, h->now);
  h_hash_u64(h, client->id);
  h_hash_u64(h, flags);
  h_hash(h, data, len);
  if (len >= 2 && rp_dns_get_id(data) != (uint16_t)client->id) {
    h->id_mismatch = 1;
  }
  if (h->deliver_hook != NULL) {
    h->deliver_hook(h, client, data, len, flags);
  }
  if (flags & RP_DELIVER_FAILED) {
    if (len >= 4 && rp_dns_rcode(data) == RP_DNS_RCODE_FORMERR) {
      ++h->formerr;
    } else {
      ++h->failed;
    }
    h->failed_q[qi] = 1;
    if (h->firsts[qi] < UINT8_MAX) {
      ++h->firsts[qi];
    }
    return 0;
  }
  if (flags & RP_DELIVER_EXTRA) {
    ++h->extra;
  } else {
    ++h->delivered;
    h->first_at[qi] = h->now;
    if (h->firsts[qi] < UINT8_MAX) {
      ++h->firsts[qi];
    }
  }
  if (h->answers[qi] < UINT8_MAX) {
    ++h->answers[qi];
  }
  return 0;
}

static void h_rand_cb(uint8_t *dest, size_t len, void *ud) {
  harness *h = ud;
  size_t i;

  for (i = 0; i < len; ++i) {
    dest[i] = (uint8_t)(h_next(&h->rng) >> 56);
  }
}

/* Lifecycle -------------------------------------------------------- */

void h_kind_settings(rp_settings *set, rp_kind kind) {
  rp_settings_default(set, kind);
  set->duplicate = 1;
  set->max_inflight = 4096;
  set->max_resolvers = 64;
}

void h_default_settings(rp_settings *set) {
  h_kind_settings(set, RP_KIND_GENERIC);
}

static void h_log_cb(rp_log_level level, uint32_t category, const char *line,
                     void *ud) {
  harness *h = ud;

  (void)level;
  (void)category;
  if (h->trace) {
    fprintf(stderr, "%s\n", line);
  }
  ++h->nlog;
  if (strstr(line, "ev=down") != NULL) {
    ++h->nlog_down;
  }
  if (strstr(line, "ev=cap") != NULL) {
    ++h->nlog_cap;
  }
  snprintf(h->last_log, sizeof(h->last_log), "%s", line);
}

static const rp_callbacks h_callbacks = {.send_query = h_send_cb,
                                         .deliver = h_deliver_cb,
                                         .rand = h_rand_cb,
                                         .log = h_log_cb};

int h_pool_new(rp_pool **ppool, const rp_settings *set, const rp_mem *mem,
               harness *h) {
  return rp_pool_new(ppool, set, &h_callbacks, mem, h);
}

int h_init(harness *h, const rp_settings *set, uint64_t seed) {
  const char *trace = getenv("H_TRACE");

  memset(h, 0, sizeof(*h));
  h->set = *set;
  if (trace != NULL && trace[0] != '\0') {
    /* H_TRACE=1 prints the pool's log (info), H_TRACE=2 at debug: a
       test's decisions, to read when it fails. */
    h->trace = 1;
    h->set.log_level = trace[0] == '2' ? RP_LOG_DEBUG : RP_LOG_INFO;
  }
  h->rng = seed ? seed : 1;
  h->fake_rng = (seed ^ 0x9e3779b97f4a7c15ULL) | 1;
  h->hash = H_FNV_OFFSET;
  rp_test_mem_init(&h->mem);
  h->sends = test_calloc(H_MAX_SENDS, sizeof(h_send));
  h->answers = test_calloc(H_MAX_QUERIES, 1);
  h->failed_q = test_calloc(H_MAX_QUERIES, 1);
  h->firsts = test_calloc(H_MAX_QUERIES, 1);
  h->first_at = test_calloc(H_MAX_QUERIES, sizeof(rp_tstamp));
  h->submit_at = test_calloc(H_MAX_QUERIES, sizeof(rp_tstamp));
  return rp_pool_new(&h->pool, &h->set, &h_callbacks, &h->mem.mem, h);
}

void h_free(harness *h) {
  size_t i;

  rp_pool_del(h->pool);
  for (i = 0; i < h->nheap; ++i) {
    test_free(h->heap[i]);
  }
  if (h->heap) {
    test_free(h->heap);
  }
  test_free(h->sends);
  test_free(h->answers);
  test_free(h->failed_q);
  test_free(h->firsts);
  test_free(h->first_at);
  test_free(h->submit_at);
}

size_t h_add(harness *h, const h_fake *proto) {
  size_t i = h->nfakes++;
  h_fake *f = &h->fakes[i];
  char name[16];
  rp_resolver_config cfg;

  assert_true(i < H_MAX_FAKES);
  *f = *proto;
  if (f->burst <= 0.0) {
    f->burst = 1.0;
  }
  if (f->payload == 0) {
    f->payload = 900;
  }
  f->tokens = f->burst;
  f->tok_at = h->now;
  snprintf(name, sizeof(name), "fake%zu", i);
  cfg = (rp_resolver_config){.name = name,
                             .flags = f->flags,
                             .score = f->score,
                             .user_data = (void *)(uintptr_t)i};
  assert_int_equal(rp_pool_add_resolver(h->pool, &cfg, &f->id, h->now), 0);
  return i;
}

void h_query_name(uint64_t qn, char *out, size_t cap) {
  snprintf(out, cap, "q%llu.t.example", (unsigned long long)qn);
}

size_t h_build_query(uint64_t qn, uint8_t *out, size_t cap) {
  rp_dns_name name;
  char text[64];
  rp_ssize n;

  h_query_name(qn, text, sizeof(text));
  assert_int_equal(rp_dns_name_from_text(&name, text), 0);
  n = rp_dns_build_query(out, cap, (uint16_t)qn, &name, RP_DNS_TYPE_TXT,
                         RP_DNS_EDNS_UDP_SIZE);
  assert_true(n > 0);
  return (size_t)n;
}

uint64_t h_submit(harness *h) { return h_submit_padded(h, 0); }

/* h_submit_text submits a TXT query for |text| as query |qn|. */
static uint64_t h_submit_text(harness *h, uint64_t qn, const char *text) {
  uint8_t buf[512];
  size_t len;
  rp_client client = {.id = qn};
  rp_dns_name name;
  rp_ssize m;

  assert_int_equal(rp_dns_name_from_text(&name, text), 0);
  m = rp_dns_build_query(buf, sizeof(buf), (uint16_t)qn, &name,
                         RP_DNS_TYPE_TXT, RP_DNS_EDNS_UDP_SIZE);
  assert_true(m > 0);
  len = (size_t)m;

  h->submit_at[qn % H_MAX_QUERIES] = h->now;
  h->answers[qn % H_MAX_QUERIES] = 0;
  h->failed_q[qn % H_MAX_QUERIES] = 0;
  h->firsts[qn % H_MAX_QUERIES] = 0;
  assert_int_equal(rp_pool_submit(h->pool, buf, len, &client, h->now), 0);
  return qn;
}

uint64_t h_submit_padded(harness *h, size_t pad) {
  uint64_t qn = h->qn++;
  char text[160];
  int n;

  assert_true(pad < 60);
  n = snprintf(text, sizeof(text), "q%llu.", (unsigned long long)qn);
  if (pad > 0) {
    memset(text + n, 'p', pad);
    n += (int)pad;
    text[n++] = '.';
  }
  snprintf(text + n, sizeof(text) - (size_t)n, "t.example");
  return h_submit_text(h, qn, text);
}

uint64_t h_submit_label(harness *h, const char *label) {
  uint64_t qn = h->qn++;
  char text[160];

  assert_true(strlen(label) <= 63);
  snprintf(text, sizeof(text), "%s.q%llu.t.example", label,
           (unsigned long long)qn);
  return h_submit_text(h, qn, text);
}

void h_step_to(harness *h, rp_tstamp t) {
  unsigned long steps = 0;
  rp_tstamp ev_at, exp_at;
  h_event *e;

  for (;;) {
    assert_true(++steps < H_MAX_STEPS);
    ev_at = h->nheap ? h->heap[0]->at : RP_TSTAMP_UNSET;
    exp_at = rp_pool_get_expiry(h->pool);
    if (ev_at > t && exp_at > t) {
      break;
    }
    if (ev_at <= exp_at) {
      e = h_pop(h);
      if (e->cancelled) {
        test_free(e);
        continue;
      }
      if (h->fakes[e->fake].held == e) {
        h->fakes[e->fake].held = NULL;
      }
      if (e->at > h->now) {
        h->now = e->at;
      }
      if (e->counted) {
        --h->fakes[e->fake].inflight;
        ++h->fakes[e->fake].answered;
      }
      assert_int_equal(rp_pool_on_answer(h->pool, h->fakes[e->fake].id, e->buf,
                                         e->len, e->flags, h->now),
                       0);
      test_free(e);
    } else {
      if (exp_at > h->now) {
        h->now = exp_at;
      }
      assert_int_equal(rp_pool_handle_expiry(h->pool, h->now), 0);
    }
  }
  if (t > h->now) {
    h->now = t;
  }
}

void h_run(harness *h, rp_duration duration, double qps) {
  rp_tstamp end = h->now + duration;
  rp_duration gap = (rp_duration)(1e9 / qps);
  rp_tstamp next = h->now;

  while (next < end) {
    h_step_to(h, next);
    h_submit(h);
    next += gap;
  }
  h_step_to(h, end);
}

rp_resolver_stats h_rstats(harness *h, size_t i) {
  rp_resolver_stats s;

  assert_int_equal(
      rp_pool_get_resolver_stats(h->pool, h->fakes[i].id, &s, h->now), 0);
  return s;
}

rp_pool_stats h_pstats(harness *h) {
  rp_pool_stats s;

  rp_pool_get_stats(h->pool, &s);
  return s;
}

size_t h_sends_to(const harness *h, size_t i, uint32_t flags) {
  size_t k, n = 0;

  for (k = 0; k < h->nsends; ++k) {
    if (h->sends[k].res == h->fakes[i].id &&
        (h->sends[k].flags & flags) == flags) {
      ++n;
    }
  }
  return n;
}
