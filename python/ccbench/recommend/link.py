"""The link recommend answers for, and its neighbourhood.

A link comes from the command line's figures (``link_from_options``, optionally with a saved
``ping``) or from a scenario file (``link_from_scenario``: Wi-Fi hops, delivery traces, AQMs,
access links, competing flows). Either way it holds a TOML-shaped scenario (``Link.base``) whose
first ``[[flows]]`` group is the user's flows (its ``cc`` is replaced by each candidate) and the
others the competing traffic.

The input space recommend covers (docs/recommend.md "Limits") is checked here, before anything
runs: a figure outside it is refused in one line naming the user's own flag (or the file's key)
and the limit. The neighbourhood varies one figure at a time (rate ×0.8/×1.25, loss ×0.5/×2,
jitter ×0.5/×1.5), or, for a link fitted from a measurement (``Link.intervals``), to the ends of
the fit's interval of each figure, a side without a usable end taking the fixed factor; a
variant that would leave the input space is clipped to its edge and the clip is noted, and one
clipped back onto the stated value is dropped.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .. import units
from ..scenario.errors import ScenarioError
from ..scenario.model import DEFAULT_RWND_BYTES, Scenario
from ..scenario.parse import parse_toml, read_toml_text
from .algorithms import NAMES, UNMODELLED_BBR, cc_name, unmodelled_text
from .errors import RecommendError

#: The input space recommend answers in (docs/recommend.md "Limits").
MIN_RATE_BPS, MAX_RATE_BPS = 100_000, 10_000_000_000
MIN_RTT_S, MAX_RTT_S = 100e-6, 1.0
MAX_LOSS = 0.20
MIN_BUFFER_BDP, MAX_BUFFER_BDP = 0.1, 100.0
#: jitter (uniform): at most half the RTT, the one-way delay it varies (the scenario's own rule)

#: A run lasts 15 s, or 30 base RTTs on a long path (a satellite hop's 600 ms: 18 s), so that
#: every algorithm is past its start-up for most of the run.
DEFAULT_RUN_S, DEFAULT_RUN_RTTS = 15.0, 30
#: The budget may shorten runs on fast links, never below 3 s and 10 base RTTs.
MIN_RUN_S, MIN_RUN_RTTS = 3.0, 10

#: the default neighbourhood: figure -> factors applied to the stated value
BAND = {"rate": (0.8, 1.25), "loss": (0.5, 2.0), "jitter": (0.5, 1.5)}

#: scenario key -> the figure it holds (for naming a problem by the user's flag)
_KEY_FIGURE = {
    "bottleneck.rate": "rate",
    "bottleneck.rtt": "rtt",
    "bottleneck.loss": "loss",
    "bottleneck.jitter": "jitter",
    "bottleneck.buffer": "buffer",
    "bottleneck.aqm": "aqm",
    "bottleneck.reorder": "reorder",
    "duration": "duration",
}
FLAGS = {
    "cc": "--cc",
    "rate": "--rate",
    "rtt": "--rtt",
    "loss": "--loss",
    "jitter": "--jitter",
    "buffer": "--buffer",
    "aqm": "--aqm",
    "reorder": "--reorder",
    "duration": "--duration",
    "flows": "--flows",
    "competing": "--competing",
}


# --------------------------------------------------------------------------------------------
# exact text forms of the numbers written into scenarios (errors quote them back to the user)


def time_text(seconds: float) -> str:
    """Whole nanoseconds in the largest unit that holds them exactly: 0.015 -> "15ms"."""
    ns = int(round(seconds * 1e9))
    for unit, mul in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % mul == 0:
            return f"{ns // mul}{unit}"
    return f"{ns}ns"


def rate_text(bps: float) -> str:
    """Whole bits per second in the largest unit that holds them exactly: 1.25e9 -> "1250Mbit"."""
    b = int(round(bps))
    for unit, mul in (("Gbit", 10**9), ("Mbit", 10**6), ("kbit", 10**3)):
        if b % mul == 0:
            return f"{b // mul}{unit}"
    return f"{b}bit"


def loss_text(fraction: float) -> str:
    return f"{fraction * 100:.6g}%"


def delay_text(ms: float) -> str:
    """A delay for people: µs below 1 ms (a data-centre RTT), else ms."""
    if ms < 1.0:
        return f"{ms * 1e3:.3g} µs"
    return f"{ms:.3g} ms" if ms < 1000 else f"{ms:.0f} ms"


# --------------------------------------------------------------------------------------------
# the link


@dataclass
class Link:
    rate_bps: float
    rtt_s: float  # base RTT of the path (bottleneck rtt + access delays)
    loss: float = 0.0  # fraction 0..1 (Bernoulli on data packets)
    jitter_s: float = 0.0  # ± amplitude, uniform, per packet (netem-style)
    buffer: str = "1bdp"
    aqm: str = "droptail"
    flows: int = 1
    competing: list = field(default_factory=list)  # [(cc, count)]
    #: simulated length of each run; None: DEFAULT_RUN_S or DEFAULT_RUN_RTTS base RTTs
    duration_s: Optional[float] = None
    reorder: bool = True  # jitter reorders packets (netem) or keeps their order
    #: the TOML-shaped scenario the runs are built from (None: from the figures above)
    scenario: Optional[dict] = None
    #: the file the scenario came from (errors name it; trace paths are relative to it)
    source: str = "recommend"
    #: figure -> how the user gave it, for errors: "--rate" or "link.toml: bottleneck.rate"
    origin: dict = field(default_factory=dict)
    #: figures the neighbourhood cannot vary here -> why (a trace sets the rate, ...)
    fixed: dict = field(default_factory=dict)
    #: the largest jitter the link takes (uniform: half the bottleneck's rtt); None: no cap
    jitter_max_s: Optional[float] = None
    #: the queue discipline's parameters, defaults filled in (shown, not written into runs)
    aqm_params: dict = field(default_factory=dict)
    #: the scenario's description of a link the figures do not cover (Wi-Fi hop, trace, access)
    extra: list = field(default_factory=list)
    #: figure -> (low, high) ends of a fit's interval (None: open on that side); the
    #: neighbourhood goes to these ends instead of the BAND factors (fitband.py)
    intervals: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.jitter_max_s is None and self.scenario is None:
            self.jitter_max_s = self.rtt_s / 2

    @property
    def run_s(self) -> float:
        """The simulated length of one run."""
        if self.duration_s is not None:
            return self.duration_s
        return max(DEFAULT_RUN_S, DEFAULT_RUN_RTTS * self.rtt_s)

    def min_run_s(self) -> float:
        """The shortest run the budget may shorten to (and never longer than the stated one)."""
        floor = max(MIN_RUN_S, MIN_RUN_RTTS * self.rtt_s, self._last_start_s() + MIN_RUN_S)
        return min(self.run_s, floor)

    def _last_start_s(self) -> float:
        last = 0.0
        for g in (self.scenario or {}).get("flows", []):
            try:
                start, step = units.parse_start(g.get("start", "0s"))
            except (units.UnitError, ValueError):
                continue
            last = max(last, (start + (int(g.get("count", 1)) - 1) * step) / 1e9)
        return last

    def name(self, figure: str) -> str:
        """How to name ``figure`` to the user: their flag, or the file's key."""
        if figure in self.origin:
            return self.origin[figure]
        if self.scenario is not None and self.source != "recommend":
            key = next((k for k, f in _KEY_FIGURE.items() if f == figure), figure)
            return f"{self.source}: {key}"
        return FLAGS.get(figure, figure)

    def buffer_bytes(self) -> Optional[int]:
        """The physical buffer of the stated link in bytes (kept when the rate is varied);
        None for a packet-count buffer (kept as packets)."""
        spec = units.parse_buffer(self.buffer)
        if spec.kind == "bdp":
            return max(1500, int(round(spec.value * self.rate_bps * self.rtt_s / 8)))
        if spec.kind == "bytes":
            return int(spec.value)
        return None

    def buffer_bdp(self) -> float:
        b = self.buffer_bytes()
        if b is None:
            b = units.parse_buffer(self.buffer).value * 1500
        return b / (self.rate_bps * self.rtt_s / 8)

    def base(self) -> dict:
        """The TOML-shaped scenario of the stated link (flows.0.cc is a placeholder)."""
        if self.scenario is not None:
            return self.scenario
        bb: dict[str, Any] = {"rate": rate_text(self.rate_bps), "rtt": time_text(self.rtt_s), "aqm": self.aqm}
        if self.loss > 0:
            bb["loss"] = loss_text(self.loss)
        if self.jitter_s > 0:
            bb["jitter"] = time_text(self.jitter_s)
            if not self.reorder:
                bb["reorder"] = False
        b = self.buffer_bytes()
        bb["buffer"] = f"{b}B" if b is not None else self.buffer
        flows = [{"cc": "cubic", "count": self.flows}] + [{"cc": c, "count": n} for c, n in self.competing]
        return {"name": "recommend", "bottleneck": bb, "flows": flows}

    def describe(self) -> str:
        parts = [
            units.format_rate(self.rate_bps),
            f"RTT {units.format_time(self.rtt_s)}",
            f"loss {self.loss * 100:g} %",
        ]
        if self.jitter_s:
            parts.append(f"jitter ±{units.format_time(self.jitter_s)}" + ("" if self.reorder else " (no reordering)"))
        else:
            parts.append("no jitter")
        parts += [
            f"buffer {self.buffer} ({self.buffer_bdp():.3g} BDP)",
            self.aqm,
            f"{self.flows} flow{'s' if self.flows != 1 else ''}",
        ]
        if self.competing:
            parts.append("competing " + ", ".join(f"{n}× {cc_name(c)}" for c, n in self.competing))
        parts += self.extra
        return ", ".join(parts)

    def as_dict(self) -> dict:
        return {
            "rate_bps": self.rate_bps,
            "rtt_ms": self.rtt_s * 1e3,
            "loss": self.loss,
            "jitter_ms": self.jitter_s * 1e3,
            "reorder": self.reorder,
            "buffer": self.buffer,
            "buffer_bdp": self.buffer_bdp(),
            "aqm": self.aqm,
            "aqm_params": dict(self.aqm_params),
            "flows": self.flows,
            "competing": [{"cc": c, "count": n} for c, n in self.competing],
            "duration_s": self.run_s,
            "scenario": self.source if self.scenario is not None and self.source != "recommend" else None,
        }


