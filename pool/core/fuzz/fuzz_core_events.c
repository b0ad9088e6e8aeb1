/*
 * fuzz_core_events.c: libFuzzer target for the pool core (rp_pool).
 *
 * The input sets up one pool and then drives it with a stream of timed
 * events, as a driver would: client queries, answers and errors from
 * resolvers, timer expiries, resolvers added and removed. The callbacks
 * record what the pool does and check it; at the end a tick past every
 * deadline must have settled every query, and freeing the pool must
 * return every allocation. The same function is replayed over the seed
 * corpus by the ctest unit.core_events_fuzz_replay (replay_main.c).
 *
 * INPUT FORMAT (a byte past the end of the input reads as 0)
 *
 * Header, 8 bytes:
 *   h0 bits 0-1  kind: 0 generic, 1 dnstt, 2 masterdns, 3 generic
 *      bits 2-4  load_balance, value mod 5: auto, roundrobin, weighted,
 *                lowest_latency, least_loss
 *      bit 5     wait_for_token inverted from the kind's default
 *      bit 6     lazy timers: expiries run only at a tick event (a late
 *                driver); otherwise every expiry runs at its own time
 *                while the clock moves
 *      bit 7     callbacks.log at debug, every category
 *   h1 bits 0-2  resolvers at the start, minus 1 (1..8)
 *      bits 3-4  duplicate: 0 the kind's default, else 1..3
 *      bit 5     probe_name "probe.example" (else "": probes copy the
 *                last client query)
 *      bit 6     probation_answers 1 (else the default 8)
 *      bit 7     short timing: deadline 1 s, per_attempt 250 ms
 *   h2 bits 0-4  max_inflight, minus 1 (1..32)
 *      bits 5-6  down_after: 8, 1, 2 or 4
 *      bit 7     max_query_len 64 (else 1232)
 *   h3           bit i set: start resolver i has RP_RESOLVER_TCP_FALLBACK
 *   h4 bits 0-2  room for added resolvers: max_resolvers = start + room
 *      bit 3     the clock starts at 0 (else at 1000 s)
 *      bit 4     max_hedges 0 (else 2)
 *   h5 h6 h7     seed of the rand callback (xorshift64*)
 *
 * Then at most FUZZ_MAX_EVENTS events, each an opcode byte (its low
 * three bits), a time byte and a payload. The time byte t moves the clock
 * on by (t & 63) units of 10 us, 1 ms, 50 ms or 1 s (t >> 6); the clock
 * never goes back. Payloads, by opcode:
 *   0 submit a built query: b0, ID (2 bytes), labels. b0 bits 0-1 qtype
 *     (TXT, A, AAAA, NULL), bit 2 with an OPT record, bit 3 opcode 1,
 *     bit 4 the name ends in t.example, bits 5-6 labels minus 1 (1..4),
 *     bit 7 RD cleared. Each label is a length byte (1 + value mod 63)
 *     and that many bytes, any values, cut so that the name fits.
 *   1 submit raw bytes: a length byte, then that many bytes.
 *   2 answer a captured send: b0 picks one of the last FUZZ_RING sends
 *     (b0 mod their number, 0 the newest), then b1, b2, b3. b1 bits 0-1:
 *     0 a TXT answer of 4 x b2 bytes of value b3, 1 an error answer with
 *     rcode b2 & 15, 2 the query echoed with QR and rcode b2 & 15, 3 the
 *     TXT answer cut to b2/256 of its length. b1 bit 2 sets TC, bit 3
 *     passes RP_ANSWER_STREAM, bit 4 XORs the ID with b3 | 1, bit 5 flips
 *     bit 0x20 of the first name byte, bit 6 clears QR, bit 7 changes the
 *     opcode. The answer comes from the resolver the send went to.
 *   3 answer raw bytes: b0, a length byte, the bytes. b0 bit 7: from the
 *     resolver of send b0 & 31, with that send's ID written in; else from
 *     live resolver b0 mod their number. b0 bit 6 passes
 *     RP_ANSWER_STREAM.
 *   4 error: b0, b1. The outcome is b1 mod 12. b0 bits 5-7 pick the
 *     target: 0-3 the try of send b0 & 31, 4-5 every try at that send's
 *     resolver (RP_UPSTREAM_ID_ALL), 6 the ID b1 x 257 there, 7 a
 *     resolver that does not exist.
 *   5 tick: rp_pool_handle_expiry at the current time.
 *   6 add a resolver: b0 bit 0 RP_RESOLVER_STREAM, bit 1
 *     RP_RESOLVER_TCP_FALLBACK, score (b0 >> 2) mod 21 - 10. The start
 *     resolvers are added the same way, with score 0.
 *   7 remove a resolver: b0 bit 7 an id that does not exist, else live
 *     resolver b0 mod their number.
 *
 * CHECKS (each failure aborts with a message: the fuzzer's crash)
 * - Every call returns what respool.h documents for it: 0, or exactly
 *   the non-fatal error the input calls for (RP_ERR_MALFORMED for a
 *   query whose header does not parse or has QR, RP_ERR_FULL past
 *   max_resolvers, RP_ERR_NOT_FOUND for a resolver that is not there).
 * - send_query goes to a live resolver not being removed, with the ID it
 *   names written in the bytes, flags among RP_SEND_*, RP_SEND_STREAM only
 *   to a TCP_FALLBACK resolver, and bytes that parse as a query.
 * - deliver goes to a submitted client with the client's ID restored,
 *   its question as it wrote it (the case of a 0x20 send restored), when
 *   the delivered bytes have one, QR set, flags 0, FAILED or EXTRA; a
 *   client gets at most one first
 *   result (an answer without EXTRA, or a failure) and EXTRA only after
 *   it (the test harness's "firsts", pool/tests/test_core_harness.c).
 * - After each event, the pool's counters agree with what the callbacks
 *   saw, and each resolver's stats are in range.
 * - At the end, a tick past every deadline, and the expiries it leaves
 *   due within FUZZ_SETTLE run at their times, leave nothing in flight,
 *   and every accepted query had exactly one first result; rp_pool_del
 *   frees every allocation made through the pool's rp_mem.
 * - The core is compiled with assert() on in the fuzz build, so its
 *   internal invariants are checked too.
 *
 * With FUZZ_TRACE set in the environment, each event and every log line
 * of the core (at debug) go to stderr.
 */
