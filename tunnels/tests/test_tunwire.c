/*
 * test_tunwire.c: the DNS framing, the server's handling of hostile and
 * foreign queries, poll holding, and a whole client-server session in
 * memory with a fake clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tunwire.h"
#include "tunsrv.h"
#include "tuncli.h"
#include "tunxfer.h"
#include "rp_test_mem.h"

#define OUT_SLOTS 1024
#define MSG_MAX 2048

/* Answers the server sent, recorded by the fake send callback. */
typedef struct sent_rec {
  size_t n;
  size_t len[OUT_SLOTS];
  uint8_t data[OUT_SLOTS][MSG_MAX];
  uint64_t serve_bytes;
  uint64_t sunk;
  int sink_bad;
} sent_rec;

static uint8_t pattern(uint64_t i, uint8_t seed) {
  return (uint8_t)(((i * 0x9E3779B97F4A7C15ULL) >> 56) ^ seed);
}

static int rec_send(const tun_peer *peer, const uint8_t *data, size_t len,
                    void *user_data) {
  sent_rec *r = user_data;

  (void)peer;
  assert_true(len <= MSG_MAX);
  assert_true(r->n < OUT_SLOTS);
  memcpy(r->data[r->n], data, len);
  r->len[r->n++] = len;
  return 0;
}

static size_t rec_source(uint64_t sid, uint64_t offset, uint8_t *out,
                         size_t cap, void *user_data) {
  sent_rec *r = user_data;
  size_t n = 0;

  (void)sid;
  while (n < cap && offset + n < r->serve_bytes) {
    out[n] = pattern(offset + n, 0x33);
    ++n;
  }
  return n;
}

static void rec_sink(uint64_t sid, uint64_t offset, const uint8_t *data,
                     size_t len, void *user_data) {
  sent_rec *r = user_data;
  size_t i;

  (void)sid;
  if (offset != r->sunk) {
    r->sink_bad = 1;
  }
  for (i = 0; i < len; ++i) {
    if (data[i] != pattern(offset + i, 0x44)) {
      r->sink_bad = 1;
    }
  }
  r->sunk += len;
}

static const tun_srv_callbacks rec_cb = {
    .send = rec_send, .source = rec_source, .sink = rec_sink};

static void test_tunwire_base32(void **state) {
  uint8_t in[150], out[150];
  char text[256];
  rp_ssize n, m;
  size_t len, i;

  (void)state;
  for (len = 0; len < sizeof(in); ++len) {
    for (i = 0; i < len; ++i) {
      in[i] = (uint8_t)(i * 37 + len);
    }
    n = tun_base32_encode(text, sizeof(text), in, len);
    assert_int_equal(n, (rp_ssize)((len * 8 + 4) / 5));
    /* Upper case decodes too (0x20 randomisation). */
    for (i = 0; i < (size_t)n; i += 2) {
      if (text[i] >= 'a' && text[i] <= 'z') {
        text[i] = (char)(text[i] - 'a' + 'A');
      }
    }
    m = tun_base32_decode(out, sizeof(out), text, (size_t)n);
    assert_int_equal(m, (rp_ssize)len);
    assert_memory_equal(in, out, len);
  }
  assert_int_equal(tun_base32_decode(out, sizeof(out), "ab!d", 4),
                   RP_ERR_MALFORMED);
  assert_int_equal(tun_base32_decode(out, sizeof(out), "a", 1),
                   RP_ERR_MALFORMED);
  assert_int_equal(tun_base32_encode(text, 3, in, 10), RP_ERR_NOBUF);
}