@dataclass
class Point:
    """One link variant: the stated link or a neighbour (one figure scaled by ``factor``)."""

    label: str
    axis: Optional[str]  # None for the stated link; rate | loss | jitter
    factor: float
    rate_bps: float
    loss: float
    jitter_s: float
    #: where the variant's value came from: "stated", "band" (a fixed factor) or "fit interval"
    source: str = "stated"

    def value(self, axis: Optional[str] = None) -> float:
        """The point's value of ``axis`` (default: the axis it varies)."""
        return {"rate": self.rate_bps, "loss": self.loss, "jitter": self.jitter_s}.get(axis or self.axis, 0.0)

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "axis": self.axis,
            "factor": self.factor,
            "rate_bps": self.rate_bps,
            "loss": self.loss,
            "jitter_ms": self.jitter_s * 1e3,
            "source": self.source,
        }


def fmt_axis(axis: str, v: float) -> str:
    if axis == "rate":
        return units.format_rate(round(v))
    if axis == "loss":
        return f"{v * 100:.3g} %"
    return f"±{delay_text(v * 1e3)}"


def point_at(link: Link, axis: Optional[str], value: Optional[float] = None, source: str = "band") -> Point:
    """The variant of ``link`` with ``axis`` at ``value`` (the stated link for axis None)."""
    rate, loss, jit = link.rate_bps, link.loss, link.jitter_s
    if axis is None:
        return Point("stated link", None, 1.0, rate, loss, jit)
    stated = {"rate": rate, "loss": loss, "jitter": jit}[axis]
    if axis == "rate":
        rate = value
    elif axis == "loss":
        loss = value
    else:
        jit = value
    factor = value / stated if stated else 1.0
    return Point(f"{axis} {fmt_axis(axis, value)}", axis, factor, rate, loss, jit, source)


