"""Figures of a result store, drawn only from the result tables (so they work for every backend).

Every figure function takes a Results-like object (attributes ``runs``, ``flows``, ``series``,
``link_series``, ``meta``; a mapping with those keys works too) and returns a
``matplotlib.figure.Figure`` drawn with the Agg canvas; pyplot is never imported, so no global
figure state is created or leaked. ``KINDS`` maps a kind name to ``(function, description)``;
``ccbench plot DIR KIND`` and the HTML report use it.

Time-series figures show one run, chosen by :func:`select_run`: ``run_id=...``, or
``where={"bottleneck.loss": "1%"}`` (the first matching ok run), or by default the first ok run
in a stable order (grid order of the swept values, then repeat, then run id).

A figure with nothing to draw raises :class:`PlotError` naming what is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .legible import (
    MAX_SERIES,
    facet_grid,
    is_missing,
    legend_below,
    legend_right,
    series_labels,
    short_keys,
    tidy,
    wrap_for,
)

__all__ = [
    "KINDS",
    "PlotError",
    "Tables",
    "tables",
    "select_run",
    "swept_columns",
    "varying_axes",
    "swept_axes",
    "make",
    "goodput_vs_loss",
    "goodput_vs_jitter",
    "goodput_vs_rtt",
    "goodput_vs_buffer",
    "goodput_vs_flows",
    "goodput_ratio",
    "throughput_time",
    "cwnd_time",
    "rtt_time",
    "pacing_time",
    "queue_time",
    "rtt_cdf",
    "probe_cdf",
    "throughput_delay",
    "goodput_probe_delay",
    "jain",
    "periodogram",
]


class PlotError(ValueError):
    """The data has nothing this figure can draw (the message says what is missing)."""


# Numeric descriptor columns of flows/runs a sweep axis maps to, with axis labels.
AXES = {
    "loss_pct": "random loss (%)",
    "jitter_ms": "jitter (ms)",
    "rtt_ms": "base RTT (ms)",
    "buffer_bdp": "buffer (× BDP)",
    "rate_mbps": "bottleneck rate (Mbit/s)",
    "n_flows": "number of flows",
}

_STANDARD_EXTRA = {"repeat"}


# ---- tables and run selection ----------------------------------------------------------------


@dataclass
class Tables:
    """The four result tables and the store's metadata, whatever object they came from."""

    runs: pd.DataFrame
    flows: pd.DataFrame
    series: Callable[[], pd.DataFrame]
    link_series: Callable[[], pd.DataFrame]
    meta: dict

    def get_series(self) -> pd.DataFrame:
        return self.series()

    def get_link_series(self) -> pd.DataFrame:
        return self.link_series()


def _lazy(obj: Any, name: str) -> Callable[[], pd.DataFrame]:
    cache: dict = {}

    def get() -> pd.DataFrame:
        if "v" not in cache:
            if isinstance(obj, Mapping):
                v = obj.get(name)
            else:
                v = getattr(obj, name, None)
            cache["v"] = v if isinstance(v, pd.DataFrame) else pd.DataFrame()
        return cache["v"]

    return get


def tables(results: Any) -> Tables:
    """Wrap a Results, a RunResult, a mapping of DataFrames or a Tables (series read lazily)."""
    if isinstance(results, Tables):
        return results
    if isinstance(results, (str, bytes)) or hasattr(results, "__fspath__"):
        from .results.store import load

        results = load(results)

    def frame(name: str) -> pd.DataFrame:
        v = results.get(name) if isinstance(results, Mapping) else getattr(results, name, None)
        return v if isinstance(v, pd.DataFrame) else pd.DataFrame()

    meta = results.get("meta") if isinstance(results, Mapping) else getattr(results, "meta", None)
    return Tables(
        frame("runs"), frame("flows"), _lazy(results, "series"), _lazy(results, "link_series"), dict(meta or {})
    )


def _grid_keys(t: Tables) -> list[str]:
    grid = t.meta.get("grid") or {}
    return [k for k in grid if k != "repeat"]


def swept_columns(results: Any) -> list[str]:
    """Columns of ``runs`` that hold swept values (named by key path), in grid order."""
    t = tables(results)
    cols = []
    for key in _grid_keys(t):
        for name in (key, f"sweep.{key}"):
            if name in t.runs.columns:
                cols.append(name)
                break
    if not cols:  # no metadata: swept columns are the key paths (they contain a dot)
        cols = [c for c in t.runs.columns if "." in c]
    # A store holding several scenarios (the parts of a study, e.g. "dumbbell-loss/alone" and
    # "dumbbell-loss/competing") has cells that differ by scenario: pooling them would mix a
    # lone flow with a competing one, so the scenario name is a cell dimension too.
    if "name" in t.runs.columns and t.runs["name"].dropna().nunique() > 1:
        cols.insert(0, "name")
    return cols


def ok_runs(t: Tables) -> pd.DataFrame:
    runs = t.runs
    if "status" in runs.columns:
        runs = runs[runs["status"] == "ok"]
    return runs


def _sort_key_values(values: pd.Series, grid_values: Optional[list]) -> pd.Series:
    """Position of each value in the grid's list (the order the user wrote), else natural order."""
    if grid_values:
        pos = {str(v): i for i, v in enumerate(grid_values)}
        return values.map(lambda v: pos.get(str(v), len(pos)))
    return values


def ordered_runs(t: Tables) -> pd.DataFrame:
    runs = ok_runs(t).copy()
    if runs.empty:
        return runs
    grid = t.meta.get("grid") or {}
    keys, tmp = [], []
    for col in swept_columns(t):
        key = col[len("sweep.") :] if col.startswith("sweep.") and col not in grid else col
        name = f"__order_{len(tmp)}"
        runs[name] = _sort_key_values(runs[col], grid.get(key))
        keys.append(name)
        tmp.append(name)
    if "repeat" in runs.columns:
        keys.append("repeat")
    keys.append("run_id")
    runs = runs.sort_values(keys, kind="stable")
    return runs.drop(columns=tmp)


