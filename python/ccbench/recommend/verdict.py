"""The outcome of a recommend search, and how it is told: the verdict, how sure, the evidence per
candidate, the neighbourhood, fairness and delay remarks, and the --json document."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .. import __version__, analysis
from .algorithms import cc_name
from .decision import MARGIN, Decision
from .goals import GOAL_TEXT, goal_score
from .link import Link, Point
from .link import delay_text as fmt_delay
from .schema import SCHEMA, SCHEMA_VERSION


def ratio_text(goal: str, a: float, b: float) -> str:
    """The leader's score ``a`` against the runner-up's ``b`` as a ratio (the form "how sure"
    and the neighbourhood table share): goodput, score or Jain's index a/b; for latency (scores
    are minus the p95 RTT) how many times shorter the leader's p95 is."""
    if goal == "latency":
        return f"{b / a:.3g}× shorter p95" if a < 0 and b < 0 else "p95 –"
    if b > 0:
        return f"{a / b:.3g}×"
    return "runner-up 0"


@dataclass
class Recommendation:
    goal: str
    link: Link
    backend: str
    candidates: list[str]
    points: list[Point]
    metrics: dict  # metrics[point_index][cc] -> list of per-repeat dicts
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
            vals = [
                self.metrics[i][cc][r].get(key) if r < len(self.metrics[i][cc]) else None
                for i in range(len(self.points))
            ]
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

            def ci(v, bounds=(0.0, None)):
                # every quantity here has a range (goodput and delay >= 0, shares and Jain's
                # index in [0, 1]): its interval is cut to it (analysis.mean_ci)
                c = analysis.mean_ci(v, bounds=bounds)
                return {"mean": c.mean, "lo": c.lo, "hi": c.hi}

            score_range = {"latency": (None, 0.0), "fairness": (0.0, 1.0)}.get(self.goal, (0.0, None))

            rows.append(
                {
                    "cc": cc,
                    "eligible": cc in self.eligible,
                    "n": len(sc),
                    "goodput_mbps": ci(g),
                    "p95_rtt_ms": ci(p),
                    "p95_over_base": (float(np.mean(p)) / (self.link.rtt_s * 1e3)) if p else None,
                    "cv_pct": cv * 100 if cv is not None else None,
                    "share": ci(sh, (0.0, 1.0)) if sh else None,
                    "jain": ci(jn, (0.0, 1.0)) if jn else None,
                    "score": ci(sc, score_range),
                }
            )
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
            return (
                f"{sure} confidence: {lead} separated from {run} ({ptxt}"
                + (f" < {lvl:g}" if lvl else "")
                + f"; Bonferroni level per look {d.alpha_look:.2g}) "
                f"after {n} repeat{'s' if n != 1 else ''}: {self.margin_text()}"
            )
        if d.outcome == "tie":
            if len(d.tied) > 2:
                return (
                    f"tie: {', '.join(map(cc_name, d.tied))} are within ±{MARGIN * 100:g} % of {lead} "
                    f"(the {100 * (1 - d.alpha_look):.3g} % intervals of the differences lie inside the "
                    f"margin or do not exclude 0) after {n} repeats"
                )
            return (
                f"tie: {lead} and {run} are within ±{MARGIN * 100:g} % of each other "
                f"(the {100 * (1 - d.alpha_look):.3g} % interval of the difference lies inside the margin) "
                f"after {n} repeats"
            )
        return (
            f"not separated: {lead} is ahead of {run} ({self.margin_text()}) but the "
            f"difference is not significant after {n} repeats ({ptxt}; {self.stop_reason}); "
            f"treat it as a tie"
        )

    def margin_text(self) -> str:
        """The leader against the runner-up in the goal's own units, with their ratio."""
        d = self.decision
        if d.runner_up is None:
            return ""
        a, b = (float(np.mean(self.scores(c))) for c in (d.leader, d.runner_up))
        la, lb = cc_name(d.leader), cc_name(d.runner_up)
        ratio = ratio_text(self.goal, a, b)
        if self.goal == "throughput":
            return f"goodput {a:.3g} vs {b:.3g} Mbit/s ({ratio})"
        if self.goal == "latency":
            return f"p95 RTT {fmt_delay(-a)} ({la}) vs {fmt_delay(-b)} ({lb}), {ratio}"
        if self.goal == "balanced":
            return f"score {a:.3g} vs {b:.3g} ({ratio})"
        return f"Jain's index {a:.3f} vs {b:.3f} ({ratio})"

    def headline(self) -> str:
        d = self.decision
        if d.outcome in ("winner", "single"):
            runner = cc_name(d.runner_up) if d.runner_up else "-"
            return f"Recommendation: {cc_name(d.leader)} (goal {self.goal}); runner-up {runner}"
        names = d.tied if len(d.tied) >= 2 else [d.leader, d.runner_up]
        return (
            f"Recommendation: a tie for goal {self.goal} between {', '.join(map(cc_name, names))} "
            f"({cc_name(d.leader)} nominally ahead; pick any of them, or decide on another goal)"
        )

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
            flip = (here is not None and here != overall) or (
                here is None and overall is not None and d.leader != overall
            )
            if flip:
                out.append(
                    {
                        "point": pt.label,
                        "axis": pt.axis,
                        "factor": pt.factor,
                        "winner": here,
                        "leader": d.leader,
                        "outcome": d.outcome,
                        "overall": overall,
                    }
                )
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
                    + (
                        "That is why it ranks low for fairness."
                        if self.goal == "fairness"
                        else "If you share this bottleneck with others, rank with --goal fairness."
                    )
                )
            elif sh <= min(0.35, fair - 0.15):
                lines.append(
                    f"{cc_name(row['cc'])} is pushed aside: {sh * 100:.0f} % of the link against "
                    f"{comp} (fair share {fair * 100:.0f} %)."
                )
        return lines

    def delay_text(self) -> list[str]:
        """Candidates whose p95 RTT is at least twice the base RTT: "fills the buffer" when the
        queueing delay is between half and all of what the buffer holds (queueing delay = queue
        bytes / rate); beyond a full buffer the samples hold more than the bottleneck's queue."""
        base = self.link.rtt_s * 1e3
        b = self.link.buffer_bytes()
        buf_ms = (b * 8 / self.link.rate_bps * 1e3) if b is not None and "rate" not in self.link.fixed else None
        out = []
        for row in self.evidence():
            r = row["p95_over_base"]
            if r is None or r < 2:
                continue
            p95 = row["p95_rtt_ms"]["mean"]
            head = (
                f"{cc_name(row['cc'])} {{}}: its p95 RTT is {fmt_delay(p95)}, {r:.1f}× the base RTT of "
                f"{fmt_delay(base)}"
            )
            if buf_ms is None:
                out.append(head.format("builds a queue") + ".")
            elif p95 - base > 1.5 * buf_ms:
                out.append(
                    head.format("sees RTTs beyond a full buffer")
                    + f", more than the {fmt_delay(buf_ms)} the buffer holds: its RTT samples include "
                    "more than the bottleneck's queue (ACKs delayed or lost, recovery)."
                )
            else:
                full = p95 - base >= 0.5 * buf_ms
                out.append(
                    head.format("fills the buffer" if full else "builds a queue")
                    + f" (the buffer holds {fmt_delay(buf_ms)})."
                )
        return out

    def to_json(self) -> dict:
        d = self.decision

        def dec(x: Decision) -> dict:
            return dataclasses.asdict(x)  # every field, in order: the schema's _DECISION

        rec = d.leader if d.outcome in ("winner", "single") else None
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "ccbench_version": __version__,
            "goal": self.goal,
            "goal_text": GOAL_TEXT[self.goal],
            "backend": self.backend,
            "link": self.link.as_dict(),
            "candidates": list(self.candidates),
            "eligible": list(self.eligible),
            "recommendation": rec,
            "tie": d.outcome not in ("winner", "single"),
            "leader": d.leader,
            "runner_up": d.runner_up,
            "outcome": d.outcome,
            "confidence": self.confidence_text(),
            "decision": dec(d),
            "repeats": self.repeats,
            "evidence": self.evidence(),
            "neighbourhood": [
                {
                    **pt.as_dict(),
                    "decision": dec(pd_),
                    "score_means": {
                        cc: (float(np.mean(self.scores(cc, i))) if self.scores(cc, i) else None)
                        for cc in self.candidates
                    },
                }
                for i, (pt, pd_) in enumerate(zip(self.points, self.point_decisions))
            ],
            "flips": self.flips(),
            "boundaries": self.boundaries,
            "fairness": self.fairness_text(),
            "delay": self.delay_text(),
            "notes": list(self.notes),
            "kernel": self.kernel,
            "stop_reason": self.stop_reason,
            "runs": self.runs,
            "wall_s": self.wall_s,
            "budget_s": self.budget_s,
        }
