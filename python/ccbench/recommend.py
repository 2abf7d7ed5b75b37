"""``ccbench recommend``: which congestion control for this link, with evidence and how sure.

The user's link figures are estimates, so every candidate algorithm runs over the stated link
*and* a neighbourhood of it (one figure varied at a time: rate ×0.8 / ×1.25, loss ×0.5 / ×2,
jitter ×0.5 / ×1.5; a figure that is 0 is not varied), with the same seeds for every candidate.
One *repeat* runs every candidate at every point once; a candidate's score in a repeat is the
mean of its goal metric over the points (each point weighs the same). Repeats are added in
batches until :func:`sequential_decision` separates the leader from the runner-up, shows them
equivalent (a tie), or the budget (wall time, maximum repeats) is spent.

Goals (the score, higher is better; docs/recommend.md):

* ``throughput``: goodput of the user's flows (Mbit/s);
* ``latency``: minus the p95 RTT the user's flows see (ms), among the candidates that get at
  least half the best goodput (an algorithm that hardly sends has a short queue);
* ``balanced``: utilisation / (p95 RTT / base RTT): 1 = the whole link with no queueing delay;
* ``fairness``: Jain's index over every flow's goodput (the user's and the competing ones).

The stopping rule is a pure function (:func:`sequential_decision`), tested on synthetic samples
(tests/test_recommend.py). The map study's report section (:func:`map_section`) uses the same
rule with a single look.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from .scenario import ScenarioError

__all__ = [
    "GOALS", "ALPHA", "MARGIN", "Link", "Point", "Decision", "Recommendation", "RecommendError",
    "sequential_decision", "neighbourhood", "recommend", "goal_score", "parse_competing",
    "link_from_options", "map_section", "JSON_SCHEMA", "SCHEMA_VERSION",
]

GOALS = ("throughput", "latency", "balanced", "fairness")
GOAL_TEXT = {
    "throughput": "throughput (goodput of your flows, higher is better)",
    "latency": "latency (p95 RTT under load, lower is better; candidates with less than half the best goodput are not eligible)",
    "balanced": "balanced (utilisation / (p95 RTT / base RTT), higher is better)",
    "fairness": "fairness (Jain's index over your flows and the competing ones, higher is better)",
}
#: overall error rate of declaring a winner when the leader and the runner-up are equal
ALPHA = 0.05
#: relative indifference margin: differences smaller than this are a tie
MARGIN = 0.05
#: the default neighbourhood: figure -> factors applied to the stated value
BAND = {"rate": (0.8, 1.25), "loss": (0.5, 2.0), "jitter": (0.5, 1.5)}
#: order of the candidates when nothing else decides (ties in the tables)
ORDER = {"cubic": 0, "bbr": 1, "reno": 2, "vegas": 3}
NAMES = {"cubic": "CUBIC", "bbr": "BBR", "reno": "Reno", "vegas": "Vegas"}
#: latency goal: a candidate below this fraction of the best goodput is not eligible
LATENCY_MIN_GOODPUT = 0.5


class RecommendError(ScenarioError):
    """Bad options for recommend (one line naming the option and what was expected)."""

    def __init__(self, key: str, problem: str, expected: Optional[str] = None):
        super().__init__(None, key, problem, expected)

    def __reduce__(self):
        return (RecommendError, (self.key, self.problem, self.expected))


def cc_name(cc: str) -> str:
    return NAMES.get(cc, cc)


# --------------------------------------------------------------------------------------------
# the sequential stopping rule


@dataclass
class Decision:
    """The state of the comparison between the leader and the runner-up after a look.

    outcome: ``winner`` (the leader is better by at least the margin and the interval of the
    difference excludes 0), ``tie`` (the interval lies inside ±margin), ``continue`` (neither
    yet), ``undecided`` (neither, and no more looks), ``single`` (one eligible candidate)."""

    outcome: str
    leader: Optional[str]
    runner_up: Optional[str]
    n: int = 0
    diff: Optional[float] = None          # mean(leader) - mean(runner-up), >= 0
    lo: Optional[float] = None            # interval of diff at level 1 - alpha_look
    hi: Optional[float] = None
    rel_diff: Optional[float] = None      # diff / max(|mean leader|, |mean runner-up|)
    p_value: Optional[float] = None       # Welch's two-sided p for leader vs runner-up
    alpha_look: Optional[float] = None    # Bonferroni level of this look
    margin: Optional[float] = None        # absolute indifference margin used
    ranking: list = field(default_factory=list)   # candidates by mean, best first
    tied: list = field(default_factory=list)      # the leader and every candidate not separated from it

    @property
    def done(self) -> bool:
        return self.outcome in ("winner", "tie", "single")


def sequential_decision(samples: Mapping[str, Sequence[float]], *, look: int = 1, max_looks: int = 1,
                        alpha: float = ALPHA, margin: float = MARGIN, min_n: int = 3,
                        final: bool = False) -> Decision:
    """One look of the sequential rule on per-repeat scores (higher is better).

    The leader (highest mean) is compared with the runner-up (second highest) by Welch's
    interval for the difference of means at level ``1 - alpha_look`` with
    ``alpha_look = alpha / (max_looks * (k - 1))`` (Bonferroni over the looks and over the
    leader's k - 1 possible rivals), so the chance of ever declaring a false winner is at most
    ``alpha``. With ``m = margin * max(|mean leader|, |mean runner-up|)``:

    * ``winner`` when the interval's lower end is > 0 and the difference is at least m;
    * ``tie`` when the whole interval lies inside (-m, m) (equivalence);
    * otherwise ``continue`` (``undecided`` when ``final``).

    Fewer than ``min_n`` values on either side: ``continue``. Constant samples (deterministic
    repeats) give a zero-width interval: the difference is then exact.
    """
    from . import analysis

    cands = {k: np.asarray([float(x) for x in v if x is not None and np.isfinite(x)], dtype=float)
             for k, v in samples.items()}
    cands = {k: v for k, v in cands.items() if v.size}
    ranking = sorted(cands, key=lambda k: (-float(np.mean(cands[k])), ORDER.get(k, 9), k))
    if len(ranking) < 2:
        return Decision("single" if ranking else "undecided", ranking[0] if ranking else None, None,
                        n=int(cands[ranking[0]].size) if ranking else 0, ranking=ranking)
    lead, second = ranking[0], ranking[1]
    a, b = cands[lead], cands[second]
    n = int(min(a.size, b.size))
    k = len(ranking)
    alpha_look = alpha / (max(1, max_looks) * (k - 1))
    ma, mb = float(np.mean(a)), float(np.mean(b))
    scale = max(abs(ma), abs(mb))
    m_abs = margin * scale
    d = Decision("continue", lead, second, n=n, diff=ma - mb, rel_diff=(ma - mb) / scale if scale > 0 else 0.0,
                 alpha_look=alpha_look, margin=m_abs, ranking=ranking)
    if n < max(2, min_n):
        d.outcome = "undecided" if final else "continue"
        return d
    w = analysis.welch_test(a, b, confidence=1.0 - alpha_look)
    d.p_value = w.p_value
    d.lo, d.hi = w.diff_lo, w.diff_hi
    if d.lo is None or d.hi is None:
        d.outcome = "undecided" if final else "continue"
        return d
    if d.lo > 0 and d.diff >= m_abs and d.diff > 0:
        d.outcome = "winner"
    elif -m_abs < d.lo and d.hi < m_abs:
        d.outcome = "tie"
    elif d.diff == 0 and d.lo == d.hi == 0:   # identical constant samples (margin 0)
        d.outcome = "tie"
    else:
        d.outcome = "undecided" if final else "continue"
    d.tied = [lead]
    if d.outcome != "winner":
        for c in ranking[1:]:
            x = cands[c]
            if x.size < 2:
                continue
            wc = analysis.welch_test(a, x, confidence=1.0 - alpha_look)
            diff = ma - float(np.mean(x))
            if not (wc.diff_lo is not None and wc.diff_lo > 0 and diff >= m_abs and diff > 0):
                d.tied.append(c)
    return d


# --------------------------------------------------------------------------------------------
# the link and its neighbourhood


@dataclass
class Link:
    rate_bps: float
    rtt_s: float
    loss: float = 0.0                 # fraction 0..1 (Bernoulli on data packets)
    jitter_s: float = 0.0             # ± amplitude, uniform, per packet (netem-style)
    buffer: str = "1bdp"
    aqm: str = "droptail"
    flows: int = 1
    competing: list = field(default_factory=list)   # [(cc, count)]
    duration_s: float = 15.0

    def buffer_bytes(self) -> Optional[int]:
        """The physical buffer of the stated link in bytes (kept when the rate is varied);
        None for a packet-count buffer (kept as packets)."""
        from . import units

        spec = units.parse_buffer(self.buffer)
        if spec.kind == "bdp":
            return max(1500, int(round(spec.value * self.rate_bps * self.rtt_s / 8)))
        if spec.kind == "bytes":
            return int(spec.value)
        return None

    def buffer_bdp(self) -> float:
        b = self.buffer_bytes()
        if b is None:
            from . import units

            b = units.parse_buffer(self.buffer).value * 1500
        return b / (self.rate_bps * self.rtt_s / 8)

    def describe(self) -> str:
        from . import units

        parts = [units.format_rate(self.rate_bps), f"RTT {units.format_time(self.rtt_s)}",
                 f"loss {self.loss * 100:g} %", f"jitter ±{units.format_time(self.jitter_s)}",
                 f"buffer {self.buffer} ({self.buffer_bdp():.3g} BDP)", self.aqm,
                 f"{self.flows} flow{'s' if self.flows != 1 else ''}"]
        if self.competing:
            parts.append("competing " + ", ".join(f"{n}× {cc_name(c)}" for c, n in self.competing))
        return ", ".join(parts)

    def as_dict(self) -> dict:
        return {"rate_bps": self.rate_bps, "rtt_ms": self.rtt_s * 1e3, "loss": self.loss,
                "jitter_ms": self.jitter_s * 1e3, "buffer": self.buffer, "buffer_bdp": self.buffer_bdp(),
                "aqm": self.aqm, "flows": self.flows,
                "competing": [{"cc": c, "count": n} for c, n in self.competing],
                "duration_s": self.duration_s}


@dataclass
class Point:
    """One link variant: the stated link or a neighbour (one figure scaled by ``factor``)."""

    label: str
    axis: Optional[str]               # None for the stated link; rate | loss | jitter
    factor: float
    rate_bps: float
    loss: float
    jitter_s: float

    def value(self, axis: Optional[str] = None) -> float:
        """The point's value of ``axis`` (default: the axis it varies)."""
        return {"rate": self.rate_bps, "loss": self.loss, "jitter": self.jitter_s}.get(axis or self.axis, 0.0)

    def as_dict(self) -> dict:
        return {"label": self.label, "axis": self.axis, "factor": self.factor, "rate_bps": self.rate_bps,
                "loss": self.loss, "jitter_ms": self.jitter_s * 1e3}


def _point(link: Link, axis: Optional[str], factor: float) -> Point:
    from . import units

    rate, loss, jit = link.rate_bps, link.loss, link.jitter_s
    if axis == "rate":
        rate = rate * factor
        label = f"rate {units.format_rate(round(rate))}"
    elif axis == "loss":
        loss = min(0.5, loss * factor)
        label = f"loss {loss * 100:.3g} %"
    elif axis == "jitter":
        jit = jit * factor
        label = f"jitter ±{jit * 1e3:.3g} ms"
    else:
        label = "stated link"
    return Point(label, axis, factor, rate, loss, jit)


def neighbourhood(link: Link, band: Mapping[str, Sequence[float]] | None = None) -> list[Point]:
    """The stated link, then one point per (figure, factor) of ``band`` whose stated value is
    not 0 (a loss-free or jitter-free link stays so: a 0 cannot be scaled)."""
    band = BAND if band is None else band
    pts = [_point(link, None, 1.0)]
    stated = {"rate": link.rate_bps, "loss": link.loss, "jitter": link.jitter_s}
    for axis, factors in band.items():
        if not stated.get(axis):
            continue
        for f in factors:
            if f != 1.0:
                pts.append(_point(link, axis, float(f)))
    return pts


def scenario_dict(link: Link, point: Point, cc: str, seed: int) -> dict:
    """The TOML-shaped scenario of one candidate at one point."""
    bb: dict[str, Any] = {"rate": f"{int(round(point.rate_bps))}bit", "rtt": f"{link.rtt_s * 1e9:.0f}ns",
                          "aqm": link.aqm}
    if point.loss > 0:
        bb["loss"] = f"{point.loss * 100:.6g}%"
    if point.jitter_s > 0:
        bb["jitter"] = f"{point.jitter_s * 1e9:.0f}ns"
    b = link.buffer_bytes()
    bb["buffer"] = f"{b}B" if b is not None else link.buffer
    flows = [{"cc": cc, "count": link.flows}] + [{"cc": c, "count": n} for c, n in link.competing]
    return {"name": "recommend", "duration": f"{link.duration_s:g}s", "seed": int(seed),
            "bottleneck": bb, "flows": flows}


# --------------------------------------------------------------------------------------------
# one run -> its metrics


def run_metrics(raw: Mapping[str, Any], backend: str = "sim") -> dict:
    """Run one scenario and reduce it to the numbers recommend needs (picklable, for workers).
    Group 0 is the user's flows, the other groups the competing traffic."""
    from . import backends
    from .scenario import Scenario

    sc = Scenario.from_dict(raw, source="recommend")
    t0 = time.perf_counter()
    res = backends.run(sc, backend)
    wall = time.perf_counter() - t0
    if not res.ok:
        return {"ok": False, "error": str(res.error), "wall_s": wall}
    rows = res.flows_table.to_pylist()
    mine = [r for r in rows if int(r.get("group") or 0) == 0]
    other = [r for r in rows if int(r.get("group") or 0) != 0]
    gp = lambda rs: float(sum((r.get("goodput_bps") or 0.0) for r in rs))  # noqa: E731
    p95s = [r["rtt_p95_ms"] for r in mine if r.get("rtt_p95_ms") is not None]
    rets = sum(int(r.get("retransmits") or 0) for r in mine)
    all_gp = [float(r.get("goodput_bps") or 0.0) for r in rows]
    from . import analysis

    total = gp(rows)
    return {
        "ok": True, "wall_s": wall,
        "goodput_bps": gp(mine), "competing_bps": gp(other),
        "p95_ms": float(np.mean(p95s)) if p95s else None,
        "share": gp(mine) / total if other and total > 0 else None,
        "jain": analysis.jain_index(all_gp) if len(all_gp) > 1 else None,
        "retransmits": rets,
        "base_rtt_ms": sc.base_rtt_s * 1e3,
        "rate_bps": float(sc.bottleneck.rate_bps),
    }


def goal_score(goal: str, m: Mapping[str, Any]) -> Optional[float]:
    """The goal metric of one run, oriented so that higher is better."""
    if not m.get("ok"):
        return None
    if goal == "throughput":
        return m["goodput_bps"] / 1e6
    if goal == "latency":
        return -m["p95_ms"] if m.get("p95_ms") is not None else None
    if goal == "balanced":
        if not m.get("p95_ms"):
            return None
        return (m["goodput_bps"] / m["rate_bps"]) / (m["p95_ms"] / m["base_rtt_ms"])
    if goal == "fairness":
        return m.get("jain")
    raise ValueError(f"unknown goal {goal!r}")


# --------------------------------------------------------------------------------------------
# running batches


class _Runner:
    """Runs lists of scenarios in-process or on local worker processes (sweep's executor)."""

    def __init__(self, backend: str, workers: int):
        self.backend = backend
        self.workers = max(1, workers)
        self._ex = None
        self.runs = 0

    def run(self, raws: list[dict]) -> list[dict]:
        self.runs += len(raws)
        if self.workers == 1 or len(raws) < 4:
            return [run_metrics(r, self.backend) for r in raws]
        if self._ex is None:
            from .sweep import _LocalExecutor

            self._ex = _LocalExecutor(self.workers)
        futs = [self._ex.submit(run_metrics, r, self.backend) for r in raws]
        return [f.result() for f in futs]

    def close(self):
        if self._ex is not None:
            self._ex.close()
            self._ex = None


# --------------------------------------------------------------------------------------------
# the recommendation


@dataclass
class Recommendation:
    goal: str
    link: Link
    backend: str
    candidates: list[str]
    points: list[Point]
    metrics: dict            # metrics[point_index][cc] -> list of per-repeat dicts
    decision: Decision
    repeats: int
    point_decisions: list[Decision]
    boundaries: list[dict]
    wall_s: float
    runs: int
    budget_s: float
    eligible: list[str]
    notes: list[str] = field(default_factory=list)
    kernel: Optional[dict] = None
    stop_reason: str = ""

    # ---- per-candidate evidence ----

    def pooled(self, cc: str, key: str) -> list[float]:
        """Per repeat: the mean of metric ``key`` over the points (None where any is missing)."""
        out = []
        for r in range(self.repeats):
            vals = [self.metrics[i][cc][r].get(key) if r < len(self.metrics[i][cc]) else None
                    for i in range(len(self.points))]
            vals = [v for v in vals if v is not None]
            if len(vals) == len(self.points):
                out.append(float(np.mean(vals)))
        return out

    def scores(self, cc: str, point: Optional[int] = None) -> list[float]:
        idx = range(len(self.points)) if point is None else [point]
        out = []
        for r in range(self.repeats):
            vals = []
            for i in idx:
                runs = self.metrics[i][cc]
                vals.append(goal_score(self.goal, runs[r]) if r < len(runs) else None)
            if vals and all(v is not None for v in vals):
                out.append(float(np.mean(vals)))
        return out

    def evidence(self) -> list[dict]:
        from . import analysis

        rows = []
        order = self.decision.ranking + [c for c in self.candidates if c not in self.decision.ranking]
        for cc in order:
            g = [v / 1e6 for v in self.pooled(cc, "goodput_bps")]
            p = self.pooled(cc, "p95_ms")
            sh = self.pooled(cc, "share")
            jn = self.pooled(cc, "jain")
            sc = self.scores(cc)
            at_link = [m["goodput_bps"] for m in self.metrics[0][cc] if m.get("ok")]
            cv = analysis.coefficient_of_variation(at_link) if len(at_link) > 1 else None

            def ci(v):
                c = analysis.mean_ci(v)
                return {"mean": c.mean, "lo": c.lo, "hi": c.hi}

            rows.append({
                "cc": cc, "eligible": cc in self.eligible, "n": len(sc),
                "goodput_mbps": ci(g), "p95_rtt_ms": ci(p),
                "p95_over_base": (float(np.mean(p)) / (self.link.rtt_s * 1e3)) if p else None,
                "cv_pct": cv * 100 if cv is not None else None,
                "share": ci(sh) if sh else None, "jain": ci(jn) if jn else None,
                "score": ci(sc),
            })
        return rows

    # ---- the verdict in words ----

    def confidence_text(self) -> str:
        d = self.decision
        n = self.repeats
        if d.outcome == "single":
            return f"only one eligible candidate ({cc_name(d.leader)})"
        lead, run = cc_name(d.leader), cc_name(d.runner_up)
        p = d.p_value
        ptxt = "p < 1e-12" if p is not None and p < 1e-12 else (f"p = {p:.2g}" if p is not None else "p undefined")
        if d.outcome == "winner":
            lvl = next((t for t in (0.001, 0.01, 0.05) if p is not None and p < t), None)
            sure = "high" if lvl is not None and lvl <= 0.01 else "moderate"
            return (f"{sure} confidence: {lead} separated from {run} ({ptxt}"
                    + (f" < {lvl:g}" if lvl else "") + f"; Bonferroni level per look {d.alpha_look:.2g}) "
                    f"after {n} repeat{'s' if n != 1 else ''}: {self.margin_text()}")
        if d.outcome == "tie":
            if len(d.tied) > 2:
                return (f"tie: {', '.join(map(cc_name, d.tied))} are within ±{MARGIN * 100:g} % of {lead} "
                        f"(the {100 * (1 - d.alpha_look):.3g} % intervals of the differences lie inside the "
                        f"margin or do not exclude 0) after {n} repeats")
            return (f"tie: {lead} and {run} are within ±{MARGIN * 100:g} % of each other "
                    f"(the {100 * (1 - d.alpha_look):.3g} % interval of the difference lies inside the margin) "
                    f"after {n} repeats")
        return (f"not separated: {lead} is ahead of {run} by {d.rel_diff * 100:+.1f} % but the "
                f"difference is not significant after {n} repeats ({ptxt}; {self.stop_reason}); "
                f"treat it as a tie")

    def margin_text(self) -> str:
        """The leader against the runner-up in the goal's own units."""
        d = self.decision
        if d.runner_up is None:
            return ""
        a, b = (float(np.mean(self.scores(c))) for c in (d.leader, d.runner_up))
        la, lb = cc_name(d.leader), cc_name(d.runner_up)
        if self.goal == "throughput":
            return f"goodput {a:.3g} vs {b:.3g} Mbit/s ({a / b:.2g}×)" if b > 0 else f"goodput {a:.3g} vs 0 Mbit/s"
        if self.goal == "latency":
            return f"p95 RTT {-a:.3g} ms ({la}) vs {-b:.3g} ms ({lb})"
        if self.goal == "balanced":
            return f"score {a:.3g} vs {b:.3g} ({(a - b) / abs(b) * 100 if b else 0:+.0f} %)"
        return f"Jain's index {a:.3f} vs {b:.3f}"

    def headline(self) -> str:
        d = self.decision
        if d.outcome in ("winner", "single"):
            return f"Recommendation: {cc_name(d.leader)} (goal {self.goal}); runner-up {cc_name(d.runner_up) if d.runner_up else '-'}"
        names = d.tied if len(d.tied) >= 2 else [d.leader, d.runner_up]
        return (f"Recommendation: a tie for goal {self.goal} between {', '.join(map(cc_name, names))} "
                f"({cc_name(d.leader)} nominally ahead; pick any of them, or decide on another goal)")

    def flips(self) -> list[dict]:
        """Neighbour points whose answer differs from the overall one (see the comment below)."""
        overall = self.decision.leader if self.decision.outcome in ("winner", "single") else None
        out = []
        for i, (pt, d) in enumerate(zip(self.points, self.point_decisions)):
            if i == 0:
                continue
            here = d.leader if d.outcome == "winner" else None
            # a separated winner other than the answer, or (no separation there) another
            # candidate nominally ahead; the same leader merely not separated at one variant
            # (fewer runs per variant than pooled) is not a flip
            flip = (here is not None and here != overall) or (here is None and overall is not None
                                                              and d.leader != overall)
            if flip:
                out.append({"point": pt.label, "axis": pt.axis, "factor": pt.factor,
                            "winner": here, "leader": d.leader, "outcome": d.outcome,
                            "overall": overall})
        return out

    def fairness_text(self) -> list[str]:
        """What the shares against the competing traffic mean (only with --competing)."""
        if not self.link.competing:
            return []
        ncomp = sum(n for _, n in self.link.competing)
        fair = self.link.flows / (self.link.flows + ncomp)
        comp = ", ".join(f"{n}× {cc_name(c)}" for c, n in self.link.competing)
        lines = []
        for row in self.evidence():
            sh = (row["share"] or {}).get("mean")
            if sh is None:
                continue
            jain = (row["jain"] or {}).get("mean")
            if sh >= max(0.65, fair + 0.15):
                lines.append(
                    f"{cc_name(row['cc'])} takes most of the link: {sh * 100:.0f} % against {comp} "
                    f"(a fair share is {fair * 100:.0f} %, Jain {jain:.2f}) on this "
                    f"{self.link.buffer_bdp():.2g}-BDP buffer. That is fast for you and unfair to the "
                    f"other traffic: the competing flows get {(1 - sh) * 100:.0f} % of the link. "
                    + ("That is why it ranks low for fairness." if self.goal == "fairness" else
                       "If you share this bottleneck with others, rank with --goal fairness."))
            elif sh <= min(0.35, fair - 0.15):
                lines.append(f"{cc_name(row['cc'])} is pushed aside: {sh * 100:.0f} % of the link against "
                             f"{comp} (fair share {fair * 100:.0f} %).")
        return lines

    def delay_text(self) -> list[str]:
        """Candidates whose p95 RTT is at least twice the base RTT (\"fills the buffer\" when the
        queueing delay is at least half of what the buffer can hold)."""
        base = self.link.rtt_s * 1e3
        b = self.link.buffer_bytes()
        buf_ms = (b * 8 / self.link.rate_bps * 1e3) if b is not None else None
        out = []
        for row in self.evidence():
            r = row["p95_over_base"]
            if r is None or r < 2:
                continue
            p95 = row["p95_rtt_ms"]["mean"]
            full = buf_ms is not None and p95 - base >= 0.5 * buf_ms
            out.append(f"{cc_name(row['cc'])} {'fills the buffer' if full else 'builds a queue'}: its p95 RTT "
                       f"is {p95:.0f} ms, {r:.1f}× the base RTT of {base:g} ms"
                       + (f" (the buffer holds {buf_ms:.0f} ms)." if buf_ms is not None else "."))
        return out

    def to_json(self) -> dict:
        d = self.decision

        def dec(x: Decision) -> dict:
            return {k: getattr(x, k) for k in ("outcome", "leader", "runner_up", "n", "diff", "lo", "hi",
                                               "rel_diff", "p_value", "alpha_look", "margin", "ranking", "tied")}

        rec = d.leader if d.outcome in ("winner", "single") else None
        return {
            "schema": SCHEMA_VERSION,
            "goal": self.goal, "goal_text": GOAL_TEXT[self.goal],
            "backend": self.backend,
            "link": self.link.as_dict(),
            "candidates": list(self.candidates),
            "eligible": list(self.eligible),
            "recommendation": rec,
            "tie": d.outcome not in ("winner", "single"),
            "leader": d.leader, "runner_up": d.runner_up,
            "outcome": d.outcome,
            "confidence": self.confidence_text(),
            "decision": dec(d),
            "repeats": self.repeats,
            "evidence": self.evidence(),
            "neighbourhood": [
                {**pt.as_dict(), "decision": dec(pd_),
                 "score_means": {cc: (float(np.mean(self.scores(cc, i))) if self.scores(cc, i) else None)
                                 for cc in self.candidates}}
                for i, (pt, pd_) in enumerate(zip(self.points, self.point_decisions))],
            "flips": self.flips(),
            "boundaries": self.boundaries,
            "fairness": self.fairness_text(),
            "delay": self.delay_text(),
            "notes": list(self.notes),
            "kernel": self.kernel,
            "stop_reason": self.stop_reason,
            "runs": self.runs, "wall_s": self.wall_s, "budget_s": self.budget_s,
        }


def _eligible(goal: str, cands: list[str], rec_metrics: Callable[[str], list[float]]) -> list[str]:
    if goal != "latency":
        return list(cands)
    gp = {c: (float(np.mean(v)) if (v := rec_metrics(c)) else 0.0) for c in cands}
    best = max(gp.values()) if gp else 0.0
    return [c for c in cands if gp[c] >= LATENCY_MIN_GOODPUT * best]


def recommend(link: Link, goal: str = "throughput", *, backend: str = "sim",
              candidates: Optional[Sequence[str]] = None, budget_s: float = 30.0,
              min_repeats: int = 3, max_repeats: int = 20, batch: int = 2, alpha: float = ALPHA,
              margin: float = MARGIN, band: Mapping[str, Sequence[float]] | None = None,
              workers: Optional[int] = None, seed: int = 1, bisect_steps: int = 2,
              confirm_repeats: int = 2, progress: Optional[Callable[[str], None]] = None) -> Recommendation:
    """Run the candidates over the link's neighbourhood with sequential repeats (module docstring)."""
    from . import backends

    if goal not in GOALS:
        raise RecommendError("--goal", f"unknown goal {goal!r}", "one of " + ", ".join(GOALS))
    t0 = time.perf_counter()
    notes: list[str] = []
    search_backend = "sim"
    kernel_names: Optional[list[str]] = None
    if backend == "kernel":
        mod = backends.get_backend("kernel")          # BackendUnavailable when it cannot load
        kernel_names = list(mod.available_algorithms())
    elif backend != "sim":
        backends.get_backend(backend)
        raise RecommendError("--backend", f"recommend searches on the simulator; '{backend}' is not supported",
                             "sim, or kernel (simulator search + kernel confirmation of the top two)")
    sim_names = [a["name"] for a in backends.algorithms("sim")]
    cands = list(candidates) if candidates else sorted(sim_names, key=lambda c: (ORDER.get(c, 9), c))
    for c in cands:
        if c not in sim_names:
            raise RecommendError("--cc", f"the simulator cannot run '{c}'", "one of " + ", ".join(sim_names))
    if kernel_names is not None:
        dropped = [c for c in cands if c not in kernel_names]
        cands = [c for c in cands if c in kernel_names]
        if dropped:
            notes.append("not offered by this kernel, so not candidates: " + ", ".join(map(cc_name, dropped)))
    if len(cands) < 1:
        raise RecommendError("--cc", "no candidate algorithm", "at least one algorithm the backend can run")
    if goal == "fairness" and not link.competing and link.flows < 2:
        link = dataclasses.replace(link, competing=[("cubic", 1)])
        notes.append("goal fairness without --competing: each candidate shares the link with one CUBIC "
                     "flow (Linux's default algorithm)")
    points = neighbourhood(link, band)
    # check once that the backend accepts the scenario (AQM, algorithms), before anything runs
    from .scenario import Scenario

    for cc in cands:
        backends.check(Scenario.from_dict(scenario_dict(link, points[0], cc, seed), source="recommend"), search_backend)
    if kernel_names is not None:   # root, TUN, iperf3, ccbench-link: refused before the search
        backends.check(Scenario.from_dict(scenario_dict(link, points[0], cands[0], seed), source="recommend"),
                       "kernel")

    # calibrate: one run at the stated link, after a 1 s warm-up run (the first call into the
    # simulator pays for loading it)
    run_metrics({**scenario_dict(link, points[0], cands[0], seed), "duration": "1s"}, search_backend)
    t = time.perf_counter()
    run_metrics(scenario_dict(link, points[0], cands[0], seed), search_backend)
    per_run = time.perf_counter() - t
    if workers is None:
        workers = 1
        if per_run * len(points) * len(cands) > 0.5:
            workers = max(1, min(os.cpu_count() or 1, 8))
    first = per_run * len(points) * len(cands) * min_repeats / max(1, min(workers, os.cpu_count() or 1))
    if first > 0.6 * budget_s and link.duration_s > 5.0:
        # a fast link: shorter runs so that the first batch fits the budget
        dur = max(5.0, link.duration_s * 0.6 * budget_s / first)
        notes.append(f"runs shortened from {link.duration_s:g} s to {dur:.3g} s simulated to fit the "
                     f"{budget_s:g} s budget (one run took {per_run:.2f} s)")
        link = dataclasses.replace(link, duration_s=round(dur, 1))
    runner = _Runner(search_backend, workers)
    metrics = {i: {cc: [] for cc in cands} for i in range(len(points))}
    max_looks = 1 + math.ceil(max(0, max_repeats - min_repeats) / max(1, batch))
    repeats = 0
    look = 0
    decision: Optional[Decision] = None
    stop_reason = ""
    batch_wall = None

    def rec_view() -> Recommendation:
        return Recommendation(goal, link, backend, cands, points, metrics, decision or Decision("continue", None, None),
                              repeats, [], [], 0.0, runner.runs, budget_s, cands)

    try:
        while True:
            n_new = min_repeats if repeats == 0 else min(batch, max_repeats - repeats)
            if n_new <= 0:
                stop_reason = f"maximum of {max_repeats} repeats reached"
                break
            elapsed = time.perf_counter() - t0
            if batch_wall is not None and elapsed + batch_wall * n_new * 1.1 > budget_s * 0.8:
                stop_reason = f"time budget of {budget_s:g} s spent"
                break
            tb = time.perf_counter()
            raws, keys = [], []
            for r in range(repeats, repeats + n_new):
                for i, pt in enumerate(points):
                    for cc in cands:
                        raws.append(scenario_dict(link, pt, cc, seed + r))
                        keys.append((i, cc))
            for (i, cc), m in zip(keys, runner.run(raws)):
                if not m.get("ok"):
                    raise RecommendError("backend", f"a {cc} run failed on the simulator: {m.get('error')}")
                metrics[i][cc].append(m)
            repeats += n_new
            batch_wall = (time.perf_counter() - tb) / n_new
            look += 1
            view = rec_view()
            eligible = _eligible(goal, cands, lambda c: view.pooled(c, "goodput_bps"))
            samples = {c: view.scores(c) for c in eligible}
            decision = sequential_decision(samples, look=look, max_looks=max_looks, alpha=alpha, margin=margin,
                                           min_n=min_repeats)
            if progress:
                progress(f"{repeats} repeats: {decision.outcome} ({cc_name(decision.leader)} vs "
                         f"{cc_name(decision.runner_up) if decision.runner_up else '-'})")
            if decision.done:
                stop_reason = {"winner": "separated", "tie": "equivalent within the margin",
                               "single": "one eligible candidate"}[decision.outcome]
                break
        view = rec_view()
        eligible = _eligible(goal, cands, lambda c: view.pooled(c, "goodput_bps"))
        if not decision.done:
            decision = sequential_decision({c: view.scores(c) for c in eligible}, look=look, max_looks=max_looks,
                                           alpha=alpha, margin=margin, min_n=min_repeats, final=True)
        view = rec_view()
        point_decisions = []
        for i in range(len(points)):
            pe = _eligible(goal, cands, lambda c: [m["goodput_bps"] for m in metrics[i][c]])
            point_decisions.append(sequential_decision({c: view.scores(c, i) for c in pe}, alpha=alpha,
                                                       max_looks=len(points), margin=margin,
                                                       min_n=min_repeats, final=True))
        rec = Recommendation(goal, link, backend, cands, points, metrics, decision, repeats, point_decisions, [],
                             0.0, runner.runs, budget_s, eligible, notes, stop_reason=stop_reason)
        rec.boundaries = _boundaries(rec, runner, seed, alpha, margin, min_repeats, t0, budget_s,
                                     batch_wall or 0.0, bisect_steps)
    finally:
        runner.close()
    if kernel_names is not None:
        rec.kernel = _confirm_on_kernel(rec, seed, confirm_repeats)
    rec.runs = runner.runs
    rec.wall_s = time.perf_counter() - t0
    jr = link.jitter_s / link.rtt_s if link.rtt_s > 0 else 0.0
    if 0.16 <= jr <= 0.24:
        rec.notes.append(f"jitter/RTT is {jr * 100:.0f} %: inside seed 002's 'chaos zone' (16-24 %), where "
                         f"the answer is known to vary from run to run")
    return rec


def _label(d: Decision) -> Optional[str]:
    return d.leader if d.outcome in ("winner", "single") else None


def _boundaries(rec: Recommendation, runner: _Runner, seed: int, alpha: float, margin: float,
                min_repeats: int, t0: float, budget_s: float, batch_wall: float, steps: int) -> list[dict]:
    """For each neighbour whose answer differs from the stated link's, bisect (geometric mean)
    between the stated value and the neighbour's while the budget allows; report the interval
    in which the answer changes."""
    out = []
    per_point_repeat = batch_wall / max(1, len(rec.points))
    n = max(min_repeats, min(rec.repeats, 6))
    overall = _label(rec.decision)
    for i, (pt, d) in enumerate(zip(rec.points, rec.point_decisions)):
        if i == 0 or _label(d) is None or _label(d) == overall:
            continue
        stated = rec.points[0].value(pt.axis)
        lo_v, hi_v = stated, pt.value()
        lo_lab, hi_lab = overall, _label(d)
        probes = []
        for _ in range(steps):
            if time.perf_counter() - t0 + per_point_repeat * n * 1.2 > budget_s * 0.9:
                break
            mid = math.sqrt(lo_v * hi_v)
            mp = _point(rec.link, pt.axis, mid / stated)
            raws, keys = [], []
            for r in range(n):
                for cc in rec.candidates:
                    raws.append(scenario_dict(rec.link, mp, cc, seed + r))
                    keys.append(cc)
            res: dict[str, list] = {cc: [] for cc in rec.candidates}
            for cc, m in zip(keys, runner.run(raws)):
                res[cc].append(m)
            pe = _eligible(rec.goal, rec.candidates, lambda c: [m["goodput_bps"] for m in res[c] if m.get("ok")])
            md = sequential_decision({c: [goal_score(rec.goal, m) for m in res[c]] for c in pe}, alpha=alpha,
                                     margin=margin, min_n=min_repeats, final=True)
            probes.append({"value": mid, "label": mp.label, "winner": _label(md), "outcome": md.outcome,
                           "leader": md.leader})
            if _label(md) == lo_lab:
                lo_v = mid
            elif _label(md) == hi_lab:
                hi_v = mid
            else:
                break
        out.append({"axis": pt.axis, "from": stated, "to": pt.value(),
                    "stated_answer": lo_lab, "neighbour_answer": hi_lab,
                    "between": sorted([lo_v, hi_v]), "probes": probes,
                    "text": _boundary_text(pt.axis, lo_lab, hi_lab, lo_v, hi_v)})
    return out


def _fmt_axis(axis: str, v: float) -> str:
    from . import units

    if axis == "rate":
        return units.format_rate(round(v))
    if axis == "loss":
        return f"{v * 100:.3g} %"
    return f"±{v * 1e3:.3g} ms"


def _boundary_text(axis, lo_lab, hi_lab, lo_v, hi_v) -> str:
    a = cc_name(lo_lab) if lo_lab else "a tie"
    b = cc_name(hi_lab) if hi_lab else "a tie"
    x, y = sorted([lo_v, hi_v])
    return f"{axis}: the answer changes from {a} to {b} between {_fmt_axis(axis, x)} and {_fmt_axis(axis, y)}"


def _confirm_on_kernel(rec: Recommendation, seed: int, repeats: int) -> dict:
    """Run the simulator's top two at the stated link on the kernel backend (root)."""
    top = [c for c in rec.decision.ranking[:2]]
    res: dict[str, list] = {c: [] for c in top}
    for r in range(repeats):
        for cc in top:
            res[cc].append(run_metrics(scenario_dict(rec.link, rec.points[0], cc, seed + r), "kernel"))
    scores = {c: [goal_score(rec.goal, m) for m in v] for c, v in res.items()}
    d = sequential_decision(scores, margin=MARGIN, min_n=2, final=True)
    agree = d.leader == rec.decision.leader
    return {"candidates": top, "repeats": repeats,
            "score_means": {c: (float(np.mean([s for s in v if s is not None])) if any(s is not None for s in v)
                                else None) for c, v in scores.items()},
            "goodput_mbps": {c: [m.get("goodput_bps", 0) / 1e6 for m in v if m.get("ok")] for c, v in res.items()},
            "p95_rtt_ms": {c: [m.get("p95_ms") for m in v if m.get("ok")] for c, v in res.items()},
            "kernel_leader": d.leader, "outcome": d.outcome, "agrees": agree,
            "errors": [m.get("error") for v in res.values() for m in v if not m.get("ok")]}


# --------------------------------------------------------------------------------------------
# options -> Link


def parse_competing(text: Optional[str]) -> list[tuple[str, int]]:
    """``cubic`` | ``2xcubic`` | ``cubic:2`` | ``cubic,bbr`` -> [(cc, count)]."""
    if not text:
        return []
    out: list[tuple[str, int]] = []
    for part in text.split(","):
        p = part.strip().lower()
        if not p:
            continue
        m = re.fullmatch(r"(?:(\d+)\s*[x×*]\s*)?([a-z][a-z0-9_]*)(?:\s*[:*]\s*(\d+))?", p)
        if not m:
            raise RecommendError("--competing", f"{part!r} is not an algorithm with an optional count",
                                 "e.g. cubic, 2xcubic, cubic:2 or cubic,bbr")
        n = int(m.group(1) or m.group(3) or 1)
        if n < 1 or n > 100:
            raise RecommendError("--competing", f"{part!r}: count {n} out of range", "1 to 100 flows")
        out.append((m.group(2), n))
    return out


def link_from_options(*, rate: Optional[str], rtt: Optional[str], loss: Optional[str] = None,
                      jitter: Optional[str] = None, buffer: str = "1bdp", aqm: str = "droptail",
                      flows: int = 1, competing: Optional[str] = None, duration: str = "15s",
                      ping=None) -> tuple[Link, list[str]]:
    """Build the Link from the command-line figures (and a PingEstimate). Returns (link, notes)."""
    from . import units

    notes: list[str] = []

    def conv(fn, v, key, form):
        try:
            return fn(v)
        except (units.UnitError, ValueError) as e:
            raise RecommendError(key, f"{v!r}: {getattr(e, 'problem', e)}", form) from None

    rtt_s = jitter_s = loss_f = None
    if ping is not None:
        rtt_s = ping.base_rtt_ms / 1e3
        jitter_s = ping.jitter_ms / 1e3
        loss_f = ping.loss
        notes.append("from the ping file: " + ping.describe())
        notes += [f"ping: {n}" for n in ping.notes]
        if rtt_s <= 0:
            raise RecommendError("--ping", "the minimum RTT in the ping file is 0", "a ping over a real path")
    if rtt is not None:
        rtt_s = conv(units.parse_time, rtt, "--rtt", units.TIME_FORM)
    if jitter is not None:
        jitter_s = conv(units.parse_time, jitter, "--jitter", units.TIME_FORM)
    if loss is not None:
        loss_f = conv(units.parse_percent, loss, "--loss", units.PERCENT_FORM)
    if rtt_s is None:
        raise RecommendError("--rtt", "no RTT given", "--rtt 50ms, or --ping FILE")
    if rtt_s <= 0:
        raise RecommendError("--rtt", f"{rtt!r} is not positive", units.TIME_FORM)
    if rate is None:
        if ping is None:
            raise RecommendError("--rate", "no rate given", units.RATE_FORM)
        rate_bps = 50e6
        notes.append("no --rate: assuming 50 Mbit/s (ping cannot measure the bottleneck's capacity)")
    else:
        rate_bps = float(conv(units.parse_rate, rate, "--rate", units.RATE_FORM))
    conv(units.parse_buffer, buffer, "--buffer", units.BUFFER_FORM)
    dur = conv(units.parse_time, duration, "--duration", units.TIME_FORM)
    if flows < 1 or flows > 100:
        raise RecommendError("--flows", f"{flows} out of range", "1 to 100")
    comp = parse_competing(competing)
    if loss_f is not None and loss_f >= 0.5:
        raise RecommendError("--loss", f"{loss_f * 100:g} % is too high to compare algorithms", "below 50 %")
    return Link(rate_bps=rate_bps, rtt_s=rtt_s, loss=loss_f or 0.0, jitter_s=jitter_s or 0.0, buffer=buffer,
                aqm=aqm, flows=flows, competing=comp, duration_s=dur), notes


# --------------------------------------------------------------------------------------------
# JSON schema (docs/recommend.md)

SCHEMA_VERSION = "ccbench.recommend/1"
_NUM = {"type": ["number", "null"]}
_CI = {"type": ["object", "null"], "required": ["mean", "lo", "hi"],
       "properties": {"mean": _NUM, "lo": _NUM, "hi": _NUM}}
_DECISION = {
    "type": "object",
    "required": ["outcome", "leader", "runner_up", "n", "diff", "lo", "hi", "rel_diff", "p_value",
                 "alpha_look", "margin", "ranking", "tied"],
    "properties": {"outcome": {"enum": ["winner", "tie", "continue", "undecided", "single"]},
                   "leader": {"type": ["string", "null"]}, "runner_up": {"type": ["string", "null"]},
                   "n": {"type": "integer"}, "diff": _NUM, "lo": _NUM, "hi": _NUM, "rel_diff": _NUM,
                   "p_value": _NUM, "alpha_look": _NUM, "margin": _NUM,
                   "ranking": {"type": "array", "items": {"type": "string"}},
                   "tied": {"type": "array", "items": {"type": "string"}}},
}
JSON_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ccbench recommend --json",
    "type": "object",
    "required": ["schema", "goal", "goal_text", "backend", "link", "candidates", "eligible", "recommendation",
                 "tie", "leader", "runner_up", "outcome", "confidence", "decision", "repeats", "evidence",
                 "neighbourhood", "flips", "boundaries", "fairness", "delay", "notes", "kernel", "stop_reason",
                 "runs", "wall_s", "budget_s"],
    "properties": {
        "schema": {"const": SCHEMA_VERSION},
        "goal": {"enum": list(GOALS)},
        "goal_text": {"type": "string"},
        "backend": {"enum": ["sim", "kernel"]},
        "link": {"type": "object",
                 "required": ["rate_bps", "rtt_ms", "loss", "jitter_ms", "buffer", "buffer_bdp", "aqm", "flows",
                              "competing", "duration_s"],
                 "properties": {"rate_bps": {"type": "number"}, "rtt_ms": {"type": "number"},
                                "loss": {"type": "number"}, "jitter_ms": {"type": "number"},
                                "buffer": {"type": "string"}, "buffer_bdp": {"type": "number"},
                                "aqm": {"type": "string"}, "flows": {"type": "integer"},
                                "competing": {"type": "array", "items": {
                                    "type": "object", "required": ["cc", "count"],
                                    "properties": {"cc": {"type": "string"}, "count": {"type": "integer"}}}},
                                "duration_s": {"type": "number"}}},
        "candidates": {"type": "array", "items": {"type": "string"}},
        "eligible": {"type": "array", "items": {"type": "string"}},
        "recommendation": {"type": ["string", "null"]},
        "tie": {"type": "boolean"},
        "leader": {"type": ["string", "null"]},
        "runner_up": {"type": ["string", "null"]},
        "outcome": {"enum": ["winner", "tie", "undecided", "single"]},
        "confidence": {"type": "string"},
        "decision": _DECISION,
        "repeats": {"type": "integer"},
        "evidence": {"type": "array", "items": {
            "type": "object",
            "required": ["cc", "eligible", "n", "goodput_mbps", "p95_rtt_ms", "p95_over_base", "cv_pct", "share",
                         "jain", "score"],
            "properties": {"cc": {"type": "string"}, "eligible": {"type": "boolean"}, "n": {"type": "integer"},
                           "goodput_mbps": _CI, "p95_rtt_ms": _CI, "p95_over_base": _NUM, "cv_pct": _NUM,
                           "share": _CI, "jain": _CI, "score": _CI}}},
        "neighbourhood": {"type": "array", "items": {
            "type": "object",
            "required": ["label", "axis", "factor", "rate_bps", "loss", "jitter_ms", "decision", "score_means"],
            "properties": {"label": {"type": "string"}, "axis": {"type": ["string", "null"]},
                           "factor": {"type": "number"}, "rate_bps": {"type": "number"},
                           "loss": {"type": "number"}, "jitter_ms": {"type": "number"},
                           "decision": _DECISION,
                           "score_means": {"type": "object", "additionalProperties": _NUM}}}},
        "flips": {"type": "array", "items": {
            "type": "object", "required": ["point", "axis", "factor", "winner", "leader", "outcome", "overall"],
            "properties": {"point": {"type": "string"}, "axis": {"type": ["string", "null"]},
                           "factor": {"type": "number"}, "winner": {"type": ["string", "null"]},
                           "leader": {"type": ["string", "null"]}, "outcome": {"type": "string"}, "overall": {"type": ["string", "null"]}}}},
        "boundaries": {"type": "array", "items": {
            "type": "object",
            "required": ["axis", "from", "to", "stated_answer", "neighbour_answer", "between", "probes", "text"],
            "properties": {"axis": {"type": "string"}, "from": {"type": "number"}, "to": {"type": "number"},
                           "stated_answer": {"type": ["string", "null"]},
                           "neighbour_answer": {"type": ["string", "null"]},
                           "between": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                           "probes": {"type": "array"}, "text": {"type": "string"}}}},
        "fairness": {"type": "array", "items": {"type": "string"}},
        "delay": {"type": "array", "items": {"type": "string"}},
        "notes": {"type": "array", "items": {"type": "string"}},
        "kernel": {"type": ["object", "null"]},
        "stop_reason": {"type": "string"},
        "ping": {"type": "object", "required": ["base_rtt_ms", "jitter_ms", "loss", "replies", "sent"]},
        "runs": {"type": "integer"},
        "wall_s": {"type": "number"},
        "budget_s": {"type": "number"},
    },
}


