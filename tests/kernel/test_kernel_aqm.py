"""Queue disciplines and ECN on the kernel backend: the real Linux TCP stack through
ccbench-link's AQM arm. Needs root, TUN, iperf3, ping and a built ccbench-link; skipped with the
reason otherwise. Addresses are the backend's own (198.18.0.1/2, benchmarking range
198.18.0.0/15), in namespaces the runs create and remove. Three short runs (≤ 8 s each) and one
2 s UDP exchange: about 40 s in all."""

from __future__ import annotations

import os
import socket
import time

import pytest

from ccbench.backends.kernel import env
from ccbench.scenario.model import Scenario
from conftest import kernel_missing

pytestmark = pytest.mark.kernel


def _missing() -> str | None:
    return kernel_missing(ping=True)


needs_kernel = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")

RATE = "20Mbit"
RTT = "20ms"


def scenario(bottleneck: dict, flows: list[dict], duration: str = "8s", **kw) -> Scenario:
    d = {
        "duration": duration,
        "seed": 1,
        "start_jitter": "0s",
        "bottleneck": {"rate": RATE, "rtt": RTT, **bottleneck},
        "flows": flows,
        **kw,
    }
    return Scenario.from_dict(d, source="test_kernel_aqm")


def _our_namespaces() -> list[str]:
    from pyroute2 import netns

    return [n for n in netns.listnetns() if n.startswith(f"{env.PREFIX}{os.getpid()}x")]


def _link(res, name: str) -> dict:
    return next(link for link in res.links if link["name"] == name)


def _mib_delta(keep: dict, side: str, name: str) -> int | None:
    b, a = (keep["mib"].get(k) or {} for k in ("before", "after"))
    b, a = b.get(side) or {}, a.get(side) or {}
    return a[name] - b[name] if name in a and name in b else None


# ---- (a) FQ-CoDel isolates the probe from 4 bulk CUBIC flows ------------------------------------


@pytest.fixture(scope="module")
def isolation_runs():
    if _missing():
        pytest.skip(_missing())
    from ccbench.backends import kernel

    flows = [{"cc": "cubic", "count": 4}]
    probe = {"ping": "20ms"}
    out = {}
    for name, b in (("fq_codel", {"aqm": "fq_codel", "buffer": "16bdp"}), ("droptail", {"buffer": "16bdp"})):
        sc = scenario(b, flows, probe=probe)
        keep: dict = {}
        out[name] = (sc, kernel.run(sc, keep=keep), keep)
    assert _our_namespaces() == [], "a run left its namespaces behind"
    return out


@needs_kernel
def test_fq_codel_keeps_the_probe_near_the_base_rtt_under_4_cubic_flows(isolation_runs):
    """20 Mbit/s, 20 ms, 4 bulk CUBIC flows and a ping every 20 ms. Under FQ-CoDel the ping is a
    sparse flow: each echo finds its bucket empty, goes on the new-flows list and is sent before
    any bulk packet (RFC 8290 §4.1), so it waits only for the packet already on the wire
    (1500 B at 20 Mbit/s = 0.6 ms) in each direction. Bound: p50 ≤ base + 3 ms and p95 ≤ base +
    10 ms; the slack over 1.2 ms is for the shared CPU (ping and emulator
    wake-ups). The bulk flows' own RTT is CoDel's: their queue sojourn is held near the 5 ms
    target, not the buffer's 320 ms."""
    sc, res, keep = isolation_runs["fq_codel"]
    assert res.ok, res.error
    base_ms = sc.base_rtt_s * 1e3
    r = res.runs.iloc[0]
    fwd = _link(res, "bottleneck/fwd")
    print(
        f"fq_codel: probe p50 {r.probe_rtt_p50_ms:.2f} p95 {r.probe_rtt_p95_ms:.2f} ms (base {base_ms:.0f}); "
        f"utilisation {r.link_utilisation:.3f}; drops {fwd['dropped_queue']} ce {fwd['ce_marked']}; "
        f"flow rtt p50 {res.flows.rtt_p50_ms.tolist()}"
    )
    assert keep["link"]["directions"][0]["aqm"] == "fq_codel"
    # the bottleneck was loaded: the isolation is under a full link, and CoDel acted on it
    assert r.link_utilisation >= 0.85
    assert fwd["dropped_queue"] > 0, "4 CUBIC flows (no ECN) must meet CoDel drops"
    assert r.probe_rtt_p50_ms <= base_ms + 3
    assert r.probe_rtt_p95_ms <= base_ms + 10
    # the bulk flows' median RTT: base + CoDel's standing queue (target 5 ms; the flows sit
    # within a few ms of it), far from the 16-BDP buffer's 320 ms
    assert res.flows.rtt_p50_ms.max() <= base_ms + 25


