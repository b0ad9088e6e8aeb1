/*
 * test_core_tunnel.c: the pool in front of a DNS tunnel, with the
 * behaviours of the real clients and servers that its decisions depend
 * on (../shared/real-tunnels/README.md): a tunnel server that holds its
 * newest poll up to a second (dnstt-server answers in order and holds
 * only the newest), a client that opens with a burst of polls, and a
 * client that drops any answer that is not NOERROR without polling again
 * (the original dnstt-client): every failure costs it a poll for good.
 *
 * Each test replays such an opening with a fake clock and checks the
 * path by which the pool used to hold back or fail queries the resolver
 * would have answered.
 */
#include "test_core_harness.h"

#include <string.h>

/* start_settings fills |set| with the defaults of the respool CLI
   without --kind (generic: duplicate 2, wait_for_token 1), as a user
   starts it; start starts the harness with them. */
static void start_settings(rp_settings *set) {
  h_default_settings(set);
  rp_settings_default(set, RP_KIND_GENERIC);
  set->max_inflight = 4096;
  set->max_resolvers = 64;
}

static void start(harness *h, uint64_t seed) {
  rp_settings set;

  start_settings(&set);
  assert_int_equal(h_init(h, &set, seed), 0);
}

/* stale_settings is start_settings with settings.stale_caps |stale_caps|
   and probation_strict |strict|, after checking that both are off by
   default. */
static void stale_settings(rp_settings *set, int stale_caps, int strict) {
  start_settings(set);
  assert_int_equal(set->stale_caps, 0);
  assert_int_equal(set->probation_strict, 0);
  set->stale_caps = stale_caps;
  set->probation_strict = strict;
}

/* burst submits |n| queries |gap| apart from now. */
static void burst(harness *h, int n, rp_duration gap) {
  int i;

  for (i = 0; i < n; ++i) {
    h_submit(h);
    h_step_to(h, h->now + gap);
  }
}

/* dnstt_opening replays the real dnstt-client's opening: a burst of 128
   polls, then a poll every 250 ms from 1.5 s on (each held until the
   next by a server with |hold|). */
static void dnstt_opening(harness *h) {
  int i;

  burst(h, 128, 50 * RP_MICROSECONDS);
  h_step_to(h, 1500 * MS);
  for (i = 0; i < 12; ++i) {
    h_submit(h);
    h_step_to(h, h->now + 250 * MS);
  }
}

/* The real dnstt-client's opening over one unlimited resolver whose
   server holds each poll up to 1 s: a burst of 128 polls, then a poll
   every 250 ms (each held until the next). Nothing refuses and nothing is
   lost, so no cap may be set and no query may fail: before, probation
   kept one query out, the server held it, the burst waited 300 ms and
   failed, and the held poll was taken for a drop (ev=cap why=stale,
   cap 36 q/s on an unlimited resolver). */
static void test_core_tunnel_opening_burst(void **state) {
  harness h;
  rp_resolver_stats st;

  (void)state;
  start(&h, 101);
  h_add(&h, &(h_fake){.delay = 200 * RP_MICROSECONDS, .hold = 1 * S});
  dnstt_opening(&h);
  h_step_to(&h, h.now + 3 * S);
  st = h_rstats(&h, 0);
  print_message("delivered %llu of %llu, failed %llu, cap %.1f, state %s\n",
                (unsigned long long)h.delivered, (unsigned long long)h.qn,
                (unsigned long long)h.failed, st.cap_qps,
                rp_resolver_state_str(st.state));
  assert_int_equal(h.failed, 0);
  assert_int_equal(h.delivered, h.qn);
  assert_true(st.cap_qps == 0.0);
  assert_int_equal(h.nlog_cap, 0);
  assert_int_equal(st.dropped, 0);
  assert_int_not_equal(st.state, RP_RESOLVER_CAPPED);
  h_free(&h);
}

/* settings.stale_caps restores the rule the opening burst test's comment
   tells of: a probation try unanswered by its judge time (a held poll)
   caps the resolver at cap_drop_factor x its answer rate, assume_qps
   before assume_answers answers (36 q/s: the loopback log's "ev=cap
   why=stale cap_qps=36.0"). A lone resolver leaves probation before a
   poll is held after an answer, so the burst over three new resolvers
   that hold polls shows it (one query at a time each while another has
   room): with the setting they are capped, by default they are not. */
