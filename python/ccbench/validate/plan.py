"""What validate runs: the grid (a study file, grid.toml by default), its quick form, the cells
and which backends can run them here."""

from __future__ import annotations

import copy
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ..study.spec import Study, StudyError, load_study

DEFAULT_GRID = Path(__file__).parent / "grid.toml"


#: the backend every other backend is compared against
REFERENCE = "kernel"


#: How the compared backends draw their random numbers (loss, jitter, start offsets) relative to
#: the reference: "common" gives them the reference's seeds, so the n-th data segment meets the
#: same draw on both (sharp comparisons, but an agreement may hold only for that pattern);
#: "independent" moves their seeds by INDEPENDENT_SEED_OFFSET, so they meet other draws, as a
#: second real run would.
DRAWS = ("independent", "common")


#: far above any repeat count, so independent seeds never meet the reference's own
INDEPENDENT_SEED_OFFSET = 1_000_000


def seed_offset(backend: str, draws: str) -> int:
    """How far ``backend``'s seeds are moved from the grid's under ``draws``."""
    if draws not in DRAWS:
        raise ValidateError(None, "--draws", f"unknown draws {draws!r}", " or ".join(DRAWS))
    return INDEPENDENT_SEED_OFFSET if draws == "independent" and backend != REFERENCE else 0


class ValidateError(StudyError):
    """Bad validate input (grid file, backends, duration): ``"<file>: <key>: <problem> (expected ...)"``."""


def load_grid(grid: str | os.PathLike | None = "default") -> Study:
    """The grid: "default" (grid.toml beside this file) or a path to a study-format TOML file."""
    if grid is None or str(grid) == "default":
        path = DEFAULT_GRID
    else:
        path = Path(grid)
        if not path.is_file():
            raise ValidateError(
                str(path),
                None,
                "no such grid file" if not path.exists() else "not a file",
                "'default' or a study-format .toml file ([study] and [[part]] tables, see docs/validate.md)",
            )
    try:
        return load_study(path)
    except StudyError as e:
        raise ValidateError(e.source, e.key, e.problem, e.expected, e.problems) from None


def select_parts(study: Study, quick: bool = False, duration: Optional[str] = None) -> Study:
    """The parts to run: all of them, or with ``quick`` those with a [part.quick] table; with
    ``duration`` every run lasts that long (replacing the scenario's and the quick duration)."""
    parts = [p for p in study.parts if p.quick or not quick]
    if not parts:
        raise ValidateError(
            str(study.path),
            "part",
            "no part has a [part.quick] table, so --quick has nothing to run",
            "a [part.quick] table (duration, repeat, smaller axes) in at least one part, or no --quick",
        )
    if duration is not None:
        changed = []
        for p in parts:
            p = copy.deepcopy(p)
            p.scenario_raw["duration"] = duration
            p.quick.pop("duration", None)
            try:
                p.scenario(quick)
            except ValueError as e:  # ScenarioError
                key = getattr(e, "key", None)
                if key == "duration":
                    raise ValidateError(
                        None,
                        "--duration",
                        getattr(e, "problem", str(e)),
                        getattr(e, "expected", None) or "a time such as 20s",
                    ) from None
                raise ValidateError(str(study.path), f"part {p.name}", str(e), None) from None
            changed.append(p)
        parts = changed
    return dataclasses.replace(study, parts=parts)


@dataclass
class Cell:
    """One cell of the grid: a part and one combination of its swept values (all repeats)."""

    part: str
    index: int  # the cell's index in its part's grid
    params: dict  # swept key -> value, as written
    cc: str  # the algorithm(s) of the cell's flows
    label: str  # the swept values other than the algorithm, "rtt=50ms loss=1%"
    run_ids: dict = field(default_factory=dict)  # backend -> [run_id per repeat]

    @property
    def name(self) -> str:
        return f"{self.part}: {self.label}" if self.label else self.part


def _short(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def plan_cells(
    study: Study,
    backends: Sequence[str],
    quick: bool = False,
    repeat: Optional[int] = None,
    draws: str = "common",
) -> list[Cell]:
    """The grid's cells in order (part, then the part's grid order), with each backend's run ids
    (``draws``: the seeds each backend runs with, DRAWS)."""
    from .. import sweeps as sw

    cells: list[Cell] = []
    for part in study.parts:
        by_cell: dict[int, Cell] = {}
        for b in backends:
            sc = part.scenario(quick, repeat, source=str(study.path), seed_offset=seed_offset(b, draws))
            for spec in sw.plan(sc, sw.grid_from_scenario(sc), b):
                c = by_cell.get(spec.cell)
                if c is None:
                    ccs = []
                    for grp in spec.scenario.flows:
                        if grp.cc not in ccs:
                            ccs.append(grp.cc)
                    label = " ".join(
                        f"{_short(k)}={sw.param_str(v)}" for k, v in spec.params.items() if not k.endswith(".cc")
                    )
                    c = by_cell[spec.cell] = Cell(part.name, spec.cell, dict(spec.params), "+".join(ccs), label)
                c.run_ids.setdefault(b, []).append(spec.run_id)
        cells.extend(by_cell[i] for i in sorted(by_cell))
    return cells


def backend_unavailable(name: str, study: Optional[Study] = None, quick: bool = False) -> Optional[str]:
    """Why ``name`` cannot run here (not installed, not root, no TUN, ...), or None. Problems of
    a particular cell (an algorithm the kernel lacks) are not this: check_backend reports them."""
    from .. import backends

    try:
        mod = backends.get_backend(name)
    except ValueError as e:
        return getattr(e, "reason", None) or str(e)
    if study is None or not study.parts:
        return None
    try:
        mod.check(study.parts[0].scenario(quick))
    except ValueError as e:
        machine = [p for k, p, _ in getattr(e, "problems", []) if k == "backend"]
        if machine:
            return "; ".join(machine)
    return None
