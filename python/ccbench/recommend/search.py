"""The search: every candidate over the link and its neighbourhood, repeats added in batches until
the stopping rule decides or the budget is spent, then the boundaries of a flipping answer.

Runs go in-process, or on local worker processes (the sweep's executor) when one repeat would
take more than 0.5 s. Run lengths scale with the link (link.DEFAULT_RUN_*): a calibration run
at the stated link says whether the first batch fits the budget, and if not the runs are
shortened, never below link.MIN_RUN_S and link.MIN_RUN_RTTS base RTTs.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from .. import analysis, backends
from ..scenario.model import Scenario, split_by_marking
from ..sweeps.executors import LocalExecutor
from .algorithms import ORDER, UNMODELLED_BBR, cc_name, unmodelled_text
from .decision import ALPHA, MARGIN, Decision, sequential_decision
from .errors import RecommendError
from .goals import GOALS, eligible, goal_score
from .link import Link, fmt_axis, neighbourhood, point_at, scenario_dict, validate, with_duration
from .verdict import Recommendation

#: the search backends: where the candidates run (kernel: the simulator searches, the kernel confirms)
SEARCH_BACKENDS = ("sim", "ns3")
#: one repeat costing more than this (s) in-process: use worker processes
WORKERS_ABOVE_S = 0.5
#: loads the backend before the calibration run is timed
_WARM_UP = {
    "name": "warm-up",
    "duration": "1s",
    "bottleneck": {"rate": "10Mbit", "rtt": "10ms"},
    "flows": [{"cc": "reno"}],
}


def run_metrics(raw: Mapping[str, Any], backend: str = "sim", source: str = "recommend") -> dict:
    """Run one scenario and reduce it to the numbers recommend needs (picklable, for workers).
    Group 0 is the user's flows, the other groups the competing traffic."""
    sc = Scenario.from_dict(raw, source=source)
    t0 = time.perf_counter()
    res = backends.run(sc, backend)
    wall = time.perf_counter() - t0
    if not res.ok:
        return {"ok": False, "error": str(res.error), "wall_s": wall}
    rows = res.flows_table.to_pylist()
    mine = [r for r in rows if int(r.get("group") or 0) == 0]
    other = [r for r in rows if int(r.get("group") or 0) != 0]

    def goodput(rs):
        return float(sum((r.get("goodput_bps") or 0.0) for r in rs))

    p95s = [r["rtt_p95_ms"] for r in mine if r.get("rtt_p95_ms") is not None]
    all_gp = [float(r.get("goodput_bps") or 0.0) for r in rows]
    total = goodput(rows)
    return {
        "ok": True,
        "wall_s": wall,
        "goodput_bps": goodput(mine),
        "competing_bps": goodput(other),
        "p95_ms": float(np.mean(p95s)) if p95s else None,
        "share": goodput(mine) / total if other and total > 0 else None,
        "jain": analysis.jain_index(all_gp) if len(all_gp) > 1 else None,
        "retransmits": sum(int(r.get("retransmits") or 0) for r in mine),
        "base_rtt_ms": sc.base_rtt_s * 1e3,
        "rate_bps": float(sc.bottleneck.rate_bps),
    }


class Runner:
    """Runs lists of scenarios in-process or on local worker processes (the sweep's executor)."""

    def __init__(self, backend: str, workers: int, source: str = "recommend"):
        self.backend = backend
        self.workers = max(1, workers)
        self.source = source
        self._ex: Optional[LocalExecutor] = None
        self.runs = 0

    def run(self, raws: list[dict]) -> list[dict]:
        self.runs += len(raws)
        if self.workers == 1 or len(raws) < 4:
            return [run_metrics(r, self.backend, self.source) for r in raws]
        if self._ex is None:
            self._ex = LocalExecutor(self.workers)
        futs = [self._ex.submit_call(run_metrics, r, self.backend, self.source) for r in raws]
        return [f.result() for f in futs]

    def close(self):
        if self._ex is not None:
            self._ex.close()
            self._ex = None


