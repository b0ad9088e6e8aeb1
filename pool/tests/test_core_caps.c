/*
 * test_core_caps.c: learned caps, refusals, waits and sends past the cap,
 * driven through the pool with simulated rate-limited resolvers.
 */
#include "test_core_harness.h"

static void start(harness *h, int wait, uint64_t seed) {
  rp_settings set;

  h_default_settings(&set);
  set.wait_for_token = wait;
  assert_int_equal(h_init(h, &set, seed), 0);
}

/* start_slow is start with assume_qps 10 (cap 12 after a first
   refusal), for tests that time single sends. */
static void start_slow(harness *h, int wait, uint64_t seed) {
  rp_settings set;

  h_default_settings(&set);
  set.wait_for_token = wait;
  set.assume_qps = 10.0;
  assert_int_equal(h_init(h, &set, seed), 0);
}

/* A resolver refusing past 25 q/s under 100 q/s ends with a cap between
   20 and 32 q/s within 10 simulated seconds (held or failed). */
static void test_core_caps_refusal_learns_limit(void **state) {
  harness h;
  int wait;
  rp_resolver_stats st;

  (void)state;
  for (wait = 0; wait <= 1; ++wait) {
    start(&h, wait, 31);
    h_add(&h, &(h_fake){.delay = 20 * MS, .limit_qps = 25, .burst = 5});
    h_run(&h, 10 * S, 100);
    st = h_rstats(&h, 0);
    print_message("wait=%d cap=%.1f rate=%.1f refused=%llu\n", wait, st.cap_qps,
                  st.answer_rate_qps, (unsigned long long)st.refused);
    assert_int_equal(st.state, RP_RESOLVER_CAPPED);
    assert_true(st.cap_qps >= 20.0 && st.cap_qps <= 32.0);
    /* It answers close to its limit. */
    assert_true(st.answer_rate_qps > 20.0);
    h_free(&h);
  }
}

/* caps_drop_run runs a resolver that drops past 40 q/s (burst 5) beside
   one without a limit at 150 q/s for 13 s, settings.early_drop_loss
   |early|; |*pcap_ratio| is its first cap over its answer rate just
   before (0 if none by 5 s). */
static void caps_drop_run(uint32_t early, double *pcap_ratio,
                          rp_resolver_stats *pst, rp_pool_stats *pps) {
  harness h;
  rp_settings set;
  rp_resolver_stats st;

  h_default_settings(&set);
  set.wait_for_token = 0;
  set.early_drop_loss = early;
  assert_int_equal(h_init(&h, &set, 32), 0);
  h_add(&h,
        &(h_fake){
            .delay = 20 * MS, .limit_qps = 40, .burst = 5, .limit_drops = 1});
  h_add(&h, &(h_fake){.delay = 20 * MS});
  *pcap_ratio = 0.0;
  /* Up to just before the first drop is judged (2 s per_attempt). */
  h_run(&h, 2100 * MS, 150);
  while (h.now < 5 * S) {
    rp_resolver_stats before = h_rstats(&h, 0);

    h_run(&h, S / 150, 150); /* one query a step */
    st = h_rstats(&h, 0);
    if (st.cap_qps > 0.0) {
      *pcap_ratio = st.cap_qps / before.answer_rate_qps;
      print_message("early_drop_loss=%u: at %.3f s cap=%.1f rate=%.1f "
                    "ratio=%.3f\n",
                    early, (double)h.now / S, st.cap_qps,
                    before.answer_rate_qps, *pcap_ratio);
      break;
    }
  }
  h_run(&h, 13 * S - h.now, 150);
  *pst = h_rstats(&h, 0);
  *pps = h_pstats(&h);
  print_message("early_drop_loss=%u: sent %llu dropped %llu rate %.1f "
                "delivered %llu failed %llu\n",
                early, (unsigned long long)pst->sent,
                (unsigned long long)pst->dropped, pst->answer_rate_qps,
                (unsigned long long)pps->delivered,
                (unsigned long long)pps->failed);
  h_free(&h);
}

