"""``ccbench compare``: congestion-control algorithms head to head on the user's own scenario.

    run_compare("my-link.toml", ccs=["cubic", "bbr"], repeat=5)   # -> Comparison

Two parts, each a sweep into its own store, DIR/alone and DIR/pairs (the sweep machinery: runs
already stored are skipped, so an interrupted comparison resumes and a second identical command
runs nothing; ``ccbench report DIR/alone`` etc. work on them as on any sweep):

* ``alone``: the scenario with **every flow group's** ``cc`` replaced by one algorithm, for each
  algorithm (a one-flow scenario becomes one flow of that algorithm; a scenario with several
  flows or groups keeps its flows, counts and start times, all of that algorithm). Per run:
  goodput (bytes delivered by all flows over the time from the first start to the last end),
  mean and p95 RTT (mean over the run's flows of each
  flow's value), retransmissions (sum). The repeats are the sample; 95 % t intervals
  (``analysis.mean_ci(..., nonnegative=True)``: the lower bound cut at 0).
* ``pairs``: for each unordered pair of algorithms, two flows (flow 0 = the first algorithm in
  ``--cc`` order, flow 1 = the second) with the settings of the scenario's first flow group,
  started together plus the scenario's ``start_jitter``. Per run: each flow's share of the
  pair's goodput (the two shares sum to 1) and Jain's index of the two goodputs
  (``analysis.jain_index``); t intervals over the repeats, cut to [0, 1] and [0.5, 1].

Significance (``alone`` only): for goodput and for p95 RTT, every pair of algorithms is tested
with Welch's t test (``analysis.welch_test``; ``test="mann-whitney"`` for the rank test), and
the p values of one metric's family of pairwise tests are adjusted with Holm's step-down
method. A difference is significant when the adjusted p is below ``alpha`` (0.05): reported
as ``"A > B (p=…)"`` (A has the larger mean), else ``"no significant difference (p=…)"``.

Outputs in DIR (default ``results/compare-<scenario name>``): the stores alone/ and pairs/,
compare.md, compare.json, alone-goodput-rtt.svg, pairs-shares.svg and report.html (one file,
figures inline, no scripts). docs/compare.md describes them.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from . import analysis
from .results.schema import json_safe
from .scenario.errors import ScenarioError
from .scenario.model import Scenario, load_scenario, split_by_marking

__all__ = [
    "CompareError",
    "Comparison",
    "run_compare",
    "holm",
    "resolve_algorithms",
    "default_out",
    "alone_scenario",
    "pairs_scenario",
    "JSON_KEYS",
    "print_tables",
    "to_markdown",
]

PARTS = ("alone", "pairs")
FIGURE_FILES = {"alone": "alone-goodput-rtt.svg", "pairs": "pairs-shares.svg"}
ALPHA = 0.05
CONFIDENCE = 0.95
TESTS = ("welch", "mann-whitney")
#: top-level keys of compare.json (documented in docs/compare.md)
JSON_KEYS = (
    "scenario",
    "scenario_file",
    "description",
    "backend",
    "algorithms",
    "repeat",
    "duration_s",
    "flows_rule",
    "confidence",
    "alpha",
    "test",
    "correction",
    "alone",
    "pairs",
    "tests",
    "notes",
    "runs",
    "stores",
    "files",
)


class CompareError(ValueError):
    """Bad compare input (unknown or unavailable algorithm, repeat < 1, ...): one line."""


# --------------------------------------------------------------------------------------------
# input


def resolve_algorithms(
    cc: Optional[str | Sequence[str]], backend: str, marks_ecn: bool = False, notes: Optional[list] = None
) -> list[str]:
    """The algorithms to compare: ``cc`` (comma-separated or a list; order kept, duplicates
    dropped) checked against what ``backend`` can run; default all of the backend's, and those
    that need an ECN-marking queue (NEEDS_MARKING: DCTCP and Prague are Reno where nothing marks)
    only when the bottleneck ``marks_ecn`` (otherwise a line in ``notes`` says why they are out);
    named, they are always compared."""
    from . import backends
    from .scenario.model import known_algorithms

    try:
        available = [str(r["name"]) for r in backends.algorithms(backend)]
    except ScenarioError:
        raise
    except Exception as e:  # a backend that imports but cannot list (e.g. no root)
        raise CompareError(f"--backend {backend}: cannot list its algorithms ({type(e).__name__}: {e})") from None
    if cc is None:
        names, left = split_by_marking(available, marks_ecn)
        if left and notes is not None:
            notes.append(
                f"{', '.join(left)} left out: the bottleneck does not mark ECN (drop-tail, or an AQM with "
                'ecn = false), where they only repeat Reno; use aqm = "step" or "dualpi2", or name them with --cc'
            )
    else:
        items = cc.split(",") if isinstance(cc, str) else list(cc)
        names = []
        for x in items:
            n = str(x).strip().lower()
            if n and n not in names:
                names.append(n)
        if not names:
            raise CompareError(
                f"--cc {cc!r}: no algorithm named (expected a comma-separated list from {', '.join(available)})"
            )
    for n in names:
        if n not in available:
            if n in known_algorithms():
                raise CompareError(
                    f"--cc: {n} is not available on the {backend} backend (available: {', '.join(available)})"
                )
            import difflib

            hint = difflib.get_close_matches(n, list(known_algorithms()) + available, n=1)
            extra = f"; did you mean '{hint[0]}'?" if hint else ""
            raise CompareError(
                f"--cc: unknown algorithm '{n}'{extra} (available on the {backend} backend: {', '.join(available)})"
            )
    return names


def default_out(scenario: Scenario) -> Path:
    return Path("results") / f"compare-{scenario.name or 'scenario'}"


def _base_raw(scenario: Scenario) -> dict:
    raw = scenario.raw
    raw.pop("sweep", None)
    return raw


def alone_scenario(scenario: Scenario, ccs: Sequence[str], repeat: int) -> Scenario:
    """The ``alone`` part: every flow group of the scenario gets the algorithm; the grid sweeps
    the algorithm (all groups' ``cc`` keys zipped) with ``repeat`` repeats."""
    raw = _base_raw(scenario)
    raw["name"] = f"{scenario.name}/alone"
    keys = [f"flows.{i}.cc" for i in range(len(raw["flows"]))]
    for g in raw["flows"]:
        g["cc"] = ccs[0]
    sweep: dict[str, Any] = {k: list(ccs) for k in keys}
    if len(keys) > 1:
        sweep["zip"] = [keys]
    sweep["repeat"] = int(repeat)
    raw["sweep"] = sweep
    return Scenario.from_dict(raw, source=scenario.source)


def pair_list(ccs: Sequence[str]) -> list[tuple[str, str]]:
    return list(itertools.combinations(ccs, 2))


def pairs_scenario(scenario: Scenario, ccs: Sequence[str], repeat: int) -> Optional[Scenario]:
    """The ``pairs`` part: two flows with the first group's settings (count 1 each), one of each
    algorithm of a pair; None with fewer than two algorithms."""
    pairs = pair_list(ccs)
    if not pairs:
        return None
    raw = _base_raw(scenario)
    raw["name"] = f"{scenario.name}/pairs"
    template = {k: v for k, v in raw["flows"][0].items() if k not in ("cc", "count")}
    raw["flows"] = [{**copy.deepcopy(template), "cc": pairs[0][0]}, {**copy.deepcopy(template), "cc": pairs[0][1]}]
    raw["sweep"] = {
        "flows.0.cc": [a for a, _ in pairs],
        "flows.1.cc": [b for _, b in pairs],
        "zip": [["flows.0.cc", "flows.1.cc"]],
        "repeat": int(repeat),
    }
    return Scenario.from_dict(raw, source=scenario.source)


def flows_rule(scenario: Scenario) -> str:
    groups = scenario.flows
    if len(groups) == 1 and groups[0].count == 1:
        return "one flow of each algorithm (the scenario's flow with its cc replaced)"
    desc = ", ".join(f"{g.count}×" for g in groups)
    return (
        f"the scenario's {scenario.n_flows} flows in {len(groups)} group(s) ({desc}), every group "
        f"running the compared algorithm"
    )


# --------------------------------------------------------------------------------------------
# statistics


def holm(pvalues: Sequence[Optional[float]]) -> list[Optional[float]]:
    """Holm's step-down adjustment (Holm 1979): sort the m defined p values ascending,
    p_adj(i) = max over j <= i of min(1, (m - j + 1) p(j)). None stays None (not counted in m)."""
    idx = [i for i, p in enumerate(pvalues) if p is not None and not math.isnan(p)]
    m = len(idx)
    out: list[Optional[float]] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(sorted(idx, key=lambda i: pvalues[i])):
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))
        out[i] = running
    return out