def _limits(link: Link) -> dict[str, tuple[float, float]]:
    """The range each varied figure must stay in."""
    jmax = link.jitter_max_s if link.jitter_max_s is not None else float("inf")
    return {"rate": (MIN_RATE_BPS, MAX_RATE_BPS), "loss": (0.0, MAX_LOSS), "jitter": (0.0, jmax)}


@dataclass(frozen=True)
class _Target:
    """One neighbour asked for: the value, what it is called in notes, where it came from."""

    want: float
    what: str  # "×0.8" or "at the fit's low end"
    up: bool
    source: str


def _targets(link: Link, axis: str, factors: Sequence[float], stated: float, notes: Optional[list]) -> list[_Target]:
    """The neighbours of one figure: the BAND factors, or the fit's interval ends where the
    link has them (an end missing or not beyond the stated value falls back to the factor on
    that side, noted). A stated 0 cannot be scaled: only a fit's end above it varies it."""
    ends = link.intervals.get(axis)
    out: list[_Target] = []
    for f in factors:
        f = float(f)
        if f == 1.0:
            continue
        up = f > 1
        side = "high" if up else "low"
        if ends is not None:
            end = ends[1] if up else ends[0]
            if end is not None:  # to 4 significant digits, as the fitted scenario writes figures
                end = float(f"{end:.4g}")
            if end is not None and (end > stated if up else end < stated):
                out.append(_Target(end, f"at the fit's {side} end", up, "fit interval"))
                continue
            if notes is not None and (stated or up):
                if end is None:
                    why = f"is open {'above' if up else 'below'}"
                else:
                    why = f"has its {side} end on the fitted value ({fmt_axis(axis, end)})"
                if stated:
                    notes.append(f"the fit's {axis} interval {why}: the neighbour there is the fixed ×{f:g}")
                else:
                    notes.append(f"the fit's {axis} interval {why}: {axis} 0 is not varied up")
        if stated:
            out.append(_Target(stated * f, f"×{f:g}", up, "band"))
    return out


