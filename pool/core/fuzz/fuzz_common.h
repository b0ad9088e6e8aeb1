/*
 * fuzz_common.h: what the fuzz targets of pool/core and pool/net share:
 * an invariant check that aborts with a message, and an rp_mem that
 * counts the blocks not given back.
 *
 * Header-only (each target is one translation unit). The including file
 * defines FUZZ_NAME (its file name, for the messages) before including
 * it, and defines fuzz_before_fail, which runs before the message (to
 * remove scratch files, or print the state the failure was met in).
 */
#ifndef RP_FUZZ_COMMON_H
#define RP_FUZZ_COMMON_H

#include "respool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_NAME
#error "define FUZZ_NAME before including fuzz_common.h"
#endif

/* fuzz_live counts blocks from fuzz_mem not freed yet. */
static long fuzz_live;

/* fuzz_before_fail is defined by the target. */
static void fuzz_before_fail(void);

#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 2, 3)))
#endif
static void
fuzz_fail(int line, const char *fmt, ...) {
  va_list ap;

  fuzz_before_fail();
  fprintf(stderr, "%s:%d: invariant broken: ", FUZZ_NAME, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}

/* FUZZ_CHECK aborts with a message when |cond| is false. */
#define FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fuzz_fail(__LINE__, __VA_ARGS__);                                        \
    }                                                                          \
  } while (0)

static void *fuzz_malloc(size_t size, void *ud) {
  void *p = malloc(size);

  (void)ud;
  fuzz_live += p != NULL;
  return p;
}

static void fuzz_free(void *ptr, void *ud) {
  (void)ud;
  fuzz_live -= ptr != NULL;
  free(ptr);
}

static void *fuzz_calloc(size_t nmemb, size_t size, void *ud) {
  void *p = calloc(nmemb, size);

  (void)ud;
  fuzz_live += p != NULL;
  return p;
}

static void *fuzz_realloc(void *ptr, size_t size, void *ud) {
  void *p = realloc(ptr, size);

  (void)ud;
  if (ptr == NULL && p != NULL) {
    ++fuzz_live;
  }
  return p;
}

static const rp_mem fuzz_mem = {.user_data = NULL,
                                .malloc = fuzz_malloc,
                                .free = fuzz_free,
                                .calloc = fuzz_calloc,
                                .realloc = fuzz_realloc};

#endif /* RP_FUZZ_COMMON_H */
