/*
 * simsweep.h: sweeps and timelines over the benchmark table in virtual
 * time (prefix sim_sweep_). It owns `respool-sim table --sweep` (every
 * value of one rp_settings field against the cells the table options
 * pick, several seeds a point: the median, min and max kbps of each cell
 * and of the columns.json ratios, as CSV and a gnuplot PNG) and
 * `respool-sim table --timeline` (one cell's pool sampled in virtual
 * time: per resolver its state, learned cap, answer rate and tries in
 * flight, as CSV and a PNG). The cells are simtable.c's
 * (simtable_internal.h); the sampling hook is simnet.h's on_sample.
 */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

/* sim_sweep_main runs `respool-sim table ARGS` when ARGS hold --sweep or
   --timeline (|argv[0]| is "table"). Returns the exit status: 0, 1 (a
   run or a file failed), 2 (usage). */
int sim_sweep_main(int argc, char **argv);

#endif /* SIM_SWEEP_H */
