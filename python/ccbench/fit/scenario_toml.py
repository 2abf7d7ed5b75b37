"""The fitted link as a scenario TOML (docs/scenario.md), each key commented with its evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import Fit

__all__ = ["scenario_toml", "loss_value"]


def _pct(x: float) -> str:
    return f'"{x * 100:.4g}%"'


def loss_value(fit: "Fit") -> str:
    """The ``loss`` key's TOML value."""
    lf = fit.loss
    if lf.model == "none":
        return '"0%"'
    if lf.model == "gilbert":
        return f'{{ model = "gilbert", p = {_pct(lf.p)}, r = {_pct(lf.r)} }}'
    return _pct(lf.rate.value or 0.0)


def _comment(text: str) -> str:
    return "\n".join(f"# {line}" for line in text.splitlines())


def scenario_toml(fit: "Fit", capture: str, cc: str = "cubic", duration_s: float = 30.0) -> str:
    rate_mbit = fit.rate.value / 1e6
    rtt_ms = fit.rtt.value * 1e3
    buf_bytes = max(int(round(fit.buffer.value or 0.0)), 1500)
    jit_ms = (fit.jitter.value or 0.0) * 1e3
    lines = [
        f"# Fitted by `ccbench fit` from {capture}, flow {fit.flow} ({fit.duration_s:.1f} s captured).",
        'name = "fitted"',
        f'duration = "{duration_s:g}s"',
        "",
        "[bottleneck]",
        _comment(fit.rate.evidence),
        f'rate = "{rate_mbit:.4g}Mbit"',
        _comment(fit.rtt.evidence),
        f'rtt = "{rtt_ms:.4g}ms"',
        _comment(fit.buffer.evidence),
        f'buffer = "{buf_bytes}B"',
        _comment(fit.loss.evidence),
        f"loss = {loss_value(fit)}",
    ]
    if jit_ms > 0:
        # uniform jitter may not exceed the one-way delay (docs/scenario.md)
        jit_ms = min(jit_ms, rtt_ms / 2)
        lines += [_comment(fit.jitter.evidence), f'jitter = "{jit_ms:.3g}ms"', "reorder = true"]
    else:
        lines += [_comment(fit.jitter.evidence)]
    lines += ["", "[[flows]]", f'cc = "{cc}"', ""]
    return "\n".join(lines)
