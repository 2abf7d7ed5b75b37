"""Running validate: every backend over the grid into its own store, then the comparison and its
outputs (``run_validate``)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from ..study.spec import Study
from .compare import ValidateRun, compare
from .plan import REFERENCE, ValidateError, backend_unavailable, load_grid, plan_cells, seed_offset, select_parts
from .render import write_outputs


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


def default_out(quick: bool = False) -> Path:
    return Path("results") / ("validate-quick" if quick else "validate")


def parse_backends(text: str | Sequence[str]) -> list[str]:
    from ..backends import BACKENDS

    items = [x.strip() for x in (text.split(",") if isinstance(text, str) else text) if x and x.strip()]
    out: list[str] = []
    for x in items:
        if x not in BACKENDS:
            raise ValidateError(
                None, "--backends", f"unknown backend {x!r}", "a comma-separated list of " + ", ".join(BACKENDS)
            )
        if x not in out:
            out.append(x)
    if not out:
        raise ValidateError(None, "--backends", "no backend given", "e.g. sim,kernel")
    return out


def run_validate(
    grid: str | os.PathLike | Study | None = "default",
    out: str | os.PathLike | None = None,
    *,
    backends: str | Sequence[str] = ("sim", "kernel"),
    repeat: Optional[int] = None,
    duration: Optional[str] = None,
    quick: bool = False,
    rerun: Sequence[str] = (),
    workers: Optional[int] = None,
    retry_failed: bool = False,
    progress: bool = True,
    console: Any = None,
    command: Optional[Sequence[str]] = None,
    parts: Optional[Sequence[str]] = None,
    draws: str = "independent",
    compare_only: bool = False,
) -> ValidateRun:
    """Run the grid on every available backend into DIR/<backend>/ (resuming), compare, and write
    DIR/validate.md, DIR/validate.csv and DIR/goodput.svg. ``parts``: only these parts of the grid.
    ``rerun``: backends whose stored runs
    of this grid are deleted first. A backend that cannot run on this machine (the kernel without
    root, ns3 not installed) is skipped with a note; its store is still read when it exists.
    ``draws``: "independent" (the compared backends run with seeds of their own, so they meet
    other random draws than the kernel) or "common" (the kernel's seeds: the same draws).
    ``compare_only``: run nothing, compare what DIR already holds."""
    from .. import sweeps as sw
    from ..study import write_study_meta
    from ..study.run import check_backend

    study = grid if isinstance(grid, Study) else load_grid(grid)
    if parts:
        study = study.only(parts)
    study = select_parts(study, quick, duration)
    names = parse_backends(backends)
    rerun = parse_backends(rerun) if rerun else []
    for b in rerun:
        if b not in names:
            raise ValidateError(
                None,
                "--rerun",
                f"{b!r} is not one of the backends run ({', '.join(names)})",
                "a backend given in --backends",
            )
    out = Path(out) if out is not None else default_out(quick)
    seed_offset(REFERENCE, draws)  # an unknown --draws is refused before anything runs
    if compare_only and rerun:
        raise ValidateError(None, "--rerun", "--compare-only runs nothing, so it deletes nothing", "one of the two")
    run = ValidateRun(study, out, quick, names, repeat, draws)
    for b in names:
        why = "--compare-only" if compare_only else backend_unavailable(b, study, quick)
        if why:
            run.skipped[b] = why
        else:
            run.ran.append(b)
    if compare_only:
        stored = [b for b in names if (out / b / "runs").is_dir()]
        if not stored:
            raise ValidateError(
                None,
                "--compare-only",
                f"no stored runs of {', '.join(names)} in {out}",
                "the --out directory of an earlier ccbench validate",
            )
    elif not run.ran:
        raise ValidateError(
            None,
            "--backends",
            "no backend can run here: " + "; ".join(f"{b}: {w}" for b, w in run.skipped.items()),
            "a backend available on this machine (sim always is)",
        )
    scenarios = {
        b: [p.scenario(quick, repeat, source=str(study.path), seed_offset=seed_offset(b, draws)) for p in study.parts]
        for b in run.ran
    }
    for b in run.ran:  # refuse, before anything runs, a cell a backend cannot run (file, key, part)
        check_backend(study, scenarios[b], b)
    cells = plan_cells(study, run.ran, quick, repeat, draws)
    for b in rerun:
        if b in run.ran:
            run.rerun[b] = _delete_runs(out / b, (rid for c in cells for rid in c.run_ids.get(b, [])))
    for b in run.ran:
        t0 = time.perf_counter()
        run.summaries[b] = []
        for part, sc in zip(study.parts, scenarios[b]):
            if progress and console is not None:
                console.print(
                    f"[bold]validate[/] {b}: part {part.name} - {sc.describe()}", highlight=False, soft_wrap=True
                )
            run.summaries[b].append(
                sw.run_sweep(
                    sc,
                    out / b,
                    backend=b,
                    workers=workers,
                    retry_failed=retry_failed,
                    progress=progress,
                    console=console,
                    command=command,
                    study=study.name,
                )
            )
        write_study_meta(study, out / b, quick=quick, backend=b, repeat=repeat, command=command)
        run.wall_s[b] = time.perf_counter() - t0
    # the backends run now, and those that could not run but have a store here from before
    shown = [b for b in names if b in run.ran or (out / b / "runs").is_dir()]
    run.comparison = compare(study, out, shown, quick, repeat, draws=draws)
    if run.comparison.reference is None:
        why = run.skipped.get(REFERENCE)
        if REFERENCE not in names:
            run.notes.append(
                f"no comparison: the {REFERENCE} backend (real Linux TCP, the reference) was not "
                f"asked for (--backends {','.join(names)}); add it with --backends sim,kernel"
            )
        elif compare_only:
            run.notes.append(f"no comparison: {out / REFERENCE} holds no ok run of this grid")
        elif why:
            run.notes.append(
                f"no comparison: the comparison needs the {REFERENCE} backend, which cannot run "
                f"here: {why}. Only the simulator's columns are shown; run as root on a machine "
                f"with the kernel backend (`ccbench doctor`) to compare."
            )
        else:
            run.notes.append(f"no comparison: the {REFERENCE} backend produced no ok run")
    elif REFERENCE in run.skipped and not compare_only:
        n = sum(run.comparison.side(i, REFERENCE).n for i in range(len(run.comparison.cells)))
        run.notes.append(
            f"the {REFERENCE} backend cannot run here ({run.skipped[REFERENCE]}); its columns are the "
            f"{n} runs already stored in {out / REFERENCE}"
        )
    if compare_only:
        run.notes.append(
            f"--compare-only: nothing was run; these are the runs stored in {out} "
            "(a cell's missing repeats are counted as not run)"
        )
    for b, why in run.skipped.items():
        if b != REFERENCE and not compare_only:
            run.notes.append(f"backend {b} skipped: {why}")
    run.files = write_outputs(run, command=command)
    return run
