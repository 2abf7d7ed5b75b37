"""Each backend against the reference (the kernel): per cell, goodput and MIB-counter errors with
their uncertainty, and the targets they are held to."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from ..results.timing import faithful_timing
from ..study.spec import Study
from .plan import REFERENCE, plan_cells

#: every cell's goodput within 10 % of the kernel's
CELL_TARGET = 0.10


#: the median |goodput error| of an algorithm within 5 %
MEDIAN_TARGET = 0.05


#: in cells mixing algorithms, the first algorithm's goodput share within 0.05 of the kernel's
SHARE_TARGET = 0.05


#: counters within 25 % where both backends count at least COUNTER_MIN per run
COUNTER_TARGET = 0.25


#: mean events per run below which a counter (or the retransmits) is "trivial": not compared
COUNTER_MIN = 10.0


#: the counters shown per cell, and the side (host) whose count is shown: the receiver's for
#: PAWS (it checks the timestamps of the data segments), the sender's for the others.
COUNTERS: dict[str, str] = {
    "TcpExtPAWSEstab": "receiver",
    "TcpExtTCPLossProbes": "sender",
    "TcpExtTCPSACKReorder": "sender",
    "TcpExtTCPDSACKUndo": "sender",
    "TcpExtTCPFullUndo": "sender",
    "TcpExtTCPPartialUndo": "sender",
    "TcpExtTCPSpuriousRTOs": "sender",
    "TcpExtTCPTimeouts": "sender",
    "TcpExtTCPSackRecovery": "sender",
    "TcpExtTCPLostRetransmit": "sender",
    "TcpExtTCPDSACKRecv": "sender",
    "TcpExtTCPHystartTrainDetect": "sender",
    "TcpExtTCPHystartDelayDetect": "sender",
}


@dataclass
class Side:
    """One backend's runs of one cell."""

    goodput: list = field(default_factory=list)  # bit/s, per ok run
    rtt: list = field(default_factory=list)  # ms, mean over the run's flows of each one's mean srtt
    retx: list = field(default_factory=list)  # retransmitted segments, summed over flows
    ping: list = field(default_factory=list)  # ms, the probe's median RTT (runs with a probe)
    share: list = field(default_factory=list)  # the first algorithm's share of the goodput (runs mixing algorithms)
    counters: dict = field(default_factory=dict)  # counter -> [per-run value] (runs with a value)
    steal: list = field(default_factory=list)  # % of the CPU the host took, per ok run that records it
    steal_goodput: list = field(default_factory=list)  # (steal %, goodput bit/s) per ok run that records steal
    late: list = field(default_factory=list)  # µs, the emulator's p99 release lateness, per ok run that records it
    bbr_beyond_bdp: list = field(default_factory=list)  # packets per ok run with BBR (bbr_cwnd_beyond_bdp_pkts)
    disturbed: int = 0  # ok runs whose timing was not faithful (hostcpu.faithful_timing)
    failed: list = field(default_factory=list)  # error messages of failed runs
    missing: int = 0  # planned runs not in the store

    @property
    def n(self) -> int:
        return len(self.goodput)

    def mean(self, what: str) -> Optional[float]:
        v = [x for x in getattr(self, what) if x is not None and math.isfinite(x)]
        return float(np.mean(v)) if v else None

    def counter(self, name: str) -> Optional[float]:
        v = self.counters.get(name) or []
        return float(np.mean(v)) if v else None


def _num(x: Any) -> Optional[float]:
    try:
        if x is None or x is pd.NA:
            return None
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


