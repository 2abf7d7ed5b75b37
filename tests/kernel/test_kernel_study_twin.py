"""A study run on the kernel backend also runs on the simulator (DIR/sim-twin) and its report
puts the two side by side, cell by cell (validate/twin.py)."""

from __future__ import annotations

import json
import re

import pytest

import ccbench
from conftest import kernel_missing, run_ccbench

pytestmark = [pytest.mark.kernel, pytest.mark.skipif(kernel_missing() is not None, reason=kernel_missing() or "")]

# Two saturating flows' worth of cells: one flow of CUBIC or Reno over 20 Mbit/s, 20 ms and a
# 1-BDP drop-tail buffer, no loss. Both backends keep the link busy after slow start, so each
# cell's goodput is near 20 Mbit/s x 1448/1514 on both, and the 10 % verdict can be asserted.
STUDY = """
[study]
name = "twin-check"
seed = "999"
title = "CUBIC and Reno on a clean link"
question = "Do the kernel and the simulator agree on a clean 20 Mbit/s link?"
original = "none"
analyses = ["goodput"]

[[part]]
name = "clean"
[part.scenario]
duration = "4s"
[part.scenario.bottleneck]
rate = "20Mbit"
rtt = "20ms"
buffer = "1bdp"
[[part.scenario.flows]]
cc = "cubic"
[part.sweep]
"flows.0.cc" = ["cubic", "reno"]
repeat = 1
[part.quick]
duration = "4s"
repeat = 1
"""


def _section_text(html: str, title: str) -> str:
    i = html.rfind(title)
    assert i >= 0, f"no section {title!r} in the report"
    text = re.sub(r"<svg.*?</svg>", " ", html[i:], flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text))


def test_a_kernel_study_report_puts_the_simulator_beside_the_kernel(tmp_path):
    spec = tmp_path / "twin-check.toml"
    spec.write_text(STUDY)
    out = tmp_path / "store"
    r = run_ccbench("study", "run", spec, "--backend", "kernel", "--out", out, "--quiet", timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the simulator beside it: 2 runs" in r.stdout

    kernel, twin = ccbench.load(out), ccbench.load(out / "sim-twin")
    assert set(kernel.runs["backend"]) == {"kernel"} and set(twin.runs["backend"]) == {"sim"}
    assert len(kernel.runs) == len(twin.runs) == 2
    assert json.loads((out / "ccbench.json").read_text())["backend"] == "kernel"

    text = _section_text((out / "report.html").read_text(), "The kernel beside the simulator")
    assert "2 of 2 cells agree within 10%" in text, text[:2000]
    assert " cubic " in text and " reno " in text

    # `ccbench report` rebuilds the same section from the stores
    (out / "report.html").unlink()
    r = run_ccbench("report", out)
    assert r.returncode == 0, r.stderr
    assert "The kernel beside the simulator" in (out / "report.html").read_text()


def test_no_beside_sim_runs_the_kernel_only(tmp_path):
    spec = tmp_path / "twin-check.toml"
    spec.write_text(STUDY.replace('["cubic", "reno"]', '["reno"]'))
    out = tmp_path / "store"
    r = run_ccbench("study", "run", spec, "--backend", "kernel", "--out", out, "--quiet", "--no-beside-sim")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (out / "sim-twin").exists()
    assert "beside the simulator" not in (out / "report.html").read_text()