static void stale_caps_run(int stale_caps, size_t *pncapped,
                           uint64_t *pnlog_cap) {
  harness h;
  rp_settings set;
  size_t i;

  stale_settings(&set, stale_caps, 0);
  /* The cap lines are INFO (the harness counts them, prints none). */
  set.log_level = RP_LOG_INFO;
  assert_int_equal(h_init(&h, &set, 103), 0);
  h_add(&h, &(h_fake){.delay = 10 * MS, .hold = 1 * S});
  h_add(&h, &(h_fake){.delay = 60 * MS, .hold = 1 * S});
  h_add(&h, &(h_fake){.delay = 250 * MS, .hold = 1 * S});
  burst(&h, 200, 100 * RP_MICROSECONDS);
  h_step_to(&h, h.now + 1 * S);
  *pncapped = 0;
  for (i = 0; i < 3; ++i) {
    rp_resolver_stats st = h_rstats(&h, i);

    print_message("stale_caps=%d: resolver %zu cap %.1f state %s\n",
                  stale_caps, i, st.cap_qps, rp_resolver_state_str(st.state));
    *pncapped += st.cap_qps > 0.0;
  }
  *pnlog_cap = h.nlog_cap;
  h_free(&h);
}

static void test_core_tunnel_stale_caps_setting(void **state) {
  size_t ncapped;
  uint64_t nlog_cap;

  (void)state;
  stale_caps_run(1, &ncapped, &nlog_cap);
  assert_true(ncapped >= 1);
  assert_true(nlog_cap >= 1);
  stale_caps_run(0, &ncapped, &nlog_cap);
  assert_int_equal(ncapped, 0);
  assert_int_equal(nlog_cap, 0);
}

/* settings.probation_strict restores the probation before 43b4380: a
   resolver in probation holds one query in flight (and its stale tries)
   even when it is the only one. The opening burst over one lone resolver
   whose server holds polls: strict, the resolver never has more than one
   live query and two in flight before it leaves probation, and together
   with stale_caps the held poll caps it at 36 q/s (the loopback collapse
   of the real dnstt, docs/simulator.md); by default, or strict alone,
   nothing is capped. */
static void probation_strict_run(int strict, int stale_caps,
                                 uint32_t *pmax_inflight, double *pcap) {
  harness h;
  rp_settings set;
  rp_resolver_stats st;
  int i;

  stale_settings(&set, stale_caps, strict);
  assert_int_equal(h_init(&h, &set, 101), 0);
  h_add(&h, &(h_fake){.delay = 200 * RP_MICROSECONDS, .hold = 1 * S});
  *pmax_inflight = 0;
  for (i = 0; i < 128; ++i) {
    h_submit(&h);
    h_step_to(&h, h.now + 50 * RP_MICROSECONDS);
  }
  for (i = 0; i < 200; ++i) {
    h_step_to(&h, h.now + 10 * MS);
    st = h_rstats(&h, 0);
    if (st.state == RP_RESOLVER_PROBATION && st.inflight > *pmax_inflight) {
      *pmax_inflight = st.inflight;
    }
  }
  st = h_rstats(&h, 0);
  *pcap = st.cap_qps;
  print_message("probation_strict=%d stale_caps=%d: in flight <= %u in "
                "probation, cap %.1f\n",
                strict, stale_caps, *pmax_inflight, st.cap_qps);
  h_free(&h);
}

static void test_core_tunnel_probation_strict(void **state) {
  uint32_t maxin;
  double cap;

  (void)state;
  probation_strict_run(1, 1, &maxin, &cap);
  assert_true(maxin <= 2);
  assert_true(cap > 35.9 && cap < 36.1);
  probation_strict_run(1, 0, &maxin, &cap);
  assert_true(maxin <= 2);
  assert_true(cap == 0.0);
  probation_strict_run(0, 1, &maxin, &cap);
  assert_true(cap == 0.0);
  probation_strict_run(0, 0, &maxin, &cap);
  assert_true(cap == 0.0);
}

