"""Parsing of the unit strings used in scenario files.

Every parser returns an exact SI integer (bit/s, nanoseconds, bytes) or a fraction, and raises
:class:`UnitError` with the problem and the expected form when the text does not parse. Values
are parsed with :class:`decimal.Decimal`, so ``"0.1%"`` or ``"50ms"`` carry no binary rounding
noise into the normalised scenario (and therefore into its hash).

Accepted spellings (see docs/scenario.md):

* rates, in **bits** per second: ``bit``, ``bps``, ``bit/s``; ``k``/``K``, ``M``, ``G`` prefixes
  with ``bit``, ``bps`` or ``bit/s`` (``kbit``, ``Kbit``, ``Mbps``, ``Gbit/s``), and the bare prefix
  (``"50M"`` = 50 Mbit/s). Prefixes are powers of 1000 and case-insensitive (``mbit`` = ``Mbit``,
  as in tc). Note: unlike tc, ``Mbps`` here means megabits, not megabytes, per second.
* times: ``ns``, ``us`` (or ``µs``), ``ms``, ``s``, ``min``, ``h``; a bare number means seconds.
  ``m`` alone is refused (minutes or milliseconds?). The one duration grammar of ccbench: scenario
  files, ``--set``, ``--duration`` and ``--run-timeout`` all parse times here.
* sizes: ``B``; ``KB``/``kB``, ``MB``, ``GB`` (1000-based) and ``KiB``, ``MiB``, ``GiB``
  (1024-based); a bare integer means bytes.
* percentages: ``"0.1%"`` (0-100 %); a bare number is refused unless it is 0, because
  ``0.01`` could mean 1 % or 0.01 %.
* buffers: ``"1bdp"`` / ``"0.25bdp"``, ``"100pkt"`` (also ``pkts``, ``packets``), or a size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Union

__all__ = [
    "UnitError",
    "TooLarge",
    "quote",
    "BufferSpec",
    "parse_rate",
    "parse_time_ns",
    "parse_time",
    "parse_size",
    "parse_percent",
    "parse_buffer",
    "parse_start",
    "format_rate",
    "format_time",
    "RATE_FORM",
    "TIME_FORM",
    "SIZE_FORM",
    "PERCENT_FORM",
    "BUFFER_FORM",
    "START_FORM",
]

Number = Union[int, float, str, Decimal]

RATE_FORM = 'a rate in bits per second, e.g. "50Mbit", "1Gbit", "500kbit" or "10Mbps"'
TIME_FORM = 'a duration, e.g. "30s", "50ms", "100us", "2min" or "1h"'
SIZE_FORM = 'a size in bytes, e.g. "1500B", "256KB" (1000-based) or "256KiB" (1024-based)'
PERCENT_FORM = 'a percentage 0-100%, e.g. "1%" or "0.1%"'
BUFFER_FORM = 'a buffer size: "1bdp", "0.25bdp", "100pkt" or a size such as "256KB"'
START_FORM = 'a start time such as "0s", or a stagger "START+STEP" such as "0s+1s"'


class UnitError(ValueError):
    """A value that does not parse. ``problem`` says what is wrong, ``expected`` the form."""

    def __init__(self, problem: str, expected: str):
        super().__init__(f"{problem} (expected {expected})")
        self.problem = problem
        self.expected = expected


class TooLarge(UnitError):
    """A number beyond 10^MAX_MAGNITUDE: out of every key's range (the scenario names the
    range of the key it was given for)."""


#: Numbers are refused beyond 10^40 (and a non-zero one below 10^-40): no key accepts such a
#: value, and bounding the exponent keeps Decimal arithmetic and int() conversion cheap and
#: free of Overflow/InvalidOperation whatever digits the text holds.
MAX_MAGNITUDE = 40
#: At most this many characters of a value are quoted back in an error message.
SHOW_CHARS = 60


_NUM = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?"
_NUM_UNIT = re.compile(r"^\s*" + _NUM + r"\s*([A-Za-zµ/%]*)\s*$")

_RATE_UNIT = re.compile(r"^([kKmMgGtT]?)(bit|bits|bit/s|bits/s|bps|)$")
_RATE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_TIME_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}
_SIZE_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}


def quote(value: object) -> str:
    """The value as quoted in an error: repr for strings, short, never raising (an int of
    thousands of digits cannot even be converted to a string)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= SHOW_CHARS else text[: SHOW_CHARS - 1] + "…"


_show = quote


