"""Key figures ([study.key_figure], study/key_figure.py): each built-in study's figure plots the
declared metric against the declared swept key with one series per algorithm, on a synthetic
store shaped like the study's --quick grid whose values are known by construction; bad
declarations fail on load with the file and key named."""

from __future__ import annotations

import copy
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccbench.study.key_figure import draw, metric_label, x_label
from ccbench.study.spec import StudyError, find_study, list_studies, study_from_dict
from ccbench.sweeps.grid import Grid
from ccbench.units import parse_percent, parse_time

REPEATS = 3
BASE_MBPS = {"cubic": 10.0, "bbr": 40.0, "bbr3": 16.0, "vegas": 20.0, "reno": 8.0, "dctcp": 9.0, "prague": 12.0}
PROBE_RTT_AT = (10.0, 20.0)  # BBR flows of the synthetic time series enter ProbeRTT here


def goodput_mbps(cc: str, loss_pct: float, jitter_ms: float, rep: int) -> float:
    """A run's per-flow goodput: falls with loss and jitter; repeats are the mean ± 1."""
    return BASE_MBPS[cc] / (1.0 + loss_pct + 0.1 * jitter_ms) + (rep - 1)


def _value(cell: dict, key: str, default):
    return cell.get(key, default)


def study_store(study, repeats: int = REPEATS) -> SimpleNamespace:
    """A Results-like object with one ok run per cell of each part's --quick grid and repeat."""
    runs, flows, series = [], [], []
    n = 0
    for part in study.parts:
        table = part.sweep_table(quick=True, repeat=repeats)
        raw = part.scenario_raw
        bn = raw.get("bottleneck", {})
        for cell in Grid.from_table(table).cells():
            for rep in range(repeats):
                n += 1
                rid = f"r{n:05d}" + "0" * 10
                loss = 100 * parse_percent(_value(cell, "bottleneck.loss", bn.get("loss", "0%")))
                jitter = 1e3 * parse_time(_value(cell, "bottleneck.jitter", bn.get("jitter", "0ms")))
                rtt = 1e3 * parse_time(_value(cell, "bottleneck.rtt", bn.get("rtt", "50ms")))
                buf = str(_value(cell, "bottleneck.buffer", bn.get("buffer", "1bdp")))
                common = dict(
                    run_id=rid,
                    name=part.scenario_name,
                    backend="sim",
                    rtt_ms=rtt,
                    base_rtt_ms=rtt,
                    jitter_ms=jitter,
                    loss_pct=loss,
                    rate_mbps=50.0,
                    buffer_bdp=float(buf[:-3]) if buf.endswith("bdp") else None,
                    aqm=str(_value(cell, "bottleneck.aqm", bn.get("aqm", "droptail"))),
                    repeat=rep,
                    **{k: v for k, v in cell.items()},
                )
                fid = 0
                total = 0.0
                for gi, group in enumerate(raw.get("flows", [])):
                    cc = str(_value(cell, f"flows.{gi}.cc", group.get("cc", "cubic")))
                    count = int(_value(cell, f"flows.{gi}.count", group.get("count", 1)))
                    for _ in range(count):
                        g = goodput_mbps(cc, loss, jitter, rep) * 1e6
                        total += g
                        flows.append(
                            dict(
                                common, flow_id=fid, group=gi, cc=cc, goodput_bps=g, rtt_p95_ms=rtt * 2, rtt_mean_ms=rtt
                            )
                        )
                        if study.key_figure and study.key_figure.kind == "time" and rep == 0:
                            t = np.round(np.arange(0.1, 30.0, 0.1), 3)
                            state = np.array(["probe_bw"] * t.size, dtype=object)
                            if cc == "bbr":
                                for at in PROBE_RTT_AT:
                                    state[(t >= at) & (t < at + 0.2)] = "probe_rtt"
                            series.append(
                                pd.DataFrame(
                                    dict(run_id=rid, flow_id=fid, group=gi, cc=cc, t_s=t, goodput_bps=g, cc_state=state)
                                )
                            )
                        fid += 1
                ccs = sorted({f["cc"] for f in flows if f["run_id"] == rid})
                runs.append(
                    dict(
                        common,
                        status="ok",
                        error=None,
                        aggregate_goodput_bps=total,
                        jain_index=1.0,
                        probe_rtt_p50_ms=rtt + (100.0 if "cubic" in ccs else 5.0) + rep,
                        probe_rtt_p95_ms=rtt + (300.0 if "cubic" in ccs else 15.0) + rep,
                    )
                )
    meta = {"study": study.name, "quick": True, "scenario_file": str(study.path)}
    return SimpleNamespace(
        runs=pd.DataFrame(runs),
        flows=pd.DataFrame(flows),
        series=pd.concat(series, ignore_index=True) if series else pd.DataFrame(),
        link_series=pd.DataFrame(),
        meta=meta,
    )


