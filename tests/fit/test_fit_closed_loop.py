"""Closed loop: run CUBIC on known simulated links with `[output] pcap`, fit the capture, and
compare with the link that made it (docs/fit.md). Tolerances: rate 5 %, base RTT 2 ms, buffer
25 %, loss 30 % of the loss the link really drew (or inside the interval), the loss model. Where
the flow cannot show a parameter (a link never saturated, a buffer never overflowed) the fit
must say so with a one-sided interval that holds the truth."""

from __future__ import annotations

import pytest

from ccbench.fit import fit_capture
from ccbench.fit.replay import simulate_capture

# (rate bit/s, rtt s, buffer in BDP, loss, jitter s, duration, expected loss model)
LINKS = {
    "10M-20ms-2bdp-clean": (10e6, 0.020, 2.0, "0%", 0.0, "30s", "none"),
    "100M-10ms-half-bdp-bernoulli": (100e6, 0.010, 0.5, "0.1%", 0.0, "15s", "bernoulli"),
    "20M-100ms-4bdp-gilbert": (20e6, 0.100, 4.0, {"model": "gilbert", "p": "0.3%", "r": "30%"}, 0.0, "40s", "gilbert"),
    "30M-60ms-1bdp-jitter4": (30e6, 0.060, 1.0, "0%", 0.004, "30s", None),
    "200M-20ms-8bdp-clean": (200e6, 0.020, 8.0, "0%", 0.0, "10s", "none"),
    "10M-200ms-1bdp-bernoulli2": (10e6, 0.200, 1.0, "2%", 0.0, "60s", "bernoulli"),
    "40M-40ms-2bdp-jitter8": (40e6, 0.040, 2.0, "0.2%", 0.008, "30s", "bernoulli"),
}


@pytest.mark.parametrize("name", list(LINKS))
def test_fit_recovers_the_link(name, tmp_path):
    rate, rtt, bdps, loss, jitter, duration, model = LINKS[name]
    bottleneck = {"rate": f"{rate / 1e6:g}Mbit", "rtt": f"{rtt * 1e3:g}ms", "buffer": f"{bdps:g}bdp", "loss": loss}
    flow = {"cc": "cubic"}
    if jitter:
        bottleneck["jitter"] = f"{jitter * 1e3:g}ms"
        # Linux's PAWS check (which the simulator models) drops reordered segments whose
        # timestamp is older than the newest one seen: with timestamps the reordering itself
        # would show as loss. docs/fit.md.
        flow["timestamps"] = False
    pcap = tmp_path / "flow0.pcap"
    report = simulate_capture({"duration": duration, "bottleneck": bottleneck, "flows": [flow]}, pcap)
    fit = fit_capture(pcap)

    # rate: exact within 5 %, or a lower bound no higher than the truth (never saturated)
    if fit.rate.hi is None:
        assert fit.rate.lo <= rate * 1.05, fit.rate.evidence
    else:
        assert abs(fit.rate.value - rate) <= 0.05 * rate, fit.rate.evidence
    assert abs(fit.rtt.value - rtt) <= 0.002, fit.rtt.evidence
    # buffer: BDP = rate x rtt / 8 bytes (docs/scenario.md); within 25 %, or a lower bound
    buffer = bdps * rate * rtt / 8
    if fit.buffer.hi is None:
        assert fit.buffer.lo <= buffer * 1.25, fit.buffer.evidence
    else:
        assert abs(fit.buffer.value - buffer) <= 0.25 * buffer, fit.buffer.evidence
    # loss: what the link drew (its dropped_loss counter), so that the test judges the
    # estimator and not the luck of the draw
    link = report["links"][0]
    drawn = link["dropped_loss"] / link["arrived"]
    est = fit.loss.rate
    assert abs(est.value - drawn) <= 0.3 * drawn + 1e-4 or est.lo <= drawn <= est.hi, est.evidence
    if model is not None:
        assert fit.loss.model == model, fit.loss.evidence
    if model == "gilbert":
        # the chain's MLE: p = n01 / n0, r = n10 / n1, against p = 0.3 %, r = 30 %
        assert abs(fit.loss.p - 0.003) <= 0.3 * 0.003 and abs(fit.loss.r - 0.30) <= 0.3 * 0.30
    # jitter: uniform ±J read from the longest reordering hole (reorder.py), within 1 ms
    assert abs((fit.jitter.value or 0.0) - jitter) <= 0.001, fit.jitter.evidence
