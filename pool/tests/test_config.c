/*
 * test_config.c: the smart_pool parser, good and bad configs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rp_test_mem.h"
#include "respool_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* parse parses |json| into a fresh config, returning the result. */
static int parse(rp_config *cfg, const char *json, char *err) {
  rp_config_init(cfg, rp_test_mem_plain());
  err[0] = '\0';
  return rp_config_parse_json(cfg, json, strlen(json), "pool.json", err,
                              RP_CONFIG_ERRLEN);
}

static void test_config_true(void **state) {
  rp_config cfg;
  char err[RP_CONFIG_ERRLEN];
  (void)state;
  assert_int_equal(parse(&cfg, "true", err), 0);
  assert_int_equal(cfg.enabled, 1);
  assert_int_equal(cfg.deadline, RP_TSTAMP_UNSET);
  assert_int_equal(cfg.wait_for_token, -1);
  rp_config_free(&cfg);
  assert_int_equal(parse(&cfg, "{\"smart_pool\": true, \"tag\": \"x\"}", err),
                   0);
  assert_int_equal(cfg.enabled, 1);
  rp_config_free(&cfg);
}

static void test_config_full(void **state) {
  rp_config cfg;
  char err[RP_CONFIG_ERRLEN];
  const char *json =
      "{\"enabled\": true, \"load_balance\": \"lowest_latency\","
      " \"deadline\": \"4s\", \"per_attempt\": \"300ms\","
      " \"probe_interval\": \"1m\", \"down_after\": 5, \"duplicate\": 3,"
      " \"wait_for_token\": true,"
      " \"discovery\": {\"country\": \"IR\", \"sample_ranges\": 2,"
      "   \"want\": 12, \"concurrency\": 50, \"pace\": \"20ms\"},"
      " \"resolvers\": [\"8.8.8.8\", \"1.1.1.1:5353\", \"tcp://9.9.9.9:53\","
      "   \"dot://1.1.1.1:853\", \"tls://dns.example@1.0.0.1\","
      "   \"https://dns.google/dns-query\", \"auto\", \"[::1]:53\"],"
      " \"kind\": \"masterdns\", \"listen\": \"127.0.0.1:5353\","
      " \"scores_file\": \"/tmp/s.json\", \"pretest_domain\": \"a.b\","
      " \"tls_ca\": \"/ca.pem\", \"tls_name\": \"n\"}";
  const struct sockaddr_in *sin;
  rp_settings settings = {0};
  (void)state;
  assert_int_equal(parse(&cfg, json, err), 0);
  assert_int_equal(cfg.enabled, 1);
  assert_int_equal(cfg.load_balance, RP_BALANCE_LOWEST_LATENCY);
  assert_int_equal(cfg.deadline, 4 * RP_SECONDS);
  assert_int_equal(cfg.per_attempt, 300 * RP_MILLISECONDS);
  assert_int_equal(cfg.probe_interval, 60 * RP_SECONDS);
  assert_int_equal(cfg.down_after, 5);
  assert_int_equal(cfg.duplicate, 3);
  assert_int_equal(cfg.wait_for_token, 1);
  assert_string_equal(cfg.discovery.country, "IR");
  assert_int_equal(cfg.discovery.sample_ranges, 2);
  assert_int_equal(cfg.discovery.want, 12);
  assert_int_equal(cfg.discovery.concurrency, 50);
  assert_int_equal(cfg.discovery.pace, 20 * RP_MILLISECONDS);
  assert_int_equal(cfg.nresolvers, 8);
  assert_int_equal(cfg.resolvers[0].scheme, RP_SCHEME_UDP);
  assert_int_equal(cfg.resolvers[0].port, 53);
  assert_int_equal(cfg.resolvers[0].has_addr, 1);
  assert_int_equal(cfg.resolvers[1].port, 5353);
  assert_int_equal(cfg.resolvers[2].scheme, RP_SCHEME_TCP);
  assert_string_equal(cfg.resolvers[2].host, "9.9.9.9");
  assert_int_equal(cfg.resolvers[3].scheme, RP_SCHEME_DOT);
  assert_int_equal(cfg.resolvers[3].port, 853);
  assert_int_equal(cfg.resolvers[4].scheme, RP_SCHEME_DOT);
  assert_string_equal(cfg.resolvers[4].tls_name, "dns.example");
  assert_string_equal(cfg.resolvers[4].host, "1.0.0.1");
  assert_int_equal(cfg.resolvers[5].scheme, RP_SCHEME_DOH);
  assert_string_equal(cfg.resolvers[5].host, "dns.google");
  assert_string_equal(cfg.resolvers[5].path, "/dns-query");
  assert_int_equal(cfg.resolvers[5].port, 443);
  assert_int_equal(cfg.resolvers[5].has_addr, 0);
  assert_int_equal(cfg.resolvers[6].scheme, RP_SCHEME_AUTO);
  assert_int_equal(cfg.resolvers[7].addr.ss_family, AF_INET6);
  assert_int_equal(cfg.has_kind, 1);
  assert_int_equal(cfg.kind, RP_KIND_MASTERDNS);
  assert_int_equal(cfg.has_listen, 1);
  sin = (const struct sockaddr_in *)&cfg.listen;
  assert_int_equal(ntohs(sin->sin_port), 5353);
  assert_string_equal(cfg.scores_file, "/tmp/s.json");
  assert_string_equal(cfg.pretest_domain, "a.b");
  assert_string_equal(cfg.tls_ca, "/ca.pem");
  assert_string_equal(cfg.tls_name, "n");
  rp_config_apply(&cfg, &settings);
  assert_int_equal(settings.deadline, 4 * RP_SECONDS);
  assert_int_equal(settings.duplicate, 3);
  assert_int_equal(settings.wait_for_token, 1);
  assert_int_equal(settings.load_balance, RP_BALANCE_LOWEST_LATENCY);
  rp_config_free(&cfg);
}

