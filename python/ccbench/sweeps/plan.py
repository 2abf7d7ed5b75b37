"""A sweep's runs: one RunSpec per cell and repeat, repeat-major, each with its run id."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .grid import Grid, SweepError, axis_type, derive_seed, grid_from_scenario, param_str, typed_value


@dataclass
class RunSpec:
    """One run of a sweep."""

    index: int  # position in the plan (repeat-major)
    cell: int  # grid cell index (product order)
    repeat: int
    seed: int
    params: dict[str, Any]  # swept key path -> value as given
    scenario: Any  # ccbench.scenario.Scenario, overrides and seed applied
    run_id: str
    types: dict[str, str] = field(default_factory=dict)  # swept key -> axis_type

    def columns(self) -> dict[str, Any]:
        """The columns added to every table: the swept values, typed per axis (axis_type), and
        ``repeat``."""
        cols: dict[str, Any] = {k: typed_value(v, self.types.get(k, "string")) for k, v in self.params.items()}
        cols["repeat"] = self.repeat
        return cols


def _cell_seed(scenario: Any, cell: Mapping[str, Any]) -> int:
    if "seed" in cell:
        v = cell["seed"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise SweepError(
                f'sweep.seed: {v!r} is not a seed (expected non-negative integers, e.g. "seed" = [1, 100, 200])'
            )
        return v
    return int(getattr(scenario, "seed", 0) or 0)


def plan(scenario: Any, grid: Grid | None = None, backend: str = "sim") -> list[RunSpec]:
    """Expand ``scenario`` over ``grid`` (default: its own ``[sweep]`` table) into runs.

    Every cell is validated by ``Scenario.with_overrides``; an invalid value raises SweepError
    naming the cell (nothing runs). Two cells that normalise to the same run raise SweepError.
    """
    from .. import results

    grid = grid if grid is not None else grid_from_scenario(scenario)
    cells = grid.cells()
    scenarios: list[list[Any]] = []
    for cell in cells:
        cell_seed = _cell_seed(scenario, cell)
        row = []
        for r in range(grid.repeat):
            overrides = dict(cell)
            overrides["seed"] = derive_seed(cell_seed, r)
            try:
                row.append(scenario.with_overrides(overrides))
            except ValueError as e:  # ScenarioError is a ValueError
                desc = ", ".join(f"{k}={param_str(v)}" for k, v in cell.items()) or "base scenario"
                raise SweepError(f"{grid.source}: sweep cell {desc}: {e}") from None
        scenarios.append(row)
    types = {k: axis_type(v) for k, v in grid.values.items()}
    runs: list[RunSpec] = []
    seen: dict[str, RunSpec] = {}
    for r in range(grid.repeat):
        for ci, cell in enumerate(cells):
            sc = scenarios[ci][r]
            spec = RunSpec(
                index=len(runs),
                cell=ci,
                repeat=r,
                seed=derive_seed(_cell_seed(scenario, cell), r),
                params=dict(cell),
                scenario=sc,
                run_id=results.make_run_id(sc, backend),
                types=types,
            )
            if spec.run_id in seen:
                other = seen[spec.run_id]
                raise SweepError(
                    f"{grid.source}: sweep cells {_desc(other)} and {_desc(spec)} describe the same "
                    f"run (same normalised scenario and seed); remove the duplicate value"
                )
            seen[spec.run_id] = spec
            runs.append(spec)
    return runs


def _desc(spec: RunSpec) -> str:
    return "(" + ", ".join([f"{k}={param_str(v)}" for k, v in spec.params.items()] + [f"repeat={spec.repeat}"]) + ")"
