"""Access links with a rate on the kernel backend: real Linux CUBIC through ccbench-link's
per-host access links (crates/link/src/access.rs), in front of a faster bottleneck, against
theory and against the simulator's same scenario. Needs root, TUN, iperf3, ping and a built
ccbench-link; skipped with the reason otherwise. Two 8 s kernel runs (more if the host
disturbs them) and the same scenarios in the simulator."""

from __future__ import annotations

import pytest

from ccbench.scenario.model import Scenario
from conftest import faithful_kernel_run, kernel_missing

pytestmark = pytest.mark.kernel

needs_kernel = pytest.mark.skipif(kernel_missing(ping=True) is not None, reason=kernel_missing(ping=True) or "")

#: A full segment is 1500 IP bytes carrying 1448 bytes of payload (20 IP + 20 TCP + 12 of the
#: timestamp option): goodput through a link of rate R is at most R × 1448 / 1500.
PAYLOAD_SHARE = 1448 / 1500


def one_flow(duration: str = "8s") -> Scenario:
    d = {
        "duration": duration,
        "seed": 1,
        "start_jitter": "0s",
        "bottleneck": {"rate": "50Mbit", "rtt": "40ms"},
        "access": {"rate": "20Mbit"},
        "flows": [{"cc": "cubic"}],
        "probe": {"ping": "100ms"},
    }
    return Scenario.from_dict(d, source="test_kernel_access_link")


@pytest.fixture(scope="module")
def one():
    if kernel_missing(ping=True):
        pytest.skip(kernel_missing(ping=True))
    from ccbench.backends import kernel, sim

    sc = one_flow()
    keep: dict = {}
    kres = faithful_kernel_run(lambda: kernel.run(sc, keep=keep))
    return sc, kres, keep["link"], sim.run(sc)


@needs_kernel
def test_one_cubic_flow_gets_the_access_rate_and_agrees_with_the_simulator(one):
    """20 Mbit/s of access in front of a 50 Mbit/s bottleneck: the access link is the path's
    narrowest, so the flow's goodput is bounded by its payload share, 20 × 1448/1500 = 19.31
    Mbit/s, and reaches most of it: the access buffer (1000 packets) is 15 times the BDP (20
    Mbit/s × 40 ms = 67 packets), so once slow start has filled the pipe (a few RTTs of the 8 s)
    the link never idles. Utilisation over 90 % of the run is a loose bound on that. The
    simulator runs the same links; the two CUBICs differ, the links do not: within 10 %."""
    _, kres, _, sres = one
    assert sres.ok, sres.error
    bound = 20e6 * PAYLOAD_SHARE
    k = float(kres.flows.goodput_bps.iloc[0])
    s = float(sres.flows.goodput_bps.iloc[0])
    print(f"goodput kernel {k / 1e6:.2f}, sim {s / 1e6:.2f}, bound {bound / 1e6:.2f} Mbit/s")
    for g in (k, s):
        assert 0.9 * bound <= g <= 1.005 * bound
    assert abs(k - s) <= 0.10 * s


@needs_kernel
def test_the_queue_builds_in_the_access_link_not_the_bottleneck(one):
    """The sender's uplink feeds the bottleneck one packet per 1500 × 8 / 20e6 = 0.6 ms, which
    it sends in 0.24 ms: a data packet never finds another waiting there. Only packets of no
    host skip the uplink's spacing (iperf3's control connection: its few packets of results at
    the end arrive together), so the bottleneck's largest backlog is a few packets and its
    queue, sampled every 100 ms, holds at most two. CUBIC's window beyond the BDP waits in the
    uplink instead: it holds hundreds of packets, and the ping, which shares the first host's
    uplink as in the simulator, waits behind them, far above the 40 ms base RTT, on both
    backends alike (within 25 %: the ping's wait follows the two CUBICs' windows, which differ
    more than their goodputs)."""
    _, kres, link, sres = one
    data = link["directions"][0]
    uplink = data["access"]["entry"]
    print(f"uplink max backlog {uplink['max_backlog_packets']} pkt, bottleneck {data['max_backlog_packets']} pkt")
    assert data["max_backlog_packets"] <= 8 and max(data["queue_samples"]["bytes"]) <= 2 * 1500
    assert uplink["max_backlog_packets"] >= 200 and uplink["dropped"] == 0
    # the receiver's downlink carries the same rate: no queue there either
    assert data["access"]["exit"]["max_backlog_packets"] <= 3
    kp = float(kres.runs.probe_rtt_p50_ms.iloc[0])
    sp = float(sres.runs.probe_rtt_p50_ms.iloc[0])
    print(f"ping p50 kernel {kp:.1f} ms, sim {sp:.1f} ms")
    assert kp > 40 + 100 and sp > 40 + 100
    assert abs(kp - sp) <= 0.25 * sp


def two_flows(duration: str = "8s") -> Scenario:
    d = {
        "duration": duration,
        "seed": 1,
        "start_jitter": "0s",
        "bottleneck": {"rate": "50Mbit", "rtt": "40ms"},
        "flows": [{"cc": "cubic", "access_rate": "10Mbit"}, {"cc": "cubic", "access_rate": "30Mbit", "start": "1ms"}],
    }
    return Scenario.from_dict(d, source="test_kernel_access_link")


@pytest.fixture(scope="module")
def two():
    if kernel_missing(ping=True):
        pytest.skip(kernel_missing(ping=True))
    from ccbench.backends import kernel, sim

    sc = two_flows()
    keep: dict = {}
    kres = faithful_kernel_run(lambda: kernel.run(sc, keep=keep))
    return sc, kres, keep["link"], sim.run(sc)


@needs_kernel
def test_two_flows_each_get_their_own_access_rate(two):
    """Flows behind 10 and 30 Mbit/s access links share a 50 Mbit/s bottleneck: 10 + 30 < 50,
    so neither meets the other in a queue and each is limited by its own link alone, to its
    payload share (9.65 and 28.96 Mbit/s), and reaches most of it, as the single flow above
    (the 1000-packet buffers are 15 and 5 BDPs). The bottleneck sends a packet in 0.24 ms:
    at most a packet of one flow waits behind one of the other, and the bottleneck's queue,
    sampled every 100 ms, never holds more than two packets."""
    _, kres, link, sres = two
    assert sres.ok, sres.error
    for rate, k, s in zip((10e6, 30e6), kres.flows.goodput_bps, sres.flows.goodput_bps):
        bound = rate * PAYLOAD_SHARE
        print(
            f"access {rate / 1e6:.0f} Mbit/s: goodput kernel {k / 1e6:.2f}, sim {s / 1e6:.2f}, bound {bound / 1e6:.2f}"
        )
        for g in (k, s):
            assert 0.9 * bound <= g <= 1.005 * bound
    data = link["directions"][0]
    assert data["access"]["host_rates_bps"] == [10_000_000, 30_000_000]
    assert max(data["queue_samples"]["bytes"]) <= 2 * 1500
