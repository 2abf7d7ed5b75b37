"""One fitted parameter: its value, an interval, and the evidence behind it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["Estimate", "value_text"]


@dataclass(frozen=True)
class Estimate:
    name: str
    value: Optional[float]
    lo: Optional[float]
    hi: Optional[float]
    unit: str
    evidence: str

    @classmethod
    def around(cls, name: str, value: float, lo: float, hi: float, unit: str, evidence: str) -> "Estimate":
        """A value with an interval widened, where needed, to contain it (a median or mean can
        lie outside the percentiles or range it is read beside)."""
        return cls(name, float(value), float(min(lo, value)), float(max(hi, value)), unit, evidence)

    @classmethod
    def at_least(cls, name: str, value: float, unit: str, evidence: str) -> "Estimate":
        """A lower bound: the interval starts at the value and has no upper end."""
        return cls(name, float(value), float(value), None, unit, evidence)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "value": self.value,
            "lo": self.lo,
            "hi": self.hi,
            "unit": self.unit,
            "evidence": self.evidence,
        }


def value_text(value: Optional[float], unit: str) -> str:
    """A fitted or set value in the unit people read it in: Mbit/s, ms, KB with packets, %."""
    if value is None:
        return "–"
    if unit == "bit/s":
        return f"{value / 1e6:.2f} Mbit/s"
    if unit == "s":
        return f"{value * 1e3:.2f} ms"
    if unit == "bytes":
        return f"{value / 1e3:.1f} KB ({value / 1500:.0f} pkt)"
    if unit == "fraction":
        return f"{value * 100:.3f} %"
    return f"{value:g}"
