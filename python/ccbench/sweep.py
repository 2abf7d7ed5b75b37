"""Sweeps: grids of scenarios, repeats, executors (local processes or Dask), cache and resume.

A sweep expands the ``[sweep]`` table of a scenario (plus ``--grid`` options) into runs,
executes the runs that are not stored yet, and writes every result through
:mod:`ccbench.store` into one directory. See docs/sweeps.md for the user documentation.

Grid semantics (the contract documented in docs/sweeps.md):

* every key of ``[sweep]`` except ``repeat`` and ``zip`` is a dotted key path of the scenario
  ("bottleneck.loss", "flows.0.cc") whose value is a non-empty list of values; nested TOML
  tables (``bottleneck.loss = [...]`` written without quotes) are flattened to the same paths;
* ``zip = [["bottleneck.rtt", "bottleneck.jitter"], ...]``: the axes of one group vary
  together (element i with element i) instead of being crossed; all lists of a group must have
  the same length; the group takes the place of its first key in the axis order;
* the cells are the cartesian product of the axes, first axis outermost (like nested loops in
  the order the keys are written);
* ``repeat = N`` runs every cell N times; repeat r of a cell uses ``seed = cell seed + r``
  (the cell seed is the scenario's ``seed``, or the swept value when ``seed`` is an axis), so
  repeat 0 is exactly the scenario as written and the same sweep always gives the same runs;
* runs are ordered repeat-major: repeat 0 of every cell, then repeat 1, ... so a sweep that is
  interrupted has covered the whole grid evenly.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import signal
import socket
import sys
import threading
import time
import tomllib
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ccbench import procs

__all__ = [
    "SweepError",
    "Axis",
    "Grid",
    "RunSpec",
    "SweepSummary",
    "derive_seed",
    "parse_grid_option",
    "parse_zip_option",
    "grid_from_scenario",
    "plan",
    "execute_run",
    "run_sweep",
    "param_str",
    "axis_type",
    "identical_cells",
    "RunTimeout",
    "KernelLockError",
    "parse_run_timeout",
    "DEFAULT_RUN_TIMEOUT_S",
]

RESERVED_KEYS = ("repeat", "zip")
# Per machine lock for backends that must not run concurrently on one host (kernel): in a
# directory only root can write (a lock in /tmp could be redirected by a symlink or held by
# any user). CCBENCH_KERNEL_LOCK moves it (into a directory private to the user).
KERNEL_LOCK_PATH = Path(os.environ.get("CCBENCH_KERNEL_LOCK", "/run/ccbench/sweep-kernel.lock"))
#: How long a kernel run waits for the machine lock before it fails naming the holder.
try:
    KERNEL_LOCK_TIMEOUT_S = float(os.environ.get("CCBENCH_KERNEL_LOCK_TIMEOUT", "3600"))
except ValueError:  # not a number: the default (a sweep must not fail to import over it)
    KERNEL_LOCK_TIMEOUT_S = 3600.0
SERIAL_BACKENDS = frozenset({"kernel"})
#: Default of --run-timeout: far above any sane run (the simulator's events cap ends a run
#: that is merely huge long before); a run still going after it is stopped and stored failed.
DEFAULT_RUN_TIMEOUT_S = 3600.0
#: A worker whose run ignores the timeout (stuck outside Python) is killed this much later.
RUN_TIMEOUT_GRACE_S = 10.0
#: The store-level lock: one sweep at a time writes into a store; a second one waits.
STORE_LOCK = ".sweep.lock"


class SweepError(ValueError):
    """A sweep definition that cannot be expanded (message names the key and what was expected)."""


# --------------------------------------------------------------------------------------------
# Grid
# --------------------------------------------------------------------------------------------

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
            raise SweepError(f"{where}: not a key path (expected dotted names like \"bottleneck.loss\")")
        if isinstance(vals, (str, bytes)) or not isinstance(vals, (list, tuple)):
            raise SweepError(f"{where}: {vals!r} is not a list (expected a list of values, "
                             f"e.g. [\"0%\", \"1%\"])")
        if len(vals) == 0:
            raise SweepError(f"{where}: the list is empty (expected at least one value)")
        self.values[key] = list(vals)

    def with_options(self, grid: Sequence[str] = (), zips: Sequence[str] = (),
                     repeat: int | None = None) -> "Grid":
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
                        f"{', '.join(map(repr, self.values)) or 'no keys: add the axis first'})")
                if key in group_of:
                    raise SweepError(f"{self.source}: sweep.zip: {key!r} is in two zip groups "
                                     f"(expected each key in at most one group)")
                group_of[key] = group
        for group in self.zips:
            lengths = {k: len(self.values[k]) for k in group}
            if len(set(lengths.values())) > 1:
                detail = ", ".join(f"{k} has {n}" for k, n in lengths.items())
                raise SweepError(f"{self.source}: sweep.zip: the zipped lists must have the same "
                                 f"length, but {detail} values")
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
            isinstance(g, list) and g and all(isinstance(k, str) for k in g) for g in value):
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
        raise SweepError(f"--zip {option!r}: expected two or more swept keys, e.g. "
                         f"--zip bottleneck.rtt,bottleneck.jitter")
    return keys


def grid_from_scenario(scenario: Any, grid: Sequence[str] = (), zips: Sequence[str] = (),
                       repeat: int | None = None) -> Grid:
    """The scenario's ``[sweep]`` table with CLI options applied."""
    source = str(getattr(scenario, "source", None) or getattr(scenario, "name", None) or "[sweep]")
    return Grid.from_table(getattr(scenario, "sweep", None), source=source).with_options(
        grid, zips, repeat)


def derive_seed(cell_seed: int, repeat: int) -> int:
    """Seed of repeat ``repeat`` of a cell whose own seed is ``cell_seed``: ``cell_seed + repeat``."""
    return int(cell_seed) + int(repeat)


# --------------------------------------------------------------------------------------------
# Plan
# --------------------------------------------------------------------------------------------

