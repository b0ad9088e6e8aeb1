/*
 * test_tcpframe.c: the two-byte length framer (pool/net/tcpframe.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcpframe.h"

#include <stdlib.h>
#include <string.h>

/* TEST_SMALL_CAP is a buffer that takes messages of at most 8 bytes. */
#define TEST_SMALL_CAP 10u

/* frame_put writes a frame of |len| bytes of |fill| at |out|; returns
   its size. */
static size_t frame_put(uint8_t *out, size_t len, uint8_t fill) {
  out[0] = (uint8_t)(len >> 8);
  out[1] = (uint8_t)len;
  memset(out + 2, fill, len);
  return len + 2;
}

/* expect_msg takes the next message and checks its length and bytes. */
static void expect_msg(rp_tcpframe *f, size_t len, uint8_t fill) {
  const uint8_t *msg = NULL;
  size_t mlen = 0;
  size_t i;
  assert_int_equal(rp_tcpframe_next(f, &msg, &mlen), 1);
  assert_int_equal(mlen, len);
  assert_true(msg >= f->buf && msg + mlen <= f->buf + f->cap);
  for (i = 0; i < len; ++i) {
    assert_int_equal(msg[i], fill);
  }
}

static void expect_none(rp_tcpframe *f) {
  const uint8_t *msg;
  size_t mlen;
  assert_int_equal(rp_tcpframe_next(f, &msg, &mlen), 0);
}

static void test_tcpframe_one_chunk(void **state) {
  uint8_t buf[64], in[64];
  rp_tcpframe f;
  size_t n = 0;
  (void)state;
  rp_tcpframe_init(&f, buf, sizeof(buf));
  expect_none(&f);
  n += frame_put(in + n, 12, 0xa1);
  n += frame_put(in + n, 1, 0xa2);
  n += frame_put(in + n, 20, 0xa3);
  assert_int_equal(rp_tcpframe_feed(&f, in, n), n);
  expect_msg(&f, 12, 0xa1);
  expect_msg(&f, 1, 0xa2);
  expect_msg(&f, 20, 0xa3);
  expect_none(&f);
}

/* Byte by byte, through the zero-copy path libuv uses: the message comes
   out only with its last byte, and the prefix split in two is read. */
static void test_tcpframe_byte_by_byte(void **state) {
  uint8_t buf[64], in[64];
  rp_tcpframe f;
  size_t n = 0, i;
  (void)state;
  rp_tcpframe_init(&f, buf, sizeof(buf));
  n += frame_put(in + n, 13, 0x5c);
  n += frame_put(in + n, 7, 0x5d);
  for (i = 0; i < n; ++i) {
    size_t room;
    uint8_t *p = rp_tcpframe_space(&f, &room);
    assert_true(room >= 1);
    *p = in[i];
    rp_tcpframe_commit(&f, 1);
    if (i == 13 + 1) {
      expect_msg(&f, 13, 0x5c);
    } else if (i == n - 1) {
      expect_msg(&f, 7, 0x5d);
    }
    expect_none(&f);
  }
}

/* A full-size frame fills the largest buffer exactly, and what follows it
   finds room again once the frame is taken. */
static void test_tcpframe_largest(void **state) {
  uint8_t *buf = test_malloc(RP_TCPFRAME_FRAME_MAX);
  uint8_t *in = test_malloc(RP_TCPFRAME_FRAME_MAX + 5);
  rp_tcpframe f;
  size_t n = 0, room;
  (void)state;
  rp_tcpframe_init(&f, buf, RP_TCPFRAME_FRAME_MAX);
  n += frame_put(in, 65535, 0x77);
  n += frame_put(in + n, 3, 0x78);
  assert_int_equal(rp_tcpframe_feed(&f, in, n), RP_TCPFRAME_FRAME_MAX);
  expect_msg(&f, 65535, 0x77);
  expect_none(&f);
  rp_tcpframe_space(&f, &room);
  assert_int_equal(room, RP_TCPFRAME_FRAME_MAX);
  assert_int_equal(rp_tcpframe_feed(&f, in + RP_TCPFRAME_FRAME_MAX, 5), 5);
  expect_msg(&f, 3, 0x78);
  expect_none(&f);
  test_free(in);
  test_free(buf);
}

/* A zero length is RP_ERR_PROTO as soon as its prefix is in, after the
   messages before it, and stays so until a reset. */
static void test_tcpframe_zero_length(void **state) {
  uint8_t buf[64], in[64];
  rp_tcpframe f;
  const uint8_t *msg;
  size_t mlen, n = 0;
  (void)state;
  rp_tcpframe_init(&f, buf, sizeof(buf));
  n += frame_put(in + n, 4, 0x11);
  in[n++] = 0;
  in[n++] = 0;
  n += frame_put(in + n, 4, 0x12);
  assert_int_equal(rp_tcpframe_feed(&f, in, n), n);
  expect_msg(&f, 4, 0x11);
  assert_int_equal(rp_tcpframe_next(&f, &msg, &mlen), RP_ERR_PROTO);
  assert_int_equal(rp_tcpframe_next(&f, &msg, &mlen), RP_ERR_PROTO);
  rp_tcpframe_reset(&f);
  expect_none(&f);
  assert_int_equal(rp_tcpframe_feed(&f, in, 6), 6);
  expect_msg(&f, 4, 0x11);
  expect_none(&f);
}

/* A length past the buffer is RP_ERR_NOBUF before its message arrives;
   one that just fits is taken. */
static void test_tcpframe_over_limit(void **state) {
  uint8_t buf[TEST_SMALL_CAP], in[32];
  rp_tcpframe f;
  const uint8_t *msg;
  size_t mlen, n;
  (void)state;
  rp_tcpframe_init(&f, buf, sizeof(buf));
  n = frame_put(in, TEST_SMALL_CAP - 2, 0x21);
  assert_int_equal(rp_tcpframe_feed(&f, in, n), n);
  expect_msg(&f, TEST_SMALL_CAP - 2, 0x21);
  in[0] = 0;
  in[1] = TEST_SMALL_CAP - 1;
  assert_int_equal(rp_tcpframe_feed(&f, in, 2), 2);
  assert_int_equal(rp_tcpframe_next(&f, &msg, &mlen), RP_ERR_NOBUF);
  assert_int_equal(rp_tcpframe_next(&f, &msg, &mlen), RP_ERR_NOBUF);
}

/* feed takes only what fits; the caller feeds the rest after draining. */
static void test_tcpframe_partial_feed(void **state) {
  uint8_t buf[TEST_SMALL_CAP], in[32];
  rp_tcpframe f;
  size_t n = 0, off = 0, took;
  int got = 0;
  (void)state;
  rp_tcpframe_init(&f, buf, sizeof(buf));
  n += frame_put(in + n, 6, 0x31);
  n += frame_put(in + n, 8, 0x32);
  n += frame_put(in + n, 2, 0x33);
  while (off < n) {
    const uint8_t *msg;
    size_t mlen;
    took = rp_tcpframe_feed(&f, in + off, n - off);
    assert_true(took > 0);
    off += took;
    while (rp_tcpframe_next(&f, &msg, &mlen) == 1) {
      assert_int_equal(msg[0], 0x31 + got);
      ++got;
    }
  }
  assert_int_equal(got, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tcpframe_one_chunk),
      cmocka_unit_test(test_tcpframe_byte_by_byte),
      cmocka_unit_test(test_tcpframe_largest),
      cmocka_unit_test(test_tcpframe_zero_length),
      cmocka_unit_test(test_tcpframe_over_limit),
      cmocka_unit_test(test_tcpframe_partial_feed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
