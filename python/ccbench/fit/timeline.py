"""The sender's view of one flow rebuilt from its capture: each transmission, when each byte
was first acknowledged (cumulatively or by SACK), RTT samples, retransmissions, D-SACKs and
holes that filled without a retransmission.

Sequence numbers are unwrapped to 64 bits relative to the first data byte. A data segment
starting below the highest byte already sent is a retransmission (Linux counts
TCP_MIB_RETRANSSEGS the same way, per segment sent again). RTT samples follow Karn's rule
(RFC 6298 §3): only bytes never retransmitted give one, and, as ``ca_rtt_us`` in Linux 6.18's
``tcp_clean_rtx_queue`` (net/ipv4/tcp_input.c), an ACK's sample is taken from the most recently sent of the segments
it newly covers. A D-SACK block is recognised as RFC 2883 §4 says: the first SACK block lies
below the cumulative ACK, or inside the second block. A retransmission whose bytes were first
acknowledged sooner after it than the smallest RTT sample cannot have been what arrived: the
original did, and the retransmission was spurious (the timing form of RFC 3522's Eifel
detection; a receiver that drops the duplicate, as PAWS does, sends no D-SACK for it).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from .capture import Flow

__all__ = ["Timeline", "build_timeline"]

_MOD = 1 << 32


def _unwrap(x: int, ref: int) -> int:
    """The 64-bit value congruent to 32-bit ``x`` nearest to ``ref``."""
    d = (x - ref) % _MOD
    if d >= _MOD // 2:
        d -= _MOD
    return ref + d


class _Covered:
    """Disjoint sorted byte intervals; ``add`` returns the parts that were not yet covered."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, s: int, e: int) -> list[tuple[int, int]]:
        if e <= s:
            return []
        i = bisect.bisect_left(self.ends, s)
        new: list[tuple[int, int]] = []
        cur = s
        j = i
        while j < len(self.starts) and self.starts[j] <= e:
            if self.starts[j] > cur:
                new.append((cur, self.starts[j]))
            cur = max(cur, self.ends[j])
            j += 1
        if cur < e:
            new.append((cur, e))
        lo = min(s, self.starts[i]) if i < j else s
        hi = max(e, self.ends[j - 1]) if i < j else e
        self.starts[i:j] = [lo]
        self.ends[i:j] = [hi]
        return new


@dataclass
class Timeline:
    #: Per transmission, in send order: time, first byte, end byte, retransmission flag.
    tx_t: np.ndarray
    tx_start: np.ndarray
    tx_end: np.ndarray
    tx_retx: np.ndarray
    #: IP bytes per payload byte of the data segments (1500 / 1448 with timestamps).
    wire_per_payload: float
    #: Per ACK carrying news: arrival time and payload bytes delivered so far (cumulative + SACK).
    ack_t: np.ndarray
    delivered: np.ndarray
    #: RTT samples: the ACK's time, the sample (s), and the send time of the segment it timed.
    rtt_at: np.ndarray
    rtt_s: np.ndarray
    rtt_sent: np.ndarray
    #: Retransmitted byte ranges reported as duplicates by D-SACK (spurious retransmissions).
    spurious_bytes: int
    #: Those ranges as (start, end) pairs, sorted.
    spurious_ranges: list
    dsacks: int
    #: Seconds each hole that filled without a retransmission stayed open (reordering).
    reorder_hole_s: np.ndarray
    #: First-transmission segments, sorted by start: (start, end, lost) with lost meaning the
    #: bytes were retransmitted and neither a D-SACK nor the ACK's timing showed the
    #: retransmission spurious.
    seg_start: np.ndarray
    seg_end: np.ndarray
    seg_lost: np.ndarray
    #: Retransmitted segments found spurious by their ACK's timing (no D-SACK needed).
    spurious_by_timing: int
    notes: list = field(default_factory=list)

    @property
    def duration_s(self) -> float:
        return float(self.tx_t[-1] - self.tx_t[0]) if len(self.tx_t) > 1 else 0.0


