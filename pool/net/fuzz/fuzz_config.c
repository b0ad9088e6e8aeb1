/*
 * fuzz_config.c: libFuzzer target for the configuration parser.
 *
 * The input is the text of a config file (the smart_pool object, `true`,
 * or an outbound with a smart_pool member; docs/config.md), passed to
 * rp_config_parse_json as it is, without a NUL. Then:
 * - the result is checked: 0 or RP_ERR_CONFIG, and then an error message
 *   that names the source; after success, every parsed value within the
 *   range respool_config.h and docs/config.md give, every resolver consistent
 *   (strings ended inside their arrays, an address for UDP and TCP, a
 *   path for DoH), every tuning assignment accepted by rp_settings_set
 *   (a refused text may leave part of it in the config, which the caller
 *   drops);
 * - a parsed config is parsed a second time into the same rp_config,
 *   which must succeed and append the same resolvers and assignments;
 * - it is applied (rp_config_apply) to the defaults of its kind; every
 *   field of the result, formatted with rp_settings_format, must be
 *   accepted back by rp_settings_set;
 * - a pool is made with those settings (max_inflight capped at
 *   FUZZ_MAX_INFLIGHT to keep runs fast), which must succeed or refuse
 *   them with RP_ERR_INVALID_ARGUMENT, and gets the config's resolvers;
 * - rp_config_free and rp_pool_del must give back every allocation made
 *   through the config's and the pool's rp_mem.
 * Each failed check aborts with a message. The same function is replayed
 * over the seed corpus by the ctest unit.config_fuzz_replay.
 *
 * A number of seconds above 0 but under a nanosecond ("deadline": 1e-10)
 * was stored as 0 ns (a zero the docs refuse) until this target found it;
 * its reproducer is crash-tiny-duration.json in the seed corpus.
 */
#include "respool_config.h"
#include "respool.h"

#define FUZZ_NAME "fuzz_config.c"
#include "../../core/fuzz/fuzz_common.h"

#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* FUZZ_SOURCE names the text in error messages. */
#define FUZZ_SOURCE "fuzz.json"
/* FUZZ_MAX_INFLIGHT caps max_inflight of the pool made from a config:
   the pool allocates max_inflight x max_query_len bytes up front. */
#define FUZZ_MAX_INFLIGHT 64
/* FUZZ_MAX_POOL_RES is the most config resolvers added to the pool. */
#define FUZZ_MAX_POOL_RES 32
/* FUZZ_MAX_DOWN_AFTER and FUZZ_MAX_DUPLICATE are the largest values
   docs/config.md allows. */
#define FUZZ_MAX_DOWN_AFTER 1000
#define FUZZ_MAX_DUPLICATE 10
/* FUZZ_COUNTRY_LEN is the length of a country code. */
#define FUZZ_COUNTRY_LEN 2
/* FUZZ_ASSIGN_LEN holds "name=" and a formatted value. */
#define FUZZ_ASSIGN_LEN (RP_SETTINGS_VALUELEN + 64)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_rng is the state of the pool's rand callback. */
static uint32_t fuzz_rng;

static void fuzz_before_fail(void) {}

/* The pool's callbacks: nothing is submitted, so none sends or delivers;
   rand draws resolver tie-breaks. */
static int fuzz_send_cb(rp_pool *pool, uint32_t resolver_id,
                        void *resolver_user_data, uint16_t upstream_id,
                        const uint8_t *data, size_t len, uint32_t flags,
                        rp_tstamp now, void *user_data) {
  (void)now;
  (void)pool;
  (void)resolver_user_data;
  (void)upstream_id;
  (void)data;
  (void)flags;
  (void)user_data;
  fuzz_fail(__LINE__, "send of %zu bytes to resolver %u with no query", len,
            resolver_id);
}

static int fuzz_deliver_cb(rp_pool *pool, const rp_client *client,
                           const uint8_t *data, size_t len, uint32_t flags,
                           rp_tstamp now, void *user_data) {
  (void)now;
  (void)pool;
  (void)client;
  (void)data;
  (void)flags;
  (void)user_data;
  fuzz_fail(__LINE__, "delivery of %zu bytes with no query", len);
}

