"""Import the result path's libraries on a second thread while the simulator runs.

pyarrow, numpy and Parquet take about 0.25 s to import, a fixed cost of every ``ccbench run``
that a 100 000-flow run pays as much as a 1-flow run (the target: the Python around a run
stays within 20 % of the simulation, benchmarks/scale/RESULTS.md). The simulator releases the GIL while it runs
(crates/py/src/lib.rs ``run_interruptible``), so an import started just before the simulator
call proceeds on the machine's other core and is done when the results arrive.

Nothing here changes what is imported, only when: the caller imports the same modules
afterwards as usual (an import already finished is a dictionary look-up; one still under way
on the thread makes the caller wait for it; a failure on the thread is ignored here and
raised again, with its normal traceback, by the caller's own import).
"""

from __future__ import annotations

import importlib
import sys
import threading

__all__ = ["RESULT_MODULES", "start"]

#: What turning a simulator report into result tables and Parquet files imports.
RESULT_MODULES = ("numpy", "pyarrow", "pyarrow.compute", "pyarrow.parquet", "ccbench.results")


def _import_all(names: tuple[str, ...]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # the caller's own import reports it
            return


def start(names: tuple[str, ...] = RESULT_MODULES) -> threading.Thread | None:
    """Start importing ``names`` on a daemon thread; None when they are all imported already."""
    missing = tuple(n for n in names if n not in sys.modules)
    if not missing:
        return None
    t = threading.Thread(target=_import_all, args=(missing,), name="ccbench-preload", daemon=True)
    t.start()
    return t
