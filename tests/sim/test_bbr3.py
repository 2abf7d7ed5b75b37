"""BBR v3 (``cc = "bbr3"``, google/bbr v3 tcp_bbr.c) through the public API: the scenario accepts
it, the kernel backend refuses it with the reason, ``ccbench algorithms`` lists it, and a run's
series carry its v3 phases and bandwidth estimate as v1's carry its modes. The model's own tests
are crates/sim/src/cc/bbr3/tests.rs."""

from __future__ import annotations

import pytest

import ccbench
from ccbench.backends import algorithms, check
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario
from conftest import minimal_dict


def scenario(cc: str, **top) -> Scenario:
    return Scenario.from_dict(minimal_dict(flows=[{"cc": cc}], **top), source="bbr3-test.toml")


def test_the_scenario_accepts_bbr3_and_points_other_spellings_at_it():
    assert scenario("bbr3").flows[0].cc == "bbr3"
    with pytest.raises(ScenarioError, match="spelled `bbr3`"):
        scenario("bbrv3")
    with pytest.raises(ScenarioError, match="not modelled yet"):
        scenario("bbr2")


def test_the_kernel_backend_refuses_bbr3_because_its_bbr_is_v1():
    with pytest.raises(ScenarioError) as err:
        check(scenario("bbr3"), "kernel")
    why = [p for key, p, _ in err.value.problems if key == "flows.0.cc"]
    assert len(why) == 1 and "BBR v1" in why[0] and "BBR v3" in why[0]


def test_algorithms_lists_bbr3_with_its_source():
    (row,) = [a for a in algorithms("sim") if a["name"] == "bbr3"]
    assert "google/bbr" in row["linux"] and "BBR_VERSION 3" in row["linux"]
    assert "0.5 BDP" in row["notes"] and "every 5 s" in row["notes"]


def test_a_run_exposes_the_v3_phases_and_bandwidth_estimate():
    r = ccbench.run(
        minimal_dict(
            duration="8s", bottleneck={"rate": "20Mbit", "rtt": "40ms", "buffer": "1bdp"}, flows=[{"cc": "bbr3"}]
        )
    )
    states = set(r.series["cc_state"])
    # bbr_get_phase's names, lower case as every backend spells cc_state.
    assert {"startup", "probe_bw_cruise"} <= states
    assert states <= {
        "startup",
        "drain",
        "probe_bw_down",
        "probe_bw_cruise",
        "probe_bw_refill",
        "probe_bw_up",
        "probe_rtt",
    }
    # A probe starts within 2-3 s of the first DOWN (wall clock) or after min(63, BDP) rounds
    # (BDP = 20e6 / 12000 x 0.04 = 67 packets: 63 rounds x 40 ms = 2.5 s): by 8 s there was one.
    assert "probe_bw_up" in states
    # The estimate is the payload delivery rate: 20 Mbit/s x 1448 / 1500 = 19.3 Mbit/s.
    late = r.series[r.series["t_s"] > 2.0]["bw_est_bps"]
    assert late.median() == pytest.approx(20e6 * 1448 / 1500, rel=0.05)
