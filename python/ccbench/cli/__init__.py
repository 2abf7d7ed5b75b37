"""`ccbench` command line (typer + rich): one module per command group, each with a
``register(app)`` that adds its commands; this file registers every one of them.

    ccbench run SCENARIO.toml [--set key=value ...] [--backend sim] [--out DIR] [-i 1s] [--json [--series]]
    ccbench sweep | query | study | report | plot | compare | recommend | validate | doctor | cleanup
    ccbench algorithms [--json]
    ccbench fit CAPTURE [--flow A-B] [--out link.toml] [--check]
    ccbench capture SERVER [--port 5201] [--duration 20s] [--out capture.pcap] [--fit link.toml]
    ccbench demo [--duration 30s] [--workers 2]

Bad input (ScenarioError) → one red line per problem on stderr, exit code 2, no traceback
(``errors``). A run the backend could not complete → its error on stderr, exit code 1.
"""

from . import algorithms, capture, compare, demo, fit, kernel, recommend, report, run, study, sweep, validate
from .app import app
from .errors import EXIT_BAD_INPUT, EXIT_RUN_FAILED, error

for _group in (run, algorithms, demo, sweep, kernel, report, study, validate, compare, recommend, fit, capture):
    _group.register(app)

__all__ = ["app", "error", "EXIT_BAD_INPUT", "EXIT_RUN_FAILED"]
