/*
 * fr_profile.c: the behaviour of one fake resolver (see fr_profile.h).
 *
 * IMPLEMENTATION NOTES
 *
 * Rate limit. A token bucket in integer fixed point, so counts are exact
 * and the simulator is deterministic: the rate is in milli-queries per
 * second and time in nanoseconds, so one nanosecond at one milli-query
 * per second adds one bucket unit and a token is FR_BUCKET_UNIT (10^12)
 * units. The bucket starts full. Its default depth is a tenth of a second
 * of rate (FR_DEFAULT_BURST_DIVISOR), at least one token: deep enough that
 * a client sending evenly at the rate is never refused for timer noise,
 * shallow enough that a 5 s measurement of a 30 q/s resolver is 30 q/s
 * within 2 % (3 extra answers in 150). Real resolvers' bursts are not
 * published; set burst= to model a deeper one.
 *
 * Loss. One draw decides whether the exchange is lost and, with an
 * independent bit of the same draw, whether on the way in (the resolver
 * never sees the query, no token is spent) or on the way out (the
 * resolver spent a token and, in upstream mode, forwarded it; only the
 * answer is lost). Both halves are equally likely. A refusal can be lost
 * on the way out too.
 *
 * Latency. Each answer leaves after latency plus a uniform offset in
 * [-jitter, +jitter], clamped at 0: the median stays at latency.
 * Refusals take the same delay, since latency models the path.
 *
 * Left out: bursts of loss (Gilbert-Elliott), rate limits per client
 * address, and latency that grows with load. The simulator can add them
 * around this module.
 */
#include "fr_profile.h"

#include "dns.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* FR_BUCKET_UNIT is one token in bucket units (ns x milli-q/s). */
#define FR_BUCKET_UNIT 1000000000000ULL

/* FR_DEFAULT_BURST_DIVISOR: the default bucket depth is 1/10 s of rate. */
#define FR_DEFAULT_BURST_DIVISOR 10u

/* FR_MAX_RATE_QPS bounds rate= so the bucket arithmetic cannot overflow
   (ten million q/s is far past anything a loopback fake serves). */
#define FR_MAX_RATE_QPS 10000000ULL

/* FR_MAX_BURST_TOKENS bounds burst= for the same reason: a million
   tokens is FR_BUCKET_UNIT x 10^6 = 10^18 units, under UINT64_MAX. */
#define FR_MAX_BURST_TOKENS 1000000ULL

/* FR_MAX_DURATION bounds latency= and jitter= (one hour). */
#define FR_MAX_DURATION (3600ULL * RP_SECONDS)

/* FR_MINUTE is the unit "m" of durations. */
#define FR_MINUTE (60 * RP_SECONDS)

/* FR_NANO is the scale of parse_fixed: 10^9 units per whole number. */
#define FR_NANO 1000000000ULL

/* FR_MAX_FIXED_INT bounds the integer part accepted by parse_fixed so
   the scaled value stays under UINT64_MAX. */
#define FR_MAX_FIXED_INT 1000000000ULL

/* FR_PERCENT is 100 %. */
#define FR_PERCENT 100ULL

/* FR_DEFAULT_ADDR is 127.0.0.1. */
static const uint8_t fr_default_addr[4] = {127, 0, 0, 1};

/* Bit of a loss draw that picks "after the resolver" over "before". */
#define FR_LOSS_AFTER_BIT (1ULL << 31)

/* Shift taking the high 32 bits of a draw. */
#define FR_HIGH32_SHIFT 32

/* splitmix64 constants (Steele, Lea, Flood, "Fast splittable
   pseudorandom number generators", OOPSLA 2014). */
#define FR_SPLITMIX_GAMMA 0x9e3779b97f4a7c15ULL
#define FR_SPLITMIX_MUL1 0xbf58476d1ce4e5b9ULL
#define FR_SPLITMIX_MUL2 0x94d049bb133111ebULL
#define FR_SPLITMIX_SHIFT1 30
#define FR_SPLITMIX_SHIFT2 27
#define FR_SPLITMIX_SHIFT3 31