# --------------------------------------------------------------------------------------------
# the study's report section (recommendation-map)


def _map_cells(flows, goal: str):
    """flows of one part -> per (cell key, cc) the per-run goal scores."""
    import pandas as pd

    f = flows.copy()
    if f.empty:
        return {}
    f["group"] = f["group"].fillna(0).astype(int) if "group" in f.columns else 0
    keycols = ["rtt_ms", "jitter_ms", "loss_pct", "buffer_bdp"]
    rows = []
    for run_id, g in f.groupby("run_id"):
        mine = g[g["group"] == 0]
        other = g[g["group"] != 0]
        first = mine.iloc[0]
        total = float(g["goodput_bps"].fillna(0).sum())
        m = {"ok": True, "goodput_bps": float(mine["goodput_bps"].fillna(0).sum()),
             "p95_ms": float(mine["rtt_p95_ms"].mean()) if mine["rtt_p95_ms"].notna().any() else None,
             "rate_bps": float(first["rate_mbps"]) * 1e6, "base_rtt_ms": float(first["base_rtt_ms"]),
             "jain": None, "share": None}
        if len(g) > 1:
            from . import analysis

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
        pe = _eligible(goal, cands, lambda c: [m["goodput_bps"] for _, m in per[c]])
        d = sequential_decision({c: [s for s, _ in per[c] if s is not None] for c in pe}, alpha=alpha,
                                margin=margin, min_n=2, final=True)
        win = cc_name(d.leader) if d.outcome in ("winner", "single") else "tie"
        row = {"RTT ms": rtt, "jitter/RTT": round(jit / rtt, 3) if rtt else None, "loss %": loss,
               "buffer BDP": buf, "winner": win, "leader": cc_name(d.leader) if d.leader else "",
               "runner-up": cc_name(d.runner_up) if d.runner_up else "",
               "tied": ("/".join(cc_name(c) for c in sorted(d.tied, key=lambda c: (ORDER.get(c, 9), c)))
                        if d.outcome != "winner" else ""),
               "by %": round(d.rel_diff * 100, 1) if d.rel_diff is not None else None,
               "p": (float(f"{d.p_value:.2g}") if d.p_value is not None else None), "n": d.n}
        for c in cands:
            v = [s for s, _ in per[c] if s is not None]
            row[cc_name(c)] = round(float(np.mean(v)), 4) if v else None
        rows.append(row)
    return pd.DataFrame(rows)


