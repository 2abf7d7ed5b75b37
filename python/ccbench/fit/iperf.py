"""A bottleneck fitted from iperf3's JSON output (``iperf3 -c HOST -J``) and a saved ping.

iperf3 reports, per interval (default 1 s), the bytes its sender wrote and, sampled from Linux's
``tcp_info`` at the interval's end, the smoothed RTT (``rtt``, µs), ``snd_cwnd``, the peer's
window ``snd_wnd`` and the retransmissions in the interval. A ping of the same path while it
carries nothing else gives what iperf3 cannot: the base RTT (its minimum), the jitter and the
random loss (pingparse.py). The figures:

* **rate**: an interval whose closing smoothed RTT stands above the ping's minimum by more
  than the ping's jitter can explain (2J) and more than a flow below the link adds by itself (a
  delayed ACK waiting for a second segment and a few segments of its own bursts: four segment
  times at the interval's throughput, 1 ms at least) found a queue at the bottleneck, so the
  link was busy and the sender's throughput is its rate. The estimate is the mean over those
  *busy* intervals (their bytes over their seconds), the interval their smallest to largest.
  The mean, not a high percentile: iperf3 counts the bytes its sender wrote, in whole blocks
  (128 KB: ±1 Mbit/s in a 1 s interval) and into the socket buffer, so single intervals scatter
  around the link's rate and their sum over consecutive intervals cancels both. The first
  interval (slow start fills the buffer) and a last one shorter than half an interval are left
  out. A flow held below the link by random loss, by the receiver's window or by its own
  window builds no queue: with fewer than ``MIN_BUSY`` busy intervals the mean over all
  intervals is only a lower bound (no upper end). iperf3 counts payload; the link's rate counts
  IP bytes, so the rate is scaled by path MTU / MSS (full-sized segments; MSS = MTU - 52, IPv4
  and TCP headers with timestamps, Linux's default).
* **rtt**: the ping's minimum; the interval runs up to the ping's 5th percentile.
* **jitter**: the ping's (p95 - p5) / 2, which is 0.9 J for uniform ±J: the interval runs up
  to that J (a single outlier does not move either end).
* **loss**: the ping's lost sequence numbers, a Wilson 95 % interval, modelled as Bernoulli
  (a ping of a few hundred probes cannot tell bursts apart). The data path's own figure,
  iperf3's retransmissions over the segments sent, is given beside it as a cross-check: it
  also counts the buffer's overflow drops and spurious retransmissions.
* **buffer**: the largest queueing delay iperf3 saw (its largest smoothed RTT minus the ping's
  minimum) times the rate. The buffer was filled when the data path lost at least twice what
  the ping lost (then most drops were overflow, not random) on a link shown saturated;
  otherwise the figure is a lower bound. The interval carries the jitter (±2J on the largest
  RTT) and the rate's range. The smoothed RTT never exceeds the largest RTT and is read once per
  interval, so the largest queue is, if anything, seen low.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import numpy as np

from . import Fit
from .capture import FitError
from .estimate import Estimate
from .loss import LossFit, wilson

__all__ = ["is_json", "read_iperf3", "fit_iperf3", "fit_iperf3_file"]

#: Fewer busy intervals than this: the link was not shown saturated, the rate is a lower bound.
MIN_BUSY = 3
#: Usable intervals needed at all (after the first and a short last one are left out).
MIN_INTERVALS = 3
#: A queue taken for standing: above the ping's 2J by at least this much ...
MIN_STANDING_S = 1e-3
#: ... and by this many segment times at the interval's throughput (one delayed-ACK gap and
#: three segments of the sender's own bursts).
BURST_SEGMENTS = 4
#: The buffer overflowed when the data path lost at least this many times the ping's loss ...
OVERFLOW_OVER_RANDOM = 2.0
#: ... in at least this many retransmissions.
MIN_OVERFLOW_RETX = 3
#: (p95 - p5) / 2 of uniform ±J is 0.9 J (pingparse's jitter)
UNIFORM_P5_P95 = 0.9
#: IPv4 + TCP headers with the timestamp option (on by default in Linux): MSS = MTU - 52.
TCP_IP_TS_HEADERS = 52
#: An IPv6 header is 20 bytes longer than an IPv4 one.
IPV6_EXTRA = 20


def is_json(path: Path) -> bool:
    """The file's first non-blank character opens a JSON object (iperf3 -J writes one); a pcap
    or pcapng starts with binary magic instead. A missing file is left to the capture reader."""
    if not Path(path).is_file():
        return False
    with open(path, "rb") as f:
        head = f.read(256).lstrip()
    return head[:1] == b"{"


def read_iperf3(path: Path) -> dict:
    """The JSON document iperf3 -J wrote, checked to be one that measured a TCP upload.
    Raises FitError naming what is wrong."""
    try:
        doc = json.loads(Path(path).read_text(errors="replace"))
    except ValueError as e:
        raise FitError(f"{path}: not valid JSON ({e})") from None
    shaped = (
        isinstance(doc, dict)
        and isinstance(doc.get("start"), dict)
        and isinstance(doc.get("intervals"), list)
        and isinstance(doc.get("end"), dict)
    )
    if not shaped:
        raise FitError(f"{path}: JSON, but not iperf3's output (no start, intervals and end): iperf3 -c HOST -J")
    if doc.get("error"):
        raise FitError(f"{path}: iperf3 reported an error: {doc['error']}")
    ts = doc["start"].get("test_start") or {}
    if str(ts.get("protocol", "TCP")).upper() != "TCP":
        raise FitError(f"{path}: a {ts.get('protocol')} test: the fit needs a TCP one (iperf3 without -u)")
    if ts.get("reverse") or ts.get("bidir"):
        raise FitError(
            f"{path}: a reverse (-R) or bidirectional test: this host's JSON then holds no sender "
            "RTTs; run iperf3 -c from the sending host"
        )
    if not doc["intervals"]:
        raise FitError(f"{path}: no per-interval reports (iperf3 -i 0?): run with the default 1 s intervals")
    return doc


def _intervals(doc: dict) -> list[dict]:
    """Per usable interval: start, seconds, payload bit/s, retransmits, the largest closing
    smoothed RTT over the streams (s), and whether a stream's window was the peer's."""
    rows = []
    for iv in doc["intervals"]:
        s = iv.get("sum", {})
        streams = iv.get("streams", [])
        if s.get("omitted") or not streams or not s.get("sender", True):
            continue
        rtts = [st["rtt"] / 1e6 for st in streams if st.get("rtt")]
        rows.append(
            {
                "start": float(s.get("start", 0.0)),
                "seconds": float(s.get("seconds", 0.0)),
                "bps": float(s.get("bits_per_second", 0.0)),
                "retransmits": int(s.get("retransmits", 0) or 0),
                "rtt_s": max(rtts) if rtts else None,
                "rwnd_limited": any(st.get("snd_wnd") and st.get("snd_cwnd", 0) >= st["snd_wnd"] for st in streams),
                "pmtu": max((int(st.get("pmtu", 0) or 0) for st in streams), default=0),
            }
        )
    if not rows:
        return []
    nominal = float(np.median([r["seconds"] for r in rows]))
    return [r for r in rows[1:] if r["seconds"] >= nominal / 2]


def _ipv6(doc: dict) -> bool:
    conns = doc["start"].get("connected") or [{}]
    return ":" in str(conns[0].get("remote_host", ""))


def _mss(doc: dict, rows: list[dict]) -> tuple[int, int]:
    """(path MTU, MSS): a full segment fills the MTU less the IP and TCP headers with the
    timestamp option. iperf3's ``tcp_mss_default`` is the socket's value before it connects,
    not the path's, so it is not used."""
    mtu = max((r["pmtu"] for r in rows), default=0) or 1500
    return mtu, mtu - TCP_IP_TS_HEADERS - (IPV6_EXTRA if _ipv6(doc) else 0)


