"""``ccbench fit``: calibrate a bottleneck scenario from a sender-side capture of one TCP bulk
transfer (docs/fit.md). One module per estimator; this file chains them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .buffer import fit_buffer, queue_max_s
from .capture import FitError, read_packets, select_flow
from .estimate import Estimate
from .loss import LossFit, fit_loss
from .queueing import queue_at_send
from .rate import bottleneck_rate, rate_window_s
from .reorder import jitter
from .rtt import base_rtt, min_rtt_s
from .timeline import Timeline, build_timeline

__all__ = ["FitError", "Fit", "fit_capture", "fit_timeline"]

#: Fewer RTT samples than this: too little to fit anything.
MIN_RTT_SAMPLES = 20


@dataclass(frozen=True)
class Fit:
    flow: str
    duration_s: float
    rate: Estimate
    rtt: Estimate
    buffer: Estimate
    loss: LossFit
    jitter: Estimate

    def estimates(self) -> list[Estimate]:
        return [self.rate, self.rtt, self.buffer, self.loss.rate, self.jitter]

    def to_json(self) -> dict:
        return {
            "flow": self.flow,
            "duration_s": self.duration_s,
            "estimates": [e.to_json() for e in self.estimates()],
            "loss_model": {
                "model": self.loss.model,
                "p": self.loss.p,
                "r": self.loss.r,
                "lr_pvalue": self.loss.lr_pvalue,
            },
        }


def fit_timeline(tl: Timeline, flow_name: str = "") -> Fit:
    if len(tl.rtt_s) < MIN_RTT_SAMPLES:
        raise FitError(f"only {len(tl.rtt_s)} RTT samples in the capture (need {MIN_RTT_SAMPLES}): too short to fit")
    m = min_rtt_s(tl)
    seg_wire_bytes = tl.wire_per_payload * float((tl.seg_end - tl.seg_start).max())
    # The rate needs the jitter and the serialisation time, which needs the rate: start from
    # the jitter without serialisation and a rate from every window, then refine once.
    jit = jitter(tl, 0.0)
    rate = bottleneck_rate(tl, rate_window_s(m, jit.value or 0.0))
    for _ in range(2):
        if rate.value is None:
            raise FitError(f"cannot estimate the bottleneck rate: {rate.evidence}")
        ser = seg_wire_bytes * 8 / rate.value
        jit = jitter(tl, ser)
        j = jit.value or 0.0
        rate = bottleneck_rate(tl, rate_window_s(m, j), ser, j)
    if rate.value is None:
        raise FitError(f"cannot estimate the bottleneck rate: {rate.evidence}")
    ser = seg_wire_bytes * 8 / rate.value
    rtt = base_rtt(tl, ser, jit)
    queue = queue_at_send(tl, m)
    qmax = queue_max_s(tl, m)
    loss = fit_loss(tl, queue, qmax)
    buf = fit_buffer(tl, queue, qmax, rate.value, jit.value or 0.0, loss.p)
    return Fit(flow_name, tl.duration_s, rate, rtt, buf, loss, jit)


def fit_capture(path: Path, flow: Optional[str] = None) -> Fit:
    """Fit the bulk flow of capture ``path`` (or the one ``flow`` names). Raises FitError."""
    packets = read_packets(Path(path))
    f = select_flow(packets, flow)
    if not f.acks:
        raise FitError(f"flow {f.name()}: no ACKs in the capture (capture at the sender, both directions)")
    return fit_timeline(build_timeline(f), f.name())
