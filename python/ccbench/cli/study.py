"""``ccbench study list | show NAME | run NAME`` (registered into cli.py's typer app).

NAME is a built-in study (python/ccbench/study/studies/<name>.toml) or a path to a study file.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import typer

from .errors import console as _stdout
from .errors import err_console as _stderr
from .errors import error as _fail

__all__ = ["register", "app"]

app = typer.Typer(
    help="Built-in studies: the seed documents' questions, run and reported.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _load(name: str):
    from ..study.spec import find_study

    try:
        return find_study(name)
    except ValueError as e:
        raise _fail(str(e)) from None


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:g} s"
    return f"{seconds / 60:.1f} min"


@app.command("list")
def list_command() -> None:
    """The built-in studies."""
    from rich.table import Table

    from ..study.spec import builtin_studies, load_study

    t = Table(title="built-in studies (ccbench study show NAME)", title_justify="left")
    for col in ("name", "seed", "runs", "quick", "full run", "quick run", "title"):
        t.add_column(col, overflow="fold", no_wrap=col == "name")
    for path in builtin_studies():
        try:
            s = load_study(path)
        except ValueError as e:
            t.add_row(path.stem, "", "", "", "", "", f"[red]invalid: {e}[/]")
            continue
        t.add_row(
            s.name, s.seed, str(s.n_runs()), str(s.n_runs(True)), s.full_runtime or "?", s.quick_runtime or "?", s.title
        )
    _stdout.print(t)


@app.command("show")
def show_command(name: str = typer.Argument(..., help="Built-in study name or study file path.")) -> None:
    """The study's question, the seed's setup and our mapping, parts, grids, runs, published numbers."""
    from rich.table import Table

    s = _load(name)
    c = _stdout
    c.print(f"[bold]{s.name}[/] (seed {s.seed}): {s.title}", highlight=False)
    c.print(f"[bold]question[/]: {s.question}", highlight=False, soft_wrap=True)
    c.print(f"[bold]original setup[/]: {s.original}", highlight=False, soft_wrap=True)
    for x in s.simplifications:
        c.print(f"  - {x}", highlight=False, soft_wrap=True)
    t = Table(title="parts", title_justify="left")
    for col in ("part", "scenario", "grid", "repeat", "runs", "quick: grid / repeat / duration", "quick runs"):
        t.add_column(col, overflow="fold")
    for p in s.parts:
        sc = p.scenario()
        full = p.sweep_table()
        quick = p.sweep_table(True)
        grid = "; ".join(f"{k} ({len(v)}): {', '.join(map(str, v))}" for k, v in p.axes().items()) or "-"
        qgrid = "; ".join(f"{k} ({len(v)})" for k, v in p.axes(True).items())
        t.add_row(
            p.name,
            sc.describe().split(": ", 1)[-1],
            grid,
            str(full["repeat"]),
            str(p.n_runs()),
            f"{qgrid or '-'} / {quick['repeat']} / {_duration(p.duration_s(True))}",
            str(p.n_runs(True)),
        )
    c.print(t)
    c.print(
        f"runs: {s.n_runs()} full ({_duration(s.simulated_s())} simulated; measured "
        f"{s.full_runtime or 'unknown'}), {s.n_runs(True)} with --quick "
        f"({_duration(s.simulated_s(True))} simulated; measured {s.quick_runtime or 'unknown'})",
        highlight=False,
        soft_wrap=True,
    )
    if s.published:
        pt = Table(title="published numbers (the seed's)", title_justify="left")
        for col in ("part", "cell", "metric", "value", "unit", "where"):
            pt.add_column(col, overflow="fold")
        for r in s.published:
            pt.add_row(r.part, r.cell_text(), r.metric, f"{r.value:g}", r.unit, r.where)
        c.print(pt)
    c.print(f"analyses: {', '.join(['published', *s.analyses])}", highlight=False)
    c.print(f"file: {s.path}", highlight=False, soft_wrap=True)


@app.command("run")
def run_command(
    name: str = typer.Argument(..., help="Built-in study name or study file path."),
    backend: str = typer.Option("sim", "--backend", "-b", help="sim | kernel | ns3"),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Store directory (default results/NAME, or results/NAME-quick)."
    ),
    repeat: Optional[int] = typer.Option(None, "--repeat", "-r", min=1, help="Runs per grid cell, every part."),
    quick: bool = typer.Option(
        False, "--quick", help="The reduced grid: shorter runs, fewer cells or repeats (at least 3 per cell)."
    ),
    workers: Optional[int] = typer.Option(None, "--workers", "-j", min=1, help="Local worker processes."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    parts: Optional[str] = typer.Option(
        None, "--parts", help="Comma-separated parts to run (default: all), e.g. streams,debloated."
    ),
    beside_sim: bool = typer.Option(
        True,
        "--beside-sim/--no-beside-sim",
        help="On the kernel or ns-3 backend, also run the grid on the simulator (DIR/sim-twin) "
        "and put the two side by side in the report.",
    ),
) -> None:
    """Sweep every part into one store, analyse, and write DIR/report.html."""
    from ..study.published import published_table
    from ..study.run import default_out, run_study
    from ..validate import twin

    s = _load(name)
    out = out or default_out(s, quick)
    err = _stderr
    # the grid and how it runs, the same for the study's backend and the simulator beside it
    how = {
        "quick": quick,
        "repeat": repeat,
        "workers": workers,
        "progress": not quiet,
        "console": err,
        "command": ["ccbench", *sys.argv[1:]],
    }
    try:
        run = run_study(
            s,
            out,
            backend=backend,
            parts=[x.strip() for x in (parts or "").split(",") if x.strip()],
            report=False,
            **how,
        )
        twin_runs = []
        if backend != "sim" and beside_sim:
            t0 = time.perf_counter()
            twin_runs = twin.run_twin(run.study, out, **how)
            twin_s = time.perf_counter() - t0
        run.report = twin.build_study_report(out)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except ValueError as e:  # StudyError, ScenarioError, SweepError, ReportError
        raise _fail(str(e)) from None
    import ccbench

    table = published_table(run.study, ccbench.load(out))  # the parts run
    if not table.empty:
        from ..termtable import print_table, short_cell

        def num(v):
            return "" if v is None or v != v else f"{v:g}"

        rows = []
        for _, r in table.iterrows():
            style = {"agrees": "green", "close": "yellow", "disagrees": "red"}.get(r["verdict"], "")
            interval = f" ({num(r['95% lo'])}-{num(r['95% hi'])})" if num(r["95% lo"]) else ""
            unit = f" {r['unit']}" if r["unit"] else ""
            rows.append(
                {
                    "part: cell": f"{r['part']}: {short_cell(str(r['cell']))}",
                    "metric": r["metric"],
                    "seed": f"{r['published']:g}{unit}",
                    "ours (95 %)": f"{num(r['measured'])}{interval}",
                    "ours/seed": num(r["measured / published"]),
                    "verdict": f"[{style}]{r['verdict']}[/]" if style else str(r["verdict"]),
                }
            )
        print_table(_stdout, f"{s.name}: published vs measured", rows, no_wrap=("verdict",))
    _stdout.print(
        f"{run.study.name}: {sum(x.total for x in run.summaries)} runs in {run.wall_s:.1f} s; "
        + (
            f"the simulator beside it: {sum(x.total for x in twin_runs)} runs in {twin_s:.1f} s ({twin.TWIN_DIR}/); "
            if twin_runs
            else ""
        )
        + f"store {out}; report {run.report}",
        highlight=False,
        soft_wrap=True,
    )
    if not run.all_ok or not all(x.all_ok for x in twin_runs):
        raise typer.Exit(1)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="study")