/* Bytes of a dotted-quad IPv4 address and its largest byte. */
#define FR_IPV4_LEN 4
#define FR_IPV4_BYTE_MAX 255u
#define FR_PORT_MAX 65535u

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

const char *fr_over_str(fr_over over) {
  switch (over) {
  case FR_OVER_REFUSE:
    return "refuse";
  case FR_OVER_SERVFAIL:
    return "servfail";
  case FR_OVER_DROP:
    return "drop";
  }
  return "?";
}

const char *fr_verdict_str(fr_verdict verdict) {
  switch (verdict) {
  case FR_VERDICT_ANSWER:
    return "answer";
  case FR_VERDICT_REFUSE:
    return "refuse";
  case FR_VERDICT_DROP:
    return "drop";
  case FR_VERDICT_LOSE_BEFORE:
    return "lose_before";
  case FR_VERDICT_LOSE_AFTER:
    return "lose_after";
  case FR_VERDICT_DEAD:
    return "dead";
  }
  return "?";
}

/* ------------------------------------------------------------------ */
/* Random source                                                        */
/* ------------------------------------------------------------------ */

void fr_rng_seed(fr_rng *rng, uint64_t seed) { rng->state = seed; }

uint64_t fr_rng_next(void *user_data) {
  fr_rng *rng = user_data;
  uint64_t z;

  rng->state += FR_SPLITMIX_GAMMA;
  z = rng->state;
  z = (z ^ (z >> FR_SPLITMIX_SHIFT1)) * FR_SPLITMIX_MUL1;
  z = (z ^ (z >> FR_SPLITMIX_SHIFT2)) * FR_SPLITMIX_MUL2;
  return z ^ (z >> FR_SPLITMIX_SHIFT3);
}

/* ------------------------------------------------------------------ */
/* Spec                                                                 */
/* ------------------------------------------------------------------ */

void fr_spec_default(fr_spec *spec) {
  *spec = (fr_spec){
      .name = "",
      .rate_mqps = 0,
      .burst_milli = 0,
      .over = FR_OVER_REFUSE,
      .latency = 0,
      .jitter = 0,
      .loss_ppm = 0,
      .dead = 0,
      .port = 0,
  };
  memcpy(spec->addr, fr_default_addr, sizeof(spec->addr));
}

uint64_t fr_spec_burst_milli(const fr_spec *spec) {
  uint64_t burst;

  if (spec->rate_mqps == 0) {
    return 0;
  }
  if (spec->burst_milli != 0) {
    return spec->burst_milli;
  }
  burst = spec->rate_mqps / FR_DEFAULT_BURST_DIVISOR;
  if (burst < FR_MILLI) {
    burst = FR_MILLI;
  }
  return burst;
}

void fr_set_err(char *errbuf, size_t errlen, const char *fmt, ...) {
  va_list ap;

  if (errbuf == NULL || errlen == 0) {
    return;
  }
  va_start(ap, fmt);
  vsnprintf(errbuf, errlen, fmt, ap);
  va_end(ap);
}

/* span is a piece of the spec text (not NUL ended). */
typedef struct span {
  const char *p;
  size_t n;
} span;

static int span_is(span s, const char *word) {
  size_t n = strlen(word);
  return s.n == n && memcmp(s.p, word, n) == 0;
}

/* parse_fixed reads "D[.D]" at the start of |s| as a value scaled by
   FR_NANO and stores it in |*pval|; |*pused| receives the bytes read.
   Returns 0, or -1 when there is no digit, the integer part exceeds
   FR_MAX_FIXED_INT or there are more than nine decimals. */
static int parse_fixed(span s, uint64_t *pval, size_t *pused) {
  size_t i = 0;
  uint64_t whole = 0;
  uint64_t frac = 0;
  uint64_t scale = FR_NANO;
  int digits = 0;

  while (i < s.n && s.p[i] >= '0' && s.p[i] <= '9') {
    whole = whole * 10 + (uint64_t)(s.p[i] - '0');
    if (whole > FR_MAX_FIXED_INT) {
      return -1;
    }
    ++i;
    digits = 1;
  }
  if (i < s.n && s.p[i] == '.') {
    ++i;
    while (i < s.n && s.p[i] >= '0' && s.p[i] <= '9') {
      if (scale == 1) {
        return -1;
      }
      scale /= 10;
      frac += (uint64_t)(s.p[i] - '0') * scale;
      ++i;
      digits = 1;
    }
  }
  if (!digits) {
    return -1;
  }
  *pval = whole * FR_NANO + frac;
  *pused = i;
  return 0;
}