#include "dns.h"
#include "respool.h"

#define FUZZ_NAME "fuzz_core_events.c"
#include "fuzz_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FUZZ_HEADER_LEN is the length of the setup header. */
#define FUZZ_HEADER_LEN 8
/* FUZZ_MAX_EVENTS caps the events of one input (and so its run time). */
#define FUZZ_MAX_EVENTS 256
/* FUZZ_MAX_RES caps the resolvers one input adds in all. */
#define FUZZ_MAX_RES 64
/* FUZZ_START_RES_MAX is the most resolvers at the start. */
#define FUZZ_START_RES_MAX 8
/* FUZZ_RING is how many of the latest sends are kept for answers. */
#define FUZZ_RING 32
/* FUZZ_MSG_MAX is the longest send kept: settings.max_query_len at its
   largest here (1232). */
#define FUZZ_MSG_MAX 1232
/* FUZZ_ANSWER_MAX holds any answer built here (a TXT of 1020 bytes to a
   question of 255 bytes, with OPT). */
#define FUZZ_ANSWER_MAX 4096
/* FUZZ_MAX_STEPS caps the expiries run while the clock moves, over one
   input; past it the clock jumps (as with lazy timers). */
#define FUZZ_MAX_STEPS 2000
/* FUZZ_MAX_SPIN is how many expiry runs in a row may leave
   rp_pool_get_expiry at or before now: each may only move one past-cap
   candidate on or place waiting queries, so a pool with at most 15
   resolvers and 32 queries needs far fewer. */
#define FUZZ_MAX_SPIN 256
/* FUZZ_NOUTCOMES is the number of rp_outcome values. */
#define FUZZ_NOUTCOMES 12
/* FUZZ_NBALANCE is the number of rp_balance values. */
#define FUZZ_NBALANCE 5
/* FUZZ_NO_SUCH_RES is a resolver id the pool never hands out
   (max_resolvers is at most 15 here). */
#define FUZZ_NO_SUCH_RES 0x7ffffff0u
/* FUZZ_ID_UNSET marks a resolver record whose id is not known yet. */
#define FUZZ_ID_UNSET UINT32_MAX
/* FUZZ_START_TIME is the clock at the start unless h4 bit 3 says 0. */
#define FUZZ_START_TIME (1000 * RP_SECONDS)
/* FUZZ_SETTLE is how long past the last event's deadline the final tick
   runs, and how long after it the expiries it leaves due are run. */
#define FUZZ_SETTLE RP_SECONDS
/* FUZZ_LOG_LINE is the longest log line the core formats (pool.c). */
#define FUZZ_LOG_LINE 256
/* FUZZ_SHORT_QUERY_LEN is max_query_len with h2 bit 7. */
#define FUZZ_SHORT_QUERY_LEN 64
/* FUZZ_NAME_ROOM is the most bytes of input-chosen labels in a name:
   255 minus the root byte. */
#define FUZZ_NAME_ROOM (RP_DNS_MAX_NAME_LEN - 1)
/* FUZZ_LABEL_PAD fills a label past the end of the input. */
#define FUZZ_LABEL_PAD 'a'
/* FUZZ_TXT_UNIT is the TXT payload bytes per unit of b2. */
#define FUZZ_TXT_UNIT 4u
/* FUZZ_SCORE_SPAN is the number of scores -10 .. 10. */
#define FUZZ_SCORE_SPAN 21
/* FUZZ_SCORE_MIN is the lowest score. */
#define FUZZ_SCORE_MIN (-10)
/* FUZZ_ID_STEP spreads b1 over the 16-bit IDs (op 4, target 6). */
#define FUZZ_ID_STEP 257u
/* FUZZ_RNG_MIX is mixed into the seed so that seed 0 is no zero state. */
#define FUZZ_RNG_MIX 0x9e3779b97f4a7c15ULL
/* FUZZ_RNG_MUL is the xorshift64* multiplier. */
#define FUZZ_RNG_MUL 0x2545f4914f6cdd1dULL

/* Byte-level masks of the DNS header (byte 2: QR, opcode, AA, TC, RD;
   byte 3: RA, Z, rcode). */
#define FUZZ_B2_QR 0x80u
#define FUZZ_B2_OPCODE1 0x08u
#define FUZZ_B2_TC 0x02u
#define FUZZ_B2_RD 0x01u
#define FUZZ_B3_RCODE 0x0fu
/* FUZZ_QNAME_OFF is the offset of the first name byte after the header
   (the first label's length). */
#define FUZZ_QNAME_OFF RP_DNS_HEADER_LEN
/* FUZZ_CASE_BIT is the 0x20 bit of ASCII case. */
#define FUZZ_CASE_BIT 0x20u

/* Opcodes of the event stream. */
enum {
  FUZZ_OP_SUBMIT = 0,
  FUZZ_OP_SUBMIT_RAW,
  FUZZ_OP_ANSWER,
  FUZZ_OP_ANSWER_RAW,
  FUZZ_OP_ERROR,
  FUZZ_OP_TICK,
  FUZZ_OP_ADD,
  FUZZ_OP_REMOVE
};

