"""Reordering and delay jitter from the ACK stream.

A hole in the receiver's data that fills without a retransmission was a segment overtaken by
later ones: the time the hole stayed open, seen at the sender between the first SACK above it
and the ACK that covered it, is the extra delay that segment had over the one that overtook it
minus their send spacing. With netem-like uniform jitter of ±J on the data path two segments
differ by at most 2J, and back-to-back segments are one serialisation time ``ser`` apart, so
the longest hole approaches 2J - ser: J = (longest hole + ser) / 2. D-SACKs of bytes never
retransmitted are duplicates made by the network; D-SACKs of retransmitted bytes show a
retransmission was spurious (RFC 2883 §4), usually reordering beyond the dupack threshold.
"""

from __future__ import annotations

import numpy as np

from .estimate import Estimate
from .timeline import Timeline

__all__ = ["jitter"]

#: Fewer reordered segments than this: too few to call the link reordering.
MIN_REORDERED = 5


def jitter(tl: Timeline, ser_s: float) -> Estimate:
    holes = tl.reorder_hole_s
    n = len(holes)
    segs = len(tl.seg_start)
    if n < MIN_REORDERED:
        return Estimate(
            "jitter",
            0.0,
            0.0,
            None,
            "s",
            f"{n} of {segs} segments arrived out of order (fills without retransmission), "
            f"{tl.dsacks} D-SACKs: no reordering seen (jitter without reordering is not visible here)",
        )
    longest = float(np.max(holes))
    j = (longest + ser_s) / 2
    # Lower bound: the 99th percentile hole; upper: the longest plus a whole second segment time.
    lo = (float(np.quantile(holes, 0.99)) + ser_s) / 2
    return Estimate(
        "jitter",
        j,
        min(lo, j),
        j + ser_s / 2,
        "s",
        f"{n} of {segs} segments ({100 * n / segs:.2f} %) filled their hole without retransmission, "
        f"longest open {longest * 1e3:.2f} ms (p50 {np.median(holes) * 1e3:.2f} ms); "
        f"{tl.dsacks} D-SACKs; uniform ±J assumed: J = (longest + serialisation) / 2",
    )