def _ci(values: Sequence[float], low: Optional[float] = 0.0, high: Optional[float] = None) -> dict:
    """Mean and Student t interval over the repeats, cut to the quantity's range [low, high]
    (goodput, RTT, retransmits >= 0; shares in [0, 1]; Jain in [0.5, 1] for two flows):
    analysis.mean_ci's ``bounds``, whose docstring says why a cut t interval and not a
    log-scale or bootstrap one (with 2-5 repeats a percentile bootstrap is far too narrow: 3
    values have only 10 distinct resamples)."""
    c = analysis.mean_ci([v for v in values if v is not None], CONFIDENCE, bounds=(low, high))
    return {"mean": c.mean, "lo": c.lo, "hi": c.hi, "n": c.n, "method": "t"}


def _p_text(p: Optional[float]) -> str:
    if p is None:
        return "–"
    if p == 0.0:
        return "0"
    if p < 0.001:
        return f"{p:.1e}"
    return f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


# --------------------------------------------------------------------------------------------
# the comparison


@dataclass
class Comparison:
    scenario: Scenario
    ccs: list[str]
    backend: str
    repeat: int
    out: Path
    test: str = "welch"
    doc: dict = field(default_factory=dict)
    summaries: list = field(default_factory=list)
    files: dict = field(default_factory=dict)

    @property
    def all_ok(self) -> bool:
        return self.doc.get("runs", {}).get("failed", 0) == 0


