"""Whether a run kept the scenario's timing, from the two numbers a kernel run records
(``runs.host_steal_pct``, measured by backends/kernel/hostcpu.py, and
``runs.emulator_late_p99_us``, ccbench-link's p99 release lateness). A run is faithful under
QUIET_HOST_STEAL_PCT of steal with 99 % of packets released within FAITHFUL_LATE_P99_US of their
due time (the emulator's design bound): on the 2-vCPU development VM, 0.2 % steal gave a p99
lateness of 71 µs and 2.5 % gave 1.5 ms (benchmarks/host_steal/RESULTS.md)."""

from __future__ import annotations

import math
from typing import Any, Optional

#: the largest share of the CPU the host may take during a faithful run, percent
QUIET_HOST_STEAL_PCT = 0.5

#: the emulator's design bound on its p99 release lateness, µs
FAITHFUL_LATE_P99_US = 200.0


def _finite(x: Any) -> Optional[float]:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def faithful_timing(host_steal_pct: Any, emulator_late_p99_us: Any) -> Optional[bool]:
    """True when both numbers are within the bounds, False when either is beyond, None when
    neither was recorded (a simulator run, or a kernel without /proc/stat's steal field)."""
    steal, late = _finite(host_steal_pct), _finite(emulator_late_p99_us)
    if steal is None and late is None:
        return None
    return (steal is None or steal < QUIET_HOST_STEAL_PCT) and (late is None or late <= FAITHFUL_LATE_P99_US)
