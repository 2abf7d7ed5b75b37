"""Built-in studies: the seed documents' questions as runnable, reportable experiments.

A study file (python/ccbench/studies/<name>.toml, or any path) holds

* ``[study]``: name, seed (the seed document's id), title, question, original (the seed's
  setup), simplifications (how our scenario maps it, and why), analyses (report sections, see
  ANALYSES), unit (goodput unit of the tables), discussion (likely reasons for disagreements),
  full_runtime / quick_runtime (as measured);
* one or more ``[[part]]``: name, description, a full scenario under ``[part.scenario]``, its
  grid under ``[part.sweep]`` (axes + repeat, as a scenario's [sweep]) and ``[part.quick]``
  (duration, repeat and replacement axes for ``--quick``);
* ``[[published]]`` rows: the seed's numbers as data (part, cell = {swept key or "cc": value},
  metric (see METRICS), value, unit, where).

All parts run into ONE store directory; part P of study S is the scenario named "S/P" (the
``name`` column of the result tables), so the report sections filter on it. Running a study
writes DIR/ccbench.json with "study": S, then DIR/report.html via ccbench.report.build_report,
which calls :func:`report_sections` back.

Published numbers are never used to set up a scenario: the comparison is the output.
"""
from __future__ import annotations

import copy
import datetime
import json
import math
import os
import platform
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from .scenario import Scenario, ScenarioError, parse_toml, read_toml_text

__all__ = [
    "StudyError",
    "Study",
    "Part",
    "Published",
    "METRICS",
    "ANALYSES",
    "BUILTIN_DIR",
    "builtin_studies",
    "list_studies",
    "find_study",
    "load_study",
    "run_study",
    "default_out",
    "published_table",
    "report_sections",
]

BUILTIN_DIR = Path(__file__).parent / "studies"


class StudyError(ScenarioError):
    """Bad study input: ``"<file>: <key.path>: <problem> (expected <form>)"``."""


# --------------------------------------------------------------------------------------------
# metrics of published rows: name -> (base unit kind, description)

#: unit -> factor that turns the metric's base value into that unit
_GOODPUT_UNITS = {"bit/s": 1.0, "kbit/s": 1e-3, "Mbit/s": 1e-6, "Gbit/s": 1e-9,
                  "KB/s": 1 / 8e3, "MB/s": 1 / 8e6}
_UNITS = {
    "goodput": _GOODPUT_UNITS,   # base: bit/s
    "time_ms": {"ms": 1.0, "s": 1e-3},
    "time_s": {"s": 1.0, "ms": 1e3},
    "index": {"": 1.0},
    "percent": {"%": 1.0},
    "ratio": {"x": 1.0, "": 1.0},
}

#: metric -> (unit kind, what is measured). The sample is one value per run (repeats are the
#: independent samples), except cv and bbr_cubic_ratio, which are statistics of a cell.
METRICS: dict[str, tuple[str, str]] = {
    "goodput": ("goodput", "mean goodput per flow of the cell's algorithm"),
    "goodput_total": ("goodput", "goodput summed over the cell's flows, per run"),
    "rtt_mean": ("time_ms", "mean RTT of the cell's flows"),
    "rtt_max": ("time_ms", "largest sampled RTT of the cell's flows in the run"),
    "probe_p50": ("time_ms", "median latency-probe RTT (ping under load)"),
    "probe_p95": ("time_ms", "95th percentile latency-probe RTT"),
    "jain_index": ("index", "Jain's index over all flows of the run"),
    "cv": ("percent", "coefficient of variation of per-run goodput across repeats"),
    "bbr_cubic_ratio": ("ratio", "mean BBR goodput / mean CUBIC goodput (Fieller interval)"),
    "period": ("time_s", "dominant period of the group's aggregate throughput after steady state"),
}

_STUDY_KEYS = {"name", "seed", "title", "question", "original", "simplifications", "analyses",
               "unit", "discussion", "full_runtime", "quick_runtime"}
_STUDY_REQUIRED = ("name", "seed", "title", "question", "original")
_PART_KEYS = {"name", "description", "scenario", "sweep", "quick"}
_PUBLISHED_KEYS = {"part", "cell", "metric", "value", "unit", "where"}
_TOP_KEYS = {"study", "part", "published"}


# --------------------------------------------------------------------------------------------
# model


@dataclass
class Part:
    name: str
    description: str
    scenario_raw: dict            # TOML-shaped scenario table, without name and sweep
    sweep: dict                   # the full grid: axes + repeat (+ zip)
    quick: dict                   # duration, repeat, replacement axes
    study: str = ""

    @property
    def scenario_name(self) -> str:
        return f"{self.study}/{self.name}"

    def sweep_table(self, quick: bool = False, repeat: Optional[int] = None) -> dict:
        table = copy.deepcopy(self.sweep)
        if quick:
            for key, value in self.quick.items():
                if key == "duration":
                    continue
                table[key] = copy.deepcopy(value)
        if repeat is not None:
            table["repeat"] = repeat
        table.setdefault("repeat", 1)
        return table

    def scenario(self, quick: bool = False, repeat: Optional[int] = None,
                 source: str = "<study>") -> Scenario:
        """The part's scenario with its (quick) grid as the [sweep] table."""
        raw = copy.deepcopy(self.scenario_raw)
        raw["name"] = self.scenario_name
        if quick and "duration" in self.quick:
            raw["duration"] = self.quick["duration"]
        raw["sweep"] = self.sweep_table(quick, repeat)
        return Scenario.from_dict(raw, source=source)

    def axes(self, quick: bool = False) -> dict[str, list]:
        return {k: v for k, v in self.sweep_table(quick).items() if k not in ("repeat", "zip")}

    def n_runs(self, quick: bool = False, repeat: Optional[int] = None) -> int:
        from .sweep import Grid

        return len(Grid.from_table(self.sweep_table(quick, repeat)))

    def duration_s(self, quick: bool = False) -> float:
        return self.scenario(quick).duration_s


@dataclass
class Published:
    part: str
    cell: dict
    metric: str
    value: float
    unit: str
    where: str = ""

    def cell_text(self) -> str:
        return ", ".join(f"{k}={_text(v)}" for k, v in self.cell.items()) or "all runs"


@dataclass
class Study:
    name: str
    seed: str
    title: str
    question: str
    original: str
    simplifications: list[str]
    analyses: list[str]
    unit: str
    discussion: list[str]
    full_runtime: str
    quick_runtime: str
    parts: list[Part]
    published: list[Published]
    path: Path
    text: str = ""

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(name)

    def n_runs(self, quick: bool = False, repeat: Optional[int] = None) -> int:
        return sum(p.n_runs(quick, repeat) for p in self.parts)

    def simulated_s(self, quick: bool = False, repeat: Optional[int] = None) -> float:
        return sum(p.n_runs(quick, repeat) * p.duration_s(quick) for p in self.parts)


# --------------------------------------------------------------------------------------------
# loading and validation


def _text(v: Any) -> str:
    from .sweep import param_str

    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    return param_str(v)


def _expect_str(src, key, v, required=True) -> str:
    if v is None and not required:
        return ""
    if not isinstance(v, str) or (required and not v.strip()):
        raise StudyError(src, key, f"{v!r} is not a non-empty string" if v is not None
                         else "required key is missing", "a string")
    return v


def _expect_str_list(src, key, v) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise StudyError(src, key, f"{v!r} is not a list of strings", '["...", "..."]')
    return list(v)