ALONE_METRICS = (  # json key, flows column, aggregation over the run's flows, scale, label
    ("goodput_mbps", "goodput_bps", "delivered", 1e-6, "goodput Mbit/s"),
    ("rtt_mean_ms", "rtt_mean_ms", "mean", 1.0, "RTT mean ms"),
    ("rtt_p95_ms", "rtt_p95_ms", "mean", 1.0, "RTT p95 ms"),
    ("retransmits", "retransmits", "sum", 1.0, "retransmits"),
)
TESTED = (("goodput_mbps", "goodput"), ("rtt_p95_ms", "p95 RTT"))


def _per_run(flows: pd.DataFrame, run_ids: Sequence[str], column: str, how: str) -> list[float]:
    out = []
    for rid in run_ids:
        v = flows.loc[flows["run_id"] == rid, column].dropna().astype(float) if column in flows else []
        if len(v) == 0:
            continue
        if how == "delivered":
            out.append(_delivered_rate(flows[flows["run_id"] == rid]))
        else:
            out.append(float(v.sum() if how == "sum" else v.mean()))
    return out


def _delivered_rate(f: pd.DataFrame) -> float:
    """The run's goodput: bytes delivered by all its flows (each flow's goodput × its active time)
    over the time from the first start to the last end, in bit/s. For one flow this is exactly its
    goodput_bps; for flows with different start times it does not overcount as the plain sum of
    per-flow rates would."""
    g = f["goodput_bps"].astype(float)
    if "start_s" not in f or "end_s" not in f or f["start_s"].isna().any() or f["end_s"].isna().any():
        return float(g.sum())
    start, end = f["start_s"].astype(float), f["end_s"].astype(float)
    span = float(end.max() - start.min())
    if span <= 0:
        return float(g.sum())
    return float((g * (end - start)).sum() / span)


