"""The kernel backend's link impairs only what the simulator's link carries: the measured
connections' data segments and ACKs (and the ping probe), not iperf3's control connection, the
handshakes, the 37-byte cookie or IPv6 (crates/link/src/measured.rs).

Why it matters, from a packet capture on both TUN devices
(benchmarks/kernel_capture/kernel_pkt_capture.py): a run sends about 13 setup packets before its
first data segment. Were they impaired, they would draw from the loss stream, so the kernel's
n-th data segment would meet draw n + 13...15 while the simulator's meets draw n, and at 5 % loss
the draw that falls on the cookie of seed 1 would cost that run a tail loss probe and half its
cwnd before any data flowed. With only data and ACKs impaired, the kernel's lost data segments of
that run are the stream's draws 11, 28, 31, 46, 48, 68 (1-based), as in the simulator."""

from __future__ import annotations

import sys

import pytest

from ccbench.scenario.model import Scenario
from conftest import ROOT, kernel_missing

sys.path.insert(0, str(ROOT / "benchmarks" / "kernel_capture"))

pytestmark = pytest.mark.kernel


@pytest.mark.skipif(kernel_missing(ping=False) is not None, reason=kernel_missing(ping=False) or "")
def test_heavy_loss_falls_on_data_segments_only():
    from kernel_pkt_capture import capture_run, parse_tcp

    from ccbench.backends.kernel.traffic import BASE_CPORT

    sc = Scenario.from_dict(
        {
            "duration": "5s",
            "seed": 3,
            "flows": [{"cc": "reno"}],
            "bottleneck": {"rate": "20Mbit", "rtt": "40ms", "loss": "20%", "buffer": "1bdp"},
        },
        source="test",
    )
    res, records = capture_run(sc)
    assert res.ok, res.error
    recs = sorted(records, key=lambda r: r[0])
    key = lambda d: bytes(d[9:10]) + bytes(d[12:])  # noqa: E731 (what the link leaves alone)
    arrived = {key(d) for _, side, out, d in recs if side == "r" and not out}
    sent = [(t, d) for t, side, out, d in recs if side == "s" and out]

    def is_data(d) -> bool:
        p = parse_tcp(d)
        return p is not None and p[0] == BASE_CPORT and p[5] >= 512

    # the link stops at the end of the run while iperf3 still tears down: look only at what was
    # sent up to the last data segment the link delivered
    last_forwarded = max(t for t, d in sent if is_data(d) and key(d) in arrived)
    window = [(t, d) for t, d in sent if t <= last_forwarded]
    data = [d for _, d in window if is_data(d)]
    setup = [d for _, d in window if not is_data(d)]
    lost_data = sum(key(d) not in arrived for d in data)
    lost_setup = [parse_tcp(d) for d in setup if key(d) not in arrived]
    print(f"{len(data)} data segments, {lost_data} lost; {len(setup)} other packets, {len(lost_setup)} lost")
    # the control connection, the handshake and the cookie cross: 20 % loss would lose about
    # one in five of them
    assert len(setup) >= 8
    assert lost_setup == []
    # ... while the data segments meet the scenario's loss (binomial, n in the hundreds)
    assert len(data) >= 200
    assert 0.12 <= lost_data / len(data) <= 0.28