def _check_keys(src, where, table, allowed, required=()) -> None:
    import difflib

    if not isinstance(table, Mapping):
        raise StudyError(src, where, f"{table!r} is not a table", "a TOML table")
    for k in table:
        if k not in allowed:
            close = difflib.get_close_matches(k, sorted(allowed), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise StudyError(src, f"{where}.{k}" if where else k, f"unknown key '{k}'{hint}",
                             "one of " + ", ".join(sorted(allowed)))
    for k in required:
        if k not in table:
            raise StudyError(src, f"{where}.{k}" if where else k, "required key is missing",
                             None)


def load_study(path: str | os.PathLike) -> Study:
    """Read and validate a study file. Raises StudyError (file, key path, what was expected)."""
    path = Path(path)
    src = str(path)
    text = read_toml_text(path, "a study .toml file or a built-in study name", StudyError)
    try:
        raw = parse_toml(text, src)
    except ScenarioError as e:
        raise StudyError(e.source, e.key, e.problem, e.expected) from None
    return study_from_dict(raw, src, path, text)


def study_from_dict(raw: Mapping[str, Any], src: str = "<study>", path: Optional[Path] = None,
                    text: str = "") -> Study:
    _check_keys(src, "", raw, _TOP_KEYS, ("study", "part"))
    st = raw["study"]
    _check_keys(src, "study", st, _STUDY_KEYS, _STUDY_REQUIRED)
    name = _expect_str(src, "study.name", st["name"])
    if "/" in name or name != name.strip():
        raise StudyError(src, "study.name", f"{name!r} is not a plain name",
                         "a name without '/' or surrounding spaces")
    seed = st["seed"]
    if isinstance(seed, int) and not isinstance(seed, bool):
        seed = f"{seed:03d}"
    seed = _expect_str(src, "study.seed", seed)
    analyses = _expect_str_list(src, "study.analyses", st.get("analyses"))
    for i, a in enumerate(analyses):
        if a not in ANALYSES:
            raise StudyError(src, f"study.analyses.{i}", f"unknown analysis {a!r}",
                             "one of " + ", ".join(sorted(ANALYSES)))
    unit = st.get("unit", "Mbit/s")
    if unit not in _GOODPUT_UNITS:
        raise StudyError(src, "study.unit", f"{unit!r} is not a goodput unit",
                         "one of " + ", ".join(_GOODPUT_UNITS))
    parts_raw = raw["part"]
    if not isinstance(parts_raw, list) or not parts_raw:
        raise StudyError(src, "part", "expected at least one [[part]] table", "[[part]] tables")
    parts = [_load_part(src, i, p, name) for i, p in enumerate(parts_raw)]
    names = [p.name for p in parts]
    for i, n in enumerate(names):
        if names.index(n) != i:
            raise StudyError(src, f"part.{i}.name", f"part name {n!r} is used twice",
                             "a distinct name per part")
    published = [_load_published(src, i, r, parts)
                 for i, r in enumerate(_as_list(src, "published", raw.get("published", [])))]
    return Study(
        name=name, seed=seed,
        title=_expect_str(src, "study.title", st["title"]),
        question=_expect_str(src, "study.question", st["question"]),
        original=_expect_str(src, "study.original", st["original"]),
        simplifications=_expect_str_list(src, "study.simplifications", st.get("simplifications")),
        analyses=analyses, unit=unit,
        discussion=_expect_str_list(src, "study.discussion", st.get("discussion")),
        full_runtime=_expect_str(src, "study.full_runtime", st.get("full_runtime"), required=False),
        quick_runtime=_expect_str(src, "study.quick_runtime", st.get("quick_runtime"), required=False),
        parts=parts, published=published, path=path or Path(src), text=text)


def _as_list(src, key, v) -> list:
    if not isinstance(v, list):
        raise StudyError(src, key, f"{v!r} is not a list of tables", f"[[{key}]] tables")
    return v


def _load_part(src: str, i: int, p: Any, study: str) -> Part:
    where = f"part.{i}"
    _check_keys(src, where, p, _PART_KEYS, ("name", "scenario"))
    name = _expect_str(src, f"{where}.name", p["name"])
    if "/" in name:
        raise StudyError(src, f"{where}.name", f"{name!r} contains '/'", "a plain name")
    scen = p["scenario"]
    if not isinstance(scen, Mapping):
        raise StudyError(src, f"{where}.scenario", f"{scen!r} is not a table", "a scenario table")
    for k in ("name", "sweep"):
        if k in scen:
            raise StudyError(src, f"{where}.scenario.{k}",
                             f"'{k}' is set by the study" + (" (the grid is part.sweep)" if k == "sweep" else
                                                           f" (the scenario is named '{study}/{name}')"),
                             "no such key in part.scenario")
    sweep_t = p.get("sweep", {}) or {}
    quick_t = p.get("quick", {}) or {}
    if not isinstance(sweep_t, Mapping):
        raise StudyError(src, f"{where}.sweep", f"{sweep_t!r} is not a table", "axes = [values] and repeat")
    if not isinstance(quick_t, Mapping):
        raise StudyError(src, f"{where}.quick", f"{quick_t!r} is not a table",
                         "duration, repeat and replacement axes")
    sweep_t = _flatten_axes(sweep_t)
    quick_t = _flatten_axes(quick_t)
    for k in quick_t:
        if k not in ("duration", "repeat") and k not in sweep_t:
            raise StudyError(src, f"{where}.quick.{k}", f"{k!r} is not an axis of part.sweep",
                             "duration, repeat, or a replacement for one of "
                             + (", ".join(k2 for k2 in sweep_t if k2 not in ("repeat", "zip")) or "no axes"))
    part = Part(name=name, description=str(p.get("description", "")),
                scenario_raw=copy.deepcopy(dict(scen)), sweep=dict(sweep_t), quick=dict(quick_t),
                study=study)
    for quick in (False, True):
        label = "quick" if quick else "sweep"
        try:
            sc = part.scenario(quick, source=src)
        except ScenarioError as e:
            key = e.key or ""
            if key == "duration" and quick:
                key = f"{where}.quick.duration"
            elif key.startswith("sweep"):
                key = f"{where}.{label}{key[5:]}"
            else:
                key = f"{where}.scenario.{key}".rstrip(".")
            raise StudyError(src, key, e.problem, e.expected) from None
        _check_grid(src, f"{where}.{label}", sc)
    return part


def _flatten_axes(table: Mapping[str, Any]) -> dict:
    """Unquoted dotted keys in TOML make nested tables: flatten them to key paths, as [sweep]."""
    out: dict[str, Any] = {}

    def walk(prefix: str, v: Any):
        if isinstance(v, Mapping):
            for k, v2 in v.items():
                walk(f"{prefix}.{k}" if prefix else k, v2)
        else:
            out[prefix] = v

    for k, v in table.items():
        if k in ("duration", "repeat", "zip"):
            out[k] = v
        else:
            walk(k, v)
    return out


def _check_grid(src: str, where: str, sc: Scenario) -> None:
    from .sweep import Grid, SweepError, param_str

    try:
        grid = Grid.from_table(sc.sweep, source=src)
    except SweepError as e:
        raise StudyError(src, where, str(e).removeprefix(f"{src}: "), None) from None
    for cell in grid.cells():
        try:
            sc.with_overrides(cell)
        except ScenarioError as e:
            desc = ", ".join(f"{k}={param_str(v)}" for k, v in cell.items())
            raise StudyError(src, f"{where}.{e.key}" if e.key else where,
                             f"cell {desc}: {e.problem}", e.expected) from None


def _load_published(src: str, i: int, r: Any, parts: list[Part]) -> Published:
    where = f"published.{i}"
    _check_keys(src, where, r, _PUBLISHED_KEYS, ("part", "metric", "value", "unit"))
    names = [p.name for p in parts]
    if r["part"] not in names:
        raise StudyError(src, f"{where}.part", f"unknown part {r['part']!r}", "one of " + ", ".join(names))
    part = parts[names.index(r["part"])]
    metric = r["metric"]
    if metric not in METRICS:
        raise StudyError(src, f"{where}.metric", f"unknown metric {metric!r}",
                         "one of " + ", ".join(METRICS))
    units = _UNITS[METRICS[metric][0]]
    if r["unit"] not in units:
        raise StudyError(src, f"{where}.unit", f"{r['unit']!r} is not a unit of {metric}",
                         "one of " + ", ".join(repr(u) for u in units))
    value = r["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise StudyError(src, f"{where}.value", f"{value!r} is not a number", "e.g. value = 5.03")
    cell = r.get("cell", {}) or {}
    if not isinstance(cell, Mapping):
        raise StudyError(src, f"{where}.cell", f"{cell!r} is not a table",
                         '{ "bottleneck.loss" = "1%", cc = "cubic" }')
    cell = _flatten_axes(cell)
    axes = part.axes()
    ccs = {str(g.get("cc", "")).lower() for g in part.scenario_raw.get("flows", [])}
    for key, v in axes.items():
        if key.endswith(".cc"):
            ccs.update(str(x).lower() for x in v)
    for k, v in cell.items():
        if k == "cc":
            if str(v).lower() not in ccs:
                raise StudyError(src, f"{where}.cell.cc", f"{v!r} does not run in part {part.name!r}",
                                 "one of " + ", ".join(sorted(ccs)))
            continue
        if k not in axes:
            raise StudyError(src, f"{where}.cell.{k}", f"{k!r} is not swept in part {part.name!r}",
                             "cc or one of " + (", ".join(axes) or "no axes"))
        if not any(_text(v) == _text(x) for x in axes[k]):
            raise StudyError(src, f"{where}.cell.{k}", f"{v!r} is not in the grid",
                             "one of " + ", ".join(_text(x) for x in axes[k]))
    needs_cc = metric in ("goodput", "goodput_total", "rtt_mean", "rtt_max", "cv", "period")
    if metric == "bbr_cubic_ratio" and "cc" in cell:
        raise StudyError(src, f"{where}.cell.cc", "a BBR/CUBIC ratio compares two algorithms",
                         "a cell without cc")
    if needs_cc and "cc" not in cell and not any(k.endswith(".cc") for k in cell) and len(ccs) > 1:
        raise StudyError(src, f"{where}.cell", f"metric {metric} needs the algorithm",
                         'cc = "<algorithm>" in the cell')
    return Published(part=part.name, cell=dict(cell), metric=metric, value=float(value),
                     unit=r["unit"], where=str(r.get("where", "")))


# --------------------------------------------------------------------------------------------
# discovery


def builtin_studies() -> list[Path]:
    """The built-in study files (studies/*.toml with a [study] table), by name."""
    out = []
    for p in sorted(BUILTIN_DIR.glob("*.toml")):
        try:
            head = tomllib.loads(p.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if isinstance(head.get("study"), Mapping):
            out.append(p)
    return out


def list_studies() -> list[Study]:
    return [load_study(p) for p in builtin_studies()]


def find_study(name_or_path: str | os.PathLike) -> Study:
    """A built-in study by name, or a study file by path."""
    text = str(name_or_path)
    p = Path(text)
    if p.suffix == ".toml" or os.sep in text or p.is_file():
        return load_study(p)  # a path (a directory of the same name as a study does not count)
    for path in builtin_studies():
        if path.stem == text:
            return load_study(path)
    names = [p.stem for p in builtin_studies()]
    import difflib

    close = difflib.get_close_matches(text, names, n=1)
    raise StudyError(None, None, f"no built-in study {text!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
                     "one of " + ", ".join(names) + ", or a path to a study .toml file")


# --------------------------------------------------------------------------------------------
# running


def default_out(study: Study, quick: bool = False) -> Path:
    return Path("results") / (f"{study.name}-quick" if quick else study.name)


@dataclass
class StudyRun:
    study: Study
    out: Path
    quick: bool
    backend: str
    summaries: list = field(default_factory=list)
    wall_s: float = 0.0
    report: Optional[Path] = None

    @property
    def all_ok(self) -> bool:
        return all(s.all_ok for s in self.summaries)


def run_study(study: Study | str | os.PathLike, out: str | os.PathLike | None = None, *,
              backend: str = "sim", quick: bool = False, repeat: Optional[int] = None,
              workers: Optional[int] = None, progress: bool = True, console: Any = None,
              command: Optional[Sequence[str]] = None, report: bool = True) -> StudyRun:
    """Sweep every part into one store ``out``, write ccbench.json naming the study, and
    (``report``) DIR/report.html. Runs already stored are skipped, like ``ccbench sweep``."""
    from . import sweep as sw

    if not isinstance(study, Study):
        study = find_study(study)
    out = Path(out) if out is not None else default_out(study, quick)
    run = StudyRun(study, out, quick, backend)
    t0 = time.perf_counter()
    extra = {"command": list(command) if command is not None else list(sys.argv), "study": study.name}
    scenarios = [part.scenario(quick, repeat, source=str(study.path)) for part in study.parts]
    check_backend(study, scenarios, backend)
    for part, sc in zip(study.parts, scenarios):
        if progress and console is not None:
            console.print(f"[bold]{study.name}[/]: part {part.name} - {sc.describe()}",
                          highlight=False, soft_wrap=True)
        run.summaries.append(sw.run_sweep(sc, out, backend=backend, workers=workers,
                                          progress=progress, console=console, **extra))
    run.wall_s = time.perf_counter() - t0
    write_meta(study, out, quick=quick, backend=backend, repeat=repeat, command=command)
    if report:
        from .report import build_report

        run.report = build_report(out)
    return run


def check_backend(study: Study, scenarios: Sequence[Scenario], backend: str) -> None:
    """Refuse, before anything runs, a study that the backend cannot run in some cell (e.g. an
    access-link rate or Vegas on the kernel backend): the ScenarioError names the part's file,
    key and what was expected, and the part."""
    from . import backends
    from . import sweep as sw

    for part, sc in zip(study.parts, scenarios):
        for spec in sw.plan(sc, sw.grid_from_scenario(sc), backend):
            try:
                backends.check(spec.scenario, backend)
            except ScenarioError as e:
                raise StudyError(e.source, e.key, f"part {part.name!r} cannot run on the {backend} "
                                 f"backend: {e.problem}", e.expected) from None


def write_meta(study: Study, out: Path, *, quick: bool, backend: str, repeat: Optional[int],
               command: Optional[Sequence[str]] = None) -> Path:
    """DIR/ccbench.json for the whole study (replaces the one each part's sweep wrote)."""
    from . import __version__

    parts = []
    grid: dict[str, list] = {}
    for p in study.parts:
        table = p.sweep_table(quick, repeat)
        axes = {k: v for k, v in table.items() if k not in ("repeat", "zip")}
        for k, v in axes.items():  # the union over parts, in first-seen order (contract shape)
            known = grid.setdefault(k, [])
            known.extend(x for x in v if not any(_text(x) == _text(y) for y in known))
        parts.append({"name": p.name, "scenario_name": p.scenario_name, "description": p.description,
                      "grid": axes, "repeat": table["repeat"], "runs": p.n_runs(quick, repeat),
                      "duration_s": p.duration_s(quick),
                      "scenario": p.scenario(quick, repeat).describe()})
    repeats = {p["repeat"] for p in parts}
    versions = {"ccbench": __version__, "python": platform.python_version(),
                "numpy": np.__version__, "pandas": pd.__version__}
    try:
        import scipy

        versions["scipy"] = scipy.__version__
    except ImportError:  # pragma: no cover
        pass
    meta = {
        "ccbench_version": __version__,
        "command": list(command) if command is not None else list(sys.argv),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "backend": backend,
        "kernel_version": platform.release(),
        "scenario_file": str(study.path),
        "scenario_toml": study.text,
        "grid": grid,
        "repeat": repeats.pop() if len(repeats) == 1 else {p["name"]: p["repeat"] for p in parts},
        "study": study.name,
        "study_title": study.title,
        "seed_document": study.seed,
        "question": study.question,
        "quick": quick,
        "parts": parts,
        "versions": versions,
    }
    path = Path(out) / "ccbench.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(".ccbench.json.tmp")
    tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n")
    tmp.replace(path)
    return path


# --------------------------------------------------------------------------------------------
# the part of a store that one part wrote


class PartData:
    """runs / flows / series / link_series of one part (a Results-like object for plots)."""

    def __init__(self, results: Any, part: Part):
        self.part = part
        self._results = results
        runs = results.runs
        if "name" in runs.columns:
            runs = runs[runs["name"] == part.scenario_name]
        if "status" in runs.columns:
            runs = runs[runs["status"] == "ok"]
        self.runs = runs.reset_index(drop=True)
        ids = set(self.runs["run_id"]) if "run_id" in self.runs else set()
        flows = results.flows
        self.flows = flows[flows["run_id"].isin(ids)].reset_index(drop=True) if "run_id" in flows else flows
        self._ids = ids
        self._lazy: dict[str, pd.DataFrame] = {}
        meta = dict(getattr(results, "meta", {}) or {})
        meta["grid"] = part.axes(bool(meta.get("quick")))  # this part's own axes, for plots
        self.meta = meta

    def _part_rows(self, table: str) -> pd.DataFrame:
        """This part's rows of a time-series table of the whole store (read lazily, once)."""
        if table not in self._lazy:
            s = getattr(self._results, table, None)
            s = s if isinstance(s, pd.DataFrame) else pd.DataFrame()
            self._lazy[table] = s[s["run_id"].isin(self._ids)].reset_index(drop=True) if "run_id" in s else s
        return self._lazy[table]

    @property
    def series(self) -> pd.DataFrame:
        return self._part_rows("series")

    @property
    def link_series(self) -> pd.DataFrame:
        return self._part_rows("link_series")

    @property
    def empty(self) -> bool:
        return self.runs.empty


def _column(df: pd.DataFrame, key: str) -> Optional[str]:
    for c in (key, f"sweep.{key}"):
        if c in df.columns:
            return c
    return None


def _same(a: Any, b: Any) -> bool:
    if hasattr(a, "item") and not isinstance(a, (str, bytes)):
        a = a.item()
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return _text(a) == _text(b)


def _match(df: pd.DataFrame, cell: Mapping[str, Any], with_cc: bool = True,
           columns: Optional[Sequence[str]] = None) -> pd.DataFrame:
    """The rows of ``df`` in ``cell`` (only ``columns`` when given: taking rows of a wide frame
    of nullable columns costs milliseconds, and a study report asks once per cell and metric)."""
    if columns is not None:
        columns = list(dict.fromkeys(columns))
    mask = pd.Series(True, index=df.index)
    for k, v in cell.items():
        if k == "cc":
            if with_cc and "cc" in df.columns:
                mask &= df["cc"].astype(str).str.lower() == str(v).lower()
            continue
        col = _column(df, k)
        if col is None:
            return df.iloc[:0] if columns is None else df.loc[df.index[:0], columns]
        values = df[col]
        hits = [u for u in pd.unique(values) if _same(u, v)]  # compare each distinct value once
        mask &= values.isin(hits)
    return df[mask] if columns is None else df.loc[mask, columns]


# --------------------------------------------------------------------------------------------
# measured values


@dataclass
class Measured:
    mean: Optional[float]
    lo: Optional[float] = None
    hi: Optional[float] = None
    n: int = 0
    note: str = ""


def _ci(values: Sequence[float], high: Optional[float] = None) -> Measured:
    """Mean and 95 % t interval over the runs of a quantity that is never negative (every
    study metric: goodput, RTT, ping, Jain's index with ``high=1``, period), cut to its range
    (analysis.mean_ci: near 0 a t interval of 3 repeats would reach below 0)."""
    from . import analysis

    v = [float(x) for x in values if x is not None and np.isfinite(x)]
    if not v:
        return Measured(None, note="no runs in this cell")
    ci = analysis.mean_ci(v, nonnegative=True, bounds=(0.0, high))
    return Measured(ci.mean, ci.lo, ci.hi, ci.n)


def _ratio_lo(lo: Optional[float]) -> Optional[float]:
    """A goodput ratio's lower bound, cut at 0 (Fieller's interval reaches below 0 when the
    numerator's mean is not significantly above 0)."""
    return None if lo is None else max(lo, 0.0)


def per_run(data: PartData, cell: Mapping[str, Any], column: str = "goodput_bps",
            how: str = "mean") -> pd.Series:
    """One value per run of the cell: ``how`` (mean | sum | max) of ``column`` over its flows."""
    if column not in data.flows.columns or "run_id" not in data.flows.columns:
        return pd.Series(dtype=float)
    flows = _match(data.flows, cell, columns=["run_id", column])
    if flows.empty:
        return pd.Series(dtype=float)
    return flows.groupby("run_id")[column].agg(how).astype(float)


def _group_aggregate(series: pd.DataFrame, run_id: str, cc: str) -> tuple[np.ndarray, np.ndarray]:
    s = series[(series["run_id"] == run_id) & (series["cc"].astype(str).str.lower() == cc.lower())]
    agg = s.groupby("t_s")["goodput_bps"].sum().sort_index()
    return agg.index.to_numpy(dtype=float), agg.to_numpy(dtype=float)


def group_periodicity(data: PartData, run_id: str, cc: str):
    """analysis.dominant_period of a group's aggregate throughput after its steady-state start.
    Returns (steady-state start, Periodicity)."""
    from . import analysis

    t, v = _group_aggregate(data.series, run_id, cc)
    if t.size < 8:
        return None, None
    start = analysis.steady_state_start(t, v)
    keep = t >= (start if start is not None else t[0])
    return start, analysis.dominant_period(t[keep], v[keep])


def measure(data: PartData, row: Published) -> Measured:
    """The measured counterpart of a published row, in the row's unit."""
    from . import analysis

    kind = METRICS[row.metric][0]
    scale = _UNITS[kind][row.unit]
    m: Measured
    if row.metric in ("goodput", "goodput_total"):
        m = _ci(per_run(data, row.cell, "goodput_bps", "mean" if row.metric == "goodput" else "sum"))
    elif row.metric == "rtt_mean":
        m = _ci(per_run(data, row.cell, "rtt_mean_ms", "mean"))
    elif row.metric == "rtt_max":
        flows = _match(data.flows, row.cell)
        s = data.series
        if not s.empty and "rtt_ms" in s.columns:
            s = s[s["run_id"].isin(set(flows["run_id"])) & s["flow_id"].isin(set(flows["flow_id"]))]
            if "cc" in row.cell:
                s = s[s["cc"].astype(str).str.lower() == str(row.cell["cc"]).lower()]
            m = _ci(s.groupby("run_id")["rtt_ms"].max().astype(float))
        else:
            m = _ci(per_run(data, row.cell, "rtt_p99_ms", "max"))
            m.note = "p99 of the flow's RTT (no series stored)"
    elif row.metric in ("probe_p50", "probe_p95", "jain_index"):
        col = {"probe_p50": "probe_rtt_p50_ms", "probe_p95": "probe_rtt_p95_ms",
               "jain_index": "jain_index"}[row.metric]
        runs = _match(data.runs, row.cell, with_cc=False)
        if "cc" in row.cell:
            ok = set(_match(data.flows, row.cell)["run_id"])
            runs = runs[runs["run_id"].isin(ok)]
        m = _ci(runs[col].astype(float) if col in runs.columns else [],
                high=1.0 if row.metric == "jain_index" else None)
    elif row.metric == "cv":
        v = per_run(data, row.cell).to_numpy()
        v = v[np.isfinite(v)]
        if v.size < 2:
            m = Measured(None, n=int(v.size), note="needs at least 2 runs")
        else:
            cv = lambda x, axis=None: 100 * np.std(x, ddof=1, axis=axis) / np.mean(x, axis=axis)  # noqa: E731
            b = analysis.bootstrap_ci(v, stat=cv)
            m = Measured(b.mean, b.lo, b.hi, b.n, "bootstrap interval")
    elif row.metric == "bbr_cubic_ratio":
        a = per_run(data, {**row.cell, "cc": "bbr"})
        b = per_run(data, {**row.cell, "cc": "cubic"})
        if a.empty or b.empty:
            m = Measured(None, note="no runs of both algorithms in this cell")
        else:
            r = analysis.ratio_ci(a.to_numpy(), b.to_numpy())
            m = Measured(r.ratio, _ratio_lo(r.lo), r.hi, min(r.n_a, r.n_b), f"{r.method} interval")
    elif row.metric == "period":
        cc = str(row.cell.get("cc", ""))
        runs = _match(data.runs, row.cell, with_cc=False)
        periods = []
        for rid in runs["run_id"]:
            _, per = group_periodicity(data, rid, cc)
            if per is not None and per.period_s is not None:
                periods.append(per.period_s)
        m = _ci(periods)
        m.note = f"{len(periods)} of {len(runs)} runs with a significant period"
    else:  # pragma: no cover - validated on load
        raise KeyError(row.metric)
    if m.mean is not None and kind in ("goodput", "time_ms", "time_s") and scale != 1.0:
        m = Measured(m.mean * scale, None if m.lo is None else m.lo * scale,
                     None if m.hi is None else m.hi * scale, m.n, m.note)
    return m


def verdict(published: float, m: Measured) -> str:
    """agrees (published inside our 95 % interval, and the interval is informative: half-width
    at most 25 % of the mean) | inconclusive (inside an interval wider than that) | close (mean
    within ±25 % of the published value) | disagrees."""
    if m.mean is None:
        return "not measured"
    if m.lo is not None and m.hi is not None and m.lo <= published <= m.hi:
        if (m.hi - m.lo) / 2 <= 0.25 * abs(m.mean):
            return "agrees"
        if not (published != 0 and 0.8 <= m.mean / published <= 1.25):
            return "inconclusive"
    if published != 0 and 0.8 <= m.mean / published <= 1.25:
        return "close"
    return "disagrees"


def _fmt(v: Optional[float], digits: int = 3) -> Optional[float]:
    if v is None or not np.isfinite(v):
        return None
    if v == 0:
        return 0.0
    return float(f"{v:.{digits}g}")


def published_table(study: Study, results: Any) -> pd.DataFrame:
    """The seed's numbers beside ours, cell by cell."""
    rows = []
    datas = {p.name: PartData(results, p) for p in study.parts}
    for row in study.published:
        m = measure(datas[row.part], row)
        ratio = (m.mean / row.value) if (m.mean is not None and row.value) else None
        rows.append({
            "part": row.part, "cell": row.cell_text(), "metric": row.metric, "unit": row.unit,
            "published": row.value, "measured": _fmt(m.mean), "95% lo": _fmt(m.lo),
            "95% hi": _fmt(m.hi), "n": m.n, "measured / published": _fmt(ratio, 2),
            "verdict": verdict(row.value, m), "seed source": row.where,
            "note": m.note,
        })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# report sections


def _section(title: str, paragraphs=(), tables=(), figures=()):
    from .report import Section

    return Section(title, list(paragraphs), list(tables), list(figures))


def _ci_cols(m: Measured, scale: float = 1.0, digits: int = 4) -> dict:
    f = lambda v: None if v is None else _fmt(v * scale, digits)  # noqa: E731
    return {"mean": f(m.mean), "95% lo": f(m.lo), "95% hi": f(m.hi), "n": m.n}


def _cells(data: PartData, exclude_cc: bool = True) -> list[dict]:
    """The grid cells of a part present in the data (cc axes excluded), in grid order."""
    from .sweep import Grid

    axes = {k: v for k, v in data.part.axes(_is_quick(data)).items()
            if not (exclude_cc and k.endswith(".cc"))}
    return Grid.from_table(axes).cells() if axes else [{}]


def _is_quick(data: PartData) -> bool:
    return bool(data.meta.get("quick"))


def _cell_ccs(data: PartData):
    """Every (grid cell, cc) pair of a part, cells in grid order, algorithms in _ccs order."""
    for cell in _cells(data):
        for cc in _ccs(data):
            yield cell, cc


def _ccs(data: PartData) -> list[str]:
    if "cc" not in data.flows.columns:
        return []
    order = {"cubic": 0, "bbr": 1, "vegas": 2, "reno": 3}
    return sorted(data.flows["cc"].astype(str).unique(), key=lambda c: (order.get(c, 9), c))


def _cell_cols(cell: Mapping[str, Any]) -> dict:
    return {k: _text(v) for k, v in cell.items()}


def _goodput_scale(study: Study) -> float:
    return _GOODPUT_UNITS[study.unit]


def analysis_goodput(study: Study, datas: list[PartData]):
    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        rows = []
        for cell, cc in _cell_ccs(d):
            m = _ci(per_run(d, {**cell, "cc": cc}))
            if m.n:
                rows.append({**_cell_cols(cell), "cc": cc, **_ci_cols(m, scale)})
        if rows:
            tables.append((f"{d.part.name}: goodput per flow ({study.unit}), mean of repeats with "
                           f"the 95 % t interval (cut at 0)", pd.DataFrame(rows)))
    return _section("Goodput", [f"One value per run (the mean over the run's flows of that "
                                f"algorithm); n runs per cell."], tables)


def analysis_ratio(study: Study, datas: list[PartData]):
    from . import analysis

    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        if not {"bbr", "cubic"} <= set(_ccs(d)):
            continue
        rows = []
        for cell in _cells(d):
            a = per_run(d, {**cell, "cc": "bbr"})
            b = per_run(d, {**cell, "cc": "cubic"})
            if a.empty or b.empty:
                continue
            r = analysis.ratio_ci(a.to_numpy(), b.to_numpy())
            w = analysis.welch_test(a.to_numpy(), b.to_numpy())
            rows.append({**_cell_cols(cell), f"CUBIC {study.unit}": _fmt(b.mean() * scale, 4),
                         f"BBR {study.unit}": _fmt(a.mean() * scale, 4),
                         "BBR/CUBIC": _fmt(r.ratio), "95% lo": _fmt(_ratio_lo(r.lo)), "95% hi": _fmt(r.hi),
                         "Welch p": _fmt(w.p_value, 2), "winner": _winner(r, w)})
        if rows:
            tables.append((f"{d.part.name}: BBR/CUBIC goodput ratio ({'Fieller'} interval) and "
                           f"Welch's t test", pd.DataFrame(rows)))
    return _section("BBR / CUBIC ratio", [
        "winner: BBR or CUBIC when Welch's test gives p < 0.05, the ratio's 95 % interval "
        "excludes 1 and the means differ by at least 5 %; otherwise tie."], tables)


#: a difference in mean goodput smaller than this is called a tie even when it is significant
PRACTICAL_DIFFERENCE = 0.05


def _winner(r, w) -> str:
    if r.ratio is None or w.p_value is None or not np.isfinite(w.p_value):
        return "tie" if r.ratio is not None else "?"
    if abs(r.ratio - 1) < PRACTICAL_DIFFERENCE:
        return "tie"
    if w.p_value < 0.05:
        if r.lo is not None and r.lo > 1:
            return "BBR"
        if r.hi is not None and np.isfinite(r.hi) and r.hi < 1:
            return "CUBIC"
    return "tie"


def analysis_variability(study: Study, datas: list[PartData]):
    from . import analysis

    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        rows = []
        for cell, cc in _cell_ccs(d):
            v = per_run(d, {**cell, "cc": cc}).to_numpy()
            if v.size == 0:
                continue
            cv = analysis.coefficient_of_variation(v)
            bi = analysis.bimodality(v)
            means = getattr(bi, "means", None)
            rows.append({**_cell_cols(cell), "cc": cc, "n": int(v.size),
                         "mean": _fmt(float(np.mean(v)) * scale, 4),
                         "CV %": _fmt(cv * 100 if cv is not None else None, 3),
                         "bimodal": {True: "yes", False: "no"}.get(bi.bimodal, "n too small"),
                         "mode means": (" / ".join(f"{x * scale:.4g}" for x in means)
                                        if means and bi.bimodal else ""),
                         "ΔBIC": _fmt(getattr(bi, "delta_bic", None), 3)})
        if rows:
            tables.append((f"{d.part.name}: run-to-run variability of goodput ({study.unit}); "
                           f"bimodality from analysis.bimodality (two-Gaussian mixture vs one, BIC)",
                           pd.DataFrame(rows)))
    return _section("Variability and bimodality", [
        "CV is the sample standard deviation of per-run goodput over its mean, across the repeats of "
        "a cell. The seed calls CUBIC's results in the chaos zone bimodal ('bifurcation')."], tables)


def analysis_recommendation(study: Study, datas: list[PartData]):
    from . import analysis

    classes = [("low (< 16 %)", lambda r: r < 0.16 - 1e-9),
               ("chaos zone (16-24 %)", lambda r: 0.16 - 1e-9 <= r <= 0.24 + 1e-9),
               ("high (> 24 %)", lambda r: r > 0.24 + 1e-9)]
    seed_says = {"low (< 16 %)": "Either works (~1.0x)", "chaos zone (16-24 %)": "Test both (variable)",
                 "high (> 24 %)": "BBR (1.9-3.9x)"}
    per = []
    for d in datas:
        f = d.flows
        if f.empty or not {"jitter_ms", "base_rtt_ms", "cc"} <= set(f.columns):
            continue
        g = f.groupby(["run_id", "cc"]).agg(goodput=("goodput_bps", "mean"), jitter=("jitter_ms", "first"),
                                            rtt=("base_rtt_ms", "first")).reset_index()
        per.append(g)
    if not per:
        return _section("Recommendation by jitter/RTT", ["no runs with jitter"])
    g = pd.concat(per, ignore_index=True)
    g["ratio"] = g["jitter"].astype(float) / g["rtt"].astype(float)
    rows = []
    for label, test in classes:
        sub = g[g["ratio"].map(test)]
        a = sub[sub["cc"] == "bbr"]["goodput"].to_numpy()
        b = sub[sub["cc"] == "cubic"]["goodput"].to_numpy()
        if a.size == 0 or b.size == 0:
            rows.append({"jitter/RTT": label, "cells": "", "runs": 0, "ours": "not in this grid",
                         "BBR/CUBIC": None, "95% lo": None, "95% hi": None, "Welch p": None,
                         "seed says": seed_says[label]})
            continue
        r = analysis.ratio_ci(a, b)
        w = analysis.welch_test(a, b)
        win = _winner(r, w)
        cells = sorted({f"{j:g}/{t:g} ms" for j, t in zip(sub["jitter"], sub["rtt"])})
        rows.append({"jitter/RTT": label, "cells": ", ".join(cells), "runs": int(len(sub)),
                     "ours": {"tie": "either (no significant difference)"}.get(win, win),
                     "BBR/CUBIC": _fmt(r.ratio), "95% lo": _fmt(_ratio_lo(r.lo)), "95% hi": _fmt(r.hi),
                     "Welch p": _fmt(w.p_value, 2), "seed says": seed_says[label]})
    return _section("Recommendation by jitter/RTT ratio (from our data)", [
        "Runs pooled by the ratio of the jitter (± amplitude) to the base RTT, as the seed's table; "
        "a class is won when Welch's test gives p < 0.05, the ratio's interval excludes 1 and the "
        "means differ by at least 5 %."],
        [("Which algorithm wins, by jitter/RTT", pd.DataFrame(rows))])


def _figure(kind: str, data: PartData, caption: str, figures: list, problems: list, **kw) -> None:
    try:
        from . import plots

        figures.append((caption, plots.make(data, kind, **kw)))
    except Exception as e:  # noqa: BLE001 - a figure that cannot be drawn is reported, not fatal
        problems.append(f"figure {kind} ({caption}) not drawn: {e}")


def analysis_goodput_figure(study: Study, datas: list[PartData]):
    figures, problems = [], []
    for d in datas:
        axes = d.part.axes()
        x = "loss" if any(k.endswith("loss") for k in axes) else "jitter"
        _figure(f"goodput-vs-{x}", d, f"{d.part.name}: goodput vs {x}", figures, problems)
        if {"bbr", "cubic"} <= set(_ccs(d)):
            _figure("ratio", d, f"{d.part.name}: BBR/CUBIC ratio vs {x}", figures, problems)
    return _section("Figures", problems, figures=figures)


def _time_figures(kind: str, label: str, study: Study, datas: list[PartData]):
    figures, problems = [], []
    for d in datas:
        loss_key = next((k for k in d.part.axes() if k.endswith("loss")), None)
        base = {loss_key: d.part.axes()[loss_key][0]} if loss_key else {}
        cc_key = next((k for k in d.part.axes() if k.endswith(".cc")), None)
        if cc_key:
            for cc in d.part.axes()[cc_key]:
                _figure(kind, d, f"{d.part.name}: {label}, {cc}" + (f", {loss_key}={_text(base[loss_key])}" if base else ""),
                        figures, problems, where={**base, cc_key: cc, "repeat": 0})
        else:
            _figure(kind, d, f"{d.part.name}: {label}" + (f", {loss_key}={_text(base[loss_key])}" if base else ""),
                    figures, problems, where={**base, "repeat": 0})
    return _section(f"{label[:1].upper()}{label[1:]} over time", problems, figures=figures)


def analysis_rtt_time(study, datas):
    return _time_figures("rtt-time", "RTT", study, datas)


def analysis_cwnd_time(study, datas):
    return _time_figures("cwnd-time", "congestion window", study, datas)


def analysis_throughput(study: Study, datas: list[PartData]):
    """Seed 001's table: CUBIC, BBR and BBR's improvement by loss, published beside ours."""
    scale = _goodput_scale(study)
    pub = {(r.part, _text(r.cell.get("bottleneck.loss", "")), r.cell.get("cc")): r.value
           for r in study.published if r.metric == "goodput"}
    tables = []
    for d in datas:
        loss_key = next((k for k in d.part.axes() if k.endswith("loss")), None)
        if loss_key is None:
            continue
        rows = []
        for loss in d.part.axes(_is_quick(d))[loss_key]:
            cell = {loss_key: loss}
            c = per_run(d, {**cell, "cc": "cubic"})
            b = per_run(d, {**cell, "cc": "bbr"})
            if c.empty and b.empty:
                continue
            cm, bm = c.mean() * scale, b.mean() * scale
            pc, pb = pub.get((d.part.name, _text(loss), "cubic")), pub.get((d.part.name, _text(loss), "bbr"))
            rows.append({"loss": _text(loss), f"CUBIC ours": _fmt(cm, 3), "CUBIC seed": pc,
                         f"BBR ours": _fmt(bm, 3), "BBR seed": pb,
                         "BBR improvement ours %": _fmt((bm / cm - 1) * 100, 3) if cm else None,
                         "BBR improvement seed %": _fmt((pb / pc - 1) * 100, 3) if pc and pb else None})
        if rows:
            what = "alone on the link" if len(d.part.scenario_raw.get("flows", [])) == 1 else \
                "competing in the same run (per-flow goodput)"
            tables.append((f"{d.part.name}: throughput ({study.unit}) by random loss, {what}",
                           pd.DataFrame(rows)))
    return _section("Throughput vs loss", [
        "BBR improvement = BBR / CUBIC - 1, as in the seed's table."], tables)


def analysis_delay(study: Study, datas: list[PartData]):
    tables = []
    for d in datas:
        rows = []
        for cell, cc in _cell_ccs(d):
            m = _ci(per_run(d, {**cell, "cc": cc}, "rtt_mean_ms"))
            p = _ci(per_run(d, {**cell, "cc": cc}, "rtt_p95_ms"))
            if m.n:
                rows.append({**_cell_cols(cell), "cc": cc, "RTT mean ms": _fmt(m.mean),
                             "95% lo": _fmt(m.lo), "95% hi": _fmt(m.hi),
                             "RTT p95 ms": _fmt(p.mean), "n": m.n})
        if rows:
            tables.append((f"{d.part.name}: average delay (flow RTT)", pd.DataFrame(rows)))
    return _section("Average delay", [], tables)


def analysis_fairness(study: Study, datas: list[PartData]):
    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        if d.runs.empty or d.flows["run_id"].value_counts().max() < 2:
            continue
        rows = []
        for cell in _cells(d):
            runs = _match(d.runs, cell, with_cc=False)
            if runs.empty:
                continue
            j = _ci(runs["jain_index"].astype(float), high=1.0)
            row = {**_cell_cols(cell), "Jain mean": _fmt(j.mean), "95% lo": _fmt(j.lo),
                   "95% hi": _fmt(j.hi), "n": j.n}
            for cc in _ccs(d):
                row[f"{cc} {study.unit}"] = _fmt(per_run(d, {**cell, "cc": cc}).mean() * scale, 3)
            rows.append(row)
        if rows:
            tables.append((f"{d.part.name}: Jain's index over the flows of each run, and each "
                           f"algorithm's goodput", pd.DataFrame(rows)))
    return _section("Fairness", [
        "Jain's index of n flows lies between 1/n (one flow takes everything) and 1 (equal shares); "
        "for 1 CUBIC + 1 BBR it is 0.5 to 1. The seed gives 0.51 for CUBIC and 0.46 for BBR without "
        "describing the fairness setup (0.46 is below the two-flow minimum, so its runs had more "
        "flows or it averaged something else); both published values sit beside our one index."],
        tables)


def analysis_latency(study: Study, datas: list[PartData]):
    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        rows = []
        for cell, cc in _cell_ccs(d):
            fcell = {**cell, "cc": cc}
            tot = per_run(d, fcell, how="sum")
            if tot.empty:
                continue
            runs = d.runs[d.runs["run_id"].isin(set(tot.index))]
            g = _ci(tot)
            p50 = _ci(runs["probe_rtt_p50_ms"].astype(float)) if "probe_rtt_p50_ms" in runs else Measured(None)
            p95 = _ci(runs["probe_rtt_p95_ms"].astype(float)) if "probe_rtt_p95_ms" in runs else Measured(None)
            rtt = _ci(per_run(d, fcell, "rtt_mean_ms"))
            rows.append({**_cell_cols(cell), "cc": cc, f"total goodput {study.unit}": _fmt(g.mean * scale, 4),
                         "95% lo": _fmt(g.lo * scale if g.lo is not None else None, 4),
                         "95% hi": _fmt(g.hi * scale if g.hi is not None else None, 4),
                         "ping p50 ms": _fmt(p50.mean), "ping p95 ms": _fmt(p95.mean),
                         "flow RTT mean ms": _fmt(rtt.mean), "n": g.n})
        if rows:
            tables.append((f"{d.part.name}: goodput and latency under load (ping during the transfer)",
                           pd.DataFrame(rows)))
    figures, problems = [], []
    for d in datas:
        _figure("probe-cdf", d, f"{d.part.name}: CDF of the ping RTT during the transfer", figures,
                problems)
    return _section("Goodput and latency under load", [
        "ping p50/p95: percentiles of the latency probe's RTT during the transfer, mean over runs.",
        *problems], tables, figures)


def analysis_wifi(study: Study, datas: list[PartData]):
    """The Wi-Fi hop per cell: A-MPDU sizes, airtime shares, collisions and retry drops (the
    runs table's wifi_* columns, docs/results.md; parts on a wire are left out)."""
    cols = {"A-MPDU mean": "wifi_ampdu_mean_fwd", "A-MPDU p50": "wifi_ampdu_p50_fwd",
            "A-MPDU p90": "wifi_ampdu_p90_fwd", "ACK A-MPDU mean": "wifi_ampdu_mean_rev",
            "airtime data": "wifi_airtime_fwd", "airtime ACKs": "wifi_airtime_rev",
            "collisions": "wifi_collisions", "retry drops": "wifi_retry_drops"}
    tables = []
    for d in datas:
        if d.runs.empty or "wifi_ampdu_mean_fwd" not in d.runs or d.runs["wifi_ampdu_mean_fwd"].isna().all():
            continue
        rows = []
        for cell, cc in _cell_ccs(d):
            tot = per_run(d, {**cell, "cc": cc}, how="sum")
            if tot.empty:
                continue
            runs = d.runs[d.runs["run_id"].isin(set(tot.index))]
            row = {**_cell_cols(cell), "cc": cc}
            for name, col in cols.items():
                row[name] = _fmt(runs[col].astype(float).mean(), 3)
            row["n"] = len(runs)
            rows.append(row)
        if rows:
            tables.append((f"{d.part.name}: the Wi-Fi hop (data station; MPDUs per A-MPDU, share of "
                           "the run's airtime), mean over runs", pd.DataFrame(rows)))
    return _section("The Wi-Fi hop: aggregation and airtime", [
        "A-MPDU: MPDUs per transmission of the data station (mean, median, 90th percentile over its "
        "transmissions); ACK A-MPDU: the same for the receiver-side station; airtime: the share of "
        "the run each station's transmissions (PPDU and block-ack) took; collisions: transmit "
        "opportunities in which both stations sent; retry drops: MPDUs lost after the retry limit."],
        tables)


def analysis_goodput_delay(study: Study, datas: list[PartData]):
    figures, problems = [], []
    for d in datas:
        _figure("goodput-probe-delay", d, f"{d.part.name}: total goodput vs the ping's 95th "
                f"percentile during the transfer, per combination", figures, problems)
    return _section("Goodput vs latency under load", [
        "One point per combination: the mean over repeats of the run's total goodput and of its "
        "latency probe's 95th-percentile RTT, with 95 % t intervals; a panel per algorithm and "
        "number of flows.", *problems], figures=figures)


def probe_rtt_rounds(data: PartData, run_id: str) -> list:
    """analysis.probe_rtt_rounds of one run of the part."""
    from . import analysis

    s = data.series
    if s.empty:
        return []
    return analysis.probe_rtt_rounds(s[s["run_id"] == run_id])


def analysis_oscillation(study: Study, datas: list[PartData]):
    from . import analysis

    scale = _goodput_scale(study)
    tables, paragraphs = [], []
    for d in datas:
        rows, summary = [], []
        ordered = d.runs.sort_values("repeat") if "repeat" in d.runs.columns else d.runs
        for rid in ordered["run_id"]:
            run_flows = d.flows[d.flows["run_id"] == rid]
            rrow = d.runs[d.runs["run_id"] == rid].iloc[0]
            rounds = probe_rtt_rounds(d, rid)
            for cc in _ccs(d):
                start, per = group_periodicity(d, rid, cc)
                gf = run_flows[run_flows["cc"] == cc]["goodput_bps"].to_numpy(dtype=float)
                step = analysis.level_change_at(*_group_aggregate(d.series, rid, cc),
                                                [r.start_s for r in rounds]) if rounds else None
                rows.append({"run": rid[:10], "repeat": rrow.get("repeat"), "group": cc,
                             f"group goodput {study.unit}": _fmt(gf.sum() * scale, 4),
                             "steady from s": _fmt(start, 3),
                             "period s": _fmt(getattr(per, "period_s", None), 3),
                             "strength": _fmt(getattr(per, "strength", None), 2),
                             "ACF at period": _fmt(getattr(per, "acf_at_period", None), 2),
                             "significant": getattr(per, "significant", None),
                             "step at ProbeRTT rounds ×": _exp_fmt(getattr(step, "at_events", None)),
                             "step midway ×": _exp_fmt(getattr(step, "midway", None)),
                             "Jain within group": _fmt(analysis.jain_index(gf), 3)})
            summary.append({"run": rid[:10], "repeat": rrow.get("repeat"),
                            "BBR ProbeRTT rounds": len(rounds) if rounds else None,
                            "flows per round": _fmt(np.mean([r.n for r in rounds]), 2) if rounds else None,
                            "Jain all flows": _fmt(rrow.get("jain_index"), 3),
                            "Jain between groups": _fmt(rrow.get("jain_index_groups"), 3),
                            f"aggregate {study.unit}": _fmt(float(rrow.get("aggregate_goodput_bps") or 0) * scale, 4)})
        if rows:
            tables.append((f"{d.part.name}: dominant period of each group's aggregate throughput "
                           f"(analysis.dominant_period after analysis.steady_state_start)", pd.DataFrame(rows)))
            tables.append((f"{d.part.name}: Jain's index over all flows and between the two groups",
                           pd.DataFrame(summary)))
    paragraphs.append("strength is the share of the periodogram's power in the peak; a period is "
                      "reported only when it is significant (Fisher's g test) and the autocorrelation "
                      "at that lag supports it.")
    paragraphs.append("BBR ProbeRTT rounds: the BBR flows' entries into ProbeRTT grouped into rounds "
                      "(within 1 s, at least 3 flows). Step at ProbeRTT rounds: the factor by which "
                      "the group's 4 s mean throughput changes across a round (median over rounds, "
                      "analysis.level_change_at); step midway: the same midway between rounds, where "
                      "only noise moves it. A step well above the midway one means BBR's 10 s "
                      "ProbeRTT sets the group's rhythm, whether or not a period is significant.")
    return _section("Oscillation and fairness", paragraphs, tables)


def _exp_fmt(log_change):
    return None if log_change is None else _fmt(float(np.exp(log_change)), 3)


def analysis_throughput_time(study: Study, datas: list[PartData]):
    figures, problems = [], []
    for d in datas:
        _figure("throughput-time", d, f"{d.part.name}: per-flow throughput over time, one panel per "
                f"algorithm (as the seed's figures 1 and 2)", figures, problems, where={"repeat": 0})
        _figure("periodogram", d, f"{d.part.name}: periodogram of each group's aggregate throughput",
                figures, problems, where={"repeat": 0})
    return _section("Throughput over time", problems, figures=figures)


ANALYSES: dict[str, Callable] = {
    "goodput": analysis_goodput,
    "ratio": analysis_ratio,
    "variability": analysis_variability,
    "recommendation": analysis_recommendation,
    "goodput_figure": analysis_goodput_figure,
    "throughput": analysis_throughput,
    "delay": analysis_delay,
    "fairness": analysis_fairness,
    "rtt_time": analysis_rtt_time,
    "cwnd_time": analysis_cwnd_time,
    "latency": analysis_latency,
    "goodput_delay": analysis_goodput_delay,
    "wifi": analysis_wifi,
    "oscillation": analysis_oscillation,
    "throughput_time": analysis_throughput_time,
    "recommendation_map": lambda study, datas: __import__("ccbench.recommend", fromlist=["map_section"]).map_section(study, datas),
}


def _published_section(study: Study, results: Any):
    table = published_table(study, results)
    paragraphs = [f"Seed document {study.seed}. Question: {study.question}",
                  f"Original setup: {study.original}"]
    paragraphs += [f"Simplification: {s}" for s in study.simplifications]
    paragraphs.append("Each published number is set beside our measurement of the same cell: the mean "
                      "over runs with its 95 % interval (a t interval cut at 0 for means, Fieller's for BBR/CUBIC, "
                      "a bootstrap one for CV), and measured / published. verdict: agrees = "
                      "the published value is inside our interval (and the interval is within ±25 % "
                      "of our mean); inconclusive = inside an interval wider than that; close = our "
                      "mean within 25 %; disagrees otherwise. Nothing in the scenarios was adjusted toward these numbers.")
    bad = table[table["verdict"] == "disagrees"] if not table.empty else table
    if not table.empty:
        agree = int(table["verdict"].isin(["agrees", "close"]).sum())
        vague = int((table["verdict"] == "inconclusive").sum())
        paragraphs.append(f"{agree} of {len(table)} published numbers agree or are close; "
                          + (f"{vague} are inconclusive (our interval is too wide: more repeats); " if vague else "")
                          + f"{len(bad)} disagree" + (":" if len(bad) else "."))
        for _, r in bad.iterrows():
            paragraphs.append(f"We disagree on {r['part']} {r['cell']} {r['metric']}: the seed has "
                              f"{r['published']:g} {r['unit']}, we measured {r['measured']} "
                              f"{r['unit']} ({r['measured / published']}x).")
    missing = table[table["verdict"] == "not measured"] if not table.empty else table
    if len(missing):
        paragraphs.append(f"{len(missing)} published cells are not in this run's grid (a --quick run "
                          f"covers fewer cells).")
    paragraphs += [f"Why we may differ: {s}" for s in study.discussion]
    return _section("Published vs measured", paragraphs, [("The seed's numbers beside ours", table)])


def report_sections(study_name: str, results: Any) -> list:
    """The study's report sections (ccbench.report calls this when ccbench.json names a study).
    An analysis that fails becomes a section saying so, so the rest of the report is kept."""
    meta = getattr(results, "meta", None) or {}
    path = meta.get("scenario_file")
    try:
        study = find_study(study_name)
    except StudyError:
        if not path:
            raise
        study = load_study(path)
    datas = [PartData(results, p) for p in study.parts]
    sections = []
    for name, fn in [("published", None), *[(a, ANALYSES[a]) for a in study.analyses]]:
        try:
            sections.append(_published_section(study, results) if fn is None else fn(study, datas))
        except Exception as e:  # noqa: BLE001
            sections.append(_section(f"{name} (failed)", [f"analysis {name} failed: {type(e).__name__}: {e}"]))
    return sections
