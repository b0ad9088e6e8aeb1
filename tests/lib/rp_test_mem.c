/*
 * rp_test_mem.c: the tests' counting, failing rp_mem (rp_test_mem.h).
 */
#include "rp_test_mem.h"

/* tmem_refuse counts one allocation of |user_data| (an rp_test_mem, or
   NULL for the plain allocator) and says whether it must fail. */
static int tmem_refuse(void *user_data) {
  rp_test_mem *tm = user_data;
  long n;
  int refuse;

  if (tm == NULL) {
    return 0;
  }
  n = tm->count++;
  if (tm->fail_at == RP_TEST_MEM_NEVER) {
    refuse = 0;
  } else if (tm->mode == RP_TEST_MEM_FAIL_ONE) {
    refuse = n == tm->fail_at;
  } else {
    refuse = n >= tm->fail_at;
  }
  tm->failed += refuse;
  return refuse;
}

static void *tmem_malloc(size_t size, void *user_data) {
  return tmem_refuse(user_data) ? NULL : test_malloc(size);
}

static void tmem_free(void *ptr, void *user_data) {
  (void)user_data;
  if (ptr != NULL) {
    test_free(ptr);
  }
}

static void *tmem_calloc(size_t nmemb, size_t size, void *user_data) {
  return tmem_refuse(user_data) ? NULL : test_calloc(nmemb, size);
}

static void *tmem_realloc(void *ptr, size_t size, void *user_data) {
  return tmem_refuse(user_data) ? NULL : test_realloc(ptr, size);
}

void rp_test_mem_init(rp_test_mem *tm) {
  *tm = (rp_test_mem){.mem = {.user_data = tm,
                              .malloc = tmem_malloc,
                              .free = tmem_free,
                              .calloc = tmem_calloc,
                              .realloc = tmem_realloc},
                      .fail_at = RP_TEST_MEM_NEVER};
}

const rp_mem *rp_test_mem_fail_at(rp_test_mem *tm, long fail_at,
                                  rp_test_mem_mode mode) {
  tm->count = 0;
  tm->failed = 0;
  tm->fail_at = fail_at;
  tm->mode = mode;
  return &tm->mem;
}

const rp_mem *rp_test_mem_plain(void) {
  static const rp_mem plain = {.user_data = NULL,
                               .malloc = tmem_malloc,
                               .free = tmem_free,
                               .calloc = tmem_calloc,
                               .realloc = tmem_realloc};
  return &plain;
}