/* A lone resolver that holds polls, queried slowly (one poll every
   1.5 s, each held the full second): every query is still open at its
   hedge time, none is overtaken, so none is a drop and no rate is
   assumed. */
static void test_core_tunnel_idle_polls_no_cap(void **state) {
  harness h;
  rp_resolver_stats st;
  int i;

  (void)state;
  start(&h, 102);
  h_add(&h, &(h_fake){.delay = 1 * MS, .hold = 1 * S});
  for (i = 0; i < 10; ++i) {
    h_submit(&h);
    h_step_to(&h, h.now + 1500 * MS);
  }
  burst(&h, 64, 100 * RP_MICROSECONDS);
  h_step_to(&h, h.now + 3 * S);
  st = h_rstats(&h, 0);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h.delivered, h.qn);
  assert_true(st.cap_qps == 0.0);
  assert_int_equal(h.nlog_cap, 0);
  h_free(&h);
}

/* Three new resolvers 10, 60 and 250 ms away whose server holds polls,
   and a burst of 200 polls: probation spreads the first queries while
   another resolver has room, it never makes the burst wait or fail. */
static void test_core_tunnel_uneven_burst(void **state) {
  harness h;
  size_t i;

  (void)state;
  start(&h, 103);
  h_add(&h, &(h_fake){.delay = 10 * MS, .hold = 1 * S});
  h_add(&h, &(h_fake){.delay = 60 * MS, .hold = 1 * S});
  h_add(&h, &(h_fake){.delay = 250 * MS, .hold = 1 * S});
  burst(&h, 200, 100 * RP_MICROSECONDS);
  h_step_to(&h, h.now + 4 * S);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h.delivered, h.qn);
  for (i = 0; i < 3; ++i) {
    assert_true(h_rstats(&h, i).cap_qps == 0.0);
  }
  assert_int_equal(h.nlog_cap, 0);
  h_free(&h);
}

/* A dead resolver listed first costs the opening burst at most two
   queries while it is in probation (a live server that held the first
   would have answered it when the second came), and nothing fails. */
static void test_core_tunnel_dead_first(void **state) {
  harness h;

  (void)state;
  start(&h, 104);
  h_add(&h, &(h_fake){.dead = 1});
  h_add(&h, &(h_fake){.delay = 1 * MS, .hold = 1 * S});
  burst(&h, 100, 100 * RP_MICROSECONDS);
  h_step_to(&h, h.now + 1 * S);
  print_message("dead got %llu of %llu\n", (unsigned long long)h.fakes[0].got,
                (unsigned long long)h.qn);
  assert_true(h.fakes[0].got <= 2);
  h_step_to(&h, h.now + 6 * S);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h.delivered, h.qn);
  h_free(&h);
}

/* Twenty dead resolvers listed before a live one, all added unchecked
   (respool --pretest ""), and a client from the first moment: nothing
   has answered yet, so the first queries go to resolvers never answered
   (each with a try riding along to another); once one answers, no
   query's only try is placed on one that never answered while it has
   room, and the queries left on the dead ones are hedged to it as it
   gets room. A poll every 20 ms for 10 s: every query answered, none
   failed, none waited for per_attempt; before, the dead ones took the
   first queries and one every 2 s each until they were down (26 of 500
   later than 100 ms, the worst 2 035 ms). Then the real
   dnstt-client's opening burst over the same list: none fails. */
