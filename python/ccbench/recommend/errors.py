"""The one error recommend raises for bad options: one line naming the user's flag."""

from __future__ import annotations

from typing import Optional

from ..scenario.errors import ScenarioError


class RecommendError(ScenarioError):
    """Bad options for recommend (one line naming the option and what was expected)."""

    def __init__(self, key: str, problem: str, expected: Optional[str] = None):
        super().__init__(None, key, problem, expected)

    def __reduce__(self):
        return (RecommendError, (self.key, self.problem, self.expected))
