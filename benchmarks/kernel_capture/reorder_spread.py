"""How far a path's delays spread beyond its configured jitter, as RACK sees them, from a
sender-side capture of either backend (`[output] pcap`): docs/fidelity.md item 12.

RACK (Linux `tcp_rack_detect_loss`) marks a segment lost once a segment sent after it has been
(S)ACKed and the first has waited longer than that one's RTT plus the reordering window. What
decides a spurious mark is therefore a segment's RTT *excess* over a segment sent shortly after it
that arrived first. Under uniform jitter of +-J with reordering that excess is at most 2J plus the
change of the queue; RACK's window grows on D-SACKs in steps of min_rtt / 4 up to the smoothed RTT,
so after 4 steps it is about min_rtt (34 ms for 50 ms +- 16 ms).

For each segment sent once (more than 1 s into the run) the script takes the time from its send to
the first ACK that covers it (cumulatively or by SACK), then its largest excess over a segment sent
up to WINDOW later and covered earlier. It prints the distribution of that excess, the share over
thresholds around 2J, and the retransmission episodes (retransmissions closer than 150 ms belong
to one) with their size: a one-segment episode is a spurious recovery that RACK's window did not
absorb.

    .venv/bin/python benchmarks/kernel_capture/reorder_spread.py --jitter-ms 16 CAPTURE.pcap [...]
"""

from __future__ import annotations

import argparse
import bisect
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from ccbench.fit.capture import read_packets, select_flow  # noqa: E402

#: How much later a segment may be sent and still be compared (a little over 2 x 16 ms + queue).
WINDOW_S = 0.06
#: Retransmissions closer than this belong to one episode.
EPISODE_GAP_S = 0.15
#: Segments sent in the first second (slow start, before RACK has seen reordering) are left out.
SKIP_S = 1.0


def first_covered(flow) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Send time and RTT (s) of every segment sent once after SKIP_S, and the retransmission
    times, all relative to the first data segment."""
    t0 = flow.data[0].t
    isn = flow.data[0].seq

    def rel(x: int) -> int:
        return (x - isn) % 2**32

    sent: dict[int, float] = {}
    length: dict[int, int] = {}
    order: list[int] = []
    retx: set[int] = set()
    retx_t: list[float] = []
    got: dict[int, float] = {}
    una = 0
    events = [(p.t, 0, p) for p in flow.data if p.payload > 0] + [(p.t, 1, p) for p in flow.acks]
    events.sort(key=lambda e: (e[0], e[1]))
    for t, kind, p in events:
        if kind == 0:
            s = rel(p.seq)
            if s in sent:
                retx.add(s)
                retx_t.append(t - t0)
            else:
                sent[s], length[s] = t, p.payload
                order.append(s)
            continue
        a = rel(p.ack)
        if a < 2**31 and a > una:
            i = bisect.bisect_left(order, una)
            while i < len(order) and order[i] + length[order[i]] <= a:
                got.setdefault(order[i], t)
                i += 1
            una = a
        for left, right in p.sacks:
            left, right = rel(left), rel(right)
            if right <= left or right - left > 2**24:
                continue  # a D-SACK below the ACK or a block from before the capture
            i = bisect.bisect_left(order, max(left, una))
            while i < len(order) and order[i] + length[order[i]] <= right:
                got.setdefault(order[i], t)
                i += 1
    keep = [s for s in order if s in got and s not in retx and sent[s] - t0 > SKIP_S]
    return (
        np.array([sent[s] - t0 for s in keep]),
        np.array([got[s] - sent[s] for s in keep]),
        retx_t,
    )


def rtt_excess(send_t: np.ndarray, rtt: np.ndarray) -> np.ndarray:
    """Per segment, its largest RTT excess (ms) over a segment sent up to WINDOW_S later that was
    covered before it (segments overtaken by none are left out)."""
    best = np.full(len(rtt), -np.inf)
    for k in range(1, len(rtt)):
        later = send_t[k:] - send_t[:-k] <= WINDOW_S
        if not later.any():
            break
        overtaken = (send_t[k:] + rtt[k:]) < (send_t[:-k] + rtt[:-k])
        e = np.where(later & overtaken, rtt[:-k] - rtt[k:], -np.inf)
        best[:-k] = np.maximum(best[:-k], e)
    return best[np.isfinite(best)] * 1e3


def episodes(retx_t: list[float]) -> list[tuple[float, int]]:
    """(start, retransmissions) of each episode."""
    out: list[list[float]] = []
    for t in retx_t:
        if out and t - out[-1][-1] <= EPISODE_GAP_S:
            out[-1].append(t)
        else:
            out.append([t])
    return [(e[0], len(e)) for e in out]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("captures", nargs="+", type=Path)
    ap.add_argument("--jitter-ms", type=float, required=True, help="the scenario's uniform jitter J (+-J)")
    a = ap.parse_args()
    span = 2 * a.jitter_ms
    for path in a.captures:
        send_t, rtt, retx_t = first_covered(select_flow(read_packets(path)))
        ex = rtt_excess(send_t, rtt)
        p50, p99, p999 = np.percentile(ex, [50, 99, 99.9])
        over = "  ".join(f"> {span + d:.0f} ms {np.mean(ex > span + d) * 100:.2f} %" for d in (0, 2, 4))
        eps = episodes(retx_t)
        late = [e for e in eps if e[0] > SKIP_S]
        print(
            f"{path.name}: {len(rtt)} segments; min RTT {rtt.min() * 1e3:.1f} ms; excess p50 {p50:.1f} "
            f"p99 {p99:.1f} p99.9 {p999:.1f} max {ex.max():.1f} ms; {over}; episodes after {SKIP_S:.0f} s "
            f"{len(late)}, of one segment {sum(1 for e in late if e[1] == 1)}: "
            + ", ".join(f"{t:.2f} s x{n}" for t, n in late)
        )


if __name__ == "__main__":
    main()
