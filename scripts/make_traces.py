#!/usr/bin/env python3
"""Generate ccbench's shipped delivery traces (python/ccbench/scenario/traces/*.trace), Mahimahi format.

    python scripts/make_traces.py            # rewrite the shipped traces
    python scripts/make_traces.py DIR        # write them to DIR instead
    python scripts/make_traces.py --check    # exit 1 if a shipped trace differs from what this makes

Each trace is one period of a synthetic link, made by this script alone (no measured or
downloaded data): a capacity profile in bit/s per millisecond, turned into delivery
opportunities by granting that many bits each millisecond and emitting one opportunity per
1500 bytes (12 000 bits) of accumulated grant. Everything is integer arithmetic on a
splitmix64 generator with a fixed seed per trace, so the output is byte-identical on every
machine and Python version (tests/sim/test_trace.py checks it). The files hold only timestamps, one
per line, so Mahimahi's mm-link reads them too.

The models, and what they are meant to resemble:

* ``lte-steady``: a good LTE cell with one user: about 12 Mbit/s, the scheduler granting a
  variable amount each 1 ms TTI (50-150 % of the mean) and the rate drifting ±10 % each second.
  Period 5 s.
* ``lte-fluctuating``: a mobile LTE user: the rate follows a random walk in log space every 200 ms
  between 0.5 and 30 Mbit/s (cellular traces such as Sprout's and Mahimahi's vary over that
  range within seconds), with 200-400 ms outages now and then. Period 10 s.
* ``sat-handover``: a LEO satellite link (Starlink-like): the scheduler reallocates every 15 s,
  so the period is 15 s; it starts with a 120 ms handover gap without any opportunity; the
  capacity then rises and falls with the satellite's elevation between 3 and 9 Mbit/s, with a
  40 ms beam-switch gap mid-pass. Pair it with a satellite RTT (e.g. ``rtt = "40ms"``).
"""

from __future__ import annotations

import sys
from pathlib import Path

OPPORTUNITY_BITS = 1500 * 8
MASK = (1 << 64) - 1
OUT = Path(__file__).resolve().parent.parent / "python" / "ccbench" / "scenario" / "traces"


class SplitMix64:
    """Steele, Lea & Flood's splitmix64: a tiny generator with a fixed, documented output."""

    def __init__(self, seed: int):
        self.state = seed & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform integer in [0, n) (the modulo bias is below n / 2^64)."""
        return self.next() % n


def opportunities(bits_per_ms: list[int], rng: SplitMix64, tti_spread_pct: int) -> list[int]:
    """Delivery opportunities (ms) of a per-ms capacity: each ms grants its bits scaled by a
    uniform factor in [100 - spread, 100 + spread] %, accumulated; one opportunity per 12 000
    bits. The last millisecond of the period always has one (the period is the last timestamp)."""
    out: list[int] = []
    credit = 0
    period = len(bits_per_ms)
    for ms, bits in enumerate(bits_per_ms, start=1):
        if bits == 0:
            credit = 0  # an outage: nothing is granted, nothing saved up
            continue
        factor = 100 - tti_spread_pct + rng.below(2 * tti_spread_pct + 1)
        credit += bits * factor // 100
        while credit >= OPPORTUNITY_BITS:
            out.append(ms)
            credit -= OPPORTUNITY_BITS
    if not out or out[-1] != period:
        out.append(period)
    return out


def lte_steady() -> list[int]:
    rng = SplitMix64(1)
    period_ms, mean_bps = 5_000, 12_000_000
    per_ms: list[int] = []
    for _ in range(period_ms // 1000):
        rate = mean_bps * (90 + rng.below(21)) // 100  # ±10 % each second
        per_ms += [rate // 1000] * 1000
    return opportunities(per_ms, rng, 50)


def lte_fluctuating() -> list[int]:
    rng = SplitMix64(2)
    period_ms, step_ms = 10_000, 200
    # log2 of the rate in 1/8 steps: 0.5 Mbit/s = 2^-1 … 30 Mbit/s ≈ 2^4.9 (in Mbit/s)
    lo, hi = -8, 39
    level = 24  # 2^3 = 8 Mbit/s
    outage = 0
    per_ms: list[int] = []
    for _ in range(period_ms // step_ms):
        if outage == 0 and rng.below(100) < 4:
            outage = 1 + rng.below(2)  # 200 or 400 ms without service
        if outage:
            outage -= 1
            per_ms += [0] * step_ms
            continue
        level += rng.below(9) - 4  # -0.5 … +0.5 in log2 per step
        level = max(lo, min(hi, level))
        # 2^(level/8) Mbit/s in integer bit/s: whole octaves by shift, the eighth by a table
        frac = [1000, 1091, 1189, 1297, 1414, 1542, 1682, 1834][level % 8]
        octave = level // 8
        mbps_milli = frac << octave if octave >= 0 else frac >> -octave
        per_ms += [mbps_milli] * step_ms  # bits per ms = rate / 1000 = Mbit/s × 1000
    return opportunities(per_ms, rng, 50)


def sat_handover() -> list[int]:
    rng = SplitMix64(3)
    period_ms = 15_000
    handover_ms, beam_at, beam_ms = 120, 7_500, 40
    lo_bps, hi_bps = 3_000_000, 9_000_000
    pass_ms = period_ms - handover_ms
    per_ms: list[int] = []
    for ms in range(period_ms):
        if ms < handover_ms or beam_at <= ms < beam_at + beam_ms:
            per_ms.append(0)
            continue
        # elevation profile: a parabola peaking mid-pass (integer, 0 … 1000)
        x = ms - handover_ms
        shape = 4000 * x * (pass_ms - x) // (pass_ms * pass_ms)
        per_ms.append((lo_bps + (hi_bps - lo_bps) * shape // 1000) // 1000)
    return opportunities(per_ms, rng, 30)


TRACES = {"lte-steady": lte_steady, "lte-fluctuating": lte_fluctuating, "sat-handover": sat_handover}


def render(ms: list[int]) -> bytes:
    return "".join(f"{m}\n" for m in ms).encode()


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    out = Path(args[0]) if args else OUT
    bad = []
    for name, make in TRACES.items():
        ms = make()
        data = render(ms)
        path = out / f"{name}.trace"
        mean = len(ms) * OPPORTUNITY_BITS * 1000 // ms[-1]
        if check:
            if not path.is_file() or path.read_bytes() != data:
                bad.append(str(path))
            continue
        out.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"{path}: {len(ms)} opportunities in {ms[-1]} ms, mean {mean / 1e6:.2f} Mbit/s, {len(data)} bytes")
    if bad:
        print("differ from scripts/make_traces.py: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
