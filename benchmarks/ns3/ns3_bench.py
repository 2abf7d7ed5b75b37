#!/usr/bin/env python3
"""The simulator against ns-3 3.44 on the same scenarios, side by side, written to
benchmarks/ns3/RESULTS.md:

  (a) 1 CUBIC flow, 10 Mbit/s, 100 ms RTT, 1 BDP drop-tail, 60 s;
  (b) 10 CUBIC + 10 BBR flows, 1 Gbit/s, 1 ms RTT, 1 BDP drop-tail, 10 s.

Each scenario runs through ``ccbench.backends.run`` on ``sim`` and on ``ns3`` in this process
(the ns-3 program is compiled before timing). Reported per backend: the whole call (scenario to
tables) and the engine alone (``runs.wall_time_s``: the simulator's run, or the ns-3 program's
process), the best of the repeats; the ratio is ns-3 / sim. Target: the simulator ≥ 100 × faster.

    .venv/bin/python benchmarks/ns3/ns3_bench.py [--scenarios a,b] [--repeats 3] [--ns3-repeats 1]

(b) takes minutes of CPU on ns-3: on a shared machine run ``--scenarios a`` and (b) alone later.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "common"))  # bench_machine
from bench_machine import cpu_model, git_commit  # noqa: E402

from ccbench import backends  # noqa: E402
from ccbench.scenario.model import Scenario  # noqa: E402

SCENARIOS = {
    "a": (
        "(a) 1 CUBIC, 10 Mbit/s, 100 ms, 1 BDP, 60 s",
        {
            "name": "ns3-bench-a",
            "duration": "60s",
            "seed": 1,
            "bottleneck": {"rate": "10Mbit", "rtt": "100ms", "buffer": "1bdp"},
            "flows": [{"cc": "cubic"}],
        },
    ),
    "b": (
        "(b) 10 CUBIC + 10 BBR, 1 Gbit/s, 1 ms, 1 BDP, 10 s",
        {
            "name": "ns3-bench-b",
            "duration": "10s",
            "seed": 1,
            "bottleneck": {"rate": "1Gbit", "rtt": "1ms", "buffer": "1bdp"},
            "flows": [{"cc": "cubic", "count": 10}, {"cc": "bbr", "count": 10}],
        },
    ),
}


def timed(sc: Scenario, backend: str, repeats: int) -> dict:
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = backends.run(sc, backend)
        call = time.perf_counter() - t0
        if not res.ok:
            raise SystemExit(f"{backend} failed on {sc.name}: {res.error}")
        run = res.runs.iloc[0]
        row = {
            "call_s": call,
            "engine_s": float(run["wall_time_s"]),
            "goodput_mbps": float(run["aggregate_goodput_bps"]) / 1e6,
            "util": float(run["link_utilisation"]) if run["link_utilisation"] == run["link_utilisation"] else None,
        }
        if best is None or row["call_s"] < best["call_s"]:
            best = row
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", default="a,b", help="comma-separated: a, b")
    ap.add_argument("--repeats", type=int, default=3, help="simulator runs per scenario (best of)")
    ap.add_argument("--ns3-repeats", type=int, default=1, help="ns-3 runs per scenario (best of)")
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    a = ap.parse_args()
    ns3 = backends.get_backend("ns3")
    ns3.binary()  # compile outside the timing
    keys = [k.strip() for k in a.scenarios.split(",") if k.strip()]
    rows = []
    for k in keys:
        title, d = SCENARIOS[k]
        sc = Scenario.from_dict(d)
        sim = timed(sc, "sim", a.repeats)
        n3 = timed(sc, "ns3", a.ns3_repeats)
        rows.append((title, sim, n3))
        print(
            f"{title}: sim {sim['call_s']:.3f} s, ns-3 {n3['call_s']:.2f} s, × {n3['call_s'] / sim['call_s']:.0f}",
            file=sys.stderr,
        )
    cmd = "benchmarks/ns3/ns3_bench.py" + ("" if keys == ["a", "b"] else f" --scenarios {','.join(keys)}")
    import os
    import platform

    lines = [
        "## Simulator against ns-3 (same scenarios, one process)",
        "",
        f"Command: `.venv/bin/python {cmd} --repeats {a.repeats} --ns3-repeats {a.ns3_repeats}` at commit "
        f"{git_commit()}; {os.cpu_count()} cores, {cpu_model()}, Linux {platform.release()}, load at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}.",
        "",
        "Whole call = `ccbench.backends.run(scenario, backend)`, scenario to tables; engine = `runs.wall_time_s` "
        "(the simulator's run; the ns-3 program's process, built beforehand). Best of the repeats.",
        "",
        "| scenario | sim call s | sim engine s | ns-3 call s | ns-3 engine s | ns-3 / sim (call) "
        "| ns-3 / sim (engine) "
        "| goodput sim / ns-3 Mbit/s | utilisation sim / ns-3 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for title, s, n in rows:
        u = f"{s['util']:.3f} / {n['util']:.3f}" if s["util"] is not None and n["util"] is not None else "–"
        lines.append(
            f"| {title} | {s['call_s']:.3f} | {s['engine_s']:.3f} | {n['call_s']:.2f} | {n['engine_s']:.2f} "
            f"| {n['call_s'] / s['call_s']:.0f}× | {n['engine_s'] / s['engine_s']:.0f}× "
            f"| {s['goodput_mbps']:.2f} / {n['goodput_mbps']:.2f} | {u} |"
        )
    lines += ["", "Target: the simulator at least 100 × faster than ns-3 on both scenarios.", ""]
    text = "\n".join(lines)
    Path(a.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
