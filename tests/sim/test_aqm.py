"""Queue disciplines from the scenario to the results: ``bottleneck.aqm`` and
``[bottleneck.aqm_params]`` parsed and checked with one-line errors, the defaults resolved the
same way in Python (ccbench/scenario/aqm.py) and in the simulator (crates/queue/src/aqm.rs),
the discipline and its parameters and the sojourn times in the results, the kernel backend's
check taking every AQM, and the bufferbloat contrast end to end. The simulator-level behaviour tests
are in crates/sim/tests/aqm.rs."""

from __future__ import annotations

import json

import pytest

from ccbench.backends import check, run
from ccbench.scenario import aqm
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario
from conftest import minimal_dict


def scenario(aqm_name="droptail", params=None, **bottleneck) -> Scenario:
    b = {"rate": "20Mbit", "rtt": "40ms", "aqm": aqm_name, **bottleneck}
    if params is not None:
        b["aqm_params"] = params
    return Scenario.from_dict(minimal_dict(bottleneck=b, duration="3s", probe={"ping": "100ms"}))


def refusal(**bottleneck) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        scenario(**bottleneck)
    return e.value


# ---- scenario: names, parameters, errors -----------------------------------------------------


def test_every_discipline_is_accepted_and_resolved_with_linux_defaults():
    assert scenario("codel").aqm_wire == {
        "target_ns": 5_000_000,
        "interval_ns": 100_000_000,
        "limit_packets": 1000,
        "ecn": False,
    }
    fq_codel = scenario("fq_codel").aqm_wire
    assert (fq_codel["flows"], fq_codel["quantum"], fq_codel["limit_packets"], fq_codel["ecn"]) == (
        1024,
        1514,
        10240,
        True,
    )
    pie = scenario("pie").aqm_wire
    assert (pie["target_ns"], pie["tupdate_ns"], pie["alpha"], pie["beta"]) == (15_000_000, 15_000_000, 2, 20)
    fq = scenario("fq").aqm_wire
    assert (fq["limit_packets"], fq["flow_limit"], fq["quantum"]) == (10000, 100, 3028)
    assert "maxrate_bps" not in fq, "fq's per-flow rate cap is off unless given"
    # RED from the buffer: 1 BDP = 100 kB here; min = limit / 10, max = 3 min.
    red = scenario("red").aqm_wire
    assert (red["limit_bytes"], red["min_bytes"], red["max_bytes"], red["probability"]) == (
        100_000,
        10_000,
        30_000,
        0.1,
    )
    assert scenario("droptail").aqm_wire == {}


def test_given_parameters_are_parsed_with_units_and_override_defaults():
    w = scenario("fq_codel", {"target": "2ms", "interval": "50ms", "quantum": "300B", "ecn": False}).aqm_wire
    assert (w["target_ns"], w["interval_ns"], w["quantum"], w["ecn"]) == (2_000_000, 50_000_000, 300, False)
    w = scenario("red", {"limit": "200KB", "min": "30KB", "probability": "2%"}).aqm_wire
    assert (w["limit_bytes"], w["min_bytes"], w["max_bytes"], w["probability"]) == (200_000, 30_000, 90_000, 0.02)
    assert scenario("fq", {"maxrate": "5Mbit"}).aqm_wire["maxrate_bps"] == 5_000_000


@pytest.mark.parametrize(
    "name, params, key, words",
    [
        (
            "codel",
            {"quantum": "300B"},
            "bottleneck.aqm_params.quantum",
            ["not a parameter of codel", "fq_codel", "target, interval, limit, ecn"],
        ),
        (
            "droptail",
            {"limit": 100},
            "bottleneck.aqm_params.limit",
            ["droptail takes no parameters", "bottleneck.buffer"],
        ),
        ("pie", {"target": "5 parsecs"}, "bottleneck.aqm_params.target", ["unknown unit", "duration"]),
        ("fq_codel", {"limit": 0}, "bottleneck.aqm_params.limit", ["out of range", "integer from 1"]),
        ("pie", {"alpha": 40}, "bottleneck.aqm_params.alpha", ["out of range", "0 to 32"]),
        ("codel", {"ecn": "yes"}, "bottleneck.aqm_params.ecn", ["not a boolean", "true or false"]),
        ("red", {"min": "50KB", "max": "40KB"}, "bottleneck.aqm_params.max", ["not above min", "min < max"]),
        ("red", {"probability": "0%"}, "bottleneck.aqm_params.probability", ["not above 0%"]),
        ("codel", "fast", "bottleneck.aqm_params", ["not a table"]),
    ],
)
def test_bad_parameters_give_one_line_naming_the_key_and_what_is_accepted(name, params, key, words):
    e = refusal(aqm_name=name, params=params)
    assert e.key == key
    line = str(e)
    assert "\n" not in line and "(expected " in line, line
    for w in words:
        assert w in line, line