STUDIES = {s.name: s for s in list_studies()}


def _legend_texts(fig) -> list[str]:
    return [t.get_text() for leg in fig.legends for t in leg.get_texts()]


def _ccs(study) -> set[str]:
    out = set()
    for p in study.parts:
        if p.name not in study.key_figure.parts:
            continue
        out.update(str(g.get("cc")) for g in p.scenario_raw.get("flows", []))
        for k, v in p.sweep_table(quick=True).items():
            if k.endswith(".cc"):
                out.update(map(str, v))
    return out


CC_NAMES = {
    "cubic": "CUBIC",
    "bbr": "BBR v1",
    "bbr3": "BBR v3",
    "reno": "Reno",
    "vegas": "Vegas",
    "dctcp": "DCTCP",
    "prague": "Prague",
}


def test_every_builtin_study_declares_a_key_figure():
    assert STUDIES, "no built-in studies"
    missing = [name for name, s in STUDIES.items() if s.key_figure is None]
    assert not missing


@pytest.fixture(scope="module")
def figures():
    """Each built-in study's key figure drawn from its synthetic store (drawn once)."""
    return {name: draw(s, study_store(s)) for name, s in STUDIES.items()}


def _no_nan_text(fig):
    texts = [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text"))]
    bad = [t for t in texts if re.search(r"\bnan\b", t, re.I)]
    assert not bad, bad


@pytest.mark.parametrize("name", sorted(n for n, s in STUDIES.items() if s.key_figure.kind == "lines"))
def test_lines_plot_the_metric_against_the_swept_key(figures, name):
    study = STUDIES[name]
    kf = study.key_figure
    fig = figures[name]
    axes = fig.axes
    assert len(axes) == 1 + len(kf.panel)
    assert axes[0].get_ylabel() == metric_label(study, kf.metric)
    assert all(ax.get_xlabel() == x_label(kf.x) for ax in axes)
    _no_nan_text(fig)
    legend = _legend_texts(fig)
    assert len(legend) == len(set(legend))
    for ax, metric in zip(axes, [kf.metric, *kf.panel]):
        lines = [c for c in ax.containers if c.get_label() and not c.get_label().startswith("_")]
        if metric == "bbr_cubic_ratio":  # one ratio series per part drawn
            assert len(lines) == len(kf.parts)
            for c in lines:  # BBR / CUBIC of the synthetic goodputs: 40 / 10 at every x (cells equal)
                y = c.lines[0].get_ydata()
                assert np.allclose(y, 4.0, rtol=1e-6), y
        else:  # one series per algorithm (and per part when several are drawn)
            ccs = _ccs(study)
            labels = [c.get_label() for c in lines]
            for cc in ccs:
                assert sum(CC_NAMES[cc] in lab for lab in labels) == len(kf.parts), (cc, labels)
            if metric == "goodput":
                scale = {"KB/s": 1e6 / 8e3, "Mbit/s": 1.0}[study.unit]
                for c in lines:
                    cc = next(k for k, v in CC_NAMES.items() if v in c.get_label())
                    y = np.sort(c.lines[0].get_ydata())[::-1]
                    xs = sorted(c.lines[0].get_xdata())
                    assert len(y) == len(xs) >= 2
                    # falls with the swept key (loss or jitter), starting at the cell's known mean
                    assert np.all(np.diff(y) <= 1e-9)
                    assert y[0] <= BASE_MBPS[cc] * scale * 1.0001


def test_loss_key_figures_overlay_the_published_points(figures):
    for name in ("loss-tolerance", "dumbbell-loss"):
        study = STUDIES[name]
        assert any("published" in t for t in _legend_texts(figures[name]))
        ax = figures[name].axes[0]
        assert ax.get_xscale() == "log"
        pub = [ln for ln in ax.get_lines() if ln.get_marker() == "D" and len(ln.get_xdata()) == 1]
        n_goodput = sum(r.metric == "goodput" and r.part in study.key_figure.parts for r in study.published)
        assert len(pub) == n_goodput


def test_jitter_figures_shade_the_chaos_zone(figures):
    for name in ("jitter-cliff", "chaos-zone"):
        fig = figures[name]
        assert "the seed's chaos zone" in _legend_texts(fig)
        spans = [p for p in fig.axes[0].patches if p.get_label() == "the seed's chaos zone"]
        assert len(spans) == 1
        x0, x1 = spans[0].get_x(), spans[0].get_x() + spans[0].get_width()
        assert (x0, x1) == pytest.approx((16.0, 24.0))


def test_vegas_bars_per_part_with_ping_beside(figures):
    study = STUDIES["vegas-vs-cubic"]
    fig = figures["vegas-vs-cubic"]
    top, ping = fig.axes
    assert top.get_ylabel() == metric_label(study, "goodput_total")
    assert [t.get_text().replace("\n", "") for t in ping.get_xticklabels()] == [p.name for p in study.parts]
    bars = [c for c in top.containers if hasattr(c, "patches")]
    # one container per algorithm and stream count, one bar per part
    assert sorted(c.get_label() for c in bars) == sorted(
        f"{CC_NAMES[cc]}, {n} flow{'s' if n > 1 else ''}" for cc in ("cubic", "vegas") for n in (1, 10)
    )
    assert all(len(c.patches) == len(study.parts) for c in bars)
    # goodput_total: 10 streams of cubic get 10 x 10 Mbit/s, in every part
    ten = next(c for c in bars if c.get_label() == "CUBIC, 10 flows")
    assert [b.get_height() for b in ten.patches] == pytest.approx([100.0] * len(study.parts))
    assert ping.get_yscale() == "log" and "ping p50" in ping.get_ylabel()
    ping_bars = [c for c in ping.containers if hasattr(c, "patches")]
    cubic = next(c for c in ping_bars if c.get_label() == "CUBIC, 1 flow")
    assert [b.get_height() for b in cubic.patches] == pytest.approx([2 + 100 + 1] * len(study.parts))
    assert "ping p95 under load" in _legend_texts(fig)
    _no_nan_text(fig)


def test_bufferbloat_scatter_goodput_vs_probe_delay(figures):
    study = STUDIES["bufferbloat"]
    fig = figures["bufferbloat"]
    (ax,) = fig.axes
    assert ax.get_xlabel() == metric_label(study, "probe_p95")
    assert ax.get_ylabel() == metric_label(study, "goodput_total")
    legend = _legend_texts(fig)
    for cc in ("cubic", "bbr", "vegas"):
        assert legend.count(CC_NAMES[cc]) == 1
    for queue in ("droptail 1bdp", "droptail 16bdp", "codel", "fq_codel", "pie", "fq"):
        assert any(t == queue or t.startswith(queue + " ") for t in legend), (queue, legend)
    points = [c for c in ax.containers if c.get_label() == "_point"]
    cells = len(study.parts[0].sweep_table(quick=True)["bottleneck.aqm"]) * 2  # zipped queues x counts
    assert len(points) == cells * 3


def test_coexistence_time_figure_marks_probe_rtt_rounds(figures):
    fig = figures["coexistence-1g"]
    legend = _legend_texts(fig)
    assert "CUBIC (10 flows)" in legend and "BBR v1 (10 flows)" in legend
    assert "BBR flows enter ProbeRTT" in legend
    for ax in fig.axes:
        assert ax.get_xlabel() in ("", "time (s)")
        flows = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 2]
        assert len(flows) == 10 and len({ln.get_color() for ln in flows}) == 1
        marks = sorted(ln.get_xdata()[0] for ln in ax.get_lines() if ln.get_linestyle() == "--")
        assert marks == pytest.approx(list(PROBE_RTT_AT), abs=0.11)


