/*
 * sim_settings.c: the rp_settings name table (see sim_settings.h).
 *
 * IMPLEMENTATION NOTES
 * - The table is built with offsetof and sizeof, and every entry's size
 *   is checked against its type when it is used (and by a test), so a
 *   field whose type changes in respool.h cannot be written through the
 *   wrong width silently.
 * - Durations reuse the fake resolvers' parser (fr_parse_duration), so
 *   `--set token_wait=300ms` reads like a resolver spec's latency=300ms.
 * - Fields added to rp_settings later need one line here; until then
 *   --set names them as unknown.
 */
#include "sim_settings.h"

#include "fr_profile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* SIM_FIELD makes one table entry for the rp_settings field |f|. */
#define SIM_FIELD(f, type, help)                                               \
  { #f, offsetof(rp_settings, f), sizeof(((rp_settings *)0)->f), type, help }

static const sim_settings_field settings_table[] = {
    SIM_FIELD(load_balance, SIM_SETTINGS_BALANCE,
              "strategy: auto|roundrobin|weighted|lowest_latency|least_loss"),
    SIM_FIELD(deadline, SIM_SETTINGS_DURATION,
              "longest time for one query over all tries"),
    SIM_FIELD(per_attempt, SIM_SETTINGS_DURATION,
              "longest try at one resolver"),
    SIM_FIELD(probe_interval, SIM_SETTINGS_DURATION,
              "how often an idle down resolver is probed"),
    SIM_FIELD(down_after, SIM_SETTINGS_U32,
              "timeouts in a row, no answer at all, before down"),
    SIM_FIELD(duplicate, SIM_SETTINGS_U32,
              "most sends per query, copies included"),
    SIM_FIELD(wait_for_token, SIM_SETTINGS_BOOL,
              "hold a query for a token (1) or fail it at once (0)"),
    SIM_FIELD(max_inflight, SIM_SETTINGS_SIZE,
              "cap on client queries in flight"),
    SIM_FIELD(max_resolvers, SIM_SETTINGS_SIZE, "cap on resolvers"),
    SIM_FIELD(log_level, SIM_SETTINGS_LOG_LEVEL,
              "core log level: error|warn|info|debug"),
    SIM_FIELD(log_categories, SIM_SETTINGS_U32,
              "mask of RP_LOG_CAT_* (255 = all)"),
    SIM_FIELD(latency_window, SIM_SETTINGS_DURATION,
              "span of the fastest-answer latency"),
    SIM_FIELD(band_ratio, SIM_SETTINGS_DOUBLE,
              "equal-cost band: x the cheapest cost"),
    SIM_FIELD(band_slack, SIM_SETTINGS_DURATION,
              "equal-cost band: additive slack"),
    SIM_FIELD(band_loss, SIM_SETTINGS_DOUBLE,
              "equal-cost band: loss above the lowest, ratio"),
    SIM_FIELD(loss_z, SIM_SETTINGS_DOUBLE, "z of the loss Wilson interval"),
    SIM_FIELD(loss_window, SIM_SETTINGS_DOUBLE,
              "effective tries the loss estimate weighs"),
    SIM_FIELD(probation_answers, SIM_SETTINGS_U32,
              "answers before a new resolver gets more than one query"),
    SIM_FIELD(retry_left_out, SIM_SETTINGS_DURATION,
              "how often a left-out resolver is tried again"),
    SIM_FIELD(cap_refusal_factor, SIM_SETTINGS_DOUBLE,
              "cap after a refusal, x recent answer rate"),
    SIM_FIELD(cap_drop_factor, SIM_SETTINGS_DOUBLE,
              "cap after a drop, x recent answer rate"),
    SIM_FIELD(cap_growth, SIM_SETTINGS_DOUBLE,
              "cap growth while answering, ratio per second"),
    SIM_FIELD(cap_lift_after, SIM_SETTINGS_DURATION,
              "a cap holding nothing back this long is lifted"),
    SIM_FIELD(rate_window, SIM_SETTINGS_DURATION,
              "span of the recent answer rate"),
    SIM_FIELD(overflow_grace, SIM_SETTINGS_DURATION,
              "after overflow, refusals do not lower the cap this long"),
    SIM_FIELD(quiet_spell, SIM_SETTINGS_DURATION,
              "no trouble this long makes a refusal 'after a quiet spell'"),
    SIM_FIELD(quiet_max_step, SIM_SETTINGS_DOUBLE,
              "largest cap cut after a quiet spell, ratio"),
    SIM_FIELD(assume_answers, SIM_SETTINGS_U32,
              "a first refusal before this many answers assumes assume_qps"),
    SIM_FIELD(assume_qps, SIM_SETTINGS_DOUBLE, "answer rate assumed, q/s"),
    SIM_FIELD(bucket_depth, SIM_SETTINGS_DURATION,
              "token bucket depth as a span of the cap"),
    SIM_FIELD(token_wait, SIM_SETTINGS_DURATION,
              "how long a query waits for a token"),
    SIM_FIELD(past_cap_interval, SIM_SETTINGS_DURATION,
              "one waiting query per resolver per span goes past the cap"),
    SIM_FIELD(trouble_recent, SIM_SETTINGS_DURATION,
              "refused or lost this recently: no past-cap send, no growth"),
    SIM_FIELD(hedge_devs, SIM_SETTINGS_DOUBLE,
              "hedge after mean + this many deviations"),
    SIM_FIELD(hedge_min_dev, SIM_SETTINGS_DURATION,
              "smallest deviation term of the hedge time"),
    SIM_FIELD(early_hedge_rtts, SIM_SETTINGS_DOUBLE,
              "early hedge at a lossy resolver, in fastest latencies"),
    SIM_FIELD(lossy_recent, SIM_SETTINGS_DURATION,
              "a loss this recent makes a resolver 'lossy lately'"),
    SIM_FIELD(hedge_lossy_loss, SIM_SETTINGS_DOUBLE,
              "loss lower bound above which a hedge may go anywhere"),
    SIM_FIELD(max_hedges, SIM_SETTINGS_U32, "most hedges per query"),
    SIM_FIELD(copy_delay_rtt, SIM_SETTINGS_DOUBLE,
              "copy delay after the first send, in round trips"),
    SIM_FIELD(copy_small_ratio, SIM_SETTINGS_DOUBLE,
              "an answer under this x the largest recent one is small"),
    SIM_FIELD(copy_window, SIM_SETTINGS_U32, "copies' answers judged at once"),
    SIM_FIELD(copy_step, SIM_SETTINGS_DOUBLE,
              "change of copies per query per judgement"),
    SIM_FIELD(copy_probe_interval, SIM_SETTINGS_DURATION,
              "when no copies are sent, a few are tried this often"),
    SIM_FIELD(copy_probe_queries, SIM_SETTINGS_U32,
              "queries that get a copy then"),
    SIM_FIELD(answer_size_window, SIM_SETTINGS_DURATION,
              "span of the largest recent answer"),
    SIM_FIELD(down_copy_interval, SIM_SETTINGS_DURATION,
              "a down resolver gets a live copy this often"),
    SIM_FIELD(probe_name, SIM_SETTINGS_STRING,
              "name of a built probe query (empty: copy a client query)"),
    SIM_FIELD(probe_qtype, SIM_SETTINGS_U16, "type of the built probe"),
    SIM_FIELD(score_answer, SIM_SETTINGS_INT, "score change on an answer"),
    SIM_FIELD(score_refusal, SIM_SETTINGS_INT, "score change on a refusal"),
    SIM_FIELD(score_failure, SIM_SETTINGS_INT,
              "score change on a timeout or network error"),
    SIM_FIELD(stat_min_samples, SIM_SETTINGS_U32,
              "samples before lowest_latency/least_loss count them"),
    SIM_FIELD(ll_unknown_latency, SIM_SETTINGS_DURATION,
              "latency assumed before that"),
    SIM_FIELD(ll_unknown_loss, SIM_SETTINGS_U32,
              "loss per mille assumed before that"),
    SIM_FIELD(max_query_len, SIM_SETTINGS_SIZE,
              "longest client query kept, bytes"),
};

/* settings_balance_names is indexed by rp_balance. */
static const char *const settings_balance_names[] = {
    "auto", "roundrobin", "weighted", "lowest_latency", "least_loss"};

/* settings_level_names is indexed by rp_log_level. */
static const char *const settings_level_names[] = {"error", "warn", "info",
                                                   "debug"};

/* SETTINGS_NONE is the text of an unset duration. */
#define SETTINGS_NONE "none"

/* settings_type_size returns the width a type writes, or 0 for
   strings (any array size). */
static size_t settings_type_size(sim_settings_type type) {
  switch (type) {
  case SIM_SETTINGS_DURATION:
    return sizeof(rp_duration);
  case SIM_SETTINGS_U32:
    return sizeof(uint32_t);
  case SIM_SETTINGS_U16:
    return sizeof(uint16_t);
  case SIM_SETTINGS_INT:
  case SIM_SETTINGS_BOOL:
    return sizeof(int);
  case SIM_SETTINGS_SIZE:
    return sizeof(size_t);
  case SIM_SETTINGS_DOUBLE:
    return sizeof(double);
  case SIM_SETTINGS_BALANCE:
    return sizeof(rp_balance);
  case SIM_SETTINGS_LOG_LEVEL:
    return sizeof(rp_log_level);
  case SIM_SETTINGS_STRING:
    return 0;
  }
  return 0;
}

const sim_settings_field *sim_settings_fields(size_t *plen) {
  *plen = sizeof(settings_table) / sizeof(settings_table[0]);
  return settings_table;
}

const sim_settings_field *sim_settings_find(const char *name, size_t namelen) {
  size_t i;
  size_t n = sizeof(settings_table) / sizeof(settings_table[0]);
  for (i = 0; i < n; ++i) {
    if (strlen(settings_table[i].name) == namelen &&
        memcmp(settings_table[i].name, name, namelen) == 0) {
      return &settings_table[i];
    }
  }
  return NULL;
}

/* settings_err formats an error into |errbuf| when it is not NULL. */
static void settings_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void settings_err(char *errbuf, size_t errlen, const char *fmt, ...) {
  va_list ap;
  if (!errbuf || errlen == 0) {
    return;
  }
  va_start(ap, fmt);
  vsnprintf(errbuf, errlen, fmt, ap);
  va_end(ap);
}

/* settings_parse_u64 reads a plain unsigned decimal. Returns 0 or -1. */
static int settings_parse_u64(const char *text, uint64_t max, uint64_t *pval) {
  char *end = NULL;
  unsigned long long v;
  if (text[0] < '0' || text[0] > '9') {
    return -1;
  }
  errno = 0;
  v = strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v > max) {
    return -1;
  }
  *pval = (uint64_t)v;
  return 0;
}

