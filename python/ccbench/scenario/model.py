"""The one scenario schema (docs/scenario.md), validated with pydantic v2.

TOML in (tomllib), units normalised to SI on validation, errors turned into one line per
problem of the form ``"<source>: <key.path>: <problem> (expected <form>)"``.

The TOML keys are the field *aliases* (``rate``, ``rtt``, ``duration`` …); the attributes hold the
normalised values (``rate_bps``, ``rtt_s``, ``duration_s`` …), see docs/internal-api.md.
Times are kept as float seconds that are exact to the nanosecond (they are parsed as integer
nanoseconds first), so ``sim_config()`` recovers the integers without rounding noise."""

from __future__ import annotations

import copy
import difflib
import functools
import hashlib
import json
import math
import re
import typing
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Sequence, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .. import units
from ..units import BufferSpec, UnitError
from ..units import quote as _q
from . import aqm as _aqm
from . import limits, trace_file
from . import wifi as _wifi
from .errors import ScenarioError, key_path
from .parse import check_nesting, override_items, parse_toml, read_toml_text, set_path

#: The algorithm names a scenario may use; a backend's ``check()`` refines what it can run
#: (``bbr3``, BBR v3 from google/bbr, runs on the simulator only).
BASE_ALGORITHMS = ("reno", "cubic", "bbr", "bbr3", "vegas")


#: Algorithms only some backends run (ns-3's or the kernel backend's BPF ports, named after the
#: Linux module of the same algorithm); each backend's ``check()`` refuses those it lacks.
EXTRA_ALGORITHMS = (
    "westwood",
    "highspeed",
    "hybla",
    "illinois",
    "scalable",
    "yeah",
    "htcp",
    "bic",
    "veno",
    "lp",
    "nv",
    "dctcp",
    "ledbat",
)


#: Names users write for algorithms no backend models yet, with what to say instead of a
#: "did you mean" that would point at another algorithm.
UNMODELLED_ALGORITHMS = {
    **{n: "not modelled yet; `bbr` is BBR v1, `bbr3` is BBR v3" for n in ("bbr2", "bbrv2")},
    "bbrv3": "BBR v3 is spelled `bbr3` (`bbr` is BBR v1)",
}


#: Queues that mark ECN by design (a step at K, RFC 8257; DualPI2's L4S queue, RFC 9332).
ECN_QUEUES = ("step", "dualpi2")


#: Algorithms built for a bottleneck that CE-marks ECN (DCTCP, RFC 8257; TCP Prague, RFC 9331): where
#: nothing marks they only repeat Reno, so comparisons and recommendations offer them only there.
NEEDS_MARKING = ("dctcp", "prague")


def split_by_marking(names: Sequence[str], marks_ecn: bool) -> tuple[list[str], list[str]]:
    """(offered, left out): ``names`` in order, those of NEEDS_MARKING left out unless the
    bottleneck ``marks_ecn``."""
    if marks_ecn:
        return list(names), []
    return [n for n in names if n not in NEEDS_MARKING], [n for n in names if n in NEEDS_MARKING]


#: Linux's default net.ipv4.tcp_rmem maximum (6 MiB): the receive buffer an untouched host's
#: autotuning grows to.
LINUX_RMEM_MAX_BYTES = 6 * 1024 * 1024
#: The part of a receive buffer Linux offers as window, in 1/256 (tcp_win_from_space with the
#: scaling ratio that tcp_measure_rcv_mss takes from payload / skb truesize): 160/256 measured
#: on the kernel backend's receivers (crates/sim/src/tcp/rcv_window.rs, MEASURED_RATIO).
RCV_SCALING_RATIO_256 = 160
#: The largest window an untouched Linux 6.18 receiver offers: 6 MiB × 160/256 = 3 932 160 bytes
#: (3.75 MiB). A flow's ``rwnd`` is that largest window; this is its default on every backend.
DEFAULT_RWND_BYTES = LINUX_RMEM_MAX_BYTES * RCV_SCALING_RATIO_256 // 256


MTU = 1500


MSS = 1448


def _custom(problem: str, expected: str | None = None) -> PydanticCustomError:
    return PydanticCustomError("ccbench", "{problem}", {"problem": problem, "expected": expected or ""})


def _unit(fn, value):
    try:
        return fn(value)
    except UnitError as e:
        raise _custom(e.problem, e.expected) from None


def _fmt_ns(ns: int) -> str:
    text = units.format_time(ns / 1e9)
    return text + " (1 day)" if ns == limits.MAX_TIME_NS else text


def _fmt_bytes(n: int) -> str:
    if n >= 10**12:
        return f"{n:.3g}B".replace("e+", "e")
    for mul, name in ((2**30, "GiB"), (2**20, "MiB"), (10**9, "GB"), (10**6, "MB"), (10**3, "KB")):
        if n >= mul and n % mul == 0:
            return f"{n // mul}{name}"
    return f"{n}B"


def _ranged(
    fn,
    value,
    lo: int,
    hi: int,
    fmt,
    what: str,
    off: bool = False,
    zero: tuple[str, str] | None = None,
    low: tuple[str, str] | None = None,
) -> int:
    """``fn(value)`` (an integer in SI units) if within [lo, hi] (or 0 when ``off``), else an
    error that states the accepted range; a number too large for any range says the same.
    ``zero`` / ``low``: (problem, expected) for 0 / below ``lo`` instead of the range."""
    accepted = f"{what} from {fmt(lo)} to {fmt(hi)}" + (", or 0 for off" if off else "")
    try:
        n = fn(value)
    except units.TooLarge:
        raise _custom(f"{_q(value)} is above the maximum {fmt(hi)}", accepted) from None
    except UnitError as e:
        raise _custom(e.problem, e.expected) from None
    if off and n == 0:
        return n
    if n > hi:
        raise _custom(f"{_q(value)} is above the maximum {fmt(hi)}", accepted)
    special = zero if (zero and n == 0) else low
    if n < lo and special:
        raise _custom(f"{_q(value)} {special[0]}", special[1])
    if n < lo:
        raise _custom(f"{_q(value)} is below the minimum {fmt(lo)}", accepted)
    return n


def _time_s(
    value,
    lo_ns: int = 0,
    hi_ns: int = limits.MAX_TIME_NS,
    off: bool = False,
    zero: tuple[str, str] | None = None,
    what: str = "a time",
) -> float:
    """A time in seconds (exact to the nanosecond) within [lo_ns, hi_ns]."""
    return _ranged(units.parse_time_ns, value, lo_ns, hi_ns, _fmt_ns, what, off, zero) / 1e9


def _rate_bps(value, form: str) -> int:
    return _ranged(
        units.parse_rate,
        value,
        1,
        limits.MAX_RATE_BPS,
        units.format_rate,
        "a rate",
        zero=("is not a positive rate", form),
    )


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=False, frozen=True)


_PROB_FORM = 'a percentage 0-100%, e.g. "1%" (0 is also accepted)'


_BUFFER_RANGE = (
    f"a buffer of at most {limits.MAX_BUFFER_PACKETS}pkt or {limits.MAX_BUFFER_BYTES // 10**9}GB "
    '(also as Nbdp), e.g. "1bdp", "100pkt" or "256KB"'
)


