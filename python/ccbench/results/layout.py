"""A store directory's layout and the checks made on it before a run: is it a store (or empty),
can it be written, is there room. Nothing here imports pyarrow, so ``ccbench run --out`` can
refuse a bad directory before the simulator starts without loading the result libraries
(ccbench/backends/preload.py); ccbench.results.store re-exports every name.
"""

from __future__ import annotations

import os
from pathlib import Path

from .meta import META_FILE

__all__ = ["TABLES", "StoreError", "MIN_FREE_BYTES", "is_store", "check_store_dir", "check_writable"]

#: The tables of a run, one directory each in a store (docs/results.md).
from .schema import TABLES

#: Files being written carry this prefix (hidden; renamed over the final name when complete).
TMP_PREFIX = ".tmp-"


class StoreError(ValueError):
    """A directory that is not a ccbench store, or one that cannot be written (the message says
    what was found and expected, in one line)."""


#: Free space a store's file system must have before runs start: a run's files are a few kB to
#: a few MB, so less than this means the first runs would fail to be stored.
MIN_FREE_BYTES = 4 << 20


def os_reason(e: OSError) -> str:
    return e.strerror or str(e)


def check_writable(root: str | os.PathLike) -> None:
    """Raise StoreError when runs could not be stored in ``root`` — before any run starts.

    ``root`` may not exist yet: then its nearest existing ancestor must be a writable directory.
    Existing table directories are probed by creating (and removing) a hidden file, which also
    catches read-only file systems and directories owned by another user; the file system must
    have at least MIN_FREE_BYTES free.
    """
    try:
        _check_writable(Path(root))
    except OSError as e:  # e.g. a parent directory this user may not enter
        raise StoreError(
            f"{root}: cannot write the store: {os_reason(e)}" + (f" ({e.filename})" if e.filename else "")
        ) from None


def _check_writable(root: Path) -> None:
    probe_dirs = [root / t for t in TABLES if (root / t).is_dir()] + [root]
    existing = root
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise StoreError(f"{root}: cannot create the store: {existing} is not a directory")
    if existing != root:
        if not os.access(existing, os.W_OK | os.X_OK):
            why = "read-only file system" if _read_only_fs(existing) else "permission denied"
            raise StoreError(f"{root}: cannot create the store: {existing} is not writable ({why})")
        probe_dirs = []
    for d in probe_dirs:
        tmp = d / f"{TMP_PREFIX}{os.getpid()}-probe"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            os.close(fd)
            os.unlink(tmp)
        except FileExistsError:
            pass
        except OSError as e:
            raise StoreError(f"{d}: cannot write the store: {os_reason(e)}") from None
    try:
        st = os.statvfs(existing)
    except OSError:  # pragma: no cover - a file system without statvfs: nothing to check
        return
    free = st.f_bavail * st.f_frsize
    if free < MIN_FREE_BYTES:
        raise StoreError(
            f"{root}: only {free // 1024} KiB free on its file system; a store needs at "
            f"least {MIN_FREE_BYTES >> 20} MiB before runs start"
        )


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:  # pragma: no cover
        return False


def is_store(root: str | os.PathLike) -> bool:
    """True when ``root`` holds a store's table directories or its ccbench.json."""
    root = Path(root)
    return (root / META_FILE).is_file() or any((root / t).is_dir() for t in TABLES)


def check_store_dir(root: str | os.PathLike, purpose: str = "read") -> None:
    """Raise StoreError when ``root`` exists, is not empty and is not a store (e.g. the flat
    layout of ``write_parquet``: flows.parquet at the top)."""
    root = Path(root)
    if not root.is_dir() or is_store(root):
        return
    found = sorted(p.name for p in root.iterdir() if not p.name.startswith("."))
    if not found:
        return
    flat = [n for n in found if n in {f"{t}.parquet" for t in TABLES}]
    what = (
        f"the flat layout of an older ccbench or of RunResult.write_parquet ({', '.join(flat)})"
        if flat
        else ", ".join(found[:6]) + (" ..." if len(found) > 6 else "")
    )
    action = "read it" if purpose == "read" else "write into it"
    raise StoreError(
        f"{root}: not a ccbench store, cannot {action}: found {what}; expected a store directory "
        f"(runs/, flows/, series/, link_series/, counters/ of <run_id>.parquet files and "
        f"ccbench.json, as "
        f"written by `ccbench sweep` or `ccbench run --out`) or an empty directory"
    )
