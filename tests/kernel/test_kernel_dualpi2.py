"""DualPI2 on the kernel backend: a real CUBIC flow (Linux's TCP, no ECN: classic traffic)
through ccbench-link serving ``aqm = "dualpi2"`` (crates/queue/src/dualpi2.rs, the same code as
the simulator's). Needs root, TUN, iperf3, ping and a built ccbench-link; skipped with the reason
otherwise. One 15 s run (up to three when the host disturbs the emulator's timing)."""

from __future__ import annotations

import pytest

from ccbench.scenario.model import Scenario
from conftest import faithful_kernel_run, kernel_missing

pytestmark = pytest.mark.kernel


def _missing() -> str | None:
    return kernel_missing(ping=True)


needs_kernel = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")

RATE_BPS = 20e6
TARGET_MS = 15.0
#: The classic queue's mean delay under one CUBIC flow (see the test): 15 − 0.075 × (20 + 15).
PREDICTED_MS = TARGET_MS - 0.075 * (20 + TARGET_MS)
#: PI2's integral term needs a few seconds to find CUBIC's probability (0.16 Hz of gain); the
#: delays are judged after this.
SETTLED_S = 5.0


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "duration": "15s",
            "seed": 1,
            "start_jitter": "0s",
            "sample_interval": "10ms",
            "bottleneck": {"rate": "20Mbit", "rtt": "20ms", "buffer": "16bdp", "aqm": "dualpi2"},
            "flows": [{"cc": "cubic"}],
            "probe": {"ping": "20ms"},
        },
        source="test_kernel_dualpi2",
    )


@needs_kernel
def test_dualpi2_holds_a_real_cubic_flow_near_the_15ms_target():
    """CUBIC without ECN sends Not-ECT packets: DualPI2 classifies them (and the Not-ECT ping)
    into its classic queue, where PI2 drops with p'² once the head sojourn has been above the
    15 ms target. CUBIC's window then peaks at W_max = C·(R + 15 ms) and, over its concave
    epoch W(t) = W_max − 0.3·W_max·(1 − t/K)³, averages 0.925·W_max, so the queue averages
    0.925·(R + 15 ms) − R = 15 − 0.075·35 = 12.4 ms (at 20 ms the base RTT R; below the target
    because p' is clamped at 0 while the queue is short after each cut). The simulator's test of
    the same law (crates/sim/tests/l4s.rs) allows ±3 ms; here ±4 ms, the extra millisecond for
    the emulator's and the hosts' timing on a quiet host. Both the mean standing queue
    (queue_bytes × 8 / rate) and the ping's extra delay over the base RTT (it waits in the same
    queue) are judged; drop-tail's 16 BDP of buffer would give 320 ms."""
    from ccbench.backends import kernel

    sc = scenario()
    res = faithful_kernel_run(lambda: kernel.run(sc))
    r = res.runs.iloc[0]
    fwd = next(link for link in res.links if link["name"] == "bottleneck/fwd")
    ls = res.link_series
    q_ms = (ls[ls["t_s"] >= SETTLED_S]["queue_bytes"] * 8 / RATE_BPS * 1e3).mean()
    base_ms = sc.base_rtt_s * 1e3
    ping_extra_ms = r.probe_rtt_p50_ms - base_ms
    print(
        f"dualpi2 kernel: mean queue after {SETTLED_S:g} s {q_ms:.1f} ms, probe p50 {r.probe_rtt_p50_ms:.1f} ms "
        f"(base {base_ms:.0f}), utilisation {r.link_utilisation:.3f}, drops {fwd['dropped_queue']}, "
        f"ce {fwd['ce_marked']}"
    )
    assert fwd["dropped_queue"] > 0, "PI2 drops Not-ECT classic packets"
    assert fwd["ce_marked"] == 0, "nothing is ECN-capable"
    assert abs(q_ms - PREDICTED_MS) <= 4.0
    assert abs(ping_extra_ms - PREDICTED_MS) <= 4.0
    assert r.link_utilisation >= 0.85