static void test_core_tunnel_unchecked_dead_start(void **state) {
  harness h;
  uint64_t qn, before = 0, late = 0;
  rp_tstamp first = RP_TSTAMP_UNSET;
  rp_duration worst = 0, d;
  size_t k;

  (void)state;
  start(&h, 109);
  for (k = 0; k < 20; ++k) {
    h_add(&h, &(h_fake){.dead = 1});
  }
  h_add(&h, &(h_fake){.delay = 5 * MS});
  h_run(&h, 10 * S, 50);
  h_step_to(&h, h.now + 6 * S);
  for (qn = 0; qn < h.qn; ++qn) {
    first =
        h.first_at[qn] != 0 && h.first_at[qn] < first ? h.first_at[qn] : first;
  }
  for (qn = 0; qn < h.qn; ++qn) {
    d = h.first_at[qn] - h.submit_at[qn];
    worst = d > worst ? d : worst;
    if (h.submit_at[qn] < first) {
      ++before;
    } else {
      late += d > 100 * MS;
    }
  }
  print_message("every 20 ms: delivered %llu of %llu, failed %llu; %llu "
                "sent before the first answer (%.0f ms), worst %.0f ms; "
                "later than 100 ms after it %llu\n",
                (unsigned long long)h.delivered, (unsigned long long)h.qn,
                (unsigned long long)h.failed, (unsigned long long)before,
                (double)first / 1e6, (double)worst / 1e6,
                (unsigned long long)late);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h.delivered, h.qn);
  /* The queries left on dead ones went to the live one once it
     answered, not after per_attempt (2 s); none after waited. */
  assert_true(worst < h.set.per_attempt / 4);
  assert_int_equal(late, 0);
  h_free(&h);

  start(&h, 110);
  for (k = 0; k < 20; ++k) {
    h_add(&h, &(h_fake){.dead = 1});
  }
  h_add(&h, &(h_fake){.delay = 200 * RP_MICROSECONDS, .hold = 1 * S});
  dnstt_opening(&h);
  h_step_to(&h, h.now + 6 * S);
  print_message("opening burst: delivered %llu of %llu, failed %llu\n",
                (unsigned long long)h.delivered, (unsigned long long)h.qn,
                (unsigned long long)h.failed);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h.delivered, h.qn);
  h_free(&h);
}

/* A query lost at a resolver that answers the ones sent after it is
   judged lost once overtaken, at the resolver's mean + 4 deviations, and
   sent again at once: its answer comes in well under per_attempt (2 s),
   which a KCP-style client would otherwise wait out. */
static void test_core_tunnel_overtaken_resent(void **state) {
  harness h;
  rp_pool_stats ps;
  rp_duration worst = 0, d;
  uint64_t qn, worst_qn = 0;

  (void)state;
  start(&h, 105);
  h_add(&h, &(h_fake){.delay = 5 * MS, .loss = 0.1});
  h_run(&h, 5 * S, 200);
  h_step_to(&h, h.now + 3 * S);
  for (qn = 0; qn < h.qn; ++qn) {
    if (h.submit_at[qn] > 4500 * MS) {
      /* The last queries: nothing sent after them can overtake them. */
      break;
    }
    d = h.first_at[qn] - h.submit_at[qn];
    if (d > worst) {
      worst = d;
      worst_qn = qn;
    }
  }
  ps = h_pstats(&h);
  print_message("lost %llu of %llu sends, resends %llu, delivered %llu of "
                "%llu, failed %llu, worst first answer %.0f ms (query %llu "
                "at %.3f s)\n",
                (unsigned long long)h.fakes[0].dropped,
                (unsigned long long)h.fakes[0].got,
                (unsigned long long)ps.resends, (unsigned long long)h.delivered,
                (unsigned long long)h.qn, (unsigned long long)h.failed,
                (double)worst / 1e6, (unsigned long long)worst_qn,
                (double)h.submit_at[worst_qn] / 1e9);
  assert_true(h.fakes[0].dropped > 50);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h.delivered, h.qn);
  /* A drop while later queries are answered is judged at once, not
     after per_attempt: well under the 2 s of per_attempt. */
  assert_true(worst < 1 * S);
  h_free(&h);
}

/* Under a cap, the queries that wait go out longest name first: in a
   tunnel a long name carries data and a short one is an empty poll, and
   when some must fail, the polls should. One resolver refusing past 25
   q/s, 40 q/s offered, every other query a long one (20 q/s): nearly all
   the long ones are answered, the failures are short ones. */
