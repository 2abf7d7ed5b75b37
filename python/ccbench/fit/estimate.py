"""One fitted parameter: its value, an interval, and the evidence behind it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["Estimate"]


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
