"""Per-ACK trace of the kernel sender against the simulator, for one cell of the fidelity grid
(the 5 % loss cells, docs/fidelity.md): runs one flow on the kernel backend while tracefs records the
`tcp:tcp_probe` event of its data connection (one line per incoming ACK, with snd_cwnd, snd_nxt,
snd_una), runs the same scenario and seed on the simulator with a 1 ms series, and prints the
time-weighted cwnd of each and their goodput. Both backends draw the same losses for the same
seed (common random numbers), so the two runs see the same loss sequence.

Reading the trace: tcp_probe's `ssthresh` is `tcp_current_ssthresh()` (outside a window reduction
at least 3/4 of cwnd), and snd_nxt - snd_una counts SACKed and lost segments too.

Needs root and tracefs (ccbench.backends.kernel.tracefs). Not part of `make test`.

    sudo .venv/bin/python benchmarks/kernel_capture/kernel_probe_trace.py reno 100ms 5% --seed 1 [--raw trace.txt]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from ccbench.backends import kernel, sim  # noqa: E402
from ccbench.backends.kernel.tracefs import trace_events  # noqa: E402
from ccbench.backends.kernel.traffic import BASE_CPORT  # noqa: E402
from ccbench.scenario.model import Scenario  # noqa: E402

PROBE = re.compile(r" (\d+\.\d+): tcp_probe:.*snd_nxt=(0x[0-9a-f]+) snd_una=(0x[0-9a-f]+) snd_cwnd=(\d+)")


def trace_kernel_run(scenario: Scenario) -> tuple[float, str]:
    """Goodput (bit/s) of the kernel run and the tcp_probe lines of its first flow."""
    with trace_events({"tcp/tcp_probe": f"sport == {BASE_CPORT}"}, buffer_kb=65536) as stop:
        res = kernel.run(scenario)
        text = stop()
    if not res.ok:
        raise SystemExit(f"kernel run failed: {res.error}")
    return float(res.flows.goodput_bps.iloc[0]), text


def time_weighted(samples: list[tuple[float, float]], after_s: float = 1.0) -> float:
    """Mean of a step function given as (t, value) samples, over t > after_s."""
    s = [x for x in samples if x[0] > after_s]
    span = s[-1][0] - s[0][0]
    return sum((b[0] - a[0]) * a[1] for a, b in zip(s, s[1:])) / span


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cc")
    ap.add_argument("rtt")
    ap.add_argument("loss")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", default="15s")
    ap.add_argument("--raw", help="also write the raw tcp_probe lines here")
    a = ap.parse_args()
    d = {
        "duration": a.duration,
        "seed": a.seed,
        "flows": [{"cc": a.cc}],
        "bottleneck": {"rate": "50Mbit", "rtt": a.rtt, "loss": a.loss, "buffer": "1bdp"},
    }
    goodput, text = trace_kernel_run(Scenario.from_dict(d, source="kernel_probe_trace"))
    if a.raw:
        Path(a.raw).write_text(text)
    rows = [(float(m.group(1)), int(m.group(4))) for m in map(PROBE.search, text.splitlines()) if m]
    if len(rows) < 10:
        raise SystemExit(f"only {len(rows)} tcp_probe lines: is the tracepoint there?")
    t0 = rows[0][0]
    k_cwnd = time_weighted([(t - t0, c) for t, c in rows])
    res = sim.run(Scenario.from_dict({**d, "sample_interval": "1ms"}, source="kernel_probe_trace"))
    s = res.series
    s_cwnd = time_weighted(list(zip(s.t_s, s.cwnd_pkts)))
    s_goodput = float(res.flows.goodput_bps.iloc[0])
    print(f"{a.cc} {a.rtt} {a.loss} seed {a.seed}: {len(rows)} ACKs traced on the kernel")
    print(f"  kernel:    goodput {goodput / 1e6:.3f} Mbit/s, time-weighted cwnd {k_cwnd:.2f} segments")
    print(f"  simulator: goodput {s_goodput / 1e6:.3f} Mbit/s, time-weighted cwnd {s_cwnd:.2f} segments")
    print(f"  simulator / kernel: goodput {s_goodput / goodput:.3f}, cwnd {s_cwnd / k_cwnd:.3f}")


if __name__ == "__main__":
    main()
