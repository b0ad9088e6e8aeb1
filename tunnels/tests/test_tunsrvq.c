/*
 * test_tunsrvq.c: the server's send queue (tunsrvq.h) with ack_queued:
 * the acks of a flush wait behind the packets queued before them, a
 * flush with new acks and no packet queues acks alone, and before the
 * session serves only acks go in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arq.h"
#include "rp_test_mem.h"
#include "tunsrvq.h"

#define MSS 100
#define ROOM (TUN_ARQ_HDR_FIXED + TUN_ARQ_SEG_HDR + MSS)

/* una_of returns the cumulative ack of the frame |f|. */
static uint32_t una_of(const uint8_t *f) {
  return (uint32_t)f[0] << 24 | (uint32_t)f[1] << 16 | (uint32_t)f[2] << 8 |
         f[3];
}

static void test_tunsrvq_acks_wait(void **state) {
  tun_arq_settings s;
  tun_arq *srv, *cli;
  tun_srvq q;
  tun_arq_sent sent;
  uint64_t drops = 0;
  uint8_t data[300] = {0}, f[ROOM + 64];
  rp_ssize n;
  int i;

  (void)state;
  tun_arq_settings_default(&s);
  s.mss = s.peer_mss = MSS;
  assert_int_equal(tun_arq_new(&srv, &s, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_new(&cli, &s, rp_test_mem_plain()), 0);
  assert_int_equal(
      tun_srvq_init(&q, 8, MSS, 1, srv, rp_test_mem_plain()), 0);
  /* Before it serves, the queue takes acks alone: none owed yet. */
  assert_int_equal(tun_arq_write(srv, data, sizeof(data)), sizeof(data));
  assert_int_equal(tun_srvq_fill(&q, srv, 0, 0), 0);
  assert_int_equal(q.count, 0);
  /* Three packets of the flush, with its ack state (nothing received). */
  assert_int_equal(tun_srvq_fill(&q, srv, 1, 0), 0);
  assert_int_equal(q.count, 3);
  /* The client's data arrives: the next flush has no packet, so its
     acks go in a packet of their own, behind the three. */
  assert_int_equal(tun_arq_write(cli, data, 10), 10);
  n = tun_arq_output(cli, f, sizeof(f), 0, NULL);
  assert_int_equal(tun_arq_input(srv, f, (size_t)n, 0), 1);
  assert_int_equal(tun_srvq_fill(&q, srv, 1, 0), 0);
  assert_int_equal(q.count, 4);
  /* A flush with nothing new queues nothing. */
  assert_int_equal(tun_srvq_fill(&q, srv, 1, 0), 0);
  assert_int_equal(q.count, 4);
  for (i = 0; i < 2; ++i) {
    n = tun_srvq_frame(&q, srv, f, ROOM, 0, &sent, &drops);
    assert_int_equal(n, ROOM);
    assert_int_equal(sent.n, 1);
    assert_int_equal(una_of(f), 0);
  }
  /* The third packet, and the acks behind it: they take no room. */
  n = tun_srvq_frame(&q, srv, f, ROOM, 0, &sent, &drops);
  assert_int_equal(n, ROOM);
  assert_int_equal(sent.n, 1);
  assert_int_equal(una_of(f), 1);
  assert_int_equal(q.count, 0);
  /* An empty queue: the last header sent again. */
  n = tun_srvq_frame(&q, srv, f, ROOM, 0, &sent, &drops);
  assert_int_equal(n, TUN_ARQ_HDR_FIXED);
  assert_int_equal(una_of(f), 1);
  /* More of the client's data: an answer of acks alone. */
  assert_int_equal(tun_arq_write(cli, data, 10), 10);
  n = tun_arq_output(cli, f, sizeof(f), 0, NULL);
  assert_int_equal(tun_arq_input(srv, f, (size_t)n, 0), 1);
  assert_int_equal(tun_srvq_fill(&q, srv, 1, 0), 0);
  n = tun_srvq_frame(&q, srv, f, ROOM, 0, &sent, &drops);
  assert_int_equal(n, TUN_ARQ_HDR_FIXED);
  assert_int_equal(sent.n, 0);
  assert_int_equal(una_of(f), 2);
  assert_int_equal(drops, 0);
  tun_srvq_free(&q, rp_test_mem_plain());
  tun_srvq_free(&q, rp_test_mem_plain());
  tun_arq_del(srv);
  tun_arq_del(cli);
}

/* A full queue drops what the flush makes past it; an answer too small
   for the first packet drops it, and each after it that does not fit
   either. */
static void test_tunsrvq_drops(void **state) {
  tun_arq_settings s;
  tun_arq *srv;
  tun_srvq q;
  tun_arq_sent sent;
  uint64_t drops = 0;
  uint8_t data[500] = {0}, f[ROOM];

  (void)state;
  tun_arq_settings_default(&s);
  s.mss = s.peer_mss = MSS;
  assert_int_equal(tun_arq_new(&srv, &s, rp_test_mem_plain()), 0);
  assert_int_equal(
      tun_srvq_init(&q, 2, MSS, 1, srv, rp_test_mem_plain()), 0);
  assert_int_equal(tun_arq_write(srv, data, sizeof(data)), sizeof(data));
  assert_int_equal(tun_srvq_fill(&q, srv, 1, 0), 3);
  assert_int_equal(q.count, 2);
  assert_int_equal(tun_srvq_frame(&q, srv, f, ROOM - 1, 0, &sent, &drops),
                   TUN_ARQ_HDR_FIXED);
  assert_int_equal(drops, 2);
  assert_int_equal(sent.n, 0);
  assert_int_equal(q.count, 0);
  tun_srvq_free(&q, rp_test_mem_plain());
  tun_arq_del(srv);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tunsrvq_acks_wait),
      cmocka_unit_test(test_tunsrvq_drops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
