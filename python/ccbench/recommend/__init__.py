"""``ccbench recommend``: which congestion control for this link, with evidence and how sure.

The user's link figures are estimates, so every candidate algorithm runs over the stated link
*and* a neighbourhood of it (one figure varied at a time: rate ×0.8 / ×1.25, loss ×0.5 / ×2,
jitter ×0.5 / ×1.5; a figure that is 0 is not varied; a link fitted from a measurement goes to
the ends of the fit's intervals instead), with the same seeds for every candidate.
One *repeat* runs every candidate at every point once; a candidate's score in a repeat is the
mean of its goal metric over the points (each point weighs the same). Repeats are added in
batches until :func:`sequential_decision` separates the leader from the runner-up, shows them
equivalent (a tie), or the budget (wall time, maximum repeats) is spent.

Modules, each one job (imports point down this list):

* ``errors``: RecommendError (one line naming the user's flag);
* ``algorithms``: printed names (``bbr`` is BBR v1) and tie order;
* ``decision``: the pure stopping rule;
* ``goals``: the goals and the score of one run;
* ``link``: the link (flags, ping or scenario file), the input space, the neighbourhood;
* ``fitband``: a fitted link's neighbourhood from the fit's intervals (``--from``);
* ``schema``: the --json document's version and JSON Schema;
* ``verdict``: the Recommendation and its texts;
* ``search``: running the candidates, boundaries, kernel confirmation;
* ``map``: the table of the recommendation-map study (its report section is a study analysis).
"""

from .algorithms import NAMES, ORDER, cc_name
from .decision import ALPHA, MARGIN, Decision, sequential_decision
from .errors import RecommendError
from .goals import GOAL_TEXT, GOALS, goal_score
from .link import (
    BAND,
    Link,
    Point,
    link_from_options,
    link_from_scenario,
    neighbourhood,
    parse_competing,
    scenario_dict,
)
from .map import map_table
from .schema import JSON_SCHEMA, SCHEMA, SCHEMA_VERSION
from .search import recommend, run_metrics
from .verdict import Recommendation

__all__ = [
    "GOALS",
    "GOAL_TEXT",
    "ALPHA",
    "MARGIN",
    "BAND",
    "NAMES",
    "ORDER",
    "Link",
    "Point",
    "Decision",
    "Recommendation",
    "RecommendError",
    "sequential_decision",
    "neighbourhood",
    "recommend",
    "goal_score",
    "parse_competing",
    "link_from_options",
    "link_from_scenario",
    "scenario_dict",
    "run_metrics",
    "cc_name",
    "map_table",
    "JSON_SCHEMA",
    "SCHEMA",
    "SCHEMA_VERSION",
]
