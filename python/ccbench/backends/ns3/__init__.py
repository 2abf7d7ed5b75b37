"""The ns-3 backend: the same scenario on ns-3 (the ``ns3`` wheel's C++ SDK) through
ccbench_ns3.cc, compiled on first use (docs/ns3-backend.md). ``backend``: the interface."""

from .backend import (
    ALGORITHMS,
    MAX_FLOWS,
    NAME,
    NS3_AQMS,
    NS3_VERSION,
    Ns3Unavailable,
    algorithms,
    binary,
    check,
    config_text,
    problem,
    run,
    sdk_dir,
)

__all__ = [
    "NAME",
    "NS3_VERSION",
    "ALGORITHMS",
    "NS3_AQMS",
    "MAX_FLOWS",
    "run",
    "check",
    "algorithms",
    "binary",
    "config_text",
    "problem",
    "sdk_dir",
    "Ns3Unavailable",
]
