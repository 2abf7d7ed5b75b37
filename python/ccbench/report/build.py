"""The report of a result store: what was asked (scenario or study, the scenario TOML, the
grid), how it was run (backend, kernel, ccbench version, command, date; from DIR/ccbench.json),
run counts and failed runs with their errors, a summary table per cell per algorithm with
confidence intervals, the figures of ccbench.plots that apply to the data present, then the
sections a caller adds (a study's own: ccbench.study.build_report).

    build_report("results/seed002", out=None)   # -> results/seed002/report.html
"""

from __future__ import annotations

import json
import shlex
import tomllib
import warnings
from pathlib import Path
from typing import Any, Optional, Sequence

import pandas as pd

from .. import plots
from .html import escape_text, render_html, table_html
from .section import ReportError, Section


def _read_meta(dir: Path, results: Any) -> dict:
    meta = getattr(results, "meta", None)
    if meta:
        return dict(meta)
    p = dir / "ccbench.json"
    if p.is_file():
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError) as e:
            warnings.warn(f"{p}: unreadable ({e})", stacklevel=2)
    return {}


def _scenario_name_and_description(meta: dict) -> tuple[Optional[str], str]:
    text = meta.get("scenario_toml") or ""
    name = None
    try:
        data = tomllib.loads(text) if text else {}
        study = data.get("study") if isinstance(data.get("study"), dict) else {}
        name = data.get("name") or study.get("name")
    except tomllib.TOMLDecodeError:
        pass
    lines = []
    for line in text.splitlines():  # the leading comment block describes the scenario
        if line.startswith("#"):
            lines.append(line.lstrip("#").strip())
        elif line.strip() or lines:
            break
    return name, " ".join(ln for ln in lines if ln)


def _unknown(v: Any) -> str:
    return "unknown" if v in (None, "", [], {}) else str(v)


def _kernel_version(meta: dict, runs: pd.DataFrame) -> str:
    if meta.get("kernel_version"):
        return str(meta["kernel_version"])
    if "kernel_version" in runs.columns:
        vals = sorted(set(runs["kernel_version"].dropna().astype(str)))
        if vals:
            return ", ".join(vals)
    return "unknown"


def header_section(dir: Path, meta: dict, t: plots.Tables) -> Section:
    name, description = _scenario_name_and_description(meta)
    study = meta.get("study")
    paragraphs = []
    asked = f"Study {study}" if study else f"Scenario {name}" if name else f"The store {dir.name}"
    paragraphs.append(asked + (f": {description}" if description else "."))
    command = meta.get("command")
    if isinstance(command, (list, tuple)):
        command = shlex.join(map(str, command))
    backends = sorted(set(t.runs["backend"].dropna().astype(str))) if "backend" in t.runs else []
    rows = [
        ("study", study or "none"),
        ("scenario", name or "unknown"),
        ("scenario file", _unknown(meta.get("scenario_file"))),
        ("backend", meta.get("backend") or (", ".join(backends) if backends else "unknown")),
        ("kernel version", _kernel_version(meta, t.runs)),
        ("ccbench version", _unknown(meta.get("ccbench_version"))),
        ("command", _unknown(command)),
        ("date", _unknown(meta.get("created"))),
        ("repeats per cell", _unknown(meta.get("repeat"))),
        ("store", str(dir)),
    ]
    parts = ['<table class="meta"><tbody>']
    for k, v in rows:
        cell = f"<code>{escape_text(v)}</code>" if k == "command" and v != "unknown" else escape_text(v)
        parts.append(f"<tr><th>{escape_text(k)}</th><td>{cell}</td></tr>")
    parts.append("</tbody></table>")
    grid = meta.get("grid") or {}
    if grid:
        parts.append(
            table_html(
                pd.DataFrame(
                    [
                        {
                            "swept key": k,
                            "values": ", ".join(map(str, v if isinstance(v, list) else [v])),
                            "count": len(v) if isinstance(v, list) else 1,
                        }
                        for k, v in grid.items()
                    ]
                ),
                "The grid",
            )
        )
    if meta.get("scenario_toml"):
        toml_text = meta["scenario_toml"]
        is_open = " open" if toml_text.count("\n") <= 40 else ""  # a long study file starts folded
        parts.append(
            f"<details{is_open}><summary>Scenario TOML ({toml_text.count(chr(10)) + 1} lines)"
            f"</summary><pre>{escape_text(toml_text)}</pre></details>"
        )
    else:
        parts.append("<p>Scenario TOML: unknown (no ccbench.json in the store).</p>")
    return Section("What was asked", paragraphs=paragraphs, html="".join(parts))


def runs_section(t: plots.Tables) -> Section:
    runs = t.runs
    n = len(runs)
    status = runs["status"] if "status" in runs.columns else pd.Series(["ok"] * n)
    ok = int((status == "ok").sum())
    failed = runs[status != "ok"]
    paras = [f"{n} runs: {ok} ok, {len(failed)} failed."]
    tables = []
    if len(failed):
        cols = [
            "run_id",
            *[c for c in plots.swept_columns(t) if c in failed.columns],
            *(["repeat"] if "repeat" in failed.columns else []),
            "error",
        ]
        tables.append(("Failed runs", failed[[c for c in cols if c in failed.columns]].reset_index(drop=True)))
    return Section("Runs", paragraphs=paras, tables=tables)


