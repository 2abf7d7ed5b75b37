"""``ccbench compare``: algorithms head to head on a scenario (registered into cli.py's typer
app). The work is in ccbench.compare; docs/compare.md."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from .errors import console as _stdout
from .errors import err_console as _stderr
from .errors import error as _fail

__all__ = ["register", "compare_command"]


def compare_command(
    scenario: Path = typer.Argument(..., metavar="SCENARIO", help="Scenario TOML file (its bottleneck is used)."),
    cc: Optional[str] = typer.Option(
        None,
        "--cc",
        help="Comma-separated algorithms, e.g. cubic,bbr (default: every algorithm the backend offers "
        "but dctcp, which needs an ECN-marking queue).",
    ),
    repeat: int = typer.Option(5, "--repeat", "-r", help="Runs (seeds) per algorithm and per pair."),
    backend: str = typer.Option("sim", "--backend", "-b", help="sim | kernel | ns3"),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", metavar="DIR", help="Store and outputs (default results/compare-<scenario name>)."
    ),
    duration: Optional[str] = typer.Option(None, "--duration", "-d", help="Length of every run, e.g. 10s."),
    test: str = typer.Option("welch", "--test", help="welch | mann-whitney (significance test)."),
    workers: Optional[int] = typer.Option(None, "--workers", "-j", min=1, help="Local worker processes."),
    as_json: bool = typer.Option(False, "--json", help="Print only compare.json on stdout."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
) -> None:
    """Each algorithm alone on the scenario's bottleneck, every pair sharing it, and which
    differences are significant. Writes DIR/compare.md, compare.json, figures and report.html."""
    from rich.text import Text

    from ..compare import print_tables, run_compare

    err = _stderr
    if repeat < 1:
        raise _fail(f"--repeat {repeat}: expected a whole number of at least 1")
    try:
        cmp = run_compare(
            scenario,
            out,
            ccs=cc,
            repeat=repeat,
            backend=backend,
            duration=duration,
            test=test,
            workers=workers,
            progress=not (quiet or as_json),
            console=err,
            command=["ccbench", *sys.argv[1:]],
        )
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except ValueError as e:  # CompareError, ScenarioError, SweepError, StoreError
        raise _fail(str(e)) from None
    if as_json:
        sys.stdout.write(json.dumps(json.loads(cmp.files["json"].read_text())) + "\n")
        sys.stdout.flush()
    else:
        c = _stdout
        for note in cmp.doc.get("notes", []):
            err.print(Text(f"note: {note}", style="yellow"), highlight=False, soft_wrap=True)
        print_tables(cmp.doc, c)
        c.print(
            "wrote "
            + ", ".join(str(p) for p in cmp.files.values())
            + "; stores "
            + ", ".join(cmp.doc["stores"].values()),
            highlight=False,
            soft_wrap=True,
        )
    if not cmp.all_ok:
        err.print(
            Text(
                f"{cmp.doc['runs']['failed']} run(s) failed (left out of the tables): "
                + "; ".join(cmp.doc["runs"]["errors"]),
                style="red",
            ),
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)


def register(parent: typer.Typer) -> None:
    parent.command("compare")(compare_command)
