"""The loss-based BPF ports (backends/kernel/bpf: scalable, highspeed, bic, westwood, htcp, hybla)
on the real kernel, each checked against the arithmetic of the Linux 6.18 module it follows.

The sender's window is read per ACK from the tcp:tcp_probe tracepoint (fired as each ACK
arrives, before it is processed: snd_cwnd and ssthresh as the previous ACK left them) beside
tcp:tcp_cong_state_set (the sender's state changes). On entering Recovery the stack calls the
module's ssthresh() with the cwnd the last probe showed, and the probe of the next ACK reports
the ssthresh it returned: tcp_probe reports tcp_current_ssthresh(), which in Recovery is
snd_ssthresh itself. So each loss episode gives an exact (cwnd before, ssthresh) pair. Entries
that directly follow the end of an earlier recovery (cwnd was reset to ssthresh within the
same ACK, after the probe) are left out, as are entries after a timeout. Tracepoints see every
namespace; the run's own data connection is told apart by its socket cookie, which tcp_probe
prints and the run's sock_diag samples carry.

Needs root, the kernel backend's tools, BPF (bpfcc.missing) and tracefs."""

from __future__ import annotations

import gzip
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

import ccbench
from ccbench.backends.kernel import bpfcc, diag
from ccbench.backends.kernel.tracefs import trace_events
from ccbench.backends.kernel.traffic import BASE_CPORT
from ccbench.scenario.model import Scenario
from conftest import faithful_kernel_run, tracing_missing

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(
        (tracing_missing() or bpfcc.missing()) is not None,
        reason=tracing_missing() or bpfcc.missing() or "",
    ),
]

TCP_CA_OPEN, TCP_CA_DISORDER, TCP_CA_RECOVERY, TCP_CA_LOSS = 0, 1, 3, 4
INFINITE_SSTHRESH = 0x7FFFFFFF
MSS = 1448  # 1500-byte packets with timestamps
PROBE = re.compile(r": tcp_probe: .*snd_cwnd=(\d+) ssthresh=(\d+) snd_wnd=\d+ srtt=(\d+) .*sock_cookie=([0-9a-f]+) ")
STATE = re.compile(r": tcp_cong_state_set: .*cong_state=(\d+)")
TIME = re.compile(r" (\d+\.\d+): ")


@dataclass
class Probe:
    t: float  # s, from the socket's first probe
    cwnd: int
    ssthresh: int  # tcp_current_ssthresh()
    srtt_us: int


@dataclass
class Trace:
    """The data connection's ACKs (Probe) and state changes (int), in the order they happened."""

    events: list

    def probes(self) -> list[Probe]:
        return [e for e in self.events if isinstance(e, Probe)]

    def loss_entries(self) -> list[tuple[int, int]]:
        """(cwnd before, ssthresh set) of each entry into Recovery from Open or Disorder whose
        last probe was taken in Open or Disorder, up to the first timeout."""
        out = []
        state, state_at_probe, last = TCP_CA_OPEN, TCP_CA_OPEN, None
        for i, e in enumerate(self.events):
            if isinstance(e, Probe):
                last, state_at_probe = e, state
                continue
            if e == TCP_CA_LOSS:
                break
            ok = {state, state_at_probe} <= {TCP_CA_OPEN, TCP_CA_DISORDER}
            if e == TCP_CA_RECOVERY and ok and last is not None:
                nxt = self.events[i + 1] if i + 1 < len(self.events) else None
                if isinstance(nxt, Probe):  # still in Recovery when the next ACK came
                    out.append((last.cwnd, nxt.ssthresh))
            state = e
        return out

    def recovery_exits(self) -> list[tuple[float, int, int]]:
        """(time, cwnd, reported ssthresh) at the first ACK after each return from Recovery to
        Open, up to the first timeout."""
        out = []
        state = TCP_CA_OPEN
        for i, e in enumerate(self.events):
            if isinstance(e, Probe):
                continue
            if e == TCP_CA_LOSS:
                break
            if state == TCP_CA_RECOVERY and e == TCP_CA_OPEN:
                nxt = self.events[i + 1] if i + 1 < len(self.events) else None
                if isinstance(nxt, Probe):
                    out.append((nxt.t, nxt.cwnd, nxt.ssthresh))
            state = e
        return out


