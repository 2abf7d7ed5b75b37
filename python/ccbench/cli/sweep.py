"""CLI commands ``ccbench sweep`` and ``ccbench query`` (registered into cli.py's typer app).

Also runnable on its own: ``python -m ccbench.cli sweep study.toml ...``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..scenario.model import as_scenario

__all__ = ["register", "sweep_command", "query_command", "app"]


def _default_out(scenario_path: Path) -> Path:
    return Path("results") / scenario_path.stem


def sweep_command(
    scenario: Path = typer.Argument(
        ...,
        metavar="SCENARIO",
        help="Scenario TOML file; its \\[sweep] table defines the grid.",
        exists=True,
        dir_okay=False,
        readable=True,
    ),
    grid: List[str] = typer.Option(
        [],
        "--grid",
        "-g",
        metavar="KEY=V1,V2,...",
        help="Sweep KEY over these values (replaces the axis of \\[sweep] or adds one). Repeatable.",
    ),
    zip_: List[str] = typer.Option(
        [], "--zip", metavar="KEY1,KEY2", help="Vary these swept keys together instead of crossing them. Repeatable."
    ),
    repeat: Optional[int] = typer.Option(
        None, "--repeat", "-r", min=1, help="Runs per grid cell (seeds: seed, seed+1, ...)."
    ),
    backend: str = typer.Option("sim", "--backend", "-b", help="sim | kernel | ns3"),
    workers: Optional[int] = typer.Option(
        None,
        "--workers",
        "-j",
        min=1,
        help="Local worker processes (default: number of CPUs; kernel backend: always 1).",
    ),
    dask: Optional[str] = typer.Option(
        None,
        "--dask",
        metavar="ADDRESS|local",
        help="Run on Dask: 'local' (LocalCluster) or a scheduler address tcp://HOST:PORT.",
    ),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Store directory (default: results/<scenario file stem>)."
    ),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run again the runs stored as failed."),
    run_timeout: str = typer.Option(
        "1h",
        "--run-timeout",
        metavar="TIME",
        help="Stop a run after TIME (600, 90s, 30min, 2h: a scenario time, a bare "
        "number is seconds; none = no limit) and store it as failed; "
        "the sweep goes on.",
    ),
    set_: List[str] = typer.Option(
        [],
        "--set",
        "-s",
        metavar="KEY=VALUE",
        help="Override a scenario value before expanding. A swept key (in "
        "\\[sweep] or --grid) is pinned to this one value, as "
        "--grid KEY=VALUE would. Repeatable.",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the runs, run nothing."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary."),
) -> None:
    """Run every cell of a grid (x repeats), skipping runs already stored in --out."""
    from rich.console import Console

    from .. import sweeps as sw

    err = Console(stderr=True)
    out = out or _default_out(scenario)
    try:
        set_, grid = pin_swept_overrides(scenario, set_, grid, zip_, err)
        if dry_run:
            base = as_scenario(scenario, set_)
            g = sw.grid_from_scenario(base, grid, zip_, repeat)
            specs = sw.plan(base, g, backend)
            _print_plan(specs)
            return
        summary = sw.run_sweep(
            scenario,
            out,
            grid=grid,
            zips=zip_,
            repeat=repeat,
            backend=backend,
            workers=workers,
            dask=dask,
            retry_failed=retry_failed,
            overrides=set_,
            progress=not quiet,
            console=err,
            command=["ccbench", *sys.argv[1:]],
            run_timeout=sw.parse_run_timeout(run_timeout),
        )
    except ValueError as e:  # SweepError, ScenarioError, StoreError
        err.print(f"[red]error:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except KeyboardInterrupt as e:  # Ctrl-C 130, SIGTERM 143, SIGHUP 129
        from ..procs import exit_status

        raise typer.Exit(exit_status(e)) from None
    if not quiet:
        err.print(
            f'results: {out}   (ccbench query {out} "SELECT ...", or ccbench.load({str(out)!r}))',
            highlight=False,
            soft_wrap=True,
        )
    if not summary.all_ok:
        raise typer.Exit(1)


def pin_swept_overrides(
    scenario: Path, overrides: List[str], grid: List[str], zips: List[str], console=None
) -> tuple[List[str], List[str]]:
    """``--set KEY=V`` where KEY is swept (by [sweep] or --grid) pins the axis to V: the
    override becomes ``--grid KEY=[V]`` (without this the sweep's values would silently replace
    V). Returns (overrides left, grid options); says what it did on ``console``."""
    import json

    from .. import sweeps as sw
    from ..scenario.parse import parse_override_value

    if not overrides:
        return overrides, grid
    base = as_scenario(scenario, overrides)
    g = sw.grid_from_scenario(base, grid, zips)
    kept, pinned = [], []
    for item in overrides:
        key, _, text = item.partition("=")
        key, text = key.strip(), text.strip()
        if key not in g.values:
            kept.append(item)
            continue
        group = next((z for z in g.zips if key in z), None)
        if group is not None:
            others = " ".join(f"--grid {k}=..." for k in group if k != key)
            raise sw.SweepError(
                f"--set {item}: {key} is zipped with {', '.join(k for k in group if k != key)}; "
                f"pin them together with --grid {key}={text} {others}"
            )
        value = parse_override_value(text)
        literal = text if not isinstance(value, str) or text[:1] in "'\"" else json.dumps(value)
        pinned.append(f"{key}=[{literal}]")
        if console is not None:
            was = ", ".join(sw.param_str(v) for v in g.values[key])
            console.print(
                f"note: --set {key}={text}: {key} is swept ({was}); pinned to {text} (as --grid {key}={text})",
                style="yellow",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    return kept, [*grid, *pinned]


def _print_plan(specs) -> None:
    from rich.console import Console
    from rich.table import Table

    from ..sweeps.grid import param_str

    keys = list(specs[0].params) if specs else []
    t = Table(title=f"{len(specs)} runs")
    for c in ["#", "run_id", *keys, "repeat", "seed"]:
        t.add_column(c)
    for s in specs:
        t.add_row(str(s.index), s.run_id, *(param_str(s.params[k]) for k in keys), str(s.repeat), str(s.seed))
    Console().print(t)


def query_command(
    dir: Path = typer.Argument(
        ...,
        metavar="DIR",
        help="Store directory written by ccbench sweep or ccbench run --out.",
        exists=True,
        file_okay=False,
    ),
    sql: Optional[str] = typer.Argument(
        None,
        help="SQL over the views runs, flows, series, link_series, counters, e.g. "
        '"SELECT cc, avg(goodput_bps) FROM flows GROUP BY cc". '
        'Quote swept columns: "bottleneck.loss". '
        "Without SQL: list the views and their columns.",
    ),
    csv: bool = typer.Option(False, "--csv", help="Print CSV instead of a table."),
    limit: int = typer.Option(200, "--limit", help="Rows shown in the table (0 = all; --csv prints all)."),
) -> None:
    """Query a sweep store with SQL (DuckDB)."""
    import sys
    import warnings

    from rich.console import Console
    from rich.table import Table

    from ..results.store import SkippedFileWarning, query

    err = Console(stderr=True)
    with warnings.catch_warnings(record=True) as skipped:
        warnings.simplefilter("always", SkippedFileWarning)
        try:
            if sql is None:
                _print_views(dir)
                return
            df = query(dir, sql)
        except Exception as e:  # duckdb errors, StoreError: show the message, not a traceback
            err.print(f"[red]error:[/] {_one_line(e)}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        finally:  # files left out (truncated by a power loss): say which, one line each
            for w in skipped:
                if issubclass(w.category, SkippedFileWarning):
                    err.print(f"warning: {w.message}", style="yellow", markup=False, highlight=False, soft_wrap=True)
    if csv:
        df.to_csv(sys.stdout, index=False)
        return
    shown = df if limit <= 0 else df.head(limit)
    t = Table(show_lines=False)
    for c in df.columns:
        t.add_column(str(c), justify="right" if df[c].dtype.kind in "iuf" else "left")
    for row in shown.itertuples(index=False):
        t.add_row(*(_fmt(v) for v in row))
    Console().print(t)
    if len(shown) < len(df):
        err.print(f"{len(df) - len(shown)} more rows (use --limit 0 or --csv)")


def _print_views(dir: Path) -> None:
    """The views of a store, their row counts and columns."""
    from rich.console import Console
    from rich.table import Table

    from ..results.store import TABLES, connect

    con = connect(dir)
    try:
        t = Table(title=f"{dir}: views")
        for c in ("view", "rows", "columns"):
            t.add_column(c)
        for view in TABLES:
            n = con.execute(f"SELECT count(*) FROM {view}").fetchone()[0]
            cols = [r[0] for r in con.execute(f"DESCRIBE {view}").fetchall()]
            t.add_row(view, str(n), ", ".join(f'"{c}"' if "." in c else c for c in cols))
    finally:
        con.close()
    Console().print(t)


def _one_line(e: BaseException) -> str:
    """DuckDB's messages carry a multi-line caret excerpt of the SQL: keep the first line."""
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


def _fmt(v) -> str:
    import math

    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return f"{v:.6g}"
    return str(v)


def register(app: typer.Typer) -> None:
    """Add ``sweep`` and ``query`` to the ccbench typer app."""
    app.command("sweep")(sweep_command)
    app.command("query")(query_command)


app = typer.Typer(add_completion=False, help="ccbench sweep and query")
register(app)

if __name__ == "__main__":
    app()
