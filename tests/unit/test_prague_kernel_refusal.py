"""``cc = "prague"`` is the simulator's (crates/sim/src/cc/prague.rs): TCP Prague is not in
mainline Linux, so the kernel backend refuses it with that reason, naming the flow's key and
pointing at the sim backend; the simulator lists it with the source it follows."""

from __future__ import annotations

import json

import pytest

from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario


def test_the_kernel_backend_refuses_prague_naming_the_reason(monkeypatch):
    from ccbench.backends.kernel import backend

    # a kernel without tcp_prague, whatever this host has
    monkeypatch.setattr(backend, "available_algorithms", lambda: ["reno", "cubic"])
    sc = Scenario.from_dict(
        {
            "duration": "5s",
            "bottleneck": {"rate": "20Mbit", "rtt": "20ms", "aqm": "dualpi2"},
            "flows": [{"cc": "prague"}],
        }
    )
    with pytest.raises(ScenarioError) as e:
        backend.check(sc)
    (p,) = [p for p in e.value.problems if p[0] == "flows.0.cc"]
    assert "no tcp_prague" in p[1] and "not in mainline Linux" in p[1]
    assert "sim backend" in p[2]


def test_the_simulator_lists_prague_with_its_source():
    from ccbench import _sim  # type: ignore[attr-defined]

    (row,) = [r for r in json.loads(_sim.algorithms_json()) if r["name"] == "prague"]
    assert "L4STeam/linux" in row["linux"] and "tcp_prague.c" in row["linux"]
    assert "Accurate ECN" in row["notes"] and "ECT(1)" in row["notes"]
