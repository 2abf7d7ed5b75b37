"""Figures of ccbench.plots on a synthetic store whose answers are known by construction
(tests/synthetic_store.py), and `ccbench plot` on that store written to disk."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.figure import Figure

from ccbench import plots
from synthetic_store import (
    CCS,
    GRID,
    LOSSES,
    PERIOD_S,
    SPREAD,
    cell_goodput_mbps,
    fake_store,
    probe_p95_ms,
    write_store,
)


def line_by_label(ax, prefix: str):
    """The data line labelled ``prefix...`` (plain lines, or the line of an errorbar)."""
    for c in ax.containers:
        if c.get_label().startswith(prefix) and hasattr(c, "lines"):
            return c.lines[0]
    for line in ax.get_lines():
        if line.get_label().startswith(prefix):
            return line
    labels = [x.get_label() for x in [*ax.get_lines(), *ax.containers]]
    raise AssertionError(f"no line {prefix!r} among {labels}")


@pytest.fixture(scope="module")
def store():
    return fake_store()


def test_every_kind_draws_a_figure_with_labelled_axes(store):
    store = fake_store(probe=True)
    swept = plots.swept_axes(store)
    for kind, (_fn, desc) in plots.KINDS.items():
        assert desc, kind
        axis = {"jitter": "jitter_ms", "rtt": "rtt_ms", "buffer": "buffer_bdp", "flows": "n_flows"}.get(
            kind.removeprefix("goodput-vs-")
        )
        if axis and axis not in swept:  # a goodput figure is drawn only against a swept axis
            with pytest.raises(plots.PlotError, match="not swept"):
                plots.make(store, kind)
            continue
        fig = plots.make(store, kind)
        assert isinstance(fig, Figure), kind
        for ax in fig.axes:
            if ax.get_visible() and ax.has_data():
                assert ax.get_ylabel(), f"{kind}: unlabelled y axis"
        assert any(ax.get_xlabel() for ax in fig.axes), f"{kind}: unlabelled x axis"
        fig.savefig(Path("/dev/null"), format="svg")  # renders without error


def test_goodput_vs_loss_means_intervals_and_zero_loss(store):
    fig = plots.goodput_vs_loss(store)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    for cc in CCS:
        line = line_by_label(ax, cc)
        xs, ys = line.get_xdata(), line.get_ydata()
        expected = [cell_goodput_mbps(cc, v) for v in sorted(LOSSES.values())]
        assert np.allclose(ys, expected)
        # 0 % sits left of the smallest positive rate on the log axis
        # (lines are dodged sideways by a few per cent so their error bars stay visible)
        assert xs[0] > 0 and xs[0] < 0.05 and np.allclose(xs[1:], [0.1, 1.0], rtol=0.05)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "0"
    # error bars: repeats are mean-1, mean, mean+1 -> half width t(0.975, 2)·1/√3
    half = 4.302652729911275 / math.sqrt(3)
    segs = [c for c in ax.collections if hasattr(c, "get_segments")]
    lengths = {round(abs(s[1][1] - s[0][1]) / 2, 6) for c in segs for s in c.get_segments()}
    assert lengths == {round(half, 6)}


def test_ratio_is_bbr_over_cubic(store):
    ax = plots.goodput_ratio(store).axes[0]
    line = line_by_label(ax, "bbr / cubic")
    expected = [40.0 / cell_goodput_mbps("cubic", v) for v in sorted(LOSSES.values())]
    assert np.allclose(line.get_ydata(), expected, rtol=1e-9)
    assert "bbr / cubic" in ax.get_ylabel()


def test_ratio_needs_two_algorithms(store):
    only = SimpleNamespace(**{**vars(store), "flows": store.flows[store.flows.cc == "bbr"]})
    with pytest.raises(plots.PlotError, match="two algorithms"):
        plots.goodput_ratio(only)


def test_run_selector_default_order_and_where(store):
    # grid order: loss "0%" first, cc "cubic" first, repeat 0 — whatever the run ids sort as
    first = plots.select_run(store)
    row = store.runs.set_index("run_id").loc[first]
    assert (row["bottleneck.loss"], row["flows.0.cc"], row["repeat"]) == ("0%", "cubic", 0)
    rid = plots.select_run(store, where={"bottleneck.loss": "1%", "flows.0.cc": "bbr"})
    row = store.runs.set_index("run_id").loc[rid]
    assert (row["bottleneck.loss"], row["flows.0.cc"], row["repeat"]) == ("1%", "bbr", 0)
    assert plots.select_run(store, run_id=rid[:6]) == rid
    with pytest.raises(plots.PlotError, match="no ok run matches"):
        plots.select_run(store, where={"bottleneck.loss": "7%"})
    with pytest.raises(plots.PlotError, match="no column"):
        plots.select_run(store, where={"nope": 1})


def test_throughput_time_one_panel_per_cc_of_the_selected_run(store):
    rid = plots.select_run(store, where={"bottleneck.loss": "0.1%", "flows.0.cc": "bbr"})
    fig = plots.throughput_time(store, where={"bottleneck.loss": "0.1%", "flows.0.cc": "bbr"})
    axes = [a for a in fig.axes if a.has_data()]
    assert len(axes) == 1 and axes[0].get_title(loc="left").startswith("bbr")
    s = store.series[(store.series.run_id == rid) & (store.series.flow_id == 1)]
    line = line_by_label(axes[0], "flow 1")
    assert np.allclose(line.get_ydata(), s.goodput_bps / 1e6)
    assert axes[0].get_ylabel() == "throughput (Mbit/s)"


def test_panels_per_cc_when_a_run_mixes_algorithms(store):
    mixed = store.series.copy()
    mixed.loc[mixed.flow_id == 1, "cc"] = "bbr"
    s = SimpleNamespace(**{**vars(store), "series": mixed})
    fig = plots.cwnd_time(s)
    titles = sorted(a.get_title(loc="left").split(":")[0] for a in fig.axes if a.has_data())
    assert titles == ["bbr", "cubic"]


def test_rtt_cdf_is_a_cdf(store):
    ax = plots.rtt_cdf(store, run_id=plots.select_run(store)).axes[0]
    line = ax.get_lines()[0]
    x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    assert np.all(np.diff(x) >= 0) and np.all(np.diff(y) >= 0)
    assert y[-1] == pytest.approx(1.0)
    # RTTs 50..59 ms uniformly: 60 % of samples are <= 55 ms
    assert y[np.searchsorted(x, 55.0, side="right") - 1] == pytest.approx(0.6)


def test_probe_cdf_without_probe_says_so(store):
    with pytest.raises(plots.PlotError, match=r"no probe samples: the scenario had no \[probe\]"):
        plots.probe_cdf(store)
    fig = plots.probe_cdf(fake_store(probe=True))
    assert fig.axes[0].get_xlabel() == "probe RTT (ms)"


def test_queue_time_plots_queue_in_kB(store):
    ax = plots.queue_time(store).axes[0]
    line = line_by_label(ax, "queue")
    assert max(line.get_ydata()) == pytest.approx(49 * 1.5)
    assert line_by_label(ax, "buffer size").get_ydata()[0] == pytest.approx(625.0)


def test_throughput_delay_inverted_and_annotated(store):
    ax = plots.throughput_delay(store).axes[0]
    assert ax.xaxis_inverted()
    fig = ax.get_figure()
    assert "better ↗" in ax.get_title(loc="right")
    assert "up and right is better" in fig.get_suptitle().replace("\n", " ")
    # bbr at 0 % loss: mean goodput 40 Mbit/s at a p95 of 60 ms (series named by short keys)
    line = line_by_label(ax, "bbr (loss=0%)")
    assert (line.get_xdata()[0], line.get_ydata()[0]) == pytest.approx((60.0, 40.0))


def test_goodput_probe_delay_one_point_per_combination(store):
    with pytest.raises(plots.PlotError, match="probe_rtt_p95_ms"):
        plots.goodput_probe_delay(store)
    fig = plots.goodput_probe_delay(fake_store(probe=True))
    panels = [ax for ax in fig.axes if ax.has_data()]
    # a panel per algorithm (cubic, bbr) x number of flows (2 in every run)
    assert sorted(ax.get_title() for ax in panels) == ["bbr, 2 flows", "cubic, 2 flows"]
    ax = next(ax for ax in panels if ax.get_title() == "bbr, 2 flows")
    assert ax.xaxis_inverted()
    for loss_key, loss in LOSSES.items():
        # the run's total goodput (2 flows: 2 x the per-flow mean) against the mean probe p95
        line = line_by_label(ax, f"loss={loss_key}")
        assert (line.get_xdata()[0], line.get_ydata()[0]) == pytest.approx(
            (probe_p95_ms("bbr", loss), 2 * cell_goodput_mbps("bbr", loss))
        )
    assert len(ax.containers) == len(LOSSES)
    assert ax.get_xlabel().startswith("ping p95 (ms)")


def test_jain_bars_match_theory(store):
    ax = plots.jain(store).axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 2 * len(LOSSES) * len(CCS)  # overall and between groups per cell
    assert np.allclose(heights, 1 / (1 + SPREAD**2))


def test_jain_needs_two_flows(store):
    one = store.flows[store.flows.flow_id == 0]
    with pytest.raises(plots.PlotError, match="at least two flows"):
        plots.jain(SimpleNamespace(**{**vars(store), "flows": one}))


def test_periodogram_marks_the_known_period(store):
    ax = plots.periodogram(store).axes[0]
    marks = [line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert marks and marks[0] == pytest.approx(PERIOD_S, rel=0.1)


def test_missing_series_is_a_clear_error(store):
    bare = SimpleNamespace(runs=store.runs, flows=store.flows, meta=store.meta)
    with pytest.raises(plots.PlotError, match="no series rows"):
        plots.throughput_time(bare)
    with pytest.raises(plots.PlotError, match="no queue samples"):
        plots.queue_time(bare)


def test_unknown_kind(store):
    with pytest.raises(plots.PlotError, match="unknown figure kind"):
        plots.make(store, "nope")


def test_cli_plot_list_and_file(tmp_path):
    from typer.testing import CliRunner

    from ccbench.cli.app import app

    r = CliRunner().invoke(app, ["plot", "--list"])
    assert r.exit_code == 0, r.output
    for kind in plots.KINDS:
        assert kind in r.output
    root = write_store(fake_store(), tmp_path / "store")
    r = CliRunner().invoke(app, ["plot", str(root), "cwnd-time", "--where", "bottleneck.loss=1%"])
    assert r.exit_code == 0, r.output
    text = (root / "cwnd-time.svg").read_text()
    assert text.lstrip().startswith("<?xml") and "loss=1%" in text and "nan" not in text
    out = tmp_path / "q.png"
    r = CliRunner().invoke(app, ["plot", str(root), "goodput-vs-loss", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = CliRunner().invoke(app, ["plot", str(root), "probe-cdf"])
    assert r.exit_code != 0 and "no probe samples" in r.output


def test_time_series_skips_algorithms_without_samples(store):
    mixed = store.series.copy()
    mixed.loc[mixed.flow_id == 1, "cc"] = "bbr"
    mixed.loc[mixed.cc == "cubic", "pacing_bps"] = None  # e.g. CUBIC is not paced
    fig = plots.pacing_time(SimpleNamespace(**{**vars(store), "series": mixed}))
    titles = [a.get_title(loc="left") for a in fig.axes if a.has_data()]
    assert len(titles) == 1 and titles[0].startswith("bbr")
    assert "cubic: no pacing_bps samples" in fig.get_suptitle()


def test_ratio_one_line_per_other_swept_value(store):
    # a second swept axis that is not determined by loss or cc: one ratio line per value
    def add_axis(df):
        return df.assign(**{"access.delay": np.where(df["repeat"] == 0, "1ms", "5ms")})

    meta = {**store.meta, "grid": {**GRID, "access.delay": ["1ms", "5ms"]}}
    s = SimpleNamespace(
        runs=add_axis(store.runs),
        flows=add_axis(store.flows),
        series=store.series,
        link_series=store.link_series,
        meta=meta,
    )
    ax = plots.goodput_ratio(s).axes[0]
    labels = sorted(c.get_label() for c in ax.containers)
    assert labels == ["bbr / cubic (delay=1ms)", "bbr / cubic (delay=5ms)"]
    # repeat 0 alone: bbr 39, cubic g-1 per loss rate
    line = line_by_label(ax, "bbr / cubic (delay=1ms)")
    expected = [39.0 / (cell_goodput_mbps("cubic", v) - 1) for v in sorted(LOSSES.values())]
    assert np.allclose(line.get_ydata(), expected)


def test_shared_y_range_covers_every_panel(store):
    # bbr's panel is drawn first with small values; cubic's larger values must not be cut off
    mixed = store.series.copy()
    mixed.loc[mixed.flow_id == 1, "cc"] = "bbr"
    mixed.loc[mixed.cc == "cubic", "goodput_bps"] *= 100
    fig = plots.throughput_time(SimpleNamespace(**{**vars(store), "series": mixed}))
    top = max(mixed.loc[mixed.run_id == plots.select_run(store), "goodput_bps"]) / 1e6
    for ax in fig.axes:
        if ax.has_data():
            assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= top
