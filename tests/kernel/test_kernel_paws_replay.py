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
from conftest import FAITHFUL_LATE_P99_US, QUIET_HOST_STEAL_PCT, ROOT, kernel_missing

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
    # The receiver's ACK timing decides which segment may move ts_recent (below), so the
    # comparison needs a capture the host did not disturb (a loaded host once gave the kernel
    # 88 discards against the replay's 57), and enough discards not to be vacuous (a busy host
    # has left as few as 15 in 8 s). Up to three captures are taken; the first that has both is
    # compared, and if none has, the test is skipped, naming what each capture showed.
    seen = []
    for _ in range(3):
        row, kernel, acks, sim, n_arrivals = _capture_and_replay(sc, capture_run, receiver_arrivals)
        quiet = row.host_steal_pct < QUIET_HOST_STEAL_PCT and row.emulator_late_p99_us <= FAITHFUL_LATE_P99_US
        seen.append(
            f"{kernel} discards, emulator p99 lateness {row.emulator_late_p99_us:.0f} µs, "
            f"{row.host_steal_pct:.1f} % stolen"
        )
        if quiet and kernel >= 20:
            break
    else:
        pytest.skip(f"no capture was both undisturbed and rich enough to compare: {'; '.join(seen)}")
    print(
        f"{n_arrivals} arrivals; PAWSEstab: kernel {kernel}, simulator's receiver "
        f"{sim['TcpExtPAWSEstab']}; ACKs: kernel {acks}, simulator's receiver {sim['TcpOutSegs']}"
    )
    # BBR at ±4 ms usually discards a hundred or more per 8 s run (benchmarks/fidelity/RESULTS.md)
    # and sometimes only 40-50; the guard of 20 only keeps the comparison from being vacuous
    # (validate calls a counter non-trivial from 10). Which segment
    # may move ts_recent depends on when the receiver last ACKed (rcv_wup), so the receivers'
    # ACK timing shows in the count: in 11 runs the simulator's receiver discarded 0-18 % more
    # than the kernel's, never fewer (its ACKs agree with the kernel's on 93 % of arrivals). The
    # bound is validate's for counters (25 %, validate/compare.py COUNTER_TARGET). A receiver
    # that lets a duplicate below rcv_wup move ts_recent (tcp_replace_ts_recent does not) gives
    # 24 against the kernel's 294 on the replay of the 15 s capture above.
    assert abs(sim["TcpExtPAWSEstab"] - kernel) <= 0.25 * kernel
    # ACKs: 1.4-3.8 % more than the kernel's in the same runs
    assert abs(sim["TcpOutSegs"] - acks) <= 0.10 * acks


def _capture_and_replay(sc, capture_run, receiver_arrivals):
    """One kernel run captured at the receiver, replayed into the simulator's receiver: the
    run's row (host steal, emulator lateness), the kernel's PAWSEstab and TcpOutSegs, the
    replayed receiver's counters, and the number of arrivals."""
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
    return res.runs.iloc[0], int(rcv.TcpExtPAWSEstab), int(rcv.TcpOutSegs), sim, len(arrivals)
