"""DualPI2 and TCP Prague through the public API (``aqm = "dualpi2"``, ``cc = "prague"``): the
scenario's resolved parameters reach the results, and one Prague flow alone at 50 Mbit/s,
20 ms is held at the L queue's 1 ms step by CE marks, with no loss. The queue's unit tests are
in crates/queue/src/dualpi2.rs, the scenario-level ones (coupling law, PI2 target) in
crates/sim/tests/l4s.rs."""

from __future__ import annotations

import json

import ccbench
from ccbench.scenario.model import Scenario

RATE = 50e6


def test_prague_alone_through_dualpi2_is_marked_at_the_step():
    d = {
        "name": "l4s",
        "duration": "10s",
        "seed": 1,
        "bottleneck": {"rate": "50Mbit", "rtt": "20ms", "aqm": "dualpi2"},
        "flows": [{"cc": "prague"}],
    }
    r = ccbench.run(Scenario.from_dict(d), backend="sim")
    runs, flow = r.runs.iloc[0], r.flows.iloc[0]
    assert runs["status"] == "ok", runs["error"]
    assert runs["aqm"] == "dualpi2"
    params = json.loads(runs["aqm_params"])
    assert (params["target_ns"], params["step_thresh_ns"], params["coupling"]) == (15_000_000, 1_000_000, 2)
    # Prague sends ECT(1) (the L queue) whatever the flow's ecn: marks, never a drop.
    assert runs["ce_marked"] > 0 and runs["drops"] == 0 and flow["retransmits"] == 0
    # The step marks every packet that waited more than 1 ms, and Prague answers each round's
    # marks: the queue's 99th percentile stays within 2 ms (slow start included).
    assert runs["sojourn_p99_ms"] <= 2.0, runs["sojourn_p99_ms"]
    # A queue held at about the step is rarely empty: at least 85 % of the rate as goodput
    # (payload is 1448/1500 of the IP bytes).
    assert flow["goodput_bps"] >= 0.85 * RATE, flow["goodput_bps"]
