"""``bottleneck.aqm = "step"`` in the scenario: ``k`` and ``limit`` in packets ("65pkt" or an
integer) or bytes (a size), the defaults (K = 65 packets, the limit the buffer in bytes), the
resolved parameters the results record, and one-line errors naming the key and what is
accepted. The queue itself: crates/queue/src/step.rs; end to end: tests/sim/test_step_marking.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ccbench.scenario import aqm
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario
from conftest import minimal_dict

AQM_RS = Path(__file__).resolve().parents[2] / "crates" / "queue" / "src" / "aqm.rs"


def scenario(params=None, **bottleneck) -> Scenario:
    # 20 Mbit/s, 40 ms: 1 BDP = 100 kB, the default limit.
    b = {"rate": "20Mbit", "rtt": "40ms", "aqm": "step", **bottleneck}
    if params is not None:
        b["aqm_params"] = params
    return Scenario.from_dict(minimal_dict(bottleneck=b))


def refusal(params=None, **bottleneck) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        scenario(params, **bottleneck)
    return e.value


def test_step_is_a_discipline_on_both_sides():
    assert "step" in aqm.NAMES
    rust = re.search(r"pub const NAMES: \[&str; \d+\] = \[(.*?)\];", AQM_RS.read_text()).group(1)
    assert tuple(re.findall(r'"(\w+)"', rust)) == aqm.NAMES


def test_defaults_k_65_packets_and_the_buffer_as_limit():
    assert scenario().aqm_wire == {"k_packets": 65, "limit_bytes": 100_000}
    # a buffer in packets is the limit in bytes, 1500 B a packet (as RED's default limit)
    assert scenario(buffer="300pkt").aqm_wire == {"k_packets": 65, "limit_bytes": 450_000}
    assert scenario(buffer="256KB").aqm_wire["limit_bytes"] == 256_000


@pytest.mark.parametrize(
    "params, wire",
    [
        ({"k": "20pkt"}, {"k_packets": 20, "limit_bytes": 100_000}),
        ({"k": 20}, {"k_packets": 20, "limit_bytes": 100_000}),
        ({"k": "20 packets"}, {"k_packets": 20, "limit_bytes": 100_000}),
        ({"k": "30KB"}, {"k_bytes": 30_000, "limit_bytes": 100_000}),
        ({"k": "97500B", "limit": "200KiB"}, {"k_bytes": 97_500, "limit_bytes": 204_800}),
        ({"k": "20pkt", "limit": 100}, {"k_packets": 20, "limit_packets": 100}),
        ({"limit": "500pkt"}, {"k_packets": 65, "limit_packets": 500}),
    ],
)
def test_k_and_limit_in_packets_or_bytes(params, wire):
    assert scenario(params).aqm_wire == wire


def test_only_given_parameters_enter_the_hash_and_units_do_not_matter():
    plain = scenario()
    assert "aqm_params" not in plain.normalised()["bottleneck"]
    k = scenario({"k": "20pkt"})
    assert k.normalised()["bottleneck"]["aqm_params"] == {"k_packets": 20}
    assert scenario({"k": 20}).scenario_hash() == k.scenario_hash()
    assert scenario({"k": "30KB"}).scenario_hash() == scenario({"k": "30000B"}).scenario_hash()
    assert scenario({"k": "30000B"}).scenario_hash() != scenario({"k": 20}).scenario_hash()


def test_resolved_parameters_are_the_aqm_params_column():
    assert aqm.params_json(scenario({"k": "30KB"}).aqm_wire) == '{"k_bytes":30000,"limit_bytes":100000}'


@pytest.mark.parametrize(
    "params, bottleneck, key, words",
    [
        ({"k": "-3pkt"}, {}, "k", ["'-3pkt' is negative", '"65pkt" or an integer count', '"97500B"']),
        ({"k": -3}, {}, "k", ["-3 is negative"]),
        ({"k": 0}, {}, "k", ["out of range", "from 1 to"]),
        ({"k": "0pkt"}, {}, "k", ["holds no packet"]),
        ({"k": 6.5}, {}, "k", ["not an integer count of packets"]),
        ({"k": "65"}, {}, "k", ["has no unit"]),
        ({"k": "0.2bdp"}, {}, "k", ["does not know the BDP"]),
        ({"k": "65 parsecs"}, {}, "k", ["unknown unit"]),
        ({"limit": "lots"}, {}, "limit", ["does not parse"]),
        ({"ecn": True}, {}, "ecn", ["not a parameter of step", "step takes k, limit"]),
        ({"target": "5ms"}, {}, "target", ["not a parameter of step", "codel"]),
        # K at or above the limit: the step would never mark
        ({"k": "100pkt", "limit": "100pkt"}, {}, "k", ["'100pkt' is not below limit, 100 packets", "never mark"]),
        ({"k": "200KB"}, {}, "k", ["'200KB' is not below the buffer", "100000 B", "never mark"]),
        ({"k": 70, "limit": "100KB"}, {}, "k", ["70 is not below limit, 100000 B", "1500 B"]),
        # the default K against a small buffer: 10 Mbit/s, 40 ms = 50 kB < 65 packets
        ({}, {"rate": "10Mbit"}, "k", ["the default k (65 packets)", "50000 B", 'k = "20pkt"']),
    ],
)
def test_bad_parameters_give_one_line_naming_the_key(params, bottleneck, key, words):
    e = refusal(params, **bottleneck)
    assert e.key == f"bottleneck.aqm_params.{key}"
    line = str(e)
    assert "\n" not in line and "(expected " in line, line
    for w in words:
        assert w in line, line


def test_the_default_k_is_fine_with_a_given_limit_over_a_small_buffer():
    sc = scenario({"limit": "100pkt"}, rate="10Mbit")
    assert sc.aqm_wire == {"k_packets": 65, "limit_packets": 100}


def test_overrides_sweep_k():
    sc = scenario().with_overrides({"bottleneck.aqm_params.k": "30pkt"})
    assert sc.aqm_wire["k_packets"] == 30