class _Store:
    """The rows of one backend's store, indexed by run id."""

    def __init__(self, root: Path):
        self.runs: dict[str, dict] = {}
        self.flows: dict[str, list[dict]] = {}
        self.counters: dict[tuple[str, str], dict] = {}
        self.has_counters = False
        self.bbr_beyond_bdp: dict[str, float] = {}
        self.srtt_mean: dict[str, float] = {}
        if not root.is_dir():
            return
        from ..results.store import load

        res = load(root)
        for row in res.runs.to_dict("records"):
            self.runs[row["run_id"]] = row
        for row in res.flows.to_dict("records"):
            self.flows.setdefault(row["run_id"], []).append(row)
        try:
            counters = getattr(res, "counters", None)
        except Exception:  # noqa: BLE001 - an unreadable counters table is shown as "–"
            counters = None
        if isinstance(counters, pd.DataFrame) and not counters.empty and "side" in counters:
            self.has_counters = True
            for row in counters.to_dict("records"):
                self.counters[(row["run_id"], str(row["side"]))] = row
        series = _series(res)
        self.bbr_beyond_bdp = _bbr_beyond_bdp_per_run(series, self.flows)
        self.srtt_mean = _srtt_mean_per_run(series)

    def side(self, run_ids: Sequence[str]) -> Side:
        s = Side()
        for rid in run_ids:
            row = self.runs.get(rid)
            if row is None:
                s.missing += 1
                continue
            if row.get("status", "ok") != "ok":
                s.failed.append(str(row.get("error") or "failed"))
                continue
            flows = self.flows.get(rid, [])
            gp = _num(row.get("aggregate_goodput_bps"))
            if gp is None:
                vals = [_num(f.get("goodput_bps")) for f in flows]
                gp = sum(v for v in vals if v is not None) if flows else None
            s.goodput.append(gp)
            if rid in self.srtt_mean:
                s.rtt.append(self.srtt_mean[rid])
            else:
                rtts = [v for v in (_num(f.get("rtt_mean_ms")) for f in flows) if v is not None]
                s.rtt.append(float(np.mean(rtts)) if rtts else None)
            rx = [v for v in (_num(f.get("retransmits")) for f in flows) if v is not None]
            s.retx.append(float(sum(rx)) if rx else None)
            sh = _first_cc_share(flows)
            if sh is not None:
                s.share.append(sh)
            ping = _num(row.get("probe_rtt_p50_ms"))
            if ping is not None:
                s.ping.append(ping)
            steal, late = _num(row.get("host_steal_pct")), _num(row.get("emulator_late_p99_us"))
            if steal is not None:
                s.steal.append(steal)
                s.steal_goodput.append((steal, gp))
            if late is not None:
                s.late.append(late)
            if faithful_timing(steal, late) is False:
                s.disturbed += 1
            if rid in self.bbr_beyond_bdp:
                s.bbr_beyond_bdp.append(self.bbr_beyond_bdp[rid])
            for name, side in COUNTERS.items():
                crow = self.counters.get((rid, side))
                v = _num(crow.get(name)) if crow is not None else None
                if v is not None:
                    s.counters.setdefault(name, []).append(v)
        return s


def _series(res: Any) -> Optional[pd.DataFrame]:
    """The store's series table, or None when it has none or it cannot be read."""
    try:
        series = res.series
    except Exception:  # noqa: BLE001 - an unreadable series table leaves its columns empty
        return None
    if not isinstance(series, pd.DataFrame) or series.empty or "run_id" not in series:
        return None
    return series


def _bbr_beyond_bdp_per_run(series: Optional[pd.DataFrame], flows: dict[str, list[dict]]) -> dict[str, float]:
    """run id -> BBR's cwnd beyond 2 x bw x min_rtt (packets), for the runs with a BBR v1 flow
    whose series carry it."""
    from .. import analysis

    with_bbr = {rid for rid, fl in flows.items() if any(str(f.get("cc")).lower() == "bbr" for f in fl)}
    if not with_bbr or series is None:
        return {}
    out = {}
    for rid, rows in series[series["run_id"].isin(with_bbr)].groupby("run_id"):
        v = analysis.bbr_cwnd_beyond_bdp_pkts(rows)
        if v is not None and math.isfinite(v):
            out[str(rid)] = v
    return out


def _srtt_mean_per_run(series: Optional[pd.DataFrame]) -> dict[str, float]:
    """run id -> the mean over its flows of each flow's smoothed RTT (the series' rtt_ms, ms)
    averaged over the sample instants. Both backends sample the same estimator there (the
    kernel's tcpi_rtt, the simulator's srtt), whereas the flows' rtt_mean_ms is the mean of every
    RTT sample on the simulator and of srtt every 10 ms on the kernel: under loss at short RTTs
    those differ by a fifth (10 ms, 5 % loss: 10.5 against 12.4 ms on the simulator alone)."""
    if series is None or "rtt_ms" not in series or "flow_id" not in series:
        return {}
    rtt = series[["run_id", "flow_id", "rtt_ms"]].dropna()
    per_flow = rtt.groupby(["run_id", "flow_id"])["rtt_ms"].mean()
    return {str(rid): float(v) for rid, v in per_flow.groupby(level="run_id").mean().items() if math.isfinite(v)}


