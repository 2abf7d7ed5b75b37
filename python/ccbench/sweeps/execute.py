"""One run in a worker: the backend's check and run under the machine lock and the run's
deadline, its tables as a payload; a failure of any kind becomes a failed runs row, never an
exception that stops the sweep."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import socket
import threading
import time
from typing import Any

from .. import procs
from .grid import SweepError
from .lock import KernelLockError, format_seconds, machine_lock

#: Default of --run-timeout: far above any sane run (the simulator's events cap ends a run
#: that is merely huge long before); a run still going after it is stopped and stored failed.
DEFAULT_RUN_TIMEOUT_S = 3600.0


#: A worker whose run ignores the timeout (stuck outside Python) is killed this much later.
RUN_TIMEOUT_GRACE_S = 10.0


class RunTimeout(BaseException):
    """Raised in a worker when its run exceeds --run-timeout. A BaseException, so that a
    backend's ``except Exception`` does not turn it into an ordinary failure (its ``finally``
    blocks still tear down what the run started)."""

    def __init__(self, seconds: float):
        super().__init__(seconds)
        self.seconds = float(seconds)

    def __str__(self) -> str:
        return f"the run exceeded the run timeout of {format_seconds(self.seconds)} (--run-timeout) and was stopped"


def parse_run_timeout(value: Any) -> float | None:
    """``--run-timeout``: a duration in seconds, in the one duration grammar of scenario files
    (units.parse_time_ns: ns, us, ms, s, min, h; a bare number is seconds): "600", "90s",
    "30min", "2h"; 0, "none" or "off" = no timeout. Raises SweepError otherwise."""
    from .. import units

    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("none", "off", "inf"):
        return None
    try:
        ns = units.parse_time_ns(value)
    except units.UnitError as e:
        raise SweepError(
            f"--run-timeout {units.quote(value)}: expected a duration such as 600 (seconds), "
            f"90s, 30min or 2h, or none ({e.problem})"
        ) from None
    return ns / 1e9 or None


@contextlib.contextmanager
def _run_deadline(timeout: float | None):
    """Raise RunTimeout in the body after ``timeout`` seconds (SIGALRM: works in the main thread
    of a process, which is where local workers run; the simulator polls for it). Elsewhere
    (e.g. a Dask worker thread) the body runs without a deadline."""
    if (
        not timeout
        or not math.isfinite(timeout)
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
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


def error_text(exc: BaseException) -> str:
    try:
        text = str(exc).strip()
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises
        text = ""
    try:
        from ..scenario.errors import ScenarioError
    except ImportError:  # pragma: no cover
        ScenarioError = ()  # type: ignore[assignment]
    if isinstance(exc, (ScenarioError, RunTimeout, KernelLockError)) and text:
        return text  # already says what happened and what to do
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


# Set in sweep worker processes by _worker_init.
WORKER_STATE: dict[str, Any] = {}


def _refuse_orphan() -> None:
    """In a sweep worker whose sweep process died: exit instead of starting a run (nobody would
    store it, and a kernel run would hold the machine)."""
    w = WORKER_STATE
    if "sweep_pid" in w and procs.parent_gone(w["parent"], w["sweep_pid"]):
        os._exit(1)


def _note_start(run_id: str | None) -> None:
    """Tell the sweep process when this worker's run really started (after any lock wait), so
    it can kill a worker whose run outlives --run-timeout."""
    q = WORKER_STATE.get("starts")
    if q is not None and run_id is not None:
        with contextlib.suppress(Exception):
            q.put((run_id, os.getpid(), time.monotonic()))


def execute_run(
    scenario: Any, backend: str, run_timeout: float | None = None, run_id: str | None = None
) -> dict[str, Any]:
    """Run one scenario on ``backend`` and return its three tables (never raises for a run
    that fails: any exception, in the backend or in building its tables, is returned as a
    failed runs row with the message). ``run_timeout``: seconds after which the run is stopped
    (RunTimeout) and returned as failed.

    Returns {"runs", "flows", "series", "link_series", "counters": pyarrow Tables (or DataFrames),
    "run_id", "backend_s": seconds inside
    ``backend.run`` (None if it did not get that far), "host"}.
    """
    t0 = time.perf_counter()
    backend_s = None
    host = socket.gethostname()
    WORKER_STATE["running"] = True
    try:
        _refuse_orphan()
        from .. import backends

        be = backends.get_backend(backend)
        be.check(scenario)
        with machine_lock(backend):
            _refuse_orphan()  # the sweep may have died while this run waited for the lock
            _note_start(run_id)
            with _run_deadline(run_timeout):
                t1 = time.perf_counter()
                res = be.run(scenario)
                backend_s = time.perf_counter() - t1
        return _payload(res, backend_s, host)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP (procs.Terminated)
        if "sweep_pid" in WORKER_STATE:
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
        message = error_text(exc)
    finally:
        WORKER_STATE["running"] = False
    return failed_payload(scenario, backend, message, time.perf_counter() - t0, run_id, host)


def failed_payload(
    scenario: Any,
    backend: str,
    message: str,
    wall_s: float | None = 0.0,
    run_id: str | None = None,
    host: str | None = None,
) -> dict[str, Any]:
    """The payload of a failed run. Never raises: when the scenario cannot even be described
    (e.g. a value too large for the table's column type), the runs row keeps what can be
    stored and leaves the rest null."""
    from .. import results

    try:
        return _payload(results.failed_result(scenario, backend, message, wall_s), None, host)
    except Exception:  # noqa: BLE001
        pass
    return {
        "runs": _bare_failed_row(scenario, backend, message, wall_s, run_id),
        "flows": None,
        "series": None,
        "link_series": None,
        "counters": None,
        "run_id": run_id,
        "backend_s": None,
        "host": host,
    }


def _bare_failed_row(scenario: Any, backend: str, message: str, wall_s: float | None, run_id: str | None):
    """A one-row runs table (RUNS_SCHEMA) with status failed, built column by column: a value
    that cannot be computed or does not fit its column type is null."""
    import pyarrow as pa

    from .. import results

    values: dict[str, Any] = {}
    with contextlib.suppress(Exception):
        values.update(results.scenario_descriptors(scenario, backend))
    for name, get in (
        ("run_id", lambda: run_id or results.make_run_id(scenario, backend)),
        ("scenario_hash", lambda: scenario.scenario_hash()),
        ("name", lambda: scenario.name),
        ("seed", lambda: scenario.seed),
        ("ccbench_version", results.ccbench_version),
    ):
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
