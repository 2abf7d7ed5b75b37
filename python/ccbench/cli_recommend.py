"""``ccbench recommend`` (registered into cli.py's typer app). See docs/recommend.md."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Optional

import typer

__all__ = ["register", "recommend_command", "print_recommendation"]


def _clean(x):
    """JSON-safe: NaN/inf -> None, numpy scalars -> Python."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _ci(c, spec=".1f", scale=1.0) -> str:
    if not c or c.get("mean") is None:
        return "–"
    m = format(c["mean"] * scale, spec)
    if c.get("lo") is None or c.get("hi") is None:
        return m
    return f"{m} ±{format((c['hi'] - c['lo']) / 2 * scale, spec)}"   # t interval: symmetric


def print_recommendation(rec, console) -> None:
    from rich.table import Table

    from .recommend import GOAL_TEXT, cc_name

    doc = rec.to_json()
    console.print(f"[bold]link[/]: {rec.link.describe()}; backend {rec.backend}", highlight=False, soft_wrap=True)
    console.print(f"[bold]goal[/]: {GOAL_TEXT[rec.goal]}", highlight=False, soft_wrap=True)
    for n in rec.notes:
        console.print(f"note: {n}", style="yellow", highlight=False, soft_wrap=True)
    style = "bold green" if doc["recommendation"] else "bold yellow"
    console.print(rec.headline(), style=style, highlight=False, soft_wrap=True)
    console.print(f"[bold]how sure[/]: {rec.confidence_text()}", highlight=False, soft_wrap=True)

    t = Table(title=f"evidence: mean over the {len(rec.points)} link variants, ± the 95 % interval over "
                    f"{rec.repeats} repeats (CV: goodput across repeats at the stated link)",
              title_justify="left")
    has_comp = bool(rec.link.competing)
    cols = ["cc", "goodput Mbit/s", "p95 RTT ms", "p95/base", "CV %"]
    if has_comp:
        cols += ["share of link %", "Jain"]
    elif rec.link.flows > 1:
        cols += ["Jain"]
    lat = rec.goal == "latency"   # scores are minus the p95 RTT: shown as the p95 RTT itself
    cols += ["score (latency)\n= p95 RTT ms" if lat else f"score ({rec.goal})"]
    for c in cols:
        t.add_column(c, justify="left" if c == "cc" else "right")
    for i, row in enumerate(doc["evidence"]):
        name = cc_name(row["cc"]) + ("" if row["eligible"] else " (not eligible)")
        if row["cc"] == doc["leader"]:
            name += " *"
        cells = [name, _ci(row["goodput_mbps"], ".2f"), _ci(row["p95_rtt_ms"], ".0f"),
                 "–" if row["p95_over_base"] is None else f"{row['p95_over_base']:.1f}×",
                 "–" if row["cv_pct"] is None else f"{row['cv_pct']:.1f}"]
        if has_comp:
            cells += [_ci(row["share"], ".0f", 100.0), _ci(row["jain"], ".2f")]
        elif rec.link.flows > 1:
            cells += [_ci(row["jain"], ".2f")]
        sc = row["score"]
        if lat and sc and sc.get("mean") is not None:
            sc = {"mean": -sc["mean"], "lo": None if sc["hi"] is None else -sc["hi"],
                  "hi": None if sc["lo"] is None else -sc["lo"]}
        cells.append(_ci(sc, ".3g"))
        t.add_row(*cells)
    console.print(t)

    nb = Table(title="neighbourhood: the goal score per link variant"
                     + (" (p95 RTT ms, lower is better)" if lat else "") + " (your figures are estimates)",
               title_justify="left")
    nb.add_column("link variant")
    for cc in rec.candidates:
        nb.add_column(cc_name(cc), justify="right")
    nb.add_column("answer here")
    for p in doc["neighbourhood"]:
        d = p["decision"]
        if d["outcome"] in ("winner", "single"):
            ans = f"{cc_name(d['leader'])} (+{(d['rel_diff'] or 0) * 100:.0f} %)"
        elif d["outcome"] == "tie":
            ans = "tie"
        else:
            ans = f"not separated ({cc_name(d['leader'])} ahead)"
        sign = -1.0 if lat else 1.0
        nb.add_row(p["label"], *["–" if p["score_means"].get(cc) is None else f"{sign * p['score_means'][cc]:.3g}"
                                 for cc in rec.candidates], ans)
    console.print(nb)
    flips = doc["flips"]
    real = [f for f in flips if f["winner"]]
    for f in flips:
        if f["winner"]:
            console.print(f"[bold yellow]the answer flips[/] at {f['point']}: {cc_name(f['winner'])} wins there",
                          highlight=False, soft_wrap=True)
        else:
            console.print(f"weaker at {f['point']}: {cc_name(f['leader'])} nominally ahead there, not separated "
                          f"({f['outcome']})",
                          highlight=False, soft_wrap=True)
    for b in doc["boundaries"]:
        console.print(f"  boundary: {b['text']}", highlight=False, soft_wrap=True)
    if real:
        console.print("  your link is near a boundary between answers (seed 002's 'chaos zone'): measure the "
                      "figure that flips it more precisely, or pick the algorithm that is safe on both sides.",
                      highlight=False, soft_wrap=True)
    elif not flips:
        console.print("the answer is the same across the neighbourhood (no flip)", highlight=False)
    for line in doc["fairness"]:
        console.print(f"fairness: {line}", highlight=False, soft_wrap=True)
    for line in doc["delay"]:
        console.print(f"delay: {line}", highlight=False, soft_wrap=True)
    if doc["kernel"]:
        k = doc["kernel"]
        means = ", ".join(f"{cc_name(c)} {v:.3g}" for c, v in k["score_means"].items() if v is not None)
        console.print(f"kernel confirmation ({k['repeats']} runs each at the stated link): {means}; "
                      f"{'agrees' if k['agrees'] else 'DISAGREES'} with the simulator's order "
                      f"({k['outcome']})", highlight=False, soft_wrap=True)
    console.print(f"{doc['runs']} runs, {doc['repeats']} repeats, {doc['wall_s']:.1f} s (budget {doc['budget_s']:g} s; "
                  f"stopped: {doc['stop_reason']})", style="dim", highlight=False, soft_wrap=True)