/* fuzz_res is one resolver the input added. */
typedef struct fuzz_res {
  /* id is the pool's id, FUZZ_ID_UNSET until known. */
  uint32_t id;
  /* flags is the rp_resolver_config flags it was added with. */
  uint32_t flags;
  /* live is 1 while it is in the pool; adding and removing are 1 during
     the call that adds or removes it. */
  int live;
  int adding;
  int removing;
} fuzz_res;

/* fuzz_client is one client query. */
typedef struct fuzz_client {
  /* dns_id is the query's ID (0 for fewer than two bytes). */
  uint16_t dns_id;
  /* submitted is 1 from the rp_pool_submit call on; accepted is 1 when
     it returned 0. */
  int submitted;
  int accepted;
  /* firsts counts first results, extras EXTRA deliveries. */
  uint32_t firsts;
  uint32_t extras;
  /* has_question is 1 when the query's question parsed (|question|, as
     the client wrote it: every delivery must carry it, case included). */
  int has_question;
  rp_dns_question question;
} fuzz_client;

/* fuzz_send is one captured send_query. */
typedef struct fuzz_send {
  uint32_t res_id;
  uint16_t upstream_id;
  uint32_t flags;
  size_t len;
  uint8_t buf[FUZZ_MSG_MAX];
} fuzz_send;

/* fuzz_state is everything one input needs; reset for each input. */
typedef struct fuzz_state {
  rp_pool *pool;
  rp_settings set;
  rp_tstamp now;
  uint64_t rng;
  const uint8_t *in;
  size_t len;
  size_t pos;
  int lazy;
  /* trace is 1 when FUZZ_TRACE is set: events and the core's log lines
     go to stderr, to read when an input fails. */
  int trace;
  size_t steps;
  fuzz_res res[FUZZ_MAX_RES];
  size_t nres;
  fuzz_client clients[FUZZ_MAX_EVENTS];
  size_t nclients;
  fuzz_send ring[FUZZ_RING];
  size_t ring_next;
  size_t nring;
  /* What the callbacks saw: sends, first answers, failures, extras. */
  uint64_t nsends;
  uint64_t ndelivered;
  uint64_t nfailed;
  uint64_t nextra;
} fuzz_state;

static fuzz_state fz;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---------------------------------------------------------------- */
/* Checks, input, allocator, rand                                     */
/* ---------------------------------------------------------------- */

/* fuzz_before_fail prints when the failure was met. */
static void fuzz_before_fail(void) {
  fprintf(stderr, "fuzz_core_events.c: failed at t=%llu ns\n",
          (unsigned long long)fz.now);
}

static uint8_t fuzz_u8(void) { return fz.pos < fz.len ? fz.in[fz.pos++] : 0; }

/* fuzz_take copies up to |n| input bytes into |dst|; returns how many. */
static size_t fuzz_take(uint8_t *dst, size_t n) {
  size_t left = fz.len - fz.pos;

  if (n > left) {
    n = left;
  }
  memcpy(dst, fz.in + fz.pos, n);
  fz.pos += n;
  return n;
}

static void fuzz_rand_cb(uint8_t *dest, size_t len, void *ud) {
  size_t i;

  (void)ud;
  for (i = 0; i < len; ++i) {
    /* xorshift64*, as the test harness. */
    fz.rng ^= fz.rng >> 12;
    fz.rng ^= fz.rng << 25;
    fz.rng ^= fz.rng >> 27;
    dest[i] = (uint8_t)((fz.rng * FUZZ_RNG_MUL) >> 56);
  }
}

/* ---------------------------------------------------------------- */
/* Resolvers and captured sends                                       */
/* ---------------------------------------------------------------- */

/* fuzz_res_by_id returns the live record with pool id |id|, or NULL. */
static fuzz_res *fuzz_res_by_id(uint32_t id) {
  size_t i;

  for (i = 0; i < fz.nres; ++i) {
    if (fz.res[i].live && fz.res[i].id == id) {
      return &fz.res[i];
    }
  }
  return NULL;
}

static size_t fuzz_nlive(void) {
  size_t i, n = 0;

  for (i = 0; i < fz.nres; ++i) {
    if (fz.res[i].live) {
      ++n;
    }
  }
  return n;
}

/* fuzz_live_pick returns live record number |k| mod their number, or
   NULL when none is live. */
static fuzz_res *fuzz_live_pick(unsigned k) {
  size_t n = fuzz_nlive(), i, want;

  if (n == 0) {
    return NULL;
  }
  want = k % n;
  for (i = 0; i < fz.nres; ++i) {
    if (fz.res[i].live && want-- == 0) {
      return &fz.res[i];
    }
  }
  return NULL;
}

/* fuzz_ring_get returns captured send |k| mod their number, 0 the
   newest, or NULL when none was captured. */
static const fuzz_send *fuzz_ring_get(unsigned k) {
  size_t back;

  if (fz.nring == 0) {
    return NULL;
  }
  back = k % fz.nring;
  return &fz.ring[(fz.ring_next + FUZZ_RING - 1 - back) % FUZZ_RING];
}

/* ---------------------------------------------------------------- */
/* Callbacks                                                          */
/* ---------------------------------------------------------------- */