class LossModel(_Model):
    """Random loss. Probabilities are fractions 0..1 here; in TOML they are percentages.

    * ``none``: no random loss.
    * ``bernoulli``: each packet lost independently with probability ``p``.
    * ``gilbert``: Gilbert–Elliott; ``p`` = P(good→bad), ``r`` = P(bad→good) per packet,
      ``h`` = P(delivery | bad) (default 0), ``k`` = P(delivery | good) (default 1).
    """

    model: Literal["none", "bernoulli", "gilbert"]
    p: Optional[float] = None
    r: Optional[float] = None
    h: Optional[float] = None
    k: Optional[float] = None

    @field_validator("p", "r", "h", "k", mode="before")
    @classmethod
    def _prob(cls, v):
        if v is None:
            return None
        return _unit(units.parse_percent, v)

    @model_validator(mode="after")
    def _shape(self):
        given = {n for n in ("p", "r", "h", "k") if getattr(self, n) is not None}
        if self.model == "none":
            if given:
                raise _custom(f"model 'none' takes no {', '.join(sorted(given))}", 'loss = "0%"')
            object.__setattr__(self, "p", 0.0)
        elif self.model == "bernoulli":
            if "p" not in given:
                raise _custom("bernoulli loss needs p", '{ model = "bernoulli", p = "1%" }')
            extra = given - {"p"}
            if extra:
                raise _custom(
                    f"bernoulli loss takes only p, not {', '.join(sorted(extra))}",
                    '{ model = "bernoulli", p = "1%" }',
                )
        else:
            missing = {"p", "r"} - given
            if missing:
                raise _custom(
                    f"gilbert loss needs {' and '.join(sorted(missing))}",
                    '{ model = "gilbert", p = "1%", r = "30%", h = "0%", k = "100%" }',
                )
            if self.h is None:
                object.__setattr__(self, "h", 0.0)
            if self.k is None:
                object.__setattr__(self, "k", 1.0)
        return self

    @property
    def mean_loss(self) -> float:
        """Long-run fraction of packets lost (stationary loss rate of the model)."""
        if self.model == "none":
            return 0.0
        if self.model == "bernoulli":
            return float(self.p)
        p, r, h, k = self.p, self.r, self.h, self.k
        if p + r == 0:
            return 1.0 - k
        bad = p / (p + r)
        return bad * (1.0 - h) + (1.0 - bad) * (1.0 - k)

    def as_dict(self) -> dict:
        if self.model == "none":
            return {"model": "none"}
        if self.model == "bernoulli":
            return {"model": "bernoulli", "p": self.p}
        return {"model": "gilbert", "p": self.p, "r": self.r, "h": self.h, "k": self.k}


NO_LOSS = LossModel(model="none")


class _GivenWithTrace(str):
    """Marks a ``rate`` given beside a ``trace`` (refused by the rate's validator)."""


class _ReverseAlone(str):
    """Marks a ``trace_reverse`` given without ``trace``."""


class Bottleneck(_Model):
    #: The link's rate; left out with a ``trace`` (filled with the trace's mean capacity) or
    #: with ``link = "wifi"`` (filled with the PHY rate of the ``[wifi]`` MCS).
    rate_bps: Optional[int] = Field(None, alias="rate")
    rtt_s: float = Field(alias="rtt")
    jitter_s: float = Field(0.0, alias="jitter")
    jitter_dist: Literal["uniform", "normal", "pareto"] = "uniform"
    reorder: StrictBool = True
    loss: LossModel = NO_LOSS
    impair: Literal["data", "ack", "both"] = "data"
    buffer: BufferSpec = BufferSpec("bdp", 1.0)
    aqm: Literal["droptail", "codel", "fq_codel", "pie", "red", "fq", "step", "dualpi2"] = "droptail"
    #: The discipline's parameters as written (``[bottleneck.aqm_params]``); checked against
    #: ``aqm`` after validation (aqm.problems), resolved with the defaults by ``aqm_wire``.
    aqm_params: dict[str, Any] = Field(default_factory=dict)
    #: Mahimahi delivery traces (docs/scenario.md "Trace-driven links"): the value as written, a
    #: ``trace_file.TraceRef`` carrying the trace read from it; "" = a fixed-rate link.
    trace: str = ""
    trace_reverse: str = ""

    @model_validator(mode="before")
    @classmethod
    def _trace_keys(cls, data):
        """With a trace, ``rate`` is left out (the trace sets it) and ``trace_reverse`` needs
        ``trace``: mark the values so that each key's own validator reports it."""
        if not isinstance(data, Mapping):
            return data
        traced = isinstance(data.get("trace"), str) and data.get("trace") != ""
        out = dict(data)
        if traced:
            out["rate"] = _GivenWithTrace(_q(data["rate"])) if "rate" in data else None
        reverse = data.get("trace_reverse")
        if isinstance(reverse, str) and reverse and "trace" not in data:
            out["trace_reverse"] = _ReverseAlone(reverse)
        return out

    #: "wire" (a fixed-rate queue and transmitter per direction) or "wifi" (an 802.11n hop
    #: shared by both directions, configured by the top-level ``[wifi]`` table).
    link: Literal["wire", "wifi"] = "wire"

    @field_validator("rate_bps", mode="before")
    @classmethod
    def _rate(cls, v):
        if isinstance(v, _GivenWithTrace):
            raise _custom(f"{v}: the trace sets the rate (its mean capacity)", "no rate with a trace (leave it out)")
        if v is None:  # left out beside a trace: filled in by _fill_rate
            return None
        return _rate_bps(v, units.RATE_FORM)

    @field_validator("trace_reverse", mode="before")
    @classmethod
    def _reverse_alone(cls, v):
        if isinstance(v, _ReverseAlone):
            raise _custom(
                f"{_q(str(v))} without a trace: trace_reverse sets the ACK direction of a trace link",
                'trace = "..." as well (trace_reverse defaults to it)',
            )
        return v

    @field_validator("trace", "trace_reverse")
    @classmethod
    def _trace(cls, v, info: ValidationInfo):
        if not v:
            return v
        base = (info.context or {}).get("base_dir") or Path.cwd()
        try:
            return trace_file.load(v, Path(base))
        except trace_file.TraceProblem as e:
            raise _custom(e.problem, trace_file.expected_form()) from None

    @model_validator(mode="after")
    def _fill_rate(self):
        """A trace link's nominal rate is its forward trace's mean capacity."""
        if self.rate_bps is None and isinstance(self.trace, trace_file.TraceRef):
            object.__setattr__(self, "rate_bps", self.trace.mean_rate_bps)
        return self

    @property
    def traced(self) -> bool:
        return isinstance(self.trace, trace_file.TraceRef)

    def trace_wire(self) -> Optional[dict]:
        """``bottleneck.trace`` of the simulator's JSON (crates/queue/src/trace.rs
        ``TraceConfig``): the opportunities (ms) of each direction; None without a trace."""
        if not self.traced:
            return None
        wire = {"fwd_ms": list(self.trace.ms)}
        if isinstance(self.trace_reverse, trace_file.TraceRef):
            wire["rev_ms"] = list(self.trace_reverse.ms)
        return wire

    @field_validator("rtt_s", "jitter_s", mode="before")
    @classmethod
    def _time(cls, v):
        return _time_s(v)

    @field_validator("loss", mode="before")
    @classmethod
    def _loss(cls, v):
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            frac = _unit(units.parse_percent, v)
            if frac == 0:
                return {"model": "none"}
            return {"model": "bernoulli", "p": v}
        if isinstance(v, Mapping) or isinstance(v, LossModel):
            return v
        raise _custom(f"{_q(v)} is not a loss", 'a percentage such as "0.1%" or a table { model = "gilbert", ... }')

    @field_validator("buffer", mode="before")
    @classmethod
    def _buffer(cls, v):
        if isinstance(v, BufferSpec):
            return v
        try:
            spec = units.parse_buffer(v)
        except units.TooLarge:
            raise _custom(f"{_q(v)} is above the maximum {limits.MAX_BUFFER_PACKETS}pkt", _BUFFER_RANGE) from None
        except UnitError as e:
            raise _custom(e.problem, e.expected) from None
        if spec.kind == "bytes" and spec.value < MTU:
            raise _custom(f"{_q(v)} holds no {MTU}-byte packet", units.BUFFER_FORM)
        if spec.kind == "bytes" and spec.value > limits.MAX_BUFFER_BYTES:
            raise _custom(f"{_q(v)} is above the maximum {_fmt_bytes(limits.MAX_BUFFER_BYTES)}", _BUFFER_RANGE)
        if spec.kind == "packets" and spec.value > limits.MAX_BUFFER_PACKETS:
            raise _custom(f"{_q(v)} is above the maximum {limits.MAX_BUFFER_PACKETS}pkt", _BUFFER_RANGE)
        return spec


