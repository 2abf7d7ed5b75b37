"""``ccbench validate``: one grid on several backends, compared cell by cell against the kernel.

The grid is a study-format TOML file (``[study]`` plus ``[[part]]`` tables, each a scenario and
its sweep); the default is grid.toml beside this file. Every backend runs every part into its own
store, DIR/<backend>/ (a normal store: ``ccbench report`` and ``ccbench.load`` read it), through
the sweep runner, so a re-run with the same DIR resumes: runs already stored are skipped
(``rerun`` deletes one backend's stored runs of the grid first, e.g. the simulator's after a
model change, while the slow kernel runs are kept).

Comparison: the kernel backend (real Linux TCP) is the reference. For each cell (one part, one
combination of its swept values) and backend: mean goodput over the repeats (range and 95 %
interval), mean RTT, retransmits and some TCP MIB counters. Then, for each other backend, the
relative error against the kernel: ``mean(backend) / mean(kernel) - 1``, and per algorithm the
median and worst |error| and how many cells are within the targets (CELL_TARGET,
MEDIAN_TARGET, COUNTER_TARGET). Written to DIR/validate.md, DIR/validate.csv and
DIR/goodput.svg. See docs/validate.md.

- ``plan``: the grid, its cells and which backends can run them;
- ``compare``: the errors against the reference and the targets;
- ``render``: tables, validate.md and the figure; ``run``: ``run_validate``.
"""

from .compare import (
    AGREES,
    CANNOT_TELL,
    CELL_TARGET,
    COUNTER_MIN,
    COUNTER_TARGET,
    COUNTERS,
    DIFFERS,
    MEDIAN_TARGET,
    SHARE_TARGET,
    Comparison,
    Side,
    ValidateRun,
    compare,
    count_error,
    interval_verdict,
    rel_error,
)
from .plan import (
    DEFAULT_GRID,
    DRAWS,
    INDEPENDENT_SEED_OFFSET,
    REFERENCE,
    Cell,
    ValidateError,
    backend_unavailable,
    load_grid,
    plan_cells,
    select_parts,
)
from .render import BBR_BEYOND_BDP_HEAD, counter_rows, goodput_figure, main_rows, markdown, print_tables, write_outputs
from .run import default_out, parse_backends, run_validate

__all__ = [
    "DEFAULT_GRID",
    "REFERENCE",
    "DRAWS",
    "INDEPENDENT_SEED_OFFSET",
    "AGREES",
    "DIFFERS",
    "CANNOT_TELL",
    "interval_verdict",
    "CELL_TARGET",
    "MEDIAN_TARGET",
    "SHARE_TARGET",
    "COUNTER_TARGET",
    "COUNTER_MIN",
    "COUNTERS",
    "ValidateError",
    "Cell",
    "Side",
    "Comparison",
    "ValidateRun",
    "load_grid",
    "select_parts",
    "plan_cells",
    "backend_unavailable",
    "compare",
    "run_validate",
    "write_outputs",
    "goodput_figure",
    "main_rows",
    "counter_rows",
    "BBR_BEYOND_BDP_HEAD",
    "markdown",
    "print_tables",
    "default_out",
    "parse_backends",
    "rel_error",
    "count_error",
]