static void test_config_outbound(void **state) {
  rp_config cfg;
  char err[RP_CONFIG_ERRLEN];
  const char *json = "{\"type\": \"dnstt\", \"domain\": \"t.example.com\","
                     " \"resolvers\": [\"8.8.8.8:53\"],"
                     " \"smart_pool\": {\"enabled\": true}}";
  rp_settings settings = {.deadline = 7, .down_after = 9};
  (void)state;
  assert_int_equal(parse(&cfg, json, err), 0);
  assert_int_equal(cfg.kind, RP_KIND_DNSTT);
  assert_int_equal(cfg.nresolvers, 1);
  rp_config_apply(&cfg, &settings);
  assert_int_equal(settings.deadline, 7);
  assert_int_equal(settings.down_after, 9);
  rp_config_free(&cfg);
}

/* expect_bad checks that |json| fails with a message holding every one of
   the NULL-ended |needles|. */
static void expect_bad(const char *json, const char *n1, const char *n2) {
  rp_config cfg;
  char err[RP_CONFIG_ERRLEN];
  assert_int_equal(parse(&cfg, json, err), RP_ERR_CONFIG);
  if (!strstr(err, "pool.json") || !strstr(err, n1) ||
      (n2 && !strstr(err, n2))) {
    fail_msg("error \"%s\" lacks \"%s\"/\"%s\"", err, n1, n2 ? n2 : "");
  }
  rp_config_free(&cfg);
}

