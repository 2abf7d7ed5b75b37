"""Step ECN marking (``aqm = "step"``, DCTCP's switch queue) on the simulator through the public
API: one Reno flow with ECN through a step marker at K = 65 packets on 100 Mbit/s, 10 ms is
signalled by CE marks only (no queue drop, no retransmission) and its queue stays below K plus
a few packets once past slow start; without ECN the same queue is plain drop-tail (Not-ECT
packets are never marked nor dropped early) and fills the buffer. K in bytes marks the same
full-size packets as K in packets. The queue's unit tests are in crates/queue/src/step.rs."""

from __future__ import annotations

import json

import pytest

import ccbench
from ccbench.scenario.model import Scenario

MTU = 1500
RATE = 100e6
K = 65  # packets
BDP_PKTS = RATE * 0.010 / 8 / MTU  # 83.3 packets
BUFFER_PKTS = 4 * BDP_PKTS  # "4bdp": 500 kB, 333 packets
SLOW_START_S = 2.0  # slow start and the first cuts are over well before 2 s (200 RTTs)


def scenario(ecn: bool, k=f"{K}pkt") -> dict:
    return {
        "name": "step",
        "duration": "20s",
        "seed": 1,
        "sample_interval": "10ms",
        "bottleneck": {"rate": "100Mbit", "rtt": "10ms", "buffer": "4bdp", "aqm": "step", "aqm_params": {"k": k}},
        "flows": [{"cc": "reno", "ecn": ecn}],
    }


def go(d: dict):
    r = ccbench.run(Scenario.from_dict(d), backend="sim")
    assert r.runs.iloc[0]["status"] == "ok", r.runs.iloc[0]["error"]
    return r


def bottleneck(r) -> dict:
    (link,) = [x for x in r.links if x["name"] == "bottleneck/fwd"]
    return link


def queue_pkts_after_slow_start(r):
    ls = r.link_series
    return ls[ls["t_s"] >= SLOW_START_S]["queue_bytes"] / MTU


@pytest.fixture(scope="module")
def with_ecn():
    return go(scenario(True))


def test_an_ecn_reno_flow_is_marked_not_dropped_and_its_queue_stays_near_k(with_ecn):
    r = with_ecn
    runs, flow, bn = r.runs.iloc[0], r.flows.iloc[0], bottleneck(r)
    assert runs["aqm"] == "step"
    assert json.loads(runs["aqm_params"]) == {"k_packets": K, "limit_bytes": 500_000}
    assert bn["ce_marked"] > 0
    # The buffer (333 packets) is deep enough for slow start's overshoot (it peaks near 190
    # packets: the first mark takes an RTT to reach the sender while the window doubles), so
    # no packet is dropped at all and nothing is retransmitted.
    assert bn["dropped_queue"] == 0 and runs["drops"] == 0
    assert flow["retransmits"] == 0
    q = queue_pkts_after_slow_start(r)
    # Upper bound. In congestion avoidance Reno grows by one packet per RTT; the first packet
    # marked arrives at a queue of K + 1 and its echo reaches the sender about an RTT (10 ms +
    # K packets' 7.8 ms of queueing) later, when it halves. Meanwhile the queue grows by about
    # one packet per RTT, so it tops out at K + 2 or 3 (measured: 68 packets). K + 10 leaves
    # room for the sampling and the ACK clock's bunching.
    assert q.max() <= K + 10, q.max()
    # Lower side: a mark halves the window. At the mark it is about BDP + K = 148 packets; half
    # of it (74) is below the BDP (83), so the queue drains to empty and refills linearly up to
    # K: a sawtooth from 0 to K with a time average near K / 2 (measured 30 packets), not near
    # K — only DCTCP's proportional cut (RFC 8257) keeps a queue at K.
    assert q.quantile(0.05) <= 0.25 * K, q.quantile(0.05)
    assert 0.25 * K <= q.mean() <= 0.75 * K, q.mean()
    # The queue is empty only briefly: at least 90 % of the rate (measured 94.8 %).
    assert flow["goodput_bps"] >= 0.9 * RATE, flow["goodput_bps"]
    assert "cwr" in set(r.series["cc_state"]), "the sender reacts to the echoed marks"


def test_without_ecn_the_step_queue_is_drop_tail():
    """Not-ECT packets are never marked and never dropped by the marker: only the tail-drop
    limit drops them, so a non-ECN Reno flow fills the 4-BDP buffer as with drop-tail."""
    r = go(scenario(False))
    bn, flow = bottleneck(r), r.flows.iloc[0]
    assert bn["ce_marked"] == 0
    assert bn["dropped_queue"] > 0 and flow["retransmits"] > 0
    q = queue_pkts_after_slow_start(r)
    assert q.max() >= 0.95 * BUFFER_PKTS, q.max()
    assert q.mean() > 2 * K, q.mean()


def test_k_in_bytes_marks_full_size_packets_as_k_in_packets(with_ecn):
    """97500 B = 65 packets of 1500 B: every data packet is full-size, so the queue is above
    97500 B exactly when it holds more than 65 packets and the runs are the same."""
    r = go(scenario(True, k="97500B"))
    assert json.loads(r.runs.iloc[0]["aqm_params"]) == {"k_bytes": 97_500, "limit_bytes": 500_000}
    assert bottleneck(r) == bottleneck(with_ecn)
    assert r.flows.iloc[0]["goodput_bps"] == with_ecn.flows.iloc[0]["goodput_bps"]