def _ci_text(ci, scale: float = 1.0, digits: int = 3) -> str:
    if ci.mean is None:
        return "–"
    m = ci.mean / scale
    if ci.lo is None or ci.hi is None:
        return f"{m:.{digits}g}"
    return f"{m:.{digits}g} [{ci.lo / scale:.{digits}g}, {ci.hi / scale:.{digits}g}]"


def summary_table(t: plots.Tables, confidence: float = 0.95) -> pd.DataFrame:
    """Per cell (varying swept values) per algorithm: runs, flows, and mean [95 % t interval, cut
    at 0] over runs of the per-run mean goodput per flow, mean RTT and p95 RTT, retransmits."""
    from .. import analysis

    flows = plots.ok_flows(t)
    cells = [
        c
        for c in plots.swept_columns(t)
        if c in flows.columns and flows[c].astype(str).nunique() > 1 and not plots.is_function_of(flows, c, ["cc"])
    ]
    keys = [*cells, "cc"]
    metrics = {
        "goodput_bps": (1e6, "goodput per flow, Mbit/s"),
        "rtt_mean_ms": (1.0, "RTT mean, ms"),
        "rtt_p95_ms": (1.0, "RTT p95, ms"),
        "retransmits": (1.0, "retransmits per flow"),
    }
    present = [m for m in metrics if m in flows.columns and flows[m].notna().any()]
    per_run = flows.groupby(["run_id", *keys], dropna=False, sort=False)[present].mean().reset_index()
    ordered = plots.ordered_runs(t)["run_id"].tolist()
    rank = {r: i for i, r in enumerate(ordered)}
    rows = []
    for key, g in per_run.groupby(keys, dropna=False, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(keys, key))
        # Counted from the group itself: a key holding NaN (a swept column that only some parts
        # of a store have) cannot be looked up by label.
        row["runs"] = int(g["run_id"].nunique())
        row["flows"] = int((flows["run_id"].isin(g["run_id"]) & (flows["cc"] == row["cc"])).sum())
        for m in present:
            scale, label = metrics[m]
            # every metric here is >= 0: the t interval is cut at 0 (analysis.mean_ci)
            row[label] = _ci_text(analysis.mean_ci(g[m].astype(float).tolist(), confidence, nonnegative=True), scale)
        row["_order"] = min(rank.get(r, 1 << 30) for r in g["run_id"])
        rows.append(row)
    df = pd.DataFrame(rows).sort_values(["_order", "cc"]).drop(columns="_order")
    return df.reset_index(drop=True)


def _has(s: pd.DataFrame, col: str, run_id: Optional[str]) -> bool:
    if s.empty or col not in s.columns:
        return False
    if run_id is not None:
        s = s[s["run_id"] == run_id]
    return bool(s[col].notna().any())


def _series_has(t: plots.Tables, col: str, run_id: Optional[str] = None) -> bool:
    return _has(t.get_series(), col, run_id)


def _link_has(t: plots.Tables, col: str, run_id: Optional[str] = None) -> bool:
    return _has(t.get_link_series(), col, run_id)


_BY_AXIS = {
    "loss_pct": "goodput-vs-loss",
    "jitter_ms": "goodput-vs-jitter",
    "rtt_ms": "goodput-vs-rtt",
    "buffer_bdp": "goodput-vs-buffer",
    "n_flows": "goodput-vs-flows",
}


def unswept_notes(t: plots.Tables) -> list[str]:
    """A note per axis that differs between the store's scenarios but is swept within none of
    them: no goodput figure is drawn against it."""
    swept = set(plots.swept_axes(t))
    return [
        f"{_BY_AXIS[ax]}: not drawn; {plots.AXES[ax]} differs only between the parts, no part sweeps it."
        for ax in plots.varying_axes(t)
        if ax in _BY_AXIS and ax not in swept
    ]


