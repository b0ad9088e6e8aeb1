/*
 * tunpool.c: the in-process pool of the tunnel clients (see tunpool.h).
 *
 * Readiness is polled: a timer looks at the configured resolvers' check
 * states every TUN_POOL_POLL_MS until one passed or none is left to
 * check. The check query is the tunnel's PROBE; its nonce is derived
 * from the DNS ID, so that the verify callback, which only sees the
 * answer, can recompute it.
 */
#include "tunpool.h"
#include "tuncli.h"

#include <cjson/cJSON.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* TUN_POOL_POLL_MS is the period of the readiness poll, ms. */
#define TUN_POOL_POLL_MS 5
/* TUN_POOL_TL_MS is the period of the timeline samples, ms;
   TUN_POOL_TL_SAMPLES and TUN_POOL_TL_RES bound them (ten minutes of the
   first eight resolvers; later samples are not kept). */
#define TUN_POOL_TL_MS 1000
#define TUN_POOL_TL_SAMPLES 600
#define TUN_POOL_TL_RES 8
/* TUN_POOL_NONCE_MASK turns a check's DNS ID into its probe nonce (any
   fixed mask: the nonce only needs to be recomputable from the ID). */
#define TUN_POOL_NONCE_MASK 0xa55au

struct tun_pool {
  uv_loop_t *loop;
  rp_net_pool *np;
  uv_timer_t poll;
  rp_dns_name domain;
  uint16_t check_bytes;
  tun_pool_ready_cb ready;
  tun_pool_answer_cb answer;
  void *user_data;
  /* ready_called is 1 once |ready| ran. */
  int ready_called;
  /* tl_timer samples each resolver's cap, answer rate and answers into
     the timeline every TUN_POOL_TL_MS: |tl_n| samples of |tl_res|
     resolvers. */
  uv_timer_t tl_timer;
  size_t tl_n, tl_res;
  float tl_cap[TUN_POOL_TL_SAMPLES][TUN_POOL_TL_RES];
  float tl_rate[TUN_POOL_TL_SAMPLES][TUN_POOL_TL_RES];
  uint64_t tl_answered[TUN_POOL_TL_SAMPLES][TUN_POOL_TL_RES];
  /* open counts handles still to close: the two timers and the pool. */
  int open;
};

static void pool_log(rp_log_level level, const char *line, void *user_data) {
  static const char *const names[] = {"error", "warn", "info", "debug"};

  (void)user_data;
  fprintf(stderr, "pool: %s %s\n",
          (size_t)level < sizeof(names) / sizeof(names[0]) ? names[level] : "?",
          line);
}

static uint16_t pool_nonce(uint16_t id) {
  return (uint16_t)(id ^ TUN_POOL_NONCE_MASK);
}

static rp_ssize pool_check_build(uint8_t *buf, size_t cap, uint16_t id,
                                 void *user_data) {
  tun_pool *tp = user_data;

  return tun_cli_build_probe(buf, cap, id, &tp->domain, pool_nonce(id),
                             tp->check_bytes, RP_DNS_EDNS_UDP_SIZE);
}

static int pool_check_verify(const uint8_t *answer, size_t len,
                             void *user_data) {
  tun_pool *tp = user_data;

  if (len < RP_DNS_HEADER_LEN) {
    return 0;
  }
  return tun_cli_check_probe(answer, len, pool_nonce(rp_dns_get_id(answer)),
                             tp->check_bytes);
}

static void pool_answer_cb(rp_net_pool *np, uint64_t token,
                           const uint8_t *data, size_t len, void *user_data) {
  tun_pool *tp = user_data;

  (void)np;
  tp->answer(tp, token, data, len, tp->user_data);
}

static void pool_poll_cb(uv_timer_t *t) {
  tun_pool *tp = t->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  size_t i, n, passed = 0, waiting = 0;

  if (tp->ready_called || tp->np == NULL) {
    return;
  }
  n = rp_net_pool_resolver_count(tp->np);
  for (i = 0; i < n; ++i) {
    rp_net_resolver_info info;

    if (rp_net_pool_get_resolver(tp->np, i, &info, now) != 0) {
      continue;
    }
    switch (info.check) {
    case RP_NET_CHECK_PASSED:
      ++passed;
      break;
    case RP_NET_CHECK_PENDING:
    case RP_NET_CHECK_RUNNING:
      ++waiting;
      break;
    case RP_NET_CHECK_FAILED:
    case RP_NET_CHECK_UNSUPPORTED:
    case RP_NET_CHECK_REMOVED:
      break;
    }
  }
  if (passed == 0 && waiting > 0) {
    return;
  }
  tp->ready_called = 1;
  uv_timer_stop(&tp->poll);
  tp->ready(tp, passed > 0, tp->user_data);
}

