/*
 * config.c: parsing the smart_pool object: the config's life cycle, the
 * enum names and the JSON walk. The value parsers (durations, kinds,
 * resolver URLs, listen addresses) are in config_values.c.
 *
 * IMPLEMENTATION NOTES
 * - cJSON builds a tree of the whole text; the tree is walked once and
 *   every member is checked against a fixed list, so a misspelt field is
 *   an error rather than a silent default.
 * - Errors are formatted as "<source>: <path>: <reason> (<value>)", for
 *   instance "pool.json: smart_pool.resolvers[2]: bad address (1.2.3)".
 */
#include "respool_config.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* CONFIG_MAX_FILE bounds a config file read into memory, bytes. */
#define CONFIG_MAX_FILE (64u * 1024u * 1024u)
/* CONFIG_MAX_PATHSTR is the longest field path in an error message. */
#define CONFIG_MAX_PATHSTR 128
/* CONFIG_MAX_VALUESTR is the longest value echoed in an error. */
#define CONFIG_MAX_VALUESTR 120
/* CONFIG_MAX_DOWN_AFTER and CONFIG_MAX_DUPLICATE bound those integers;
   more is surely a typo. */
#define CONFIG_MAX_DOWN_AFTER 1000
#define CONFIG_MAX_DUPLICATE 10
/* CONFIG_MAX_COUNT bounds the discovery counts. */
#define CONFIG_MAX_COUNT 1000000
/* CONFIG_INITIAL_RESOLVERS is the first capacity of the list. */
#define CONFIG_INITIAL_RESOLVERS 8
/* CONFIG_READ_CHUNK is the first buffer size when reading a file. */
#define CONFIG_READ_CHUNK 4096u
/* CONFIG_COUNTRY_LEN is the length of an ISO 3166 alpha-2 code. */
#define CONFIG_COUNTRY_LEN 2

const char *rp_config_scheme_str(rp_scheme scheme) {
  switch (scheme) {
  case RP_SCHEME_UDP:
    return "udp";
  case RP_SCHEME_TCP:
    return "tcp";
  case RP_SCHEME_DOT:
    return "dot";
  case RP_SCHEME_DOH:
    return "https";
  case RP_SCHEME_AUTO:
    return "auto";
  }
  return "unknown";
}

const char *rp_config_kind_str(rp_kind kind) {
  switch (kind) {
  case RP_KIND_GENERIC:
    return "generic";
  case RP_KIND_DNSTT:
    return "dnstt";
  case RP_KIND_MASTERDNS:
    return "masterdns";
  case RP_KIND_AUTO:
    return "auto";
  }
  return "unknown";
}

const char *rp_config_balance_str(rp_balance balance) {
  switch (balance) {
  case RP_BALANCE_AUTO:
    return "auto";
  case RP_BALANCE_ROUNDROBIN:
    return "roundrobin";
  case RP_BALANCE_WEIGHTED:
    return "weighted";
  case RP_BALANCE_LOWEST_LATENCY:
    return "lowest_latency";
  case RP_BALANCE_LEAST_LOSS:
    return "least_loss";
  }
  return "unknown";
}

void rp_config_init(rp_config *cfg, const rp_mem *mem) {
  *cfg = (rp_config){
      .mem = mem ? mem : rp_mem_default(),
      .deadline = RP_TSTAMP_UNSET,
      .per_attempt = RP_TSTAMP_UNSET,
      .probe_interval = RP_TSTAMP_UNSET,
      .wait_for_token = -1,
      .discovery =
          {
              .want = RP_CONFIG_DISCOVERY_WANT,
              .concurrency = RP_CONFIG_DISCOVERY_CONCURRENCY,
              .system = 1,
              .bundled = 1,
          },
  };
}

