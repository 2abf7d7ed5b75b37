"""Process plumbing: workers that die with their sweep, signals that end a command with the
conventional exit status, and finding what a killed sweep left behind (``ccbench cleanup``).

Linux only where it matters (prctl, /proc); elsewhere the functions do what they can and never
raise.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

__all__ = [
    "Terminated",
    "exit_status",
    "STOP_SIGNALS",
    "signal_handler",
    "signals_raise",
    "signals_recorded",
    "die_with_parent",
    "parent_gone",
    "WORKER_COMM",
    "worker_comm",
    "leftover_workers",
    "alive",
    "kill",
]

_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
#: The process name (/proc/PID/comm, ``ps -o comm``) of a sweep worker: ``ccbw-<pid of the sweep>``.
WORKER_COMM = "ccbw-"


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM or SIGHUP arrives (see :func:`signals_raise`).
    A KeyboardInterrupt, so every path that cleans up after Ctrl-C cleans up after it too."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signal.Signals(signum).name}")
        self.signum = int(signum)

    def __reduce__(self):
        return (type(self), (self.signum,))


def exit_status(exc: BaseException) -> int:
    """The shell's exit status for a command stopped by ``exc``: 128 + the signal number
    (SIGINT 130, SIGTERM 143, SIGHUP 129)."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


#: The signals that stop a ccbench command (Ctrl-C, kill, a closed terminal).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signal_handler(signals: tuple[int, ...], handler) -> Iterator[None]:
    """During the body, ``handler`` handles ``signals``; the previous handlers come back after
    it. Outside the main thread (where Python cannot set handlers) this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.getsignal(s) for s in signals}
    for s in signals:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def signals_raise(signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGHUP), exc: type[Terminated] = Terminated):
    """During the body, ``signals`` raise ``exc`` (:class:`Terminated` or a subclass) in the main
    thread (SIGINT keeps raising KeyboardInterrupt). Outside the main thread this does nothing.
    A process forked during the body that inherits the handler exits with 128 + signum instead
    of raising."""
    owner = os.getpid()

    def handler(signum, frame):
        if os.getpid() != owner:  # a forked helper (e.g. of a library) inherited this handler
            os._exit(128 + signum)
        raise exc(signum)

    return signal_handler(signals, handler)


def signals_recorded(got: list[int]):
    """During the body, SIGINT/SIGTERM/SIGHUP only append their number to ``got`` (main thread
    only), so the caller decides where it is safe to stop."""
    return signal_handler(STOP_SIGNALS, lambda signum, frame: got.append(signum))


def _prctl(option: int, arg) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, arg, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux
        return False


def worker_comm(sweep_pid: int) -> str:
    return f"{WORKER_COMM}{sweep_pid}"[:15]


def die_with_parent(
    sweep_pid: int,
    sig: int = signal.SIGTERM,
    watch_s: float = 0.5,
    busy: Callable[[], bool] = lambda: False,
    teardown_s: float = 30.0,
) -> None:
    """Make this (worker) process die when its parent does: PR_SET_PDEATHSIG, a check that the
    parent did not die before that, and a watchdog thread. SIGTERM (not SIGKILL): it kills an
    idle worker or a simulation at once, and a kernel-backend run tears its namespaces down on
    it. The watchdog (every ``watch_s``) notices the parent is gone, sends ``sig`` itself where
    prctl is missing, lets a run that is tearing down (``busy()``) finish for up to
    ``teardown_s``, then exits: a worker whose run handled the signal would otherwise wait for
    work on a pipe for ever. Also names the process ``ccbw-<sweep_pid>``, so that
    ``ccbench cleanup`` finds it if all of this failed."""
    parent = os.getppid()
    _prctl(_PR_SET_NAME, ctypes.c_char_p(worker_comm(sweep_pid).encode()))
    has_pdeathsig = _prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(int(sig)))
    if parent_gone(parent, sweep_pid):
        os._exit(128 + int(sig))

    def watch():
        while not parent_gone(parent, sweep_pid):
            time.sleep(watch_s)
        if not has_pdeathsig:
            os.kill(os.getpid(), sig)
        deadline = time.monotonic() + teardown_s
        while busy() and time.monotonic() < deadline:
            time.sleep(0.1)
        os._exit(128 + int(sig))

    threading.Thread(target=watch, name="ccbench-parent-watch", daemon=True).start()


def parent_gone(parent: int, sweep_pid: int) -> bool:
    """True when this process's parent is no longer ``parent`` (it died and we were
    re-parented) or the sweep process ``sweep_pid`` is gone."""
    return os.getppid() != parent or not alive(sweep_pid)


def alive(pid: int) -> bool:
    """Is a process ``pid`` running (a zombie counts as gone)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except FileNotFoundError:  # exited between the two checks
        return False
    except (OSError, IndexError):
        return True


def leftover_workers() -> list[tuple[int, int]]:
    """(pid, sweep pid) of every sweep worker process whose sweep process is gone."""
    out = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if not comm.startswith(WORKER_COMM):
            continue
        try:
            sweep_pid = int(comm[len(WORKER_COMM) :])
        except ValueError:
            continue
        pid = int(entry.name)
        if not alive(sweep_pid) and alive(pid):
            out.append((pid, sweep_pid))
    return sorted(out)


def kill(pid: int, wait_s: float = 5.0) -> bool:
    """SIGTERM, then SIGKILL if ``pid`` is still there after ``wait_s``. True when it is gone."""
    for sig, wait in ((signal.SIGTERM, wait_s), (signal.SIGKILL, 2.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not alive(pid):
                return True
            time.sleep(0.05)
    return not alive(pid)