/* A resolver that drops past 40 q/s while answering others. Without
   early_drop_loss (the oldest rule) its drops start an episode and it
   gets a cap of 0.9 x its recent answer rate. With it (rules 1 and 2,
   the default) its first drops count as loss and the loss bound moves it out of the
   equal-cost band while the other has room: it gets no cap, drops a
   few queries where the old rule dropped over 20, and nothing fails. */
static void test_core_caps_drop(void **state) {
  double ratio;
  rp_resolver_stats st;
  rp_pool_stats ps;
  uint32_t early;

  (void)state;
  caps_drop_run(0, &ratio, &st, &ps);
  assert_true(ratio > 0.85 && ratio < 0.95);
  assert_true(st.dropped > 0);
  /* Still used (capped, not down). */
  assert_int_not_equal(st.state, RP_RESOLVER_DOWN);
  assert_true(st.answer_rate_qps > 25.0);
  assert_true(ps.delivered > 1500);
  for (early = 1; early <= 2; ++early) {
    caps_drop_run(early, &ratio, &st, &ps);
    assert_true(st.dropped > 0 && st.dropped < 2 * 5);
    assert_int_not_equal(st.state, RP_RESOLVER_DOWN);
    assert_int_equal(ps.failed, 0);
    assert_true(ps.delivered > 1500);
  }
}

/* A refused query is resent at once to another resolver. */
static void test_core_caps_refusal_resent_at_once(void **state) {
  harness h;
  size_t k;
  int found = 0;

  (void)state;
  start(&h, 0, 33);
  h_add(&h, &(h_fake){.delay = 15 * MS, .refuse = 1});
  h_add(&h, &(h_fake){.delay = 15 * MS});
  h_run(&h, 2 * S, 20);
  for (k = 0; k + 1 < h.nsends; ++k) {
    if (h.sends[k].res != h.fakes[0].id) {
      continue;
    }
    /* The same query goes to the other resolver when the refusal
       arrives, 15 ms later. */
    size_t j;

    for (j = k + 1; j < h.nsends; ++j) {
      if (h.sends[j].qn == h.sends[k].qn) {
        assert_int_equal(h.sends[j].res, h.fakes[1].id);
        assert_true(h.sends[j].at == h.sends[k].at + 15 * MS);
        ++found;
        break;
      }
    }
  }
  assert_true(found >= 1);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h_pstats(&h).resends, found);
  h_free(&h);
}

/* Every resolver at its cap: the query waits up to 300 ms for a token
   when wait_for_token, then SERVFAIL; without it, SERVFAIL at once. */
static void test_core_caps_wait_for_token(void **state) {
  harness h;

  (void)state;
  start_slow(&h, 1, 34);
  h_add(&h, &(h_fake){.delay = 10 * MS, .refuse = 1});
  h_submit(&h);
  h_step_to(&h, 309 * MS);
  assert_int_equal(h.failed, 0);
  assert_int_equal(h_pstats(&h).waits, 1);
  h_step_to(&h, 310 * MS);
  assert_int_equal(h.failed, 1);
  /* It was tried again when tokens came, and refused again. */
  assert_true(h.fakes[0].got >= 2);
  h_free(&h);

  /* Without wait_for_token, SERVFAIL at once once no resolver is in
     probation (probation is no cap: see the next test). */
  {
    rp_settings set;

    h_default_settings(&set);
    set.wait_for_token = 0;
    set.probation_answers = 1;
    assert_int_equal(h_init(&h, &set, 34), 0);
  }
  h_add(&h, &(h_fake){.delay = 10 * MS, .refuse = 1});
  h_submit(&h);
  h_step_to(&h, 10 * MS);
  assert_int_equal(h.failed, 1);
  assert_int_equal(h_pstats(&h).waits, 0);
  h_free(&h);

  /* Kind masterdns waits token_wait 50 ms (the generic kind 300 ms):
     the same refusing resolver fails the query at 60 ms. */
  {
    rp_settings set;

    h_default_settings(&set);
    assert_true(set.token_wait == 300 * MS);
    h_kind_settings(&set, RP_KIND_MASTERDNS);
    assert_true(set.token_wait == 50 * MS);
    set.assume_qps = 10.0;
    assert_int_equal(h_init(&h, &set, 34), 0);
  }
  h_add(&h, &(h_fake){.delay = 10 * MS, .refuse = 1});
  h_submit(&h);
  h_step_to(&h, 59 * MS);
  assert_int_equal(h.failed, 0);
  h_step_to(&h, 60 * MS);
  assert_int_equal(h.failed, 1);
  h_free(&h);
}

