/*
 * cli.h: what the respool command's files share (not installed): the
 * exit codes and the running command's state (main.c), the stats output
 * (stats.c), the checks before start and the start-up summary
 * (preflight.c) and the discover subcommand (discover.c).
 */
#ifndef RP_CLI_H
#define RP_CLI_H

#include "respool_net.h"
#include "respool_config.h"

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* CLI_EXIT_OK, CLI_EXIT_RUNTIME and CLI_EXIT_USAGE are the exit codes. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_RUNTIME 1
#define CLI_EXIT_USAGE 2
/* CLI_CONTINUE is what a step of a command returns when the command goes
   on (any other value is the exit code). */
#define CLI_CONTINUE (-1)
/* CLI_DEFAULT_STATS is the --stats-json interval without --stats. */
#define CLI_DEFAULT_STATS (5 * RP_SECONDS)

/* CLI_OPT_ARG and CLI_OPT_FLAG are entries of a getopt_long table: an
   option |name| with a value and one without, both returning |val|. */
#define CLI_OPT_ARG(name, val) {(name), required_argument, NULL, (val)}
#define CLI_OPT_FLAG(name, val) {(name), no_argument, NULL, (val)}

/* cli_args are the options that make the configuration (pointers into
   argv; the arrays are the command's), kept for a reload. */
typedef struct cli_args {
  const char *config_file, *listen, *kind, *scores, *pretest, *tls_ca,
      *tls_name, *resolver_list, *want;
  const char **resolvers, **sets, **files;
  size_t nresolvers, nsets, nfiles;
  int allow_remote, no_system, no_bundled;
} cli_args;

typedef struct cli {
  cli_args args;
  uv_loop_t *loop;
  rp_net_pool *np;
  uv_signal_t sigint, sigterm, sighup;
  uv_timer_t stats_timer;
  int stats_on;
  rp_duration stats_interval;
  int print_table;
  const char *stats_json;
  /* json_failing is 1 while writing stats_json fails (reported once
     when it starts and once when it ends). */
  int json_failing;
  /* summary_timer prints the start-up summary once the checks settled;
     want is how many passed checks are enough (discovery.want). */
  uv_timer_t summary_timer;
  int summary_on;
  uint32_t want;
  /* metrics is the --metrics listener; metrics_head the connections it
     serves (metrics.c). */
  uv_tcp_t metrics;
  int metrics_on;
  size_t metrics_clients;
  struct metrics_client *metrics_head;
  rp_log_level log_level;
  int exit_code;
  int stopping;
} cli;

/* cli_log_format is the form of the event log's lines. */
typedef enum cli_log_format { CLI_LOG_TEXT, CLI_LOG_JSON } cli_log_format;

/* cli_log_open sends the event log to |path| (appended; NULL: stderr) in
   |format|; the command's own lines above |level| are left out. Returns
   0, or -1 with |err| naming the file and the reason (log.c). */
int cli_log_open(const char *path, cli_log_format format, rp_log_level level,
                 char *err, size_t errlen);

/* cli_log_close closes a log file (log.c). */
void cli_log_close(void);

/* cli_log writes a pool log line (the pool filtered it) (log.c). */
void cli_log(rp_log_level level, const char *line, void *user_data);

/* cli_logf writes one of the command's own events at |level| (log.c). */
void cli_logf(rp_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* cli_log_parse_level parses error, warn, info or debug (log.c). */
int cli_log_parse_level(const char *text, rp_log_level *level);

/* cli_raise_nofile lifts the open-file limit to its hard maximum
   (main.c). */
void cli_raise_nofile(void);

/* cli_ms prints a duration in ms, or "-" when unset (stats.c). */
void cli_ms(char *out, size_t cap, rp_duration d);

/* cli_print_table prints the stats table to standard error (stats.c). */
void cli_print_table(cli *c, rp_tstamp now);

/* cli_write_json writes the stats to c->stats_json (stats.c). */
void cli_write_json(cli *c, rp_tstamp now);

/* cli_stats_cb is the stats timer's tick (stats.c). */
void cli_stats_cb(uv_timer_t *t);

/* cli_check_writable checks at start that |path| can be written (or
   created, with a temporary beside it); on failure |err| names |what|
   (where the path was given: "command line: --scores"), the path and the
   reason, and -1 is returned (preflight.c). */
int cli_check_writable(const char *path, const char *what, char *err,
                       size_t errlen);

/* cli_merge_duplicates drops resolvers listed twice from |cfg| with a
   note on stderr; returns 0 or RP_ERR_NOMEM (preflight.c). */
int cli_merge_duplicates(rp_config *cfg);

/* cli_summary_start prints the start-up line (|addr|, the resolvers, the
   check) and, when |checked|, starts the timer that prints the check's
   outcome once it settled (preflight.c). */
void cli_summary_start(cli *c, const char *addr, int checked,
                       const char *check_name);

/* cli_metrics_start serves the Prometheus endpoint on |addr|; returns 0,
   or -1 with |err| saying why (metrics.c). */
int cli_metrics_start(cli *c, const struct sockaddr_storage *addr, char *err,
                      size_t errlen);

/* cli_metrics_address writes the endpoint's address (metrics.c). */
void cli_metrics_address(cli *c, char *out, size_t cap);

/* cli_metrics_stop closes the endpoint and its connections (metrics.c). */
void cli_metrics_stop(cli *c);

/* cli_load_config builds |cfg| (initialised here; free it whatever the
   result) from the files and options in |a|. Returns 0, or an RP_ERR_*
   with |err| naming the option or file, the field and the value
   (load.c). */
int cli_load_config(const cli_args *a, rp_config *cfg, char *err,
                    size_t errlen);

/* cli_check_config checks what a run needs of |cfg|: a resolver, a
   loopback listen address unless allow_remote, a readable tls_ca, a
   writable scores file; it merges duplicates (with a note). Returns 0 or
   an RP_ERR_* with |err| saying why (load.c). */
int cli_check_config(const cli_args *a, rp_config *cfg, char *err,
                     size_t errlen);

/* cli_free_args frees the arrays of c->args (load.c). */
void cli_free_args(cli *c);

/* cli_discover runs "respool discover" with the arguments after
   "discover"; returns the exit code (discover.c). */
int cli_discover(int argc, char **argv);

#endif /* RP_CLI_H */
