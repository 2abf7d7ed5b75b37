"""CLI commands ``ccbench plot`` and ``ccbench report`` (registered into cli.py's typer app).

ccbench plot DIR KIND [--out FILE.svg|png|pdf] [--run RUN_ID] [--where KEY=VALUE ...]
ccbench plot DIR key [--out FILE]     the key figure of a study's store ([study.key_figure])
ccbench plot --list
ccbench report DIR [--out report.html] [--title TEXT]
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

__all__ = ["register", "plot_command", "report_command"]


def _err(message: str, code: int = 2) -> typer.Exit:
    from rich.console import Console
    from rich.text import Text

    err = Console(stderr=True)
    for line in str(message).splitlines() or [""]:
        err.print(Text(f"error: {line}", style="red"), soft_wrap=True, highlight=False)
    return typer.Exit(code)


def _parse_where(items: List[str]) -> dict:
    where = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise _err(f"--where {item!r}: expected KEY=VALUE, e.g. bottleneck.loss=1%")
        where[key.strip()] = value.strip()
    return where


def plot_command(
    dir: Optional[Path] = typer.Argument(None, help="Store directory (ccbench sweep / run --out)."),
    kind: Optional[str] = typer.Argument(None, help="Figure kind (see --list), or key: a study store's key figure."),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Output file: .svg, .png or .pdf (default DIR/KIND.svg)."
    ),
    run: Optional[str] = typer.Option(None, "--run", help="Run id (or a unique prefix) to draw."),
    where: List[str] = typer.Option(
        [], "--where", "-w", metavar="KEY=VALUE", help="Select runs by a column, e.g. bottleneck.loss=1%. Repeatable."
    ),
    list_: bool = typer.Option(False, "--list", help="List the figure kinds."),
) -> None:
    """Draw one figure of a result store."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from .. import plots

    if list_:
        t = Table(title="figure kinds", title_justify="left")
        t.add_column("kind")
        t.add_column("what it shows")
        for name, (_, desc) in plots.KINDS.items():
            t.add_row(name, escape(desc))
        t.add_row(KEY_KIND, "the key figure of a study's store: the one its study file declares ([study.key_figure])")
        Console(width=max(Console().width, 110)).print(t)
        return
    if dir is None or kind is None:
        raise _err("usage: ccbench plot DIR KIND [--out FILE] (or ccbench plot --list)")
    if kind == KEY_KIND:
        return _plot_key(dir, out)
    if kind not in plots.KINDS:
        raise _err(f"unknown figure kind {kind!r}; kinds: {', '.join(plots.KINDS)}")
    if not dir.is_dir():
        raise _err(f"{dir}: no such store directory")
    out = out or dir / f"{kind}.svg"
    if out.suffix.lower() not in (".svg", ".png", ".pdf"):
        raise _err(f"--out {out}: the file name must end in .svg, .png or .pdf")
    try:
        from ..results.store import load

        fig = plots.make(load(dir), kind, run_id=run, where=_parse_where(where))
        out.parent.mkdir(parents=True, exist_ok=True)
        plots.save(fig, out)
    except plots.PlotError as e:
        raise _err(f"{kind}: {e}", 1) from None
    Console(stderr=True).print(f"wrote {out}", highlight=False, soft_wrap=True)


KEY_KIND = "key"


def _plot_key(dir: Path, out: Optional[Path]) -> None:
    """Draw the key figure of the study that made store ``dir``."""
    from rich.console import Console

    from .. import plots
    from ..results.store import load
    from ..study.key_figure import draw, study_of
    from ..study.spec import StudyError

    if not dir.is_dir():
        raise _err(f"{dir}: no such store directory")
    out = out or dir / f"{KEY_KIND}.svg"
    if out.suffix.lower() not in (".svg", ".png", ".pdf"):
        raise _err(f"--out {out}: the file name must end in .svg, .png or .pdf")
    from ..results.layout import StoreError

    try:
        results = load(dir)
    except StoreError as e:
        raise _err(str(e), 1) from None
    try:
        study = study_of(results)
    except StudyError as e:
        raise _err(f"{dir}: no key figure: {e}", 1) from None
    if study.key_figure is None:
        raise _err(f"{dir}: study {study.name} ({study.path}) declares no key figure ([study.key_figure])", 1)
    try:
        fig = draw(study, results)
        out.parent.mkdir(parents=True, exist_ok=True)
        plots.save(fig, out)
    except plots.PlotError as e:
        raise _err(f"{dir}: key figure of study {study.name}: {e}", 1) from None
    Console(stderr=True).print(f"wrote {out}", highlight=False, soft_wrap=True)


def report_command(
    dir: Path = typer.Argument(..., help="Store directory (ccbench sweep / run --out / study run)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="HTML file (default DIR/report.html)."),
    title: Optional[str] = typer.Option(None, "--title", help="Report title."),
) -> None:
    """Write a self-contained HTML report (figures inline) of a result store."""
    from rich.console import Console

    from ..report import ReportError
    from ..validate.twin import build_study_report  # a study store gets its study's sections too

    if not dir.is_dir():
        raise _err(f"{dir}: no such store directory")
    try:
        path = build_study_report(dir, out=out, title=title)
    except ReportError as e:
        raise _err(str(e), 1) from None
    Console(stderr=True).print(f"wrote {path}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``plot`` and ``report`` to the ccbench typer app."""
    app.command("plot")(plot_command)
    app.command("report")(report_command)