void rp_config_free(rp_config *cfg) {
  const rp_mem *mem = cfg->mem;
  mem->free(cfg->scores_file, mem->user_data);
  mem->free(cfg->pretest_domain, mem->user_data);
  mem->free(cfg->tls_ca, mem->user_data);
  mem->free(cfg->tls_name, mem->user_data);
  mem->free(cfg->resolvers, mem->user_data);
  mem->free(cfg->discovery.list_file, mem->user_data);
  mem->free(cfg->discovery.data_file, mem->user_data);
  while (cfg->ntuning > 0) {
    mem->free(cfg->tuning[--cfg->ntuning], mem->user_data);
  }
  mem->free(cfg->tuning, mem->user_data);
  rp_config_init(cfg, mem);
}

int rp_config_add_tuning(rp_config *cfg, const char *assignment, char *err,
                         size_t errlen) {
  const rp_mem *mem = cfg->mem;
  rp_settings scratch;
  char **nt;
  size_t n = strlen(assignment) + 1;
  char *copy;

  rp_settings_default(&scratch, RP_KIND_GENERIC);
  if (rp_settings_set(&scratch, assignment, err, errlen) != 0) {
    return RP_ERR_CONFIG;
  }
  if (cfg->ntuning >= RP_CONFIG_MAX_TUNING) {
    snprintf(err, errlen, "more than %d tuning assignments",
             RP_CONFIG_MAX_TUNING);
    return RP_ERR_CONFIG;
  }
  copy = mem->malloc(n, mem->user_data);
  if (copy == NULL) {
    return RP_ERR_NOMEM;
  }
  memcpy(copy, assignment, n);
  nt = mem->realloc(cfg->tuning, (cfg->ntuning + 1) * sizeof(*nt),
                    mem->user_data);
  if (nt == NULL) {
    mem->free(copy, mem->user_data);
    return RP_ERR_NOMEM;
  }
  nt[cfg->ntuning++] = copy;
  cfg->tuning = nt;
  return 0;
}

void rp_config_apply(const rp_config *cfg, rp_settings *settings) {
  size_t i;

  if (cfg->has_load_balance) {
    settings->load_balance = cfg->load_balance;
  }
  if (cfg->deadline != RP_TSTAMP_UNSET) {
    settings->deadline = cfg->deadline;
  }
  if (cfg->per_attempt != RP_TSTAMP_UNSET) {
    settings->per_attempt = cfg->per_attempt;
  }
  if (cfg->probe_interval != RP_TSTAMP_UNSET) {
    settings->probe_interval = cfg->probe_interval;
  }
  if (cfg->down_after) {
    settings->down_after = cfg->down_after;
  }
  if (cfg->duplicate) {
    settings->duplicate = cfg->duplicate;
  }
  if (cfg->wait_for_token >= 0) {
    settings->wait_for_token = cfg->wait_for_token;
  }
  for (i = 0; i < cfg->ntuning; ++i) {
    /* Checked when added: a field's syntax does not depend on the kind. */
    (void)rp_settings_set(settings, cfg->tuning[i], NULL, 0);
  }
}

/* ------------------------------------------------------------------ */
/* JSON walk                                                            */
/* ------------------------------------------------------------------ */

static int config_parse_balance(const char *text, rp_balance *pb) {
  static const rp_balance all[] = {
      RP_BALANCE_AUTO, RP_BALANCE_ROUNDROBIN, RP_BALANCE_WEIGHTED,
      RP_BALANCE_LOWEST_LATENCY, RP_BALANCE_LEAST_LOSS};
  size_t i;
  for (i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    if (strcmp(text, rp_config_balance_str(all[i])) == 0) {
      *pb = all[i];
      return 0;
    }
  }
  return RP_ERR_CONFIG;
}

/* config_ctx carries what every error message needs. */
typedef struct config_ctx {
  rp_config *cfg;
  const char *source;
  char *err;
  size_t errlen;
  /* prefix is the path of the smart_pool object ("smart_pool" or ""). */
  const char *prefix;
} config_ctx;

/* config_value_str writes a short text form of |item| into |out|. */
static void config_value_str(const cJSON *item, char *out, size_t cap) {
  char *printed;
  if (!item) {
    snprintf(out, cap, "missing");
    return;
  }
  if (cJSON_IsString(item)) {
    snprintf(out, cap, "\"%.*s\"", (int)(cap > 3 ? cap - 3 : 0),
             item->valuestring);
    return;
  }
  printed = cJSON_PrintUnformatted(item);
  if (!printed) {
    snprintf(out, cap, "?");
    return;
  }
  snprintf(out, cap, "%s", printed);
  cJSON_free(printed);
}