/* Probation never fails a query at once: with wait_for_token 0, queries
   that arrive while every resolver has its one probation query in
   flight are held and sent as the probation slots free. */
static void test_core_caps_probation_holds(void **state) {
  harness h;
  int i;

  (void)state;
  start(&h, 0, 35);
  h_add(&h, &(h_fake){.delay = 10 * MS});
  h_add(&h, &(h_fake){.delay = 10 * MS});
  for (i = 0; i < 6; ++i) {
    h_submit(&h);
  }
  h_step_to(&h, 200 * MS);
  assert_int_equal(h.failed, 0);
  assert_true(h_pstats(&h).delivered >= 6);
  assert_true(h_pstats(&h).waits >= 1);
  h_free(&h);
}

/* One waiting query per resolver per 100 ms is sent past the cap, but
   not while the resolver refused lately; a first refusal before 10
   answers assumes assume_qps (here 10 q/s: cap 12). Answers above the cap for two whole
   seconds raise it. */
static void test_core_caps_past_cap(void **state) {
  harness h;
  rp_resolver_stats st;
  uint64_t before;
  double cap;

  (void)state;
  {
    rp_settings set;

    /* assume_qps 10 (cap 12), below the offered 100 q/s. */
    h_default_settings(&set);
    set.wait_for_token = 1;
    set.assume_qps = 10.0;
    assert_int_equal(h_init(&h, &set, 35), 0);
  }
  h_add(&h, &(h_fake){.delay = 5 * MS,
                      .refuse = 1,
                      .refuse_from = 0,
                      .refuse_until = 1 * MS});
  h_run(&h, 100 * MS, 100);
  st = h_rstats(&h, 0);
  assert_true(st.cap_qps > 11.9 && st.cap_qps < 12.1);
  /* Refused lately: sends stay within the cap. */
  before = h.fakes[0].got;
  h_run(&h, 1 * S, 100);
  assert_true(h.fakes[0].got - before <= 12 + 3);
  /* After trouble_recent: about 10 more a second past the cap. */
  h_run(&h, 1500 * MS, 100);
  before = h.fakes[0].got;
  cap = h_rstats(&h, 0).cap_qps;
  h_run(&h, 1 * S, 100);
  st = h_rstats(&h, 0);
  print_message("cap %.1f..%.1f sends %llu\n", cap, st.cap_qps,
                (unsigned long long)(h.fakes[0].got - before));
  assert_true((double)(h.fakes[0].got - before) >= cap + 7.0);
  assert_true((double)(h.fakes[0].got - before) <= st.cap_qps + 14.0);
  /* The answers above the cap raise it. */
  h_run(&h, 4 * S, 100);
  assert_true(h_rstats(&h, 0).cap_qps > 20.0);
  h_free(&h);
}

/* Three limited resolvers (20 refusing, 30 refusing, 40 dropping) are
   used up to the sum of their limits. */
static void test_core_caps_three_limited(void **state) {
  harness h;
  uint64_t before;
  double rate;

  (void)state;
  start(&h, 1, 36);
  h_add(&h, &(h_fake){.delay = 20 * MS, .limit_qps = 20, .burst = 5});
  h_add(&h, &(h_fake){.delay = 20 * MS, .limit_qps = 30, .burst = 5});
  h_add(&h,
        &(h_fake){
            .delay = 20 * MS, .limit_qps = 40, .burst = 5, .limit_drops = 1});
  h_run(&h, 20 * S, 150);
  before = h.delivered;
  h_run(&h, 10 * S, 150);
  rate = (double)(h.delivered - before) / 10.0;
  print_message("delivered %.1f q/s of 90; caps %.1f %.1f %.1f\n", rate,
                h_rstats(&h, 0).cap_qps, h_rstats(&h, 1).cap_qps,
                h_rstats(&h, 2).cap_qps);
  assert_true(rate > 65.0);
  h_free(&h);
}

