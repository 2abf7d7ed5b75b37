"""Latency under load, RRUL-style, through the public API on the simulator backend:
``[[flows]] direction = "reverse"``, the flows table's ``direction`` column and the
probe percentiles of each sample interval in ``link_series``. The simulator-level tests are
crates/sim/tests/rrul.rs; the kernel backend's is in kernel/test_kernel_rrul.py."""

from __future__ import annotations

import math

import pytest

import ccbench
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario

RATE = 20e6
#: A direction carrying one flow's 1500-byte data packets and the other flow's 52-byte ACKs (at
#: least one per two segments) leaves the data >= 1 - 52/1552 of it; times 1448/1500 payload.
ACK_BOUND = (1 - 52 / 1552) * 1448 / 1500


def scenario(
    *directions: str, ping: str = "25ms", buffer: str = "1bdp", duration: str = "20s", aqm: str = "droptail"
) -> dict:
    return {
        "name": "rrul",
        "duration": duration,
        "seed": 1,
        "bottleneck": {"rate": "20Mbit", "rtt": "40ms", "buffer": buffer, "aqm": aqm},
        "flows": [{"cc": "cubic", **({"direction": d} if d else {})} for d in directions],
        "probe": {"ping": ping},
    }


@pytest.fixture(scope="module")
def both_ways():
    # FQ-CoDel: each direction's ACKs in their own queue (on a shared drop-tail FIFO two-way
    # traffic loses a phase-dependent share to ACK compression; crates/sim/tests/rrul.rs)
    return ccbench.run(scenario(None, "reverse", aqm="fq_codel"))


def test_direction_is_sent_and_hashed_only_when_reverse():
    fwd = Scenario.from_dict(scenario(None))
    explicit = Scenario.from_dict(scenario("forward"))
    rev = Scenario.from_dict(scenario("reverse"))
    # the default and an explicit "forward" are the same scenario, and say nothing new
    assert fwd.scenario_hash() == explicit.scenario_hash()
    assert "direction" not in fwd.canonical_json()
    for cfg in (fwd.sim_config()["flows"][0], fwd.sim_config_grouped()["flow_groups"][0]):
        assert "direction" not in cfg
    assert rev.scenario_hash() != fwd.scenario_hash()
    assert rev.normalised()["flows"][0]["direction"] == "reverse"
    assert rev.sim_config()["flows"][0]["direction"] == "reverse"
    assert rev.sim_config_grouped()["flow_groups"][0]["direction"] == "reverse"
    assert [f.direction for f in rev.expanded_flows()] == ["reverse"]


def test_an_unknown_direction_is_refused_naming_the_key():
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(scenario("sideways"))
    assert "flows.0.direction" in str(e.value)


def test_flows_table_says_which_way_each_flow_went(both_ways):
    r = both_ways
    assert r.runs.iloc[0]["status"] == "ok", r.runs.iloc[0]["error"]
    assert list(r.flows.sort_values("flow_id")["direction"]) == ["forward", "reverse"]
    for _, f in r.flows.iterrows():
        share = f["goodput_bps"] / RATE
        assert 0.85 <= share <= ACK_BOUND + 1e-9, (f["direction"], share)
    # an all-forward run fills the column too
    one = ccbench.run(scenario(None, ping="0", duration="2s"))
    assert list(one.flows["direction"]) == ["forward"]


def test_link_series_probe_percentiles(both_ways):
    ls = both_ways.link_series
    runs = both_ways.runs.iloc[0]
    has = ls["probe_rtt_ms"].notna()
    # null exactly where no reply arrived in the interval; p50 <= p95 where one did
    assert (ls["probe_rtt_p50_ms"].notna() == has).all() and (ls["probe_rtt_p95_ms"].notna() == has).all()
    got = ls[has]
    assert (got["probe_rtt_p50_ms"] <= got["probe_rtt_p95_ms"]).all()
    assert (got["probe_rtt_p50_ms"] >= 40.0 - 1e-9).all(), "no reply beats the base RTT"
    # four pings per 100 ms interval: a reply in every interval once the first has returned
    assert has.sum() >= len(ls) - 1
    # the same replies regrouped: the intervals' medians centre on the run's median
    med = float(got["probe_rtt_p50_ms"].median())
    assert math.isclose(med, runs["probe_rtt_p50_ms"], rel_tol=0.25), (med, runs["probe_rtt_p50_ms"])
    # ... and on a bloated drop-tail buffer the percentiles follow the queue over time
    bloat = ccbench.run(scenario(None, "reverse", buffer="8bdp", duration="10s"))
    p50 = bloat.link_series["probe_rtt_p50_ms"]
    assert p50.iloc[:3].max() < 2 * 40.0, "empty queues at the start"
    assert p50.max() > 4 * 40.0, "the queues fill"
    med = float(p50.median())
    assert math.isclose(med, bloat.runs.iloc[0]["probe_rtt_p50_ms"], rel_tol=0.25)


def test_no_probe_no_percentiles():
    r = ccbench.run(scenario("reverse", ping="0", duration="2s"))
    ls = r.link_series
    assert len(ls) > 0
    assert ls["probe_rtt_p50_ms"].isna().all() and ls["probe_rtt_p95_ms"].isna().all()


def test_reverse_load_bloats_the_probe_and_fq_codel_fixes_it():
    """The RRUL point: upload traffic alone delays the ping, whose reply queues behind it."""
    bloat = ccbench.run(scenario("reverse", ping="100ms", buffer="16bdp", duration="30s")).runs.iloc[0]
    assert bloat["probe_rtt_p50_ms"] >= 8 * 40.0, bloat["probe_rtt_p50_ms"]
    sc = scenario("reverse", ping="100ms", buffer="16bdp", duration="30s")
    sc["bottleneck"]["aqm"] = "fq_codel"
    fixed = ccbench.run(sc).runs.iloc[0]
    assert fixed["probe_rtt_p95_ms"] <= 40.0 + 10.0, fixed["probe_rtt_p95_ms"]
