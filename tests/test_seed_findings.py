"""The seeds' qualitative findings that follow from the model, checked on the simulator.

Each test states why the finding must hold. The numbers here are thresholds from theory (a
window law, a gain constant, a timer), never values copied from a run; the seeds' own numbers
are compared in the study reports (ccbench study run), not asserted here.
"""
from __future__ import annotations

import numpy as np
import pytest

import ccbench
from ccbench import analysis
from ccbench.scenario import Scenario


def _one_flow(cc: str, seed: int, duration: str = "20s", **bottleneck) -> Scenario:
    b = {"rate": "50Mbit", "rtt": "50ms", "buffer": "1bdp", **bottleneck}
    return Scenario.from_dict({"name": "finding", "duration": duration, "seed": seed,
                               "bottleneck": b, "flows": [{"cc": cc}]})


def _mean_goodput(cc: str, seeds=(1, 2, 3), **bottleneck) -> float:
    return float(np.mean([ccbench.run(_one_flow(cc, s, **bottleneck)).flows["goodput_bps"].iloc[0]
                          for s in seeds]))


def test_bbr_advantage_grows_with_random_loss():
    """Seeds 001 and 002: BBR's advantage over CUBIC grows with random loss.

    Why: CUBIC (like Reno) cuts its window on every loss, so under random loss p its goodput
    follows the window law ~ MSS / (RTT * sqrt(p)) (Mathis et al.) and falls as p grows; BBR
    paces at its max-filtered delivery-rate estimate and does not treat loss as congestion, so
    its goodput stays near the link rate until loss is large. The ratio BBR/CUBIC therefore rises
    with p, and at 1 % (Mathis: ~1448*8/(0.05*sqrt(0.01))*1.22 ≈ 2.8 Mbit/s for CUBIC on a
    48 Mbit/s link) BBR must win.
    """
    ratios = []
    for loss in ("0.1%", "1%", "5%"):
        ratios.append(_mean_goodput("bbr", loss=loss) / _mean_goodput("cubic", loss=loss))
    assert ratios[1] > 1.0, ratios
    assert ratios[0] < ratios[1] < ratios[2], ratios


def test_cubic_fills_a_deep_buffer_and_bbr_does_not():
    """Seeds 000 and 001: CUBIC fills the buffer (bufferbloat), BBR keeps the RTT near the base.

    Why: a loss-based algorithm grows its window until the buffer overflows, so with a 10 BDP
    drop-tail buffer and no random loss CUBIC's queue holds several BDPs most of the time (mean
    RTT several times the base). BBR caps inflight at cwnd_gain (2) x its BDP estimate, so at most
    about one BDP waits in the queue: the RTT stays below ~2x base, plus slack for ProbeBW's
    1.25 pacing phase and startup (threshold 2.5x).
    """
    def rtt_ratio(cc):
        f = ccbench.run(_one_flow(cc, 1, duration="30s", buffer="10bdp")).flows.iloc[0]
        return f["rtt_mean_ms"] / f["base_rtt_ms"]

    cubic, bbr = rtt_ratio("cubic"), rtt_ratio("bbr")
    assert cubic > 4.0, cubic
    assert bbr < 2.5, bbr


@pytest.mark.xfail(strict=True, reason=(
    "open (issue 10): with Linux's RTO re-arm and TSO bursts for paced flows the 20 s period of "
    "this run is significant in 3 of 10 seeds (19.9-20.5 s; seed 1's strongest peak is 23.9 s, "
    "unconfirmed); the scaled kernel referee shows only BBR's 10 s rhythm. docs/studies.md"))
def test_ten_plus_ten_flows_on_1gbe_oscillate_with_a_period_near_20s():
    """Seed 003: 10 CUBIC + 10 BBR on 1 GbE fluctuate with a ~20 s period.

    Why: every BBR flow enters ProbeRTT when its min-RTT estimate is 10 s old (bbr_min_rtt_win_sec)
    and drains its inflight; CUBIC grows into the freed capacity and fills the queue, which keeps
    BBR's bandwidth and RTT estimates low until the next ProbeRTT lets it take the link back. The
    groups trade the link on a cycle of two min-RTT windows, about 20 s, set by BBR's timer and
    not by the link. 200 s gives ten cycles: the periodogram peak must be significant and the
    autocorrelation at that lag must confirm it (analysis.dominant_period).
    """
    sc = Scenario.from_dict({
        "name": "coexistence", "duration": "200s", "seed": 1, "sample_interval": "100ms",
        "bottleneck": {"rate": "1Gbit", "rtt": "200us", "buffer": "1000pkt"},
        "flows": [{"cc": "cubic", "count": 10, "rwnd": "32MB"},
                  {"cc": "bbr", "count": 10, "rwnd": "32MB"}]})
    s = ccbench.run(sc).series
    agg = s[s["cc"] == "cubic"].groupby("t_s")["goodput_bps"].sum().sort_index()
    t, v = agg.index.to_numpy(float), agg.to_numpy(float)
    start = analysis.steady_state_start(t, v)
    keep = t >= (start if start is not None else t[0])
    per = analysis.dominant_period(t[keep], v[keep])
    assert per.significant, per
    assert per.period_s == pytest.approx(20.0, abs=2.0), per