static void test_config_bad(void **state) {
  (void)state;
  expect_bad("{\"enabeld\": true}", "enabeld", "unknown field");
  expect_bad("{\"deadline\": \"5 parsecs\"}", "deadline", "5 parsecs");
  expect_bad("{\"deadline\": \"-1s\"}", "deadline", "-1s");
  expect_bad("{\"deadline\": \"0s\"}", "deadline", "0s");
  /* Above 0 but under a nanosecond would be stored as 0 (a fuzz find). */
  expect_bad("{\"deadline\": 1e-10}", "deadline", "under 1 ns");
  expect_bad("{\"per_attempt\": true}", "per_attempt", "true");
  expect_bad("{\"down_after\": 0}", "down_after", "0");
  expect_bad("{\"down_after\": 2.5}", "down_after", "2.5");
  expect_bad("{\"duplicate\": 99}", "duplicate", "99");
  expect_bad("{\"load_balance\": \"fastest\"}", "load_balance", "fastest");
  expect_bad("{\"resolvers\": [\"8.8.8.8\", \"1.2.3\"]}", "resolvers[1]",
             "1.2.3");
  expect_bad("{\"resolvers\": [\"8.8.8.8:99999\"]}", "resolvers[0]",
             "bad port");
  expect_bad("{\"resolvers\": [\"tcp://dns.google:53\"]}", "resolvers[0]",
             "IP address");
  expect_bad("{\"resolvers\": [\"ftp://1.1.1.1\"]}", "resolvers[0]",
             "unknown scheme");
  expect_bad("{\"resolvers\": [\"https://dns.google\"]}", "resolvers[0]",
             "path");
  expect_bad("{\"resolvers\": [\"1.1.1.1/x\"]}", "resolvers[0]", "path");
  expect_bad("{\"resolvers\": [53]}", "resolvers[0]", "53");
  expect_bad("{\"resolvers\": \"8.8.8.8\"}", "resolvers", "8.8.8.8");
  expect_bad("{\"discovery\": {\"want\": 0}}", "discovery.want", "0");
  expect_bad("{\"discovery\": {\"colour\": 1}}", "discovery.colour", "unknown");
  expect_bad("{\"discovery\": {\"country\": \"Iran\"}}", "discovery.country",
             "Iran");
  expect_bad("{\"kind\": \"iodine\"}", "kind", "iodine");
  expect_bad("{\"listen\": \"localhost:53\"}", "listen", "localhost");
  expect_bad("{\"smart_pool\": {\"duplicate\": \"2\"}}", "smart_pool.duplicate",
             "\"2\"");
  expect_bad("{\"smart_pool\": 3}", "smart_pool", "3");
  expect_bad("{\"enabled\": true,,}", "line 1", "JSON");
  expect_bad("[1]", "expected true", NULL);
}

/* DUR_ANY: the parsed value is not checked. */
#define DUR_ANY UINT64_MAX

static void test_config_durations(void **state) {
  /* Each text, whether zero is allowed, the result and the value (simple
     units, decimals, bounds, then hours and compound durations). */
  static const struct {
    const char *text;
    int allow_zero;
    int rv;
    rp_duration want;
  } cases[] = {
      {"300ms", 0, 0, 300 * RP_MILLISECONDS},
      {"1.5s", 0, 0, 1500 * RP_MILLISECONDS},
      {"2m", 0, 0, 120 * RP_SECONDS},
      {"250us", 0, 0, 250 * RP_MICROSECONDS},
      {"0ms", 1, 0, DUR_ANY},
      {"0ms", 0, RP_ERR_CONFIG, DUR_ANY},
      {"0.0001us", 1, RP_ERR_CONFIG, DUR_ANY},
      {"0.0001us", 0, RP_ERR_CONFIG, DUR_ANY},
      {"5", 0, RP_ERR_CONFIG, DUR_ANY},
      {"s", 0, RP_ERR_CONFIG, DUR_ANY},
      {"", 0, RP_ERR_CONFIG, DUR_ANY},
      {"2d", 0, RP_ERR_CONFIG, DUR_ANY},
      {"99999999m", 0, RP_ERR_CONFIG, DUR_ANY},
      {"1h", 0, 0, 3600 * RP_SECONDS},
      {"1m30s", 0, 0, 90 * RP_SECONDS},
      {"1h30m", 0, 0, 5400 * RP_SECONDS},
      {"1s500ms", 0, 0, 1500 * RP_MILLISECONDS},
      {"24h", 0, 0, DUR_ANY},
      {"24h1s", 0, RP_ERR_CONFIG, DUR_ANY},
      {"1m30", 0, RP_ERR_CONFIG, DUR_ANY},
      {"1m 30s", 0, RP_ERR_CONFIG, DUR_ANY},
      {"1m-30s", 0, RP_ERR_CONFIG, DUR_ANY},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    rp_duration d = 0;
    int rv = rp_config_parse_duration(cases[i].text, cases[i].allow_zero, &d);
    if (rv != cases[i].rv) {
      fail_msg("duration '%s' (zero %d): %d, want %d", cases[i].text,
               cases[i].allow_zero, rv, cases[i].rv);
    }
    if (cases[i].want != DUR_ANY) {
      assert_int_equal(d, cases[i].want);
    }
  }
}

