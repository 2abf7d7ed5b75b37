"""The recommendation-map table: each grid cell of a study part decided by recommend's rule (the
study report draws it: ccbench.study.recommendation_map)."""

from __future__ import annotations

import numpy as np

from .. import analysis
from .algorithms import ORDER, cc_name
from .decision import ALPHA, MARGIN, sequential_decision
from .goals import eligible, goal_score


def _map_cells(flows, goal: str):
    """flows of one part -> per (cell key, cc) the per-run goal scores."""
    import pandas as pd

    f = flows.copy()
    if f.empty:
        return {}
    f["group"] = f["group"].fillna(0).astype(int) if "group" in f.columns else 0
    keycols = ["rtt_ms", "jitter_ms", "loss_pct", "buffer_bdp"]
    rows = []
    for _run_id, g in f.groupby("run_id"):
        mine = g[g["group"] == 0]
        other = g[g["group"] != 0]
        first = mine.iloc[0]
        total = float(g["goodput_bps"].fillna(0).sum())
        m = {
            "ok": True,
            "goodput_bps": float(mine["goodput_bps"].fillna(0).sum()),
            "p95_ms": float(mine["rtt_p95_ms"].mean()) if mine["rtt_p95_ms"].notna().any() else None,
            "rate_bps": float(first["rate_mbps"]) * 1e6,
            "base_rtt_ms": float(first["base_rtt_ms"]),
            "jain": None,
            "share": None,
        }
        if len(g) > 1:
            m["jain"] = analysis.jain_index(g["goodput_bps"].fillna(0).to_numpy())
        if len(other) and total > 0:
            m["share"] = m["goodput_bps"] / total
        key = tuple(round(float(first[c]), 6) if c in g.columns and pd.notna(first[c]) else None for c in keycols)
        rows.append((key, str(first["cc"]), goal_score(goal, m), m))
    cells: dict = {}
    for key, cc, s, m in rows:
        cells.setdefault(key, {}).setdefault(cc, []).append((s, m))
    return cells


def map_table(flows, goal: str, alpha: float = ALPHA, margin: float = MARGIN):
    """One row per grid cell: the winner (or tie), by how much, p, per-algorithm means."""
    import pandas as pd

    cells = _map_cells(flows, goal)
    rows = []
    for key, per in sorted(cells.items(), key=lambda kv: tuple(x if x is not None else -1 for x in kv[0])):
        rtt, jit, loss, buf = key
        cands = sorted(per, key=lambda c: (ORDER.get(c, 9), c))
        pe = eligible(goal, cands, lambda c, per=per: [m["goodput_bps"] for _, m in per[c]])
        d = sequential_decision(
            {c: [s for s, _ in per[c] if s is not None] for c in pe}, alpha=alpha, margin=margin, min_n=2, final=True
        )
        win = cc_name(d.leader) if d.outcome in ("winner", "single") else "tie"
        row = {
            "RTT ms": rtt,
            "jitter/RTT": round(jit / rtt, 3) if rtt else None,
            "loss %": loss,
            "buffer BDP": buf,
            "winner": win,
            "leader": cc_name(d.leader) if d.leader else "",
            "runner-up": cc_name(d.runner_up) if d.runner_up else "",
            "tied": (
                "/".join(cc_name(c) for c in sorted(d.tied, key=lambda c: (ORDER.get(c, 9), c)))
                if d.outcome != "winner"
                else ""
            ),
            "by %": round(d.rel_diff * 100, 1) if d.rel_diff is not None else None,
            "p": (float(f"{d.p_value:.2g}") if d.p_value is not None else None),
            "n": d.n,
        }
        for c in cands:
            v = [s for s, _ in per[c] if s is not None]
            row[cc_name(c)] = round(float(np.mean(v)), 4) if v else None
        rows.append(row)
    return pd.DataFrame(rows)