class Access(_Model):
    rate_bps: Optional[int] = Field(None, alias="rate")
    delay_s: float = Field(0.0, alias="delay")

    @field_validator("rate_bps", mode="before")
    @classmethod
    def _rate(cls, v):
        if v is None:
            return None
        return _rate_bps(v, units.RATE_FORM + " (or leave it out)")

    @field_validator("delay_s", mode="before")
    @classmethod
    def _time(cls, v):
        return _time_s(v)


@functools.lru_cache(maxsize=1)
def known_algorithms() -> tuple[str, ...]:
    """BASE_ALGORITHMS plus whatever the built simulator lists (so a newly added one just works),
    then EXTRA_ALGORITHMS."""
    names = list(BASE_ALGORITHMS)
    try:
        from .. import _sim  # type: ignore[attr-defined]

        for row in json.loads(_sim.algorithms_json()):
            if row.get("name") and row["name"] not in names:
                names.append(row["name"])
    except Exception:  # the extension is not built: the base set still validates
        pass
    names += [n for n in EXTRA_ALGORITHMS if n not in names]
    return tuple(names)


class FlowGroup(_Model):
    """One ``[[flows]]`` entry: ``count`` connections of the same algorithm."""

    cc: str
    count: StrictInt = Field(1, ge=1, le=100_000)
    start_spec: tuple[float, float] = Field((0.0, 0.0), alias="start")
    rwnd_bytes: int = Field(DEFAULT_RWND_BYTES, alias="rwnd")
    size_bytes: Optional[int] = Field(None, alias="size")
    pacing: StrictBool = False
    #: TCP timestamps (RFC 7323: RTTM and PAWS) on these connections; Linux's default is on.
    timestamps: StrictBool = True
    #: ECN (RFC 3168) on these connections: ECT(0) on data, an AQM marks CE instead of dropping.
    ecn: StrictBool = False
    #: Which way the data crosses the bottleneck: "forward" (sender → receiver side) or
    #: "reverse" (receiver side → sender side, the ACKs go forward): RRUL-style two-way load.
    direction: Literal["forward", "reverse"] = "forward"
    #: The rate of these connections' own access links instead of ``access.rate`` (None: that).
    access_rate_bps: Optional[int] = Field(None, alias="access_rate")

    @field_validator("access_rate_bps", mode="before")
    @classmethod
    def _access_rate(cls, v):
        if v is None:
            return None
        return _rate_bps(v, units.RATE_FORM + " (or leave it out: access.rate)")

    @field_validator("cc", mode="before")
    @classmethod
    def _cc(cls, v):
        if not isinstance(v, str):
            raise _custom(f"{_q(v)} is not an algorithm name", _cc_form())
        name = v.strip().lower()
        if name in UNMODELLED_ALGORITHMS:
            raise _custom(f"{_q(v)}: {UNMODELLED_ALGORITHMS[name]}", _cc_form())
        if name not in known_algorithms():
            hint = difflib.get_close_matches(name[:64], known_algorithms(), n=1)
            extra = f"; did you mean '{hint[0]}'?" if hint else ""
            raise _custom(f"unknown algorithm {_q(v)}{extra}", _cc_form())
        return name

    @field_validator("start_spec", mode="before")
    @classmethod
    def _start(cls, v):
        accepted = f"a start and a step from 0s to {_fmt_ns(limits.MAX_TIME_NS)} each"
        try:
            start, step = units.parse_start(v)
        except units.TooLarge:
            raise _custom(f"{_q(v)} is above the maximum {_fmt_ns(limits.MAX_TIME_NS)}", accepted) from None
        except UnitError as e:
            raise _custom(e.problem, e.expected) from None
        if max(start, step) > limits.MAX_TIME_NS:
            raise _custom(f"{_q(v)} is above the maximum {_fmt_ns(limits.MAX_TIME_NS)}", accepted)
        return (start / 1e9, step / 1e9)

    @field_validator("rwnd_bytes", mode="before")
    @classmethod
    def _rwnd(cls, v):
        return _ranged(
            units.parse_size,
            v,
            2 * MSS,
            limits.MAX_RWND_BYTES,
            _fmt_bytes,
            "a receive window (TCP window scaling ends at 1GiB)",
            low=(f"is below two segments ({2 * MSS} bytes)", units.SIZE_FORM),
        )

    @field_validator("size_bytes", mode="before")
    @classmethod
    def _size(cls, v):
        if v is None:
            return None
        return _ranged(
            units.parse_size,
            v,
            1,
            limits.MAX_SIZE_BYTES,
            _fmt_bytes,
            "a size (or leave it out for a bulk flow)",
            zero=("is not a positive size", units.SIZE_FORM + " (or leave it out for a bulk flow)"),
        )

    @property
    def start_s(self) -> float:
        return self.start_spec[0]

    @property
    def stagger_s(self) -> float:
        return self.start_spec[1]


def _cc_form() -> str:
    return "one of " + ", ".join(known_algorithms())


class Probe(_Model):
    ping_s: float = Field(0.0, alias="ping")

    @field_validator("ping_s", mode="before")
    @classmethod
    def _time(cls, v):
        return _time_s(v, limits.MIN_PING_INTERVAL_NS, off=True, what="a ping interval")


class Output(_Model):
    """``[output]``: files a run writes besides its results. They do not change the run, so they
    stay out of the scenario's hash."""

    #: Classic pcap of flow 0 as its sender sees it (the simulator's crates/sim/src/pcap.rs; the
    #: kernel backend's tcpdump on the sender's TUN, backends/kernel/sender_capture.py).
    pcap: Optional[str] = None

    @field_validator("pcap", mode="before")
    @classmethod
    def _pcap(cls, v, info: ValidationInfo):
        if v is None:
            return v
        if not isinstance(v, str) or not v.strip():
            raise _custom(f"{_q(v)} is not a file name", 'a path for the capture, e.g. "flow0.pcap"')
        base = (info.context or {}).get("base_dir") or Path.cwd()
        return str(Path(base) / v)


def _wifi_time_ns(v, what: str) -> int:
    """A time of ``[wifi]``: a bare integer is nanoseconds (the keys end in ``_ns``), or a time
    with its unit ("9us")."""
    if isinstance(v, bool):
        raise _custom(f"{_q(v)} is not a time", f'{what}: nanoseconds or a time such as "9us"')
    if isinstance(v, int):
        n = v
    else:
        n = _unit(units.parse_time_ns, v)
    if n <= 0 or n > 10**9:
        raise _custom(f"{_q(v)} is not within 1 ns to 1 s", f'{what}: nanoseconds or a time such as "9us"')
    return n


