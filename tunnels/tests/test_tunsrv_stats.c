/*
 * test_tunsrv_stats.c: the tunnel server's counters of its sessions'
 * arqs (tun_srv_get_stats): answers that found the window full, the
 * timeouts and the fast retransmits, summed over the live sessions and
 * kept when a session is removed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tuncli.h"
#include "tunsrv.h"
#include "rp_test_mem.h"

#define MSG_MAX 2048
/* POLLS is how many queries the client sends without reading an
   answer: more than the MD window (32 segments). */
#define POLLS 40

/* count_send counts the answers in the size_t |user_data| points to. */
static int count_send(const tun_peer *peer, const uint8_t *data, size_t len,
                      void *user_data) {
  (void)peer;
  (void)data;
  assert_true(len <= MSG_MAX);
  ++*(size_t *)user_data;
  return 0;
}

/* zero_source serves a megabyte of zeros. */
static size_t zero_source(uint64_t sid, uint64_t offset, uint8_t *out,
                          size_t cap, void *user_data) {
  size_t n = offset < (1u << 20) ? (1u << 20) - (size_t)offset : 0;

  (void)sid;
  (void)user_data;
  n = n < cap ? n : cap;
  memset(out, 0, n);
  return n;
}

static const tun_srv_callbacks count_cb = {.send = count_send,
                                           .source = zero_source};

/* A client that polls and never acks: the first 32 answers carry data,
   the rest find the window full; the segments time out after the first
   rto (1 s); the counters stay once the idle session is removed. */
static void test_tunsrv_stats_window_full(void **state) {
  size_t answers = 0;
  tun_srv_settings s;
  tun_srv_stats st;
  tun_cli_settings cs;
  tun_srv *srv;
  tun_cli *cli;
  tun_peer peer = {.addrlen = 0};
  uint8_t q[MSG_MAX];
  rp_tstamp now = 0;
  rp_ssize n;
  int k;

  (void)state;
  tun_srv_settings_default(&s, TUN_MODE_MD);
  assert_int_equal(rp_dns_name_from_text(&s.domain, "t.example"), 0);
  assert_int_equal(
      tun_srv_new(&srv, &s, &count_cb, rp_test_mem_plain(), &answers), 0);
  tun_cli_settings_default(&cs, TUN_MODE_MD);
  assert_int_equal(rp_dns_name_from_text(&cs.domain, "t.example"), 0);
  cs.sid = 5;
  cs.down_limit = 500;
  assert_int_equal(tun_cli_new(&cli, &cs, rp_test_mem_plain()), 0);
  for (k = 0; k < POLLS; ++k) {
    n = tun_cli_build_query(cli, q, sizeof(q), (uint16_t)k, (uint16_t)k, now,
                            NULL);
    assert_true(n > 0);
    assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  }
  assert_int_equal(answers, POLLS);
  tun_srv_get_stats(srv, &st);
  assert_int_equal(st.answered_empty, POLLS - s.arq.snd_wnd);
  assert_int_equal(st.window_full, POLLS - s.arq.snd_wnd);
  assert_int_equal(st.timeouts, 0);
  assert_int_equal(st.retransmissions, 0);
  /* Past the first rto every segment in flight timed out; the next
     answer carries the oldest again. */
  now += 2 * RP_SECONDS;
  assert_int_equal(tun_srv_handle_expiry(srv, now), 0);
  tun_srv_get_stats(srv, &st);
  assert_int_equal(st.timeouts, s.arq.snd_wnd);
  n = tun_cli_build_query(cli, q, sizeof(q), POLLS, POLLS, now, NULL);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  tun_srv_get_stats(srv, &st);
  assert_int_equal(st.retransmissions, 1);
  assert_int_equal(st.fast_retransmits, 0);
  assert_int_equal(st.window_full, POLLS - s.arq.snd_wnd);
  /* Idle past idle_timeout: the session goes, its counters stay. */
  now += s.idle_timeout;
  assert_int_equal(tun_srv_handle_expiry(srv, now), 0);
  tun_srv_get_stats(srv, &st);
  assert_int_equal(st.sessions, 0);
  assert_int_equal(st.timeouts, s.arq.snd_wnd);
  assert_int_equal(st.retransmissions, 1);
  assert_int_equal(st.window_full, POLLS - s.arq.snd_wnd);
  tun_cli_del(cli);
  tun_srv_del(srv);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tunsrv_stats_window_full),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
