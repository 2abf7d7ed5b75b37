"""The ``[wifi]`` table's plain parts: its defaults (the same as ccbench-wifi's
``WifiConfig::default()``, crates/wifi/src/config.rs; a test checks they agree), the reader of
``mcs_trace`` files, and the PHY rate of a configuration (computed by the crate through
``ccbench._sim``). The pydantic model is ``scenario.Wifi``; docs/scenario.md "Wi-Fi link" lists
every key with its source.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["DEFAULTS", "read_mcs_trace", "phy_rate_bps", "check", "McsTraceError"]

#: Every ``[wifi]`` key with its default, in the crate's units (ns, bytes, bit/s, probability).
DEFAULTS: dict = {
    "mcs": 15,
    "width_mhz": 20,
    "short_gi": False,
    "rate_control": "fixed",
    "mcs_trace": None,
    "mpdu_error": 0.0,
    "snr_db": None,
    "retry_limit": 30,
    "aifsn": 3,
    "cw_min": 15,
    "cw_max": 1023,
    "slot_ns": 9_000,
    "sifs_ns": 16_000,
    "max_ampdu_frames": 64,
    "max_ampdu_bytes": 65_535,
    "max_ampdu_ns": 4_000_000,
    "aggregation": True,
    "driver_queue_fwd": 123,
    "driver_queue_rev": 123,
    "control_rate_bps": 24_000_000,
}

MCS_TRACE_FORM = 'a file of "TIME_MS MCS" lines (time in ms, non-decreasing; MCS 0-31; # comments)'


class McsTraceError(ValueError):
    """A bad ``mcs_trace`` file: ``str(err)`` names the line."""


def read_mcs_trace(path: Path) -> list[list[int]]:
    """``[[time_ns, mcs], ...]`` from a file of ``time_ms mcs`` lines (blank lines and ``#``
    comments ignored; times non-decreasing, fractional milliseconds allowed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise McsTraceError(f"cannot read {path}: {e}") from None
    steps: list[list[int]] = []
    for no, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise McsTraceError(f"line {no}: {line!r} is not 'TIME_MS MCS'")
        try:
            ms = float(parts[0])
            mcs = int(parts[1])
        except ValueError:
            raise McsTraceError(f"line {no}: {line!r} is not 'TIME_MS MCS'") from None
        if not math.isfinite(ms) or ms < 0:
            raise McsTraceError(f"line {no}: time {parts[0]} ms is not a time >= 0")
        if not 0 <= mcs <= 31:
            raise McsTraceError(f"line {no}: mcs {mcs} is not an HT MCS 0-31")
        ns = round(ms * 1e6)
        if steps and ns < steps[-1][0]:
            raise McsTraceError(f"line {no}: time {parts[0]} ms is before the previous line's")
        steps.append([ns, mcs])
    if not steps:
        raise McsTraceError("the file has no 'TIME_MS MCS' line")
    return steps


def _sim():
    from .. import _sim  # type: ignore[attr-defined]

    return _sim


def check(wire: dict) -> None:
    """The crate's own checks of a ``[wifi]`` table in wire form (ValueError naming the key)."""
    _sim().wifi_check(json.dumps(wire))


def phy_rate_bps(wire: dict) -> int:
    """Nominal PHY rate of the table's MCS, width and guard interval (bit/s), from the crate."""
    return int(_sim().wifi_phy_rate_bps(json.dumps(wire)))


def rust_defaults() -> dict:
    """``WifiConfig::default()`` as the built crate serialises it."""
    return json.loads(_sim().wifi_defaults_json())