static void test_config_cli_resolver(void **state) {
  rp_config cfg;
  char err[RP_CONFIG_ERRLEN];
  struct sockaddr_storage ss;
  (void)state;
  rp_config_init(&cfg, rp_test_mem_plain());
  assert_int_equal(rp_config_add_resolver(&cfg, "127.0.0.1:5300",
                                          "command line", "-r", err,
                                          sizeof(err)),
                   0);
  assert_int_equal(rp_config_add_resolver(&cfg, "nope", "command line", "-r",
                                          err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, "command line: -r"));
  assert_non_null(strstr(err, "nope"));
  assert_int_equal(cfg.nresolvers, 1);
  rp_config_free(&cfg);
  assert_int_equal(rp_config_parse_listen(":0", &ss), 0);
  assert_int_equal(rp_config_parse_listen("[::1]:53", &ss), 0);
  assert_int_equal(ss.ss_family, AF_INET6);
  assert_int_equal(rp_config_parse_listen("127.0.0.1:x", &ss), RP_ERR_CONFIG);
}

static void test_config_file(void **state) {
  rp_config cfg;
  char err[RP_CONFIG_ERRLEN];
  char path[] = "/tmp/rp_test_config_XXXXXX";
  int fd = mkstemp(path);
  const char *json = "{\n  \"resolvers\": [\"1.1.1.1\",\n \"x.y\"]\n}\n";
  (void)state;
  assert_true(fd >= 0);
  assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
  close(fd);
  rp_config_init(&cfg, rp_test_mem_plain());
  assert_int_equal(rp_config_load_file(&cfg, path, err, sizeof(err)),
                   RP_ERR_CONFIG);
  assert_non_null(strstr(err, path));
  assert_non_null(strstr(err, "resolvers[1]"));
  assert_non_null(strstr(err, "x.y"));
  rp_config_free(&cfg);
  unlink(path);
  rp_config_init(&cfg, rp_test_mem_plain());
  assert_int_equal(rp_config_load_file(&cfg, path, err, sizeof(err)),
                   RP_ERR_IO);
  assert_non_null(strstr(err, path));
  rp_config_free(&cfg);
}

/* dup_seen records the duplicates' notes. */
static void dup_seen(const char *dup, const char *kept, void *ud) {
  char *log = ud;

  strcat(log, dup);
  strcat(log, "=");
  strcat(log, kept);
  strcat(log, ";");
}

/* The same resolver written three ways is one; another transport, port
   or DoH path is another; the first of each is kept, in list order. */
