"""The simulator's receiver against Linux's in slow start: the receive window opens from 64 KB,
and every segment that grows it is ACKed at once (tcp_grow_window sets a quick ACK), so a
Linux receiver ACKs nearly every segment until its window is fully open (crates/sim/src/tcp/
rcv_window.rs). The ratio of the receiver's ACKs (TcpOutSegs) to the data segments it received
(TcpInSegs) shows it: ACKing every second segment gives about 0.5, every segment 1.

Measured: kernel 0.570 and 0.582 (seeds 1 and 2), simulator 0.574; a receiver whose window is
open from the first segment sends 0.471."""

from __future__ import annotations

import pytest

from ccbench.scenario.model import Scenario
from conftest import faithful_kernel_run, kernel_missing, tracing_missing

pytestmark = pytest.mark.kernel


def _ack_ratio(backend, scenario) -> float:
    if backend.NAME == "kernel":
        res = faithful_kernel_run(lambda: backend.run(scenario))
    else:
        res = backend.run(scenario)
        assert res.ok, res.error
    rcv = res.counters.set_index("side").loc["receiver"]
    return rcv.TcpOutSegs / rcv.TcpInSegs


@pytest.mark.skipif(kernel_missing(ping=False) is not None, reason=kernel_missing(ping=False) or "")
def test_receiver_acks_per_segment_in_slow_start_match_the_kernel():
    from ccbench.backends import kernel, sim

    sc = Scenario.from_dict(
        {
            "duration": "3s",
            "seed": 1,
            "bottleneck": {"rate": "50Mbit", "rtt": "100ms", "buffer": "1bdp"},
            "flows": [{"cc": "cubic"}],
        },
        source="test",
    )
    k, s = _ack_ratio(kernel, sc), _ack_ratio(sim, sc)
    print(f"receiver ACKs per data segment: kernel {k:.3f}, simulator {s:.3f}")
    # both well above "every second segment" (the simulator's 0.471 before the window model) ...
    assert k > 0.53 and s > 0.53
    # ... and within 5 % of each other
    assert abs(s / k - 1) < 0.05


@pytest.mark.skipif(tracing_missing() is not None, reason=tracing_missing() or "")
def test_kernel_measure_counts_reads_less_what_is_queued():
    """The rule the simulator's autotuning follows (rcv_window.rs `on_read`), on the
    kernel this machine runs: each `tcp:tcp_rcvbuf_grow` event reports what was read since the
    last measure (copied) and what is still queued (inq), and the next event's measure (space) is
    copied - inq. Under 5 % loss holes release bursts, so inq is often large: counting the burst,
    as a model that ignores inq would, lets BBR's window run 3x ahead of the kernel's in STARTUP."""
    import re

    from ccbench.backends import kernel
    from ccbench.backends.kernel.tracefs import trace_events
    from ccbench.backends.kernel.traffic import BASE_PORT

    sc = Scenario.from_dict(
        {
            "duration": "3s",
            "seed": 3,
            "bottleneck": {"rate": "50Mbit", "rtt": "50ms", "buffer": "1bdp", "loss": "5%"},
            "flows": [{"cc": "bbr"}],
        },
        source="test",
    )
    with trace_events({"tcp/tcp_rcvbuf_grow": None}) as stop:
        res = kernel.run(sc)
        text = stop()
    assert res.ok, res.error
    ev = [
        {k: int(v) for k, v in re.findall(r"\b(copied|inq|space)=(\d+)", line)}
        for line in text.splitlines()
        if "tcp_rcvbuf_grow:" in line and f"sport={BASE_PORT} " in line
    ]
    print(ev)
    assert len(ev) >= 3
    assert any(e["inq"] > 0 for e in ev), "no measure found data still queued"
    for a, b in zip(ev, ev[1:]):
        # the event fires only when the measure grows, so the next one starts from copied - inq
        assert b["space"] == a["copied"] - a["inq"], (a, b)
