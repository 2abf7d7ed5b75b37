"""One self-contained HTML report of a result store: figures inline as SVG, tables as HTML, a
small inline style sheet, no scripts and no external URLs (it opens offline, mails as one file).

    build_report("results/seed002", out=None)   # -> results/seed002/report.html

Contents: what was asked (study or scenario name and description, the scenario TOML, the grid),
how it was run (backend, kernel, ccbench version, command, date; from DIR/ccbench.json),
run counts and failed runs with their errors, a summary table per cell per algorithm with
confidence intervals, the figures of ccbench.plots that apply to the data present, then the
study's own sections from ``ccbench.study.report_sections(study, results)`` when ccbench.json
names a study. Every piece of text is HTML-escaped; only ``Section.html`` is inserted as is.
"""
from __future__ import annotations

import datetime as _dt
import html
import io
import json
import re
import shlex
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import pandas as pd
from matplotlib.figure import Figure

from . import __version__, plots

__all__ = ["Section", "ReportError", "build_report", "render_html", "figure_svg", "generic_sections"]


class ReportError(ValueError):
    """The directory cannot be reported on (e.g. it holds no runs)."""


@dataclass
class Section:
    """A part of the report. ``paragraphs`` are plain text (escaped); ``tables`` are
    (caption, DataFrame); ``figures`` are (caption, matplotlib Figure); ``html`` is raw HTML
    inserted after the paragraphs (the caller is responsible for escaping inside it)."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[tuple[str, Figure]] = field(default_factory=list)
    html: Optional[str] = None


_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#222;
 max-width:1080px;margin:0 auto;padding:1.2em 1.6em 3em;background:#fff}
h1{font-size:1.7em;margin:.2em 0 .1em}h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ddd;
 padding-bottom:.2em}h3{font-size:1.05em;margin:1.4em 0 .4em}
.sub{color:#555;margin:0 0 1em}
table{border-collapse:collapse;margin:.4em 0 1.2em;font-size:.88em}
th,td{border-bottom:1px solid #e3e3e3;padding:.25em .7em;text-align:left;vertical-align:top}
th{background:#f4f5f7;font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
table.meta th{background:none;color:#555;font-weight:500;white-space:nowrap}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0;color:#333}
pre{background:#f6f8fa;border:1px solid #e1e4e8;padding:.7em 1em;overflow:auto;font-size:.85em;
 white-space:pre-wrap;overflow-wrap:anywhere;
 line-height:1.35}
code{font-size:.9em;background:#f3f3f3;padding:0 .25em}
figure{margin:1.2em 0 1.8em}figure svg{display:block;width:100%;max-width:860px;height:auto}
figcaption{color:#444;font-size:.9em;margin-top:.3em}
summary{cursor:pointer;color:#333;margin:.3em 0}
.warn{color:#8a4b00;background:#fff6e5;border-left:3px solid #f0a020;padding:.4em .8em}
.bad{color:#a00}.ok{color:#176a1a}
nav ol{columns:2;font-size:.92em}footer{margin-top:3em;color:#777;font-size:.85em}
"""


def _e(text: Any) -> str:
    return html.escape("" if text is None else str(text), quote=True)


# ---- figures and tables -----------------------------------------------------------------------


