"""The sweep store: a directory of Parquet files, one per run per table, queryable with DuckDB.

Layout of a store directory DIR (every column: docs/results.md)::

    DIR/runs/<run_id>.parquet         one row: the run (status "ok" or "failed" with the error)
    DIR/flows/<run_id>.parquet        one row per flow (only for runs that produced flows)
    DIR/series/<run_id>.parquet       per-flow time series (only for runs that produced them)
    DIR/link_series/<run_id>.parquet  bottleneck time series: queue and probe RTT
    DIR/counters/<run_id>.parquet     TCP MIB counter deltas, one row per side (sender, receiver)
    DIR/ccbench.json                  how the directory was made (ccbench.results.meta)

``run_id`` is the content hash of ccbench.results.make_run_id (normalised scenario + backend +
ccbench version). Each file is written to a hidden temporary name in the same directory and then
renamed over the final name (atomic on POSIX), so a reader or a killed writer never sees a
half-written file. A run's ``runs`` file is written last: it is the commit marker. Flows, series
or counters files whose run has no ``runs`` file (the writer was killed in between) are ignored by
:func:`load` and :func:`query` and replaced when the run is executed again.

Swept parameters are extra columns of every table named by their key path ("bottleneck.loss"),
plus an integer ``repeat`` column. Their type follows the Python type of the value (bool,
int64, float64, else string); ccbench.sweeps.plan gives every run of a sweep the same type per
axis. A key path that equals a standard column name (e.g. ``seed``) is stored as
``sweep.<key>`` instead.
"""

from __future__ import annotations

import os
import uuid
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from ..procs import alive

# the directory's layout and the checks made before a run, which need no pyarrow (`ccbench run
# --out` makes them before the simulator starts; ccbench/backends/preload.py)
from .layout import MIN_FREE_BYTES, TABLES, TMP_PREFIX, StoreError, check_store_dir, check_writable, is_store, os_reason
from .meta import META_FILE, build_meta, read_meta, write_meta
from .schema import to_frame

if TYPE_CHECKING:  # pandas is imported where DataFrames are made: `ccbench run --out` makes none
    import pandas as pd

__all__ = [
    "TABLES",
    "Store",
    "StoreError",
    "SkippedFileWarning",
    "Results",
    "load",
    "query",
    "connect",
    "save_run",
    "is_store",
    "check_writable",
    "MIN_FREE_BYTES",
]

_COMPRESSED = ("series", "link_series")
#: Columns of the series files that get Parquet min/max statistics: the keys and the time a
#: query filters on (DuckDB and pyarrow skip row groups by them). Statistics on every value
#: column cost a quarter of the write time of a million-row series file (~0.08 s, measured on
#: the 100 000-flow run of benchmarks/scale/scale_bench.py) for filters nobody writes.
_STATS_COLUMNS = ("run_id", "flow_id", "group", "cc", "link", "t_s")
#: Rows (all tables of one run together) from which a run's files are written in parallel
#: threads; below it a thread pool costs more than it saves.
_PARALLEL_WRITE_ROWS = 200_000


class SkippedFileWarning(UserWarning):
    """A store file that cannot be read (e.g. truncated by a power loss) and was left out."""


def _schema(table: str) -> pa.Schema | None:
    try:
        from .. import results
    except ImportError:  # pragma: no cover
        return None
    return getattr(results, f"{table.upper()}_SCHEMA", None)


def _standard_columns() -> set[str]:
    names = {"run_id", "repeat"}
    for t in TABLES:
        s = _schema(t)
        if s is not None:
            names.update(s.names)
    return names


def param_column(key: str, standard: set[str] | None = None) -> str:
    """Column name for a swept key path."""
    standard = _standard_columns() if standard is None else standard
    return f"sweep.{key}" if key in standard and key != "repeat" else key


