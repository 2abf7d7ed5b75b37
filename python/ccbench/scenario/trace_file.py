"""Delivery traces for ``[bottleneck] trace`` / ``trace_reverse`` (docs/scenario.md, "Trace-driven
links"): find the file, read it with the links' own parser (``_sim.parse_trace``, ccbench-queue's
``trace::parse_mahimahi``) and describe any problem with the file and line.

A value is a shipped trace's name (``"lte-steady"``: python/ccbench/scenario/traces/lte-steady.trace, made
by scripts/make_traces.py) or a path, relative to the scenario file's directory.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from . import limits

#: Where the shipped traces live.
SHIPPED_DIR = Path(__file__).resolve().parent / "traces"
#: Bytes of one delivery opportunity (one MTU packet; Mahimahi's 1504 includes TUN framing).
OPPORTUNITY_BYTES = 1500
#: Largest trace file read (a minute of 1 Gbit/s is about 30 MB; real cellular traces are far
#: smaller).
MAX_TRACE_BYTES = 64 * 1024 * 1024


class TraceProblem(ValueError):
    """A trace that cannot be used: ``problem`` names the file and, when it has one, the line."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


def shipped_names() -> list[str]:
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.trace"))


def expected_form() -> str:
    return (
        "a Mahimahi trace file (one delivery time in ms per line), as a path relative to the scenario "
        "file, or a shipped trace: " + ", ".join(shipped_names())
    )


class TraceRef(str):
    """The value as written (so it compares and prints as the string) plus the trace read from it:
    ``path``, ``ms`` (the opportunities of one period), ``sha256`` (of ``ms``), ``mean_rate_bps``."""

    path: Path
    ms: tuple[int, ...]
    sha256: str
    mean_rate_bps: int


def mean_rate_bps(opportunities: int, period_ms: int) -> int:
    """opportunities × 1500 B × 8 per period, in bit/s, rounded down (as ccbench-queue's
    ``trace::mean_rate_bps``)."""
    return opportunities * OPPORTUNITY_BYTES * 8 * 1000 // period_ms


def resolve(value: str, base_dir: Path) -> Path:
    """A shipped trace's file for a bare name, else ``value`` as a path (relative to ``base_dir``)."""
    if value in shipped_names():
        return SHIPPED_DIR / f"{value}.trace"
    p = Path(value).expanduser()
    return p if p.is_absolute() else base_dir / p


def load(value: str, base_dir: Path) -> TraceRef:
    """Read and check the trace ``value`` names. Raises TraceProblem."""
    if not value.strip():
        raise TraceProblem("an empty trace name")
    try:
        path = resolve(value, base_dir)
        if not path.exists():
            raise TraceProblem(f"{path}: no such file")
        if not path.is_file():
            raise TraceProblem(f"{path}: not a regular file")
        st = path.stat()
        if st.st_size > MAX_TRACE_BYTES:
            raise TraceProblem(f"{path}: {st.st_size} bytes, over the {MAX_TRACE_BYTES // 2**20} MiB a trace may have")
        ms = _parse_file(str(path), st.st_mtime_ns, st.st_size)
    except (OSError, ValueError) as e:
        if isinstance(e, TraceProblem):
            raise
        raise TraceProblem(f"{value}: cannot read the trace: {e}") from None
    rate = mean_rate_bps(len(ms), ms[-1])
    if not 1 <= rate <= limits.MAX_RATE_BPS:
        raise TraceProblem(
            f"{path}: its mean capacity, {len(ms)} opportunities in {ms[-1]} ms, is {rate} bit/s, "
            f"outside 1 bit/s … {limits.MAX_RATE_BPS // 10**9} Gbit/s"
        )
    ref = TraceRef(value)
    ref.path = path
    ref.ms = ms
    ref.sha256 = hashlib.sha256("\n".join(map(str, ms)).encode()).hexdigest()
    ref.mean_rate_bps = rate
    return ref


@functools.lru_cache(maxsize=32)
def _parse_file(path: str, mtime_ns: int, size: int) -> tuple[int, ...]:
    """The file's opportunities (cached by path, modification time and size: sweeps validate
    the same scenario many times)."""
    try:
        from .. import _sim  # type: ignore[attr-defined]
    except ImportError:
        raise TraceProblem("reading a trace needs the simulator extension (ccbench._sim), which is not built") from None
    with open(path, "rb") as f:
        data = f.read(MAX_TRACE_BYTES + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise TraceProblem(f"{path}: line {line}: not UTF-8 text") from None
    try:
        return tuple(_sim.parse_trace(text))
    except ValueError as e:
        line, problem = e.args if len(e.args) == 2 else (0, str(e))
        where = f"{path}: line {line}" if line else str(path)
        raise TraceProblem(f"{where}: {problem}") from None
