/*
 * simtable.h: the benchmark's table in virtual time (prefix sim_table_):
 * every setup of scenarios/setups.json against every column of
 * scenarios/columns.json (the files run.sh uses), each cell a run of the
 * loopback machine in virtual time (simnet.h).
 *
 * A column is read as the runner reads it (its tunnel, mode, relay and
 * client arguments), mapped onto the simulated processes:
 *   tunnel   dnstt: the DNSTT workers (100 with a fresh socket per query
 *            when direct, --udp-workers N otherwise); masterdns: the MD
 *            slots (--duplication N, --inflight N); dnstt-orig and
 *            real-dnstt: the original dnstt-client's model with the
 *            real server's one held poll; real-masterdns: the MD slots
 *            with the sample config (least loss, duplication 3, download
 *            MTU 1232). Each tunnel has its CPU costs (simnet.h).
 *   mode     direct-first, own-balancer, own-no-dup: the client at the
 *            first resolver, or at all of them; pool: the pool core in
 *            the client's process (the tunnel's kind); respool: the pool
 *            core in a relay process (relay "respool": the tunnel's kind,
 *            every resolver added unchecked; "respool-cli": the kind auto
 *            would take, a dead resolver kept out by the check); dnsdist:
 *            the dnsdist model.
 * The output is the runner's results.json (scenarios/runner.py --replot
 * renders table.md and the plots from it), or a compact table of median
 * kbps.
 */
#ifndef SIM_TABLE_H
#define SIM_TABLE_H

#include <stdio.h>

/* sim_table_main runs `respool-sim table ARGS` (|argv[0]| is "table").
   Returns the exit status: 0, 1 (a run failed), 2 (usage). */
int sim_table_main(int argc, char **argv);

#endif /* SIM_TABLE_H */
