"""What every benchmark result records about where it ran: the commit and the CPU model.

Imported by every benchmark script (`python benchmarks/TOPIC/SCRIPT.py`), each of which puts
benchmarks/common on sys.path first.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def git_commit() -> str:
    """Short HEAD, marked when tracked files have uncommitted changes; "unknown" outside git."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    try:
        sha = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except OSError:  # no git on this machine
        return "unknown"
    return (sha or "unknown") + (" (with uncommitted changes)" if sha and dirty else "")


def cpu_model() -> str:
    """The "model name" of /proc/cpuinfo, or "unknown"."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"
