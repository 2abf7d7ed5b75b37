"""The figure a study's report opens with: ``[study.key_figure]`` of the study file (spec.KeyFigure)
drawn from the study's store. Every kind gives one colour per algorithm (plots.colour_map, so the
colours match the generic figures), labels series only by the keys that vary, puts the legend
below the axes and wraps the title.

    fig = draw(study, results)                # a matplotlib Figure; plots.PlotError if nothing to draw
    section = key_figure_section(results)     # the report's opening section, or None
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .. import plots
from ..recommend.algorithms import NAMES
from ..units import parse_percent, parse_time
from .data import PartData
from .published import measure
from .spec import (
    BY_PART,
    JITTER_PER_RTT,
    METRICS,
    UNITS,
    KeyFigure,
    Part,
    Published,
    Study,
    StudyError,
    cell_text,
    find_study,
    load_study,
)

__all__ = ["draw", "key_figure_section", "study_of", "metric_label", "x_label"]

#: axis text per metric (the unit is added in brackets)
_METRIC_TEXT = {
    "goodput": "goodput per flow",
    "goodput_total": "goodput, all flows of the algorithm",
    "rtt_mean": "mean RTT",
    "rtt_max": "largest RTT",
    "probe_p50": "ping p50 under load",
    "probe_p95": "ping p95 under load",
    "jain_index": "Jain's index",
    "cv": "CV of goodput over repeats",
    "bbr_cubic_ratio": "BBR / CUBIC goodput",
    "period": "dominant period",
}

_KEY_TEXT = {
    "bottleneck.loss": "random loss (%)",
    "bottleneck.jitter": "jitter (ms)",
    "bottleneck.rtt": "RTT (ms)",
    "bottleneck.rate": "bottleneck rate (Mbit/s)",
    JITTER_PER_RTT: "jitter / RTT (%)",
    BY_PART: "part",
}

_HATCHES = ["", "//", "..", "xx", "\\\\", "oo"]
_MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*", "<", ">"]

#: a published number: an open diamond (its edge colour is set where it is drawn)
_PUBLISHED_STYLE = {"ls": "none", "marker": "D", "ms": 7, "mfc": "none", "mew": 1.5}
_FILLS = ["full", "none", "left", "bottom"]
_NEUTRAL = ["0.15", "#8c564b", "0.55", "#17becf"]
_TITLE_WIDTH = 80


def study_of(results: Any) -> Study:
    """The study a store was made by (DIR/ccbench.json's ``study``, or its study file)."""
    meta = getattr(results, "meta", None) or {}
    name = meta.get("study")
    if not name:
        raise StudyError(None, None, "the store was not made by a study (no 'study' in its ccbench.json)", None)
    try:
        return find_study(name)
    except StudyError:
        if not meta.get("scenario_file"):
            raise
        return load_study(meta["scenario_file"])


def _unit(study: Study, metric: str) -> str:
    kind = METRICS[metric][0]
    return study.unit if kind == "goodput" else next(iter(UNITS[kind]))


def metric_label(study: Study, metric: str) -> str:
    unit = _unit(study, metric)
    return f"{_METRIC_TEXT[metric]} ({'×' if unit == 'x' else unit})" if unit else _METRIC_TEXT[metric]


def x_label(key: str) -> str:
    return _KEY_TEXT.get(key, key)


def cc_name(cc: Optional[str]) -> str:
    return NAMES.get(str(cc), str(cc)) if cc else ""


def _value_label(key: str, v: Any) -> str:
    text = cell_text(v)
    if key.endswith(".count"):
        return f"{text} flow" + ("" if text == "1" else "s")
    last = key.rsplit(".", 1)[-1]
    return text if last in ("aqm", "cc") else f"{last} {text}"


# ---- the cells of the parts ---------------------------------------------------------------------


def _cells(part: Part, quick: bool) -> list[dict]:
    """The part's grid cells without the algorithm axes, in grid order (zipped axes kept zipped)."""
    from ..sweeps.grid import Grid

    table = {k: v for k, v in part.sweep_table(quick).items() if k != "repeat" and not k.endswith(".cc")}
    zips = [[k for k in g if not k.endswith(".cc")] for g in table.pop("zip", [])]
    zips = [g for g in zips if len(g) >= 2]
    if not table:
        return [{}]
    if zips:
        table["zip"] = zips
    return Grid.from_table(table).cells()


def _zipped_with(part: Part, key: str) -> set[str]:
    out = {key}
    for group in part.sweep.get("zip", []):
        if key in group:
            out.update(group)
    return out


def _varying(cells: list[dict]) -> list[str]:
    keys: list[str] = []
    for c in cells:
        keys.extend(k for k in c if k not in keys)
    return [k for k in keys if len({cell_text(c.get(k)) for c in cells}) > 1]


def _ccs(datas: list[PartData]) -> list[str]:
    order = {"cubic": 0, "bbr": 1, "reno": 2, "vegas": 3}
    found: set[str] = set()
    for d in datas:
        if "cc" in d.flows.columns:
            found.update(d.flows["cc"].dropna().astype(str))
    return sorted(found, key=lambda c: (order.get(c, 9), c))


def _x_number(part: Part, cell: dict, key: str) -> Optional[float]:
    """The numeric x of a cell: loss in %, times in ms, jitter/rtt in % of the RTT, counts as
    they are; None for a value that is not a number."""
    if key == JITTER_PER_RTT:
        bn = part.scenario_raw.get("bottleneck", {}) or {}
        jitter = parse_time(cell.get("bottleneck.jitter", bn.get("jitter", "0ms")))
        rtt = parse_time(cell.get("bottleneck.rtt", bn.get("rtt", "0ms")))
        return 100.0 * jitter / rtt if rtt else None
    v = cell.get(key)
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    text = str(v).strip()
    try:
        if text.endswith("%"):
            return 100.0 * parse_percent(text)
        return 1e3 * parse_time(text)
    except Exception:  # noqa: BLE001 - a value that is neither a percentage nor a time
        return None


# ---- one measured value per (part, cell, algorithm) ---------------------------------------------


@dataclass
class Point:
    part: str
    cell: dict
    cc: Optional[str]
    mean: float
    lo: Optional[float]
    hi: Optional[float]


@dataclass
class Series:
    key: tuple
    label: str
    cc: Optional[str]
    points: list[Point] = field(default_factory=list)


def _measure(study: Study, data: PartData, cell: dict, cc: Optional[str], metric: str) -> Optional[Point]:
    per_cc = metric != "bbr_cubic_ratio"
    if per_cc and cc is None:
        return None
    row = Published(data.part.name, {**cell, **({"cc": cc} if per_cc else {})}, metric, 0.0, _unit(study, metric))
    m = measure(data, row)
    if m.mean is None or not math.isfinite(m.mean):
        return None
    return Point(data.part.name, cell, cc if per_cc else None, float(m.mean), m.lo, m.hi)


def _series(study: Study, datas: list[PartData], kf: KeyFigure, metric: str, quick: bool) -> list[Series]:
    """Points of ``metric`` per series: one series per algorithm (one per part for the BBR/CUBIC
    ratio), split further by ``by`` and by any other key that varies and is not the x."""
    ccs = [None] if metric == "bbr_cubic_ratio" else _ccs(datas)
    several_parts = len(datas) > 1 and (metric == "bbr_cubic_ratio" or kf.x != BY_PART)
    out: dict[tuple, Series] = {}
    for d in datas:
        cells = _cells(d.part, quick)
        explained = _zipped_with(d.part, kf.x) | (_zipped_with(d.part, kf.by) if kf.by else set())
        if kf.x == JITTER_PER_RTT:
            explained |= {"bottleneck.jitter", "bottleneck.rtt"}
        extra = [k for k in _varying(cells) if k not in explained]
        split = ([kf.by] if kf.by else []) + extra
        for cell in cells:
            for cc in ccs:
                p = _measure(study, d, cell, cc, metric)
                if p is None:
                    continue
                key = (d.part.name if several_parts else "", cc or "", *(cell_text(cell.get(k)) for k in split))
                if key not in out:
                    words = [d.part.name] if several_parts else []
                    words += [cc_name(cc)] if cc else []
                    words += [_value_label(k, cell.get(k)) for k in split]
                    out[key] = Series(key, ", ".join(w for w in words if w) or _METRIC_TEXT[metric], cc)
                out[key].points.append(p)
    return list(out.values())


def _colour(colours: dict, s: Series, k: int) -> str:
    return colours.get(s.cc, "0.3") if s.cc else _NEUTRAL[k % len(_NEUTRAL)]


def _published(study: Study, kf: KeyFigure, metric: str) -> list[Published]:
    return [r for r in study.published if r.metric == metric and r.part in kf.parts]


def _published_value(study: Study, row: Published, metric: str) -> float:
    units = UNITS[METRICS[metric][0]]
    return row.value / units[row.unit] * units[_unit(study, metric)]


def _legend_below(fig, axes_list) -> None:
    handles, labels = [], []
    for ax in axes_list:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    if handles:
        # as many columns as fit the figure's width: an 8-pt character is about 4.5 pt wide, and
        # each entry adds its marker and spacing (about 30 pt)
        entry_pt = 4.5 * max(len(lab) for lab in labels) + 30
        fit = max(1, int(fig.get_figwidth() * 72 // entry_pt))
        fig.legend(
            handles, labels, loc="outside lower center", ncols=min(4, len(labels), fit), fontsize=8, frameon=False
        )


def _title(fig, study: Study) -> None:
    fig.suptitle("\n".join(textwrap.wrap(study.title, _TITLE_WIDTH)), fontsize=10)


def _yerr(points: list[Point]) -> np.ndarray:
    lo = [p.mean - p.lo if p.lo is not None else 0.0 for p in points]
    hi = [p.hi - p.mean if p.hi is not None else 0.0 for p in points]
    return np.clip(np.array([lo, hi], dtype=float), 0.0, None)


def _log_axis(axis, set_scale) -> None:
    """A log scale with plain numbers as tick labels (30, not 3×10¹), minor labels only when the
    axis spans less than two decades."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    set_scale("log")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    axis.set_major_formatter(plain)
    lo, hi = axis.get_view_interval()
    few_decades = lo > 0 and hi / lo < 100
    axis.set_minor_formatter(
        FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else "") if few_decades else NullFormatter()
    )


# ---- lines ---------------------------------------------------------------------------------------


def _x_positions(values: list[float], log: bool) -> tuple[dict[float, float], bool]:
    """Positions on the x axis; on a log axis 0 goes a decade left of the smallest positive value."""
    if not log:
        return {v: v for v in values}, False
    positive = sorted(v for v in values if v > 0)
    if not positive:
        return {v: v for v in values}, False
    return {v: (v if v > 0 else positive[0] / 10.0) for v in values}, True


def _lines_panel(ax, study, datas, kf, metric, log_y, colours, parts, quick) -> None:
    series = _series(study, datas, kf, metric, quick)
    if not series:
        raise plots.PlotError(f"no runs with a value of {metric} in part(s) {', '.join(kf.parts)}")
    xs = sorted(
        {x for s in series for p in s.points if (x := _x_number(parts[p.part], p.cell, kf.x)) is not None}
        | {
            x
            for r in _published(study, kf, metric)
            if (x := _x_number(parts[r.part], r.cell, kf.x)) is not None and (kf.x != JITTER_PER_RTT or r.cell)
        }
    )
    if not xs:
        raise plots.PlotError(f"{kf.x} has no numeric values to plot against")
    pos, log = _x_positions(xs, kf.log_x)
    styles = ["-", "--", ":", "-."]
    part_index = {key: i for i, key in enumerate(dict.fromkeys(s.key[0] for s in series))}
    for k, s in enumerate(series):
        pts = sorted(
            (p for p in s.points if _x_number(parts[p.part], p.cell, kf.x) is not None),
            key=lambda p: _x_number(parts[p.part], p.cell, kf.x),
        )
        if not pts:
            continue
        x = [pos[_x_number(parts[p.part], p.cell, kf.x)] for p in pts]
        ax.errorbar(
            x,
            [p.mean for p in pts],
            yerr=_yerr(pts),
            color=_colour(colours, s, k),
            ls=styles[part_index[s.key[0]] % len(styles)] if s.cc else styles[k % len(styles)],
            marker="o",
            ms=4,
            capsize=3,
            lw=1.5,
            label=s.label,
        )
    shown = False
    for r in _published(study, kf, metric):
        x = _x_number(parts[r.part], r.cell, kf.x)
        if x is None or x not in pos:
            continue
        cc = r.cell.get("cc")
        ax.plot(
            [pos[x]],
            [_published_value(study, r, metric)],
            mec=colours.get(str(cc), "0.1") if cc else "0.1",
            label="_published",
            **_PUBLISHED_STYLE,
        )
        if not shown:  # the legend entry in a neutral colour: the points take their algorithm's
            ax.plot([], [], mec="0.3", label=f"published (seed {study.seed})", **_PUBLISHED_STYLE)
        shown = True
    if metric == "bbr_cubic_ratio":
        ax.axhline(1.0, color="0.5", lw=0.8, ls=":")
    if kf.shade is not None:
        lo, hi = kf.shade
        ax.axvspan(lo, hi, color="#f2c94c", alpha=0.25, lw=0, label=kf.shade_label or f"{lo:g}-{hi:g}")
    if log:
        ax.set_xscale("log")
        ticks = sorted(pos.items(), key=lambda kv: kv[1])
        ax.set_xticks([p for _, p in ticks], [f"{v:g}" for v, _ in ticks])
        ax.minorticks_off()
        if 0.0 in pos and len(ticks) > 1:
            ax.axvline(math.sqrt(ticks[0][1] * ticks[1][1]), color="0.7", lw=0.8, ls=":")
    if log_y:
        _log_axis(ax.yaxis, ax.set_yscale)
    ax.set_ylabel(metric_label(study, metric))
    ax.grid(True, alpha=0.3)


def _draw_lines(study, datas, kf, quick) -> Any:
    panels = [(kf.metric, kf.log_y), *[(m, kf.log_panel) for m in kf.panel]]
    fig, axes = plots.new_figure(1, len(panels), width=5.0 * len(panels) + 1.0, height=4.6)
    colours = plots.colour_map(_ccs(datas))
    parts = {d.part.name: d.part for d in datas}
    for ax, (metric, log_y) in zip(axes[0], panels):
        _lines_panel(ax, study, datas, kf, metric, log_y, colours, parts, quick)
        ax.set_xlabel(x_label(kf.x))
    return fig, list(axes[0])


# ---- bars ----------------------------------------------------------------------------------------


def _group_of(kf: KeyFigure, p: Point) -> str:
    return p.part if kf.x == BY_PART else cell_text(p.cell.get(kf.x))


def _bars_panel(ax, study, datas, kf, metrics, log_y, colours, quick) -> None:
    series = _series(study, datas, kf, metrics[0], quick)
    if not series:
        raise plots.PlotError(f"no runs with a value of {metrics[0]}")
    groups: list[str] = []
    for s in series:
        groups.extend(g for p in s.points if (g := _group_of(kf, p)) not in groups)
    if kf.x == BY_PART:
        groups = [p for p in kf.parts if p in groups]
    n = len(series)
    width = 0.8 / n
    by_values = list(dict.fromkeys(s.key[2] for s in series if len(s.key) > 2))
    centre: dict[tuple, float] = {}
    for k, s in enumerate(series):
        pts = [p for p in s.points if _group_of(kf, p) in groups]
        x = [groups.index(_group_of(kf, p)) - 0.4 + width * (k + 0.5) for p in pts]
        hatch = _HATCHES[by_values.index(s.key[2]) % len(_HATCHES)] if len(s.key) > 2 else ""
        ax.bar(
            x,
            [p.mean for p in pts],
            width=width * 0.92,
            yerr=_yerr(pts),
            color=_colour(colours, s, k),
            alpha=0.85,
            hatch=hatch,
            edgecolor="white" if not hatch else "0.2",
            lw=0.5,
            capsize=2,
            error_kw={"lw": 0.8},
            label=s.label,
        )
        for p, xi in zip(pts, x):
            centre[(_group_of(kf, p), s.cc, *s.key[2:])] = xi
    for j, metric in enumerate(metrics[1:]):
        extra = _series(study, datas, kf, metric, quick)
        for s in extra:
            pts = [p for p in s.points if (_group_of(kf, p), s.cc, *s.key[2:]) in centre]
            ax.plot(
                [centre[(_group_of(kf, p), s.cc, *s.key[2:])] for p in pts],
                [p.mean for p in pts],
                ls="none",
                marker="_^v"[j % 3],
                ms=9,
                mew=2,
                color="0.1",
                label=_METRIC_TEXT[metric],
            )
    shown = False
    for r in _published(study, kf, metrics[0]):
        cc = str(r.cell.get("cc", ""))
        by = (cell_text(r.cell[kf.by]),) if kf.by and kf.by in r.cell else ()
        g = r.part if kf.x == BY_PART else cell_text(r.cell.get(kf.x))
        if (g, cc, *by) not in centre:
            continue
        ax.plot(
            [centre[(g, cc, *by)]],
            [_published_value(study, r, metrics[0])],
            mec="0.1",
            label=f"published (seed {study.seed})" if not shown else "_published",
            **_PUBLISHED_STYLE,
        )
        shown = True
    ax.set_xticks(range(len(groups)), [textwrap.fill(g, 10) for g in groups], fontsize=8)
    ax.set_xlim(-0.5, len(groups) - 0.5)
    if log_y:
        _log_axis(ax.yaxis, ax.set_yscale)
    if len(metrics) > 1:
        unit = _unit(study, metrics[0])
        others = ", ".join(_METRIC_TEXT[m] for m in metrics[1:])
        ax.set_ylabel(textwrap.fill(f"{_METRIC_TEXT[metrics[0]]} (bars), {others} (ticks) ({unit})", 40))
    else:
        ax.set_ylabel(metric_label(study, metrics[0]))
    ax.grid(True, axis="y", alpha=0.3)


def _draw_bars(study, datas, kf, quick) -> Any:
    panels = [([kf.metric], kf.log_y)] + ([(kf.panel, kf.log_panel)] if kf.panel else [])
    fig, axes = plots.new_figure(len(panels), 1, width=8.5, height=3.4 * len(panels) + 1.2, sharex=True)
    colours = plots.colour_map(_ccs(datas))
    for ax, (metrics, log_y) in zip(axes[:, 0], panels):
        _bars_panel(ax, study, datas, kf, metrics, log_y, colours, quick)
    axes[-1, 0].set_xlabel(x_label(kf.x))
    return fig, list(axes[:, 0])


# ---- scatter -------------------------------------------------------------------------------------


def _draw_scatter(study, datas, kf, quick) -> Any:
    from matplotlib.lines import Line2D

    fig, axes = plots.new_figure(1, 1, width=7.5, height=5.6)
    ax = axes[0, 0]
    ccs = _ccs(datas)
    colours = plots.colour_map(ccs)
    markers: dict[str, str] = {}
    fills: dict[str, str] = {}
    n = 0
    for d in datas:
        cells = _cells(d.part, quick)
        partners = [k for k in _zipped_with(d.part, kf.by) if k != kf.by] if kf.by else []
        ambiguous = [
            k
            for k in partners
            if any(
                len({cell_text(c.get(k)) for c in cells if cell_text(c.get(kf.by)) == cell_text(v.get(kf.by))}) > 1
                for v in cells
            )
        ]
        explained = _zipped_with(d.part, kf.by) if kf.by else set()
        extra = [k for k in _varying(cells) if k not in explained]
        for cell in cells:
            mark = " ".join(cell_text(cell.get(k)) for k in ([kf.by] if kf.by else []) + ambiguous) or "all"
            fill = ", ".join(_value_label(k, cell.get(k)) for k in extra)
            markers.setdefault(mark, _MARKERS[len(markers) % len(_MARKERS)])
            fills.setdefault(fill, _FILLS[len(fills) % len(_FILLS)])
            for cc in ccs:
                px = _measure(study, d, cell, cc, kf.x)
                py = _measure(study, d, cell, cc, kf.metric)
                if px is None or py is None:
                    continue
                ax.errorbar(
                    [px.mean],
                    [py.mean],
                    xerr=_yerr([px]),
                    yerr=_yerr([py]),
                    color=colours[cc],
                    marker=markers[mark],
                    fillstyle=fills[fill],
                    ms=8,
                    mew=1.4,
                    elinewidth=0.7,
                    alpha=0.9,
                    capsize=0,
                    label="_point",
                )
                n += 1
    if not n:
        raise plots.PlotError(f"no runs with values of both {kf.x} and {kf.metric}")
    if kf.log_x:
        _log_axis(ax.xaxis, ax.set_xscale)
    if kf.log_y:
        _log_axis(ax.yaxis, ax.set_yscale)
    ax.set_xlabel(metric_label(study, kf.x))
    ax.set_ylabel(metric_label(study, kf.metric))
    ax.grid(True, alpha=0.3)
    for cc in ccs:
        ax.plot([], [], ls="none", marker="o", ms=8, color=colours[cc], label=cc_name(cc))
    if len(markers) > 1:
        for mark, m in markers.items():
            ax.plot([], [], ls="none", marker=m, ms=8, color="0.4", label=mark)
    if len(fills) > 1:
        for fill, f in fills.items():
            ax.add_line(Line2D([], [], ls="none", marker="o", fillstyle=f, ms=8, color="0.4", label=fill))
    return fig, [ax]


# ---- time ----------------------------------------------------------------------------------------


def _draw_time(study, datas, kf, quick) -> Any:
    from .. import analysis

    d = datas[0]
    s = d.series
    if s.empty or "goodput_bps" not in s.columns or d.runs.empty:
        raise plots.PlotError(f"part {d.part.name}: no throughput series stored")
    runs = d.runs.sort_values([c for c in ("repeat", "run_id") if c in d.runs.columns])
    run_id = runs["run_id"].iloc[0]
    one = s[s["run_id"] == run_id]
    ccs = [c for c in _ccs(datas) if c in set(one["cc"].astype(str))]
    colours = plots.colour_map(_ccs(datas))
    fig, axes = plots.new_figure(len(ccs), 1, width=8.5, height=2.4 * len(ccs) + 1.3, sharex=True, sharey=True)
    scale = UNITS["goodput"][study.unit]
    rounds = analysis.probe_rtt_rounds(one)
    for ax, cc in zip(axes[:, 0], ccs):
        group = one[one["cc"].astype(str) == cc]
        flows = sorted(group["flow_id"].unique())
        for i, fid in enumerate(flows):
            f = group[group["flow_id"] == fid].sort_values("t_s")
            ax.plot(
                f["t_s"],
                f["goodput_bps"].astype(float) * scale,
                color=colours[cc],
                lw=0.7,
                alpha=0.75,
                label=f"{cc_name(cc)} ({len(flows)} flows)" if i == 0 else "_flow",
            )
        for j, r in enumerate(rounds):
            ax.axvline(
                r.start_s,
                color=colours.get("bbr", "0.3"),
                lw=0.8,
                ls="--",
                alpha=0.6,
                label="BBR flows enter ProbeRTT" if j == 0 else "_round",
            )
        ax.set_ylabel(f"{cc_name(cc)}\nthroughput ({study.unit})", fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("time (s)")
    rep = runs["repeat"].iloc[0] if "repeat" in runs.columns else None
    axes[0, 0].set_title(
        fontsize=9, label=f"part {d.part.name}, run {str(run_id)[:10]}" + (f", repeat {rep}" if rep is not None else "")
    )
    return fig, list(axes[:, 0])


# ---- map -----------------------------------------------------------------------------------------


def _draw_map(study, datas, kf, quick) -> Any:
    from matplotlib.patches import Rectangle

    from ..recommend.map import map_table

    d = datas[0]
    table = map_table(d.flows, kf.goal) if not d.flows.empty else None
    if table is None or table.empty:
        raise plots.PlotError(f"part {d.part.name}: no cells to decide")
    ccs = _ccs(datas)
    colours = plots.colour_map(ccs)
    by_name = {cc_name(c): c for c in ccs}
    buffers = sorted(table["buffer BDP"].dropna().unique())
    losses = sorted(table["loss %"].dropna().unique())
    rows = sorted({(r, j) for r, j in zip(table["RTT ms"], table["jitter/RTT"])})
    several_rtts = len({r for r, _ in rows}) > 1
    fig, axes = plots.new_figure(
        1, len(buffers), width=max(4.0, 2.4 + 1.6 * len(losses)) * len(buffers), height=1.8 + 0.55 * len(rows)
    )
    for ax, buf in zip(axes[0], buffers):
        sub = table[table["buffer BDP"] == buf]
        for _, r in sub.iterrows():
            x = losses.index(r["loss %"])
            y = rows.index((r["RTT ms"], r["jitter/RTT"]))
            tie = r["winner"] == "tie"
            cc = by_name.get(r["winner"]) or by_name.get(r["leader"])
            face = colours.get(cc, "0.85") if not tie else "white"
            ax.add_patch(
                Rectangle(
                    (x, y),
                    1,
                    1,
                    facecolor=face,
                    alpha=0.55 if not tie else 1.0,
                    hatch="///" if tie else None,
                    edgecolor=colours.get(cc, "0.5") if tie else "white",
                    lw=1.0,
                )
            )
            if tie:
                text = "tie"
            elif r["by %"] is not None and r["runner-up"]:
                text = f"{r['winner']}\n+{r['by %']:.0f} %"
            else:
                text = str(r["winner"])
            ax.text(x + 0.5, y + 0.5, text, ha="center", va="center", fontsize=7)
        ax.set_xlim(0, len(losses))
        ax.set_ylim(0, len(rows))
        ax.set_xticks([i + 0.5 for i in range(len(losses))], [f"{v:g}" for v in losses])
        labels = [(f"{r:g} ms, " if several_rtts else "") + f"{100 * j:.0f} %" for r, j in rows]
        ax.set_yticks([i + 0.5 for i in range(len(rows))], labels)
        ax.set_xlabel("random loss (%)")
        ax.set_title(f"buffer {buf:g} BDP", fontsize=9)
        ax.tick_params(length=0)
    axes[0, 0].set_ylabel("RTT, jitter / RTT" if several_rtts else "jitter / RTT")
    ax = axes[0, 0]
    for c in ccs:  # zero-size patches: legend entries only
        if cc_name(c) in set(table["winner"]):
            ax.add_patch(Rectangle((0, 0), 0, 0, facecolor=colours[c], alpha=0.55, label=f"{cc_name(c)} wins"))
    if (table["winner"] == "tie").any():
        ax.add_patch(
            Rectangle(
                (0, 0), 0, 0, facecolor="white", edgecolor="0.3", hatch="///", label="tie (hatch: the leader's colour)"
            )
        )
    return fig, list(axes[0])


_DRAW = {"lines": _draw_lines, "bars": _draw_bars, "scatter": _draw_scatter, "time": _draw_time, "map": _draw_map}


def draw(study: Study, results: Any) -> Any:
    """The study's key figure from ``results`` (its store). StudyError when the study declares no
    key figure; plots.PlotError when the store lacks the data it needs."""
    kf = study.key_figure
    if kf is None:
        raise StudyError(str(study.path), "study.key_figure", "the study declares no key figure", "[study.key_figure]")
    meta = getattr(results, "meta", None) or {}
    quick = bool(meta.get("quick"))
    datas = [PartData(results, study.part(p)) for p in kf.parts]
    datas = [d for d in datas if not d.empty]
    if not datas:
        raise plots.PlotError(f"no ok runs of part(s) {', '.join(kf.parts)} in the store")
    fig, axes_list = _DRAW[kf.kind](study, datas, kf, quick)
    _title(fig, study)
    _legend_below(fig, axes_list)
    return fig


def key_figure_section(results: Any) -> Optional[Any]:
    """The report's opening section: the study's question and its key figure with the declared
    one-line caption; None when the store has no study or the study no key figure."""
    from ..report.section import Section

    meta = getattr(results, "meta", None) or {}
    if not meta.get("study"):
        return None
    study = study_of(results)
    if study.key_figure is None:
        return None
    try:
        fig = draw(study, results)
    except plots.PlotError as e:
        return Section("Key figure", paragraphs=[study.question, f"The key figure could not be drawn: {e}"])
    return Section("Key figure", paragraphs=[study.question], figures=[(study.key_figure.caption, fig)])
