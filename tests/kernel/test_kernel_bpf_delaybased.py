"""Behaviour of the BPF ports of Linux's delay-aware congestion controls (backends/kernel/bpf:
Veno, Illinois, YeAH, NV) on the kernel, one property each, taken from the module's source and
checked against an expectation computed by hand from its constants."""

from __future__ import annotations

import statistics

import pytest

import ccbench
from ccbench.backends.kernel import bpfcc
from ccbench.scenario.model import Scenario
from conftest import faithful_kernel_run, kernel_missing

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(
        (kernel_missing(ping=False) or bpfcc.missing()) is not None,
        reason=kernel_missing(ping=False) or bpfcc.missing() or "",
    ),
]

RATE_BPS = 50e6
WIRE_PKT = 1500


def _run(cc: str, rtt: str, duration: str, interval: str, loss: str | None = None):
    bottleneck = {"rate": "50Mbit", "rtt": rtt, "buffer": "1bdp"}
    if loss:
        bottleneck["loss"] = loss
    sc = Scenario.from_dict(
        {
            "duration": duration,
            "seed": 1,
            "sample_interval": interval,
            "bottleneck": bottleneck,
            "flows": [{"cc": cc}],
        },
        source="test",
    )
    res = faithful_kernel_run(lambda: ccbench.run(sc, backend="kernel"))
    assert res.ok, res.error
    f = res.flows.iloc[0]
    assert (f.cc, f.cc_impl) == (cc, "bpf")
    return res


def _with_queue(res):
    """The flow's samples with the bottleneck queue (packets) at the same instants."""
    s = res.series.merge(res.link_series[["t_s", "queue_bytes"]], on="t_s", how="left")
    s["queue_pkts"] = s.queue_bytes / WIRE_PKT
    return s.reset_index(drop=True)


def _recovery_ratios(series) -> list[float]:
    """cwnd when fast recovery ends over cwnd in the last Open sample before it began, for each
    recovery that did not fall back to an RTO. Linux ends recovery with cwnd = ssthresh
    (tcp_end_cwnd_reduction), so this is ssthresh / cwnd at the loss, to within the growth of
    one sample interval on either side."""
    ratios, before, in_recovery, rto = [], None, False, False
    for cwnd, state in zip(series.cwnd_pkts, series.cc_state):
        if not in_recovery:
            if state == "recovery":
                in_recovery, rto = True, False
            elif state == "open":
                before = cwnd
            elif state == "loss":
                before = None
        elif state == "loss":
            rto = True
        elif state == "open":
            if before and not rto:
                ratios.append(cwnd / before)
            in_recovery, before = False, cwnd
    return ratios


def test_veno_cuts_cwnd_to_four_fifths_on_losses_its_backlog_does_not_explain():
    """tcp_veno_ssthresh: with the backlog estimate diff = cwnd (1 - baseRTT/RTT) under
    beta = 3 packets a loss is taken as random and cwnd goes to 4/5, else to 1/2. 1 % random loss
    on 50 Mbit/s, 20 ms (BDP 83 packets): an AIMD flow with decrease to 4/5 peaks near
    sqrt(2 / ((1 - 0.8^2) p)) = 24 packets, far under the BDP, so the bottleneck queue stays
    empty, RTT stays within a few % of baseRTT and diff is under 1 packet at these windows. Every
    cut is then to floor(4 cwnd / 5): 0.75-0.8 of cwnd at 10-40 packets (Reno's would be 0.5)."""
    res = _run("veno", "20ms", "8s", "10ms", loss="1%")
    ratios = _recovery_ratios(res.series)
    med = statistics.median(ratios)
    print(f"veno: {len(ratios)} recoveries, ssthresh/cwnd median {med:.3f}")
    assert len(ratios) >= 15
    assert 0.72 <= med <= 0.86


def _growth_per_round(s, mask) -> float:
    """Packets added to cwnd per RTT over the sample pairs where ``mask`` holds at both ends and
    the flow stayed Open: sum of cwnd steps over sum of (interval / RTT)."""
    gained = rounds = 0.0
    for i in range(1, len(s)):
        a, b = s.iloc[i - 1], s.iloc[i]
        if mask(a) and mask(b) and a.cc_state == b.cc_state == "open" and b.cwnd_pkts >= a.cwnd_pkts:
            gained += b.cwnd_pkts - a.cwnd_pkts
            rounds += (b.t_s - a.t_s) * 1000.0 / b.rtt_ms
    return gained / rounds if rounds else float("nan")


