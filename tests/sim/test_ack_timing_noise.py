"""How the models respond to ACK-timing noise: ACKs held back and then delivered together, as a
host that stalls delivers them (docs/fidelity.md items 7 and 11). Modelled here as uniform jitter
without reordering on the ACK path only.

BBR v1's ack-aggregation allowance (Linux 5.1+ ``bbr_update_ack_aggregation``: cwnd gains the most
data an ACK epoch delivered beyond bw x epoch time, max-filtered over 10 rounds) grows with the
bunching, which makes BBR's share beside CUBIC at 10 ms, 4 BDP depend on the path's timing noise.
CUBIC's HyStart ACK-train test (``hystart_update``) gives up for the rest of a round after a gap of
over 2 ms between ACKs, so slow start runs one or two rounds longer and overshoots the buffer."""

from __future__ import annotations

import statistics

import ccbench
from ccbench import analysis

MSS = 1448


def bbr_allowance_pkts(series) -> tuple[float, float]:
    """BBR's cwnd beyond 2 x bw_est x min_rtt (analysis.bbr_cwnd_beyond_bdp_pkts: the quantization
    budget plus the ack-aggregation allowance) and its median bandwidth estimate in packets/s."""
    bb = series[(series.cc == "bbr") & (series.cc_state == "probe_bw")]
    return analysis.bbr_cwnd_beyond_bdp_pkts(series), float(bb.bw_est_bps.median() / 8 / MSS)


def ack_jitter(bottleneck: dict, jitter: str | None) -> dict:
    if jitter is None:
        return bottleneck
    return {**bottleneck, "jitter": jitter, "jitter_dist": "uniform", "reorder": False, "impair": "ack"}


def test_allowance_grows_by_about_the_largest_ack_gap_times_bw():
    # Uniform jitter of +-J on ACKs without reordering leaves gaps of up to 2J between ACKs, after
    # which the held-back ACKs arrive together: an epoch then delivers up to bw x 2J beyond its
    # expectation, and the 10-round max filter keeps the largest such epoch.
    base = {"rate": "50Mbit", "rtt": "20ms", "buffer": "2bdp"}

    def run(jitter):
        r = ccbench.run(
            {
                "name": "ack-aggregation",
                "duration": "30s",
                "seed": 1,
                "sample_interval": "100ms",
                "bottleneck": ack_jitter(base, jitter),
                "flows": [{"cc": "bbr"}],
            }
        )
        return bbr_allowance_pkts(r.series)

    quiet, _ = run(None)
    for jitter_ms in (1, 2):
        noisy, bw_pps = run(f"{jitter_ms}ms")
        largest_gap_pkts = bw_pps * 2 * jitter_ms / 1e3
        rise = noisy - quiet
        assert 0.5 * largest_gap_pkts <= rise <= 1.2 * largest_gap_pkts, (jitter_ms, quiet, noisy, largest_gap_pkts)


def test_bbr_share_beside_cubic_at_10ms_4bdp_rises_with_ack_timing_noise():
    # The allowance keeps BBR's cwnd above 2 x bw x min_rtt while its min_rtt is the 10 ms base and
    # the queue CUBIC keeps makes the RTT 25-35 ms: each packet of allowance slows the decay of
    # BBR's bandwidth estimate in that phase, so its share rises with the noise.
    base = {"rate": "100Mbit", "rtt": "10ms", "buffer": "4bdp"}

    def share(jitter, seed):
        r = ccbench.run(
            {
                "name": "ack-aggregation",
                "duration": "60s",
                "seed": seed,
                "sample_interval": "100ms",
                "bottleneck": ack_jitter(base, jitter),
                "flows": [{"cc": "bbr"}, {"cc": "cubic"}],
            }
        )
        fl = r.flows
        return fl[fl.cc == "bbr"].goodput_bps.sum() / fl.goodput_bps.sum(), bbr_allowance_pkts(r.series)[0]

    quiet = [share(None, s) for s in (1, 2)]
    noisy = [share("1ms", s) for s in (1, 2)]
    assert statistics.mean(s for s, _ in noisy) - statistics.mean(s for s, _ in quiet) >= 0.02, (quiet, noisy)
    assert min(a for _, a in noisy) > max(a for _, a in quiet), (quiet, noisy)


def test_hystart_exits_late_when_ack_gaps_exceed_2ms():
    # 48 Mbit/s, 50 ms, a 300 kB (1 BDP) buffer, no loss. Without noise the ACK train ends slow
    # start at the same cwnd in every seed. Jitter of +-2 ms leaves gaps of up to 4 ms: a round
    # whose train meets one exits a round later (cwnd about 1.5x, delayed ACKs) or, twice
    # broken, by the delay test, and the overshoot costs retransmissions.
    def exits(jitter):
        out = []
        for seed in range(1, 9):
            b = ack_jitter({"rate": "48Mbit", "rtt": "50ms", "buffer": "300kB"}, jitter)
            r = ccbench.run(
                {"name": "hystart", "duration": "5s", "seed": seed, "bottleneck": b, "flows": [{"cc": "cubic"}]}
            )
            s = r.counters[r.counters.side == "sender"].iloc[0]
            out.append((int(s.TcpExtTCPHystartTrainCwnd), int(s.TcpExtTCPHystartDelayCwnd), int(s.TcpRetransSegs)))
        return out

    quiet = exits(None)
    train_cwnd = quiet[0][0]
    assert train_cwnd > 0 and all(t == train_cwnd and d == 0 for t, d, _ in quiet), quiet
    noisy = exits("2ms")
    late = [(t, d, rx) for t, d, rx in noisy if d > 0 or t > 1.3 * train_cwnd]
    assert len(late) >= len(noisy) // 2, noisy
    assert min(rx for _, _, rx in late) > max(rx for _, _, rx in quiet), (quiet, noisy)
