"""The simulator's receiver against Linux's on the same packets: a kernel-backend run under
reordering is captured on the receiving TUN (benchmarks/kernel_capture/kernel_pkt_capture.py), and its data
segments — same order, times and TSvals — are fed to the simulator's receiver
(crates/sim/examples/replay_receiver.rs). Linux's PAWS discards under reordering depend on
ts_recent, which only a segment at or before rcv_wup may move (tcp_replace_ts_recent), so the
count checks the receiver's timestamp, sequence and ACK bookkeeping together.

Measured, BBR at ±4 ms, 15 s: kernel 294 PAWSEstab, 39 045
ACKs (TcpOutSegs), 51 599 segments queued out of order; the simulator's receiver on the same
arrivals 306, 39 421 and 52 330. Its ACK-or-not decision after each arrival matched the kernel's
on 93 % of the 61 000 arrivals. The replay needs every data segment the kernel received: a
capture that loses one leaves the replayed receiver waiting for it for the rest of the run."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ccbench.scenario.model import Scenario
from conftest import ROOT, kernel_missing

sys.path.insert(0, str(ROOT / "benchmarks" / "kernel_capture"))

pytestmark = pytest.mark.kernel


@pytest.mark.skipif(kernel_missing(ping=False) is not None, reason=kernel_missing(ping=False) or "")
def test_simulator_receiver_discards_what_linux_discards():
    from kernel_pkt_capture import capture_run, receiver_arrivals

    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "ccbench-sim", "--example", "replay_receiver"], cwd=ROOT, check=True
    )
    sc = Scenario.from_dict(
        {
            "duration": "8s",
            "seed": 1,
            "bottleneck": {
                "rate": "50Mbit",
                "rtt": "50ms",
                "buffer": "1bdp",
                "jitter": "4ms",
                "jitter_dist": "uniform",
                "reorder": True,
            },
            "flows": [{"cc": "bbr"}],
        },
        source="test",
    )
    # The guard below keeps the comparison from being vacuous. A busy host can leave the kernel
    # with as few as 15 discards in 8 s (the simulator's receiver, replaying them, also 15), so a
    # capture with too few is taken again, up to three times, and the first with enough is compared.
    seen = []
    for _ in range(3):
        kernel, acks, sim, n_arrivals = _capture_and_replay(sc, capture_run, receiver_arrivals)
        seen.append(kernel)
        if kernel >= 20:
            break
    print(
        f"{n_arrivals} arrivals; PAWSEstab: kernel {kernel}, simulator's receiver "
        f"{sim['TcpExtPAWSEstab']}; ACKs: kernel {acks}, simulator's receiver {sim['TcpOutSegs']}"
    )
    # BBR at ±4 ms usually discards a hundred or more per 8 s run (benchmarks/fidelity/RESULTS.md),
    # once only 43 (on CI; the simulator's receiver 51); the guard only keeps the comparison
    # from being vacuous, at 20 (validate calls a counter non-trivial from 10). Which segment
    # may move ts_recent depends on when the receiver last ACKed (rcv_wup), so the receivers'
    # ACK timing shows in the count: in 11 runs the simulator's receiver discarded 0-18 % more
    # than the kernel's, never fewer (its ACKs agree with the kernel's on 93 % of arrivals). The
    # bound is validate's for counters (25 %, validate/compare.py COUNTER_TARGET). A receiver
    # that lets a duplicate below rcv_wup move ts_recent (tcp_replace_ts_recent does not) gives
    # 24 against the kernel's 294 on the replay of the 15 s capture above.
    assert kernel >= 20, f"the kernel discarded too few to compare in each of {len(seen)} captures: {seen}"
    assert abs(sim["TcpExtPAWSEstab"] - kernel) <= 0.25 * kernel
    # ACKs: 1.4-3.8 % more than the kernel's in the same runs
    assert abs(sim["TcpOutSegs"] - acks) <= 0.10 * acks


def _capture_and_replay(sc, capture_run, receiver_arrivals):
    """One kernel run captured at the receiver, replayed into the simulator's receiver: the
    kernel's PAWSEstab and TcpOutSegs, the replayed receiver's counters, and the arrivals."""
    res, records = capture_run(sc)
    assert res.ok, res.error
    arrivals, acked = receiver_arrivals(records)
    assert len(arrivals) > 20_000
    segs = {s for _, s, _ in arrivals}
    lost = [s for s in range(acked) if s not in segs]
    assert not lost, (
        f"the capture lost {len(lost)} of the data segments the kernel's receiver "
        f"acknowledged (e.g. {lost[:5]} of {acked}); the replay needs them all"
    )
    out = subprocess.run(
        [str(ROOT / "target/release/examples/replay_receiver")],
        check=True,
        input="".join(f"{t} {s} {ts}\n" for t, s, ts in arrivals),
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    sim = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    rcv = res.counters.set_index("side").loc["receiver"]
    return int(rcv.TcpExtPAWSEstab), int(rcv.TcpOutSegs), sim, len(arrivals)