@dataclass
class RunSpec:
    """One run of a sweep."""

    index: int                 # position in the plan (repeat-major)
    cell: int                  # grid cell index (product order)
    repeat: int
    seed: int
    params: dict[str, Any]     # swept key path -> value as given
    scenario: Any              # ccbench.scenario.Scenario, overrides and seed applied
    run_id: str
    types: dict[str, str] = field(default_factory=dict)  # swept key -> axis_type

    def columns(self) -> dict[str, Any]:
        """The columns added to every table: the swept values, typed per axis (axis_type), and
        ``repeat``."""
        cols: dict[str, Any] = {k: typed_value(v, self.types.get(k, "string"))
                                for k, v in self.params.items()}
        cols["repeat"] = self.repeat
        return cols


def _cell_seed(scenario: Any, cell: Mapping[str, Any]) -> int:
    if "seed" in cell:
        v = cell["seed"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise SweepError(f"sweep.seed: {v!r} is not a seed (expected non-negative integers, "
                             f"e.g. \"seed\" = [1, 100, 200])")
        return v
    return int(getattr(scenario, "seed", 0) or 0)


def plan(scenario: Any, grid: Grid | None = None, backend: str = "sim") -> list[RunSpec]:
    """Expand ``scenario`` over ``grid`` (default: its own ``[sweep]`` table) into runs.

    Every cell is validated by ``Scenario.with_overrides``; an invalid value raises SweepError
    naming the cell (nothing runs). Two cells that normalise to the same run raise SweepError.
    """
    from ccbench import results

    grid = grid if grid is not None else grid_from_scenario(scenario)
    cells = grid.cells()
    scenarios: list[list[Any]] = []
    for ci, cell in enumerate(cells):
        cell_seed = _cell_seed(scenario, cell)
        row = []
        for r in range(grid.repeat):
            overrides = dict(cell)
            overrides["seed"] = derive_seed(cell_seed, r)
            try:
                row.append(scenario.with_overrides(overrides))
            except ValueError as e:  # ScenarioError is a ValueError
                desc = ", ".join(f"{k}={param_str(v)}" for k, v in cell.items()) or "base scenario"
                raise SweepError(f"{grid.source}: sweep cell {desc}: {e}") from None
        scenarios.append(row)
    types = {k: axis_type(v) for k, v in grid.values.items()}
    runs: list[RunSpec] = []
    seen: dict[str, RunSpec] = {}
    for r in range(grid.repeat):
        for ci, cell in enumerate(cells):
            sc = scenarios[ci][r]
            spec = RunSpec(index=len(runs), cell=ci, repeat=r,
                           seed=derive_seed(_cell_seed(scenario, cell), r), params=dict(cell),
                           scenario=sc, run_id=results.make_run_id(sc, backend), types=types)
            if spec.run_id in seen:
                other = seen[spec.run_id]
                raise SweepError(
                    f"{grid.source}: sweep cells {_desc(other)} and {_desc(spec)} describe the same "
                    f"run (same normalised scenario and seed); remove the duplicate value")
            seen[spec.run_id] = spec
            runs.append(spec)
    return runs


def _desc(spec: RunSpec) -> str:
    return "(" + ", ".join([f"{k}={param_str(v)}" for k, v in spec.params.items()]
                           + [f"repeat={spec.repeat}"]) + ")"


# --------------------------------------------------------------------------------------------
# Execution (runs in worker processes / Dask workers)
# --------------------------------------------------------------------------------------------

class KernelLockError(RuntimeError):
    """The machine-wide kernel lock is unsafe (symlink, foreign owner) or held too long."""


class RunTimeout(BaseException):
    """Raised in a worker when its run exceeds --run-timeout. A BaseException, so that a
    backend's ``except Exception`` does not turn it into an ordinary failure (its ``finally``
    blocks still tear down what the run started)."""

    def __init__(self, seconds: float):
        super().__init__(seconds)
        self.seconds = float(seconds)

    def __str__(self) -> str:
        return (f"the run exceeded the run timeout of {_fmt_seconds(self.seconds)} "
                f"(--run-timeout) and was stopped")


def _fmt_seconds(seconds: float) -> str:
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds / 3600:g} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"


def parse_run_timeout(value: Any) -> float | None:
    """``--run-timeout``: a duration in seconds, in the one duration grammar of scenario files
    (units.parse_time_ns: ns, us, ms, s, min, h; a bare number is seconds): "600", "90s",
    "30min", "2h"; 0, "none" or "off" = no timeout. Raises SweepError otherwise."""
    from ccbench import units

    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("none", "off", "inf"):
        return None
    try:
        ns = units.parse_time_ns(value)
    except units.UnitError as e:
        raise SweepError(f"--run-timeout {units.quote(value)}: expected a duration such as 600 (seconds), "
                         f"90s, 30min or 2h, or none ({e.problem})") from None
    return ns / 1e9 or None


def _check_private_dir(directory: Path) -> None:
    """The lock's directory must be a real directory of this user (or root) that nobody else
    can write: then nobody else can plant a file or a symlink in it."""
    import stat

    if not directory.exists() and not directory.is_symlink():
        try:
            directory.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
        except OSError as e:
            raise KernelLockError(f"{directory}: cannot create the kernel lock's directory "
                                  f"({e.strerror}); the kernel backend runs as root") from None
    st = os.lstat(directory)
    if not stat.S_ISDIR(st.st_mode):
        raise KernelLockError(f"{directory}: the kernel lock's directory is not a directory "
                              f"(a symlink?); refusing to use it (remove it, or set "
                              f"CCBENCH_KERNEL_LOCK to a file in a directory only you can write)")
    if st.st_uid not in (os.geteuid(), 0) or st.st_mode & 0o022:
        raise KernelLockError(f"{directory}: the kernel lock's directory is writable by other "
                              f"users or owned by uid {st.st_uid}; refusing to use it (set "
                              f"CCBENCH_KERNEL_LOCK to a file in a directory only you can write)")


