"""``ccbench fit --check``: replay the fitted scenario on the simulator with CUBIC and compare
what its capture shows with the original capture: goodput, the RTT distribution and the
retransmission rate. A replay "misses" when a figure is off by more than its tolerance."""

from __future__ import annotations

import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .capture import FitError, read_packets, select_flow
from .replay import simulate_capture
from .timeline import Timeline, build_timeline

__all__ = ["capture_stats", "check_fit", "print_check", "Row"]

#: Longest replay (s): a long capture is compared with its first minute's worth of simulation.
MAX_REPLAY_S = 60.0


@dataclass(frozen=True)
class Row:
    name: str
    capture: float
    replay: float
    unit: str
    #: Allowed difference: relative, plus an absolute floor in the row's unit.
    rel_tol: float
    abs_tol: float

    @property
    def ok(self) -> bool:
        return abs(self.replay - self.capture) <= max(self.rel_tol * abs(self.capture), self.abs_tol)


def capture_stats(tl: Timeline) -> dict:
    span = float(tl.ack_t[-1] - tl.ack_t[0]) if len(tl.ack_t) > 1 else 0.0
    goodput = float(tl.delivered[-1]) * 8 / span if span > 0 else 0.0
    p10, p50, p90 = np.percentile(tl.rtt_s, [10, 50, 90])
    return {
        "goodput_bps": goodput,
        "rtt_p10_s": float(p10),
        "rtt_p50_s": float(p50),
        "rtt_p90_s": float(p90),
        "retx_fraction": float(tl.tx_retx.mean()) if len(tl.tx_retx) else 0.0,
    }


def check_fit(capture: Path, fit, toml_text: str, flow: str | None = None) -> tuple[list[Row], str]:
    orig = capture_stats(build_timeline(select_flow(read_packets(Path(capture)), flow)))
    scenario = tomllib.loads(toml_text)
    scenario["duration"] = f"{min(max(fit.duration_s, 5.0), MAX_REPLAY_S):g}s"
    with tempfile.TemporaryDirectory(prefix="ccbench-fit-") as tmp:
        pcap = Path(tmp) / "replay.pcap"
        try:
            simulate_capture(scenario, pcap)
        except RuntimeError as e:
            raise FitError(f"replay failed: {e}") from None
        rep = capture_stats(build_timeline(select_flow(read_packets(pcap))))
    rows = [
        Row("goodput (Mbit/s)", orig["goodput_bps"] / 1e6, rep["goodput_bps"] / 1e6, "Mbit/s", 0.10, 0.1),
        Row("RTT p10 (ms)", orig["rtt_p10_s"] * 1e3, rep["rtt_p10_s"] * 1e3, "ms", 0.10, 2.0),
        Row("RTT p50 (ms)", orig["rtt_p50_s"] * 1e3, rep["rtt_p50_s"] * 1e3, "ms", 0.15, 2.0),
        Row("RTT p90 (ms)", orig["rtt_p90_s"] * 1e3, rep["rtt_p90_s"] * 1e3, "ms", 0.20, 3.0),
        Row("retransmitted (%)", orig["retx_fraction"] * 100, rep["retx_fraction"] * 100, "%", 0.30, 0.05),
    ]
    missed = [r.name for r in rows if not r.ok]
    verdict = "the replay matches the capture" if not missed else "the replay misses: " + ", ".join(missed)
    return rows, verdict


def print_check(rows: list[Row], verdict: str, console) -> None:
    from rich.table import Table

    t = Table(title="replay of the fitted scenario (simulator, CUBIC) vs the capture")
    for col in ("figure", "capture", "replay", "tolerance", "ok"):
        t.add_column(col)
    for r in rows:
        t.add_row(
            r.name,
            f"{r.capture:.3g}",
            f"{r.replay:.3g}",
            f"±{r.rel_tol:.0%} or ±{r.abs_tol:g}",
            "yes" if r.ok else "MISS",
        )
    console.print(t)
    console.print(
        verdict, style="green" if verdict.startswith("the replay matches") else "bold yellow", highlight=False
    )
