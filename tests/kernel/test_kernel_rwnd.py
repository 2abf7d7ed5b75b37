"""A flow's ``rwnd`` is the largest window its receiver offers, on both backends.

Linux offers a receive buffer's scaling-ratio part as window (tcp_win_from_space:
window_clamp = sk_rcvbuf × scaling_ratio / 256; the ratio is payload / skb truesize, 160/256 on
the kernel backend's receivers). An untouched host autotunes its buffer up to tcp_rmem's 6 MiB,
so its largest window is 3 932 160 bytes, the scenario default; a window-limited flow then keeps
at most 3 932 160 / 1448 = 2715 segments unacknowledged. The kernel backend sizes the buffer
for an rwnd the scenario sets (tcp_rmem max, or iperf3 -w, which Linux doubles), and the
simulator caps its receiver's window at it.

The link makes CUBIC window-limited: 100 Mbit/s, 50 ms and 8 BDP of drop-tail buffer hold
416 + 3333 packets, more than either window."""

from __future__ import annotations

import re

import pytest

from ccbench.scenario.model import DEFAULT_RWND_BYTES, LINUX_RMEM_MAX_BYTES, RCV_SCALING_RATIO_256, Scenario
from conftest import kernel_missing, tracing_missing

pytestmark = pytest.mark.kernel

MSS = 1448


def _scenario(duration: str, rwnd: str | None = None) -> Scenario:
    flow = {"cc": "cubic"} | ({"rwnd": rwnd} if rwnd else {})
    return Scenario.from_dict(
        {
            "duration": duration,
            "seed": 1,
            "bottleneck": {"rate": "100Mbit", "rtt": "50ms", "buffer": "8bdp"},
            "flows": [flow],
        },
        source="test",
    )


def _max_inflight(res) -> int:
    assert res.ok, res.error
    return int(res.series.inflight_pkts.max())


def _fills_window(inflight: int, cap: int) -> bool:
    """In flight near the window and not beyond it but for one packet. The kernel's count,
    packets_out - sacked - lost + retrans (tcp_packets_in_flight), has shown 691 against a
    1 MB window of 690 whole segments in two runs of four: a segment resent without being marked
    lost (a tail loss probe) counts twice, and a FIN's skb counts as a packet."""
    return 0.97 * cap <= inflight <= cap + 1


def test_default_rwnd_is_tcp_rmem_max_times_the_scaling_ratio():
    assert DEFAULT_RWND_BYTES == LINUX_RMEM_MAX_BYTES * RCV_SCALING_RATIO_256 // 256 == 3_932_160


@pytest.mark.skipif(tracing_missing() is not None, reason=tracing_missing() or "")
def test_untouched_receiver_offers_the_default_rwnd_and_no_more():
    from ccbench.backends import kernel, sim
    from ccbench.backends.kernel.tracefs import trace_events
    from ccbench.backends.kernel.traffic import BASE_PORT

    sc = _scenario("12s")
    with trace_events({"tcp/tcp_rcvbuf_grow": None}) as stop:
        res = kernel.run(sc)
        text = stop()
    events = [
        {k: int(v) for k, v in re.findall(r"\b(scaling_ratio|rcvbuf|window_clamp)=(\d+)", line)}
        for line in text.splitlines()
        if "tcp_rcvbuf_grow:" in line and f"sport={BASE_PORT} " in line
    ]
    assert events, "no tcp_rcvbuf_grow event of the data connection's receiver"
    # The receiver's ratio is the one the default is derived from, its buffer stops at
    # tcp_rmem's 6 MiB, and its window at 6 MiB x 160/256.
    assert {e["scaling_ratio"] for e in events} == {RCV_SCALING_RATIO_256}
    assert max(e["rcvbuf"] for e in events) == LINUX_RMEM_MAX_BYTES
    assert max(e["window_clamp"] for e in events) == DEFAULT_RWND_BYTES
    # The sender fills that window and no more, on the kernel and in the simulator.
    cap = DEFAULT_RWND_BYTES // MSS
    k, s = _max_inflight(res), _max_inflight(sim.run(sc))
    print(f"largest in flight: kernel {k}, simulator {s}, window {cap} segments")
    assert _fills_window(k, cap) and _fills_window(s, cap)


@pytest.mark.skipif(kernel_missing(ping=False) is not None, reason=kernel_missing(ping=False) or "")
def test_a_set_rwnd_is_the_largest_window_on_both_backends():
    """For 1 MB the kernel backend asks SO_RCVBUF for 1e6 × 256/320 = 800 000 bytes (iperf3 -w)
    where net.core.rmem_max allows it, and Linux doubles that to 1.6 MB, whose window at 160/256
    is 1 MB: 690 segments (-w 1MB would give 863). Otherwise the receiver autotunes up to a
    tcp_rmem max of 1.6 MB, with the same window."""
    from ccbench.backends import kernel, sim

    sc = _scenario("8s", "1MB")
    cap = 1_000_000 // MSS
    k, s = _max_inflight(kernel.run(sc)), _max_inflight(sim.run(sc))
    print(f"largest in flight: kernel {k}, simulator {s}, window {cap} segments")
    assert _fills_window(k, cap) and _fills_window(s, cap)