@needs_kernel
def test_droptail_with_a_large_buffer_puts_the_probe_behind_the_queue(isolation_runs):
    """The same load through a 16-BDP drop-tail FIFO (320 ms of buffer): the ping waits behind
    the whole standing queue the CUBIC flows build. They grow until the buffer overflows (slow
    start, then CUBIC's growth: a few seconds), and after each overflow CUBIC's multiplicative
    decrease (β = 0.7) leaves about 0.7 × 17 − 1 ≈ 11 BDP queued, ≈ 220 ms. So the median probe
    RTT, taken over a run whose first overflow is well inside its first half, is at least 5 ×
    the base RTT (≥ 80 ms of queue, a generous margin under 220 ms), and several times what
    FQ-CoDel gives the probe."""
    sc, res, _ = isolation_runs["droptail"]
    assert res.ok, res.error
    base_ms = sc.base_rtt_s * 1e3
    r = res.runs.iloc[0]
    rf = isolation_runs["fq_codel"][1].runs.iloc[0]
    print(
        f"droptail 16bdp: probe p50 {r.probe_rtt_p50_ms:.1f} p95 {r.probe_rtt_p95_ms:.1f} ms (base {base_ms:.0f}); "
        f"utilisation {r.link_utilisation:.3f}"
    )
    assert r.link_utilisation >= 0.85
    assert r.probe_rtt_p50_ms >= 5 * base_ms
    assert r.probe_rtt_p50_ms >= 4 * rf.probe_rtt_p50_ms


# ---- (b) ECN: CoDel marks, the kernel reacts, nothing is dropped ---------------------------------


@pytest.fixture(scope="module")
def ecn_run():
    if _missing():
        pytest.skip(_missing())
    from ccbench.backends import kernel

    sc = scenario(
        {"aqm": "codel", "aqm_params": {"ecn": True}, "buffer": "16bdp"}, [{"cc": "cubic", "ecn": True}], duration="6s"
    )
    keep: dict = {}
    res = kernel.run(sc, keep=keep)
    assert _our_namespaces() == []
    return sc, res, keep


@needs_kernel
def test_cubic_with_ecn_through_codel_is_marked_not_dropped(ecn_run):
    """One CUBIC flow with net.ipv4.tcp_ecn = 1 in both namespaces: the SYN negotiates ECN, data
    leaves as ECT(0) (RFC 3168 §6.1.1; pure ACKs and retransmissions are Not-ECT), CoDel with
    `ecn` marks CE where it would drop (Linux codel_should_drop → INET_ECN_set_ce), the
    receiver echoes ECE and the sender reduces its window (tcp_enter_cwr). So: CE marks > 0,
    no queue drops (the only drop left is CoDel's 1000-packet limit, 600 ms of queue, which a
    flow that answers marks never reaches), and the kernel's own counters agree: the receiver's
    IP layer saw ECT(0) and CE packets (IpExtInECT0Pkts, IpExtInCEPkts, at most what the link
    marked) and the sender counted deliveries acknowledged with ECE (TcpExtTCPDeliveredCE)."""
    sc, res, keep = ecn_run
    assert res.ok, res.error
    fwd = _link(res, "bottleneck/fwd")
    rev = _link(res, "bottleneck/rev")
    f = res.flows.iloc[0]
    in_ce = _mib_delta(keep, "receiver", "IpExtInCEPkts")
    in_ect0 = _mib_delta(keep, "receiver", "IpExtInECT0Pkts")
    delivered_ce = _mib_delta(keep, "sender", "TcpExtTCPDeliveredCE")
    print(
        f"ecn: ce {fwd['ce_marked']} drops {fwd['dropped_queue']} lost {fwd['dropped_loss']}; goodput "
        f"{f.goodput_bps / 1e6:.1f} Mbit/s retrans {f.retransmits}; InCEPkts {in_ce} InECT0Pkts {in_ect0} "
        f"TCPDeliveredCE {delivered_ce}"
    )
    assert fwd["ce_marked"] > 0
    assert fwd["dropped_queue"] == 0
    assert rev["ce_marked"] == 0, "ACKs are Not-ECT (RFC 3168 §6.1.4): never marked"
    assert f.goodput_bps >= 0.8 * sc.bottleneck.rate_bps
    if in_ce is not None:  # the receiver's kernel saw the marks the link set (and no others)
        assert 0 < in_ce <= fwd["ce_marked"]
        assert in_ect0 > in_ce, "data arrives as ECT(0); CE only on what CoDel marked"
    if delivered_ce is not None:  # the sender saw the echo (ECE) for delivered data
        assert delivered_ce > 0
    # the runs table and the counters table carry the same numbers (one schema on both backends)
    runs = res.runs.iloc[0]
    assert runs["ce_marked"] == fwd["ce_marked"] + rev["ce_marked"]
    rcv = res.counters.set_index("side").loc["receiver"]
    assert rcv["IpExtInCEPkts"] == in_ce or in_ce is None


