"""Run a scenario on the simulator with ``[output] pcap`` and return the capture's path: the
closed loop behind ``ccbench fit --check`` and the fit tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Mapping

__all__ = ["simulate_capture"]


def simulate_capture(scenario: Mapping[str, Any], pcap: Path) -> dict:
    """Run the TOML-shaped ``scenario`` on the simulator, flow 0 captured to ``pcap``; returns
    the simulator's JSON report. Raises ScenarioError on a bad scenario, RuntimeError when the
    simulator fails."""
    from .. import _sim  # type: ignore[attr-defined]
    from ..scenario.model import Scenario

    d = copy.deepcopy(dict(scenario))
    d["output"] = {"pcap": str(Path(pcap).resolve())}
    sc = Scenario.from_dict(d)
    try:
        return json.loads(_sim.run_json(json.dumps(sc.sim_config_grouped())))
    except ValueError as e:
        raise RuntimeError(f"simulator: {e}") from None