static int fuzz_send_cb(rp_pool *pool, uint32_t resolver_id,
                        void *resolver_user_data, uint16_t upstream_id,
                        const uint8_t *data, size_t len, uint32_t flags,
                        rp_tstamp now, void *user_data) {
  fuzz_res *r = resolver_user_data;
  rp_dns_brief brief;
  fuzz_send *s;

  FUZZ_CHECK(now == fz.now, "send: not the time of the call that sends");

  FUZZ_CHECK(pool == fz.pool && user_data == &fz, "send: wrong pool");
  FUZZ_CHECK(r >= fz.res && r < fz.res + FUZZ_MAX_RES,
             "send: resolver user_data %p is not ours", resolver_user_data);
  if (r->adding && r->id == FUZZ_ID_UNSET) {
    r->id = resolver_id;
  }
  FUZZ_CHECK((r->live || r->adding) && r->id == resolver_id,
             "send to resolver %u, not live (record id %u)", resolver_id,
             r->id);
  FUZZ_CHECK(!r->removing, "send to resolver %u while it is removed",
             resolver_id);
  FUZZ_CHECK(len >= RP_DNS_HEADER_LEN && len <= FUZZ_MSG_MAX,
             "send of %zu bytes", len);
  FUZZ_CHECK(rp_dns_get_id(data) == upstream_id,
             "send names ID %u, the bytes carry %u", upstream_id,
             rp_dns_get_id(data));
  FUZZ_CHECK((flags & ~(uint32_t)(RP_SEND_STREAM | RP_SEND_PROBE)) == 0,
             "send flags 0x%x", flags);
  FUZZ_CHECK(!(flags & RP_SEND_STREAM) || (r->flags & RP_RESOLVER_TCP_FALLBACK),
             "stream send to resolver %u without TCP_FALLBACK", resolver_id);
  FUZZ_CHECK(rp_dns_parse_brief(&brief, data, len) == 0 && brief.has_question &&
                 !(brief.hdr.flags & RP_DNS_FLAG_QR),
             "send of bytes that are no query");
  s = &fz.ring[fz.ring_next];
  fz.ring_next = (fz.ring_next + 1) % FUZZ_RING;
  if (fz.nring < FUZZ_RING) {
    ++fz.nring;
  }
  s->res_id = resolver_id;
  s->upstream_id = upstream_id;
  s->flags = flags;
  s->len = len;
  memcpy(s->buf, data, len);
  ++fz.nsends;
  return 0;
}

static int fuzz_deliver_cb(rp_pool *pool, const rp_client *client,
                           const uint8_t *data, size_t len, uint32_t flags,
                           rp_tstamp now, void *user_data) {
  fuzz_client *c;

  FUZZ_CHECK(now == fz.now, "deliver: not the time of the call");
  FUZZ_CHECK(pool == fz.pool && user_data == &fz, "deliver: wrong pool");
  FUZZ_CHECK(client->id < fz.nclients && fz.clients[client->id].submitted,
             "deliver to unknown client %llu", (unsigned long long)client->id);
  c = &fz.clients[client->id];
  FUZZ_CHECK(len >= RP_DNS_HEADER_LEN, "deliver of %zu bytes", len);
  FUZZ_CHECK(rp_dns_get_id(data) == c->dns_id,
             "client %llu gets ID %u, asked with %u",
             (unsigned long long)client->id, rp_dns_get_id(data), c->dns_id);
  FUZZ_CHECK(data[2] & FUZZ_B2_QR, "deliver of bytes without QR");
  if (c->has_question) {
    rp_dns_brief brief;

    FUZZ_CHECK(rp_dns_parse_brief(&brief, data, len) != 0 ||
                   !brief.has_question ||
                   rp_dns_question_equal(&brief.question, &c->question),
               "client %llu gets another question (or case) than it asked",
               (unsigned long long)client->id);
  }
  FUZZ_CHECK(flags == 0 || flags == RP_DELIVER_FAILED ||
                 flags == RP_DELIVER_EXTRA,
             "deliver flags 0x%x", flags);
  if (flags == RP_DELIVER_EXTRA) {
    FUZZ_CHECK(c->firsts == 1, "client %llu: EXTRA before its first result",
               (unsigned long long)client->id);
    ++c->extras;
    ++fz.nextra;
    return 0;
  }
  FUZZ_CHECK(c->firsts == 0, "client %llu: a second first result (flags %u)",
             (unsigned long long)client->id, flags);
  ++c->firsts;
  if (flags == RP_DELIVER_FAILED) {
    ++fz.nfailed;
  } else {
    ++fz.ndelivered;
  }
  return 0;
}

static void fuzz_log_cb(rp_log_level level, uint32_t category, const char *line,
                        void *user_data) {
  (void)user_data;
  if (fz.trace && line != NULL) {
    fprintf(stderr, "  log %s\n", line);
  }
  FUZZ_CHECK(level <= fz.set.log_level, "log at level %d", (int)level);
  FUZZ_CHECK((category & RP_LOG_CAT_ALL) != 0, "log category 0x%x", category);
  FUZZ_CHECK(line != NULL && strlen(line) < FUZZ_LOG_LINE &&
                 strchr(line, '\n') == NULL && strncmp(line, "t=", 2) == 0,
             "log line \"%s\"", line ? line : "(null)");
}

/* ---------------------------------------------------------------- */
/* Stats                                                              */
/* ---------------------------------------------------------------- */

/* fuzz_state_ok returns 1 if |state| is an rp_resolver_state. */
static int fuzz_state_ok(rp_resolver_state state) {
  switch (state) {
  case RP_RESOLVER_PROBATION:
  case RP_RESOLVER_ACTIVE:
  case RP_RESOLVER_CAPPED:
  case RP_RESOLVER_DOWN:
    return 1;
  }
  return 0;
}

/* fuzz_check_stats compares the pool's counters with what the callbacks
   saw and checks each resolver's stats. */