def neighbourhood(
    link: Link, band: Mapping[str, Sequence[float]] | None = None, notes: Optional[list] = None
) -> list[Point]:
    """The stated link, then one point per (figure, factor) of ``band`` whose stated value is
    not 0 (a loss-free or jitter-free link stays so: a 0 cannot be scaled) and that the link
    lets vary. A fitted link's figures go to their interval ends instead (``_targets``). A
    variant beyond the input space is clipped to its edge; one that the clip puts back on the
    stated value is left out. What was clipped or left out goes to ``notes``."""
    band = BAND if band is None else band
    pts = [point_at(link, None)]
    stated = {"rate": link.rate_bps, "loss": link.loss, "jitter": link.jitter_s}
    lim = _limits(link)
    for axis, factors in band.items():
        if not stated.get(axis) and axis not in link.intervals:
            continue
        if axis in link.fixed:
            if notes is not None:
                notes.append(f"{axis} is not varied: {link.fixed[axis]}")
            continue
        lo, hi = lim[axis]
        for t in _targets(link, axis, factors, stated[axis], notes):
            got = min(max(t.want, lo), hi)
            if got == stated[axis]:
                if notes is not None:
                    notes.append(
                        f"the neighbour {axis} {t.what} ({fmt_axis(axis, t.want)}) is outside what "
                        f"recommend covers ({_edge_text(axis, lo, hi, t.want)}): {axis} is not varied "
                        f"{'up' if t.up else 'down'}"
                    )
                continue
            if got != t.want and notes is not None:
                notes.append(
                    f"the neighbour {axis} {t.what} is clipped to {fmt_axis(axis, got)} "
                    f"({_edge_text(axis, lo, hi, t.want)})"
                )
            pts.append(point_at(link, axis, got, t.source))
    return pts


def _edge_text(axis: str, lo: float, hi: float, want: float) -> str:
    if want > hi:
        return f"at most {fmt_axis(axis, hi)}" + (" (half the RTT)" if axis == "jitter" else "")
    return f"at least {fmt_axis(axis, lo)}"


def scenario_dict(link: Link, point: Point, cc: str, seed: int) -> dict:
    """The TOML-shaped scenario of one candidate at one point."""
    d = copy.deepcopy(link.base())
    d["name"] = "recommend"
    d["seed"] = int(seed)
    d["duration"] = time_text(link.run_s)
    d.pop("sweep", None)
    bb = d.setdefault("bottleneck", {})
    if point.axis == "rate":
        bb["rate"] = rate_text(point.rate_bps)
    elif point.axis == "loss":
        bb["loss"] = loss_text(point.loss)
    elif point.axis == "jitter":
        bb["jitter"] = time_text(point.jitter_s)
    d["flows"][0]["cc"] = cc
    return d


