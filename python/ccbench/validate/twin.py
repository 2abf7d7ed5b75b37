"""A study run on the kernel (or ns-3) beside the simulator: the simulator runs the same grid,
scenarios and seeds into the twin store DIR/sim-twin/, and the study's report gains a section
that lines the two up cell by cell with validate's comparison (goodput and its error against
the kernel, RTT, the ping's median, retransmits, the ±10 % verdict) and validate's figure."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from ..report.section import Section
from ..study.spec import Study, find_study
from .compare import CELL_TARGET, Comparison, compare
from .render import goodput_figure, main_rows, summary_rows

#: the simulator's store inside a study store run on another backend
TWIN_DIR = "sim-twin"


def twin_dir(out: str | os.PathLike) -> Path:
    return Path(out) / TWIN_DIR


def run_twin(
    study: Study,
    out: str | os.PathLike,
    *,
    quick: bool = False,
    repeat: Optional[int] = None,
    workers: Optional[int] = None,
    progress: bool = True,
    console: Any = None,
    command: Optional[list] = None,
) -> list:
    """Sweep every part of ``study`` on the simulator into DIR/sim-twin (runs already there are
    skipped); returns the parts' sweep summaries."""
    from .. import sweeps as sw

    extra = {"command": list(command or []), "study": study.name}
    summaries = []
    for part in study.parts:
        sc = part.scenario(quick, repeat, source=str(study.path))
        if progress and console is not None:
            console.print(f"[bold]{study.name}[/]: part {part.name} on the simulator beside it", highlight=False)
        summaries.append(
            sw.run_sweep(sc, twin_dir(out), backend="sim", workers=workers, progress=progress, console=console, **extra)
        )
    return summaries


def _ms(x: Optional[float]) -> str:
    return "–" if x is None else f"{x:.1f}"


def _study_of(meta: dict) -> Optional[Study]:
    try:
        study = find_study(meta.get("scenario_file") or meta["study"])
    except Exception:  # noqa: BLE001 - a study file moved away: fall back to the built-in name
        try:
            study = find_study(meta["study"])
        except Exception:  # noqa: BLE001
            return None
    ran = [p["name"] for p in meta.get("parts", []) if isinstance(p, dict) and "name" in p]
    return study.only(ran) if ran and len(ran) < len(study.parts) else study


def twin_comparison(out: str | os.PathLike, meta: dict) -> Optional[Comparison]:
    """The store's backend against its simulator twin, or None (a simulator store, no twin)."""
    backend = meta.get("backend")
    if not backend or backend == "sim" or not twin_dir(out).is_dir() or not meta.get("study"):
        return None
    study = _study_of(meta)
    if study is None:
        return None
    rep = meta.get("repeat")
    repeat = rep if isinstance(rep, int) else None
    quick = bool(meta.get("quick"))
    return compare(study, out, ["sim", backend], quick, repeat, stores={backend: Path(out), "sim": twin_dir(out)})


def twin_section(out: str | os.PathLike, meta: dict) -> Optional[Section]:
    """The report section: the study's backend beside the simulator, or None."""
    comp = twin_comparison(out, meta)
    if comp is None:
        return None
    ref = comp.reference or meta.get("backend")
    head, rows = main_rows(comp)
    if any(comp.side(i, b).ping for i in range(len(comp.cells)) for b in comp.backends):
        head = head + [f"{b} ping p50 ms" for b in comp.backends]
        rows = [r + [_ms(comp.side(i, b).mean("ping")) for b in comp.backends] for i, r in enumerate(rows)]
    paragraphs = [
        f"Every cell of this study was also run on the simulator, with the same scenarios and seeds "
        f"(the store {TWIN_DIR}/ inside this one). Per cell: each backend's mean goodput over the "
        f"repeats (range in brackets), the simulator's error against the {ref} "
        f"(mean(sim) / mean({ref}) - 1), mean RTT, the ping's median where the study pings, and "
        f"retransmitted segments; a cell's goodput agrees when it is within {CELL_TARGET:.0%}."
    ]
    if comp.reference:
        errs = [e for e in (comp.goodput_error(i, "sim") for i in range(len(comp.cells))) if e is not None]
        if errs:
            within = sum(abs(e) <= CELL_TARGET for e in errs)
            worst = max(errs, key=abs)
            paragraphs.append(
                f"{within} of {len(errs)} cells agree within {CELL_TARGET:.0%}; "
                f"the median |error| is {100 * float(pd.Series(errs).abs().median()):.1f} %, "
                f"the largest {100 * worst:+.1f} %."
            )
    tables = [(f"Per cell: the {ref} beside the simulator", pd.DataFrame(rows, columns=head))]
    if comp.reference:
        sh, sr = summary_rows(comp)
        tables.append(("Per algorithm", pd.DataFrame(sr, columns=sh)))
    fig = goodput_figure(comp)
    caption = (
        f"Mean goodput per cell, simulator against the {ref} (bars: range over the repeats); "
        f"the grey band is ±{CELL_TARGET:.0%}."
    )
    return Section(f"The {ref} beside the simulator", paragraphs=paragraphs, tables=tables, figures=[(caption, fig)])


def build_study_report(dir: str | os.PathLike, out=None, title=None) -> Path:
    """A store's report (study.build_report) with, for a study run on another backend that has a
    simulator twin, the section putting the two side by side."""
    from ..results.meta import read_meta
    from ..study import build_report

    try:
        meta = read_meta(dir)
    except Exception:  # noqa: BLE001 - no ccbench.json: a store without a study
        meta = {}
    section = twin_section(dir, meta) if meta else None
    return build_report(dir, out, title, extra=[section] if section is not None else [])