def open_private_lock(path: Path) -> int:
    """Open (creating) a lock file safely: never through a symlink (O_NOFOLLOW), only a regular
    file with one link owned by this user, in a directory nobody else can write. Returns the
    file descriptor; raises KernelLockError (one line, naming the path) otherwise."""
    import errno
    import stat

    path = Path(path)
    _check_private_dir(path.parent)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise KernelLockError(f"{path}: the kernel lock is a symlink; refusing to follow it "
                                  f"(remove it)") from None
        raise KernelLockError(f"{path}: cannot open the kernel lock ({e.strerror})") from None
    st = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(st.st_mode):
        problem = "is not a regular file"
    elif st.st_uid != os.geteuid():
        problem = f"belongs to uid {st.st_uid}, not to uid {os.geteuid()}"
    elif st.st_nlink != 1:
        problem = f"has {st.st_nlink} hard links"
    if problem:
        os.close(fd)
        raise KernelLockError(f"{path}: the kernel lock {problem}; refusing to use it (remove it)")
    return fd


def _lock_holder(fd: int) -> str:
    """" (pid N: command)" as the holder wrote it into the lock file, or ""."""
    try:
        text = os.pread(fd, 64, 0).decode(errors="replace").strip()
        pid = int(text.split()[0])
    except (OSError, ValueError, IndexError):
        return ""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = ""
    return f" (pid {pid}{': ' + cmd[:120] if cmd else ''})"


def _flock_wait(fd: int, timeout: float | None, on_wait: Callable[[str], None] | None = None) -> bool:
    """Take an exclusive flock on ``fd``, polling (so signals are handled while waiting).
    False when ``timeout`` passed first. ``on_wait(holder)`` is called once if it must wait.
    On success the lock file holds this process's pid."""
    import fcntl

    deadline = None if timeout is None else time.monotonic() + timeout
    waited = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if not waited and on_wait is not None:
                on_wait(_lock_holder(fd))
            waited = True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return True


@contextlib.contextmanager
def _machine_lock(backend: str):
    """Serialise runs of backends that must run alone on a machine (kernel), across processes."""
    if backend not in SERIAL_BACKENDS:
        yield
        return
    path = KERNEL_LOCK_PATH
    fd = open_private_lock(path)
    try:
        if not _flock_wait(fd, KERNEL_LOCK_TIMEOUT_S):
            raise KernelLockError(
                f"{path}: another kernel run holds this machine's lock{_lock_holder(fd)} for more "
                f"than {_fmt_seconds(KERNEL_LOCK_TIMEOUT_S)}; wait for it or stop it "
                f"(CCBENCH_KERNEL_LOCK_TIMEOUT sets how long to wait)")
        yield
    finally:
        os.close(fd)  # releases the flock


@contextlib.contextmanager
def _run_deadline(timeout: float | None):
    """Raise RunTimeout in the body after ``timeout`` seconds (SIGALRM: works in the main thread
    of a process, which is where local workers run; the simulator polls for it). Elsewhere
    (e.g. a Dask worker thread) the body runs without a deadline."""
    if (not timeout or not math.isfinite(timeout) or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    armed = [True]

    def on_alarm(signum, frame):
        if armed[0]:  # not after the body finished, in the instant before the timer is cancelled
            raise RunTimeout(timeout)

    with procs.signal_handler((signal.SIGALRM,), on_alarm):
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            yield
        finally:
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)  # before the old handler is back


def _error_text(exc: BaseException) -> str:
    try:
        text = str(exc).strip()
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises
        text = ""
    try:
        from ccbench.scenario import ScenarioError
    except ImportError:  # pragma: no cover
        ScenarioError = ()  # type: ignore[assignment]
    if isinstance(exc, (ScenarioError, RunTimeout, KernelLockError)) and text:
        return text  # already says what happened and what to do
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


# Set in sweep worker processes by _worker_init.
_WORKER: dict[str, Any] = {}


def _refuse_orphan() -> None:
    """In a sweep worker whose sweep process died: exit instead of starting a run (nobody would
    store it, and a kernel run would hold the machine)."""
    w = _WORKER
    if "sweep_pid" in w and procs.parent_gone(w["parent"], w["sweep_pid"]):
        os._exit(1)


def _note_start(run_id: str | None) -> None:
    """Tell the sweep process when this worker's run really started (after any lock wait), so
    it can kill a worker whose run outlives --run-timeout."""
    q = _WORKER.get("starts")
    if q is not None and run_id is not None:
        with contextlib.suppress(Exception):
            q.put((run_id, os.getpid(), time.monotonic()))


def execute_run(scenario: Any, backend: str, run_timeout: float | None = None,
                run_id: str | None = None) -> dict[str, Any]:
    """Run one scenario on ``backend`` and return its three tables (never raises for a run
    that fails: any exception, in the backend or in building its tables, is returned as a
    failed runs row with the message). ``run_timeout``: seconds after which the run is stopped
    (RunTimeout) and returned as failed.

    Returns {"runs", "flows", "series", "link_series", "counters": pyarrow Tables (or DataFrames), "run_id", "backend_s": seconds inside
    ``backend.run`` (None if it did not get that far), "host"}.
    """
    t0 = time.perf_counter()
    backend_s = None
    host = socket.gethostname()
    _WORKER["running"] = True
    try:
        _refuse_orphan()
        from ccbench import backends

        be = backends.get_backend(backend)
        be.check(scenario)
        with _machine_lock(backend):
            _refuse_orphan()  # the sweep may have died while this run waited for the lock
            _note_start(run_id)
            with _run_deadline(run_timeout):
                t1 = time.perf_counter()
                res = be.run(scenario)
                backend_s = time.perf_counter() - t1
        return _payload(res, backend_s, host)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP (procs.Terminated)
        if "sweep_pid" in _WORKER:
            # A local sweep worker whose run was stopped by a signal: the run has torn itself
            # down (the backend's finally blocks ran on the way here), and the sweep is stopping.
            # Exit now rather than let the pool hand this worker the next queued run: the
            # sweep's own SIGTERM may already have been spent on this run's teardown, so the
            # worker would start the next kernel run and be SIGKILLed in the middle of it,
            # leaving its namespaces and iperf3 processes behind.
            os._exit(procs.exit_status(exc))
        raise
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - includes pyo3 PanicException, RunTimeout
        message = _error_text(exc)
    finally:
        _WORKER["running"] = False
    return failed_payload(scenario, backend, message, time.perf_counter() - t0, run_id, host)


