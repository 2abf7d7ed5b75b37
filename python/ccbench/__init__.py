"""ccbench: which TCP congestion control should I use on this network?

    import ccbench
    r = ccbench.run("scenario.toml", overrides=["bottleneck.loss=1%"])
    r.flows, r.runs, r.series, r.link_series   # pandas DataFrames (columns: docs/results.md)
    r.save("out/")                             # a store directory: ccbench.load("out/")
    res = ccbench.sweep("scenario.toml", "sweep-out/", repeat=5)

The package: docs/internal-api.md draws its modules and the direction of their imports.
"""

__version__ = "0.3.0"

from .api import load, run, sweep  # noqa: E402
from .scenario.errors import ScenarioError
from .scenario.model import Scenario, load_scenario  # noqa: E402

__all__ = ["__version__", "run", "sweep", "load", "Scenario", "ScenarioError", "load_scenario"]
