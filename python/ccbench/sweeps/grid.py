"""The grid of a sweep: the ``[sweep]`` table and ``--grid``/``--zip`` options as axes, their
cells in order, and each repeat's seed (docs/sweeps.md "Grid semantics")."""

from __future__ import annotations

import itertools
import json
import math
import tomllib
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

RESERVED_KEYS = ("repeat", "zip")


class SweepError(ValueError):
    """A sweep definition that cannot be expanded (message names the key and what was expected)."""


def param_str(value: Any) -> str:
    """The string stored in the parameter column for one swept value.

    Strings are kept exactly as given; booleans are written as TOML writes them
    (``true``/``false``); numbers with ``str``; tables and arrays as compact JSON.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def axis_type(values: Sequence[Any]) -> str:
    """The column type of one swept key, decided once from all its values so every run file
    of a sweep has the same type: "bool" when all are booleans, "int64" when all are integers,
    "float64" when all are numbers, else "string" (e.g. "1%", "8ms")."""
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if any(isinstance(v, bool) for v in values):
        return "string"
    if all(isinstance(v, int) for v in values):
        return "int64"
    if all(isinstance(v, (int, float)) for v in values):
        return "float64"
    return "string"


def typed_value(value: Any, kind: str) -> Any:
    """``value`` as stored in a column of type ``kind`` (see axis_type)."""
    if kind == "bool":
        return bool(value)
    if kind == "int64":
        return int(value)
    if kind == "float64":
        return float(value)
    return param_str(value)


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: one key, or a zip group of keys that vary together."""

    keys: tuple[str, ...]
    points: tuple[tuple[Any, ...], ...]  # one tuple per point, aligned with ``keys``

    def __len__(self) -> int:
        return len(self.points)


@dataclass
class Grid:
    """The swept axes (dotted key path -> list of values, insertion ordered), zip groups, repeat."""

    values: dict[str, list[Any]] = field(default_factory=dict)
    zips: list[tuple[str, ...]] = field(default_factory=list)
    repeat: int = 1
    source: str = "[sweep]"

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_table(cls, table: Mapping[str, Any] | None, source: str = "[sweep]") -> "Grid":
        """Build a grid from the raw ``[sweep]`` table of a scenario (None or {} = no axes)."""
        grid = cls(source=source)
        if not table:
            return grid
        if not isinstance(table, Mapping):
            raise SweepError(f"{source}: expected a table of key path = [values], got {type(table).__name__}")
        for key, value in table.items():
            if key == "repeat":
                grid.repeat = _check_repeat(value, f"{source}: sweep.repeat")
            elif key == "zip":
                grid.zips = _check_zips(value, source)
            else:
                for path, vals in _flatten(key, value):
                    grid._set_axis(path, vals)
        grid.axes()  # validate now
        return grid

    def _set_axis(self, key: str, vals: Any, where: str | None = None) -> None:
        where = where or f"{self.source}: sweep.{key}"
        if not key or any(not part for part in key.split(".")):
            raise SweepError(f'{where}: not a key path (expected dotted names like "bottleneck.loss")')
        if isinstance(vals, (str, bytes)) or not isinstance(vals, (list, tuple)):
            raise SweepError(f'{where}: {vals!r} is not a list (expected a list of values, e.g. ["0%", "1%"])')
        if len(vals) == 0:
            raise SweepError(f"{where}: the list is empty (expected at least one value)")
        self.values[key] = list(vals)

    def with_options(self, grid: Sequence[str] = (), zips: Sequence[str] = (), repeat: int | None = None) -> "Grid":
        """A copy with CLI options applied: ``--grid key=v1,v2`` replaces the axis ``key`` (keeping
        its place) or appends a new one; ``--zip k1,k2`` adds a zip group; ``--repeat`` replaces
        the repeat count."""
        new = Grid(dict(self.values), list(self.zips), self.repeat, self.source)
        for opt in grid:
            key, vals = parse_grid_option(opt)
            new._set_axis(key, vals, where=f"--grid {key}")
        for opt in zips:
            group = parse_zip_option(opt)
            new.zips.append(group)
        if repeat is not None:
            new.repeat = _check_repeat(repeat, "--repeat")
        new.axes()
        return new

    # -- expansion ----------------------------------------------------------------------------
    def axes(self) -> list[Axis]:
        """The axes in order, zip groups merged (validates zip groups)."""
        group_of: dict[str, tuple[str, ...]] = {}
        for group in self.zips:
            for key in group:
                if key not in self.values:
                    raise SweepError(
                        f"{self.source}: sweep.zip: {key!r} is not a swept key (expected one of "
                        f"{', '.join(map(repr, self.values)) or 'no keys: add the axis first'})"
                    )
                if key in group_of:
                    raise SweepError(
                        f"{self.source}: sweep.zip: {key!r} is in two zip groups "
                        f"(expected each key in at most one group)"
                    )
                group_of[key] = group
        for group in self.zips:
            lengths = {k: len(self.values[k]) for k in group}
            if len(set(lengths.values())) > 1:
                detail = ", ".join(f"{k} has {n}" for k, n in lengths.items())
                raise SweepError(
                    f"{self.source}: sweep.zip: the zipped lists must have the same length, but {detail} values"
                )
        axes: list[Axis] = []
        emitted: set[tuple[str, ...]] = set()
        for key in self.values:
            group = group_of.get(key, (key,))
            if group in emitted:
                continue
            emitted.add(group)
            points = tuple(zip(*(self.values[k] for k in group)))
            axes.append(Axis(tuple(group), points))
        return axes

    def cells(self) -> list[dict[str, Any]]:
        """Every grid cell as {key path: value}, cartesian product, first axis outermost."""
        axes = self.axes()
        cells = []
        for combo in itertools.product(*(a.points for a in axes)):
            cell: dict[str, Any] = {}
            for axis, point in zip(axes, combo):
                cell.update(zip(axis.keys, point))
            cells.append(cell)
        return cells

    @property
    def keys(self) -> list[str]:
        return list(self.values)

    def __len__(self) -> int:
        """Number of runs: cells x repeat."""
        return math.prod(len(a) for a in self.axes()) * self.repeat


