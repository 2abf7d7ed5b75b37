from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..analysis import jain_index
from ..scenario.aqm import params_json
from . import arrow_values
from .schema import (
    COUNTER_NAMES,
    COUNTER_SIDES,
    COUNTERS_SCHEMA,
    FLOWS_SCHEMA,
    LINK_SERIES_SCHEMA,
    RUN_EXTRA_KEYS,
    RUNS_SCHEMA,
    SERIES_SCHEMA,
    ccbench_version,
    clean_array,
    json_rows,
    json_safe,
    to_frame,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..scenario.model import Scenario


def make_run_id(scenario: "Scenario", backend: str) -> str:
    """Content hash of the normalised scenario + backend + ccbench version (16 hex digits)."""
    h = hashlib.sha256()
    h.update(scenario.canonical_json().encode())
    h.update(b"\0" + backend.encode() + b"\0" + ccbench_version().encode())
    return h.hexdigest()[:16]


def _r(x: Optional[float]) -> Optional[float]:
    """Round unit conversions to 12 significant digits (0.003 * 100 → 0.3, not 0.30000000000000004)."""
    return None if x is None else float(f"{x:.12g}")


def scenario_descriptors(scenario: "Scenario", backend: str) -> dict[str, Any]:
    """The descriptor columns (DESCRIPTOR_FIELDS) for one run."""
    b = scenario.bottleneck
    bdp = scenario.bdp_bytes
    if scenario.buffer_packets is not None:
        buf_bytes = scenario.buffer_packets * 1500
    else:
        buf_bytes = scenario.buffer_bytes
    return {
        "run_id": make_run_id(scenario, backend),
        "scenario_hash": scenario.scenario_hash(),
        "backend": backend,
        "name": scenario.name,
        "rate_mbps": _r(b.rate_bps / 1e6),
        "rtt_ms": _r(b.rtt_s * 1e3),
        "base_rtt_ms": _r(scenario.base_rtt_s * 1e3),
        "jitter_ms": _r(b.jitter_s * 1e3),
        "jitter_dist": b.jitter_dist,
        "loss_model": b.loss.model,
        "loss_pct": _r(b.loss.mean_loss * 100),
        "impair": b.impair,
        "buffer_bytes": buf_bytes,
        "buffer_packets": scenario.buffer_packets,
        "buffer_bdp": _r(buf_bytes / bdp) if bdp > 0 else None,
        "aqm": b.aqm,
        "aqm_params": params_json(scenario.aqm_wire),
        "access_rate_mbps": None if scenario.access.rate_bps is None else _r(scenario.access.rate_bps / 1e6),
        "access_delay_ms": _r(scenario.access.delay_s * 1e3),
        "n_flows": scenario.n_flows,
        "duration_s": scenario.duration_s,
        "seed": scenario.seed,
        "ccbench_version": ccbench_version(),
    }


def _table(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    names = schema.names
    return pa.Table.from_arrays(
        [arrow_values.array([json_safe(r.get(n)) for r in rows], schema.field(n).type) for n in names], schema=schema
    )


def _columns(data: Any, names: Sequence[str]) -> dict[str, Any]:
    """``{column: values}`` for the columns of ``names`` that ``data`` has: ``data`` is a
    pyarrow Table, a mapping of columns (lists or arrays; a column given as None is absent),
    a sequence of row mappings, or None."""
    if data is None:
        return {}
    if isinstance(data, pa.Table):
        return {n: data.column(n) for n in data.column_names if n in names}
    if isinstance(data, Mapping):
        return {n: v for n, v in data.items() if n in names and v is not None}
    rows = list(data)
    present = {k for r in rows for k in r}
    return {n: [r.get(n) for r in rows] for n in names if n in present}


def _column(values: Any, t: pa.DataType) -> pa.Array:
    """One column as an Arrow array of type ``t`` (NaN / inf → null): from an Arrow array,
    a numpy array or a sequence of Python values."""
    if isinstance(values, pa.ChunkedArray):
        values = values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    elif isinstance(values, np.ndarray):
        values = pa.array(values)
    if not isinstance(values, pa.Array):
        return arrow_values.array([json_safe(v) for v in values], t)
    return clean_array(values if values.type == t else values.cast(t))


def _constant(value: Any, t: pa.DataType, n: int) -> pa.Array:
    return pa.repeat(arrow_values.scalar(value, t), n)


def _flow_specs(scenario: "Scenario") -> dict[str, pa.Array]:
    """``group``, ``cc``, ``direction``, ``size_bytes`` and ``rwnd_bytes`` of every flow of the scenario,
    indexed by flow id: what ``scenario.expanded_flows()`` gives (flows are numbered group by
    group, ``count`` flows each), without one Python object per flow."""
    groups = list(scenario.flows)
    group_of = np.repeat(np.arange(len(groups), dtype=np.int64), [g.count for g in groups])
    # wrapped, not converted: pa.array(ndarray) would import pandas (0.3 s) for nothing
    index = pa.Array.from_buffers(pa.int64(), len(group_of), [None, pa.py_buffer(group_of)])
    return {
        "group": index,
        "cc": arrow_values.array([g.cc for g in groups], pa.string()).take(index),
        "direction": arrow_values.array([g.direction for g in groups], pa.string()).take(index),
        "size_bytes": arrow_values.array([g.size_bytes for g in groups], pa.int64()).take(index),
        "rwnd_bytes": arrow_values.array([g.rwnd_bytes for g in groups], pa.int64()).take(index),
    }


def _flow_index(flow_id: Any, n_flows: int) -> pa.Array:
    """``flow_id`` as indices for ``take`` into per-flow arrays of ``n_flows`` entries: null
    where the flow id is null or not a flow of the scenario. A column of valid ids (every
    simulator run: one min/max pass) is used as it is, without the casts and masks a million
    series rows would otherwise cost."""
    if isinstance(flow_id, pa.ChunkedArray):
        flow_id = flow_id.chunk(0) if flow_id.num_chunks == 1 else flow_id.combine_chunks()
    if not isinstance(flow_id, pa.Array):
        flow_id = _column(flow_id, pa.int64())
    if pa.types.is_integer(flow_id.type) and flow_id.null_count == 0 and len(flow_id):
        bounds = pc.min_max(flow_id).as_py()
        if bounds["min"] >= 0 and bounds["max"] < n_flows:
            return flow_id
    fid = flow_id.cast(pa.int64())
    inside = pc.and_(pc.greater_equal(fid, 0), pc.less(fid, n_flows))
    return pc.if_else(inside, fid, pa.scalar(None, pa.int64()))


def _by_flow(values: pa.Array, index: pa.Array) -> pa.Array:
    """``values[index]`` row by row for indices from :func:`_flow_index` (null stays null)."""
    return values.take(index)


def _flows_table(desc: Mapping[str, Any], flow_rows: Any, specs: Mapping[str, pa.Array]) -> pa.Table:
    """FLOWS_SCHEMA: the descriptors, the backend's measurements (keys outside the schema or
    among the descriptors ignored), ``group``/``cc``/``direction``/``size_bytes``/``rwnd_bytes`` from the
    scenario where the backend left them null, rows sorted by flow id."""
    names = [n for n in FLOWS_SCHEMA.names if n not in desc]
    cols = {n: _column(v, FLOWS_SCHEMA.field(n).type) for n, v in _columns(flow_rows, names).items()}
    n = len(next(iter(cols.values()))) if cols else 0
    if "flow_id" in cols:
        index = _flow_index(cols["flow_id"], len(next(iter(specs.values())))) if specs else None
        for key, spec in specs.items():
            from_scenario = _by_flow(spec, index)
            cols[key] = pc.coalesce(cols[key], from_scenario) if key in cols else from_scenario
        fid = cols["flow_id"]
        if n > 1 and not pc.all(pc.greater_equal(fid[1:], fid[:-1])).as_py():
            order = pc.sort_indices(fid)  # a stable sort, as list.sort was
            cols = {k: v.take(order) for k, v in cols.items()}
    arrays = []
    for f in FLOWS_SCHEMA:
        if f.name in desc:
            arrays.append(_constant(desc[f.name], f.type, n))
        elif f.name in cols:
            arrays.append(cols[f.name])
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(arrays, schema=FLOWS_SCHEMA)


def _columnar_table(
    run_id: str, data: Any, schema: pa.Schema, fill: Optional[Mapping[str, pa.Array]] = None
) -> pa.Table:
    """A series-like table from a columnar mapping (crates/sim/src/report/mod.rs `Series`,
    `LinkSeries`), a list of row mappings, a pyarrow Table or None. ``fill``: column ->
    values by flow id (see :func:`_flow_specs`) for columns the data lacks."""
    if data is None:
        return schema.empty_table()
    cols = _columns(data, schema.names)
    n = len(cols.get("t_s", []))
    arrays = []
    index = None  # flow ids as take() indices, made once for all filled columns
    for f in schema:
        if f.name == "run_id":
            arrays.append(_constant(run_id, f.type, n))
        elif f.name not in cols and fill and f.name in fill:
            if index is None:
                index = (
                    _flow_index(cols["flow_id"], len(fill[f.name])) if "flow_id" in cols else pa.nulls(n, pa.int64())
                )
            arrays.append(_by_flow(fill[f.name], index))
        elif f.name in cols:
            arrays.append(_column(cols[f.name], f.type))
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _counters_table(run_id: str, data: Any) -> pa.Table:
    """The counters table of one run from the report.rs form ``[{"side": "sender",
    "TcpRetransSegs": 12, ...}, {"side": "receiver", ...}]`` (a counter missing or null is
    null), a mapping ``{"sender": {...}, "receiver": {...}}``, a pyarrow Table / DataFrame with
    COUNTERS_SCHEMA columns, or None (no rows). Keys outside COUNTER_NAMES are ignored."""
    if data is None:
        return COUNTERS_SCHEMA.empty_table()
    if isinstance(data, pa.Table):
        data = data.to_pylist()
    elif hasattr(data, "to_dict") and hasattr(data, "columns"):  # a pandas DataFrame
        data = data.astype(object).where(data.notna(), None).to_dict("records")
    elif isinstance(data, Mapping):
        data = [{**dict(v or {}), "side": k} for k, v in data.items()]
    rows = []
    for r in data:
        side = r.get("side")
        if side not in COUNTER_SIDES:
            raise ValueError(f"counters: side {side!r} is not one of {', '.join(COUNTER_SIDES)}")
        row: dict[str, Any] = {"run_id": run_id, "side": side}
        for n in COUNTER_NAMES:
            v = json_safe(r.get(n))
            if v is not None and (isinstance(v, bool) or int(v) != v):
                raise ValueError(f"counters: {side} {n} = {v!r} is not an integer count")
            row[n] = None if v is None else int(v)
        rows.append(row)
    if len({r["side"] for r in rows}) != len(rows):
        raise ValueError("counters: more than one row for a side")
    rows.sort(key=lambda r: COUNTER_SIDES.index(r["side"]))
    return _table(rows, COUNTERS_SCHEMA)


class RunResult:
    """One run's five tables. ``flows``/``runs``/``series``/``link_series``/``counters`` are
    pandas DataFrames (made on first access); ``flows_table``/``runs_table``/``series_table``/
    ``link_series_table``/``counters_table`` the typed pyarrow Tables. Columns, units and which backend fills
    them: docs/results.md. ``scenario`` is the Scenario that was run (None when unknown).
    ``save(dir)`` stores the run in a store directory that ``ccbench.load`` reads."""

    def __init__(
        self,
        flows_table: pa.Table,
        runs_table: pa.Table,
        series_table: pa.Table,
        link_series_table: Optional[pa.Table] = None,
        scenario: Optional["Scenario"] = None,
        counters_table: Optional[pa.Table] = None,
    ):
        self.flows_table = flows_table.cast(FLOWS_SCHEMA)
        self.runs_table = runs_table.cast(RUNS_SCHEMA)
        self.series_table = series_table.cast(SERIES_SCHEMA)
        if link_series_table is None:
            link_series_table = LINK_SERIES_SCHEMA.empty_table()
        self.link_series_table = link_series_table.cast(LINK_SERIES_SCHEMA)
        if counters_table is None:
            counters_table = COUNTERS_SCHEMA.empty_table()
        self.counters_table = counters_table.cast(COUNTERS_SCHEMA)
        self.scenario = scenario
        self._frames: dict[str, Any] = {}

    # ---- accessors ------------------------------------------------------------------------

    def _frame(self, name: str) -> "pd.DataFrame":
        if name not in self._frames:
            self._frames[name] = to_frame(getattr(self, f"{name}_table"))
        return self._frames[name]

    @property
    def flows(self) -> "pd.DataFrame":
        return self._frame("flows")

    @property
    def runs(self) -> "pd.DataFrame":
        return self._frame("runs")

    @property
    def series(self) -> "pd.DataFrame":
        return self._frame("series")

    @property
    def link_series(self) -> "pd.DataFrame":
        return self._frame("link_series")

    @property
    def counters(self) -> "pd.DataFrame":
        return self._frame("counters")

    @property
    def run_id(self) -> str:
        return self.runs_table.column("run_id")[0].as_py()

    @property
    def status(self) -> str:
        return self.runs_table.column("status")[0].as_py()

    @property
    def error(self) -> Optional[str]:
        return self.runs_table.column("error")[0].as_py()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def __repr__(self) -> str:
        return (
            f"RunResult(run_id={self.run_id!r}, status={self.status!r}, "
            f"flows={self.flows_table.num_rows}, series={self.series_table.num_rows}, "
            f"link_series={self.link_series_table.num_rows}, counters={self.counters_table.num_rows})"
        )

    # ---- output ---------------------------------------------------------------------------

    def to_json_dict(self) -> dict[str, list[dict[str, Any]]]:
        """``{"runs": [...], "flows": [...]}``: rows with docs/results.md column names, NaN → None."""
        return {"runs": json_rows(self.runs_table), "flows": json_rows(self.flows_table)}

    def save(self, directory: str | Path, command: Optional[Sequence[str]] = None, study: Optional[str] = None) -> Path:
        """Store this run in the store directory ``directory`` (DIR/runs/<run_id>.parquet, ...,
        DIR/ccbench.json), the layout ``ccbench.load``, ``ccbench query`` and the report read.
        ``command``: the argv recorded in ccbench.json. Returns the directory."""
        from .store import save_run

        return save_run(self, directory, command=command, study=study)

    def write_parquet(self, directory: str | Path, wall_time: bool = True) -> dict[str, Path]:
        """Write ``flows.parquet``, ``runs.parquet``, ``series.parquet``, ``link_series.parquet``
        and ``counters.parquet`` into ``directory`` (a flat layout; :meth:`save` writes a store).

        The files depend only on the tables' contents; with ``wall_time=False`` the one
        machine-dependent column (``runs.wall_time_s``) is written as null, so two runs of the
        same scenario give byte-identical files.
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        runs = self.runs_table
        if not wall_time:
            i = runs.schema.get_field_index("wall_time_s")
            runs = runs.set_column(i, runs.schema.field(i), pa.nulls(runs.num_rows, pa.float64()))
        paths = {}
        for name, table in (
            ("flows", self.flows_table),
            ("runs", runs),
            ("series", self.series_table),
            ("link_series", self.link_series_table),
            ("counters", self.counters_table),
        ):
            path = out / f"{name}.parquet"
            write_table(table, path)
            paths[name] = path
        return paths


def write_table(table: pa.Table, path: str | Path) -> None:
    """Deterministic Parquet: schema metadata dropped, fixed compression, no timestamps."""
    table = table.replace_schema_metadata(None)
    pq.write_table(
        table,
        str(path),
        compression="zstd",
        use_dictionary=True,
        write_statistics=True,
    )


def _jain_groups(group: pa.Array, goodput: pa.Array) -> Optional[float]:
    """Jain's index over the groups' summed goodputs (flows with a group and a goodput)."""
    have = pc.and_(pc.is_valid(group), pc.is_valid(goodput))
    g = arrow_values.to_numpy(group.filter(have)).astype(np.int64)
    gp = arrow_values.to_numpy(goodput.filter(have)).astype(np.float64)
    if g.size == 0 or g.min() < 0:
        if g.size:  # negative group numbers: no bincount
            sums: dict[int, float] = {}
            for k, v in zip(g.tolist(), gp.tolist()):
                sums[k] = sums.get(k, 0.0) + v
            return jain_index([sums[k] for k in sorted(sums)]) if len(sums) >= 2 else None
        return None
    # bincount adds in row order, as a running sum per group would
    present = np.bincount(g) > 0
    if present.sum() < 2:
        return None
    return jain_index(np.bincount(g, weights=gp)[present])


def build_result(
    scenario: "Scenario",
    backend: str,
    flow_rows: Iterable[Mapping[str, Any]],
    series: Any,
    run_extra: Optional[Mapping[str, Any]],
    wall_time_s: Optional[float],
    status: str = "ok",
    error: Optional[str] = None,
    link_series: Any = None,
    counters: Any = None,
) -> RunResult:
    """Assemble a RunResult from a backend's measurements.

    ``flow_rows``: one mapping per flow with FLOWS_SCHEMA measurement keys (``flow_id``,
    ``group``, ``cc``, ``goodput_bps``, …; crates/sim/src/report/mod.rs `FlowSummary`), or the same
    as columns (a mapping of column lists / arrays, or a pyarrow Table). Missing keys
    become null; ``group``/``cc``/``direction``/``size_bytes``/``rwnd_bytes`` are filled from the scenario when
    absent. Keys outside the schema are ignored.
    ``series``: columnar mapping (report.rs `Series`), list of row mappings, a pyarrow Table, or
    None; ``group`` and ``cc`` are filled from the scenario by ``flow_id`` when absent.
    ``link_series``: the same forms for report.rs `LinkSeries` (t_s, queue_bytes, probe_rtt_ms,
    sojourn_ms, probe_rtt_p50_ms, probe_rtt_p95_ms).
    ``counters``: the run's MIB counter deltas per side, report.rs form ``[{"side": "sender",
    "TcpRetransSegs": 12, ...}, {"side": "receiver", ...}]`` (keys: COUNTER_NAMES; null or
    missing = not counted), or a Table/DataFrame/``{side: {...}}``; None gives no rows.
    ``run_extra``: run-level measurements (``link_utilisation``, ``drops``,
    ``random_losses``, ``aggregate_goodput_bps``, ``probe_rtt_p*_ms``, ``events``,
    ``data_packets``, ``kernel_version``). Jain's indices and (when missing) the aggregate
    goodput are computed here.
    """
    desc = scenario_descriptors(scenario, backend)
    specs = _flow_specs(scenario)
    flows = _flows_table(desc, flow_rows, specs)

    extra = {k: v for k, v in (run_extra or {}).items() if k in RUN_EXTRA_KEYS}
    goodput = flows.column("goodput_bps").combine_chunks()
    goodputs = arrow_values.to_numpy(goodput.drop_null())
    if json_safe(extra.get("aggregate_goodput_bps")) is None and goodputs.size:
        extra["aggregate_goodput_bps"] = float(sum(goodputs.tolist()))  # in flow order, as before
    run = dict(desc)
    run.update(extra)
    run.update(
        {
            "status": status,
            "error": error,
            "jain_index": jain_index(goodputs) if goodputs.size else None,
            "jain_index_groups": _jain_groups(flows.column("group").combine_chunks(), goodput),
            "wall_time_s": wall_time_s,
        }
    )
    return RunResult(
        flows,
        _table([run], RUNS_SCHEMA),
        _columnar_table(desc["run_id"], series, SERIES_SCHEMA, {"group": specs["group"], "cc": specs["cc"]}),
        _columnar_table(desc["run_id"], link_series, LINK_SERIES_SCHEMA),
        scenario=scenario,
        counters_table=_counters_table(desc["run_id"], counters),
    )


def failed_result(scenario: "Scenario", backend: str, error: str, wall_time_s: Optional[float]) -> RunResult:
    """A run that did not produce measurements: one `runs` row with status "failed"."""
    return build_result(scenario, backend, [], None, None, wall_time_s, status="failed", error=error)