static void pool_tl_cb(uv_timer_t *t) {
  tun_pool *tp = t->data;
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  size_t i, n = rp_net_pool_resolver_count(tp->np);

  if (tp->tl_n >= TUN_POOL_TL_SAMPLES) {
    uv_timer_stop(t);
    return;
  }
  if (n > TUN_POOL_TL_RES) {
    n = TUN_POOL_TL_RES;
  }
  if (n > tp->tl_res) {
    tp->tl_res = n;
  }
  for (i = 0; i < n; ++i) {
    rp_net_resolver_info info;
    int ok =
        rp_net_pool_get_resolver(tp->np, i, &info, now) == 0 && info.has_stats;

    tp->tl_cap[tp->tl_n][i] = ok ? (float)info.stats.cap_qps : 0.0f;
    tp->tl_rate[tp->tl_n][i] = ok ? (float)info.stats.answer_rate_qps : 0.0f;
    tp->tl_answered[tp->tl_n][i] = ok ? info.stats.answered : 0;
  }
  ++tp->tl_n;
}

static void pool_handle_closed(tun_pool *tp) {
  if (--tp->open == 0) {
    free(tp);
  }
}

static void pool_timer_closed(uv_handle_t *h) { pool_handle_closed(h->data); }

static void pool_np_closed(rp_net_pool *np, void *user_data) {
  (void)np;
  pool_handle_closed(user_data);
}

/* pool_build_config fills |cfg| from the file and the resolver list. */
static int pool_build_config(rp_config *cfg, const tun_pool_options *o,
                             char *err, size_t errlen) {
  size_t i;
  int rv = 0;

  if (o->config_file != NULL) {
    rv = rp_config_load_file(cfg, o->config_file, err, errlen);
  }
  for (i = 0; rv == 0 && i < o->nresolvers; ++i) {
    rv = rp_config_add_resolver(cfg, o->resolvers[i], "command line",
                                "--resolver", err, errlen);
  }
  if (rv == 0 && cfg->nresolvers == 0) {
    snprintf(err, errlen,
             "pool mode: no resolvers (give --resolver or --pool-config)");
    rv = RP_ERR_CONFIG;
  }
  return rv;
}

int tun_pool_start(tun_pool **ptp, uv_loop_t *loop,
                   const tun_pool_options *options, char *err, size_t errlen) {
  rp_net_options no = {0};
  rp_config cfg;
  tun_pool *tp;
  int rv;

  if (errlen > 0) {
    err[0] = '\0';
  }
  tp = calloc(1, sizeof(*tp));
  if (tp == NULL) {
    return RP_ERR_NOMEM;
  }
  tp->loop = loop;
  tp->domain = *options->domain;
  tp->check_bytes = options->check_bytes;
  tp->ready = options->ready;
  tp->answer = options->answer;
  tp->user_data = options->user_data;
  rp_config_init(&cfg, NULL);
  rv = pool_build_config(&cfg, options, err, errlen);
  if (rv != 0) {
    goto fail_config;
  }
  no.config = &cfg;
  no.kind = options->kind;
  /* "pretest_domain": "" in the file switches the check off too. */
  if (tp->check_bytes != 0 &&
      !(cfg.pretest_domain != NULL && cfg.pretest_domain[0] == '\0')) {
    no.check_build = pool_check_build;
    no.check_verify = pool_check_verify;
  } else if (cfg.pretest_domain == NULL) {
    /* No check: an empty pretest domain adds every resolver unchecked. */
    cfg.pretest_domain = calloc(1, 1);
    if (cfg.pretest_domain == NULL) {
      rv = RP_ERR_NOMEM;
      goto fail_config;
    }
  }
  no.log = pool_log;
  no.log_level = options->log_level;
  no.user_data = tp;
  rv = rp_net_pool_start(&tp->np, loop, &no, err, errlen);
  if (rv != 0) {
    goto fail_config;
  }
  rp_config_free(&cfg);
  if (tp->answer != NULL &&
      (rv = rp_net_pool_set_answer_cb(tp->np, pool_answer_cb, tp)) != 0) {
    snprintf(err, errlen, "in-process answers: %s", rp_strerror(rv));
    rp_net_pool_stop(tp->np, NULL, NULL);
    free(tp);
    return rv;
  }
  uv_timer_init(loop, &tp->poll);
  tp->poll.data = tp;
  uv_timer_init(loop, &tp->tl_timer);
  tp->tl_timer.data = tp;
  tp->open = 3;
  uv_timer_start(&tp->poll, pool_poll_cb, 0, TUN_POOL_POLL_MS);
  uv_timer_start(&tp->tl_timer, pool_tl_cb, TUN_POOL_TL_MS, TUN_POOL_TL_MS);
  *ptp = tp;
  return 0;

fail_config:
  rp_config_free(&cfg);
  free(tp);
  return rv;
}

