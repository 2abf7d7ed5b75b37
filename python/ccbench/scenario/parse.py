"""Scenario text to a TOML-shaped dict: reading the file, TOML syntax errors with their line,
the nesting limit, and ``--set key=value`` overrides."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..units import quote as _q
from . import limits
from .errors import ScenarioError, key_path


def read_toml_text(path: Path, expected: str, error: "type[ScenarioError] | None" = None) -> str:
    """The UTF-8 text of a TOML file; a missing or unreadable file raises ``error`` (a
    ScenarioError subclass, default ScenarioError) naming the file and ``expected``. A UTF-8
    byte-order mark (Windows editors write one) is dropped: TOML itself does not allow it."""
    error = error or ScenarioError
    try:
        return path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    except FileNotFoundError:
        raise error(str(path), None, "no such file", expected) from None
    except (OSError, UnicodeDecodeError) as e:
        raise error(str(path), None, f"cannot read the file: {e}", "a UTF-8 TOML file") from None


def parse_toml(text: str, source: str) -> dict:
    """The TOML document as a dict; every problem is a ScenarioError naming a line or key."""
    text = text.removeprefix("\ufeff")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _toml_syntax_error(e, source, text) from None
    except RecursionError:
        line = _deep_line(text)
        raise ScenarioError(
            source,
            f"line {line}" if line else None,
            f"tables or arrays nested more than {limits.MAX_NESTING} levels deep",
            f"at most {limits.MAX_NESTING} levels",
        ) from None
    except ValueError:  # int() refuses numbers of more than 4300 digits
        line = next((i for i, t in enumerate(text.splitlines(), 1) if re.search(r"[0-9_]{4000}", t)), None)
        raise ScenarioError(
            source, f"line {line}" if line else None, "a number too long to read", "a number of fewer than 4300 digits"
        ) from None
    check_nesting(doc, source)
    return doc


def check_nesting(doc: Mapping[str, Any], source: str | None) -> None:
    """Refuse tables or arrays nested deeper than limits.MAX_NESTING (copying or validating
    them would exhaust Python's recursion limit), naming the path. Iterative."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > limits.MAX_NESTING:
            shown = key_path(path[:4]) + ".…"
            raise ScenarioError(
                source,
                shown,
                f"nested {limits.MAX_NESTING + 1} or more levels deep",
                f"at most {limits.MAX_NESTING} levels of tables and arrays",
            )
        if isinstance(node, Mapping):
            stack.extend((v, path + (str(k),)) for k, v in node.items())
        elif isinstance(node, (list, tuple)):
            stack.extend((v, path + (str(i),)) for i, v in enumerate(node))


def _deep_line(text: str) -> int | None:
    """The first line where brackets/braces outside strings nest deeper than MAX_NESTING
    (a best effort: where tomllib ran out of recursion)."""
    depth, quote, escape = 0, "", False
    for lineno, line in enumerate(text.splitlines(), 1):
        for c in line:
            if quote:
                if escape:
                    escape = False
                elif c == "\\" and quote == '"':
                    escape = True
                elif c == quote:
                    quote = ""
            elif c in "\"'":
                quote = c
            elif c == "#":
                break
            elif c in "[{":
                depth += 1
                if depth > limits.MAX_NESTING:
                    return lineno
            elif c in "]}":
                depth -= 1
        if quote == "'":
            quote = ""
    return None


def _toml_syntax_error(e: tomllib.TOMLDecodeError, source: str, text: str) -> ScenarioError:
    msg = str(e)
    m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
    where = f"line {m.group(1)}" if m else None
    problem = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
    if m:
        problem += f" at column {m.group(2)}"
    elif "(at end of document)" in msg:
        where = f"line {max(1, len(text.splitlines()))}"
        problem = msg.replace(" (at end of document)", " at the end of the file")
    return ScenarioError(source, where, f"TOML syntax error: {problem}", "valid TOML")


def parse_override_value(text: str) -> Any:
    """``"1%"`` → "1%", ``"3"`` → 3, ``"true"`` → True, ``"{model='gilbert', p='1%'}"`` → dict.

    The text is parsed as a TOML value when it is one, else kept as a string (also when it
    would be more than one value: ``"1\nx = 2"``). Values nested deeper than
    limits.MAX_NESTING raise a ScenarioError (without a key: the caller names it).
    """
    try:
        doc = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:
        raise ScenarioError(
            None,
            None,
            f"{_q(text)} is nested more than {limits.MAX_NESTING} levels deep",
            f"at most {limits.MAX_NESTING} levels of tables and arrays",
        ) from None
    except ValueError:  # a number of more than 4300 digits: the units parsers refuse it as text
        return text
    if set(doc) != {"v"}:
        return text
    return doc["v"]


def parse_overrides(items: Sequence[str], source: str | None = None) -> dict[str, Any]:
    """``["bottleneck.loss=1%", "flows.0.cc=bbr"]`` → ``{"bottleneck.loss": "1%", ...}``."""
    return dict(override_items(items, source))


def override_items(overrides, source) -> list[tuple[str, Any]]:
    if isinstance(overrides, Mapping):
        return [(str(k), v) for k, v in overrides.items()]
    if isinstance(overrides, str):
        overrides = [overrides]
    out = []
    for item in overrides:
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not key:
            raise ScenarioError(source, "--set", f"{_q(item)} is not an override", "KEY=VALUE, e.g. bottleneck.loss=1%")
        try:
            parsed = parse_override_value(value.strip())
        except ScenarioError as e:
            raise ScenarioError(source, key, e.problem, e.expected) from None
        out.append((key, parsed))
    return out


def set_path(raw: dict, key: str, value: Any, source: str | None) -> None:
    parts = key.split(".")
    node: Any = raw
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        here = key_path(parts[: depth + 1])
        if isinstance(node, list):
            if not (part.isascii() and part.isdigit()):
                raise ScenarioError(source, here, f"{_q(part)} is not a list index", "a number such as flows.0.cc")
            idx = int(part) if len(part) < 10 else len(node) + 1
            if idx > len(node):
                raise ScenarioError(
                    source,
                    here,
                    f"there is no entry {idx} (the list has {len(node)})",
                    f"an index 0..{len(node)} ({len(node)} appends a new entry)",
                )
            if idx == len(node):
                node.append({})
            if last:
                node[idx] = value
            else:
                node = node[idx]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if part not in node:
                    node[part] = [] if part == "flows" else {}
                node = node[part]
        else:
            parent = ".".join(parts[:depth])
            raise ScenarioError(
                source, here, f"cannot set a key inside {parent}, which is {_q(node)}", "a path to a table key"
            )
