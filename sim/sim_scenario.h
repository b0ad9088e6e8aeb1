/*
 * sim_scenario.h: scenario files for respool-sim.
 *
 * A scenario file is a run written down: one directive per line, the
 * long options of respool-sim without their dashes, '#' starts a
 * comment. Timed steps change a resolver's profile at a virtual time,
 * as Unbound's replay files step time:
 *
 *   # three-limited, then r3 dies at 10 s and comes back at 20 s
 *   kind dnstt
 *   seed 7
 *   resolver name=r1,rate=20,over=refuse
 *   resolver name=r2,rate=30,over=refuse
 *   resolver name=r3,rate=40,over=drop
 *   load rate=150,seconds=30
 *   set cap_growth=0.2
 *   at 10s r3 dead
 *   at 20s r3 dead=no
 *
 * Directives: resolver SPEC, load SPEC, kind K, seed N, set F=V,
 * at TIME NAME CHANGE, rtt DURATION, sample DURATION.
 */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stddef.h>

/* SIM_SCENARIO_LINE_MAX is the longest line read, bytes. */
#define SIM_SCENARIO_LINE_MAX 1024

/* sim_scenario_fn handles one directive |key| with its argument |arg|
   (the rest of the line, trimmed). It returns 0, or non-zero with a
   message in |errbuf| (|errlen| bytes) to stop the parse. */
typedef int (*sim_scenario_fn)(const char *key, const char *arg,
                               void *user_data, char *errbuf, size_t errlen);

/* sim_scenario_load reads the file |path| and calls |fn| for each
   directive in order. On failure |errbuf| names the file and the line.
   Returns 0, RP_ERR_IO when the file cannot be read, or RP_ERR_CONFIG
   for a bad line (a line too long, a directive without argument, or an
   error of |fn|). */
int sim_scenario_load(const char *path, sim_scenario_fn fn, void *user_data,
                      char *errbuf, size_t errlen);

#endif /* SIM_SCENARIO_H */