def test_recommendation_map_cells_and_winners(figures):
    study = STUDIES["recommendation-map"]
    fig = figures["recommendation-map"]
    part = study.part("alone")
    quick = part.sweep_table(quick=True)
    assert len(fig.axes) == len(quick["bottleneck.buffer"])
    for ax in fig.axes:
        cells = [p for p in ax.patches if p.get_width() == 1]
        assert len(cells) == len(quick["bottleneck.loss"]) * len(set(quick["bottleneck.jitter"]))
        assert ax.get_xlabel() == "random loss (%)"
    # BBR's synthetic goodput is 4x CUBIC's in every cell: it wins everywhere, no tie
    assert "BBR v1 wins" in _legend_texts(fig)
    assert not any(t.startswith("tie") for t in _legend_texts(fig))


# ---- declarations -------------------------------------------------------------------------------


def _with_key_figure(name: str, key_figure) -> dict:
    import tomllib

    study = find_study(name)
    raw = tomllib.loads(study.text)
    raw = copy.deepcopy(raw)
    if key_figure is None:
        raw["study"].pop("key_figure", None)
    else:
        raw["study"]["key_figure"] = key_figure
    return raw


@pytest.mark.parametrize(
    "key_figure, key, words",
    [
        ({"kind": "pie", "caption": "c"}, "study.key_figure.kind", "unknown kind 'pie'"),
        ({"kind": "lines", "metric": "goodput", "x": "bottleneck.loss"}, "study.key_figure.caption", "missing"),
        (
            {"kind": "lines", "caption": "c", "metric": "goodput", "x": "bottleneck.rtt"},
            "study.key_figure.x",
            "not swept",
        ),
        (
            {"kind": "lines", "caption": "c", "metric": "speed", "x": "bottleneck.loss"},
            "study.key_figure.metric",
            "unknown metric",
        ),
        (
            {"kind": "lines", "caption": "c", "metric": "goodput", "x": "bottleneck.loss", "panel": ["nope"]},
            "study.key_figure.panel.0",
            "unknown metric",
        ),
        (
            {"kind": "lines", "caption": "c", "metric": "goodput", "x": "bottleneck.loss", "parts": ["other"]},
            "study.key_figure.parts.0",
            "unknown part",
        ),
        (
            {"kind": "lines", "caption": "c", "metric": "goodput", "x": "bottleneck.loss", "log_x": "yes"},
            "study.key_figure.log_x",
            "not a boolean",
        ),
        (
            {"kind": "lines", "caption": "c", "metric": "goodput", "x": "bottleneck.loss", "shade": [5, 1]},
            "study.key_figure.shade",
            "not an x range",
        ),
        ({"kind": "time", "caption": "c", "metric": "goodput"}, "study.key_figure.metric", "does not apply"),
        ({"kind": "map", "caption": "c", "goal": "speed"}, "study.key_figure.goal", "unknown goal"),
        (
            {"kind": "lines", "caption": "c", "metric": "goodput", "x": "bottleneck.loss", "colour": "red"},
            "study.key_figure.colour",
            "unknown key",
        ),
    ],
)
def test_bad_declarations_name_the_file_and_key(key_figure, key, words):
    raw = _with_key_figure("loss-tolerance", key_figure)
    with pytest.raises(StudyError) as e:
        study_from_dict(raw, "studies/x.toml")
    text = str(e.value)
    assert text.startswith("studies/x.toml: ") and key in text and words in text, text


