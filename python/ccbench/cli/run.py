"""``ccbench run``: one scenario on one backend, its per-flow table, iperf3-like interval lines,
JSON, or a store."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table
from rich.text import Text

from ..procs import exit_status, signals_raise
from ..scenario.errors import ScenarioError
from ..scenario.model import load_scenario
from .errors import EXIT_BAD_INPUT, EXIT_RUN_FAILED, console, err_console, error


@contextlib.contextmanager
def _arrow_memory_from_malloc():
    """Arrow buffers from the C library's malloc (pyarrow's system pool) for the duration of
    a run, not from pyarrow's default mimalloc pool. The simulator's memory (~1 GB for
    100 000 flows) goes back to malloc when the run ends; the result tables and the Parquet
    encoding then reuse those pages instead of faulting in fresh ones for a second pool:
    building the tables of 100 000 flows takes ~0.07 s instead of ~0.15-0.4 s (measured), and
    the process ends with less memory to hand back. ARROW_DEFAULT_MEMORY_POOL, when set,
    wins; the previous pool is restored afterwards (buffers keep the pool they came from)."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        yield
        return
    if "pyarrow" not in sys.modules:
        # Arrow reads the variable when it makes its default pool, at the first allocation
        # after pyarrow's import; pyarrow is imported later, during the simulation
        # (ccbench/preload.py), so `run` does not import it here, before the simulator starts.
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
        try:
            yield
        finally:
            os.environ.pop("ARROW_DEFAULT_MEMORY_POOL", None)
        return
    import pyarrow as pa

    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def _f(v, spec: str, scale: float = 1.0) -> str:
    if v is None:
        return "–"
    try:
        if v != v:  # NaN
            return "–"
    except TypeError:
        return str(v)
    return format(v / scale if scale != 1.0 else v, spec)


#: Flows listed by print_result; a run with more prints these and a summary of the rest
#: (all rows: --json, or --out and ccbench query).
MAX_FLOW_ROWS = 32


def print_result(result, scenario=None, out=None) -> None:
    """Per-flow table and the run line (utilisation, drops, Jain's index)."""
    flows = result.flows_table
    rows = flows.slice(0, MAX_FLOW_ROWS).to_pylist()
    run = result.runs_table.to_pylist()[0]
    title = scenario.describe() if scenario is not None else None
    table = Table(title=title, title_justify="left")
    for name, justify in (
        ("flow", "right"),
        ("cc", "left"),
        ("goodput\nMbit/s", "right"),
        ("RTT mean\nms", "right"),
        ("RTT p95\nms", "right"),
        ("retrans-\nmits", "right"),
        ("cwnd mean\npkts", "right"),
    ):
        table.add_column(name, justify=justify)
    for r in rows:
        table.add_row(
            str(r["flow_id"]),
            str(r.get("cc") or ""),
            _f(r.get("goodput_bps"), ".2f", 1e6),
            _f(r.get("rtt_mean_ms"), ".1f"),
            _f(r.get("rtt_p95_ms"), ".1f"),
            _f(r.get("retransmits"), "d"),
            _f(r.get("cwnd_mean"), ".1f"),
        )
    console.print(table)
    if flows.num_rows > len(rows):
        import pyarrow.compute as pc

        g = pc.drop_null(flows.column("goodput_bps"))
        spread = ""
        if len(g):
            q = pc.quantile(g, q=[0.0, 0.5, 1.0]).to_pylist()
            spread = (
                f"; goodput of all {flows.num_rows} flows min/median/max "
                f"{q[0] / 1e6:.2f}/{q[1] / 1e6:.2f}/{q[2] / 1e6:.2f} Mbit/s"
            )
        console.print(
            f"... {flows.num_rows - len(rows)} more flows (all of them: --json, or --out and ccbench query){spread}",
            highlight=False,
            soft_wrap=True,
        )
    parts = [f"backend {run['backend']}", f"run {run['run_id']}"]
    if run.get("link_utilisation") is not None:
        parts.append(f"utilisation {run['link_utilisation'] * 100:.1f} %")
    if run.get("aggregate_goodput_bps") is not None:
        parts.append(f"aggregate {run['aggregate_goodput_bps'] / 1e6:.2f} Mbit/s")
    if run.get("drops") is not None:
        parts.append(f"queue drops {run['drops']}")
    if run.get("ce_marked"):
        parts.append(f"CE marks {run['ce_marked']}")
    if run.get("random_losses") is not None:
        parts.append(f"random losses {run['random_losses']}")
    if run.get("jain_index") is not None:
        jain = f"Jain {run['jain_index']:.3f}"
        if run.get("jain_index_groups") is not None:
            jain += f" (between groups {run['jain_index_groups']:.3f})"
        parts.append(jain)
    if run.get("probe_rtt_p50_ms") is not None:
        parts.append(
            f"ping p50/p95/p99 {_f(run['probe_rtt_p50_ms'], '.1f')}/{_f(run.get('probe_rtt_p95_ms'), '.1f')}"
            f"/{_f(run.get('probe_rtt_p99_ms'), '.1f')} ms"
        )
    if run.get("wall_time_s") is not None:
        parts.append(f"wall {run['wall_time_s']:.2f} s")
    console.print(", ".join(parts), highlight=False, soft_wrap=True)
    from ..results.timing import FAITHFUL_LATE_P99_US  # loaded already: the run built its tables with it

    late, steal = run.get("emulator_late_p99_us"), run.get("host_steal_pct")
    if late is not None and late > FAITHFUL_LATE_P99_US:
        stolen = f"; the host took {steal:.1f} % of the CPU" if steal is not None else ""
        console.print(
            f"warning: the emulator released 1 % of packets over {late / 1000:.1f} ms late{stolen}: "
            "delays the scenario does not have (docs/kernel-backend.md, timing fidelity)",
            style="yellow",
            highlight=False,
            soft_wrap=True,
        )
    if out is not None:
        console.print(
            f"stored in {out} (ccbench.load({str(out)!r}), ccbench query {out}, ccbench report {out})",
            style="dim",
            highlight=False,
            soft_wrap=True,
        )