/* config_fail formats "<source>: <prefix>.<field>: <why> (<value>)". */
static int config_fail(config_ctx *ctx, const char *field, const cJSON *value,
                       const char *why) {
  char vbuf[CONFIG_MAX_VALUESTR];
  config_value_str(value, vbuf, sizeof(vbuf));
  if (ctx->err && ctx->errlen) {
    snprintf(ctx->err, ctx->errlen, "%s: %s%s%s: %s (%s)", ctx->source,
             ctx->prefix, *ctx->prefix && *field ? "." : "", field, why, vbuf);
  }
  return RP_ERR_CONFIG;
}

/* config_replace replaces the owned string |*pdst| of |cfg| with a copy
   of |src|. Returns 0 or RP_ERR_NOMEM (|*pdst| unchanged). */
static int config_replace(rp_config *cfg, char **pdst, const char *src) {
  const rp_mem *mem = cfg->mem;
  size_t n = strlen(src) + 1;
  char *p = mem->malloc(n, mem->user_data);
  if (!p) {
    return RP_ERR_NOMEM;
  }
  memcpy(p, src, n);
  mem->free(*pdst, mem->user_data);
  *pdst = p;
  return 0;
}

int rp_config_set_string(rp_config *cfg, rp_config_string field,
                         const char *value) {
  if (!value) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  switch (field) {
  case RP_CONFIG_SCORES_FILE:
    return config_replace(cfg, &cfg->scores_file, value);
  case RP_CONFIG_PRETEST_DOMAIN:
    return config_replace(cfg, &cfg->pretest_domain, value);
  case RP_CONFIG_TLS_CA:
    return config_replace(cfg, &cfg->tls_ca, value);
  case RP_CONFIG_TLS_NAME:
    return config_replace(cfg, &cfg->tls_name, value);
  case RP_CONFIG_LIST_FILE:
    return config_replace(cfg, &cfg->discovery.list_file, value);
  case RP_CONFIG_DATA_FILE:
    return config_replace(cfg, &cfg->discovery.data_file, value);
  }
  return RP_ERR_INVALID_ARGUMENT;
}

static int config_push_resolver(rp_config *cfg, const rp_config_resolver *res) {
  const rp_mem *mem = cfg->mem;
  if (cfg->nresolvers == cfg->cap_resolvers) {
    size_t ncap =
        cfg->cap_resolvers ? cfg->cap_resolvers * 2 : CONFIG_INITIAL_RESOLVERS;
    rp_config_resolver *n;
    if (ncap > RP_CONFIG_MAX_RESOLVERS) {
      ncap = RP_CONFIG_MAX_RESOLVERS;
    }
    if (ncap <= cfg->nresolvers) {
      return RP_ERR_FULL;
    }
    n = mem->realloc(cfg->resolvers, ncap * sizeof(*n), mem->user_data);
    if (!n) {
      return RP_ERR_NOMEM;
    }
    cfg->resolvers = n;
    cfg->cap_resolvers = ncap;
  }
  cfg->resolvers[cfg->nresolvers++] = *res;
  return 0;
}

int rp_config_add_resolver(rp_config *cfg, const char *spec, const char *source,
                           const char *field, char *err, size_t errlen) {
  rp_config_resolver res;
  char why[RP_CONFIG_ERRLEN];
  int rv = rp_config_parse_resolver(&res, spec, why, sizeof(why));
  if (rv != 0) {
    if (err && errlen) {
      snprintf(err, errlen, "%s: %s: %s", source, field, why);
    }
    return rv;
  }
  rv = config_push_resolver(cfg, &res);
  if (rv == RP_ERR_FULL) {
    if (err && errlen) {
      snprintf(err, errlen, "%s: %s: too many resolvers (most %d)", source,
               field, RP_CONFIG_MAX_RESOLVERS);
    }
    rv = RP_ERR_CONFIG;
  }
  return rv;
}

