"""Segmentation offloads of the capturing interface (ethtool): with TSO or GSO on, a capture at
the sender holds super-segments of up to 64 kB where the wire carries MSS-sized packets, and
``ccbench fit`` would misread their sizes and times (docs/fit.md, assumptions). ``offloads_off``
turns them off for the capture and puts back what it changed."""

from __future__ import annotations

import subprocess
from contextlib import contextmanager
from typing import Iterator

__all__ = ["OFFLOADS", "parse_features", "read_offloads", "offloads_off"]

#: ethtool's short names and the feature names `ethtool -k` prints.
OFFLOADS = {"tso": "tcp-segmentation-offload", "gso": "generic-segmentation-offload"}


def parse_features(text: str) -> dict[str, tuple[bool, bool]]:
    """`ethtool -k` output -> {feature: (on, fixed)}; "[fixed]" features cannot be changed."""
    out = {}
    for line in text.splitlines():
        name, sep, rest = line.strip().partition(":")
        words = rest.split()
        if sep and words and words[0] in ("on", "off"):
            out[name] = (words[0] == "on", "[fixed]" in rest)
    return out


def read_offloads(interface: str) -> dict[str, tuple[bool, bool]]:
    """{short name: (on, fixed)} of the interface's TSO and GSO."""
    r = subprocess.run(["ethtool", "-k", interface], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        raise OSError(f"ethtool -k {interface}: {r.stderr.strip() or 'failed'}")
    feats = parse_features(r.stdout)
    return {short: feats.get(long, (False, True)) for short, long in OFFLOADS.items()}


def _set(interface: str, settings: dict[str, bool]) -> None:
    if not settings:
        return
    argv = ["ethtool", "-K", interface]
    for short, on in settings.items():
        argv += [short, "on" if on else "off"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        raise OSError(f"{' '.join(argv)}: {r.stderr.strip() or 'failed'}")


@contextmanager
def offloads_off(interface: str) -> Iterator[list[str]]:
    """TSO and GSO off on ``interface`` for the body; yields the offloads it turned off (and
    turns back on afterwards, whatever happens). A fixed "on" offload is an OSError: the
    capture could not be read."""
    state = read_offloads(interface)
    stuck = [short for short, (on, fixed) in state.items() if on and fixed]
    if stuck:
        raise OSError(f"{interface} has {' and '.join(stuck)} fixed on: its capture would hold super-segments")
    changed = [short for short, (on, _) in state.items() if on]
    _set(interface, {short: False for short in changed})
    try:
        yield changed
    finally:
        _set(interface, {short: True for short in changed})