/* parse_uint reads a whole decimal number of at most |max| filling all of
   |s|. Returns 0 or -1. */
static int parse_uint(span s, uint64_t max, uint64_t *pval) {
  uint64_t v = 0;
  size_t i;

  if (s.n == 0) {
    return -1;
  }
  for (i = 0; i < s.n; ++i) {
    if (s.p[i] < '0' || s.p[i] > '9') {
      return -1;
    }
    v = v * 10 + (uint64_t)(s.p[i] - '0');
    if (v > max) {
      return -1;
    }
  }
  *pval = v;
  return 0;
}

/* parse_duration reads "0" or a number with a unit us, ms, s or m into
   nanoseconds, at most FR_MAX_DURATION. Returns 0 or -1. */
static int parse_duration(span s, rp_duration *pval) {
  uint64_t v;
  size_t used;
  span unit;
  uint64_t mult;

  if (parse_fixed(s, &v, &used) != 0) {
    return -1;
  }
  unit = (span){.p = s.p + used, .n = s.n - used};
  if (unit.n == 0) {
    if (v != 0) {
      return -1;
    }
    *pval = 0;
    return 0;
  }
  if (span_is(unit, "us")) {
    mult = RP_MICROSECONDS;
  } else if (span_is(unit, "ms")) {
    mult = RP_MILLISECONDS;
  } else if (span_is(unit, "s")) {
    mult = RP_SECONDS;
  } else if (span_is(unit, "m")) {
    mult = FR_MINUTE;
  } else {
    return -1;
  }
  /* v is scaled by FR_NANO; v / FR_NANO * mult without overflow: reject
     anything over an hour first. */
  if (v / FR_NANO > FR_MAX_DURATION / mult) {
    return -1;
  }
  /* Every unit is a whole number of microseconds, so the fraction is
     scaled in microseconds (no overflow: under 10^9 x 6 x 10^7) and
     rounded down to the nanosecond. */
  *pval = (v / FR_NANO) * mult + (v % FR_NANO) * (mult / RP_MICROSECONDS) /
                                     (FR_NANO / RP_MICROSECONDS);
  if (*pval > FR_MAX_DURATION) {
    return -1;
  }
  return 0;
}

int fr_parse_duration(const char *text, rp_duration *pval) {
  span s = {.p = text, .n = strlen(text)};
  return parse_duration(s, pval) == 0 ? 0 : RP_ERR_CONFIG;
}

/* parse_ipv4 reads a dotted quad into |addr|. Returns 0 or -1. */
static int parse_ipv4(span s, uint8_t addr[FR_IPV4_LEN]) {
  size_t i = 0;
  int part;

  for (part = 0; part < FR_IPV4_LEN; ++part) {
    size_t start = i;
    uint64_t v;

    while (i < s.n && s.p[i] != '.') {
      ++i;
    }
    if (i - start > 3 || parse_uint((span){.p = s.p + start, .n = i - start},
                                    FR_IPV4_BYTE_MAX, &v) != 0) {
      return -1;
    }
    addr[part] = (uint8_t)v;
    if (part < FR_IPV4_LEN - 1) {
      if (i >= s.n) {
        return -1;
      }
      ++i; /* the dot */
    }
  }
  return i == s.n ? 0 : -1;
}

/* parse_bool reads 1/0/yes/no/true/false. Returns 0 or -1. */
static int parse_bool(span s, int *pval) {
  if (span_is(s, "1") || span_is(s, "yes") || span_is(s, "true")) {
    *pval = 1;
    return 0;
  }
  if (span_is(s, "0") || span_is(s, "no") || span_is(s, "false")) {
    *pval = 0;
    return 0;
  }
  return -1;
}

static int name_char_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