def _bounded(number: Decimal, value: object, expected: str) -> Decimal:
    """``number`` if its magnitude is within 10^±MAX_MAGNITUDE (or it is 0), else a UnitError."""
    if number != 0:
        _check_magnitude(number.adjusted(), value, expected)
    return number


def _check_magnitude(magnitude: int, value: object, expected: str) -> None:
    if magnitude > MAX_MAGNITUDE:
        raise TooLarge(f"{_show(value)} is too large", expected)
    if magnitude < -MAX_MAGNITUDE:
        raise UnitError(f"{_show(value)} is too small to tell from 0", expected)


def _split(value: object, expected: str) -> tuple[Decimal, str]:
    """Split ``value`` into a non-negative finite Decimal and its unit suffix."""
    if isinstance(value, bool) or value is None:
        raise UnitError(f"{_show(value)} is not a value with a unit", expected)
    if isinstance(value, (int, Decimal)):
        number = Decimal(value)
        if number.is_nan() or number.is_infinite():
            raise UnitError(f"{_show(value)} is not a finite number", expected)
        if number < 0:
            raise UnitError(f"{_show(value)} is negative", expected)
        return _bounded(number, value, expected), ""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise UnitError(f"{value} is not a finite number", expected)
        if value < 0:
            raise UnitError(f"{value} is negative", expected)
        return _bounded(Decimal(repr(value)), value, expected), ""
    if not isinstance(value, str):
        raise UnitError(f"{type(value).__name__} {_show(value)} is not a value with a unit", expected)
    text = value.strip()
    if not text:
        raise UnitError("empty value", expected)
    if text.startswith("-"):
        raise UnitError(f"{_show(value)} is negative", expected)
    if text.startswith("+"):
        text = text[1:]
    m = _NUM_UNIT.match(text)
    if not m:
        raise UnitError(f"{_show(value)} does not parse", expected)
    mantissa, exponent, unit = m.group(1), m.group(2), m.group(3)
    try:
        number = Decimal(mantissa)
    except (InvalidOperation, ValueError):  # pragma: no cover - regex guarantees a number
        raise UnitError(f"{_show(value)} does not parse", expected) from None
    if number == 0 and len(unit) <= 16:
        return number, unit
    # the exponent is applied only once the result is known to be within 10^±MAX_MAGNITUDE:
    # "1e999999999s" would overflow Decimal's context, a 5000-digit exponent int()
    digits = (exponent or "0").lstrip("+-").lstrip("0")
    if len(digits) > 6:
        shift = 10**7 if not exponent.startswith("-") else -(10**7)
    else:
        shift = int(exponent or 0)
    _check_magnitude(number.adjusted() + shift, value, expected)
    if len(unit) > 16:  # no unit is that long; keep the message short
        raise UnitError(f"{_show(value)} has an unknown unit", expected)
    return number.scaleb(shift), unit


def _to_int(number: Decimal) -> int:
    # to_integral_value, unlike quantize, works for numbers with more digits than the context
    return int(number.to_integral_value(rounding=ROUND_HALF_EVEN))


def parse_rate(value: Number) -> int:
    """A rate in bit/s, e.g. ``"50Mbit"`` → 50_000_000. A unit is required (except for 0)."""
    number, unit = _split(value, RATE_FORM)
    if unit == "":
        if number == 0:
            return 0
        raise UnitError(f"{_show(value)} has no unit", RATE_FORM)
    m = _RATE_UNIT.match(unit)
    if not m:
        if unit.endswith(("Bps", "B/s", "Bytes/s", "bytes/s")):
            raise UnitError(f"{_show(value)}: byte rates are not accepted, use bits", RATE_FORM)
        raise UnitError(f"{_show(value)} has an unknown unit '{unit}'", RATE_FORM)
    prefix = m.group(1).lower()
    return _to_int(number * _RATE_PREFIX[prefix])


def parse_time_ns(value: Number) -> int:
    """A duration in integer nanoseconds, e.g. ``"50ms"`` → 50_000_000, ``"1.5min"`` →
    90_000_000_000; a bare number is seconds. Exact: the Decimal value times the unit's
    nanoseconds, rounded half-even to the nanosecond (only a value below 1 ns is refused)."""
    number, unit = _split(value, TIME_FORM)
    if unit not in _TIME_UNITS:
        hint = " (minutes or milliseconds? write min or ms)" if unit in ("m", "M") else ""
        raise UnitError(f"{_show(value)} has an unknown unit '{unit}'{hint}", TIME_FORM)
    ns = number * _TIME_UNITS[unit]
    if ns != ns.to_integral_value() and ns < 1:
        raise UnitError(f"{_show(value)} is below the 1 ns resolution", TIME_FORM)
    return _to_int(ns)