def validate(link: Link, point: Point, cc: str, seed: int = 1) -> Scenario:
    """The Scenario of one candidate at one point; a problem is a RecommendError naming the
    user's flag (or the file's key) and, for a neighbour, the variant."""
    raw = scenario_dict(link, point, cc, seed)
    try:
        return Scenario.from_dict(raw, source=link.source)
    except ScenarioError as e:
        raise translate(link, e, point) from None


def _figure_of(key: str) -> Optional[str]:
    """The figure a scenario key holds (None for keys only a scenario file sets)."""
    if key in _KEY_FIGURE:
        return _KEY_FIGURE[key]
    if key.startswith("bottleneck.aqm_params"):
        return "aqm"
    parts = key.split(".")
    if parts[0] == "flows" and len(parts) > 1:
        if parts[1] == "0":
            return "cc" if parts[2:3] == ["cc"] else "flows"
        return "competing"
    return None


def translate(link: Link, e: ScenarioError, point: Optional[Point] = None) -> RecommendError:
    """A scenario problem in the user's terms: the flag that set the key (or the file's key),
    and which neighbourhood variant, if any, broke it."""
    key = e.key or ""
    fig = _figure_of(key)
    if fig is not None and fig in link.origin:
        name = link.origin[fig]
    elif link.scenario is not None and link.source != "recommend":
        name = f"{link.source}: {key}" if key else link.source
    else:
        name = FLAGS.get(fig or "", key or "link")
    where = ""
    if point is not None and point.axis is not None:
        where = f"the neighbourhood variant '{point.label}' of your link: "
    return RecommendError(name, where + e.problem, e.expected)


# --------------------------------------------------------------------------------------------
# the input space


def check_limits(link: Link) -> None:
    """Refuse a stated link outside the input space recommend covers, naming the user's flag."""
    r = link.rate_bps
    if not MIN_RATE_BPS <= r <= MAX_RATE_BPS:
        raise RecommendError(
            link.name("rate"), f"{units.format_rate(r)} is outside the rates recommend covers", "100kbit to 10Gbit"
        )
    if not MIN_RTT_S <= link.rtt_s <= MAX_RTT_S:
        raise RecommendError(
            link.name("rtt"),
            f"a base RTT of {units.format_time(link.rtt_s)} is outside the RTTs recommend covers",
            "100us to 1s",
        )
    if not 0 <= link.loss <= MAX_LOSS:
        raise RecommendError(
            link.name("loss"), f"{link.loss * 100:g} % is above the loss recommend covers", "0% to 20%"
        )
    if link.jitter_s < 0 or (link.jitter_max_s is not None and link.jitter_s > link.jitter_max_s):
        raise RecommendError(
            link.name("jitter"),
            f"±{units.format_time(link.jitter_s)} is more than half the RTT",
            f"0 to {units.format_time(link.jitter_max_s or 0)} (half the RTT)",
        )
    if "rate" not in link.fixed:
        spec = units.parse_buffer(link.buffer)
        bdp_bytes = link.rate_bps * link.rtt_s / 8
        held = link.buffer_bytes() if spec.kind != "packets" else spec.value * 1500
        # a BDP-sized buffer is checked as stated; one in bytes or packets by what it holds, where
        # ten packets are always allowed (a short path's BDP can be below one packet)
        bdp = spec.value if spec.kind == "bdp" else held / bdp_bytes
        high = spec.kind != "bdp" and held <= 10 * 1500
        if not (MIN_BUFFER_BDP * (1 - 1e-9) <= bdp <= MAX_BUFFER_BDP * (1 + 1e-9) or high and bdp >= MIN_BUFFER_BDP):
            raise RecommendError(
                link.name("buffer"),
                f"{link.buffer} is {bdp:.3g} BDP on this link",
                "0.1bdp to 100bdp (or the same in bytes or packets)",
            )


