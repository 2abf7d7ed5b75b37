"""The embedded simulator backend (crates/sim through the PyO3 module ``ccbench._sim``).

JSON in (``Scenario.sim_config()``, crates/sim/src/config.rs), JSON out
(crates/sim/src/report.rs), converted to the shared result schema by ``build_result``.
"""
from __future__ import annotations

import functools
import json
import time

from ..results import COUNTER_SIDES, RunResult, build_result, failed_result
from ..scenario import Scenario, ScenarioError

__all__ = ["NAME", "run", "check", "algorithms", "SIM_AQMS"]

NAME = "sim"
#: Queue disciplines the simulator implements so far.
SIM_AQMS = ("droptail",)


def _sim():
    from .. import _sim  # type: ignore[attr-defined]

    return _sim


@functools.lru_cache(maxsize=1)
def _algorithms() -> tuple[dict, ...]:
    return tuple(json.loads(_sim().algorithms_json()))


def algorithms() -> list[dict]:
    """``[{"name", "linux", "notes"}]`` as the built simulator reports them."""
    return [dict(a) for a in _algorithms()]


def check(scenario: Scenario) -> None:
    """Refuse what the simulator cannot run yet (other AQMs, algorithms it lacks)."""
    problems = []
    aqm = scenario.bottleneck.aqm
    if aqm not in SIM_AQMS:
        problems.append(
            ("bottleneck.aqm", f"'{aqm}' is not implemented in the sim backend yet", " or ".join(SIM_AQMS))
        )
    names = [a["name"] for a in _algorithms()]
    for i, g in enumerate(scenario.flows):
        if g.cc not in names:
            problems.append(
                (f"flows.{i}.cc", f"the sim backend cannot run '{g.cc}' yet", "one of " + ", ".join(names))
            )
    if problems:
        key, problem, expected = problems[0]
        raise ScenarioError(scenario.source, key, problem, expected, problems)


def run(scenario: Scenario) -> RunResult:
    """Run on the simulator. A simulator error gives a RunResult with status "failed"."""
    cfg = json.dumps(scenario.sim_config(), separators=(",", ":"))
    t0 = time.perf_counter()
    try:
        out = _sim().run_json(cfg)
    except ValueError as e:
        return failed_result(scenario, NAME, str(e), time.perf_counter() - t0)
    wall = time.perf_counter() - t0
    report = json.loads(out)
    series = report.get("series")
    if series and series.get("cc_state"):
        # the kernel's spelling (tcp_info / tcp_bbr.c names in lower case: "open", "probe_bw")
        series["cc_state"] = [v.lower() if v else v for v in series["cc_state"]]
    run_extra = dict(report.get("run", {}))
    run_extra.pop("duration_s", None)
    # MIB counters per side (report.rs `counters`); a simulator build without them gives the
    # same two rows with every counter null, so the table has one shape on every build
    counters = report.get("counters")
    if counters is None:
        counters = [{"side": side} for side in COUNTER_SIDES]
    result = build_result(
        scenario, NAME, report.get("flows", []), series, run_extra, wall,
        link_series=report.get("link_series"), counters=counters,
    )
    result.links = report.get("links", [])  # packet-conservation counters per link
    return result
