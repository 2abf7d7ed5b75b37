"""The seed's published numbers beside ours: each measured over the runs of its cell with an
interval, and a verdict (agrees, close, inconclusive, disagrees). Published numbers are never
used to set up a scenario: the comparison is the output."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from .data import PartData, match_cell
from .spec import METRICS, UNITS, Published, Study


@dataclass
class Measured:
    mean: Optional[float]
    lo: Optional[float] = None
    hi: Optional[float] = None
    n: int = 0
    note: str = ""


def measured_ci(values: Sequence[float], high: Optional[float] = None) -> Measured:
    """Mean and 95 % t interval over the runs of a quantity that is never negative (every
    study metric: goodput, RTT, ping, Jain's index with ``high=1``, period), cut to its range
    (analysis.mean_ci: near 0 a t interval of 3 repeats would reach below 0)."""
    from .. import analysis

    v = [float(x) for x in values if x is not None and np.isfinite(x)]
    if not v:
        return Measured(None, note="no runs in this cell")
    ci = analysis.mean_ci(v, nonnegative=True, bounds=(0.0, high))
    return Measured(ci.mean, ci.lo, ci.hi, ci.n)


def ratio_lo(lo: Optional[float]) -> Optional[float]:
    """A goodput ratio's lower bound, cut at 0 (Fieller's interval reaches below 0 when the
    numerator's mean is not significantly above 0)."""
    return None if lo is None else max(lo, 0.0)


def per_run(data: PartData, cell: Mapping[str, Any], column: str = "goodput_bps", how: str = "mean") -> pd.Series:
    """One value per run of the cell: ``how`` (mean | sum | max) of ``column`` over its flows."""
    if column not in data.flows.columns or "run_id" not in data.flows.columns:
        return pd.Series(dtype=float)
    flows = match_cell(data.flows, cell, columns=["run_id", column])
    if flows.empty:
        return pd.Series(dtype=float)
    return flows.groupby("run_id")[column].agg(how).astype(float)


def group_aggregate(series: pd.DataFrame, run_id: str, cc: str) -> tuple[np.ndarray, np.ndarray]:
    s = series[(series["run_id"] == run_id) & (series["cc"].astype(str).str.lower() == cc.lower())]
    agg = s.groupby("t_s")["goodput_bps"].sum().sort_index()
    return agg.index.to_numpy(dtype=float), agg.to_numpy(dtype=float)


def group_periodicity(data: PartData, run_id: str, cc: str):
    """analysis.dominant_period of a group's aggregate throughput after its steady-state start.
    Returns (steady-state start, Periodicity)."""
    from .. import analysis

    t, v = group_aggregate(data.series, run_id, cc)
    if t.size < 8:
        return None, None
    start = analysis.steady_state_start(t, v)
    keep = t >= (start if start is not None else t[0])
    return start, analysis.dominant_period(t[keep], v[keep])


def measure(data: PartData, row: Published) -> Measured:
    """The measured counterpart of a published row, in the row's unit."""
    from .. import analysis

    kind = METRICS[row.metric][0]
    scale = UNITS[kind][row.unit]
    m: Measured
    if row.metric in ("goodput", "goodput_total"):
        m = measured_ci(per_run(data, row.cell, "goodput_bps", "mean" if row.metric == "goodput" else "sum"))
    elif row.metric == "rtt_mean":
        m = measured_ci(per_run(data, row.cell, "rtt_mean_ms", "mean"))
    elif row.metric == "rtt_max":
        flows = match_cell(data.flows, row.cell)
        s = data.series
        if not s.empty and "rtt_ms" in s.columns:
            s = s[s["run_id"].isin(set(flows["run_id"])) & s["flow_id"].isin(set(flows["flow_id"]))]
            if "cc" in row.cell:
                s = s[s["cc"].astype(str).str.lower() == str(row.cell["cc"]).lower()]
            m = measured_ci(s.groupby("run_id")["rtt_ms"].max().astype(float))
        else:
            m = measured_ci(per_run(data, row.cell, "rtt_p99_ms", "max"))
            m.note = "p99 of the flow's RTT (no series stored)"
    elif row.metric in ("probe_p50", "probe_p95", "jain_index"):
        col = {"probe_p50": "probe_rtt_p50_ms", "probe_p95": "probe_rtt_p95_ms", "jain_index": "jain_index"}[row.metric]
        runs = match_cell(data.runs, row.cell, with_cc=False)
        if "cc" in row.cell:
            ok = set(match_cell(data.flows, row.cell)["run_id"])
            runs = runs[runs["run_id"].isin(ok)]
        m = measured_ci(
            runs[col].astype(float) if col in runs.columns else [], high=1.0 if row.metric == "jain_index" else None
        )
    elif row.metric == "cv":
        v = per_run(data, row.cell).to_numpy()
        v = v[np.isfinite(v)]
        if v.size < 2:
            m = Measured(None, n=int(v.size), note="needs at least 2 runs")
        else:
            cv = lambda x, axis=None: 100 * np.std(x, ddof=1, axis=axis) / np.mean(x, axis=axis)  # noqa: E731
            b = analysis.bootstrap_ci(v, stat=cv)
            m = Measured(b.mean, b.lo, b.hi, b.n, "bootstrap interval")
    elif row.metric == "bbr_cubic_ratio":
        a = per_run(data, {**row.cell, "cc": "bbr"})
        b = per_run(data, {**row.cell, "cc": "cubic"})
        if a.empty or b.empty:
            m = Measured(None, note="no runs of both algorithms in this cell")
        else:
            r = analysis.ratio_ci(a.to_numpy(), b.to_numpy())
            m = Measured(r.ratio, ratio_lo(r.lo), r.hi, min(r.n_a, r.n_b), f"{r.method} interval")
    elif row.metric == "period":
        cc = str(row.cell.get("cc", ""))
        runs = match_cell(data.runs, row.cell, with_cc=False)
        periods = []
        for rid in runs["run_id"]:
            _, per = group_periodicity(data, rid, cc)
            if per is not None and per.period_s is not None:
                periods.append(per.period_s)
        m = measured_ci(periods)
        m.note = f"{len(periods)} of {len(runs)} runs with a significant period"
    else:  # pragma: no cover - validated on load
        raise KeyError(row.metric)
    if m.mean is not None and kind in ("goodput", "time_ms", "time_s") and scale != 1.0:
        m = Measured(
            m.mean * scale, None if m.lo is None else m.lo * scale, None if m.hi is None else m.hi * scale, m.n, m.note
        )
    return m


def verdict(published: float, m: Measured) -> str:
    """agrees (published inside our 95 % interval, and the interval is informative: half-width
    at most 25 % of the mean) | inconclusive (inside an interval wider than that) | close (mean
    within ±25 % of the published value) | disagrees."""
    if m.mean is None:
        return "not measured"
    if m.lo is not None and m.hi is not None and m.lo <= published <= m.hi:
        if (m.hi - m.lo) / 2 <= 0.25 * abs(m.mean):
            return "agrees"
        if not (published != 0 and 0.8 <= m.mean / published <= 1.25):
            return "inconclusive"
    if published != 0 and 0.8 <= m.mean / published <= 1.25:
        return "close"
    return "disagrees"


def round_sig(v: Optional[float], digits: int = 3) -> Optional[float]:
    if v is None or not np.isfinite(v):
        return None
    if v == 0:
        return 0.0
    return float(f"{v:.{digits}g}")


def published_table(study: Study, results: Any) -> pd.DataFrame:
    """The seed's numbers beside ours, cell by cell."""
    rows = []
    datas = {p.name: PartData(results, p) for p in study.parts}
    for row in study.published:
        m = measure(datas[row.part], row)
        ratio = (m.mean / row.value) if (m.mean is not None and row.value) else None
        rows.append(
            {
                "part": row.part,
                "cell": row.cell_text(),
                "metric": row.metric,
                "unit": row.unit,
                "published": row.value,
                "measured": round_sig(m.mean),
                "95% lo": round_sig(m.lo),
                "95% hi": round_sig(m.hi),
                "n": m.n,
                "measured / published": round_sig(ratio, 2),
                "verdict": verdict(row.value, m),
                "seed source": row.where,
                "note": m.note,
            }
        )
    return pd.DataFrame(rows)


def section(title: str, paragraphs=(), tables=(), figures=()):
    from ..report.section import Section

    return Section(title, list(paragraphs), list(tables), list(figures))


def published_section(study: Study, results: Any):
    table = published_table(study, results)
    paragraphs = [f"Seed document {study.seed}. Question: {study.question}", f"Original setup: {study.original}"]
    paragraphs += [f"Simplification: {s}" for s in study.simplifications]
    paragraphs.append(
        "Each published number is set beside our measurement of the same cell: the mean "
        "over runs with its 95 % interval (a t interval cut at 0 for means, Fieller's for BBR/CUBIC, "
        "a bootstrap one for CV), and measured / published. verdict: agrees = "
        "the published value is inside our interval (and the interval is within ±25 % "
        "of our mean); inconclusive = inside an interval wider than that; close = our "
        "mean within 25 %; disagrees otherwise. Nothing in the scenarios was adjusted toward these numbers."
    )
    bad = table[table["verdict"] == "disagrees"] if not table.empty else table
    if not table.empty:
        agree = int(table["verdict"].isin(["agrees", "close"]).sum())
        vague = int((table["verdict"] == "inconclusive").sum())
        paragraphs.append(
            f"{agree} of {len(table)} published numbers agree or are close; "
            + (f"{vague} are inconclusive (our interval is too wide: more repeats); " if vague else "")
            + f"{len(bad)} disagree"
            + (":" if len(bad) else ".")
        )
        for _, r in bad.iterrows():
            paragraphs.append(
                f"We disagree on {r['part']} {r['cell']} {r['metric']}: the seed has "
                f"{r['published']:g} {r['unit']}, we measured {r['measured']} "
                f"{r['unit']} ({r['measured / published']}x)."
            )
    missing = table[table["verdict"] == "not measured"] if not table.empty else table
    if len(missing):
        paragraphs.append(
            f"{len(missing)} published cells are not in this run's grid (a --quick run covers fewer cells)."
        )
    paragraphs += [f"Why we may differ: {s}" for s in study.discussion]
    return section("Published vs measured", paragraphs, [("The seed's numbers beside ours", table)])