/* The keys, in the order of the seen[] bits. */
enum fr_key {
  FR_KEY_NAME = 0,
  FR_KEY_RATE,
  FR_KEY_BURST,
  FR_KEY_OVER,
  FR_KEY_LATENCY,
  FR_KEY_JITTER,
  FR_KEY_LOSS,
  FR_KEY_DEAD,
  FR_KEY_ADDR,
  FR_KEY_PORT,
  FR_KEY_COUNT
};

static const char *const fr_key_names[FR_KEY_COUNT] = {
    [FR_KEY_NAME] = "name",       [FR_KEY_RATE] = "rate",
    [FR_KEY_BURST] = "burst",     [FR_KEY_OVER] = "over",
    [FR_KEY_LATENCY] = "latency", [FR_KEY_JITTER] = "jitter",
    [FR_KEY_LOSS] = "loss",       [FR_KEY_DEAD] = "dead",
    [FR_KEY_ADDR] = "addr",       [FR_KEY_PORT] = "port",
};

/* What each key expects, for the error message. */
static const char *const fr_key_wants[FR_KEY_COUNT] = {
    [FR_KEY_NAME] = "1-31 of [A-Za-z0-9._-]",
    [FR_KEY_RATE] = "queries per second, 0 = unlimited",
    [FR_KEY_BURST] = "tokens, at least 1",
    [FR_KEY_OVER] = "refuse, servfail or drop",
    [FR_KEY_LATENCY] = "a duration such as 60ms, 2s, 1m, up to 1 hour",
    [FR_KEY_JITTER] = "a duration such as 5ms, up to 1 hour",
    [FR_KEY_LOSS] = "a percentage 0-100 such as 10%",
    [FR_KEY_DEAD] = "nothing, or 1/0/yes/no/true/false",
    [FR_KEY_ADDR] = "a dotted IPv4 address such as 127.0.0.2",
    [FR_KEY_PORT] = "a port 0-65535, 0 = any free port",
};

/* apply_key sets key |k| from |val| (|has_val| is 0 for a bare key).
   Returns 0 or -1 for a bad value. */
static int apply_key(fr_spec *spec, enum fr_key k, span val, int has_val) {
  uint64_t v;
  size_t used;

  if (!has_val && k != FR_KEY_DEAD) {
    return -1;
  }
  switch (k) {
  case FR_KEY_NAME: {
    size_t i;
    if (val.n == 0 || val.n >= FR_NAME_MAX) {
      return -1;
    }
    for (i = 0; i < val.n; ++i) {
      if (!name_char_ok(val.p[i])) {
        return -1;
      }
    }
    memcpy(spec->name, val.p, val.n);
    spec->name[val.n] = '\0';
    return 0;
  }
  case FR_KEY_RATE:
    if (parse_fixed(val, &v, &used) != 0 || used != val.n ||
        v > FR_MAX_RATE_QPS * FR_NANO) {
      return -1;
    }
    spec->rate_mqps = v / (FR_NANO / FR_MILLI);
    if (v != 0 && spec->rate_mqps == 0) {
      return -1; /* under one milli-query per second */
    }
    return 0;
  case FR_KEY_BURST:
    if (parse_fixed(val, &v, &used) != 0 || used != val.n || v < FR_NANO ||
        v > FR_MAX_BURST_TOKENS * FR_NANO) {
      return -1;
    }
    spec->burst_milli = v / (FR_NANO / FR_MILLI);
    return 0;
  case FR_KEY_OVER:
    if (span_is(val, "refuse")) {
      spec->over = FR_OVER_REFUSE;
    } else if (span_is(val, "servfail")) {
      spec->over = FR_OVER_SERVFAIL;
    } else if (span_is(val, "drop")) {
      spec->over = FR_OVER_DROP;
    } else {
      return -1;
    }
    return 0;
  case FR_KEY_LATENCY:
    return parse_duration(val, &spec->latency);
  case FR_KEY_JITTER:
    return parse_duration(val, &spec->jitter);
  case FR_KEY_LOSS:
    if (parse_fixed(val, &v, &used) != 0) {
      return -1;
    }
    if (!(used == val.n || (used + 1 == val.n && val.p[used] == '%')) ||
        v > FR_PERCENT * FR_NANO) {
      return -1;
    }
    /* v is a percentage scaled by 10^9; ppm = % x 10^4. */
    spec->loss_ppm = (uint32_t)(v / (FR_NANO / (FR_PPM / FR_PERCENT)));
    return 0;
  case FR_KEY_DEAD:
    if (!has_val) {
      spec->dead = 1;
      return 0;
    }
    return parse_bool(val, &spec->dead);
  case FR_KEY_ADDR:
    return parse_ipv4(val, spec->addr);
  case FR_KEY_PORT:
    if (parse_uint(val, FR_PORT_MAX, &v) != 0) {
      return -1;
    }
    spec->port = (uint16_t)v;
    return 0;
  case FR_KEY_COUNT:
    break;
  }
  return -1;
}