def test_a_study_without_key_figure_loads_and_draw_says_so():
    study = study_from_dict(_with_key_figure("loss-tolerance", None), "x.toml")
    assert study.key_figure is None
    with pytest.raises(StudyError, match="declares no key figure"):
        draw(study, study_store(study))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    metric=st.sampled_from(["goodput", "goodput_total", "rtt_mean", "bbr_cubic_ratio", "cv"]),
    log_x=st.booleans(),
    log_y=st.booleans(),
    losses=st.lists(st.sampled_from(["0%", "0.1%", "0.5%", "1%", "2%", "5%"]), min_size=2, max_size=5, unique=True),
)
def test_any_valid_lines_declaration_draws_one_series_per_algorithm(metric, log_x, log_y, losses):
    raw = _with_key_figure(
        "loss-tolerance",
        {"kind": "lines", "caption": "c", "metric": metric, "x": "bottleneck.loss", "log_x": log_x, "log_y": log_y},
    )
    raw.pop("published", None)  # the seed's cells need not be in the drawn grid
    raw["part"][0]["sweep"]["bottleneck.loss"] = losses
    raw["part"][0].setdefault("quick", {})["bottleneck.loss"] = losses
    study = study_from_dict(raw, "x.toml")
    fig = draw(study, study_store(study, repeats=2))
    (ax,) = fig.axes
    series = [c for c in ax.containers if not c.get_label().startswith("_")]
    assert len(series) == (1 if metric == "bbr_cubic_ratio" else 2)
    for c in series:
        assert len(c.lines[0].get_xdata()) == len(losses)
    assert ax.get_xlabel() == "random loss (%)"
    assert ax.get_ylabel() == metric_label(study, metric)
    assert ax.get_yscale() == ("log" if log_y else "linear")
    _no_nan_text(fig)