static void test_core_tunnel_wait_order(void **state) {
  harness h;
  uint64_t qn, long_ok = 0, long_n = 0, short_ok = 0, short_n = 0;
  rp_tstamp next;

  (void)state;
  start(&h, 106);
  h_add(&h, &(h_fake){.delay = 5 * MS, .limit_qps = 25, .burst = 1});
  next = h.now;
  while (h.now < 6 * S) {
    h_step_to(&h, next);
    if (h.qn % 2 == 0) {
      h_submit_padded(&h, 50);
    } else {
      h_submit(&h);
    }
    next += 25 * MS;
  }
  h_step_to(&h, h.now + 6 * S);
  for (qn = 40; qn < h.qn; ++qn) {
    uint64_t *ok = qn % 2 == 0 ? &long_ok : &short_ok;
    uint64_t *n = qn % 2 == 0 ? &long_n : &short_n;

    ++*n;
    *ok += h.first_at[qn] != 0 && !h.failed_q[qn];
  }
  print_message("answered: long %llu of %llu, short %llu of %llu\n",
                (unsigned long long)long_ok, (unsigned long long)long_n,
                (unsigned long long)short_ok, (unsigned long long)short_n);
  assert_true((double)long_ok >= 0.9 * (double)long_n);
  assert_true((double)short_ok < 0.6 * (double)short_n);
  h_free(&h);
}

/* A flood from the first moment over two resolvers answering 500 ms
   late: both are in probation (one query out, then one more per reply),
   so for the first round trips most queries have nowhere to go. While a
   resolver in probation has lost nothing it will soon take them: they
   wait (in steps of token_wait, up to their deadline) instead of failing
   after token_wait (before: 1 000 q/s for 3 s failed 61 % of the queries;
   the outside test saw 79.5k of 200k fail in the first 4.5 s). */
static void test_core_tunnel_slow_flood_start(void **state) {
  harness h;
  rp_pool_stats ps;

  (void)state;
  start(&h, 107);
  h_add(&h, &(h_fake){.delay = 500 * MS});
  h_add(&h, &(h_fake){.delay = 500 * MS});
  h_run(&h, 3 * S, 1000);
  h_step_to(&h, h.now + 6 * S);
  ps = h_pstats(&h);
  print_message("slow flood: %llu queries, delivered %llu, failed %llu, "
                "waits %llu\n",
                (unsigned long long)h.qn, (unsigned long long)h.delivered,
                (unsigned long long)h.failed, (unsigned long long)ps.waits);
  assert_true(ps.waits > 100);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h.delivered, h.qn);
  h_free(&h);
}

/* The wait of the flood above ends when no resolver in probation is left
   that lost nothing: over one dead resolver, added unchecked, queries
   fail once its probation query has timed out (per_attempt, 2 s) and
   one token_wait more, not at their 5 s deadline. */
static void test_core_tunnel_dead_probation_fails_soon(void **state) {
  harness h;

  (void)state;
  start(&h, 108);
  h_add(&h, &(h_fake){.dead = 1});
  h_run(&h, 1 * S, 100);
  assert_true(h.qn >= 100);
  h_step_to(&h, h.set.per_attempt + 2 * h.set.token_wait);
  print_message("dead in probation: %llu of %llu failed by %.1f s\n",
                (unsigned long long)h.failed, (unsigned long long)h.qn,
                (double)h.now / 1e9);
  /* All but the probation query itself (resent after its timeout). */
  assert_true(h.failed + 1 >= h.qn);
  h_free(&h);
}

/* sends_of counts the sends of query |qn| and how many resolvers took
   them. */
static size_t sends_of(const harness *h, uint64_t qn, size_t *nres) {
  size_t i, j, n = 0;
  uint32_t seen[8];

  *nres = 0;
  for (i = 0; i < h->nsends; ++i) {
    if (h->sends[i].qn != qn) {
      continue;
    }
    ++n;
    for (j = 0; j < *nres && seen[j] != h->sends[i].res; ++j) {
    }
    if (j == *nres && *nres < 8) {
      seen[(*nres)++] = h->sends[i].res;
    }
  }
  return n;
}

/* kind_settings fills |by_kind| as the runtime does for kind auto: each
   kind's defaults, with the harness pool's table sizes. */
