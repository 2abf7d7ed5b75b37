"""The bottleneck's queue discipline: ``bottleneck.aqm`` and its ``[bottleneck.aqm_params]``.

Each discipline takes the parameters of its ``tc`` qdisc (tc-codel, tc-fq_codel, tc-pie,
tc-red, tc-fq, tc-dualpi2), with the RFC / Linux defaults; ``step`` (DCTCP's step ECN marking
at K) takes ``k`` and ``limit``, each in packets or bytes; docs/scenario.md lists them. This module parses
them (units as everywhere in a scenario), says which key is wrong and what is accepted, and
resolves the defaults into the simulator's form (crates/queue/src/aqm.rs ``AqmParams``:
SI integers, ``*_ns`` times, bytes, packets, bit/s), which is also what the results record in
the ``aqm_params`` column.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from .. import units
from ..units import UnitError
from ..units import quote as _q
from . import limits

__all__ = ["NAMES", "PARAMS", "problems", "given_wire", "resolved_wire", "params_json"]

#: The disciplines a scenario may name (``droptail`` is the default).
NAMES = ("droptail", "codel", "fq_codel", "pie", "red", "fq", "step", "dualpi2")

MTU = 1500
#: psched_mtu of an Ethernet device: the quantum and CoDel's MTU in Linux.
LINUX_MTU = 1514


@dataclass(frozen=True)
class Param:
    """One parameter: its TOML key, the simulator's field, how its value is written."""

    key: str
    wire: str  # for kind "queue", the prefix of <wire>_packets / <wire>_bytes
    kind: str  # time | size | rate | percent | int | bool | queue (packets or bytes) | step (time or packets)
    lo: int = 1
    hi: int = 0
    doc: str = ""


def _p(key, wire, kind, lo=1, hi=0, doc=""):
    return Param(key, wire, kind, lo, hi, doc)


_MAX_PKTS = limits.MAX_BUFFER_PACKETS
#: sch_dualpi2.c ALPHA_BETA_MAX: the largest gain netlink accepts, in 1/256 Hz.
_DUALPI2_GAIN_MAX = (1 << 31) - 1
_TARGET = _p("target", "target_ns", "time", doc="queueing-delay target")
_INTERVAL = _p("interval", "interval_ns", "time", doc="CoDel interval (about a worst-case RTT)")
_LIMIT_PKTS = _p("limit", "limit_packets", "int", 1, _MAX_PKTS, "tail-drop limit, packets")
_ECN = _p("ecn", "ecn", "bool", doc="CE-mark ECN-capable packets instead of dropping")

