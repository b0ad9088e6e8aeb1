/*
 * test_sim_run.h: build and run a simulation in one call, for the
 * simulator's behaviour tests and its bench.
 */
#ifndef TEST_SIM_RUN_H
#define TEST_SIM_RUN_H

#include "rp_test_mem.h"

#include "sim.h"

#include <stdio.h>
#include <string.h>

/* test_sim_make creates a run of |kind| with |seed|, the load |load| and
   the |n| resolver specs |specs|, with the test allocator. */
static inline sim *test_sim_make(rp_kind kind, uint64_t seed, const char *load,
                                 const char *const *specs, size_t n) {
  sim_config cfg;
  sim *s = NULL;
  char err[FR_ERRBUF_LEN];
  size_t i;
  sim_config_default(&cfg, kind);
  cfg.seed = seed;
  if (sim_load_parse(&cfg.load, load, err, sizeof(err)) != 0) {
    fail_msg("load '%s': %s", load, err);
  }
  assert_int_equal(sim_new(&s, &cfg, rp_test_mem_plain()), 0);
  for (i = 0; i < n; ++i) {
    fr_spec spec;
    fr_spec_default(&spec);
    if (fr_spec_parse(&spec, specs[i], err, sizeof(err)) != 0) {
      fail_msg("spec '%s': %s", specs[i], err);
    }
    assert_int_equal(sim_add_resolver(s, &spec, NULL), 0);
  }
  return s;
}

/* test_sim_share returns resolver |i|'s share of all queries the
   resolvers received, 0..1. */
static inline double test_sim_share(const sim *s, uint32_t i) {
  uint64_t total = 0;
  uint32_t k;
  for (k = 0; k < sim_resolver_count(s); ++k) {
    total += sim_get_resolver(s, k)->counts.received;
  }
  return total ? (double)sim_get_resolver(s, i)->counts.received / (double)total
               : 0.0;
}

/* test_sim_run_ok runs |s| to its end and fails the test on an error. */
static inline void test_sim_run_ok(sim *s) {
  int rv = sim_run(s);
  if (rv != 0) {
    fail_msg("sim_run: %s", sim_error(s));
  }
}

#endif /* TEST_SIM_RUN_H */