def _first_cc_share(flows: list[dict]) -> Optional[float]:
    """The goodput share of the algorithm of the lowest flow id, in a run whose flows use more than
    one algorithm (None otherwise): BBR's share in a BBR-beside-CUBIC cell."""
    ccs = {str(f.get("cc")) for f in flows}
    if len(ccs) < 2:
        return None
    first = str(min(flows, key=lambda f: f.get("flow_id", 0)).get("cc"))
    total = sum(_num(f.get("goodput_bps")) or 0.0 for f in flows)
    if total <= 0:
        return None
    return sum(_num(f.get("goodput_bps")) or 0.0 for f in flows if str(f.get("cc")) == first) / total


def rel_error(value: Optional[float], reference: Optional[float]) -> Optional[float]:
    """value / reference - 1, or None when either is missing or the reference is 0."""
    if value is None or reference is None or reference == 0:
        return None
    return value / reference - 1.0


def count_error(
    value: Optional[float], reference: Optional[float], minimum: float = COUNTER_MIN, target: float = COUNTER_TARGET
) -> tuple[Optional[float], str]:
    """Relative error of a count (mean per run) and its status: "ok" / "miss" (both at least
    ``minimum``: within ``target`` or not), "one-sided" (only one of them reaches ``minimum``),
    "trivial" (neither does) or "n/a" (a side has no value: not measured or not modelled)."""
    if value is None or reference is None:
        return None, "n/a"
    big_v, big_r = value >= minimum, reference >= minimum
    err = rel_error(value, reference)
    if big_v and big_r:
        return err, ("ok" if abs(err) <= target else "miss")
    if big_v or big_r:
        return err, "one-sided"
    return None, "trivial"


#: the verdicts on a cell's goodput, from the 95 % interval of mean(backend) / mean(reference) - 1
AGREES, DIFFERS, CANNOT_TELL = "agrees", "differs", "cannot tell"


def interval_verdict(lo: Optional[float], hi: Optional[float], target: float = CELL_TARGET) -> str:
    """AGREES when the interval of the relative difference lies within ±target, DIFFERS when it
    lies wholly outside, CANNOT_TELL when it straddles a bound or is unbounded (too few repeats
    or too much spread to decide)."""
    if lo is None or hi is None:
        return CANNOT_TELL
    if -target <= lo and hi <= target:
        return AGREES
    if hi < -target or lo > target:
        return DIFFERS
    return CANNOT_TELL