def _parse(fn, v, flag, form):
    try:
        return fn(v)
    except (units.UnitError, ValueError) as e:
        raise RecommendError(flag, f"{v!r}: {getattr(e, 'problem', e)}", form) from None


def parse_bool(v: Optional[str], flag: str) -> Optional[bool]:
    if v is None:
        return None
    t = str(v).strip().lower()
    if t in ("true", "yes", "on", "1"):
        return True
    if t in ("false", "no", "off", "0"):
        return False
    raise RecommendError(flag, f"{v!r} is not true or false", "true or false")


def check_cc_name(cc: str, flag: str) -> None:
    if cc in UNMODELLED_BBR:
        raise RecommendError(flag, f"'{cc}': {unmodelled_text(cc)}", "one of " + ", ".join(NAMES))


def parse_competing(text: Optional[str]) -> list[tuple[str, int]]:
    """``cubic`` | ``2xcubic`` | ``cubic:2`` | ``cubic,bbr`` -> [(cc, count)]."""
    if not text:
        return []
    out: list[tuple[str, int]] = []
    for part in text.split(","):
        p = part.strip().lower()
        if not p:
            continue
        m = re.fullmatch(r"(?:(\d+)\s*[x×*]\s*)?([a-z][a-z0-9_]*)(?:\s*[:*]\s*(\d+))?", p)
        if not m:
            raise RecommendError(
                "--competing",
                f"{part!r} is not an algorithm with an optional count",
                "e.g. cubic, 2xcubic, cubic:2 or cubic,bbr",
            )
        n = int(m.group(1) or m.group(3) or 1)
        if n < 1 or n > 100:
            raise RecommendError("--competing", f"{part!r}: count {n} out of range", "1 to 100 flows")
        check_cc_name(m.group(2), "--competing")
        out.append((m.group(2), n))
    return out


def _check_flows(flows: int) -> None:
    if flows < 1 or flows > 100:
        raise RecommendError("--flows", f"{flows} out of range", "1 to 100")


def _check_duration(link: Link) -> None:
    if link.duration_s is None:
        return
    least = MIN_RUN_RTTS * link.rtt_s
    if link.duration_s < least:
        raise RecommendError(
            link.name("duration"),
            f"{units.format_time(link.duration_s)} is under "
            f"{MIN_RUN_RTTS} base RTTs ({units.format_time(least)}): too short to compare "
            "algorithms",
            f"at least {units.format_time(least)}",
        )


def _window_note(link: Link, rwnd: int) -> Optional[str]:
    """A note when the receive window, not the link, caps the user's flows."""
    cap = link.flows * rwnd * 8 / link.rtt_s
    if cap < 0.9 * link.rate_bps:
        return (
            f"your {link.flows} flow{'s' if link.flows != 1 else ''} with a {rwnd / 2**20:.3g} MiB receive "
            f"window carry at most {units.format_rate(cap)} over a {units.format_time(link.rtt_s)} RTT, below "
            f"the link's {units.format_rate(link.rate_bps)}: the comparison is of window-limited flows "
            "(an untouched Linux host's: its default tcp_rmem maximum of 6 MiB; set flows rwnd in a "
            "--scenario file for tuned hosts)"
        )
    return None


def _jitter_notes(link: Link, from_ping: bool) -> list[str]:
    if not link.jitter_s:
        return []
    if link.reorder:
        text = (
            f"jitter ±{units.format_time(link.jitter_s)} is modelled as netem's: each data packet's delay is "
            "drawn independently, so packets reorder; --reorder false keeps their order (delay variation "
            "like queueing behind cross traffic)"
        )
    else:
        text = (
            f"jitter ±{units.format_time(link.jitter_s)} without reordering: packets keep their order "
            "(delay variation like queueing behind cross traffic)"
        )
    if from_ping and link.reorder:
        text += (
            "; ping's RTT spread on a real path is often queueing from cross traffic, which does not "
            "reorder: run again with --reorder false to see whether the answer depends on it"
        )
    return [text]


def _checked(link: Link, rwnd: int, from_ping: bool) -> list[str]:
    """Refuse a link outside the input space or a run too short for it; the notes its figures
    call for (how jitter is modelled, a receive window that caps the flows)."""
    check_limits(link)
    _check_duration(link)
    notes = _jitter_notes(link, from_ping)
    if (w := _window_note(link, rwnd)) is not None:
        notes.append(w)
    return notes


