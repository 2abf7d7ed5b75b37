"""``ccbench validate``: one grid on several backends, compared cell by cell against the kernel.

The grid is a study-format TOML file (ccbench.study: ``[study]`` plus ``[[part]]`` tables, each
a scenario and its sweep); the default is python/ccbench/validate_grid.toml. Every backend runs
every part into its own store, DIR/<backend>/ (a normal store: ``ccbench report`` and
``ccbench.load`` read it), through ccbench.sweep, so a re-run with the same DIR resumes: runs
already stored are skipped (``rerun`` deletes one backend's stored runs of the grid first, e.g.
the simulator's after a model change, while the slow kernel runs are kept).

Comparison: the kernel backend (real Linux TCP) is the reference. For each cell (one part, one
combination of its swept values) and backend: mean goodput over the repeats (range and 95 %
interval), mean RTT, retransmits and some TCP MIB counters (the ``counters`` table, when the
store has it). Then, for each other backend, the relative error against the kernel:
``mean(backend) / mean(kernel) - 1``, and per algorithm the median and worst |error| and how
many cells are within the targets (CELL_TARGET, MEDIAN_TARGET, COUNTER_TARGET). Written to
DIR/validate.md, DIR/validate.csv and DIR/goodput.svg. See docs/validate.md.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from .study import Study, StudyError, load_study

__all__ = [
    "DEFAULT_GRID",
    "REFERENCE",
    "CELL_TARGET",
    "MEDIAN_TARGET",
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
]

DEFAULT_GRID = Path(__file__).parent / "validate_grid.toml"
#: the backend every other backend is compared against
REFERENCE = "kernel"
#: every cell's goodput within 10 % of the kernel's
CELL_TARGET = 0.10
#: the median |goodput error| of an algorithm within 5 %
MEDIAN_TARGET = 0.05
#: counters within 25 % where both backends count at least COUNTER_MIN per run
COUNTER_TARGET = 0.25
#: mean events per run below which a counter (or the retransmits) is "trivial": not compared
COUNTER_MIN = 10.0

#: the counters shown per cell, and the side (host) whose count is shown: the receiver's for
#: PAWS (it checks the timestamps of the data segments), the sender's for the others.
COUNTERS: dict[str, str] = {
    "TcpExtPAWSEstab": "receiver",
    "TcpExtTCPLossProbes": "sender",
    "TcpExtTCPSACKReorder": "sender",
    "TcpExtTCPDSACKUndo": "sender",
    "TcpExtTCPFullUndo": "sender",
    "TcpExtTCPPartialUndo": "sender",
    "TcpExtTCPSpuriousRTOs": "sender",
    "TcpExtTCPTimeouts": "sender",
    "TcpExtTCPSackRecovery": "sender",
    "TcpExtTCPLostRetransmit": "sender",
    "TcpExtTCPDSACKRecv": "sender",
    "TcpExtTCPHystartTrainDetect": "sender",
    "TcpExtTCPHystartDelayDetect": "sender",
}


class ValidateError(StudyError):
    """Bad validate input (grid file, backends, duration): ``"<file>: <key>: <problem> (expected ...)"``."""


# --------------------------------------------------------------------------------------------
# the grid


def load_grid(grid: str | os.PathLike | None = "default") -> Study:
    """The grid: "default" (validate_grid.toml) or a path to a study-format TOML file."""
    if grid is None or str(grid) == "default":
        path = DEFAULT_GRID
    else:
        path = Path(grid)
        if not path.is_file():
            raise ValidateError(str(path), None, "no such grid file" if not path.exists() else "not a file",
                                "'default' or a study-format .toml file ([study] and [[part]] tables, "
                                "see docs/validate.md)")
    try:
        return load_study(path)
    except StudyError as e:
        raise ValidateError(e.source, e.key, e.problem, e.expected, e.problems) from None


def select_parts(study: Study, quick: bool = False, duration: Optional[str] = None) -> Study:
    """The parts to run: all of them, or with ``quick`` those with a [part.quick] table; with
    ``duration`` every run lasts that long (replacing the scenario's and the quick duration)."""
    parts = [p for p in study.parts if p.quick or not quick]
    if not parts:
        raise ValidateError(str(study.path), "part", "no part has a [part.quick] table, so --quick has "
                            "nothing to run", "a [part.quick] table (duration, repeat, smaller axes) in "
                            "at least one part, or no --quick")
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
                    raise ValidateError(None, "--duration", getattr(e, "problem", str(e)),
                                        getattr(e, "expected", None) or "a time such as 20s") from None
                raise ValidateError(str(study.path), f"part {p.name}", str(e), None) from None
            changed.append(p)
        parts = changed
    return dataclasses.replace(study, parts=parts)


@dataclass
class Cell:
    """One cell of the grid: a part and one combination of its swept values (all repeats)."""

    part: str
    index: int                       # the cell's index in its part's grid
    params: dict                     # swept key -> value, as written
    cc: str                          # the algorithm(s) of the cell's flows
    label: str                       # the swept values other than the algorithm, "rtt=50ms loss=1%"
    run_ids: dict = field(default_factory=dict)   # backend -> [run_id per repeat]

    @property
    def name(self) -> str:
        return f"{self.part}: {self.label}" if self.label else self.part


def _short(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def plan_cells(study: Study, backends: Sequence[str], quick: bool = False,
               repeat: Optional[int] = None) -> list[Cell]:
    """The grid's cells in order (part, then the part's grid order), with each backend's run ids."""
    from . import sweep as sw

    cells: list[Cell] = []
    for part in study.parts:
        sc = part.scenario(quick, repeat, source=str(study.path))
        g = sw.grid_from_scenario(sc)
        by_cell: dict[int, Cell] = {}
        for b in backends:
            for spec in sw.plan(sc, g, b):
                c = by_cell.get(spec.cell)
                if c is None:
                    ccs = []
                    for grp in spec.scenario.flows:
                        if grp.cc not in ccs:
                            ccs.append(grp.cc)
                    label = " ".join(f"{_short(k)}={sw.param_str(v)}" for k, v in spec.params.items()
                                     if not k.endswith(".cc"))
                    c = by_cell[spec.cell] = Cell(part.name, spec.cell, dict(spec.params), "+".join(ccs), label)
                c.run_ids.setdefault(b, []).append(spec.run_id)
        cells.extend(by_cell[i] for i in sorted(by_cell))
    return cells


# --------------------------------------------------------------------------------------------
# backends


def backend_unavailable(name: str, study: Optional[Study] = None, quick: bool = False) -> Optional[str]:
    """Why ``name`` cannot run here (not installed, not root, no TUN, ...), or None. Problems of
    a particular cell (an algorithm the kernel lacks) are not this: check_backend reports them."""
    from . import backends

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


def _delete_runs(store_dir: Path, run_ids: Iterable[str]) -> int:
    """Delete the stored files of these runs (every table), the runs file first. Returns how
    many runs were stored."""
    ids = set(run_ids)
    n = 0
    runs_dir = store_dir / "runs"
    for rid in ids:
        p = runs_dir / f"{rid}.parquet"
        if p.exists():
            p.unlink()
            n += 1
    if store_dir.is_dir():
        for d in store_dir.iterdir():
            if d.is_dir() and d.name != "runs":
                for rid in ids:
                    (d / f"{rid}.parquet").unlink(missing_ok=True)
    return n


# --------------------------------------------------------------------------------------------
# reading the stores


@dataclass
class Side:
    """One backend's runs of one cell."""

    goodput: list = field(default_factory=list)   # bit/s, per ok run
    rtt: list = field(default_factory=list)       # ms, mean over the run's flows
    retx: list = field(default_factory=list)      # retransmitted segments, summed over flows
    counters: dict = field(default_factory=dict)  # counter -> [per-run value] (runs with a value)
    failed: list = field(default_factory=list)    # error messages of failed runs
    missing: int = 0                              # planned runs not in the store

    @property
    def n(self) -> int:
        return len(self.goodput)

    def mean(self, what: str) -> Optional[float]:
        v = [x for x in getattr(self, what) if x is not None and math.isfinite(x)]
        return float(np.mean(v)) if v else None

    def counter(self, name: str) -> Optional[float]:
        v = self.counters.get(name) or []
        return float(np.mean(v)) if v else None


def _num(x: Any) -> Optional[float]:
    try:
        if x is None or x is pd.NA:
            return None
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


class _Store:
    """The rows of one backend's store, indexed by run id."""

    def __init__(self, root: Path):
        self.runs: dict[str, dict] = {}
        self.flows: dict[str, list[dict]] = {}
        self.counters: dict[tuple[str, str], dict] = {}
        self.has_counters = False
        if not root.is_dir():
            return
        from .store import load

        res = load(root)
        for row in res.runs.to_dict("records"):
            self.runs[row["run_id"]] = row
        for row in res.flows.to_dict("records"):
            self.flows.setdefault(row["run_id"], []).append(row)
        try:
            counters = getattr(res, "counters", None)
        except Exception:  # noqa: BLE001 - an unreadable counters table is shown as "–"
            counters = None
        if isinstance(counters, pd.DataFrame) and not counters.empty and "side" in counters:
            self.has_counters = True
            for row in counters.to_dict("records"):
                self.counters[(row["run_id"], str(row["side"]))] = row

    def side(self, run_ids: Sequence[str]) -> Side:
        s = Side()
        for rid in run_ids:
            row = self.runs.get(rid)
            if row is None:
                s.missing += 1
                continue
            if row.get("status", "ok") != "ok":
                s.failed.append(str(row.get("error") or "failed"))
                continue
            flows = self.flows.get(rid, [])
            gp = _num(row.get("aggregate_goodput_bps"))
            if gp is None:
                vals = [_num(f.get("goodput_bps")) for f in flows]
                gp = sum(v for v in vals if v is not None) if flows else None
            s.goodput.append(gp)
            rtts = [v for v in (_num(f.get("rtt_mean_ms")) for f in flows) if v is not None]
            s.rtt.append(float(np.mean(rtts)) if rtts else None)
            rx = [v for v in (_num(f.get("retransmits")) for f in flows) if v is not None]
            s.retx.append(float(sum(rx)) if rx else None)
            for name, side in COUNTERS.items():
                crow = self.counters.get((rid, side))
                v = _num(crow.get(name)) if crow is not None else None
                if v is not None:
                    s.counters.setdefault(name, []).append(v)
        return s


# --------------------------------------------------------------------------------------------
# comparison


def rel_error(value: Optional[float], reference: Optional[float]) -> Optional[float]:
    """value / reference - 1, or None when either is missing or the reference is 0."""
    if value is None or reference is None or reference == 0:
        return None
    return value / reference - 1.0


def count_error(value: Optional[float], reference: Optional[float],
                minimum: float = COUNTER_MIN, target: float = COUNTER_TARGET) -> tuple[Optional[float], str]:
    """Relative error of a count (mean per run) and its status: "ok" / "miss" (both at least
    ``minimum``: within ``target`` or not), "one-sided" (only one of them reaches ``minimum``),
    "trivial" (neither does) or "n/a" (a side has no value: not measured or not modelled)."""
    if value is None or reference is None:
        return None, "n/a"
    big_v, big_r = value >= minimum, reference >= minimum
    err = rel_error(value, reference)
    if big_v and big_r:
        return err, ("ok" if abs(err) <= target else "miss")
    if big_v or big_r:
        return err, "one-sided"
    return None, "trivial"


@dataclass
class Comparison:
    cells: list                       # [Cell]
    backends: list                    # backends shown (stores read), reference last when present
    sides: dict                       # (cell index in cells, backend) -> Side
    reference: Optional[str]          # REFERENCE when its store has data, else None
    has_counters: dict                # backend -> bool

    @property
    def compared(self) -> list[str]:
        """The backends compared against the reference."""
        return [b for b in self.backends if b != self.reference] if self.reference else []

    def side(self, i: int, backend: str) -> Side:
        return self.sides[(i, backend)]

    def goodput_error(self, i: int, backend: str) -> Optional[float]:
        return rel_error(self.side(i, backend).mean("goodput"), self.side(i, self.reference).mean("goodput"))

    def goodput_ratio_ci(self, i: int, backend: str):
        from . import analysis

        return analysis.ratio_ci(self.side(i, backend).goodput, self.side(i, self.reference).goodput)

    def retx_error(self, i: int, backend: str) -> tuple[Optional[float], str]:
        return count_error(self.side(i, backend).mean("retx"), self.side(i, self.reference).mean("retx"))

    def counter_error(self, i: int, backend: str, name: str) -> tuple[Optional[float], str]:
        return count_error(self.side(i, backend).counter(name), self.side(i, self.reference).counter(name))

    def counter_misses(self, i: int, backend: str) -> list[str]:
        return [n for n in COUNTERS if self.counter_error(i, backend, n)[1] == "miss"]

    def cell_ok(self, i: int, backend: str) -> Optional[bool]:
        e = self.goodput_error(i, backend)
        return None if e is None else abs(e) <= CELL_TARGET

    def summary(self, backend: str) -> pd.DataFrame:
        """Per algorithm (and "all"): cells compared, median and worst |goodput error|, cells
        within CELL_TARGET, whether the targets are met, counter comparisons and misses."""
        groups: dict[str, list[int]] = {}
        for i, c in enumerate(self.cells):
            groups.setdefault(c.cc, []).append(i)
        groups["all"] = list(range(len(self.cells)))
        rows = []
        for cc, idx in groups.items():
            errs = [(i, self.goodput_error(i, backend)) for i in idx]
            errs = [(i, e) for i, e in errs if e is not None]
            absv = [abs(e) for _, e in errs]
            worst = max(errs, key=lambda x: abs(x[1])) if errs else None
            n_counter = sum(1 for i in idx for n in COUNTERS if self.counter_error(i, backend, n)[1] in ("ok", "miss"))
            n_miss = sum(len(self.counter_misses(i, backend)) for i in idx)
            within = sum(1 for a in absv if a <= CELL_TARGET)
            median = float(np.median(absv)) if absv else None
            rows.append({
                "backend": backend, "cc": cc, "cells": len(idx), "compared": len(errs),
                "median |err| %": None if median is None else 100 * median,
                "worst |err| %": None if worst is None else 100 * abs(worst[1]),
                "worst cell": "" if worst is None else self.cells[worst[0]].name,
                "within 10 %": within,
                "targets met": (bool(errs) and within == len(errs) and median <= MEDIAN_TARGET) if errs else None,
                "counters compared": n_counter, "counters missed": n_miss,
            })
        return pd.DataFrame(rows)

    def table(self) -> pd.DataFrame:
        """One row per cell (the CSV): every backend's numbers, the errors against the reference."""
        rows = []
        for i, c in enumerate(self.cells):
            row: dict[str, Any] = {"part": c.part, "cell": c.label, "cc": c.cc}
            row.update({k: _param_text(v) for k, v in c.params.items()})
            for b in self.backends:
                s = self.side(i, b)
                gp = [x for x in s.goodput if x is not None]
                ci = _mean_ci(gp)
                row[f"{b}_runs"] = s.n
                row[f"{b}_failed"] = len(s.failed)
                row[f"{b}_missing"] = s.missing
                row[f"{b}_goodput_mbps"] = _mb(ci.mean)
                row[f"{b}_goodput_min_mbps"] = _mb(min(gp)) if gp else None
                row[f"{b}_goodput_max_mbps"] = _mb(max(gp)) if gp else None
                row[f"{b}_goodput_ci_lo_mbps"] = _mb(ci.lo)
                row[f"{b}_goodput_ci_hi_mbps"] = _mb(ci.hi)
                row[f"{b}_rtt_mean_ms"] = s.mean("rtt")
                row[f"{b}_retransmits"] = s.mean("retx")
                for n in COUNTERS:
                    row[f"{b}_{n}"] = s.counter(n)
            for b in self.compared:
                e = self.goodput_error(i, b)
                r = self.goodput_ratio_ci(i, b)
                re_, rs = self.retx_error(i, b)
                row[f"{b}_goodput_err_pct"] = _pct(e)
                row[f"{b}_goodput_err_ci_lo_pct"] = _pct(None if r.lo is None else r.lo - 1)
                row[f"{b}_goodput_err_ci_hi_pct"] = _pct(None if r.hi is None else r.hi - 1)
                row[f"{b}_goodput_within_10pct"] = self.cell_ok(i, b)
                row[f"{b}_retx_err_pct"] = _pct(re_)
                row[f"{b}_retx_status"] = rs
                for n in COUNTERS:
                    ce, cs = self.counter_error(i, b, n)
                    row[f"{b}_{n}_err_pct"] = _pct(ce)
                    row[f"{b}_{n}_status"] = cs
                row[f"{b}_counters_missed"] = " ".join(self.counter_misses(i, b))
            rows.append(row)
        return pd.DataFrame(rows)


def _mean_ci(values):
    """Goodput's mean and t interval, cut at 0 (analysis.mean_ci)."""
    from . import analysis

    return analysis.mean_ci(values, nonnegative=True)


def _mb(x: Optional[float]) -> Optional[float]:
    return None if x is None else x / 1e6


def _pct(x: Optional[float]) -> Optional[float]:
    return None if x is None else 100.0 * x


def _param_text(v: Any) -> str:
    from .sweep import param_str

    return param_str(v)


def compare(study: Study, out: str | os.PathLike, backends: Sequence[str], quick: bool = False,
            repeat: Optional[int] = None) -> Comparison:
    """Read DIR/<backend>/ of every backend (a missing store reads as no runs) and line the
    grid's cells up. The reference is shown last; it is None when its store has no ok run."""
    out = Path(out)
    order = [b for b in backends if b != REFERENCE] + ([REFERENCE] if REFERENCE in backends else [])
    cells = plan_cells(study, order, quick, repeat)
    sides = {}
    has_counters = {}
    for b in order:
        st = _Store(out / b)
        has_counters[b] = st.has_counters
        for i, c in enumerate(cells):
            sides[(i, b)] = st.side(c.run_ids.get(b, []))
    reference = REFERENCE if REFERENCE in order and any(sides[(i, REFERENCE)].n for i in range(len(cells))) else None
    return Comparison(cells, order, sides, reference, has_counters)


# --------------------------------------------------------------------------------------------
# running


@dataclass
class ValidateRun:
    study: Study
    out: Path
    quick: bool
    backends: list                   # requested, in order
    repeat: Optional[int] = None     # --repeat (None: each part's own)
    ran: list = field(default_factory=list)          # backends run now
    skipped: dict = field(default_factory=dict)      # backend -> why it was not run
    summaries: dict = field(default_factory=dict)    # backend -> [SweepSummary per part]
    wall_s: dict = field(default_factory=dict)       # backend -> seconds
    rerun: dict = field(default_factory=dict)        # backend -> stored runs deleted first
    comparison: Optional[Comparison] = None
    files: dict = field(default_factory=dict)        # "md" / "csv" / "svg" -> Path
    notes: list = field(default_factory=list)

    @property
    def all_ok(self) -> bool:
        return all(s.all_ok for ss in self.summaries.values() for s in ss)

    def executed(self, backend: str) -> int:
        return sum(s.executed for s in self.summaries.get(backend, []))


def default_out(quick: bool = False) -> Path:
    return Path("results") / ("validate-quick" if quick else "validate")


def parse_backends(text: str | Sequence[str]) -> list[str]:
    from .backends import BACKENDS

    items = [x.strip() for x in (text.split(",") if isinstance(text, str) else text) if x and x.strip()]
    out: list[str] = []
    for x in items:
        if x not in BACKENDS:
            raise ValidateError(None, "--backends", f"unknown backend {x!r}", "a comma-separated list of "
                                + ", ".join(BACKENDS))
        if x not in out:
            out.append(x)
    if not out:
        raise ValidateError(None, "--backends", "no backend given", "e.g. sim,kernel")
    return out


def run_validate(grid: str | os.PathLike | Study | None = "default", out: str | os.PathLike | None = None, *,
                 backends: str | Sequence[str] = ("sim", "kernel"), repeat: Optional[int] = None,
                 duration: Optional[str] = None, quick: bool = False, rerun: Sequence[str] = (),
                 workers: Optional[int] = None, retry_failed: bool = False, progress: bool = True,
                 console: Any = None, command: Optional[Sequence[str]] = None) -> ValidateRun:
    """Run the grid on every available backend into DIR/<backend>/ (resuming), compare, and write
    DIR/validate.md, DIR/validate.csv and DIR/goodput.svg. ``rerun``: backends whose stored runs
    of this grid are deleted first. A backend that cannot run on this machine (the kernel without
    root, ns3 not installed) is skipped with a note; its store is still read when it exists."""
    from . import sweep as sw
    from .study import check_backend, write_meta

    study = grid if isinstance(grid, Study) else load_grid(grid)
    study = select_parts(study, quick, duration)
    names = parse_backends(backends)
    rerun = parse_backends(rerun) if rerun else []
    for b in rerun:
        if b not in names:
            raise ValidateError(None, "--rerun", f"{b!r} is not one of the backends run ({', '.join(names)})",
                                "a backend given in --backends")
    out = Path(out) if out is not None else default_out(quick)
    run = ValidateRun(study, out, quick, names, repeat)
    for b in names:
        why = backend_unavailable(b, study, quick)
        if why:
            run.skipped[b] = why
        else:
            run.ran.append(b)
    if not run.ran:
        raise ValidateError(None, "--backends", "no backend can run here: " + "; ".join(
            f"{b}: {w}" for b, w in run.skipped.items()), "a backend available on this machine (sim always is)")
    scenarios = [p.scenario(quick, repeat, source=str(study.path)) for p in study.parts]
    for b in run.ran:  # refuse, before anything runs, a cell a backend cannot run (file, key, part)
        check_backend(study, scenarios, b)
    cells = plan_cells(study, run.ran, quick, repeat)
    for b in rerun:
        if b in run.ran:
            run.rerun[b] = _delete_runs(out / b, (rid for c in cells for rid in c.run_ids.get(b, [])))
    for b in run.ran:
        t0 = time.perf_counter()
        run.summaries[b] = []
        for part, sc in zip(study.parts, scenarios):
            if progress and console is not None:
                console.print(f"[bold]validate[/] {b}: part {part.name} - {sc.describe()}",
                              highlight=False, soft_wrap=True)
            run.summaries[b].append(sw.run_sweep(
                sc, out / b, backend=b, workers=workers, retry_failed=retry_failed, progress=progress,
                console=console, command=command, study=study.name))
        write_meta(study, out / b, quick=quick, backend=b, repeat=repeat, command=command)
        run.wall_s[b] = time.perf_counter() - t0
    # the backends run now, and those that could not run but have a store here from before
    shown = [b for b in names if b in run.ran or (out / b / "runs").is_dir()]
    run.comparison = compare(study, out, shown, quick, repeat)
    if run.comparison.reference is None:
        why = run.skipped.get(REFERENCE)
        if REFERENCE not in names:
            run.notes.append(f"no comparison: the {REFERENCE} backend (real Linux TCP, the reference) was not "
                             f"asked for (--backends {','.join(names)}); add it with --backends sim,kernel")
        elif why:
            run.notes.append(f"no comparison: the comparison needs the {REFERENCE} backend, which cannot run "
                             f"here: {why}. Only the simulator's columns are shown; run as root on a machine "
                             f"with the kernel backend (`ccbench doctor`) to compare.")
        else:
            run.notes.append(f"no comparison: the {REFERENCE} backend produced no ok run")
    elif REFERENCE in run.skipped:
        n = sum(run.comparison.side(i, REFERENCE).n for i in range(len(run.comparison.cells)))
        run.notes.append(f"the {REFERENCE} backend cannot run here ({run.skipped[REFERENCE]}); its columns are the "
                         f"{n} runs already stored in {out / REFERENCE}")
    for b, why in run.skipped.items():
        if b != REFERENCE:
            run.notes.append(f"backend {b} skipped: {why}")
    run.files = write_outputs(run, command=command)
    return run


# --------------------------------------------------------------------------------------------
# output


def _f(x: Optional[float], digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _err_text(e: Optional[float]) -> str:
    return "–" if e is None else f"{100 * e:+.1f} %"


def _goodput_text(s: Side) -> str:
    gp = [x for x in s.goodput if x is not None]
    if not gp:
        return "–"
    text = f"{np.mean(gp) / 1e6:.2f}"
    if len(gp) > 1:
        text += f" ({min(gp) / 1e6:.2f}–{max(gp) / 1e6:.2f})"
    return text


def _count_text(x: Optional[float]) -> str:
    if x is None:
        return "–"
    return f"{x:.0f}" if abs(x) >= 10 or x == int(x) else f"{x:.1f}"


def _counter_cell(comp: Comparison, i: int, name: str) -> str:
    vals = [_count_text(comp.side(i, b).counter(name)) for b in comp.backends]
    text = " / ".join(vals)
    for b in comp.compared:
        _, status = comp.counter_error(i, b, name)
        if status == "miss":
            text += " ✗"
        elif status == "one-sided":
            text += " ⚠"
    return text


def main_rows(comp: Comparison, compact: bool = False) -> tuple[list[str], list[list[str]]]:
    """The per-cell table: header and rows of text. ``compact`` (the terminal): part and cell in
    one column, goodput without its range."""
    head = ["cell", "cc"] if compact else ["part", "cell", "cc"]
    for b in comp.backends:
        head.append(f"{b} Mbit/s" if compact else f"{b} goodput Mbit/s")
    for b in comp.compared:
        head.append(f"{b} err")
    for b in comp.backends:
        head.append(f"{b} RTT ms")
    for b in comp.backends:
        head.append(f"{b} retx")
    for b in comp.compared:
        head.append(f"{b} retx err")
    if comp.compared:
        head.append("verdict")
    rows = []
    for i, c in enumerate(comp.cells):
        row = [c.name, c.cc] if compact else [c.part, c.label or "–", c.cc]
        for b in comp.backends:
            s = comp.side(i, b)
            g = _f(_mb(s.mean("goodput"))) if compact else _goodput_text(s)
            row.append(g + _failed_note(s))
        row += [_err_text(comp.goodput_error(i, b)) for b in comp.compared]
        row += [_f(comp.side(i, b).mean("rtt"), 1) for b in comp.backends]
        row += [_count_text(comp.side(i, b).mean("retx")) for b in comp.backends]
        for b in comp.compared:
            e, st = comp.retx_error(i, b)
            row.append(_err_text(e) + ((" ⚠" if compact else " (one-sided)") if st == "one-sided" else ""))
        if comp.compared:
            verdict = []
            for b in comp.compared:
                ok = comp.cell_ok(i, b)
                misses = comp.counter_misses(i, b)
                tag = "" if len(comp.compared) == 1 else f"{b}: "
                if ok is None:
                    verdict.append(f"{tag}not compared")
                    continue
                text = "goodput ok" if ok else "MISS goodput"
                if misses:
                    text += "; MISS " + ", ".join(m.removeprefix("TcpExt") for m in misses)
                verdict.append(tag + text)
            row.append("; ".join(verdict))
        rows.append(row)
    return head, rows


def _failed_note(s: Side) -> str:
    bits = []
    if s.failed:
        bits.append(f"{len(s.failed)} failed")
    if s.missing:
        bits.append(f"{s.missing} not run")
    return f" [{', '.join(bits)}]" if bits else ""


def counters_with_data(comp: Comparison, nonzero: bool = False) -> list[str]:
    """The counters some backend has a value for (``nonzero``: a value other than 0) in some cell."""
    def has(v: Optional[float]) -> bool:
        return v is not None and (v != 0 or not nonzero)

    return [n for n in COUNTERS if any(has(comp.side(i, b).counter(n))
                                       for i in range(len(comp.cells)) for b in comp.backends)]


def counter_rows(comp: Comparison, names: Optional[Sequence[str]] = None,
                 compact: bool = False) -> tuple[list[str], list[list[str]]]:
    names = list(COUNTERS) if names is None else list(names)
    head = (["cell", "cc"] if compact else ["part", "cell", "cc"]) + [n.removeprefix("TcpExt") for n in names]
    rows = [([c.name, c.cc] if compact else [c.part, c.label or "–", c.cc])
            + [_counter_cell(comp, i, n) for n in names] for i, c in enumerate(comp.cells)]
    return head, rows


def summary_rows(comp: Comparison) -> tuple[list[str], list[list[str]]]:
    head = ["backend", "cc", "cells compared", "median |err|", "worst |err|", "worst cell", "within 10 %",
            "targets met", "counters compared", "counters missed"]
    rows = []
    for b in comp.compared:
        for r in comp.summary(b).to_dict("records"):
            met = r["targets met"]
            rows.append([b, r["cc"], f"{r['compared']}/{r['cells']}",
                         "–" if r["median |err| %"] is None else f"{r['median |err| %']:.1f} %",
                         "–" if r["worst |err| %"] is None else f"{r['worst |err| %']:.1f} %",
                         r["worst cell"] or "–", f"{r['within 10 %']}/{r['compared']}",
                         "–" if met is None else ("yes" if met else "no"),
                         str(r["counters compared"]), str(r["counters missed"])])
    return head, rows


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def esc(x: str) -> str:
        return str(x).replace("|", "\\|")

    out = ["| " + " | ".join(map(esc, head)) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return out


def _git_commit() -> str:
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return commit + (" (with uncommitted changes)" if commit and dirty else "")


def _durations(study: Study, quick: bool) -> str:
    ds = sorted({p.duration_s(quick) for p in study.parts})
    return ", ".join(f"{d:g} s" for d in ds)


def _repeats(study: Study, quick: bool, repeat: Optional[int]) -> str:
    rs = sorted({p.sweep_table(quick, repeat)["repeat"] for p in study.parts})
    return ", ".join(map(str, rs))


def _no_reference(run: ValidateRun) -> str:
    if REFERENCE not in run.backends:
        return f"none ({REFERENCE} not in --backends)"
    if REFERENCE in run.skipped:
        return f"none ({REFERENCE} cannot run here)"
    return f"none ({REFERENCE} has no ok runs)"


def markdown(run: ValidateRun, command: Optional[Sequence[str]] = None) -> str:
    comp = run.comparison
    repeat = run.repeat
    study = run.study
    cmd = " ".join(command) if command else "ccbench validate"
    lines = [f"# ccbench validate: {study.title}", ""]
    lines += [f"- command: `{cmd}`",
              f"- grid: {study.path} ({len(study.parts)} part{'s' if len(study.parts) != 1 else ''}, {len(comp.cells)} cells; "
              f"{'quick; ' if run.quick else ''}runs of {_durations(study, run.quick)}, "
              f"{_repeats(study, run.quick, repeat)} repeats per cell per backend)",
              f"- backends: {', '.join(comp.backends)}; reference: "
              f"{comp.reference or _no_reference(run)}",
              f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
              f"machine: {os.cpu_count()} CPUs, Linux {os.uname().release}"]
    commit = _git_commit()
    if commit:
        lines.append(f"- commit: {commit}")
    for b in run.ran:
        n = sum(s.total for s in run.summaries.get(b, []))
        lines.append(f"- {b}: {n} runs in DIR/{b}/, {run.executed(b)} run now in {run.wall_s.get(b, 0):.0f} s"
                     + (f" ({run.rerun[b]} stored runs deleted first: --rerun)" if b in run.rerun else ""))
    for b, why in run.skipped.items():
        lines.append(f"- {b}: not run ({why})")
    lines.append("")
    for note in run.notes:
        lines += [f"**Note:** {note}", ""]
    lines += ["## Parts", ""]
    for p in study.parts:
        lines.append(f"- **{p.name}**: {p.description or p.scenario(run.quick).describe()}")
    lines.append("")
    if comp.compared:
        lines += ["## Targets", "",
                  f"Relative error = mean(backend) / mean({REFERENCE}) - 1, per cell over its repeats. "
                  f"Targets: every cell's goodput within {CELL_TARGET:.0%} of the {REFERENCE}'s, the median "
                  f"|error| of each algorithm within {MEDIAN_TARGET:.0%}; counters within {COUNTER_TARGET:.0%} "
                  f"where both backends count at least {COUNTER_MIN:g} per run.", ""]
        head, rows = summary_rows(comp)
        lines += _md_table(head, rows) + [""]
    lines += ["## Goodput, RTT and retransmits per cell", "",
              "Goodput: mean over the repeats in Mbit/s (range min–max). RTT: mean of the flow's RTT "
              "samples, ms. retx: retransmitted segments per run (mean). err: relative error against "
              f"the {REFERENCE}; retx err only where a side retransmits at least {COUNTER_MIN:g} per run "
              "(one-sided: only one side does).", ""]
    head, rows = main_rows(comp)
    lines += _md_table(head, rows) + [""]
    lines += ["## TCP counters per cell", ""]
    if not any(comp.has_counters.values()):
        lines += ["No store has a `counters` table yet (older ccbench): every counter shows –.", ""]
    lines += [f"Mean per run, {' / '.join(comp.backends)}; the receiver's count for PAWSEstab, the sender's "
              "for the others. – = not measured or not modelled. "
              + (f"✗ = both at least {COUNTER_MIN:g} and more than {COUNTER_TARGET:.0%} apart; ⚠ = only one "
                 f"side reaches {COUNTER_MIN:g}." if comp.compared else ""), ""]
    head, rows = counter_rows(comp)
    lines += _md_table(head, rows) + [""]
    failed = [(c, b, msg) for i, c in enumerate(comp.cells) for b in comp.backends
              for msg in comp.side(i, b).failed]
    if failed:
        lines += ["## Failed runs", ""]
        seen = set()
        for c, b, msg in failed:
            key = (c.name, c.cc, b, msg)
            if key not in seen:
                seen.add(key)
                lines.append(f"- {b}, {c.name}, {c.cc}: {msg.splitlines()[0] if msg else 'failed'}")
        lines.append("")
    lines += ["Files: validate.csv (every number of these tables, with 95 % intervals), goodput.svg; "
              "the runs: " + ", ".join(f"{b}/" for b in comp.backends) + " (ccbench stores)."]
    return "\n".join(lines) + "\n"


def _plain_log_ticks(axis) -> None:
    """Log axis ticks at 1, 2, 5 × 10^k written as plain numbers (0.5, 1, 2, 5, 10, 20, 50)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    axis.set_minor_formatter(NullFormatter())


def goodput_figure(comp: Comparison):
    """Simulator (and other backends) vs kernel mean goodput per cell, log axes, y = x and a
    ±10 % band; without kernel data, each backend's goodput per cell."""
    from .plots import _colour_map, _figure

    ccs = sorted({c.cc for c in comp.cells})
    colours = _colour_map(ccs)
    markers = dict(zip(ccs, "osD^v<>ph*"))
    if comp.compared:
        fig, axes = _figure(1, len(comp.compared), width=5.6 * len(comp.compared), height=5.2)
        for ax, b in zip(axes[0], comp.compared):
            xs, lo_hi = [], []
            for cc in ccs:
                pts = []
                for i, c in enumerate(comp.cells):
                    if c.cc != cc:
                        continue
                    k, s = comp.side(i, comp.reference), comp.side(i, b)
                    km, sm = k.mean("goodput"), s.mean("goodput")
                    if km is None or sm is None:
                        continue
                    kg = [x for x in k.goodput if x is not None]
                    sg = [x for x in s.goodput if x is not None]
                    pts.append((km / 1e6, sm / 1e6, (km - min(kg)) / 1e6, (max(kg) - km) / 1e6,
                                (sm - min(sg)) / 1e6, (max(sg) - sm) / 1e6))
                if not pts:
                    continue
                a = np.array(pts)
                xs.extend(a[:, 0].tolist() + a[:, 1].tolist())
                ax.errorbar(a[:, 0], a[:, 1], xerr=[a[:, 2], a[:, 3]], yerr=[a[:, 4], a[:, 5]],
                            fmt=markers[cc], color=colours[cc], ms=5, lw=0.8, capsize=0, label=cc,
                            alpha=0.9)
            if xs:
                lo, hi = min(xs) / 1.3, max(xs) * 1.3
                line = np.geomspace(lo, hi, 50)
                ax.fill_between(line, line * (1 - CELL_TARGET), line * (1 + CELL_TARGET), color="0.85",
                                label=f"±{CELL_TARGET:.0%}", zorder=0)
                ax.plot(line, line, color="0.4", lw=0.8, label="y = x", zorder=1)
                ax.set_xscale("log")
                ax.set_yscale("log")
                _plain_log_ticks(ax.xaxis)
                _plain_log_ticks(ax.yaxis)
                ax.set_xlim(lo, hi)
                ax.set_ylim(lo, hi)
                ax.set_aspect("equal")
            ax.set_xlabel(f"{comp.reference} goodput (Mbit/s)")
            ax.set_ylabel(f"{b} goodput (Mbit/s)")
            ax.set_title(f"{b} vs {comp.reference}: mean goodput per cell (bars: repeat range)", fontsize=9)
            ax.grid(True, which="both", lw=0.3, alpha=0.5)
            ax.legend(fontsize=8, loc="upper left")
        return fig
    fig, axes = _figure(1, 1, width=max(6.0, 0.25 * len(comp.cells) + 2), height=4.2)
    ax = axes[0][0]
    for j, b in enumerate(comp.backends):
        for cc in ccs:
            x, y, e0, e1 = [], [], [], []
            for i, c in enumerate(comp.cells):
                s = comp.side(i, b)
                m = s.mean("goodput")
                if c.cc != cc or m is None:
                    continue
                g = [v for v in s.goodput if v is not None]
                x.append(i + 0.15 * j)
                y.append(m / 1e6)
                e0.append((m - min(g)) / 1e6)
                e1.append((max(g) - m) / 1e6)
            if x:
                ax.errorbar(x, y, yerr=[e0, e1], fmt=markers[cc], color=colours[cc], ms=5, lw=0.8,
                            label=f"{b} {cc}" if len(comp.backends) > 1 else cc)
    ax.set_xticks(range(len(comp.cells)))
    ax.set_xticklabels([f"{c.name} {c.cc}" for c in comp.cells], rotation=90, fontsize=6)
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title(f"{', '.join(comp.backends)} only: no {REFERENCE} runs to compare with", fontsize=9)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    return fig


def write_outputs(run: ValidateRun, command: Optional[Sequence[str]] = None) -> dict[str, Path]:
    from .plots import save

    out = run.out
    out.mkdir(parents=True, exist_ok=True)
    files = {"md": out / "validate.md", "csv": out / "validate.csv", "svg": out / "goodput.svg"}
    files["md"].write_text(markdown(run, command))
    run.comparison.table().to_csv(files["csv"], index=False, float_format="%.6g")
    save(goodput_figure(run.comparison), files["svg"])
    return files


def print_tables(run: ValidateRun, console: Any) -> None:
    """The per-cell tables, the counters and the summary, with rich."""
    from rich.table import Table
    from rich.text import Text

    comp = run.comparison

    def show(title: str, head: list[str], rows: list[list[str]], colour_last: bool = False):
        t = Table(title=title, title_justify="left")
        for h in head:
            t.add_column(h, overflow="fold", no_wrap=h in ("cell", "worst cell"))
        for r in rows:
            cells = [Text(str(x)) for x in r]
            if colour_last and r:
                last = str(r[-1])
                cells[-1].stylize("red" if "MISS" in last or last == "no" else
                                  "green" if last in ("goodput ok", "yes") else "")
            t.add_row(*cells)
        console.print(t)

    head, rows = main_rows(comp, compact=True)
    show("validate: mean goodput, RTT and retransmits per cell (ranges and counters: validate.md)", head, rows,
         colour_last=bool(comp.compared))
    names = counters_with_data(comp, nonzero=True)
    if names:
        head, rows = counter_rows(comp, names, compact=True)
        show(f"TCP counters, mean per run ({' / '.join(comp.backends)}; ✗ more than "
             f"{COUNTER_TARGET:.0%} apart, ⚠ one-sided; counters that are 0 or – everywhere left out)",
             head, rows)
    else:
        console.print("TCP counters: 0 or – everywhere"
                      + ("" if any(comp.has_counters.values()) else " (no counters table in the stores)"),
                      highlight=False)
    if comp.compared:
        head, rows = summary_rows(comp)
        head2 = head[:]
        rows2 = [r[:] for r in rows]
        # the verdict column last, so it can be coloured
        j = head2.index("targets met")
        head2.append(head2.pop(j))
        for r in rows2:
            r.append(r.pop(j))
        show(f"per algorithm (targets: every cell within {CELL_TARGET:.0%}, median within {MEDIAN_TARGET:.0%})",
             head2, rows2, colour_last=True)
    for note in run.notes:
        console.print(Text(f"note: {note}", style="yellow"), soft_wrap=True)
