"""ccbench: which TCP congestion control should I use on this network?

    import ccbench
    r = ccbench.run("scenario.toml", overrides=["bottleneck.loss=1%"])
    r.flows, r.runs, r.series          # pandas DataFrames
"""
__version__ = "0.2.0"

from .api import load, run  # noqa: E402
from .scenario import Scenario, ScenarioError, load_scenario  # noqa: E402

__all__ = ["__version__", "run", "load", "Scenario", "ScenarioError", "load_scenario"]
