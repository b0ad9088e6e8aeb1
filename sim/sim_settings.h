/*
 * sim_settings.h: rp_settings fields by name, for `respool-sim --set`.
 *
 * A table maps each tunable field of rp_settings to its name (the C
 * field name), its type and a one-line help. `--set band_ratio=1.5`
 * goes through sim_settings_set; `--list-settings` prints the table
 * with the values of a kind's defaults. An unknown name or a bad value
 * is an error whose message names both.
 *
 * Value syntax by type: durations as fakeres specs take them ("300ms",
 * "2s", "1m", "0", also "none" for unset); integers in decimal; ratios as
 * decimals ("1.2"); booleans as 0/1/yes/no/true/false; load_balance as
 * auto|roundrobin|weighted|lowest_latency|least_loss; log_level as
 * error|warn|info|debug.
 */
#ifndef SIM_SETTINGS_H
#define SIM_SETTINGS_H

#include "respool.h"

#include <stddef.h>
#include <stdio.h>

/* SIM_SETTINGS_ERRLEN is a good size for the error buffer. */
#define SIM_SETTINGS_ERRLEN 200

/* SIM_SETTINGS_VALUELEN is a good size for a formatted value. */
#define SIM_SETTINGS_VALUELEN 280

/* sim_settings_type is how a field's value is read and written. */
typedef enum sim_settings_type {
  SIM_SETTINGS_DURATION = 0, /* rp_duration, ns */
  SIM_SETTINGS_U32,          /* uint32_t */
  SIM_SETTINGS_U16,          /* uint16_t */
  SIM_SETTINGS_INT,          /* int, may be negative */
  SIM_SETTINGS_SIZE,         /* size_t */
  SIM_SETTINGS_DOUBLE,       /* double */
  SIM_SETTINGS_BOOL,         /* int used as 0/1 */
  SIM_SETTINGS_BALANCE,      /* rp_balance */
  SIM_SETTINGS_LOG_LEVEL,    /* rp_log_level */
  SIM_SETTINGS_STRING        /* char array, NUL ended */
} sim_settings_type;

/* sim_settings_field describes one settable field. */
typedef struct sim_settings_field {
  /* name is the field's C name, also its --set name. */
  const char *name;
  /* offset is offsetof(rp_settings, field). */
  size_t offset;
  /* size is sizeof the field, bytes (checked against |type|). */
  size_t size;
  /* type says how to parse and print it. */
  sim_settings_type type;
  /* help is a short description with the unit. */
  const char *help;
} sim_settings_field;

/* sim_settings_fields returns the table and stores its length in
   |*plen|. The table is static. */
const sim_settings_field *sim_settings_fields(size_t *plen);

/* sim_settings_find returns the field called |name| (|namelen| bytes),
   or NULL. */
const sim_settings_field *sim_settings_find(const char *name, size_t namelen);

/*
 * sim_settings_set applies |assignment| ("name=value") to |settings|.
 * On failure |errbuf| (|errlen| bytes, may be NULL) names the field and
 * the value, e.g. "--set: unknown setting 'band_ration'" or
 * "--set band_ratio: bad value 'x' (want a decimal number)".
 * Returns 0, or RP_ERR_CONFIG (|settings| is then unchanged).
 */
int sim_settings_set(rp_settings *settings, const char *assignment,
                     char *errbuf, size_t errlen);

/* sim_settings_format writes the value of |field| in |settings| into
   |out| (|cap| bytes, NUL ended, truncated if needed) in the syntax
   sim_settings_set reads. */
void sim_settings_format(const rp_settings *settings,
                         const sim_settings_field *field, char *out,
                         size_t cap);

/* sim_settings_print writes one line per field (name, value, help) to
   |fp|. */
void sim_settings_print(const rp_settings *settings, FILE *fp);

#endif /* SIM_SETTINGS_H */
