"""ccbench plot STORE key: the key figure of a study's store ([study.key_figure]), and the
report that opens with it."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from ccbench.cli.app import app

runner = CliRunner()

STUDY = """
[study]
name = "tiny-key"
seed = "999"
title = "A tiny study with a key figure"
question = "Does BBR beat CUBIC under loss?"
original = "none"
analyses = ["goodput"]

[study.key_figure]
kind = "lines"
metric = "goodput"
x = "bottleneck.loss"
log_x = true
caption = "Goodput vs loss, one line per algorithm."

[[part]]
name = "loss"
[part.scenario]
duration = "2s"
[part.scenario.bottleneck]
rate = "10Mbit"
rtt = "20ms"
[[part.scenario.flows]]
cc = "cubic"
[part.sweep]
"bottleneck.loss" = ["0%", "1%"]
"flows.0.cc" = ["cubic", "bbr"]
repeat = 2
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("keyfig")
    path = root / "tiny-key.toml"
    path.write_text(STUDY)
    out = root / "out"
    r = runner.invoke(app, ["study", "run", str(path), "--out", str(out), "-q", "-j", "1"], terminal_width=200)
    assert r.exit_code == 0, r.output
    return out


def test_plot_key_writes_the_study_key_figure(store, tmp_path):
    for name in ("key.png", "key.svg"):
        r = runner.invoke(app, ["plot", str(store), "key", "-o", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
        assert (tmp_path / name).stat().st_size > 1000
    svg = (tmp_path / "key.svg").read_text()
    assert "random loss (%)" in svg and "goodput per flow (Mbit/s)" in svg


def test_the_report_opens_with_the_key_figure(store):
    html = (store / "report.html").read_text()
    titles = re.findall(r"<h2>(.*?)</h2>", html)
    assert titles[0] == "Key figure", titles[:3]
    first = html.split("<h2>Key figure</h2>", 1)[1].split("</section>", 1)[0]
    assert "Does BBR beat CUBIC under loss?" in first
    assert "Goodput vs loss, one line per algorithm." in first and "<svg" in first


def test_plot_key_on_a_store_without_study_names_the_store(store, tmp_path):
    import shutil

    plain = tmp_path / "plain"
    shutil.copytree(store, plain)
    meta = json.loads((plain / "ccbench.json").read_text())
    meta.pop("study")
    (plain / "ccbench.json").write_text(json.dumps(meta))
    r = runner.invoke(app, ["plot", str(plain), "key"])
    assert r.exit_code == 1
    assert str(plain) in r.output and "not made by a study" in r.output


def test_plot_key_of_a_study_without_key_figure_says_so(store, tmp_path):
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(store, bare)
    study_file = tmp_path / "bare.toml"
    study_file.write_text(re.sub(r"\[study.key_figure\].*?\n\n", "", STUDY, flags=re.S))
    meta = json.loads((bare / "ccbench.json").read_text())
    meta["scenario_file"] = str(study_file)
    (bare / "ccbench.json").write_text(json.dumps(meta))
    r = runner.invoke(app, ["plot", str(bare), "key"])
    assert r.exit_code == 1
    assert str(bare) in r.output and "declares no key figure" in r.output