def _candidates(
    backend: str, candidates: Optional[Sequence[str]], notes: list[str], marks_ecn: bool = False
) -> tuple[list[str], str]:
    """The candidates (checked against the search backend) and the search backend. By default
    every algorithm of ORDER the backend runs, those that need ECN marks (NEEDS_MARKING) only where
    the bottleneck ``marks_ecn``."""
    kernel_names: Optional[list[str]] = None
    if backend == "kernel":
        mod = backends.get_backend("kernel")  # BackendUnavailable when it cannot load
        kernel_names = list(mod.available_algorithms())
        search = "sim"
    elif backend in SEARCH_BACKENDS:
        backends.get_backend(backend)
        search = backend
    else:
        backends.get_backend(backend)  # an unknown name: the backends' own error
        raise RecommendError(
            "--backend",
            f"recommend cannot search on '{backend}'",
            "sim, ns3, or kernel (simulator search + kernel confirmation of the top two)",
        )
    names = [a["name"] for a in backends.algorithms(search)]
    default = sorted((c for c in names if c in ORDER), key=lambda c: (ORDER.get(c, 9), c))
    if not candidates:
        default, out = split_by_marking(default, marks_ecn)
        if out:
            notes.append(
                f"not candidates: {', '.join(map(cc_name, out))}, which need a bottleneck that marks ECN "
                "(aqm step or dualpi2, or an AQM with ecn = true); this one does not, and there they only repeat Reno"
            )
    cands = [c.strip().lower() for c in candidates] if candidates else default
    for c in cands:
        if c in UNMODELLED_BBR:
            raise RecommendError("--cc", f"'{c}': {unmodelled_text(c)}", "one of " + ", ".join(names))
        if c not in names:
            raise RecommendError("--cc", f"the {search} backend cannot run '{c}'", "one of " + ", ".join(names))
    if not candidates and search == "ns3":
        more = [c for c in names if c not in default]
        notes.append(
            "candidates: "
            + ", ".join(map(cc_name, default))
            + "; ns-3 also runs "
            + ", ".join(more)
            + " (add them with --cc, e.g. --cc cubic,bbr,hybla)"
        )
    if kernel_names is not None:
        dropped = [c for c in cands if c not in kernel_names]
        cands = [c for c in cands if c in kernel_names]
        if dropped:
            notes.append("not offered by this kernel, so not candidates: " + ", ".join(map(cc_name, dropped)))
    if len(cands) < 1:
        raise RecommendError("--cc", "no candidate algorithm", "at least one algorithm the backend can run")
    return cands, search