class Wifi(_Model):
    """The ``[wifi]`` table (with ``bottleneck.link = "wifi"``): ccbench-wifi's ``WifiConfig``,
    key for key, with the same defaults (wifi.DEFAULTS; docs/scenario.md "Wi-Fi link")."""

    mcs: StrictInt = Field(_wifi.DEFAULTS["mcs"], ge=0, le=31)
    width_mhz: Literal[20, 40] = _wifi.DEFAULTS["width_mhz"]
    short_gi: StrictBool = _wifi.DEFAULTS["short_gi"]
    rate_control: Literal["fixed", "minstrel"] = _wifi.DEFAULTS["rate_control"]
    #: A file of "time_ms mcs" lines, relative to the scenario file; read by Scenario.from_dict.
    mcs_trace: Optional[str] = None
    #: Per-MPDU error probability (a percentage in TOML, a fraction here).
    mpdu_error: float = _wifi.DEFAULTS["mpdu_error"]
    snr_db: Optional[float] = None
    retry_limit: StrictInt = Field(_wifi.DEFAULTS["retry_limit"], ge=0, le=1000)
    aifsn: StrictInt = Field(_wifi.DEFAULTS["aifsn"], ge=1, le=15)
    cw_min: StrictInt = Field(_wifi.DEFAULTS["cw_min"], ge=1, le=32767)
    cw_max: StrictInt = Field(_wifi.DEFAULTS["cw_max"], ge=1, le=32767)
    slot_ns: int = _wifi.DEFAULTS["slot_ns"]
    sifs_ns: int = _wifi.DEFAULTS["sifs_ns"]
    max_ampdu_frames: StrictInt = Field(_wifi.DEFAULTS["max_ampdu_frames"], ge=1, le=64)
    max_ampdu_bytes: int = _wifi.DEFAULTS["max_ampdu_bytes"]
    max_ampdu_ns: int = _wifi.DEFAULTS["max_ampdu_ns"]
    aggregation: StrictBool = _wifi.DEFAULTS["aggregation"]
    driver_queue_fwd: StrictInt = Field(_wifi.DEFAULTS["driver_queue_fwd"], ge=1, le=limits.MAX_BUFFER_PACKETS)
    driver_queue_rev: StrictInt = Field(_wifi.DEFAULTS["driver_queue_rev"], ge=1, le=limits.MAX_BUFFER_PACKETS)
    control_rate_bps: int = _wifi.DEFAULTS["control_rate_bps"]

    #: The steps of ``mcs_trace`` as [time_ns, mcs], once the file is read.
    _steps: Optional[list] = PrivateAttr(default=None)

    @field_validator("mpdu_error", mode="before")
    @classmethod
    def _prob(cls, v):
        return _unit(units.parse_percent, v)

    @field_validator("snr_db", mode="before")
    @classmethod
    def _snr(cls, v):
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise _custom(f"{_q(v)} is not a number of dB", "a number such as 25 (dB)")
        return float(v)

    @field_validator("slot_ns", "sifs_ns", "max_ampdu_ns", mode="before")
    @classmethod
    def _times(cls, v, info):
        return _wifi_time_ns(v, info.field_name)

    @field_validator("max_ampdu_bytes", mode="before")
    @classmethod
    def _bytes(cls, v):
        n = _ranged(units.parse_size, v, 1600, 1 << 20, _fmt_bytes, "an A-MPDU length that holds one MPDU")
        return n

    @field_validator("control_rate_bps", mode="before")
    @classmethod
    def _control_rate(cls, v):
        n = v if isinstance(v, int) and not isinstance(v, bool) else _unit(units.parse_rate, v)
        if n not in (6_000_000, 12_000_000, 24_000_000):
            raise _custom(f"{_q(v)} is not a mandatory OFDM rate", '"6Mbit", "12Mbit" or "24Mbit"')
        return n

    @field_validator("mcs_trace")
    @classmethod
    def _trace_path(cls, v):
        if v is not None and not v.strip():
            raise _custom("an empty path", _wifi.MCS_TRACE_FORM)
        return v

    def wire(self) -> dict:
        """The crate's ``WifiConfig`` as JSON (every key; ``mcs_trace`` as its steps)."""
        out = {k: getattr(self, k) for k in _wifi.DEFAULTS}
        out["mcs_trace"] = self._steps
        return out


@dataclass(frozen=True)
class FlowSpec:
    """One connection of a run (``[[flows]]`` expanded by ``count`` and stagger)."""

    id: int
    group: int
    cc: str
    start_s: float
    rwnd_bytes: int
    size_bytes: Optional[int]
    pacing: bool
    timestamps: bool = True
    ecn: bool = False
    direction: str = "forward"
    access_rate_bps: Optional[int] = None

    @property
    def start_ns(self) -> int:
        return _ns(self.start_s)


def _base_dir(source: str | None) -> Path:
    """The directory relative trace paths start from: the scenario file's, else the current one."""
    p = Path(source) if source else None
    return p.parent if p is not None and p.is_file() else Path.cwd()


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def _start_offset_ns(seed: int, span_ns: int, flow_id: int) -> int:
    """Scenario.start_offset_ns for a given start_jitter span (in ns)."""
    if span_ns <= 0:
        return 0
    digest = hashlib.blake2b(f"start_jitter/{seed}/{flow_id}".encode(), digest_size=8).digest()
    # 64 random bits: the modulo bias is below span / 2^64
    return int.from_bytes(digest, "little") % span_ns