int rp_config_listen_is_loopback(const rp_config *cfg) {
  const struct sockaddr_storage *ss = &cfg->listen;

  if (!cfg->has_listen) {
    return 1;
  }
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

    return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
  }
  return 0;
}

static int config_duration(config_ctx *ctx, const cJSON *item,
                           const char *field, int allow_zero, rp_duration *pd) {
  if (cJSON_IsNumber(item)) {
    /* A bare number is seconds. */
    double v = item->valuedouble;
    double ns = v * (double)RP_SECONDS;
    /* Under a nanosecond but not 0 would be stored as 0: refused like a
       zero where none is allowed, and named where one is. */
    if (!(v >= 0) || v > RP_CONFIG_MAX_DURATION_S || (v == 0 && !allow_zero) ||
        (v > 0 && ns < 1.0)) {
      return config_fail(ctx, field, item,
                         v > 0 && ns < 1.0 ? "bad duration (under 1 ns)"
                                           : "bad duration");
    }
    *pd = (rp_duration)ns;
    return 0;
  }
  if (!cJSON_IsString(item) ||
      rp_config_parse_duration(item->valuestring, allow_zero, pd) != 0) {
    return config_fail(ctx, field, item,
                       "bad duration (use e.g. 300ms, 2s, 1m)");
  }
  return 0;
}

static int config_uint(config_ctx *ctx, const cJSON *item, const char *field,
                       uint32_t min, uint32_t max, uint32_t *pv) {
  double v;
  if (!cJSON_IsNumber(item)) {
    return config_fail(ctx, field, item, "expected an integer");
  }
  v = item->valuedouble;
  if (v != floor(v) || v < (double)min || v > (double)max) {
    char why[64];
    snprintf(why, sizeof(why), "expected an integer %u..%u", min, max);
    return config_fail(ctx, field, item, why);
  }
  *pv = (uint32_t)v;
  return 0;
}

static int config_string(config_ctx *ctx, const cJSON *item, const char *field,
                         char **pdst) {
  if (!cJSON_IsString(item)) {
    return config_fail(ctx, field, item, "expected a string");
  }
  return config_replace(ctx->cfg, pdst, item->valuestring);
}

static int config_resolvers(config_ctx *ctx, const cJSON *arr,
                            const char *field) {
  const cJSON *item;
  size_t i = 0;
  char path[CONFIG_MAX_PATHSTR];
  if (!cJSON_IsArray(arr)) {
    return config_fail(ctx, field, arr, "expected a list of resolvers");
  }
  cJSON_ArrayForEach(item, arr) {
    rp_config_resolver res;
    char why[RP_CONFIG_ERRLEN];
    int rv;
    snprintf(path, sizeof(path), "%s[%zu]", field, i);
    if (!cJSON_IsString(item)) {
      return config_fail(ctx, path, item, "expected a string");
    }
    if (rp_config_parse_resolver(&res, item->valuestring, why, sizeof(why)) !=
        0) {
      /* |why| already carries the value in parentheses. */
      if (ctx->err && ctx->errlen) {
        snprintf(ctx->err, ctx->errlen, "%s: %s%s%s: %s", ctx->source,
                 ctx->prefix, *ctx->prefix ? "." : "", path, why);
      }
      return RP_ERR_CONFIG;
    }
    rv = config_push_resolver(ctx->cfg, &res);
    if (rv == RP_ERR_FULL) {
      return config_fail(ctx, path, item, "too many resolvers");
    }
    if (rv != 0) {
      return rv;
    }
    ++i;
  }
  return 0;
}