static void test_tunwire_query_roundtrip(void **state) {
  rp_dns_name domain;
  uint8_t msg[TUN_WIRE_MAX_UP], back[TUN_WIRE_MAX_UP], q[MSG_MAX];
  size_t cap, i;
  rp_ssize n, m;
  rp_dns_msg pq;

  (void)state;
  assert_int_equal(rp_dns_name_from_text(&domain, "t.example"), 0);
  cap = tun_wire_up_capacity(&domain);
  assert_int_equal(cap, 150);
  for (i = 0; i < cap; ++i) {
    msg[i] = (uint8_t)(255 - i);
  }
  n = tun_wire_build_query(q, sizeof(q), 0x1234, &domain, msg, cap, 1232);
  assert_true(n > 0);
  assert_int_equal(rp_dns_parse(&pq, q, (size_t)n), 0);
  assert_int_equal(pq.question.qtype, RP_DNS_TYPE_TXT);
  assert_true(pq.has_edns);
  assert_int_equal(pq.edns_udp_size, 1232);
  m = tun_wire_query_message(&pq, &domain, back, sizeof(back));
  assert_int_equal(m, (rp_ssize)cap);
  assert_memory_equal(msg, back, cap);
  /* One byte too many does not fit. */
  assert_int_equal(
      tun_wire_build_query(q, sizeof(q), 1, &domain, msg, cap + 1, 1232),
      RP_ERR_INVALID_ARGUMENT);
  /* Segment sizes: about 930 payload bytes down, about 130 up. */
  assert_true(tun_srv_down_mss(1232) >= 900 && tun_srv_down_mss(1232) < 935);
  assert_int_equal(tun_srv_up_mss(&domain), 150 - 13 - 7 - 6);
}

/* srv_settings fills |s| with |mode|'s defaults under t.example. */
static void srv_settings(tun_srv_settings *s, tun_mode mode) {
  tun_srv_settings_default(s, mode);
  assert_int_equal(rp_dns_name_from_text(&s->domain, "t.example"), 0);
}

static tun_srv *new_server(sent_rec *r, tun_mode mode, size_t max_sessions) {
  tun_srv_settings s;
  tun_srv *srv;

  srv_settings(&s, mode);
  s.max_sessions = max_sessions;
  s.max_held = 16;
  assert_int_equal(tun_srv_new(&srv, &s, &rec_cb, rp_test_mem_plain(), r), 0);
  return srv;
}

/* random_bytes draws a length below |bound| and that many bytes into
   |out| from the LCG state |*seed|, and returns the length. */
static size_t random_bytes(uint8_t *out, size_t bound, uint64_t *seed) {
  size_t i, len;

  *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
  len = (size_t)(*seed >> 33) % bound;
  for (i = 0; i < len; ++i) {
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    out[i] = (uint8_t)(*seed >> 40);
  }
  return len;
}

/* new_client makes a client of |mode| for t.example with session id
   |sid| and, unless 0, download limit |down_limit| (else the default). */
static tun_cli *new_client(tun_mode mode, uint64_t sid, uint16_t down_limit) {
  tun_cli_settings cs;
  tun_cli *cli;

  tun_cli_settings_default(&cs, mode);
  assert_int_equal(rp_dns_name_from_text(&cs.domain, "t.example"), 0);
  cs.sid = sid;
  if (down_limit > 0) {
    cs.down_limit = down_limit;
  }
  assert_int_equal(tun_cli_new(&cli, &cs, rp_test_mem_plain()), 0);
  return cli;
}

static uint8_t last_rcode(const sent_rec *r) {
  assert_true(r->n > 0);
  return rp_dns_rcode(r->data[r->n - 1]);
}

