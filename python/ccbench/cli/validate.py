"""``ccbench validate``: the simulator against the kernel on one grid (registered into cli.py's
typer app). The work is in ccbench.validate; docs/validate.md."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from .errors import console as _stdout
from .errors import err_console as _stderr
from .errors import error as _fail

__all__ = ["register", "validate_command"]


def validate_command(
    grid: str = typer.Option(
        "default", "--grid", "-g", help="'default' (the built-in grid) or a study-format TOML file."
    ),
    backends: str = typer.Option(
        "sim,kernel", "--backends", "-b", help="Comma-separated backends; kernel is the reference."
    ),
    repeat: Optional[int] = typer.Option(
        None, "--repeat", "-r", min=1, help="Runs (seeds) per cell per backend (default: the grid's, 5)."
    ),
    out: Optional[Path] = typer.Option(
        None,
        "--out",
        "-o",
        help="Directory: DIR/<backend>/ stores, validate.md/.csv, goodput.svg "
        "(default results/validate, or results/validate-quick).",
    ),
    duration: Optional[str] = typer.Option(None, "--duration", "-d", help="Length of every run, e.g. 10s."),
    quick: bool = typer.Option(False, "--quick", help="The small grid (the parts' \\[part.quick] tables)."),
    parts: Optional[str] = typer.Option(
        None, "--parts", help="Comma-separated parts of the grid to run (default: all), e.g. streams,window-8mb."
    ),
    rerun: Optional[str] = typer.Option(
        None,
        "--rerun",
        help="Backends whose stored runs are deleted and run again, e.g. sim "
        "(after a model change; the kernel runs are kept).",
    ),
    workers: Optional[int] = typer.Option(
        None, "--workers", "-j", min=1, help="Local worker processes (the kernel always runs one at a time)."
    ),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run stored failed runs again."),
    compare_only: bool = typer.Option(
        False,
        "--compare-only",
        help="Run nothing: compare the runs already stored in DIR (a grid measured in pieces, or on another machine).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    draws: str = typer.Option(
        "independent",
        "--draws",
        help="independent: the simulator runs with seeds of its own, so it meets other loss and "
        "jitter draws than the kernel; common: the kernel's seeds, the same draws (sharper, but an "
        "agreement may hold only for that pattern).",
    ),
) -> None:
    """Run one grid on the simulator and the kernel, compare cell by cell, write DIR/validate.md."""
    from ..validate.render import print_tables
    from ..validate.run import run_validate

    err = _stderr
    try:
        run = run_validate(
            grid,
            out,
            backends=backends,
            repeat=repeat,
            duration=duration,
            quick=quick,
            rerun=[x for x in (rerun or "").split(",") if x.strip()],
            workers=workers,
            retry_failed=retry_failed,
            progress=not quiet,
            console=err,
            command=["ccbench", *sys.argv[1:]],
            parts=[x.strip() for x in (parts or "").split(",") if x.strip()],
            draws=draws,
            compare_only=compare_only,
        )
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except ValueError as e:  # ValidateError, StudyError, ScenarioError, SweepError, StoreError
        raise _fail(str(e)) from None
    c = _stdout
    print_tables(run, c)
    c.print(
        f"wrote {run.files['md']}, {run.files['csv']}, {run.files['svg']}; stores "
        + ", ".join(str(run.out / b) for b in run.comparison.backends),
        highlight=False,
        soft_wrap=True,
    )
    if not run.all_ok:
        raise typer.Exit(1)


def register(parent: typer.Typer) -> None:
    parent.command("validate")(validate_command)
