"""The one scenario schema (docs/scenario.md): what a run is, validated before anything runs.

- ``model``: the pydantic models (Scenario and its tables), cross-key limits, ``load_scenario``,
  and the lowering to the simulator's JSON (``Scenario.sim_config``);
- ``parse``: TOML text to a dict, ``--set`` overrides; ``errors``: ScenarioError;
- ``aqm``, ``wifi``, ``trace_file``: the queue disciplines', Wi-Fi hop's and delivery traces' keys;
- ``limits``: the limits every scenario stays within (docs/limits.md).
"""

from .errors import ScenarioError
from .model import (
    BASE_ALGORITHMS,
    DEFAULT_RWND_BYTES,
    EXTRA_ALGORITHMS,
    MSS,
    MTU,
    UNMODELLED_ALGORITHMS,
    Access,
    Bottleneck,
    FlowGroup,
    FlowSpec,
    LossModel,
    Probe,
    Scenario,
    Wifi,
    known_algorithms,
    load_scenario,
)
from .parse import parse_override_value, parse_overrides, parse_toml, read_toml_text

__all__ = [
    "Scenario",
    "ScenarioError",
    "load_scenario",
    "FlowSpec",
    "Wifi",
    "Access",
    "Bottleneck",
    "FlowGroup",
    "LossModel",
    "Probe",
    "BASE_ALGORITHMS",
    "EXTRA_ALGORITHMS",
    "UNMODELLED_ALGORITHMS",
    "DEFAULT_RWND_BYTES",
    "MTU",
    "MSS",
    "known_algorithms",
    "parse_overrides",
    "parse_override_value",
    "parse_toml",
    "read_toml_text",
]