int tun_pool_query(tun_pool *tp, const uint8_t *q, size_t len, uint64_t token,
                   rp_tstamp now) {
  return rp_net_pool_query(tp->np, q, len, token, now);
}

void tun_pool_get_address(const tun_pool *tp, struct sockaddr_storage *addr) {
  socklen_t len = sizeof(*addr);

  rp_net_pool_get_address(tp->np, addr, &len);
}

/* pool_add_resolvers adds the per-resolver array to |root|. */
static void pool_add_resolvers(tun_pool *tp, cJSON *root, rp_tstamp now) {
  cJSON *arr = cJSON_AddArrayToObject(root, "resolvers");
  size_t i, n = rp_net_pool_resolver_count(tp->np);

  for (i = 0; arr != NULL && i < n; ++i) {
    rp_net_resolver_info info;
    const rp_resolver_stats *s = &info.stats;
    cJSON *o;

    if (rp_net_pool_get_resolver(tp->np, i, &info, now) != 0 ||
        (o = cJSON_CreateObject()) == NULL) {
      continue;
    }
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "name", info.name);
    cJSON_AddStringToObject(o, "check", rp_net_check_state_str(info.check));
    if (!info.has_stats) {
      continue;
    }
    cJSON_AddStringToObject(o, "state", rp_resolver_state_str(s->state));
    cJSON_AddNumberToObject(o, "cap_qps", s->cap_qps);
    cJSON_AddNumberToObject(o, "answer_rate_qps", s->answer_rate_qps);
    cJSON_AddNumberToObject(o, "sent", (double)s->sent);
    cJSON_AddNumberToObject(o, "answered", (double)s->answered);
    cJSON_AddNumberToObject(o, "refused", (double)s->refused);
    cJSON_AddNumberToObject(o, "dropped", (double)s->dropped);
    cJSON_AddNumberToObject(o, "errors", (double)s->errors);
    cJSON_AddNumberToObject(o, "copies", (double)s->copies);
    cJSON_AddNumberToObject(o, "hedges", (double)s->hedges);
    cJSON_AddNumberToObject(o, "probes", (double)s->probes);
    cJSON_AddNumberToObject(o, "loss", s->loss);
    cJSON_AddNumberToObject(o, "mean_latency_ms",
                            s->mean_latency == RP_TSTAMP_UNSET
                                ? -1.0
                                : (double)s->mean_latency /
                                      (double)RP_MILLISECONDS);
    cJSON_AddNumberToObject(o, "score", s->score);
  }
}

/* pool_add_totals adds the pool's counters to |root|. */
static void pool_add_totals(tun_pool *tp, cJSON *root) {
  cJSON *o = cJSON_AddObjectToObject(root, "pool");
  rp_pool_stats ps;
  rp_net_counters nc;

  if (o == NULL) {
    return;
  }
  rp_pool_get_stats(rp_net_pool_get_core(tp->np), &ps);
  rp_net_pool_get_counters(tp->np, &nc);
  cJSON_AddNumberToObject(o, "queries", (double)ps.queries);
  cJSON_AddNumberToObject(o, "delivered", (double)ps.delivered);
  cJSON_AddNumberToObject(o, "failed", (double)ps.failed);
  cJSON_AddNumberToObject(o, "waits", (double)ps.waits);
  cJSON_AddNumberToObject(o, "full", (double)ps.full);
  cJSON_AddNumberToObject(o, "sends", (double)ps.sends);
  cJSON_AddNumberToObject(o, "copies", (double)ps.copies);
  cJSON_AddNumberToObject(o, "copies_data", (double)ps.copies_data);
  cJSON_AddNumberToObject(o, "copies_repeat", (double)ps.copies_repeat);
  cJSON_AddNumberToObject(o, "repeats_dropped", (double)ps.repeats_dropped);
  cJSON_AddNumberToObject(o, "extras_skipped", (double)ps.extras_skipped);
  cJSON_AddNumberToObject(o, "hedges", (double)ps.hedges);
  cJSON_AddNumberToObject(o, "resends", (double)ps.resends);
  cJSON_AddNumberToObject(o, "spills", (double)ps.spills);
  cJSON_AddNumberToObject(o, "retries", (double)ps.retries);
  cJSON_AddNumberToObject(o, "probes", (double)ps.probes);
  cJSON_AddNumberToObject(o, "malformed", (double)ps.malformed);
  cJSON_AddNumberToObject(o, "spoofed", (double)ps.spoofed);
  cJSON_AddNumberToObject(o, "nup", (double)ps.nup);
  cJSON_AddNumberToObject(o, "nresolvers", (double)ps.nresolvers);
  cJSON_AddNumberToObject(o, "udp_queries", (double)nc.udp_queries);
  cJSON_AddNumberToObject(o, "direct_queries", (double)nc.direct_queries);
  cJSON_AddNumberToObject(o, "direct_dropped", (double)nc.direct_dropped);
  cJSON_AddNumberToObject(o, "truncated_to_client",
                          (double)nc.truncated_to_client);
  cJSON_AddNumberToObject(o, "send_failures", (double)nc.send_failures);
  cJSON_AddNumberToObject(o, "checks_passed", (double)nc.checks_passed);
  cJSON_AddNumberToObject(o, "checks_failed", (double)nc.checks_failed);
}