static void fuzz_check_stats(void) {
  rp_pool_stats st;
  rp_resolver_stats rs;
  size_t i;

  rp_pool_get_stats(fz.pool, &st);
  FUZZ_CHECK(st.nresolvers == fuzz_nlive(), "stats: %zu resolvers, not %zu",
             st.nresolvers, fuzz_nlive());
  FUZZ_CHECK(st.nup <= st.nresolvers, "stats: %zu up of %zu", st.nup,
             st.nresolvers);
  FUZZ_CHECK(st.inflight <= fz.set.max_inflight, "stats: %zu in flight",
             st.inflight);
  FUZZ_CHECK(st.queries == fz.nclients, "stats: %llu queries, %zu submitted",
             (unsigned long long)st.queries, fz.nclients);
  FUZZ_CHECK(st.sends == fz.nsends, "stats: %llu sends, %llu seen",
             (unsigned long long)st.sends, (unsigned long long)fz.nsends);
  FUZZ_CHECK(st.delivered == fz.ndelivered, "stats: %llu delivered, %llu seen",
             (unsigned long long)st.delivered,
             (unsigned long long)fz.ndelivered);
  FUZZ_CHECK(st.failed == fz.nfailed, "stats: %llu failed, %llu seen",
             (unsigned long long)st.failed, (unsigned long long)fz.nfailed);
  FUZZ_CHECK(st.duplicates_delivered == fz.nextra,
             "stats: %llu extra answers, %llu seen",
             (unsigned long long)st.duplicates_delivered,
             (unsigned long long)fz.nextra);
  for (i = 0; i < fz.nres; ++i) {
    const fuzz_res *r = &fz.res[i];

    if (!r->live) {
      continue;
    }
    FUZZ_CHECK(rp_pool_get_resolver_stats(fz.pool, r->id, &rs, fz.now) == 0,
               "stats of live resolver %u not found", r->id);
    FUZZ_CHECK(fuzz_state_ok(rs.state), "resolver %u: state %d", r->id,
               (int)rs.state);
    FUZZ_CHECK(isfinite(rs.loss) && rs.loss >= 0.0 && rs.loss <= 1.0,
               "resolver %u: loss %g", r->id, rs.loss);
    FUZZ_CHECK(isfinite(rs.cap_qps) && rs.cap_qps >= 0.0, "resolver %u: cap %g",
               r->id, rs.cap_qps);
    FUZZ_CHECK(rs.score >= FUZZ_SCORE_MIN && rs.score <= -FUZZ_SCORE_MIN,
               "resolver %u: score %d", r->id, rs.score);
    FUZZ_CHECK(rs.answered + rs.refused <= rs.sent,
               "resolver %u: %llu answers and %llu refusals of %llu sends",
               r->id, (unsigned long long)rs.answered,
               (unsigned long long)rs.refused, (unsigned long long)rs.sent);
  }
}

/* ---------------------------------------------------------------- */
/* Events                                                             */
/* ---------------------------------------------------------------- */

/* fuzz_run_timers runs every expiry due up to |target| at its own time. */
static void fuzz_run_timers(rp_tstamp target) {
  unsigned spin = 0;
  rp_tstamp at;
  int rv;

  while (fz.steps < FUZZ_MAX_STEPS) {
    at = rp_pool_get_expiry(fz.pool);
    if (at > target) {
      break;
    }
    if (at > fz.now) {
      fz.now = at;
      spin = 0;
    } else {
      FUZZ_CHECK(++spin < FUZZ_MAX_SPIN,
                 "rp_pool_get_expiry stays at %llu, not after now, after "
                 "%u expiry runs",
                 (unsigned long long)at, spin);
    }
    rv = rp_pool_handle_expiry(fz.pool, fz.now);
    FUZZ_CHECK(rv == 0, "rp_pool_handle_expiry: %d", rv);
    ++fz.steps;
  }
}

/* fuzz_advance moves the clock to |target|. */
static void fuzz_advance(rp_tstamp target) {
  if (!fz.lazy) {
    fuzz_run_timers(target);
  }
  if (target > fz.now) {
    fz.now = target;
  }
}

static void fuzz_submit_bytes(const uint8_t *q, size_t len) {
  fuzz_client *c;
  rp_client client;
  int malformed, rv;

  if (fz.nclients >= FUZZ_MAX_EVENTS) {
    return;
  }
  c = &fz.clients[fz.nclients];
  client = (rp_client){.id = fz.nclients};
  ++fz.nclients;
  c->dns_id = len >= 2 ? rp_dns_get_id(q) : 0;
  c->submitted = 1;
  {
    rp_dns_brief brief;

    c->has_question =
        rp_dns_parse_brief(&brief, q, len) == 0 && brief.has_question;
    if (c->has_question) {
      c->question = brief.question;
    }
  }
  malformed = len < RP_DNS_HEADER_LEN || (q[2] & FUZZ_B2_QR);
  rv = rp_pool_submit(fz.pool, q, len, &client, fz.now);
  if (malformed) {
    FUZZ_CHECK(rv == RP_ERR_MALFORMED, "submit of a bad header: %d", rv);
    FUZZ_CHECK(c->firsts == 0 && c->extras == 0,
               "a query refused as malformed got an answer");
  } else {
    FUZZ_CHECK(rv == 0, "submit: %d", rv);
  }
  c->accepted = rv == 0;
}