static void test_config_duplicates(void **state) {
  static const char *const specs[] = {"8.8.8.8",
                                      "8.8.8.8:53",
                                      "udp://8.8.8.8:53",
                                      "tcp://8.8.8.8:53",
                                      "9.9.9.9",
                                      "8.8.8.8:5353",
                                      "https://1.1.1.1/dns-query",
                                      "https://1.1.1.1/other",
                                      "https://1.1.1.1:443/dns-query",
                                      "auto",
                                      "auto"};
  static const char *const kept[] = {
      "8.8.8.8",      "tcp://8.8.8.8:53",          "9.9.9.9",
      "8.8.8.8:5353", "https://1.1.1.1/dns-query", "https://1.1.1.1/other",
      "auto"};
  rp_config cfg;
  char err[RP_CONFIG_ERRLEN], log[1024] = "";
  size_t i;
  (void)state;
  rp_config_init(&cfg, rp_test_mem_plain());
  for (i = 0; i < sizeof(specs) / sizeof(specs[0]); ++i) {
    assert_int_equal(rp_config_add_resolver(&cfg, specs[i], "command line",
                                            "-r", err, sizeof(err)),
                     0);
  }
  assert_int_equal(rp_config_merge_duplicates(&cfg, dup_seen, log), 4);
  assert_int_equal(cfg.nresolvers, sizeof(kept) / sizeof(kept[0]));
  for (i = 0; i < cfg.nresolvers; ++i) {
    assert_string_equal(cfg.resolvers[i].text, kept[i]);
  }
  assert_non_null(strstr(log, "udp://8.8.8.8:53=8.8.8.8;"));
  assert_non_null(strstr(log, "8.8.8.8:53=8.8.8.8;"));
  assert_non_null(
      strstr(log, "https://1.1.1.1:443/dns-query=https://1.1.1.1/dns-query;"));
  assert_int_equal(rp_config_merge_duplicates(&cfg, NULL, NULL), 0);
  rp_config_free(&cfg);
}

/* The default listen address and 127.x and ::1 are loopback; 0.0.0.0 and
   a LAN address are not. */
static void test_config_listen_loopback(void **state) {
  rp_config cfg;
  (void)state;
  rp_config_init(&cfg, rp_test_mem_plain());
  assert_true(rp_config_listen_is_loopback(&cfg));
  cfg.has_listen = 1;
  assert_int_equal(rp_config_parse_listen("127.3.4.5:53", &cfg.listen), 0);
  assert_true(rp_config_listen_is_loopback(&cfg));
  assert_int_equal(rp_config_parse_listen("[::1]:53", &cfg.listen), 0);
  assert_true(rp_config_listen_is_loopback(&cfg));
  assert_int_equal(rp_config_parse_listen("0.0.0.0:53", &cfg.listen), 0);
  assert_false(rp_config_listen_is_loopback(&cfg));
  assert_int_equal(rp_config_parse_listen("192.168.1.2:53", &cfg.listen), 0);
  assert_false(rp_config_listen_is_loopback(&cfg));
  assert_int_equal(rp_config_parse_listen("[::]:53", &cfg.listen), 0);
  assert_false(rp_config_listen_is_loopback(&cfg));
  rp_config_free(&cfg);
}

/* rp_config_set_string copies, replaces and frees (cmocka's allocator
   fails the test on a leak); a failed allocation or a bad argument
   leaves the field as it was. */
