"""``bottleneck.aqm = "dualpi2"`` in the scenario: Linux's defaults (sch_dualpi2.c
``dualpi2_reset_default``), ``step_thresh`` as a sojourn time or packets, the memory limit that
follows a given packet limit, the keys checked against their ranges, and the Rust side's list
of parameters matching ours. The queue: crates/queue/src/dualpi2.rs; end to end:
tests/sim/test_dualpi2_l4s.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ccbench.scenario import aqm
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario
from conftest import minimal_dict

AQM_RS = Path(__file__).resolve().parents[2] / "crates" / "queue" / "src" / "aqm.rs"
MS = 1_000_000


def scenario(params=None) -> Scenario:
    b = {"rate": "20Mbit", "rtt": "40ms", "aqm": "dualpi2"}
    if params is not None:
        b["aqm_params"] = params
    return Scenario.from_dict(minimal_dict(bottleneck=b))


def test_the_rust_side_takes_the_same_parameters():
    rust = re.search(r'"dualpi2" => &\[(.*?)\]', AQM_RS.read_text(), re.S).group(1)
    rust_keys = set(re.findall(r'"(\w+)"', rust))
    wire = set()
    for p in aqm.PARAMS["dualpi2"]:
        wire |= {"step_thresh_ns", "step_thresh_packets"} if p.kind == "step" else {p.wire}
    assert wire == rust_keys


def test_defaults_are_linuxs():
    # target 15 ms, tupdate 16 ms, alpha 41 / beta 819 in 1/256 Hz (0.16 and 3.2 Hz), step 1 ms
    # of sojourn, k = 2, wc = 10 %, limit 10 000 packets, memory 10 000 × 2 × 1514 B.
    assert scenario().aqm_wire == {
        "target_ns": 15 * MS,
        "tupdate_ns": 16 * MS,
        "alpha": 41,
        "beta": 819,
        "step_thresh_ns": MS,
        "min_qlen_step": 0,
        "coupling": 2,
        "c_protection": 10,
        "limit_packets": 10_000,
        "memory_limit": 30_280_000,
        "drop_overload": True,
        "drop_early": False,
    }


@pytest.mark.parametrize(
    "params, expect",
    [
        ({"step_thresh": "500us"}, {"step_thresh_ns": 500_000}),
        ({"step_thresh": "5pkt"}, {"step_thresh_packets": 5}),
        ({"step_thresh": 5}, {"step_thresh_packets": 5}),
        # a given packet limit carries the memory limit: 100 × 2 × 1514
        ({"limit": 100}, {"limit_packets": 100, "memory_limit": 302_800}),
        ({"limit": 100, "memory_limit": "1MB"}, {"limit_packets": 100, "memory_limit": 1_000_000}),
        ({"coupling": 1, "c_protection": 50}, {"coupling": 1, "c_protection": 50}),
    ],
)
def test_given_parameters(params, expect):
    w = scenario(params).aqm_wire
    for k, v in expect.items():
        assert w[k] == v, (k, w)
    if "step_thresh_packets" in expect:
        assert "step_thresh_ns" not in w, "one step, in one unit"


@pytest.mark.parametrize(
    "params, key, words",
    [
        ({"coupling": 0}, "coupling", ["out of range", "from 1 to 255"]),
        ({"c_protection": 101}, "c_protection", ["out of range", "from 0 to 100"]),
        ({"alpha": 0}, "alpha", ["out of range"]),
        ({"step_thresh": "soon"}, "step_thresh", ["sojourn time", "5pkt"]),
        ({"step_thresh": 1.5}, "step_thresh", ["neither a time nor a packet count"]),
        ({"k": "5pkt"}, "k", ["not a parameter of dualpi2", "step_thresh"]),
        ({"drop_overload": 1}, "drop_overload", ["not a boolean"]),
    ],
)
def test_bad_parameters_give_one_line_naming_the_key(params, key, words):
    with pytest.raises(ScenarioError) as e:
        scenario(params)
    assert e.value.key == f"bottleneck.aqm_params.{key}"
    line = str(e.value)
    assert "\n" not in line, line
    for w in words:
        assert w in line, line
