/*
 * sim_report.h: what respool-sim prints after a run.
 *
 * The text report is a per-resolver table (what each simulated resolver
 * received, answered, refused, dropped or lost, its share of the pool's
 * sends, and the core's final cap and state) followed by the pool's and
 * the client's totals and the run's speed. The JSON report holds the
 * same and the timeline (caps, states and rates per sample), for
 * scripts and plots.
 */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include "sim.h"

#include <stdio.h>

/* sim_report_info is what the report needs beyond the run itself. */
typedef struct sim_report_info {
  /* kind is the name of the settings' kind ("dnstt"...). */
  const char *kind;
  /* wall_seconds is the wall-clock time the run took, s (measured by
     the caller; the simulator reads no clock). */
  double wall_seconds;
  /* timeline is 1 to print the timeline in the text report too. */
  int timeline;
} sim_report_info;

/* sim_report_text writes the text report of |s| to |fp|. Returns 0 or
   RP_ERR_NOMEM. */
int sim_report_text(const sim *s, const sim_report_info *info, FILE *fp);

/* sim_report_json writes the JSON report of |s| to |fp|. Returns 0 or
   RP_ERR_NOMEM. */
int sim_report_json(const sim *s, const sim_report_info *info, FILE *fp);

#endif /* SIM_REPORT_H */