int fr_spec_parse(fr_spec *spec, const char *text, char *errbuf,
                  size_t errlen) {
  unsigned seen = 0;
  const char *p = text;
  int rv = RP_ERR_CONFIG;

  if (errbuf != NULL && errlen > 0) {
    errbuf[0] = '\0';
  }
  if (*p == '\0') {
    return 0;
  }
  for (;;) {
    const char *end = strchr(p, ',');
    span item;
    span key;
    span val = {.p = NULL, .n = 0};
    const char *eq;
    int has_val = 0;
    int k;

    item.p = p;
    item.n = end != NULL ? (size_t)(end - p) : strlen(p);
    if (item.n == 0) {
      fr_set_err(errbuf, errlen, "empty item in spec '%s'", text);
      goto fail;
    }
    eq = memchr(item.p, '=', item.n);
    key.p = item.p;
    key.n = eq != NULL ? (size_t)(eq - item.p) : item.n;
    if (eq != NULL) {
      has_val = 1;
      val.p = eq + 1;
      val.n = item.n - key.n - 1;
    }
    for (k = 0; k < FR_KEY_COUNT; ++k) {
      if (span_is(key, fr_key_names[k])) {
        break;
      }
    }
    if (k == FR_KEY_COUNT) {
      fr_set_err(errbuf, errlen,
                 "unknown key '%.*s' (known: name, rate, burst, over, "
                 "latency, jitter, loss, dead, addr, port)",
                 (int)key.n, key.p);
      goto fail;
    }
    if (seen & (1u << k)) {
      fr_set_err(errbuf, errlen, "%s: given twice", fr_key_names[k]);
      goto fail;
    }
    seen |= 1u << k;
    if (!has_val && k != FR_KEY_DEAD) {
      fr_set_err(errbuf, errlen, "%s: missing '=value' (want %s)",
                 fr_key_names[k], fr_key_wants[k]);
      goto fail;
    }
    if (apply_key(spec, (enum fr_key)k, val, has_val) != 0) {
      fr_set_err(errbuf, errlen, "%s: bad value '%.*s' (want %s)",
                 fr_key_names[k], (int)val.n, val.p != NULL ? val.p : "",
                 fr_key_wants[k]);
      goto fail;
    }
    if (end == NULL) {
      break;
    }
    p = end + 1;
    if (*p == '\0') {
      fr_set_err(errbuf, errlen, "empty item at the end of spec '%s'", text);
      goto fail;
    }
  }
  rv = 0;
fail:
  return rv;
}

/* ------------------------------------------------------------------ */
/* Profile                                                              */
/* ------------------------------------------------------------------ */

void fr_profile_init(fr_profile *profile, const fr_spec *spec, rp_tstamp now) {
  uint64_t burst_milli = fr_spec_burst_milli(spec);

  assert(burst_milli <= FR_MAX_BURST_TOKENS * FR_MILLI);
  *profile = (fr_profile){
      .spec = *spec,
      .burst = burst_milli * (FR_BUCKET_UNIT / FR_MILLI),
      .level = burst_milli * (FR_BUCKET_UNIT / FR_MILLI),
      .last = now,
      .stats = {0},
  };
}

