"""Backends: each module has ``run(scenario) -> RunResult``, ``check(scenario) -> None`` (raises
ScenarioError for what it cannot run) and ``algorithms() -> list[dict(name, linux, notes)]``.

The simulator is always there; ``kernel`` and ``ns3`` are imported when first asked for, so that
a missing optional dependency (pyroute2, the ns3 wheel) never breaks ``import ccbench``.
"""

from __future__ import annotations

from types import ModuleType

from ..scenario.errors import ScenarioError
from ..scenario.model import Scenario

__all__ = ["BACKENDS", "get_backend", "run", "check", "algorithms", "available_backends", "BackendUnavailable"]

#: Known backend names, in the order they are shown.
BACKENDS = ("sim", "kernel", "ns3")


class BackendUnavailable(ScenarioError):
    """The backend cannot be imported here (an optional dependency is not installed). A
    ScenarioError so the CLI reports it as bad input, in one line."""

    def __init__(self, name: str, reason: str):
        super().__init__(None, "backend", f"'{name}' is not available: {reason}", "one of " + ", ".join(BACKENDS))
        self.name = name
        self.reason = reason

    def __reduce__(self):
        return (BackendUnavailable, (self.name, self.reason))


def _load(name: str) -> ModuleType:
    # imported here, not at the top: an optional backend's dependencies load only when it is used
    if name == "sim":
        from . import sim as backend
    elif name == "kernel":
        from . import kernel as backend
    else:
        from . import ns3 as backend
    return backend


def get_backend(name: str) -> ModuleType:
    """The backend module ``ccbench.backends.<name>``."""
    if name not in BACKENDS:
        raise ScenarioError(None, "backend", f"unknown backend '{name}'", "one of " + ", ".join(BACKENDS))
    try:
        return _load(name)
    except ModuleNotFoundError as e:
        raise BackendUnavailable(name, f"it needs the module '{e.name}', which is not installed") from None
    except ImportError as e:
        raise BackendUnavailable(name, str(e)) from None


def available_backends() -> dict[str, str | None]:
    """``{name: None}`` for importable backends, ``{name: reason}`` for the others."""
    out: dict[str, str | None] = {}
    for name in BACKENDS:
        try:
            get_backend(name)
            out[name] = None
        except BackendUnavailable as e:
            out[name] = e.reason
    return out


def check(scenario: Scenario, backend: str = "sim") -> None:
    get_backend(backend).check(scenario)


def run(scenario: Scenario, backend: str = "sim"):
    """Check the scenario against the backend (ScenarioError if it cannot run it), then run."""
    mod = get_backend(backend)
    mod.check(scenario)
    return mod.run(scenario)


def algorithms(backend: str = "sim") -> list[dict]:
    """``[{"name", "linux", "notes"}]`` for one backend."""
    return list(get_backend(backend).algorithms())