def test_illinois_grows_at_alpha_min_near_a_full_queue_and_halves_on_its_overflow():
    """tcp_illinois.c on 50 Mbit/s, 20 ms, 1 BDP drop-tail (83 packets, so the largest queueing
    delay dm is the 20 ms of a full buffer once slow start has overflowed it). alpha():
    with the round's average queueing delay da above dm/100, alpha = 10 (dm - d1) /
    ((dm - d1) + (da - d1) * (1280 - 38) / 38) packets per round, i.e. about 10 / (1 + 32.7 da/dm):
    0.39 at da = 3/4 dm down to ALPHA_MIN = 38/128 = 0.30 at da = dm. So while the queue is
    above 3/4 full cwnd grows by 0.30-0.39 packets per RTT (Reno: 1). beta(): at the overflow
    the round's da is above 8/10 dm, so beta = 1/2 and ssthresh = cwnd / 2."""
    res = _run("illinois", "20ms", "10s", "20ms")
    s = _with_queue(res)
    buffer_pkts = RATE_BPS * 0.020 / 8 / WIRE_PKT
    near_full = _growth_per_round(s, lambda r: r.queue_pkts >= 0.75 * buffer_pkts and r.t_s > 1.0)
    # congestion-avoidance losses (the first retransmission of each episode after slow start):
    # cwnd in the sample before against the lowest of the next three; the growth at the then
    # empty queue (alpha up to 10 per 20 ms round) adds up to an interval's worth, 10 packets
    # or 0.06 of the 167 cwnd of an overflow: 0.5-0.56 expected, 0.65 allowed (beta = 1/2; a
    # beta of 1/8 would leave 0.875)
    cuts = []
    for i in range(1, len(s) - 3):
        if s.t_s[i] > 1.0 and s.retransmits[i] > s.retransmits[i - 1] and s.cwnd_pkts[i - 1] >= s.cwnd_pkts[i - 2]:
            cuts.append(min(s.cwnd_pkts[i : i + 3]) / s.cwnd_pkts[i - 1])
    print(f"illinois: growth near a full queue {near_full:.2f} packets/RTT; cuts {[round(c, 3) for c in cuts]}")
    assert 0.15 <= near_full <= 0.6
    assert cuts, "no congestion-avoidance loss in 10 s"
    assert all(0.45 <= c <= 0.65 for c in cuts)


def test_yeah_decongests_at_an_own_backlog_of_alpha_packets_without_loss():
    """tcp_yeah.c, once per round: the flow's own backlog queue = cwnd (RTT - baseRTT) / RTT
    above TCP_YEAH_ALPHA = 80 packets, with cwnd above reno_count, triggers a precautionary
    decongestion: cwnd minus min(queue, cwnd/2), ssthresh to that. On 50 Mbit/s, 30 ms with
    1 BDP (125 packets) of buffer, after the slow-start overflow the queue grows by Reno's packet
    per round (YeAH's "slow" mode, queueing delay over baseRTT/8) until it passes 80 packets:
    the first decongestion then removes about 80 packets at once with no retransmission, and the
    queue drains to a few packets. Until then the queue stays within a round's growth and the
    one-round lag of the decision above 80 (bound 95 packets), below the 125 where Reno would
    lose. (Later cycles depend on reno_count, the decongestion's floor, which the module raises
    by one every slow round: it catches up with cwnd, and the flow then fills the buffer as Reno.)"""
    res = _run("yeah", "30ms", "10s", "100ms")
    s = _with_queue(res)
    # the first round after slow start's recovery: Open with the queue drained below 40 packets
    start = next(i for i in range(len(s)) if s.t_s[i] > 0.5 and s.cc_state[i] == "open" and s.queue_pkts[i] < 40)
    first = next(
        (
            i
            for i in range(start + 1, len(s))
            if s.cwnd_pkts[i - 1] - s.cwnd_pkts[i] >= 40 and s.retransmits[i] == s.retransmits[i - 1]
        ),
        None,
    )
    assert first is not None, "no decongestion in 10 s"
    cut = s.cwnd_pkts[first - 1] - s.cwnd_pkts[first]
    before = s.iloc[start:first]
    after = s.iloc[first : first + 4]
    print(
        f"yeah: from {s.t_s[start]:.1f} s queue max {before.queue_pkts.max():.0f} packets, decongestion at "
        f"{s.t_s[first]:.1f} s by {cut} packets, queue after it {after.queue_pkts.min():.0f}"
    )
    assert before.retransmits.iloc[-1] == before.retransmits.iloc[0]
    assert 60 <= before.queue_pkts.max() <= 95
    assert 60 <= cut <= 100
    assert after.queue_pkts.min() < 20


def test_nv_keeps_a_standing_queue_of_nv_pad_packets():
    """tcpnv_acked(), once per round: the target is the window the round's best delivery rate
    needs at the minimum RTT (at a saturated link that is the BDP) plus nv_pad = 10 packets; cwnd
    above it is cut, cwnd at least nv_pad_buffer = 2 below it grows. So cwnd settles between
    BDP + 8 and BDP + 10 and the bottleneck holds 8-10 packets of this flow, with the link busy.
    50 Mbit/s, 20 ms, 1 BDP (83 packets, where Reno would fill all 83). Bounds: the median
    queue after 3 s within [5, 14] packets, goodput at least 90 % of the payload rate."""
    res = _run("nv", "20ms", "8s", "100ms")
    s = _with_queue(res)
    q = s[s.t_s >= 3.0].queue_pkts
    goodput = res.flows.goodput_bps[0]
    print(f"nv: queue median {q.median():.1f} packets (p10 {q.quantile(0.1):.0f}, p90 {q.quantile(0.9):.0f})")
    assert 5 <= q.median() <= 14
    assert goodput >= 0.9 * RATE_BPS * 1448 / 1500
