"""``ccbench algorithms``: the congestion controls each backend can run."""

from __future__ import annotations

import json
import sys

import typer
from rich.table import Table

from ..scenario.errors import ScenarioError
from .errors import console


def algorithms(
    as_json: bool = typer.Option(False, "--json", help="Print {backend: [rows]} as JSON."),
):
    """The congestion-control algorithms each backend can run."""
    from .. import backends

    found: dict[str, list] = {}
    missing: dict[str, str] = {}
    for name in backends.BACKENDS:
        try:
            found[name] = backends.algorithms(name)
        except ScenarioError as e:  # BackendUnavailable
            missing[name] = getattr(e, "reason", e.problem)
        except Exception as e:  # a backend that imports but cannot list (e.g. no root)
            missing[name] = f"{type(e).__name__}: {e}"
    if as_json:
        sys.stdout.write(json.dumps(found) + "\n")
        return
    for name, rows in found.items():
        table = Table(title=f"backend {name}", title_justify="left")
        table.add_column("name")
        table.add_column("Linux version")
        table.add_column("notes")
        for r in rows:
            table.add_row(str(r.get("name", "")), str(r.get("linux", "")), str(r.get("notes", "")))
        console.print(table)
    for name, reason in missing.items():
        console.print(f"backend {name}: not available ({reason})", style="dim", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("algorithms")(algorithms)
