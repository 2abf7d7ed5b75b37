"""Seed 003 scaled down to what the kernel backend carries, on both backends: 10 CUBIC + 10 BBR
flows at 200 Mbit/s, 1 ms RTT, 200-packet drop-tail buffer (the 17-packet BDP and 12 ms of
buffer of the seed's 1 GbE, 200 µs, 1000 packets), 100 s.

The kernel backend starts its iperf3 clients up to ~0.3 s apart, where the scenario starts every
flow within `start_jitter`; BBR's ProbeRTT timing follows the start times, so the simulator runs
the same scenario with each flow started at the kernel run's realised start (three seeds). Per
run: each group's goodput, the CUBIC group's dominant period (analysis.dominant_period), 5 s
means of both groups, and the sender's retransmissions, loss probes and RTOs. Writes
benchmarks/coexistence_200mbit/RESULTS.md. Needs root (the kernel backend).

    sudo .venv/bin/python benchmarks/coexistence_200mbit/coexistence_referee.py [--duration 100s] [--seeds 1,2,3]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks" / "common"))  # bench_machine

from bench_machine import cpu_model, git_commit  # noqa: E402

import ccbench  # noqa: E402
from ccbench import analysis  # noqa: E402
from ccbench.scenario.model import Scenario  # noqa: E402

GROUPS = [{"cc": "cubic", "count": 10}, {"cc": "bbr", "count": 10}]
COUNTERS = ("TcpRetransSegs", "TcpExtTCPLossProbes", "TcpExtTCPTimeouts")


def scenario(duration: str, seed: int, starts: list[float] | None = None) -> Scenario:
    d = {
        "name": "coexistence-200m",
        "duration": duration,
        "seed": seed,
        "sample_interval": "100ms",
        "bottleneck": {"rate": "200Mbit", "rtt": "1ms", "buffer": "200pkt"},
        "flows": GROUPS,
    }
    if starts is not None:  # one group per flow, at the kernel's start
        flows = [{"cc": g["cc"]} for g in GROUPS for _ in range(g["count"])]
        t0 = min(starts)
        for f, s in zip(flows, starts):
            f["start"] = f"{(s - t0) * 1e6:.0f}us"
        d.update(flows=flows, start_jitter="0s")
    return Scenario.from_dict(d, source="coexistence_referee.py")


def summary(label: str, res) -> str:
    s = res.series
    agg = s.groupby(["t_s", "cc"])["goodput_bps"].sum().unstack()
    cubic = agg["cubic"].sort_index()
    t, v = cubic.index.to_numpy(float), cubic.to_numpy(float)
    start = analysis.steady_state_start(t, v)
    keep = t >= (start if start is not None else t[0])
    per = analysis.dominant_period(t[keep], v[keep])
    period = f"{per.period_s:.1f} s" if per.significant else f"none (strongest {per.candidate_period_s:.1f} s)"
    g = res.flows.groupby("cc")["goodput_bps"].sum() / 1e6
    c = res.counters.set_index("side").loc["sender"]
    blocks = agg.groupby((agg.index // 5).astype(int)).mean() / 1e6
    five = " ".join(f"{a:.0f}/{b:.0f}" for a, b in zip(blocks["cubic"], blocks["bbr"]))
    counts = " | ".join(f"{int(c[k])}" for k in COUNTERS)
    return f"| {label} | {g['cubic']:.1f} | {g['bbr']:.1f} | {period} | {counts} | {five} |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default="100s")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    a = ap.parse_args()
    k = ccbench.run(scenario(a.duration, 1), backend="kernel")
    if not k.ok:
        raise SystemExit(f"kernel run failed: {k.error}")
    starts = [float(x) for x in k.flows.sort_values("flow_id")["start_s"]]
    rows = [summary("kernel, seed 1", k)]
    print(rows[-1], flush=True)
    for seed in (int(x) for x in a.seeds.split(",")):
        rows.append(
            summary(f"simulator, seed {seed}, kernel's starts", ccbench.run(scenario(a.duration, seed, starts)))
        )
        print(rows[-1], flush=True)
    spread = max(starts) - min(starts)
    text = f"""# Seed 003 scaled down: 10 CUBIC + 10 BBR at 200 Mbit/s on both backends

Command: `sudo .venv/bin/python benchmarks/coexistence_200mbit/coexistence_referee.py --duration {a.duration} --seeds {a.seeds}`
Commit {git_commit()}; Linux {platform.release()}; {os.cpu_count()} CPUs ({cpu_model()}).
200 Mbit/s, 1 ms RTT, 200-packet drop-tail FIFO, {a.duration}; the kernel run's flows started over
{spread * 1000:.0f} ms, and the simulator's runs start each flow at the same offsets.

| run | CUBIC Mbit/s | BBR Mbit/s | CUBIC's dominant period | retransmissions | loss probes | RTOs | 5 s means, CUBIC/BBR Mbit/s |
|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

The counters are the sender namespace's (all 20 flows). What the runs show is discussed in
docs/fidelity.md (the referee section, item 5) and docs/studies.md (coexistence-1g).
"""  # noqa: E501 (Markdown table rows and the command stay on one line)
    Path(a.out).write_text(text)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