/* rate_after runs |h| at |qps| for |warm|, then for 10 s, and returns
   the client's delivered answers per second over those 10 s. */
static double rate_after(harness *h, rp_duration warm, double qps) {
  uint64_t before;

  h_run(h, warm, qps);
  before = h->delivered;
  h_run(h, 10 * S, qps);
  return (double)(h->delivered - before) / 10.0;
}

/* Three limited resolvers with the fake resolvers' bucket (a tenth of a
   second of their rate), every kind's defaults, a minute at 150 q/s:
   the pool answers close to the 90 q/s they allow over the last 10 s,
   and the dropper is never taken for a random loser. Kind masterdns
   (trouble_recent 1 s) grew the cap of a drop episode past the limit
   and sent past it: the drops under the episode's lower cap then
   looked like random loss, the dropper was left out of the band, and
   from 10 s on the pool answered 50 q/s. Now a drop episode's cap does
   not grow and no send goes past it until the episode ends. */
static void test_core_caps_three_limited_kinds(void **state) {
  harness h;
  rp_settings set;
  double rate;
  rp_resolver_stats st;
  int kind;

  (void)state;
  for (kind = RP_KIND_GENERIC; kind < RP_KIND_COUNT; ++kind) {
    h_kind_settings(&set, (rp_kind)kind);
    assert_int_equal(h_init(&h, &set, 37), 0);
    h_add(&h, &(h_fake){.delay = 1 * MS, .limit_qps = 20, .burst = 2});
    h_add(&h, &(h_fake){.delay = 1 * MS, .limit_qps = 30, .burst = 3});
    h_add(&h, &(h_fake){.delay = 1 * MS,
                        .limit_qps = 40,
                        .burst = 4,
                        .limit_drops = 1});
    rate = rate_after(&h, 50 * S, 150);
    st = h_rstats(&h, 2);
    print_message("kind %d: delivered %.1f q/s of 90; dropper cap %.1f "
                  "rate %.1f loss %.3f\n",
                  kind, rate, st.cap_qps, st.answer_rate_qps, st.loss);
    assert_true(rate > 80.0);
    assert_true(st.answer_rate_qps > 35.0);
    assert_int_equal(st.state, RP_RESOLVER_CAPPED);
    /* Its drops stay overflow: no loss (a spill would get its answers
       to the client even so, but each after a token_wait). */
    assert_true(st.loss < 0.05);
    h_free(&h);
  }
}

/* A query that no resolver of the band can take (the fast one at its
   cap) goes to a resolver out of the band with room, slower or
   lossier, instead of failing: 100 q/s over a 20 q/s refuser and a
   resolver 200 ms slow, or losing 20 %, are answered at 100 and about
   80 q/s, where the pool answered 20 (the slow one stayed in
   probation with two queries in a minute, the lossy one got a retry
   every 2 s). A dead second resolver takes a few until it is down. */
static void test_core_caps_spill(void **state) {
  static const struct {
    h_fake second;
    double want;
  } cases[] = {
      {{.delay = 200 * MS}, 95.0},
      {{.delay = 1 * MS, .loss = 0.2}, 70.0},
      {{.dead = 1}, 0.0},
  };
  harness h;
  size_t i;
  double rate;
  rp_pool_stats ps;

  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    start(&h, 1, 38);
    h_add(&h, &(h_fake){.delay = 1 * MS, .limit_qps = 20, .burst = 2});
    h_add(&h, &cases[i].second);
    rate = rate_after(&h, 20 * S, 100);
    ps = h_pstats(&h);
    print_message("case %zu: delivered %.1f q/s, spills %llu, second got "
                  "%llu\n",
                  i, rate, (unsigned long long)ps.spills,
                  (unsigned long long)h.fakes[1].got);
    if (cases[i].want > 0.0) {
      assert_true(rate > cases[i].want);
      assert_true(ps.spills > 0);
    } else {
      /* Only what the refuser allows; the dead one, never answered,
         takes a query only when the refuser has no room (or one
         spilled), one at a time, until it is down (down_after
         timeouts): a handful, then none. */
      assert_true(rate > 15.0 && rate < 25.0);
      assert_true(ps.spills <= 10);
      assert_int_equal(h_rstats(&h, 1).state, RP_RESOLVER_DOWN);
    }
    h_free(&h);
  }
}