def _parse(text: str) -> dict[int, list]:
    """Trace lines by socket cookie: probes carry it; a state change belongs to the socket of the
    probe before it on the same CPU (the same ACK's processing)."""
    by_sock: dict[int, list] = {}
    first_probe_t: dict[int, float] = {}
    last_sock_on_cpu: dict[str, int] = {}
    for ln in text.splitlines():
        cpu = ln[ln.find("[") + 1 : ln.find("]")] if "[" in ln else ""
        tm = TIME.search(ln)
        if tm is None:
            continue
        t = float(tm.group(1))
        m = PROBE.search(ln)
        if m:
            sock = int(m.group(4), 16)
            t0 = first_probe_t.setdefault(sock, t)
            last_sock_on_cpu[cpu] = sock
            by_sock.setdefault(sock, []).append(Probe(t - t0, int(m.group(1)), int(m.group(2)), int(m.group(3))))
            continue
        m = STATE.search(ln)
        if m and cpu in last_sock_on_cpu:
            by_sock[last_sock_on_cpu[cpu]].append(int(m.group(1)))
    return by_sock


@contextmanager
def _cookies_sampled(into: set[int]):
    """Collect the cookies of the data connections (client port BASE_CPORT) that this process's
    sock_diag samplers see: those of its own run's namespace, whatever other kernel runs on the
    host (which tracepoints also see) use the same port."""
    dump = diag.DiagSocket.dump

    def recording(self, *a, **kw):
        out = dump(self, *a, **kw)
        into.update(s.cookie for s in out if s.sport == BASE_CPORT)
        return out

    diag.DiagSocket.dump = recording
    try:
        yield
    finally:
        diag.DiagSocket.dump = dump


def check_entries(entries: list[tuple[int, int]], allowed, start: int = 0) -> None:
    """Each (cwnd, ssthresh) satisfies ``allowed`` for the cwnd the probe showed or, after an undo
    within the ACK that entered Recovery, for the previous entry's cwnd: in Open or Disorder a
    DSACK can undo the last reduction (tcp_fastretrans_alert: tcp_try_undo_dsack, cwnd back to
    prior_cwnd, the cwnd at the previous entry) and the same ACK then start a recovery, with no
    state change and no probe in between. At most a third of the entries may need that. Entries
    before ``start`` are not checked."""
    undone = 0
    for i, (cwnd, ssthresh) in enumerate(entries):
        if i < start or allowed(cwnd, ssthresh):
            continue
        prev = entries[i - 1][0] if i else None
        assert prev is not None and prev > cwnd and allowed(prev, ssthresh), (cwnd, ssthresh, prev)
        undone += 1
    assert undone <= len(entries) // 3, entries


def _scenario(cc: str, rtt: str, buffer: str, duration: str) -> Scenario:
    return Scenario.from_dict(
        {
            "duration": duration,
            "seed": 1,
            "bottleneck": {"rate": "50Mbit", "rtt": rtt, "buffer": buffer},
            "flows": [{"cc": cc}],
        },
        source="test",
    )


def traced_run(cc: str, rtt: str, buffer: str = "1bdp", duration: str = "8s", faithful: bool = False) -> Trace:
    """One flow of ``cc`` (its BPF port) over 50 Mbit/s, traced; with ``faithful``, on a quiet
    host (conftest.faithful_kernel_run)."""
    sc = _scenario(cc, rtt, buffer, duration)
    box = {}  # the latest run's trace and data-connection cookies

    def run():
        events = {f"tcp/{e}": f"sport == {BASE_CPORT}" for e in ("tcp_probe", "tcp_cong_state_set")}
        box["cookies"] = set()
        with _cookies_sampled(box["cookies"]), trace_events(events, buffer_kb=65536) as stop:
            res = ccbench.run(sc, backend="kernel")
            box["text"] = stop()
        return res

    res = faithful_kernel_run(run) if faithful else run()
    assert res.ok, res.error
    assert res.flows.cc_impl[0] == "bpf"
    socks = _parse(box["text"])
    mine = [c for c in box["cookies"] if c in socks]
    assert len(mine) == 1, (box["cookies"], list(socks))
    return Trace(socks[mine[0]])


def _kernel_hz() -> int:
    """CONFIG_HZ of the running kernel (the ports that count jiffies take it from there too)."""
    for p in (Path("/proc/config.gz"), Path(f"/boot/config-{Path('/proc/sys/kernel/osrelease').read_text().strip()}")):
        if p.exists():
            text = gzip.open(p, "rt").read() if p.suffix == ".gz" else p.read_text()
            m = re.search(r"^CONFIG_HZ=(\d+)$", text, re.M)
            if m:
                return int(m.group(1))
    pytest.skip("the kernel configuration (CONFIG_HZ) is not readable")


