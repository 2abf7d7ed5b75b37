"""ECN on the simulator backend through the public API: ``[[flows]] ecn = true``
is accepted, and a CUBIC flow through CoDel with ECN is signalled by CE marks (the bottleneck's
``ce_marked`` link counter) instead of queue drops, at full rate with a short queue; without
ECN the same link drops. The simulator-level tests are crates/sim/tests/ecn.rs and the unit
tests of crates/sim/src/tcp (receiver echo, sender CWR)."""

from __future__ import annotations

import pytest

import ccbench
from ccbench.backends import check
from ccbench.scenario.model import Scenario

RATE = 20e6


def scenario(ecn: bool) -> dict:
    """One CUBIC flow, 20 Mbit/s, 40 ms, a deep buffer, CoDel with its ecn flag on (tc codel
    ecn: Linux's CoDel marks only when asked)."""
    return {
        "name": "ecn-codel",
        "duration": "30s",
        "seed": 1,
        "bottleneck": {"rate": "20Mbit", "rtt": "40ms", "buffer": "16bdp", "aqm": "codel", "aqm_params": {"ecn": True}},
        "flows": [{"cc": "cubic", "ecn": ecn}],
    }


def bottleneck(result) -> dict:
    (link,) = [x for x in result.links if x["name"] == "bottleneck/fwd"]
    return link


@pytest.fixture(scope="module")
def with_ecn():
    return ccbench.run(scenario(True))


def test_the_sim_backend_accepts_ecn():
    check(Scenario.from_dict(scenario(True)), "sim")  # raised "ECN is not modelled" before


def test_codel_marks_an_ecn_flow_instead_of_dropping_it(with_ecn):
    r = with_ecn
    runs, flow, snd = r.runs.iloc[0], r.flows.iloc[0], r.counters.iloc[0]
    assert runs["status"] == "ok", runs["error"]
    bn = bottleneck(r)
    assert bn["ce_marked"] > 0
    # every data packet is ECT and none is lost: at most a stray drop, no retransmission
    assert runs["drops"] <= bn["ce_marked"] // 10, (runs["drops"], bn["ce_marked"])
    assert flow["retransmits"] == 0 and snd["TcpRetransSegs"] == 0 and snd["TcpExtTCPSackRecovery"] == 0
    assert flow["goodput_bps"] >= 0.9 * RATE, flow["goodput_bps"]
    # the sender reacts (CWR), so CoDel's queue stays short (median sojourn <= 15 ms, three
    # times CoDel's 5 ms target)
    assert runs["sojourn_p50_ms"] <= 15.0, runs["sojourn_p50_ms"]
    assert "cwr" in set(r.series["cc_state"]), "the sender's CWR state shows in the series"
    # the marks in the runs table and the counters: every mark reached the receiver (no data
    # loss), and each is echoed, so the sender saw ECE on at least as many delivered segments
    rcv = r.counters.set_index("side").loc["receiver"]
    assert runs["ce_marked"] == sum(link["ce_marked"] for link in r.links) == rcv["IpExtInCEPkts"]
    assert snd["TcpExtTCPDeliveredCE"] >= runs["ce_marked"]


def test_without_ecn_the_same_link_drops():
    r = ccbench.run(scenario(False))
    runs, snd = r.runs.iloc[0], r.counters.iloc[0]
    bn = bottleneck(r)
    assert bn["ce_marked"] == 0 and runs["ce_marked"] == 0
    assert runs["drops"] > 0 and bn["dropped_queue"] > 0
    assert snd["TcpExtTCPSackRecovery"] > 0, "drops are repaired in Recovery"


def test_ecn_runs_are_reproducible(with_ecn):
    again = ccbench.run(scenario(True))
    assert bottleneck(again) == bottleneck(with_ecn)
    cols = ["goodput_bps", "bytes_acked", "retransmits", "rtt_p50_ms", "cwnd_mean"]
    assert again.flows[cols].equals(with_ecn.flows[cols])