def run(
    scenario: Path = typer.Argument(..., metavar="SCENARIO", help="Scenario TOML file."),
    set_: List[str] = typer.Option(
        [],
        "--set",
        metavar="KEY=VALUE",
        help="Override a field: --set bottleneck.loss=1% --set flows.0.cc=bbr (repeatable).",
    ),
    duration: Optional[str] = typer.Option(
        None,
        "--duration",
        metavar="TIME",
        help="Run for TIME instead of the scenario's duration (30s, 2min, 1h; a bare number is "
        "seconds): the same as --set duration=TIME.",
    ),
    backend: str = typer.Option("sim", "--backend", "-b", help="sim | kernel | ns3"),
    out: Optional[Path] = typer.Option(
        None,
        "--out",
        "-o",
        metavar="DIR",
        help="Store the run in DIR (the layout of ccbench sweep: read it with ccbench.load, "
        "ccbench query, ccbench report).",
    ),
    interval: Optional[str] = typer.Option(
        None,
        "--interval",
        "-i",
        metavar="TIME",
        help="After the run, print per-flow lines every TIME (e.g. 1s), as iperf3 does: goodput, "
        "retransmits in the interval, cwnd, RTT. A multiple of the scenario's sample_interval.",
    ),
    as_json: bool = typer.Option(False, "--json", help='Print only {"runs": \\[...], "flows": \\[...]} on stdout.'),
    series: bool = typer.Option(False, "--series", help='With --json: add the "series" and "link_series" rows.'),
):
    """Run one scenario and print the per-flow summary.

    A \\[sweep] table in the file is not expanded: run runs the base scenario once (ccbench sweep runs the grid).
    """
    with _arrow_memory_from_malloc():
        _run(scenario, _with_duration(set_, duration), backend, out, interval, as_json, series)


def _with_duration(set_: List[str], duration: Optional[str]) -> List[str]:
    """--duration TIME as the override --set duration=TIME (the same parsing, validation and
    messages); given together with a --set of duration, it must say the same."""
    if duration is None:
        return list(set_)
    given = [s.partition("=")[2].strip() for s in set_ if s.partition("=")[0].strip() == "duration"]
    if any(g != duration.strip() for g in given):
        raise error(
            f"--duration {duration!r} and --set duration={given[-1]} disagree: give one of them", EXIT_BAD_INPUT
        )
    return [*set_, f"duration={duration}"]


