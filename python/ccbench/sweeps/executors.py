"""Where runs execute: local worker processes that survive a crash and die with the sweep, or
a Dask cluster."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from typing import Any, Callable, Iterable

from .. import procs
from .execute import WORKER_STATE, execute_run
from .grid import SweepError
from .plan import RunSpec


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
            from .. import backends, results  # noqa: F401  (imported once, inherited)

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
        pool = ProcessPoolExecutor(
            max_workers=self.workers, mp_context=self.ctx, initializer=_worker_init, initargs=(os.getpid(), self.starts)
        )
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
        manager = getattr(self.pool, "_executor_manager_thread", None)  # and this
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
        # ... and the manager thread ends on it. Wait for it here: left running, it closes its
        # wake-up pipe while the interpreter's exit hook (concurrent.futures' _python_exit)
        # writes to it, which printed "Exception ignored ... Bad file descriptor" after a
        # stopped sweep about once in 30 (tests/cli/test_sweep.py, exit status on signals).
        if manager is not None:
            manager.join(5)

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
    WORKER_STATE.update(parent=os.getppid(), sweep_pid=sweep_pid, starts=starts, running=False)
    procs.die_with_parent(sweep_pid, busy=lambda: WORKER_STATE.get("running", False))


class DaskExecutor:
    def __init__(self, address: str, workers: int | None):
        try:
            import distributed
        except ImportError:  # pragma: no cover - depends on the install
            raise SweepError("--dask needs the 'distributed' package: pip install 'ccbench[dask]'") from None
        self.cluster = None
        if address == "local":
            n = workers or os.cpu_count() or 1
            self.cluster = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            )
            self.client = distributed.Client(self.cluster)
            self.description = f"Dask LocalCluster, {n} worker processes"
        else:
            try:
                self.client = distributed.Client(address, timeout="10s")
            except (OSError, TimeoutError) as e:
                raise SweepError(
                    f"--dask {address}: cannot reach the Dask scheduler ({e}); start "
                    f"one with `dask scheduler` (see docs/sweeps.md)"
                ) from None
            self.description = f"Dask scheduler {address}"
        threads = sum(self.client.nthreads().values()) or 1
        self.workers = threads
        self.description += f" ({threads} worker threads)"
        self.max_inflight = max(4 * threads, 16)

    can_kill = False  # a Dask worker thread cannot be interrupted (docs/sweeps.md, Run limits)

    def submit(self, spec: "RunSpec", backend: str, run_timeout: float | None):
        return self.client.submit(execute_run, spec.scenario, backend, run_timeout, spec.run_id, pure=False)

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
