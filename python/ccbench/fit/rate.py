"""Bottleneck rate from the delivery rate the ACKs show.

As Linux 6.18's net/ipv4/tcp_rate.c (``tcp_rate_gen``), the delivery rate is the bytes newly delivered
(cumulatively or by SACK) over an interval, divided by the interval; here over a sliding window
of about one RTT ending at each ACK. ACKs return at the bottleneck's rate only while a queue
stands at the bottleneck (the link never idles), so the estimate is the median over the
"busy" windows: those in which every RTT sample stayed above the smallest by more than the
jitter can explain (2J) plus what a sender's own small bursts queue: ``BURST_SEGMENTS``
serialisation times, at least ``MIN_STANDING_S`` (a segment sent back to back behind another
waits one serialisation time even on an idle link). Windows touching a stretch where the
sender sent nothing for a quarter window (application-limited, RFC 7661's idle) are left out.
Without any busy window the link was never saturated and only a lower bound is known: the
high percentile of all windows. The payload rate is turned into IP bytes with the capture's
own wire/payload ratio.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .estimate import Estimate
from .timeline import Timeline

__all__ = ["bottleneck_rate", "rate_window_s"]

#: Percentile of all windowed rates taken when no window was busy (a lower bound).
FALLBACK_PERCENTILE = 95
#: Segments of the sender's own bursts a standing queue must exceed.
BURST_SEGMENTS = 3
#: Smallest queueing delay taken for a standing queue.
MIN_STANDING_S = 1e-3
#: Fewer busy windows than this: treated as none.
MIN_BUSY = 20


def rate_window_s(min_rtt_s: float, jitter_s: float) -> float:
    """About one RTT, at least 20 ms, and at least 8 jitters (±J moves an ACK by up to 2J)."""
    return max(min_rtt_s, 0.02, 8 * jitter_s)


def _window_min_queue(tl: Timeline, window_s: float, at: np.ndarray) -> np.ndarray:
    """Smallest queueing delay (RTT sample - min) seen in (t - window, t] for each t in ``at``
    (inf where the window holds no sample)."""
    q = tl.rtt_s - tl.rtt_s.min()
    order = np.argsort(tl.rtt_at, kind="stable")
    times = tl.rtt_at[order]
    s = pd.Series(q[order], index=pd.to_datetime(times, unit="s"))
    rolled = s.rolling(pd.Timedelta(seconds=window_s)).min().to_numpy()
    i = np.searchsorted(times, at, side="right") - 1
    out = np.where(i >= 0, rolled[np.clip(i, 0, None)], np.inf)
    # a window whose latest sample is older than the window itself has no sample
    stale = (i < 0) | (at - times[np.clip(i, 0, None)] > window_s)
    out[stale] = np.inf
    return out


def bottleneck_rate(tl: Timeline, window_s: float, ser_s: float = 0.0, jitter_s: float = 0.0) -> Estimate:
    t, d = tl.ack_t, tl.delivered
    if len(t) < 10 or t[-1] - t[0] < 2 * window_s:
        return Estimate("rate", None, None, None, "bit/s", f"capture shorter than two {window_s * 1e3:.0f} ms windows")
    start = np.searchsorted(t, t - window_s, side="left")
    ok = (t - t[0]) >= window_s
    gaps = np.diff(tl.tx_t)
    idle = gaps > window_s / 4
    for a, b in zip(tl.tx_t[:-1][idle], tl.tx_t[1:][idle]):
        ok &= ~((t >= a) & (t - window_s <= b))
    ok &= t <= tl.tx_t[-1]  # after the last send the tail drains
    span = t - t[start]
    ok &= span > window_s / 2
    idx = np.nonzero(ok)[0]
    if len(idx) < 5:
        return Estimate("rate", None, None, None, "bit/s", "no window where the sender kept data in flight")
    rates = (d[idx] - d[start[idx]]) * 8.0 * tl.wire_per_payload / span[idx]
    qmin = _window_min_queue(tl, window_s, t[idx])
    standing = 2 * jitter_s + max(BURST_SEGMENTS * ser_s, MIN_STANDING_S)
    busy = qmin > standing
    scale = f"IP bytes = payload x {tl.wire_per_payload:.4f}"
    if busy.sum() >= MIN_BUSY:
        r = rates[busy]
        est = float(np.median(r))
        lo, hi = np.percentile(r, [25, 75])
        return Estimate.around(
            "rate",
            est,
            lo,
            hi,
            "bit/s",
            f"median of {len(r)} of {len(rates)} delivery-rate windows of {window_s * 1e3:.0f} ms with a "
            f"standing queue (every RTT sample > min + {standing * 1e3:.2f} ms); all windows: "
            f"p50 {np.median(rates) / 1e6:.2f}, max {rates.max() / 1e6:.2f} Mbit/s; {scale}",
        )
    est = float(np.percentile(rates, FALLBACK_PERCENTILE))
    return Estimate.at_least(
        "rate",
        est,
        "bit/s",
        f"no queue stood for a whole {window_s * 1e3:.0f} ms window ({int(busy.sum())} such windows): "
        f"the link was never saturated, p{FALLBACK_PERCENTILE} of {len(rates)} windows is a lower bound; {scale}",
    )
