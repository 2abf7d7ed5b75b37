"""The embedded simulator backend (crates/sim through the PyO3 module ``ccbench._sim``).

JSON in (``Scenario.sim_config_grouped()``: the ``[[flows]]`` groups, which the simulator
expands into connections, crates/sim/src/config/mod.rs and flow_groups.rs); out comes the report of
crates/sim/src/report/mod.rs as columns (crates/sim/src/columns.rs: a JSON header and Arrow
buffers), converted to the shared result schema by ``build_result`` without a Python object
per value.
"""

from __future__ import annotations

import functools
import json
import time
from typing import TYPE_CHECKING

from ..scenario.aqm import NAMES as AQM_NAMES
from ..scenario.errors import ScenarioError
from ..scenario.model import Scenario
from . import preload

# pyarrow and ccbench.results are imported where they are used: ``run`` starts their import on
# a second thread while the simulator runs (ccbench/backends/preload.py), so that a run does not pay for
# them before the simulation starts.
if TYPE_CHECKING:
    import pyarrow as pa

    from ..results.run_result import RunResult

__all__ = ["NAME", "run", "check", "algorithms", "SIM_AQMS"]

NAME = "sim"
#: Queue disciplines the simulator implements (all of ccbench.scenario.aqm.NAMES).
SIM_AQMS = AQM_NAMES


def _sim():
    from .. import _sim  # type: ignore[attr-defined]

    return _sim


@functools.lru_cache(maxsize=1)
def _algorithms() -> tuple[dict, ...]:
    return tuple(json.loads(_sim().algorithms_json()))


def algorithms() -> list[dict]:
    """``[{"name", "linux", "notes"}]`` as the built simulator reports them."""
    return [dict(a) for a in _algorithms()]


def check(scenario: Scenario) -> None:
    """Refuse the algorithms the simulator does not model (ns-3's, see docs/algorithms.md). Every
    queue discipline a scenario accepts runs here (SIM_AQMS is all of them), and so does ECN
    (``ecn = true``): crates/sim/src/tcp/ecn.rs."""
    problems = []
    names = [a["name"] for a in _algorithms()]
    for i, g in enumerate(scenario.flows):
        if g.cc not in names:
            problems.append((f"flows.{i}.cc", f"the sim backend does not model '{g.cc}'", "one of " + ", ".join(names)))
    if problems:
        key, problem, expected = problems[0]
        raise ScenarioError(scenario.source, key, problem, expected, problems)


def _arrow_type(dtype: str) -> "pa.DataType":
    """The Arrow type of a column layout's dtype (crates/sim/src/columns.rs)."""
    import pyarrow as pa

    return {"uint32": pa.uint32, "uint64": pa.uint64, "float64": pa.float64, "bool": pa.bool_, "string": pa.string}[
        dtype
    ]()


def arrow_tables(header: dict, blob: bytes) -> dict[str, pa.Table]:
    """The ``flows``, ``series`` and ``link_series`` tables of a ``run_columns`` report as
    Arrow tables over ``blob`` (no copy): the header says where each column's buffers lie."""
    import pyarrow as pa

    buf = pa.py_buffer(blob)

    def part(at):
        return None if at is None else buf.slice(at[0], at[1])

    tables = {}
    for name, layout in header["tables"].items():
        arrays, names = [], []
        for c in layout["columns"]:
            buffers = [part(c["validity"])]
            if c["offsets"] is not None:
                buffers.append(part(c["offsets"]))
            buffers.append(part(c["data"]))
            arr = pa.Array.from_buffers(_arrow_type(c["dtype"]), layout["rows"], buffers, null_count=c["null_count"])
            arr.validate()  # buffer sizes match the length: a layout bug fails here, not later
            arrays.append(arr)
            names.append(c["name"])
        tables[name] = pa.Table.from_arrays(arrays, names=names)
    return tables


def _report(sim, cfg: str) -> tuple[dict, float]:
    """The run's report and the simulator's wall time. The report: the header's fields with
    the tables as Arrow tables (``run_columns``), or the JSON report of ``run_json`` from an
    extension built without ``run_columns`` (and the tests' stand-in simulator); build_result
    takes either form."""
    t0 = time.perf_counter()
    if hasattr(sim, "run_columns"):
        header_json, blob = sim.run_columns(cfg)
        wall = time.perf_counter() - t0
        header = json.loads(header_json)
        return {**header, **arrow_tables(header, blob)}, wall
    out = sim.run_json(cfg)
    wall = time.perf_counter() - t0
    return json.loads(out), wall


def _lower_cc_state(series):
    """cc_state in the kernel's spelling (tcp_info / tcp_bbr.c names in lower case: "open",
    "probe_bw")."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(series, pa.Table):
        i = series.schema.get_field_index("cc_state")
        return series if i < 0 else series.set_column(i, "cc_state", pc.utf8_lower(series.column(i)))
    if series and series.get("cc_state"):
        series["cc_state"] = [v.lower() if v else v for v in series["cc_state"]]
    return series


def run(scenario: Scenario) -> RunResult:
    """Run on the simulator. A simulator error gives a RunResult with status "failed"."""
    cfg = json.dumps(scenario.sim_config_grouped(), separators=(",", ":"))
    sim = _sim()
    preload.start()  # imports pyarrow & co. on the other core while the simulator runs
    t0 = time.perf_counter()
    try:
        report, wall = _report(sim, cfg)
    except ValueError as e:
        from ..results.run_result import failed_result

        return failed_result(scenario, NAME, str(e), time.perf_counter() - t0)
    from ..results.run_result import build_result
    from ..results.schema import COUNTER_SIDES

    run_extra = dict(report.get("run", {}))
    run_extra.pop("duration_s", None)
    # MIB counters per side (report.rs `counters`); a simulator build without them gives the
    # same two rows with every counter null, so the table has one shape on every build
    counters = report.get("counters")
    if counters is None:
        counters = [{"side": side} for side in COUNTER_SIDES]
    result = build_result(
        scenario,
        NAME,
        report.get("flows", []),
        _lower_cc_state(report.get("series")),
        run_extra,
        wall,
        link_series=report.get("link_series"),
        counters=counters,
    )
    result.links = report.get("links", [])  # packet-conservation counters per link
    return result