static void test_tunwire_server_hostile(void **state) {
  sent_rec *r = test_calloc(1, sizeof(*r));
  tun_srv *srv = new_server(r, TUN_MODE_DNSTT, 2);
  tun_peer peer = {.addrlen = 0};
  rp_dns_name name;
  uint8_t q[MSG_MAX], msg[64];
  uint64_t seed = 7;
  rp_ssize n;
  size_t i, len;
  int k;

  (void)state;
  /* Random bytes: dropped or answered, never a crash. */
  for (k = 0; k < 20000; ++k) {
    len = random_bytes(q, 300, &seed);
    if (len > 2) {
      q[2] = 0x01; /* a query, RD set */
    }
    assert_int_equal(tun_srv_on_datagram(srv, q, len, &peer, 0), 0);
  }
  /* A foreign name is NXDOMAIN, as dnstt-server answers it. */
  r->n = 0;
  assert_int_equal(rp_dns_name_from_text(&name, "www.example.com"), 0);
  n = rp_dns_build_query(q, sizeof(q), 1, &name, RP_DNS_TYPE_TXT, 1232);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, 0), 0);
  assert_int_equal(last_rcode(r), RP_DNS_RCODE_NXDOMAIN);
  /* A name under the domain that is not base32 is FORMERR. */
  assert_int_equal(rp_dns_name_from_text(&name, "x!y.t.example"), 0);
  n = rp_dns_build_query(q, sizeof(q), 2, &name, RP_DNS_TYPE_TXT, 1232);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, 0), 0);
  assert_int_equal(last_rcode(r), RP_DNS_RCODE_FORMERR);
  /* A bad arq frame in a good header is FORMERR. */
  memset(msg, 0, sizeof(msg));
  msg[0] = 9;
  msg[TUN_WIRE_HDR_LEN + 6] = 200; /* sack too long */
  assert_int_equal(rp_dns_name_from_text(&name, "t.example"), 0);
  n = tun_wire_build_query(q, sizeof(q), 3, &name, msg, 30, 1232);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, 0), 0);
  assert_int_equal(last_rcode(r), RP_DNS_RCODE_FORMERR);
  /* Sessions past the cap get SERVFAIL. */
  for (i = 0; i < 3; ++i) {
    memset(msg, 0, sizeof(msg));
    msg[7] = (uint8_t)(100 + i);
    n = tun_wire_build_query(q, sizeof(q), 4, &name, msg,
                             TUN_WIRE_HDR_LEN + TUN_ARQ_HDR_FIXED, 1232);
    assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, 0), 0);
  }
  assert_int_equal(last_rcode(r), RP_DNS_RCODE_SERVFAIL);
  /* Once the oldest session has been silent 5 s, a new one takes its
     place. */
  r->n = 0;
  n = tun_wire_build_query(q, sizeof(q), 5, &name, msg,
                           TUN_WIRE_HDR_LEN + TUN_ARQ_HDR_FIXED, 1232);
  assert_int_equal(
      tun_srv_on_datagram(srv, q, (size_t)n, &peer, 5 * RP_SECONDS), 0);
  {
    tun_srv_stats st;

    tun_srv_get_stats(srv, &st);
    assert_int_equal(st.sessions_evicted, 1);
    assert_int_equal(st.sessions, 2);
  }
  tun_srv_del(srv);
  test_free(r);
}

/* A poll with nothing to send is held up to 1 s and answered empty; data
   that arrives meanwhile is answered at once. */
static void test_tunwire_server_hold(void **state) {
  sent_rec *r = test_calloc(1, sizeof(*r));
  tun_srv *srv = new_server(r, TUN_MODE_DNSTT, 4);
  tun_cli *cli;
  tun_peer peer = {.addrlen = 0};
  uint8_t q[MSG_MAX], up[100];
  rp_tstamp now = 0;
  rp_ssize n;

  (void)state;
  cli = new_client(TUN_MODE_DNSTT, 42, 0);
  n = tun_cli_build_query(cli, q, sizeof(q), 1, 1, now, NULL);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  assert_int_equal(r->n, 0);
  assert_int_equal(tun_srv_get_expiry(srv), now + RP_SECONDS);
  now += RP_SECONDS - 1;
  assert_int_equal(tun_srv_handle_expiry(srv, now), 0);
  assert_int_equal(r->n, 0);
  now += 1;
  assert_int_equal(tun_srv_handle_expiry(srv, now), 0);
  assert_int_equal(r->n, 1);
  assert_int_equal(tun_cli_on_answer(cli, r->data[0], r->len[0], now), 0);
  /* Hold a poll, then upload data: the server owes an ack and answers
     the held poll first and the data query next, at once. */
  n = tun_cli_build_query(cli, q, sizeof(q), 2, 2, now, NULL);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  assert_int_equal(r->n, 1);
  memset(up, 0, sizeof(up));
  assert_int_equal(tun_arq_write(tun_cli_arq(cli), up, sizeof(up)), sizeof(up));
  n = tun_cli_build_query(cli, q, sizeof(q), 3, 3, now, NULL);
  now += RP_MILLISECONDS;
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  assert_int_equal(r->n, 2);
  assert_int_equal(rp_dns_get_id(r->data[1]), 2);
  /* Server data answers the next poll at once. */
  r->serve_bytes = 100;
  n = tun_cli_build_query(cli, q, sizeof(q), 4, 4, now, NULL);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  assert_int_equal(r->n, 3);
  assert_int_equal(tun_cli_on_answer(cli, r->data[2], r->len[2], now), 1);
  tun_cli_del(cli);
  tun_srv_del(srv);
  test_free(r);
}

/* Held polls are capped per session (the oldest is answered to make
   room) and an idle session is removed with its held queries. */
