"""``ccbench capture``: an iperf3 upload to SERVER captured at this host (the sender) with
tcpdump on the route's interface, TSO/GSO off for the capture and restored after. The far end
must run an iperf3 server (`iperf3 -s`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .offload import offloads_off
from .route import RouteError, resolve, route_to
from .tcpdump import Tcpdump, TcpdumpError

__all__ = ["CaptureError", "Upload", "missing", "capture_upload"]

#: Commands the capture runs, with the Debian package of each.
TOOLS = (("tcpdump", "tcpdump"), ("iperf3", "iperf3"), ("ethtool", "ethtool"), ("ip", "iproute2"), ("ss", "iproute2"))
#: How long the server may take to accept iperf3's control connection.
CONNECT_TIMEOUT_MS = 5000


class CaptureError(RuntimeError):
    """What keeps the capture from being taken; the message is one line."""


@dataclass(frozen=True)
class Upload:
    server: str
    address: str
    interface: str
    #: offloads turned off for the capture (and back on after)
    offloads_changed: list
    #: iperf3's sender-side bytes and retransmissions
    bytes_sent: Optional[int]
    retransmits: Optional[int]
    dropped_by_kernel: Optional[int]


def missing(uid: Optional[int] = None) -> Optional[str]:
    """Why this host cannot take the capture (None: it can): root, tcpdump, iperf3, ethtool, ip."""
    if (os.geteuid() if uid is None else uid) != 0:
        return "ccbench capture needs root (tcpdump and `ethtool -K`): run it with sudo"
    for tool, pkg in TOOLS:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (`apt-get install {pkg}`)"
    return None


def _iperf3_error(r: subprocess.CompletedProcess) -> Optional[str]:
    """iperf3's error, or None. With -J it reports a failed connection in the JSON's "error"
    and may still exit with status 0 (iperf3 3.12)."""
    try:
        msg = json.loads(r.stdout).get("error")
    except ValueError:
        msg = None
    if msg is None and r.returncode == 0:
        return None
    return (msg or r.stderr.strip() or f"iperf3 exited with status {r.returncode}").splitlines()[0]


def _connected(address: str, port: int) -> bool:
    """Whether this host has an established TCP connection to address:port (`ss`)."""
    host = f"[{address}]" if ":" in address else address
    r = subprocess.run(
        ["ss", "-Htn", "state", "established", "dst", f"{host}:{port}"], capture_output=True, text=True, timeout=10
    )
    return bool(r.stdout.strip())


def _run_iperf3(argv: list[str], address: str, port: int, duration_s: float) -> subprocess.CompletedProcess:
    """Run the iperf3 client. A server that never answers leaves iperf3's connect() waiting
    for the kernel's SYN retries (about two minutes; its --connect-timeout did not cut it short
    with iperf3 3.12), so the client is stopped when no connection stands after
    CONNECT_TIMEOUT_MS."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + CONNECT_TIMEOUT_MS / 1000
    while p.poll() is None and not _connected(address, port):
        if time.monotonic() > deadline:
            p.kill()
            p.communicate()
            raise CaptureError(
                f"no answer from {address} port {port} within {CONNECT_TIMEOUT_MS / 1000:g} s "
                "(is `iperf3 -s` running there, and the port open?)"
            )
        time.sleep(0.1)
    try:
        out, err = p.communicate(timeout=duration_s + 30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise CaptureError(f"iperf3 did not finish within {duration_s + 30:g} s") from None
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def capture_upload(server: str, port: int, duration_s: float, out: Path) -> Upload:
    """Upload to ``server:port`` for ``duration_s`` with iperf3 while tcpdump writes ``out``.
    Raises CaptureError."""
    why = missing()
    if why:
        raise CaptureError(why)
    try:
        address = resolve(server, port)
        interface, _ = route_to(address)
    except RouteError as e:
        raise CaptureError(str(e)) from None
    argv = [
        "iperf3",
        "-c",
        address,
        "-p",
        str(port),
        "-t",
        f"{duration_s:g}",
        "--connect-timeout",
        str(CONNECT_TIMEOUT_MS),
        "-J",
    ]
    bpf = f"tcp and host {address} and port {port}"
    try:
        with offloads_off(interface) as changed, Tcpdump(interface, out, bpf) as dump:
            r = _run_iperf3(argv, address, port, duration_s)
            dropped = dump.stop()
    except (OSError, TcpdumpError) as e:
        raise CaptureError(str(e)) from None
    failed = _iperf3_error(r)
    if failed:
        raise CaptureError(f"iperf3 could not upload to {server} port {port}: {failed} (is `iperf3 -s` running there?)")
    sent = (json.loads(r.stdout).get("end") or {}).get("sum_sent") or {}
    return Upload(server, address, interface, changed, sent.get("bytes"), sent.get("retransmits"), dropped)