size_t tun_pool_format_stats(tun_pool *tp, char *out, size_t cap) {
  cJSON *root;
  char *text;
  int n = 0;

  if (cap == 0) {
    return 0;
  }
  out[0] = '\0';
  root = cJSON_CreateObject();
  if (root == NULL) {
    return 0;
  }
  pool_add_resolvers(tp, root, (rp_tstamp)uv_hrtime());
  pool_add_totals(tp, root);
  text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (text == NULL) {
    return 0;
  }
  n = snprintf(out, cap, ",\"pool_stats\":%s", text);
  cJSON_free(text);
  if (n < 0 || (size_t)n >= cap) {
    out[0] = '\0';
    return 0;
  }
  return (size_t)n;
}

/* pool_tl_series appends one series of the timeline ("cap": [[r0, r1],
   ...]) to |out| at |*pos|. */
static void pool_tl_series(const tun_pool *tp, const char *name, int which,
                           char *out, size_t cap, size_t *pos) {
  size_t k, i;
  int n;

  n = snprintf(out + *pos, cap - *pos, ",\"%s\":[", name);
  *pos = n < 0 ? cap : *pos + (size_t)n;
  for (k = 0; k < tp->tl_n && *pos < cap; ++k) {
    n = snprintf(out + *pos, cap - *pos, "%s[", k ? "," : "");
    *pos = n < 0 ? cap : *pos + (size_t)n;
    for (i = 0; i < tp->tl_res && *pos < cap; ++i) {
      if (which == 2) {
        n = snprintf(out + *pos, cap - *pos, "%s%" PRIu64, i ? "," : "",
                     tp->tl_answered[k][i]);
      } else {
        n = snprintf(out + *pos, cap - *pos, "%s%.1f", i ? "," : "",
                     (double)(which ? tp->tl_rate[k][i] : tp->tl_cap[k][i]));
      }
      *pos = n < 0 ? cap : *pos + (size_t)n;
    }
    if (*pos < cap) {
      n = snprintf(out + *pos, cap - *pos, "]");
      *pos = n < 0 ? cap : *pos + (size_t)n;
    }
  }
  if (*pos < cap) {
    n = snprintf(out + *pos, cap - *pos, "]");
    *pos = n < 0 ? cap : *pos + (size_t)n;
  }
}

size_t tun_pool_format_timeline(tun_pool *tp, char *out, size_t cap) {
  size_t pos = 0, i;
  int n;

  if (cap == 0) {
    return 0;
  }
  out[0] = '\0';
  n = snprintf(out, cap, ",\"pool_timeline\":{\"period_ms\":%d,\"names\":[",
               TUN_POOL_TL_MS);
  pos = n < 0 ? cap : (size_t)n;
  for (i = 0; i < tp->tl_res && pos < cap; ++i) {
    rp_net_resolver_info info;
    const char *name =
        rp_net_pool_get_resolver(tp->np, i, &info, 0) == 0 ? info.name : "?";

    n = snprintf(out + pos, cap - pos, "%s\"%s\"", i ? "," : "", name);
    pos = n < 0 ? cap : pos + (size_t)n;
  }
  if (pos < cap) {
    n = snprintf(out + pos, cap - pos, "]");
    pos = n < 0 ? cap : pos + (size_t)n;
  }
  pool_tl_series(tp, "cap", 0, out, cap, &pos);
  pool_tl_series(tp, "rate", 1, out, cap, &pos);
  pool_tl_series(tp, "answered", 2, out, cap, &pos);
  if (pos < cap) {
    n = snprintf(out + pos, cap - pos, "}");
    pos = n < 0 ? cap : pos + (size_t)n;
  }
  if (pos >= cap) {
    /* Too long for the line: left out whole rather than cut. */
    out[0] = '\0';
    return 0;
  }
  return pos;
}

int tun_pool_stop(tun_pool *tp) {
  int rv;

  if (tp == NULL) {
    return 0;
  }
  tp->ready_called = 1;
  uv_timer_stop(&tp->poll);
  uv_close((uv_handle_t *)&tp->poll, pool_timer_closed);
  uv_close((uv_handle_t *)&tp->tl_timer, pool_timer_closed);
  rv = rp_net_pool_stop(tp->np, pool_np_closed, tp);
  return rv;
}
