/*
 * sim_scenario.c: scenario file reader (see sim_scenario.h).
 *
 * IMPLEMENTATION NOTES
 * - The reader knows only the line syntax; what a directive means is
 *   the caller's (respool-sim maps each to its long option), so the
 *   file and the command line cannot drift apart.
 */
#include "sim_scenario.h"

#include "respool.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* SIM_SCENARIO_KEY_MAX is the longest directive name. */
#define SIM_SCENARIO_KEY_MAX 32

/* SIM_SCENARIO_SUB_ERR is the room for the handler's own message. */
#define SIM_SCENARIO_SUB_ERR 200

/* scenario_trim strips trailing white space and a comment in place. */
static void scenario_trim(char *line) {
  char *hash = strchr(line, '#');
  size_t n;
  if (hash) {
    *hash = '\0';
  }
  n = strlen(line);
  while (n > 0 && isspace((unsigned char)line[n - 1])) {
    line[--n] = '\0';
  }
}

int sim_scenario_load(const char *path, sim_scenario_fn fn, void *user_data,
                      char *errbuf, size_t errlen) {
  FILE *fp = fopen(path, "r");
  char line[SIM_SCENARIO_LINE_MAX];
  unsigned lineno = 0;
  int rv = 0;
  if (!fp) {
    snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
    return RP_ERR_IO;
  }
  while (fgets(line, sizeof(line), fp)) {
    char key[SIM_SCENARIO_KEY_MAX];
    char sub[SIM_SCENARIO_SUB_ERR];
    char *p = line;
    size_t k = 0;
    ++lineno;
    if (!strchr(line, '\n') && !feof(fp)) {
      snprintf(errbuf, errlen, "%s:%u: line too long", path, lineno);
      rv = RP_ERR_CONFIG;
      break;
    }
    scenario_trim(line);
    while (isspace((unsigned char)*p)) {
      ++p;
    }
    if (*p == '\0') {
      continue;
    }
    while (*p && !isspace((unsigned char)*p) && k + 1 < sizeof(key)) {
      key[k++] = *p++;
    }
    key[k] = '\0';
    while (isspace((unsigned char)*p)) {
      ++p;
    }
    if (*p == '\0') {
      snprintf(errbuf, errlen, "%s:%u: '%s' needs an argument", path, lineno,
               key);
      rv = RP_ERR_CONFIG;
      break;
    }
    sub[0] = '\0';
    if (fn(key, p, user_data, sub, sizeof(sub)) != 0) {
      snprintf(errbuf, errlen, "%s:%u: %s", path, lineno, sub);
      rv = RP_ERR_CONFIG;
      break;
    }
  }
  fclose(fp);
  return rv;
}