def _to_arrow(df: pd.DataFrame, table: str) -> pa.Table:
    """DataFrame -> Arrow with the standard column types where the schema knows them (so an
    all-null column of one run does not get a different type than in another run)."""
    tab = pa.Table.from_pandas(df, preserve_index=False)
    schema = _schema(table)
    if schema is None:
        return tab
    cols = []
    for name in tab.column_names:
        col = tab.column(name)
        idx = schema.get_field_index(name)
        if idx >= 0 and col.type != schema.field(idx).type:
            try:
                col = col.cast(schema.field(idx).type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        cols.append(col)
    return pa.table(cols, names=tab.column_names)


class Store:
    """Writer side of a store directory (used by ccbench.sweeps)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.last_error: str | None = None
        self._standard = None

    def path(self, table: str, run_id: str) -> Path:
        return self.root / table / f"{run_id}.parquet"

    def prepare(self) -> None:
        """Create the directories and remove temporary files left by killed writers. Raises
        StoreError (one line) when the store cannot be written, before any run starts."""
        check_store_dir(self.root, purpose="write")
        check_writable(self.root)  # probes the existing table directories; the rest we create
        try:
            for t in TABLES:
                (self.root / t).mkdir(parents=True, exist_ok=True)
            self.remove_stale_tmp()
        except OSError as e:
            raise StoreError(f"{self.root}: cannot write the store: {os_reason(e)}") from None

    def remove_stale_tmp(self) -> int:
        """Delete temporary files whose writer process is gone. Returns how many."""
        n = 0
        for t in TABLES:
            d = self.root / t
            if not d.is_dir():
                continue
            for p in d.glob(f"{TMP_PREFIX}*"):
                pid = _tmp_pid(p.name)
                if pid is not None and pid != os.getpid() and alive(pid):
                    continue
                try:
                    p.unlink()
                    n += 1
                except FileNotFoundError:
                    pass
        return n

    def write(
        self,
        run_id: str,
        runs: Any,
        flows: Any = None,
        series: Any = None,
        columns: Mapping[str, Any] | None = None,
        link_series: Any = None,
        counters: Any = None,
    ) -> str:
        """Store one run atomically (counters, link_series, series, flows, then runs as the
        commit marker).

        ``runs``/``flows``/``series``/``link_series``/``counters``: pyarrow Tables or pandas
        DataFrames (None = no rows). ``columns`` (swept parameters and ``repeat``) are added to every table,
        typed by their Python type (bool, int64, float64, else string).
        Returns the run's status; for a failed run ``self.last_error`` holds its message.
        A file-system error (disk full, store made read-only) raises StoreError in one line;
        the runs stored before it stay, and a run of the same command resumes after them.
        """
        try:
            return self._write(run_id, runs, flows, series, columns, link_series, counters)
        except OSError as e:
            raise StoreError(
                f"{self.root}: cannot store run {run_id}: {os_reason(e)} (the runs "
                f"stored before it are kept; run the same command again to resume)"
            ) from None

    def statuses(self) -> dict[str, str]:
        """run_id -> status of every readable runs file ("ok", "failed", ...)."""
        out: dict[str, str] = {}
        d = self.root / "runs"
        if not d.is_dir():
            return out
        for p in _parquet_files(d):
            try:
                tab = pq.ParquetFile(p).read(columns=["status"])
                status = tab.column("status")[0].as_py() if tab.num_rows else None
            except Exception:  # unreadable (e.g. truncated by a power loss): treat as missing
                continue
            out[p.stem] = status or "ok"
        return out

    def status(self, run_id: str) -> str | None:
        p = self.path("runs", run_id)
        try:
            tab = pq.ParquetFile(p).read(columns=["status"])
        except Exception:
            return None
        return (tab.column("status")[0].as_py() if tab.num_rows else None) or "ok"

    def _write(
        self,
        run_id: str,
        runs: Any,
        flows: Any,
        series: Any,
        columns: Mapping[str, Any] | None,
        link_series: Any,
        counters: Any,
    ) -> str:
        if self._standard is None:
            self._standard = _standard_columns()
        extra = {param_column(k, self._standard) if k != "repeat" else k: v for k, v in (columns or {}).items()}
        runs_t = _with_columns(_as_arrow(runs, "runs"), extra)
        status, self.last_error = "ok", None
        if runs_t.num_rows and "status" in runs_t.column_names:
            status = runs_t.column("status")[0].as_py() or "ok"
        if status != "ok" and runs_t.num_rows and "error" in runs_t.column_names:
            self.last_error = runs_t.column("error")[0].as_py()
        files = []
        for table, data in (("counters", counters), ("link_series", link_series), ("series", series), ("flows", flows)):
            target = self.path(table, run_id)
            tab = _as_arrow(data, table) if data is not None else None
            if tab is None or tab.num_rows == 0:
                # a failed or empty run has no rows here; drop what an earlier attempt left
                target.unlink(missing_ok=True)
                continue
            files.append((_with_columns(tab, extra), target))
        self._write_files(files)
        self._write_atomic(runs_t, self.path("runs", run_id))
        return status

    def _write_files(self, files: Sequence[tuple[pa.Table, Path]]) -> None:
        """Write each (table, target) atomically; the runs file (the commit marker) is written
        after all of them. Large runs write their files in parallel threads (Parquet encoding
        releases the GIL): 100 000 flows' flows file is written while the million-row series
        file is, ~0.1 s less on two cores. The first error is raised after every write ended."""
        if sum(tab.num_rows for tab, _ in files) < _PARALLEL_WRITE_ROWS or len(files) < 2:
            for tab, target in files:
                self._write_atomic(tab, target)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=2) as ex:
            futures = [ex.submit(self._write_atomic, tab, target) for tab, target in files]
        for f in futures:
            f.result()

    def _write_atomic(self, tab: pa.Table, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        # hidden, and not matching *.parquet (readers and DuckDB globs never see it)
        tmp = target.parent / f"{TMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}-{target.name}.part"
        try:
            _write_table(tab, tmp)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def _write_table(tab: pa.Table, path: Path) -> None:
    """Deterministic Parquet (no pandas metadata, no timestamps). The one-row runs files and the
    small flows files are not compressed (compression costs more time than it saves bytes at
    this size); series and link_series files are zstd-compressed."""
    series = path.parent.name in _COMPRESSED
    stats = [c for c in tab.column_names if c in _STATS_COLUMNS] if series else False
    pq.write_table(
        tab.replace_schema_metadata(None),
        str(path),
        compression="zstd" if series else "none",
        write_statistics=stats or False,
    )


def _parquet_files(d: Path) -> list[Path]:
    """The committed files of a table directory (temporary files are hidden: skipped)."""
    if not d.is_dir():
        return []
    return sorted(p for p in d.glob("*.parquet") if not p.name.startswith("."))


def _tmp_pid(name: str) -> int | None:
    try:
        return int(name[len(TMP_PREFIX) :].split("-", 1)[0])
    except ValueError:
        return None


def _as_arrow(data: Any, table: str) -> pa.Table:
    return data if isinstance(data, pa.Table) else _to_arrow(data, table)


def column_type(value: Any) -> pa.DataType:
    """Arrow type of a swept column from its (already typed, see sweep.plan) value."""
    if isinstance(value, bool):
        return pa.bool_()
    if isinstance(value, int):
        return pa.int64()
    if isinstance(value, float):
        return pa.float64()
    return pa.string()


def _with_columns(tab: pa.Table, extra: Mapping[str, Any]) -> pa.Table:
    """Append the parameter columns and ``repeat`` (int64) to every row."""
    n = tab.num_rows
    for k, v in extra.items():
        typ = pa.int64() if k == "repeat" else column_type(v)
        arr = pa.array([v if typ != pa.string() or isinstance(v, str) else str(v)] * n, typ)
        i = tab.schema.get_field_index(k)
        tab = tab.set_column(i, k, arr) if i >= 0 else tab.append_column(k, arr)
    return tab


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def _read_one(p: Path) -> pa.Table | None:
    try:
        return pq.ParquetFile(p).read()
    except Exception as e:  # pragma: no cover - only after a crash of the machine
        warnings.warn(f"{p}: unreadable, skipped ({e})", SkippedFileWarning, stacklevel=2)
        return None


def _read_dir(root: Path, table: str, keep: set[str] | None) -> pd.DataFrame:
    from concurrent.futures import ThreadPoolExecutor

    d = root / table
    files = _parquet_files(d)
    # orphans (a flows/series file whose run has no runs file: writer killed before the commit)
    files = [p for p in files if keep is None or p.stem in keep]
    if len(files) > 16:  # Parquet reads release the GIL
        with ThreadPoolExecutor(max_workers=min(8, (os.cpu_count() or 1) * 2)) as ex:
            tables = [t for t in ex.map(_read_one, files) if t is not None]
    else:
        tables = [t for t in map(_read_one, files) if t is not None]
    if not tables:
        schema = _schema(table)
        if schema is not None:
            return to_frame(schema.empty_table())
        import pandas as pd

        return pd.DataFrame()
    merged = pa.concat_tables(tables, promote_options="permissive")
    return to_frame(merged)


class Results:
    """The tables of a store directory (columns: docs/results.md): ``runs`` and ``flows``
    DataFrames; ``series``, ``link_series`` and ``counters`` are read on first access;
    ``meta`` is DIR/ccbench.json ({} when absent). Rows are ordered by file name (run id), then
    as stored."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(f"{self.root}: no such store directory")
        check_store_dir(self.root)
        self.meta = read_meta(self.root)
        self.runs = _read_dir(self.root, "runs", None)
        self._ids = set(self.runs["run_id"]) if "run_id" in self.runs else set()
        self.flows = _read_dir(self.root, "flows", self._ids)
        self._lazy: dict[str, pd.DataFrame] = {}

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._lazy:
            self._lazy[name] = _read_dir(self.root, name, self._ids)
        return self._lazy[name]

    @property
    def series(self) -> pd.DataFrame:
        return self._table("series")

    @property
    def link_series(self) -> pd.DataFrame:
        return self._table("link_series")

    @property
    def counters(self) -> pd.DataFrame:
        """TCP MIB counter deltas: one row per run per side (empty for stores written before
        the table existed)."""
        return self._table("counters")

    @property
    def ok_runs(self) -> pd.DataFrame:
        return self.runs[self.runs["status"] == "ok"] if "status" in self.runs else self.runs

    @property
    def failed_runs(self) -> pd.DataFrame:
        return self.runs[self.runs["status"] != "ok"] if "status" in self.runs else self.runs.iloc[:0]

    @property
    def swept(self) -> list[str]:
        """The swept parameter columns (not ``repeat``), in the grid's order when known."""
        standard = _standard_columns()
        cols = [c for c in self.runs.columns if c not in standard]
        grid = list((self.meta.get("grid") or {}).keys())
        named = [param_column(k, standard) for k in grid]
        return [c for c in named if c in cols] + [c for c in cols if c not in named]

    def cell_goodput(self) -> pd.DataFrame:
        """Mean, min, max of aggregate goodput (bit/s) over the ok runs of each grid cell."""
        import pandas as pd

        ok = self.ok_runs
        by = self.swept
        gp = "aggregate_goodput_bps"
        if gp not in ok:
            return pd.DataFrame()
        if not by:
            g = ok[gp].astype("float64")
            return pd.DataFrame({"runs": [len(ok)], "mean": [g.mean()], "min": [g.min()], "max": [g.max()]})
        frame = ok[by + [gp]].copy()
        frame[gp] = frame[gp].astype("float64")
        out = frame.groupby(by, dropna=False, sort=False)[gp].agg(["count", "mean", "min", "max"])
        return out.rename(columns={"count": "runs"}).reset_index()

    def _summary(self) -> dict[str, Any]:
        m = self.meta
        return {
            "runs": len(self.runs),
            "failed": len(self.failed_runs),
            "flows": len(self.flows),
            "backend": m.get("backend")
            or (", ".join(sorted(set(self.runs["backend"]))) if "backend" in self.runs and len(self.runs) else None),
            "study": m.get("study"),
            "swept": self.swept,
            "repeat": m.get("repeat"),
        }

    def __repr__(self) -> str:
        s = self._summary()
        parts = [f"{s['runs']} runs ({s['failed']} failed)", f"{s['flows']} flow rows"]
        if s["backend"]:
            parts.append(f"backend {s['backend']}")
        if s["swept"]:
            parts.append("swept " + ", ".join(s["swept"]))
        if s["repeat"]:
            parts.append(f"repeat {s['repeat']}")
        if s["study"]:
            parts.append(f"study {s['study']}")
        return f"Results({str(self.root)!r}: " + "; ".join(parts) + ")"

    def _repr_html_(self) -> str:
        import html

        s = self._summary()
        esc = html.escape
        rows = [
            ("directory", str(self.root)),
            ("runs", f"{s['runs']} ({s['failed']} failed)"),
            ("flow rows", str(s["flows"])),
        ]
        for label, key in (("backend", "backend"), ("study", "study"), ("repeat", "repeat")):
            if s[key]:
                rows.append((label, str(s[key])))
        if s["swept"]:
            rows.append(("swept", ", ".join(s["swept"])))
        head = "".join(
            f"<tr><th style='text-align:left'>{esc(k)}</th><td style='text-align:left'>{esc(v)}</td></tr>"
            for k, v in rows
        )
        out = f"<div><b>ccbench Results</b><table>{head}</table>"
        cells = self.cell_goodput()
        if len(cells):
            shown = cells.head(20).copy()
            for c in ("mean", "min", "max"):
                shown[c] = (shown[c] / 1e6).map(lambda v: f"{v:.3g}")
            shown = shown.rename(columns={"mean": "mean goodput (Mbit/s)", "min": "min", "max": "max"})
            out += "<p>aggregate goodput per cell (ok runs)</p>" + shown.to_html(index=False, border=0)
            if len(cells) > 20:
                out += f"<p>... {len(cells) - 20} more cells</p>"
        return out + "</div>"


def load(dir: str | os.PathLike) -> Results:
    """Read a store directory (what ``ccbench.load`` returns). A directory that is neither a
    store nor empty raises StoreError."""
    return Results(dir)


def save_run(
    result: Any, dir: str | os.PathLike, command: Sequence[str] | None = None, study: str | None = None
) -> Path:
    """Store one RunResult in the store directory ``dir`` (what ``ccbench run --out`` writes):
    its tables via :meth:`Store.write` and DIR/ccbench.json. Returns the directory."""
    root = Path(dir)
    store = Store(root)  # prepare() refuses what is not a store, or not writable
    store.prepare()
    store.write(
        result.run_id,
        result.runs_table,
        result.flows_table,
        result.series_table,
        link_series=getattr(result, "link_series_table", None),
        counters=getattr(result, "counters_table", None),
    )
    scenario = getattr(result, "scenario", None)
    try:
        write_meta(
            root, build_meta(scenario, result.runs_table.column("backend")[0].as_py(), command=command, study=study)
        )
    except OSError as e:
        raise StoreError(f"{root}: cannot write {META_FILE}: {os_reason(e)}") from None
    return root


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def connect(dir: str | os.PathLike, con=None):
    """A DuckDB connection with views ``runs``, ``flows``, ``series``, ``link_series`` and
    ``counters`` over the store.

    A file that cannot be read (truncated by a power loss) is left out with a
    SkippedFileWarning, as :func:`load` does, instead of failing every query. The store path is
    used literally: glob characters in it (``[a]``, ``*``) are not patterns.
    """
    import duckdb

    root = Path(dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such store directory")
    check_store_dir(root)
    con = con or duckdb.connect()
    sources = {t: _duckdb_source(con, root, t) for t in TABLES}
    if sources["runs"] is None:  # nothing committed: flows/series files would all be orphans
        sources = dict.fromkeys(TABLES)
    for t, src in sources.items():
        if src is None:
            schema = _schema(t)
            empty = schema.empty_table() if schema is not None else pa.table({"run_id": pa.array([], pa.string())})
            con.register(f"_empty_{t}", empty)
            con.execute(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM _empty_{t}")
        elif t == "runs":
            con.execute(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM {src}")
        else:  # skip orphans (files whose run has no runs file yet)
            con.execute(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM {src} WHERE run_id IN (SELECT run_id FROM runs)")
    return con


_GLOB_CHARS = frozenset("*?[]{}")


def _duckdb_source(con, root: Path, table: str) -> str | None:
    """The read_parquet(...) expression for one table directory, or None when it has no
    readable file. A glob over the directory when that works (fast, one short SQL string);
    otherwise — glob characters in the path, or a file DuckDB cannot read — the explicit list of
    files that parse, which DuckDB takes literally."""
    import duckdb

    files = _parquet_files(root / table)
    if not files:
        return None
    opts = "union_by_name=true, filename=false"
    if not _GLOB_CHARS.intersection(str(root / table)):
        src = f"read_parquet({_sql_str(str(root / table / '*.parquet'))}, {opts})"
        try:  # reads every footer: fails on a truncated file
            con.execute(f"SELECT count(*) FROM {src}").fetchone()
            return src
        except duckdb.Error:
            pass
    good = []
    for p in files:
        try:
            _ = pq.ParquetFile(p).metadata  # the footer parses: the file is whole
            good.append(p)
        except Exception as e:
            warnings.warn(f"{p}: unreadable, left out of the query ({e})", SkippedFileWarning, stacklevel=3)
    if not good:
        return None
    return f"read_parquet([{', '.join(_sql_str(str(p)) for p in good)}], {opts})"


def query(dir: str | os.PathLike, sql: str) -> pd.DataFrame:
    """Run ``sql`` against the views runs / flows / series / link_series / counters of a store; returns a
    DataFrame.

    Swept parameter columns have dots in their names: quote them, e.g.
    ``SELECT "bottleneck.loss", avg(goodput_bps) FROM flows GROUP BY 1``.
    """
    con = connect(dir)
    try:
        return con.execute(sql).fetchdf()
    finally:
        con.close()