@dataclass
class Comparison:
    cells: list  # [Cell]
    backends: list  # backends shown (stores read), reference last when present
    sides: dict  # (cell index in cells, backend) -> Side
    reference: Optional[str]  # REFERENCE when its store has data, else None
    has_counters: dict  # backend -> bool
    draws: str = "common"  # how the compared backends' seeds relate to the reference's (plan.DRAWS)

    @property
    def compared(self) -> list[str]:
        """The backends compared against the reference."""
        return [b for b in self.backends if b != self.reference] if self.reference else []

    def side(self, i: int, backend: str) -> Side:
        return self.sides[(i, backend)]

    def goodput_error(self, i: int, backend: str) -> Optional[float]:
        return rel_error(self.side(i, backend).mean("goodput"), self.side(i, self.reference).mean("goodput"))

    def goodput_ratio_ci(self, i: int, backend: str):
        from .. import analysis

        return analysis.ratio_ci(self.side(i, backend).goodput, self.side(i, self.reference).goodput)

    def share_diff(self, i: int, backend: str) -> Optional[float]:
        """mean share(backend) - mean share(reference) of the cell's first algorithm (mixed cells)."""
        a, b = self.side(i, backend).mean("share"), self.side(i, self.reference).mean("share")
        return None if a is None or b is None else a - b

    def share_diff_interval(self, i: int, backend: str) -> tuple[Optional[float], Optional[float]]:
        """The 95 % interval of the share difference (Welch's t interval of the difference of the
        means, the repeats of each backend taken as independent samples), or (None, None) with
        fewer than two shares a side."""
        from .. import analysis

        t = analysis.welch_test(self.side(i, backend).share, self.side(i, self.reference).share)
        return t.diff_lo, t.diff_hi

    def share_verdict(self, i: int, backend: str) -> Optional[str]:
        """AGREES / DIFFERS / CANNOT_TELL for the first algorithm's share against SHARE_TARGET
        (None: not a cell that mixes algorithms)."""
        if self.share_diff(i, backend) is None:
            return None
        return interval_verdict(*self.share_diff_interval(i, backend), target=SHARE_TARGET)

    def _with_repeats(self, verdict: Optional[str], i: int, backend: str) -> str:
        if verdict is None:
            return "not compared"
        if verdict == CANNOT_TELL:
            n = min(self.side(i, backend).n, self.side(i, self.reference).n)
            return f"{CANNOT_TELL} with {n} repeats"
        return verdict

    def timing(self, backend: str) -> Optional[dict]:
        """Over all the backend's ok runs that record their timing (kernel runs): how many, how
        many were disturbed, and the median and largest host steal (%) and emulator p99
        lateness (µs). None when no run records it."""
        sides = [self.side(i, backend) for i in range(len(self.cells))]
        steal = [x for s in sides for x in s.steal]
        late = [x for s in sides for x in s.late]
        if not steal and not late:
            return None
        return {
            "runs": sum(s.n for s in sides),
            "disturbed": sum(s.disturbed for s in sides),
            "steal_median_pct": float(np.median(steal)) if steal else None,
            "steal_max_pct": max(steal) if steal else None,
            "late_median_us": float(np.median(late)) if late else None,
            "late_max_us": max(late) if late else None,
        }

    def goodput_steal_correlation(self, i: int, backend: str):
        """analysis.Correlation of the cell's per-run goodput with the host's steal (kernel runs):
        a significant one says the reference's own number depends on how busy the host was."""
        from .. import analysis

        pairs = self.side(i, backend).steal_goodput
        return analysis.correlation([a for a, _ in pairs], [b for _, b in pairs])

    @property
    def has_bbr_beyond_bdp(self) -> bool:
        return any(self.side(i, b).bbr_beyond_bdp for i in range(len(self.cells)) for b in self.backends)

    @property
    def has_shares(self) -> bool:
        return any(self.side(i, b).share for i in range(len(self.cells)) for b in self.backends)

    def spread(self, i: int, backend: str) -> Optional[float]:
        """The goodput's coefficient of variation across the repeats (sample sd / mean), or None
        with fewer than 2 runs."""
        g = [x for x in self.side(i, backend).goodput if x is not None and math.isfinite(x)]
        if len(g) < 2 or np.mean(g) == 0:
            return None
        return float(np.std(g, ddof=1) / np.mean(g))

    def goodput_error_interval(self, i: int, backend: str) -> tuple[Optional[float], Optional[float]]:
        """The 95 % interval of mean(backend) / mean(reference) - 1 (Fieller), or (None, None)."""
        r = self.goodput_ratio_ci(i, backend)
        if r.lo is None or r.hi is None:
            return None, None
        return r.lo - 1.0, r.hi - 1.0

    def verdict(self, i: int, backend: str) -> Optional[str]:
        """AGREES / DIFFERS / CANNOT_TELL for the cell's goodput (None: nothing to compare)."""
        if self.goodput_error(i, backend) is None:
            return None
        return interval_verdict(*self.goodput_error_interval(i, backend))

    def verdict_text(self, i: int, backend: str) -> str:
        return self._with_repeats(self.verdict(i, backend), i, backend)

    def share_verdict_text(self, i: int, backend: str) -> str:
        return self._with_repeats(self.share_verdict(i, backend), i, backend)

    def retx_error(self, i: int, backend: str) -> tuple[Optional[float], str]:
        return count_error(self.side(i, backend).mean("retx"), self.side(i, self.reference).mean("retx"))

    def counter_error(self, i: int, backend: str, name: str) -> tuple[Optional[float], str]:
        return count_error(self.side(i, backend).counter(name), self.side(i, self.reference).counter(name))

    def counter_misses(self, i: int, backend: str) -> list[str]:
        return [n for n in COUNTERS if self.counter_error(i, backend, n)[1] == "miss"]

    def cell_ok(self, i: int, backend: str) -> Optional[bool]:
        e = self.goodput_error(i, backend)
        return None if e is None else abs(e) <= CELL_TARGET

    def summary(self, backend: str) -> pd.DataFrame:
        """Per algorithm (and "all"): cells compared, median and worst |goodput error|, cells
        within CELL_TARGET, whether the targets are met, counter comparisons and misses."""
        groups: dict[str, list[int]] = {}
        for i, c in enumerate(self.cells):
            groups.setdefault(c.cc, []).append(i)
        groups["all"] = list(range(len(self.cells)))
        rows = []
        for cc, idx in groups.items():
            errs = [(i, self.goodput_error(i, backend)) for i in idx]
            errs = [(i, e) for i, e in errs if e is not None]
            absv = [abs(e) for _, e in errs]
            worst = max(errs, key=lambda x: abs(x[1])) if errs else None
            n_counter = sum(1 for i in idx for n in COUNTERS if self.counter_error(i, backend, n)[1] in ("ok", "miss"))
            n_miss = sum(len(self.counter_misses(i, backend)) for i in idx)
            within = sum(1 for a in absv if a <= CELL_TARGET)
            median = float(np.median(absv)) if absv else None
            verdicts = [self.verdict(i, backend) for i, _ in errs]
            share_verdicts = [v for v in (self.share_verdict(i, backend) for i in idx) if v is not None]
            rows.append(
                {
                    "backend": backend,
                    "cc": cc,
                    "cells": len(idx),
                    "compared": len(errs),
                    "median |err| %": None if median is None else 100 * median,
                    "worst |err| %": None if worst is None else 100 * abs(worst[1]),
                    "worst cell": "" if worst is None else self.cells[worst[0]].name,
                    "within 10 %": within,
                    "targets met": (bool(errs) and within == len(errs) and median <= MEDIAN_TARGET) if errs else None,
                    AGREES: verdicts.count(AGREES),
                    DIFFERS: verdicts.count(DIFFERS),
                    CANNOT_TELL: verdicts.count(CANNOT_TELL),
                    "share compared": len(share_verdicts),
                    f"share {AGREES}": share_verdicts.count(AGREES),
                    f"share {DIFFERS}": share_verdicts.count(DIFFERS),
                    f"share {CANNOT_TELL}": share_verdicts.count(CANNOT_TELL),
                    "counters compared": n_counter,
                    "counters missed": n_miss,
                }
            )
        return pd.DataFrame(rows)

    def table(self) -> pd.DataFrame:
        """One row per cell (the CSV): every backend's numbers, the errors against the reference."""
        rows = []
        for i, c in enumerate(self.cells):
            row: dict[str, Any] = {"part": c.part, "cell": c.label, "cc": c.cc}
            row.update({k: _param_text(v) for k, v in c.params.items()})
            for b in self.backends:
                s = self.side(i, b)
                gp = [x for x in s.goodput if x is not None]
                ci = _mean_ci(gp)
                row[f"{b}_runs"] = s.n
                row[f"{b}_failed"] = len(s.failed)
                row[f"{b}_missing"] = s.missing
                row[f"{b}_goodput_mbps"] = mbit(ci.mean)
                row[f"{b}_goodput_min_mbps"] = mbit(min(gp)) if gp else None
                row[f"{b}_goodput_max_mbps"] = mbit(max(gp)) if gp else None
                row[f"{b}_goodput_ci_lo_mbps"] = mbit(ci.lo)
                row[f"{b}_goodput_ci_hi_mbps"] = mbit(ci.hi)
                row[f"{b}_goodput_cv_pct"] = _pct(self.spread(i, b))
                row[f"{b}_rtt_mean_ms"] = s.mean("rtt")
                row[f"{b}_first_cc_share"] = s.mean("share")
                row[f"{b}_retransmits"] = s.mean("retx")
                row[f"{b}_host_steal_max_pct"] = max(s.steal) if s.steal else None
                row[f"{b}_emulator_late_p99_max_us"] = max(s.late) if s.late else None
                row[f"{b}_runs_disturbed"] = s.disturbed if (s.steal or s.late) else None
                row[f"{b}_bbr_cwnd_beyond_bdp_pkts"] = s.mean("bbr_beyond_bdp")
                corr = self.goodput_steal_correlation(i, b)
                row[f"{b}_goodput_steal_r"] = corr.r
                row[f"{b}_goodput_steal_p"] = corr.p_value
                for n in COUNTERS:
                    row[f"{b}_{n}"] = s.counter(n)
            for b in self.compared:
                e = self.goodput_error(i, b)
                r = self.goodput_ratio_ci(i, b)
                re_, rs = self.retx_error(i, b)
                row[f"{b}_goodput_err_pct"] = _pct(e)
                row[f"{b}_goodput_err_ci_lo_pct"] = _pct(None if r.lo is None else r.lo - 1)
                row[f"{b}_goodput_err_ci_hi_pct"] = _pct(None if r.hi is None else r.hi - 1)
                row[f"{b}_goodput_within_10pct"] = self.cell_ok(i, b)
                row[f"{b}_goodput_verdict"] = self.verdict(i, b)
                row[f"{b}_share_diff"] = self.share_diff(i, b)
                row[f"{b}_share_within_target"] = (
                    None if self.share_diff(i, b) is None else abs(self.share_diff(i, b)) <= SHARE_TARGET
                )
                share_lo, share_hi = self.share_diff_interval(i, b)
                row[f"{b}_share_diff_ci_lo"] = share_lo
                row[f"{b}_share_diff_ci_hi"] = share_hi
                row[f"{b}_share_verdict"] = self.share_verdict(i, b)
                row[f"{b}_retx_err_pct"] = _pct(re_)
                row[f"{b}_retx_status"] = rs
                for n in COUNTERS:
                    ce, cs = self.counter_error(i, b, n)
                    row[f"{b}_{n}_err_pct"] = _pct(ce)
                    row[f"{b}_{n}_status"] = cs
                row[f"{b}_counters_missed"] = " ".join(self.counter_misses(i, b))
            rows.append(row)
        return pd.DataFrame(rows)


