"""``ccbench recommend`` (registered into cli.py's typer app). See docs/recommend.md."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Optional

import typer

__all__ = ["register", "recommend_command", "print_recommendation"]


def _round(x: float, digits: int = 4) -> float:
    """``digits`` significant digits: what a repeated measurement supports (a p-value or a
    rate keeps its magnitude; 43.61803 -> 43.62)."""
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def _clean(x):
    """The document JSON can hold (results.schema.json_safe), floats to 4 significant digits
    (whole floats such as a rate in bit/s stay exact)."""
    from ..results.schema import json_safe  # pyarrow: loaded by --json only, not at every start-up

    x = json_safe(x)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    if isinstance(x, float):
        return x if x.is_integer() else _round(x)
    return x


def _num(x: float, spec: str) -> str:
    """``spec``, but a ``g`` format keeps whole digits from 1000 up (1170, not 1.17e+03)."""
    if spec.endswith("g") and abs(x) >= 1000:
        return f"{x:.0f}"
    return format(x, spec)


def _ci(c, spec=".1f", scale=1.0) -> str:
    if not c or c.get("mean") is None:
        return "–"
    m = _num(c["mean"] * scale, spec)
    if c.get("lo") is None or c.get("hi") is None:
        return m
    lo, hi = sorted((c["lo"] * scale, c["hi"] * scale))
    mean = c["mean"] * scale
    if abs((hi - mean) - (mean - lo)) <= 1e-9 * max(1.0, abs(mean)):  # a t interval: symmetric
        return f"{m} ±{_num((hi - lo) / 2, spec)}"
    return f"{m} ({_num(lo, spec)}–{_num(hi, spec)})"  # cut at the quantity's range


def print_recommendation(rec, console) -> None:
    from rich.table import Table

    from ..recommend import GOAL_TEXT, cc_name
    from ..recommend.verdict import ratio_text

    doc = rec.to_json()
    us = rec.link.rtt_s < 1e-3  # a data-centre RTT: delays in µs
    dunit, dscale = ("µs", 1e3) if us else ("ms", 1.0)
    console.print(f"[bold]link[/]: {rec.link.describe()}; backend {rec.backend}", highlight=False, soft_wrap=True)
    console.print(f"[bold]goal[/]: {GOAL_TEXT[rec.goal]}", highlight=False, soft_wrap=True)
    for n in rec.notes:
        console.print(f"note: {n}", style="yellow", highlight=False, soft_wrap=True)
    style = "bold green" if doc["recommendation"] else "bold yellow"
    console.print(rec.headline(), style=style, highlight=False, soft_wrap=True)
    console.print(f"[bold]how sure[/]: {rec.confidence_text()}", highlight=False, soft_wrap=True)

    nv = len(rec.points)
    t = Table(
        title=f"evidence: mean over the {nv} link variant{'s' if nv != 1 else ''}, "
        f"± the 95 % interval (cut at 0: lo–hi) over "
        f"{rec.repeats} repeats (CV: goodput across repeats at the stated link)",
        title_justify="left",
    )
    has_comp = bool(rec.link.competing)
    cols = ["cc", "goodput Mbit/s", f"p95 RTT {dunit}", "p95/base", "CV %"]
    if has_comp:
        cols += ["share of link %", "Jain"]
    elif rec.link.flows > 1:
        cols += ["Jain"]
    lat = rec.goal == "latency"  # scores are minus the p95 RTT: shown as the p95 RTT itself
    cols += [f"score (latency)\n= p95 RTT {dunit}" if lat else f"score ({rec.goal})"]
    for c in cols:
        t.add_column(c, justify="left" if c == "cc" else "right")
    for _i, row in enumerate(doc["evidence"]):
        name = cc_name(row["cc"]) + ("" if row["eligible"] else " (not eligible)")
        if row["cc"] == doc["leader"]:
            name += " *"
        cells = [
            name,
            _ci(row["goodput_mbps"], ".2f"),
            _ci(row["p95_rtt_ms"], ".3g", dscale),
            "–" if row["p95_over_base"] is None else f"{row['p95_over_base']:.1f}×",
            "–" if row["cv_pct"] is None else f"{row['cv_pct']:.1f}",
        ]
        if has_comp:
            cells += [_ci(row["share"], ".0f", 100.0), _ci(row["jain"], ".2f")]
        elif rec.link.flows > 1:
            cells += [_ci(row["jain"], ".2f")]
        sc = row["score"]
        if lat and sc and sc.get("mean") is not None:
            sc = {
                "mean": -sc["mean"],
                "lo": None if sc["hi"] is None else -sc["hi"],
                "hi": None if sc["lo"] is None else -sc["lo"],
            }
        cells.append(_ci(sc, ".3g", dscale if lat else 1.0))
        t.add_row(*cells)
    console.print(t)

    nb = Table(
        title="neighbourhood: the goal score per link variant"
        + (f" (p95 RTT {dunit}, lower is better)" if lat else "")
        + " (your figures are estimates)",
        title_justify="left",
    )
    nb.add_column("link variant")
    for cc in rec.candidates:
        nb.add_column(cc_name(cc), justify="right")
    nb.add_column("answer here")
    for p in doc["neighbourhood"]:
        d = p["decision"]
        means = p["score_means"]
        if d["outcome"] == "winner" and means.get(d["leader"]) is not None and means.get(d["runner_up"]) is not None:
            ans = f"{cc_name(d['leader'])} ({ratio_text(rec.goal, means[d['leader']], means[d['runner_up']])})"
        elif d["outcome"] in ("winner", "single"):
            ans = cc_name(d["leader"])
        elif d["outcome"] == "tie":
            ans = "tie"
        else:
            ans = f"not separated ({cc_name(d['leader'])} ahead)"
        sign = -dscale if lat else 1.0
        nb.add_row(
            p["label"],
            *[
                "–" if p["score_means"].get(cc) is None else _num(sign * p["score_means"][cc], ".3g")
                for cc in rec.candidates
            ],
            ans,
        )
    console.print(nb)
    flips = doc["flips"]
    real = [f for f in flips if f["winner"]]
    for f in flips:
        if f["winner"]:
            console.print(
                f"[bold yellow]the answer flips[/] at {f['point']}: {cc_name(f['winner'])} wins there",
                highlight=False,
                soft_wrap=True,
            )
        else:
            console.print(
                f"weaker at {f['point']}: {cc_name(f['leader'])} nominally ahead there, not separated ({f['outcome']})",
                highlight=False,
                soft_wrap=True,
            )
    for b in doc["boundaries"]:
        console.print(f"  boundary: {b['text']}", highlight=False, soft_wrap=True)
    if real:
        console.print(
            "  your link is near a boundary between answers (seed 002's 'chaos zone'): measure the "
            "figure that flips it more precisely, or pick the algorithm that is safe on both sides.",
            highlight=False,
            soft_wrap=True,
        )
    elif not flips:
        console.print("the answer is the same across the neighbourhood (no flip)", highlight=False)
    for line in doc["fairness"]:
        console.print(f"fairness: {line}", highlight=False, soft_wrap=True)
    for line in doc["delay"]:
        console.print(f"delay: {line}", highlight=False, soft_wrap=True)
    if doc["kernel"]:
        k = doc["kernel"]
        means = ", ".join(f"{cc_name(c)} {v:.3g}" for c, v in k["score_means"].items() if v is not None)
        console.print(
            f"kernel confirmation ({k['repeats']} runs each at the stated link): {means}; "
            f"{'agrees' if k['agrees'] else 'DISAGREES'} with the simulator's order "
            f"({k['outcome']})",
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        f"{doc['runs']} runs, {doc['repeats']} repeats, {doc['wall_s']:.1f} s (budget {doc['budget_s']:g} s; "
        f"stopped: {doc['stop_reason']})",
        style="dim",
        highlight=False,
        soft_wrap=True,
    )


def _read_ping(ping: Path):
    """The pingparse estimate of a saved ping; a problem is a one-line RecommendError."""
    from ..pingparse import PingParseError, parse_ping_file
    from ..recommend import RecommendError

    try:
        return parse_ping_file(ping)
    except PingParseError as e:
        raise RecommendError("--ping", str(e), "the saved output of iputils ping") from None


def _fit(measured: Path, ping: Optional[Path]):
    """The fit of ``--from``: a capture (ccbench fit), or iperf3's JSON output with a saved ping
    (fit/iperf.py), told apart by content. Returns (fit, the ping estimate or None)."""
    from ..fit import FitError, fit_capture
    from ..fit.iperf import fit_iperf3_file, is_json
    from ..recommend import RecommendError

    try:
        if not is_json(measured):
            if ping is not None:
                raise RecommendError(
                    "--ping",
                    "--from and --scenario/--ping both describe the link (a capture's fit has its own RTT, "
                    "jitter and loss; --ping goes with iperf3 JSON)",
                    "one of them",
                )
            return fit_capture(measured), None
        if ping is None:
            raise RecommendError(
                "--ping",
                f"{measured} is iperf3 JSON, which holds no base RTT, jitter or random loss",
                "--ping FILE: a saved ping of the same path",
            )
        est = _read_ping(ping)
        return fit_iperf3_file(measured, est), est
    except FitError as e:
        raise RecommendError(
            "--from", str(e), "a sender-side pcap or pcapng of one TCP bulk transfer, or iperf3 -J output with --ping"
        ) from None
    except OSError as e:
        raise RecommendError("--from", f"{measured}: {e.strerror or e}", "a readable file") from None


def _fitted_scenario(measured: Path, fit) -> Path:
    """The scenario ``ccbench fit`` makes of ``fit``, written to a temporary file (removed at
    exit)."""
    import atexit
    import os
    import tempfile

    from ..fit.scenario_toml import scenario_toml

    fd, name = tempfile.mkstemp(prefix="ccbench-fit-", suffix=".toml")
    with os.fdopen(fd, "w") as f:
        f.write(scenario_toml(fit, str(measured)))
    atexit.register(lambda: os.path.exists(name) and os.unlink(name))
    return Path(name)


def recommend_command(
    rate: Optional[str] = typer.Option(
        None, "--rate", help="Bottleneck rate, 100kbit to 10Gbit, e.g. 50Mbit (with --ping: default 50Mbit)."
    ),
    rtt: Optional[str] = typer.Option(
        None, "--rtt", help="Base round-trip time, 100us to 1s, e.g. 50ms (or from --ping)."
    ),
    loss: Optional[str] = typer.Option(
        None, "--loss", help="Random loss on data packets, 0% to 20%, e.g. 0.5% (default 0)."
    ),
    jitter: Optional[str] = typer.Option(
        None, "--jitter", help="± per-packet delay variation, up to half the RTT, e.g. 5ms (default 0)."
    ),
    reorder: Optional[str] = typer.Option(
        None,
        "--reorder",
        metavar="BOOL",
        help="true (default): jitter reorders packets, as netem does; "
        "false: packets keep their order (queueing-like delay variation).",
    ),
    buffer: Optional[str] = typer.Option(
        None, "--buffer", help="Bottleneck buffer, 0.1 to 100 BDP: 1bdp (default), 0.5bdp, 100pkt, 256KB."
    ),
    aqm: Optional[str] = typer.Option(
        None,
        "--aqm",
        help="Queue discipline at the bottleneck: droptail (default), codel, fq_codel, pie, red or fq "
        "(docs/scenario.md; the kernel backend serves the same disciplines in ccbench-link).",
    ),
    flows: Optional[int] = typer.Option(
        None, "--flows", help="Your parallel connections, 1 to 100, all of the candidate algorithm (default 1)."
    ),
    competing: Optional[str] = typer.Option(
        None, "--competing", help="Other traffic sharing the bottleneck: cubic, 2xcubic, cubic,bbr."
    ),
    scenario: Optional[Path] = typer.Option(
        None,
        "--scenario",
        metavar="FILE",
        help="Take the link from a scenario file (Wi-Fi hop, trace, AQM, access links, competing flows): "
        "its first [[flows]] group is your flows, the others compete. Flags given beside it override its values.",
    ),
    capture: Optional[Path] = typer.Option(
        None,
        "--from",
        metavar="CAPTURE",
        help="Fit the link from a sender-side capture of one TCP bulk transfer (ccbench fit, docs/fit.md), "
        "or from iperf3 -J output with --ping, then recommend over the fitted link and the ends of the "
        "fit's intervals. Flags given beside it override the fitted values.",
    ),
    goal: str = typer.Option("throughput", "--goal", help="throughput | latency | balanced | fairness."),
    backend: str = typer.Option(
        "sim",
        "--backend",
        "-b",
        help="sim; ns3 (the search runs on ns-3, which also has hybla, dctcp, westwood, ...); "
        "or kernel (root): simulator search, then the top two confirmed on the kernel.",
    ),
    budget: str = typer.Option("30s", "--budget", help="Wall-time budget for the search."),
    ping: Optional[Path] = typer.Option(
        None, "--ping", metavar="FILE", help="Saved output of iputils ping (or ping -D): base RTT, jitter, loss."
    ),
    cc: Optional[str] = typer.Option(
        None,
        "--cc",
        help="Candidates, e.g. cubic,bbr (default: CUBIC, BBR v1 and v3, Reno, Vegas, and DCTCP and "
        "Prague where the bottleneck marks ECN).",
    ),
    duration: Optional[str] = typer.Option(
        None, "--duration", help="Simulated length of each run (default 15s, or 30 base RTTs when longer)."
    ),
    max_repeats: int = typer.Option(
        20, "--max-repeats", help="Cap on repeats per candidate and link variant (at least 3)."
    ),
    workers: Optional[int] = typer.Option(
        None, "--workers", "-j", help="Local processes (default: in-process when runs are quick)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON (schema: docs/recommend.md)."),
):
    """Which congestion control for this link? Runs the candidates over your link and its
    neighbourhood with sequential repeats and prints the recommendation, the runner-up, the
    evidence and how sure it is.

    Example: ccbench recommend --rate 50Mbit --rtt 50ms --loss 0.5% --goal throughput
    """
    from rich.console import Console

    from .. import units
    from ..recommend import GOALS, RecommendError, link_from_options, link_from_scenario, recommend
    from ..recommend.fitband import with_fit_intervals
    from ..scenario.errors import ScenarioError
    from .errors import EXIT_BAD_INPUT, error

    console = Console()
    err = Console(stderr=True)
    est = None
    fit = None
    try:
        if goal not in GOALS:
            raise RecommendError("--goal", f"unknown goal {goal!r}", "one of " + ", ".join(GOALS))
        try:
            budget_s = units.parse_time(budget)
        except ValueError as e:
            raise RecommendError("--budget", f"{budget!r}: {getattr(e, 'problem', e)}", units.TIME_FORM) from None
        figures = dict(
            rate=rate,
            rtt=rtt,
            loss=loss,
            jitter=jitter,
            buffer=buffer,
            aqm=aqm,
            flows=flows,
            competing=competing,
            duration=duration,
            reorder=reorder,
        )
        if capture is not None:
            if scenario is not None:
                raise RecommendError("--from", "--from and --scenario both describe the link", "one of them")
            fit, est = _fit(capture, ping)
            link, notes = link_from_scenario(_fitted_scenario(capture, fit), **figures)
            link, band_notes = with_fit_intervals(link, fit, f"the fit of {capture.name}")
            notes += band_notes
        elif scenario is not None:
            if ping is not None:
                raise RecommendError(
                    "--ping",
                    "--ping and --scenario both describe the link",
                    "one of them (the file can hold what the ping measured)",
                )
            link, notes = link_from_scenario(scenario, **figures)
        else:
            if ping is not None:
                est = _read_ping(ping)
            link, notes = link_from_options(**figures, ping=est)
        cands = [c.strip().lower() for c in cc.split(",") if c.strip()] if cc else None
        progress = None if as_json else (lambda s: err.print(f"  {s}", style="dim", highlight=False))
        rec = recommend(
            link,
            goal,
            backend=backend,
            candidates=cands,
            budget_s=budget_s,
            workers=workers,
            max_repeats=max_repeats,
            progress=progress,
        )
        rec.notes[:0] = notes
    except ScenarioError as e:
        raise error(str(e), EXIT_BAD_INPUT) from None
    if as_json:
        doc = _clean(rec.to_json())
        if est is not None:
            doc["ping"] = _clean(est.as_dict())
        if fit is not None:
            doc["fit"] = _clean(fit.to_json())
        sys.stdout.write(json.dumps(doc, allow_nan=False) + "\n")
        return
    print_recommendation(rec, console)


def register(app: typer.Typer) -> None:
    app.command("recommend")(recommend_command)
