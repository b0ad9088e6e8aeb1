/*
 * test_sim_mem.h: an rp_mem over cmocka's test allocator, so a leak in
 * the simulator or the core fails the test (STYLE.md section 5).
 */
#ifndef TEST_SIM_MEM_H
#define TEST_SIM_MEM_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "respool.h"

static void *test_sim_malloc(size_t size, void *user_data) {
  (void)user_data;
  return test_malloc(size);
}

static void test_sim_free(void *ptr, void *user_data) {
  (void)user_data;
  test_free(ptr);
}

static void *test_sim_calloc(size_t nmemb, size_t size, void *user_data) {
  (void)user_data;
  return test_calloc(nmemb, size);
}

static void *test_sim_realloc(void *ptr, size_t size, void *user_data) {
  (void)user_data;
  return test_realloc(ptr, size);
}

/* test_sim_mem is the allocator the tests pass to sim_new. */
static const rp_mem test_sim_mem = {.user_data = NULL,
                                    .malloc = test_sim_malloc,
                                    .free = test_sim_free,
                                    .calloc = test_sim_calloc,
                                    .realloc = test_sim_realloc};

#endif /* TEST_SIM_MEM_H */