/* settings_parse_name finds |text| in |names| (|n| of them). Returns the
   index or -1. */
static int settings_parse_name(const char *text, const char *const *names,
                               size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (strcmp(text, names[i]) == 0) {
      return (int)i;
    }
  }
  return -1;
}

/* settings_parse_value writes |text| as |field| into |dst|. Returns 0 or
   -1 and sets |*pwant| to what the value should look like. */
static int settings_parse_value(const sim_settings_field *field,
                                const char *text, uint8_t *dst,
                                const char **pwant) {
  uint64_t u = 0;
  switch (field->type) {
  case SIM_SETTINGS_DURATION: {
    rp_duration d = 0;
    *pwant = "a duration such as 300ms, 2s or none";
    if (strcmp(text, SETTINGS_NONE) == 0) {
      d = RP_TSTAMP_UNSET;
    } else if (fr_parse_duration(text, &d) != 0) {
      return -1;
    }
    memcpy(dst, &d, sizeof(d));
    return 0;
  }
  case SIM_SETTINGS_U32: {
    uint32_t v;
    *pwant = "an unsigned integer";
    if (settings_parse_u64(text, UINT32_MAX, &u) != 0) {
      return -1;
    }
    v = (uint32_t)u;
    memcpy(dst, &v, sizeof(v));
    return 0;
  }
  case SIM_SETTINGS_U16: {
    uint16_t v;
    *pwant = "an integer 0..65535";
    if (settings_parse_u64(text, UINT16_MAX, &u) != 0) {
      return -1;
    }
    v = (uint16_t)u;
    memcpy(dst, &v, sizeof(v));
    return 0;
  }
  case SIM_SETTINGS_SIZE: {
    size_t v;
    *pwant = "an unsigned integer";
    if (settings_parse_u64(text, SIZE_MAX, &u) != 0) {
      return -1;
    }
    v = (size_t)u;
    memcpy(dst, &v, sizeof(v));
    return 0;
  }
  case SIM_SETTINGS_INT: {
    char *end = NULL;
    long v;
    int iv;
    *pwant = "an integer";
    errno = 0;
    v = strtol(text, &end, 10);
    if (text[0] == '\0' || errno != 0 || *end != '\0' || v < INT32_MIN ||
        v > INT32_MAX) {
      return -1;
    }
    iv = (int)v;
    memcpy(dst, &iv, sizeof(iv));
    return 0;
  }
  case SIM_SETTINGS_DOUBLE: {
    char *end = NULL;
    double v;
    *pwant = "a decimal number";
    errno = 0;
    v = strtod(text, &end);
    if (text[0] == '\0' || errno != 0 || *end != '\0' || !isfinite(v)) {
      return -1;
    }
    memcpy(dst, &v, sizeof(v));
    return 0;
  }
  case SIM_SETTINGS_BOOL: {
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off"};
    int v;
    *pwant = "0/1, yes/no or true/false";
    if (settings_parse_name(text, yes, sizeof(yes) / sizeof(yes[0])) >= 0) {
      v = 1;
    } else if (settings_parse_name(text, no, sizeof(no) / sizeof(no[0])) >= 0) {
      v = 0;
    } else {
      return -1;
    }
    memcpy(dst, &v, sizeof(v));
    return 0;
  }
  case SIM_SETTINGS_BALANCE: {
    rp_balance v;
    int i = settings_parse_name(text, settings_balance_names,
                                sizeof(settings_balance_names) /
                                    sizeof(settings_balance_names[0]));
    *pwant = "auto, roundrobin, weighted, lowest_latency or least_loss";
    if (i < 0) {
      return -1;
    }
    v = (rp_balance)i;
    memcpy(dst, &v, sizeof(v));
    return 0;
  }
  case SIM_SETTINGS_LOG_LEVEL: {
    rp_log_level v;
    int i = settings_parse_name(text, settings_level_names,
                                sizeof(settings_level_names) /
                                    sizeof(settings_level_names[0]));
    *pwant = "error, warn, info or debug";
    if (i < 0) {
      return -1;
    }
    v = (rp_log_level)i;
    memcpy(dst, &v, sizeof(v));
    return 0;
  }
  case SIM_SETTINGS_STRING: {
    size_t len = strlen(text);
    *pwant = "a shorter string";
    if (len >= field->size) {
      return -1;
    }
    memcpy(dst, text, len + 1);
    return 0;
  }
  }
  return -1;
}

