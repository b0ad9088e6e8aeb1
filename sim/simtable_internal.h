/*
 * simtable_internal.h: the parts of `respool-sim table` (simtable.c)
 * that its sweeps and timelines (simsweep.c) share: the setups and
 * columns read from the JSON files, the options, and the cell of a
 * setup and a column (prefix sim_table_).
 */
#ifndef SIM_TABLE_INTERNAL_H
#define SIM_TABLE_INTERNAL_H

#include "simnet.h"

#include <cjson/cJSON.h>

#include <stddef.h>
#include <stdint.h>

/* SIM_TABLE_MAX bounds the setups, columns and names of one run. */
#define SIM_TABLE_MAX 64
/* SIM_TABLE_NAME is the longest setup or column name kept. */
#define SIM_TABLE_NAME 64
/* SIM_TABLE_NS_PER_S converts ns to s. */
#define SIM_TABLE_NS_PER_S 1e9
/* SIM_TABLE_ERRLEN is the size of error buffers. */
#define SIM_TABLE_ERRLEN 256

/* sim_table_setup is a setup of setups.json (specs: its resolvers'
   fr_spec texts, owned). */
typedef struct sim_table_setup {
  char name[SIM_TABLE_NAME];
  char *specs[SIM_NET_MAX_RES];
  size_t nres;
  int rate_limited;
  double quick_seconds;
} sim_table_setup;

/* sim_table_column is a column of columns.json (args owned). */
typedef struct sim_table_column {
  char name[SIM_TABLE_NAME];
  char tunnel[SIM_TABLE_NAME];
  char mode[SIM_TABLE_NAME];
  char relay[SIM_TABLE_NAME];
  /* args holds mode_args. */
  char *args[SIM_TABLE_MAX];
  size_t nargs;
  double timeout_limited;
} sim_table_column;

/* sim_table_opts are the table's options (sim_table_parse); the
   strings are borrowed from argv. */
typedef struct sim_table_opts {
  const char *setups_path, *columns_path;
  /* sets are --set assignments for every pool of the run. */
  const char *sets[SIM_TABLE_MAX];
  size_t nsets;
  const char *only_setups[SIM_TABLE_MAX], *only_columns[SIM_TABLE_MAX];
  size_t nonly_setups, nonly_columns;
  uint64_t seed, rounds;
  uint32_t cores;
  /* cost_scale multiplies every process's CPU costs (1). */
  double cost_scale;
  /* jobs is how many processes run the cells (the cores online). */
  unsigned jobs;
  int quick, json, list;
} sim_table_opts;

/* sim_table is the setups and columns a run takes (sim_table_load). */
typedef struct sim_table {
  sim_table_setup setups[SIM_TABLE_MAX];
  size_t nsetups;
  sim_table_column columns[SIM_TABLE_MAX];
  size_t ncolumns;
  char domain[SIM_TABLE_NAME];
  uint64_t bytes, quick_bytes, upload_bytes;
  double seconds, quick_seconds;
} sim_table;

/* sim_table_parse reads the table's options from |argv| into |o|.
   Returns 0, -1 after --help (printed), or 2 (bad usage, said on
   stderr). */
int sim_table_parse(int argc, char **argv, sim_table_opts *o);

/* sim_table_load reads the setups and columns |o| asks for into |t|
   (cleared here first; sim_table_free frees it). Returns 0, 1 (out of
   memory) or 2 (a file is missing or not JSON, said on stderr). */
int sim_table_load(sim_table *t, const sim_table_opts *o);

/* sim_table_free frees what sim_table_load kept in |t|. */
void sim_table_free(sim_table *t);

/* sim_table_read_json reads the JSON file |path|. Returns the tree (the
   caller frees it with cJSON_Delete) or NULL, said on stderr. */
cJSON *sim_table_read_json(const char *path);

/* sim_table_cell builds the simulated cell of |s| x |c| for |seed| with
   |o|'s --set assignments after the kind's defaults. Returns 0, or 2
   with the reason in |err| (a column it cannot simulate, a bad
   setting). */
int sim_table_cell(const sim_table *t, const sim_table_opts *o,
                   const sim_table_setup *s, const sim_table_column *c,
                   uint64_t seed, sim_net_cell *cell, char *err, size_t errlen);

/* sim_table_median returns the median of |v| (|n| > 0; sorts |v|): the
   mean of the middle two for an even |n|. */
double sim_table_median(double *v, size_t n);

#endif /* SIM_TABLE_INTERNAL_H */
