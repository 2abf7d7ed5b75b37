"""How much CPU the hypervisor took from this machine during a run.

On a virtual machine the host can deschedule a virtual CPU (``steal`` in /proc/stat, in
USER_HZ ticks summed over the CPUs). While it does, nothing in the guest runs: the emulator
releases the packets that fell due late, and the kernel's TCP sees delay that the scenario did
not ask for. Measured on the 2-vCPU VM this project is developed on, 50 Mbit/s, 50 ms, one CUBIC
flow, 10 s: steal 0.2 % of CPU time gave the emulator a p99 lateness of 71 µs; 2.5 % gave 1.5 ms
and 10 % gave 2.8-4.3 ms (benchmarks/host_steal/RESULTS.md). A run records the share so that
a reader can tell a faithful kernel run from one the host disturbed (results/timing.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

PROC_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class CpuTimes:
    """The aggregate ``cpu`` line of /proc/stat: all time and the part stolen, in ticks."""

    total: int
    steal: int


def read_cpu_times(path: Path = PROC_STAT) -> Optional[CpuTimes]:
    """None where the file is missing or has no steal field (kernels before 2.6.11)."""
    try:
        with open(path) as f:
            first = f.readline().split()
    except OSError:
        return None
    if not first or first[0] != "cpu" or len(first) < 9:
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
    # counted in user and nice, so the total stops at steal
    ticks = [int(x) for x in first[1:9]]
    return CpuTimes(total=sum(ticks), steal=ticks[7])


def steal_pct(before: Optional[CpuTimes], after: Optional[CpuTimes]) -> Optional[float]:
    """Percent of all CPU time between two readings that the host took (None if unknown)."""
    if before is None or after is None or after.total <= before.total:
        return None
    return 100.0 * (after.steal - before.steal) / (after.total - before.total)
