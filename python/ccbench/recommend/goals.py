"""What recommend optimises: the goals, the score of one run under each, and who is eligible.

* ``throughput``: goodput of the user's flows (Mbit/s);
* ``latency``: minus the p95 RTT the user's flows see (ms), among the candidates that get at
  least half the best goodput (an algorithm that hardly sends has a short queue);
* ``balanced``: utilisation / (p95 RTT / base RTT): 1 = the whole link with no queueing delay;
* ``fairness``: Jain's index over every flow's goodput (the user's and the competing ones).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import numpy as np

GOALS = ("throughput", "latency", "balanced", "fairness")
GOAL_TEXT = {
    "throughput": "throughput (goodput of your flows, higher is better)",
    "latency": "latency (p95 RTT under load, lower is better; "
    "candidates with less than half the best goodput are not eligible)",
    "balanced": "balanced (utilisation / (p95 RTT / base RTT), higher is better)",
    "fairness": "fairness (Jain's index over your flows and the competing ones, higher is better)",
}
#: latency goal: a candidate below this fraction of the best goodput is not eligible
LATENCY_MIN_GOODPUT = 0.5


def goal_score(goal: str, m: Mapping[str, Any]) -> Optional[float]:
    """The goal metric of one run, oriented so that higher is better."""
    if not m.get("ok"):
        return None
    if goal == "throughput":
        return m["goodput_bps"] / 1e6
    if goal == "latency":
        return -m["p95_ms"] if m.get("p95_ms") is not None else None
    if goal == "balanced":
        if not m.get("p95_ms"):
            return None
        return (m["goodput_bps"] / m["rate_bps"]) / (m["p95_ms"] / m["base_rtt_ms"])
    if goal == "fairness":
        return m.get("jain")
    raise ValueError(f"unknown goal {goal!r}")


def eligible(goal: str, cands: list[str], goodputs: Callable[[str], list[float]]) -> list[str]:
    """The candidates ranked for ``goal``: all of them, except for ``latency``, where those with
    less than LATENCY_MIN_GOODPUT of the best mean goodput are left out."""
    if goal != "latency":
        return list(cands)
    gp = {c: (float(np.mean(v)) if (v := goodputs(c)) else 0.0) for c in cands}
    best = max(gp.values()) if gp else 0.0
    return [c for c in cands if gp[c] >= LATENCY_MIN_GOODPUT * best]
