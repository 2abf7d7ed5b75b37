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

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "value": self.value,
            "lo": self.lo,
            "hi": self.hi,
            "unit": self.unit,
            "evidence": self.evidence,
        }