def _matches(value: Any, wanted: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return wanted is None
    if value == wanted or str(value) == str(wanted):
        return True
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return str(value).lower() == str(wanted).lower()


def _filter(df: pd.DataFrame, where: Optional[Mapping[str, Any]]) -> pd.DataFrame:
    for key, wanted in (where or {}).items():
        col = key if key in df.columns else f"sweep.{key}" if f"sweep.{key}" in df.columns else None
        if col is None:
            raise PlotError(f"no column {key!r} to select on (columns: {', '.join(map(str, df.columns))})")
        df = df[df[col].map(lambda v, wanted=wanted: _matches(v, wanted))]
    return df


def select_run(results: Any, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None) -> str:
    """The run a time-series figure shows: ``run_id`` (a unique prefix is enough), else the first
    ok run matching ``where`` in stable order (grid order, repeat, run id)."""
    t = tables(results)
    if run_id is not None:
        ids = [r for r in t.runs.get("run_id", pd.Series(dtype=str)).astype(str) if r.startswith(run_id)]
        if not ids:
            raise PlotError(f"no run {run_id!r} in the store")
        if len(set(ids)) > 1:
            raise PlotError(f"run id prefix {run_id!r} is ambiguous ({len(set(ids))} runs)")
        return ids[0]
    runs = ordered_runs(t)
    if runs.empty:
        raise PlotError("no ok runs in the store")
    chosen = _filter(runs, where)
    if chosen.empty:
        shown = ", ".join(f"{k}={v}" for k, v in (where or {}).items())
        raise PlotError(f"no ok run matches {shown}")
    return str(chosen["run_id"].iloc[0])


def _run_title(t: Tables, run_id: str) -> str:
    row = t.runs[t.runs["run_id"] == run_id]
    parts = [f"run {run_id[:10]}"]
    if not row.empty:
        r = row.iloc[0]
        cols = swept_columns(t)
        # beside a row of nothing every value the run sets "varies": all of them are named
        label = series_labels([{c: r[c] for c in cols}, dict.fromkeys(cols)], cols)[0]
        if label:
            parts.append(label)
        if "repeat" in row.columns and pd.notna(r["repeat"]):
            parts.append(f"repeat {r['repeat']}")
        if "backend" in row.columns:
            parts.append(str(r["backend"]))
    return ", ".join(parts)


def is_function_of(df: pd.DataFrame, col: str, of: Sequence[str]) -> bool:
    """True when ``col`` has one value per combination of ``of`` (it adds no information)."""
    if not of:
        return df[col].astype(str).nunique() <= 1
    return bool((df.groupby(list(of), dropna=False)[col].agg(lambda s: s.astype(str).nunique()) <= 1).all())


def swept_axes(results: Any) -> list[str]:
    """The numeric descriptor columns that vary within one scenario of the store (within one part
    of a study): the axes the grid sweeps. A column that differs only between parts (each part
    with its own buffer, say) is not one."""
    t = tables(results)
    flows = t.flows
    if "run_id" in flows.columns:
        flows = flows[flows["run_id"].isin(ok_runs(t)["run_id"])]
    out = []
    for c in AXES:
        if c not in flows.columns:
            continue
        if "name" in flows.columns and flows["name"].notna().any():
            n = flows.groupby("name")[c].nunique(dropna=True)
            if (n > 1).any():
                out.append(c)
        elif flows[c].dropna().nunique() > 1:
            out.append(c)
    return out


def _where_swept(flows: pd.DataFrame, x: str) -> pd.DataFrame:
    """The flows of the scenarios (parts) in which ``x`` varies; PlotError when none does."""
    if "name" in flows.columns and flows["name"].notna().any():
        n = flows.groupby("name")[x].nunique(dropna=True)
        flows = flows[flows["name"].isin(n[n > 1].index)]
    elif flows[x].nunique() <= 1:
        flows = flows.iloc[0:0]
    if flows.empty:
        raise PlotError(f"{AXES.get(x, x)} is not swept: it does not vary within any scenario of the store")
    return flows


def varying_axes(results: Any) -> list[str]:
    """The numeric descriptor columns (loss_pct, jitter_ms, ...) that vary between ok runs."""
    t = tables(results)
    flows = t.flows
    if "run_id" in flows.columns:
        flows = flows[flows["run_id"].isin(ok_runs(t)["run_id"])]
    return [c for c in AXES if c in flows.columns and flows[c].dropna().nunique() > 1]


def _other_cells(df: pd.DataFrame, t: Tables, explained_by: Sequence[str]) -> list[str]:
    """Swept columns that vary in ``df`` and are not determined by ``explained_by`` columns
    (e.g. "bottleneck.loss" is determined by loss_pct, "flows.0.cc" by cc)."""
    out = []
    for col in swept_columns(t):
        if col not in df.columns or df[col].astype(str).nunique() <= 1:
            continue
        if any(is_function_of(df, col, [e]) for e in explained_by if e in df.columns):
            continue
        out.append(col)
    return out


def _label(values: Mapping[str, Any]) -> str:
    """``key=value`` of the values set (a missing value is left out), short key names."""
    keys = [k for k, v in values.items() if not is_missing(v)]
    short = short_keys(keys)
    return ", ".join(f"{short[k]}={values[k]}" for k in keys)


def _cell_names(df: pd.DataFrame, others: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) per combination of ``others``, labelled only by the keys that vary."""
    if not others:
        return [("", df)]
    groups = list(df.groupby(list(others), sort=True, dropna=False))
    keys = [k if isinstance(k, tuple) else (k,) for k, _ in groups]
    labels = series_labels([dict(zip(others, k)) for k in keys], list(others))
    return [(lab, g) for lab, (_, g) in zip(labels, groups)]


def _title(ax, text: str, fontsize: str = "medium", **kw: Any) -> None:
    """An axes title wrapped to the axes (to most of it when it shares the line on the left)."""
    share = 0.7 if kw.get("loc") == "left" else 1.0
    ax.set_title(wrap_for(ax, text, fontsize, share), fontsize=fontsize, **kw)


def _suptitle(fig: Figure, text: str) -> None:
    fig.suptitle(wrap_for(fig, text), fontsize="medium")


# ---- helpers for drawing ---------------------------------------------------------------------


def new_figure(
    nrows: int = 1, ncols: int = 1, width: float = 7.0, height: float = 4.2, sharex: bool = False, sharey: bool = False
):
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, sharex=sharex, sharey=sharey, squeeze=False)
    return fig, axes


def _mean_ci(values: Iterable[float], high: Optional[float] = None):
    """Mean and 95 % t interval of a quantity that is never negative (every figure's: goodput,
    delay, Jain's index with ``high=1``), cut to its range (analysis.mean_ci)."""
    from . import analysis

    return analysis.mean_ci(list(values), nonnegative=True, bounds=(0.0, high))


def colour_map(names: Iterable[str]) -> dict[str, str]:
    """A fixed colour per algorithm name so every figure uses the same one."""
    palette = [
        "#1f77b4",
        "#d62728",
        "#2ca02c",
        "#ff7f0e",
        "#9467bd",
        "#8c564b",
        "#e377c2",
        "#7f7f7f",
        "#bcbd22",
        "#17becf",
    ]
    return {n: palette[i % len(palette)] for i, n in enumerate(sorted(set(map(str, names))))}


def ok_flows(t: Tables) -> pd.DataFrame:
    flows = t.flows
    if flows.empty or "goodput_bps" not in flows.columns:
        raise PlotError("no flow rows: the store has no successful runs")
    if "run_id" in flows.columns and "run_id" in t.runs.columns:
        flows = flows[flows["run_id"].isin(ok_runs(t)["run_id"])]
    if flows.empty:
        raise PlotError("no flow rows of ok runs")
    return flows


def _per_run_cc(flows: pd.DataFrame, value: str, keys: Sequence[str]) -> pd.DataFrame:
    """One row per (run, cc, keys): the mean of ``value`` over that run's flows of that cc.
    The run (a repeat) is the independent sample; flows of one run are not."""
    cols = ["run_id", "cc", *[k for k in keys if k not in ("run_id", "cc")]]
    return flows.groupby(cols, dropna=False, sort=False)[value].mean().reset_index()


def _loss_positions(values: Sequence[float]) -> tuple[dict[float, float], bool]:
    """x positions of loss rates on a log axis; 0 % gets its own place a decade left of the
    smallest positive rate (it has no place on a log axis). Returns (positions, log?)."""
    positive = sorted(v for v in values if v > 0)
    if not positive:
        return {v: v for v in values}, False
    zero_at = positive[0] / 10.0
    return {v: (v if v > 0 else zero_at) for v in values}, True


def _fmt_num(v: float) -> str:
    return f"{v:g}"


def _setup_x(ax, x: str, positions: dict[float, float], log: bool) -> None:
    ax.set_xlabel(AXES.get(x, x))
    if log:
        ax.set_xscale("log")
        ticks = sorted(positions.items(), key=lambda kv: kv[1])
        ax.set_xticks([p for _, p in ticks], [_fmt_num(v) for v, _ in ticks])
        ax.minorticks_off()
        if 0.0 in positions:  # a dotted break between 0 and the log part
            positive = sorted(p for v, p in positions.items() if v > 0)
            ax.axvline(math.sqrt(positions[0.0] * positive[0]), color="0.7", lw=0.8, ls=":")


def _dodge(positions: dict[float, float], log: bool, k: int, n: int) -> dict[float, float]:
    """Shift line k of n sideways a little so error bars at one x do not hide each other."""
    if n <= 1:
        return positions
    shift = k - (n - 1) / 2.0
    if log:
        return {v: p * 1.035**shift for v, p in positions.items()}
    vals = list(positions.values())
    span = (max(vals) - min(vals)) or (abs(vals[0]) or 1.0)
    return {v: p + shift * 0.006 * span for v, p in positions.items()}


def _numeric_x(flows: pd.DataFrame, x: str) -> pd.DataFrame:
    if x not in flows.columns:
        raise PlotError(f"no {x} column in the flows table")
    flows = flows[flows[x].notna()].copy()
    if flows.empty:
        raise PlotError(f"no flows with a value of {x}")
    flows[x] = flows[x].astype(float)
    return flows


# ---- goodput vs a swept axis ------------------------------------------------------------------


def _facets_or_one(groups: list, n_series: int, **kw: Any):
    """(figure, [(axes, groups drawn in it)]): one axes for all groups, or one facet per group
    when the series would be more than MAX_SERIES."""
    if n_series > MAX_SERIES and len(groups) > 1:
        fig, axes = facet_grid(len(groups), **kw)
        return fig, [(ax, [g]) for ax, g in zip(axes, groups)], True
    fig, axes = new_figure()
    return fig, [(axes[0, 0], groups)], False


def goodput_vs(results: Any, x: str = "loss_pct", confidence: float = 0.95) -> Figure:
    """Mean per-flow goodput (over the repeats of a cell) vs ``x``, one line per cc (and per
    value of any other swept axis), with t intervals. ``x`` = loss_pct gets a log axis. Only the
    scenarios (parts) in which ``x`` varies are drawn; with more than MAX_SERIES lines, one
    facet per cell of the other swept axes."""
    t = tables(results)
    flows = _where_swept(_numeric_x(ok_flows(t), x), x)
    others = _other_cells(flows, t, [x, "cc"])
    per_run = _per_run_cc(flows, "goodput_bps", [x, *others])
    colours = colour_map(per_run["cc"])
    xs = sorted(per_run[x].unique())
    positions, log = _loss_positions(xs) if x == "loss_pct" else ({v: v for v in xs}, False)
    groups = _cell_names(per_run, others)
    n_series = sum(g["cc"].nunique() for _, g in groups)
    fig, panels, faceted = _facets_or_one(groups, n_series, sharex=True, sharey=True)
    styles = ["-", "--", ":", "-."]
    handles: dict[str, Any] = {}
    for ax, pgroups in panels:
        n_lines = sum(g["cc"].nunique() for _, g in pgroups)
        k = 0
        for oi, (cell, odf) in enumerate(pgroups):
            for cc, df in odf.groupby("cc", sort=True):
                pos = _dodge(positions, log, k, n_lines)
                k += 1
                pts = []
                for xv, c in df.groupby(x, sort=True):
                    ci = _mean_ci(c["goodput_bps"] / 1e6)
                    pts.append((pos[xv], ci.mean, ci.lo, ci.hi))
                err = np.array(
                    [
                        [(m - lo) if lo is not None else 0.0 for _, m, lo, _ in pts],
                        [(hi - m) if hi is not None else 0.0 for _, m, _, hi in pts],
                    ]
                )
                label = str(cc) if faceted or not cell else f"{cc} ({cell})"
                h = ax.errorbar(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    yerr=err,
                    color=colours[str(cc)],
                    marker="o",
                    ms=4,
                    capsize=3,
                    ls=styles[oi % len(styles)] if not faceted else "-",
                    lw=1.4,
                    label=label,
                )
                handles.setdefault(label, h)
        _setup_x(ax, x, positions, log)
        ax.set_ylabel("goodput per flow (Mbit/s)" if not faceted else "Mbit/s per flow")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if faceted:
            _title(ax, pgroups[0][0] or "all runs", fontsize="small")
    legend_below(fig, list(handles.values()), list(handles))
    _suptitle(fig, f"Goodput vs {AXES.get(x, x)}: mean of repeats, {confidence:.0%} t interval")
    return fig


def goodput_vs_loss(results: Any) -> Figure:
    return goodput_vs(results, "loss_pct")


def goodput_vs_jitter(results: Any) -> Figure:
    return goodput_vs(results, "jitter_ms")


def goodput_vs_rtt(results: Any) -> Figure:
    return goodput_vs(results, "rtt_ms")


def goodput_vs_buffer(results: Any) -> Figure:
    return goodput_vs(results, "buffer_bdp")


def goodput_vs_flows(results: Any) -> Figure:
    return goodput_vs(results, "n_flows")


def default_pair(ccs: Sequence[str]) -> tuple[str, str]:
    names = sorted(set(map(str, ccs)))
    if len(names) < 2:
        raise PlotError(f"a ratio needs two algorithms; the store has {names or 'none'}")
    base = "cubic" if "cubic" in names else names[0]
    num = "bbr" if "bbr" in names and base != "bbr" else next(n for n in names if n != base)
    return num, base


def goodput_ratio(
    results: Any,
    numerator: Optional[str] = None,
    baseline: Optional[str] = None,
    x: Optional[str] = None,
    confidence: float = 0.95,
) -> Figure:
    """Mean goodput of ``numerator`` over ``baseline`` (default BBR/CUBIC, else the first two
    algorithms) vs the swept numeric axis ``x`` (default: the first one that varies), with the
    interval from analysis.ratio_ci when it exists."""
    from . import analysis

    t = tables(results)
    flows = ok_flows(t)
    if numerator is None or baseline is None:
        n, b = default_pair(flows["cc"].dropna())
        numerator, baseline = numerator or n, baseline or b
    for name in (numerator, baseline):
        if not (flows["cc"] == name).any():
            raise PlotError(f"no flows of {name!r} (algorithms: {sorted(flows['cc'].dropna().unique())})")
    if x is None:
        axes_ = swept_axes(t)
        if not axes_:
            raise PlotError("no numeric axis (loss_pct, jitter_ms, rtt_ms, ...) is swept")
        x = axes_[0]
    flows = _where_swept(_numeric_x(flows, x), x)
    others = _other_cells(flows, t, [x, "cc"])
    per_run = _per_run_cc(flows, "goodput_bps", [x, *others])
    ratio_ci = getattr(analysis, "ratio_ci", None)
    lines = []
    for cname, odf in _cell_names(per_run, others):
        rows = []
        for xv, cell in odf.groupby(x, sort=True):
            a = cell.loc[cell["cc"] == numerator, "goodput_bps"].dropna().tolist()
            b = cell.loc[cell["cc"] == baseline, "goodput_bps"].dropna().tolist()
            if not a or not b or np.mean(b) == 0:
                continue
            lo = hi = None
            if ratio_ci is not None:
                r = ratio_ci(a, b, confidence=confidence)
                ratio, lo, hi = r.ratio, r.lo, r.hi
            else:
                ratio = float(np.mean(a) / np.mean(b))
            rows.append((xv, ratio, lo, hi))
        if rows:
            lines.append((cname, rows))
    if not lines:
        raise PlotError(f"no cell has flows of both {numerator} and {baseline}")
    xs = sorted({r[0] for _, rows in lines for r in rows})
    positions, log = _loss_positions(xs) if x == "loss_pct" else ({v: v for v in xs}, False)
    fig, panels, faceted = _facets_or_one([[line] for line in lines], len(lines), sharex=True, sharey=True)
    styles = ["-", "--", ":", "-."]
    greys = ["#222222", "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b"]
    handles: dict[str, Any] = {}
    drawn = [(ax, k if not faceted else 0, line) for ax, pl in panels for k, line in enumerate(g[0] for g in pl)]
    for ax, k, (cell, rows) in drawn:
        pos = _dodge(positions, log, k, 1 if faceted else len(lines))
        px = [pos[r[0]] for r in rows]
        py = [r[1] for r in rows]
        err = np.array(
            [
                [(r[1] - r[2]) if r[2] is not None and np.isfinite(r[2]) else 0.0 for r in rows],
                [(r[3] - r[1]) if r[3] is not None and np.isfinite(r[3]) else 0.0 for r in rows],
            ]
        )
        label = f"{numerator} / {baseline}" + (f" ({cell})" if cell and not faceted else "")
        h = ax.errorbar(
            px,
            py,
            yerr=err,
            marker="o",
            capsize=3,
            color=greys[k % len(greys)],
            ls=styles[(k // len(greys)) % len(styles)],
            label=label,
        )
        handles.setdefault(label, h)
        ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
        _setup_x(ax, x, positions, log)
        ax.set_ylabel(f"{numerator} / {baseline}" if faceted else f"goodput ratio {numerator} / {baseline}")
        ax.grid(True, alpha=0.3)
        if faceted:
            _title(ax, cell or "all runs", fontsize="small")
    interval = f", {confidence:.0%} interval" if ratio_ci is not None else ""
    _suptitle(fig, f"Goodput of {numerator} relative to {baseline}{interval}")
    if len(handles) > 1:
        legend_below(fig, list(handles.values()), list(handles))
    return fig


# ---- time series of one run -------------------------------------------------------------------


def _run_series(t: Tables, run_id: str, column: str) -> pd.DataFrame:
    series = t.get_series()
    if series.empty or "run_id" not in series.columns:
        raise PlotError("no series rows: the store has no time series")
    s = series[series["run_id"] == run_id]
    if s.empty:
        raise PlotError(f"no series rows for run {run_id}")
    if column not in s.columns or s[column].isna().all():
        raise PlotError(f"no {column} samples in run {run_id} (the backend did not record it)")
    return s.sort_values(["flow_id", "t_s"])


def _per_flow_time(
    results: Any,
    column: str,
    ylabel: str,
    scale: float,
    title: str,
    run_id: Optional[str],
    where: Optional[Mapping[str, Any]],
) -> Figure:
    """One panel per algorithm, one line per flow of ``column`` / ``scale`` over time."""
    t = tables(results)
    rid = select_run(t, run_id, where)
    s = _run_series(t, rid, column)
    ccs = sorted(s["cc"].dropna().astype(str).unique()) or ["?"]
    empty = [cc for cc in ccs if cc != "?" and s.loc[s["cc"].astype(str) == cc, column].isna().all()]
    ccs = [cc for cc in ccs if cc not in empty]
    if empty:  # e.g. CUBIC has no pacing rate in the simulator: say so instead of an empty panel
        title += f" ({', '.join(empty)}: no {column} samples)"
    fig, axes = new_figure(len(ccs), 1, height=2.2 + 2.0 * len(ccs), sharex=True, sharey=True)
    colours = colour_map(ccs)
    for ax, cc in zip(axes[:, 0], ccs):
        sub = s[s["cc"].astype(str) == cc] if cc != "?" else s
        flows = sub["flow_id"].unique()
        lw = 1.2 if len(flows) <= 4 else 0.7
        for fid, f in sub.groupby("flow_id", sort=True):
            ax.plot(
                f["t_s"],
                f[column].astype(float) / scale,
                lw=lw,
                alpha=0.85,
                color=colours[cc] if len(flows) == 1 else None,
                label=f"flow {fid}",
            )
        ax.set_title(f"{cc}: {len(flows)} flow{'s' if len(flows) != 1 else ''}", fontsize="medium", loc="left")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if 1 < len(flows) <= 6:
            legend_right(ax)
    # only now: set_ylim freezes autoscaling, and the shared y range must cover every panel
    axes[0, 0].set_ylim(bottom=0)
    axes[-1, 0].set_xlabel("time (s)")
    _suptitle(fig, f"{title}\n{_run_title(t, rid)}")
    return fig


def throughput_time(results: Any, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None) -> Figure:
    return _per_flow_time(results, "goodput_bps", "throughput (Mbit/s)", 1e6, "Per-flow throughput", run_id, where)


def cwnd_time(results: Any, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None) -> Figure:
    return _per_flow_time(results, "cwnd_pkts", "cwnd (packets)", 1.0, "Congestion window", run_id, where)


def rtt_time(results: Any, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None) -> Figure:
    return _per_flow_time(results, "rtt_ms", "RTT (ms)", 1.0, "Smoothed RTT", run_id, where)


def pacing_time(results: Any, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None) -> Figure:
    return _per_flow_time(results, "pacing_bps", "pacing rate (Mbit/s)", 1e6, "Pacing rate", run_id, where)


def _run_link_series(t: Tables, run_id: str, column: str, missing: str) -> pd.DataFrame:
    ls = t.get_link_series()
    if ls.empty or "run_id" not in ls.columns or column not in ls.columns:
        raise PlotError(missing)
    s = ls[(ls["run_id"] == run_id) & ls[column].notna()]
    if s.empty:
        raise PlotError(f"{missing} (run {run_id})")
    return s.sort_values("t_s")


def queue_time(results: Any, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None) -> Figure:
    """Bottleneck queue occupancy over time (link_series.queue_bytes), with the buffer size."""
    t = tables(results)
    rid = select_run(t, run_id, where)
    s = _run_link_series(t, rid, "queue_bytes", "no queue samples: the backend recorded no link_series")
    fig, axes = new_figure()
    ax = axes[0, 0]
    ax.plot(s["t_s"], s["queue_bytes"].astype(float) / 1e3, lw=1.0, color="#1f77b4", label="queue")
    buf = (
        t.flows.loc[t.flows.get("run_id", pd.Series(dtype=str)) == rid, "buffer_bytes"]
        if "buffer_bytes" in t.flows.columns
        else pd.Series(dtype=float)
    )
    buf = buf.dropna()
    if not buf.empty:
        ax.axhline(float(buf.iloc[0]) / 1e3, color="#d62728", ls="--", lw=1.0, label="buffer size")
        legend_right(ax)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bottleneck queue (kB)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    _title(ax, f"Bottleneck queue\n{_run_title(t, rid)}")
    return fig


# ---- distributions ----------------------------------------------------------------------------


def _selected_run_ids(t: Tables, run_id: Optional[str], where: Optional[Mapping[str, Any]]) -> list[str]:
    if run_id is not None:
        return [select_run(t, run_id)]
    runs = _filter(ordered_runs(t), where)
    if runs.empty:
        raise PlotError("no ok runs" + (f" match {_label(where)}" if where else ""))
    return runs["run_id"].astype(str).tolist()


def _cell_labels(t: Tables, run_ids: Sequence[str], explained_by: Sequence[str] = ("cc",)) -> dict[str, str]:
    """run_id -> label of its cell (varying swept values not determined by the cc)."""
    runs = t.runs[t.runs["run_id"].isin(run_ids)].copy()
    mix = _cc_mix(t)
    runs["cc"] = runs["run_id"].map(mix)
    others = _other_cells(runs, t, explained_by)
    if not others:
        return {r: "" for r in runs["run_id"]}
    labels = series_labels([{c: r[c] for c in others} for _, r in runs.iterrows()], others)
    return dict(zip(runs["run_id"], labels))


def _cc_mix(t: Tables) -> dict[str, str]:
    """run_id -> its algorithms joined by '+' (e.g. 'bbr+cubic')."""
    f = t.flows
    if f.empty or "cc" not in f.columns:
        return {}
    return f.groupby("run_id")["cc"].agg(lambda s: "+".join(sorted(set(s.dropna().astype(str))))).to_dict()


def _cdf(ax, values: np.ndarray, label: str, colour: Optional[str], ls: str = "-") -> None:
    v = np.sort(values[np.isfinite(values)])
    y = np.arange(1, v.size + 1) / v.size
    ax.step(v, y, where="post", label=f"{label} (n={v.size})", color=colour, ls=ls, lw=1.3)


def _draw_cdfs(groups: list[tuple[str, str, np.ndarray]], xlabel: str, title: str) -> Figure:
    fig, axes = new_figure()
    ax = axes[0, 0]
    colours = colour_map(g[0] for g in groups)
    cells = sorted({g[1] for g in groups})
    styles = ["-", "--", ":", "-."]
    for colour_key, cell, values in groups:
        label = colour_key + (f" ({cell})" if cell else "")
        ls = styles[cells.index(cell) % len(styles)]
        _cdf(ax, values, label, colours[colour_key], ls)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of samples ≤ x")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    legend_right(ax)
    _title(ax, title)
    return fig


def _split_cells(labels: dict[str, str], n_colour: int, limit: int = 8) -> bool:
    return n_colour * max(1, len(set(labels.values()))) <= limit


def rtt_cdf(results: Any, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None) -> Figure:
    """CDF of the per-sample RTT (series.rtt_ms) per algorithm, pooled over the selected runs
    (default all ok runs); one line per cell too when that stays readable."""
    t = tables(results)
    ids = _selected_run_ids(t, run_id, where)
    series = t.get_series()
    if series.empty or "rtt_ms" not in series.columns:
        raise PlotError("no series rows: the store has no RTT samples")
    s = series[series["run_id"].isin(ids) & series["rtt_ms"].notna()]
    if s.empty:
        raise PlotError("no rtt_ms samples in the selected runs")
    labels = _cell_labels(t, ids)
    ccs = sorted(s["cc"].dropna().astype(str).unique())
    split = _split_cells(labels, len(ccs))
    s = s.assign(_cell=s["run_id"].map(labels).fillna("") if split else "")
    groups = [(str(cc), cell, g["rtt_ms"].to_numpy(float)) for (cc, cell), g in s.groupby(["cc", "_cell"], sort=True)]
    what = f"run {ids[0][:10]}" if len(ids) == 1 else f"{len(ids)} runs"
    return _draw_cdfs(groups, "RTT (ms)", f"RTT samples of the flows ({what})")


def probe_cdf(results: Any, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None) -> Figure:
    """CDF of the latency-probe RTT (link_series.probe_rtt_ms) per algorithm mix of the run."""
    t = tables(results)
    ids = _selected_run_ids(t, run_id, where)
    ls = t.get_link_series()
    missing = "no probe samples: the scenario had no [probe]"
    if ls.empty or "probe_rtt_ms" not in ls.columns:
        raise PlotError(missing)
    s = ls[ls["run_id"].isin(ids) & ls["probe_rtt_ms"].notna()]
    if s.empty:
        raise PlotError(missing)
    mix = _cc_mix(t)
    labels = _cell_labels(t, ids)
    split = _split_cells(labels, len(set(mix.get(r, "") for r in ids)))
    s = s.assign(_mix=s["run_id"].map(mix).fillna("?"), _cell=s["run_id"].map(labels).fillna("") if split else "")
    groups = [
        (str(m), cell, g["probe_rtt_ms"].to_numpy(float)) for (m, cell), g in s.groupby(["_mix", "_cell"], sort=True)
    ]
    what = f"run {ids[0][:10]}" if len(ids) == 1 else f"{len(ids)} runs"
    return _draw_cdfs(groups, "probe RTT (ms)", f"Latency probes through the bottleneck ({what})")


# ---- summaries over runs ----------------------------------------------------------------------


def _mean_cross(ax, x: pd.Series, y: pd.Series, colour: str, marker: str) -> Any:
    """The mean of (x, y) with its 95 % t interval on each axis, cut at 0, drawn as a cross."""
    gx, gy = _mean_ci(x), _mean_ci(y)
    xerr = [[gx.mean - max(gx.lo, 0.0)], [gx.hi - gx.mean]] if gx.lo is not None else None
    yerr = [[gy.mean - max(gy.lo, 0.0)], [gy.hi - gy.mean]] if gy.lo is not None else None
    return ax.errorbar(
        [gx.mean], [gy.mean], xerr=xerr, yerr=yerr, color=colour, capsize=3, marker=marker, ms=7, ls="none"
    )


def throughput_delay(results: Any, confidence: float = 0.95) -> Figure:
    """Mean goodput vs mean 95th-percentile RTT per algorithm (and cell), as Pantheon draws it:
    delay axis inverted, so up and right is better. Small dots are single runs; each
    algorithm's mean is a cross spanning its t interval on both axes. With more than MAX_SERIES
    (algorithm, cell) series, one facet per cell."""
    t = tables(results)
    flows = ok_flows(t)
    if "rtt_p95_ms" not in flows.columns or flows["rtt_p95_ms"].isna().all():
        raise PlotError("no rtt_p95_ms in the flows table")
    others = _other_cells(flows, t, ["cc"])
    per_run = (
        flows.groupby(["run_id", "cc", *others], dropna=False, sort=False)
        .agg(goodput=("goodput_bps", "mean"), delay=("rtt_p95_ms", "mean"))
        .reset_index()
    )
    per_run = per_run[per_run["delay"].notna() & per_run["goodput"].notna()]
    if per_run.empty:
        raise PlotError("no flow has both a goodput and a 95th-percentile RTT")
    colours = colour_map(per_run["cc"])
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    groups = _cell_names(per_run, others)
    n_series = sum(g["cc"].nunique() for _, g in groups)
    fig, panels, faceted = _facets_or_one(groups, n_series, panel_w=3.4, panel_h=3.1)
    if not faceted:
        fig.set_size_inches(7.5, 5.0)
    handles: dict[str, Any] = {}
    for ax, pgroups in panels:
        for ci_, (cell, cdf) in enumerate(pgroups):
            for cc, g in cdf.groupby("cc", sort=True):
                c = colours[str(cc)]
                ax.scatter(g["delay"], g["goodput"] / 1e6, s=10, color=c, alpha=0.35, lw=0)
                label = str(cc) if faceted or not cell else f"{cc} ({cell})"
                h = _mean_cross(ax, g["delay"], g["goodput"] / 1e6, c, markers[ci_ % len(markers)])
                h.set_label(label)
                handles.setdefault(label, h)
        ax.invert_xaxis()
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("p95 RTT (ms), ← more delay" if faceted else "95th percentile RTT (ms)  ← more delay")
        ax.set_ylabel("Mbit/s per flow" if faceted else "goodput per flow (Mbit/s)")
        # the better direction, as Pantheon writes it: above the axes' top right corner
        ax.set_title("better ↗", loc="right", fontsize="small", color="0.3")
        if faceted:
            _title(ax, pgroups[0][0] or "all runs", fontsize="small", loc="left")
    legend_below(fig, list(handles.values()), list(handles))
    _suptitle(
        fig,
        f"Throughput and delay: runs (dots), mean of runs with {confidence:.0%} t intervals (crosses); "
        "up and right is better",
    )
    return fig


def goodput_probe_delay(results: Any, confidence: float = 0.95) -> Figure:
    """Total goodput of a run vs its latency probe's 95th-percentile RTT (ping under load), one
    point per combination: a panel per algorithm mix and number of flows, a colour per remaining
    cell (e.g. the queue discipline and buffer). Mean of repeats with t intervals; small dots are
    single runs; delay axis inverted as in throughput-delay, log when it spans a decade."""
    t = tables(results)
    flows = ok_flows(t)
    runs = ok_runs(t)
    if "probe_rtt_p95_ms" not in runs.columns or runs["probe_rtt_p95_ms"].isna().all():
        raise PlotError("no probe_rtt_p95_ms in the runs table (the scenario needs a [probe] ping)")
    runs = runs[runs["probe_rtt_p95_ms"].notna()].copy()
    runs["cc"] = runs["run_id"].map(_cc_mix(t))
    runs["_n"] = runs["run_id"].map(
        flows.groupby("run_id")["flow_id"].nunique() if "flow_id" in flows.columns else flows.groupby("run_id").size()
    )
    runs["goodput"] = runs["run_id"].map(flows.groupby("run_id")["goodput_bps"].sum()) / 1e6
    runs = runs[runs["cc"].notna() & runs["goodput"].notna()]
    if runs.empty:
        raise PlotError("no ok run has both flows and a probe p95")
    ordered = ordered_runs(Tables(runs, flows, t.series, t.link_series, t.meta))
    others = _other_cells(ordered, t, ["cc", "_n"])
    ordered["_cell"] = (
        series_labels(ordered[others].to_dict("records"), others) if others else ["all runs"] * len(ordered)
    )
    cells = list(dict.fromkeys(ordered["_cell"]))
    mixes = sorted(ordered["cc"].unique(), key=lambda c: ({"cubic": 0, "bbr": 1, "vegas": 2}.get(c, 9), c))
    counts = sorted(ordered["_n"].unique())
    palette = [
        "#1f77b4",
        "#d62728",
        "#2ca02c",
        "#ff7f0e",
        "#9467bd",
        "#8c564b",
        "#e377c2",
        "#7f7f7f",
        "#bcbd22",
        "#17becf",
    ]
    colours = {c: palette[i % len(palette)] for i, c in enumerate(cells)}
    fig, axes = new_figure(
        len(counts), len(mixes), width=3.4 * len(mixes) + 1.0, height=2.9 * len(counts) + 1.0, sharex=True, sharey=True
    )
    d = ordered["probe_rtt_p95_ms"].astype(float)
    log = d.min() > 0 and d.max() / d.min() > 10
    base = ordered["base_rtt_ms"].dropna().unique() if "base_rtt_ms" in ordered.columns else []
    for i, n in enumerate(counts):
        for j, mix in enumerate(mixes):
            ax = axes[i, j]
            panel = ordered[(ordered["_n"] == n) & (ordered["cc"] == mix)]
            for cell in cells:
                g = panel[panel["_cell"] == cell]
                if g.empty:
                    continue
                c = colours[cell]
                ax.scatter(g["probe_rtt_p95_ms"], g["goodput"], s=10, color=c, alpha=0.35, lw=0)
                gx, gy = _mean_ci(g["probe_rtt_p95_ms"]), _mean_ci(g["goodput"])
                xerr = [[gx.mean - max(gx.lo, 1e-9)], [gx.hi - gx.mean]] if gx.lo is not None else None
                yerr = [[gy.mean - max(gy.lo, 0.0)], [gy.hi - gy.mean]] if gy.lo is not None else None
                ax.errorbar(
                    [gx.mean],
                    [gy.mean],
                    xerr=xerr,
                    yerr=yerr,
                    color=c,
                    capsize=3,
                    marker="o",
                    ms=6,
                    ls="none",
                    label=cell,
                )
            if len(base) == 1:
                ax.axvline(float(base[0]), color="0.5", lw=0.8, ls="--")
            ax.set_title(f"{mix}, {n} flow{'s' if n != 1 else ''}", fontsize="medium")
            ax.grid(True, alpha=0.3)
            ax.set_xlabel("ping p95 (ms)  ← more delay", fontsize="small")
            ax.set_ylabel("total goodput (Mbit/s)", fontsize="small")
    ax0 = axes[0, 0]
    if log:
        from matplotlib.ticker import FixedLocator, NullFormatter

        ax0.set_xscale("log")
        ticks = [v * 10**k for k in range(-1, 6) for v in (1, 2, 5)]
        ax0.xaxis.set_major_locator(FixedLocator([v for v in ticks if d.min() / 2 <= v <= d.max() * 2]))
        ax0.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax0.xaxis.set_minor_formatter(NullFormatter())
    ax0.invert_xaxis()
    ax0.set_ylim(0, float(ordered["goodput"].max()) * 1.1)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=colours[c], marker="o", ls="none") for c in cells]
    legend_below(fig, handles, cells)
    _suptitle(
        fig,
        f"Goodput vs latency under load: mean of runs, {confidence:.0%} t intervals"
        + (f"; dashed: base RTT {float(base[0]):g} ms" if len(base) == 1 else "")
        + "; up and right is better",
    )
    return fig


def jain(results: Any, confidence: float = 0.95) -> Figure:
    """Jain's fairness index per cell: over all flows and between groups, mean of repeats."""
    t = tables(results)
    runs = ok_runs(t)
    if "jain_index" not in runs.columns or runs["jain_index"].isna().all():
        raise PlotError("no Jain's index in the runs table (it needs runs with at least two flows)")
    runs = runs[runs["jain_index"].notna()].copy()
    if "flow_id" in t.flows.columns:
        n = t.flows.groupby("run_id")["flow_id"].nunique()
        runs = runs[runs["run_id"].map(n).fillna(0) >= 2]
        if runs.empty:
            raise PlotError("Jain's index needs runs with at least two flows; every run has one")
    cells = [c for c in swept_columns(t) if c in runs.columns and runs[c].astype(str).nunique() > 1]
    ordered = ordered_runs(Tables(runs, t.flows, t.series, t.link_series, t.meta))
    groups = list(ordered.groupby(cells, sort=False, dropna=False)) if cells else [((), ordered)]
    has_groups = "jain_index_groups" in runs.columns and runs["jain_index_groups"].notna().any()
    names, overall, between = [], [], []
    keys = [k if isinstance(k, tuple) else (k,) for k, _ in groups]
    labels = series_labels([dict(zip(cells, k)) for k in keys], cells, sep="\n")
    for label, (_, g) in zip(labels, groups):
        names.append(label or "all runs")
        overall.append(_mean_ci(g["jain_index"], high=1.0))
        between.append(_mean_ci(g["jain_index_groups"], high=1.0) if has_groups else None)
    # a cell's label needs about 0.075 in per character of its longest line (small font) and each
    # of its lines about 0.17 in: grow the figure with them so the axes keep most of it
    longest = max(len(line) for n in names for line in n.split("\n"))
    lines = max(n.count("\n") + 1 for n in names)
    per_cell = max(0.7, 0.075 * longest)
    fig, axes = new_figure(
        width=min(14.0, max(6.0, per_cell * len(names) + (4.0 if has_groups else 2.5))), height=3.6 + 0.2 * lines
    )
    ax = axes[0, 0]
    x = np.arange(len(names))
    w = 0.38 if has_groups else 0.6

    def bars(offset, cis, label, colour):
        m = [c.mean if c and c.mean is not None else np.nan for c in cis]
        err = np.array(
            [
                [(c.mean - c.lo) if c and c.lo is not None else 0 for c in cis],
                [(c.hi - c.mean) if c and c.hi is not None else 0 for c in cis],
            ]
        )
        ax.bar(x + offset, m, w, yerr=err, capsize=3, label=label, color=colour)

    bars(-w / 2 if has_groups else 0, overall, "all flows", "#1f77b4")
    if has_groups:
        bars(w / 2, between, "between groups", "#ff7f0e")
    ax.set_xticks(x, names, fontsize="small")
    ax.set_ylim(0, 1.05)
    ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
    ax.set_xlabel(wrap_for(ax, "cell (" + ", ".join(cells) + ")" if cells else "all runs"))
    ax.set_ylabel("Jain's fairness index")
    ax.grid(True, axis="y", alpha=0.3)
    if has_groups:
        legend_right(ax)
    _title(ax, f"Fairness per cell: mean of repeats, {confidence:.0%} t interval")
    return fig


def periodogram(results: Any, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None) -> Figure:
    """Periodogram of each group's aggregate throughput in one run, with the dominant period
    (analysis.dominant_period) marked."""
    from . import analysis

    pg = getattr(analysis, "periodogram", None)
    dp = getattr(analysis, "dominant_period", None)
    if pg is None or dp is None:
        raise PlotError("ccbench.analysis has no periodogram/dominant_period")
    t = tables(results)
    rid = select_run(t, run_id, where)
    s = _run_series(t, rid, "goodput_bps")
    key = "group" if "group" in s.columns and s["group"].notna().any() else "cc"
    fig, axes = new_figure()
    ax = axes[0, 0]
    colours = colour_map(s[key].astype(str))
    drawn = 0
    for gkey, g in s.groupby(key, sort=True):
        agg = g.groupby("t_s", sort=True)["goodput_bps"].sum()
        ccs = "+".join(sorted(set(g["cc"].dropna().astype(str))))
        name = f"group {gkey} ({ccs})" if key == "group" else str(gkey)
        periods, power = pg(agg.index.to_numpy(float), agg.to_numpy(float))
        periods, power = np.asarray(periods, float), np.asarray(power, float)
        ok = np.isfinite(periods) & np.isfinite(power) & (periods > 0)
        if not ok.any():
            continue
        c = colours[str(gkey)]
        total = float(np.sum(power[ok]))
        share = power[ok] / total if total > 0 else power[ok]  # fraction of the variance
        ax.plot(periods[ok], share, color=c, lw=1.2, label=name)
        per = dp(agg.index.to_numpy(float), agg.to_numpy(float))
        if per.period_s is not None:
            ax.axvline(per.period_s, color=c, ls="--", lw=1.0)
            ax.annotate(
                f"{per.period_s:.3g} s (strength {per.strength:.2f})",
                xy=(per.period_s, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, -4 - 12 * drawn),
                textcoords="offset points",
                color=c,
                fontsize="small",
                va="top",
            )
        drawn += 1
    if not drawn:
        raise PlotError(f"run {rid}: too few throughput samples for a periodogram")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("period (s)")
    ax.set_ylabel("share of the variance")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    legend_right(ax)
    _title(ax, f"Periodogram of each group's aggregate throughput\n{_run_title(t, rid)}")
    return fig


KINDS: dict[str, tuple[Callable[..., Figure], str]] = {
    "goodput-vs-loss": (goodput_vs_loss, "mean goodput per flow vs random loss (log axis), per cc, 95 % t intervals"),
    "goodput-vs-jitter": (goodput_vs_jitter, "mean goodput per flow vs jitter, per cc, 95 % t intervals"),
    "goodput-vs-rtt": (goodput_vs_rtt, "mean goodput per flow vs base RTT, per cc, 95 % t intervals"),
    "goodput-vs-buffer": (goodput_vs_buffer, "mean goodput per flow vs buffer size (× BDP), per cc"),
    "goodput-vs-flows": (goodput_vs_flows, "mean goodput per flow vs the number of flows, per cc"),
    "ratio": (goodput_ratio, "goodput of one cc over a baseline's (default BBR/CUBIC) vs the swept axis"),
    "throughput-time": (throughput_time, "per-flow throughput over time of one run, a panel per cc"),
    "cwnd-time": (cwnd_time, "per-flow congestion window over time of one run, a panel per cc"),
    "rtt-time": (rtt_time, "per-flow smoothed RTT over time of one run, a panel per cc"),
    "pacing-time": (pacing_time, "per-flow pacing rate over time of one run, a panel per cc"),
    "queue-time": (queue_time, "bottleneck queue over time of one run, with the buffer size"),
    "rtt-cdf": (rtt_cdf, "CDF of the flows' RTT samples per cc"),
    "probe-cdf": (probe_cdf, "CDF of the latency-probe RTT (needs a [probe] in the scenario)"),
    "throughput-delay": (throughput_delay, "goodput vs 95th-percentile RTT per cc, delay axis inverted (Pantheon)"),
    "goodput-probe-delay": (
        goodput_probe_delay,
        "total goodput vs the ping's p95 per combination: a panel per cc mix and flow count, "
        "a colour per remaining cell",
    ),
    "jain": (jain, "Jain's fairness index per cell, over all flows and between groups"),
    "periodogram": (periodogram, "periodogram of each group's aggregate throughput, dominant period marked"),
}

# kinds that draw one run and so accept run_id / where
RUN_KINDS = {
    "throughput-time",
    "cwnd-time",
    "rtt-time",
    "pacing-time",
    "queue-time",
    "periodogram",
    "rtt-cdf",
    "probe-cdf",
}


def make(
    results: Any, kind: str, run_id: Optional[str] = None, where: Optional[Mapping[str, Any]] = None, **kwargs: Any
) -> Figure:
    """Draw figure ``kind`` of KINDS. ``run_id``/``where`` select the run(s) for kinds that draw
    runs; for the others ``where`` filters the runs first."""
    if kind not in KINDS:
        raise PlotError(f"unknown figure kind {kind!r}; kinds: {', '.join(KINDS)}")
    fn = KINDS[kind][0]
    t = tables(results)
    if kind in RUN_KINDS:
        return tidy(fn(t, run_id=run_id, where=where, **kwargs))
    if run_id is not None or where:
        ids = set(_selected_run_ids(t, run_id, where))
        t = Tables(
            t.runs[t.runs["run_id"].isin(ids)],
            t.flows[t.flows["run_id"].isin(ids)] if "run_id" in t.flows.columns else t.flows,
            t.series,
            t.link_series,
            t.meta,
        )
    return tidy(fn(t, **kwargs))


def save(fig: Figure, path) -> None:
    """Write ``fig`` to ``path`` (format from the suffix: svg, png, pdf)."""
    fig.savefig(path, dpi=150 if str(path).lower().endswith(".png") else "figure")
