"""``ccbench fit CAPTURE``: calibrate a bottleneck scenario from a capture (docs/fit.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from .errors import EXIT_BAD_INPUT, console, error

__all__ = ["register", "fit_command", "print_fit"]


def print_fit(fit, out=None) -> None:
    from rich.table import Table

    from ..fit.estimate import value_text

    out = out or console
    t = Table(title=f"fitted link: flow {fit.flow}, {fit.duration_s:.1f} s")
    for col in ("parameter", "estimate", "interval", "evidence"):
        t.add_column(col, overflow="fold")
    for e in fit.estimates():
        hi = "∞" if e.hi is None and e.value is not None else value_text(e.hi, e.unit)
        t.add_row(e.name, value_text(e.value, e.unit), f"{value_text(e.lo, e.unit)} – {hi}", e.evidence)
    lf = fit.loss
    model = lf.model if lf.model != "gilbert" else f"gilbert (p {lf.p * 100:.3f} %, r {lf.r * 100:.1f} %)"
    t.add_row("loss model", model, f"LR p-value {lf.lr_pvalue:.2g}", "Gilbert vs Bernoulli likelihood ratio")
    out.print(t)


def _fit(measured: Path, flow: Optional[str], ping: Optional[Path], check: bool):
    """A capture's fit, or iperf3 JSON's with the ping (told apart by content)."""
    from ..fit import FitError, fit_capture
    from ..fit.iperf import fit_iperf3_file, is_json

    if not is_json(measured):
        if ping is not None:
            raise FitError("--ping goes with iperf3 JSON: a capture's fit has its own RTT, jitter and loss")
        return fit_capture(measured, flow)
    if flow is not None or check:
        raise FitError(f"{measured} is iperf3 JSON: --flow and --check need a capture")
    if ping is None:
        raise FitError(f"{measured} is iperf3 JSON, which holds no base RTT, jitter or random loss: give --ping FILE")
    from ..pingparse import PingParseError, parse_ping_file

    try:
        est = parse_ping_file(ping)
    except PingParseError as e:
        raise FitError(f"--ping: {e}") from None
    return fit_iperf3_file(measured, est)


def fit_command(
    capture: Path = typer.Argument(
        ...,
        help="pcap or pcapng capture of one TCP bulk transfer, taken at the sender; or iperf3 -J output (with --ping).",
    ),
    flow: Optional[str] = typer.Option(None, "--flow", help="The flow to fit, HOST:PORT-HOST:PORT (either order)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write the fitted scenario TOML here."),
    as_json: bool = typer.Option(False, "--json", help="Print the estimates as JSON."),
    check: bool = typer.Option(
        False, "--check", help="Replay the fitted scenario on the simulator with CUBIC and compare with the capture."
    ),
    ping: Optional[Path] = typer.Option(
        None, "--ping", metavar="FILE", help="With iperf3 JSON: a saved ping of the same path (base RTT, jitter, loss)."
    ),
):
    """Estimate a bottleneck (rate, base RTT, buffer, loss and its burstiness, jitter) from a
    sender-side capture of one TCP bulk transfer, or from iperf3's JSON output and a saved ping,
    and write it as a scenario."""
    from ..fit import FitError
    from ..fit.scenario_toml import scenario_toml

    try:
        fit = _fit(capture, flow, ping, check)
    except FitError as e:
        raise error(str(e), EXIT_BAD_INPUT) from None
    except OSError as e:
        raise error(f"{capture}: {e.strerror or e}", EXIT_BAD_INPUT) from None
    text = scenario_toml(fit, str(capture))
    if out is not None:
        out.write_text(text)
    if as_json:
        print(json.dumps(fit.to_json(), indent=2))
    else:
        print_fit(fit)
        if out is not None:
            console.print(f"scenario written to {out}", highlight=False)
    if check:
        from ..fit.check import check_fit, print_check

        try:
            rows, verdict = check_fit(capture, fit, text, flow)
        except FitError as e:
            raise error(str(e), EXIT_BAD_INPUT) from None
        print_check(rows, verdict, console)


def register(app: typer.Typer) -> None:
    app.command("fit")(fit_command)
