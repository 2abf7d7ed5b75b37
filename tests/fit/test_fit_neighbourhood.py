"""recommend's neighbourhood of a fitted link: the ends of the fit's intervals in place of the
fixed BAND factors, the fixed factor on a side the interval does not give, and the notes and
JSON saying which (recommend/fitband.py, link.neighbourhood)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from ccbench.cli import app
from ccbench.cli.recommend import _fitted_scenario
from ccbench.fit import fit_capture
from ccbench.fit.replay import simulate_capture
from ccbench.recommend import BAND, Link, link_from_scenario, neighbourhood
from ccbench.recommend.fitband import with_fit_intervals

runner = CliRunner()

#: the link the capture is simulated over: every figure the neighbourhood varies is non-zero
TRUE_RATE, TRUE_LOSS, TRUE_JITTER = 10e6, 0.005, 0.002


@pytest.fixture(scope="module")
def lossy_pcap(tmp_path_factory):
    pcap = tmp_path_factory.mktemp("fitband") / "flow0.pcap"
    sc = {
        "duration": "10s",
        "bottleneck": {"rate": "10Mbit", "rtt": "20ms", "buffer": "2bdp", "loss": "0.5%", "jitter": "2ms"},
        "flows": [{"cc": "cubic"}],
    }
    simulate_capture(sc, pcap)
    return pcap


@pytest.fixture(scope="module")
def fitted(lossy_pcap):
    fit = fit_capture(lossy_pcap)
    link, notes = link_from_scenario(_fitted_scenario(lossy_pcap, fit))
    link, more = with_fit_intervals(link, fit, "the fit of flow0.pcap")
    return fit, link, notes + more


def _sig4(x: float) -> float:
    return float(f"{x:.4g}")


def _by_axis(points):
    out: dict = {}
    for p in points[1:]:
        out.setdefault(p.axis, []).append(p)
    return out


def test_variants_are_the_fits_interval_ends(fitted):
    """Each varied figure goes to the two ends of its fitted interval (to 4 significant digits,
    as the scenario holds the fitted figures), not to ×0.8/×1.25, ×0.5/×2, ×0.5/×1.5."""
    fit, link, notes = fitted
    assert fit.loss.model == "bernoulli"  # Gilbert loss would be fixed, not varied
    pts = neighbourhood(link, None, notes)
    axes = _by_axis(pts)
    want = {"rate": fit.rate, "loss": fit.loss.rate, "jitter": fit.jitter}
    for axis, est in want.items():
        got = axes[axis]
        assert [p.source for p in got] == ["fit interval", "fit interval"], axis
        assert got[0].value() == pytest.approx(_sig4(est.lo), rel=1e-12), axis
        assert got[1].value() == pytest.approx(_sig4(est.hi), rel=1e-12), axis
    # the fitted intervals are narrower than the fixed band here, so the ends are not its factors
    assert BAND["rate"][0] < axes["rate"][0].factor < 1 < axes["rate"][1].factor < BAND["rate"][1]
    assert pts[0].source == "stated"
    assert any(n.startswith("the neighbourhood comes from the intervals of the fit of flow0.pcap") for n in notes)


def test_fitted_neighbourhood_spans_the_true_link(fitted):
    """The simulated link's own figures lie between each pair of neighbours: what the
    neighbourhood asks is whether the answer holds over the links the capture allows."""
    _, link, _ = fitted
    axes = _by_axis(neighbourhood(link))
    for axis, true in (("rate", TRUE_RATE), ("loss", TRUE_LOSS), ("jitter", TRUE_JITTER)):
        lo, hi = (p.value() for p in axes[axis])
        assert lo <= true <= hi, (axis, lo, true, hi)


def _link(**intervals) -> Link:
    # 10 Mbit/s, 20 ms, 1 % loss, ±2 ms: every BAND variant stays inside the input space
    return Link(rate_bps=10e6, rtt_s=0.02, loss=0.01, jitter_s=0.002, intervals=intervals)


def test_open_or_degenerate_side_falls_back_to_the_fixed_factor():
    """Rate open above (a lower bound: the link was never saturated) -> rate ×1.25 = 12.5 Mbit/s
    above, the fit's 9 Mbit/s below; loss with its low end on the fitted value -> ×0.5 = 0.5 %
    below, the fit's 1.5 % above. Each fallback is noted with its side."""
    notes: list[str] = []
    pts = neighbourhood(_link(rate=(9e6, None), loss=(0.01, 0.015)), None, notes)
    axes = _by_axis(pts)
    assert [(p.value(), p.source) for p in axes["rate"]] == [(9e6, "fit interval"), (12.5e6, "band")]
    assert [(p.value(), p.source) for p in axes["loss"]] == [(0.005, "band"), (0.015, "fit interval")]
    # jitter has no interval at all: the fixed ×0.5/×1.5, without a note about a fit
    assert [(p.value(), p.source) for p in axes["jitter"]] == [(0.001, "band"), (pytest.approx(0.003), "band")]
    assert "the fit's rate interval is open above: the neighbour there is the fixed ×1.25" in notes
    assert any(n.startswith("the fit's loss interval has its low end on the fitted value") for n in notes)
    assert not any("jitter interval" in n for n in notes)


