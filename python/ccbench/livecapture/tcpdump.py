"""tcpdump as a child process: start it on one interface (optionally inside a network
namespace), wait until it captures, stop it and read how many packets the kernel dropped.

The capture keeps IP and TCP headers only (snap length 128 bytes: 20 bytes of IPv4, up to 60 of
TCP with options, and room for IPv6) with nanosecond timestamps, which is what ``ccbench fit``
reads (fit/capture.py). A 64 MiB capture buffer keeps a busy host from losing packets.
"""

from __future__ import annotations

import re
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Optional

__all__ = ["TcpdumpError", "Tcpdump", "tcpdump_path", "tcpdump_argv", "dropped_by_kernel"]

SNAPLEN = 128
BUFFER_KIB = 64 << 10
#: How long tcpdump may take to open the interface.
START_TIMEOUT_S = 10.0
#: libpcap hands packets over a memory-mapped ring in blocks that it retires when full or after
#: tcpdump's 1000 ms read timeout; SIGINT ends the loop without reading a partly filled block,
#: so ``stop`` waits this long first.
DRAIN_S = 1.2

_DROPPED = re.compile(r"(\d+) packets? dropped by kernel")


class TcpdumpError(RuntimeError):
    """tcpdump could not start or failed; the message is one line."""


def tcpdump_path() -> Optional[str]:
    return shutil.which("tcpdump")


def tcpdump_argv(interface: str, out: Path, bpf_filter: str) -> list[str]:
    """The command line: ``-Z root`` keeps tcpdump from changing to an unprivileged user before
    it opens ``out`` (Debian builds drop to the `tcpdump` user by default)."""
    return [
        "tcpdump",
        "-i",
        interface,
        "-w",
        str(out),
        "-s",
        str(SNAPLEN),
        "-B",
        str(BUFFER_KIB),
        "-n",
        "-Z",
        "root",
        "--time-stamp-precision=nano",
        bpf_filter,
    ]


def dropped_by_kernel(stderr: str) -> Optional[int]:
    """tcpdump's closing statistics line "N packets dropped by kernel" (None if absent)."""
    m = _DROPPED.search(stderr)
    return int(m.group(1)) if m else None


class Tcpdump:
    """One capture. ``start()`` returns once tcpdump reports it is listening; ``stop()`` ends it
    with SIGINT (which flushes the file) and returns the kernel's drop count."""

    def __init__(self, interface: str, out: Path, bpf_filter: str, netns: Optional[str] = None):
        self.argv = tcpdump_argv(interface, Path(out), bpf_filter)
        if netns is not None:
            self.argv = ["ip", "netns", "exec", netns, *self.argv]
        self.out = Path(out)
        self.proc: Optional[subprocess.Popen] = None
        self.stderr = ""
        self.dropped: Optional[int] = None

    def start(self, timeout: float = START_TIMEOUT_S) -> "Tcpdump":
        if tcpdump_path() is None:
            raise TcpdumpError("tcpdump is not installed (`apt-get install tcpdump`)")
        quiet = subprocess.DEVNULL
        self.proc = subprocess.Popen(
            self.argv, stdin=quiet, stdout=quiet, stderr=subprocess.PIPE, start_new_session=True
        )
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout
        seen = b""
        while b"listening on" not in seen:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                said = seen.decode(errors="replace").strip()
                raise TcpdumpError(f"tcpdump did not start within {timeout:g} s: {said or 'no message'}")
            r, _, _ = select.select([self.proc.stderr], [], [], left)
            line = self.proc.stderr.readline() if r else b""
            if r and not line:  # tcpdump exited
                self.proc.wait(timeout=5)
                msg = (seen + self.proc.stderr.read()).decode(errors="replace").strip().splitlines()
                raise TcpdumpError(f"tcpdump failed: {msg[-1] if msg else 'no message'}")
            seen += line
        self.stderr = seen.decode(errors="replace")
        return self

    def stop(self, timeout: float = 10.0) -> Optional[int]:
        """End the capture (idempotent); the kernel's drop count, or None if unknown."""
        p, self.proc = self.proc, None
        if p is None:
            return self.dropped
        if p.poll() is None:
            time.sleep(DRAIN_S)
            p.send_signal(signal.SIGINT)
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        self.stderr += (err or b"").decode(errors="replace")
        self.dropped = dropped_by_kernel(self.stderr)
        return self.dropped

    def __enter__(self) -> "Tcpdump":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