/* A dropping resolver that took a burst holds every try of it, and while
   no later send goes to it nothing overtakes them: their hedges found
   no room (the other resolver at its cap) and gave up, so each query
   waited out per_attempt (2 s). The real MasterDnsVPN client, whose
   window was full of them, stalled at the start of
   three-limited-one-dead. Now a hedge that finds no room is tried again
   (at least token_wait later) until one has room. 30 queries at once
   over a 20 q/s refuser and a 20 q/s dropper, nothing more: 1 s later
   at most a few are still going (before: 26 still open at the
   dropper, every kind). */
static void test_core_caps_hedge_waits_for_room(void **state) {
  harness h;
  rp_settings set;
  int kind, i;
  uint64_t open;

  (void)state;
  for (kind = RP_KIND_GENERIC; kind < RP_KIND_COUNT; ++kind) {
    h_kind_settings(&set, (rp_kind)kind);
    set.wait_for_token = 1;
    assert_int_equal(h_init(&h, &set, 41), 0);
    h_add(&h, &(h_fake){.delay = 1 * MS, .limit_qps = 20, .burst = 2});
    h_add(&h, &(h_fake){.delay = 1 * MS,
                        .limit_qps = 20,
                        .burst = 2,
                        .limit_drops = 1});
    /* Both past probation first, as in a running tunnel. */
    for (i = 0; i < 40; ++i) {
      h_submit(&h);
      h_step_to(&h, h.now + 100 * MS);
    }
    h.delivered = 0;
    h.failed = 0;
    for (i = 0; i < 30; ++i) {
      h_submit(&h);
    }
    h_step_to(&h, h.now + 1000 * MS);
    open = 30 - h.delivered - h.failed;
    print_message("kind %d: after 1 s %llu answered, %llu failed, %llu open; "
                  "%llu hedges\n",
                  kind, (unsigned long long)h.delivered,
                  (unsigned long long)h.failed, (unsigned long long)open,
                  (unsigned long long)h_pstats(&h).hedges);
    /* Before: 26 of 30 still at the dropper. Now a query or two may
       still be going between the two caps (a refusal, a drop, a
       resend), none waits out per_attempt. */
    assert_true(open <= 3);
    assert_true(h_pstats(&h).hedges > 0);
    h_free(&h);
  }
}

/* reorder_run runs one resolver that answers 1 000 q/s in 2 ms, and one
   answer in ten in 30-60 ms, for 6 s with settings.late_window |late|
   (ns); nothing is lost. */
static void reorder_run(rp_duration late, rp_resolver_stats *pst,
                        rp_pool_stats *pps) {
  harness h;
  rp_settings set;

  h_default_settings(&set);
  set.late_window = late;
  assert_int_equal(h_init(&h, &set, 77), 0);
  h_add(&h, &(h_fake){.delay = 2 * MS, .late_share = 0.1,
                      .late_delay = 60 * MS});
  h_run(&h, 6 * S, 1000);
  *pst = h_rstats(&h, 0);
  *pps = h_pstats(&h);
  print_message("late_window=%.0f s: judged lost %llu, late %llu, resends "
                "%llu, cap %.1f, waits %llu, failed %llu\n",
                (double)late / S, (unsigned long long)pst->dropped,
                (unsigned long long)pst->late,
                (unsigned long long)pps->resends, pst->cap_qps,
                (unsigned long long)pps->waits,
                (unsigned long long)pps->failed);
  h_free(&h);
}

