"""What the kernel's TCP sender really hands to the device, in the kernel backend's set-up
(docs/fidelity.md, TSO/GSO). The backend switches GSO/TSO off on the sender's TUN, but since Linux 4.19 TCP
always builds GSO skbs (sk_setup_caps) of `tcp_tso_autosize` segments and the stack segments
them in software just before the device. The tracepoint `net:net_dev_queue` sees each skb as
TCP built it (before that segmentation), so its `len` gives the segments per skb.

Runs one flow per algorithm over 50 Mbit/s, 50 ms, 1 BDP (or --rate, --rtt, --buffer) on the kernel
backend while tracing the sender TUN, and writes the distribution of segments per data skb to
benchmarks/kernel_skb_sizes/RESULTS.md, beside this script.
Needs root and tracefs (ccbench.backends.kernel.tracefs: its own instance, a private mount if none is mounted).

    sudo .venv/bin/python benchmarks/kernel_skb_sizes/kernel_skb_sizes.py [--duration 8s] [--algorithms cubic,bbr,reno]
        [--rate 50Mbit --rtt 50ms --buffer 1bdp] [--out FILE]
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks" / "common"))  # bench_machine

from bench_machine import cpu_model, git_commit  # noqa: E402

from ccbench.backends import kernel  # noqa: E402
from ccbench.backends.kernel.topology import TUN_S  # noqa: E402
from ccbench.backends.kernel.tracefs import trace_events  # noqa: E402
from ccbench.scenario.model import Scenario  # noqa: E402

HEADERS = 52  # IP + TCP + timestamp option
MSS = 1448


def trace_run(sc: Scenario) -> collections.Counter:
    with trace_events({"net/net_dev_queue": f'name == "{TUN_S}"'}, buffer_kb=65536) as stop:
        res = kernel.run(sc)
        text = stop()
    if not res.ok:
        raise SystemExit(f"kernel run failed: {res.error}")
    segs: collections.Counter = collections.Counter()
    for m in re.finditer(r"len=(\d+)", text):
        n = int(m.group(1))
        if n > HEADERS + 100:  # data, not pure ACKs of the control connection
            segs[-(-(n - HEADERS) // MSS)] += 1
    return segs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default="8s")
    ap.add_argument("--algorithms", default="cubic,bbr,reno")
    ap.add_argument("--rate", default="50Mbit")
    ap.add_argument("--rtt", default="50ms")
    ap.add_argument("--buffer", default="1bdp")
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    a = ap.parse_args()
    rows = []
    for cc in a.algorithms.split(","):
        sc = Scenario.from_dict(
            {
                "name": "skb-sizes",
                "duration": a.duration,
                "seed": 1,
                "bottleneck": {"rate": a.rate, "rtt": a.rtt, "buffer": a.buffer},
                "flows": [{"cc": cc}],
            },
            source="kernel_skb_sizes.py",
        )
        segs = trace_run(sc)
        skbs = sum(segs.values())
        total = sum(k * v for k, v in segs.items())
        multi = sum(k * v for k, v in segs.items() if k > 1)
        top = ", ".join(f"{k}: {v}" for k, v in sorted(segs.items())[:12])
        rows.append(
            f"| {cc} | {skbs} | {total} | {total / max(skbs, 1):.2f} | {max(segs) if segs else 0} "
            f"| {100 * multi / max(total, 1):.0f} % | {top} |"
        )
        print(rows[-1], flush=True)
    commit, cpu = git_commit(), cpu_model()
    text = f"""# Segments per skb the kernel's TCP sender builds (kernel backend)

Command: `sudo .venv/bin/python benchmarks/kernel_skb_sizes/kernel_skb_sizes.py --duration {a.duration} --algorithms {a.algorithms} --rate {a.rate} --rtt {a.rtt} --buffer {a.buffer}`
Commit {commit}; Linux {platform.release()}; {os.cpu_count()} CPUs ({cpu}).
One flow, {a.rate}, {a.rtt} RTT, {a.buffer} drop-tail buffer, {a.duration}; tracepoint `net:net_dev_queue`
on the sender TUN `{TUN_S}` (GSO/TSO off on the device), data skbs only.

| cc | data skbs | segments | segments per skb | largest | segments sent in multi-segment skbs | skbs by size (segments: count) |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}

A multi-segment skb is segmented in software right before the TUN, so its segments reach the
emulated bottleneck back to back (a burst). The simulator builds the same skbs
(`tcp_tso_autosize`, `tcp_tso_should_defer`) and, since commit ea41d7b, sends a paced flow's skb as
one burst too (crates/sim/src/tcp/sender/output.rs).
"""  # noqa: E501 (Markdown table rows and the command stay on one line)
    Path(a.out).write_text(text)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
