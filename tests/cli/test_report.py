"""The HTML report: content and escaping on a synthetic store, and rendering in headless Chromium
(no console errors, every figure drawn with a size, a screenshot kept in tests/artifacts/)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from types import SimpleNamespace

import pandas as pd
import pytest
from matplotlib.figure import Figure

from ccbench import report
from conftest import ARTIFACTS
from synthetic_store import fake_store, write_store


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = write_store(fake_store(probe=True), tmp_path_factory.mktemp("store") / "s")
    path = report.build_report(root)
    return root, path, path.read_text()


def test_default_path_and_self_contained(built):
    root, path, text = built
    assert path == root / "report.html"
    assert text.startswith("<!DOCTYPE html>")
    assert "<script" not in text.lower()
    # no fetched resources: the only URLs are the SVG/XLink namespace names
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", text))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)


def test_header_from_ccbench_json(built):
    _, _, text = built
    for expected in (
        "ccbench sweep fake.toml",
        "6.1.0-test",
        "2025-01-01T00:00:00+00:00",
        "A fake sweep.",
        "bottleneck.loss",
        "0%, 0.1%, 1%",
        "19 runs: 18 ok, 1 failed.",
    ):
        assert html.escape(expected, quote=True) in text, expected


def test_failed_run_error_is_escaped(built):
    _, _, text = built
    assert "boom <b>" not in text
    assert "boom &lt;b&gt;&amp; bad&lt;/b&gt;" in text


def test_figures_that_apply(built):
    _, _, text = built
    n = int(re.search(r'data-figures="(\d+)"', text).group(1))
    assert n == text.count('<figure class="plot"') == text.count("<svg")
    for caption in (
        "vs random loss",
        "relative to cubic",
        "Per-flow throughput",
        "latency probes",
        "95th-percentile RTT",
        "Jain",
    ):
        assert caption in text, caption
    # jitter, rtt, buffer do not vary in the fake store: no figure for them
    assert "vs jitter" not in text and "vs base RTT" not in text


def test_missing_meta_says_unknown(tmp_path):
    root = write_store(fake_store(), tmp_path / "s")
    (root / "ccbench.json").unlink()
    text = report.build_report(root, out=tmp_path / "r.html").read_text()
    assert "<th>command</th><td>unknown</td>" in text
    assert "<th>date</th><td>unknown</td>" in text


def test_summary_table_intervals():
    from ccbench import plots

    t = plots.tables(fake_store())
    df = report.summary_table(t)
    assert len(df) == 6  # 3 loss rates × 2 algorithms
    row = df[(df["bottleneck.loss"] == "1%") & (df["cc"] == "cubic")].iloc[0]
    # cubic at 1 %: repeats 5 ± 1 Mbit/s -> mean 5, half width t(0.975,2)/√3 = 2.484
    m, lo, hi = map(float, re.findall(r"-?[\d.]+(?:e-?\d+)?", row["goodput per flow, Mbit/s"]))
    assert m == pytest.approx(5.0, rel=1e-3)
    assert hi - m == pytest.approx(4.302653 / 3**0.5, abs=0.01)  # 3 significant digits shown
    assert m - lo == pytest.approx(4.302653 / 3**0.5, abs=0.01)
    assert row["runs"] == 3 and row["flows"] == 6


def test_summary_intervals_of_small_goodputs_are_not_below_zero():
    """Runs of 0.1, 5.0 and 0.2 Mbit/s per flow: the t interval would start at -5.2 Mbit/s; a
    goodput cannot, so the summary prints it from 0 (the upper end is the t interval's)."""
    from ccbench import plots

    s = fake_store(failed=False)
    f = s.flows
    cell = (f["bottleneck.loss"] == "1%") & (f["cc"] == "cubic")
    for rid, v in zip(sorted(f.loc[cell, "run_id"].unique()), (0.1e6, 5.0e6, 0.2e6)):
        f.loc[cell & (f["run_id"] == rid), "goodput_bps"] = v
    df = report.summary_table(plots.tables(s))
    row = df[(df["bottleneck.loss"] == "1%") & (df["cc"] == "cubic")].iloc[0]
    m, lo, hi = map(float, re.findall(r"-?[\d.]+(?:e-?\d+)?", row["goodput per flow, Mbit/s"]))
    assert lo == 0 and m == pytest.approx(1.77, abs=0.01) and hi == pytest.approx(8.72, abs=0.01)
    for text in df["goodput per flow, Mbit/s"]:  # no cell prints a negative bound
        assert "-" not in text, text


def test_summary_keeps_scenarios_of_one_store_apart():
    """A study stores several scenarios (parts) in one store: the same swept cell of two parts
    is two rows, never pooled (pooling a lone flow with a competing one makes a meaningless
    interval)."""
    from ccbench import plots

    a, b = fake_store(failed=False), fake_store(failed=False)
    for tab in ("runs", "flows", "series", "link_series"):
        getattr(b, tab)["run_id"] = "b" + getattr(b, tab)["run_id"].str[1:]
    b.flows["name"] = "other"
    b.flows["goodput_bps"] *= 3
    a.flows["name"] = "fake"
    a.runs["name"], b.runs["name"] = "fake", "other"
    both = SimpleNamespace(
        **{
            tab: pd.concat([getattr(a, tab), getattr(b, tab)], ignore_index=True)
            for tab in ("runs", "flows", "series", "link_series")
        },
        meta=a.meta,
    )
    df = report.summary_table(plots.tables(both))
    assert len(df) == 12 and set(df["name"]) == {"fake", "other"}
    for name, scale in (("fake", 1.0), ("other", 3.0)):
        row = df[(df["name"] == name) & (df["bottleneck.loss"] == "1%") & (df["cc"] == "cubic")].iloc[0]
        m = float(re.findall(r"-?[\d.]+", row["goodput per flow, Mbit/s"])[0])
        assert m == pytest.approx(5.0 * scale, rel=1e-3)
        assert row["runs"] == 3


def test_summary_of_parts_with_different_swept_keys():
    """Parts of one store may sweep different keys: the other part's rows hold NaN in that
    column. The table keeps every run (it used to raise KeyError looking the NaN key up)."""
    from ccbench import plots

    a, b = fake_store(failed=False), fake_store(failed=False)
    for tab in ("runs", "flows", "series", "link_series"):
        getattr(b, tab)["run_id"] = "b" + getattr(b, tab)["run_id"].str[1:]
        getattr(b, tab)["bottleneck.loss"] = None
    a.flows["name"], b.flows["name"] = "loss", "other"
    a.runs["name"], b.runs["name"] = "loss", "other"
    both = SimpleNamespace(
        **{
            tab: pd.concat([getattr(a, tab), getattr(b, tab)], ignore_index=True)
            for tab in ("runs", "flows", "series", "link_series")
        },
        meta=a.meta,
    )
    df = report.summary_table(plots.tables(both))
    other = df[df["name"] == "other"]
    assert set(other["cc"]) == set(df[df["name"] == "loss"]["cc"])
    assert other["bottleneck.loss"].isna().all()
    assert (other["runs"] > 0).all() and (other["flows"] > 0).all()


def test_sections_given_are_rendered_escaped(tmp_path):
    root = write_store(fake_store(failed=False), tmp_path / "s")
    fig = Figure()
    fig.add_subplot().plot([0, 1], [0, 1])
    sec = report.Section(
        "Published <vs> measured",
        paragraphs=["a < b & c"],
        tables=[("t&c", pd.DataFrame({"published": [1.0], "measured": [1.1]}))],
        figures=[("mine", fig)],
    )
    text = report.build_report(root, sections=[sec], title="T <x>").read_text()
    assert "<title>T &lt;x&gt;</title>" in text
    assert "Published &lt;vs&gt; measured" in text and "a &lt; b &amp; c" in text
    assert "<caption>t&amp;c</caption>" in text and "Figure" in text and "mine" in text


def test_study_sections_are_called_when_meta_names_a_study(tmp_path, monkeypatch):
    from ccbench import study
    from ccbench.study import run as study_run

    root = write_store(fake_store(failed=False), tmp_path / "s")
    meta = json.loads((root / "ccbench.json").read_text())
    meta["study"] = "fake-study"
    (root / "ccbench.json").write_text(json.dumps(meta))
    seen = {}

    def report_sections(name, results):
        seen["name"] = name
        seen["runs"] = len(results.runs)
        return [report.Section("From the study", paragraphs=["study text"])]

    monkeypatch.setattr(study_run, "report_sections", report_sections)
    text = study.build_report(root).read_text()
    assert seen == {"name": "fake-study", "runs": 18}
    assert "From the study" in text and "study text" in text


def test_cli_report(tmp_path):
    from typer.testing import CliRunner

    from ccbench.cli.app import app

    root = write_store(fake_store(), tmp_path / "s")
    out = tmp_path / "x" / "r.html"
    r = CliRunner().invoke(app, ["report", str(root), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("<!DOCTYPE html>")
    r = CliRunner().invoke(app, ["report", str(tmp_path / "missing")])
    assert r.exit_code != 0


# ---- headless Chromium ----------------------------------------------------------------------


def _chromium_or_skip():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium and driver:
        return chromium, driver
    missing = " and ".join(n for n, p in (("chromium", chromium), ("chromedriver", driver)) if not p)
    if os.environ.get("CI") == "true" and os.geteuid() == 0:
        pytest.fail(f"{missing} missing in CI as root (make system-deps installs Debian chromium and chromium-driver)")
    pytest.skip(f"{missing} not installed (Debian: apt-get install chromium chromium-driver)")


def test_report_renders_in_headless_chromium(built):
    chromium, driver_path = _chromium_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    root, path, text = built
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(path, ARTIFACTS / "report.html")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        drv.get(path.resolve().as_uri())
        body = drv.find_element(By.TAG_NAME, "body")
        stated = int(body.get_attribute("data-figures"))
        figures = drv.find_elements(By.CSS_SELECTOR, "figure.plot")
        svgs = drv.find_elements(By.CSS_SELECTOR, "figure.plot > svg")
        assert stated > 0 and len(figures) == stated and len(svgs) == stated
        for i, svg in enumerate(svgs, 1):
            size = svg.size
            assert size["width"] > 100 and size["height"] > 50, f"figure {i}: {size}"
            # something was drawn inside: the SVG has painted children with a bounding box
            bbox = drv.execute_script("const b = arguments[0].getBBox(); return [b.width, b.height];", svg)
            assert bbox[0] > 0 and bbox[1] > 0, f"figure {i}: empty drawing"
        # whole page screenshot: size the window to the document
        height = drv.execute_script("return document.documentElement.scrollHeight")
        drv.set_window_size(1200, min(int(height) + 100, 30000))
        assert drv.save_screenshot(str(ARTIFACTS / "report.png"))
        errors = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]
        assert not errors, errors
    finally:
        drv.quit()


REAL_TOML = """
# One CUBIC and one BBR flow share a link under random loss, with latency probes.
name = "report-real"
duration = "3s"
seed = 1
[bottleneck]
rate = "20Mbit"
rtt = "20ms"
buffer = "1bdp"
[[flows]]
cc = "cubic"
[[flows]]
cc = "bbr"
[probe]
ping = "100ms"
[sweep]
"bottleneck.loss" = ["0%", "1%"]
"bottleneck.rtt" = ["20ms", "40ms"]
"""


def test_report_of_a_real_small_sweep(tmp_path):
    from ccbench import sweeps as sweep

    scenario = tmp_path / "real.toml"
    scenario.write_text(REAL_TOML)
    out = tmp_path / "store"
    summary = sweep.run_sweep(scenario, out, workers=1, progress=False)
    assert summary.all_ok
    assert (out / "ccbench.json").is_file() and (out / "link_series").is_dir()
    text = report.build_report(out).read_text()
    assert "Figures not drawn" not in text  # every figure the data calls for was drawn
    for caption in (
        "vs random loss",
        "vs base RTT",
        "relative to cubic",
        "Per-flow throughput",
        "Bottleneck queue",
        "latency probes",
        "95th-percentile RTT",
        "Jain",
    ):
        assert caption in text, caption
    assert "report-real" in text and "4 runs: 4 ok, 0 failed." in text
