"""The kernel backend's network: two namespaces joined by ccbench-link.

    sender ns  ccb<tag>-s                                   receiver ns  ccb<tag>-r
    iperf3 clients, ping, sock_diag                          iperf3 servers
    198.18.0.1 ── TUN ccb-s0 ══ ccbench-link (2 threads; 1 with a Wi-Fi hop) ══ TUN ccb-r0 ── 198.18.0.2

ccbench-link creates both TUN devices itself (it enters each namespace for the TUNSETIFF) and
holds their only file descriptors, so the devices vanish when it exits, however it exits. It
runs in the caller's namespace; its stdin is a pipe from this process, so it also stops when this
process dies. There is no router namespace and no veth: each host's route to the other points
straight at its TUN (point-to-point /32), nothing is forwarded, and nothing outside the two
namespaces is touched.

Tear-down (``Topology.close``) is idempotent and runs from ``finally``, from an ``atexit`` hook
and, during a run, on SIGINT/SIGTERM (see :func:`signals_raise`). ``cleanup_stale`` removes what a
crashed run left behind, found by the ``ccb`` prefix only.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import secrets
import select
import signal
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from ...procs import Terminated, signal_handler, signals_recorded
from ...procs import alive as _alive  # a zombie child of ours counts as gone
from ...procs import signals_raise as procs_signals_raise
from . import env
from .nsutil import in_netns, netns_inode, ns_path

SENDER_ADDR = "198.18.0.1"
RECEIVER_ADDR = "198.18.0.2"
TUN_S = "ccb-s0"
TUN_R = "ccb-r0"
#: TUN transmit ring length: a window-sized burst must never overflow it (it drops silently).
TUN_TXQLEN = 20000
NS_RE = re.compile(rf"^{env.PREFIX}(\d+)x[0-9a-f]+-[sr]$")

_LIVE: "set[Topology]" = set()
_LIVE_LOCK = threading.Lock()


def new_tag() -> str:
    return f"{env.PREFIX}{os.getpid()}x{secrets.token_hex(2)}"


def _run(argv: list[str], check: bool = True, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=check, capture_output=True, text=True, timeout=timeout)


class TopologyError(RuntimeError):
    pass


class Topology:
    """Namespaces + ccbench-link. Use as a context manager; ``close()`` is idempotent."""

    def __init__(
        self,
        link_config: dict,
        tag: str | None = None,
        spin_us: int | None = None,
        rt_prio: int = 10,
        tcp_rmem_max: int | None = None,
        tcp_wmem_max: int = 32 << 20,
        gso: bool | None = None,
        tcp_timestamps: bool | None = None,
        tcp_ecn: bool | None = None,
        two_way: bool = False,
    ):
        self.tag = tag or new_tag()
        self.ns_s = f"{self.tag}-s"
        self.ns_r = f"{self.tag}-r"
        self.link_config = link_config
        self.spin_us = spin_us
        self.rt_prio = rt_prio
        self.tcp_rmem_max = tcp_rmem_max
        self.tcp_wmem_max = tcp_wmem_max
        #: net.ipv4.tcp_timestamps in both namespaces (None: the namespace default, on)
        self.tcp_timestamps = tcp_timestamps
        #: net.ipv4.tcp_ecn in both namespaces: True = 1 (request ECN on outgoing connections,
        #: accept it on incoming ones); None = the default, 2 (accept only: no ECN, as nothing
        #: requests it)
        self.tcp_ecn = tcp_ecn
        #: reverse flows run (data from the receiver namespace to the sender namespace): each
        #: namespace gets both the sending (tcp_wmem) and the receiving (tcp_rmem) buffer limits
        self.two_way = two_way
        #: experimental: sender TUN with TSO, super-packets cut by ccbench-link (CCBENCH_LINK_GSO=1)
        self.gso = gso if gso is not None else os.environ.get("CCBENCH_LINK_GSO") == "1"
        if (link_config.get("bottleneck") or {}).get("wifi") is not None:
            # a Wi-Fi bottleneck is served by one thread that reads plain packets (no --gso)
            self.gso = False
        self.link: Optional[subprocess.Popen] = None
        self.link_ready: dict = {}
        self.link_report: Optional[dict] = None
        self.procs: list[subprocess.Popen] = []
        self._closed = False
        self._made_ns: list[str] = []
        self._tmp = tempfile.TemporaryDirectory(prefix=f"{self.tag}-")
        self.link_stderr_path = Path(self._tmp.name) / "link.stderr"

    # ---- set-up -------------------------------------------------------------------------------

    def __enter__(self) -> "Topology":
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        from pyroute2 import netns

        with _LIVE_LOCK:
            _LIVE.add(self)
        for ns in (self.ns_s, self.ns_r):
            netns.create(ns)
            self._made_ns.append(ns)
        self._sysctls()
        self._start_link()
        self._configure()

    def _sysctls(self) -> None:
        # `sysctl` inside the namespace (pyroute2 has no sysctl API). Per-namespace settings only.
        # The namespace's default congestion control is reno, whatever the host's. iperf3 (3.12)
        # connects first and sets -C after, so the default's init() runs on every connection, and
        # BBR's bbr_init() turns on the kernel's internal pacing (sk_pacing_status = NEEDED),
        # which switching to CUBIC or Reno does not undo: on a host whose default is bbr every
        # CUBIC/Reno flow was paced. Reno has no init(), so only the flow's own algorithm (and
        # the scenario's `pacing` key) decides whether the kernel paces.
        common = ["net.ipv4.tcp_no_metrics_save=1", "net.ipv4.tcp_congestion_control=reno"]
        if self.tcp_timestamps is not None:
            # both ends: a SYN carries the option only if the sender's is on, and the SYN-ACK
            # agrees to it only if the receiver's is on
            common.append(f"net.ipv4.tcp_timestamps={1 if self.tcp_timestamps else 0}")
        if self.tcp_ecn is not None:
            # the sender's SYN asks for ECN (ECE+CWR) only with 1; the receiver agrees with 1 or 2
            common.append(f"net.ipv4.tcp_ecn={1 if self.tcp_ecn else 0}")
        wmem = [f"net.ipv4.tcp_wmem=4096 16384 {self.tcp_wmem_max}"]
        rmem = [f"net.ipv4.tcp_rmem=4096 131072 {self.tcp_rmem_max}"] if self.tcp_rmem_max else []
        snd = common + wmem + (rmem if self.two_way else [])
        rcv = common + rmem + (wmem if self.two_way else [])
        for ns, items in ((self.ns_s, snd), (self.ns_r, rcv)):
            _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", *items])

    def _start_link(self) -> None:
        binary = env.link_binary_or_raise()
        cfg_path = Path(self._tmp.name) / "link.json"
        cfg_path.write_text(json.dumps(self.link_config))
        argv = [
            str(binary),
            "--config",
            str(cfg_path),
            "--netns-a",
            ns_path(self.ns_s),
            "--tun-a",
            TUN_S,
            "--netns-b",
            ns_path(self.ns_r),
            "--tun-b",
            TUN_R,
            "--rt-prio",
            str(self.rt_prio),
        ]
        if self.spin_us is not None:
            argv += ["--spin-us", str(self.spin_us)]
        if self.gso:
            argv.append("--gso")
        self._link_err = open(self.link_stderr_path, "w")
        self.link = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._link_err, start_new_session=True
        )
        r, _, _ = select.select([self.link.stdout], [], [], 10.0)
        line = self.link.stdout.readline() if r else b""
        if not line:
            self.link.wait(timeout=5) if self.link.poll() is None and not r else None
            raise TopologyError(f"ccbench-link did not start: {self.link_stderr_path.read_text().strip()}")
        self.link_ready = json.loads(line)

    def _configure(self) -> None:

        for ns, dev, local, peer in (
            (self.ns_s, TUN_S, SENDER_ADDR, RECEIVER_ADDR),
            (self.ns_r, TUN_R, RECEIVER_ADDR, SENDER_ADDR),
        ):
            with _iproute_in(ns) as ipr:
                lo = ipr.link_lookup(ifname="lo")[0]
                ipr.link("set", index=lo, state="up")
                idx = ipr.link_lookup(ifname=dev)[0]
                ipr.link("set", index=idx, mtu=1500, txqlen=TUN_TXQLEN)
                ipr.addr("add", index=idx, address=local, prefixlen=32)
                ipr.link("set", index=idx, state="up")
                ipr.route("add", dst=f"{peer}/32", oif=idx, prefsrc=local)
            # Offloads (ethtool: pyroute2's ethtool support cannot set features): a TUN without
            # IFF_VNET_HDR has no TSO; GSO would hand the TUN whole super-packets only to have
            # the kernel split them just before the ring, so turn it off so TCP builds MSS-sized
            # packets itself; GRO off so the receiver sees and ACKs every packet as it arrives.
            if self.gso and ns == self.ns_s:  # TSO super-packets are cut into wire packets by ccbench-link
                feats = ["gro", "off", "tso", "on", "gso", "on"]
            else:
                feats = ["gso", "off", "gro", "off", "tso", "off"]
            _run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, *feats], check=False)

    # ---- processes ----------------------------------------------------------------------------

    def popen(self, side: str, argv: list[str], **kw) -> subprocess.Popen:
        """Start ``argv`` inside the sender ('s') or receiver ('r') namespace (`ip netns exec`)."""
        ns = self.ns_s if side == "s" else self.ns_r
        kw.setdefault("start_new_session", True)
        p = subprocess.Popen(["ip", "netns", "exec", ns, *argv], **kw)
        self.procs.append(p)
        return p

    def tun_stats(self) -> dict:
        """Kernel-side counters of both TUN devices (e.g. tx_dropped = ring overflow before ccbench-link)."""

        out = {}
        for ns, dev in ((self.ns_s, TUN_S), (self.ns_r, TUN_R)):
            try:
                with _iproute_in(ns) as ipr:
                    link = ipr.get_links(ifname=dev)[0]
                    st = link.get("IFLA_STATS64") or link.get("IFLA_STATS")
                    out[dev] = {k: st[k] for k in ("rx_packets", "tx_packets", "rx_dropped", "tx_dropped")}
            except Exception as e:  # pragma: no cover - diagnostics only
                out[dev] = {"error": str(e)}
        return out

    def stop_link(self, timeout: float = 10.0) -> Optional[dict]:
        """Stop ccbench-link and return its JSON report (None if it had died)."""
        p = self.link
        if p is None:
            return self.link_report
        self.link = None
        try:
            if p.poll() is None:
                try:
                    p.stdin.close()
                except OSError:
                    pass
                p.stdin = None
                p.send_signal(signal.SIGTERM)
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        for line in reversed(out.decode(errors="replace").splitlines()):
            if line.startswith("{") and "directions" in line:
                self.link_report = json.loads(line)
                break
        return self.link_report

    # ---- tear-down ----------------------------------------------------------------------------

    def close(self) -> None:
        """Tear everything down. Idempotent; a second Ctrl-C/SIGTERM does not interrupt it."""
        if self._closed:
            return
        with _signals_deferred():
            self._teardown()
        self._closed = True

    def _teardown(self) -> None:
        for p in self.procs:
            try:
                _terminate(p)
            except Exception:
                pass
        for ns in self._made_ns:
            try:
                kill_ns_processes(ns)
            except Exception:
                pass
        try:
            self.stop_link(timeout=5)
        except Exception:
            pass
        from pyroute2 import netns

        for ns in self._made_ns:
            try:
                netns.remove(ns)
            except Exception:
                _run(["ip", "netns", "del", ns], check=False)
        try:
            self._link_err.close()
        except Exception:
            pass
        try:
            self._tmp.cleanup()
        except Exception:
            pass
        with _LIVE_LOCK:
            _LIVE.discard(self)


@contextmanager
def _signals_deferred():
    """Hold SIGINT/SIGTERM/SIGHUP during the body (main thread only) and re-deliver them after."""
    got: list[int] = []
    try:
        with signals_recorded(got):
            yield
    finally:
        for s in got[:1]:
            os.kill(os.getpid(), s)


def _iproute_in(ns: str):
    """An IPRoute whose netlink socket lives in namespace ``ns``: created while this thread is
    inside it (setns), instead of pyroute2's ``netns=`` mode, which forks a helper process."""
    from pyroute2 import IPRoute

    with in_netns(ns):
        return IPRoute()


