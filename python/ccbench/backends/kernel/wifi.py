"""The runs table's ``wifi_*`` columns (docs/results.md) from ccbench-link's report of a Wi-Fi
bottleneck (its ``wifi`` object, crates/link/src/report.rs ``WifiJson``).

The emulator runs longer than the scenario (it starts before the flows are launched and stops
after they end), so the columns are taken over the run's window [0, duration] from the
medium's cumulative counters sampled at the sample interval (the last sample at or before each
end), as ``runs.link_utilisation`` is. The definitions are the simulator's
(crates/sim/src/report/mod.rs ``WifiSummary``): A-MPDU size mean / median / 90th percentile per
station (``fwd`` = the sender-side station, ``rev`` = the receiver-side one; null when it never
transmitted), transmit opportunities, airtime share (the station's PPDUs and their block-acks
over the window's length), collisions, MPDU retries and retry-limit drops of both stations.
"""

from __future__ import annotations

import bisect
import math
from typing import Optional

__all__ = ["run_columns", "ampdu_quantile"]


def ampdu_quantile(hist: list[int], q: float) -> Optional[int]:
    """The q-quantile (0 <= q <= 1) of an A-MPDU size histogram (``hist[n]`` = transmissions of n
    MPDUs): the smallest n whose cumulative count reaches rank ceil(q × total), at least 1, as
    ccbench-wifi's ``DirStats::ampdu_quantile``. None for an empty histogram."""
    total = sum(hist)
    if total == 0:
        return None
    rank = min(max(math.ceil(q * total), 1), total)
    seen = 0
    for n, c in enumerate(hist):
        seen += c
        if seen >= rank:
            return n
    return len(hist) - 1


def _mean(hist: list[int]) -> Optional[float]:
    total = sum(hist)
    return sum(n * c for n, c in enumerate(hist)) / total if total else None


def run_columns(wifi: Optional[dict], link_t0_s: float, t0: float, dur: float) -> dict:
    """The ``wifi_*`` columns over [0, dur] on the run's clock (t0 = the run's start on
    CLOCK_MONOTONIC, ``link_t0_s`` = the emulator's). ``{}`` without a ``wifi`` report (a wire:
    the columns stay null) or without samples."""
    if not wifi:
        return {}
    smp = wifi.get("samples") or {}
    t = [link_t0_s + x / 1e9 - t0 for x in smp.get("t_ns") or []]
    dirs = wifi.get("directions") or []
    if len(t) < 2 or len(dirs) != 2:
        return {}
    i0 = max(0, bisect.bisect_right(t, 0.0 + 1e-9) - 1)
    i1 = max(0, bisect.bisect_right(t, dur + 1e-9) - 1)
    span = t[i1] - t[i0]
    if span <= 0:
        return {}

    def delta(series: list) -> int:
        return series[i1] - series[i0]

    out: dict = {}
    for d, side in zip(dirs, ("fwd", "rev")):
        s = d["samples"]
        hist = [b - a for a, b in zip(s["ampdu_hist"][i0], s["ampdu_hist"][i1])]
        q50, q90 = ampdu_quantile(hist, 0.5), ampdu_quantile(hist, 0.9)
        out[f"wifi_ampdu_mean_{side}"] = _mean(hist)
        out[f"wifi_ampdu_p50_{side}"] = None if q50 is None else float(q50)
        out[f"wifi_ampdu_p90_{side}"] = None if q90 is None else float(q90)
        out[f"wifi_txops_{side}"] = delta(s["txops"])
        out[f"wifi_airtime_{side}"] = delta(s["airtime_ns"]) / (span * 1e9)
    out["wifi_collisions"] = delta(smp["collisions"])
    out["wifi_mpdus_retried"] = sum(delta(d["samples"]["mpdus_retried"]) for d in dirs)
    out["wifi_retry_drops"] = sum(delta(d["samples"]["mpdus_dropped"]) for d in dirs)
    return out
