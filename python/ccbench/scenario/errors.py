"""The one error every bad input raises: ScenarioError, one line per problem naming the
source, the key path and what was expected."""

from __future__ import annotations

from typing import Any, Sequence


class ScenarioError(ValueError):
    """Bad scenario input. ``str(err)`` is one line per problem:
    ``"<source>: <key.path>: <problem> (expected <form>)"``.

    ``source``, ``key``, ``problem``, ``expected`` describe the first problem; ``problems`` holds
    all of them as ``(key, problem, expected)`` tuples.
    """

    def __init__(
        self,
        source: str | None,
        key: str | None,
        problem: str,
        expected: str | None = None,
        problems: Sequence[tuple[str | None, str, str | None]] | None = None,
    ):
        self.source = source
        self.key = key
        self.problem = problem
        self.expected = expected
        self.problems = list(problems) if problems else [(key, problem, expected)]
        super().__init__("\n".join(self._line(k, p, e) for k, p, e in self.problems))

    def _line(self, key: str | None, problem: str, expected: str | None) -> str:
        if key and len(key) > 120:  # a hostile key path: name its start
            key = key[:119] + "…"
        parts = [x for x in (self.source, key) if x]
        text = ": ".join(parts + [problem])
        if expected:
            text += f" (expected {expected})"
        return _one_line(text)

    @property
    def lines(self) -> list[str]:
        return str(self).split("\n")

    def __reduce__(self):  # picklable across process pools
        return (ScenarioError, (self.source, self.key, self.problem, self.expected, self.problems))


def _one_line(text: str) -> str:
    """``text`` with every line break and control character escaped: a key or value read from
    a file may hold them, and each problem must stay one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode() for c in text)


def key_path(parts: Sequence[Any]) -> str:
    """``bottleneck.rate``; an empty key (valid TOML: ``"" = 1``) shows as ``""``."""
    return ".".join(str(p) if str(p) else '""' for p in parts)