def test_interval_ends_are_clipped_to_the_input_space():
    """A loss interval reaching 30 % is clipped to recommend's 20 % (MAX_LOSS), noted as the
    fit's high end."""
    notes: list[str] = []
    axes = _by_axis(neighbourhood(_link(loss=(0.004, 0.30)), None, notes))
    assert [p.value() for p in axes["loss"]] == [0.004, 0.20]
    assert any(n.startswith("the neighbour loss at the fit's high end is clipped to 20 %") for n in notes)


def test_zero_figure_varies_only_up_to_the_fits_end():
    """A loss-free fit (no loss seen; the Wilson interval still reaches 0.3 %) has one loss
    neighbour, at 0.3 %; a 0 cannot be scaled, so without an upper end it is not varied."""
    link = dataclasses.replace(_link(loss=(0.0, 0.003), jitter=(0.0, None)), loss=0.0, jitter_s=0.0)
    notes: list[str] = []
    axes = _by_axis(neighbourhood(link, None, notes))
    assert [p.value() for p in axes["loss"]] == [0.003]
    assert "jitter" not in axes
    assert "the fit's jitter interval is open above: jitter 0 is not varied up" in notes


def test_a_flag_beside_the_fit_keeps_the_fixed_factors(fitted):
    """--rate overrides the fitted rate: the fit's interval is not about the user's figure."""
    fit, _, _ = fitted
    link = Link(rate_bps=20e6, rtt_s=0.02, loss=0.004, jitter_s=0.002, origin={"rate": "--rate"})
    link, notes = with_fit_intervals(link, fit, "the fit of x.pcap")
    assert "rate" not in link.intervals and {"loss", "jitter"} <= link.intervals.keys()
    assert "rate is given by --rate: its neighbours are the fixed factors" in notes
    rates = [p.value() for p in _by_axis(neighbourhood(link))["rate"]]
    assert rates == [16e6, 25e6]  # 20 Mbit/s ×0.8, ×1.25


def test_recommend_json_says_the_neighbourhood_is_the_fits(lossy_pcap):
    r = runner.invoke(app, ["recommend", "--from", str(lossy_pcap), "--budget", "5s", "--cc", "cubic,reno", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output[r.output.index("{") :])
    assert any("intervals of the fit of flow0.pcap" in n for n in doc["notes"])
    sources = [p["source"] for p in doc["neighbourhood"]]
    assert sources[0] == "stated" and set(sources[1:]) == {"fit interval"}
    assert [e["name"] for e in doc["fit"]["estimates"]] == ["rate", "rtt", "buffer", "loss", "jitter"]


def test_a_figure_the_link_fixes_takes_no_interval(fitted):
    """Gilbert loss is kept as fitted (link_from_scenario fixes it): its Bernoulli interval is
    neither used nor announced."""
    fit, _, _ = fitted
    link = Link(rate_bps=10e6, rtt_s=0.02, loss=0.004, fixed={"loss": "Gilbert-Elliott loss is kept"})
    link, notes = with_fit_intervals(link, fit, "the fit of x.pcap")
    assert "loss" not in link.intervals
    assert "loss" not in notes[0] and "rate" in notes[0]