def link_from_options(
    *,
    rate: Optional[str],
    rtt: Optional[str],
    loss: Optional[str] = None,
    jitter: Optional[str] = None,
    buffer: Optional[str] = None,
    aqm: Optional[str] = None,
    flows: Optional[int] = None,
    competing: Optional[str] = None,
    duration: Optional[str] = None,
    reorder: Optional[str] = None,
    ping=None,
) -> tuple[Link, list[str]]:
    """Build the Link from the command-line figures (and a PingEstimate). Returns (link, notes)."""
    notes: list[str] = []
    rtt_s = jitter_s = loss_f = None
    if ping is not None:
        rtt_s = ping.base_rtt_ms / 1e3
        jitter_s = ping.jitter_ms / 1e3
        loss_f = ping.loss
        notes.append("from the ping file: " + ping.describe())
        notes += [f"ping: {n}" for n in ping.notes]
        if rtt_s <= 0:
            raise RecommendError("--ping", "the minimum RTT in the ping file is 0", "a ping over a real path")
    origin = {}
    if rtt is not None:
        rtt_s = _parse(units.parse_time, rtt, "--rtt", units.TIME_FORM)
    elif ping is not None:
        origin["rtt"] = "--ping (its minimum RTT)"
    if jitter is not None:
        jitter_s = _parse(units.parse_time, jitter, "--jitter", units.TIME_FORM)
    elif ping is not None:
        origin["jitter"] = "--ping (its RTT spread; --jitter to override)"
    if loss is not None:
        loss_f = _parse(units.parse_percent, loss, "--loss", units.PERCENT_FORM)
    elif ping is not None:
        origin["loss"] = "--ping (its lost replies; --loss to override)"
    if rtt_s is None:
        raise RecommendError("--rtt", "no RTT given", "--rtt 50ms, or --ping FILE")
    if rtt_s <= 0:
        raise RecommendError("--rtt", f"{rtt!r} is not positive", units.TIME_FORM)
    if rate is None:
        if ping is None:
            raise RecommendError("--rate", "no rate given", units.RATE_FORM)
        rate_bps = 50e6
        notes.append("no --rate: assuming 50 Mbit/s (ping cannot measure the bottleneck's capacity)")
    else:
        rate_bps = float(_parse(units.parse_rate, rate, "--rate", units.RATE_FORM))
    buffer = buffer if buffer is not None else "1bdp"
    _parse(units.parse_buffer, buffer, "--buffer", units.BUFFER_FORM)
    dur = _parse(units.parse_time, duration, "--duration", units.TIME_FORM) if duration is not None else None
    flows = 1 if flows is None else flows
    _check_flows(flows)
    comp = parse_competing(competing)
    reo = parse_bool(reorder, "--reorder")
    link = Link(
        rate_bps=rate_bps,
        rtt_s=rtt_s,
        loss=loss_f or 0.0,
        jitter_s=jitter_s or 0.0,
        buffer=buffer,
        aqm=aqm or "droptail",
        flows=flows,
        competing=comp,
        duration_s=dur,
        reorder=True if reo is None else reo,
        origin=origin,
    )
    return link, notes + _checked(link, DEFAULT_RWND_BYTES, from_ping=ping is not None)


