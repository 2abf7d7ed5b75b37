"""Wall time of `ccbench recommend` for a few link descriptions (target: < 30 s each
on the 2-core development machine). Each command runs as a fresh process (Python start-up and
imports included), with --json so the runs, repeats and outcome are recorded.

    .venv/bin/python benchmarks/recommend/recommend_bench.py      # writes benchmarks/recommend/RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "common"))
from bench_machine import cpu_model, git_commit  # noqa: E402

CCBENCH = [str(Path(sys.executable).with_name("ccbench"))]
if not Path(CCBENCH[0]).exists():
    CCBENCH = [sys.executable, "-m", "ccbench.cli"]

LINKS = [
    ("slow: 2 Mbit/s rural DSL", ["--rate", "2Mbit", "--rtt", "40ms", "--buffer", "4bdp"]),
    ("satellite: 20 Mbit/s GEO, 1 % loss", ["--rate", "20Mbit", "--rtt", "600ms", "--loss", "1%"]),
    ("home fibre: 1 Gbit/s", ["--rate", "1Gbit", "--rtt", "10ms"]),
    ("data centre: 10 Gbit/s", ["--rate", "10Gbit", "--rtt", "100us"]),
    ("lossy, jittery 50 Mbit/s", ["--rate", "50Mbit", "--rtt", "50ms", "--loss", "0.5%", "--jitter", "5ms"]),
    ("loss-free 1 BDP (a tie)", ["--rate", "50Mbit", "--rtt", "50ms", "--buffer", "1bdp"]),
    ("deep buffer, goal latency", ["--rate", "50Mbit", "--rtt", "50ms", "--buffer", "10bdp", "--goal", "latency"]),
    ("1 Gbit/s vs 2 CUBIC flows", ["--rate", "1Gbit", "--rtt", "20ms", "--loss", "0.01%", "--competing", "2xcubic"]),
    ("near a boundary (bisection)", ["--rate", "50Mbit", "--rtt", "50ms", "--loss", "0.005%"]),
    ("from a ping file", ["--ping", "tests/data/ping/linux_loss.txt", "--rate", "100Mbit", "--goal", "balanced"]),
    ("Wi-Fi scenario file", ["--scenario", "examples/wifi-home.toml"]),
]


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    rows = []
    for label, args in LINKS:
        cmd = [*CCBENCH, "recommend", *args, "--json"]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            rows.append((label, args, wall, None, p.stderr.strip().splitlines()[-1:]))
            continue
        rows.append((label, args, wall, json.loads(p.stdout), None))
        print(f"{label}: {wall:.1f} s", flush=True)
    load = os.getloadavg()
    lines = [
        "# `ccbench recommend` wall times",
        "",
        "Written by `benchmarks/recommend/recommend_bench.py` "
        f"on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"commit {git_commit()}; `nproc` {os.cpu_count()}; CPU {cpu_model()}; Python {platform.python_version()}; "
        f"load average before the last run {load[0]:.2f}.",
        "",
        "Each command is a fresh process (`ccbench recommend ... --json`), so the wall time includes "
        "Python's start-up and imports (about 1 s). Default budget 30 s; runs of 15 s or 30 base RTTs, "
        "shortened for the budget on fast links (the duration column); the simulator backend; worker "
        "processes are used when one repeat would take more than 0.5 s. The budget caps the search "
        "after its first batch of 3 repeats, which always runs.",
        "",
        "| link | command (after `ccbench recommend`) | wall s | search s | run length s | runs | repeats "
        "| outcome | answer |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    worst = 0.0
    for label, args, wall, doc, err in rows:
        worst = max(worst, wall)
        if doc is None:
            lines.append(f"| {label} | `{' '.join(args)}` | {wall:.1f} | | | | | failed: {err} | |")
            continue
        ans = doc["recommendation"] or (
            "tie: " + ", ".join(doc["decision"]["tied"] or [doc["leader"], doc["runner_up"]])
        )
        flips = f"; flips at {', '.join(f['point'] for f in doc['flips'])}" if doc["flips"] else ""
        lines.append(
            f"| {label} | `{' '.join(args)}` | {wall:.1f} | {doc['wall_s']:.1f} | "
            f"{doc['link']['duration_s']:g} | {doc['runs']} | "
            f"{doc['repeats']} | {doc['outcome']} ({doc['stop_reason']}) | {ans}{flips} |"
        )
    lines += ["", f"Slowest: {worst:.1f} s.", ""]
    out = Path(__file__).with_name("RESULTS.md")
    out.write_text("\n".join(lines))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
