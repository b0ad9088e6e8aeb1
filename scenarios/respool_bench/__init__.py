"""respool_bench: the scenario table of respool (DESIGN.md section 6,
issue 7), split by job. scenarios/runner.py is the entry point.

For every setup (scenarios/setups.json) and column (scenarios/columns.json)
it starts a tunnel server, fakeres in front of it, an optional relay (the
pool, dnsdist) and the tunnel client in measurement mode, parses the
client's JSON line, collects the fake resolvers' counts and the relay's
statistics, and stops everything. Rounds of one setup are interleaved
across its columns; the table shows the median. Python 3 standard library
only. See docs/benchmark.md.

Modules, by job:
  procs     child processes: start, wait for, stop, CPU, free ports
  template  {placeholder} expansion of commands and generated files
  columns   setups.json/columns.json: column definitions, availability
  cell      one cell, one round: the processes started, measured, stopped
  results   a cell's rounds summarized (medians) and read back
  rounds    every setup x column x round, interleaved, with progress
  checks    checks and gates (share, ratio, limit_share) evaluated
  table     table.md rendered from a results dict
  plots     the gnuplot plots of a results dir
  cli       the command line: options, --list, --replot, output files
"""