static void test_tunwire_server_caps(void **state) {
  sent_rec *r = test_calloc(1, sizeof(*r));
  tun_srv *srv = new_server(r, TUN_MODE_DNSTT, 4);
  tun_cli *cli;
  tun_peer peer = {.addrlen = 0};
  tun_srv_stats st;
  uint8_t q[MSG_MAX];
  rp_tstamp now = 0;
  rp_ssize n;
  int k;

  (void)state;
  cli = new_client(TUN_MODE_DNSTT, 77, 0);
  for (k = 0; k < 20; ++k) {
    n = tun_cli_build_query(cli, q, sizeof(q), (uint16_t)k, (uint16_t)k, now,
                            NULL);
    assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  }
  /* 16 held at most: the 4 oldest were answered, in order. */
  assert_int_equal(r->n, 4);
  for (k = 0; k < 4; ++k) {
    assert_int_equal(rp_dns_get_id(r->data[k]), k);
  }
  tun_srv_get_stats(srv, &st);
  assert_int_equal(st.sessions, 1);
  /* Idle for 60 s: held polls end at 1 s, the session at 60 s. */
  now += RP_SECONDS;
  assert_int_equal(tun_srv_handle_expiry(srv, now), 0);
  assert_int_equal(r->n, 20);
  now += 59 * RP_SECONDS;
  assert_int_equal(tun_srv_get_expiry(srv), now);
  assert_int_equal(tun_srv_handle_expiry(srv, now), 0);
  tun_srv_get_stats(srv, &st);
  assert_int_equal(st.sessions, 0);
  assert_int_equal(st.sessions_expired, 1);
  assert_int_equal(tun_srv_get_expiry(srv), RP_TSTAMP_UNSET);
  tun_cli_del(cli);
  tun_srv_del(srv);
  test_free(r);
}

/* run_session moves |down| and |up| bytes between a client and a server in
   memory; |inflight| queries are kept out; a query or its answer is lost
   with |loss_pct|; answers take 20 ms. */
static void run_session(tun_mode mode, size_t down, size_t up,
                        unsigned loss_pct, unsigned inflight) {
  sent_rec *r = test_calloc(1, sizeof(*r));
  tun_srv *srv = new_server(r, mode, 4);
  tun_cli *cli;
  tun_peer peer = {.addrlen = 0};
  uint8_t q[MSG_MAX], buf[MSG_MAX];
  rp_tstamp now = 0;
  uint64_t seed = 5, got = 0, wrote = 0;
  unsigned out = 0, step = 0;
  rp_ssize n;
  size_t i, k;

  cli = new_client(mode, 0xabcdef, 500);
  r->serve_bytes = down;
  /* Simplified: each step sends |inflight| queries, delivers the
     answers the server gave 20 ms later, and drops some. */
  while (got < down || r->sunk < up) {
    assert_true(++step < 100000);
    while (wrote < up) {
      uint8_t chunk[256];
      size_t c = up - wrote < sizeof(chunk) ? up - wrote : sizeof(chunk);

      for (i = 0; i < c; ++i) {
        chunk[i] = pattern(wrote + i, 0x44);
      }
      c = tun_arq_write(tun_cli_arq(cli), chunk, c);
      if (c == 0) {
        break;
      }
      wrote += c;
    }
    r->n = 0;
    for (out = 0; out < inflight; ++out) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      n = tun_cli_build_query(cli, q, sizeof(q), (uint16_t)out,
                              (uint16_t)(seed >> 48), now, NULL);
      assert_true(n > 0);
      if ((seed >> 33) % 100 < loss_pct) {
        continue;
      }
      assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
    }
    now += 20 * RP_MILLISECONDS;
    assert_int_equal(tun_srv_handle_expiry(srv, now), 0);
    for (k = 0; k < r->n; ++k) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      if ((seed >> 33) % 100 < loss_pct) {
        continue;
      }
      (void)tun_cli_on_answer(cli, r->data[k], r->len[k], now);
    }
    tun_arq_handle_expiry(tun_cli_arq(cli), now);
    while ((n = (rp_ssize)tun_arq_read(tun_cli_arq(cli), buf, sizeof(buf))) >
           0) {
      for (i = 0; i < (size_t)n; ++i) {
        assert_int_equal(buf[i], pattern(got + i, 0x33));
      }
      got += (size_t)n;
    }
  }
  assert_int_equal(got, down);
  assert_int_equal(r->sunk, up);
  assert_false(r->sink_bad);
  tun_cli_del(cli);
  tun_srv_del(srv);
  test_free(r);
}