def build_timeline(flow: Flow) -> Timeline:
    data = [p for p in flow.data if p.payload > 0]
    base = data[0].seq
    ref = base
    tx_t, tx_start, tx_end, tx_retx = [], [], [], []
    snd_nxt = 0
    wire = payload = 0
    # first transmissions: start, end, send time, retransmitted?
    seg_start: list[int] = []
    seg_end: list[int] = []
    seg_sent: list[float] = []
    retx_ranges = _Covered()
    last_retx: list[tuple[int, int, float]] = []
    for p in data:
        s = _unwrap(p.seq, ref) - base
        ref = p.seq
        e = s + p.payload
        retx = s < snd_nxt
        tx_t.append(p.t)
        tx_start.append(s)
        tx_end.append(e)
        tx_retx.append(retx)
        wire += p.ip_len
        payload += p.payload
        if retx:
            retx_ranges.add(s, min(e, snd_nxt))
            last_retx.append((s, min(e, snd_nxt), p.t))
        if e > snd_nxt:
            lo = max(s, snd_nxt)
            seg_start.append(lo)
            seg_end.append(e)
            seg_sent.append(p.t)
            snd_nxt = e
    n = len(seg_start)
    s_start = np.asarray(seg_start, dtype=np.int64)
    s_end = np.asarray(seg_end, dtype=np.int64)
    # Karn: a segment overlapping any retransmitted range gives no RTT sample.
    retx_seg = np.zeros(n, dtype=bool)
    for a, b in zip(retx_ranges.starts, retx_ranges.ends):
        i = bisect.bisect_right(seg_end, a)
        j = bisect.bisect_left(seg_start, b)
        retx_seg[i:j] = True
    covered = _Covered()
    # plain lists in the per-ACK loop: numpy scalar access costs ten times more
    nan = float("nan")
    delivered_at = [nan] * n
    hole_since = [nan] * n
    retx_list = retx_seg.tolist()
    hole_ptr = 0
    high = 0
    total = 0
    ack_t, delivered = [], []
    rtt_at, rtt_s, rtt_sent = [], [], []
    dsacks = 0
    spurious = _Covered()
    aref = data[0].seq
    for a in flow.acks:
        if not a.flags & 0x10:
            continue
        cum = _unwrap(a.ack, aref) - base
        aref = a.ack
        blocks = []
        for left, right in a.sacks:
            bs = _unwrap(left, aref) - base
            blocks.append((bs, bs + ((right - left) % _MOD)))
        if blocks:
            first = blocks[0]
            inside_second = len(blocks) > 1 and blocks[1][0] <= first[0] and first[1] <= blocks[1][1]
            if first[1] <= cum or inside_second:
                dsacks += 1
                for rs, re_ in zip(retx_ranges.starts, retx_ranges.ends):
                    lo, hi = max(rs, first[0]), min(re_, first[1])
                    if lo < hi:
                        spurious.add(lo, hi)
                blocks = blocks[1:]
        new = covered.add(0, max(cum, 0))
        for bs, be in blocks:
            new += covered.add(bs, be)
        if not new:
            continue
        newest = -1.0
        for ns, ne in new:
            total += ne - ns
            i = max(bisect.bisect_right(seg_end, ns), 0)
            j = bisect.bisect_left(seg_start, ne)
            for k in range(i, j):
                if delivered_at[k] != delivered_at[k]:  # NaN: not delivered yet
                    delivered_at[k] = a.t
                    if not retx_list[k] and seg_sent[k] > newest:
                        newest = seg_sent[k]
            high = max(high, ne)
        if newest >= 0:
            rtt_at.append(a.t)
            rtt_s.append(a.t - newest)
            rtt_sent.append(newest)
        # Segments below the highest delivered byte and not delivered yet are holes from now.
        while hole_ptr < n and seg_end[hole_ptr] <= high:
            if delivered_at[hole_ptr] != delivered_at[hole_ptr]:
                hole_since[hole_ptr] = a.t
            hole_ptr += 1
        ack_t.append(a.t)
        delivered.append(total)
    delivered_at = np.asarray(delivered_at)
    hole_since = np.asarray(hole_since)
    filled = ~np.isnan(hole_since) & ~retx_seg & ~np.isnan(delivered_at)
    reorder = delivered_at[filled] - hole_since[filled]
    spurious_bytes = sum(e - s for s, e in zip(spurious.starts, spurious.ends))
    lost = retx_seg.copy()
    # Eifel by timing: covered sooner after its (last) retransmission than any round trip.
    retx_sent = np.full(n, np.nan)
    for a_, b_, t_ in last_retx:
        i = bisect.bisect_right(seg_end, a_)
        j = bisect.bisect_left(seg_start, b_)
        retx_sent[i:j] = t_
    floor = float(np.min(rtt_s)) if rtt_s else 0.0
    with np.errstate(invalid="ignore"):
        early = retx_seg & ((delivered_at - retx_sent) < floor)
    lost &= ~early
    for a_, b_ in zip(spurious.starts, spurious.ends):
        i = bisect.bisect_right(seg_end, a_)
        j = bisect.bisect_left(seg_start, b_)
        lost[i:j] = False
    return Timeline(
        tx_t=np.asarray(tx_t),
        tx_start=np.asarray(tx_start, dtype=np.int64),
        tx_end=np.asarray(tx_end, dtype=np.int64),
        tx_retx=np.asarray(tx_retx, dtype=bool),
        wire_per_payload=wire / payload if payload else 1.0,
        ack_t=np.asarray(ack_t),
        delivered=np.asarray(delivered, dtype=np.int64),
        rtt_at=np.asarray(rtt_at),
        rtt_s=np.asarray(rtt_s),
        rtt_sent=np.asarray(rtt_sent),
        spurious_bytes=spurious_bytes,
        spurious_ranges=list(zip(spurious.starts, spurious.ends)),
        dsacks=dsacks,
        reorder_hole_s=reorder[reorder > 0],
        seg_start=s_start,
        seg_end=s_end,
        seg_lost=lost,
        spurious_by_timing=int(early.sum()),
    )
