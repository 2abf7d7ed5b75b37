"""Queueing delay seen by each transmission, shared by the buffer and loss estimators.

Each first transmission that got an RTT sample carries its own queueing delay (sample - min);
a transmission without one (retransmitted, or lost) takes the nearest earlier one's, which is
the queue its neighbour sent just before found.
"""

from __future__ import annotations

import numpy as np

from .timeline import Timeline

__all__ = ["queue_at_send"]


def queue_at_send(tl: Timeline, min_rtt: float) -> np.ndarray:
    """Queueing delay (s) found by each transmission in ``tl.tx_t``."""
    order = np.argsort(tl.rtt_sent, kind="stable")
    sent = tl.rtt_sent[order]
    q = tl.rtt_s[order] - min_rtt
    i = np.searchsorted(sent, tl.tx_t, side="right") - 1
    out = np.where(i >= 0, q[np.clip(i, 0, None)], 0.0)
    return out