def analyse(results: Any, alone_specs: Sequence, pair_specs: Sequence, ccs: Sequence[str], test: str = "welch") -> dict:
    """The alone / pairs / tests parts of compare.json from the store's rows of the planned runs."""
    runs, flows = results["runs"], results["flows"]
    ok_ids = set(runs.loc[runs["status"] == "ok", "run_id"]) if "status" in runs else set(runs["run_id"])
    ccs = list(ccs)

    alone, samples = [], {}
    for cc in ccs:
        ids = [s.run_id for s in alone_specs if s.params.get("flows.0.cc") == cc and s.run_id in ok_ids]
        row: dict[str, Any] = {"cc": cc, "runs": len(ids)}
        for key, col, how, scale, _ in ALONE_METRICS:
            vals = [v * scale for v in _per_run(flows, ids, col, how)]
            samples[(cc, key)] = vals
            row[key] = _ci(vals)
        alone.append(row)

    pairs = []
    for a, b in pair_list(ccs):
        ids = [
            s.run_id
            for s in pair_specs
            if s.params.get("flows.0.cc") == a and s.params.get("flows.1.cc") == b and s.run_id in ok_ids
        ]
        ga, gb, share_a, jain, agg = [], [], [], [], []
        for rid in ids:
            f = flows[flows["run_id"] == rid]
            key = "group" if "group" in f.columns else "flow_id"
            xa = f.loc[f[key] == 0, "goodput_bps"].astype(float).sum()
            xb = f.loc[f[key] == 1, "goodput_bps"].astype(float).sum()
            ga.append(xa / 1e6)
            gb.append(xb / 1e6)
            agg.append(_delivered_rate(f) / 1e6)
            if xa + xb > 0:
                share_a.append(xa / (xa + xb))
            j = analysis.jain_index([xa, xb])
            if j is not None:
                jain.append(j)
        sa = _ci(share_a, 0.0, 1.0)
        sb = _ci([1.0 - s for s in share_a], 0.0, 1.0)
        verdict = "–"
        if sa["lo"] is not None:
            if sa["lo"] == sa["hi"] == 0.5:
                verdict = "even"
            elif sa["lo"] > 0.5:
                verdict = f"{a} takes more"
            elif sa["hi"] < 0.5:
                verdict = f"{b} takes more"
            else:
                verdict = "even"
        pairs.append(
            {
                "a": a,
                "b": b,
                "runs": len(ids),
                "share_a": sa,
                "share_b": sb,
                "jain": _ci(jain, 0.5, 1.0),
                "goodput_a_mbps": _ci(ga),
                "goodput_b_mbps": _ci(gb),
                "aggregate_mbps": _ci(agg),
                "verdict": verdict,
            }
        )

    tests = []
    fn = analysis.welch_test if test == "welch" else analysis.mann_whitney
    for key, label in TESTED:
        family = []
        for a, b in pair_list(ccs):
            r = fn(samples[(a, key)], samples[(b, key)])
            family.append((a, b, r))
        adjusted = holm([r.p_value for _, _, r in family])
        for (a, b, r), padj in zip(family, adjusted):
            ma = analysis.mean_ci(samples[(a, key)]).mean
            mb = analysis.mean_ci(samples[(b, key)]).mean
            sig = padj is not None and padj < ALPHA
            if padj is None:
                statement = "not tested (needs 2 runs of each)"
            elif sig and ma is not None and mb is not None and ma != mb:
                hi_, lo_ = (a, b) if ma > mb else (b, a)
                statement = f"{hi_} > {lo_} (p={_p_text(padj)})"
            else:
                sig = False
                statement = f"no significant difference (p={_p_text(padj)})"
            ratio = max(ma, mb) / min(ma, mb) if ma is not None and mb is not None and min(ma, mb) > 0 else None
            tests.append(
                {
                    "metric": key,
                    "label": label,
                    "a": a,
                    "b": b,
                    "method": r.method,
                    "mean_a": ma,
                    "mean_b": mb,
                    "ratio": ratio,
                    "p": r.p_value,
                    "p_holm": padj,
                    "significant": bool(sig),
                    "higher": (a if ma > mb else b) if sig else None,
                    "statement": statement,
                }
            )
    return {"alone": alone, "pairs": pairs, "tests": tests}


