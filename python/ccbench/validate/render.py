"""The comparison as tables (terminal and Markdown), validate.md and the goodput figure."""

from __future__ import annotations

import datetime
import os
import subprocess
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from ..results.timing import FAITHFUL_LATE_P99_US, QUIET_HOST_STEAL_PCT
from ..study.spec import Study
from .compare import (
    AGREES,
    CANNOT_TELL,
    CELL_TARGET,
    COUNTER_MIN,
    COUNTER_TARGET,
    COUNTERS,
    DIFFERS,
    MEDIAN_TARGET,
    SHARE_TARGET,
    Comparison,
    Side,
    ValidateRun,
    mbit,
)
from .plan import INDEPENDENT_SEED_OFFSET, REFERENCE


def _f(x: Optional[float], digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _err_text(e: Optional[float]) -> str:
    return "–" if e is None else f"{100 * e:+.1f} %"


def _goodput_text(s: Side) -> str:
    gp = [x for x in s.goodput if x is not None]
    if not gp:
        return "–"
    text = f"{np.mean(gp) / 1e6:.2f}"
    if len(gp) > 1:
        text += f" ({min(gp) / 1e6:.2f}–{max(gp) / 1e6:.2f})"
    return text


def _count_text(x: Optional[float]) -> str:
    if x is None:
        return "–"
    return f"{x:.0f}" if abs(x) >= 10 or x == int(x) else f"{x:.1f}"


def _counter_cell(comp: Comparison, i: int, name: str) -> str:
    vals = [_count_text(comp.side(i, b).counter(name)) for b in comp.backends]
    text = " / ".join(vals)
    for b in comp.compared:
        _, status = comp.counter_error(i, b, name)
        if status == "miss":
            text += " ✗"
        elif status == "one-sided":
            text += " ⚠"
    return text


def main_rows(comp: Comparison, compact: bool = False) -> tuple[list[str], list[list[str]]]:
    """The per-cell table: header and rows of text. ``compact`` (the terminal): part and cell in
    one column, goodput without its range."""
    head = ["cell", "cc"] if compact else ["part", "cell", "cc"]
    for b in comp.backends:
        head.append(f"{b} Mbit/s" if compact else f"{b} goodput Mbit/s")
    for b in comp.compared:
        head.append(f"{b} err")
        if not compact:
            head.append(f"{b} err 95 %")
    if comp.reference and not compact:
        head.append(f"{comp.reference} spread")
    if comp.has_shares:
        head += [f"{b} share" for b in comp.backends] + [f"{b} share diff" for b in comp.compared]
        if not compact:
            head += [f"{b} share diff 95 %" for b in comp.compared]
    timed = [] if compact else [b for b in comp.backends if comp.timing(b)]
    head += [f"{b} timing" for b in timed]
    for b in comp.backends:
        head.append(f"{b} RTT ms")
    for b in comp.backends:
        head.append(f"{b} retx")
    for b in comp.compared:
        head.append(f"{b} retx err")
    if comp.compared:
        head.append("verdict")
    rows = []
    for i, c in enumerate(comp.cells):
        row = [c.name, c.cc] if compact else [c.part, c.label or "–", c.cc]
        for b in comp.backends:
            s = comp.side(i, b)
            g = _f(mbit(s.mean("goodput"))) if compact else _goodput_text(s)
            row.append(g + _failed_note(s))
        for b in comp.compared:
            row.append(_err_text(comp.goodput_error(i, b)))
            if not compact:
                row.append(_interval_text(*comp.goodput_error_interval(i, b)))
        if comp.reference and not compact:
            cv = comp.spread(i, comp.reference)
            row.append("–" if cv is None else f"{100 * cv:.1f} %")
        if comp.has_shares:
            first = c.cc.split("+")[0] if "+" in c.cc else None
            row += [
                "–"
                if first is None or comp.side(i, b).mean("share") is None
                else f"{first} {comp.side(i, b).mean('share'):.2f}"
                for b in comp.backends
            ]
            for b in comp.compared:
                d = comp.share_diff(i, b)
                row.append("–" if d is None else f"{d:+.2f}" + ("" if abs(d) <= SHARE_TARGET else " ✗"))
            if not compact:
                for b in comp.compared:
                    interval = comp.share_diff_interval(i, b)
                    row.append("–" if comp.share_diff(i, b) is None else _share_interval_text(*interval))
        row += [_timing_text(comp.side(i, b)) + _steal_goodput_text(comp, i, b) for b in timed]
        row += [_f(comp.side(i, b).mean("rtt"), 1) for b in comp.backends]
        row += [_count_text(comp.side(i, b).mean("retx")) for b in comp.backends]
        for b in comp.compared:
            e, st = comp.retx_error(i, b)
            row.append(_err_text(e) + ((" ⚠" if compact else " (one-sided)") if st == "one-sided" else ""))
        if comp.compared:
            verdict = []
            for b in comp.compared:
                misses = comp.counter_misses(i, b)
                tag = "" if len(comp.compared) == 1 else f"{b}: "
                if comp.verdict(i, b) is None:
                    verdict.append(f"{tag}not compared")
                    continue
                text = f"goodput {comp.verdict_text(i, b)}"
                if comp.share_verdict(i, b) is not None:
                    text += f"; share {comp.share_verdict_text(i, b)}"
                if misses:
                    text += "; MISS " + ", ".join(m.removeprefix("TcpExt") for m in misses)
                verdict.append(tag + text)
            row.append("; ".join(verdict))
        rows.append(row)
    return head, rows


def _share_interval_text(lo: Optional[float], hi: Optional[float]) -> str:
    if lo is None or hi is None:
        return "unbounded"
    return f"{lo:+.2f} … {hi:+.2f}"


def _timing_text(s: Side) -> str:
    """How many of a cell's runs the host disturbed, and the worst steal and lateness."""
    if not s.steal and not s.late:
        return "–"
    worst = []
    if s.steal:
        worst.append(f"steal ≤ {max(s.steal):.1f} %")
    if s.late:
        worst.append(f"p99 late ≤ {max(s.late) / 1000:.1f} ms")
    return f"{s.disturbed}/{s.n} disturbed ({', '.join(worst)})"


def _steal_goodput_text(comp: Comparison, i: int, backend: str) -> str:
    """'; goodput falls with steal (r = -0.89)' when the runs' goodput follows the host's steal
    significantly (p < 0.05), else ''."""
    c = comp.goodput_steal_correlation(i, backend)
    if not c.significant():
        return ""
    return f"; goodput {'falls' if c.r < 0 else 'rises'} with steal (r = {c.r:+.2f})"


def _interval_text(lo: Optional[float], hi: Optional[float]) -> str:
    if lo is None or hi is None:
        return "unbounded"
    return f"{100 * lo:+.1f} … {100 * hi:+.1f} %"


def _failed_note(s: Side) -> str:
    bits = []
    if s.failed:
        bits.append(f"{len(s.failed)} failed")
    if s.missing:
        bits.append(f"{s.missing} not run")
    return f" [{', '.join(bits)}]" if bits else ""


def counters_with_data(comp: Comparison, nonzero: bool = False) -> list[str]:
    """The counters some backend has a value for (``nonzero``: a value other than 0) in some cell."""

    def has(v: Optional[float]) -> bool:
        return v is not None and (v != 0 or not nonzero)

    return [
        n
        for n in COUNTERS
        if any(has(comp.side(i, b).counter(n)) for i in range(len(comp.cells)) for b in comp.backends)
    ]


def counter_rows(
    comp: Comparison, names: Optional[Sequence[str]] = None, compact: bool = False
) -> tuple[list[str], list[list[str]]]:
    names = list(COUNTERS) if names is None else list(names)
    head = (["cell", "cc"] if compact else ["part", "cell", "cc"]) + [n.removeprefix("TcpExt") for n in names]
    rows = [
        ([c.name, c.cc] if compact else [c.part, c.label or "–", c.cc]) + [_counter_cell(comp, i, n) for n in names]
        for i, c in enumerate(comp.cells)
    ]
    if comp.has_bbr_beyond_bdp:
        head.append(BBR_BEYOND_BDP_HEAD)
        for i, row in enumerate(rows):
            row.append(" / ".join(_f(comp.side(i, b).mean("bbr_beyond_bdp"), 1) for b in comp.backends))
    return head, rows


#: the column of BBR's cwnd beyond 2 x bw x min_rtt (analysis.bbr_cwnd_beyond_bdp_pkts)
BBR_BEYOND_BDP_HEAD = "BBR cwnd − 2·bw·min_rtt"


def summary_rows(comp: Comparison) -> tuple[list[str], list[list[str]]]:
    head = [
        "backend",
        "cc",
        "cells compared",
        "median |err|",
        "worst |err|",
        "worst cell",
        "within 10 %",
        "targets met",
        "agrees / differs / cannot tell",
        "counters compared",
        "counters missed",
    ]
    if comp.has_shares:
        head.insert(head.index("counters compared"), "share: agrees / differs / cannot tell")
    rows = []
    for b in comp.compared:
        for r in comp.summary(b).to_dict("records"):
            met = r["targets met"]
            rows.append(
                [
                    b,
                    r["cc"],
                    f"{r['compared']}/{r['cells']}",
                    "–" if r["median |err| %"] is None else f"{r['median |err| %']:.1f} %",
                    "–" if r["worst |err| %"] is None else f"{r['worst |err| %']:.1f} %",
                    r["worst cell"] or "–",
                    f"{r['within 10 %']}/{r['compared']}",
                    "–" if met is None else ("yes" if met else "no"),
                    f"{r[AGREES]} / {r[DIFFERS]} / {r[CANNOT_TELL]}",
                ]
                + (
                    [
                        f"{r[f'share {AGREES}']} / {r[f'share {DIFFERS}']} / {r[f'share {CANNOT_TELL}']}"
                        if r["share compared"]
                        else "–"
                    ]
                    if comp.has_shares
                    else []
                )
                + [str(r["counters compared"]), str(r["counters missed"])]
            )
    return head, rows


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def esc(x: str) -> str:
        return str(x).replace("|", "\\|")

    out = ["| " + " | ".join(map(esc, head)) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return out


def _git_commit() -> str:
    root = Path(__file__).resolve().parents[3]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return commit + (" (with uncommitted changes)" if commit and dirty else "")


def _durations(study: Study, quick: bool) -> str:
    ds = sorted({p.duration_s(quick) for p in study.parts})
    return ", ".join(f"{d:g} s" for d in ds)


def _repeats(study: Study, quick: bool, repeat: Optional[int]) -> str:
    rs = sorted({p.sweep_table(quick, repeat)["repeat"] for p in study.parts})
    return ", ".join(map(str, rs))


def _no_reference(run: ValidateRun) -> str:
    if REFERENCE not in run.backends:
        return f"none ({REFERENCE} not in --backends)"
    if REFERENCE in run.skipped:
        return f"none ({REFERENCE} cannot run here)"
    return f"none ({REFERENCE} has no ok runs)"


def _timing_summary(t: dict) -> str:
    parts = [
        f"{t['runs'] - t['disturbed']} of {t['runs']} runs kept the scenario's timing (host steal under "
        f"{QUIET_HOST_STEAL_PCT:g} % and the emulator's p99 lateness within {FAITHFUL_LATE_P99_US:.0f} µs)"
    ]
    if t["steal_median_pct"] is not None:
        parts.append(f"host steal median {t['steal_median_pct']:.1f} %, largest {t['steal_max_pct']:.1f} %")
    if t["late_median_us"] is not None:
        parts.append(f"p99 lateness median {t['late_median_us']:.0f} µs, largest {t['late_max_us']:.0f} µs")
    return "; ".join(parts)


def markdown(run: ValidateRun, command: Optional[Sequence[str]] = None) -> str:
    comp = run.comparison
    repeat = run.repeat
    study = run.study
    cmd = " ".join(command) if command else "ccbench validate"
    lines = [f"# ccbench validate: {study.title}", ""]
    lines += [
        f"- command: `{cmd}`",
        f"- grid: {study.path} ({len(study.parts)} part{'s' if len(study.parts) != 1 else ''}, "
        f"{len(comp.cells)} cells; "
        f"{'quick; ' if run.quick else ''}runs of {_durations(study, run.quick)}, "
        f"{_repeats(study, run.quick, repeat)} repeats per cell per backend)",
        f"- backends: {', '.join(comp.backends)}; reference: {comp.reference or _no_reference(run)}",
        f"- random draws: {comp.draws} ("
        + (
            f"the compared backends' seeds are the {REFERENCE}'s moved by {INDEPENDENT_SEED_OFFSET:,}: "
            "other loss and jitter draws"
            if comp.draws == "independent"
            else f"the {REFERENCE}'s seeds: the n-th data segment meets the same draw on both"
        )
        + ")",
        f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"machine: {os.cpu_count()} CPUs, Linux {os.uname().release}",
    ]
    commit = _git_commit()
    if commit:
        lines.append(f"- commit: {commit}")
    for b in run.ran:
        n = sum(s.total for s in run.summaries.get(b, []))
        lines.append(
            f"- {b}: {n} runs in DIR/{b}/, {run.executed(b)} run now in {run.wall_s.get(b, 0):.0f} s"
            + (f" ({run.rerun[b]} stored runs deleted first: --rerun)" if b in run.rerun else "")
        )
    for b, why in run.skipped.items():
        lines.append(f"- {b}: not run ({why})")
    for b in comp.backends:
        t = comp.timing(b)
        if t:
            lines.append(f"- {b} timing: {_timing_summary(t)}")
    lines.append("")
    for note in run.notes:
        lines += [f"**Note:** {note}", ""]
    lines += ["## Parts", ""]
    for p in study.parts:
        lines.append(f"- **{p.name}**: {p.description or p.scenario(run.quick).describe()}")
    lines.append("")
    if comp.compared:
        lines += [
            "## Targets",
            "",
            f"Relative error = mean(backend) / mean({REFERENCE}) - 1, per cell over its repeats. "
            f"Targets: every cell's goodput within {CELL_TARGET:.0%} of the {REFERENCE}'s, the median "
            f"|error| of each algorithm within {MEDIAN_TARGET:.0%}; counters within {COUNTER_TARGET:.0%} "
            f"where both backends count at least {COUNTER_MIN:g} per run; in cells that mix algorithms, "
            f"the first algorithm's share of the goodput within {SHARE_TARGET:g} of the {REFERENCE}'s "
            "(✗: outside). Each cell's verdict reads the "
            f"95 % interval of the error (Fieller's interval of the ratio of the means, the repeats "
            f"taken as independent samples): it agrees when the interval lies within ±{CELL_TARGET:.0%}, "
            "differs when it lies wholly outside, and cannot tell when it straddles a bound: more "
            f"repeats would decide. spread: the {REFERENCE}'s own coefficient of variation across its "
            f"repeats; a cell whose spread is near {CELL_TARGET:.0%} needs many repeats to be called "
            "within it. The share's verdict reads the 95 % interval of the difference of the mean "
            f"shares (Welch) against ±{SHARE_TARGET:g} the same way. timing: how many of a cell's "
            "runs the host disturbed (the hypervisor took the CPU, so the emulator released packets "
            "late: delays the scenario does not have), with the worst steal and lateness, and whether the "
            "cell's goodput falls (or rises) with the steal across its runs (Pearson's r, p < 0.05).",
            "",
        ]
        head, rows = summary_rows(comp)
        lines += _md_table(head, rows) + [""]
    lines += [
        "## Goodput, RTT and retransmits per cell",
        "",
        "Goodput: mean over the repeats in Mbit/s (range min–max). RTT: each flow's smoothed RTT "
        "averaged over the run's sample instants, the same estimator on both backends (the flow's "
        "rtt_mean_ms where a run has no series), ms. retx: retransmitted segments per run (mean). "
        f"err: relative error against the {REFERENCE}; retx err only where a side retransmits at "
        f"least {COUNTER_MIN:g} per run (one-sided: only one side does).",
        "",
    ]
    head, rows = main_rows(comp)
    lines += _md_table(head, rows) + [""]
    lines += ["## TCP counters per cell", ""]
    if not any(comp.has_counters.values()):
        lines += ["No store has a `counters` table yet (older ccbench): every counter shows –.", ""]
    lines += [
        f"Mean per run, {' / '.join(comp.backends)}; the receiver's count for PAWSEstab, the sender's "
        "for the others. – = not measured or not modelled. "
        + (
            f"✗ = both at least {COUNTER_MIN:g} and more than {COUNTER_TARGET:.0%} apart; ⚠ = only one "
            f"side reaches {COUNTER_MIN:g}."
            if comp.compared
            else ""
        )
        + (
            f" {BBR_BEYOND_BDP_HEAD}: BBR's cwnd beyond twice its BDP estimate in ProbeBW, "
            "packets (median per run, mean over the runs): the quantization budget plus the "
            "ack-aggregation allowance, which grows with how bunched the ACKs come back "
            "(docs/fidelity.md item 11); not a target."
            if comp.has_bbr_beyond_bdp
            else ""
        ),
        "",
    ]
    head, rows = counter_rows(comp)
    lines += _md_table(head, rows) + [""]
    failed = [(c, b, msg) for i, c in enumerate(comp.cells) for b in comp.backends for msg in comp.side(i, b).failed]
    if failed:
        lines += ["## Failed runs", ""]
        seen = set()
        for c, b, msg in failed:
            key = (c.name, c.cc, b, msg)
            if key not in seen:
                seen.add(key)
                lines.append(f"- {b}, {c.name}, {c.cc}: {msg.splitlines()[0] if msg else 'failed'}")
        lines.append("")
    lines += [
        "Files: validate.csv (every number of these tables, with 95 % intervals), goodput.svg; "
        "the runs: " + ", ".join(f"{b}/" for b in comp.backends) + " (ccbench stores)."
    ]
    return "\n".join(lines) + "\n"


def _plain_log_ticks(axis) -> None:
    """Log axis ticks at 1, 2, 5 × 10^k written as plain numbers (0.5, 1, 2, 5, 10, 20, 50)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    axis.set_minor_formatter(NullFormatter())


def goodput_figure(comp: Comparison):
    """Simulator (and other backends) vs kernel mean goodput per cell, log axes, y = x and a
    ±10 % band; without kernel data, each backend's goodput per cell."""
    from ..plots import colour_map, new_figure

    ccs = sorted({c.cc for c in comp.cells})
    colours = colour_map(ccs)
    markers = dict(zip(ccs, "osD^v<>ph*"))
    if comp.compared:
        fig, axes = new_figure(1, len(comp.compared), width=5.6 * len(comp.compared), height=5.2)
        for ax, b in zip(axes[0], comp.compared):
            xs, _lo_hi = [], []
            for cc in ccs:
                pts = []
                for i, c in enumerate(comp.cells):
                    if c.cc != cc:
                        continue
                    k, s = comp.side(i, comp.reference), comp.side(i, b)
                    km, sm = k.mean("goodput"), s.mean("goodput")
                    if km is None or sm is None:
                        continue
                    kg = [x for x in k.goodput if x is not None]
                    sg = [x for x in s.goodput if x is not None]
                    pts.append(
                        (
                            km / 1e6,
                            sm / 1e6,
                            (km - min(kg)) / 1e6,
                            (max(kg) - km) / 1e6,
                            (sm - min(sg)) / 1e6,
                            (max(sg) - sm) / 1e6,
                        )
                    )
                if not pts:
                    continue
                a = np.array(pts)
                xs.extend(a[:, 0].tolist() + a[:, 1].tolist())
                ax.errorbar(
                    a[:, 0],
                    a[:, 1],
                    xerr=[a[:, 2], a[:, 3]],
                    yerr=[a[:, 4], a[:, 5]],
                    fmt=markers[cc],
                    color=colours[cc],
                    ms=5,
                    lw=0.8,
                    capsize=0,
                    label=cc,
                    alpha=0.9,
                )
            if xs:
                lo, hi = min(xs) / 1.3, max(xs) * 1.3
                line = np.geomspace(lo, hi, 50)
                ax.fill_between(
                    line,
                    line * (1 - CELL_TARGET),
                    line * (1 + CELL_TARGET),
                    color="0.85",
                    label=f"±{CELL_TARGET:.0%}",
                    zorder=0,
                )
                ax.plot(line, line, color="0.4", lw=0.8, label="y = x", zorder=1)
                ax.set_xscale("log")
                ax.set_yscale("log")
                _plain_log_ticks(ax.xaxis)
                _plain_log_ticks(ax.yaxis)
                ax.set_xlim(lo, hi)
                ax.set_ylim(lo, hi)
                ax.set_aspect("equal")
            ax.set_xlabel(f"{comp.reference} goodput (Mbit/s)")
            ax.set_ylabel(f"{b} goodput (Mbit/s)")
            ax.set_title(f"{b} vs {comp.reference}: mean goodput per cell (bars: repeat range)", fontsize=9)
            ax.grid(True, which="both", lw=0.3, alpha=0.5)
            if ax.get_legend_handles_labels()[0]:  # no cell compared yet: no series to name
                ax.legend(fontsize=8, loc="upper left")
        return fig
    fig, axes = new_figure(1, 1, width=max(6.0, 0.25 * len(comp.cells) + 2), height=4.2)
    ax = axes[0][0]
    for j, b in enumerate(comp.backends):
        for cc in ccs:
            x, y, e0, e1 = [], [], [], []
            for i, c in enumerate(comp.cells):
                s = comp.side(i, b)
                m = s.mean("goodput")
                if c.cc != cc or m is None:
                    continue
                g = [v for v in s.goodput if v is not None]
                x.append(i + 0.15 * j)
                y.append(m / 1e6)
                e0.append((m - min(g)) / 1e6)
                e1.append((max(g) - m) / 1e6)
            if x:
                ax.errorbar(
                    x,
                    y,
                    yerr=[e0, e1],
                    fmt=markers[cc],
                    color=colours[cc],
                    ms=5,
                    lw=0.8,
                    label=f"{b} {cc}" if len(comp.backends) > 1 else cc,
                )
    ax.set_xticks(range(len(comp.cells)))
    ax.set_xticklabels([f"{c.name} {c.cc}" for c in comp.cells], rotation=90, fontsize=6)
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title(f"{', '.join(comp.backends)} only: no {REFERENCE} runs to compare with", fontsize=9)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    return fig


def write_outputs(run: ValidateRun, command: Optional[Sequence[str]] = None) -> dict[str, Path]:
    from ..plots import save

    out = run.out
    out.mkdir(parents=True, exist_ok=True)
    files = {"md": out / "validate.md", "csv": out / "validate.csv", "svg": out / "goodput.svg"}
    files["md"].write_text(markdown(run, command))
    run.comparison.table().to_csv(files["csv"], index=False, float_format="%.6g")
    save(goodput_figure(run.comparison), files["svg"])
    return files


def _natural_width(head: list[str], rows: list[list[str]]) -> int:
    """Columns a rich table of these cells takes unfolded (each column its widest cell, 3 of padding
    and border per column, 1 for the last border)."""
    return 1 + sum(3 + max(len(str(x)) for x in [h] + [r[i] for r in rows]) for i, h in enumerate(head))


def print_tables(run: ValidateRun, console: Any) -> None:
    """The per-cell tables, the counters and the summary, with rich."""
    from rich.table import Table
    from rich.text import Text

    comp = run.comparison

    def show(title: str, head: list[str], rows: list[list[str]], colour_last: bool = False):
        t = Table(title=title, title_justify="left")
        for h in head:
            t.add_column(h, overflow="fold", no_wrap=h in ("cell", "worst cell"))
        for r in rows:
            cells = [Text(str(x)) for x in r]
            if colour_last and r:
                last = str(r[-1])
                cells[-1].stylize(
                    "red"
                    if "MISS" in last or DIFFERS in last or last == "no"
                    else "yellow"
                    if CANNOT_TELL in last
                    else "green"
                    if last in (f"goodput {AGREES}", "yes")
                    else ""
                )
            t.add_row(*cells)
        console.print(t)

    head, rows = main_rows(comp, compact=True)
    show(
        "validate: mean goodput, RTT and retransmits per cell (ranges and counters: validate.md)",
        head,
        rows,
        colour_last=bool(comp.compared),
    )
    names = counters_with_data(comp, nonzero=True)
    head, rows = counter_rows(comp, names, compact=True) if names else ([], [])
    if not names:
        console.print(
            "TCP counters: 0 or – everywhere"
            + ("" if any(comp.has_counters.values()) else " (no counters table in the stores)"),
            highlight=False,
        )
    elif (width := _natural_width(head, rows)) > console.width:
        # folded into a narrower terminal, a dozen counter columns read one letter per line
        console.print(
            f"TCP counters: a table {width} columns wide, wider than this terminal ({console.width}): see validate.md",
            highlight=False,
            soft_wrap=True,
        )
    else:
        show(
            f"TCP counters, mean per run ({' / '.join(comp.backends)}; ✗ more than "
            f"{COUNTER_TARGET:.0%} apart, ⚠ one-sided; counters that are 0 or – everywhere left out)",
            head,
            rows,
        )
    if comp.compared:
        head, rows = summary_rows(comp)
        head2 = head[:]
        rows2 = [r[:] for r in rows]
        # the verdict column last, so it can be coloured
        j = head2.index("targets met")
        head2.append(head2.pop(j))
        for r in rows2:
            r.append(r.pop(j))
        show(
            f"per algorithm (targets: every cell within {CELL_TARGET:.0%}, median within {MEDIAN_TARGET:.0%})",
            head2,
            rows2,
            colour_last=True,
        )
    for note in run.notes:
        console.print(Text(f"note: {note}", style="yellow"), soft_wrap=True)