static void test_tunwire_session_dnstt(void **state) {
  (void)state;
  run_session(TUN_MODE_DNSTT, 200000, 20000, 0, 20);
  run_session(TUN_MODE_DNSTT, 200000, 20000, 30, 20);
}

static void test_tunwire_session_md(void **state) {
  (void)state;
  run_session(TUN_MODE_MD, 100000, 10000, 0, 8);
  run_session(TUN_MODE_MD, 100000, 10000, 30, 8);
}

static void test_tunwire_probe(void **state) {
  sent_rec *r = test_calloc(1, sizeof(*r));
  tun_srv *srv = new_server(r, TUN_MODE_MD, 4);
  tun_peer peer = {.addrlen = 0};
  rp_dns_name domain;
  uint8_t q[MSG_MAX];
  rp_ssize n;

  (void)state;
  assert_int_equal(rp_dns_name_from_text(&domain, "t.example"), 0);
  n = tun_cli_build_probe(q, sizeof(q), 9, &domain, 77, 500,
                          RP_DNS_EDNS_UDP_SIZE);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, 0), 0);
  assert_int_equal(r->n, 1);
  assert_true(tun_cli_check_probe(r->data[0], r->len[0], 77, 500));
  assert_false(tun_cli_check_probe(r->data[0], r->len[0], 78, 500));
  assert_false(tun_cli_check_probe(r->data[0], r->len[0], 77, 499));
  tun_srv_del(srv);
  test_free(r);
}

/* The client takes only NOERROR answers with a TXT frame; hostile bytes
   never crash it. */
static void test_tunwire_client_hostile(void **state) {
  tun_cli_settings cs;
  tun_cli *cli;
  uint8_t q[MSG_MAX], a[MSG_MAX];
  uint64_t seed = 11;
  rp_ssize n, m;
  rp_dns_msg pq;
  size_t len;
  int k;

  (void)state;
  tun_cli_settings_default(&cs, TUN_MODE_DNSTT);
  assert_int_equal(rp_dns_name_from_text(&cs.domain, "t.example"), 0);
  assert_int_equal(tun_cli_new(&cli, &cs, rp_test_mem_plain()), 0);
  for (k = 0; k < 20000; ++k) {
    len = random_bytes(a, 600, &seed);
    assert_true(tun_cli_on_answer(cli, a, len, 0) < 0);
  }
  n = tun_cli_build_query(cli, q, sizeof(q), 5, 6, 0, NULL);
  assert_true(n > 0);
  m = rp_dns_build_error(a, sizeof(a), q, (size_t)n, RP_DNS_RCODE_REFUSED);
  assert_true(m > 0);
  assert_int_equal(tun_cli_on_answer(cli, a, (size_t)m, 0), RP_ERR_PROTO);
  /* A TXT answer whose frame is garbage is refused by the arq. */
  assert_int_equal(rp_dns_parse(&pq, q, (size_t)n), 0);
  m = rp_dns_build_txt_answer(a, sizeof(a), &pq, 0, (const uint8_t *)"xyz", 3);
  assert_int_equal(tun_cli_on_answer(cli, a, (size_t)m, 0), RP_ERR_MALFORMED);
  tun_cli_del(cli);
}

/* The pattern fill and check, 8 bytes at a time, agree with
   tun_xfer_pattern_byte at every offset alignment and length, and the
   check sees any one flipped bit. */
static void test_tunwire_pattern(void **state) {
  uint8_t buf[80];
  uint64_t k;

  (void)state;
  for (k = 0; k < 20000; ++k) {
    uint64_t off = k * 0x1234567ULL + (k % 8) + (k > 10000 ? 1ULL << 40 : 0);
    uint8_t stream = k % 2 ? TUN_XFER_STREAM_DOWN : TUN_XFER_STREAM_UP;
    size_t len = (size_t)(k % sizeof(buf)), i;

    tun_xfer_pattern_fill(buf, len, off, stream);
    for (i = 0; i < len; ++i) {
      assert_int_equal(buf[i], tun_xfer_pattern_byte(off + i, stream));
    }
    assert_true(tun_xfer_pattern_check(buf, len, off, stream));
    if (len > 0) {
      buf[k % len] ^= (uint8_t)(1u << (k % 8));
      assert_false(tun_xfer_pattern_check(buf, len, off, stream));
    }
  }
}