def parse_time(value: Number) -> float:
    """A duration in seconds (float, exact to the nanosecond)."""
    return parse_time_ns(value) / 1e9


def parse_size(value: Number) -> int:
    """A size in bytes: ``"256KB"`` → 256000, ``"256KiB"`` → 262144; a bare integer is bytes."""
    number, unit = _split(value, SIZE_FORM)
    if unit not in _SIZE_UNITS:
        hint = ""
        if unit.lower() in ("kb", "mb", "gb", "kib", "mib", "gib", "b"):
            hint = " (sizes are case-sensitive: B is a byte)"
        raise UnitError(f"{_show(value)} has an unknown unit '{unit}'{hint}", SIZE_FORM)
    n = number * _SIZE_UNITS[unit]
    if n != n.to_integral_value():
        raise UnitError(f"{_show(value)} is not a whole number of bytes", SIZE_FORM)
    return int(n)


def parse_percent(value: Number) -> float:
    """A percentage, returned as a fraction 0..1: ``"0.1%"`` → 0.001.

    A bare number is refused (except 0): ``0.01`` could mean 1 % or 0.01 %.
    """
    number, unit = _split(value, PERCENT_FORM)
    if unit == "":
        if number == 0:
            return 0.0
        raise UnitError(f"{_show(value)} has no '%' sign", PERCENT_FORM)
    if unit != "%":
        raise UnitError(f"{_show(value)} has an unknown unit '{unit}'", PERCENT_FORM)
    if number > 100:
        raise UnitError(f"{_show(value)} is over 100%", PERCENT_FORM)
    return float(number / 100)


@dataclass(frozen=True)
class BufferSpec:
    """A bottleneck buffer as written: ``kind`` is "bdp", "packets" or "bytes"."""

    kind: str
    value: float | int

    def __str__(self) -> str:
        if self.kind == "bdp":
            return f"{self.value:g}bdp"
        if self.kind == "packets":
            return f"{self.value}pkt"
        return f"{self.value}B"


def parse_buffer(value: Number) -> BufferSpec:
    """``"1bdp"`` → BufferSpec("bdp", 1.0); ``"100pkt"`` → ("packets", 100); ``"256KB"`` → ("bytes", 256000)."""
    number, unit = _split(value, BUFFER_FORM)
    u = unit.lower()
    if u == "bdp":
        if number <= 0:
            raise UnitError(f"{_show(value)} is not positive", BUFFER_FORM)
        return BufferSpec("bdp", float(number))
    if u in ("pkt", "pkts", "packet", "packets", "p"):
        if number != number.to_integral_value():
            raise UnitError(f"{_show(value)} is not a whole number of packets", BUFFER_FORM)
        if number < 1:
            raise UnitError(f"{_show(value)} holds no packet", BUFFER_FORM)
        return BufferSpec("packets", int(number))
    if unit == "" and isinstance(value, str):
        raise UnitError(f"{_show(value)} has no unit", BUFFER_FORM)
    try:
        n = parse_size(value)
    except UnitError as e:
        raise type(e)(e.problem, BUFFER_FORM) from None
    return BufferSpec("bytes", n)


def parse_start(value: Number) -> tuple[int, int]:
    """``"0s"`` → (0, 0); ``"0s+1s"`` → (0, 1e9): start and stagger step in nanoseconds."""
    if isinstance(value, str) and "+" in value.strip().lstrip("+"):
        text = value.strip()
        head, _, step = text.rpartition("+")
        try:
            return parse_time_ns(head), parse_time_ns(step)
        except UnitError as e:  # type(e): a TooLarge stays one
            raise type(e)(f"{_show(value)}: {e.problem}", START_FORM) from None
    try:
        return parse_time_ns(value), 0
    except UnitError as e:
        raise type(e)(e.problem, START_FORM) from None


def format_rate(bps: float) -> str:
    """Human form of a rate: 50_000_000 → "50Mbit"."""
    for div, name in ((10**12, "Tbit"), (10**9, "Gbit"), (10**6, "Mbit"), (10**3, "kbit")):
        if bps >= div:
            return f"{bps / div:g}{name}"
    return f"{bps:g}bit"


def format_time(seconds: float) -> str:
    """Human form of a duration: 0.05 → "50ms"."""
    if seconds == 0:
        return "0s"
    for mul, name in ((1, "s"), (1e3, "ms"), (1e6, "us")):
        if seconds * mul >= 1:
            return f"{seconds * mul:g}{name}"
    return f"{seconds * 1e9:g}ns"
