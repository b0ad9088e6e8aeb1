/*
 * util.c: the out-of-line part of util.h (the unreachable marker).
 */
#include "util.h"

#include <stdlib.h>

const char *volatile rp_unreachable_file;
volatile int rp_unreachable_line;

void rp_unreachable_at(const char *file, int line) {
  rp_unreachable_file = file;
  rp_unreachable_line = line;
  abort();
}