static void kind_settings(const harness *h, rp_settings *by_kind) {
  size_t k;

  for (k = 0; k < RP_KIND_COUNT; ++k) {
    rp_settings_default(&by_kind[k], (rp_kind)k);
    by_kind[k].max_inflight = h->set.max_inflight;
    by_kind[k].max_resolvers = h->set.max_resolvers;
  }
}

/* feed_names submits tunnel-like queries 5 ms apart until the pool
   takes a kind (at most 64): first labels of |len| characters, |prefix|
   (a session's constant part) then characters of |alphabet|. */
static void feed_names(harness *h, const char *prefix, size_t len,
                       const char *alphabet) {
  size_t j, plen = strlen(prefix), n = strlen(alphabet);
  char label[64];
  int i;

  assert_true(len < sizeof(label) && plen <= len);
  for (i = 0; i < 64 && rp_pool_kind(h->pool) == RP_KIND_AUTO; ++i) {
    memcpy(label, prefix, plen);
    for (j = plen; j < len; ++j) {
      label[j] = alphabet[((size_t)i * 7 + j * 13) % n];
    }
    label[len] = '\0';
    h_submit_label(h, label);
    h_step_to(h, h->now + 5 * MS);
  }
}

/* Kind auto: the CLI without --kind starts generic (one copy a query at
   most) and, once 32 TXT names with base36 labels show MasterDnsVPN,
   runs with the masterdns settings: copies on every other resolver,
   sent with the first (copy_delay_rtt 0), over three resolvers whose server answers
   each copy with other data. Before the verdict rp_pool_kind says auto. */
static void test_core_tunnel_auto_kind_masterdns(void **state) {
  rp_settings by_kind[RP_KIND_COUNT];
  harness h;
  uint64_t qn;
  size_t n, nres;
  int i;

  (void)state;
  start(&h, 131);
  kind_settings(&h, by_kind);
  assert_int_equal(rp_pool_sense_kind(h.pool, by_kind), 0);
  assert_int_equal(rp_pool_kind(h.pool), RP_KIND_AUTO);
  for (i = 0; i < 3; ++i) {
    h_add(&h, &(h_fake){.delay = 2 * MS, .varied = 1});
  }
  /* Warm up past probation with plain names (not looked at). */
  for (i = 0; i < 40; ++i) {
    h_submit(&h);
    h_step_to(&h, h.now + 5 * MS);
  }
  qn = h_submit(&h);
  h_step_to(&h, h.now + 20 * MS);
  assert_true(sends_of(&h, qn, &nres) <= 2);
  /* The verdict comes within 64 such names (32 in sense.h). */
  feed_names(&h, "7mz3m77e9ky", 18, "0123456789abcdefghijklmnopqrstuvwxyz");
  assert_int_equal(rp_pool_kind(h.pool), RP_KIND_MASTERDNS);
  /* The copy bound ramps up over copy_ramp from the verdict (generic
     has no ramp, so each query restarted it). */
  for (i = 0; i < 220; ++i) {
    h_submit(&h);
    h_step_to(&h, h.now + 5 * MS);
  }
  qn = h_submit(&h);
  h_step_to(&h, h.now + 20 * MS);
  n = sends_of(&h, qn, &nres);
  print_message("after the verdict: %zu sends over %zu resolvers\n", n, nres);
  /* At least a copy on each other resolver, never past duplicate. */
  assert_true(n >= 3);
  assert_true(n <= by_kind[RP_KIND_MASTERDNS].duplicate);
  assert_int_equal(nres, 3);
  assert_int_equal(h.failed, 0);
  h_free(&h);
}

/* dnstt's base32 names give kind dnstt, whose settings are generic's: the
   pool goes on as it started. A sense request after the first query, or
   with settings that resize the pool's tables, is refused. */
