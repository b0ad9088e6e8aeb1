/*
 * bench_core.c: decisions per second of the pool core (submit + answer)
 * with 10, 100 and 10 000 equal resolvers, load_balance auto.
 *
 * The clock is virtual (10 000 queries per virtual second, 64 queries in
 * flight); only the CPU time of the loop is measured with the process
 * clock. Every resolver answers each query 1 ms after it is sent, with a
 * prebuilt answer whose ID is set to the upstream ID and whose question
 * name is the one sent (0x20 case included, as a resolver echoes it). The
 * figure to read is how flat the rate stays from 10 to 10 000 resolvers:
 * selection is heap-based, O(log n) per query.
 *
 * Usage: bench_core [QUERIES] [resolvers=N] [duplicate=D] [NAME=VALUE]...
 * resolvers= and duplicate= run that one case only; any other NAME=VALUE
 * is a setting (rp_settings_set), e.g. case_randomize=0. Under
 * valgrind --tool=callgrind the instruction counts of one case with and
 * without a setting are the cost of what it switches, repeatable on a
 * loaded machine.
 */
#include "respool.h"
#include "dns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAMES 1024
#define BENCH_INFLIGHT 64
#define BENCH_GAP (100 * RP_MICROSECONDS)
#define BENCH_MSG 512
/* BENCH_QNAME is room for a sent question name ("b1023.t.example"). */
#define BENCH_QNAME 32
/* BENCH_MAX_SETS is the most NAME=VALUE settings. */
#define BENCH_MAX_SETS 16

typedef struct bench_pending {
  uint32_t res;
  uint16_t id;
  uint32_t name;
  rp_tstamp at;
  /* qname holds the question name as sent (|qname_len| bytes). */
  uint8_t qname[BENCH_QNAME];
  size_t qname_len;
} bench_pending;

typedef struct bench {
  uint8_t query[BENCH_NAMES][BENCH_MSG];
  size_t qlen[BENCH_NAMES];
  uint8_t answer[BENCH_NAMES][BENCH_MSG];
  size_t alen[BENCH_NAMES];
  bench_pending ring[BENCH_INFLIGHT * 16];
  size_t head, tail;
  uint32_t cur_name;
  uint64_t rng;
  uint64_t delivered;
  /* sets are NAME=VALUE settings applied to every run. */
  const char *sets[BENCH_MAX_SETS];
  size_t nsets;
} bench;

static int bench_send(rp_pool *pool, uint32_t rid, void *rud, uint16_t upid,
                      const uint8_t *data, size_t len, uint32_t flags,
                      rp_tstamp now, void *ud) {
  bench *b = ud;
  size_t n = sizeof(b->ring) / sizeof(b->ring[0]);

  size_t qn = b->qlen[b->cur_name] - RP_DNS_HEADER_LEN - 4;

  (void)now;
  (void)pool;
  (void)rud;
  (void)flags;
  if ((b->tail + 1) % n == b->head) {
    return 0; /* ring full: this try is lost (never the case here) */
  }
  b->ring[b->tail] =
      (bench_pending){.res = rid, .id = upid, .name = b->cur_name};
  /* The name as sent: the bench's queries have no OPT record, so it is
     everything between the header and the type and class. */
  if (qn <= BENCH_QNAME && len >= RP_DNS_HEADER_LEN + qn) {
    memcpy(b->ring[b->tail].qname, data + RP_DNS_HEADER_LEN, qn);
    b->ring[b->tail].qname_len = qn;
  }
  b->tail = (b->tail + 1) % n;
  return 0;
}

static int bench_deliver(rp_pool *pool, const rp_client *client,
                         const uint8_t *data, size_t len, uint32_t flags,
                         rp_tstamp now, void *ud) {
  bench *b = ud;

  (void)now;
  (void)pool;
  (void)client;
  (void)data;
  (void)len;
  if (!(flags & RP_DELIVER_FAILED)) {
    ++b->delivered;
  }
  return 0;
}

static void bench_rand(uint8_t *dest, size_t len, void *ud) {
  bench *b = ud;
  size_t i;

  for (i = 0; i < len; ++i) {
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    dest[i] = (uint8_t)b->rng;
  }
}