def test_scalable_cuts_cwnd_by_an_eighth():
    """tcp_scalable_ssthresh: ssthresh = max(cwnd - (cwnd >> 3), 2), i.e. 7/8 of cwnd rounded up
    to the packet: e.g. 338 -> 338 - 42 = 296. Reno would give cwnd / 2, CUBIC 717/1024."""
    entries = traced_run("scalable", "20ms").loss_entries()
    print(f"scalable (cwnd before, ssthresh): {entries}")
    assert len(entries) >= 3
    check_entries(entries, lambda cwnd, ssthresh: ssthresh == max(cwnd - (cwnd >> 3), 2))


# RFC 3649 appendix B as tabulated in tcp_highspeed.c: (upper end of the window band, b(w) << 8)
HSTCP_ROWS = [(38, 128), (118, 112), (221, 104), (347, 98), (495, 93), (663, 89), (851, 86)]


def _hstcp_ssthresh(cwnd: int, row: int) -> int:
    return max(cwnd - ((cwnd * HSTCP_ROWS[row][1]) >> 8), 2)


def _hstcp_row(cwnd: int) -> int:
    return next(i for i, (top, _) in enumerate(HSTCP_ROWS) if cwnd <= top)


def test_highspeed_decreases_by_the_rfc3649_table_at_that_cwnd():
    """hstcp_ssthresh: ssthresh = cwnd - cwnd * b(w) / 256 with the row hstcp_cong_avoid last
    chose. The row moves only in congestion avoidance, so the loss that ends the first slow start
    uses row 0, b = 128/256 (a halving, e.g. 336 -> 168). At 20 ms and 1 BDP (83 packets) later
    losses come at about 2 BDP, in the band (118, 221] where b = 104/256: 169 -> 169 - 68 = 101
    (0.60, where Reno would give 0.5). The row is taken for the cwnd at the loss or one packet
    less (the ACK that made cwnd cross a band's edge chose the row before it grew)."""
    entries = traced_run("highspeed", "20ms").loss_entries()
    print(f"highspeed (cwnd before, ssthresh): {entries}")
    assert len(entries) >= 3
    (cwnd0, ssthresh0), later = entries[0], entries[1:]
    assert ssthresh0 == _hstcp_ssthresh(cwnd0, 0)
    check_entries(
        entries, lambda c, s: s in {_hstcp_ssthresh(c, _hstcp_row(c)), _hstcp_ssthresh(c, _hstcp_row(c - 1))}, start=1
    )
    assert any(_hstcp_row(c) == 2 and s < c * 0.62 and s > c * 0.58 for c, s in later)