def recommend_command(
    rate: Optional[str] = typer.Option(None, "--rate", help="Bottleneck rate, e.g. 50Mbit (with --ping: default 50Mbit)."),
    rtt: Optional[str] = typer.Option(None, "--rtt", help="Base round-trip time, e.g. 50ms (or from --ping)."),
    loss: Optional[str] = typer.Option(None, "--loss", help="Random loss on data packets, e.g. 0.5% (default 0)."),
    jitter: Optional[str] = typer.Option(None, "--jitter", help="± per-packet delay variation, e.g. 5ms (default 0)."),
    buffer: str = typer.Option("1bdp", "--buffer", help="Bottleneck buffer: 1bdp, 0.5bdp, 100pkt, 256KB."),
    aqm: str = typer.Option("droptail", "--aqm", help="Queue discipline at the bottleneck: droptail, codel, fq_codel, pie, red or fq (docs/scenario.md; the kernel backend runs droptail only)."),
    flows: int = typer.Option(1, "--flows", help="Your parallel connections (all of the candidate algorithm)."),
    competing: Optional[str] = typer.Option(
        None, "--competing", help="Other traffic sharing the bottleneck: cubic, 2xcubic, cubic,bbr."),
    goal: str = typer.Option("throughput", "--goal", help="throughput | latency | balanced | fairness."),
    backend: str = typer.Option("sim", "--backend", "-b",
                                help="sim, or kernel (root): simulator search, then the top two confirmed on the kernel."),
    budget: str = typer.Option("30s", "--budget", help="Wall-time budget for the simulator search."),
    ping: Optional[Path] = typer.Option(None, "--ping", metavar="FILE",
                                        help="Saved output of iputils ping (or ping -D): base RTT, jitter, loss."),
    cc: Optional[str] = typer.Option(None, "--cc", help="Candidates, e.g. cubic,bbr (default: all the backend has)."),
    duration: str = typer.Option("15s", "--duration", help="Simulated length of each run."),
    max_repeats: int = typer.Option(20, "--max-repeats", help="Cap on repeats per candidate and link variant."),
    workers: Optional[int] = typer.Option(None, "--workers", "-j",
                                          help="Local processes (default: in-process when runs are quick)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON (schema: docs/recommend.md)."),
):
    """Which congestion control for this link? Runs the candidates over your link and its
    neighbourhood with sequential repeats and prints the recommendation, the runner-up, the
    evidence and how sure it is.

    Example: ccbench recommend --rate 50Mbit --rtt 50ms --loss 0.5% --goal throughput
    """
    from rich.console import Console

    from . import units
    from .cli import EXIT_BAD_INPUT, error
    from .recommend import GOALS, RecommendError, link_from_options, recommend
    from .scenario import ScenarioError

    console = Console()
    err = Console(stderr=True)
    try:
        if goal not in GOALS:
            raise RecommendError("--goal", f"unknown goal {goal!r}", "one of " + ", ".join(GOALS))
        est = None
        if ping is not None:
            from .pingparse import PingParseError, parse_ping_file

            try:
                est = parse_ping_file(ping)
            except PingParseError as e:
                raise RecommendError("--ping", str(e), "the saved output of iputils ping") from None
        try:
            budget_s = units.parse_time(budget)
        except ValueError as e:
            raise RecommendError("--budget", f"{budget!r}: {getattr(e, 'problem', e)}", units.TIME_FORM) from None
        link, notes = link_from_options(rate=rate, rtt=rtt, loss=loss, jitter=jitter, buffer=buffer, aqm=aqm,
                                        flows=flows, competing=competing, duration=duration, ping=est)
        cands = [c.strip().lower() for c in cc.split(",") if c.strip()] if cc else None
        progress = None if as_json else (lambda s: err.print(f"  {s}", style="dim", highlight=False))
        rec = recommend(link, goal, backend=backend, candidates=cands, budget_s=budget_s, workers=workers,
                        max_repeats=max_repeats, progress=progress)
        rec.notes[:0] = notes
    except ScenarioError as e:
        raise error(str(e), EXIT_BAD_INPUT)
    if as_json:
        doc = _clean(rec.to_json())
        if est is not None:
            doc["ping"] = _clean(est.as_dict())
        sys.stdout.write(json.dumps(doc, allow_nan=False) + "\n")
        return
    print_recommendation(rec, console)


def register(app: typer.Typer) -> None:
    app.command("recommend")(recommend_command)