def run_compare(
    scenario: str | os.PathLike | Scenario,
    out: str | os.PathLike | None = None,
    *,
    ccs: Optional[str | Sequence[str]] = None,
    repeat: int = 5,
    backend: str = "sim",
    duration: Optional[str] = None,
    test: str = "welch",
    workers: Optional[int] = None,
    progress: bool = True,
    console: Any = None,
    command: Optional[Sequence[str]] = None,
    report: bool = True,
    figures: bool = True,
) -> Comparison:
    """Run (or resume) the comparison into ``out`` and write compare.md/.json, the figures and
    report.html. Raises CompareError / ScenarioError / SweepError for bad input, before any run."""
    from . import backends
    from . import sweeps as sw
    from .results.meta import build_meta

    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise CompareError(f"--repeat {repeat!r}: expected a whole number of at least 1")
    if test not in TESTS:
        raise CompareError(f"--test {test!r}: expected one of {', '.join(TESTS)}")
    if isinstance(scenario, Scenario):
        base = scenario
    else:
        base = load_scenario(scenario)
    if duration is not None:
        base = base.with_overrides({"duration": duration})
    backends.get_backend(backend)  # unknown / unavailable backend: a clear ScenarioError
    notes: list[str] = []
    names = resolve_algorithms(ccs, backend, base.marks_ecn, notes)
    out = Path(out) if out is not None else default_out(base)
    if out.exists() and not out.is_dir():
        raise CompareError(f"--out {out}: is a file (expected a directory)")
    from .results.store import check_store_dir, is_store

    if out.is_dir() and is_store(out):
        raise CompareError(
            f"--out {out}: is a result store (of ccbench run or sweep); compare writes its "
            f"stores into {out}/alone and {out}/pairs: choose a new or a compare directory"
        )
    for part in PARTS:
        check_store_dir(out / part, purpose="write")

    parts = [("alone", alone_scenario(base, names, repeat))]
    psc = pairs_scenario(base, names, repeat)
    if psc is not None:
        parts.append(("pairs", psc))
    plans = {}
    for part, sc in parts:
        plans[part] = sw.plan(sc, sw.grid_from_scenario(sc), backend)
        for spec in plans[part]:
            try:
                backends.check(spec.scenario, backend)
            except ScenarioError as e:
                raise CompareError(
                    f"{base.source}: the {part} runs cannot run on the {backend} backend: "
                    f"{e.problem}" + (f" ({e.key})" if e.key else "")
                ) from None

    if getattr(base, "sweep", None):
        notes.append(
            f"{base.source} has a [sweep] table: compare uses the base scenario only (the grid is the algorithms)"
        )
    if len(names) < 2:
        notes.append("one algorithm: no pairs and no tests")
    cmp = Comparison(base, names, backend, repeat, out, test)
    command = list(command) if command is not None else ["ccbench", *sys.argv[1:]]
    for part, sc in parts:
        if progress and console is not None:
            console.print(f"[bold]compare[/] {part}: {sc.describe()}", highlight=False, soft_wrap=True)
        cmp.summaries.append(
            sw.run_sweep(
                sc, out / part, backend=backend, workers=workers, progress=progress, console=console, command=command
            )
        )
    meta = build_meta(base, backend, grid={"cc": names}, repeat=repeat, command=command)

    from .results.store import load

    all_ids = {s.run_id for specs in plans.values() for s in specs}
    loaded = [load(out / part) for part, _ in parts]
    results = {
        "runs": pd.concat([r.runs for r in loaded], ignore_index=True),
        "flows": pd.concat([r.flows for r in loaded], ignore_index=True),
        "meta": meta,
    }
    results["runs"] = results["runs"][results["runs"]["run_id"].isin(all_ids)].reset_index(drop=True)
    results["flows"] = results["flows"][results["flows"]["run_id"].isin(all_ids)].reset_index(drop=True)
    data = analyse(results, plans["alone"], plans.get("pairs", []), names, test)
    runs = results["runs"]
    failed = runs[runs["status"] != "ok"] if "status" in runs else runs.iloc[:0]
    cmp.doc = {
        "scenario": base.name,
        "scenario_file": None if str(base.source).startswith("<") else str(base.source),
        "description": base.describe(),
        "backend": backend,
        "algorithms": names,
        "repeat": repeat,
        "duration_s": base.duration_s,
        "flows_rule": {
            "alone": flows_rule(base),
            "pairs": "two flows (first algorithm = flow 0), the first flow group's settings, "
            "started together plus the scenario's start_jitter",
        },
        "confidence": CONFIDENCE,
        "alpha": ALPHA,
        "test": test,
        "correction": "holm (per metric, over the pairwise tests)",
        **data,
        "notes": notes,
        "runs": {
            "planned": len(all_ids),
            "executed": sum(s.executed for s in cmp.summaries),
            "cached": sum(s.cached for s in cmp.summaries),
            "failed": int(len(failed)),
            "errors": [str(e) for e in failed.get("error", pd.Series(dtype=str)).dropna().unique()][:5],
        },
        "stores": {part: str(out / part) for part, _ in parts},
        "files": {},
    }
    files = {"json": out / "compare.json", "md": out / "compare.md"}
    if figures:
        figs = make_figures(cmp.doc)
        from . import plots

        for name, fig in figs.items():
            p = out / FIGURE_FILES[name]
            plots.save(fig, p)
            files[f"figure_{name}"] = p
    if report:
        files["html"] = write_report(cmp, results)
    cmp.files = files
    cmp.doc["files"] = {k: str(v) for k, v in files.items()}
    _atomic_write(files["md"], to_markdown(cmp.doc))
    _atomic_write(files["json"], json.dumps(json_safe(cmp.doc), indent=2, allow_nan=False) + "\n")
    return cmp


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


