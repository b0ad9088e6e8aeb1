/*
 * log.c: the respool command's event log (see cli.h): one event a line,
 * on stderr or in a file (--log-file), with a wall-clock RFC 3339 time,
 * as text or as JSON (--log-format json).
 *
 * Text:  respool: 2026-12-02T05:59:47.123Z warn ev=cap srv=0 why=refusal
 * JSON:  {"time":"2026-12-02T05:59:47.123Z","level":"warn","ev":"cap",
 *         "srv":"0","why":"refusal"}
 * In JSON a pool line's key=value words become members (values as
 * strings); the other words form "msg". A line is written with one
 * fputs and flushed, so lines of a log file do not interleave.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

/* CLI_LOG_LINE is the longest line kept (longer ones are cut). */
#define CLI_LOG_LINE 2048

static FILE *log_out;
static cli_log_format log_format = CLI_LOG_TEXT;
/* log_level bounds the command's own lines (the pool filters its own). */
static rp_log_level log_level = RP_LOG_INFO;

static const char *const log_names[] = {"error", "warn", "info", "debug"};

int cli_log_open(const char *path, cli_log_format format, rp_log_level level,
                 char *err, size_t errlen) {
  log_format = format;
  log_level = level;
  log_out = stderr;
  if (path == NULL) {
    return 0;
  }
  log_out = fopen(path, "a");
  if (log_out == NULL) {
    snprintf(err, errlen, "command line: --log-file: cannot open %s: %s", path,
             strerror(errno));
    log_out = stderr;
    return -1;
  }
  return 0;
}

void cli_log_close(void) {
  if (log_out != NULL && log_out != stderr) {
    fclose(log_out);
  }
  log_out = stderr;
}

/* log_time writes the wall-clock time as RFC 3339 UTC with ms. */
static void log_time(char *out, size_t cap) {
  struct timespec ts;
  struct tm tm;
  size_t n;

  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out + n, cap - n, ".%03dZ", (int)(ts.tv_nsec / 1000000L) % 1000);
}

/* log_json_str appends |s| (|n| bytes) to |out| as a JSON string body. */
static size_t log_json_str(char *out, size_t at, size_t cap, const char *s,
                           size_t n) {
  size_t i;

  for (i = 0; i < n && at + 7 < cap; ++i) {
    unsigned char ch = (unsigned char)s[i];

    if (ch == '"' || ch == '\\') {
      out[at++] = '\\';
      out[at++] = (char)ch;
    } else if (ch < 0x20) {
      at += (size_t)snprintf(out + at, cap - at, "\\u%04x", ch);
    } else {
      out[at++] = (char)ch;
    }
  }
  return at;
}

/* log_json builds the JSON line of |msg| into |out|. */
static void log_json(char *out, size_t cap, const char *when, const char *level,
                     const char *msg) {
  char rest[CLI_LOG_LINE];
  size_t at, nrest = 0;
  const char *p = msg;

  at = (size_t)snprintf(out, cap, "{\"time\":\"%s\",\"level\":\"%s\"", when,
                        level);
  while (*p != '\0') {
    const char *w = p, *eq = NULL;
    size_t n;

    while (*p != '\0' && *p != ' ') {
      if (*p == '=' && eq == NULL) {
        eq = p;
      }
      ++p;
    }
    n = (size_t)(p - w);
    if (eq != NULL && eq > w && at + 8 < cap) {
      out[at++] = ',';
      out[at++] = '"';
      at = log_json_str(out, at, cap, w, (size_t)(eq - w));
      memcpy(out + at, "\":\"", 3);
      at += 3;
      at = log_json_str(out, at, cap, eq + 1, (size_t)(p - eq - 1));
      out[at++] = '"';
    } else if (n > 0 && nrest + n + 1 < sizeof(rest)) {
      if (nrest > 0) {
        rest[nrest++] = ' ';
      }
      memcpy(rest + nrest, w, n);
      nrest += n;
    }
    while (*p == ' ') {
      ++p;
    }
  }
  if (nrest > 0 && at + 12 < cap) {
    memcpy(out + at, ",\"msg\":\"", 8);
    at += 8;
    at = log_json_str(out, at, cap, rest, nrest);
    out[at++] = '"';
  }
  if (at + 3 > cap) {
    at = cap - 3;
  }
  out[at++] = '}';
  out[at++] = '\n';
  out[at] = '\0';
}

/* log_write writes one event of |level| with the text |msg|. */
static void log_write(rp_log_level level, const char *msg) {
  char when[40], line[CLI_LOG_LINE + 256];
  const char *name = (size_t)level < sizeof(log_names) / sizeof(log_names[0])
                         ? log_names[level]
                         : "?";
  FILE *f = log_out ? log_out : stderr;

  log_time(when, sizeof(when));
  if (log_format == CLI_LOG_JSON) {
    log_json(line, sizeof(line), when, name, msg);
  } else {
    snprintf(line, sizeof(line), "respool: %s %s %s\n", when, name, msg);
  }
  fputs(line, f);
  fflush(f);
}

void cli_log(rp_log_level level, const char *line, void *user_data) {
  (void)user_data;
  log_write(level, line);
}

void cli_logf(rp_log_level level, const char *fmt, ...) {
  char msg[CLI_LOG_LINE];
  va_list ap;

  if (level > log_level) {
    return;
  }
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  log_write(level, msg);
}

int cli_log_parse_level(const char *text, rp_log_level *level) {
  size_t i;

  for (i = 0; i < sizeof(log_names) / sizeof(log_names[0]); ++i) {
    if (strcmp(text, log_names[i]) == 0) {
      *level = (rp_log_level)i;
      return 0;
    }
  }
  return -1;
}
