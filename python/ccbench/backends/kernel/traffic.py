"""Traffic and measurement inside the namespaces: iperf3 servers (receiver ns), one iperf3 client
per flow (sender ns, ``-C <cc>``; ``-R`` for a reverse flow, whose server sends), the ping probe,
and the sock_diag sampler thread."""

from __future__ import annotations

import json
import math
import re
import socket
import struct
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ...scenario.model import RCV_SCALING_RATIO_256
from .diag import DiagSocket, SockInfo
from .nsutil import netns_socket
from .topology import RECEIVER_ADDR, SENDER_ADDR, Topology

BASE_PORT = 5201
BASE_CPORT = 40001
#: Linux caps SO_RCVBUF/SO_SNDBUF at net.core.rmem_max/wmem_max (global, not settable from a
#: namespace); an rwnd above it is honoured through the receiver namespace's tcp_rmem instead.
RMEM_MAX_PATH = "/proc/sys/net/core/rmem_max"


def rmem_max() -> int:
    try:
        return int(open(RMEM_MAX_PATH).read())
    except OSError:
        return 212992


def rcvbuf_for_window(window_bytes: int) -> int:
    """The receive buffer whose largest window is ``window_bytes``: Linux offers
    tcp_win_from_space(sk_rcvbuf) = sk_rcvbuf × scaling ratio / 256 (window_clamp), so an
    untouched host's 6 MiB tcp_rmem maximum gives the default rwnd of 3.75 MiB."""
    return -(-window_bytes * 256 // RCV_SCALING_RATIO_256)


def so_rcvbuf_for_window(window_bytes: int) -> int:
    """The SO_RCVBUF (iperf3 -w) value for a largest window of ``window_bytes``: Linux doubles
    what setsockopt asks for (sock_setsockopt: sk_rcvbuf = 2 × val, for the skb overhead)."""
    return -(-rcvbuf_for_window(window_bytes) // 2)


@dataclass
class FlowProc:
    id: int
    cc: str
    start_s: float
    port: int
    cport: int
    argv: list[str]
    proc: Optional[subprocess.Popen] = None
    started_at: Optional[float] = None  # monotonic
    ended_at: Optional[float] = None
    result: Optional[dict] = None  # iperf3 -J output
    error: Optional[str] = None
    #: Seconds before start_s to launch the client, so that its data connection (which iperf3
    #: opens after a process start and a control-connection exchange) starts near start_s.
    setup_lead_s: float = 0.0
    #: Fixed-size flows use our own small sender/receiver (see SizedReceiver), not iperf3.
    size_bytes: Optional[int] = None
    rwnd_bytes: int = 0
    rwnd_mode: str = "autotune"
    pacing: bool = False
    receiver: Optional["SizedReceiver"] = None
    sender: Optional[threading.Thread] = None
    connect_at: Optional[float] = None  # monotonic, just before connect() (sized flows)
    sent_bytes: int = 0
    #: The data goes from the receiver namespace to the sender namespace (iperf3 -R: the client
    #: still connects from the sender namespace, the server sends).
    reverse: bool = False


def start_servers(topo: Topology, flows: list[FlowProc], timeout: float = 10.0) -> list[subprocess.Popen]:
    """An iperf3 server per bulk flow, our own receiver per sized flow; wait until all listen."""
    procs = []
    for f in flows:
        if f.size_bytes:
            f.receiver = SizedReceiver(topo, f)
            f.receiver.start()
            continue
        i = f.id
        procs.append(
            topo.popen(
                "r",
                ["iperf3", "-s", "-1", "-B", RECEIVER_ADDR, "-p", str(BASE_PORT + i)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
    want = {f.port for f in flows}
    with DiagSocket(topo.ns_r) as d:
        deadline = time.monotonic() + timeout
        while True:
            have = d.listening_ports()
            if want <= have:
                break
            for p in procs:
                if p.poll() is not None:
                    raise RuntimeError(f"iperf3 server exited: {p.stderr.read().decode(errors='replace')}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"iperf3 servers not listening after {timeout}s: missing {sorted(want - have)}")
            time.sleep(0.02)
    return procs


def client_argv(
    flow, port: int, cport: int, duration_s: float, rwnd_mode: str, kernel_cc: Optional[str] = None
) -> list[str]:
    """iperf3's client command line; ``kernel_cc``: the kernel's name of the flow's algorithm
    where it differs from the scenario's (a BPF port, ccb_vegas for vegas)."""
    # iperf3 reads -t with atoi (3.12: "-t 9.996" runs 9 s): round up to whole seconds, so a
    # flow whose start is not on a whole second (start_jitter) still sends to the end of the
    # run; what it sends after the end is not counted (the tables stop at the duration)
    seconds = max(1, math.ceil(duration_s - 1e-9))
    argv = [
        "iperf3",
        "-c",
        RECEIVER_ADDR,
        "-p",
        str(port),
        "--cport",
        str(cport),
        "-C",
        kernel_cc or flow.cc,
        "-J",
        "-i",
        "0",
        "-t",
        str(seconds),
    ]
    if flow.size_bytes:
        argv[argv.index("-t") : argv.index("-t") + 2] = ["-n", str(int(flow.size_bytes))]
    if rwnd_mode == "setsockopt":
        argv += ["-w", str(so_rcvbuf_for_window(int(flow.rwnd_bytes)))]
    if getattr(flow, "direction", "forward") == "reverse":
        # the server sends (with the client's -C, which iperf3 passes in the test parameters)
        argv += ["-R"]
    if getattr(flow, "pacing", False) and flow.cc != "bbr":
        # SO_MAX_PACING_RATE makes Linux pace internally (sk_pacing_status NEEDED) at
        # tcp_update_pacing_rate's 200 %/120 % of cwnd/srtt, as with fq; the cap itself is huge.
        argv += ["--fq-rate", "30G"]
    return argv


class FlowLauncher(threading.Thread):
    """Starts each client at t0 + start_s (t0 = CLOCK_MONOTONIC seconds) and collects its JSON."""

    def __init__(self, topo: Topology, flows: list[FlowProc], t0: float):
        super().__init__(daemon=True, name="ccb-flows")
        self.topo, self.flows, self.t0 = topo, flows, t0
        self.stop = threading.Event()

    def run(self) -> None:
        for f in sorted(self.flows, key=lambda f: f.start_s - f.setup_lead_s):
            delay = self.t0 + f.start_s - f.setup_lead_s - time.monotonic()
            if delay > 0 and self.stop.wait(delay):
                return
            f.started_at = time.monotonic()
            try:
                if f.size_bytes:
                    f.sender = threading.Thread(target=_sized_send, args=(self.topo, f, self.stop), daemon=True)
                    f.sender.start()
                else:
                    f.proc = self.topo.popen("s", f.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            except Exception as e:  # pragma: no cover
                f.error = str(e)

    def collect(self, deadline: float) -> None:
        for f in self.flows:
            if f.size_bytes:
                if f.sender is not None:
                    f.sender.join(timeout=max(0.1, deadline - time.monotonic()))
                if f.receiver is not None:
                    f.receiver.stop.set()
                    f.receiver.join(timeout=3)
                continue
            p = f.proc
            if p is None:
                f.error = f.error or "not started"
                continue
            try:
                out, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.terminate()
                try:
                    out, err = p.communicate(timeout=3)
                except subprocess.TimeoutExpired:
                    p.kill()
                    out, err = p.communicate()
                f.error = "stopped at the end of the run"
            f.ended_at = f.ended_at or time.monotonic()
            try:
                f.result = json.loads(out.decode(errors="replace"))
                if f.result.get("error") and not f.error:
                    f.error = f"iperf3: {f.result['error']}"
            except ValueError:
                f.error = f.error or f"iperf3 gave no JSON: {err.decode(errors='replace').strip()[:300]}"


SO_MAX_PACING_RATE = 47


def _buffers(sock: socket.socket, f: FlowProc) -> None:
    if f.rwnd_mode == "setsockopt":  # as iperf3 -w: both buffers on both ends
        size = so_rcvbuf_for_window(f.rwnd_bytes)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)


class SizedReceiver(threading.Thread):
    """Receiver of a fixed-size flow: accepts one connection, reads to EOF, records the time of
    the last byte. (iperf3 -n cannot give a flow completion time: it ends the test when the
    sender has *written* n bytes and the server stops reading then.)"""

    def __init__(self, topo: Topology, f: FlowProc):
        super().__init__(daemon=True, name=f"ccb-recv-{f.id}")
        self.sock = netns_socket(topo.ns_r, socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        _buffers(self.sock, f)
        self.sock.bind((RECEIVER_ADDR, f.port))
        self.sock.listen(1)
        self.stop = threading.Event()
        self.bytes = 0
        self.last_at: Optional[float] = None

    def run(self) -> None:
        self.sock.settimeout(0.2)
        conn = None
        try:
            while conn is None and not self.stop.is_set():
                try:
                    conn, _ = self.sock.accept()
                except socket.timeout:
                    continue
            if conn is None:
                return
            conn.settimeout(0.2)
            while True:
                try:
                    data = conn.recv(1 << 20)
                except socket.timeout:
                    if self.stop.is_set():
                        break
                    continue
                if not data:
                    break
                self.bytes += len(data)
                self.last_at = time.monotonic()
        except OSError:
            pass
        finally:
            if conn is not None:
                conn.close()
            self.sock.close()


def _sized_send(topo: Topology, f: FlowProc, stop: threading.Event) -> None:
    try:
        s = netns_socket(topo.ns_s, socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, f.cc.encode())
        _buffers(s, f)
        if f.pacing and f.cc != "bbr":  # internal pacing, as iperf3 --fq-rate (see client_argv)
            s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("Q", 30_000_000_000 // 8))
        s.bind((SENDER_ADDR, f.cport))
        s.settimeout(0.5)
        f.connect_at = time.monotonic()
        s.connect((RECEIVER_ADDR, f.port))
        chunk = memoryview(bytes(1 << 16))
        left = f.size_bytes
        while left > 0 and not stop.is_set():
            try:
                n = s.send(chunk[: min(left, len(chunk))])
            except socket.timeout:
                continue
            left -= n
            f.sent_bytes += n
        s.shutdown(socket.SHUT_WR)
        while not stop.is_set():  # the receiver closes after reading everything
            try:
                if not s.recv(4096):
                    break
            except socket.timeout:
                continue
        s.close()
    except OSError as e:
        f.error = f"sized flow sender: {e}"


#: What is kept of each sender-side sample (compact: a 120 s run of 20 flows at 100 Hz is 240 k samples).
SENDER_FIELDS = (
    "ca_state",
    "rtt",
    "snd_cwnd",
    "min_rtt",
    "bytes_acked",
    "pacing_rate",
    "delivery_rate",
    "total_retrans",
    "data_segs_out",
    "inflight",
    "bbr_bw_bps",
    "bbr_min_rtt_us",
    "bbr_pacing_gain",
    "bbr_cwnd_gain",
)
RECEIVER_FIELDS = ("bytes_received", "data_segs_in")
_TCP_STATES_OF_A_CONNECTION = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 11)


@dataclass
class FlowSamples:
    t: list[float] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)  # one tuple per sample, fields as SENDER_/RECEIVER_FIELDS
    cc: Optional[str] = None

    def col(self, name: str, fields=SENDER_FIELDS) -> list:
        i = fields.index(name)
        return [r[i] for r in self.rows]


def _sender_row(s: SockInfo) -> tuple:
    i, b = s.info, s.bbr
    return (
        i["ca_state"],
        i["rtt"],
        i["snd_cwnd"],
        i["min_rtt"],
        i["bytes_acked"],
        i["pacing_rate"],
        i["delivery_rate"],
        i["total_retrans"],
        i["data_segs_out"],
        s.inflight,
        b["bw_bps"] if b else None,
        b["min_rtt_us"] if b else None,
        b["pacing_gain"] if b else None,
        b["cwnd_gain"] if b else None,
    )


class DiagSampler(threading.Thread):
    """Dumps tcp_info of every TCP socket in namespace ``ns`` every ``fast_s`` seconds and keeps
    the samples of each flow's data connection, matched by the client port: ``sport`` in the
    sender namespace (where the clients run), ``dport`` in the receiver namespace. ``senders``:
    the flows whose sending socket is in this namespace (default: every flow on the "sender"
    side, none on the "receiver" side; a reverse flow sends from the receiver namespace); their
    samples are SENDER_FIELDS rows, the others' RECEIVER_FIELDS rows. Congestion events are
    counted from these fast samples (entries into Recovery/Loss); the series is taken from them
    at the scenario's sample interval afterwards."""

    def __init__(
        self,
        ns: str,
        cports: dict[int, int],
        t0: float,
        fast_s: float = 0.01,
        side: str = "sender",
        senders: Optional[set[int]] = None,
    ):
        super().__init__(daemon=True, name=f"ccb-diag-{side}")
        self.ns, self.cports, self.t0, self.fast_s, self.side = ns, cports, t0, fast_s, side
        self.senders = set(cports.values()) if senders is None and side == "sender" else set(senders or ())
        self.samples: dict[int, FlowSamples] = {fid: FlowSamples() for fid in cports.values()}
        self.stop = threading.Event()
        self.error: Optional[str] = None
        #: Called in this thread right after a final sample when stopped; its value is kept.
        self.on_stop: Optional[Callable[[], object]] = None
        self.on_stop_result: object = None

    def run(self) -> None:
        try:
            with DiagSocket(self.ns) as d:
                nxt = time.monotonic()
                while not self.stop.is_set():
                    self._sample(d)
                    nxt += self.fast_s
                    wait = nxt - time.monotonic()
                    if wait < 0:
                        nxt = time.monotonic()
                        wait = 0
                    self.stop.wait(wait)
                if self.on_stop is not None:
                    # a last sample the moment we are stopped, and what must be read at the
                    # same instant (the run's closing MIB counters) right after it
                    self._sample(d)
                    self.on_stop_result = self.on_stop()
        except Exception as e:  # pragma: no cover
            self.error = f"sock_diag sampler ({self.side}): {e}"

    def _sample(self, d: DiagSocket) -> None:
        by_sport = self.side == "sender"
        now = time.monotonic()
        for s in d.dump(states=_TCP_STATES_OF_A_CONNECTION):
            fid = self.cports.get(s.sport if by_sport else s.dport)
            if fid is None or not s.info:
                continue
            fs = self.samples[fid]
            fs.t.append(now - self.t0)
            if fid in self.senders:
                fs.rows.append(_sender_row(s))
                # the latest: iperf3 sets -C just after connecting, so a first
                # sample can still show the namespace default (reno)
                fs.cc = s.cc or fs.cc
            else:
                fs.rows.append((s.info["bytes_received"], s.info["data_segs_in"]))


@dataclass
class RoleSamples:
    """The samples of one role (every flow's sending or receiving socket), gathered from the
    samplers of both namespaces: what ``kernel._assemble`` reads as ``sampler.samples``."""

    samples: dict[int, FlowSamples]
    error: Optional[str] = None


def by_role(left: DiagSampler, right: DiagSampler, reverse: set[int]) -> tuple[RoleSamples, RoleSamples]:
    """(sending sockets, receiving sockets) of every flow: a forward flow sends from the sender
    namespace (``left``), a reverse flow from the receiver namespace (``right``)."""
    error = left.error or right.error
    snd = {fid: (right if fid in reverse else left).samples[fid] for fid in left.samples}
    rcv = {fid: (left if fid in reverse else right).samples[fid] for fid in left.samples}
    return RoleSamples(snd, error), RoleSamples(rcv, error)


#: A reply line of ``ping -D``: "[<unix time>] 64 bytes from ...: icmp_seq=1 ttl=64 time=40.1 ms".
_PING_RE = re.compile(rb"^(?:\[([0-9.]+)\] )?.*?time=([0-9.]+) ms", re.M)


def start_ping(topo: Topology, interval_s: float, duration_s: float) -> subprocess.Popen:
    count = max(1, int(duration_s / interval_s))
    # -D: each reply line carries the (wall-clock) time it was received, so replies can be put
    # into the sample intervals of the link series
    return topo.popen(
        "s",
        ["ping", "-n", "-D", "-i", f"{interval_s:.3f}", "-c", str(count), "-W", "2", RECEIVER_ADDR],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish_ping(p: subprocess.Popen, deadline: float) -> list[tuple[Optional[float], float]]:
    """The replies as ``(time received on the monotonic clock or None, RTT in ms)``."""
    try:
        out, _ = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        p.send_signal(2)
        try:
            out, _ = p.communicate(timeout=3)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
    return parse_ping(out, time.time() - time.monotonic())


def parse_ping(out: bytes, wall_minus_mono: float) -> list[tuple[Optional[float], float]]:
    """Reply lines of ``ping -D`` output; ``wall_minus_mono`` converts their wall-clock stamps
    to the monotonic clock the run is timed on."""
    return [(float(ts) - wall_minus_mono if ts else None, float(rtt)) for ts, rtt in _PING_RE.findall(out)]