def failed_payload(scenario: Any, backend: str, message: str, wall_s: float | None = 0.0,
                   run_id: str | None = None, host: str | None = None) -> dict[str, Any]:
    """The payload of a failed run. Never raises: when the scenario cannot even be described
    (e.g. a value too large for the table's column type), the runs row keeps what can be
    stored and leaves the rest null."""
    from ccbench import results

    try:
        return _payload(results.failed_result(scenario, backend, message, wall_s), None, host)
    except Exception:  # noqa: BLE001
        pass
    return {"runs": _bare_failed_row(scenario, backend, message, wall_s, run_id), "flows": None,
            "series": None, "link_series": None, "counters": None, "run_id": run_id,
            "backend_s": None, "host": host}


def _bare_failed_row(scenario: Any, backend: str, message: str, wall_s: float | None,
                     run_id: str | None):
    """A one-row runs table (RUNS_SCHEMA) with status failed, built column by column: a value
    that cannot be computed or does not fit its column type is null."""
    import pyarrow as pa

    from ccbench import results

    values: dict[str, Any] = {}
    with contextlib.suppress(Exception):
        values.update(results.scenario_descriptors(scenario, backend))
    for name, get in (("run_id", lambda: run_id or results.make_run_id(scenario, backend)),
                      ("scenario_hash", lambda: scenario.scenario_hash()),
                      ("name", lambda: scenario.name), ("seed", lambda: scenario.seed),
                      ("ccbench_version", results.ccbench_version)):
        if values.get(name) is None:
            with contextlib.suppress(Exception):
                values[name] = get()
    if run_id is not None:
        values["run_id"] = run_id
    values.update({"backend": backend, "status": "failed", "error": message, "wall_time_s": wall_s})
    cols = []
    for f in results.RUNS_SCHEMA:
        try:
            cols.append(pa.array([values.get(f.name)], type=f.type))
        except Exception:  # noqa: BLE001 - out of range for the column type
            cols.append(pa.array([None], type=f.type))
    return pa.Table.from_arrays(cols, schema=results.RUNS_SCHEMA)


def _payload(res: Any, backend_s: float | None, host: str | None) -> dict[str, Any]:
    # the typed pyarrow tables when the RunResult has them (cheaper to ship than DataFrames)
    names = ("runs", "flows", "series", "link_series")
    tabs = {t: getattr(res, f"{t}_table", None) for t in names}
    if any(v is None for v in tabs.values()):
        tabs = {t: getattr(res, t, None) for t in names}
    tabs["counters"] = getattr(res, "counters_table", None)  # absent on results of older code
    return {**tabs, "run_id": res.run_id, "backend_s": backend_s, "host": host}


# --------------------------------------------------------------------------------------------
# Executors
# --------------------------------------------------------------------------------------------

class LocalExecutor:
    """ProcessPoolExecutor that survives a worker crash (segfault, OOM kill) and can kill the
    worker of a run that outlives its timeout. Workers die with the sweep process (prctl
    PR_SET_PDEATHSIG and a parent watchdog, see procs.die_with_parent)."""

    can_kill = True

    def __init__(self, workers: int):
        import multiprocessing as mp

        self.workers = workers
        # fork (Linux): workers start in milliseconds with ccbench already imported, and a
        # script calling run_sweep needs no `if __name__ == "__main__"` guard. The pool is
        # started before the progress thread exists. CCBENCH_MP_START=forkserver|spawn to change.
        method = os.environ.get("CCBENCH_MP_START") or ("fork" if sys.platform == "linux" else None)
        self.ctx = mp.get_context(method)
        if self.ctx.get_start_method() == "fork":
            from ccbench import backends, results  # noqa: F401  (imported once, inherited)
            with contextlib.suppress(Exception):
                backends.get_backend("sim")
        self.started: dict[str, tuple[int, float]] = {}  # run_id -> (worker pid, start time)
        self.pool = self._new_pool()
        self.max_inflight = workers * 2
        self.description = f"{workers} local process{'es' if workers != 1 else ''}"

    def _new_pool(self):
        from concurrent.futures import ProcessPoolExecutor

        # a new queue per pool: a worker killed while writing to it cannot block the next pool
        self.starts = self.ctx.SimpleQueue()
        self.started = {}
        pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=self.ctx,
                                   initializer=_worker_init, initargs=(os.getpid(), self.starts))
        # start every worker now (with fork, the pool forks them all on the first submit)
        for f in [pool.submit(os.getpid) for _ in range(self.workers)]:
            f.result()
        return pool

    def submit(self, spec: "RunSpec", backend: str, run_timeout: float | None):
        return self.pool.submit(execute_run, spec.scenario, backend, run_timeout, spec.run_id)

    def submit_call(self, fn: Callable[..., Any], *args: Any):
        """Run ``fn(*args)`` on a worker (a picklable module-level function) and return its
        future: for callers that reduce a run to their own numbers (recommend's run_metrics)."""
        return self.pool.submit(fn, *args)

    def wait(self, futures, timeout: float | None = None):
        from concurrent.futures import FIRST_COMPLETED, wait

        done, _ = wait(list(futures), timeout=timeout, return_when=FIRST_COMPLETED)
        return done

    def overdue(self, run_ids: Iterable[str], limit_s: float) -> list[tuple[str, int]]:
        """(run_id, worker pid) of the runs among ``run_ids`` that started more than
        ``limit_s`` seconds ago."""
        with contextlib.suppress(Exception):
            while not self.starts.empty():
                run_id, pid, t = self.starts.get()
                self.started[run_id] = (pid, t)
        now = time.monotonic()
        out = []
        for run_id in run_ids:
            pid, t = self.started.get(run_id, (None, None))
            if pid is not None and now - t > limit_s:
                out.append((run_id, pid))
        return out

    def kill(self, pid: int) -> None:
        procs.kill(pid, wait_s=5.0)

    def is_crash(self, exc: BaseException) -> bool:
        from concurrent.futures.process import BrokenProcessPool

        return isinstance(exc, BrokenProcessPool)

    def restart(self):
        self._stop_workers()
        self.pool = self._new_pool()

    def _stop_workers(self):
        procs_ = list((getattr(self.pool, "_processes", None) or {}).values())
        results_q = getattr(self.pool, "_result_queue", None)  # shutdown() forgets it
        self.pool.shutdown(wait=False, cancel_futures=True)
        for p in procs_:
            with contextlib.suppress(Exception):
                p.terminate()
        for p in procs_:
            with contextlib.suppress(Exception):
                p.join(5)
            if p.is_alive():
                with contextlib.suppress(Exception):
                    p.kill()
                    p.join(2)
        # A worker killed while sending its result leaves half a message in the result pipe,
        # and the pool's manager thread waits for the rest for ever (and the interpreter for it
        # at exit). With every worker gone, closing our own write end gives it end-of-file.
        with contextlib.suppress(Exception):
            results_q._writer.close()

    def close(self, abort: bool = False):
        if abort:  # Ctrl-C: stop the simulations in flight instead of waiting for them
            self._stop_workers()
        else:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _worker_init(sweep_pid: int | None = None, starts: Any = None) -> None:
    # Ctrl-C goes to the whole process group: only the main process handles it (it stops the
    # workers), so the terminal does not fill with one traceback per worker. SIGTERM and
    # SIGHUP kill a worker (the sweep process's own handlers are inherited by fork: undo them).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    if sweep_pid is None:
        return
    _WORKER.update(parent=os.getppid(), sweep_pid=sweep_pid, starts=starts, running=False)
    procs.die_with_parent(sweep_pid, busy=lambda: _WORKER.get("running", False))