static void fuzz_submit_built(void) {
  static const uint16_t qtypes[] = {RP_DNS_TYPE_TXT, RP_DNS_TYPE_A,
                                    RP_DNS_TYPE_AAAA, RP_DNS_TYPE_NULL};
  static const uint8_t suffix[] = {1,   't', 7,   'e', 'x',
                                   'a', 'm', 'p', 'l', 'e'};
  uint8_t b0 = fuzz_u8();
  uint16_t id = (uint16_t)(fuzz_u8() << 8);
  unsigned nlabels = 1u + ((b0 >> 5) & 3u), i;
  size_t room = FUZZ_NAME_ROOM, pos = 0, l, k;
  uint8_t buf[FUZZ_MSG_MAX];
  rp_dns_name name;
  rp_ssize n;

  id = (uint16_t)(id | fuzz_u8());
  if (b0 & 0x10u) {
    room -= sizeof(suffix);
  }
  for (i = 0; i < nlabels && room > 1; ++i) {
    l = 1u + fuzz_u8() % RP_DNS_MAX_LABEL_LEN;
    if (l > room - 1) {
      l = room - 1;
    }
    name.wire[pos++] = (uint8_t)l;
    for (k = 0; k < l; ++k) {
      name.wire[pos++] = fz.pos < fz.len ? fuzz_u8() : FUZZ_LABEL_PAD;
    }
    room -= l + 1;
  }
  if (b0 & 0x10u) {
    memcpy(name.wire + pos, suffix, sizeof(suffix));
    pos += sizeof(suffix);
  }
  name.wire[pos++] = 0;
  name.len = (uint8_t)pos;
  n = rp_dns_build_query(buf, sizeof(buf), id, &name, qtypes[b0 & 3u],
                         (b0 & 0x04u) ? RP_DNS_EDNS_UDP_SIZE : 0);
  FUZZ_CHECK(n >= RP_DNS_HEADER_LEN, "rp_dns_build_query: %td", n);
  if (b0 & 0x08u) {
    buf[2] |= FUZZ_B2_OPCODE1;
  }
  if (b0 & 0x80u) {
    buf[2] &= (uint8_t)~FUZZ_B2_RD;
  }
  fuzz_submit_bytes(buf, (size_t)n);
}

static void fuzz_submit_raw(void) {
  uint8_t buf[UINT8_MAX + 1];
  size_t n = fuzz_take(buf, fuzz_u8());

  fuzz_submit_bytes(buf, n);
}

static void fuzz_on_answer(uint32_t res_id, const uint8_t *a, size_t len,
                           uint32_t flags) {
  int rv = rp_pool_on_answer(fz.pool, res_id, a, len, flags, fz.now);

  FUZZ_CHECK(rv == 0, "rp_pool_on_answer: %d", rv);
}

static void fuzz_answer_built(void) {
  static rp_dns_msg msg;
  static uint8_t out[FUZZ_ANSWER_MAX];
  static uint8_t payload[UINT8_MAX * FUZZ_TXT_UNIT];
  uint8_t b0 = fuzz_u8(), b1 = fuzz_u8(), b2 = fuzz_u8(), b3 = fuzz_u8();
  const fuzz_send *s = fuzz_ring_get(b0);
  rp_ssize n = -1;
  size_t len, plen;

  if (s == NULL) {
    return;
  }
  switch (b1 & 3u) {
  case 0:
  case 3:
    if (rp_dns_parse(&msg, s->buf, s->len) == 0 && msg.has_question) {
      plen = FUZZ_TXT_UNIT * b2;
      memset(payload, b3, plen);
      n = rp_dns_build_txt_answer(out, sizeof(out), &msg, 0, payload, plen);
    }
    break;
  case 1:
    n = rp_dns_build_error(out, sizeof(out), s->buf, s->len,
                           (uint8_t)(b2 & FUZZ_B3_RCODE));
    break;
  default:
    memcpy(out, s->buf, s->len);
    out[2] |= FUZZ_B2_QR;
    out[3] = (uint8_t)((out[3] & ~FUZZ_B3_RCODE) | (b2 & FUZZ_B3_RCODE));
    n = (rp_ssize)s->len;
    break;
  }
  if (n < 0) {
    return;
  }
  len = (size_t)n;
  if ((b1 & 3u) == 3) {
    len = len * (size_t)b2 / (UINT8_MAX + 1u);
  }
  if (len >= RP_DNS_HEADER_LEN) {
    if (b1 & 0x04u) {
      out[2] |= FUZZ_B2_TC;
    }
    if (b1 & 0x10u) {
      rp_dns_set_id(out, (uint16_t)(rp_dns_get_id(out) ^ (b3 | 1u)));
    }
    if (b1 & 0x40u) {
      out[2] &= (uint8_t)~FUZZ_B2_QR;
    }
    if (b1 & 0x80u) {
      out[2] ^= FUZZ_B2_OPCODE1;
    }
  }
  if ((b1 & 0x20u) && len > FUZZ_QNAME_OFF + 1) {
    out[FUZZ_QNAME_OFF + 1] ^= FUZZ_CASE_BIT;
  }
  fuzz_on_answer(s->res_id, out, len, (b1 & 0x08u) ? RP_ANSWER_STREAM : 0);
}

static void fuzz_answer_raw(void) {
  uint8_t buf[UINT8_MAX + 1];
  uint8_t b0 = fuzz_u8();
  size_t n = fuzz_take(buf, fuzz_u8());
  const fuzz_send *s = (b0 & 0x80u) ? fuzz_ring_get(b0 & 0x1fu) : NULL;
  const fuzz_res *r;
  uint32_t res_id = b0;

  if (s != NULL) {
    res_id = s->res_id;
    if (n >= 2) {
      rp_dns_set_id(buf, s->upstream_id);
    }
  } else if ((r = fuzz_live_pick(b0)) != NULL) {
    res_id = r->id;
  }
  fuzz_on_answer(res_id, buf, n, (b0 & 0x40u) ? RP_ANSWER_STREAM : 0);
}

