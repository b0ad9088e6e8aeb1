/*
 * rp_test_mem.h: the tests' one rp_mem (owned by tests/lib).
 *
 * Every block goes through cmocka's test_malloc family, so a block a test
 * leaves behind fails that test (STYLE.md section 5), and a failmalloc
 * test can make allocation N fail: only that one (RP_TEST_MEM_FAIL_ONE,
 * the core harness's loop) or it and every one after it
 * (RP_TEST_MEM_FAIL_FROM, "let N succeed, then fail": the simulator's and
 * the tunnels' loops). malloc, calloc and realloc each count as one
 * allocation; free never fails and accepts NULL, as free(3) does.
 *
 * Used by the unit tests of pool/core (through the harness), pool/net's
 * config and scores tests, the simulator's tests and the tunnels' tests.
 * Include after <cmocka.h>'s prerequisites; this header includes them.
 */
#ifndef RP_TEST_MEM_H
#define RP_TEST_MEM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "respool.h"

/* RP_TEST_MEM_NEVER is the fail_at of an allocator that never fails. */
#define RP_TEST_MEM_NEVER (-1L)

/* rp_test_mem_mode says which allocations fail once |fail_at| is
   reached. */
typedef enum rp_test_mem_mode {
  /* RP_TEST_MEM_FAIL_ONE: allocation number fail_at fails, later ones
     succeed again. */
  RP_TEST_MEM_FAIL_ONE = 0,
  /* RP_TEST_MEM_FAIL_FROM: allocation number fail_at and every later one
     fail. */
  RP_TEST_MEM_FAIL_FROM
} rp_test_mem_mode;

/*
 * rp_test_mem is a counting, failing allocator. |mem| is what the code
 * under test gets; its user_data points at the rp_test_mem itself, so the
 * struct must not be copied or moved while |mem| is in use. It owns no
 * memory: the blocks belong to cmocka's checker until freed.
 */
typedef struct rp_test_mem {
  /* mem is the allocator to pass to the code under test. */
  rp_mem mem;
  /* count is the number of allocation calls seen since the last
     rp_test_mem_fail_at (or init), failed ones included. */
  long count;
  /* fail_at is the 0-based number of the first allocation to fail;
     RP_TEST_MEM_NEVER for none. */
  long fail_at;
  /* mode says whether only |fail_at| fails or every one from it on. */
  rp_test_mem_mode mode;
  /* failed is the number of allocations refused so far. */
  long failed;
} rp_test_mem;

/* rp_test_mem_init makes |tm| an allocator that never fails. */
void rp_test_mem_init(rp_test_mem *tm);

/* rp_test_mem_fail_at resets the counts of |tm| and makes allocation
   |fail_at| (0-based; RP_TEST_MEM_NEVER for none) fail, as |mode| says.
   It returns &tm->mem for convenience. */
const rp_mem *rp_test_mem_fail_at(rp_test_mem *tm, long fail_at,
                                  rp_test_mem_mode mode);

/* rp_test_mem_plain returns a static leak-checking allocator that never
   fails and keeps no state (safe to share between objects). */
const rp_mem *rp_test_mem_plain(void);

#endif /* RP_TEST_MEM_H */
