"""`ccbench demo` (and `make demo`): CUBIC vs Reno (and BBR, Vegas when the simulator has them)
under random loss, one flow per run, the cells run in parallel processes.

The grid lives in studies/demo-loss.toml (its [sweep] table), so `ccbench sweep` can run it too.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Optional, Sequence

from .analysis import mathis_goodput_bps
from .scenario.model import MSS, load_scenario
from .units import format_rate, format_time, parse_percent

__all__ = ["STUDY", "demo_grid", "run_cell", "run_demo", "render"]

STUDY = Path(__file__).parent / "study" / "studies" / "demo-loss.toml"


def demo_grid(study: Path = STUDY, algorithms: Optional[Sequence[str]] = None) -> tuple[list[str], list[str]]:
    """(losses, algorithms) of the study's [sweep], algorithms limited to what the sim runs."""
    from .backends import sim

    sc = load_scenario(study)
    sweep = sc.sweep or {}
    losses = list(sweep.get("bottleneck.loss", ["0%"]))
    wanted = list(algorithms or sweep.get("flows.0.cc", [sc.flows[0].cc]))
    have = {a["name"] for a in sim.algorithms()}
    return losses, [a for a in wanted if a in have]


def run_cell(study: str, loss: str, cc: str, duration: Optional[str] = None) -> dict[str, Any]:
    """Run one (loss, cc) cell on the simulator; returns the flow's summary (picklable)."""
    from .backends import run

    overrides: dict[str, Any] = {"bottleneck.loss": loss, "flows.0.cc": cc}
    if duration:
        overrides["duration"] = duration
    sc = load_scenario(study, overrides)
    res = run(sc, "sim")
    cell: dict[str, Any] = {
        "loss": loss,
        "cc": cc,
        "status": res.status,
        "error": res.error,
        "base_rtt_s": sc.base_rtt_s,
    }
    if res.ok and res.flows_table.num_rows:
        row = res.flows_table.slice(0, 1).to_pylist()[0]
        for k in ("goodput_bps", "rtt_mean_ms", "rtt_p95_ms", "retransmits", "loss_events", "cwnd_mean"):
            cell[k] = row.get(k)
    return cell


def run_demo(
    study: Path = STUDY,
    duration: Optional[str] = None,
    workers: int = 2,
    algorithms: Optional[Sequence[str]] = None,
) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """Run every cell; returns (losses, algorithms, cells) with cells in grid order."""
    losses, algs = demo_grid(study, algorithms)
    jobs = [(str(study), loss, cc, duration) for loss in losses for cc in algs]
    workers = max(1, min(workers, len(jobs), os.cpu_count() or 1))
    if workers == 1:
        cells = [run_cell(*j) for j in jobs]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            cells = list(pool.map(run_cell, *zip(*jobs)))
    return losses, algs, cells


def _fmt(v: Optional[float], spec: str) -> str:
    return "–" if v is None else format(v, spec)


def render(losses: Sequence[str], algs: Sequence[str], cells: Sequence[dict], console, title: str = "") -> None:
    """The table (rows = loss; per algorithm goodput, RTT mean / p95, retransmits) + Mathis line."""
    from rich.measure import Measurement
    from rich.table import Table

    by = {(c["loss"], c["cc"]): c for c in cells}

    def cell(loss: str, cc: str, metric: str) -> str:
        c = by.get((loss, cc), {})
        if c.get("status") != "ok":
            return "failed" if metric == "goodput" else ""
        if metric == "goodput":
            gp = c.get("goodput_bps")
            return _fmt(None if gp is None else gp / 1e6, ".2f")
        if metric == "rtt":
            return f"{_fmt(c.get('rtt_mean_ms'), '.1f')} / {_fmt(c.get('rtt_p95_ms'), '.1f')}"
        return _fmt(c.get("retransmits"), "d")

    metrics = [("goodput", "Mbit/s"), ("rtt", "RTT ms\nmean / p95"), ("retx", "retx")]
    wide = Table(title=title or None, title_justify="left")
    wide.add_column("loss", justify="right")
    for cc in algs:
        for _, label in metrics:
            wide.add_column(f"{cc}\n{label}", justify="right")
    for loss in losses:
        wide.add_row(loss, *[cell(loss, cc, m) for cc in algs for m, _ in metrics])
    if Measurement.get(console, console.options.update_width(10_000), wide).maximum <= console.width:
        console.print(wide)
    else:  # too wide for the terminal: one table per metric, same rows and columns
        names = {"goodput": "goodput, Mbit/s", "rtt": "RTT mean / p95, ms", "retx": "retransmits"}
        for m, _ in metrics:
            t = Table(title=names[m], title_justify="left")
            t.add_column("loss", justify="right")
            for cc in algs:
                t.add_column(cc, justify="right")
            for loss in losses:
                t.add_row(loss, *[cell(loss, cc, m) for cc in algs])
            console.print(t)
    rtt = next((c["base_rtt_s"] for c in cells if c.get("base_rtt_s")), None)
    if rtt:
        refs = []
        for loss in losses:
            p = parse_percent(loss)
            ref = mathis_goodput_bps(rtt, p, MSS)
            if ref is not None:
                refs.append(f"{loss} → {ref / 1e6:.2f} Mbit/s")
        if refs:
            console.print(
                f"Reno reference (Mathis: MSS/RTT·√(3/(2p)), MSS {MSS} B, base RTT {rtt * 1e3:g} ms; "
                "queueing raises the real RTT): " + ", ".join(refs),
                highlight=False,
                soft_wrap=True,
            )
    failed = [c for c in cells if c.get("status") != "ok"]
    if failed:
        errors = sorted({str(c.get("error")) for c in failed})
        console.print(
            f"{len(failed)} of {len(cells)} cells failed: " + "; ".join(errors),
            style="red",
            highlight=False,
            soft_wrap=True,
        )


def main(duration: Optional[str] = None, workers: int = 2, console=None) -> int:
    """Run and print the demo; returns a process exit code (0 ok, 1 if any cell failed)."""
    from rich.console import Console

    console = console or Console()
    losses, algs = demo_grid(STUDY)
    sc = load_scenario(STUDY, {"duration": duration} if duration else {})
    b = sc.bottleneck
    console.print(
        f"ccbench demo: {', '.join(algs)}, one flow per run over {format_rate(b.rate_bps)}, "
        f"RTT {format_time(sc.base_rtt_s)}, {b.buffer} {b.aqm} buffer, {format_time(sc.duration_s)} each; "
        f"random loss {', '.join(losses)}; {len(losses) * len(algs)} simulator runs in {workers} processes",
        highlight=False,
        soft_wrap=True,
    )
    t0 = time.perf_counter()
    losses, algs, cells = run_demo(duration=duration, workers=workers)
    render(losses, algs, cells, console)
    console.print(f"wall time {time.perf_counter() - t0:.1f} s", style="dim", highlight=False)
    return 0 if all(c.get("status") == "ok" for c in cells) else 1