static void fuzz_error(void) {
  uint8_t b0 = fuzz_u8(), b1 = fuzz_u8();
  unsigned target = b0 >> 5;
  rp_outcome outcome = (rp_outcome)(b1 % FUZZ_NOUTCOMES);
  const fuzz_send *s = fuzz_ring_get(b0 & 0x1fu);
  const fuzz_res *r;
  uint32_t res_id, up_id = RP_UPSTREAM_ID_ALL;
  int rv;

  if (target == 7) {
    res_id = FUZZ_NO_SUCH_RES;
  } else if (s == NULL) {
    r = fuzz_live_pick(b0);
    res_id = r != NULL ? r->id : FUZZ_NO_SUCH_RES;
  } else {
    res_id = s->res_id;
    if (target < 4) {
      up_id = s->upstream_id;
    } else if (target == 6) {
      up_id = (uint32_t)b1 * FUZZ_ID_STEP;
    }
  }
  rv = rp_pool_on_error(fz.pool, res_id, up_id, outcome, fz.now);
  if (fuzz_res_by_id(res_id) == NULL) {
    FUZZ_CHECK(rv == RP_ERR_NOT_FOUND, "error at no resolver: %d", rv);
  } else {
    FUZZ_CHECK(rv == 0, "rp_pool_on_error: %d", rv);
  }
}

static void fuzz_tick(void) {
  int rv = rp_pool_handle_expiry(fz.pool, fz.now);

  FUZZ_CHECK(rv == 0, "rp_pool_handle_expiry: %d", rv);
}

/* fuzz_add adds a resolver with |flags| (RP_RESOLVER_*) and |score|. */
static void fuzz_add(uint32_t flags, int score) {
  fuzz_res *r;
  rp_resolver_config cfg;
  char name[16];
  uint32_t id = FUZZ_ID_UNSET;
  int full, rv;

  if (fz.nres >= FUZZ_MAX_RES) {
    return;
  }
  r = &fz.res[fz.nres];
  *r = (fuzz_res){.id = FUZZ_ID_UNSET, .flags = flags, .adding = 1};
  snprintf(name, sizeof(name), "fuzz%zu", fz.nres);
  cfg = (rp_resolver_config){
      .name = name, .flags = r->flags, .score = score, .user_data = r};
  full = fuzz_nlive() >= fz.set.max_resolvers;
  rv = rp_pool_add_resolver(fz.pool, &cfg, &id, fz.now);
  r->adding = 0;
  if (full) {
    FUZZ_CHECK(rv == RP_ERR_FULL, "add past max_resolvers: %d", rv);
  } else {
    FUZZ_CHECK(rv == 0, "rp_pool_add_resolver: %d", rv);
  }
  if (rv != 0) {
    FUZZ_CHECK(r->id == FUZZ_ID_UNSET, "send to a resolver not added");
    return;
  }
  FUZZ_CHECK(r->id == FUZZ_ID_UNSET || r->id == id,
             "resolver added as %u was sent to as %u", id, r->id);
  FUZZ_CHECK(fuzz_res_by_id(id) == NULL, "resolver id %u handed out twice", id);
  r->id = id;
  r->live = 1;
  ++fz.nres;
}

static void fuzz_remove(void) {
  uint8_t b0 = fuzz_u8();
  fuzz_res *r = (b0 & 0x80u) ? NULL : fuzz_live_pick(b0);
  rp_resolver_stats rs;
  uint32_t id = r != NULL ? r->id : FUZZ_NO_SUCH_RES;
  int rv;

  if (r != NULL) {
    r->removing = 1;
  }
  rv = rp_pool_remove_resolver(fz.pool, id, fz.now);
  if (r == NULL) {
    FUZZ_CHECK(rv == RP_ERR_NOT_FOUND, "remove of no resolver: %d", rv);
    return;
  }
  FUZZ_CHECK(rv == 0, "rp_pool_remove_resolver: %d", rv);
  r->removing = 0;
  r->live = 0;
  FUZZ_CHECK(rp_pool_get_resolver_stats(fz.pool, id, &rs, fz.now) ==
                 RP_ERR_NOT_FOUND,
             "resolver %u still has stats after its removal", id);
}

/* ---------------------------------------------------------------- */
/* Setup and the run                                                  */
/* ---------------------------------------------------------------- */

/* fuzz_setup reads the header into fz.set and the run's flags. */
static void fuzz_setup(const uint8_t h[FUZZ_HEADER_LEN], size_t *pnres) {
  static const rp_kind kinds[] = {RP_KIND_GENERIC, RP_KIND_DNSTT,
                                  RP_KIND_MASTERDNS, RP_KIND_AUTO};
  static const uint32_t down_after[] = {8, 1, 2, 4};
  rp_settings *set = &fz.set;

  rp_settings_default(set, kinds[h[0] & 3u]);
  set->load_balance = (rp_balance)(((h[0] >> 2) & 7u) % FUZZ_NBALANCE);
  if (h[0] & 0x20u) {
    set->wait_for_token = !set->wait_for_token;
  }
  fz.lazy = (h[0] & 0x40u) != 0;
  if (h[0] & 0x80u) {
    set->log_level = RP_LOG_DEBUG;
    set->log_categories = RP_LOG_CAT_ALL;
  }
  *pnres = 1u + (h[1] & 7u);
  if (h[1] & 0x18u) {
    set->duplicate = (h[1] >> 3) & 3u;
  }
  if (h[1] & 0x20u) {
    snprintf(set->probe_name, sizeof(set->probe_name), "probe.example");
  }
  if (h[1] & 0x40u) {
    set->probation_answers = 1;
  }
  if (h[1] & 0x80u) {
    set->deadline = RP_SECONDS;
    set->per_attempt = 250 * RP_MILLISECONDS;
  }
  set->max_inflight = 1u + (h[2] & 0x1fu);
  set->down_after = down_after[(h[2] >> 5) & 3u];
  if (h[2] & 0x80u) {
    set->max_query_len = FUZZ_SHORT_QUERY_LEN;
  }
  set->max_resolvers = *pnres + (h[4] & 7u);
  if (h[4] & 0x10u) {
    set->max_hedges = 0;
  }
  fz.now = (h[4] & 0x08u) ? 0 : FUZZ_START_TIME;
  fz.rng = FUZZ_RNG_MIX ^ ((uint64_t)h[5] << 16 | (uint64_t)h[6] << 8 | h[7]);
}