/* A resolver that answers some queries much later than the rest loses
   nothing: the first of its late answers to tries already judged lost
   hold later judgements back (settings.late_window), so it is neither
   capped nor its queries resent. Without the rule (late_window 0) every
   late try overtaken by a quick one is judged lost and resent. The real
   MasterDnsVPN server under load answered so: 94-830 tries a run were
   judged lost over three loss-free resolvers, every one answered 6-160
   ms later, and the drops capped all three. */
static void test_core_caps_reorder_not_drop(void **state) {
  rp_resolver_stats st;
  rp_pool_stats ps;

  (void)state;
  reorder_run(10 * S, &st, &ps);
  assert_true(st.late > 0);
  assert_true(st.late <= st.dropped);
  assert_true(st.dropped < 60);
  assert_true(ps.resends < 60);
  assert_true(st.cap_qps == 0.0);
  assert_true(ps.waits < 50);
  assert_int_equal(ps.failed, 0);

  reorder_run(0, &st, &ps);
  assert_true(st.dropped > 200);
  assert_true(ps.resends > 200);
}

/* late_loss_run runs, for 6 s at 1 000 q/s with settings.late_window 0,
   a resolver that answers in 2 ms and one answer in ten in 30-60 ms
   (nothing lost), beside one that answers in 2 ms and loses one in ten;
   fills the first's stats and the second's. */
static void late_loss_run(rp_resolver_stats *pre, rp_resolver_stats *plo) {
  harness h;
  rp_settings set;

  h_default_settings(&set);
  set.late_window = 0;
  assert_int_equal(h_init(&h, &set, 78), 0);
  h_add(&h, &(h_fake){.delay = 2 * MS, .late_share = 0.1,
                      .late_delay = 60 * MS});
  h_add(&h, &(h_fake){.delay = 2 * MS, .loss = 0.1});
  h_run(&h, 6 * S, 1000);
  *pre = h_rstats(&h, 0);
  *plo = h_rstats(&h, 1);
  print_message("reorderer: sent %llu, judged lost %llu, late %llu, loss "
                "%.3f; loser: sent %llu, loss %.3f\n",
                (unsigned long long)pre->sent,
                (unsigned long long)pre->dropped,
                (unsigned long long)pre->late, pre->loss,
                (unsigned long long)plo->sent, plo->loss);
  h_free(&h);
}

/* A late answer takes its judgement's loss back even without a late
   window (kinds generic and dnstt): the try was answered, so it was not
   lost. Before, a resolver that lost nothing but answered late under
   load (a busy machine's queueing, a tunnel server's held polls) was
   judged as lossy as one that lost a tenth, and left out for the rest
   of a run: the minimal DNSTT pool over three-lossy on a loaded
   machine sent its clean resolver 383-455 queries in 5 s and the one
   losing a tenth 30 000-40 000. The judgement itself (its resend, its
   drop) is as before: only late_window holds it back. */
static void test_core_caps_late_loss_taken_back(void **state) {
  rp_resolver_stats re, lo;

  (void)state;
  late_loss_run(&re, &lo);
  assert_true(re.dropped > 50);
  assert_true(re.late > 50);
  assert_true(re.loss < 0.02);
  assert_true(lo.loss > 0.05);
  assert_true(re.sent > 2 * lo.sent);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_core_caps_refusal_learns_limit),
      cmocka_unit_test(test_core_caps_drop),
      cmocka_unit_test(test_core_caps_reorder_not_drop),
      cmocka_unit_test(test_core_caps_late_loss_taken_back),
      cmocka_unit_test(test_core_caps_refusal_resent_at_once),
      cmocka_unit_test(test_core_caps_wait_for_token),
      cmocka_unit_test(test_core_caps_probation_holds),
      cmocka_unit_test(test_core_caps_past_cap),
      cmocka_unit_test(test_core_caps_three_limited),
      cmocka_unit_test(test_core_caps_three_limited_kinds),
      cmocka_unit_test(test_core_caps_spill),
      cmocka_unit_test(test_core_caps_hedge_waits_for_room),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
