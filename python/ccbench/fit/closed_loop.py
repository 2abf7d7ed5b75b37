"""The fit's closed loop on either backend: run CUBIC over a link whose parameters are known,
with ``[output] pcap``, fit the sender-side capture and judge each estimate against the link
(docs/fit.md). Shared by the kernel closed-loop test and benchmarks/fit/.

Tolerances (docs/fit.md): rate 5 %, base RTT 2 ms, buffer 25 %, loss 30 % of the loss the
link really drew (or inside the fit's interval), the loss model, jitter 1 ms. A parameter the
flow could not show (a link never saturated, a buffer never overflowed) passes when the fit
says so with a one-sided interval whose bound does not exceed the truth by more than the
tolerance."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from . import Fit, fit_capture

__all__ = ["Link", "LINKS", "Judged", "scenario_dict", "run_link", "judge", "fit_link"]


@dataclass(frozen=True)
class Link:
    rate_bps: float
    rtt_s: float
    buffer_bdp: float
    #: the scenario's `loss` value (a rate or a Gilbert table)
    loss: Any
    jitter_s: float
    duration: str
    #: the loss model the fit must find (None: not judged)
    model: Optional[str]


#: Links for both backends, 10-200 Mbit/s, 10-200 ms, 0.5-8 BDP, Bernoulli and Gilbert loss up
#: to 2 %, uniform jitter up to 8 ms; durations short enough for a kernel test of ~3 minutes.
GILBERT = {"model": "gilbert", "p": "0.3%", "r": "30%"}
LINKS: dict[str, Link] = {
    "10M-20ms-2bdp-clean": Link(10e6, 0.020, 2.0, "0%", 0.0, "15s", "none"),
    "100M-10ms-half-bdp-bernoulli": Link(100e6, 0.010, 0.5, "0.1%", 0.0, "10s", "bernoulli"),
    "20M-100ms-4bdp-gilbert": Link(20e6, 0.100, 4.0, GILBERT, 0.0, "20s", "gilbert"),
    "30M-60ms-1bdp-jitter4": Link(30e6, 0.060, 1.0, "0%", 0.004, "15s", None),
    "200M-20ms-8bdp-clean": Link(200e6, 0.020, 8.0, "0%", 0.0, "10s", "none"),
    "40M-40ms-2bdp-jitter8": Link(40e6, 0.040, 2.0, "0.2%", 0.008, "15s", "bernoulli"),
    "10M-200ms-1bdp-bernoulli2": Link(10e6, 0.200, 1.0, "2%", 0.0, "20s", "bernoulli"),
}


def scenario_dict(link: Link, seed: int = 1) -> dict:
    """The TOML-shaped scenario: one CUBIC flow over the link."""
    bottleneck = {
        "rate": f"{link.rate_bps / 1e6:g}Mbit",
        "rtt": f"{link.rtt_s * 1e3:g}ms",
        "buffer": f"{link.buffer_bdp:g}bdp",
        "loss": copy.deepcopy(link.loss),
    }
    flow: dict[str, Any] = {"cc": "cubic"}
    if link.jitter_s:
        bottleneck["jitter"] = f"{link.jitter_s * 1e3:g}ms"
        # PAWS (RFC 7323 §5) would discard reordered segments with older timestamps and turn
        # the reordering into loss (docs/fit.md, known limits)
        flow["timestamps"] = False
    return {"duration": link.duration, "seed": seed, "bottleneck": bottleneck, "flows": [flow]}


def run_link(link: Link, backend: str, pcap: Path, seed: int = 1) -> tuple[float, Any]:
    """Run the link on ``backend`` ("sim" or "kernel") with flow 0 captured to ``pcap``:
    (the loss rate the link drew on its data direction, the backend's result: the simulator's
    report dict, or the kernel's RunResult)."""
    d = scenario_dict(link, seed)
    if backend == "sim":
        from .replay import simulate_capture

        report = simulate_capture(d, pcap)
        fwd = report["links"][0]
    else:
        from ..backends import kernel
        from ..scenario.model import Scenario

        d["output"] = {"pcap": str(Path(pcap).resolve())}
        report = kernel.run(Scenario.from_dict(d, source=f"closed loop {backend}"))
        if not report.ok:
            raise RuntimeError(f"kernel run failed: {report.error}")
        fwd = report.links[0]
    drawn = fwd["dropped_loss"] / fwd["arrived"] if fwd.get("arrived") else 0.0
    return drawn, report


@dataclass(frozen=True)
class Judged:
    parameter: str
    truth: Any
    fitted: Any
    ok: bool
    evidence: str


def _bounded(est, truth: float, rel: float) -> bool:
    """An exact estimate within ``rel`` of the truth, or a lower bound (no upper end) at most
    ``rel`` above it."""
    if est.hi is None:
        return est.lo is not None and est.lo <= truth * (1 + rel)
    return est.value is not None and abs(est.value - truth) <= rel * truth


def judge(fit: Fit, link: Link, drawn_loss: float) -> list[Judged]:
    """Each parameter's verdict against the link (tolerances in the module docstring)."""
    buffer = link.buffer_bdp * link.rate_bps * link.rtt_s / 8  # BDP in bytes, docs/scenario.md
    est = fit.loss.rate
    loss_ok = abs((est.value or 0.0) - drawn_loss) <= 0.3 * drawn_loss + 1e-4 or (
        est.lo is not None and est.hi is not None and est.lo <= drawn_loss <= est.hi
    )
    rows = [
        Judged("rate", link.rate_bps, fit.rate, _bounded(fit.rate, link.rate_bps, 0.05), fit.rate.evidence),
        Judged(
            "base RTT",
            link.rtt_s,
            fit.rtt,
            fit.rtt.value is not None and abs(fit.rtt.value - link.rtt_s) <= 0.002,
            fit.rtt.evidence,
        ),
        Judged("buffer", buffer, fit.buffer, _bounded(fit.buffer, buffer, 0.25), fit.buffer.evidence),
        Judged("loss", drawn_loss, est, loss_ok, est.evidence),
        Judged(
            "jitter",
            link.jitter_s,
            fit.jitter,
            abs((fit.jitter.value or 0.0) - link.jitter_s) <= 0.001,
            fit.jitter.evidence,
        ),
    ]
    if link.model is not None:
        rows.append(Judged("loss model", link.model, fit.loss.model, fit.loss.model == link.model, fit.loss.evidence))
    if link.model == "gilbert" and fit.loss.model == "gilbert":
        # the chain's MLE p = n01 / n0, r = n10 / n1 against the link's p and r, within 30 %
        for name in ("p", "r"):
            want = _fraction(link.loss[name])
            got = getattr(fit.loss, name)
            rows.append(Judged(f"gilbert {name}", want, got, abs(got - want) <= 0.3 * want, fit.loss.evidence))
    return rows


def _fraction(v: Any) -> float:
    """A scenario probability: "0.3%" or a plain number."""
    s = str(v).strip()
    return float(s[:-1]) / 100 if s.endswith("%") else float(s)


def fit_link(link: Link, backend: str, pcap: Path, seed: int = 1) -> tuple[Fit, list[Judged], Any]:
    """Run, fit and judge one link: (the fit, the verdicts, the backend's result)."""
    drawn, report = run_link(link, backend, pcap, seed)
    fit = fit_capture(pcap)
    return fit, judge(fit, link, drawn), report
