/*
 * testmem.h: an rp_mem over cmocka's leak-checking allocator, with an
 * optional failure after N allocations. Include after cmocka.h.
 */
#ifndef TUN_TESTMEM_H
#define TUN_TESTMEM_H

#include "respool.h"

/* testmem_left is how many allocations succeed; -1 = all. */
static int testmem_left = -1;

static int testmem_take(void) {
  if (testmem_left < 0) {
    return 1;
  }
  if (testmem_left == 0) {
    return 0;
  }
  --testmem_left;
  return 1;
}

static void *testmem_malloc(size_t size, void *user_data) {
  (void)user_data;
  return testmem_take() ? test_malloc(size) : NULL;
}

static void testmem_free(void *ptr, void *user_data) {
  (void)user_data;
  if (ptr != NULL) {
    test_free(ptr);
  }
}

static void *testmem_calloc(size_t nmemb, size_t size, void *user_data) {
  (void)user_data;
  return testmem_take() ? test_calloc(nmemb, size) : NULL;
}

static void *testmem_realloc(void *ptr, size_t size, void *user_data) {
  (void)user_data;
  return testmem_take() ? test_realloc(ptr, size) : NULL;
}

static const rp_mem testmem_mem = {
    .user_data = NULL,
    .malloc = testmem_malloc,
    .free = testmem_free,
    .calloc = testmem_calloc,
    .realloc = testmem_realloc,
};

static inline const rp_mem *test_mem(void) { return &testmem_mem; }

/* test_mem_fail_after lets |n| allocations succeed, then fails; -1
   turns failures off. */
static inline void test_mem_fail_after(int n) { testmem_left = n; }

#endif /* TUN_TESTMEM_H */