def recommend(
    link: Link,
    goal: str = "throughput",
    *,
    backend: str = "sim",
    candidates: Optional[Sequence[str]] = None,
    budget_s: float = 30.0,
    min_repeats: int = 3,
    max_repeats: int = 20,
    batch: int = 2,
    alpha: float = ALPHA,
    margin: float = MARGIN,
    band: Mapping[str, Sequence[float]] | None = None,
    workers: Optional[int] = None,
    seed: int = 1,
    bisect_steps: int = 2,
    confirm_repeats: int = 2,
    progress: Optional[Callable[[str], None]] = None,
) -> Recommendation:
    """Run the candidates over the link's neighbourhood with sequential repeats (module docstring)."""
    if goal not in GOALS:
        raise RecommendError("--goal", f"unknown goal {goal!r}", "one of " + ", ".join(GOALS))
    if not budget_s > 0:
        raise RecommendError("--budget", f"{budget_s:g} s is not positive", "a time such as 30s")
    if max_repeats < min_repeats:
        raise RecommendError(
            "--max-repeats",
            f"{max_repeats} is below the {min_repeats} repeats of the first look",
            f"at least {min_repeats}",
        )
    if workers is not None and workers < 1:
        raise RecommendError("--workers", f"{workers} is not a number of processes", "1 or more")
    t0 = time.perf_counter()
    notes: list[str] = []
    if goal == "fairness" and not link.competing and link.flows < 2:
        link = _with_competing_cubic(link)
        fair_note = (
            "goal fairness without --competing: each candidate shares the link with one CUBIC "
            "flow (Linux's default algorithm)"
        )
    else:
        fair_note = None
    points = neighbourhood(link, band, notes)
    cands, search = _candidates(backend, candidates, notes, validate(link, points[0], "cubic", seed).marks_ecn)
    if fair_note:
        notes.append(fair_note)
    # every variant of every candidate is valid for the backend before anything runs
    for pt in points:
        for cc in cands:
            sc = validate(link, pt, cc, seed)
            try:
                backends.check(sc, search)
            except Exception as e:  # noqa: BLE001 - a ScenarioError or the backend's refusal
                raise _refusal(link, e, "--backend" if search != "sim" else "link") from None
    stated = validate(link, points[0], cands[0], seed)
    if stated.bottleneck.aqm != "droptail" and not link.aqm_params:
        link.aqm_params = dict(stated.aqm_wire)
    if backend == "kernel":  # root, TUN, iperf3, ccbench-link: refused before the search
        try:
            backends.check(stated, "kernel")
        except Exception as e:  # noqa: BLE001
            raise _refusal(link, e, "--backend") from None

    # calibrate: one run of the shortest length at the stated link, after a warm-up run that
    # loads the backend; a run's cost grows with its length (packets carried)
    run_metrics(_WARM_UP, search)
    short = link.min_run_s()
    t = time.perf_counter()
    first_run = run_metrics(scenario_dict(with_duration(link, short), points[0], cands[0], seed), search, link.source)
    if not first_run.get("ok"):
        raise RecommendError(
            "backend", f"the first run on this link failed on the {search} backend: {first_run.get('error')}"
        )
    per_run = (time.perf_counter() - t) * link.run_s / short
    cpus = os.cpu_count() or 1
    if workers is None:
        workers = 1
        if per_run * len(points) * len(cands) > WORKERS_ABOVE_S:
            workers = max(1, min(cpus, 8))
    first = per_run * len(points) * len(cands) * min_repeats / max(1, min(workers, cpus))
    if first > 0.6 * budget_s and link.run_s > link.min_run_s():
        # a fast link: shorter runs so that the first batch fits the budget
        dur = max(link.min_run_s(), link.run_s * 0.6 * budget_s / first)
        dur = math.floor(dur * 10) / 10 if dur >= 1 else dur
        notes.append(
            f"runs shortened from {link.run_s:.3g} s to {dur:.3g} s simulated to fit the "
            f"{budget_s:g} s budget (a {link.run_s:.3g} s run takes about {per_run:.2g} s here)"
        )
        link = with_duration(link, dur)
    runner = Runner(search, workers, link.source)
    metrics: dict = {i: {cc: [] for cc in cands} for i in range(len(points))}
    max_looks = 1 + math.ceil(max(0, max_repeats - min_repeats) / max(1, batch))
    repeats = 0
    look = 0
    decision: Optional[Decision] = None
    stop_reason = ""
    batch_wall = None

    def view() -> Recommendation:
        return Recommendation(
            goal,
            link,
            backend,
            cands,
            points,
            metrics,
            decision or Decision("continue", None, None),
            repeats,
            [],
            [],
            0.0,
            runner.runs,
            budget_s,
            cands,
        )

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
                    raise RecommendError(
                        "backend",
                        f"a {cc_name(cc)} run at {points[i].label} failed on the {search} backend: {m.get('error')}",
                    )
                metrics[i][cc].append(m)
            repeats += n_new
            batch_wall = (time.perf_counter() - tb) / n_new
            look += 1
            v = view()
            elig = eligible(goal, cands, lambda c, v=v: v.pooled(c, "goodput_bps"))
            decision = sequential_decision(
                {c: v.scores(c) for c in elig},
                look=look,
                max_looks=max_looks,
                alpha=alpha,
                margin=margin,
                min_n=min_repeats,
            )
            if progress:
                progress(
                    f"{repeats} repeats: {decision.outcome} ({cc_name(decision.leader)} vs "
                    f"{cc_name(decision.runner_up) if decision.runner_up else '-'})"
                )
            if decision.done:
                stop_reason = {
                    "winner": "separated",
                    "tie": "equivalent within the margin",
                    "single": "one eligible candidate",
                }[decision.outcome]
                break
        v = view()
        elig = eligible(goal, cands, lambda c: v.pooled(c, "goodput_bps"))
        if not decision.done:
            decision = sequential_decision(
                {c: v.scores(c) for c in elig},
                look=look,
                max_looks=max_looks,
                alpha=alpha,
                margin=margin,
                min_n=min_repeats,
                final=True,
            )
        v = view()
        point_decisions = []
        for i in range(len(points)):
            pe = eligible(goal, cands, lambda c, i=i: [m["goodput_bps"] for m in metrics[i][c]])
            point_decisions.append(
                sequential_decision(
                    {c: v.scores(c, i) for c in pe},
                    alpha=alpha,
                    max_looks=len(points),
                    margin=margin,
                    min_n=min_repeats,
                    final=True,
                )
            )
        rec = Recommendation(
            goal,
            link,
            backend,
            cands,
            points,
            metrics,
            decision,
            repeats,
            point_decisions,
            [],
            0.0,
            runner.runs,
            budget_s,
            elig,
            notes,
            stop_reason=stop_reason,
        )
        rec.boundaries = _boundaries(
            rec, runner, seed, alpha, margin, min_repeats, t0, budget_s, batch_wall or 0.0, bisect_steps
        )
    finally:
        runner.close()
    if backend == "kernel":
        rec.kernel = _confirm_on_kernel(rec, seed, confirm_repeats)
    rec.runs = runner.runs
    rec.wall_s = time.perf_counter() - t0
    jr = link.jitter_s / link.rtt_s if link.rtt_s > 0 else 0.0
    if 0.16 <= jr <= 0.24:
        rec.notes.append(
            f"jitter/RTT is {jr * 100:.0f} %: inside seed 002's 'chaos zone' (16-24 %), where "
            f"the answer is known to vary from run to run"
        )
    return rec


