"""sim vs kernel, cell by cell, on one axis of the `make demo` scenario (studies/demo-loss.toml:
one flow per run, 50 Mbit/s, 50 ms RTT, 1 BDP drop-tail buffer). By default the axis is the demo's
loss grid (Bernoulli loss 0 / 0.1 / 1 / 5 %); `--axis bottleneck.jitter --values 0ms,8ms,12ms,16ms`
compares under jitter instead (seed study 002). With `--repeats N` each cell runs N seeds on both
backends and the table shows the mean (and range) of goodput. Writes benchmarks/kernel_compare/RESULTS.md
(or --out).

    sudo .venv/bin/python benchmarks/kernel_compare/kernel_compare.py [--duration 30s] [--algorithms cubic,reno,bbr]
    sudo .venv/bin/python benchmarks/kernel_compare/kernel_compare.py --axis bottleneck.jitter \
        --values 0ms,8ms,12ms,16ms --algorithms cubic,bbr --repeats 2 --duration 20s \
        --out benchmarks/kernel_compare/RESULTS-jitter.md
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks" / "common"))  # bench_machine

from bench_machine import cpu_model, git_commit  # noqa: E402

from ccbench.backends import kernel, sim  # noqa: E402
from ccbench.demo import STUDY  # noqa: E402
from ccbench.scenario.model import load_scenario  # noqa: E402


def cell(backend, axis: str, value: str, cc: str, duration: str | None, seed: int = 1) -> dict:
    ov = {axis: value, "flows.0.cc": cc, "seed": seed}
    if axis != "bottleneck.loss":
        ov["bottleneck.loss"] = "0%"
    if duration:
        ov["duration"] = duration
    sc = load_scenario(STUDY, ov)
    t = time.perf_counter()
    try:
        backend.check(sc)
        res = backend.run(sc)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
    if not res.ok or not res.flows_table.num_rows:
        return {"error": res.error}
    f = res.flows_table.to_pylist()[0]
    r = res.runs_table.to_pylist()[0]
    return {
        "goodput": f["goodput_bps"],
        "retx": f["retransmits"],
        "rtt": f["rtt_mean_ms"],
        "events": f["loss_events"],
        "losses": r["random_losses"],
        "wall": time.perf_counter() - t,
    }


def fmt_mbit(x):
    return "–" if x is None else f"{x / 1e6:.2f}"


def repeated(backend, axis, value, cc, duration, repeats) -> dict:
    """Mean over `repeats` seeds (goodput range kept for the table)."""
    runs = [cell(backend, axis, value, cc, duration, seed=1 + i) for i in range(repeats)]
    ok = [r for r in runs if not r.get("error")]
    if not ok:
        return runs[0]
    out = {k: sum(r[k] for r in ok if r.get(k) is not None) / len(ok) for k in ("goodput", "retx", "rtt")}
    out["min"] = min(r["goodput"] for r in ok)
    out["max"] = max(r["goodput"] for r in ok)
    out["n"] = len(ok)
    return out


def fmt_cell(d: dict) -> str:
    if d.get("error"):
        return "n/a: " + d["error"][:60]
    g = fmt_mbit(d.get("goodput"))
    if d.get("n", 1) > 1:
        g += f" ({d['min'] / 1e6:.1f}–{d['max'] / 1e6:.1f})"
    return g


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default=None, help="override the study's duration (default: the study's 30s)")
    ap.add_argument("--algorithms", default="cubic,reno,bbr")
    ap.add_argument("--axis", default="bottleneck.loss", help="scenario key to vary (default: the loss grid)")
    ap.add_argument("--values", default=None, help="comma-separated values (default: the demo's loss grid)")
    ap.add_argument("--repeats", type=int, default=1, help="seeds per cell on each backend")
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    a = ap.parse_args()
    sc0 = load_scenario(STUDY)
    if a.values:
        losses = a.values.split(",")
    else:
        losses = list((sc0.sweep or {}).get("bottleneck.loss", ["0%"]))
    algs = a.algorithms.split(",")
    sim_algs = {x["name"] for x in sim.algorithms()}
    rows = []
    for loss in losses:
        for cc in algs:
            s = (
                repeated(sim, a.axis, loss, cc, a.duration, a.repeats)
                if cc in sim_algs
                else {"error": "not in the simulator"}
            )
            k = repeated(kernel, a.axis, loss, cc, a.duration, a.repeats)
            rows.append((loss, cc, s, k))
            print(
                loss,
                cc,
                "sim",
                fmt_mbit(s.get("goodput")),
                "kernel",
                fmt_mbit(k.get("goodput")),
                s.get("error") or "",
                k.get("error") or "",
                file=sys.stderr,
                flush=True,
            )
    commit, cpu = git_commit(), cpu_model()
    cmd = "sudo .venv/bin/python benchmarks/kernel_compare/kernel_compare.py" + "".join(f" {x}" for x in sys.argv[1:])
    dur = a.duration or f"{sc0.duration_s:g}s"
    lines = [
        f"# sim vs kernel over `{a.axis}`",
        "",
        f"Scenario: `python/ccbench/study/studies/demo-loss.toml` — one flow, 50 Mbit/s, 50 ms RTT, 1 BDP drop-tail "
        f"buffer, `{a.axis}` as in the first column (loss 0 % unless that is the axis), {dur} per run, "
        f"{a.repeats} seed(s) per cell (mean, and the range when more than one). Goodput in Mbit/s "
        f"(ideal ceiling 50 × 1448/1500 = 48.27). Kernel: Linux TCP through ccbench-link (iperf3 receiver "
        f"goodput); sim: the embedded simulator.",
        "",
        f"- command: `{cmd}`",
        f"- commit: {commit}",
        f"- machine: {os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        f"| {a.axis.split('.')[-1]} | cc | sim goodput | kernel goodput | kernel / sim | sim retransmits "
        "| kernel retransmits | "
        "sim RTT mean ms | kernel RTT mean ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for loss, cc, s, k in rows:
        ratio = f"{k['goodput'] / s['goodput']:.2f}" if s.get("goodput") and k.get("goodput") else "–"

        def g(d, key, f="{:.0f}"):
            v = d.get(key)
            return "–" if v is None else f.format(v)

        lines.append(
            f"| {loss} | {cc} | {fmt_cell(s)} | {fmt_cell(k)} | {ratio} | "
            f"{g(s, 'retx')} | {g(k, 'retx')} | {g(s, 'rtt', '{:.1f}')} | {g(k, 'rtt', '{:.1f}')} |"
        )
    lines += [
        "",
        "Kernel RTT is the sender's smoothed RTT (tcpi_rtt) sampled every 10 ms; "
        "sim RTT as the simulator defines it (see docs).",
    ]
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
