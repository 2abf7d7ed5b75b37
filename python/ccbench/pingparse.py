"""Link figures from a saved iputils ``ping`` run (``ping HOST > ping.txt``, also ``ping -D``).

:func:`parse_ping` reads the text and returns a :class:`PingEstimate`:

* **base RTT** = the minimum RTT of the (non-duplicate) replies;
* **jitter** = (p95 − p5) / 2 of those RTTs (linear-interpolation percentiles): the ± amplitude
  of a delay that varies uniformly around its middle, which is how the simulator's ``jitter``
  is defined (netem-style ±jitter). For uniform ±J it gives 0.9·J; a single outlier does not
  move it. ``ipdv_ms`` (mean absolute difference of consecutive RTTs, RFC 3393-style) and ping's
  own ``mdev`` are reported beside it;
* **loss** = missing sequence numbers / the sequence range (max − min + 1 of every sequence
  number seen: replies, ``From ... icmp_seq=N ...`` errors, ``no answer yet for icmp_seq=N``).
  A sequence number is received when at least one reply carries it. Sequence numbers after
  the last one seen (packets still in flight when ping was stopped) are not counted, so the
  figure can be a little lower than the ``% packet loss`` of ping's summary, which is kept as
  ``summary_loss``.

Handled: ``[1763870000.101234]`` timestamps (``-D``), ``(DUP!)`` replies (counted once; their
RTTs, measured from the original send, are left out), ``time=0.041 ms``, ``time=101 ms``,
``time<1 ms``, error lines, the summary lines (``N packets transmitted, M received, +D
duplicates, +E errors, X% packet loss``; ``rtt min/avg/max/mdev = ...``), a last line cut off
without its newline (dropped: it may be cut in the middle of a number), and a 16-bit sequence
wrap (65535 → 0). Anything else is ignored.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

__all__ = ["PingEstimate", "PingParseError", "parse_ping", "parse_ping_file"]


class PingParseError(ValueError):
    """The text holds no ping reply with an RTT."""


_TS = r"^(?:\[(?P<ts>\d+(?:\.\d+)?)\]\s*)?"
_REPLY = re.compile(_TS + r"\d+ bytes from .*?icmp_seq=(?P<seq>\d+)(?P<rest>.*)$")
_TIME = re.compile(r"time\s*(?P<op>[=<])\s*(?P<t>\d+(?:\.\d+)?)\s*ms")
_ERROR = re.compile(_TS + r"From .*?icmp_seq=(?P<seq>\d+)")
_NOANSWER = re.compile(_TS + r"no answer yet for icmp_seq=(?P<seq>\d+)")
_SUMMARY = re.compile(
    r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) (?:packets )?received"
    r"(?:, \+(?P<dup>\d+) duplicates)?(?:, \+(?P<err>\d+) errors)?"
    r"(?:, (?P<loss>\d+(?:\.\d+)?)% packet loss)?"
)
_RTTLINE = re.compile(
    r"(?:rtt|round-trip) min/avg/max/(?:mdev|stddev) = "
    r"(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)/(?P<mdev>[\d.]+) ms"
)
_HEADER = re.compile(r"^PING (?P<host>\S+)")


@dataclass
class PingEstimate:
    """What a ping run says about the path (times in ms, loss as a fraction 0..1)."""

    base_rtt_ms: float
    jitter_ms: float
    loss: float
    replies: int  # distinct sequence numbers answered
    sent: int  # the sequence range (max - min + 1)
    missing: list[int] = field(default_factory=list)
    duplicates: int = 0
    errors: int = 0  # "From ... icmp_seq=N" lines (unreachable, TTL exceeded)
    rtt_p5_ms: Optional[float] = None
    rtt_p50_ms: Optional[float] = None
    rtt_p95_ms: Optional[float] = None
    rtt_max_ms: Optional[float] = None
    ipdv_ms: Optional[float] = None  # mean |RTT_i - RTT_{i-1}| over consecutive replies
    host: Optional[str] = None
    timestamps: bool = False  # the lines carried -D timestamps
    span_s: Optional[float] = None  # first to last -D timestamp
    truncated: bool = False  # a cut-off last line was dropped
    summary_sent: Optional[int] = None
    summary_received: Optional[int] = None
    summary_loss: Optional[float] = None
    summary_mdev_ms: Optional[float] = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        return (
            f"base RTT {self.base_rtt_ms:.3g} ms (minimum), jitter ±{self.jitter_ms:.3g} ms "
            f"((p95-p5)/2), loss {self.loss * 100:.3g} % ({self.sent - self.replies} of {self.sent} "
            f"sequence numbers missing), {self.replies} replies"
            + (f", {self.duplicates} duplicates" if self.duplicates else "")
        )


def _unwrap(seqs: list[int]) -> list[int]:
    """Undo the 16-bit icmp_seq wrap: a drop by more than half the space is a wrap."""
    out, offset, prev = [], 0, None
    for s in seqs:
        if prev is not None and s + offset < prev - 32768:
            offset += 65536
        v = s + offset
        out.append(v)
        prev = v
    return out


def parse_ping(text: str) -> PingEstimate:
    """Parse iputils ping output (see the module docstring). Raises PingParseError when no
    reply with an RTT is found."""
    lines = text.splitlines()
    truncated = False
    if lines and not text.endswith(("\n", "\r")):
        last = lines[-1]
        complete_reply = _REPLY.match(last.strip()) and _TIME.search(last)
        if last.strip() and not complete_reply and not _SUMMARY.search(last) and not _RTTLINE.search(last):
            lines = lines[:-1]
            truncated = True
    events: list[tuple[str, int, Optional[float], bool]] = []  # (kind, seq, rtt, dup)
    host = None
    stamps: list[float] = []
    summary = rttline = None
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if host is None and (m := _HEADER.match(line)):
            host = m.group("host")
            continue
        if m := _REPLY.match(line):
            if m.group("ts"):
                stamps.append(float(m.group("ts")))
            t = _TIME.search(m.group("rest"))
            rtt = float(t.group("t")) if t else None
            events.append(("reply", int(m.group("seq")), rtt, "DUP!" in m.group("rest")))
            continue
        if m := _ERROR.match(line):
            if m.group("ts"):
                stamps.append(float(m.group("ts")))
            events.append(("error", int(m.group("seq")), None, False))
            continue
        if m := _NOANSWER.match(line):
            if m.group("ts"):
                stamps.append(float(m.group("ts")))
            events.append(("noanswer", int(m.group("seq")), None, False))
            continue
        if m := _SUMMARY.search(line):
            summary = m
            continue
        if m := _RTTLINE.search(line):
            rttline = m
    if not events:
        raise PingParseError(
            "no ping replies found (expected lines such as '64 bytes from HOST: icmp_seq=1 ttl=56 time=48.6 ms')"
        )
    seqs = _unwrap([e[1] for e in events])
    received: set[int] = set()
    seen: set[int] = set()
    rtts: list[float] = []
    duplicates = errors = 0
    notes: list[str] = []
    for (kind, _, rtt, dup), seq in zip(events, seqs):
        seen.add(seq)
        if kind == "error":
            errors += 1
            continue
        if kind != "reply":
            continue
        if dup or seq in received:
            duplicates += 1
            continue
        received.add(seq)
        if rtt is not None:
            rtts.append(rtt)
    if not rtts:
        raise PingParseError("no ping reply with a time=... ms value found")
    lo, hi = min(seen), max(seen)
    sent = hi - lo + 1
    missing = sorted(set(range(lo, hi + 1)) - received)
    x = np.asarray(rtts, dtype=float)
    p5, p50, p95 = (float(v) for v in np.percentile(x, [5, 50, 95]))
    if len(rtts) < 10:
        notes.append(f"only {len(rtts)} RTTs: the jitter estimate is rough (ping for 30 s or more)")
    if truncated:
        notes.append("the last line was cut off and has been ignored")
    if duplicates:
        notes.append(f"{duplicates} duplicate replies counted once; their RTTs left out")
    est = PingEstimate(
        base_rtt_ms=float(x.min()),
        jitter_ms=(p95 - p5) / 2.0,
        loss=len(missing) / sent,
        replies=len(received),
        sent=sent,
        missing=missing,
        duplicates=duplicates,
        errors=errors,
        rtt_p5_ms=p5,
        rtt_p50_ms=p50,
        rtt_p95_ms=p95,
        rtt_max_ms=float(x.max()),
        ipdv_ms=float(np.mean(np.abs(np.diff(x)))) if x.size > 1 else None,
        host=host,
        timestamps=bool(stamps),
        span_s=(max(stamps) - min(stamps)) if len(stamps) > 1 else None,
        truncated=truncated,
        notes=notes,
    )
    if summary is not None:
        est.summary_sent = int(summary.group("tx"))
        est.summary_received = int(summary.group("rx"))
        if summary.group("loss") is not None:
            est.summary_loss = float(summary.group("loss")) / 100.0
    if rttline is not None:
        est.summary_mdev_ms = float(rttline.group("mdev"))
    return est


def parse_ping_file(path: str | Path) -> PingEstimate:
    p = Path(path)
    try:
        text = p.read_text(errors="replace")
    except OSError as e:
        raise PingParseError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        return parse_ping(text)
    except PingParseError as e:
        raise PingParseError(f"{path}: {e}") from None