static void fuzz_rand_cb(uint8_t *dest, size_t len, void *ud) {
  size_t i;

  (void)ud;
  for (i = 0; i < len; ++i) {
    /* xorshift32. */
    fuzz_rng ^= fuzz_rng << 13;
    fuzz_rng ^= fuzz_rng >> 17;
    fuzz_rng ^= fuzz_rng << 5;
    dest[i] = (uint8_t)fuzz_rng;
  }
}

/* fuzz_ended returns 1 if |s| has a NUL within its |cap| bytes. */
static int fuzz_ended(const char *s, size_t cap) {
  return memchr(s, '\0', cap) != NULL;
}

/* fuzz_duration_ok returns 1 if |d| is unset or within 0 .. one day
   (zero only when |allow_zero|). */
static int fuzz_duration_ok(rp_duration d, int allow_zero) {
  return d == RP_TSTAMP_UNSET ||
         ((d > 0 || allow_zero) &&
          d <= (rp_duration)RP_CONFIG_MAX_DURATION_S * RP_SECONDS);
}

static int fuzz_scheme_ok(rp_scheme scheme) {
  switch (scheme) {
  case RP_SCHEME_UDP:
  case RP_SCHEME_TCP:
  case RP_SCHEME_DOT:
  case RP_SCHEME_DOH:
  case RP_SCHEME_AUTO:
    return 1;
  }
  return 0;
}

/* fuzz_check_resolver checks one parsed resolver. */
static void fuzz_check_resolver(const rp_config_resolver *r, size_t i) {
  FUZZ_CHECK(fuzz_scheme_ok(r->scheme), "resolver %zu: scheme %d", i,
             (int)r->scheme);
  FUZZ_CHECK(fuzz_ended(r->text, sizeof(r->text)) &&
                 fuzz_ended(r->host, sizeof(r->host)) &&
                 fuzz_ended(r->tls_name, sizeof(r->tls_name)) &&
                 fuzz_ended(r->path, sizeof(r->path)),
             "resolver %zu: a string runs past its array", i);
  FUZZ_CHECK(r->text[0] != '\0', "resolver %zu: empty text", i);
  if (r->scheme == RP_SCHEME_AUTO) {
    return;
  }
  FUZZ_CHECK(r->host[0] != '\0' && r->port != 0,
             "resolver %zu (%s): no host or port", i, r->text);
  if (r->scheme == RP_SCHEME_UDP || r->scheme == RP_SCHEME_TCP) {
    FUZZ_CHECK(r->has_addr, "resolver %zu (%s): UDP/TCP without address", i,
               r->text);
  }
  if (r->scheme == RP_SCHEME_DOH) {
    FUZZ_CHECK(r->path[0] == '/', "resolver %zu (%s): DoH path \"%s\"", i,
               r->text, r->path);
  } else {
    FUZZ_CHECK(r->path[0] == '\0', "resolver %zu (%s): path \"%s\"", i, r->text,
               r->path);
  }
  if (r->has_addr) {
    const struct sockaddr_in *sin = (const struct sockaddr_in *)&r->addr;
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&r->addr;

    FUZZ_CHECK(r->addr.ss_family == AF_INET || r->addr.ss_family == AF_INET6,
               "resolver %zu (%s): family %d", i, r->text,
               (int)r->addr.ss_family);
    FUZZ_CHECK(ntohs(r->addr.ss_family == AF_INET ? sin->sin_port
                                                  : sin6->sin6_port) == r->port,
               "resolver %zu (%s): address port differs", i, r->text);
  }
}