def _run(
    scenario: Path,
    set_: List[str],
    backend: str,
    out: Optional[Path],
    interval: Optional[str],
    as_json: bool,
    series: bool,
) -> None:
    from .. import backends

    try:
        sc = load_scenario(scenario, set_)
        interval_s = _check_interval(interval, sc) if interval is not None else None
        _note_sweep_table(sc, scenario)
        if out is not None:
            _check_out_dir(out)
        with signals_raise():  # SIGTERM/SIGHUP stop the run like Ctrl-C (the simulator polls)
            result = backends.run(sc, backend)
    except ScenarioError as e:
        raise error(str(e), EXIT_BAD_INPUT) from None
    except KeyboardInterrupt as e:  # Ctrl-C 130, SIGTERM 143, SIGHUP 129
        raise typer.Exit(exit_status(e)) from None
    if out is not None:
        save_run(result, out)
    intervals = (
        interval_rows(result.series, result.flows, interval_s, sc.sample_interval_s, sc.duration_s)
        if interval_s is not None and result.ok
        else None
    )
    if as_json:
        doc = result.to_json_dict()
        if series:
            from ..results.schema import json_rows  # pyarrow is loaded by then: the run made the tables

            doc["series"] = json_rows(result.series_table)
            link = getattr(result, "link_series_table", None)
            doc["link_series"] = json_rows(link) if link is not None else []
        if intervals is not None:
            doc["intervals"] = intervals
        sys.stdout.write(json.dumps(doc, allow_nan=False) + "\n")
        sys.stdout.flush()
    elif result.ok:
        print_result(result, sc, out)
        if intervals is not None:
            console.print()
            for line in format_intervals(intervals):
                console.print(line, markup=False, highlight=False, soft_wrap=True)
    if series and not as_json:
        err_console.print("note: --series only changes the --json output", style="yellow", highlight=False)
    if not result.ok:
        raise error(f"{scenario}: run failed on the {backend} backend: {result.error}", EXIT_RUN_FAILED)


def _note_sweep_table(sc, path: Path) -> None:
    """`run` on a file with a [sweep] table runs the base scenario only: say so on stderr."""
    if not getattr(sc, "sweep", None):
        return
    try:
        from ..sweeps.grid import grid_from_scenario

        n = len(grid_from_scenario(sc))
        size = f"a [sweep] table of {n} run{'s' if n != 1 else ''}"
    except (ValueError, ImportError):  # a malformed [sweep] is ccbench sweep's to report
        size = "a [sweep] table"
    err_console.print(
        Text(
            f"note: {path} has {size}; ccbench run runs only the base scenario (once). "
            f"For the grid: ccbench sweep {path}",
            style="yellow",
        ),
        soft_wrap=True,
        highlight=False,
    )


def _check_out_dir(out: Path) -> None:
    """Refuse, before running, a --out directory that holds something other than a store."""
    from ..results import layout as store

    if out.exists() and not out.is_dir():
        raise error(
            f"--out {out}: is a file (expected a store directory, new or written by "
            f"ccbench run --out or ccbench sweep)",
            EXIT_BAD_INPUT,
        )
    try:
        store.check_store_dir(out, purpose="write")
        store.check_writable(out)  # before the run: a result that cannot be stored is lost
    except ValueError as e:  # StoreError
        raise error(f"--out: {e}", EXIT_BAD_INPUT) from None


def save_run(result, out: Path) -> None:
    """Store one run in DIR with the layout of a sweep store (runs/, flows/, series/,
    link_series/, ccbench.json), so ccbench.load / query / report read it."""
    try:
        result.save(out, command=["ccbench", *sys.argv[1:]])
    except ValueError as e:  # StoreError: the disk filled or the directory changed during the run
        raise error(f"--out: {e}", EXIT_BAD_INPUT) from None


def _check_interval(text: str, sc) -> float:
    """--interval as seconds; a whole number (>= 1) of the scenario's sample intervals."""
    from .. import units

    try:
        interval_s = units.parse_time(text)
    except ValueError as e:
        raise ScenarioError(None, "--interval", f"{text!r}: {e}", "a duration, e.g. 1s or 500ms") from None
    sample_s = sc.sample_interval_s
    ratio = interval_s / sample_s if sample_s > 0 else 0.0
    if interval_s <= 0 or round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-9 * max(1.0, ratio):
        raise ScenarioError(
            None,
            "--interval",
            f"{text!r} is not a multiple of the scenario's sample_interval ({sample_s:g} s)",
            f"a whole number of sample intervals, e.g. {max(1.0, sample_s * 10):g}s",
        )
    return interval_s


