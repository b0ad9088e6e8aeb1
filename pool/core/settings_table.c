/*
 * settings_table.c: the fields of rp_settings by name (respool.h:
 * rp_settings_fields, rp_settings_set, rp_settings_format), shared by
 * the CLI's --set, the config's "tuning" object and respool-sim --set.
 *
 * IMPLEMENTATION NOTES
 * - The table is built with offsetof and sizeof, and every entry's size
 *   is checked against its type when it is used (and by a test), so a
 *   field whose type changes in respool.h cannot be written through the
 *   wrong width silently; a test also finds a field of rp_settings that
 *   has no line here.
 * - Durations are a decimal number with a unit (us, ms, s, m, h), "0"
 *   or "none" (unset): rp_duration_parse.
 */
#include "core.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SETTINGS_FIELD makes one table entry for the rp_settings field |f|. */
#define SETTINGS_FIELD(f, type, help)                                          \
  { #f, offsetof(rp_settings, f), sizeof(((rp_settings *)0)->f), type, help }

static const rp_settings_field settings_table[] = {
    SETTINGS_FIELD(
        load_balance, RP_SETTINGS_BALANCE,
        "strategy: auto|roundrobin|weighted|lowest_latency|least_loss"),
    SETTINGS_FIELD(deadline, RP_SETTINGS_DURATION,
                   "longest time for one query over all tries"),
    SETTINGS_FIELD(per_attempt, RP_SETTINGS_DURATION,
                   "longest try at one resolver"),
    SETTINGS_FIELD(probe_interval, RP_SETTINGS_DURATION,
                   "how often an idle down resolver is probed"),
    SETTINGS_FIELD(down_after, RP_SETTINGS_U32,
                   "timeouts in a row, no answer at all, before down"),
    SETTINGS_FIELD(duplicate, RP_SETTINGS_U32,
                   "most sends per query, copies included"),
    SETTINGS_FIELD(wait_for_token, RP_SETTINGS_BOOL,
                   "hold a query for a token (1) or fail it at once (0)"),
    SETTINGS_FIELD(max_inflight, RP_SETTINGS_SIZE,
                   "cap on client queries in flight"),
    SETTINGS_FIELD(max_resolvers, RP_SETTINGS_SIZE, "cap on resolvers"),
    SETTINGS_FIELD(log_level, RP_SETTINGS_LOG_LEVEL,
                   "core log level: error|warn|info|debug"),
    SETTINGS_FIELD(log_categories, RP_SETTINGS_U32,
                   "mask of RP_LOG_CAT_* (255 = all)"),
    SETTINGS_FIELD(latency_window, RP_SETTINGS_DURATION,
                   "span of the fastest-answer latency"),
    SETTINGS_FIELD(band_ratio, RP_SETTINGS_DOUBLE,
                   "equal-cost band: x the cheapest cost"),
    SETTINGS_FIELD(band_slack, RP_SETTINGS_DURATION,
                   "equal-cost band: additive slack"),
    SETTINGS_FIELD(band_loss, RP_SETTINGS_DOUBLE,
                   "equal-cost band: loss above the lowest, ratio"),
    SETTINGS_FIELD(loss_z, RP_SETTINGS_DOUBLE, "z of the loss Wilson interval"),
    SETTINGS_FIELD(loss_window, RP_SETTINGS_DOUBLE,
                   "time constant of the loss estimate, seconds"),
    SETTINGS_FIELD(probation_answers, RP_SETTINGS_U32,
                   "answers before a new resolver gets more than one query"),
    SETTINGS_FIELD(stale_caps, RP_SETTINGS_BOOL,
                   "1: a stale try in probation caps (the old, wrong rule)"),
    SETTINGS_FIELD(probation_strict, RP_SETTINGS_BOOL,
                   "1: probation keeps one query even when none else can"),
    SETTINGS_FIELD(tc_stream_tries, RP_SETTINGS_U32,
                   "stream tries of one query after truncated answers"),
    SETTINGS_FIELD(retry_left_out, RP_SETTINGS_DURATION,
                   "how often a left-out resolver is tried again"),
    SETTINGS_FIELD(retry_loss_stretch, RP_SETTINGS_DOUBLE,
                   "that gap x (1 + this x its loss), 0 to 1000"),
    SETTINGS_FIELD(cap_refusal_factor, RP_SETTINGS_DOUBLE,
                   "cap after a refusal, x recent answer rate"),
    SETTINGS_FIELD(cap_drop_factor, RP_SETTINGS_DOUBLE,
                   "cap after a drop, x recent answer rate"),
    SETTINGS_FIELD(cap_growth, RP_SETTINGS_DOUBLE,
                   "cap growth while answering, ratio per second"),
    SETTINGS_FIELD(cap_lift_after, RP_SETTINGS_DURATION,
                   "a cap holding nothing back this long is lifted"),
    SETTINGS_FIELD(rate_window, RP_SETTINGS_DURATION,
                   "span of the recent answer rate"),
    SETTINGS_FIELD(overflow_grace, RP_SETTINGS_DURATION,
                   "after overflow, refusals do not lower the cap this long"),
    SETTINGS_FIELD(
        quiet_spell, RP_SETTINGS_DURATION,
        "no trouble this long makes a refusal 'after a quiet spell'"),
    SETTINGS_FIELD(quiet_max_step, RP_SETTINGS_DOUBLE,
                   "largest cap cut after a quiet spell, ratio"),
    SETTINGS_FIELD(
        assume_answers, RP_SETTINGS_U32,
        "a first refusal before this many answers assumes assume_qps"),
    SETTINGS_FIELD(assume_qps, RP_SETTINGS_DOUBLE, "answer rate assumed, q/s"),
    SETTINGS_FIELD(bucket_depth, RP_SETTINGS_DURATION,
                   "token bucket depth as a span of the cap"),
    SETTINGS_FIELD(token_wait, RP_SETTINGS_DURATION,
                   "how long a query waits for a token"),
    SETTINGS_FIELD(past_cap_interval, RP_SETTINGS_DURATION,
                   "one waiting query per resolver per span goes past the cap"),
    SETTINGS_FIELD(
        trouble_recent, RP_SETTINGS_DURATION,
        "refused or lost this recently: no past-cap send, no growth"),
    SETTINGS_FIELD(loss_verdict_drops, RP_SETTINGS_U32,
                   "drops under a lowered cap that show random loss"),
    SETTINGS_FIELD(loss_verdict_ratio, RP_SETTINGS_DOUBLE,
                   "... with this share of the drop rate before, ratio"),
    SETTINGS_FIELD(random_loss_hold, RP_SETTINGS_DURATION,
                   "after that, drops are loss without a cap this long"),
    SETTINGS_FIELD(verdict_min_use, RP_SETTINGS_DURATION,
                   "first cap judged against the time before after this use"),
    SETTINGS_FIELD(drop_min_share, RP_SETTINGS_DOUBLE,
                   "drops start a cap from this share of replies, ratio"),
    SETTINGS_FIELD(drop_min_spread, RP_SETTINGS_U32,
                   "... spread over this many 100 ms buckets"),
    SETTINGS_FIELD(random_min_share, RP_SETTINGS_DOUBLE,
                   "random loss judged from this share of drops, ratio"),
    SETTINGS_FIELD(early_drop_loss, RP_SETTINGS_U32,
                   "drops counted as loss before an episode: 0 none, 1, 2"),
    SETTINGS_FIELD(level_min_tries, RP_SETTINGS_U32,
                   "a cap of an episode is lowered after this many tries"),
    SETTINGS_FIELD(hedge_devs, RP_SETTINGS_DOUBLE,
                   "hedge after mean + this many deviations"),
    SETTINGS_FIELD(hedge_min_dev, RP_SETTINGS_DURATION,
                   "smallest deviation term of the hedge time"),
    SETTINGS_FIELD(hedge_max_inflight, RP_SETTINGS_U32,
                   "no hedge while more queries are in flight (0: no bound)"),
    SETTINGS_FIELD(late_window, RP_SETTINGS_DURATION,
                   "late answers hold loss judgements back this long (0: off)"),
    SETTINGS_FIELD(hedge_initial, RP_SETTINGS_DURATION,
                   "hedge time while no latency is known (0: none)"),
    SETTINGS_FIELD(early_hedge_rtts, RP_SETTINGS_DOUBLE,
                   "early hedge at a lossy resolver, in fastest latencies"),
    SETTINGS_FIELD(lossy_recent, RP_SETTINGS_DURATION,
                   "a loss this recent makes a resolver 'lossy lately'"),
    SETTINGS_FIELD(hedge_lossy_loss, RP_SETTINGS_DOUBLE,
                   "loss lower bound above which a hedge may go anywhere"),
    SETTINGS_FIELD(max_hedges, RP_SETTINGS_U32, "most hedges per query"),
    SETTINGS_FIELD(copy_delay_rtt, RP_SETTINGS_DOUBLE,
                   "copy delay after the first send, in round trips"),
    SETTINGS_FIELD(copy_min_delay, RP_SETTINGS_DURATION,
                   "a copy due sooner than this goes with the first send"),
    SETTINGS_FIELD(copy_window, RP_SETTINGS_U32,
                   "copies' answers judged at once"),
    SETTINGS_FIELD(copy_step, RP_SETTINGS_DOUBLE,
                   "change of copies per query per judgement"),
    SETTINGS_FIELD(copy_data_share, RP_SETTINGS_DOUBLE,
                   "copies rise above this share of them carrying data"),
    SETTINGS_FIELD(copy_probe_interval, RP_SETTINGS_DURATION,
                   "when no copies are sent, a few are tried this often"),
    SETTINGS_FIELD(copy_probe_queries, RP_SETTINGS_U32,
                   "queries that get a copy then"),
    SETTINGS_FIELD(copy_max_inflight, RP_SETTINGS_U32,
                   "no copies while more client queries are in flight"),
    SETTINGS_FIELD(copy_inflight_rtt, RP_SETTINGS_DURATION,
                   "copy_max_inflight per this much round trip"),
    SETTINGS_FIELD(copy_ramp, RP_SETTINGS_DURATION,
                   "copy bound's growth after a start or a pause"),
    SETTINGS_FIELD(extra_budget, RP_SETTINGS_DOUBLE,
                   "copies + hedges at most this x first sends"),
    SETTINGS_FIELD(extra_window, RP_SETTINGS_DURATION,
                   "the span of that budget"),
    SETTINGS_FIELD(down_copy_interval, RP_SETTINGS_DURATION,
                   "a down resolver gets a live copy this often"),
    SETTINGS_FIELD(probe_name, RP_SETTINGS_STRING,
                   "name of a built probe query (empty: copy a client query)"),
    SETTINGS_FIELD(probe_qtype, RP_SETTINGS_U16, "type of the built probe"),
    SETTINGS_FIELD(score_answer, RP_SETTINGS_INT, "score change on an answer"),
    SETTINGS_FIELD(score_refusal, RP_SETTINGS_INT, "score change on a refusal"),
    SETTINGS_FIELD(score_failure, RP_SETTINGS_INT,
                   "score change on a timeout or network error"),
    SETTINGS_FIELD(stat_min_samples, RP_SETTINGS_U32,
                   "samples before lowest_latency/least_loss count them"),
    SETTINGS_FIELD(ll_unknown_latency, RP_SETTINGS_DURATION,
                   "latency assumed before that"),
    SETTINGS_FIELD(ll_unknown_loss, RP_SETTINGS_U32,
                   "loss per mille assumed before that"),
    SETTINGS_FIELD(case_randomize, RP_SETTINGS_BOOL,
                   "0x20: random letter case per try, checked (generic)"),
    SETTINGS_FIELD(case_fallback, RP_SETTINGS_U32,
                   "0x20 misses, unproven, before a resolver's case is not "
                   "checked"),
    SETTINGS_FIELD(case_proof_life, RP_SETTINGS_DURATION,
                   "a 0x20 proof holds off the fallback this long"),
    SETTINGS_FIELD(max_query_len, RP_SETTINGS_SIZE,
                   "longest client query kept, bytes"),
    SETTINGS_FIELD(udp_port_life, RP_SETTINGS_DURATION,
                   "a new UDP source port once the current is this old"),
};

/* SETTINGS_MAX_DURATION_S bounds a parsed duration, seconds (a day). */
#define SETTINGS_MAX_DURATION_S 86400.0
/* SETTINGS_S_PER_MIN and SETTINGS_S_PER_HOUR scale the m and h units. */
#define SETTINGS_S_PER_MIN 60.0
#define SETTINGS_S_PER_HOUR 3600.0

int rp_duration_parse(const char *text, rp_duration *pd) {
  static const struct {
    const char *unit;
    double ns;
  } units[] = {
      /* Two-letter units first: "ms" is not "m" then "s". */
      {"us", (double)RP_MICROSECONDS},
      {"ms", (double)RP_MILLISECONDS},
      {"s", (double)RP_SECONDS},
      {"m", SETTINGS_S_PER_MIN * (double)RP_SECONDS},
      {"h", SETTINGS_S_PER_HOUR * (double)RP_SECONDS},
  };
  const char *p = text;
  double total = 0.0;
  size_t i, n;

  if (text == NULL || text[0] < '0' || text[0] > '9') {
    return RP_ERR_CONFIG;
  }
  if (strcmp(text, "0") == 0) {
    *pd = 0;
    return 0;
  }
  /* One or more parts, each a number and a unit: "1m30s", "1s500ms". */
  while (*p != '\0') {
    char *end = NULL;
    double v;

    if (*p < '0' || *p > '9') {
      return RP_ERR_CONFIG;
    }
    errno = 0;
    v = strtod(p, &end);
    if (errno != 0 || end == p || !isfinite(v) || v < 0.0) {
      return RP_ERR_CONFIG;
    }
    p = end;
    for (i = 0; i < sizeof(units) / sizeof(units[0]); ++i) {
      n = strlen(units[i].unit);
      if (strncmp(p, units[i].unit, n) == 0) {
        break;
      }
    }
    if (i == sizeof(units) / sizeof(units[0])) {
      return RP_ERR_CONFIG;
    }
    p += n;
    total += v * units[i].ns;
  }
  /* Over a day, or under a nanosecond but not 0 (it would be stored as
     0), is refused. */
  if (total > SETTINGS_MAX_DURATION_S * (double)RP_SECONDS ||
      (total > 0.0 && total < 1.0)) {
    return RP_ERR_CONFIG;
  }
  *pd = (rp_duration)total;
  return 0;
}

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
static size_t settings_type_size(rp_settings_type type) {
  switch (type) {
  case RP_SETTINGS_DURATION:
    return sizeof(rp_duration);
  case RP_SETTINGS_U32:
    return sizeof(uint32_t);
  case RP_SETTINGS_U16:
    return sizeof(uint16_t);
  case RP_SETTINGS_INT:
  case RP_SETTINGS_BOOL:
    return sizeof(int);
  case RP_SETTINGS_SIZE:
    return sizeof(size_t);
  case RP_SETTINGS_DOUBLE:
    return sizeof(double);
  case RP_SETTINGS_BALANCE:
    return sizeof(rp_balance);
  case RP_SETTINGS_LOG_LEVEL:
    return sizeof(rp_log_level);
  case RP_SETTINGS_STRING:
    return 0;
  }
  return 0;
}

const rp_settings_field *rp_settings_fields(size_t *plen) {
  *plen = sizeof(settings_table) / sizeof(settings_table[0]);
  return settings_table;
}

const rp_settings_field *rp_settings_find(const char *name, size_t namelen) {
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
/* settings_parse_duration parses a duration or "none" into |dst|. */
static int settings_parse_duration(const char *text, uint8_t *dst) {
  rp_duration d = 0;

  if (strcmp(text, SETTINGS_NONE) == 0) {
    d = RP_TSTAMP_UNSET;
  } else if (rp_duration_parse(text, &d) != 0) {
    return -1;
  }
  memcpy(dst, &d, sizeof(d));
  return 0;
}

/* settings_parse_unsigned parses an unsigned integer up to |max| into
   |dst|, stored as the field's |type| (U32, U16 or SIZE). */
static int settings_parse_unsigned(rp_settings_type type, const char *text,
                                   uint64_t max, uint8_t *dst) {
  uint64_t u = 0;
  uint32_t u32;
  uint16_t u16;
  size_t sz;

  if (settings_parse_u64(text, max, &u) != 0) {
    return -1;
  }
  if (type == RP_SETTINGS_U32) {
    u32 = (uint32_t)u;
    memcpy(dst, &u32, sizeof(u32));
  } else if (type == RP_SETTINGS_U16) {
    u16 = (uint16_t)u;
    memcpy(dst, &u16, sizeof(u16));
  } else {
    sz = (size_t)u;
    memcpy(dst, &sz, sizeof(sz));
  }
  return 0;
}

/* settings_parse_int parses a signed 32-bit integer into |dst|. */
static int settings_parse_int(const char *text, uint8_t *dst) {
  char *end = NULL;
  long v;
  int iv;

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

/* settings_parse_double parses a finite decimal number into |dst|. */
static int settings_parse_double(const char *text, uint8_t *dst) {
  char *end = NULL;
  double v;

  errno = 0;
  v = strtod(text, &end);
  if (text[0] == '\0' || errno != 0 || *end != '\0' || !isfinite(v)) {
    return -1;
  }
  memcpy(dst, &v, sizeof(v));
  return 0;
}

/* settings_parse_bool parses 0/1, yes/no, true/false or on/off into
   |dst| (an int). */
static int settings_parse_bool(const char *text, uint8_t *dst) {
  static const char *const yes[] = {"1", "yes", "true", "on"};
  static const char *const no[] = {"0", "no", "false", "off"};
  int v;

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

/* settings_parse_balance parses a load_balance name into |dst|. */
static int settings_parse_balance(const char *text, uint8_t *dst) {
  rp_balance v;
  int i = settings_parse_name(text, settings_balance_names,
                              sizeof(settings_balance_names) /
                                  sizeof(settings_balance_names[0]));

  if (i < 0) {
    return -1;
  }
  v = (rp_balance)i;
  memcpy(dst, &v, sizeof(v));
  return 0;
}

/* settings_parse_level parses a log level name into |dst|. */
static int settings_parse_level(const char *text, uint8_t *dst) {
  rp_log_level v;
  int i = settings_parse_name(text, settings_level_names,
                              sizeof(settings_level_names) /
                                  sizeof(settings_level_names[0]));

  if (i < 0) {
    return -1;
  }
  v = (rp_log_level)i;
  memcpy(dst, &v, sizeof(v));
  return 0;
}

static int settings_parse_value(const rp_settings_field *field,
                                const char *text, uint8_t *dst,
                                const char **pwant) {
  size_t len;

  switch (field->type) {
  case RP_SETTINGS_DURATION:
    *pwant = "a duration such as 300ms, 2s or none";
    return settings_parse_duration(text, dst);
  case RP_SETTINGS_U32:
    *pwant = "an unsigned integer";
    return settings_parse_unsigned(field->type, text, UINT32_MAX, dst);
  case RP_SETTINGS_U16:
    *pwant = "an integer 0..65535";
    return settings_parse_unsigned(field->type, text, UINT16_MAX, dst);
  case RP_SETTINGS_SIZE:
    *pwant = "an unsigned integer";
    return settings_parse_unsigned(field->type, text, SIZE_MAX, dst);
  case RP_SETTINGS_INT:
    *pwant = "an integer";
    return settings_parse_int(text, dst);
  case RP_SETTINGS_DOUBLE:
    *pwant = "a decimal number";
    return settings_parse_double(text, dst);
  case RP_SETTINGS_BOOL:
    *pwant = "0/1, yes/no or true/false";
    return settings_parse_bool(text, dst);
  case RP_SETTINGS_BALANCE:
    *pwant = "auto, roundrobin, weighted, lowest_latency or least_loss";
    return settings_parse_balance(text, dst);
  case RP_SETTINGS_LOG_LEVEL:
    *pwant = "error, warn, info or debug";
    return settings_parse_level(text, dst);
  case RP_SETTINGS_STRING:
    len = strlen(text);
    *pwant = "a shorter string";
    if (len >= field->size) {
      return -1;
    }
    memcpy(dst, text, len + 1);
    return 0;
  }
  return -1;
}

int rp_settings_set(rp_settings *settings, const char *assignment, char *errbuf,
                    size_t errlen) {
  const char *eq = strchr(assignment, '=');
  const rp_settings_field *field;
  const char *want = "";
  rp_settings next;
  size_t tsize;
  if (!eq) {
    settings_err(errbuf, errlen, "'%s' is not name=value", assignment);
    return RP_ERR_CONFIG;
  }
  field = rp_settings_find(assignment, (size_t)(eq - assignment));
  if (!field) {
    settings_err(errbuf, errlen, "unknown setting '%.*s'",
                 (int)(eq - assignment), assignment);
    return RP_ERR_CONFIG;
  }
  tsize = settings_type_size(field->type);
  if (tsize != 0 && tsize != field->size) {
    settings_err(errbuf, errlen, "%s: table entry has the wrong width",
                 field->name);
    return RP_ERR_CONFIG;
  }
  next = *settings;
  if (settings_parse_value(field, eq + 1, (uint8_t *)&next + field->offset,
                           &want) != 0) {
    settings_err(errbuf, errlen, "%s: bad value '%s' (want %s)", field->name,
                 eq + 1, want);
    return RP_ERR_CONFIG;
  }
  /* A value of the right syntax but out of its field's range (a rule
     number past the last, a negative ratio): named here, not later as
     rp_pool_new's "invalid argument". */
  if (rp_settings_check(settings) == 0 && rp_settings_check(&next) != 0) {
    settings_err(errbuf, errlen, "%s: bad value '%s' (out of range)",
                 field->name, eq + 1);
    return RP_ERR_CONFIG;
  }
  *settings = next;
  return 0;
}

/* settings_format_duration writes |d| in the syntax rp_duration_parse
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

void rp_settings_format(const rp_settings *settings,
                        const rp_settings_field *field, char *out, size_t cap) {
  const uint8_t *src = (const uint8_t *)settings + field->offset;
  switch (field->type) {
  case RP_SETTINGS_DURATION: {
    rp_duration d;
    memcpy(&d, src, sizeof(d));
    settings_format_duration(d, out, cap);
    return;
  }
  case RP_SETTINGS_U32: {
    uint32_t v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%" PRIu32, v);
    return;
  }
  case RP_SETTINGS_U16: {
    uint16_t v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%u", (unsigned)v);
    return;
  }
  case RP_SETTINGS_SIZE: {
    size_t v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%zu", v);
    return;
  }
  case RP_SETTINGS_INT:
  case RP_SETTINGS_BOOL: {
    int v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%d", v);
    return;
  }
  case RP_SETTINGS_DOUBLE: {
    double v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%g", v);
    return;
  }
  case RP_SETTINGS_BALANCE: {
    rp_balance v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%s",
             (size_t)v < sizeof(settings_balance_names) /
                             sizeof(settings_balance_names[0])
                 ? settings_balance_names[v]
                 : "?");
    return;
  }
  case RP_SETTINGS_LOG_LEVEL: {
    rp_log_level v;
    memcpy(&v, src, sizeof(v));
    snprintf(out, cap, "%s",
             (size_t)v < sizeof(settings_level_names) /
                             sizeof(settings_level_names[0])
                 ? settings_level_names[v]
                 : "?");
    return;
  }
  case RP_SETTINGS_STRING:
    snprintf(out, cap, "%.*s", (int)field->size, (const char *)src);
    return;
  }
}