# ---- the CE rewrite on the wire: IPv4 checksum valid for the receiving kernel ---------------------


@needs_kernel
def test_ce_rewrite_keeps_the_ipv4_checksum_valid_end_to_end():
    """UDP datagrams sent as ECT(0) at twice the link rate through CoDel with ecn: the standing
    queue makes CoDel mark. Every marked datagram is received with ECN = CE (IP_RECVTOS), which
    the receiving kernel accepts only with a valid header checksum (ip_rcv_core drops a bad one
    and counts IpInHdrErrors / IpInCsumErrors: both stay 0); Not-marked ones arrive as ECT(0)."""
    from ccbench.backends.kernel.mib import read_mib
    from ccbench.backends.kernel.nsutil import netns_socket
    from ccbench.backends.kernel.topology import RECEIVER_ADDR, Topology

    cfg = scenario(
        {"rate": "10Mbit", "aqm": "codel", "aqm_params": {"ecn": True}}, [{"cc": "cubic"}], duration="3s"
    ).sim_config()
    IP_RECVTOS = 13
    with Topology(cfg) as t:
        before = read_mib(t.ns_r)
        rx = netns_socket(t.ns_r, socket.AF_INET, socket.SOCK_DGRAM)
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        rx.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
        rx.bind((RECEIVER_ADDR, 9002))
        rx.setblocking(False)
        tx = netns_socket(t.ns_s, socket.AF_INET, socket.SOCK_DGRAM)
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0b10)  # ECT(0)
        tx.connect((RECEIVER_ADDR, 9002))
        payload = bytes(range(256)) * 5 + bytes(172)  # 1452 B: 1480 B IP packets
        got = {0b10: 0, 0b11: 0}
        other = 0

        def drain():
            nonlocal other
            while True:
                try:
                    data, anc, _, _ = rx.recvmsg(2048, 64)
                except BlockingIOError:
                    return
                assert data[8:] == payload[8:]
                tos = next((c[2][0] for c in anc if c[0] == socket.IPPROTO_IP and c[1] == socket.IP_TOS), None)
                if tos is not None and tos & 3 in got:
                    got[tos & 3] += 1
                else:
                    other += 1

        # 10 Mbit/s carries 845 such packets/s; send 1700/s for 1.5 s (queue grows ~0.5 s of
        # packets per second: far above CoDel's 5 ms target for far more than its 100 ms interval)
        t0 = time.monotonic()
        for i in range(2550):
            d = t0 + i / 1700 - time.monotonic()
            if d > 0:
                time.sleep(d)
            tx.send(i.to_bytes(8, "big") + payload[8:])
            if i % 50 == 0:
                drain()
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            drain()
            time.sleep(0.01)
        after = read_mib(t.ns_r)
        rx.close()
        tx.close()
        report = t.stop_link() or {}
    fwd = report["directions"][0]
    print(
        f"udp: received ECT(0) {got[0b10]} CE {got[0b11]} other {other}; link ce {fwd['ce_marked']} "
        f"drops {fwd['dropped']}"
    )
    assert got[0b11] > 0 and got[0b10] > 0 and other == 0
    assert got[0b11] <= fwd["ce_marked"]
    for n in ("IpInHdrErrors", "IpInCsumErrors"):
        if n in before and n in after:
            assert after[n] - before[n] == 0, n
    assert _our_namespaces() == []


# ---- refusals (no root needed) ------------------------------------------------------------------


def test_ecn_is_accepted_but_a_mix_of_on_and_off_is_refused():
    from ccbench.backends import kernel
    from ccbench.scenario.errors import ScenarioError

    def problems(flows):
        sc = scenario({"aqm": "codel"}, flows, duration="2s")
        try:
            kernel.check(sc)
        except ScenarioError as e:
            return [p for p in e.problems if (p[0] or "").startswith("flows.")]
        return []

    assert problems([{"cc": "cubic", "ecn": True}, {"cc": "cubic", "ecn": True}]) == []
    mix = problems([{"cc": "cubic", "ecn": True}, {"cc": "cubic"}])
    assert [p[0] for p in mix] == ["flows.1.ecn"]
    assert "on in flows.0 but off in flows.1" in mix[0][1] and "net.ipv4.tcp_ecn" in mix[0][1]
