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

    from ..backends.kernel import env

    checks = env.doctor_checks()
    ok = all(c.ok for c in checks if c.name != "ping")
    if as_json:
        print(json.dumps({"ok": ok, "kernel": env.kernel_version(), "checks": [c.__dict__ for c in checks]}, indent=2))
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
    force: bool = typer.Option(False, "--force", help="Also remove namespaces of runs whose process is still alive."),
) -> None:
    """Remove what killed sweeps and crashed kernel runs left behind: sweep worker processes
    whose sweep is gone, and (as root) ccb* namespaces, their processes, emulators, links and
    temporary directories."""
    from ..procs import kill, leftover_workers

    workers = leftover_workers()
    gone = [pid for pid, _ in workers if kill(pid)]
    typer.echo(
        f"removed {len(gone)} leftover sweep worker processes" + (f": {', '.join(map(str, gone))}" if gone else "")
    )
    stuck = [pid for pid, _ in workers if pid not in gone]
    if stuck:
        typer.echo(
            f"could not stop {len(stuck)} worker processes ({', '.join(map(str, stuck))}): "
            "they belong to another user; run ccbench cleanup as that user or as root",
            err=True,
        )

    from ..backends.kernel import env

    if not env.is_root():
        typer.echo(
            "kernel runs' namespaces, links and temporary directories belong to root: "
            "sudo ccbench cleanup removes those too"
        )
        raise typer.Exit(1 if stuck else 0)
    from ..backends.kernel.topology import cleanup_stale

    done = cleanup_stale(force=force)
    for kind in ("namespaces", "processes", "links"):
        items = done[kind]
        typer.echo(f"removed {len(items)} {kind}" + (f": {', '.join(map(str, items))}" if items else ""))
    dirs = done.get("dirs", [])
    typer.echo(f"removed {len(dirs)} temporary directories" + (f": {', '.join(dirs)}" if dirs else ""))
    if done["kept"]:
        typer.echo(
            f"kept {len(done['kept'])} namespaces of runs still in progress "
            f"({', '.join(done['kept'])}); --force removes them too"
        )
    if stuck:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_command)
    app.command("cleanup")(cleanup_command)