#: The parameters of each discipline, in documentation order.
PARAMS: dict[str, tuple[Param, ...]] = {
    "droptail": (),
    "codel": (_TARGET, _INTERVAL, _LIMIT_PKTS, _ECN),
    "fq_codel": (
        _TARGET,
        _INTERVAL,
        _LIMIT_PKTS,
        _ECN,
        _p("flows", "flows", "int", 1, 65536, "hash buckets"),
        _p("quantum", "quantum", "size", 1, 1 << 20, "bytes a flow sends per round"),
        _p("memory_limit", "memory_limit", "size", 1, 1 << 40, "memory the queued packets may use"),
        _p("drop_batch", "drop_batch", "int", 1, 1 << 16, "packets dropped at once from the fattest flow"),
    ),
    "pie": (
        _TARGET,
        _p("tupdate", "tupdate_ns", "time", doc="period of the drop-probability update"),
        _LIMIT_PKTS,
        _ECN,
        _p("alpha", "alpha", "int", 0, 32, "gain on the delay error, in 1/16"),
        _p("beta", "beta", "int", 0, 32, "gain on the delay trend, in 1/16"),
        _p("bytemode", "bytemode", "bool", doc="scale the drop probability by packet size"),
    ),
    "red": (
        _p("limit", "limit_bytes", "size", MTU, limits.MAX_BUFFER_BYTES, "tail-drop limit, bytes"),
        _p("min", "min_bytes", "size", 1, limits.MAX_BUFFER_BYTES, "lower threshold of the average queue"),
        _p("max", "max_bytes", "size", 1, limits.MAX_BUFFER_BYTES, "upper threshold of the average queue"),
        _p("probability", "probability", "percent", doc="signal probability at max"),
        _p("avpkt", "avpkt", "size", 1, 1 << 16, "typical packet size"),
        _p("burst", "burst", "int", 1, _MAX_PKTS, "packets let through an empty queue (sets the EWMA weight)"),
        _p("gentle", "gentle", "bool", doc="ramp from probability to 1 between max and 2 max"),
        _ECN,
        _p("harddrop", "harddrop", "bool", doc="drop, not mark, above max"),
    ),
    "fq": (
        _p("limit", "limit_packets", "int", 1, _MAX_PKTS, "tail-drop limit, packets"),
        _p("flow_limit", "flow_limit", "int", 1, _MAX_PKTS, "packets one flow may queue"),
        _p("quantum", "quantum", "size", 1, 1 << 20, "bytes a flow sends per round"),
        _p("initial_quantum", "initial_quantum", "size", 1, 1 << 20, "credit of a new flow"),
        _p("maxrate", "maxrate_bps", "rate", doc="per-flow rate cap (default none)"),
        _p("horizon", "horizon_ns", "time", doc="drop packets timestamped further ahead"),
        _p("ce_threshold", "ce_threshold_ns", "time", doc="CE-mark packets this late (default off)"),
    ),
    "step": (
        _p("k", "k", "queue", 1, _MAX_PKTS, "CE-mark ECT packets arriving at a queue above this"),
        _p("limit", "limit", "queue", 1, _MAX_PKTS, "tail-drop limit (default bottleneck.buffer)"),
    ),
    "dualpi2": (
        _p("target", "target_ns", "time", doc="classic queue's PI2 delay target"),
        _p("tupdate", "tupdate_ns", "time", doc="period of the PI2 probability update"),
        _p("alpha", "alpha", "int", 1, _DUALPI2_GAIN_MAX, "integral gain, in 1/256 Hz"),
        _p("beta", "beta", "int", 1, _DUALPI2_GAIN_MAX, "proportional gain, in 1/256 Hz"),
        _p("step_thresh", "step_thresh", "step", 0, _MAX_PKTS, "L queue's CE-marking step: a sojourn time or packets"),
        _p("min_qlen_step", "min_qlen_step", "int", 0, _MAX_PKTS, "the step applies from this L-queue length"),
        _p("coupling", "coupling", "int", 1, 255, "coupling factor k: L probability = k × p'"),
        _p("c_protection", "c_protection", "int", 0, 100, "classic queue's scheduler weight, %"),
        _LIMIT_PKTS,
        _p("memory_limit", "memory_limit", "size", 1, (1 << 32) - 1, "memory the queued packets may use"),
        _p("drop_overload", "drop_overload", "bool", doc="on overload drop L4S packets rather than only mark"),
        _p("drop_early", "drop_early", "bool", doc="decide at enqueue instead of dequeue"),
    ),
}

