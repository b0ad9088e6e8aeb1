#!/usr/bin/env python3
"""runner.py: the scenario table of respool (DESIGN.md section 6, issue 7).

The entry point (scenarios/run-table.sh and ./run.sh call it); the work is
done by the package respool_bench/ beside it, a module per job (its
__init__.py lists them). `import runner` still gives the names scripts
and tests used from the one-file runner (free_port, check_carried,
evaluate, make_table, ...). Python 3 standard library only. See
docs/benchmark.md.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from respool_bench.cell import check_carried, run_round  # noqa: E402
from respool_bench.checks import evaluate  # noqa: E402
from respool_bench.cli import main  # noqa: E402
from respool_bench.columns import (column_def, load_json,  # noqa: E402
                                   physical_limit_kbps)
from respool_bench.plots import make_plots  # noqa: E402
from respool_bench.procs import free_port, kill_all, stop_proc  # noqa: E402
from respool_bench.results import (median_kbps, round_ratios,  # noqa: E402
                                   summarize)
from respool_bench.table import make_table  # noqa: E402
from respool_bench.template import (TemplateError, subst_argv,  # noqa: E402
                                    subst_str)

__all__ = ["check_carried", "column_def", "evaluate", "free_port",
           "kill_all", "load_json", "main", "make_plots", "make_table",
           "median_kbps", "physical_limit_kbps", "round_ratios", "run_round",
           "stop_proc", "subst_argv", "subst_str", "summarize",
           "TemplateError"]

if __name__ == "__main__":
    sys.exit(main())