_COLOURS = {"BBR": "#cfe3ff", "CUBIC": "#ffe1c4", "Reno": "#e4d7f5", "Vegas": "#d3f0d3", "tie": "#eeeeee"}


def _map_html(table, goal: str) -> str:
    """Per buffer: a grid with rows (RTT, jitter/RTT) and columns loss, each cell the winner and
    its margin, coloured by the winner."""
    import html as H

    if table.empty:
        return ""
    out = [f"<h3>goal {H.escape(goal)}</h3>"]
    losses = sorted(table["loss %"].dropna().unique())
    per_cc = [c for c in table.columns if c in NAMES.values() or c in ("cubic", "bbr", "reno", "vegas")]
    for buf in sorted(table["buffer BDP"].dropna().unique()):
        sub = table[table["buffer BDP"] == buf]
        out.append(f"<table><caption>goal {H.escape(goal)}, buffer {buf:g} BDP: winner (runner-up, "
                   f"by how much on the goal score); grey = tie (not separated)</caption><tr><th>RTT ms</th>"
                   f"<th>jitter/RTT</th>" + "".join(f"<th>loss {x:g} %</th>" for x in losses) + "</tr>")
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
                    txt = (f"{who} (within 5 %)" if by is None or not (by >= MARGIN * 100)
                           else f"{who} ({r['leader']} ahead by {by:.0f} %, not significant)")
                elif not r["runner-up"]:
                    txt = f"{r['winner']} (the only one with half the best goodput)"
                else:
                    txt = f"{r['winner']} +{by:.0f} % vs {r['runner-up']}"
                out.append(f"<td style=\"background:{_COLOURS.get(r['winner'], '#fff')}\">{H.escape(txt)}</td>")
            out.append("</tr>")
        out.append("</table>")
    return "\n".join(out)


