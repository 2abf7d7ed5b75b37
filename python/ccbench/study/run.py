"""Running a study: every part swept into ONE store (part P of study S is the scenario named
"S/P"), DIR/ccbench.json naming the study, then DIR/report.html with the study's sections."""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from ..report.section import Section
from ..scenario.errors import ScenarioError
from ..scenario.model import Scenario
from .analyses import report_sections
from .key_figure import key_figure_section
from .spec import Study, StudyError, cell_text, find_study


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


def run_study(
    study: Study | str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    backend: str = "sim",
    quick: bool = False,
    repeat: Optional[int] = None,
    workers: Optional[int] = None,
    progress: bool = True,
    console: Any = None,
    command: Optional[Sequence[str]] = None,
    report: bool = True,
    parts: Optional[Sequence[str]] = None,
) -> StudyRun:
    """Sweep every part (or only ``parts``) into one store ``out``, write ccbench.json naming
    the study, and (``report``) DIR/report.html. Runs already stored are skipped, like
    ``ccbench sweep``."""
    from .. import sweeps as sw

    if not isinstance(study, Study):
        study = find_study(study)
    if parts:
        study = study.only(parts)
    out = Path(out) if out is not None else default_out(study, quick)
    run = StudyRun(study, out, quick, backend)
    t0 = time.perf_counter()
    extra = {"command": list(command) if command is not None else list(sys.argv), "study": study.name}
    scenarios = [part.scenario(quick, repeat, source=str(study.path)) for part in study.parts]
    check_backend(study, scenarios, backend)
    for part, sc in zip(study.parts, scenarios):
        if progress and console is not None:
            console.print(f"[bold]{study.name}[/]: part {part.name} - {sc.describe()}", highlight=False, soft_wrap=True)
        run.summaries.append(
            sw.run_sweep(sc, out, backend=backend, workers=workers, progress=progress, console=console, **extra)
        )
    run.wall_s = time.perf_counter() - t0
    write_study_meta(study, out, quick=quick, backend=backend, repeat=repeat, command=command)
    if report:
        run.report = build_report(out)
    return run


def check_backend(study: Study, scenarios: Sequence[Scenario], backend: str) -> None:
    """Refuse, before anything runs, a study that the backend cannot run in some cell (e.g. an
    access-link rate or Vegas on the kernel backend): the ScenarioError names the part's file,
    key and what was expected, and the part."""
    from .. import backends
    from .. import sweeps as sw

    for part, sc in zip(study.parts, scenarios):
        for spec in sw.plan(sc, sw.grid_from_scenario(sc), backend):
            try:
                backends.check(spec.scenario, backend)
            except ScenarioError as e:
                others = [p.name for p in study.parts if p is not part]
                hint = f"; --parts {','.join(others)} runs the others" if others else ""
                raise StudyError(
                    e.source,
                    e.key,
                    f"part {part.name!r} cannot run on the {backend} backend: {e.problem}{hint}",
                    e.expected,
                ) from None


def write_study_meta(
    study: Study,
    out: Path,
    *,
    quick: bool,
    backend: str,
    repeat: Optional[int],
    command: Optional[Sequence[str]] = None,
) -> Path:
    """DIR/ccbench.json for the whole study (replaces the one each part's sweep wrote)."""
    from .. import __version__

    parts = []
    grid: dict[str, list] = {}
    for p in study.parts:
        table = p.sweep_table(quick, repeat)
        axes = {k: v for k, v in table.items() if k not in ("repeat", "zip")}
        for k, v in axes.items():  # the union over parts, in first-seen order (contract shape)
            known = grid.setdefault(k, [])
            known.extend(x for x in v if not any(cell_text(x) == cell_text(y) for y in known))
        parts.append(
            {
                "name": p.name,
                "scenario_name": p.scenario_name,
                "description": p.description,
                "grid": axes,
                "repeat": table["repeat"],
                "runs": p.n_runs(quick, repeat),
                "duration_s": p.duration_s(quick),
                "scenario": p.scenario(quick, repeat).describe(),
            }
        )
    repeats = {p["repeat"] for p in parts}
    versions = {
        "ccbench": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
    }
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


def build_report(dir, out=None, title=None, *, results: Any = None, extra: Sequence[Section] = ()) -> Path:
    """DIR/report.html (or ``out``) of a store: the generic report, plus the study's own sections
    when DIR/ccbench.json names a study, then ``extra`` sections. A study whose sections cannot be
    built still gets the generic report, with a section saying why. A study's report opens with
    its key figure ([study.key_figure], study/key_figure.py)."""
    from .. import api
    from ..report import build
    from ..results.meta import read_meta

    dir = Path(dir)
    if results is None and dir.is_dir():
        results = api.load(dir)
    sections = []
    meta = (getattr(results, "meta", None) or {}) if results is not None else {}
    if not meta and dir.is_dir():
        try:
            meta = read_meta(dir)
        except Exception:  # noqa: BLE001 - no ccbench.json: a store without a study
            meta = {}
    name = meta.get("study")
    lead = []
    if name:
        try:
            key = key_figure_section(results)
            lead = [key] if key is not None else []
        except Exception as e:  # noqa: BLE001
            warnings.warn(f"study {name}: key figure failed: {e!r}", stacklevel=2)
            lead = [Section("Key figure", paragraphs=[f"The key figure could not be drawn: {type(e).__name__}: {e}"])]
        try:
            sections = report_sections(name, results)
        except Exception as e:  # noqa: BLE001
            warnings.warn(f"study {name}: report_sections failed: {e!r}", stacklevel=2)
            sections = [
                Section(
                    "Study sections",
                    paragraphs=[f"The study's own sections could not be built: {type(e).__name__}: {e}"],
                )
            ]
    return build.build_report(dir, out, sections=[*sections, *extra], title=title, results=results, lead=lead)
