#!/usr/bin/env python3
"""Scale of the result path: the whole `ccbench run --out` of 100 000 CUBIC
flows for 1 s (10 Gbit/s, 20 ms, 1 BDP) against the time inside the simulator.

Each repeat runs the CLI as a user would (`python -m ccbench.cli run big.toml --out DIR`, a
fresh process) and measures its wall time and peak RSS; the simulation time is the run's
``runs.wall_time_s`` (the simulator call alone). A 1-flow run of the same CLI gives the fixed
cost of starting Python and importing ccbench, which does not grow with the flows.
Target: whole-run overhead (total − simulation) within 20 % of the simulation time.

Prints a markdown section (command, commit, nproc, CPU model) and writes it to
benchmarks/scale/RESULTS.md (run_all.py joins it into benchmarks/simulator/RESULTS.md).

    .venv/bin/python benchmarks/scale/scale_bench.py [--flows 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "common"))
from bench_machine import cpu_model, git_commit  # noqa: E402

TARGET = 0.20

SCENARIO = """name = "scale"
duration = "1s"
[bottleneck]
rate = "{rate}"
rtt = "20ms"
buffer = "1bdp"
[[flows]]
cc = "cubic"
count = {flows}
"""


def run_cli(toml: Path, out: Path) -> dict:
    """One `ccbench run --out` in a fresh process: wall s, peak RSS MB, simulation s."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "ccbench.cli", "run", str(toml), "--out", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{err[-2000:]}")
    runs = pq.read_table(next((out / "runs").glob("*.parquet")))
    return {"total_s": wall, "rss_mb": usage.ru_maxrss / 1024, "sim_s": runs.column("wall_time_s")[0].as_py()}


#: One extra run of the same command through this wrapper gives where the time goes: it wraps
#: the phases of `ccbench run` (python/ccbench/cli/run.py `_run`, backends/sim.py `_report` and
#: `build_result`, cli/run.py `save_run` and `print_result`) with timestamps and reports them at
#: exit (time.perf_counter is CLOCK_MONOTONIC, shared with this process).
_BREAKDOWN_RUNNER = r"""
import atexit, json, os, sys, time
marks = {}
import ccbench.cli as cli
from ccbench.cli import run as cli_run
from ccbench.backends import sim
def timed(mod, name, key):
    f = getattr(mod, name)
    def g(*a, **k):
        marks[key + "<"] = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            marks[key + ">"] = time.perf_counter()
    setattr(mod, name, g)
# build_result is imported by the sim backend after the simulation (ccbench/backends/preload.py): its
# time is the span from the simulator's return to save_run
for mod, name, key in ((cli_run, "_run", "command"), (sim, "_report", "simulator"),
                       (cli_run, "save_run", "parquet"), (cli_run, "print_result", "terminal")):
    timed(mod, name, key)
atexit.register(lambda: os.write(2, ("BREAKDOWN " + json.dumps(marks) + "\n").encode()))
sys.argv = ["ccbench", *sys.argv[1:]]
cli.app()
"""


def breakdown(toml: Path, out: Path) -> dict:
    """Seconds per phase of one instrumented `ccbench run --out` (see _BREAKDOWN_RUNNER)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-c", _BREAKDOWN_RUNNER, "run", str(toml), "--out", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    end = time.perf_counter()
    line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("BREAKDOWN ")), None)
    if proc.returncode or line is None:
        raise SystemExit(f"instrumented run failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    m = json.loads(line.split(" ", 1)[1])
    runs = pq.read_table(next((out / "runs").glob("*.parquet")))
    phases = {
        "start-up (Python, imports)": m["command<"] - t0,
        "scenario (TOML, checks, store check)": m["simulator<"] - m["command<"],
        "simulator call (runs.wall_time_s)": runs.column("wall_time_s")[0].as_py(),
        "handover (header, Arrow views)": m["simulator>"] - m["simulator<"] - runs.column("wall_time_s")[0].as_py(),
        "result tables (build_result)": m["parquet<"] - m["simulator>"],
        "Parquet store (save_run)": m["parquet>"] - m["parquet<"],
        "terminal summary": m["terminal>"] - m["terminal<"],
        "exit (Python shutdown, freeing memory)": end - m["command>"],
    }
    phases["rest (between phases)"] = (end - t0) - sum(phases.values())
    phases["total"] = end - t0
    return phases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--results", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    a = ap.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="ccbench-scale-") as tmp:
        big, small = Path(tmp) / "big.toml", Path(tmp) / "small.toml"
        big.write_text(SCENARIO.format(rate="10Gbit", flows=a.flows))
        small.write_text(SCENARIO.format(rate="10Mbit", flows=1))
        startup = min(run_cli(small, Path(tmp) / f"small{i}")["total_s"] for i in range(2))
        runs = [run_cli(big, Path(tmp) / f"big{i}") for i in range(a.repeats)]
        phases = breakdown(big, Path(tmp) / "breakdown")
    for r in runs:
        r["ratio"] = r["total_s"] / r["sim_s"]
        r["overhead"] = (r["total_s"] - r["sim_s"]) / r["sim_s"]
        r["overhead_no_start"] = (r["total_s"] - startup - r["sim_s"]) / r["sim_s"]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    command = f"ccbench run big.toml --out DIR  (big.toml: 10 Gbit/s, 20 ms, 1 BDP, {a.flows} cubic flows, 1 s)"
    lines = [
        "## Scale: one run of 100 000 flows",
        "",
        f"Command: `python benchmarks/scale/scale_bench.py --flows {a.flows} --repeats {a.repeats}`: "
        f"each repeat runs `{command}` in a fresh process.  ",
        f"Commit: {git_commit()}; {os.cpu_count()} CPUs (nproc), {cpu_model()}; "
        f"Python {sys.version.split()[0]}; load average {load} at start; "
        f"{dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        "",
        "| repeat | simulation s | total s | total / simulation | overhead | overhead without start-up | peak RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, r in enumerate(runs, 1):
        lines.append(
            f"| {i} | {r['sim_s']:.2f} | {r['total_s']:.2f} | {r['ratio']:.2f} | {r['overhead']:.0%} "
            f"| {r['overhead_no_start']:.0%} | {r['rss_mb']:.0f} |"
        )
    lines.append(
        f"| median | {med['sim_s']:.2f} | {med['total_s']:.2f} | {med['ratio']:.2f} | "
        f"**{med['overhead']:.0%}** | {med['overhead_no_start']:.0%} | {med['rss_mb']:.0f} |"
    )
    met = "met" if med["overhead"] <= TARGET else "not met"
    lines += [
        "",
        f"Simulation: `runs.wall_time_s`, the simulator call (building the flows, the run, the columns). "
        f"Overhead: (total − simulation) / simulation. Start-up: a 1-flow run of the same CLI, "
        f"{startup:.2f} s (Python, imports, exit), which does not grow with the flows; the last "
        f"overhead column leaves it out.",
        "",
        "Where the time goes, one more run of the same command with each phase timed "
        "(benchmarks/scale/scale_bench.py `_BREAKDOWN_RUNNER`):",
        "",
        "| phase | s |",
        "|---|---:|",
        *[f"| {k} | {v:.2f} |" for k, v in phases.items()],
        "",
        f"Target: overhead within {TARGET:.0%} of the simulation time — {met}. "
        f"Before the columnar result path (commit a5e1856, `/usr/bin/time -v ccbench run` on this machine) "
        f"the same command took ~90 s and 2.4 GB: JSON out of the simulator, a Python dict per flow and "
        f"a 100 000-row terminal table.",
        "",
    ]
    text = "\n".join(lines)
    a.results.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
