#!/usr/bin/env python3
"""`make bench`: every speed benchmark of the project, summarised in benchmarks/simulator/RESULTS.md.

1. Simulator whole runs (crates/sim/examples/bench_run.rs): three scenarios —
   (a) 1 flow, 10 Mbit/s, 100 ms, 60 s; (b) 10 CUBIC flows, 1 Gbit/s, 1 ms, 1 BDP, 10 s;
   (c) the same with 10 paced BBR flows — best of N single-threaded runs, in events/s and
   simulated data packets/s, and the ratio to a reference speed of ns-3 on this machine
   (20–30 thousand data packets/s; part 6 measures ns-3 itself when it is installed).
2. Criterion (`cargo bench -p ccbench-sim`): the same scenarios with confidence intervals,
   summarised from target/criterion.
3. The sweep benchmark (benchmarks/sweep/sweep_bench.py): a 420-run study the size of seed 002.
4. The kernel link emulator's throughput (benchmarks/kernel_link/kernel_link_bench.py), when run
   as root.
5. Scale of one run (benchmarks/scale/scale_bench.py): `ccbench run --out` of 100 000 flows against
   its simulation time.
6. The simulator against ns-3 (benchmarks/ns3/ns3_bench.py): scenarios (a) and (b) on
   the sim and ns3 backends in one go, with the wall-time ratio; skipped when the ns3 backend
   is not installed (`make ns3`). (b) costs minutes of ns-3 CPU: `--ns3-scenarios a` leaves it out.

Each part writes its own section file (benchmarks/TOPIC/RESULTS.md, beside its script); this
script joins them into benchmarks/simulator/RESULTS.md, beside itself, with the command, commit,
machine and date.

    .venv/bin/python benchmarks/simulator/run_all.py [--quick] [--skip-criterion] [--skip-sweep]
        [--skip-kernel] [--skip-scale] [--skip-ns3] [--ns3-scenarios a,b]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH / "common"))
from bench_machine import cpu_model, git_commit  # noqa: E402

NS3_REFERENCE_PPS = (20_000, 30_000)
EVENTS_NOTE = (
    "Events are coarser than in a simulator with transmission-done events: the FIFO bottleneck computes a "
    "packet's departure on arrival, so a data packet and its share of ACKs cost about 1.5 events instead of "
    "4–5; events/s therefore understates the work done, and data packets/s is the figure to compare."
)


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True, **kw)


def machine() -> dict:
    return {
        "commit": git_commit(),
        "nproc": os.cpu_count(),
        "cpu": cpu_model(),
        "kernel": platform.release(),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def sim_whole_runs(reps: int) -> str:
    build = sh(["cargo", "build", "--release", "-q", "-p", "ccbench-sim", "--example", "bench_run"])
    if build.returncode:
        raise SystemExit(f"cargo build failed:\n{build.stderr}")
    out = sh([str(ROOT / "target/release/examples/bench_run"), str(reps)])
    if out.returncode:
        raise SystemExit(f"bench_run failed:\n{out.stderr}")
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    lo, hi = NS3_REFERENCE_PPS
    lines = [
        "## Simulator: whole runs, one core",
        "",
        f"Command: `target/release/examples/bench_run {reps}` (best of {reps} runs each).",
        "",
        "| scenario | wall s | events | events/s | data packets | data packets/s | × ns-3 (20–30 k pkt/s) "
        "| link util. |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        pps = r["data_packets_per_s"]
        lines.append(
            f"| {r['description']} | {r['wall_s']:.3f} | {r['events']:,} | {r['events_per_s'] / 1e6:.2f} M "
            f"| {r['data_packets']:,} | {pps / 1e6:.2f} M | {pps / hi:.0f}–{pps / lo:.0f}× | {r['utilisation']:.3f} |"
        )
    lines += [
        "",
        "Targets: ≥ 2 M data packets/s on one core and scenario (b) in under 0.6 s. "
        "ns-3 was not run in this part: the ratio uses a reference figure for ns-3 on this machine "
        "(20–30 k data packets/s; the ns-3 section, when present, measures it).",
        "",
        EVENTS_NOTE,
        "",
    ]
    return "\n".join(lines)


def criterion_summary() -> str:
    out = sh(["cargo", "bench", "-p", "ccbench-sim", "--bench", "sim", "--", "--noplot"])
    if out.returncode:
        return f"## Criterion\n\n`cargo bench` failed:\n\n```\n{out.stderr[-2000:]}\n```\n"
    lines = [
        "## Simulator: criterion",
        "",
        "Command: `cargo bench -p ccbench-sim --bench sim -- --noplot`",
        "",
        "| benchmark | mean wall s | 95 % CI | throughput (data packets/s) |",
        "|---|---:|---:|---:|",
    ]
    base = ROOT / "target/criterion/sim_run"
    for est in sorted(base.glob("*/new/estimates.json")):
        name = est.parent.parent.name
        e = json.loads(est.read_text())["mean"]
        bench = json.loads((est.parent / "benchmark.json").read_text())
        elems = (bench.get("throughput") or {}).get("Elements")
        mean_s = e["point_estimate"] / 1e9
        ci = f"{e['confidence_interval']['lower_bound'] / 1e9:.3f}–{e['confidence_interval']['upper_bound'] / 1e9:.3f}"
        tput = f"{elems / mean_s / 1e6:.2f} M" if elems else "—"
        lines.append(f"| {name} | {mean_s:.3f} | {ci} | {tput} |")
    return "\n".join(lines) + "\n"


def run_part(script: str, args: list[str], section_file: str | None) -> str:
    """Run one benchmark script; its section is the file it writes, or else its stdout."""
    out = sh([sys.executable, str(BENCH / script), *args])
    if out.returncode:
        return f"## {script}\n\nfailed (exit {out.returncode}):\n\n```\n{(out.stderr or out.stdout)[-2000:]}\n```\n"
    if section_file is None:
        return f"## Kernel link emulator\n\nCommand: `.venv/bin/python benchmarks/{script}`\n\n{out.stdout}"
    return (BENCH / section_file).read_text()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and a smaller sweep")
    ap.add_argument("--skip-criterion", action="store_true")
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--skip-kernel", action="store_true")
    ap.add_argument("--skip-scale", action="store_true")
    ap.add_argument("--skip-ns3", action="store_true")
    ap.add_argument("--ns3-scenarios", default="a,b", help="scenarios of benchmarks/ns3/ns3_bench.py to run")
    a = ap.parse_args()
    m = machine()
    parts = [
        "# ccbench benchmark results",
        "",
        f"Produced by `make bench` (`.venv/bin/python benchmarks/simulator/run_all.py{' --quick' if a.quick else ''}`) "
        f"at commit {m['commit']}, {m['date']}.",
        f"Machine: {m['nproc']} cores, {m['cpu']}, Linux {m['kernel']}, load average at start {m['load']}.",
        "",
        sim_whole_runs(3 if a.quick else 7),
    ]
    if not a.skip_criterion:
        parts.append(criterion_summary())
    if not a.skip_sweep and (BENCH / "sweep/sweep_bench.py").exists():
        args = ["--repeats", "4"] if a.quick else []
        parts.append(run_part("sweep/sweep_bench.py", args, "sweep/RESULTS.md"))
    if not a.skip_kernel and (BENCH / "kernel_link/kernel_link_bench.py").exists():
        if os.geteuid() == 0:
            parts.append(run_part("kernel_link/kernel_link_bench.py", [], None))
        else:
            parts.append("## Kernel link emulator\n\nskipped: needs root.\n")
    if not a.skip_scale and (BENCH / "scale/scale_bench.py").exists():
        parts.append(run_part("scale/scale_bench.py", ["--repeats", "1" if a.quick else "3"], "scale/RESULTS.md"))
    if not a.skip_ns3 and (BENCH / "ns3/ns3_bench.py").exists():
        from ccbench.backends import BackendUnavailable, get_backend

        try:
            why = get_backend("ns3")._problem()
        except BackendUnavailable as e:
            why = e.reason
        if why:
            parts.append(f"## Simulator against ns-3\n\nskipped: {why} (`make ns3`).\n")
        else:
            args = ["--scenarios", a.ns3_scenarios] + (["--repeats", "1"] if a.quick else [])
            parts.append(run_part("ns3/ns3_bench.py", args, "ns3/RESULTS.md"))
    text = "\n".join(parts)
    Path(__file__).with_name("RESULTS.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