def _with_competing_cubic(link: Link) -> Link:
    import dataclasses

    base = link.scenario
    if base is not None:
        base = dict(base)
        base["flows"] = list(base["flows"]) + [{"cc": "cubic", "count": 1}]
    return dataclasses.replace(link, competing=[("cubic", 1)], scenario=base)


def _refusal(link: Link, e: Exception, flag: str) -> RecommendError:
    """A backend's refusal of the user's link, in one line naming the flag."""
    from ..scenario.errors import ScenarioError

    if isinstance(e, RecommendError):
        return e
    if isinstance(e, ScenarioError):
        text = e.problem if e.key is None or e.key == "backend" else f"{e.key}: {e.problem}"
        return RecommendError(flag, text, e.expected)
    return RecommendError(flag, str(e).splitlines()[0] if str(e) else type(e).__name__)


def _label(d: Decision) -> Optional[str]:
    return d.leader if d.outcome in ("winner", "single") else None


def _boundaries(
    rec: Recommendation,
    runner: Runner,
    seed: int,
    alpha: float,
    margin: float,
    min_repeats: int,
    t0: float,
    budget_s: float,
    batch_wall: float,
    steps: int,
) -> list[dict]:
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
            mp = point_at(rec.link, pt.axis, mid)
            raws, keys = [], []
            for r in range(n):
                for cc in rec.candidates:
                    raws.append(scenario_dict(rec.link, mp, cc, seed + r))
                    keys.append(cc)
            res: dict[str, list] = {cc: [] for cc in rec.candidates}
            for cc, m in zip(keys, runner.run(raws)):
                res[cc].append(m)
            pe = eligible(
                rec.goal, rec.candidates, lambda c, res=res: [m["goodput_bps"] for m in res[c] if m.get("ok")]
            )
            md = sequential_decision(
                {c: [goal_score(rec.goal, m) for m in res[c]] for c in pe},
                alpha=alpha,
                margin=margin,
                min_n=min_repeats,
                final=True,
            )
            probes.append(
                {"value": mid, "label": mp.label, "winner": _label(md), "outcome": md.outcome, "leader": md.leader}
            )
            if _label(md) == lo_lab:
                lo_v = mid
            elif _label(md) == hi_lab:
                hi_v = mid
            else:
                break
        out.append(
            {
                "axis": pt.axis,
                "from": stated,
                "to": pt.value(),
                "stated_answer": lo_lab,
                "neighbour_answer": hi_lab,
                "between": sorted([lo_v, hi_v]),
                "probes": probes,
                "text": _boundary_text(pt.axis, lo_lab, hi_lab, lo_v, hi_v),
            }
        )
    return out


def _boundary_text(axis, lo_lab, hi_lab, lo_v, hi_v) -> str:
    a = cc_name(lo_lab) if lo_lab else "a tie"
    b = cc_name(hi_lab) if hi_lab else "a tie"
    x, y = sorted([lo_v, hi_v])
    return f"{axis}: the answer changes from {a} to {b} between {fmt_axis(axis, x)} and {fmt_axis(axis, y)}"


def _confirm_on_kernel(rec: Recommendation, seed: int, repeats: int) -> dict:
    """Run the simulator's top two at the stated link on the kernel backend (root)."""
    top = [c for c in rec.decision.ranking[:2]]
    res: dict[str, list] = {c: [] for c in top}
    for r in range(repeats):
        for cc in top:
            res[cc].append(run_metrics(scenario_dict(rec.link, rec.points[0], cc, seed + r), "kernel", rec.link.source))
    scores = {c: [goal_score(rec.goal, m) for m in v] for c, v in res.items()}
    d = sequential_decision(scores, margin=MARGIN, min_n=2, final=True)
    agree = d.leader == rec.decision.leader
    return {
        "candidates": top,
        "repeats": repeats,
        "score_means": {
            c: (float(np.mean([s for s in v if s is not None])) if any(s is not None for s in v) else None)
            for c, v in scores.items()
        },
        "goodput_mbps": {c: [m.get("goodput_bps", 0) / 1e6 for m in v if m.get("ok")] for c, v in res.items()},
        "p95_rtt_ms": {c: [m.get("p95_ms") for m in v if m.get("ok")] for c, v in res.items()},
        "kernel_leader": d.leader,
        "outcome": d.outcome,
        "agrees": agree,
        "errors": [m.get("error") for v in res.values() for m in v if not m.get("ok")],
    }