def interval_rows(series, flows, interval_s: float, sample_s: float, duration_s: float) -> list[dict]:
    """Per-flow summaries of consecutive ``interval_s`` windows, from the sampled series.

    A sample at time t covers (t - sample_s, t], so window k holds samples k*m+1 .. (k+1)*m
    (m = interval_s / sample_s; the last window may be shorter when the duration is not a
    multiple). goodput: bytes delivered in the window / its length (the mean of its samples,
    with samples before a flow starts counting 0); retransmits: the increase of the cumulative
    counter over the window; cwnd: the value at the window's end; RTT: mean of the samples.
    With more than one flow, a "SUM" row per window adds goodput and retransmits."""
    import math

    m = int(round(interval_s / sample_s))
    n_samples = max(1, int(round(duration_s / sample_s)))
    n_windows = math.ceil(n_samples / m)
    cc_of = dict(zip(flows["flow_id"], flows["cc"])) if len(flows) else {}
    rows: list[dict] = []
    if series is None or len(series) == 0:
        return rows
    by_window: dict[int, list[dict]] = {}
    for flow_id, fs in series.sort_values("t_s").groupby("flow_id", sort=True):
        sample_no = [int(round(t / sample_s)) for t in fs["t_s"]]
        window = [min(max((n - 1) // m, 0), n_windows - 1) for n in sample_no]
        retrans_before = 0
        for k in sorted(set(window)):
            sel = [w == k for w in window]
            ws = fs[sel]
            span = min(m, n_samples - k * m)  # samples the window covers (last one may be short)
            cum = ws["retransmits"].dropna()
            retrans_end = int(cum.iloc[-1]) if len(cum) else retrans_before
            rtt = ws["rtt_ms"].dropna()
            cwnd = ws["cwnd_pkts"].dropna()
            row = {
                "flow_id": int(flow_id),
                "cc": cc_of.get(flow_id),
                "start_s": k * interval_s,
                "end_s": min((k + 1) * interval_s, duration_s),
                "goodput_bps": float(ws["goodput_bps"].fillna(0).sum()) / span,
                "retransmits": retrans_end - retrans_before,
                "cwnd_pkts": int(cwnd.iloc[-1]) if len(cwnd) else None,
                "rtt_ms": float(rtt.mean()) if len(rtt) else None,
            }
            retrans_before = retrans_end
            by_window.setdefault(k, []).append(row)
    multi = series["flow_id"].nunique() > 1
    for k in sorted(by_window):
        rows.extend(by_window[k])
        if multi:
            ws = by_window[k]
            rows.append(
                {
                    "flow_id": "SUM",
                    "cc": None,
                    "start_s": ws[0]["start_s"],
                    "end_s": ws[0]["end_s"],
                    "goodput_bps": sum(r["goodput_bps"] for r in ws),
                    "retransmits": sum(r["retransmits"] for r in ws),
                    "cwnd_pkts": None,
                    "rtt_ms": None,
                }
            )
    return rows


def format_intervals(rows: list[dict]) -> list[str]:
    """iperf3-style text lines for :func:`interval_rows`."""
    lines = [f"{'[ ID]':<6} {'Interval':>15} {'cc':<8} {'Goodput':>15} {'Retr':>6} {'Cwnd':>10} {'RTT':>10}"]
    for r in rows:
        ident = "[SUM]" if r["flow_id"] == "SUM" else f"[{r['flow_id']:>3}]"
        span = f"{r['start_s']:.2f}-{r['end_s']:.2f} s"
        cwnd = f"{r['cwnd_pkts']} pkts" if r["cwnd_pkts"] is not None else ""
        rtt = f"{r['rtt_ms']:.1f} ms" if r["rtt_ms"] is not None else ""
        lines.append(
            f"{ident:<6} {span:>15} {r['cc'] or '':<8} {r['goodput_bps'] / 1e6:8.2f} Mbit/s "
            f"{r['retransmits']:>6} {cwnd:>10} {rtt:>10}"
        )
    return lines


def register(app: typer.Typer) -> None:
    app.command("run")(run)