def _terminate(p: subprocess.Popen, grace: float = 2.0) -> None:
    if p.poll() is not None:
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        p.terminate()
    try:
        p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=grace)


def pids_in_netns(ns: str) -> list[int]:
    ino = netns_inode(ns)
    if ino is None:
        return []
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.stat(f"/proc/{d}/ns/net").st_ino == ino:
                out.append(int(d))
        except OSError:
            continue
    return [p for p in out if p != os.getpid()]


def kill_ns_processes(ns: str, grace: float = 1.0) -> list[int]:
    pids = pids_in_netns(ns)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.02)
        pids = [p for p in pids if _alive(p)]
        if not pids:
            break
    return pids


def _link_processes() -> list[tuple[int, list[str]]]:
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            argv = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"ccbench-link"):
            out.append((int(d), [a.decode(errors="replace") for a in argv if a]))
    return out


def _owner_alive(ns: str) -> bool:
    m = NS_RE.match(ns)
    if not m:
        return False
    pid = int(m.group(1))
    if pid == os.getpid():  # ours: alive while a Topology of this process uses it
        with _LIVE_LOCK:
            return any(ns in (t.ns_s, t.ns_r) for t in _LIVE)
    return _alive(pid)


def cleanup_stale(force: bool = False) -> dict:
    """Remove what crashed runs left: ``ccb*`` namespaces (and every process inside them),
    ccbench-link processes serving ``ccb*`` namespaces, and ``ccb*`` links in this namespace.
    A namespace whose creating process (the pid in its name) is still alive belongs to a run in
    progress and is kept unless ``force``."""
    from pyroute2 import IPRoute, netns

    done = {"namespaces": [], "processes": [], "links": [], "dirs": [], "kept": []}
    for ns in sorted(netns.listnetns()):
        if not ns.startswith(env.PREFIX):
            continue
        if not force and _owner_alive(ns):
            done["kept"].append(ns)
            continue
        pids = pids_in_netns(ns)
        kill_ns_processes(ns)
        done["processes"] += pids
        for pid, argv in _link_processes():
            if any(ns in a for a in argv):
                _kill(pid)
                done["processes"].append(pid)
        try:
            netns.remove(ns)
        except Exception:
            _run(["ip", "netns", "del", ns], check=False)
        done["namespaces"].append(ns)
    # emulators whose namespaces are gone
    live = set(netns.listnetns())
    for pid, argv in _link_processes():
        names = [Path(a).name for a in argv if f"/{env.PREFIX}" in a or a.startswith(env.PREFIX)]
        nsnames = [n for n in names if NS_RE.match(n)]
        if nsnames and not any(n in live for n in nsnames):
            _kill(pid)
            done["processes"].append(pid)
    with IPRoute() as ipr:
        for link in ipr.get_links():
            name = link.get("IFLA_IFNAME") or ""
            if name.startswith(env.PREFIX):
                try:
                    ipr.link("del", index=link["index"])
                    done["links"].append(name)
                except Exception:
                    pass
    done["dirs"] = remove_stale_tmp_dirs()
    return done


