"""What a sweep prints while it runs and when it ends."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .grid import param_str


def resolve_console(console):
    if console is not None:
        return console
    from rich.console import Console

    return Console(stderr=True)


class Progress:
    def __init__(self, console, total: int, summary: SweepSummary, executor: str, notes):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        s = summary

        class Counts(ProgressColumn):
            def render(self, task):
                t = Text()
                t.append(f"ok {s.ok}", style="green")
                t.append(f" failed {s.failed}", style="red" if s.failed else "")
                t.append(f" cached {s.cached}", style="cyan")
                return t

        class Rate(ProgressColumn):
            def render(self, task):
                el = task.elapsed or 0.0
                rate = task.completed / el if el > 0 else 0.0
                return Text(f"{rate:.1f} runs/s")

        self.console = console
        self.summary = summary
        self.header = (
            f"sweep: {s.total} runs ({s.cached} cached"
            + (f", {s.stored_failed} stored failed, not retried" if s.stored_failed else "")
            + f"), {total} to run on {executor}, backend {s.backend}"
        )
        self.notes = notes
        self.progress = Progress(
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            Counts(),
            Rate(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task = self.progress.add_task("runs", total=total)

        # not a terminal (CI log, `| tee`): a plain line every 5 % or 30 s instead of a live bar
        self.live = bool(getattr(console, "is_terminal", True))
        self.total = total
        self.done = 0
        self.t0 = 0.0
        self.last_line = 0.0
        self.step = max(1, total // 20)

    def start(self):
        self.console.print(self.header, highlight=False, soft_wrap=True)
        for note in self.notes:
            self.console.print(f"[yellow]{note}[/]")
        self.t0 = self.last_line = time.monotonic()
        if self.live:
            self.progress.start()

    def advance(self):
        self.done += 1
        if self.live:
            self.progress.advance(self.task)
            return
        now = time.monotonic()
        if self.done == self.total or self.done % self.step == 0 or now - self.last_line > 30:
            self.last_line = now
            s, el = self.summary, now - self.t0
            rate = self.done / el if el > 0 else 0.0
            eta = (self.total - self.done) / rate if rate > 0 else float("nan")
            self.console.print(
                f"{self.done}/{self.total} ok {s.ok} failed {s.failed} cached "
                f"{s.cached}  {rate:.1f} runs/s  ETA {eta:.0f} s",
                highlight=False,
                soft_wrap=True,
            )

    def stop(self):
        if self.live:
            self.progress.stop()


def print_summary(summary: SweepSummary, console=None, notes: Sequence[str] = ()) -> None:
    from rich.table import Table

    console = resolve_console(console)
    t = Table(title=f"sweep into {summary.out}", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column(justify="right")
    t.add_row("runs in the grid", str(summary.total))
    t.add_row("already stored (ok)", str(summary.cached))
    if summary.stored_failed:
        t.add_row("stored failed, not retried", f"[red]{summary.stored_failed}[/] (--retry-failed)")
    t.add_row("ran now: ok", f"[green]{summary.ok}[/]")
    t.add_row("ran now: failed", f"[red]{summary.failed}[/]" if summary.failed else "0")
    t.add_row("backend / executor", f"{summary.backend} / {summary.executor}")
    t.add_row("wall time", f"{summary.wall_s:.1f} s")
    if summary.executed:
        t.add_row("throughput", f"{summary.runs_per_s:.2f} runs/s")
    console.print(t)
    for note in notes:
        console.print(f"[yellow]{note}[/]")
    if summary.identical_cells:
        n, first = len(summary.identical_cells), summary.identical_cells[0]
        desc = ", ".join(f"{k}={param_str(v)}" for k, v in first.items()) or "the base scenario"
        console.print(
            f"[yellow]warning:[/] {n} cell{'s' if n != 1 else ''} gave the same goodput in "
            f"every repeat (e.g. {desc}): the repeats did not vary, so their spread says "
            f"nothing; add random loss, jitter or start_jitter (docs/scenario.md)",
            highlight=False,
            soft_wrap=True,
        )
    for msg, n in summary.errors.most_common(5):
        console.print(f"[red]failed ×{n}:[/] {msg}", highlight=False, soft_wrap=True)
    if len(summary.errors) > 5:
        console.print(
            f"[red]... and {len(summary.errors) - 5} more distinct errors[/] (see the runs table: status = 'failed')"
        )


@dataclass
class SweepSummary:
    out: Path
    backend: str
    executor: str
    total: int = 0  # runs in the plan
    cached: int = 0  # stored ok before this sweep started
    stored_failed: int = 0  # stored failed before and not retried (see --retry-failed)
    ok: int = 0  # executed now, ok
    failed: int = 0  # executed now, failed
    wall_s: float = 0.0
    interrupted: bool = False
    backend_s: float = 0.0  # total seconds spent inside backend.run over executed runs
    errors: Counter = field(default_factory=Counter)
    # cells (swept values) whose repeats all gave the same aggregate goodput: the repeats did
    # not vary (no random loss, jitter or start_jitter), so their spread says nothing
    identical_cells: list = field(default_factory=list)

    @property
    def executed(self) -> int:
        return self.ok + self.failed

    @property
    def runs_per_s(self) -> float:
        return self.executed / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def all_ok(self) -> bool:
        return self.failed == 0 and self.stored_failed == 0