class Scenario(_Model):
    """A validated scenario; see docs/scenario.md."""

    name: str = ""
    duration_s: float = Field(30.0, alias="duration")
    seed: StrictInt = Field(1, ge=0, le=2**64 - 1)
    sample_interval_s: float = Field(0.1, alias="sample_interval")
    #: Each flow's start is delayed by a deterministic draw from [0, start_jitter) (seed, flow id).
    start_jitter_s: float = Field(0.01, alias="start_jitter")
    bottleneck: Bottleneck
    access: Access = Access()
    flows: list[FlowGroup] = Field(min_length=1)
    probe: Probe = Probe()
    #: The 802.11 hop, with ``bottleneck.link = "wifi"`` (defaults when the table is left out).
    wifi: Optional[Wifi] = None
    output: Output = Output()
    sweep: Optional[dict[str, Any]] = None

    _source: str = PrivateAttr(default="<dict>")
    _raw: dict = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_raw(cls, data, handler):
        """Remember the TOML-shaped input, however the model was built, for with_overrides()."""
        inst = handler(data)
        if isinstance(data, Mapping) and not inst._raw:
            inst._raw = copy.deepcopy(dict(data))
        return inst

    @field_validator("duration_s", mode="before")
    @classmethod
    def _duration(cls, v):
        return _time_s(
            v, limits.MIN_DURATION_NS, zero=("is not a positive duration", units.TIME_FORM), what="a duration"
        )

    @field_validator("sample_interval_s", mode="before")
    @classmethod
    def _interval(cls, v):
        return _time_s(v, limits.MIN_SAMPLE_INTERVAL_NS, off=True, what="a sampling interval")

    @field_validator("start_jitter_s", mode="before")
    @classmethod
    def _start_jitter(cls, v):
        return _time_s(v)

    # ---- construction ---------------------------------------------------------------------

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<dict>") -> "Scenario":
        """Validate a TOML-shaped dict (keys as in the file). Raises ScenarioError."""
        if not isinstance(d, Mapping):
            raise ScenarioError(source, None, f"a scenario must be a table, not {type(d).__name__}")
        check_nesting(d, source)
        raw = copy.deepcopy(dict(d))
        try:
            sc = cls.model_validate(raw, context={"base_dir": _base_dir(source)})
        except ValidationError as e:
            raise _convert(e, source) from None
        link_problems = sc._link_problems(raw, source)
        if link_problems:
            raise ScenarioError(source, *link_problems[0], problems=link_problems)
        if sc.start_jitter_s >= sc.duration_s:
            raise ScenarioError(
                source,
                "start_jitter",
                f"{_q(raw.get('start_jitter'))} is not below the duration ({units.format_time(sc.duration_s)})",
                'a time shorter than the run, e.g. "10ms", or 0 for exact starts',
            )
        problems = sc._cost_and_sense_problems(raw)
        if problems:
            raise ScenarioError(source, *problems[0], problems=problems)
        sc._source = source
        sc._raw = raw
        return sc

    @property
    def source(self) -> str:
        return self._source

    @property
    def raw(self) -> dict:
        """A copy of the TOML-shaped dict this scenario was validated from."""
        return copy.deepcopy(self._raw)

    def with_overrides(self, overrides: Mapping[str, Any] | Sequence[str], source: str | None = None) -> "Scenario":
        """A new scenario with dotted-path overrides applied to the raw input and re-validated.

        ``overrides``: a mapping ``{"bottleneck.loss": "1%", "flows.0.cc": "bbr"}`` (values used
        as given) or ``["bottleneck.loss=1%", ...]`` strings (values parsed as TOML scalars when
        they parse, else kept as strings).
        """
        src = source or self._source
        items = override_items(overrides, src)
        raw = self.raw
        for key, value in items:
            set_path(raw, key, value, src)
        return Scenario.from_dict(raw, source=src)

    # ---- the kind of link ------------------------------------------------------------------

    def _link_problems(self, raw: Mapping[str, Any], source: str) -> list[tuple[str, str, str]]:
        """Check ``bottleneck.link`` against ``rate``, ``trace`` and ``[wifi]``; on a Wi-Fi link
        read ``mcs_trace``, let the crate check the table and fill ``rate_bps`` with the PHY
        rate (so BDP buffers, utilisation and reports work as on a wire)."""
        b = self.bottleneck
        given_rate = _given(raw, "bottleneck", "rate")
        if b.link == "wire":
            if "wifi" in raw:
                return [
                    (
                        "wifi",
                        'a [wifi] table needs bottleneck.link = "wifi"',
                        'bottleneck.link = "wifi", or no [wifi] table',
                    )
                ]
            if b.rate_bps is None:
                return [("bottleneck.rate", "required key is missing", units.RATE_FORM)]
            return []
        if given_rate is not None:
            return [
                (
                    "bottleneck.rate",
                    f"{_q(given_rate)}: the Wi-Fi PHY sets the rate",
                    'no rate with link = "wifi" (set wifi.mcs, width_mhz, short_gi)',
                )
            ]
        if b.trace:
            return [
                (
                    "bottleneck.trace",
                    'a trace and link = "wifi" cannot go together',
                    'either trace = "..." or link = "wifi"',
                )
            ]
        w = self.wifi or Wifi()
        if w.mcs_trace is not None:
            path = Path(w.mcs_trace)
            if not path.is_absolute() and source not in ("<dict>", "") and Path(source).parent.is_dir():
                path = Path(source).parent / path
            try:
                w._steps = _wifi.read_mcs_trace(path)
            except _wifi.McsTraceError as e:
                return [("wifi.mcs_trace", f"{_q(w.mcs_trace)}: {e}", _wifi.MCS_TRACE_FORM)]
        try:
            _wifi.check(w.wire())
            rate = _wifi.phy_rate_bps(w.wire())
        except ValueError as e:
            msg = str(e)
            m = re.match(r"(wifi\.[a-z_]+)", msg)
            return [(m.group(1) if m else "wifi", msg.split(": ", 1)[-1] if m else msg, None)]
        object.__setattr__(self, "wifi", w)
        object.__setattr__(b, "rate_bps", rate)
        return []

    # ---- limits that involve several keys (docs/limits.md) ---------------------------------

    def _cost_and_sense_problems(self, raw: Mapping[str, Any]) -> list[tuple[str, str, str]]:
        """(key, problem, expected) for every cross-key limit the scenario breaks: what one run
        may cost (packets, series rows, pings, memory in flight) and runs that cannot measure
        anything (too short, flows starting after the end, uniform jitter beyond the delay)."""
        out: list[tuple[str, str, str]] = []
        dur = _ns(self.duration_s)
        dur_text = _q(_given(raw, "duration", default="30s"))
        base = self._base_rtt_ns()
        if dur <= 2 * base:
            out.append(
                (
                    "duration",
                    f"{dur_text} is not longer than two base RTTs ({_fmt_ns(2 * base)}): no data can be acknowledged",
                    f"a duration over {_fmt_ns(2 * base)}",
                )
            )
        packets = self.bottleneck.rate_bps * dur // (MTU * 8 * 10**9)
        if packets > limits.MAX_PACKETS_PER_RUN:
            most = limits.MAX_PACKETS_PER_RUN * MTU * 8 * 10**9 // self.bottleneck.rate_bps
            out.append(
                (
                    "duration",
                    f"{dur_text} at {units.format_rate(self.bottleneck.rate_bps)} is "
                    f"{packets:.3g} full-size packets, over the {limits.MAX_PACKETS_PER_RUN:.0e} a run may carry",
                    f"at most {_fmt_ns(most)} at this rate",
                )
            )
        n = self.n_flows
        if n > limits.MAX_FLOWS:
            out.append(
                (
                    "flows",
                    f"{n} connections in all groups, over the {limits.MAX_FLOWS} a run may have",
                    f"at most {limits.MAX_FLOWS} connections (the counts of all [[flows]] together)",
                )
            )
        step = _ns(self.sample_interval_s)
        if step:
            rows = -(-dur // step) * (n + 1)
            if rows > limits.MAX_SERIES_ROWS:
                least = -(-dur * (n + 1) // limits.MAX_SERIES_ROWS)
                out.append(
                    (
                        "sample_interval",
                        f"{_q(_given(raw, 'sample_interval'))} gives {rows:.3g} series rows "
                        f"({n} flows + the link over {_fmt_ns(dur)}), over the {limits.MAX_SERIES_ROWS:.0e} "
                        "a run may hold",
                        f'at least {_fmt_ns(least)} here, or "0s" for no series',
                    )
                )
        ping = _ns(self.probe.ping_s)
        if ping and dur // ping > limits.MAX_PINGS:
            least = -(-dur // limits.MAX_PINGS)
            out.append(
                (
                    "probe.ping",
                    f"{_q(_given(raw, 'probe', 'ping'))} sends {dur // ping:.3g} pings, "
                    f"over the {limits.MAX_PINGS:.0e} a run may send",
                    f"at least {_fmt_ns(least)} for this duration, or 0 for off",
                )
            )
        out += self._start_problems(raw, dur)
        buf = self.buffer_bytes if self.buffer_bytes is not None else self.buffer_packets * MTU
        out += _aqm.problems(self.bottleneck.aqm, self.bottleneck.aqm_params, buffer_bytes=buf)
        b = self.bottleneck
        if b.jitter_dist == "uniform" and _ns(b.jitter_s) > _ns(b.rtt_s) // 2:
            half = _ns(b.rtt_s) // 2
            out.append(
                (
                    "bottleneck.jitter",
                    f"{_q(_given(raw, 'bottleneck', 'jitter'))} of uniform jitter is more "
                    f"than the one-way delay (rtt / 2 = {_fmt_ns(half)}): delays would be clipped at 0, "
                    "which changes the mean delay",
                    f"at most {_fmt_ns(half)} (half the rtt)",
                )
            )
        buf = self.buffer_bytes
        if b.buffer.kind == "bdp" and buf > limits.MAX_BUFFER_BYTES:
            out.append(
                (
                    "bottleneck.buffer",
                    f"{_q(_given(raw, 'bottleneck', 'buffer'))} is {_fmt_bytes(buf)} here, "
                    f"over the maximum {_fmt_bytes(limits.MAX_BUFFER_BYTES)}",
                    _BUFFER_RANGE,
                )
            )
        queue = buf if buf is not None else self.buffer_packets * MTU
        windows = sum(g.count * g.rwnd_bytes for g in self.flows)
        in_flight = min(windows, int(self._bdp()) + queue)
        if in_flight > limits.MAX_IN_FLIGHT_BYTES:
            gi = max(range(len(self.flows)), key=lambda i: self.flows[i].count * self.flows[i].rwnd_bytes)
            out.append(
                (
                    f"flows.{gi}.rwnd",
                    f"up to {_fmt_bytes(in_flight)} could be in flight (flows × rwnd, and "
                    f"BDP + buffer, both above {_fmt_bytes(limits.MAX_IN_FLIGHT_BYTES)})",
                    f"a smaller rwnd or fewer flows: at most {_fmt_bytes(limits.MAX_IN_FLIGHT_BYTES)} in flight",
                )
            )
        return out

    def _start_problems(self, raw: Mapping[str, Any], dur: int) -> list[tuple[str, str, str]]:
        """A group whose last connection could start at or after the end of the run."""
        out = []
        jitter = _ns(self.start_jitter_s)
        raw_flows = raw.get("flows") or []
        for gi, g in enumerate(self.flows):
            last = _ns(g.start_s) + (g.count - 1) * _ns(g.stagger_s)
            if last + jitter < dur or (jitter and last + jitter == dur):
                continue
            given = _given(raw_flows[gi] if gi < len(raw_flows) else {}, "start", default="0s")
            who = f"connection {g.count - 1} of the group" if g.count > 1 else "the flow"
            plus = f" (plus up to start_jitter {_fmt_ns(jitter)})" if jitter else ""
            out.append(
                (
                    f"flows.{gi}.start",
                    f"{_q(given)}: {who} starts at {_fmt_ns(last)}{plus}, not before "
                    f"the end of the run ({_fmt_ns(dur)}): it would measure nothing",
                    f"every connection starting before {_fmt_ns(dur - jitter)}"
                    + (" (the duration minus start_jitter)" if jitter else ""),
                )
            )
        return out

    # ---- derived values -------------------------------------------------------------------

    @property
    def base_rtt_s(self) -> float:
        """Round-trip propagation delay: bottleneck.rtt + 2 × (sender + receiver access delay)."""
        return self._base_rtt_ns() / 1e9

    def _base_rtt_ns(self) -> int:
        return _ns(self.bottleneck.rtt_s) + 4 * _ns(self.access.delay_s)

    @property
    def bdp_bytes(self) -> float:
        """Bandwidth-delay product of the bottleneck over the base RTT, in bytes."""
        return float(self._bdp())

    def _bdp(self) -> Fraction:
        return Fraction(self.bottleneck.rate_bps * self._base_rtt_ns(), 8 * 10**9)

    @property
    def buffer_bytes(self) -> Optional[int]:
        """Drop-tail limit in bytes (also for ``Nbdp``), or None when given in packets."""
        b = self.bottleneck.buffer
        if b.kind == "packets":
            return None
        if b.kind == "bytes":
            return int(b.value)
        n = math.floor(Fraction(repr(float(b.value))) * self._bdp() + Fraction(1, 2))
        return max(n, MTU)

    @property
    def buffer_packets(self) -> Optional[int]:
        b = self.bottleneck.buffer
        return int(b.value) if b.kind == "packets" else None

    @property
    def aqm_wire(self) -> dict:
        """Every parameter of the bottleneck's queue discipline, defaults filled in, in the
        simulator's form (crates/queue/src/aqm.rs ``AqmParams``); {} for drop-tail."""
        b = self.bottleneck
        buf = self.buffer_bytes if self.buffer_bytes is not None else self.buffer_packets * MTU
        return _aqm.resolved_wire(b.aqm, b.aqm_params, buf)

    @property
    def marks_ecn(self) -> bool:
        """True when the bottleneck CE-marks ECN-capable packets: a step or dual queue always, any
        other AQM with ``ecn`` on (fq_codel's default), drop-tail never."""
        if self.bottleneck.aqm in ECN_QUEUES:
            return True
        return bool(self.aqm_wire.get("ecn"))

    @property
    def n_flows(self) -> int:
        return sum(g.count for g in self.flows)

    def start_offset_ns(self, flow_id: int) -> int:
        """The start delay of flow ``flow_id``: uniform on [0, start_jitter) in whole
        nanoseconds, drawn from a hash of (seed, flow id) so both backends start every flow at
        the same instant and repeats (seeds) differ. 0 when start_jitter is 0."""
        return _start_offset_ns(self.seed, _ns(self.start_jitter_s), flow_id)

    def _flow_starts(self):
        """(flow id, group index, group, start in s) of every flow, in id order — the one
        expansion behind expanded_flows and sim_config (a loop without per-flow objects:
        100 000 flows cost 0.1 s, not 0.5)."""
        span = _ns(self.start_jitter_s)
        fid = 0
        for gi, g in enumerate(self.flows):
            start_ns, step_ns = _ns(g.start_s), _ns(g.stagger_s)
            for i in range(g.count):
                yield fid, gi, g, (start_ns + i * step_ns + _start_offset_ns(self.seed, span, fid)) / 1e9
                fid += 1

    def expanded_flows(self) -> list[FlowSpec]:
        return [
            FlowSpec(
                id=fid,
                group=gi,
                cc=g.cc,
                start_s=start_s,
                rwnd_bytes=g.rwnd_bytes,
                size_bytes=g.size_bytes,
                pacing=g.pacing,
                timestamps=g.timestamps,
                ecn=g.ecn,
                direction=g.direction,
                access_rate_bps=g.access_rate_bps,
            )
            for fid, gi, g, start_s in self._flow_starts()
        ]

    # ---- outputs --------------------------------------------------------------------------

    def sim_config(self) -> dict:
        """The JSON object crates/sim/src/config/mod.rs (`SimConfig`) deserialises, with one
        ``flows`` entry per connection (the form the kernel backend's link emulator and the
        tests read; the simulator backend sends :meth:`sim_config_grouped`)."""
        return {
            **self._sim_config_common(),
            "flows": [
                {
                    "id": fid,
                    "group": gi,
                    "cc": g.cc,
                    "start_ns": _ns(start_s),
                    "rwnd_bytes": g.rwnd_bytes,
                    "size_bytes": g.size_bytes,
                    "pacing": g.pacing,
                    "timestamps": g.timestamps,
                    # only when on (serde default false): configs without ECN stay as they were
                    **({"ecn": True} if g.ecn else {}),
                    # only when reverse (serde default forward), likewise
                    **({"direction": "reverse"} if g.direction == "reverse" else {}),
                    # only when set (serde default None), likewise
                    **({"access_rate_bps": g.access_rate_bps} if g.access_rate_bps is not None else {}),
                }
                for fid, gi, g, start_s in self._flow_starts()
            ],
        }

    def sim_config_grouped(self) -> dict:
        """:meth:`sim_config` with the connections as ``flow_groups`` (one entry per
        ``[[flows]]`` table, with its count, start and stagger) and ``start_jitter_ns``: the
        simulator expands them into the very ``flows`` of :meth:`sim_config`
        (crates/sim/src/config/flow_groups.rs), so 100 000 connections cost one small JSON object
        instead of 100 000 (0.6 s of Python)."""
        return {
            **self._sim_config_common(),
            "flow_groups": [
                {
                    "count": g.count,
                    "cc": g.cc,
                    "start_ns": _ns(g.start_s),
                    "stagger_ns": _ns(g.stagger_s),
                    "rwnd_bytes": g.rwnd_bytes,
                    "size_bytes": g.size_bytes,
                    "pacing": g.pacing,
                    "timestamps": g.timestamps,
                    # only when on (serde default false): configs without ECN stay as they were
                    **({"ecn": True} if g.ecn else {}),
                    # only when reverse (serde default forward), likewise
                    **({"direction": "reverse"} if g.direction == "reverse" else {}),
                    # only when set (serde default None), likewise
                    **({"access_rate_bps": g.access_rate_bps} if g.access_rate_bps is not None else {}),
                }
                for g in self.flows
            ],
            "start_jitter_ns": _ns(self.start_jitter_s),
        }

    def _sim_config_common(self) -> dict:
        """Everything of the simulator's JSON but the connections."""
        b = self.bottleneck
        buffer = {"packets": self.buffer_packets} if self.buffer_packets is not None else {"bytes": self.buffer_bytes}
        return {
            "name": self.name,
            "duration_ns": _ns(self.duration_s),
            "seed": self.seed,
            "sample_interval_ns": _ns(self.sample_interval_s),
            "bottleneck": {
                "rate_bps": b.rate_bps,
                "rtt_ns": _ns(b.rtt_s),
                "jitter_ns": _ns(b.jitter_s),
                "jitter_dist": b.jitter_dist,
                "reorder": b.reorder,
                "loss": b.loss.as_dict(),
                "impair": b.impair,
                "buffer": buffer,
                "aqm": b.aqm,
                "aqm_params": self.aqm_wire,
                # only with a trace (serde default None): configs without one stay as they were
                **({"trace": b.trace_wire()} if b.traced else {}),
                # only on a Wi-Fi link (serde default: a wire), so wire configs stay as they were
                **({"wifi": self.wifi.wire()} if b.link == "wifi" else {}),
            },
            "access": {"rate_bps": self.access.rate_bps, "delay_ns": _ns(self.access.delay_s)},
            "probe": {"ping_interval_ns": _ns(self.probe.ping_s)},
            # only when asked for (serde default None): configs without it stay as they were
            **({"pcap_path": self.output.pcap} if self.output.pcap else {}),
        }

    def normalised(self) -> dict:
        """Canonical dict in SI units (no ``sweep``); ``scenario_hash()`` hashes its JSON."""
        b = self.bottleneck
        buf = b.buffer
        return {
            "name": self.name,
            "duration_s": self.duration_s,
            "seed": self.seed,
            "sample_interval_s": self.sample_interval_s,
            "start_jitter_s": self.start_jitter_s,
            "bottleneck": {
                "rate_bps": b.rate_bps,
                "rtt_s": b.rtt_s,
                "jitter_s": b.jitter_s,
                "jitter_dist": b.jitter_dist,
                "reorder": b.reorder,
                "loss": b.loss.as_dict(),
                "impair": b.impair,
                "buffer": {buf.kind: buf.value},
                "aqm": b.aqm,
                # only when given: scenarios without parameters keep their hash and run ids
                **({"aqm_params": _aqm.given_wire(b.aqm, b.aqm_params)} if b.aqm_params else {}),
                # "" without a trace (hashes as before); else what the traces hold, by digest
                "trace": self._trace_normalised(),
                # only on a Wi-Fi link: wire scenarios keep their hash and run ids
                **({"link": "wifi", "wifi": self.wifi.wire()} if b.link == "wifi" else {}),
            },
            "access": {"rate_bps": self.access.rate_bps, "delay_s": self.access.delay_s},
            "flows": [
                {
                    "cc": g.cc,
                    "count": g.count,
                    "start_s": g.start_s,
                    "stagger_s": g.stagger_s,
                    "rwnd_bytes": g.rwnd_bytes,
                    "size_bytes": g.size_bytes,
                    "pacing": g.pacing,
                    # only when off: scenarios written before the key keep their hash and run ids
                    **({} if g.timestamps else {"timestamps": False}),
                    **({"ecn": True} if g.ecn else {}),
                    **({"direction": "reverse"} if g.direction == "reverse" else {}),
                    # only when set (serde default None), likewise
                    **({"access_rate_bps": g.access_rate_bps} if g.access_rate_bps is not None else {}),
                }
                for g in self.flows
            ],
            "probe": {"ping_s": self.probe.ping_s},
        }

    def _trace_normalised(self):
        b = self.bottleneck
        if not b.traced:
            return ""
        rev = b.trace_reverse if isinstance(b.trace_reverse, trace_file.TraceRef) else b.trace
        return {
            "name": str(b.trace),
            "sha256": b.trace.sha256,
            "reverse": {"name": str(b.trace_reverse or b.trace), "sha256": rev.sha256},
        }

    def canonical_json(self) -> str:
        return json.dumps(self.normalised(), sort_keys=True, separators=(",", ":"), allow_nan=False)

    def scenario_hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    def describe(self) -> str:
        """One line for humans: rate, RTT, loss, buffer, flows."""
        b = self.bottleneck
        loss = "no loss" if b.loss.model == "none" else f"{b.loss.model} loss {b.loss.mean_loss * 100:g}%"
        rate = units.format_rate(b.rate_bps)
        if b.link == "wifi":
            w = self.wifi
            rate = f"Wi-Fi MCS {w.mcs} {w.width_mhz} MHz ({rate} PHY)"
        parts = [
            rate + (f" trace {b.trace} (mean)" if b.traced else ""),
            f"RTT {units.format_time(self.base_rtt_s)}",
        ]
        if b.jitter_s:
            parts.append(f"jitter {units.format_time(b.jitter_s)} {b.jitter_dist}")
        parts += [loss, f"buffer {b.buffer} {b.aqm}", f"{self.duration_s:g}s"]
        flows = ", ".join(f"{g.count}×{g.cc}" + (" reverse" if g.direction == "reverse" else "") for g in self.flows)
        return f"{self.name or 'scenario'}: " + ", ".join(parts) + f"; flows {flows}"


def load_scenario(path: str | Path, overrides: Sequence[str] | Mapping[str, Any] = ()) -> Scenario:
    """Read, override and validate a scenario file. Raises ScenarioError."""
    path = Path(path)
    source = str(path)
    text = read_toml_text(path, "a path to a scenario .toml file")
    raw = parse_toml(text, source)
    raw.setdefault("name", path.stem)
    sc = Scenario.from_dict(raw, source=source)
    if overrides:
        sc = sc.with_overrides(overrides)
    return sc


_FORMS = {
    "name": "a string",
    "duration": units.TIME_FORM,
    "seed": "a non-negative integer",
    "sample_interval": units.TIME_FORM,
    "start_jitter": units.TIME_FORM + ", or 0 for exact starts",
    "bottleneck": "a [bottleneck] table",
    "access": "an [access] table",
    "flows": 'one or more [[flows]] tables, each with cc = "..."',
    "probe": "a [probe] table",
    "output": 'an [output] table, e.g. pcap = "flow0.pcap"',
    "pcap": 'a path for the capture, e.g. "flow0.pcap"',
    "sweep": "a [sweep] table",
    "rate": units.RATE_FORM,
    "rtt": units.TIME_FORM,
    "jitter": units.TIME_FORM,
    "delay": units.TIME_FORM,
    "ping": units.TIME_FORM + ", or 0 for off",
    "loss": 'a percentage such as "0.1%" or { model = "gilbert", p = "1%", r = "30%" }',
    "buffer": units.BUFFER_FORM,
    "aqm_params": "a [bottleneck.aqm_params] table of the discipline's parameters (docs/scenario.md)",
    "rwnd": units.SIZE_FORM,
    "size": units.SIZE_FORM,
    "start": units.START_FORM,
    "count": "an integer ≥ 1",
    "cc": 'an algorithm name, e.g. cc = "cubic"',
    "pacing": "true or false",
    "timestamps": "true or false (TCP timestamps on these connections; default true)",
    "ecn": "true or false (ECN on these connections; default false)",
    "direction": '"forward" or "reverse" (which way the data crosses the bottleneck; default "forward")',
    "access_rate": units.RATE_FORM + " (these connections' access-link rate instead of access.rate)",
    "reorder": "true or false",
    "trace": 'a Mahimahi trace file relative to the scenario, or a shipped trace such as "lte-steady"',
    "trace_reverse": 'a Mahimahi trace file relative to the scenario, or a shipped trace such as "lte-steady"',
    "link": '"wire" or "wifi"',
    "wifi": "a [wifi] table (docs/scenario.md, Wi-Fi link)",
    "mcs": "an HT MCS index 0-31",
    "width_mhz": "20 or 40",
    "short_gi": "true or false",
    "rate_control": '"fixed" or "minstrel"',
    "mcs_trace": _wifi.MCS_TRACE_FORM,
    "mpdu_error": _PROB_FORM,
    "snr_db": "a number of dB",
    "retry_limit": "an integer 0-1000",
    "aifsn": "an integer 1-15",
    "cw_min": "an integer 1-32767 (slots)",
    "cw_max": "an integer 1-32767 (slots)",
    "max_ampdu_frames": "an integer 1-64",
    "aggregation": "true or false",
    "driver_queue_fwd": "a number of packets ≥ 1",
    "driver_queue_rev": "a number of packets ≥ 1",
    "model": '"none", "bernoulli" or "gilbert"',
    "p": _PROB_FORM,
    "r": _PROB_FORM,
    "h": _PROB_FORM,
    "k": _PROB_FORM,
}


def _annotation_model(ann: Any) -> Any:
    """The model class or list element type inside an annotation (Optional/list unwrapped)."""
    origin = typing.get_origin(ann)
    if origin in (Union, getattr(__import__("types"), "UnionType", Union)):
        for a in typing.get_args(ann):
            if a is not type(None):
                return _annotation_model(a)
    return ann


def _model_at(loc: Sequence[Any]) -> Any:
    """The pydantic model class found at ``loc`` (aliases), or None."""
    node: Any = Scenario
    for part in loc:
        if isinstance(part, int):
            if typing.get_origin(node) is list:
                node = typing.get_args(node)[0]
                continue
            return None
        if not (isinstance(node, type) and issubclass(node, BaseModel)):
            return None
        for name, f in node.model_fields.items():
            if (f.alias or name) == part:
                node = _annotation_model(f.annotation)
                break
        else:
            return None
    return node if isinstance(node, type) and issubclass(node, BaseModel) else None


def _keys_of(model: Any) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


def _given(raw: Any, *path: str, default: Any = None) -> Any:
    """The value at ``path`` in the TOML-shaped input, as written (for quoting it back)."""
    for part in path:
        if not isinstance(raw, Mapping) or part not in raw:
            return default
        raw = raw[part]
    return raw


def _convert(err: ValidationError, source: str) -> ScenarioError:
    problems: list[tuple[str | None, str, str | None]] = []
    for e in err.errors(include_url=False):
        loc = [p for p in e["loc"] if isinstance(p, (str, int))]
        key = key_path(loc) or None
        leaf = next((p for p in reversed(loc) if isinstance(p, str)), "")
        typ = e["type"]
        ctx = e.get("ctx") or {}
        inp = e.get("input")
        expected: str | None = _FORMS.get(leaf)
        if typ == "ccbench":
            problem, expected = ctx.get("problem", e["msg"]), (ctx.get("expected") or None)
        elif typ == "extra_forbidden":
            model = _model_at(loc[:-1])
            allowed = _keys_of(model) if model else []
            close = difflib.get_close_matches(str(leaf), allowed, n=1)
            problem = f"unknown key '{leaf}'" + (f"; did you mean '{close[0]}'?" if close else "")
            expected = ("one of " + ", ".join(allowed)) if allowed else None
        elif typ == "missing":
            problem = "required key is missing"
        elif typ == "literal_error":
            problem = f"{_q(inp)} is not allowed"
            expected = "one of " + ctx.get("expected", "").replace("' or '", "', '")
        elif typ in ("bool_type", "bool_parsing"):
            problem = f"{_q(inp)} is not a boolean"
            expected = "true or false"
        elif typ in ("int_type", "int_parsing", "int_from_float"):
            problem = f"{_q(inp)} is not an integer"
        elif typ in ("model_type", "model_attributes_type", "dict_type"):
            problem = f"{_q(inp)} is not a table"
        elif typ == "list_type":
            problem = f"{_q(inp)} is not a list of tables"
        elif typ == "string_type":
            problem = f"{_q(inp)} is not a string"
            expected = expected if expected and "string" in expected else "a string"
        elif typ in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
            bound = {
                "greater_than_equal": "below",
                "greater_than": "not above",
                "less_than_equal": "above",
                "less_than": "not below",
            }[typ]
            limit = next(iter(ctx.values()), "")
            problem = f"{_q(inp)} is {bound} {limit}"
        elif typ == "too_short" and leaf == "flows":
            problem = "no flows"
        else:
            problem = f"{_q(inp)}: {e['msg']}" if not isinstance(inp, (dict, list)) else e["msg"]
        problems.append((key, problem, expected))
    key, problem, expected = problems[0]
    return ScenarioError(source, key, problem, expected, problems)


def as_scenario(
    scenario_or_path: Union[Scenario, str, Path, Mapping[str, Any]],
    overrides: Sequence[str] | Mapping[str, Any] = (),
) -> Scenario:
    """A Scenario from a Scenario, a path to a TOML file, or a TOML-shaped dict."""
    if isinstance(scenario_or_path, Scenario):
        return scenario_or_path.with_overrides(overrides) if overrides else scenario_or_path
    if isinstance(scenario_or_path, Mapping):
        sc = Scenario.from_dict(scenario_or_path)
        return sc.with_overrides(overrides) if overrides else sc
    return load_scenario(scenario_or_path, overrides)
