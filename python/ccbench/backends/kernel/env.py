"""What this machine offers the kernel backend. Every lookup the backend, ``ccbench doctor`` and
the tests need lives here, in particular :func:`available_algorithms` — the single place that
says which congestion controls the kernel can run (today the built-in ones and loaded modules,
as net.ipv4.tcp_available_congestion_control lists them)."""

from __future__ import annotations

import os
import platform
import shutil
from dataclasses import dataclass
from pathlib import Path

#: Name prefix of everything the kernel backend creates (namespaces, links, processes).
PREFIX = "ccb"
REPO_ROOT = Path(__file__).resolve().parents[4]
AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def available_algorithms() -> list[str]:
    """Congestion controls the running kernel can use right now (the one lookup to extend)."""
    try:
        return AVAILABLE_CC.read_text().split()
    except OSError:
        return []


def kernel_version() -> str:
    return platform.release()


def euid() -> int:
    return os.geteuid()


def is_root(uid: int | None = None) -> bool:
    return (euid() if uid is None else uid) == 0


def tun_available() -> tuple[bool, str]:
    p = Path("/dev/net/tun")
    if not p.exists():
        return False, "/dev/net/tun does not exist (kernel without CONFIG_TUN, or a container without the device)"
    if not os.access(p, os.R_OK | os.W_OK):
        return False, "/dev/net/tun is not readable and writable by this user"
    return True, "/dev/net/tun"


def netns_available() -> tuple[bool, str]:
    if not Path("/proc/self/ns/net").exists():
        return False, "the kernel has no network namespaces (/proc/self/ns/net missing)"
    if shutil.which("ip") is None:
        return False, "the `ip` command (iproute2) is missing"
    return True, "network namespaces and iproute2 present"


def iperf3_path() -> str | None:
    return shutil.which("iperf3")


def ping_path() -> str | None:
    return shutil.which("ping")


def link_binary() -> Path | None:
    """ccbench-link: $CCBENCH_LINK, else target/release/ccbench-link in the repository."""
    env = os.environ.get("CCBENCH_LINK")
    p = Path(env) if env else REPO_ROOT / "target" / "release" / "ccbench-link"
    return p if _is_executable_file(p) else None


def _is_executable_file(p: Path) -> bool:
    """An executable regular file; False also where a directory on the way cannot be entered
    (a checkout in another user's 0700 home makes Path.is_file raise PermissionError)."""
    try:
        return p.is_file() and os.access(p, os.X_OK)
    except OSError:
        return False


def link_binary_or_raise() -> Path:
    p = link_binary()
    if p is None:
        where = os.environ.get("CCBENCH_LINK") or str(REPO_ROOT / "target/release/ccbench-link")
        raise RuntimeError(
            f"ccbench-link not found at {where}: run `make build` "
            "(or `cargo build --release -p ccbench-link`), or point CCBENCH_LINK at the binary"
        )
    return p


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def doctor_checks() -> list[Check]:
    """Everything the kernel backend needs, with what to do about each missing item."""
    out: list[Check] = []
    out.append(
        Check(
            "root",
            is_root(),
            f"effective uid {euid()}",
            "run as root (e.g. `sudo .venv/bin/ccbench ...`): namespaces and TUN devices need CAP_NET_ADMIN",
        )
    )
    ok, d = netns_available()
    out.append(
        Check(
            "network namespaces", ok, d, "install iproute2 (`apt-get install iproute2`) on a kernel with CONFIG_NET_NS"
        )
    )
    ok, d = tun_available()
    out.append(
        Check(
            "TUN device",
            ok,
            d,
            "load/enable TUN (CONFIG_TUN; `modprobe tun`) or pass --device /dev/net/tun to the container",
        )
    )
    ip3 = iperf3_path()
    out.append(Check("iperf3", ip3 is not None, ip3 or "not on PATH", "`make system-deps` or `apt-get install iperf3`"))
    pg = ping_path()
    out.append(
        Check(
            "ping", pg is not None, pg or "not on PATH (only needed for [probe] ping)", "`apt-get install iputils-ping`"
        )
    )
    algs = available_algorithms()
    out.append(
        Check(
            "congestion controls",
            bool(algs),
            ", ".join(algs) or "none readable",
            "more algorithms: `modprobe tcp_<name>` where modules can be loaded",
        )
    )
    lb = link_binary()
    out.append(
        Check(
            "ccbench-link",
            lb is not None,
            str(lb) if lb else "not built",
            "`make build` (or `cargo build --release -p ccbench-link`), or set CCBENCH_LINK",
        )
    )
    return out
