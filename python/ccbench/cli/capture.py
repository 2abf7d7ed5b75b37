"""``ccbench capture SERVER``: upload to an iperf3 server while tcpdump captures at this host,
then fit the capture (docs/fit.md). Needs root, tcpdump, iperf3 and `iperf3 -s` on SERVER."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .errors import EXIT_BAD_INPUT, EXIT_RUN_FAILED, console, error

__all__ = ["register", "capture_command"]


def capture_command(
    server: str = typer.Argument(..., help="Host running an iperf3 server (`iperf3 -s`): the far end of the link."),
    port: int = typer.Option(5201, "--port", "-p", help="The iperf3 server's port."),
    duration: str = typer.Option("20s", "--duration", "-t", help="How long to upload, e.g. 20s."),
    out: Path = typer.Option(Path("capture.pcap"), "--out", "-o", help="Where tcpdump writes the capture."),
    fit_out: Optional[Path] = typer.Option(None, "--fit", help="Also write the fitted scenario TOML here."),
):
    """Capture an iperf3 upload to SERVER at this host (the sender) and fit the link it crossed.

    The far end must run an iperf3 server: start `iperf3 -s` there first.

    Needs root: tcpdump, and `ethtool -K` to turn TSO/GSO off on the route's interface during
    the capture (put back after)."""
    from ..fit import FitError, fit_capture
    from ..fit.scenario_toml import scenario_toml
    from ..livecapture.upload import CaptureError, capture_upload
    from ..units import UnitError, parse_time
    from .fit import print_fit

    try:
        seconds = parse_time(duration)
    except UnitError as e:
        raise error(f"--duration: {e}", EXIT_BAD_INPUT) from None
    if seconds < 2:
        raise error(f"--duration: {duration} is too short to fit (at least 2s; 20s is the default)", EXIT_BAD_INPUT)
    console.print(f"uploading to {server}:{port} for {seconds:g} s, capturing to {out} ...", highlight=False)
    try:
        up = capture_upload(server, port, seconds, out)
    except CaptureError as e:
        raise error(str(e), EXIT_RUN_FAILED) from None
    note = f", {' and '.join(up.offloads_changed)} off during the capture" if up.offloads_changed else ""
    console.print(f"captured on {up.interface} ({up.address}){note}", highlight=False)
    if up.dropped_by_kernel:
        console.print(f"warning: tcpdump reports {up.dropped_by_kernel} packets dropped by the kernel", style="yellow")
    try:
        fit = fit_capture(out)
    except FitError as e:
        raise error(f"{out}: {e}", EXIT_RUN_FAILED) from None
    print_fit(fit)
    if fit_out is not None:
        fit_out.write_text(scenario_toml(fit, str(out)))
        console.print(f"scenario written to {fit_out}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("capture")(capture_command)