int sim_settings_set(rp_settings *settings, const char *assignment,
                     char *errbuf, size_t errlen) {
  const char *eq = strchr(assignment, '=');
  const sim_settings_field *field;
  const char *want = "";
  size_t tsize;
  if (!eq) {
    settings_err(errbuf, errlen, "--set: '%s' is not name=value", assignment);
    return RP_ERR_CONFIG;
  }
  field = sim_settings_find(assignment, (size_t)(eq - assignment));
  if (!field) {
    settings_err(errbuf, errlen,
                 "--set: unknown setting '%.*s' (--list-settings shows them)",
                 (int)(eq - assignment), assignment);
    return RP_ERR_CONFIG;
  }
  tsize = settings_type_size(field->type);
  if (tsize != 0 && tsize != field->size) {
    settings_err(errbuf, errlen, "--set %s: table entry has the wrong width",
                 field->name);
    return RP_ERR_CONFIG;
  }
  if (settings_parse_value(field, eq + 1, (uint8_t *)settings + field->offset,
                           &want) != 0) {
    settings_err(errbuf, errlen, "--set %s: bad value '%s' (want %s)",
                 field->name, eq + 1, want);
    return RP_ERR_CONFIG;
  }
  return 0;
}

/* settings_format_duration writes |d| in the syntax fr_parse_duration
   reads. */