static void test_core_tunnel_auto_kind_dnstt(void **state) {
  rp_settings by_kind[RP_KIND_COUNT];
  harness h;

  (void)state;
  start(&h, 137);
  kind_settings(&h, by_kind);
  by_kind[RP_KIND_MASTERDNS].max_inflight = 10;
  assert_int_equal(rp_pool_sense_kind(h.pool, by_kind),
                   RP_ERR_INVALID_ARGUMENT);
  assert_int_equal(rp_pool_kind(h.pool), RP_KIND_GENERIC);
  by_kind[RP_KIND_MASTERDNS].max_inflight = h.set.max_inflight;
  assert_int_equal(rp_pool_sense_kind(h.pool, by_kind), 0);
  h_add(&h, &(h_fake){.delay = 2 * MS, .varied = 1});
  feed_names(&h, "j6r5hluc45zn", 60, "abcdefghijklmnopqrstuvwxyz234567");
  assert_int_equal(rp_pool_kind(h.pool), RP_KIND_DNSTT);
  assert_int_equal(rp_pool_sense_kind(h.pool, by_kind),
                   RP_ERR_INVALID_ARGUMENT);
  h_step_to(&h, h.now + 1 * S);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h.delivered, h.qn);
  h_free(&h);
}

/* copies_per_query runs a pool of |kind| (its own duplicate) over one
   2 ms resolver whose copies' answers carry data but for |empty_share|
   of the queries (|varied| 0: a plain resolver, every copy repeats), at
   500 queries/s, and returns the copies per query from 3 s to 7 s. */
static double copies_per_query(rp_kind kind, double empty_share, int varied) {
  harness h;
  rp_settings set;
  uint64_t before, q0;
  double share;

  h_kind_settings(&set, kind);
  set.duplicate = 2;
  assert_int_equal(h_init(&h, &set, 140), 0);
  h_add(&h, &(h_fake){.delay = 2 * MS, .varied = varied,
                      .empty_share = empty_share});
  h_run(&h, 3 * S, 500);
  before = h_pstats(&h).copies;
  q0 = h.qn;
  h_run(&h, 4 * S, 500);
  share = (double)(h_pstats(&h).copies - before) / (double)(h.qn - q0);
  print_message("kind %d, empty %.2f, varied %d: %.3f copies per query\n",
                (int)kind, empty_share, varied, share);
  assert_int_equal(h.failed, 0);
  h_free(&h);
  return share;
}

/* The real dnstt-client's copies: about half of their answers carry
   data (dnstt-server answers a poll and its copy empty when nothing is
   queued). Kind dnstt judges 32 at a time and keeps them while more than
   a quarter carry data: a copy a query. The generic rule (8 at a time,
   cut at half) loses them to the probes; a plain resolver's copies
   (every one repeats) stop under both. */
static void test_core_tunnel_dnstt_copies_half_data(void **state) {
  rp_settings set;

  (void)state;
  rp_settings_default(&set, RP_KIND_DNSTT);
  assert_int_equal(set.copy_window, 32);
  assert_true(set.copy_data_share == 0.25);
  assert_true(copies_per_query(RP_KIND_DNSTT, 0.5, 1) > 0.9);
  assert_true(copies_per_query(RP_KIND_DNSTT, 0.0, 1) > 0.9);
  assert_true(copies_per_query(RP_KIND_GENERIC, 0.5, 1) < 0.3);
  assert_true(copies_per_query(RP_KIND_DNSTT, 0.0, 0) < 0.05);
  assert_true(copies_per_query(RP_KIND_DNSTT, 0.9, 1) < 0.05);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_core_tunnel_opening_burst),
      cmocka_unit_test(test_core_tunnel_stale_caps_setting),
      cmocka_unit_test(test_core_tunnel_probation_strict),
      cmocka_unit_test(test_core_tunnel_idle_polls_no_cap),
      cmocka_unit_test(test_core_tunnel_uneven_burst),
      cmocka_unit_test(test_core_tunnel_dead_first),
      cmocka_unit_test(test_core_tunnel_unchecked_dead_start),
      cmocka_unit_test(test_core_tunnel_overtaken_resent),
      cmocka_unit_test(test_core_tunnel_wait_order),
      cmocka_unit_test(test_core_tunnel_slow_flood_start),
      cmocka_unit_test(test_core_tunnel_dead_probation_fails_soon),
      cmocka_unit_test(test_core_tunnel_auto_kind_masterdns),
      cmocka_unit_test(test_core_tunnel_auto_kind_dnstt),
      cmocka_unit_test(test_core_tunnel_dnstt_copies_half_data),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