def _standing_s(row: dict, jitter_s: float, mss: int) -> float:
    """The queueing delay an interval's smoothed RTT must exceed to show a standing queue: the
    ping's 2J, plus what a flow below the link adds on its own, timed at the interval's own
    throughput (never faster than the link's): the delayed ACK's wait for a second segment and
    a few segments of the sender's bursts, ``BURST_SEGMENTS`` segment times in all; 1 ms at least."""
    seg_s = mss * 8 / row["bps"] if row["bps"] > 0 else float("inf")
    return 2 * jitter_s + max(MIN_STANDING_S, BURST_SEGMENTS * seg_s)


def _mean_bps(rows: list[dict]) -> float:
    """Bits over seconds summed across the intervals: the write-side count's block size and the
    socket buffer's filling, which move single intervals, cancel between neighbours."""
    return sum(r["bps"] * r["seconds"] for r in rows) / sum(r["seconds"] for r in rows)


def _rate(rows: list[dict], base_s: float, jitter_s: float, mtu: int, mss: int) -> Estimate:
    wire = mtu / mss
    busy = [r for r in rows if r["rtt_s"] is not None and r["rtt_s"] - base_s > _standing_s(r, jitter_s, mss)]
    rwnd = sum(r["rwnd_limited"] for r in rows)
    every = np.array([r["bps"] for r in rows]) * wire
    tail = (
        f"{len(rows)} intervals (first left out): p50 {np.median(every) / 1e6:.2f}, max {every.max() / 1e6:.2f} "
        f"Mbit/s; {rwnd} closed with cwnd >= the peer's window; IP bytes = payload x {mtu}/{mss} (MTU / MSS)"
    )
    if len(busy) >= MIN_BUSY:
        r = np.array([b["bps"] for b in busy]) * wire
        est = _mean_bps(busy) * wire
        return Estimate.around(
            "rate",
            est,
            r.min(),
            r.max(),
            "bit/s",
            f"mean over {len(busy)} iperf3 intervals whose smoothed RTT stood above the ping's minimum by more "
            f"than 2J and {BURST_SEGMENTS} segment times (a queue at the bottleneck), their range as the "
            f"interval; of all {tail}",
        )
    est = _mean_bps(rows) * wire
    return Estimate.at_least(
        "rate",
        est,
        "bit/s",
        f"only {len(busy)} intervals ended with a standing queue: the flow did not saturate the link (loss, a "
        f"window or the application held it), so the mean over all intervals is a lower bound; of all {tail}",
    )


