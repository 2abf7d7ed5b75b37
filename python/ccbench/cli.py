"""`ccbench` command line (typer + rich).

    ccbench run SCENARIO.toml [--set key=value ...] [--backend sim] [--out DIR] [--json]
    ccbench algorithms [--json]
    ccbench demo [--duration 30s] [--workers 2]

Bad input (ScenarioError) → one red line per problem on stderr, exit code 2, no traceback.
A run the backend could not complete → its error on stderr, exit code 1.
Other modules add commands through ``register(app)`` in ``ccbench.cli_sweep`` and
``ccbench.cli_kernel`` (called at the end of this file when they exist).
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import __version__
from .scenario import ScenarioError, load_scenario

app = typer.Typer(
    help="ccbench: which TCP congestion control should I use on this network?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

console = Console()
err_console = Console(stderr=True)

EXIT_BAD_INPUT = 2
EXIT_RUN_FAILED = 1


def error(message: str, code: int = EXIT_BAD_INPUT) -> "typer.Exit":
    """Print ``message`` (one red line per line) on stderr and return the Exit to raise."""
    for line in str(message).splitlines() or [""]:
        err_console.print(Text(f"error: {line}", style="red"), soft_wrap=True, highlight=False)
    return typer.Exit(code)


def _version(value: bool):
    if value:
        console.print(f"ccbench {__version__}", highlight=False)
        raise typer.Exit(0)


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
):
    """ccbench: which TCP congestion control should I use on this network?"""


def _f(v, spec: str, scale: float = 1.0) -> str:
    if v is None:
        return "–"
    try:
        if v != v:  # NaN
            return "–"
    except TypeError:
        return str(v)
    return format(v / scale if scale != 1.0 else v, spec)


def print_result(result, scenario=None, out=None) -> None:
    """Per-flow table and the run line (utilisation, drops, Jain's index)."""
    rows = result.flows_table.to_pylist()
    run = result.runs_table.to_pylist()[0]
    title = scenario.describe() if scenario is not None else None
    table = Table(title=title, title_justify="left")
    for name, justify in (
        ("flow", "right"), ("cc", "left"), ("goodput\nMbit/s", "right"), ("RTT mean\nms", "right"),
        ("RTT p95\nms", "right"), ("retrans-\nmits", "right"), ("cwnd mean\npkts", "right"),
    ):
        table.add_column(name, justify=justify)
    for r in rows:
        table.add_row(
            str(r["flow_id"]), str(r.get("cc") or ""), _f(r.get("goodput_bps"), ".2f", 1e6),
            _f(r.get("rtt_mean_ms"), ".1f"), _f(r.get("rtt_p95_ms"), ".1f"),
            _f(r.get("retransmits"), "d"), _f(r.get("cwnd_mean"), ".1f"),
        )
    console.print(table)
    parts = [f"backend {run['backend']}", f"run {run['run_id']}"]
    if run.get("link_utilisation") is not None:
        parts.append(f"utilisation {run['link_utilisation'] * 100:.1f} %")
    if run.get("aggregate_goodput_bps") is not None:
        parts.append(f"aggregate {run['aggregate_goodput_bps'] / 1e6:.2f} Mbit/s")
    if run.get("drops") is not None:
        parts.append(f"queue drops {run['drops']}")
    if run.get("random_losses") is not None:
        parts.append(f"random losses {run['random_losses']}")
    if run.get("jain_index") is not None:
        jain = f"Jain {run['jain_index']:.3f}"
        if run.get("jain_index_groups") is not None:
            jain += f" (between groups {run['jain_index_groups']:.3f})"
        parts.append(jain)
    if run.get("probe_rtt_p50_ms") is not None:
        parts.append(
            f"ping p50/p95/p99 {_f(run['probe_rtt_p50_ms'], '.1f')}/{_f(run.get('probe_rtt_p95_ms'), '.1f')}"
            f"/{_f(run.get('probe_rtt_p99_ms'), '.1f')} ms"
        )
    if run.get("wall_time_s") is not None:
        parts.append(f"wall {run['wall_time_s']:.2f} s")
    console.print(", ".join(parts), highlight=False, soft_wrap=True)
    if out is not None:
        console.print(f"wrote flows, runs, series Parquet to {out}", style="dim", highlight=False)


@app.command()
def run(
    scenario: Path = typer.Argument(..., help="Scenario TOML file."),
    set_: List[str] = typer.Option(
        [], "--set", help="Override a field: --set bottleneck.loss=1% --set flows.0.cc=bbr (repeatable)."
    ),
    backend: str = typer.Option("sim", "--backend", "-b", help="sim | kernel | ns3"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write flows/runs/series Parquet here."),
    as_json: bool = typer.Option(False, "--json", help='Print only {"runs": [...], "flows": [...]} on stdout.'),
):
    """Run one scenario and print the per-flow summary."""
    from . import backends

    try:
        sc = load_scenario(scenario, set_)
        result = backends.run(sc, backend)
    except ScenarioError as e:
        raise error(str(e), EXIT_BAD_INPUT)
    if out is not None:
        result.write_parquet(out)
    if as_json:
        sys.stdout.write(json.dumps(result.to_json_dict(), allow_nan=False) + "\n")
        sys.stdout.flush()
    elif result.ok:
        print_result(result, sc, out)
    if not result.ok:
        raise error(f"{scenario}: run failed on the {backend} backend: {result.error}", EXIT_RUN_FAILED)


@app.command()
def algorithms(
    as_json: bool = typer.Option(False, "--json", help="Print {backend: [rows]} as JSON."),
):
    """The congestion-control algorithms each backend can run."""
    from . import backends

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


@app.command()
def demo(
    duration: Optional[str] = typer.Option(None, "--duration", help="Override the 30 s run length, e.g. 5s."),
    workers: int = typer.Option(2, "--workers", "-j", help="Parallel processes."),
):
    """CUBIC vs Reno (and BBR, Vegas when available) under random loss on the simulator."""
    from . import demo as demo_mod

    try:
        code = demo_mod.main(duration=duration, workers=workers, console=console)
    except ScenarioError as e:
        raise error(str(e), EXIT_BAD_INPUT)
    raise typer.Exit(code)


def _register_plugins() -> None:
    """Commands from other modules: each ``register(app)`` that exists is called."""
    for modname in ("ccbench.cli_sweep", "ccbench.cli_kernel", "ccbench.cli_report", "ccbench.cli_study"):
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue
            err_console.print(Text(f"warning: {modname} needs {e.name}: its commands are unavailable", style="yellow"))
            continue
        except Exception as e:  # a broken plugin must not take `ccbench run` down with it
            err_console.print(Text(f"warning: {modname} failed to import ({type(e).__name__}: {e})", style="yellow"))
            continue
        register = getattr(mod, "register", None)
        if register is not None:
            register(app)


_register_plugins()

if __name__ == "__main__":
    app()