static int config_discovery(config_ctx *ctx, const cJSON *obj) {
  const cJSON *item;
  rp_config_discovery *d = &ctx->cfg->discovery;
  char path[CONFIG_MAX_PATHSTR];
  int rv;
  if (!cJSON_IsObject(obj)) {
    return config_fail(ctx, "discovery", obj, "expected an object");
  }
  cJSON_ArrayForEach(item, obj) {
    const char *k = item->string;
    snprintf(path, sizeof(path), "discovery.%s", k);
    if (strcmp(k, "country") == 0) {
      if (!cJSON_IsString(item) ||
          strlen(item->valuestring) != CONFIG_COUNTRY_LEN) {
        return config_fail(ctx, path, item,
                           "expected a two-letter country code");
      }
      memcpy(d->country, item->valuestring, CONFIG_COUNTRY_LEN + 1);
      rv = 0;
    } else if (strcmp(k, "sample_ranges") == 0) {
      rv = config_uint(ctx, item, path, 0, CONFIG_MAX_COUNT, &d->sample_ranges);
    } else if (strcmp(k, "want") == 0) {
      rv = config_uint(ctx, item, path, 1, CONFIG_MAX_COUNT, &d->want);
    } else if (strcmp(k, "concurrency") == 0) {
      rv = config_uint(ctx, item, path, 1, CONFIG_MAX_COUNT, &d->concurrency);
    } else if (strcmp(k, "pace") == 0) {
      rv = config_duration(ctx, item, path, 1, &d->pace);
    } else if (strcmp(k, "timeout") == 0) {
      rv = config_duration(ctx, item, path, 0, &d->timeout);
    } else if (strcmp(k, "list_file") == 0) {
      rv = config_string(ctx, item, path, &d->list_file);
    } else if (strcmp(k, "data_file") == 0) {
      rv = config_string(ctx, item, path, &d->data_file);
    } else if (strcmp(k, "system") == 0 || strcmp(k, "bundled") == 0) {
      if (!cJSON_IsBool(item)) {
        return config_fail(ctx, path, item, "expected true or false");
      }
      *(strcmp(k, "system") == 0 ? &d->system : &d->bundled) =
          cJSON_IsTrue(item);
      rv = 0;
    } else {
      rv = config_fail(ctx, path, item, "unknown field");
    }
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

/* CONFIG_TUNING_VALUE is the room for one tuning value as text. */
#define CONFIG_TUNING_VALUE 300

/* config_tuning reads the "tuning" object: rp_settings fields by name,
   each a string in rp_settings_set's syntax, a number (seconds for a
   duration) or a boolean. */
static int config_tuning(config_ctx *ctx, const cJSON *obj) {
  const cJSON *item;
  char path[CONFIG_MAX_PATHSTR];
  char value[CONFIG_TUNING_VALUE];
  char assign[CONFIG_MAX_PATHSTR + CONFIG_TUNING_VALUE];
  char why[RP_SETTINGS_ERRLEN];
  const rp_settings_field *f;
  int rv;

  if (!cJSON_IsObject(obj)) {
    return config_fail(ctx, "tuning", obj, "expected an object");
  }
  cJSON_ArrayForEach(item, obj) {
    const char *k = item->string;

    snprintf(path, sizeof(path), "tuning.%s", k);
    f = rp_settings_find(k, strlen(k));
    if (f == NULL) {
      return config_fail(ctx, path, item, "unknown setting");
    }
    if (cJSON_IsString(item)) {
      snprintf(value, sizeof(value), "%s", item->valuestring);
    } else if (cJSON_IsBool(item)) {
      snprintf(value, sizeof(value), "%d", cJSON_IsTrue(item) ? 1 : 0);
    } else if (cJSON_IsNumber(item)) {
      snprintf(value, sizeof(value),
               f->type == RP_SETTINGS_DURATION ? "%.17gs" : "%.17g",
               item->valuedouble);
    } else {
      return config_fail(ctx, path, item,
                         "expected a string, a number or a boolean");
    }
    snprintf(assign, sizeof(assign), "%s=%s", k, value);
    rv = rp_config_add_tuning(ctx->cfg, assign, why, sizeof(why));
    if (rv == RP_ERR_CONFIG) {
      return config_fail(ctx, path, item, why);
    }
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

/* config_member handles one member of the smart_pool object. */
static int config_member(config_ctx *ctx, const cJSON *item) {
  rp_config *cfg = ctx->cfg;
  const char *k = item->string;
  int rv;

  if (strcmp(k, "enabled") == 0) {
    if (!cJSON_IsBool(item)) {
      return config_fail(ctx, k, item, "expected true or false");
    }
    cfg->enabled = cJSON_IsTrue(item);
  } else if (strcmp(k, "load_balance") == 0) {
    if (!cJSON_IsString(item) ||
        config_parse_balance(item->valuestring, &cfg->load_balance) != 0) {
      return config_fail(ctx, k, item,
                         "expected auto, roundrobin, weighted, "
                         "lowest_latency or least_loss");
    }
    cfg->has_load_balance = 1;
  } else if (strcmp(k, "deadline") == 0) {
    return config_duration(ctx, item, k, 0, &cfg->deadline);
  } else if (strcmp(k, "per_attempt") == 0) {
    return config_duration(ctx, item, k, 0, &cfg->per_attempt);
  } else if (strcmp(k, "probe_interval") == 0) {
    return config_duration(ctx, item, k, 0, &cfg->probe_interval);
  } else if (strcmp(k, "down_after") == 0) {
    return config_uint(ctx, item, k, 1, CONFIG_MAX_DOWN_AFTER,
                       &cfg->down_after);
  } else if (strcmp(k, "duplicate") == 0) {
    return config_uint(ctx, item, k, 1, CONFIG_MAX_DUPLICATE, &cfg->duplicate);
  } else if (strcmp(k, "wait_for_token") == 0) {
    if (!cJSON_IsBool(item)) {
      return config_fail(ctx, k, item, "expected true or false");
    }
    cfg->wait_for_token = cJSON_IsTrue(item) ? 1 : 0;
  } else if (strcmp(k, "discovery") == 0) {
    return config_discovery(ctx, item);
  } else if (strcmp(k, "tuning") == 0) {
    return config_tuning(ctx, item);
  } else if (strcmp(k, "resolvers") == 0) {
    return config_resolvers(ctx, item, k);
  } else if (strcmp(k, "kind") == 0) {
    if (!cJSON_IsString(item) ||
        rp_config_parse_kind(item->valuestring, &cfg->kind) != 0) {
      return config_fail(ctx, k, item, "expected auto, dnstt, masterdns or generic");
    }
    cfg->has_kind = 1;
  } else if (strcmp(k, "listen") == 0) {
    if (!cJSON_IsString(item) ||
        rp_config_parse_listen(item->valuestring, &cfg->listen) != 0) {
      return config_fail(ctx, k, item,
                         "expected an address such as 127.0.0.1:5353");
    }
    cfg->has_listen = 1;
  } else if (strcmp(k, "scores_file") == 0) {
    return config_string(ctx, item, k, &cfg->scores_file);
  } else if (strcmp(k, "pretest_domain") == 0) {
    rv = config_string(ctx, item, k, &cfg->pretest_domain);
    if (rv == 0 && strlen(cfg->pretest_domain) >= RP_CONFIG_MAX_HOST) {
      rv = config_fail(ctx, k, item, "name too long");
    }
    return rv;
  } else if (strcmp(k, "tls_ca") == 0) {
    return config_string(ctx, item, k, &cfg->tls_ca);
  } else if (strcmp(k, "tls_name") == 0) {
    return config_string(ctx, item, k, &cfg->tls_name);
  } else {
    return config_fail(ctx, k, item, "unknown field");
  }
  return 0;
}

static int config_smart_pool(config_ctx *ctx, const cJSON *sp) {
  const cJSON *item;
  int rv;
  if (cJSON_IsTrue(sp)) {
    ctx->cfg->enabled = 1;
    return 0;
  }
  if (cJSON_IsFalse(sp)) {
    ctx->cfg->enabled = 0;
    return 0;
  }
  if (!cJSON_IsObject(sp)) {
    return config_fail(ctx, "", sp, "expected true, false or an object");
  }
  cJSON_ArrayForEach(item, sp) {
    rv = config_member(ctx, item);
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

int rp_config_parse_json(rp_config *cfg, const char *text, size_t len,
                         const char *source, char *err, size_t errlen) {
  config_ctx ctx = {.cfg = cfg,
                    .source = source ? source : "config",
                    .err = err,
                    .errlen = errlen,
                    .prefix = ""};
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  const cJSON *sp;
  int rv;

  if (!root) {
    size_t off = end && end >= text ? (size_t)(end - text) : 0;
    size_t line = 1, i;
    for (i = 0; i < off && i < len; ++i) {
      line += text[i] == '\n';
    }
    if (err && errlen) {
      snprintf(err, errlen, "%s: line %zu: not valid JSON", ctx.source, line);
    }
    return RP_ERR_CONFIG;
  }
  sp = cJSON_IsObject(root)
           ? cJSON_GetObjectItemCaseSensitive(root, "smart_pool")
           : NULL;
  if (sp) {
    /* An outbound-like object: its resolvers and type are ours too. */
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "resolvers");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
    rv = 0;
    if (res) {
      rv = config_resolvers(&ctx, res, "resolvers");
    }
    if (rv == 0 && type != NULL) {
      rp_kind kind;
      /* The pool serves DNS tunnels: an outbound of another type is a
         mistake, not a generic client. */
      if (!cJSON_IsString(type) ||
          rp_config_parse_kind(type->valuestring, &kind) != 0) {
        rv = config_fail(&ctx, "type", type,
                         "expected auto, dnstt, masterdns or generic");
      } else {
        cfg->kind = kind;
        cfg->has_kind = 1;
      }
    }
    ctx.prefix = "smart_pool";
    if (rv == 0) {
      rv = config_smart_pool(&ctx, sp);
    }
  } else {
    rv = config_smart_pool(&ctx, root);
  }
  cJSON_Delete(root);
  return rv;
}

int rp_config_read_stream(const rp_mem *mem, FILE *f, size_t max_len,
                          char **pbuf, size_t *plen) {
  char *buf = NULL;
  size_t n = 0, cap = 0;
  if (!mem) {
    mem = rp_mem_default();
  }
  if (max_len == 0) {
    return RP_ERR_FULL;
  }
  for (;;) {
    size_t got;
    if (n + 1 >= cap) {
      size_t ncap = cap ? cap * 2 : CONFIG_READ_CHUNK;
      char *nb;
      if (ncap > max_len || ncap < cap) {
        ncap = max_len;
      }
      if (ncap <= cap) {
        /* max_len bytes are full: the text fits only if it ends here. */
        if (fgetc(f) == EOF && !ferror(f)) {
          break;
        }
        mem->free(buf, mem->user_data);
        return ferror(f) ? RP_ERR_IO : RP_ERR_FULL;
      }
      nb = mem->realloc(buf, ncap, mem->user_data);
      if (!nb) {
        mem->free(buf, mem->user_data);
        return RP_ERR_NOMEM;
      }
      buf = nb;
      cap = ncap;
    }
    got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) {
      break;
    }
  }
  if (ferror(f)) {
    mem->free(buf, mem->user_data);
    return RP_ERR_IO;
  }
  buf[n] = '\0';
  *pbuf = buf;
  *plen = n;
  return 0;
}

int rp_config_load_file(rp_config *cfg, const char *path, char *err,
                        size_t errlen) {
  const rp_mem *mem = cfg->mem;
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t n = 0;
  int rv;
  if (!f) {
    if (err && errlen) {
      snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    }
    return RP_ERR_IO;
  }
  rv = rp_config_read_stream(mem, f, CONFIG_MAX_FILE, &buf, &n);
  fclose(f);
  if (rv == RP_ERR_FULL || rv == RP_ERR_IO) {
    if (err && errlen) {
      snprintf(err, errlen, "%s: %s", path,
               rv == RP_ERR_FULL ? "file too large" : "read error");
    }
    return rv == RP_ERR_FULL ? RP_ERR_CONFIG : RP_ERR_IO;
  }
  if (rv != 0) {
    return rv;
  }
  rv = rp_config_parse_json(cfg, buf, n, path, err, errlen);
  mem->free(buf, mem->user_data);
  return rv;
}