/* fuzz_settle runs a tick past every deadline, then every expiry that
   tick left due within FUZZ_SETTLE at its own time (a query whose
   deadline a late tick passed may be served at the next nanosecond: the
   core never schedules at or before now), and checks that every query
   was settled once. */
static void fuzz_settle(void) {
  rp_tstamp end =
      rp_tstamp_add(rp_tstamp_add(fz.now, fz.set.deadline), FUZZ_SETTLE);
  rp_pool_stats st;
  size_t i;

  fuzz_advance(end);
  if (fz.trace) {
    fprintf(stderr, "settle: tick at t=%.6f s\n",
            (double)end / (double)RP_SECONDS);
  }
  fuzz_tick();
  fz.steps = 0;
  fuzz_run_timers(rp_tstamp_add(end, FUZZ_SETTLE));
  rp_pool_get_stats(fz.pool, &st);
  FUZZ_CHECK(st.inflight == 0, "%zu queries in flight past every deadline",
             st.inflight);
  for (i = 0; i < fz.nclients; ++i) {
    const fuzz_client *c = &fz.clients[i];

    if (c->accepted) {
      FUZZ_CHECK(c->firsts == 1, "client %zu: %u first results, not one", i,
                 c->firsts);
    } else {
      FUZZ_CHECK(c->firsts == 0 && c->extras == 0,
                 "client %zu: answered though refused", i);
    }
  }
  fuzz_check_stats();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const rp_duration units[] = {10 * RP_MICROSECONDS, RP_MILLISECONDS,
                                      50 * RP_MILLISECONDS, RP_SECONDS};
  uint8_t h[FUZZ_HEADER_LEN];
  rp_callbacks cb = {.send_query = fuzz_send_cb,
                     .deliver = fuzz_deliver_cb,
                     .rand = fuzz_rand_cb,
                     .log = NULL};
  size_t nres, i, nevents;
  int rv;

  memset(&fz, 0, sizeof(fz));
  fz.in = data;
  fz.len = size;
  for (i = 0; i < FUZZ_HEADER_LEN; ++i) {
    h[i] = fuzz_u8();
  }
  fuzz_setup(h, &nres);
  fz.trace = getenv("FUZZ_TRACE") != NULL;
  if (fz.trace) {
    fz.set.log_level = RP_LOG_DEBUG;
    fz.set.log_categories = RP_LOG_CAT_ALL;
  }
  if (fz.set.log_level == RP_LOG_DEBUG) {
    cb.log = fuzz_log_cb;
  }
  rv = rp_pool_new(&fz.pool, &fz.set, &cb, &fuzz_mem, &fz);
  FUZZ_CHECK(rv == 0, "rp_pool_new: %d", rv);
  if ((h[0] & 3u) == 3u) {
    /* Kind auto: the same settings for every kind but masterdns's copy
       fields, so a verdict swaps something. */
    rp_settings by_kind[RP_KIND_COUNT];
    for (i = 0; i < RP_KIND_COUNT; ++i) {
      by_kind[i] = fz.set;
    }
    by_kind[RP_KIND_MASTERDNS].duplicate = 3;
    by_kind[RP_KIND_MASTERDNS].copy_delay_rtt = 0.0;
    rv = rp_pool_sense_kind(fz.pool, by_kind);
    FUZZ_CHECK(rv == 0, "rp_pool_sense_kind: %d", rv);
  }
  for (i = 0; i < nres && i < FUZZ_START_RES_MAX; ++i) {
    fuzz_add((((unsigned)h[3] >> i) & 1u) != 0 ? RP_RESOLVER_TCP_FALLBACK : 0u,
             0);
  }
  for (nevents = 0; fz.pos < fz.len && nevents < FUZZ_MAX_EVENTS; ++nevents) {
    uint8_t op = fuzz_u8() & 7u, t = fuzz_u8();

    fuzz_advance(rp_tstamp_add(fz.now, (t & 63u) * units[t >> 6]));
    if (fz.trace) {
      fprintf(stderr, "event %zu: op %u at t=%.6f s (input offset %zu)\n",
              nevents, op, (double)fz.now / (double)RP_SECONDS, fz.pos);
    }
    switch (op) {
    case FUZZ_OP_SUBMIT:
      fuzz_submit_built();
      break;
    case FUZZ_OP_SUBMIT_RAW:
      fuzz_submit_raw();
      break;
    case FUZZ_OP_ANSWER:
      fuzz_answer_built();
      break;
    case FUZZ_OP_ANSWER_RAW:
      fuzz_answer_raw();
      break;
    case FUZZ_OP_ERROR:
      fuzz_error();
      break;
    case FUZZ_OP_TICK:
      fuzz_tick();
      break;
    case FUZZ_OP_ADD: {
      uint8_t b0 = fuzz_u8();

      fuzz_add(b0 & (RP_RESOLVER_STREAM | RP_RESOLVER_TCP_FALLBACK),
               (b0 >> 2) % FUZZ_SCORE_SPAN + FUZZ_SCORE_MIN);
      break;
    }
    default:
      fuzz_remove();
      break;
    }
    fuzz_check_stats();
  }
  fuzz_settle();
  rp_pool_del(fz.pool);
  FUZZ_CHECK(fuzz_live == 0, "%ld blocks not freed by rp_pool_del",
             fuzz_live);
  return 0;
}