/* down_ends: a transfer ends with its download, the upload as far as it
   went (a real client's run); by default both directions. */
static void test_tunwire_xfer_down_ends(void **state) {
  tun_xfer x;

  (void)state;
  tun_xfer_init(&x, 100, 50, 0);
  x.down_done = 5;
  assert_false(tun_xfer_complete(&x));
  x.down_ends = 1;
  assert_true(tun_xfer_complete(&x));
  x.down_done = RP_TSTAMP_UNSET;
  assert_false(tun_xfer_complete(&x));
}

/* The MasterDnsVPN server's model: a query that carried upload data is
   answered with the ack alone (up_ack_only); tun_srv_add_resends makes
   the next answers carry a packet the client has already. */
static void test_tunwire_server_md_acks(void **state) {
  sent_rec *r = test_calloc(1, sizeof(*r));
  tun_srv_settings s;
  tun_srv_stats st;
  tun_srv *srv;
  tun_cli *cli;
  tun_peer peer = {.addrlen = 0};
  uint8_t q[MSG_MAX], up[100], buf[MSG_MAX];
  rp_tstamp now = 0;
  rp_ssize n;
  size_t got = 0;
  int k;

  (void)state;
  srv_settings(&s, TUN_MODE_MD);
  s.up_ack_only = 1;
  assert_int_equal(tun_srv_new(&srv, &s, &rec_cb, rp_test_mem_plain(), r), 0);
  r->serve_bytes = 5000;
  cli = new_client(TUN_MODE_MD, 9, 500);
  /* A poll: data. */
  n = tun_cli_build_query(cli, q, sizeof(q), 1, 1, now, NULL);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  assert_int_equal(tun_cli_on_answer(cli, r->data[0], r->len[0], now), 1);
  /* Upload data: its answer is the ack alone, and it acks the upload. */
  memset(up, 0, sizeof(up));
  assert_int_equal(tun_arq_write(tun_cli_arq(cli), up, 50), 50);
  n = tun_cli_build_query(cli, q, sizeof(q), 2, 2, now, NULL);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  assert_int_equal(tun_cli_on_answer(cli, r->data[1], r->len[1], now), 0);
  assert_true(tun_arq_send_idle(tun_cli_arq(cli)));
  got = tun_arq_read(tun_cli_arq(cli), buf, sizeof(buf));
  assert_true(got > 0);
  /* Two resends owed: two answers carry a packet again, nothing new;
     the third new data. */
  tun_srv_add_resends(srv, 2);
  for (k = 0; k < 3; ++k) {
    n = tun_cli_build_query(cli, q, sizeof(q), (uint16_t)(3 + k),
                            (uint16_t)(3 + k), now, NULL);
    assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
    assert_int_equal(tun_cli_on_answer(cli, r->data[2 + k], r->len[2 + k], now),
                     1);
    assert_int_equal(tun_arq_read(tun_cli_arq(cli), buf, sizeof(buf)) > 0,
                     k == 2);
  }
  tun_srv_get_stats(srv, &st);
  assert_int_equal(st.resends, 2);
  /* The debt is bounded. */
  tun_srv_add_resends(srv, (size_t)-1);
  tun_srv_add_resends(srv, (size_t)-1);
  tun_cli_del(cli);
  tun_srv_del(srv);
  test_free(r);
}

/* out_queue (dnstt-server's send queue): the flush puts the window's
   segments (8) in a queue of 4 packets and drops the rest; answers take
   them in order; the dropped ones come back on their timeouts, at the
   flushes, and the download completes. */