/* fuzz_check_config checks every value of a parsed config. */
static void fuzz_check_config(const rp_config *cfg) {
  const rp_config_discovery *d = &cfg->discovery;
  rp_settings scratch;
  size_t i;

  FUZZ_CHECK(cfg->enabled == 0 || cfg->enabled == 1, "enabled %d",
             cfg->enabled);
  FUZZ_CHECK(cfg->wait_for_token >= -1 && cfg->wait_for_token <= 1,
             "wait_for_token %d", cfg->wait_for_token);
  FUZZ_CHECK(!cfg->has_kind ||
                 (cfg->kind == RP_KIND_GENERIC || cfg->kind == RP_KIND_DNSTT ||
                  cfg->kind == RP_KIND_MASTERDNS || cfg->kind == RP_KIND_AUTO),
             "kind %d", (int)cfg->kind);
  FUZZ_CHECK(!cfg->has_load_balance ||
                 ((int)cfg->load_balance >= (int)RP_BALANCE_AUTO &&
                  (int)cfg->load_balance <= (int)RP_BALANCE_LEAST_LOSS),
             "load_balance %d", (int)cfg->load_balance);
  FUZZ_CHECK(fuzz_duration_ok(cfg->deadline, 0) &&
                 fuzz_duration_ok(cfg->per_attempt, 0) &&
                 fuzz_duration_ok(cfg->probe_interval, 0),
             "a duration out of range: deadline %llu, per_attempt %llu, "
             "probe_interval %llu ns",
             (unsigned long long)cfg->deadline,
             (unsigned long long)cfg->per_attempt,
             (unsigned long long)cfg->probe_interval);
  FUZZ_CHECK(cfg->down_after <= FUZZ_MAX_DOWN_AFTER, "down_after %u",
             cfg->down_after);
  FUZZ_CHECK(cfg->duplicate <= FUZZ_MAX_DUPLICATE, "duplicate %u",
             cfg->duplicate);
  FUZZ_CHECK(d->want >= 1 && d->concurrency >= 1,
             "discovery want %u, concurrency %u", d->want, d->concurrency);
  FUZZ_CHECK(fuzz_duration_ok(d->pace, 1) && fuzz_duration_ok(d->timeout, 1),
             "a discovery duration out of range");
  FUZZ_CHECK(d->country[0] == '\0' || strlen(d->country) == FUZZ_COUNTRY_LEN,
             "country \"%s\"", d->country);
  FUZZ_CHECK(d->system == 0 || d->system == 1, "system %d", d->system);
  FUZZ_CHECK(d->bundled == 0 || d->bundled == 1, "bundled %d", d->bundled);
  FUZZ_CHECK(cfg->pretest_domain == NULL ||
                 strlen(cfg->pretest_domain) < RP_CONFIG_MAX_HOST,
             "pretest_domain of %zu bytes", strlen(cfg->pretest_domain));
  FUZZ_CHECK(cfg->nresolvers <= cfg->cap_resolvers &&
                 cfg->nresolvers <= RP_CONFIG_MAX_RESOLVERS,
             "%zu resolvers, room for %zu", cfg->nresolvers,
             cfg->cap_resolvers);
  for (i = 0; i < cfg->nresolvers; ++i) {
    fuzz_check_resolver(&cfg->resolvers[i], i);
  }
  FUZZ_CHECK(cfg->ntuning <= RP_CONFIG_MAX_TUNING, "%zu tuning assignments",
             cfg->ntuning);
  for (i = 0; i < cfg->ntuning; ++i) {
    rp_settings_default(&scratch, RP_KIND_GENERIC);
    FUZZ_CHECK(rp_settings_set(&scratch, cfg->tuning[i], NULL, 0) == 0,
               "tuning \"%s\" kept but refused", cfg->tuning[i]);
  }
}

/* fuzz_check_format formats every field of |set| and sets it back. */
static void fuzz_check_format(const rp_settings *set) {
  const rp_settings_field *fields, *f;
  char value[RP_SETTINGS_VALUELEN];
  char assign[FUZZ_ASSIGN_LEN];
  char err[RP_SETTINGS_ERRLEN];
  rp_settings copy = *set;
  size_t n, i;

  fields = rp_settings_fields(&n);
  for (i = 0; i < n; ++i) {
    f = &fields[i];
    rp_settings_format(set, f, value, sizeof(value));
    snprintf(assign, sizeof(assign), "%s=%s", f->name, value);
    err[0] = '\0';
    FUZZ_CHECK(rp_settings_set(&copy, assign, err, sizeof(err)) == 0,
               "formatted \"%s\" is refused: %s", assign, err);
  }
}

