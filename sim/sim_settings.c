/*
 * sim_settings.c: the --list-settings table (see sim_settings.h).
 */
#include "sim_settings.h"

void sim_settings_print(const rp_settings *settings, FILE *fp) {
  size_t n, i;
  const rp_settings_field *fields = rp_settings_fields(&n);
  char value[RP_SETTINGS_VALUELEN];

  for (i = 0; i < n; ++i) {
    rp_settings_format(settings, &fields[i], value, sizeof(value));
    fprintf(fp, "  %-20s %-10s %s\n", fields[i].name, value, fields[i].help);
  }
}