static void test_config_set_string(void **state) {
  rp_config cfg;
  rp_test_mem tm;
  (void)state;
  rp_test_mem_init(&tm);
  rp_config_init(&cfg, &tm.mem);
  assert_int_equal(rp_config_set_string(&cfg, RP_CONFIG_SCORES_FILE, "/a"), 0);
  assert_int_equal(rp_config_set_string(&cfg, RP_CONFIG_SCORES_FILE, "/b"), 0);
  assert_string_equal(cfg.scores_file, "/b");
  assert_int_equal(rp_config_set_string(&cfg, RP_CONFIG_PRETEST_DOMAIN, ""),
                   0);
  assert_string_equal(cfg.pretest_domain, "");
  assert_int_equal(rp_config_set_string(&cfg, RP_CONFIG_TLS_CA, "/ca"), 0);
  assert_int_equal(rp_config_set_string(&cfg, RP_CONFIG_TLS_NAME, "n"), 0);
  assert_int_equal(rp_config_set_string(&cfg, RP_CONFIG_LIST_FILE, "l"), 0);
  assert_int_equal(rp_config_set_string(&cfg, RP_CONFIG_DATA_FILE, "d"), 0);
  assert_string_equal(cfg.tls_ca, "/ca");
  assert_string_equal(cfg.tls_name, "n");
  assert_string_equal(cfg.discovery.list_file, "l");
  assert_string_equal(cfg.discovery.data_file, "d");
  assert_int_equal(rp_config_set_string(&cfg, RP_CONFIG_SCORES_FILE, NULL),
                   RP_ERR_INVALID_ARGUMENT);
  assert_int_equal(
      rp_config_set_string(&cfg, (rp_config_string)99, "x"),
      RP_ERR_INVALID_ARGUMENT);
  rp_test_mem_fail_at(&tm, 0, RP_TEST_MEM_FAIL_ONE);
  assert_int_equal(rp_config_set_string(&cfg, RP_CONFIG_SCORES_FILE, "/c"),
                   RP_ERR_NOMEM);
  assert_string_equal(cfg.scores_file, "/b");
  rp_config_free(&cfg);
}

/* read_text writes |len| bytes of 'x' to a temporary file and reads it
   back with rp_config_read_stream under |max_len|. */
static int read_text(const rp_mem *mem, size_t len, size_t max_len,
                     size_t *plen) {
  FILE *f = tmpfile();
  char *buf = NULL;
  size_t i;
  int rv;
  assert_non_null(f);
  for (i = 0; i < len; ++i) {
    fputc('x', f);
  }
  rewind(f);
  *plen = 0;
  rv = rp_config_read_stream(mem, f, max_len, &buf, plen);
  fclose(f);
  if (rv == 0) {
    assert_int_equal(strlen(buf), *plen);
    mem->free(buf, mem->user_data);
  } else {
    assert_null(buf);
  }
  return rv;
}

/* rp_config_read_stream takes a text whose bytes and NUL fit in max_len,
   at any max_len (not only the buffer's doubling steps), and refuses one
   byte more with nothing left allocated. */
static void test_config_read_stream(void **state) {
  const rp_mem *mem = rp_test_mem_plain();
  rp_test_mem tm;
  size_t n;
  (void)state;
  assert_int_equal(read_text(mem, 0, 1, &n), 0);
  assert_int_equal(n, 0);
  assert_int_equal(read_text(mem, 0, 0, &n), RP_ERR_FULL);
  assert_int_equal(read_text(mem, 5, 6, &n), 0);
  assert_int_equal(n, 5);
  assert_int_equal(read_text(mem, 5, 5, &n), RP_ERR_FULL);
  assert_int_equal(read_text(mem, 10000, 10001, &n), 0);
  assert_int_equal(n, 10000);
  assert_int_equal(read_text(mem, 10000, 10000, &n), RP_ERR_FULL);
  assert_int_equal(read_text(mem, 8191, 8192, &n), 0);
  assert_int_equal(read_text(mem, 8192, 8192, &n), RP_ERR_FULL);
  assert_int_equal(read_text(mem, 20000, SIZE_MAX, &n), 0);
  assert_int_equal(n, 20000);
  rp_test_mem_init(&tm);
  rp_test_mem_fail_at(&tm, 1, RP_TEST_MEM_FAIL_ONE);
  assert_int_equal(read_text(&tm.mem, 10000, SIZE_MAX, &n), RP_ERR_NOMEM);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_config_true),
      cmocka_unit_test(test_config_full),
      cmocka_unit_test(test_config_outbound),
      cmocka_unit_test(test_config_bad),
      cmocka_unit_test(test_config_durations),
      cmocka_unit_test(test_config_cli_resolver),
      cmocka_unit_test(test_config_file),
      cmocka_unit_test(test_config_duplicates),
      cmocka_unit_test(test_config_listen_loopback),
      cmocka_unit_test(test_config_set_string),
      cmocka_unit_test(test_config_read_stream),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