# --------------------------------------------------------------------------------------------
# text


def _fmt_ci(c: dict, digits: int = 2, sep: str = " ") -> str:
    """ "mean [lo, hi]"; ``sep="\n"`` puts the interval on a second line (terminal tables)."""
    if c is None or c.get("mean") is None:
        return "–"
    m = f"{c['mean']:.{digits}f}"
    if c.get("lo") is None:
        return m
    if sep == "\n":  # terminal: compact
        return f"{m}\n[{c['lo']:.{digits}f}–{c['hi']:.{digits}f}]"
    return f"{m}{sep}[{c['lo']:.{digits}f}, {c['hi']:.{digits}f}]"


def alone_rows(doc: dict, sep: str = " ") -> list[dict]:
    return [
        {
            "algorithm": r["cc"],
            "runs": r["runs"],
            "goodput Mbit/s": _fmt_ci(r["goodput_mbps"], 2, sep),
            "RTT mean ms": _fmt_ci(r["rtt_mean_ms"], 1, sep),
            "RTT p95 ms": _fmt_ci(r["rtt_p95_ms"], 1, sep),
            "retransmits": _fmt_ci(r["retransmits"], 0, sep),
        }
        for r in doc["alone"]
    ]


def pair_rows(doc: dict, sep: str = " ") -> list[dict]:
    """One row per pair; with ``sep="\n"`` (terminal) the shares are not prefixed by the name."""
    name = (lambda n: "") if sep == "\n" else (lambda n: f"{n} ")
    d = 2 if sep == "\n" else 3
    return [
        {
            "pair": f"{p['a']} vs {p['b']}",
            **({} if sep == "\n" else {"runs": p["runs"]}),
            "share of first": f"{name(p['a'])}{_fmt_ci(p['share_a'], d, sep)}",
            "share of second": f"{name(p['b'])}{_fmt_ci(p['share_b'], d, sep)}",
            "Jain": _fmt_ci(p["jain"], d, sep),
            **({} if sep == "\n" else {"aggregate Mbit/s": _fmt_ci(p["aggregate_mbps"], 2, sep)}),
            "verdict": p["verdict"],
        }
        for p in doc["pairs"]
    ]


def test_rows(doc: dict, brief: bool = False) -> list[dict]:
    """One row per test; ``brief`` (terminal) leaves out the p columns (the result has p)."""
    rows = []
    for t in doc["tests"]:
        r = {
            "metric": t["label"],
            "pair": f"{t['a']} vs {t['b']}",
            "larger/smaller": "–" if t.get("ratio") is None else f"{t['ratio']:.2f}×",
        }
        if not brief:
            r.update({"p": _p_text(t["p"]), "p (Holm)": _p_text(t["p_holm"])})
        r["result"] = t["statement"]
        rows.append(r)
    return rows


test_rows.__test__ = False  # not a pytest test despite the name


def _md_table(rows: list[dict]) -> str:
    if not rows:
        return "(none)\n"
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _intro(doc: dict) -> list[str]:
    return [
        f"Scenario: {doc['description']}",
        f"Backend {doc['backend']}, {doc['repeat']} repeat(s) per cell, {doc['duration_s']:g} s per run; "
        f"values are means over the repeats with {doc['confidence']:.0%} Student t intervals in brackets, "
        f"cut to the quantity's range (>= 0; shares [0, 1]; Jain [0.5, 1]).",
        f"Alone: {doc['flows_rule']['alone']}. Goodput is the run's delivered bytes over the time "
        f"from the first start to the last end (for one flow, its goodput); RTT mean and p95 are the mean over "
        f"the run's flows; retransmits are summed.",
        f"Pairs: {doc['flows_rule']['pairs']}; share = the flow's fraction of the pair's goodput.",
    ]


