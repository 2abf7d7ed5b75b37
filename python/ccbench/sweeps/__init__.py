"""Sweeps: grids of scenarios, repeats, executors (local processes or Dask), cache and resume
(docs/sweeps.md).

- ``grid``: the ``[sweep]`` table and options as axes and cells; ``plan``: one RunSpec per run;
- ``execute``: one run in a worker; ``executors``: local processes or Dask;
- ``lock``: one kernel run per machine, one sweep per store; ``progress``: what is printed;
- ``runner``: ``run_sweep``, which ties them together over a store.
"""

from .execute import DEFAULT_RUN_TIMEOUT_S, RunTimeout, execute_run, failed_payload, parse_run_timeout
from .executors import LocalExecutor
from .grid import (
    Axis,
    Grid,
    SweepError,
    axis_type,
    derive_seed,
    grid_from_scenario,
    param_str,
    parse_grid_option,
    parse_zip_option,
)
from .lock import KernelLockError
from .plan import RunSpec, plan
from .progress import SweepSummary, print_summary
from .runner import identical_cells, run_sweep

__all__ = [
    "SweepError",
    "Axis",
    "Grid",
    "RunSpec",
    "SweepSummary",
    "derive_seed",
    "parse_grid_option",
    "parse_zip_option",
    "grid_from_scenario",
    "plan",
    "execute_run",
    "failed_payload",
    "run_sweep",
    "param_str",
    "axis_type",
    "identical_cells",
    "RunTimeout",
    "KernelLockError",
    "parse_run_timeout",
    "DEFAULT_RUN_TIMEOUT_S",
    "LocalExecutor",
    "print_summary",
]