def _flatten(prefix: str, value: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _flatten(f"{prefix}.{k}", v)
    else:
        yield prefix, value


def _check_repeat(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SweepError(f"{where}: {value!r} is not a positive integer (expected e.g. repeat = 5)")
    return value


def _check_zips(value: Any, source: str) -> list[tuple[str, ...]]:
    form = 'a list of lists of key paths, e.g. zip = [["bottleneck.rtt", "bottleneck.jitter"]]'
    if not isinstance(value, list) or not all(
        isinstance(g, list) and g and all(isinstance(k, str) for k in g) for g in value
    ):
        raise SweepError(f"{source}: sweep.zip: {value!r} is not valid (expected {form})")
    return [tuple(g) for g in value]


def _parse_cli_value(text: str) -> Any:
    """A ``--grid`` value: a TOML literal if it is one (numbers, true/false, quoted strings,
    inline tables), else the bare string (e.g. 1%, 50ms, cubic)."""
    text = text.strip()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_grid_option(option: str) -> tuple[str, list[Any]]:
    """``key=v1,v2,...`` (or ``key=[v1, v2]`` as a TOML array) -> (key, values)."""
    key, sep, rest = option.partition("=")
    key = key.strip()
    if not sep or not key:
        raise SweepError(f"--grid {option!r}: expected key=v1,v2,... (e.g. bottleneck.loss=0%,1%)")
    rest = rest.strip()
    if rest.startswith("["):
        try:
            values = tomllib.loads(f"v = {rest}")["v"]
        except tomllib.TOMLDecodeError as e:
            raise SweepError(f"--grid {option!r}: not a TOML array ({e})") from None
    else:
        values = [_parse_cli_value(v) for v in rest.split(",")] if rest else []
    if not values or any(v == "" for v in values):
        raise SweepError(f"--grid {option!r}: empty value (expected key=v1,v2,...)")
    return key, values


def parse_zip_option(option: str) -> tuple[str, ...]:
    """``k1,k2`` -> ("k1", "k2")."""
    keys = tuple(k.strip() for k in option.split(",") if k.strip())
    if len(keys) < 2:
        raise SweepError(
            f"--zip {option!r}: expected two or more swept keys, e.g. --zip bottleneck.rtt,bottleneck.jitter"
        )
    return keys


def grid_from_scenario(
    scenario: Any, grid: Sequence[str] = (), zips: Sequence[str] = (), repeat: int | None = None
) -> Grid:
    """The scenario's ``[sweep]`` table with CLI options applied."""
    source = str(getattr(scenario, "source", None) or getattr(scenario, "name", None) or "[sweep]")
    return Grid.from_table(getattr(scenario, "sweep", None), source=source).with_options(grid, zips, repeat)


def derive_seed(cell_seed: int, repeat: int) -> int:
    """Seed of repeat ``repeat`` of a cell whose own seed is ``cell_seed``: ``cell_seed + repeat``."""
    return int(cell_seed) + int(repeat)