def to_markdown(doc: dict) -> str:
    runs = doc["runs"]
    out = [f"# Compare: {doc['scenario']}", ""]
    out += [f"{line}  " for line in _intro(doc)] + [""]
    out += ["## Alone on the bottleneck", "", _md_table(alone_rows(doc))]
    out += ["## Pairs sharing the bottleneck", "", _md_table(pair_rows(doc))]
    out += [
        "## Significance",
        "",
        f"{'Welch t' if doc['test'] == 'welch' else 'Mann-Whitney U'} tests between the algorithms' "
        f"alone runs, p adjusted with Holm's method over each metric's pairwise tests; significant when "
        f"the adjusted p < {doc['alpha']}.",
        "",
        _md_table(test_rows(doc)),
    ]
    out += [
        f"Runs: {runs['planned']} planned, {runs['executed']} run now, {runs['cached']} already stored, "
        f"{runs['failed']} failed. Stores: " + ", ".join(f"`{v}`" for v in doc["stores"].values()) + ".",
        "",
    ]
    return "\n".join(out)


def print_tables(doc: dict, console) -> None:
    """The three tables on ``console``: one row per algorithm, pair or test when the terminal
    is wide, one line per field below termtable.WIDE columns."""
    from .termtable import print_table

    def show(title: str, rows: list[dict]) -> None:
        text_cols = ("algorithm", "pair", "metric", "result", "verdict")
        right = [c for c in (rows[0] if rows else {}) if c not in text_cols]
        print_table(console, title, rows, right=right, no_wrap=("verdict", "pair"))

    console.print(doc["description"], highlight=False, soft_wrap=True)
    show(
        f"Alone on the bottleneck: mean [{doc['confidence']:.0%} t interval] of {doc['repeat']} runs",
        alone_rows(doc, "\n"),
    )
    show(
        f"Pairs sharing the bottleneck: share of the pair's goodput, mean [{doc['confidence']:.0%} "
        f"t interval] of {doc['repeat']} runs",
        pair_rows(doc, "\n"),
    )
    show(
        f"Significance: {doc['test']} tests, p adjusted with Holm's method, alpha {doc['alpha']}",
        test_rows(doc, brief=True),
    )


# --------------------------------------------------------------------------------------------
# figures and the report


def make_figures(doc: dict) -> dict:
    """{"alone": goodput and p95 RTT per algorithm with intervals, "pairs": stacked shares}."""
    from . import plots

    figs = {}
    ccs = [r["cc"] for r in doc["alone"]]
    colours = plots.colour_map(ccs)
    fig, axes = plots.new_figure(1, 2, width=max(7.0, 1.6 * len(ccs) + 3.5), height=3.8)
    x = np.arange(len(ccs))
    for ax, (key, label) in zip(axes[0], (("goodput_mbps", "goodput (Mbit/s)"), ("rtt_p95_ms", "p95 RTT (ms)"))):
        cis = [r[key] for r in doc["alone"]]
        m = [c["mean"] if c["mean"] is not None else np.nan for c in cis]
        err = np.array(
            [
                [c["mean"] - c["lo"] if c["lo"] is not None else 0 for c in cis],
                [c["hi"] - c["mean"] if c["hi"] is not None else 0 for c in cis],
            ]
        )
        ax.bar(x, m, 0.6, yerr=err, capsize=4, color=[colours[c] for c in ccs])
        ax.set_xticks(x, ccs)
        ax.set_ylabel(label)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_title(label.split(" (")[0] + " alone", fontsize="medium", loc="left")
    fig.suptitle(
        f"{doc['scenario']}: each algorithm alone, mean of {doc['repeat']} runs, {doc['confidence']:.0%} t intervals",
        fontsize="medium",
    )
    figs["alone"] = fig
    if doc["pairs"]:
        names = [f"{p['a']}\nvs {p['b']}" for p in doc["pairs"]]
        fig, axes = plots.new_figure(width=max(6.0, 1.3 * len(names) + 3.0), height=3.8)
        ax = axes[0, 0]
        x = np.arange(len(names))
        sa = [p["share_a"]["mean"] if p["share_a"]["mean"] is not None else np.nan for p in doc["pairs"]]
        sb = [p["share_b"]["mean"] if p["share_b"]["mean"] is not None else np.nan for p in doc["pairs"]]
        ca = [colours.get(p["a"], "#1f77b4") for p in doc["pairs"]]
        cb = [colours.get(p["b"], "#d62728") for p in doc["pairs"]]
        ax.bar(x, sa, 0.6, color=ca, edgecolor="white")
        ax.bar(x, sb, 0.6, bottom=sa, color=cb, edgecolor="white")
        err = np.array(
            [
                [
                    p["share_a"]["mean"] - p["share_a"]["lo"] if p["share_a"]["lo"] is not None else 0
                    for p in doc["pairs"]
                ],
                [
                    p["share_a"]["hi"] - p["share_a"]["mean"] if p["share_a"]["hi"] is not None else 0
                    for p in doc["pairs"]
                ],
            ]
        )
        ax.errorbar(x, sa, yerr=err, fmt="none", ecolor="black", capsize=4, lw=1)
        for i, p in enumerate(doc["pairs"]):
            if sa[i] == sa[i]:  # name each part that is tall enough to hold it
                if sa[i] > 0.08:
                    ax.text(i, sa[i] / 2, p["a"], ha="center", va="center", fontsize="small", color="white")
                if sb[i] > 0.08:
                    ax.text(i, sa[i] + sb[i] / 2, p["b"], ha="center", va="center", fontsize="small", color="white")
        ax.axhline(0.5, color="0.3", lw=0.8, ls="--")
        ax.set_xticks(x, names, fontsize="small")
        ax.set_ylim(0, 1)
        ax.set_ylabel("share of the pair's goodput")
        ax.set_title(
            f"Pairs sharing the bottleneck: mean share, {doc['confidence']:.0%} t interval of the lower part",
            fontsize="medium",
            loc="left",
        )
        figs["pairs"] = fig
    return figs


