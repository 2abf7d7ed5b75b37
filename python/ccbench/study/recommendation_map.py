"""The recommendation-map study's report section: per goal, which algorithm wins each cell of
the grid and by how much, decided by the rule ``ccbench recommend`` uses (recommend.map_table)."""

from __future__ import annotations

from ..recommend.algorithms import NAMES
from ..recommend.decision import ALPHA, MARGIN
from ..recommend.map import map_table

_COLOURS = {
    NAMES["bbr"]: "#cfe3ff",
    NAMES["cubic"]: "#ffe1c4",
    NAMES["reno"]: "#e4d7f5",
    NAMES["vegas"]: "#d3f0d3",
    "tie": "#eeeeee",
}


def _map_html(table, goal: str) -> str:
    """Per buffer: a grid with rows (RTT, jitter/RTT) and columns loss, each cell the winner and
    its margin, coloured by the winner."""
    import html as H

    if table.empty:
        return ""
    out = [f"<h3>goal {H.escape(goal)}</h3>"]
    losses = sorted(table["loss %"].dropna().unique())
    per_cc = [c for c in table.columns if c in NAMES.values() or c in NAMES]
    for buf in sorted(table["buffer BDP"].dropna().unique()):
        sub = table[table["buffer BDP"] == buf]
        out.append(
            f"<table><caption>goal {H.escape(goal)}, buffer {buf:g} BDP: winner (runner-up, "
            f"by how much on the goal score); grey = tie (not separated)</caption><tr><th>RTT ms</th>"
            f"<th>jitter/RTT</th>" + "".join(f"<th>loss {x:g} %</th>" for x in losses) + "</tr>"
        )
        for (rtt, jr), g in sub.groupby(["RTT ms", "jitter/RTT"], sort=True):
            out.append(f"<tr><td>{rtt:g}</td><td>{jr:.2g}</td>")
            for x in losses:
                c = g[g["loss %"] == x]
                if c.empty:
                    out.append("<td></td>")
                    continue
                r = c.iloc[0]
                by = r["by %"]
                if r["winner"] == "tie":
                    who = f"tie {r['tied']}" if r["tied"].count("/") + 1 < len(per_cc) else "tie"
                    txt = (
                        f"{who} (within 5 %)"
                        if by is None or not (by >= MARGIN * 100)
                        else f"{who} ({r['leader']} ahead by {by:.0f} %, not significant)"
                    )
                elif not r["runner-up"]:
                    txt = f"{r['winner']} (the only one with half the best goodput)"
                else:
                    txt = f"{r['winner']} +{by:.0f} % vs {r['runner-up']}"
                out.append(f'<td style="background:{_COLOURS.get(r["winner"], "#fff")}">{H.escape(txt)}</td>')
            out.append("</tr>")
        out.append("</table>")
    return "\n".join(out)


def map_section(study, datas):
    """report section 'recommendation_map' (study.py ANALYSES): per goal, which algorithm wins
    each cell and by how much; cells whose leader is not separated are ties."""
    import pandas as pd

    from ..report.section import Section

    parts = {d.part.name: d for d in datas if not d.empty}
    tables, html = [], []
    goal_parts = [("throughput", "alone"), ("latency", "alone"), ("balanced", "alone"), ("fairness", "vs-cubic")]
    summary = []
    for goal, pname in goal_parts:
        d = parts.get(pname)
        if d is None:
            continue
        t = map_table(d.flows, goal)
        if t.empty:
            continue
        counts = t["winner"].value_counts().to_dict()
        summary.append(
            {
                "goal": goal,
                "part": pname,
                "cells": len(t),
                **{k: int(counts.get(k, 0)) for k in [NAMES[c] for c in ("bbr", "cubic", "reno", "vegas")] + ["tie"]},
            }
        )
        html.append(_map_html(t, goal))
        tables.append(
            (
                f"goal {goal} ({pname}): winner per cell, runner-up, relative difference of the goal "
                f"score, Welch p (Bonferroni over the rivals), mean score per algorithm",
                t,
            )
        )
    paragraphs = [
        "For each goal, each cell of the grid is decided by the rule ccbench recommend uses (one look): "
        f"the leader wins when Welch's interval for its difference to the runner-up excludes 0 at level "
        f"{ALPHA:g}/(k-1) and the difference is at least {MARGIN * 100:g} % of the score; otherwise the cell "
        "is a tie (grey). Scores: throughput = goodput (Mbit/s); latency = minus the p95 RTT (ms) among "
        "algorithms with at least half the best goodput; balanced = utilisation / (p95 RTT / base RTT); "
        "fairness = Jain's index of the candidate flow and one competing CUBIC flow (part vs-cubic).",
        "The map's runs use a wired drop-tail bottleneck with Bernoulli loss and uniform per-packet jitter "
        "(BBR is BBR v1); recommend itself also takes AQMs, Wi-Fi hops and delivery traces (docs/recommend.md).",
    ]
    if summary:
        tables.insert(0, ("cells won per goal", pd.DataFrame(summary)))
    return Section("Recommendation map", paragraphs, tables, [], "\n".join(html) or None)
