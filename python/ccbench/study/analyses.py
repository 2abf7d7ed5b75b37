"""The study's own report sections (``[study] analyses``): one function per kind of section,
registered in ANALYSES, each given the study and its parts' data."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from .data import PartData, match_cell
from .published import (
    Measured,
    group_aggregate,
    group_periodicity,
    measured_ci,
    per_run,
    published_section,
    ratio_lo,
    round_sig,
    section,
)
from .recommendation_map import map_section
from .spec import GOODPUT_UNITS, Study, StudyError, cell_text, find_study, load_study


def _ci_cols(m: Measured, scale: float = 1.0, digits: int = 4) -> dict:
    f = lambda v: None if v is None else round_sig(v * scale, digits)  # noqa: E731
    return {"mean": f(m.mean), "95% lo": f(m.lo), "95% hi": f(m.hi), "n": m.n}


def _cells(data: PartData, exclude_cc: bool = True) -> list[dict]:
    """The grid cells of a part present in the data (cc axes excluded), in grid order."""
    from ..sweeps.grid import Grid

    axes = {k: v for k, v in data.part.axes(_is_quick(data)).items() if not (exclude_cc and k.endswith(".cc"))}
    return Grid.from_table(axes).cells() if axes else [{}]


def _is_quick(data: PartData) -> bool:
    return bool(data.meta.get("quick"))


def _cell_ccs(data: PartData):
    """Every (grid cell, cc) pair of a part, cells in grid order, algorithms in _ccs order."""
    for cell in _cells(data):
        for cc in _ccs(data):
            yield cell, cc


def _ccs(data: PartData) -> list[str]:
    if "cc" not in data.flows.columns:
        return []
    order = {"cubic": 0, "bbr": 1, "vegas": 2, "reno": 3}
    return sorted(data.flows["cc"].astype(str).unique(), key=lambda c: (order.get(c, 9), c))


def _cell_cols(cell: Mapping[str, Any]) -> dict:
    return {k: cell_text(v) for k, v in cell.items()}


def _goodput_scale(study: Study) -> float:
    return GOODPUT_UNITS[study.unit]


def analysis_goodput(study: Study, datas: list[PartData]):
    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        rows = []
        for cell, cc in _cell_ccs(d):
            m = measured_ci(per_run(d, {**cell, "cc": cc}))
            if m.n:
                rows.append({**_cell_cols(cell), "cc": cc, **_ci_cols(m, scale)})
        if rows:
            tables.append(
                (
                    f"{d.part.name}: goodput per flow ({study.unit}), mean of repeats with "
                    f"the 95 % t interval (cut at 0)",
                    pd.DataFrame(rows),
                )
            )
    return section(
        "Goodput", ["One value per run (the mean over the run's flows of that algorithm); n runs per cell."], tables
    )


def analysis_ratio(study: Study, datas: list[PartData]):
    from .. import analysis

    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        if not {"bbr", "cubic"} <= set(_ccs(d)):
            continue
        rows = []
        for cell in _cells(d):
            a = per_run(d, {**cell, "cc": "bbr"})
            b = per_run(d, {**cell, "cc": "cubic"})
            if a.empty or b.empty:
                continue
            r = analysis.ratio_ci(a.to_numpy(), b.to_numpy())
            w = analysis.welch_test(a.to_numpy(), b.to_numpy())
            rows.append(
                {
                    **_cell_cols(cell),
                    f"CUBIC {study.unit}": round_sig(b.mean() * scale, 4),
                    f"BBR {study.unit}": round_sig(a.mean() * scale, 4),
                    "BBR/CUBIC": round_sig(r.ratio),
                    "95% lo": round_sig(ratio_lo(r.lo)),
                    "95% hi": round_sig(r.hi),
                    "Welch p": round_sig(w.p_value, 2),
                    "winner": _winner(r, w),
                }
            )
        if rows:
            tables.append(
                (
                    f"{d.part.name}: BBR/CUBIC goodput ratio ({'Fieller'} interval) and Welch's t test",
                    pd.DataFrame(rows),
                )
            )
    return section(
        "BBR / CUBIC ratio",
        [
            "winner: BBR or CUBIC when Welch's test gives p < 0.05, the ratio's 95 % interval "
            "excludes 1 and the means differ by at least 5 %; otherwise tie."
        ],
        tables,
    )


#: a difference in mean goodput smaller than this is called a tie even when it is significant
PRACTICAL_DIFFERENCE = 0.05


def _winner(r, w) -> str:
    if r.ratio is None or w.p_value is None or not np.isfinite(w.p_value):
        return "tie" if r.ratio is not None else "?"
    if abs(r.ratio - 1) < PRACTICAL_DIFFERENCE:
        return "tie"
    if w.p_value < 0.05:
        if r.lo is not None and r.lo > 1:
            return "BBR"
        if r.hi is not None and np.isfinite(r.hi) and r.hi < 1:
            return "CUBIC"
    return "tie"


def analysis_variability(study: Study, datas: list[PartData]):
    from .. import analysis

    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        rows = []
        for cell, cc in _cell_ccs(d):
            v = per_run(d, {**cell, "cc": cc}).to_numpy()
            if v.size == 0:
                continue
            cv = analysis.coefficient_of_variation(v)
            bi = analysis.bimodality(v)
            means = getattr(bi, "means", None)
            rows.append(
                {
                    **_cell_cols(cell),
                    "cc": cc,
                    "n": int(v.size),
                    "mean": round_sig(float(np.mean(v)) * scale, 4),
                    "CV %": round_sig(cv * 100 if cv is not None else None, 3),
                    "bimodal": {True: "yes", False: "no"}.get(bi.bimodal, "n too small"),
                    "mode means": (" / ".join(f"{x * scale:.4g}" for x in means) if means and bi.bimodal else ""),
                    "ΔBIC": round_sig(getattr(bi, "delta_bic", None), 3),
                }
            )
        if rows:
            tables.append(
                (
                    f"{d.part.name}: run-to-run variability of goodput ({study.unit}); "
                    f"bimodality from analysis.bimodality (two-Gaussian mixture vs one, BIC)",
                    pd.DataFrame(rows),
                )
            )
    return section(
        "Variability and bimodality",
        [
            "CV is the sample standard deviation of per-run goodput over its mean, across the repeats of "
            "a cell. The seed calls CUBIC's results in the chaos zone bimodal ('bifurcation')."
        ],
        tables,
    )


def analysis_recommendation(study: Study, datas: list[PartData]):
    from .. import analysis

    classes = [
        ("low (< 16 %)", lambda r: r < 0.16 - 1e-9),
        ("chaos zone (16-24 %)", lambda r: 0.16 - 1e-9 <= r <= 0.24 + 1e-9),
        ("high (> 24 %)", lambda r: r > 0.24 + 1e-9),
    ]
    seed_says = {
        "low (< 16 %)": "Either works (~1.0x)",
        "chaos zone (16-24 %)": "Test both (variable)",
        "high (> 24 %)": "BBR (1.9-3.9x)",
    }
    per = []
    for d in datas:
        f = d.flows
        if f.empty or not {"jitter_ms", "base_rtt_ms", "cc"} <= set(f.columns):
            continue
        g = (
            f.groupby(["run_id", "cc"])
            .agg(goodput=("goodput_bps", "mean"), jitter=("jitter_ms", "first"), rtt=("base_rtt_ms", "first"))
            .reset_index()
        )
        per.append(g)
    if not per:
        return section("Recommendation by jitter/RTT", ["no runs with jitter"])
    g = pd.concat(per, ignore_index=True)
    g["ratio"] = g["jitter"].astype(float) / g["rtt"].astype(float)
    rows = []
    for label, test in classes:
        sub = g[g["ratio"].map(test)]
        a = sub[sub["cc"] == "bbr"]["goodput"].to_numpy()
        b = sub[sub["cc"] == "cubic"]["goodput"].to_numpy()
        if a.size == 0 or b.size == 0:
            rows.append(
                {
                    "jitter/RTT": label,
                    "cells": "",
                    "runs": 0,
                    "ours": "not in this grid",
                    "BBR/CUBIC": None,
                    "95% lo": None,
                    "95% hi": None,
                    "Welch p": None,
                    "seed says": seed_says[label],
                }
            )
            continue
        r = analysis.ratio_ci(a, b)
        w = analysis.welch_test(a, b)
        win = _winner(r, w)
        cells = sorted({f"{j:g}/{t:g} ms" for j, t in zip(sub["jitter"], sub["rtt"])})
        rows.append(
            {
                "jitter/RTT": label,
                "cells": ", ".join(cells),
                "runs": int(len(sub)),
                "ours": {"tie": "either (no significant difference)"}.get(win, win),
                "BBR/CUBIC": round_sig(r.ratio),
                "95% lo": round_sig(ratio_lo(r.lo)),
                "95% hi": round_sig(r.hi),
                "Welch p": round_sig(w.p_value, 2),
                "seed says": seed_says[label],
            }
        )
    return section(
        "Recommendation by jitter/RTT ratio (from our data)",
        [
            "Runs pooled by the ratio of the jitter (± amplitude) to the base RTT, as the seed's table; "
            "a class is won when Welch's test gives p < 0.05, the ratio's interval excludes 1 and the "
            "means differ by at least 5 %."
        ],
        [("Which algorithm wins, by jitter/RTT", pd.DataFrame(rows))],
    )


def _figure(kind: str, data: PartData, caption: str, figures: list, problems: list, **kw) -> None:
    try:
        from .. import plots

        figures.append((caption, plots.make(data, kind, **kw)))
    except Exception as e:  # noqa: BLE001 - a figure that cannot be drawn is reported, not fatal
        problems.append(f"figure {kind} ({caption}) not drawn: {e}")


def analysis_goodput_figure(study: Study, datas: list[PartData]):
    figures, problems = [], []
    for d in datas:
        axes = d.part.axes()
        x = "loss" if any(k.endswith("loss") for k in axes) else "jitter"
        _figure(f"goodput-vs-{x}", d, f"{d.part.name}: goodput vs {x}", figures, problems)
        if {"bbr", "cubic"} <= set(_ccs(d)):
            _figure("ratio", d, f"{d.part.name}: BBR/CUBIC ratio vs {x}", figures, problems)
    return section("Figures", problems, figures=figures)


def _time_figures(kind: str, label: str, study: Study, datas: list[PartData]):
    figures, problems = [], []
    for d in datas:
        loss_key = next((k for k in d.part.axes() if k.endswith("loss")), None)
        base = {loss_key: d.part.axes()[loss_key][0]} if loss_key else {}
        cc_key = next((k for k in d.part.axes() if k.endswith(".cc")), None)
        if cc_key:
            for cc in d.part.axes()[cc_key]:
                _figure(
                    kind,
                    d,
                    f"{d.part.name}: {label}, {cc}" + (f", {loss_key}={cell_text(base[loss_key])}" if base else ""),
                    figures,
                    problems,
                    where={**base, cc_key: cc, "repeat": 0},
                )
        else:
            _figure(
                kind,
                d,
                f"{d.part.name}: {label}" + (f", {loss_key}={cell_text(base[loss_key])}" if base else ""),
                figures,
                problems,
                where={**base, "repeat": 0},
            )
    return section(f"{label[:1].upper()}{label[1:]} over time", problems, figures=figures)


def analysis_rtt_time(study, datas):
    return _time_figures("rtt-time", "RTT", study, datas)


def analysis_cwnd_time(study, datas):
    return _time_figures("cwnd-time", "congestion window", study, datas)


def analysis_throughput(study: Study, datas: list[PartData]):
    """Seed 001's table: CUBIC, BBR and BBR's improvement by loss, published beside ours."""
    scale = _goodput_scale(study)
    pub = {
        (r.part, cell_text(r.cell.get("bottleneck.loss", "")), r.cell.get("cc")): r.value
        for r in study.published
        if r.metric == "goodput"
    }
    tables = []
    for d in datas:
        loss_key = next((k for k in d.part.axes() if k.endswith("loss")), None)
        if loss_key is None:
            continue
        rows = []
        for loss in d.part.axes(_is_quick(d))[loss_key]:
            cell = {loss_key: loss}
            c = per_run(d, {**cell, "cc": "cubic"})
            b = per_run(d, {**cell, "cc": "bbr"})
            if c.empty and b.empty:
                continue
            cm, bm = c.mean() * scale, b.mean() * scale
            pc, pb = pub.get((d.part.name, cell_text(loss), "cubic")), pub.get((d.part.name, cell_text(loss), "bbr"))
            rows.append(
                {
                    "loss": cell_text(loss),
                    "CUBIC ours": round_sig(cm, 3),
                    "CUBIC seed": pc,
                    "BBR ours": round_sig(bm, 3),
                    "BBR seed": pb,
                    "BBR improvement ours %": round_sig((bm / cm - 1) * 100, 3) if cm else None,
                    "BBR improvement seed %": round_sig((pb / pc - 1) * 100, 3) if pc and pb else None,
                }
            )
        if rows:
            what = (
                "alone on the link"
                if len(d.part.scenario_raw.get("flows", [])) == 1
                else "competing in the same run (per-flow goodput)"
            )
            tables.append((f"{d.part.name}: throughput ({study.unit}) by random loss, {what}", pd.DataFrame(rows)))
    return section("Throughput vs loss", ["BBR improvement = BBR / CUBIC - 1, as in the seed's table."], tables)


def analysis_delay(study: Study, datas: list[PartData]):
    tables = []
    for d in datas:
        rows = []
        for cell, cc in _cell_ccs(d):
            m = measured_ci(per_run(d, {**cell, "cc": cc}, "rtt_mean_ms"))
            p = measured_ci(per_run(d, {**cell, "cc": cc}, "rtt_p95_ms"))
            if m.n:
                rows.append(
                    {
                        **_cell_cols(cell),
                        "cc": cc,
                        "RTT mean ms": round_sig(m.mean),
                        "95% lo": round_sig(m.lo),
                        "95% hi": round_sig(m.hi),
                        "RTT p95 ms": round_sig(p.mean),
                        "n": m.n,
                    }
                )
        if rows:
            tables.append((f"{d.part.name}: average delay (flow RTT)", pd.DataFrame(rows)))
    return section("Average delay", [], tables)


def analysis_fairness(study: Study, datas: list[PartData]):
    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        if d.runs.empty or d.flows["run_id"].value_counts().max() < 2:
            continue
        rows = []
        for cell in _cells(d):
            runs = match_cell(d.runs, cell, with_cc=False)
            if runs.empty:
                continue
            j = measured_ci(runs["jain_index"].astype(float), high=1.0)
            row = {
                **_cell_cols(cell),
                "Jain mean": round_sig(j.mean),
                "95% lo": round_sig(j.lo),
                "95% hi": round_sig(j.hi),
                "n": j.n,
            }
            for cc in _ccs(d):
                row[f"{cc} {study.unit}"] = round_sig(per_run(d, {**cell, "cc": cc}).mean() * scale, 3)
            rows.append(row)
        if rows:
            tables.append(
                (
                    f"{d.part.name}: Jain's index over the flows of each run, and each algorithm's goodput",
                    pd.DataFrame(rows),
                )
            )
    return section(
        "Fairness",
        [
            "Jain's index of n flows lies between 1/n (one flow takes everything) and 1 (equal shares); "
            "for 1 CUBIC + 1 BBR it is 0.5 to 1. The seed gives 0.51 for CUBIC and 0.46 for BBR without "
            "describing the fairness setup (0.46 is below the two-flow minimum, so its runs had more "
            "flows or it averaged something else); both published values sit beside our one index."
        ],
        tables,
    )


def analysis_latency(study: Study, datas: list[PartData]):
    scale = _goodput_scale(study)
    tables = []
    for d in datas:
        rows = []
        for cell, cc in _cell_ccs(d):
            fcell = {**cell, "cc": cc}
            tot = per_run(d, fcell, how="sum")
            if tot.empty:
                continue
            runs = d.runs[d.runs["run_id"].isin(set(tot.index))]
            g = measured_ci(tot)
            p50 = measured_ci(runs["probe_rtt_p50_ms"].astype(float)) if "probe_rtt_p50_ms" in runs else Measured(None)
            p95 = measured_ci(runs["probe_rtt_p95_ms"].astype(float)) if "probe_rtt_p95_ms" in runs else Measured(None)
            rtt = measured_ci(per_run(d, fcell, "rtt_mean_ms"))
            rows.append(
                {
                    **_cell_cols(cell),
                    "cc": cc,
                    f"total goodput {study.unit}": round_sig(g.mean * scale, 4),
                    "95% lo": round_sig(g.lo * scale if g.lo is not None else None, 4),
                    "95% hi": round_sig(g.hi * scale if g.hi is not None else None, 4),
                    "ping p50 ms": round_sig(p50.mean),
                    "ping p95 ms": round_sig(p95.mean),
                    "flow RTT mean ms": round_sig(rtt.mean),
                    "n": g.n,
                }
            )
        if rows:
            tables.append(
                (f"{d.part.name}: goodput and latency under load (ping during the transfer)", pd.DataFrame(rows))
            )
    figures, problems = [], []
    for d in datas:
        _figure("probe-cdf", d, f"{d.part.name}: CDF of the ping RTT during the transfer", figures, problems)
    return section(
        "Goodput and latency under load",
        ["ping p50/p95: percentiles of the latency probe's RTT during the transfer, mean over runs.", *problems],
        tables,
        figures,
    )


def analysis_wifi(study: Study, datas: list[PartData]):
    """The Wi-Fi hop per cell: A-MPDU sizes, airtime shares, collisions and retry drops (the
    runs table's wifi_* columns, docs/results.md; parts on a wire are left out)."""
    cols = {
        "A-MPDU mean": "wifi_ampdu_mean_fwd",
        "A-MPDU p50": "wifi_ampdu_p50_fwd",
        "A-MPDU p90": "wifi_ampdu_p90_fwd",
        "ACK A-MPDU mean": "wifi_ampdu_mean_rev",
        "airtime data": "wifi_airtime_fwd",
        "airtime ACKs": "wifi_airtime_rev",
        "collisions": "wifi_collisions",
        "retry drops": "wifi_retry_drops",
    }
    tables = []
    for d in datas:
        if d.runs.empty or "wifi_ampdu_mean_fwd" not in d.runs or d.runs["wifi_ampdu_mean_fwd"].isna().all():
            continue
        rows = []
        for cell, cc in _cell_ccs(d):
            tot = per_run(d, {**cell, "cc": cc}, how="sum")
            if tot.empty:
                continue
            runs = d.runs[d.runs["run_id"].isin(set(tot.index))]
            row = {**_cell_cols(cell), "cc": cc}
            for name, col in cols.items():
                row[name] = round_sig(runs[col].astype(float).mean(), 3)
            row["n"] = len(runs)
            rows.append(row)
        if rows:
            tables.append(
                (
                    f"{d.part.name}: the Wi-Fi hop (data station; MPDUs per A-MPDU, share of "
                    "the run's airtime), mean over runs",
                    pd.DataFrame(rows),
                )
            )
    return section(
        "The Wi-Fi hop: aggregation and airtime",
        [
            "A-MPDU: MPDUs per transmission of the data station (mean, median, 90th percentile over its "
            "transmissions); ACK A-MPDU: the same for the receiver-side station; airtime: the share of "
            "the run each station's transmissions (PPDU and block-ack) took; collisions: transmit "
            "opportunities in which both stations sent; retry drops: MPDUs lost after the retry limit."
        ],
        tables,
    )


def analysis_goodput_delay(study: Study, datas: list[PartData]):
    figures, problems = [], []
    for d in datas:
        _figure(
            "goodput-probe-delay",
            d,
            f"{d.part.name}: total goodput vs the ping's 95th percentile during the transfer, per combination",
            figures,
            problems,
        )
    return section(
        "Goodput vs latency under load",
        [
            "One point per combination: the mean over repeats of the run's total goodput and of its "
            "latency probe's 95th-percentile RTT, with 95 % t intervals; a panel per algorithm and "
            "number of flows.",
            *problems,
        ],
        figures=figures,
    )


def probe_rtt_rounds(data: PartData, run_id: str) -> list:
    """analysis.probe_rtt_rounds of one run of the part."""
    from .. import analysis

    s = data.series
    if s.empty:
        return []
    return analysis.probe_rtt_rounds(s[s["run_id"] == run_id])


def analysis_oscillation(study: Study, datas: list[PartData]):
    from .. import analysis

    scale = _goodput_scale(study)
    tables, paragraphs = [], []
    for d in datas:
        rows, summary = [], []
        ordered = d.runs.sort_values("repeat") if "repeat" in d.runs.columns else d.runs
        for rid in ordered["run_id"]:
            run_flows = d.flows[d.flows["run_id"] == rid]
            rrow = d.runs[d.runs["run_id"] == rid].iloc[0]
            rounds = probe_rtt_rounds(d, rid)
            for cc in _ccs(d):
                start, per = group_periodicity(d, rid, cc)
                gf = run_flows[run_flows["cc"] == cc]["goodput_bps"].to_numpy(dtype=float)
                step = (
                    analysis.level_change_at(*group_aggregate(d.series, rid, cc), [r.start_s for r in rounds])
                    if rounds
                    else None
                )
                rows.append(
                    {
                        "run": rid[:10],
                        "repeat": rrow.get("repeat"),
                        "group": cc,
                        f"group goodput {study.unit}": round_sig(gf.sum() * scale, 4),
                        "steady from s": round_sig(start, 3),
                        "period s": round_sig(getattr(per, "period_s", None), 3),
                        "strength": round_sig(getattr(per, "strength", None), 2),
                        "ACF at period": round_sig(getattr(per, "acf_at_period", None), 2),
                        "significant": getattr(per, "significant", None),
                        "step at ProbeRTT rounds ×": _exp_fmt(getattr(step, "at_events", None)),
                        "step midway ×": _exp_fmt(getattr(step, "midway", None)),
                        "Jain within group": round_sig(analysis.jain_index(gf), 3),
                    }
                )
            summary.append(
                {
                    "run": rid[:10],
                    "repeat": rrow.get("repeat"),
                    "BBR ProbeRTT rounds": len(rounds) if rounds else None,
                    "flows per round": round_sig(np.mean([r.n for r in rounds]), 2) if rounds else None,
                    "Jain all flows": round_sig(rrow.get("jain_index"), 3),
                    "Jain between groups": round_sig(rrow.get("jain_index_groups"), 3),
                    f"aggregate {study.unit}": round_sig(float(rrow.get("aggregate_goodput_bps") or 0) * scale, 4),
                }
            )
        if rows:
            tables.append(
                (
                    f"{d.part.name}: dominant period of each group's aggregate throughput "
                    f"(analysis.dominant_period after analysis.steady_state_start)",
                    pd.DataFrame(rows),
                )
            )
            tables.append(
                (f"{d.part.name}: Jain's index over all flows and between the two groups", pd.DataFrame(summary))
            )
    paragraphs.append(
        "strength is the share of the periodogram's power in the peak; a period is "
        "reported only when it is significant (Fisher's g test) and the autocorrelation "
        "at that lag supports it."
    )
    paragraphs.append(
        "BBR ProbeRTT rounds: the BBR flows' entries into ProbeRTT grouped into rounds "
        "(within 1 s, at least 3 flows). Step at ProbeRTT rounds: the factor by which "
        "the group's 4 s mean throughput changes across a round (median over rounds, "
        "analysis.level_change_at); step midway: the same midway between rounds, where "
        "only noise moves it. A step well above the midway one means BBR's 10 s "
        "ProbeRTT sets the group's rhythm, whether or not a period is significant."
    )
    return section("Oscillation and fairness", paragraphs, tables)


def _exp_fmt(log_change):
    return None if log_change is None else round_sig(float(np.exp(log_change)), 3)


def analysis_throughput_time(study: Study, datas: list[PartData]):
    figures, problems = [], []
    for d in datas:
        _figure(
            "throughput-time",
            d,
            f"{d.part.name}: per-flow throughput over time, one panel per algorithm (as the seed's figures 1 and 2)",
            figures,
            problems,
            where={"repeat": 0},
        )
        _figure(
            "periodogram",
            d,
            f"{d.part.name}: periodogram of each group's aggregate throughput",
            figures,
            problems,
            where={"repeat": 0},
        )
    return section("Throughput over time", problems, figures=figures)


ANALYSES: dict[str, Callable] = {
    "goodput": analysis_goodput,
    "ratio": analysis_ratio,
    "variability": analysis_variability,
    "recommendation": analysis_recommendation,
    "goodput_figure": analysis_goodput_figure,
    "throughput": analysis_throughput,
    "delay": analysis_delay,
    "fairness": analysis_fairness,
    "rtt_time": analysis_rtt_time,
    "cwnd_time": analysis_cwnd_time,
    "latency": analysis_latency,
    "goodput_delay": analysis_goodput_delay,
    "wifi": analysis_wifi,
    "oscillation": analysis_oscillation,
    "throughput_time": analysis_throughput_time,
    "recommendation_map": map_section,
}


def report_sections(study_name: str, results: Any) -> list:
    """The study's report sections (ccbench.report calls this when ccbench.json names a study).
    An analysis that fails becomes a section saying so, so the rest of the report is kept."""
    meta = getattr(results, "meta", None) or {}
    path = meta.get("scenario_file")
    try:
        study = find_study(study_name)
    except StudyError:
        if not path:
            raise
        study = load_study(path)
    datas = [PartData(results, p) for p in study.parts]
    sections = []
    for name, fn in [("published", None), *[(a, ANALYSES[a]) for a in study.analyses]]:
        try:
            sections.append(published_section(study, results) if fn is None else fn(study, datas))
        except Exception as e:  # noqa: BLE001
            sections.append(section(f"{name} (failed)", [f"analysis {name} failed: {type(e).__name__}: {e}"]))
    return sections
