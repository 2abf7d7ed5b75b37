"""The neighbourhood of a fitted link: the fit's intervals in place of the fixed factors.

``ccbench fit`` (and the iperf3 fit) give each figure an interval: the values the measurement
cannot tell apart from the fitted one. Recommending over the ends of those intervals asks
whether the answer holds over what the measurement allows, where the fixed BAND factors only
guess at it. Three figures are varied, as in the fixed neighbourhood: rate, loss and jitter.
The base RTT's interval is a serialisation time or two wide and the buffer enters the runs as
bytes fixed by the scenario file, so neither is varied. A figure the user overrides with a flag
keeps the fixed factors: the fit's interval is not about the user's value.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from .link import Link, fmt_axis

__all__ = ["FITTED_FIGURES", "with_fit_intervals"]

#: neighbourhood axis -> the attribute path of its Estimate in a Fit (fit/__init__.py)
FITTED_FIGURES = {"rate": ("rate",), "loss": ("loss", "rate"), "jitter": ("jitter",)}


def _estimate(fit, path: tuple[str, ...]):
    obj = fit
    for name in path:
        obj = getattr(obj, name)
    return obj


def _end_text(axis: str, v: Optional[float]) -> str:
    """An interval end as the neighbourhood uses it (4 significant digits), or "open"."""
    return "open" if v is None else fmt_axis(axis, float(f"{v:.4g}"))


def with_fit_intervals(link: Link, fit, source: str) -> tuple[Link, list[str]]:
    """``link`` with the intervals of ``fit`` (a fit.Fit) for its neighbourhood, and the note
    saying so. ``source`` names the measurement ("the fit of sender.pcap")."""
    intervals: dict[str, tuple[Optional[float], Optional[float]]] = {}
    parts: list[str] = []
    notes: list[str] = []
    for axis, path in FITTED_FIGURES.items():
        if axis in link.origin:
            notes.append(f"{axis} is given by {link.origin[axis]}: its neighbours are the fixed factors")
            continue
        est = _estimate(fit, path)
        if est.value is None or axis in link.fixed:  # fixed: Gilbert loss, a trace's rate
            continue
        intervals[axis] = (est.lo, est.hi)
        parts.append(f"{axis} {_end_text(axis, est.lo)} to {_end_text(axis, est.hi)}")
    if intervals:
        notes.insert(
            0,
            f"the neighbourhood comes from the intervals of {source} (" + "; ".join(parts) + "), "
            "not from fixed factors",
        )
    return dataclasses.replace(link, intervals=intervals), notes