class _DaskExecutor:
    def __init__(self, address: str, workers: int | None):
        try:
            import distributed
        except ImportError:  # pragma: no cover - depends on the install
            raise SweepError("--dask needs the 'distributed' package: pip install 'ccbench[dask]'") from None
        self.cluster = None
        if address == "local":
            n = workers or os.cpu_count() or 1
            self.cluster = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None)
            self.client = distributed.Client(self.cluster)
            self.description = f"Dask LocalCluster, {n} worker processes"
        else:
            try:
                self.client = distributed.Client(address, timeout="10s")
            except (OSError, TimeoutError) as e:
                raise SweepError(f"--dask {address}: cannot reach the Dask scheduler ({e}); start "
                                 f"one with `dask scheduler` (see docs/sweeps.md)") from None
            self.description = f"Dask scheduler {address}"
        threads = sum(self.client.nthreads().values()) or 1
        self.workers = threads
        self.description += f" ({threads} worker threads)"
        self.max_inflight = max(4 * threads, 16)

    can_kill = False  # a Dask worker thread cannot be interrupted (docs/sweeps.md, Run limits)

    def submit(self, spec: "RunSpec", backend: str, run_timeout: float | None):
        return self.client.submit(execute_run, spec.scenario, backend, run_timeout, spec.run_id,
                                  pure=False)

    def wait(self, futures, timeout: float | None = None):
        import distributed

        try:
            done, _ = distributed.wait(list(futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return set()
        return done

    def overdue(self, run_ids, limit_s):  # pragma: no cover
        return []

    def kill(self, pid):  # pragma: no cover
        pass

    def is_crash(self, exc: BaseException) -> bool:
        return False  # Dask reschedules tasks of dead workers itself (KilledWorker after retries)

    def restart(self):  # pragma: no cover
        pass

    def close(self, abort: bool = False):
        with contextlib.suppress(Exception):
            self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()


# --------------------------------------------------------------------------------------------
# The sweep
# --------------------------------------------------------------------------------------------

@dataclass
class SweepSummary:
    out: Path
    backend: str
    executor: str
    total: int = 0          # runs in the plan
    cached: int = 0         # stored ok before this sweep started
    stored_failed: int = 0  # stored failed before and not retried (see --retry-failed)
    ok: int = 0             # executed now, ok
    failed: int = 0         # executed now, failed
    wall_s: float = 0.0
    interrupted: bool = False
    backend_s: float = 0.0  # total seconds spent inside backend.run over executed runs
    errors: Counter = field(default_factory=Counter)
    # cells (swept values) whose repeats all gave the same aggregate goodput: the repeats did
    # not vary (no random loss, jitter or start_jitter), so their spread says nothing
    identical_cells: list = field(default_factory=list)

    @property
    def executed(self) -> int:
        return self.ok + self.failed

    @property
    def runs_per_s(self) -> float:
        return self.executed / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def all_ok(self) -> bool:
        return self.failed == 0 and self.stored_failed == 0


def _load_scenario(scenario_or_path: Any, overrides: Sequence[str] | Mapping[str, Any]):
    """A Scenario from a Scenario, a TOML path or a TOML-shaped dict, ``--set`` overrides applied."""
    from ccbench.api import as_scenario

    return as_scenario(scenario_or_path, overrides)


def run_sweep(scenario: Any, out: str | os.PathLike, *, grid: Sequence[str] = (),
              zips: Sequence[str] = (), repeat: int | None = None, backend: str = "sim",
              workers: int | None = None, dask: str | None = None, retry_failed: bool = False,
              overrides: Sequence[str] | Mapping[str, Any] = (), progress: bool = True,
              console: Any = None, on_result: Callable[[RunSpec, dict], None] | None = None,
              command: Sequence[str] | None = None, study: str | None = None,
              run_timeout: float | str | None = DEFAULT_RUN_TIMEOUT_S) -> SweepSummary:
    """Run a sweep into ``out`` and return its summary.

    ``command`` (the argv that asked for it) and ``study`` (a study name) are recorded in
    DIR/ccbench.json with the scenario, grid, backend and versions (docs/results.md).

    ``scenario``: a Scenario or a path to a TOML file (``overrides`` applied first, like --set).
    Runs already stored with status ok are skipped; stored failed runs are skipped unless
    ``retry_failed``. ``workers``: local processes (default os.cpu_count(); forced to 1 for the
    kernel backend). ``dask``: "local" or a scheduler address "tcp://host:port".
    ``run_timeout``: seconds (or "90s", "30min", "2h"; None = none) after which a run is
    stopped and stored as failed; default 1 h. One sweep at a time writes into a store: a
    second sweep into the same directory waits for the first, then runs only what is missing.
    SIGTERM and SIGHUP stop the sweep like Ctrl-C (KeyboardInterrupt; procs.Terminated).
    """
    from ccbench.store import Store

    t_start = time.perf_counter()
    run_timeout = parse_run_timeout(run_timeout)
    base = _load_scenario(scenario, overrides)
    _check_backend(backend, remote=dask is not None)
    g = grid_from_scenario(base, grid, zips, repeat)
    specs = plan(base, g, backend)
    store = Store(out)

    notes = []
    if backend in SERIAL_BACKENDS:
        if dask is None and workers not in (None, 1):
            notes.append(f"--workers {workers} ignored")
        workers = 1
        notes.insert(0, "kernel backend: one run at a time per machine "
                        "(runs would share the CPU with the link emulator)")
        if dask is None and os.geteuid() == 0:
            try:
                os.close(open_private_lock(KERNEL_LOCK_PATH))  # unsafe lock: say so before any run
            except KernelLockError as e:
                raise SweepError(str(e)) from None

    summary = SweepSummary(out=Path(out), backend=backend, executor="", total=len(specs))
    todo = _to_run(specs, store.statuses(), retry_failed, summary)

    from ccbench.meta import build_meta, write_meta

    meta = build_meta(base, backend, grid=g.values, repeat=g.repeat, command=command, study=study)
    console = _console(console)

    def finish_without_running() -> SweepSummary:
        summary.executor = "none (everything stored)"
        write_meta(out, meta)
        summary.identical_cells = identical_cells(store, specs)
        summary.wall_s = time.perf_counter() - t_start
        if progress:
            print_summary(summary, console, notes)
        return summary

    if not todo:
        return finish_without_running()

    waited: list[str] = []

    def on_wait(holder: str) -> None:
        waited.append(holder)
        if progress:
            console.print(f"[yellow]another sweep{holder} is writing into {store.root}:[/] waiting "
                          f"for it to finish; then only the runs it did not store are run",
                          highlight=False, soft_wrap=True)

    # SIGTERM / SIGHUP: like Ctrl-C (stop the workers, keep what is stored), exit 143 / 129
    with procs.signals_raise(), contextlib.ExitStack() as stack:
        if dask is not None:
            executor: Any = _DaskExecutor(dask, workers)
        else:
            n = workers if workers is not None else (os.cpu_count() or 1)
            if n < 1:
                raise SweepError(f"--workers {n}: expected at least 1")
            executor = LocalExecutor(min(n, len(todo)))
        stack.callback(lambda: executor.close() if executor is not None else None)
        summary.executor = executor.description
        # after the executor exists: a sweep that cannot start leaves no directory
        store.prepare()
        stack.enter_context(_store_lock(store.root, on_wait))
        if waited:  # what the other sweep stored is not run again
            summary.cached = summary.stored_failed = 0
            todo = _to_run(specs, store.statuses(), retry_failed, summary)
            if not todo:
                return finish_without_running()
        write_meta(out, meta)
        try:
            _execute(executor, todo, backend, run_timeout, store, summary, progress, console,
                     notes, on_result)
        except KeyboardInterrupt:
            executor.close(abort=True)
            executor = None
            summary.wall_s = time.perf_counter() - t_start
            summary.interrupted = True
            if progress:
                print_summary(summary, console, notes)
                console.print(f"[yellow]interrupted[/]: {summary.cached + summary.executed} of "
                              f"{summary.total} runs are stored; run the same command again to "
                              f"finish.", soft_wrap=True)
            raise
    summary.identical_cells = identical_cells(store, specs)
    summary.wall_s = time.perf_counter() - t_start
    if progress:
        print_summary(summary, console, notes)
    return summary


def _to_run(specs: Sequence[RunSpec], statuses: Mapping[str, str], retry_failed: bool,
            summary: SweepSummary) -> list[RunSpec]:
    """The runs not stored yet (and the stored failed ones with ``retry_failed``); counts the
    others into ``summary``."""
    todo = []
    for spec in specs:
        st = statuses.get(spec.run_id)
        if st == "ok":
            summary.cached += 1
        elif st is not None and not retry_failed:
            summary.stored_failed += 1
        else:
            todo.append(spec)
    return todo


@contextlib.contextmanager
def _store_lock(root: Path, on_wait: Callable[[str], Any]):
    """Hold DIR/.sweep.lock (flock) while this sweep writes into the store: a second sweep
    into the same store waits here (``on_wait(holder)`` is called once), then runs only what
    the first did not store. The lock is released when the process ends, however it ends."""
    path = Path(root) / STORE_LOCK
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        from ccbench.store import StoreError

        raise StoreError(f"{path}: cannot open the store's lock file ({e.strerror})") from None
    try:
        _flock_wait(fd, None, on_wait)
        yield
    finally:
        os.close(fd)


def _execute(executor: Any, todo: Sequence[RunSpec], backend: str, run_timeout: float | None,
             store: Any, summary: SweepSummary, progress: bool, console: Any, notes: Sequence[str],
             on_result: Callable[[RunSpec, dict], None] | None) -> None:
    """Run ``todo`` on ``executor`` and store every result (the loop of run_sweep)."""
    bar = _Progress(console, len(todo), summary, executor.description, notes) if progress else None
    pending = deque(todo)
    inflight: dict[Any, RunSpec] = {}
    # Runs that were in flight when a worker process died: rerun one at a time, so the run
    # that kills its worker is identified and stored as failed, and the others complete.
    isolated: deque[RunSpec] = deque()
    killed: set[str] = set()  # run ids whose worker we killed: they outlived the run timeout
    hard_limit = run_timeout + RUN_TIMEOUT_GRACE_S if run_timeout and executor.can_kill else None

    def record(spec: RunSpec, payload: dict) -> None:
        _record(store, spec, payload, summary, bar, on_result)

    # Ctrl-C, SIGTERM, SIGHUP are noted by the handler and acted on between two waits: an
    # exception raised at an arbitrary point could leave a lock of concurrent.futures held
    # and hang the shutdown that follows.
    stop: list[int] = []
    try:
        with procs.signals_recorded(stop):
            if bar:
                bar.start()
            _loop(executor, pending, inflight, isolated, killed, hard_limit, backend, run_timeout,
                  record, stop)
    finally:
        if bar:
            bar.stop()


def _raise_if_stopped(stop: list[int]) -> None:
    if stop:
        raise KeyboardInterrupt() if stop[0] == signal.SIGINT else procs.Terminated(stop[0])


def _loop(executor, pending, inflight, isolated, killed, hard_limit, backend, run_timeout,
          record, stop) -> None:
    solo: RunSpec | None = None
    while pending or inflight or isolated:
        _raise_if_stopped(stop)
        if isolated or solo is not None:
            if not inflight and isolated:
                solo = isolated.popleft()
                inflight[executor.submit(solo, backend, run_timeout)] = solo
        else:
            while pending and len(inflight) < executor.max_inflight:
                spec = pending.popleft()
                inflight[executor.submit(spec, backend, run_timeout)] = spec
        crashed: list[RunSpec] = []
        done = executor.wait(inflight, timeout=0.25)
        _raise_if_stopped(stop)
        for fut in done:
            spec = inflight.pop(fut)
            try:
                payload = fut.result()
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: BLE001
                if executor.is_crash(exc):
                    crashed.append(spec)
                    continue
                payload = _failed_payload(spec, backend, f"executor: {_error_text(exc)}")
            if spec is solo:
                solo = None
            record(spec, payload)
        if crashed:
            # the pool is broken: every run still in flight is lost with it
            lost = sorted(crashed + list(inflight.values()), key=lambda s: s.index)
            inflight.clear()
            executor.restart()
            timed_out = [s for s in lost if s.run_id in killed]
            killed.clear()
            for spec in timed_out:
                record(spec, _failed_payload(spec, backend, str(RunTimeout(run_timeout))
                                             + "; its worker did not stop and was killed"))
            others = [s for s in lost if s not in timed_out]
            if timed_out:  # the cause is known: the others did nothing wrong
                pending.extendleft(reversed(others))
            elif solo is not None and solo in lost:
                record(solo, _failed_payload(
                    solo, backend, "the worker process died while running it "
                    "(crash or out of memory; it was rerun alone to be sure)"))
            else:
                isolated.extend(others)
            if solo is not None and solo in lost:
                solo = None
        if hard_limit and inflight:
            ids = {s.run_id for s in inflight.values()} - killed
            for run_id, pid in executor.overdue(ids, hard_limit):
                killed.add(run_id)
                executor.kill(pid)


def identical_cells(store: Any, specs: Sequence[RunSpec]) -> list[dict[str, Any]]:
    """The cells (swept values) with two or more ok repeats that all have the same aggregate
    goodput: those repeats did not vary. Empty when there is only one repeat."""
    import pyarrow.parquet as pq

    by_cell: dict[int, list[RunSpec]] = {}
    for spec in specs:
        by_cell.setdefault(spec.cell, []).append(spec)
    out = []
    for cell_specs in by_cell.values():
        if len(cell_specs) < 2:
            continue
        goodputs = []
        for spec in cell_specs:
            try:
                row = pq.ParquetFile(store.path("runs", spec.run_id)).read(
                    columns=["status", "aggregate_goodput_bps"]).to_pylist()[0]
            except Exception:  # not stored (interrupted) or unreadable: cannot judge this cell
                row = None
            if row is None or row["status"] != "ok" or row["aggregate_goodput_bps"] is None:
                goodputs = []
                break
            goodputs.append(row["aggregate_goodput_bps"])
        if len(goodputs) >= 2 and len(set(goodputs)) == 1:
            out.append(dict(cell_specs[0].params))
    return out


def _check_backend(name: str, remote: bool) -> None:
    """Refuse an unknown backend before anything runs. A backend that cannot be imported here
    is refused for local runs only (on Dask, the workers may have it when the client does not)."""
    from ccbench import backends

    try:
        backends.get_backend(name)
    except ValueError as e:
        if not remote or name not in getattr(backends, "BACKENDS", ()):
            raise SweepError(str(e)) from None


def _failed_payload(spec: RunSpec, backend: str, message: str) -> dict[str, Any]:
    """The payload of a failed run of ``spec`` (never raises, see failed_payload)."""
    return failed_payload(spec.scenario, backend, message, 0.0, spec.run_id)


def _record(store, spec: RunSpec, payload: dict, summary: SweepSummary, bar, on_result) -> None:
    """Store one run. A payload the store cannot write (anything but a file-system error)
    is stored as a failed run with the error instead, and the sweep goes on."""
    from ccbench.store import StoreError

    if payload.get("run_id") not in (None, spec.run_id):
        payload = _failed_payload(spec, summary.backend, (
            f"the worker computed run id {payload.get('run_id')} but the client expected "
            f"{spec.run_id}: different ccbench versions on client and worker?"))
    try:
        columns = spec.columns()
    except Exception:  # noqa: BLE001
        columns = {"repeat": spec.repeat}
    try:
        status = store.write(spec.run_id, payload["runs"], payload.get("flows"),
                             payload.get("series"), columns,
                             link_series=payload.get("link_series"),
                             counters=payload.get("counters"))
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001
        payload = _failed_payload(spec, summary.backend,
                                  f"storing the run's tables failed: {_error_text(exc)}")
        status = store.write(spec.run_id, payload["runs"], None, None, columns)
    if status == "ok":
        summary.ok += 1
    else:
        summary.failed += 1
        summary.errors[store.last_error or "unknown error"] += 1
    if payload.get("backend_s"):
        summary.backend_s += payload["backend_s"]
    if on_result is not None:
        on_result(spec, payload)
    if bar:
        bar.advance()


# --------------------------------------------------------------------------------------------
# Progress and summary (rich)
# --------------------------------------------------------------------------------------------

def _console(console):
    if console is not None:
        return console
    from rich.console import Console

    return Console(stderr=True)


class _Progress:
    def __init__(self, console, total: int, summary: SweepSummary, executor: str, notes):
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn,
                                   TextColumn, TimeRemainingColumn)
        from rich.text import Text

        s = summary

        class Counts(ProgressColumn):
            def render(self, task):
                t = Text()
                t.append(f"ok {s.ok}", style="green")
                t.append(f" failed {s.failed}", style="red" if s.failed else "")
                t.append(f" cached {s.cached}", style="cyan")
                return t

        class Rate(ProgressColumn):
            def render(self, task):
                el = task.elapsed or 0.0
                rate = task.completed / el if el > 0 else 0.0
                return Text(f"{rate:.1f} runs/s")

        self.console = console
        self.summary = summary
        self.header = (f"sweep: {s.total} runs ({s.cached} cached"
                       + (f", {s.stored_failed} stored failed, not retried" if s.stored_failed else "")
                       + f"), {total} to run on {executor}, backend {s.backend}")
        self.notes = notes
        self.progress = Progress(
            BarColumn(bar_width=20), MofNCompleteColumn(), Counts(),
            Rate(), TextColumn("ETA"), TimeRemainingColumn(),
            console=console, transient=False)
        self.task = self.progress.add_task("runs", total=total)

        # not a terminal (CI log, `| tee`): a plain line every 5 % or 30 s instead of a live bar
        self.live = bool(getattr(console, "is_terminal", True))
        self.total = total
        self.done = 0
        self.t0 = 0.0
        self.last_line = 0.0
        self.step = max(1, total // 20)

    def start(self):
        self.console.print(self.header, highlight=False, soft_wrap=True)
        for note in self.notes:
            self.console.print(f"[yellow]{note}[/]")
        self.t0 = self.last_line = time.monotonic()
        if self.live:
            self.progress.start()

    def advance(self):
        self.done += 1
        if self.live:
            self.progress.advance(self.task)
            return
        now = time.monotonic()
        if self.done == self.total or self.done % self.step == 0 or now - self.last_line > 30:
            self.last_line = now
            s, el = self.summary, now - self.t0
            rate = self.done / el if el > 0 else 0.0
            eta = (self.total - self.done) / rate if rate > 0 else float("nan")
            self.console.print(f"{self.done}/{self.total} ok {s.ok} failed {s.failed} cached "
                               f"{s.cached}  {rate:.1f} runs/s  ETA {eta:.0f} s", highlight=False,
                               soft_wrap=True)

    def stop(self):
        if self.live:
            self.progress.stop()


def print_summary(summary: SweepSummary, console=None, notes: Sequence[str] = ()) -> None:
    from rich.table import Table

    console = _console(console)
    t = Table(title=f"sweep into {summary.out}", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column(justify="right")
    t.add_row("runs in the grid", str(summary.total))
    t.add_row("already stored (ok)", str(summary.cached))
    if summary.stored_failed:
        t.add_row("stored failed, not retried", f"[red]{summary.stored_failed}[/] (--retry-failed)")
    t.add_row("ran now: ok", f"[green]{summary.ok}[/]")
    t.add_row("ran now: failed", f"[red]{summary.failed}[/]" if summary.failed else "0")
    t.add_row("backend / executor", f"{summary.backend} / {summary.executor}")
    t.add_row("wall time", f"{summary.wall_s:.1f} s")
    if summary.executed:
        t.add_row("throughput", f"{summary.runs_per_s:.2f} runs/s")
    console.print(t)
    for note in notes:
        console.print(f"[yellow]{note}[/]")
    if summary.identical_cells:
        n, first = len(summary.identical_cells), summary.identical_cells[0]
        desc = ", ".join(f"{k}={param_str(v)}" for k, v in first.items()) or "the base scenario"
        console.print(f"[yellow]warning:[/] {n} cell{'s' if n != 1 else ''} gave the same goodput in "
                      f"every repeat (e.g. {desc}): the repeats did not vary, so their spread says "
                      f"nothing; add random loss, jitter or start_jitter (docs/scenario.md)",
                      highlight=False, soft_wrap=True)
    for msg, n in summary.errors.most_common(5):
        console.print(f"[red]failed ×{n}:[/] {msg}", highlight=False, soft_wrap=True)
    if len(summary.errors) > 5:
        console.print(f"[red]... and {len(summary.errors) - 5} more distinct errors[/] "
                      f"(see the runs table: status = 'failed')")


class _CallableModule(type(sys)):
    """``ccbench.sweep(scenario, out, **kw)`` calls ccbench.api.sweep (runs the sweep and
    returns the loaded Results) while ``ccbench.sweep.run_sweep`` etc. stay module attributes."""

    def __call__(self, scenario_or_path: Any, out: str | os.PathLike, **kwargs: Any):
        from ccbench.api import sweep as _sweep

        return _sweep(scenario_or_path, out, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
