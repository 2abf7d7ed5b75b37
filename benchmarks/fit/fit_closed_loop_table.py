"""The fit's closed loop on both backends: each link of ccbench.fit.closed_loop.LINKS runs CUBIC
on the simulator and on the kernel backend with `[output] pcap`, the capture is fitted, and
every parameter's set and fitted values are tabulated with the verdict of docs/fit.md's
tolerances. Writes benchmarks/fit/RESULTS.md (the kernel half needs root, tcpdump and
ccbench-link; `--backends sim` runs without them).

    sudo .venv/bin/python benchmarks/fit/fit_closed_loop_table.py
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "common"))
sys.path.insert(0, str(ROOT / "python"))
from bench_machine import cpu_model, git_commit  # noqa: E402

from ccbench.fit.closed_loop import LINKS, fit_link  # noqa: E402
from ccbench.fit.estimate import value_text  # noqa: E402


def _cell(x, unit: str) -> str:
    """A set value, or a fitted Estimate as "value [lo, hi]" (hi ∞ for a lower bound)."""
    if hasattr(x, "value"):
        hi = "∞" if x.hi is None else value_text(x.hi, x.unit)
        return f"{value_text(x.value, x.unit)} [{value_text(x.lo, x.unit)}, {hi}]"
    if isinstance(x, str):
        return x
    return value_text(x, unit)


UNITS = {"rate": "bit/s", "base RTT": "s", "buffer": "bytes", "loss": "fraction", "jitter": "s"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="sim,kernel", help="comma-separated: sim, kernel")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = ap.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    rows, summary = [], []
    with tempfile.TemporaryDirectory(prefix="ccb-fit-") as tmp:
        for name, link in LINKS.items():
            for backend in backends:
                pcap = Path(tmp) / f"{name}-{backend}.pcap"
                try:
                    fit, verdicts, report = fit_link(link, backend, pcap)
                except Exception as e:  # a failed run is a row, not the end of the table
                    rows.append(f"| {name} | {backend} | – | – | – | failed: {type(e).__name__}: {e} |")
                    summary.append((name, backend, None))
                    continue
                late = ""
                if backend == "kernel":
                    r = report.runs.iloc[0]
                    late = f" (emulator p99 late {r.emulator_late_p99_us:.0f} µs, steal {r.host_steal_pct:.1f} %)"
                for j in verdicts:
                    unit = UNITS.get(j.parameter, "")
                    rows.append(
                        f"| {name} | {backend} | {j.parameter} | {_cell(j.truth, unit)} | "
                        f"{_cell(j.fitted, unit)} | {'ok' if j.ok else 'MISS'}{late if j.parameter == 'rate' else ''} |"
                    )
                summary.append((name, backend, all(j.ok for j in verdicts)))
                print(f"{name} {backend}: {'ok' if summary[-1][2] else 'MISS'}", flush=True)
    head = [
        "# `ccbench fit`: set vs fitted, simulator and kernel",
        "",
        f"Commit {git_commit()}, {datetime.date.today()}, `nproc` {os.cpu_count()}, {cpu_model()}.",
        "",
        f"    sudo .venv/bin/python benchmarks/fit/fit_closed_loop_table.py --backends {','.join(backends)}",
        "",
        "CUBIC over each link (python/ccbench/fit/closed_loop.py), captured with `[output] pcap` at the",
        "sender (the simulator's own writer; on the kernel, tcpdump on the sender namespace's TUN with",
        "TSO/GSO off), fitted with `ccbench fit`. Tolerances (docs/fit.md): rate 5 %, base RTT 2 ms,",
        "buffer 25 %, loss 30 % of what the link drew or inside the interval, jitter 1 ms. The set",
        "loss is what the link's loss model drew on the data direction; an interval open above (∞)",
        "is the fit saying the flow could not show the parameter (a lower bound). Kernel runs are",
        "taken once, whatever the host did: each kernel rate row gives the emulator's p99 lateness",
        "and the host's CPU steal during the run (the kernel test repeats a run above 200 µs or",
        "0.5 % and skips the link if it stays disturbed: tests/conftest.py faithful_kernel_run).",
        "",
        "| link | backend | parameter | set | fitted [interval] | verdict |",
        "|---|---|---|---|---|---|",
    ]
    ok = sum(1 for *_, v in summary if v)
    tail = ["", f"{ok} of {len(summary)} link runs within every tolerance."]
    args.out.write_text("\n".join(head + rows + tail) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