def test_bic_backs_off_to_819_of_1024_above_the_low_window():
    """bictcp_recalc_ssthresh: above low_window (14 packets) ssthresh = cwnd * 819 / 1024 (e.g.
    336 -> 268), at or below it Reno's halving; at 20 ms, 1 BDP every loss comes far above 14."""
    entries = traced_run("bic", "20ms").loss_entries()
    print(f"bic (cwnd before, ssthresh): {entries}")
    assert len(entries) >= 3
    check_entries(entries, lambda c, s: s == (max(c >> 1, 2) if c <= 14 else max(c * 819 // 1024, 2)))


def _htcp_betas(cwnd: int, ssthresh: int) -> range:
    """The betas (<< 7) for which (cwnd * beta) >> 7 == ssthresh."""
    lo = -(-ssthresh * 128 // cwnd)
    hi = ((ssthresh + 1) * 128 - 1) // cwnd
    return range(lo, hi + 1)


def test_htcp_halves_first_then_backs_off_by_min_rtt_over_max_rtt():
    """htcp_beta_update: the first congestion event sets beta = BETA_MIN = 64/128 (modeswitch
    starts off); later ones, with the throughput steady (within a fifth between events),
    beta = minRTT / maxRTT clamped to [64, 102] / 128. A 30 ms path with a 1/4 BDP buffer
    (31 packets, 7.5 ms): RTT samples in jiffies (HZ 250, rounded up) give minRTT = 8 (30.0x ms)
    and maxRTT = 10 (up to 37.6 ms), so 8 * 128 / 10 = 102 = BETA_MAX (0.8). Every event's
    ratio lies in [0.5, 0.8], and once adapted the backoff is above 0.7 (maxRTT up to 11
    jiffies, 44 ms, would still give 93). With a 1 BDP buffer maxRTT would be about twice
    minRTT and beta stay near 0.5; a path of whole jiffies (20 ms) puts minRTT on a rounding
    edge (RTT samples fall on both sides of 20.0 ms), hence 30 ms."""
    entries = traced_run("htcp", "30ms", buffer="0.25bdp", duration="10s", faithful=True).loss_entries()
    print(f"htcp (cwnd before, ssthresh, betas << 7): {[(c, s, list(_htcp_betas(c, s))) for c, s in entries]}")
    assert len(entries) >= 3
    cwnd0, ssthresh0 = entries[0]
    assert ssthresh0 == (cwnd0 * 64) >> 7
    check_entries(entries, lambda c, s: bool(set(_htcp_betas(c, s)) & set(range(64, 103))))
    assert any(max(_htcp_betas(c, s)) > 0.7 * 128 for c, s in entries[1:])


def test_westwood_leaves_recovery_at_bandwidth_times_min_rtt():
    """tcp_westwood_event, CA_EVENT_COMPLETE_CWR: at the end of each recovery cwnd = ssthresh =
    bw_est * rtt_min / mss, bw_est in bytes per jiffy and rtt_min in whole jiffies (RTT samples
    rounded up). 50 Mbit/s of 1500-byte packets delivers 50e6 / 8 * 1448 / 1500 = 6.03e6
    payload bytes/s; a 30 ms path (min RTT 30.0-30.3 ms, 7.5-7.6 jiffies at HZ 250, kept as 8)
    gives 6.03e6 * 8 / 250 / 1448 = 133 packets. The buffer is 1/2 BDP (62 packets), so losses
    come near 1.5 BDP, 187 packets, where Reno would leave recovery at half, 93. The estimate
    is a twice-filtered average that lags slow start, so only the recoveries after 4 s count."""
    hz = _kernel_hz()
    tr = traced_run("westwood", "30ms", buffer="0.5bdp", duration="10s", faithful=True)
    exits = [(t, c, s) for t, c, s in tr.recovery_exits() if t > 4.0]
    rtt_min_jiffies = -(-30 * hz // 1000)  # 30.0x ms rounded up to whole jiffies
    if (30 * hz) % 1000 == 0:
        rtt_min_jiffies += 1  # a path of whole jiffies: its RTTs are just above
    expected = 50e6 / 8 * 1448 / 1500 / hz * rtt_min_jiffies / MSS
    entries = tr.loss_entries()
    print(f"westwood: exits after 4 s (t, cwnd, ssthresh) {exits}; expected {expected:.1f}; entries {entries}")
    assert exits  # a loss cycle takes 2-2.5 s here: usually two
    for _, cwnd, ssthresh in exits:
        assert cwnd == ssthresh
        assert 0.85 * expected <= cwnd <= 1.1 * expected, (cwnd, expected)
    # entering recovery is Reno's halving (tcp_reno_ssthresh)
    check_entries(entries, lambda c, s: s == max(c >> 1, 2))


def test_hybla_slow_start_adds_2_to_the_rho_minus_1_per_ack():
    """hybla_init / hybla_cong_avoid with rtt0 = 25 ms: rho << 3 = srtt_us(<< 3) / 25000; a
    50 ms path (min smoothed RTT 50.0-53.1 ms) gives rho << 3 = 16, rho = 2 and no fraction,
    so the connection starts from cwnd = rho = 2 and in slow start every ACK adds
    2^rho - 1 = 3 packets, however many it acknowledges (Reno adds the packets acknowledged)."""
    probes = traced_run("hybla", "50ms", duration="6s").probes()
    min_srtt_us = min(p.srtt_us for p in probes)
    rho_3ls = max(min_srtt_us * 8 // 25000, 8)
    assert rho_3ls == 16, min_srtt_us
    slow_start = [p for p in probes if p.ssthresh == INFINITE_SSTHRESH]
    steps = [b.cwnd - a.cwnd for a, b in zip(slow_start, slow_start[1:])]
    print(f"hybla: min srtt {min_srtt_us} µs, first cwnd {probes[0].cwnd}, {len(steps)} slow-start steps")
    assert probes[0].cwnd == 2
    assert len(steps) > 100
    # an ACK that finds the sender not cwnd-limited adds nothing
    assert steps.count(3) >= 0.9 * len(steps) and set(steps) <= {0, 3}