_MS = 1_000_000
#: Linux's defaults (sch_codel.c, sch_fq_codel.c, sch_pie.c, sch_fq.c), in the simulator's
#: form. RED's depend on the buffer: see :func:`_red_defaults`. A missing key (fq's maxrate,
#: ce_threshold) is off.
DEFAULTS: dict[str, dict[str, Any]] = {
    "droptail": {},
    "codel": {"target_ns": 5 * _MS, "interval_ns": 100 * _MS, "limit_packets": 1000, "ecn": False},
    "fq_codel": {
        "target_ns": 5 * _MS,
        "interval_ns": 100 * _MS,
        "limit_packets": 10240,
        "ecn": True,
        "flows": 1024,
        "quantum": LINUX_MTU,
        "memory_limit": 32 << 20,
        "drop_batch": 64,
    },
    "pie": {
        "target_ns": 15 * _MS,
        "tupdate_ns": 15 * _MS,
        "limit_packets": 1000,
        "ecn": False,
        "alpha": 2,
        "beta": 20,
        "bytemode": False,
    },
    # step's limit is the buffer (see resolved_wire); K is 65 packets, the DCTCP paper's setting
    # for 10 Gbit/s ports (crates/queue/src/step.rs StepConfig::DEFAULT_K_PACKETS).
    "step": {"k_packets": 65},
    # dualpi2_reset_default (sch_dualpi2.c, Linux 6.18); memory_limit follows limit (see
    # resolved_wire): limit × 2 × psched_mtu.
    "dualpi2": {
        "target_ns": 15 * _MS,
        "tupdate_ns": 16 * _MS,
        "alpha": 41,
        "beta": 819,
        "step_thresh_ns": 1 * _MS,
        "min_qlen_step": 0,
        "coupling": 2,
        "c_protection": 10,
        "limit_packets": 10000,
        "memory_limit": 10000 * 2 * LINUX_MTU,
        "drop_overload": True,
        "drop_early": False,
    },
    "fq": {
        "limit_packets": 10000,
        "flow_limit": 100,
        "quantum": 2 * LINUX_MTU,
        "initial_quantum": 10 * LINUX_MTU,
        "horizon_ns": 10_000 * _MS,
    },
}


