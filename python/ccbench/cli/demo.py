"""``ccbench demo``: a real comparison on the simulator, printed as a table."""

from __future__ import annotations

from typing import Optional

import typer

from ..scenario.errors import ScenarioError
from .errors import EXIT_BAD_INPUT, console, error


def demo(
    duration: Optional[str] = typer.Option(None, "--duration", help="Override the 30 s run length, e.g. 5s."),
    workers: int = typer.Option(2, "--workers", "-j", help="Parallel processes."),
):
    """CUBIC vs Reno (and BBR, Vegas when available) under random loss on the simulator."""
    from .. import demo as demo_mod

    try:
        code = demo_mod.main(duration=duration, workers=workers, console=console)
    except ScenarioError as e:
        raise error(str(e), EXIT_BAD_INPUT) from None
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