def figure_svg(fig: Figure, salt: str) -> str:
    """The figure as an inline ``<svg>`` element: no XML prolog, no DOCTYPE (its DTD address), no
    metadata block, text as text; ids salted per figure so several SVGs in one page never clash."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg")
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    return text.strip()


def _num_cols(df: pd.DataFrame) -> set[str]:
    return {c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])}


def _fmt_cell(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if v != v:
            return "–"
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:.4e}"
    try:
        if pd.isna(v):
            return "–"
    except (TypeError, ValueError):
        pass
    return str(v)


def table_html(df: pd.DataFrame, caption: str = "") -> str:
    """An escaped HTML table; numeric columns right-aligned."""
    nums = _num_cols(df)
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{_e(caption)}</caption>")
    out.append("<thead><tr>" + "".join(
        f'<th{" class=num" if c in nums else ""}>{_e(c)}</th>' for c in df.columns) + "</tr></thead><tbody>")
    for row in df.itertuples(index=False):
        out.append("<tr>" + "".join(
            f'<td{" class=num" if c in nums else ""}>{_e(_fmt_cell(v))}</td>'
            for c, v in zip(df.columns, row)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


# ---- the header: what was asked and how it was run ----------------------------------------------


def _read_meta(dir: Path, results: Any) -> dict:
    meta = getattr(results, "meta", None)
    if meta:
        return dict(meta)
    p = dir / "ccbench.json"
    if p.is_file():
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError) as e:
            warnings.warn(f"{p}: unreadable ({e})")
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
    return name, " ".join(l for l in lines if l)


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


def _header_section(dir: Path, meta: dict, t: plots.Tables) -> Section:
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
        cell = f"<code>{_e(v)}</code>" if k == "command" and v != "unknown" else _e(v)
        parts.append(f"<tr><th>{_e(k)}</th><td>{cell}</td></tr>")
    parts.append("</tbody></table>")
    grid = meta.get("grid") or {}
    if grid:
        parts.append(table_html(pd.DataFrame(
            [{"swept key": k, "values": ", ".join(map(str, v if isinstance(v, list) else [v])),
              "count": len(v) if isinstance(v, list) else 1} for k, v in grid.items()]), "The grid"))
    if meta.get("scenario_toml"):
        toml_text = meta["scenario_toml"]
        is_open = " open" if toml_text.count("\n") <= 40 else ""  # a long study file starts folded
        parts.append(f"<details{is_open}><summary>Scenario TOML ({toml_text.count(chr(10)) + 1} lines)"
                     f"</summary><pre>{_e(toml_text)}</pre></details>")
    else:
        parts.append("<p>Scenario TOML: unknown (no ccbench.json in the store).</p>")
    return Section("What was asked", paragraphs=paragraphs, html="".join(parts))


def _runs_section(t: plots.Tables) -> Section:
    runs = t.runs
    n = len(runs)
    status = runs["status"] if "status" in runs.columns else pd.Series(["ok"] * n)
    ok = int((status == "ok").sum())
    failed = runs[status != "ok"]
    paras = [f"{n} runs: {ok} ok, {len(failed)} failed."]
    tables = []
    if len(failed):
        cols = ["run_id", *[c for c in plots.swept_columns(t) if c in failed.columns],
                *(["repeat"] if "repeat" in failed.columns else []), "error"]
        tables.append(("Failed runs", failed[[c for c in cols if c in failed.columns]].reset_index(drop=True)))
    return Section("Runs", paragraphs=paras, tables=tables)


# ---- generic data sections -------------------------------------------------------------------


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
    from . import analysis

    flows = plots._ok_flows(t)
    cells = [c for c in plots.swept_columns(t)
             if c in flows.columns and flows[c].astype(str).nunique() > 1
             and not plots._is_function_of(flows, c, ["cc"])]
    keys = [*cells, "cc"]
    metrics = {"goodput_bps": (1e6, "goodput per flow, Mbit/s"), "rtt_mean_ms": (1.0, "RTT mean, ms"),
               "rtt_p95_ms": (1.0, "RTT p95, ms"), "retransmits": (1.0, "retransmits per flow")}
    present = [m for m in metrics if m in flows.columns and flows[m].notna().any()]
    per_run = flows.groupby(["run_id", *keys], dropna=False, sort=False)[present].mean().reset_index()
    ordered = plots._ordered_runs(t)["run_id"].tolist()
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
            row[label] = _ci_text(analysis.mean_ci(g[m].astype(float).tolist(), confidence,
                                                   nonnegative=True), scale)
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


def _figure_plan(t: plots.Tables) -> list[tuple[str, str, str]]:
    """(section, kind, caption) of the figures that apply to the data present."""
    plan = []
    ccs = sorted(set(t.flows["cc"].dropna().astype(str))) if "cc" in t.flows.columns else []
    axes = plots.varying_axes(t)
    by_axis = {"loss_pct": "goodput-vs-loss", "jitter_ms": "goodput-vs-jitter",
               "rtt_ms": "goodput-vs-rtt", "buffer_bdp": "goodput-vs-buffer"}
    for ax in axes:
        if ax in by_axis:
            plan.append(("Goodput across the grid", by_axis[ax],
                         f"Mean goodput per flow vs {plots.AXES[ax]}, one line per algorithm; bars: 95 % t interval over repeats."))
    if len(ccs) >= 2 and axes:
        num, base = plots._default_pair(ccs)
        plan.append(("Goodput across the grid", "ratio",
                     f"Goodput of {num} relative to {base} vs {plots.AXES[axes[0]]} (1 = equal)."))
    run = plots.select_run(t)
    where = f"run {run[:10]}"
    if _series_has(t, "goodput_bps", run):
        plan.append(("One run over time", "throughput-time", f"Per-flow throughput over time ({where}: the first ok run in grid order)."))
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
            plan.append(("One run over time", "periodogram",
                         f"Periodogram of each group's aggregate throughput ({where}); dashed: dominant period."))
    if _series_has(t, "rtt_ms"):
        plan.append(("Delay", "rtt-cdf", "CDF of the flows' RTT samples per algorithm, all ok runs."))
    if _link_has(t, "probe_rtt_ms"):
        plan.append(("Delay", "probe-cdf", "CDF of the latency probes' RTT through the bottleneck, all ok runs."))
    plan.append(("Delay", "throughput-delay",
                 "Goodput vs 95th-percentile RTT per algorithm (small dots: runs; markers: means with 95 % t intervals)."))
    if "flow_id" in t.flows.columns and (t.flows.groupby("run_id")["flow_id"].nunique() >= 2).any():
        plan.append(("Fairness", "jain", "Jain's fairness index per cell (1 = equal shares)."))
    return plan


def generic_sections(t: plots.Tables) -> list[Section]:
    """Summary table and the figures that apply to the data present."""
    if plots._ok_runs(t).empty or t.flows.empty:
        return [Section("Results", paragraphs=["No ok runs: nothing to summarise."])]
    out = [Section("Summary", paragraphs=[
        "Per cell and algorithm: mean over runs of each run's per-flow mean, with the 95 % "
        "Student t interval in brackets (a single run has no interval)."],
        tables=[("Goodput and RTT per cell", summary_table(t))])]
    sections: dict[str, Section] = {}
    problems = []
    for title, kind, caption in _figure_plan(t):
        try:
            fig = plots.make(t, kind)
        except plots.PlotError as e:
            problems.append(f"{kind}: {e}")
            continue
        except Exception as e:  # a bug in one figure must not lose the whole report; say so
            problems.append(f"{kind} failed: {type(e).__name__}: {e}")
            warnings.warn(f"report figure {kind} failed: {e!r}")
            continue
        sections.setdefault(title, Section(title)).figures.append((caption, fig))
    out.extend(sections.values())
    if problems:
        out.append(Section("Figures not drawn", paragraphs=problems))
    return out


def _study_sections(meta: dict, results: Any) -> tuple[list[Section], Optional[str]]:
    study = meta.get("study")
    if not study:
        return [], None
    try:
        import importlib

        mod = importlib.import_module("ccbench.study")
    except ImportError:
        return [], None
    fn = getattr(mod, "report_sections", None)
    if fn is None:
        return [], None
    try:
        return list(fn(study, results) or []), None
    except Exception as e:
        warnings.warn(f"study {study}: report_sections failed: {e!r}")
        return [], f"The study's own sections could not be built: {type(e).__name__}: {e}"


# ---- rendering --------------------------------------------------------------------------------


def _slug(text: str, used: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, i = base, 2
    while slug in used:
        slug, i = f"{base}-{i}", i + 1
    used.add(slug)
    return slug


def render_html(title: str, subtitle: str, sections: Sequence[Section]) -> str:
    """The whole document. ``<body data-figures=N>`` states how many figures it holds."""
    used: set[str] = set()
    body, nav = [], []
    n_fig = 0
    for sec in sections:
        sid = _slug(sec.title, used)
        nav.append(f'<li><a href="#{sid}">{_e(sec.title)}</a></li>')
        body.append(f'<section id="{sid}"><h2>{_e(sec.title)}</h2>')
        body.extend(f"<p>{_e(p)}</p>" for p in sec.paragraphs)
        if sec.html:
            body.append(sec.html)
        for caption, df in sec.tables:
            body.append(table_html(df, caption))
        for caption, fig in sec.figures:
            n_fig += 1
            body.append(f'<figure class="plot" id="fig-{n_fig}">{figure_svg(fig, f"ccbench-fig-{n_fig}")}'
                        f"<figcaption>Figure {n_fig}. {_e(caption)}</figcaption></figure>")
        body.append("</section>")
    n_tab = sum(len(s.tables) for s in sections)
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>",
        f'<body data-figures="{n_fig}"><header><h1>{_e(title)}</h1>',
        f'<p class="sub">{_e(subtitle)} · {n_fig} figures, {n_tab} tables</p></header>',
        f"<nav><ol>{''.join(nav)}</ol></nav>", "".join(body),
        f"<footer>Made by ccbench {_e(__version__)} on {_e(now)}.</footer></body></html>\n",
    ])


def build_report(dir, out=None, sections: Optional[Sequence[Section]] = None,
                 title: Optional[str] = None, *, results: Any = None) -> Path:
    """Write the HTML report of store ``dir`` to ``out`` (default DIR/report.html); returns its path.

    ``sections``: the study sections to append (default: ``ccbench.study.report_sections`` when
    DIR/ccbench.json names a study). ``results``: an already loaded Results-like object.
    """
    dir = Path(dir)
    if results is None:
        if not dir.is_dir():
            raise ReportError(f"{dir}: no such store directory")
        from . import api

        results = api.load(dir)
    t = plots.tables(results)
    if t.runs.empty:
        raise ReportError(f"{dir}: no runs in the store")
    meta = _read_meta(dir, results)
    if not t.meta:
        t.meta = meta
    name, _ = _scenario_name_and_description(meta)
    label = meta.get("study") or name or dir.name
    title = title or f"ccbench report: {label}"
    all_sections = [_header_section(dir, meta, t), _runs_section(t), *generic_sections(t)]
    if sections is None:
        study_secs, problem = _study_sections(meta, results)
        if problem:
            study_secs.append(Section("Study sections", paragraphs=[problem]))
    else:
        study_secs = list(sections)
    all_sections.extend(study_secs)
    backend = meta.get("backend") or ", ".join(sorted(set(t.runs.get("backend", pd.Series(dtype=str)).dropna().astype(str)))) or "unknown"
    subtitle = f"{len(t.runs)} runs on the {backend} backend, made {_unknown(meta.get('created'))}"
    out = Path(out) if out is not None else dir / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = render_html(title, subtitle, all_sections)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(doc, encoding="utf-8")
    tmp.replace(out)
    return out
