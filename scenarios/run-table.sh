#!/usr/bin/env bash
# run-table.sh: the scenario table (issue 7, DESIGN.md section 6).
#   scenarios/run-table.sh [--setup NAME]... [--column NAME]... [--gate]
#                          [--out DIR] [--build DIR] [--list] [--help]
#   env QUICK=1 (one round, short transfers, PASS/FAIL checks), ROUNDS=N,
#   RP_BUILD_DIR (build dir when --build is not given; default $ROOT/build).
# The work is done by scenarios/runner.py and its package
# scenarios/respool_bench/ (Python 3 standard library).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || { echo "run-table: python3 is needed" >&2; exit 2; }
export RP_BUILD_DIR="${RP_BUILD_DIR:-$ROOT/build}"
export RP_TABLE_ARGV0="${RP_TABLE_ARGV0:-scenarios/run-table.sh}"
exec "$PY" "$HERE/runner.py" "$@"
