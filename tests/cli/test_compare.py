"""ccbench compare: algorithms alone and in pairs on a scenario, intervals, Holm-adjusted tests,
outputs, resume, bad input. Small and fast on the simulator (5 s runs, 2-3 repeats)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ccbench import compare
from ccbench.cli.app import app

runner = CliRunner()

# 50 Mbit/s, 50 ms, 2 % random loss: loss-based CUBIC and Reno collapse (Mathis: about
# 1.2 * 1448 B * 8 / (50 ms * sqrt(0.02)) = 2 Mbit/s), BBR's model ignores random loss and keeps
# most of the link.
LOSSY = """
name = "lossy"
duration = "5s"
[bottleneck]
rate = "50Mbit"
rtt = "50ms"
loss = "2%"
buffer = "1bdp"
[[flows]]
cc = "cubic"
"""

# A 10 BDP drop-tail buffer and no loss: CUBIC fills the buffer (RTT up to 11 x the base),
# BBR keeps the queue near its 2 BDP in-flight cap and below after its drain.
# 10 s, so that the p95 is the steady state's: BBR's STARTUP overshoot (gain 2.89 until the
# bandwidth stops growing, then DRAIN) fills part of the 10-BDP buffer for its first few hundred
# ms, which is more than 5 % of a 5 s run (the kernel backend, 10 s: BBR p95 29.5 and 33.9 ms).
BLOAT = """
name = "bloat"
duration = "10s"
[bottleneck]
rate = "20Mbit"
rtt = "20ms"
buffer = "10bdp"
[[flows]]
cc = "cubic"
"""

CCS = ["cubic", "bbr", "reno"]


def _invoke(args):
    return runner.invoke(app, ["compare", *args], terminal_width=200)


@pytest.fixture(scope="module")
def lossy(tmp_path_factory):
    d = tmp_path_factory.mktemp("cmp")
    scen = d / "lossy.toml"
    scen.write_text(LOSSY)
    out = d / "out"
    r = _invoke([str(scen), "--cc", ",".join(CCS), "--repeat", "3", "--out", str(out), "-j", "1", "-q"])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "compare.json").read_text())
    return {"scenario": scen, "out": out, "output": r.output, "doc": doc}


def test_tables_name_every_algorithm_and_pair(lossy):
    text = lossy["output"]
    for title in ("Alone on the bottleneck", "Pairs sharing the bottleneck", "Significance"):
        assert title in text
    for cc in CCS:
        assert cc in text
    for a, b in [("cubic", "bbr"), ("cubic", "reno"), ("bbr", "reno")]:
        assert f"{a} vs {b}" in text
    doc = lossy["doc"]
    assert [r["cc"] for r in doc["alone"]] == CCS
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [("cubic", "bbr"), ("cubic", "reno"), ("bbr", "reno")]
    assert all(r["runs"] == 3 for r in doc["alone"]) and all(p["runs"] == 3 for p in doc["pairs"])
    md = (lossy["out"] / "compare.md").read_text()
    assert "| cubic vs bbr |" in md and "| reno |" in md


def test_shares_sum_to_one_and_jain_in_range(lossy):
    for p in lossy["doc"]["pairs"]:
        assert p["share_a"]["mean"] + p["share_b"]["mean"] == pytest.approx(1.0, abs=1e-9)
        for side in ("share_a", "share_b"):
            c = p[side]
            assert 0.0 <= c["lo"] <= c["mean"] <= c["hi"] <= 1.0
        j = p["jain"]
        assert 0.5 - 1e-9 <= j["lo"] <= j["mean"] <= j["hi"] <= 1.0 + 1e-9


def test_bbr_beats_cubic_under_random_loss(lossy):
    doc = lossy["doc"]
    gp = {r["cc"]: r["goodput_mbps"]["mean"] for r in doc["alone"]}
    assert gp["bbr"] > 3 * gp["cubic"]
    t = next(t for t in doc["tests"] if t["metric"] == "goodput_mbps" and {t["a"], t["b"]} == {"cubic", "bbr"})
    assert t["significant"] and t["higher"] == "bbr"
    assert t["p_holm"] >= t["p"] and t["p_holm"] < 0.05
    assert t["statement"].startswith("bbr > cubic (p=")
    assert "bbr > cubic (p=" in lossy["output"]
    # in the pair BBR takes most of the link
    pair = next(p for p in doc["pairs"] if (p["a"], p["b"]) == ("cubic", "bbr"))
    assert pair["share_b"]["lo"] > 0.5 and pair["verdict"] == "bbr takes more"


def test_json_has_the_documented_keys(lossy):
    doc = lossy["doc"]
    assert set(doc) == set(compare.JSON_KEYS)
    assert set(doc["alone"][0]) == {"cc", "runs", "goodput_mbps", "rtt_mean_ms", "rtt_p95_ms", "retransmits"}
    assert set(doc["alone"][0]["goodput_mbps"]) == {"mean", "lo", "hi", "n", "method"}
    assert set(doc["pairs"][0]) >= {"a", "b", "runs", "share_a", "share_b", "jain", "aggregate_mbps", "verdict"}
    assert set(doc["tests"][0]) >= {"metric", "a", "b", "method", "p", "p_holm", "significant", "higher", "statement"}
    assert {t["metric"] for t in doc["tests"]} == {"goodput_mbps", "rtt_p95_ms"}
    assert len(doc["tests"]) == 2 * 3
    assert doc["test"] == "welch" and doc["repeat"] == 3 and doc["algorithms"] == CCS
    assert set(doc["files"]) == {"json", "md", "figure_alone", "figure_pairs", "html"}
    for name in doc["files"].values():
        assert (lossy["out"] / name.split("/")[-1]).is_file()
    assert doc["stores"] == {"alone": str(lossy["out"] / "alone"), "pairs": str(lossy["out"] / "pairs")}


def test_html_report_has_figures_and_no_script(lossy):
    html = (lossy["out"] / "report.html").read_text()
    assert "<script" not in html.lower()
    assert html.count('<figure class="plot"') == 2 and html.count("<svg") >= 2
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    for title in ("Alone on the bottleneck", "Pairs sharing the bottleneck", "Significance"):
        assert title in html
    assert (lossy["out"] / "alone-goodput-rtt.svg").read_text().lstrip().startswith("<?xml")
    assert (lossy["out"] / "pairs-shares.svg").is_file()


def test_stores_are_ordinary_sweep_stores(lossy, tmp_path):
    from ccbench.report.build import build_report

    for part in ("alone", "pairs"):
        assert build_report(lossy["out"] / part, out=tmp_path / f"{part}.html").is_file()


def test_out_that_is_a_store_is_refused(lossy):
    r = _invoke([str(lossy["scenario"]), "--out", str(lossy["out"] / "alone")])
    assert r.exit_code == 2 and "is a result store" in r.output


def test_second_run_resumes_and_json_flag(lossy):
    r = _invoke([str(lossy["scenario"]), "--cc", ",".join(CCS), "--repeat", "3", "--out", str(lossy["out"]), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["runs"]["executed"] == 0
    assert doc["runs"]["cached"] == doc["runs"]["planned"] == 2 * 3 * 3
    assert doc["alone"] == lossy["doc"]["alone"]


def test_bloated_buffer_cubic_p95_rtt_several_times_bbr(tmp_path):
    scen = tmp_path / "bloat.toml"
    scen.write_text(BLOAT)
    cmp = compare.run_compare(
        scen, tmp_path / "out", ccs="cubic,bbr", repeat=2, workers=1, progress=False, report=False, figures=False
    )
    p95 = {r["cc"]: r["rtt_p95_ms"]["mean"] for r in cmp.doc["alone"]}
    assert p95["cubic"] > 4 * p95["bbr"]
    t = next(t for t in cmp.doc["tests"] if t["metric"] == "rtt_p95_ms")
    assert t["significant"] and t["higher"] == "cubic"


def test_several_flow_groups_all_get_the_algorithm(tmp_path):
    scen = tmp_path / "multi.toml"
    scen.write_text("""
