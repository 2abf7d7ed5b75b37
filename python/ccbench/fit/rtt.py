"""Base RTT: the propagation round trip, from the smallest RTT sample.

Samples follow Karn's rule (timeline.py). The smallest sample still holds the data segment's
own serialisation at the bottleneck (``ser``) and, with jitter ±J on the path, is J early, so
base = min - ser + J. The RTT distribution is reported as evidence.
"""

from __future__ import annotations

import numpy as np

from .estimate import Estimate
from .timeline import Timeline

__all__ = ["min_rtt_s", "base_rtt"]


def min_rtt_s(tl: Timeline) -> float:
    return float(np.min(tl.rtt_s))


def base_rtt(tl: Timeline, ser_s: float, jitter: Estimate) -> Estimate:
    r = tl.rtt_s
    m = float(np.min(r))
    j = jitter.value or 0.0
    est = max(m - ser_s + j, 0.0)
    # The smallest sample may have found one packet queued ahead of it (another ser), and the
    # jitter's own interval carries over.
    lo = max(m - 2 * ser_s + (jitter.lo or 0.0), 0.0)
    hi = m + (jitter.hi if jitter.hi is not None else j)
    q = np.percentile(r, [5, 50, 95, 99])
    return Estimate.around(
        "rtt",
        est,
        lo,
        hi,
        "s",
        f"min of {len(r)} RTT samples (Karn) {m * 1e3:.2f} ms - serialisation {ser_s * 1e3:.3f} ms "
        f"+ jitter {j * 1e3:.2f} ms; RTT p5/p50/p95/p99 " + "/".join(f"{x * 1e3:.1f}" for x in q) + " ms",
    )