def fit_iperf3(doc: dict, ping, source: str = "iperf3") -> Fit:
    """Fit a checked iperf3 document (``read_iperf3``) with a pingparse.PingEstimate of the same
    path. Raises FitError."""
    rows = _intervals(doc)
    if len(rows) < MIN_INTERVALS:
        raise FitError(
            f"{source}: {len(rows)} usable intervals (need {MIN_INTERVALS}, the first is left out): run iperf3 "
            "longer (-t) or with shorter intervals (-i)"
        )
    base_s = ping.base_rtt_ms / 1e3
    if base_s <= 0:
        raise FitError("the ping's minimum RTT is 0: ping the path the iperf3 test crossed")
    jit_s = ping.jitter_ms / 1e3
    mtu, mss = _mss(doc, rows)
    rate = _rate(rows, base_s, jit_s, mtu, mss)

    p5 = (ping.rtt_p5_ms or ping.base_rtt_ms) / 1e3
    rtt = Estimate(
        "rtt",
        base_s,
        base_s,
        max(p5, base_s),
        "s",
        f"the ping's minimum of {ping.replies} replies {ping.base_rtt_ms:.3g} ms (to its p5 {p5 * 1e3:.3g} ms)",
    )
    jit_hi = jit_s / UNIFORM_P5_P95
    jitter = Estimate(
        "jitter",
        jit_s,
        jit_s,
        jit_hi if jit_hi > jit_s else None,
        "s",
        f"the ping's RTT (p95 - p5) / 2 = {jit_s * 1e3:.3g} ms, which is {UNIFORM_P5_P95:g} J for uniform ±J",
    )

    sent_bytes, retx = _sent(doc)
    segments = max(1, int(sent_bytes // mss))
    data_loss = retx / segments
    k, n = ping.sent - ping.replies, ping.sent
    q = k / n if n else 0.0
    lo, hi = wilson(k, n)
    cross = f"iperf3: {retx} retransmissions of about {segments} segments ({data_loss * 100:.3g} %)"
    loss_ev = f"the ping lost {k} of {n} ({q * 100:.3g} %; 95 % {lo * 100:.3g}-{hi * 100:.3g} %); {cross}"
    loss = LossFit(
        rate=Estimate("loss", q, min(lo, q), max(hi, q), "fraction", loss_ev),
        model="bernoulli" if k else "none",
        p=q,
        r=1.0 - q,
        lr_pvalue=1.0,
        evidence=loss_ev,
    )

    buffer = _buffer(rows, doc, base_s, jitter, rate, data_loss, q, retx)
    return Fit(_flow_name(doc), _duration(doc, rows), rate, rtt, buffer, loss, jitter)


def _sent(doc: dict) -> tuple[float, int]:
    ss = doc["end"].get("sum_sent") or {}
    if ss.get("bytes"):
        return float(ss["bytes"]), int(ss.get("retransmits", 0) or 0)
    ivs = [iv.get("sum", {}) for iv in doc["intervals"]]
    return float(sum(s.get("bytes", 0) for s in ivs)), int(sum(s.get("retransmits", 0) or 0 for s in ivs))


def _max_rtt_s(rows: list[dict], doc: dict) -> float:
    sampled = [r["rtt_s"] for r in rows if r["rtt_s"] is not None]
    ends = [st.get("sender", {}).get("max_rtt") for st in doc["end"].get("streams", [])]
    return max(sampled + [e / 1e6 for e in ends if e])


def _buffer(
    rows: list[dict],
    doc: dict,
    base_s: float,
    jitter: Estimate,
    rate: Estimate,
    data_loss: float,
    random_q: float,
    retx: int,
) -> Estimate:
    queue = max(_max_rtt_s(rows, doc) - base_s, 0.0)
    value = queue * rate.value / 8
    # most drops were not random when the data path lost at least twice what the ping did; a
    # link never shown saturated (rate open above) cannot have been filled by this flow
    filled = retx >= MIN_OVERFLOW_RETX and data_loss >= OVERFLOW_OVER_RANDOM * random_q and rate.hi is not None
    ev = (
        f"largest smoothed RTT - the ping's minimum = {queue * 1e3:.1f} ms x rate; data-path loss "
        f"{data_loss * 100:.3g} % vs the ping's {random_q * 100:.3g} %"
    )
    if not filled:
        return Estimate("buffer", value, value, None, "bytes", ev + ": no overflow shown, the buffer is at least this")
    # the ping's ±J moves the largest RTT either way; the rate's range carries over
    lo = max(queue - 2 * jitter.value, 0.0) * (rate.lo or rate.value) / 8
    hi = (queue + 2 * (jitter.hi or jitter.value)) * (rate.hi or rate.value) / 8
    return Estimate("buffer", value, min(lo, value), max(hi, value), "bytes", ev + ": overflowed")


def _flow_name(doc: dict) -> str:
    conns = doc["start"].get("connected") or []
    if not conns:
        return "iperf3"
    c = conns[0]
    name = f"{c.get('local_host')}:{c.get('local_port')}-{c.get('remote_host')}:{c.get('remote_port')}"
    return name if len(conns) == 1 else f"{name} (+{len(conns) - 1} streams)"


def _duration(doc: dict, rows: list[dict]) -> float:
    ss = doc["end"].get("sum_sent") or {}
    if ss.get("seconds"):
        return float(ss["seconds"])
    return float(sum(r["seconds"] for r in rows))


def fit_iperf3_file(path: Path, ping: Optional[Any]) -> Fit:
    """``read_iperf3`` then ``fit_iperf3``; ``ping`` None is refused (the base RTT, jitter and
    loss come from it)."""
    doc = read_iperf3(path)
    if ping is None:
        raise FitError(f"{path} is iperf3 JSON: the base RTT, jitter and loss need a saved ping of the same path")
    try:
        return fit_iperf3(doc, ping, str(path))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise FitError(f"{path}: iperf3 JSON with a field of an unexpected shape ({type(e).__name__}: {e})") from None