name = "multi"
duration = "2s"
[bottleneck]
rate = "5Mbit"
rtt = "20ms"
[[flows]]
cc = "cubic"
count = 2
[[flows]]
cc = "reno"
start = "0.5s"
""")
    cmp = compare.run_compare(
        scen, tmp_path / "out", ccs=["vegas", "bbr"], repeat=2, workers=1, progress=False, report=False, figures=False
    )
    from ccbench import load

    alone = load(tmp_path / "out" / "alone").flows
    assert alone.groupby("run_id")["cc"].agg(lambda s: len(s)).eq(3).all()
    assert alone.groupby("run_id")["cc"].nunique().eq(1).all()
    assert alone.groupby("cc")["run_id"].nunique().to_dict() == {"vegas": 2, "bbr": 2}
    pairs = load(tmp_path / "out" / "pairs").flows
    assert sorted(pairs.groupby("run_id")["cc"].agg(lambda s: ",".join(s)).unique()) == ["vegas,bbr"]
    assert cmp.doc["alone"][0]["goodput_mbps"]["mean"] <= 5.0 * 1.001  # delivered bytes: no overcount


def test_holm_adjustment():
    assert compare.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert compare.holm([0.5, None, 0.01]) == [pytest.approx(0.5), None, pytest.approx(0.02)]
    assert compare.holm([]) == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.toml"], "missing.toml: no such file"),
        (["{s}", "--cc", "cubic,bogus"], "unknown algorithm 'bogus'"),
        (["{s}", "--cc", "cubci"], "did you mean 'cubic'"),
        (["{s}", "--repeat", "0"], "--repeat 0"),
        (["{s}", "--test", "ttest"], "--test 'ttest'"),
        (["{s}", "--backend", "nope"], "unknown backend 'nope'"),
    ],
)
def test_bad_input_exit_2(tmp_path, args, message):
    scen = tmp_path / "s.toml"
    scen.write_text(LOSSY)
    r = runner.invoke(
        app, ["compare", *[a.format(s=scen) for a in args], "--out", str(tmp_path / "o")], terminal_width=200
    )
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert not (tmp_path / "o").exists()  # refused before anything ran


def test_algorithm_the_backend_cannot_run(monkeypatch):
    from ccbench import backends

    monkeypatch.setattr(backends, "algorithms", lambda name="sim": [{"name": n} for n in ("reno", "cubic", "bbr")])
    with pytest.raises(compare.CompareError) as e:
        compare.resolve_algorithms("cubic,vegas", "kernel")
    assert "vegas is not available on the kernel backend (available: reno, cubic, bbr)" in str(e.value)
    assert compare.resolve_algorithms(None, "kernel") == ["reno", "cubic", "bbr"]
    assert compare.resolve_algorithms("BBR, cubic,bbr", "kernel") == ["bbr", "cubic"]
