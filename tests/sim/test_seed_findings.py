"""The seeds' qualitative findings that follow from the model, checked on the simulator.

Each test states why the finding must hold. The numbers here are thresholds from theory (a
window law, a gain constant, a timer), never values copied from a run; the seeds' own numbers
are compared in the study reports (ccbench study run), not asserted here.
"""

from __future__ import annotations

import numpy as np

import ccbench
from ccbench import analysis
from ccbench.scenario.model import Scenario


def _one_flow(cc: str, seed: int, duration: str = "20s", **bottleneck) -> Scenario:
    b = {"rate": "50Mbit", "rtt": "50ms", "buffer": "1bdp", **bottleneck}
    return Scenario.from_dict(
        {"name": "finding", "duration": duration, "seed": seed, "bottleneck": b, "flows": [{"cc": cc}]}
    )


def _mean_goodput(cc: str, seeds=(1, 2, 3), **bottleneck) -> float:
    return float(np.mean([ccbench.run(_one_flow(cc, s, **bottleneck)).flows["goodput_bps"].iloc[0] for s in seeds]))


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


def test_ten_plus_ten_flows_on_1gbe_change_level_at_bbr_probe_rtt_rounds():
    """Seed 003: 10 CUBIC + 10 BBR on 1 GbE fluctuate, in steps set by BBR's ProbeRTT.

    Why: every BBR flow enters ProbeRTT when its min-RTT estimate is 10 s old
    (bbr_min_rtt_win_sec) and drains to 4 packets for at least 200 ms. Flows that share the
    queue take their min-RTT samples together, so they enter ProbeRTT together, once per
    window: about 200 s / 10.2 s, i.e. 17-20 rounds in a 200 s run. Each round empties the
    queue and resets the state the two groups share: whether CUBIC grows into the freed
    capacity and how large a min-RTT (and so cwnd) BBR keeps for the next window. So CUBIC's
    level moves across a round more than between rounds: the change of its 4 s mean across a
    round (median over rounds, in log terms) must be at least 1.5 times the change midway
    between rounds, where only noise moves it. BBR, whose cwnd is twice a BDP estimate inflated
    by the queue CUBIC keeps, takes most of the link: CUBIC gets less than a third.

    The seed reports a 20 s period. Linux 6.18 at 1 Gbit/s (benchmarks/coexistence_1g/RESULTS.md,
    veth and tbf as the bottleneck) shows in ten runs 17-20 rounds, CUBIC at 10-27 % of the
    goodput, and CUBIC's level changing by x1.09-8.8 across a round against x1.05-1.10 midway
    (1.8 to 23 times as much in log terms: every run passes these checks), but no significant
    20 s period in any of its 18 runs; the simulator finds one in about a quarter of its runs. The
    period is therefore not asserted (docs/studies.md, coexistence-1g).
    """
    sc = Scenario.from_dict(
        {
            "name": "coexistence",
            "duration": "200s",
            "seed": 1,
            "sample_interval": "100ms",
            "bottleneck": {"rate": "1Gbit", "rtt": "200us", "buffer": "1000pkt"},
            "flows": [{"cc": "cubic", "count": 10, "rwnd": "32MB"}, {"cc": "bbr", "count": 10, "rwnd": "32MB"}],
        }
    )
    s = ccbench.run(sc).series
    rounds = analysis.probe_rtt_rounds(s)  # of at least 3 of the 10 flows
    assert 17 <= len(rounds) <= 20, rounds
    agg = s.groupby(["t_s", "cc"])["goodput_bps"].sum().unstack().sort_index().fillna(0.0)
    step = analysis.level_change_at(
        agg.index.to_numpy(float), agg["cubic"].to_numpy(float), [r.start_s for r in rounds]
    )
    assert step.n_events >= 15 and step.n_midway >= 14, step
    assert step.at_events >= 1.5 * step.midway, step
    assert agg["cubic"].sum() < agg.sum(axis=1).sum() / 3