def _red_defaults(limit_bytes: int, given: Mapping[str, Any]) -> dict[str, Any]:
    """RED's defaults for a byte limit (RedConfig::for_buffer): min = limit / 10 (at least one
    packet), max = 3 × min, probability 10 %, gentle, avpkt 1500, burst (2 min + max) /
    (3 avpkt) as tc red; a given min moves the default max with it."""
    avpkt = given.get("avpkt", MTU)
    lo = given.get("min_bytes", max(limit_bytes // 10, MTU))
    hi = given.get("max_bytes", 3 * lo)
    return {
        "limit_bytes": limit_bytes,
        "min_bytes": lo,
        "max_bytes": hi,
        "probability": 0.1,
        "avpkt": avpkt,
        "burst": max((2 * lo + hi) // (3 * avpkt), 1),
        "gentle": True,
        "ecn": False,
        "harddrop": False,
    }


_FORMS = {
    "time": units.TIME_FORM,
    "size": units.SIZE_FORM,
    "rate": units.RATE_FORM,
    "percent": units.PERCENT_FORM,
    "bool": "true or false",
    "queue": 'packets ("65pkt" or an integer count) or a size such as "97500B" or "100KB"',
    "step": 'a sojourn time such as "1ms" or packets ("5pkt" or an integer count)',
}

_PARSERS: dict[str, Callable[[Any], Any]] = {
    "time": units.parse_time_ns,
    "size": units.parse_size,
    "rate": units.parse_rate,
    "percent": units.parse_percent,
}


def _parse_queue(p: Param, value: Any) -> tuple[str, int]:
    """A queue length as ("packets", n) or ("bytes", n): an integer or "<n>pkt" counts packets
    (as the other disciplines' ``limit``), a size counts bytes (as ``bottleneck.buffer``)."""
    form = _FORMS["queue"]
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise UnitError(f"{_q(value)} is negative", form)
        kind, n = "packets", value
    elif isinstance(value, float):
        raise UnitError(f"{_q(value)} is not an integer count of packets", form)
    else:
        try:
            spec = units.parse_buffer(value)
        except UnitError as e:
            raise UnitError(e.problem, form) from None
        if spec.kind == "bdp":
            raise UnitError(f"{_q(value)}: the queue does not know the BDP here", form)
        kind, n = spec.kind, int(spec.value)
    hi = p.hi if kind == "packets" else p.hi * MTU
    if not p.lo <= n <= hi:
        raise UnitError(f"{_q(value)} is out of range", f"{form}, from {p.lo} to {hi} {kind}")
    return kind, n


def _parse_step(p: Param, value: Any) -> tuple[str, int]:
    """DualPI2's step threshold as ("ns", t) or ("packets", n): an integer or "<n>pkt" counts
    packets in the L queue (tc's ``step_thresh 5packets``), a time is a sojourn time."""
    form = _FORMS["step"]
    if isinstance(value, bool) or isinstance(value, float):
        raise UnitError(f"{_q(value)} is neither a time nor a packet count", form)
    if isinstance(value, int) or (isinstance(value, str) and value.strip().lower().endswith("pkt")):
        n = value if isinstance(value, int) else value.strip()[:-3].strip()
        try:
            n = int(n)
        except ValueError:
            raise UnitError(f"{_q(value)} is not a packet count", form) from None
        if not p.lo <= n <= p.hi:
            raise UnitError(f"{_q(value)} is out of range", f"{form}, from {p.lo} to {p.hi} packets")
        return "packets", n
    try:
        t = units.parse_time_ns(value)
    except UnitError as e:
        raise UnitError(e.problem, form) from None
    if not 0 <= t <= limits.MAX_TIME_NS:
        raise UnitError(f"{_q(value)} is out of range", form)
    return "ns", t


def _parse(p: Param, value: Any) -> Any:
    """The value in the simulator's form; UnitError naming what is accepted otherwise."""
    if p.kind == "queue":
        return _parse_queue(p, value)
    if p.kind == "step":
        return _parse_step(p, value)
    if p.kind == "bool":
        if not isinstance(value, bool):
            raise UnitError(f"{_q(value)} is not a boolean", _FORMS["bool"])
        return value
    if p.kind == "int":
        form = f"an integer from {p.lo} to {p.hi}"
        if isinstance(value, bool) or not isinstance(value, int):
            raise UnitError(f"{_q(value)} is not an integer", form)
        if not p.lo <= value <= p.hi:
            raise UnitError(f"{_q(value)} is out of range", form)
        return value
    n = _PARSERS[p.kind](value)
    if p.kind == "percent":
        if n <= 0:
            raise UnitError(f"{_q(value)} is not above 0%", _FORMS["percent"])
        return n
    hi = p.hi or (limits.MAX_TIME_NS if p.kind == "time" else limits.MAX_RATE_BPS)
    if not p.lo <= n <= hi:
        raise UnitError(f"{_q(value)} is out of range", f"{_FORMS[p.kind]}, from {p.lo} to {hi} in SI units")
    return n


def _takes(aqm: str) -> str:
    keys = [p.key for p in PARAMS.get(aqm, ())]
    return f"{aqm} takes " + (", ".join(keys) if keys else "no parameters (its limit is bottleneck.buffer)")


def problems(
    aqm: str, raw: Any, prefix: str = "bottleneck.aqm_params", buffer_bytes: Optional[int] = None
) -> list[tuple[str, str, str]]:
    """(key, problem, expected) for every parameter of ``raw`` that ``aqm`` does not take or
    whose value does not parse or is out of range. ``buffer_bytes``: the scenario buffer in
    bytes (step's default limit), when known, to check step's K against it."""
    if aqm not in PARAMS:
        return []  # the name itself is refused by the schema
    if not isinstance(raw, Mapping):
        return [(prefix, f"{_q(raw)} is not a table", "a [bottleneck.aqm_params] table: " + _takes(aqm))]
    by_key = {p.key: p for p in PARAMS[aqm]}
    out = []
    for key, value in raw.items():
        p = by_key.get(key)
        if p is None:
            other = [a for a in NAMES if any(q.key == key for q in PARAMS[a])]
            where = f" (a parameter of {', '.join(other)})" if other else ""
            out.append((f"{prefix}.{key}", f"'{key}' is not a parameter of {aqm}{where}", _takes(aqm)))
            continue
        try:
            _parse(p, value)
        except UnitError as e:
            out.append((f"{prefix}.{key}", e.problem, e.expected))
    if not out and aqm == "red":
        given = given_wire(aqm, raw)
        r = _red_defaults(given.get("limit_bytes", 10 * MTU), given)
        if r["min_bytes"] >= r["max_bytes"]:
            out.append(
                (f"{prefix}.max", f"max ({r['max_bytes']} B) is not above min ({r['min_bytes']} B)", "min < max")
            )
    if not out and aqm == "step":
        out += _step_problems(raw, prefix, buffer_bytes)
    return out


def _show_queue(wire: Mapping[str, Any], name: str) -> str:
    if f"{name}_packets" in wire:
        return f"{wire[f'{name}_packets']} packets"
    return f"{wire[f'{name}_bytes']} B"


def _queue_bytes(wire: Mapping[str, Any], name: str) -> int:
    """A step threshold or limit in bytes, packets counting as MTU bytes (as the simulator's check)."""
    return wire[f"{name}_packets"] * MTU if f"{name}_packets" in wire else wire[f"{name}_bytes"]


def _step_problems(raw: Mapping[str, Any], prefix: str, buffer_bytes: Optional[int]) -> list[tuple[str, str, str]]:
    """K must be below the limit (at or above it the step would never mark). With the limit
    defaulting to the buffer, checked only when the buffer is known."""
    given = given_wire("step", raw)
    if "limit_packets" not in given and "limit_bytes" not in given:
        if buffer_bytes is None:
            return []
        given["limit_bytes"] = buffer_bytes
    w = {**DEFAULTS["step"], **given} if "k_bytes" not in given else given
    if _queue_bytes(w, "k") < _queue_bytes(w, "limit"):
        return []
    k_text = _q(raw["k"]) if "k" in raw else f"the default k ({DEFAULTS['step']['k_packets']} packets)"
    where = "limit" if "limit" in raw else "the buffer (step's default limit)"
    return [
        (
            f"{prefix}.k",
            f"{k_text} is not below {where}, {_show_queue(w, 'limit')}: the step would never mark",
            'k below the limit (packets count as 1500 B), e.g. k = "20pkt" or a larger bottleneck.buffer',
        )
    ]


def given_wire(aqm: str, raw: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The parameters given, in the simulator's form (call after :func:`problems` is empty)."""
    by_key = {p.key: p for p in PARAMS.get(aqm, ())}
    out: dict[str, Any] = {}
    for k, v in (raw or {}).items():
        p = by_key[k]
        if p.kind in ("queue", "step"):
            kind, n = _parse(p, v)
            out[f"{p.wire}_{kind}"] = n
        else:
            out[p.wire] = _parse(p, v)
    return out


def resolved_wire(aqm: str, raw: Optional[Mapping[str, Any]], buffer_bytes: int) -> dict[str, Any]:
    """Every parameter ``aqm`` runs with: the given ones over the defaults. ``buffer_bytes``:
    the scenario buffer in bytes (RED's default limit)."""
    given = given_wire(aqm, raw)
    if aqm == "red":
        return {**_red_defaults(given.get("limit_bytes", buffer_bytes), given), **given}
    if aqm == "step":
        # k and limit each in packets or bytes: a given one replaces its default in either unit;
        # the default limit is the buffer in bytes (a buffer in packets counts 1500 B a packet).
        k = {key: v for key, v in given.items() if key.startswith("k_")} or DEFAULTS["step"]
        limit = {key: v for key, v in given.items() if key.startswith("limit_")} or {"limit_bytes": buffer_bytes}
        return {**k, **limit}
    if aqm == "dualpi2":
        # A given step replaces the default in either unit; a given packet limit carries the
        # memory limit with it (get_memory_limit: limit × 2 × MTU, at most 2^32 − 1).
        base = dict(DEFAULTS["dualpi2"])
        if "step_thresh_packets" in given:
            del base["step_thresh_ns"]
        if "limit_packets" in given:
            base["memory_limit"] = min(given["limit_packets"] * 2 * LINUX_MTU, (1 << 32) - 1)
        return {**base, **given}
    return {**DEFAULTS[aqm], **given}


def params_json(params: Mapping[str, Any]) -> str:
    """The ``aqm_params`` result column: the resolved parameters as compact sorted JSON."""
    return json.dumps(dict(params), sort_keys=True, separators=(",", ":"))
