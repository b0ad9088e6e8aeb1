/*
 * test_tunsmux.c: the real dnstt client's smux and Noise writes
 * (tunsmux.h) into a kcp-mode arq: the upload's segments, the reader
 * held behind its window update, and the update written once the upload
 * is and the window takes it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arq.h"
#include "rp_test_mem.h"
#include "tunsmux.h"

#define UP 8192
#define FIRST 16384
#define EVERY (512 * 1024)

/* smux_exchange moves every frame |a| has to |b| and |b|'s acks back,
   at |now|, |b| reading all it gets. */
static void smux_exchange(tun_arq *a, tun_arq *b, rp_tstamp now) {
  uint8_t f[1024];
  rp_ssize n;
  int i;

  for (i = 0; i < 1000 && (tun_arq_want_output(a, now) & TUN_ARQ_WANT_DATA);
       ++i) {
    n = tun_arq_output(a, f, sizeof(f), now, NULL);
    assert_true(tun_arq_input(b, f, (size_t)n, now) >= 0);
    while (tun_arq_read(b, f, sizeof(f)) > 0) {
    }
    n = tun_arq_output(b, f, sizeof(f), now, NULL);
    assert_true(tun_arq_input(a, f, (size_t)n, now) >= 0);
  }
}

static void test_tunsmux_update_waits(void **state) {
  tun_arq_settings s;
  tun_arq *a, *b;
  tun_smux m = {0};
  rp_tstamp now = 0;

  (void)state;
  assert_false(tun_smux_on(&m));
  tun_arq_settings_default(&s);
  tun_arq_settings_kcp(&s);
  s.mss = s.peer_mss = 113 + TUN_ARQ_KCP_OVERHEAD;
  s.snd_wnd = s.rcv_wnd = 64;
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_new(&b, &s, rp_test_mem_plain()), 0);
  tun_smux_init(&m, FIRST, EVERY);
  assert_true(tun_smux_on(&m));
  /* The reader may read the first frame before anything is written. */
  assert_int_equal(tun_smux_read_cap(&m, a, 0, UP), FIRST);
  /* The SYN (2 segments), the length and 4 112 bytes of the first
     message (38), the second's (38) reach 78 segments: the length of the
     third, at 78 of 64, waits. */
  assert_int_equal(tun_smux_write_up(&m, a, UP), UP - 8);
  assert_false(tun_arq_kcp_writable(a));
  tun_smux_read(&m, FIRST - 1);
  assert_int_equal(tun_smux_read_cap(&m, a, FIRST - 1, UP), 1);
  tun_smux_read(&m, FIRST);
  /* Its update waits behind the upload. */
  assert_int_equal(tun_smux_read_cap(&m, a, FIRST, UP), 0);
  assert_int_equal(tun_smux_write_up(&m, a, UP), UP - 8);
  /* The peer acks what went: the window takes the rest and the update
     (two writes), and reading goes on to the next update. */
  now += RP_MILLISECONDS;
  tun_arq_send_flush(a);
  smux_exchange(a, b, now);
  assert_true(tun_arq_kcp_writable(a));
  assert_int_equal(tun_smux_write_up(&m, a, UP), UP);
  assert_int_equal(tun_smux_read_cap(&m, a, FIRST, UP), EVERY);
  tun_smux_read(&m, FIRST + EVERY - 1);
  assert_int_equal(tun_smux_read_cap(&m, a, FIRST + EVERY - 1, UP), 1);
  tun_arq_del(a);
  tun_arq_del(b);
}

/* Without an upload the update needs only the SYN and the window. */
static void test_tunsmux_no_upload(void **state) {
  tun_arq_settings s;
  tun_arq *a;
  tun_smux m;

  (void)state;
  tun_arq_settings_default(&s);
  assert_int_equal(tun_arq_new(&a, &s, rp_test_mem_plain()), 0);
  tun_smux_init(&m, FIRST, EVERY);
  assert_int_equal(tun_smux_write_up(&m, a, 0), 0);
  tun_smux_read(&m, FIRST);
  assert_int_equal(tun_smux_read_cap(&m, a, FIRST, 0), EVERY);
  tun_arq_del(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tunsmux_update_waits),
      cmocka_unit_test(test_tunsmux_no_upload),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
