"""How the hypervisor's CPU steal during a kernel run relates to ccbench-link's timing error.

Runs one CUBIC flow at 50 Mbit/s, 50 ms, 1 BDP for 10 s on the kernel backend N times and prints
each run's runs.host_steal_pct and runs.emulator_late_p99_us (and each direction's p99 and max
lateness from the link's report). Needs root, as the kernel backend does.

    .venv/bin/python benchmarks/host_steal/steal_vs_lateness.py 8
"""

from __future__ import annotations

import sys

from ccbench.backends import kernel
from ccbench.scenario.model import Scenario

SCENARIO = {
    "duration": "10s",
    "seed": 1,
    "start_jitter": "0s",
    "probe": {"ping": "200ms"},
    "bottleneck": {"rate": "50Mbit", "rtt": "50ms", "buffer": "1bdp"},
    "flows": [{"cc": "cubic"}],
}


def main(n: int) -> None:
    sc = Scenario.from_dict(SCENARIO, source="steal_vs_lateness")
    print("| host steal % | emulator p99 late µs | data p99 / max µs | ack p99 / max µs |")
    print("|---|---|---|---|")
    for _ in range(n):
        keep: dict = {}
        row = kernel.run(sc, keep=keep).runs.iloc[0]
        d = [(x["lateness_us"]["p99"], round(x["lateness_us"]["max"])) for x in keep["link"]["directions"]]
        print(
            f"| {row.host_steal_pct:.1f} | {row.emulator_late_p99_us:.0f} | {d[0][0]:.0f} / {d[0][1]} "
            f"| {d[1][0]:.0f} / {d[1][1]} |",
            flush=True,
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
