#!/usr/bin/env python3
"""Sweep throughput benchmark: the size of the seed jitter-cliff study (002).

7 jitter values (0, 4, 8, 12, 16, 20, 24 ms) x 2 algorithms (cubic, bbr) x 30 repeats = 420 runs,
one flow, 50 Mbit/s, 50 ms RTT, 20 s simulated each, on the sim backend with local worker
processes. Reports wall time, runs/s, and the per-run overhead: everything that is not the
simulation itself (planning, process pool, shipping results back, writing Parquet, progress).

    overhead per run = (wall time x workers - sum of time inside backend.run) / runs

i.e. the worker-seconds per run not spent in the backend. It also times the re-run of the same
sweep (everything cached: the cost of resuming).

Prints a markdown section (with the command, git commit, nproc, CPU model) and writes it to
benchmarks/sweep/RESULTS.md (the lead merges it into benchmarks/simulator/RESULTS.md).

    .venv/bin/python benchmarks/sweep/sweep_bench.py              # the full 420-run study
    .venv/bin/python benchmarks/sweep/sweep_bench.py --repeats 2 --duration 5s   # quick look
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks" / "common"))  # bench_machine

from bench_machine import cpu_model, git_commit  # noqa: E402

from ccbench.backends import get_backend  # noqa: E402
from ccbench.results.store import load  # noqa: E402
from ccbench.scenario.model import Scenario  # noqa: E402
from ccbench.sweeps.grid import Grid  # noqa: E402
from ccbench.sweeps.plan import plan  # noqa: E402
from ccbench.sweeps.runner import run_sweep  # noqa: E402

JITTERS = ["0ms", "4ms", "8ms", "12ms", "16ms", "20ms", "24ms"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--duration", default="20s")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", type=Path, default=None, help="store directory (default: a temporary one, removed)")
    ap.add_argument(
        "--results",
        type=Path,
        default=Path(__file__).with_name("RESULTS.md"),
        help="markdown file to write ('-' = do not write)",
    )
    ap.add_argument("--progress", action="store_true", help="show the progress bar")
    args = ap.parse_args()

    names = [a["name"] for a in get_backend("sim").algorithms()]
    algos = ["cubic", "bbr" if "bbr" in names else "reno"]
    notes = []
    if "bbr" not in names:
        notes.append("bbr is not in the simulator yet: reno is used in its place (same run count).")

    sc = Scenario.from_dict(
        {
            "name": "jitter-cliff-bench",
            "duration": args.duration,
            "seed": 1,
            "bottleneck": {"rate": "50Mbit", "rtt": "50ms"},
            "flows": [{"cc": "cubic"}],
        },
        source="sweep_bench",
    )
    grid = Grid(values={"bottleneck.jitter": JITTERS, "flows.0.cc": algos}, repeat=args.repeats, source="sweep_bench")

    load_avg = os.getloadavg()[0]
    tmp = None
    out = args.out
    if out is None:
        tmp = tempfile.mkdtemp(prefix="ccbench-sweep-bench-")
        out = Path(tmp) / "store"
    try:
        t0 = time.perf_counter()
        n_runs = len(plan(sc, grid))
        plan_s = time.perf_counter() - t0

        backend_s: list[float] = []
        s = run_sweep(
            sc,
            out,
            grid=[f"{k}={','.join(v)}" for k, v in grid.values.items()],
            repeat=args.repeats,
            workers=args.workers,
            progress=args.progress,
            on_result=lambda spec, p: backend_s.append(p.get("backend_s") or 0.0),
        )
        t1 = time.perf_counter()
        again = run_sweep(
            sc,
            out,
            grid=[f"{k}={','.join(v)}" for k, v in grid.values.items()],
            repeat=args.repeats,
            workers=args.workers,
            progress=False,
        )
        resume_s = time.perf_counter() - t1
        res = load(out)
        sim_core_s = float(res.runs["wall_time_s"].fillna(0).sum())
        workers = min(args.workers, max(s.executed, 1))
        total_backend = sum(backend_s)
        overhead_ms = (s.wall_s * workers - total_backend) / max(s.executed, 1) * 1e3
        per_run_backend_ms = total_backend / max(s.executed, 1) * 1e3
        store_mb = sum(p.stat().st_size for p in Path(out).rglob("*.parquet")) / 1e6
        good = (
            res.flows.groupby(["flows.0.cc", "bottleneck.jitter"])["goodput_bps"].mean() / 1e6 if len(res.flows) else {}
        )
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    cmd = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, ROOT), *sys.argv[1:]])
    lines = [
        "## Sweep throughput (jitter-cliff study size)",
        "",
        f"Command: `{cmd}`  ",
        f"Commit: {git_commit()}; {os.cpu_count()} CPUs (nproc), {cpu_model()}; "
        f"Python {platform.python_version()}; load average {load_avg:.2f} at start; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        f"Grid: jitter {', '.join(JITTERS)} x cc {', '.join(algos)} x {args.repeats} repeats = "
        f"{n_runs} runs; 1 flow, 50 Mbit/s, 50 ms RTT, {args.duration} simulated each; sim backend, "
        f"{workers} local worker processes.",
        "",
        "| metric | value |",
        "|---|---|",
        f"| runs | {s.total} ({s.ok} ok, {s.failed} failed) |",
        f"| wall time | {s.wall_s:.1f} s |",
        f"| throughput | {s.runs_per_s:.1f} runs/s |",
        f"| time inside backend.run, per run | {per_run_backend_ms:.1f} ms |",
        "| of which in the simulator core (runs.wall_time_s), per run "
        f"| {sim_core_s / max(s.executed, 1) * 1e3:.1f} ms |",
        f"| **overhead per run** (wall x workers - backend time) / runs | **{overhead_ms:.1f} ms** |",
        f"| planning (expand + validate + hash {n_runs} runs) | {plan_s * 1e3:.0f} ms |",
        f"| re-run, everything cached (resume cost) | {resume_s:.2f} s ({again.cached} cached) |",
        f"| store size | {store_mb:.1f} MB |",
        "",
        "Targets: whole sweep < 60 s on this 2-core machine; overhead < 20 ms per run. "
        + (
            "Met."
            if s.wall_s < 60 and overhead_ms < 20
            else f"{'Wall time met' if s.wall_s < 60 else 'Wall time NOT met'}; "
            f"{'overhead met' if overhead_ms < 20 else 'overhead NOT met'}."
        ),
    ]
    lines += [f"Note: {n}" for n in notes]
    if s.failed:
        lines.append(f"Note: {s.failed} runs failed: {'; '.join(m for m, _ in s.errors.most_common(3))}")
    if len(good):
        lines += [
            "",
            "Mean goodput (Mbit/s) by algorithm and jitter (sanity check, not a fidelity claim):",
            "",
            "| cc | " + " | ".join(JITTERS) + " |",
            "|---|" + "---|" * len(JITTERS),
        ]
        for cc in algos:
            lines.append(f"| {cc} | " + " | ".join(f"{good.get((cc, j), float('nan')):.1f}" for j in JITTERS) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if str(args.results) != "-":
        args.results.write_text(text)
    return 0 if s.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