def test_unknown_discipline_lists_the_accepted_ones():
    e = refusal(aqm_name="sfq")
    assert e.key == "bottleneck.aqm"
    assert all(n in str(e) for n in aqm.NAMES), str(e)


def test_parameters_enter_the_scenario_hash_only_when_given():
    plain = scenario("codel")
    assert "aqm_params" not in plain.normalised()["bottleneck"], "old scenarios keep their hash"
    tuned = scenario("codel", {"target": "10ms"})
    assert tuned.normalised()["bottleneck"]["aqm_params"] == {"target_ns": 10_000_000}
    assert tuned.scenario_hash() != plain.scenario_hash()
    # the same value written differently is the same scenario
    assert scenario("codel", {"target": "0.01s"}).scenario_hash() == tuned.scenario_hash()


def test_overrides_sweep_the_discipline_and_its_parameters():
    sc = scenario("droptail").with_overrides({"bottleneck.aqm": "pie", "bottleneck.aqm_params.target": "5ms"})
    assert sc.bottleneck.aqm == "pie" and sc.aqm_wire["target_ns"] == 5_000_000


# ---- simulator: defaults agree, results carry the discipline ---------------------------------


@pytest.mark.parametrize("name", aqm.NAMES)
@pytest.mark.parametrize("buffer", ["1bdp", "300pkt"])
def test_python_and_simulator_resolve_the_same_defaults(name, buffer):
    """Send no parameters: the simulator fills its own defaults (crates/queue/src/aqm.rs from
    ccbench-queue's Linux constants) and reports them; they must be Python's."""
    from ccbench import _sim

    sc = scenario(name, buffer=buffer)
    cfg = sc.sim_config()
    cfg["bottleneck"]["aqm_params"] = {}
    report = json.loads(_sim.run_json(json.dumps(cfg)))
    assert report["run"]["aqm"] == name
    assert report["run"]["aqm_params"] == sc.aqm_wire


@pytest.mark.parametrize("name", aqm.NAMES)
def test_every_discipline_runs_and_is_recorded_in_the_results(name):
    sc = scenario(name)
    r = run(sc, "sim")
    runs = r.runs.iloc[0]
    assert runs["status"] == "ok", runs["error"]
    assert runs["aqm"] == name and json.loads(runs["aqm_params"]) == sc.aqm_wire
    assert r.flows["aqm_params"].iloc[0] == runs["aqm_params"], "a descriptor column of both tables"
    assert 0 <= runs["sojourn_p50_ms"] <= runs["sojourn_p95_ms"] <= runs["sojourn_p99_ms"]
    assert "sojourn_ms" in r.link_series.columns and r.link_series["sojourn_ms"].notna().any()
    for link in r.links:  # packet conservation per link
        assert link["arrived"] == link["departed"] + link["dropped_queue"] + link["dropped_loss"] + link["held"]


def test_deep_droptail_bloats_fq_codel_does_not():
    """Bufferbloat through the Python API: 16 BDP, one CUBIC flow, 20 s. CUBIC fills the drop-tail
    queue, so the ping waits behind up to 16 BDPs (median at least 8 base RTTs); FQ-CoDel serves
    the sparse ping first and holds the bulk queue near its 5 ms target (ping p95 within 10 ms of
    the base RTT, at 90 % of the rate or more)."""

    def go(name):
        sc = Scenario.from_dict(
            minimal_dict(
                duration="20s",
                probe={"ping": "100ms"},
                bottleneck={"rate": "20Mbit", "rtt": "40ms", "buffer": "16bdp", "aqm": name},
            )
        )
        return run(sc, "sim").runs.iloc[0]

    dt, fq = go("droptail"), go("fq_codel")
    assert dt["probe_rtt_p50_ms"] >= 8 * 40, dt["probe_rtt_p50_ms"]
    assert fq["probe_rtt_p95_ms"] <= 40 + 10, fq["probe_rtt_p95_ms"]
    assert fq["aggregate_goodput_bps"] >= 0.9 * 20e6, fq["aggregate_goodput_bps"]
    assert dt["sojourn_p50_ms"] > 20 * fq["sojourn_p50_ms"]


# ---- kernel backend --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["codel", "fq_codel", "pie", "red", "fq"])
def test_kernel_backend_takes_every_aqm(name):
    """ccbench-link serves every discipline (crates/link/src/served.rs): whatever else the kernel
    backend's check finds missing on this machine (root, iperf3), never the AQM."""
    try:
        check(scenario(name), "kernel")
    except ScenarioError as e:
        assert not [p for p in e.problems if p[0] == "bottleneck.aqm"], e.problems