static double bench_cpu_seconds(void) {
  struct timespec ts;

  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bench_prepare(bench *b) {
  uint32_t i;
  char text[64];
  rp_dns_name name;
  rp_dns_msg msg;
  uint8_t payload[900];
  rp_ssize n;

  memset(payload, 'x', sizeof(payload));
  for (i = 0; i < BENCH_NAMES; ++i) {
    snprintf(text, sizeof(text), "b%u.t.example", i);
    rp_dns_name_from_text(&name, text);
    n = rp_dns_build_query(b->query[i], BENCH_MSG, (uint16_t)i, &name,
                           RP_DNS_TYPE_TXT, 0);
    b->qlen[i] = (size_t)n;
    rp_dns_parse(&msg, b->query[i], b->qlen[i]);
    n = rp_dns_build_txt_answer(b->answer[i], BENCH_MSG, &msg, 0, payload, 200);
    b->alen[i] = (size_t)n;
  }
}

/* bench_run returns decisions (submit + answer) per CPU second. */
static double bench_run(bench *b, size_t nres, uint32_t duplicate,
                        uint64_t nqueries) {
  rp_settings set;
  rp_callbacks cb = {
      .send_query = bench_send, .deliver = bench_deliver, .rand = bench_rand};
  rp_pool *pool;
  rp_resolver_config cfg = {.name = "r"};
  uint32_t id;
  rp_tstamp now = 0;
  uint64_t i;
  size_t k, n = sizeof(b->ring) / sizeof(b->ring[0]);
  double t0, t1;
  rp_client client = {.id = 0};

  rp_settings_default(&set, RP_KIND_GENERIC);
  for (k = 0; k < b->nsets; ++k) {
    char err[RP_SETTINGS_ERRLEN];

    if (rp_settings_set(&set, b->sets[k], err, sizeof(err)) != 0) {
      fprintf(stderr, "bench_core: %s\n", err);
      exit(2);
    }
  }
  set.duplicate = duplicate;
  set.max_resolvers = nres;
  set.max_inflight = 4096;
  b->head = b->tail = 0;
  b->delivered = 0;
  b->rng = 88172645463325252ULL;
  if (rp_pool_new(&pool, &set, &cb, NULL, b) != 0) {
    abort();
  }
  for (k = 0; k < nres; ++k) {
    if (rp_pool_add_resolver(pool, &cfg, &id, now) != 0) {
      abort();
    }
  }
  t0 = bench_cpu_seconds();
  for (i = 0; i < nqueries; ++i) {
    b->cur_name = (uint32_t)(i % BENCH_NAMES);
    client.id = i;
    rp_pool_submit(pool, b->query[b->cur_name], b->qlen[b->cur_name], &client,
                   now);
    /* Answer what was sent 1 ms or more ago (about 10 sends). */
    while (b->head != b->tail &&
           (b->tail + n - b->head) % n > BENCH_INFLIGHT / 8) {
      bench_pending *p = &b->ring[b->head];
      uint8_t *a = b->answer[p->name];

      b->head = (b->head + 1) % n;
      rp_dns_set_id(a, p->id);
      memcpy(a + RP_DNS_HEADER_LEN, p->qname, p->qname_len);
      rp_pool_on_answer(pool, p->res, a, b->alen[p->name], 0, now);
    }
    now += BENCH_GAP;
    if (rp_pool_get_expiry(pool) <= now) {
      rp_pool_handle_expiry(pool, now);
    }
  }
  t1 = bench_cpu_seconds();
  rp_pool_del(pool);
  return (double)nqueries / (t1 - t0);
}

int main(int argc, char **argv) {
  static bench b;
  size_t sizes[] = {10, 100, 10000};
  size_t i, only_res = 0;
  uint32_t only_dup = 0;
  uint64_t nq = argc > 1 ? strtoull(argv[1], NULL, 10) : 400000;
  double base = 0.0, r;
  int k;

  for (k = 2; k < argc; ++k) {
    if (strncmp(argv[k], "resolvers=", strlen("resolvers=")) == 0) {
      only_res = strtoul(argv[k] + strlen("resolvers="), NULL, 10);
    } else if (strncmp(argv[k], "duplicate=", strlen("duplicate=")) == 0) {
      only_dup = (uint32_t)strtoul(argv[k] + strlen("duplicate="), NULL, 10);
    } else if (b.nsets < BENCH_MAX_SETS) {
      b.sets[b.nsets++] = argv[k];
    }
  }
  bench_prepare(&b);
  printf("bench_core: %llu queries each, auto, 1 ms answers\n",
         (unsigned long long)nq);
  if (only_res != 0 || only_dup != 0) {
    only_res = only_res ? only_res : sizes[0];
    only_dup = only_dup ? only_dup : 1;
    r = bench_run(&b, only_res, only_dup, nq);
    printf("resolvers=%-6zu duplicate=%u decisions/s=%.0f delivered=%llu\n",
           only_res, only_dup, r, (unsigned long long)b.delivered);
    return 0;
  }
  for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
    r = bench_run(&b, sizes[i], 1, nq);
    if (i == 0) {
      base = r;
    }
    printf("resolvers=%-6zu duplicate=1 decisions/s=%.0f ratio_to_10=%.2f\n",
           sizes[i], r, r / base);
    r = bench_run(&b, sizes[i], 2, nq);
    printf("resolvers=%-6zu duplicate=2 decisions/s=%.0f\n", sizes[i], r);
  }
  return 0;
}
