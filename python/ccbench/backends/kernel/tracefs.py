"""Recording kernel tracepoints during a kernel-backend run (diagnostics and tests; root only).

`trace_events` enables the given events in a tracefs instance of its own, so whatever else traces
on the machine is left alone, on the tracefs mounted at /sys/kernel/tracing or, where none is
mounted, on a private mount it makes in a temporary directory and removes afterwards."""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

MOUNTED = Path("/sys/kernel/tracing")


def tracefs_missing() -> str | None:
    """Why tracepoints cannot be recorded here, or None."""
    if os.geteuid() != 0:
        return "recording tracepoints needs root"
    if "tracefs" not in Path("/proc/filesystems").read_text():
        return "the kernel has no tracefs"
    return None


@contextmanager
def trace_events(events: Mapping[str, str | None], buffer_kb: int = 8192) -> Iterator[Callable[[], str]]:
    """Record ``events`` ("group/name" -> a tracefs filter expression, or None for every hit)
    during the body. Yields ``stop()``, which stops recording and returns the trace text."""
    mount = None
    root = MOUNTED
    if not (root / "instances").is_dir():
        mount = Path(tempfile.mkdtemp(prefix="ccbench-tracefs-"))
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(mount)], check=True)
        root = mount
    inst = root / "instances" / f"ccbench-{uuid.uuid4().hex[:8]}"
    try:
        inst.mkdir()
        try:
            (inst / "tracing_on").write_text("0")
            (inst / "buffer_size_kb").write_text(str(buffer_kb))
            for name, flt in events.items():
                if flt is not None:
                    (inst / "events" / name / "filter").write_text(flt)
                (inst / "events" / name / "enable").write_text("1")
            (inst / "tracing_on").write_text("1")

            def stop() -> str:
                (inst / "tracing_on").write_text("0")
                return (inst / "trace").read_text()

            yield stop
        finally:
            (inst / "tracing_on").write_text("0")
            os.rmdir(inst)
    finally:
        if mount is not None:
            subprocess.run(["umount", str(mount)], check=False)
            os.rmdir(mount)
