"""Buffer size from the largest queueing delay before loss.

A drop-tail buffer of B bytes at rate C holds a packet at most B * 8 / C seconds, and a flow
that fills it loses packets while the queue is at that delay. So (largest RTT - smallest RTT)
x rate is the buffer, once the jitter's ±J (2J between the largest and the smallest sample) is
taken off. Whether the buffer was filled at all is judged from the losses: transmissions that
found the queue near its largest delay must start loss events (a loss after a delivered
transmission) more often than random loss starts them (Gilbert's p, loss.py: one-sided
binomial test; counting events, not packets, keeps bursty random loss from passing for
overflow). If not, the flow never filled the buffer and only a lower bound is
known.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binomtest

from .estimate import Estimate
from .loss import lost_transmissions
from .timeline import Timeline

__all__ = ["queue_max_s", "fit_buffer"]

#: Transmissions finding at least this fraction of the largest queue delay were at a full queue.
HIGH_QUEUE = 0.8
#: Significance of the "loss is higher at a full queue" test.
FILLED_P = 1e-3
#: The fraction of loss events that must come at a full queue for the buffer to be what limits.
MOSTLY_AT_CAP = 0.5


def queue_max_s(tl: Timeline, min_rtt: float) -> float:
    """Largest queueing delay, robust to a few outliers: the 99.5th percentile."""
    return float(np.percentile(tl.rtt_s, 99.5)) - min_rtt


def fit_buffer(
    tl: Timeline, queue_s: np.ndarray, qmax: float, rate_bps: float, jitter_s: float, random_event: float
) -> Estimate:
    lost = lost_transmissions(tl)
    starts = lost & ~np.concatenate(([False], lost[:-1]))
    high = queue_s >= HIGH_QUEUE * qmax
    n_high, k_high = int(high.sum()), int(starts[high].sum())
    delay = max(qmax - 2 * jitter_s, 0.0)
    most = max(float(np.max(tl.rtt_s)) - float(np.min(tl.rtt_s)), delay)
    to_bytes = rate_bps / 8
    # A loss-limited flow's loss events end its growth, so they come at the top of each cycle
    # whatever drops the packet: the test above alone would take random loss's peaks for
    # overflow. Where the buffer is what limits the flow, most loss events are overflows at its
    # cap; where random loss does, most come lower (closed-loop links: 100 % of the events at a
    # full queue with overflow only, 0-12 % with random loss).
    n_events = int(starts.sum())
    filled = (
        n_high > 0
        and k_high >= 3
        and k_high >= MOSTLY_AT_CAP * n_events
        and binomtest(k_high, n_high, max(random_event, 1e-6), alternative="greater").pvalue < FILLED_P
    )
    ev = (
        f"largest queue delay (p99.5 RTT - min) {qmax * 1e3:.1f} ms - 2 x jitter; "
        f"{k_high} of {n_events} loss events among {n_high} sent at >= {HIGH_QUEUE:.0%} of it vs random "
        f"{random_event * 100:.3f} %"
    )
    if not filled:
        return Estimate(
            "buffer",
            delay * to_bytes,
            delay * to_bytes,
            None,
            "bytes",
            ev + ": the buffer never overflowed, so it is at least this (a lower bound)",
        )
    # The queue found by the transmissions that started the overflow's loss events is the full
    # buffer: where the flow fills it only now and then (light random loss keeps it below), those
    # moments are too few for the 99.5th percentile of all samples, so their median decides.
    at_loss = float(np.median(queue_s[starts & high])) - 2 * jitter_s
    if at_loss > delay:
        delay = at_loss
        ev += f"; the queue at those loss events {at_loss * 1e3:.1f} ms"
    most = max(most, delay)
    lo = max(float(np.percentile(tl.rtt_s, 98)) - float(np.min(tl.rtt_s)) - 2 * jitter_s, 0.0)
    return Estimate(
        "buffer", delay * to_bytes, min(lo, delay) * to_bytes, most * to_bytes, "bytes", ev + ": overflowed"
    )
