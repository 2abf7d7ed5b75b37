"""What a run produces and where it is kept (docs/results.md).

- ``schema``: the five tables' fixed Arrow schemas, the MIB counter names, ``to_frame`` and
  ``json_rows`` (a leaf: every other module here imports it, it imports none of them);
- ``run_result``: ``RunResult`` (one run's tables) and ``build_result`` (a backend's rows to it);
- ``store``: the Parquet/DuckDB store (``Store``, ``load``, ``save_run``, ``query``);
- ``layout``: a store directory's files and the checks on it; ``meta``: its ``ccbench.json``;
- ``arrow_values``: Python values to typed Arrow arrays.
- ``timing``: whether a kernel run kept the scenario's timing (host steal, emulator lateness).
"""

from .run_result import RunResult, build_result, failed_result, make_run_id, scenario_descriptors, write_table
from .schema import (
    COUNTER_NAMES,
    COUNTER_SIDES,
    COUNTERS_SCHEMA,
    DESCRIPTOR_FIELDS,
    FLOWS_SCHEMA,
    LINK_SERIES_SCHEMA,
    RUNS_SCHEMA,
    SERIES_SCHEMA,
    TABLES,
    WIFI_RUN_KEYS,
    ccbench_version,
    json_rows,
    to_frame,
)

__all__ = [
    "FLOWS_SCHEMA",
    "RUNS_SCHEMA",
    "SERIES_SCHEMA",
    "LINK_SERIES_SCHEMA",
    "COUNTERS_SCHEMA",
    "COUNTER_NAMES",
    "COUNTER_SIDES",
    "TABLES",
    "DESCRIPTOR_FIELDS",
    "WIFI_RUN_KEYS",
    "RunResult",
    "make_run_id",
    "build_result",
    "failed_result",
    "scenario_descriptors",
    "ccbench_version",
    "json_rows",
    "to_frame",
    "write_table",
]
