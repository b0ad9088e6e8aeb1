/*
 * common.c: error strings and the default allocator.
 */
#include "respool.h"

#include <stdlib.h>

const char *rp_strerror(int liberr) {
  switch (liberr) {
  case 0:
    return "success";
  case RP_ERR_INVALID_ARGUMENT:
    return "invalid argument";
  case RP_ERR_MALFORMED:
    return "malformed input";
  case RP_ERR_NOBUF:
    return "buffer too small";
  case RP_ERR_FULL:
    return "table full";
  case RP_ERR_NOT_FOUND:
    return "not found";
  case RP_ERR_CONFIG:
    return "bad configuration";
  case RP_ERR_TLS:
    return "TLS failure";
  case RP_ERR_IO:
    return "I/O failure";
  case RP_ERR_PROTO:
    return "protocol violation";
  case RP_ERR_NOMEM:
    return "out of memory";
  case RP_ERR_CALLBACK_FAILURE:
    return "callback failure";
  default:
    return "unknown error";
  }
}

int rp_err_is_fatal(int liberr) { return liberr < RP_ERR_FATAL; }

static void *mem_malloc(size_t size, void *user_data) {
  (void)user_data;
  return malloc(size);
}

static void mem_free(void *ptr, void *user_data) {
  (void)user_data;
  free(ptr);
}

static void *mem_calloc(size_t nmemb, size_t size, void *user_data) {
  (void)user_data;
  return calloc(nmemb, size);
}

static void *mem_realloc(void *ptr, size_t size, void *user_data) {
  (void)user_data;
  return realloc(ptr, size);
}

static const rp_mem mem_default = {
    .user_data = NULL,
    .malloc = mem_malloc,
    .free = mem_free,
    .calloc = mem_calloc,
    .realloc = mem_realloc,
};

const rp_mem *rp_mem_default(void) { return &mem_default; }
