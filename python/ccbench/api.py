"""The top-level Python API: ``ccbench.run``, ``ccbench.sweep`` and ``ccbench.load``.
The tables they return are described column by column in docs/results.md."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

from .scenario.model import Scenario, as_scenario

if TYPE_CHECKING:  # imported when used: `import ccbench` does not load pyarrow (ccbench/backends/preload.py)
    from .results.run_result import RunResult

__all__ = ["run", "sweep", "load", "RunFailed", "as_scenario"]


class RunFailed(RuntimeError):
    """Raised by :func:`run` (with ``raise_on_error=True``) when the backend reports a failure.
    ``result`` holds the failed RunResult (its ``runs`` row carries the error)."""

    def __init__(self, result: RunResult):
        super().__init__(f"run {result.run_id} failed: {result.error}")
        self.result = result


def run(
    scenario_or_path: Union[Scenario, str, Path, Mapping[str, Any]],
    backend: str = "sim",
    overrides: Sequence[str] | Mapping[str, Any] = (),
    raise_on_error: bool = True,
) -> RunResult:
    """Validate, check against the backend, run. Returns a RunResult whose ``flows``, ``runs``,
    ``series``, ``link_series`` and ``counters`` are pandas DataFrames (every column: docs/results.md);
    ``result.save(dir)`` stores it where ``ccbench.load(dir)`` reads it.

    Bad input raises ScenarioError before anything runs. A backend failure raises RunFailed
    unless ``raise_on_error=False``, in which case the failed RunResult is returned.
    """
    from . import backends

    sc = as_scenario(scenario_or_path, overrides)
    result = backends.run(sc, backend)
    if raise_on_error and not result.ok:
        raise RunFailed(result)
    return result


def sweep(
    scenario_or_path: Union[Scenario, str, Path, Mapping[str, Any]],
    out: Union[str, Path],
    **kwargs: Any,
):
    """Run a sweep into the store directory ``out`` and return its Results (as ``load(out)``).

    ``scenario_or_path``: a Scenario, a TOML file or a TOML-shaped dict; its ``[sweep]`` table
    is the grid. Keyword arguments are those of ``ccbench.sweeps.run_sweep``: ``grid``
    (["key=v1,v2"]), ``zips``, ``repeat``, ``backend``, ``workers``, ``dask``,
    ``retry_failed``, ``overrides``, ``progress``, ``command``, ``study``. Runs already stored
    are not run again. The run summary is ``results.summary``.
    """
    from .sweeps import run_sweep

    summary = run_sweep(scenario_or_path, out, **kwargs)
    results = load(out)
    results.summary = summary
    return results


def load(directory: Union[str, Path]):
    """The Results stored in the store directory ``directory`` by a sweep or ``ccbench run
    --out``: ``.runs``, ``.flows``, ``.series``, ``.link_series``, ``.counters`` DataFrames and ``.meta``
    (DIR/ccbench.json); every column is described in docs/results.md. A directory that is
    neither a store nor empty raises ccbench.results.layout.StoreError."""
    from .results import store

    return store.load(directory)
