"""The built-in study `bufferbloat`: it loads, its --quick version runs on the
simulator, its report holds the table and the goodput-vs-ping-p95 figure, and what the run
measures agrees with queueing theory (FQ-CoDel isolates the ping, a full 16-BDP FIFO does not)."""

from __future__ import annotations

import html

import pytest

import ccbench
from ccbench import study


def test_bufferbloat_loads_with_its_grid():
    s = study.find_study("bufferbloat")
    assert s.name == "bufferbloat" and s.analyses == ["latency", "goodput_delay"]
    (part,) = s.parts
    axes = part.axes()
    assert axes["flows.0.cc"] == ["cubic", "bbr", "vegas"] and axes["flows.0.count"] == [1, 4]
    queues = list(zip(axes["bottleneck.aqm"], axes["bottleneck.buffer"]))
    assert queues[:3] == [("droptail", "1bdp"), ("droptail", "4bdp"), ("droptail", "16bdp")]
    assert [q[0] for q in queues[3:]] == ["codel", "fq_codel", "pie", "fq"]
    # --quick: the same cells and 3 repeats, runs of 8 s instead of 30 (the latency finding needs
    # the time to fill a 16-BDP FIFO, so the quick runs are not shorter than that)
    assert s.n_runs() == 3 * 2 * 7 * 3 and s.n_runs(quick=True) == 3 * 2 * 7 * 3
    assert part.duration_s() >= 20 and part.duration_s(quick=True) <= 10
    assert part.scenario().probe.ping_s == pytest.approx(0.05)  # the ping under load


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bufferbloat") / "q"
    return study.run_study("bufferbloat", out, quick=True, workers=2, progress=False, command=["pytest"])


def test_quick_run_reports_the_table_and_the_figure(quick):
    assert quick.all_ok
    page = html.unescape(quick.report.read_text())
    assert "(failed)" not in page and "not drawn" not in page
    assert "queues: goodput and latency under load (ping during the transfer)" in page  # the table
    assert "Goodput vs latency under load" in page
    i = page.index("queues: total goodput vs the ping's 95th percentile")  # the figure's caption
    assert "<svg" in page[max(0, i - 200_000) : i + 200_000]
    res = ccbench.load(quick.out)
    assert len(res.runs) == 126 and (res.runs["status"] == "ok").all()


def _p95(runs, cc: str, count: int, aqm: str, buffer: str) -> float:
    """The cell's ping p95, mean over its 3 quick repeats."""
    sel = runs[
        (runs["flows.0.cc"] == cc)
        & (runs["flows.0.count"].astype(int) == count)
        & (runs["bottleneck.aqm"] == aqm)
        & (runs["bottleneck.buffer"] == buffer)
    ]
    assert len(sel) == 3, (cc, count, aqm, buffer)
    return float(sel["probe_rtt_p95_ms"].mean())


def test_fq_codel_keeps_the_ping_near_the_base_rtt_where_a_full_fifo_does_not(quick):
    """A full 16-BDP FIFO adds up to 16 base RTTs of queueing to the ping; FQ-CoDel serves the
    ping's sparse flow first, so it waits about one packet time (0.6 ms at 20 Mbit/s)."""
    runs = ccbench.load(quick.out).runs
    base = float(runs["base_rtt_ms"].iloc[0])
    assert runs["base_rtt_ms"].nunique() == 1 and base == pytest.approx(40.0, abs=1.0)
    for cc in ("cubic", "bbr", "vegas"):
        for count in (1, 4):
            assert _p95(runs, cc, count, "fq_codel", "16bdp") < base + 15, (cc, count)
    for count in (1, 4):  # CUBIC fills whatever FIFO it is given
        assert _p95(runs, "cubic", count, "droptail", "16bdp") > 4 * base, count
        assert (
            _p95(runs, "cubic", count, "droptail", "16bdp")
            > _p95(runs, "cubic", count, "droptail", "4bdp")
            > _p95(runs, "cubic", count, "droptail", "1bdp")
        )
    # and FQ-CoDel keeps the link busy: one CUBIC flow gets at least 85 % of the 20 Mbit/s in
    # every repeat
    flows = ccbench.load(quick.out).flows
    one = flows[
        (flows["flows.0.cc"] == "cubic")
        & (flows["flows.0.count"].astype(int) == 1)
        & (flows["bottleneck.aqm"] == "fq_codel")
    ]
    per_run = one.groupby("run_id")["goodput_bps"].sum()
    assert len(per_run) == 3 and (per_run >= 0.85 * 20e6).all(), per_run