/* fuzz_pool makes a pool with |set| and the resolvers of |cfg|. */
static void fuzz_pool(const rp_config *cfg, rp_settings *set) {
  static const rp_callbacks cb = {.send_query = fuzz_send_cb,
                                  .deliver = fuzz_deliver_cb,
                                  .rand = fuzz_rand_cb,
                                  .log = NULL};
  rp_pool *pool = NULL;
  size_t i;
  int rv;

  if (set->max_inflight > FUZZ_MAX_INFLIGHT) {
    set->max_inflight = FUZZ_MAX_INFLIGHT;
  }
  fuzz_rng = 1;
  rv = rp_pool_new(&pool, set, &cb, &fuzz_mem, NULL);
  FUZZ_CHECK(rv == 0 || rv == RP_ERR_INVALID_ARGUMENT, "rp_pool_new: %d", rv);
  if (rv != 0) {
    return;
  }
  for (i = 0; i < cfg->nresolvers && i < FUZZ_MAX_POOL_RES; ++i) {
    const rp_config_resolver *r = &cfg->resolvers[i];
    rp_resolver_config rc = {.name = r->text,
                             .flags = r->scheme == RP_SCHEME_UDP
                                          ? RP_RESOLVER_TCP_FALLBACK
                                          : RP_RESOLVER_STREAM,
                             .score = 0,
                             .user_data = NULL};
    uint32_t id;

    rv = rp_pool_add_resolver(pool, &rc, &id, 0);
    FUZZ_CHECK(rv == 0 || (rv == RP_ERR_FULL && i >= set->max_resolvers),
               "rp_pool_add_resolver %zu: %d", i, rv);
  }
  rp_pool_del(pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  char err[RP_CONFIG_ERRLEN] = "";
  rp_settings set;
  rp_config cfg;
  size_t nres, ntun, i;
  int rv;

  fuzz_live = 0;
  rp_config_init(&cfg, &fuzz_mem);
  rv = rp_config_parse_json(&cfg, text, size, FUZZ_SOURCE, err, sizeof(err));
  FUZZ_CHECK(rv == 0 || rv == RP_ERR_CONFIG, "rp_config_parse_json: %d", rv);
  FUZZ_CHECK(fuzz_ended(err, sizeof(err)), "error message not ended");
  if (rv != 0) {
    FUZZ_CHECK(strncmp(err, FUZZ_SOURCE ": ", sizeof(FUZZ_SOURCE ": ") - 1) ==
                   0,
               "error \"%s\" does not name the source", err);
  } else {
    FUZZ_CHECK(err[0] == '\0', "success with error \"%s\"", err);
  }
  /* A refused text may leave part of it in |cfg| (respool_config.h), which the
     caller drops: only success is checked for values. */
  if (rv == 0) {
    fuzz_check_config(&cfg);
    nres = cfg.nresolvers;
    ntun = cfg.ntuning;
    if (2 * ntun <= RP_CONFIG_MAX_TUNING) {
      rv =
          rp_config_parse_json(&cfg, text, size, FUZZ_SOURCE, err, sizeof(err));
      FUZZ_CHECK(rv == 0, "second parse of the same text: %d (%s)", rv, err);
      FUZZ_CHECK(cfg.nresolvers == 2 * nres && cfg.ntuning == 2 * ntun,
                 "second parse: %zu resolvers, %zu assignments (first %zu, "
                 "%zu)",
                 cfg.nresolvers, cfg.ntuning, nres, ntun);
      for (i = 0; i < nres; ++i) {
        FUZZ_CHECK(
            strcmp(cfg.resolvers[i].text, cfg.resolvers[nres + i].text) == 0,
            "second parse: resolver %zu differs", i);
      }
      fuzz_check_config(&cfg);
    }
    rp_settings_default(&set, cfg.has_kind ? cfg.kind : RP_KIND_GENERIC);
    rp_config_apply(&cfg, &set);
    if (cfg.ntuning == 0) {
      FUZZ_CHECK(!cfg.has_load_balance || set.load_balance == cfg.load_balance,
                 "load_balance not applied");
      FUZZ_CHECK(cfg.deadline == RP_TSTAMP_UNSET ||
                     set.deadline == cfg.deadline,
                 "deadline not applied");
      FUZZ_CHECK(cfg.duplicate == 0 || set.duplicate == cfg.duplicate,
                 "duplicate not applied");
    }
    fuzz_check_format(&set);
    fuzz_pool(&cfg, &set);
  }
  rp_config_free(&cfg);
  FUZZ_CHECK(cfg.nresolvers == 0 && cfg.ntuning == 0 && cfg.resolvers == NULL &&
                 cfg.tuning == NULL,
             "rp_config_free left entries");
  FUZZ_CHECK(fuzz_live == 0, "%ld blocks not freed", fuzz_live);
  return 0;
}