def _mean_ci(values):
    """Goodput's mean and t interval, cut at 0 (analysis.mean_ci)."""
    from .. import analysis

    return analysis.mean_ci(values, nonnegative=True)


def mbit(x: Optional[float]) -> Optional[float]:
    return None if x is None else x / 1e6


def _pct(x: Optional[float]) -> Optional[float]:
    return None if x is None else 100.0 * x


def _param_text(v: Any) -> str:
    from ..sweeps.grid import param_str

    return param_str(v)


def compare(
    study: Study,
    out: str | os.PathLike,
    backends: Sequence[str],
    quick: bool = False,
    repeat: Optional[int] = None,
    stores: Optional[dict] = None,
    draws: str = "common",
) -> Comparison:
    """Read DIR/<backend>/ of every backend (``stores``: backend -> store directory, for stores
    laid out otherwise; a missing store reads as no runs) and line the grid's cells up. The
    reference is shown last; it is None when its store has no ok run."""
    out = Path(out)
    stores = stores or {}
    order = [b for b in backends if b != REFERENCE] + ([REFERENCE] if REFERENCE in backends else [])
    cells = plan_cells(study, order, quick, repeat, draws)
    sides = {}
    has_counters = {}
    for b in order:
        st = _Store(Path(stores[b]) if b in stores else out / b)
        has_counters[b] = st.has_counters
        for i, c in enumerate(cells):
            sides[(i, b)] = st.side(c.run_ids.get(b, []))
    reference = REFERENCE if REFERENCE in order and any(sides[(i, REFERENCE)].n for i in range(len(cells))) else None
    return Comparison(cells, order, sides, reference, has_counters, draws)


@dataclass
class ValidateRun:
    study: Study
    out: Path
    quick: bool
    backends: list  # requested, in order
    repeat: Optional[int] = None  # --repeat (None: each part's own)
    draws: str = "independent"  # plan.DRAWS: the compared backends' seeds against the reference's
    ran: list = field(default_factory=list)  # backends run now
    skipped: dict = field(default_factory=dict)  # backend -> why it was not run
    summaries: dict = field(default_factory=dict)  # backend -> [SweepSummary per part]
    wall_s: dict = field(default_factory=dict)  # backend -> seconds
    rerun: dict = field(default_factory=dict)  # backend -> stored runs deleted first
    comparison: Optional[Comparison] = None
    files: dict = field(default_factory=dict)  # "md" / "csv" / "svg" -> Path
    notes: list = field(default_factory=list)

    @property
    def all_ok(self) -> bool:
        return all(s.all_ok for ss in self.summaries.values() for s in ss)

    def executed(self, backend: str) -> int:
        return sum(s.executed for s in self.summaries.get(backend, []))
