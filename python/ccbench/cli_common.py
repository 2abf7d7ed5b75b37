"""What the plugin commands (cli_study, cli_validate, cli_compare) share: a rich console and the
one-line error exit every ccbench command uses for bad input (exit code 2)."""
from __future__ import annotations

import typer

__all__ = ["console", "fail"]


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: <line>`` in red for each line of ``message``; return the Exit to raise."""
    from rich.text import Text

    err = console(True)
    for line in str(message).splitlines() or [""]:
        err.print(Text(f"error: {line}", style="red"), soft_wrap=True, highlight=False)
    return typer.Exit(code)
