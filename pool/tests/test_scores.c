/*
 * test_scores.c: the score cache file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rp_test_mem.h"
#include "scores.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void tmp_path(char *path, size_t cap) {
  snprintf(path, cap, "/tmp/rp_test_scores_%ld.json", (long)getpid());
}

static void test_scores_roundtrip(void **state) {
  rp_scores s;
  char path[128], err[256], key[RP_SCORES_KEYLEN];
  int v;
  (void)state;
  tmp_path(path, sizeof(path));
  unlink(path);
  rp_scores_init(&s, rp_test_mem_plain());
  assert_int_equal(
      rp_scores_load(&s, path, "generic_resolvers", err, sizeof(err)),
      RP_ERR_NOT_FOUND);
  assert_int_equal(rp_scores_set(&s, "8.8.8.8", 3), 0);
  assert_int_equal(rp_scores_set(&s, "tcp://9.9.9.9:53", -42), 0);
  assert_int_equal(rp_scores_set(&s, "1.1.1.1", 99), 0);
  assert_int_equal(rp_scores_set(&s, "8.8.8.8", 4), 0);
  assert_int_equal(s.n, 3);
  rp_scores_key(RP_KIND_DNSTT, "TXT", key, sizeof(key));
  assert_string_equal(key, "dnstt_resolversTXT");
  assert_int_equal(rp_scores_save(&s, path, key, err, sizeof(err)), 0);
  rp_scores_free(&s);

  /* A second kind in the same file keeps the first. */
  assert_int_equal(rp_scores_set(&s, "8.8.4.4", -1), 0);
  assert_int_equal(
      rp_scores_save(&s, path, "masterdns_resolvers", err, sizeof(err)), 0);
  rp_scores_free(&s);

  assert_int_equal(rp_scores_load(&s, path, key, err, sizeof(err)), 0);
  assert_int_equal(s.n, 3);
  assert_int_equal(rp_scores_get(&s, "8.8.8.8", &v), 0);
  assert_int_equal(v, 4);
  assert_int_equal(rp_scores_get(&s, "tcp://9.9.9.9:53", &v), 0);
  assert_int_equal(v, -10);
  assert_int_equal(rp_scores_get(&s, "1.1.1.1", &v), 0);
  assert_int_equal(v, 10);
  assert_int_equal(rp_scores_get(&s, "8.8.4.4", &v), RP_ERR_NOT_FOUND);
  assert_int_equal(v, 0);
  assert_int_equal(
      rp_scores_load(&s, path, "masterdns_resolvers", err, sizeof(err)), 0);
  assert_int_equal(s.n, 1);
  assert_int_equal(
      rp_scores_load(&s, path, "generic_resolvers", err, sizeof(err)), 0);
  assert_int_equal(s.n, 0);
  rp_scores_free(&s);
  unlink(path);
}

static void test_scores_corrupt(void **state) {
  rp_scores s;
  char path[128], err[256];
  int v;
  (void)state;
  tmp_path(path, sizeof(path));
  rp_scores_init(&s, rp_test_mem_plain());
  write_file(path, "{\"generic_resolvers\": {\"1.1.1.1\": 2, ");
  err[0] = '\0';
  assert_int_equal(
      rp_scores_load(&s, path, "generic_resolvers", err, sizeof(err)),
      RP_ERR_MALFORMED);
  assert_non_null(strstr(err, "corrupt"));
  assert_int_equal(s.n, 0);
  write_file(path, "{\"generic_resolvers\": [1]}");
  assert_int_equal(
      rp_scores_load(&s, path, "generic_resolvers", err, sizeof(err)),
      RP_ERR_MALFORMED);
  write_file(path, "{\"generic_resolvers\": {\"a\": \"x\", \"b\": -3.7}}");
  assert_int_equal(
      rp_scores_load(&s, path, "generic_resolvers", err, sizeof(err)), 0);
  assert_int_equal(s.n, 1);
  assert_int_equal(rp_scores_get(&s, "b", &v), 0);
  assert_int_equal(v, -3);
  /* Saving over a corrupt file replaces it. */
  write_file(path, "garbage");
  assert_int_equal(
      rp_scores_save(&s, path, "generic_resolvers", err, sizeof(err)), 0);
  rp_scores_free(&s);
  assert_int_equal(
      rp_scores_load(&s, path, "generic_resolvers", err, sizeof(err)), 0);
  assert_int_equal(s.n, 1);
  rp_scores_free(&s);
  unlink(path);
}

static void test_scores_unwritable(void **state) {
  rp_scores s;
  char err[256];
  (void)state;
  rp_scores_init(&s, rp_test_mem_plain());
  assert_int_equal(rp_scores_set(&s, "x", 1), 0);
  assert_int_equal(rp_scores_save(&s, "/nonexistent-dir/s.json",
                                  "generic_resolvers", err, sizeof(err)),
                   RP_ERR_IO);
  assert_non_null(strstr(err, "/nonexistent-dir"));
  rp_scores_free(&s);
}

static void test_scores_many(void **state) {
  rp_scores s;
  char name[32];
  int i, v;
  (void)state;
  rp_scores_init(&s, rp_test_mem_plain());
  for (i = 0; i < 2000; ++i) {
    snprintf(name, sizeof(name), "10.0.%d.%d", (i * 7919) % 256, i % 256);
    assert_int_equal(rp_scores_set(&s, name, i % 21 - 10), 0);
  }
  for (i = 1; i < (int)s.n; ++i) {
    assert_true(strcmp(s.entries[i - 1].name, s.entries[i].name) < 0);
  }
  snprintf(name, sizeof(name), "10.0.%d.%d", (5 * 7919) % 256, 5);
  assert_int_equal(rp_scores_get(&s, name, &v), 0);
  rp_scores_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scores_roundtrip),
      cmocka_unit_test(test_scores_corrupt),
      cmocka_unit_test(test_scores_unwritable),
      cmocka_unit_test(test_scores_many),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
