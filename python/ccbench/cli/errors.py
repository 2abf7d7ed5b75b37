"""How every command ends on bad input or a failed run: one red ``error:`` line per problem on
stderr and exit code 2 (bad input) or 1 (a run the backend could not complete), no traceback."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.text import Text

console = Console()


err_console = Console(stderr=True)


EXIT_BAD_INPUT = 2


EXIT_RUN_FAILED = 1


def error(message: str, code: int = EXIT_BAD_INPUT) -> "typer.Exit":
    """Print ``message`` (one red line per line) on stderr and return the Exit to raise."""
    for line in str(message).splitlines() or [""]:
        err_console.print(Text(f"error: {line}", style="red"), soft_wrap=True, highlight=False)
    return typer.Exit(code)