static void test_tunwire_server_out_queue(void **state) {
  sent_rec *r = test_calloc(1, sizeof(*r));
  tun_srv_settings s;
  tun_srv_stats st;
  tun_srv *srv;
  tun_cli *cli;
  tun_peer peer = {.addrlen = 0};
  uint8_t q[MSG_MAX], buf[MSG_MAX];
  rp_tstamp now = 0;
  rp_ssize n;
  size_t got = 0, k;
  int step, segs;

  (void)state;
  srv_settings(&s, TUN_MODE_DNSTT);
  s.max_held = 1;
  s.flush_interval = 10 * RP_MILLISECONDS;
  s.arq.snd_wnd = s.arq.rcv_wnd = 8;
  s.out_queue = TUN_SRV_MAX_OUT_QUEUE + 1;
  assert_int_equal(tun_srv_new(&srv, &s, &rec_cb, rp_test_mem_plain(), r),
                   RP_ERR_INVALID_ARGUMENT);
  s.out_queue = 4;
  assert_int_equal(tun_srv_new(&srv, &s, &rec_cb, rp_test_mem_plain(), r), 0);
  r->serve_bytes = 12000;
  cli = new_client(TUN_MODE_DNSTT, 3, 0);
  /* The first query opens the session: its flush fills the queue. */
  n = tun_cli_build_query(cli, q, sizeof(q), 1, 1, now, NULL);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  assert_int_equal(r->n, 1);
  assert_int_equal(tun_cli_on_answer(cli, r->data[0], r->len[0], now), 1);
  tun_srv_get_stats(srv, &st);
  assert_true(st.queue_drops > 0);
  /* Queued, the flush goes on with no query. */
  assert_int_equal(tun_srv_get_expiry(srv), now + 10 * RP_MILLISECONDS);
  for (step = 0; step < 2000 && got < r->serve_bytes; ++step) {
    now += 10 * RP_MILLISECONDS;
    r->n = 0;
    assert_int_equal(tun_srv_handle_expiry(srv, now), 0);
    n = tun_cli_build_query(cli, q, sizeof(q), (uint16_t)step,
                            (uint16_t)step, now, NULL);
    assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
    for (k = 0; k < r->n; ++k) {
      segs = tun_cli_on_answer(cli, r->data[k], r->len[k], now);
      assert_true(segs >= 0 && segs <= 1);
    }
    got += tun_arq_read(tun_cli_arq(cli), buf, sizeof(buf));
  }
  assert_int_equal(got, r->serve_bytes);
  tun_cli_del(cli);
  tun_srv_del(srv);
  test_free(r);
}

/* write_msg (the real dnstt server's KCP writes): the served bytes go
   in as a 2-byte write, then write_msg bytes, each its own segments,
   while KCP's Write would take them (the window of 8: 4 messages); an
   ack that opens the window puts the next ones in the queue at once,
   with no flush interval passed. */
static void test_tunwire_server_write_msg(void **state) {
  sent_rec *r = test_calloc(1, sizeof(*r));
  tun_srv_settings s;
  tun_srv *srv;
  tun_cli *cli;
  tun_cli_settings cs;
  tun_arq_stats st;
  tun_peer peer = {.addrlen = 0};
  uint8_t q[MSG_MAX], buf[MSG_MAX];
  rp_ssize n;
  size_t got, k;
  uint16_t id = 0;

  (void)state;
  srv_settings(&s, TUN_MODE_DNSTT);
  s.max_held = 1;
  s.flush_interval = 10 * RP_MILLISECONDS;
  s.arq.snd_wnd = s.arq.rcv_wnd = 8;
  tun_arq_settings_kcp(&s.arq);
  s.write_msg = 300;
  assert_int_equal(tun_srv_new(&srv, &s, &rec_cb, rp_test_mem_plain(), r),
                   RP_ERR_INVALID_ARGUMENT);
  s.out_queue = 16;
  s.ack_queued = 1;
  s.write_msg = 4097;
  assert_int_equal(tun_srv_new(&srv, &s, &rec_cb, rp_test_mem_plain(), r),
                   RP_ERR_INVALID_ARGUMENT);
  /* A message the send buffer cannot take would never be written. */
  s.write_msg = 300;
  s.arq.snd_buf = 299;
  assert_int_equal(tun_srv_new(&srv, &s, &rec_cb, rp_test_mem_plain(), r),
                   RP_ERR_INVALID_ARGUMENT);
  s.arq.snd_buf = 64 * 1024;
  s.write_msg = 300;
  assert_int_equal(tun_srv_new(&srv, &s, &rec_cb, rp_test_mem_plain(), r), 0);
  r->serve_bytes = 100000;
  tun_cli_settings_default(&cs, TUN_MODE_DNSTT);
  assert_int_equal(rp_dns_name_from_text(&cs.domain, "t.example"), 0);
  cs.sid = 5;
  cs.arq.snd_wnd = cs.arq.rcv_wnd = 8;
  tun_arq_settings_kcp(&cs.arq);
  assert_int_equal(tun_cli_new(&cli, &cs, rp_test_mem_plain()), 0);
  /* All at time 0. Queries that ack nothing take the first window: four
     messages of 2 + 300 bytes, 8 segments, and then nothing more. */
  for (k = 0; k < 10; ++k, ++id) {
    n = tun_cli_build_query(cli, q, sizeof(q), id, id, 0, NULL);
    assert_true(n > 0);
    assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, 0), 0);
  }
  for (k = 0; k < r->n; ++k) {
    assert_true(tun_cli_on_answer(cli, r->data[k], r->len[k], 0) >= 0);
  }
  got = tun_arq_read(tun_cli_arq(cli), buf, sizeof(buf));
  assert_int_equal(got, 4 * 302);
  tun_arq_get_stats(tun_cli_arq(cli), &st);
  assert_int_equal(st.segs_received, 8);
  /* The query that acks them opens the window: the held query and it
     carry the next window at once, no flush interval later. */
  r->n = 0;
  n = tun_cli_build_query(cli, q, sizeof(q), id, id, 0, NULL);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, 0), 0);
  for (k = 0; k < r->n; ++k) {
    assert_true(tun_cli_on_answer(cli, r->data[k], r->len[k], 0) >= 0);
  }
  assert_int_equal(tun_arq_read(tun_cli_arq(cli), buf, sizeof(buf)),
                   4 * 302);
  tun_arq_get_stats(tun_cli_arq(cli), &st);
  assert_int_equal(st.segs_received, 16);
  tun_cli_del(cli);
  tun_srv_del(srv);
  test_free(r);
}

