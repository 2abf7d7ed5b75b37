"""CLI commands ``ccbench doctor`` and ``ccbench cleanup`` (registered into cli.py's typer app)."""
from __future__ import annotations

import json

import typer

__all__ = ["register", "doctor_command", "cleanup_command"]


def doctor_command(
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
) -> None:
    """Can this machine run the kernel backend? What to do about each missing item."""
    from rich.console import Console
    from rich.table import Table

    from .kernel import env

    checks = env.doctor_checks()
    ok = all(c.ok for c in checks if c.name != "ping")
    if as_json:
        print(json.dumps({"ok": ok, "kernel": env.kernel_version(),
                          "checks": [c.__dict__ for c in checks]}, indent=2))
        raise typer.Exit(0 if ok else 1)
    con = Console()
    t = Table(title=f"kernel backend on Linux {env.kernel_version()}", title_justify="left")
    for col in ("check", "", "found", "what to do"):
        t.add_column(col)
    for c in checks:
        t.add_row(c.name, "[green]ok[/]" if c.ok else "[red]missing[/]", c.detail, "" if c.ok else c.fix)
    con.print(t)
    if ok:
        con.print("The kernel backend can run here: [bold]ccbench run scenario.toml --backend kernel[/]")
    else:
        con.print("[red]The kernel backend cannot run here yet[/]: fix the items marked missing.")
    raise typer.Exit(0 if ok else 1)


def cleanup_command(
    force: bool = typer.Option(False, "--force",
                               help="Also remove namespaces of runs whose process is still alive."),
) -> None:
    """Remove what crashed kernel runs left behind (ccb* namespaces, their processes, emulators, links)."""
    from .kernel import env
    from .kernel.topology import cleanup_stale

    if not env.is_root():
        typer.echo("ccbench cleanup needs root (namespaces belong to root)", err=True)
        raise typer.Exit(2)
    done = cleanup_stale(force=force)
    for kind in ("namespaces", "processes", "links"):
        items = done[kind]
        typer.echo(f"removed {len(items)} {kind}" + (f": {', '.join(map(str, items))}" if items else ""))
    if done["kept"]:
        typer.echo(f"kept {len(done['kept'])} namespaces of runs still in progress "
                   f"({', '.join(done['kept'])}); --force removes them too")


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_command)
    app.command("cleanup")(cleanup_command)
