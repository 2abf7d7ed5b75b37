"""ccbench: which TCP congestion control should I use on this network?

    import ccbench
    r = ccbench.run("scenario.toml", overrides=["bottleneck.loss=1%"])
    r.flows, r.runs, r.series, r.link_series   # pandas DataFrames (columns: docs/results.md)
    r.save("out/")                             # a store directory: ccbench.load("out/")
    res = ccbench.sweep("scenario.toml", "sweep-out/", repeat=5)
"""
__version__ = "0.2.0"

from .api import load, run  # noqa: E402
# ccbench.sweep is the module ccbench/sweep.py, made callable: ccbench.sweep(scenario, out, ...)
# is ccbench.api.sweep, and ccbench.sweep.run_sweep stays reachable (one name, whatever the
# import order).
from . import sweep  # noqa: E402
from .scenario import Scenario, ScenarioError, load_scenario  # noqa: E402

__all__ = ["__version__", "run", "sweep", "load", "Scenario", "ScenarioError", "load_scenario"]
