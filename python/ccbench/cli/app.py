"""The typer application every command registers into, its --version, and a cheap exit."""

from __future__ import annotations

import atexit
import gc
import sys

import typer

from .. import __version__
from .errors import console


def _hide_flag_types() -> None:
    """Typer's rich help prints a value type after every option, also after flags that take
    no value (``--json <bool>``, ``--help <bool>``); its plain help leaves flags bare. Make the
    rich help do the same. Help text that mentions TOML tables escapes the bracket
    (``\\[sweep]``): rich markup would otherwise take ``[sweep]`` for a style tag and drop it."""
    try:
        from typer.core import TyperOption
    except ImportError:  # pragma: no cover - another typer layout: leave its help as it is
        return
    original = getattr(TyperOption, "display_type_rich", None)
    if original is None or getattr(original, "_ccbench_flags_bare", False):
        return

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return None
        return original(self, ctx)

    display_type_rich._ccbench_flags_bare = True
    TyperOption.display_type_rich = display_type_rich


_hide_flag_types()

app = typer.Typer(
    help="ccbench: which TCP congestion control should I use on this network?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool):
    if value:
        console.print(f"ccbench {__version__}", highlight=False)
        raise typer.Exit(0)


_final_gc_skipped = False


def _skip_final_gc_at_exit() -> None:
    """Make interpreter exit cheap: at exit, move every object into the garbage collector's
    permanent generation (gc.freeze) so the full collections of Python's shutdown do not walk
    the ~100 000 objects of pyarrow, pandas, pydantic and typer once more (0.2-0.3 s of every
    command, measured). Objects are still released by reference counting as the modules are
    cleared, and open files are closed by their own code, not by the collector; only cyclic
    garbage left at exit is not collected — the OS reclaims the memory anyway. Registered once
    per process, by the command line only (the library leaves the collector alone)."""
    global _final_gc_skipped
    if not _final_gc_skipped:
        atexit.register(_freeze_gc)
        _final_gc_skipped = True


def _freeze_gc() -> None:
    # duckdb (a nanobind extension: `ccbench query`, reports) counts its objects still alive at
    # exit and prints "nanobind: leaked ..." for them: a process that loaded it keeps the full
    # final collection
    if "_duckdb" not in sys.modules and "duckdb" not in sys.modules:
        gc.freeze()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
):
    """ccbench: which TCP congestion control should I use on this network?"""
    _skip_final_gc_at_exit()