/* bucket_level returns the bucket content at |now| in bucket units. */
static uint64_t bucket_level(const fr_profile *profile, rp_tstamp now) {
  uint64_t rate = profile->spec.rate_mqps;
  uint64_t elapsed;
  uint64_t missing;

  if (now <= profile->last) {
    return profile->level;
  }
  elapsed = now - profile->last;
  missing = profile->burst - profile->level;
  /* elapsed * rate >= missing, tested without overflow. */
  if (elapsed >= missing / rate + 1) {
    return profile->burst;
  }
  return profile->level + elapsed * rate;
}

uint64_t fr_profile_tokens(const fr_profile *profile, rp_tstamp now) {
  if (profile->spec.rate_mqps == 0) {
    return UINT64_MAX;
  }
  return bucket_level(profile, now) / FR_BUCKET_UNIT;
}

/* take_token refills the bucket to |now| and takes one token. Returns 1
   if there was one, 0 if the query is over the limit. */
static int take_token(fr_profile *profile, rp_tstamp now) {
  if (profile->spec.rate_mqps == 0) {
    return 1;
  }
  assert(now >= profile->last);
  profile->level = bucket_level(profile, now);
  profile->last = now;
  if (profile->level < FR_BUCKET_UNIT) {
    return 0;
  }
  profile->level -= FR_BUCKET_UNIT;
  return 1;
}

/* draw_delay returns latency + uniform [-jitter, +jitter], clamped. */
static rp_duration draw_delay(const fr_spec *spec, fr_rand_fn rand_fn,
                              void *rand_data) {
  uint64_t span_ns;
  uint64_t offset;

  if (spec->jitter == 0) {
    return spec->latency;
  }
  span_ns = 2 * spec->jitter + 1;
  offset = rand_fn(rand_data) % span_ns;
  if (spec->latency + offset < spec->jitter) {
    return 0;
  }
  return spec->latency + offset - spec->jitter;
}

void fr_profile_decide(fr_profile *profile, rp_tstamp now, fr_rand_fn rand_fn,
                       void *rand_data, fr_decision *decision) {
  const fr_spec *spec = &profile->spec;
  int lose_before = 0;
  int lose_after = 0;

  *decision = (fr_decision){
      .verdict = FR_VERDICT_DEAD, .delay = 0, .rcode = RP_DNS_RCODE_NOERROR};
  ++profile->stats.queries;
  if (spec->dead) {
    ++profile->stats.dead;
    return;
  }
  if (spec->loss_ppm != 0) {
    uint64_t r = rand_fn(rand_data);
    /* The high 32 bits scaled to [0, FR_PPM). */
    uint64_t x = ((r >> FR_HIGH32_SHIFT) * FR_PPM) >> FR_HIGH32_SHIFT;
    if (x < spec->loss_ppm) {
      if (r & FR_LOSS_AFTER_BIT) {
        lose_after = 1;
      } else {
        lose_before = 1;
      }
    }
  }
  if (lose_before) {
    decision->verdict = FR_VERDICT_LOSE_BEFORE;
    ++profile->stats.lost_before;
    return;
  }
  if (!take_token(profile, now)) {
    if (spec->over == FR_OVER_DROP) {
      decision->verdict = FR_VERDICT_DROP;
      ++profile->stats.dropped;
      return;
    }
    if (lose_after) {
      decision->verdict = FR_VERDICT_LOSE_AFTER;
      ++profile->stats.lost_after;
      return;
    }
    decision->verdict = FR_VERDICT_REFUSE;
    decision->rcode = spec->over == FR_OVER_SERVFAIL
                          ? (uint8_t)RP_DNS_RCODE_SERVFAIL
                          : (uint8_t)RP_DNS_RCODE_REFUSED;
    decision->delay = draw_delay(spec, rand_fn, rand_data);
    ++profile->stats.refused;
    return;
  }
  if (lose_after) {
    decision->verdict = FR_VERDICT_LOSE_AFTER;
    ++profile->stats.lost_after;
    return;
  }
  decision->verdict = FR_VERDICT_ANSWER;
  decision->delay = draw_delay(spec, rand_fn, rand_data);
  ++profile->stats.answered;
}