def map_section(study, datas):
    """report section 'recommendation_map' (study.py ANALYSES): per goal, which algorithm wins
    each cell and by how much; cells whose leader is not separated are ties."""
    import pandas as pd

    from .report import Section

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
        summary.append({"goal": goal, "part": pname, "cells": len(t),
                        **{k: int(counts.get(k, 0)) for k in ["BBR", "CUBIC", "Reno", "Vegas", "tie"]}})
        html.append(_map_html(t, goal))
        tables.append((f"goal {goal} ({pname}): winner per cell, runner-up, relative difference of the goal "
                       f"score, Welch p (Bonferroni over the rivals), mean score per algorithm", t))
    paragraphs = [
        "For each goal, each cell of the grid is decided by the rule ccbench recommend uses (one look): "
        f"the leader wins when Welch's interval for its difference to the runner-up excludes 0 at level "
        f"{ALPHA:g}/(k-1) and the difference is at least {MARGIN * 100:g} % of the score; otherwise the cell "
        "is a tie (grey). Scores: throughput = goodput (Mbit/s); latency = minus the p95 RTT (ms) among "
        "algorithms with at least half the best goodput; balanced = utilisation / (p95 RTT / base RTT); "
        "fairness = Jain's index of the candidate flow and one competing CUBIC flow (part vs-cubic).",
        "Simulator limits: a wired drop-tail bottleneck with Bernoulli loss and uniform per-packet jitter; "
        "no Wi-Fi model, no AQM yet; see docs/recommend.md.",
    ]
    if summary:
        tables.insert(0, ("cells won per goal", pd.DataFrame(summary)))
    return Section("Recommendation map", paragraphs, tables, [], "\n".join(html) or None)
