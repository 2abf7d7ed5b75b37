"""Running a sweep: plan the runs, skip those the store holds, execute the rest on an executor,
store each result as it arrives, and survive Ctrl-C, SIGTERM, crashed workers and runs that
outlive their timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .. import procs
from ..scenario.model import as_scenario
from .execute import (
    DEFAULT_RUN_TIMEOUT_S,
    RUN_TIMEOUT_GRACE_S,
    RunTimeout,
    error_text,
    failed_payload,
    parse_run_timeout,
)
from .executors import DaskExecutor, LocalExecutor
from .grid import SweepError, grid_from_scenario
from .lock import KERNEL_LOCK_PATH, SERIAL_BACKENDS, KernelLockError, open_private_lock, store_lock
from .plan import RunSpec, plan
from .progress import Progress, SweepSummary, print_summary, resolve_console


def run_sweep(
    scenario: Any,
    out: str | os.PathLike,
    *,
    grid: Sequence[str] = (),
    zips: Sequence[str] = (),
    repeat: int | None = None,
    backend: str = "sim",
    workers: int | None = None,
    dask: str | None = None,
    retry_failed: bool = False,
    overrides: Sequence[str] | Mapping[str, Any] = (),
    progress: bool = True,
    console: Any = None,
    on_result: Callable[[RunSpec, dict], None] | None = None,
    command: Sequence[str] | None = None,
    study: str | None = None,
    run_timeout: float | str | None = DEFAULT_RUN_TIMEOUT_S,
) -> SweepSummary:
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
    from ..results.store import Store

    t_start = time.perf_counter()
    run_timeout = parse_run_timeout(run_timeout)
    base = as_scenario(scenario, overrides)
    _check_backend(backend, remote=dask is not None)
    g = grid_from_scenario(base, grid, zips, repeat)
    specs = plan(base, g, backend)
    store = Store(out)

    notes = []
    if backend in SERIAL_BACKENDS:
        if dask is None and workers not in (None, 1):
            notes.append(f"--workers {workers} ignored")
        workers = 1
        notes.insert(
            0, "kernel backend: one run at a time per machine (runs would share the CPU with the link emulator)"
        )
        if dask is None and os.geteuid() == 0:
            try:
                os.close(open_private_lock(KERNEL_LOCK_PATH))  # unsafe lock: say so before any run
            except KernelLockError as e:
                raise SweepError(str(e)) from None

    summary = SweepSummary(out=Path(out), backend=backend, executor="", total=len(specs))
    todo = _to_run(specs, store.statuses(), retry_failed, summary)

    from ..results.meta import build_meta, write_meta

    meta = build_meta(base, backend, grid=g.values, repeat=g.repeat, command=command, study=study)
    console = resolve_console(console)

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
            console.print(
                f"[yellow]another sweep{holder} is writing into {store.root}:[/] waiting "
                f"for it to finish; then only the runs it did not store are run",
                highlight=False,
                soft_wrap=True,
            )

    # SIGTERM / SIGHUP: like Ctrl-C (stop the workers, keep what is stored), exit 143 / 129
    with procs.signals_raise(), contextlib.ExitStack() as stack:
        if dask is not None:
            executor: Any = DaskExecutor(dask, workers)
        else:
            n = workers if workers is not None else (os.cpu_count() or 1)
            if n < 1:
                raise SweepError(f"--workers {n}: expected at least 1")
            executor = LocalExecutor(min(n, len(todo)))
        stack.callback(lambda: executor.close() if executor is not None else None)
        summary.executor = executor.description
        # after the executor exists: a sweep that cannot start leaves no directory
        store.prepare()
        stack.enter_context(store_lock(store.root, on_wait))
        if waited:  # what the other sweep stored is not run again
            summary.cached = summary.stored_failed = 0
            todo = _to_run(specs, store.statuses(), retry_failed, summary)
            if not todo:
                return finish_without_running()
        write_meta(out, meta)
        try:
            _execute(executor, todo, backend, run_timeout, store, summary, progress, console, notes, on_result)
        except KeyboardInterrupt:
            executor.close(abort=True)
            executor = None
            summary.wall_s = time.perf_counter() - t_start
            summary.interrupted = True
            if progress:
                print_summary(summary, console, notes)
                console.print(
                    f"[yellow]interrupted[/]: {summary.cached + summary.executed} of "
                    f"{summary.total} runs are stored; run the same command again to "
                    f"finish.",
                    soft_wrap=True,
                )
            raise
    summary.identical_cells = identical_cells(store, specs)
    summary.wall_s = time.perf_counter() - t_start
    if progress:
        print_summary(summary, console, notes)
    return summary


def _to_run(
    specs: Sequence[RunSpec], statuses: Mapping[str, str], retry_failed: bool, summary: SweepSummary
) -> list[RunSpec]:
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


def _execute(
    executor: Any,
    todo: Sequence[RunSpec],
    backend: str,
    run_timeout: float | None,
    store: Any,
    summary: SweepSummary,
    progress: bool,
    console: Any,
    notes: Sequence[str],
    on_result: Callable[[RunSpec, dict], None] | None,
) -> None:
    """Run ``todo`` on ``executor`` and store every result (the loop of run_sweep)."""
    bar = Progress(console, len(todo), summary, executor.description, notes) if progress else None
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
            _loop(executor, pending, inflight, isolated, killed, hard_limit, backend, run_timeout, record, stop)
    finally:
        if bar:
            bar.stop()


def _raise_if_stopped(stop: list[int]) -> None:
    if stop:
        raise KeyboardInterrupt() if stop[0] == signal.SIGINT else procs.Terminated(stop[0])


def _loop(executor, pending, inflight, isolated, killed, hard_limit, backend, run_timeout, record, stop) -> None:
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
                payload = _failed_payload(spec, backend, f"executor: {error_text(exc)}")
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
                record(
                    spec,
                    _failed_payload(
                        spec, backend, str(RunTimeout(run_timeout)) + "; its worker did not stop and was killed"
                    ),
                )
            others = [s for s in lost if s not in timed_out]
            if timed_out:  # the cause is known: the others did nothing wrong
                pending.extendleft(reversed(others))
            elif solo is not None and solo in lost:
                record(
                    solo,
                    _failed_payload(
                        solo,
                        backend,
                        "the worker process died while running it "
                        "(crash or out of memory; it was rerun alone to be sure)",
                    ),
                )
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
                row = (
                    pq.ParquetFile(store.path("runs", spec.run_id))
                    .read(columns=["status", "aggregate_goodput_bps"])
                    .to_pylist()[0]
                )
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
    from .. import backends

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
    from ..results.store import StoreError

    if payload.get("run_id") not in (None, spec.run_id):
        payload = _failed_payload(
            spec,
            summary.backend,
            (
                f"the worker computed run id {payload.get('run_id')} but the client expected "
                f"{spec.run_id}: different ccbench versions on client and worker?"
            ),
        )
    try:
        columns = spec.columns()
    except Exception:  # noqa: BLE001
        columns = {"repeat": spec.repeat}
    try:
        status = store.write(
            spec.run_id,
            payload["runs"],
            payload.get("flows"),
            payload.get("series"),
            columns,
            link_series=payload.get("link_series"),
            counters=payload.get("counters"),
        )
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001
        payload = _failed_payload(spec, summary.backend, f"storing the run's tables failed: {error_text(exc)}")
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