/* A MasterDNS client asking for a download limit past any frame (a
   hostile or broken one) gets segments no larger than a frame: with the
   send queue full, the flush's segments are cut into the server's frame
   buffer and dropped, and one larger than it overran the server's
   memory (libFuzzer, fuzz_tun_input, 2026-12-05). The answers stay
   within what an answer carries. */
static void test_tunwire_server_md_down_limit(void **state) {
  sent_rec *r = test_calloc(1, sizeof(*r));
  tun_srv_settings s;
  tun_srv_stats st;
  tun_srv *srv;
  tun_cli *cli;
  tun_peer peer = {.addrlen = 0};
  uint8_t q[MSG_MAX];
  rp_tstamp now = 0;
  rp_ssize n;
  size_t k;
  int step;

  (void)state;
  srv_settings(&s, TUN_MODE_MD);
  s.max_held = 1;
  s.flush_interval = 10 * RP_MILLISECONDS;
  s.out_queue = 2;
  assert_int_equal(tun_srv_new(&srv, &s, &rec_cb, rp_test_mem_plain(), r), 0);
  r->serve_bytes = 200000;
  cli = new_client(TUN_MODE_MD, 3, UINT16_MAX);
  n = tun_cli_build_query(cli, q, sizeof(q), 1, 1, now, NULL);
  assert_true(n > 0);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  /* Flushes with no query: the queue fills, then drops. */
  for (step = 0; step < 20; ++step) {
    now += 10 * RP_MILLISECONDS;
    assert_int_equal(tun_srv_handle_expiry(srv, now), 0);
  }
  tun_srv_get_stats(srv, &st);
  assert_true(st.queue_drops > 0);
  r->n = 0;
  n = tun_cli_build_query(cli, q, sizeof(q), 2, 2, now, NULL);
  assert_true(n > 0);
  assert_int_equal(tun_srv_on_datagram(srv, q, (size_t)n, &peer, now), 0);
  for (k = 0; k < r->n; ++k) {
    assert_true(r->len[k] <= TUN_WIRE_MAX_MSG);
  }
  tun_cli_del(cli);
  tun_srv_del(srv);
  test_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tunwire_base32),
      cmocka_unit_test(test_tunwire_query_roundtrip),
      cmocka_unit_test(test_tunwire_server_hostile),
      cmocka_unit_test(test_tunwire_server_hold),
      cmocka_unit_test(test_tunwire_server_caps),
      cmocka_unit_test(test_tunwire_session_dnstt),
      cmocka_unit_test(test_tunwire_session_md),
      cmocka_unit_test(test_tunwire_probe),
      cmocka_unit_test(test_tunwire_client_hostile),
      cmocka_unit_test(test_tunwire_pattern),
      cmocka_unit_test(test_tunwire_xfer_down_ends),
      cmocka_unit_test(test_tunwire_server_md_acks),
      cmocka_unit_test(test_tunwire_server_out_queue),
      cmocka_unit_test(test_tunwire_server_write_msg),
      cmocka_unit_test(test_tunwire_server_md_down_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
