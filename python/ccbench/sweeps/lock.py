"""Locks: one kernel run at a time per machine, one sweep at a time per store (flock on a
private lock file, naming the holder while waiting)."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any, Callable

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


#: The store-level lock: one sweep at a time writes into a store; a second one waits.
STORE_LOCK = ".sweep.lock"


class KernelLockError(RuntimeError):
    """The machine-wide kernel lock is unsafe (symlink, foreign owner) or held too long."""


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
            raise KernelLockError(
                f"{directory}: cannot create the kernel lock's directory "
                f"({e.strerror}); the kernel backend runs as root"
            ) from None
    st = os.lstat(directory)
    if not stat.S_ISDIR(st.st_mode):
        raise KernelLockError(
            f"{directory}: the kernel lock's directory is not a directory "
            f"(a symlink?); refusing to use it (remove it, or set "
            f"CCBENCH_KERNEL_LOCK to a file in a directory only you can write)"
        )
    if st.st_uid not in (os.geteuid(), 0) or st.st_mode & 0o022:
        raise KernelLockError(
            f"{directory}: the kernel lock's directory is writable by other "
            f"users or owned by uid {st.st_uid}; refusing to use it (set "
            f"CCBENCH_KERNEL_LOCK to a file in a directory only you can write)"
        )


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
            raise KernelLockError(f"{path}: the kernel lock is a symlink; refusing to follow it (remove it)") from None
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
    """ " (pid N: command)" as the holder wrote it into the lock file, or ""."""
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
def machine_lock(backend: str):
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
                f"than {format_seconds(KERNEL_LOCK_TIMEOUT_S)}; wait for it or stop it "
                f"(CCBENCH_KERNEL_LOCK_TIMEOUT sets how long to wait)"
            )
        yield
    finally:
        os.close(fd)  # releases the flock


@contextlib.contextmanager
def store_lock(root: Path, on_wait: Callable[[str], Any]):
    """Hold DIR/.sweep.lock (flock) while this sweep writes into the store: a second sweep
    into the same store waits here (``on_wait(holder)`` is called once), then runs only what
    the first did not store. The lock is released when the process ends, however it ends."""
    path = Path(root) / STORE_LOCK
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        from ..results.store import StoreError

        raise StoreError(f"{path}: cannot open the store's lock file ({e.strerror})") from None
    try:
        _flock_wait(fd, None, on_wait)
        yield
    finally:
        os.close(fd)


def format_seconds(seconds: float) -> str:
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds / 3600:g} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"