def write_report(cmp: Comparison, results: Any) -> Path:
    """DIR/report.html: report.py's header, our tables and figures, the runs; no scripts."""
    from . import plots
    from .report import Section, render_html
    from .report.build import header_section, runs_section

    doc = cmp.doc
    t = plots.tables(results)  # the planned runs of both stores; t.meta describes the comparison
    runs = t.runs
    figs = make_figures(doc)
    sections = [
        header_section(cmp.out, t.meta, t),
        Section(
            "Alone on the bottleneck",
            paragraphs=_intro(doc),
            tables=[("Each algorithm alone: mean [95 % t interval] over the repeats", pd.DataFrame(alone_rows(doc)))],
            figures=[("Goodput and p95 RTT of each algorithm alone, 95 % t intervals", figs["alone"])],
        ),
    ]
    if doc["pairs"]:
        sections.append(
            Section(
                "Pairs sharing the bottleneck",
                paragraphs=[
                    "One flow of each algorithm; the share is the flow's fraction of the pair's goodput "
                    "(the two shares of a run sum to 1). Jain's index of the two goodputs: 1 is an even "
                    "split, 0.5 one flow takes everything. The verdict says which side takes more when "
                    "the share's interval excludes 0.5."
                ],
                tables=[("Shares and Jain's index: mean [95 % t interval]", pd.DataFrame(pair_rows(doc)))],
                figures=[
                    ("Share of each algorithm in each pair (stacked), 95 % t interval of the lower part", figs["pairs"])
                ],
            )
        )
    sections.append(
        Section(
            "Significance",
            paragraphs=[
                f"{'Welch t' if doc['test'] == 'welch' else 'Mann-Whitney U'} test for every pair of "
                f"algorithms on the alone runs' goodput and p95 RTT; the p values of each metric's pairwise "
                f"tests are adjusted with Holm's step-down method; a difference is significant when the "
                f"adjusted p is below {doc['alpha']}. 'A > B' means A's mean is the larger."
            ],
            tables=[("Pairwise tests", pd.DataFrame(test_rows(doc)))],
        )
    )
    sections.append(runs_section(t))
    html = render_html(
        f"ccbench compare: {doc['scenario']}",
        f"{', '.join(doc['algorithms'])} on the {doc['backend']} backend, {len(runs)} runs",
        sections,
    )
    path = cmp.out / "report.html"
    _atomic_write(path, html)
    return path