def link_from_scenario(
    path: str | Path,
    *,
    rate: Optional[str] = None,
    rtt: Optional[str] = None,
    loss: Optional[str] = None,
    jitter: Optional[str] = None,
    buffer: Optional[str] = None,
    aqm: Optional[str] = None,
    flows: Optional[int] = None,
    competing: Optional[str] = None,
    duration: Optional[str] = None,
    reorder: Optional[str] = None,
) -> tuple[Link, list[str]]:
    """The link of a scenario file: its bottleneck (wire, Wi-Fi or trace; any AQM), access links,
    probe and flows. Its first [[flows]] group is the user's flows (each candidate in turn), the
    other groups the competing traffic. Flags given beside the file override its values; its
    [sweep] table and seed are not used. Returns (link, notes)."""
    source = str(path)
    raw = parse_toml(read_toml_text(Path(path), "a path to a scenario .toml file"), source)
    notes: list[str] = []
    if "sweep" in raw:
        raw.pop("sweep")
        notes.append("the scenario's [sweep] table is not used: recommend chooses the runs")
    raw.pop("seed", None)
    origin: dict[str, str] = {}  # figure -> the flag that overrides the file
    # (a bottleneck that is not a table is left for the scenario's own check to name)
    bb = raw.setdefault("bottleneck", {}) if isinstance(raw.get("bottleneck", {}), dict) else {}
    given = {"rate": rate, "rtt": rtt, "loss": loss, "jitter": jitter, "buffer": buffer, "aqm": aqm}
    for fig, v in given.items():
        if v is not None:
            bb[fig] = v
            origin[fig] = FLAGS[fig]
    reo = parse_bool(reorder, "--reorder")
    if reo is not None:
        bb["reorder"] = reo
        origin["reorder"] = "--reorder"
    fl = raw.get("flows")
    if not isinstance(fl, list) or not fl or not isinstance(fl[0], dict):
        raise RecommendError(
            f"{source}: flows", "no [[flows]] table: the first group is your flows", "at least one [[flows]] table"
        )
    if flows is not None:
        _check_flows(flows)
        fl[0]["count"] = flows
        origin["flows"] = "--flows"
    if competing is not None:
        raw["flows"] = [fl[0]] + [{"cc": c, "count": n} for c, n in parse_competing(competing)]
        origin["competing"] = "--competing"
    if duration is not None:
        raw["duration"] = duration
        origin["duration"] = "--duration"
    for g in raw["flows"]:
        if isinstance(g, dict) and isinstance(g.get("cc"), str):
            check_cc_name(g["cc"].strip().lower(), origin.get("competing", f"{source}: flows"))
    probe = Link(rate_bps=1.0, rtt_s=1.0, scenario=raw, source=source, origin=origin)
    try:
        sc = Scenario.from_dict(raw, source=source)
    except ScenarioError as e:
        raise translate(probe, e) from None
    b = sc.bottleneck
    fixed: dict[str, str] = {}
    extra: list[str] = []
    if b.trace:
        fixed["rate"] = f"the delivery trace '{b.trace}' sets it"
        extra.append(f"trace {b.trace} (mean {units.format_rate(b.rate_bps)})")
    if b.link == "wifi":
        fixed["rate"] = "the Wi-Fi hop's PHY rate sets it"
        extra.append("Wi-Fi hop")
    if sc.access.delay_s or getattr(sc.access, "rate_bps", None):
        extra.append("access links")
    loss_f = 0.0
    if b.loss.model == "bernoulli":
        loss_f = float(b.loss.p or 0.0)
    elif b.loss.model == "gilbert":
        fixed["loss"] = "Gilbert-Elliott loss is kept as the file gives it"
        extra.append("Gilbert-Elliott loss")
    buf = b.buffer
    buf_text = {"bdp": f"{buf.value:g}bdp", "bytes": f"{int(buf.value)}B", "packets": f"{int(buf.value)}pkt"}[buf.kind]
    if buf.kind == "bdp" and "rate" not in fixed:
        # a neighbour with another rate keeps the same physical buffer
        raw["bottleneck"]["buffer"] = f"{sc.buffer_bytes}B"
    dur = sc.duration_s if "duration" in raw else None
    link = Link(
        rate_bps=float(b.rate_bps),
        rtt_s=sc.base_rtt_s,
        loss=loss_f,
        jitter_s=b.jitter_s,
        buffer=buf_text,
        aqm=b.aqm,
        flows=sc.flows[0].count,
        competing=[(g.cc, g.count) for g in sc.flows[1:]],
        duration_s=dur,
        reorder=b.reorder,
        scenario=raw,
        source=source,
        origin=origin,
        fixed=fixed,
        jitter_max_s=b.rtt_s / 2 if b.jitter_dist == "uniform" else None,
        aqm_params=dict(sc.aqm_wire) if b.aqm != "droptail" else {},
        extra=extra,
    )
    return link, notes + _checked(link, sc.flows[0].rwnd_bytes, from_ping=False)


def with_duration(link: Link, seconds: float) -> Link:
    return dataclasses.replace(link, duration_s=seconds)