def _figure_plan(t: plots.Tables) -> list[tuple[str, str, str]]:
    """(section, kind, caption) of the figures that apply to the data present."""
    plan = []
    ccs = sorted(set(t.flows["cc"].dropna().astype(str))) if "cc" in t.flows.columns else []
    axes = plots.swept_axes(t)
    by_axis = _BY_AXIS
    for ax in axes:
        if ax in by_axis:
            plan.append(
                (
                    "Goodput across the grid",
                    by_axis[ax],
                    f"Mean goodput per flow vs {plots.AXES[ax]}, one line per algorithm; "
                    f"bars: 95 % t interval over repeats.",
                )
            )
    if len(ccs) >= 2 and axes:
        num, base = plots.default_pair(ccs)
        plan.append(
            (
                "Goodput across the grid",
                "ratio",
                f"Goodput of {num} relative to {base} vs {plots.AXES[axes[0]]} (1 = equal).",
            )
        )
    run = plots.select_run(t)
    where = f"run {run[:10]}"
    if _series_has(t, "goodput_bps", run):
        plan.append(
            (
                "One run over time",
                "throughput-time",
                f"Per-flow throughput over time ({where}: the first ok run in grid order).",
            )
        )
    if _series_has(t, "cwnd_pkts", run):
        plan.append(("One run over time", "cwnd-time", f"Congestion window per flow ({where})."))
    if _series_has(t, "rtt_ms", run):
        plan.append(("One run over time", "rtt-time", f"Smoothed RTT per flow ({where})."))
    if _series_has(t, "pacing_bps", run):
        plan.append(("One run over time", "pacing-time", f"Pacing rate per flow ({where})."))
    if _link_has(t, "queue_bytes", run):
        plan.append(("One run over time", "queue-time", f"Bottleneck queue ({where})."))
    s = t.get_series()
    if _series_has(t, "goodput_bps"):
        one = s[s["run_id"] == run]
        if one["flow_id"].nunique() >= 2 and one["t_s"].nunique() >= 64:
            plan.append(
                (
                    "One run over time",
                    "periodogram",
                    f"Periodogram of each group's aggregate throughput ({where}); dashed: dominant period.",
                )
            )
    if _series_has(t, "rtt_ms"):
        plan.append(("Delay", "rtt-cdf", "CDF of the flows' RTT samples per algorithm, all ok runs."))
    if _link_has(t, "probe_rtt_ms"):
        plan.append(("Delay", "probe-cdf", "CDF of the latency probes' RTT through the bottleneck, all ok runs."))
    plan.append(
        (
            "Delay",
            "throughput-delay",
            "Goodput vs 95th-percentile RTT per algorithm (small dots: runs; markers: means with 95 % t intervals).",
        )
    )
    if "flow_id" in t.flows.columns and (t.flows.groupby("run_id")["flow_id"].nunique() >= 2).any():
        plan.append(("Fairness", "jain", "Jain's fairness index per cell (1 = equal shares)."))
    return plan


def generic_sections(t: plots.Tables) -> list[Section]:
    """Summary table and the figures that apply to the data present."""
    if plots.ok_runs(t).empty or t.flows.empty:
        return [Section("Results", paragraphs=["No ok runs: nothing to summarise."])]
    out = [
        Section(
            "Summary",
            paragraphs=[
                "Per cell and algorithm: mean over runs of each run's per-flow mean, with the 95 % "
                "Student t interval in brackets (a single run has no interval)."
            ],
            tables=[("Goodput and RTT per cell", summary_table(t))],
        )
    ]
    sections: dict[str, Section] = {}
    problems = unswept_notes(t)
    for title, kind, caption in _figure_plan(t):
        try:
            fig = plots.make(t, kind)
        except plots.PlotError as e:
            problems.append(f"{kind}: {e}")
            continue
        except Exception as e:  # a bug in one figure must not lose the whole report; say so
            problems.append(f"{kind} failed: {type(e).__name__}: {e}")
            warnings.warn(f"report figure {kind} failed: {e!r}", stacklevel=2)
            continue
        sections.setdefault(title, Section(title)).figures.append((caption, fig))
    out.extend(sections.values())
    if problems:
        out.append(Section("Figures not drawn", paragraphs=problems))
    return out


def build_report(
    dir,
    out=None,
    sections: Optional[Sequence[Section]] = None,
    title: Optional[str] = None,
    *,
    results: Any = None,
    lead: Optional[Sequence[Section]] = None,
) -> Path:
    """Write the HTML report of store ``dir`` to ``out`` (default DIR/report.html); returns its path.

    ``lead``: sections the report opens with, before everything else (a study's key figure).
    ``sections``: more sections to append after the generic ones (a study's: ccbench.study's
    ``build_report`` passes them). ``results``: an already loaded Results-like object.
    """
    dir = Path(dir)
    if results is None:
        if not dir.is_dir():
            raise ReportError(f"{dir}: no such store directory")
        from ..results.store import load

        results = load(dir)
    t = plots.tables(results)
    if t.runs.empty:
        raise ReportError(f"{dir}: no runs in the store")
    meta = _read_meta(dir, results)
    if not t.meta:
        t.meta = meta
    name, _ = _scenario_name_and_description(meta)
    label = meta.get("study") or name or dir.name
    title = title or f"ccbench report: {label}"
    all_sections = [*(lead or []), header_section(dir, meta, t), runs_section(t), *generic_sections(t)]
    all_sections.extend(sections or [])
    backend = (
        meta.get("backend")
        or ", ".join(sorted(set(t.runs.get("backend", pd.Series(dtype=str)).dropna().astype(str))))
        or "unknown"
    )
    subtitle = f"{len(t.runs)} runs on the {backend} backend, made {_unknown(meta.get('created'))}"
    out = Path(out) if out is not None else dir / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = render_html(title, subtitle, all_sections)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(doc, encoding="utf-8")
    tmp.replace(out)
    return out
