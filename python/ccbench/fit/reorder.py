"""Reordering and delay jitter from the ACK stream.

A hole in the receiver's data that fills without a retransmission was a segment overtaken by
later ones: the time the hole stayed open, seen at the sender between the first SACK above it
and the ACK that covered it, is the extra delay that segment had over the one that overtook it
minus their send spacing. With netem-like uniform jitter of ±J on the data path two segments
differ by at most 2J, and back-to-back segments are one serialisation time ``ser`` apart, so
the longest hole approaches 2J - ser: J = (longest hole + ser) / 2. A few holes can be seen
open longer than the network kept them: on Linux the receiver compresses its SACKs once three
duplicate ACKs went out for the same rcv_nxt (``__tcp_ack_snd_check``, tcp_comp_sack_nr and
tcp_comp_sack_delay_ns, net/ipv4/tcp_input.c in 6.18) and an ACK carries at most four SACK
blocks, so an arrival may be reported only by a later ACK; a host or emulator stall delays the
ACK that closes a hole likewise. With enough holes the endpoint is therefore also extrapolated
from two upper quantiles, which a handful of such holes cannot move, and the smaller of the two
is taken. D-SACKs of bytes never
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
#: With at least this many holes the endpoint is also extrapolated from the tail quantiles.
TAIL_MIN_HOLES = 400
#: The two upper tail probabilities of that extrapolation (ratio 4).
TAIL_P = (0.02, 0.005)


def hole_endpoint(holes: np.ndarray) -> tuple[float, str]:
    """The largest hole the jitter can make: the longest seen or, with TAIL_MIN_HOLES holes,
    the tail's extrapolation if smaller. The difference of two uniform delays has a density
    falling linearly to zero at its endpoint e, so P(hole > e - t) grows as t²: the holes
    exceeded with probabilities 2 % and 0.5 % (a ratio of 4) lie t and t/2 below e, and
    e = 2 q(99.5 %) - q(98 %)."""
    longest = float(np.max(holes))
    if len(holes) < TAIL_MIN_HOLES:
        return longest, f"longest open {longest * 1e3:.2f} ms"
    q_lo, q_hi = np.quantile(holes, [1 - TAIL_P[0], 1 - TAIL_P[1]])
    tail = float(2 * q_hi - q_lo)
    how = f"longest open {longest * 1e3:.2f} ms, tail extrapolation 2 p99.5 - p98 = {tail * 1e3:.2f} ms"
    return min(longest, tail), how


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
    end, how = hole_endpoint(holes)
    j = (end + ser_s) / 2
    # Lower bound: the 99th percentile hole; upper: the longest plus a whole second segment time.
    lo = (float(np.quantile(holes, 0.99)) + ser_s) / 2
    return Estimate(
        "jitter",
        j,
        min(lo, j),
        j + ser_s / 2,
        "s",
        f"{n} of {segs} segments ({100 * n / segs:.2f} %) filled their hole without retransmission, "
        f"{how} (p50 {np.median(holes) * 1e3:.2f} ms); "
        f"{tl.dsacks} D-SACKs; uniform ±J assumed: J = (endpoint + serialisation) / 2",
    )
