"""CLI commands ``ccbench doctor`` and ``ccbench cleanup`` (registered into cli.py's typer app)."""

from __future__ import annotations

import json

import typer

__all__ = ["register", "doctor_command", "cleanup_command"]

BPF_CHECK = "BPF congestion controls"
#: What the kernel backend can run without: the ping probe, and algorithms the kernel lacks.
OPTIONAL_CHECKS = ("ping", BPF_CHECK)


def doctor_command(
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
) -> None:
    """Can this machine run the kernel backend? What to do about each missing item."""
    from rich.console import Console
    from rich.table import Table

    from ..backends.kernel import bpfcc, env

    checks = env.doctor_checks()
    why = bpfcc.missing()
    checks.append(
        env.Check(
            BPF_CHECK,
            why is None,
            f"can build and load ports of {', '.join(sorted(bpfcc.PORTS))} (clang, bpftool, BTF)"
            if why is None
            else why,
            "as root: `make install` (Debian clang, bpftool, libbpf-dev) on a kernel with BTF and BPF struct_ops",
        )
    )
    ok = all(c.ok for c in checks if c.name not in OPTIONAL_CHECKS)
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
    from ..backends.kernel import bpfcc
    from ..backends.kernel.topology import cleanup_stale

    done = cleanup_stale(force=force)
    ports = bpfcc.cleanup_stale()
    typer.echo(f"unregistered {len(ports)} BPF congestion controls" + (f": {', '.join(ports)}" if ports else ""))
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
