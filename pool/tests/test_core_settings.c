/*
 * test_core_settings.c: the fields of rp_settings by name
 * (rp_settings_fields, rp_settings_set, rp_settings_format,
 * rp_duration_parse): every field is in the table, reads back what it
 * formats, and a bad name or value is an error that names it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "respool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_core_settings_table(void **state) {
  size_t n;
  size_t i;
  const rp_settings_field *f = rp_settings_fields(&n);
  rp_settings a;
  rp_settings b;
  char value[RP_SETTINGS_VALUELEN];
  char assign[RP_SETTINGS_VALUELEN + 64];
  char err[RP_SETTINGS_ERRLEN];
  (void)state;
  rp_settings_default(&a, RP_KIND_DNSTT);
  assert_true(n > 40);
  /* Every field formats and reads back to the same bytes. */
  for (i = 0; i < n; ++i) {
    rp_settings_default(&b, RP_KIND_GENERIC);
    rp_settings_format(&a, &f[i], value, sizeof(value));
    snprintf(assign, sizeof(assign), "%s=%s", f[i].name, value);
    assert_int_equal(rp_settings_set(&b, assign, err, sizeof(err)), 0);
    assert_memory_equal((const uint8_t *)&a + f[i].offset,
                        (const uint8_t *)&b + f[i].offset, f[i].size);
  }
}

/* test_type_align returns the alignment of a table type on this ABI. */
static size_t test_type_align(rp_settings_type type) {
  switch (type) {
  case RP_SETTINGS_DURATION:
    return _Alignof(rp_duration);
  case RP_SETTINGS_U32:
    return _Alignof(uint32_t);
  case RP_SETTINGS_U16:
    return _Alignof(uint16_t);
  case RP_SETTINGS_INT:
  case RP_SETTINGS_BOOL:
    return _Alignof(int);
  case RP_SETTINGS_SIZE:
    return _Alignof(size_t);
  case RP_SETTINGS_DOUBLE:
    return _Alignof(double);
  case RP_SETTINGS_BALANCE:
    return _Alignof(rp_balance);
  case RP_SETTINGS_LOG_LEVEL:
    return _Alignof(rp_log_level);
  case RP_SETTINGS_STRING:
    return 1;
  }
  return 1;
}

/* test_cmp_field orders table entries by offset. */
static int test_cmp_field(const void *a, const void *b) {
  const rp_settings_field *x = a;
  const rp_settings_field *y = b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Every field of rp_settings is in the --set table: walking the entries
   by offset, each starts where the previous one ends (after natural
   padding), and the last one ends the struct. A field added to
   respool.h without a table line shows up as a gap, named here. */
static void test_core_settings_complete(void **state) {
  size_t n;
  size_t i;
  const rp_settings_field *f = rp_settings_fields(&n);
  rp_settings_field sorted[128];
  size_t pos = 0;
  (void)state;
  assert_true(n <= sizeof(sorted) / sizeof(sorted[0]));
  memcpy(sorted, f, n * sizeof(*f));
  qsort(sorted, n, sizeof(sorted[0]), test_cmp_field);
  for (i = 0; i < n; ++i) {
    size_t a = test_type_align(sorted[i].type);
    size_t expect = (pos + a - 1) / a * a;
    if (sorted[i].offset != expect) {
      fail_msg("rp_settings has a field at offset %zu (before %s) that "
               "pool/core/settings_table.c does not know: add it there",
               pos, sorted[i].name);
    }
    pos = sorted[i].offset + sorted[i].size;
  }
  if ((pos + _Alignof(rp_settings) - 1) / _Alignof(rp_settings) *
          _Alignof(rp_settings) !=
      sizeof(rp_settings)) {
    fail_msg("rp_settings has fields after %s that sim/rp_settings.c does "
             "not know: add them to the table",
             sorted[n - 1].name);
  }
}

static void test_core_settings_set(void **state) {
  rp_settings s;
  rp_settings before;
  char err[RP_SETTINGS_ERRLEN];
  (void)state;
  rp_settings_default(&s, RP_KIND_GENERIC);
  assert_int_equal(rp_settings_set(&s, "band_ratio=1.5", err, sizeof(err)), 0);
  assert_true(s.band_ratio == 1.5);
  assert_int_equal(rp_settings_set(&s, "token_wait=150ms", err, sizeof(err)),
                   0);
  assert_int_equal(s.token_wait, 150 * RP_MILLISECONDS);
  assert_int_equal(rp_settings_set(&s, "wait_for_token=no", err, sizeof(err)),
                   0);
  assert_int_equal(s.wait_for_token, 0);
  assert_int_equal(
      rp_settings_set(&s, "load_balance=least_loss", err, sizeof(err)), 0);
  assert_int_equal(s.load_balance, RP_BALANCE_LEAST_LOSS);
  assert_int_equal(rp_settings_set(&s, "score_refusal=-3", err, sizeof(err)),
                   0);
  assert_int_equal(s.score_refusal, -3);
  before = s;
  /* An unknown name is an error that names it, and changes nothing. */
  assert_int_equal(rp_settings_set(&s, "band_ration=2", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, "band_ration"));
  assert_int_equal(rp_settings_set(&s, "down_after=x", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, "down_after"));
  assert_non_null(strstr(err, "'x'"));
  assert_int_equal(rp_settings_set(&s, "deadline", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_int_equal(rp_settings_set(&s, "duplicate=-1", err, sizeof(err)),
                   RP_ERR_CONFIG);
  /* The right syntax out of the field's range: named at once. */
  assert_int_equal(rp_settings_set(&s, "early_drop_loss=3", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, "early_drop_loss"));
  assert_non_null(strstr(err, "out of range"));
  assert_int_equal(rp_settings_set(&s, "band_ratio=0.5", err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_memory_equal(&s, &before, sizeof(s));
  assert_int_equal(rp_settings_set(&s, "early_drop_loss=1", err, sizeof(err)),
                   0);
  assert_int_equal(s.early_drop_loss, 1);
}

static void test_core_settings_duration(void **state) {
  rp_duration d = 1;

  (void)state;
  assert_int_equal(rp_duration_parse("0", &d), 0);
  assert_int_equal(d, 0);
  assert_int_equal(rp_duration_parse("300ms", &d), 0);
  assert_int_equal(d, 300 * RP_MILLISECONDS);
  assert_int_equal(rp_duration_parse("1.5s", &d), 0);
  assert_int_equal(d, 1500 * RP_MILLISECONDS);
  assert_int_equal(rp_duration_parse("250us", &d), 0);
  assert_int_equal(d, 250 * RP_MICROSECONDS);
  assert_int_equal(rp_duration_parse("2m", &d), 0);
  assert_int_equal(d, 120 * RP_SECONDS);
  assert_int_equal(rp_duration_parse("1h", &d), 0);
  assert_int_equal(d, 3600 * RP_SECONDS);
  assert_int_equal(rp_duration_parse("5", &d), RP_ERR_CONFIG);
  assert_int_equal(rp_duration_parse("-1s", &d), RP_ERR_CONFIG);
  assert_int_equal(rp_duration_parse("1x", &d), RP_ERR_CONFIG);
  assert_int_equal(rp_duration_parse("", &d), RP_ERR_CONFIG);
  assert_int_equal(rp_duration_parse("2d", &d), RP_ERR_CONFIG);
  assert_int_equal(rp_duration_parse("25h", &d), RP_ERR_CONFIG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_core_settings_table),
      cmocka_unit_test(test_core_settings_complete),
      cmocka_unit_test(test_core_settings_set),
      cmocka_unit_test(test_core_settings_duration),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