TMP_DIR_RE = re.compile(rf"^{env.PREFIX}(\d+)x[0-9a-f]+-")


def remove_stale_tmp_dirs(tmp: str | None = None) -> list[str]:
    """Remove the temporary directories (``ccb<pid>x<hex>-*`` in the temp dir: the emulator's
    config and stderr) of runs whose process is gone, e.g. SIGKILLed. Only directories owned by
    this user, never through a symlink. Returns the paths removed."""
    import shutil
    import stat

    root = Path(tmp or tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for e in entries:
        m = TMP_DIR_RE.match(e.name)
        if not m:
            continue
        try:
            st = os.lstat(e.path)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or _alive(pid):
            continue
        shutil.rmtree(e.path, ignore_errors=True)
        if not os.path.lexists(e.path):
            removed.append(e.path)
    return removed


def _kill(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        for _ in range(50):
            if not _alive(pid):
                return
            time.sleep(0.02)


def _close_all() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for t in live:
        try:
            t.close()
        except Exception:
            pass


atexit.register(_close_all)


class Interrupted(Terminated):
    """Raised in the main thread when SIGTERM (or SIGHUP) arrives during a kernel run; its
    ``signum`` gives the command's exit status (procs.exit_status: 143 for SIGTERM)."""


@contextmanager
def signals_raise():
    """During the body, SIGTERM (and SIGHUP) raise :class:`Interrupted` in the main thread, so
    ``finally`` blocks tear everything down; SIGINT raises KeyboardInterrupt, even where it was
    ignored (a sweep worker)."""
    with procs_signals_raise(exc=Interrupted), signal_handler((signal.SIGINT,), signal.default_int_handler):
        yield