static void settings_format_duration(rp_duration d, char *out, size_t cap) {
  if (d == RP_TSTAMP_UNSET) {
    snprintf(out, cap, "%s", SETTINGS_NONE);
  } else if (d == 0) {
    snprintf(out, cap, "0");
  } else if (d % RP_SECONDS == 0) {
    snprintf(out, cap, "%" PRIu64 "s", d / RP_SECONDS);
  } else if (d % RP_MILLISECONDS == 0) {
    snprintf(out, cap, "%" PRIu64 "ms", d / RP_MILLISECONDS);
  } else {
    snprintf(out, cap, "%gus", (double)d / (double)RP_MICROSECONDS);
  }
}

void sim_settings_format(const rp_settings *settings,
                         const sim_settings_field *field, char *out,
                         size_t cap) {
  const uint8_t *src = (const uint8_t *)settings + field->offset;
  switch (field->type) {
  case SIM_SETTINGS_DURATION: {
    rp_duration d;
    memcpy(&d, src, sizeof(d));
    settings_format_duration(d, out, cap);
    return;
  }
  case SIM_SETTINGS_U32: {
    uint32_t v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%" PRIu32, v);
    return;
  }
  case SIM_SETTINGS_U16: {
    uint16_t v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%u", (unsigned)v);
    return;
  }
  case SIM_SETTINGS_SIZE: {
    size_t v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%zu", v);
    return;
  }
  case SIM_SETTINGS_INT:
  case SIM_SETTINGS_BOOL: {
    int v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%d", v);
    return;
  }
  case SIM_SETTINGS_DOUBLE: {
    double v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%g", v);
    return;
  }
  case SIM_SETTINGS_BALANCE: {
    rp_balance v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%s",
             (size_t)v < sizeof(settings_balance_names) /
                             sizeof(settings_balance_names[0])
                 ? settings_balance_names[v]
                 : "?");
    return;
  }
  case SIM_SETTINGS_LOG_LEVEL: {
    rp_log_level v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%s",
             (size_t)v < sizeof(settings_level_names) /
                             sizeof(settings_level_names[0])
                 ? settings_level_names[v]
                 : "?");
    return;
  }
  case SIM_SETTINGS_STRING:
    snprintf(out, cap, "%.*s", (int)field->size, (const char *)src);
    return;
  }
}

void sim_settings_print(const rp_settings *settings, FILE *fp) {
  size_t n;
  size_t i;
  const sim_settings_field *fields = sim_settings_fields(&n);
  char value[SIM_SETTINGS_VALUELEN];
  for (i = 0; i < n; ++i) {
    sim_settings_format(settings, &fields[i], value, sizeof(value));
    fprintf(fp, "  %-20s %-10s %s\n", fields[i].name, value, fields[i].help);
  }
}
