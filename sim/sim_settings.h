/*
 * sim_settings.h: `respool-sim --list-settings`, the table of rp_settings
 * by name (respool.h rp_settings_fields) with a kind's values. Setting a
 * field by name is the library's rp_settings_set, shared with the CLI's
 * --set and the config's "tuning" object.
 */
#ifndef SIM_SETTINGS_H
#define SIM_SETTINGS_H

#include "respool.h"

#include <stdio.h>

/* sim_settings_print writes one line per field of |settings| (name,
   value, help) to |fp|. */
void sim_settings_print(const rp_settings *settings, FILE *fp);

#endif /* SIM_SETTINGS_H */
