"""ccbench validate: the grid, sim-only quick runs with resume, the error arithmetic on synthetic
stores of known goodputs, the CLI, and (as root with the kernel backend) one cell on both
backends."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import pytest

from ccbench import validate as v
from ccbench.study.spec import StudyError
from ccbench.validate import run as validate_run


def _grid_file(tmp_path: Path, body: str, name: str = "grid.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


SMALL = """
[study]
name = "small"
seed = "test"
title = "t"
question = "q"
original = "o"

[[part]]
name = "loss"
[part.scenario]
duration = "2s"
seed = 1
sample_interval = "0s"
[part.scenario.bottleneck]
rate = "20Mbit"
rtt = "20ms"
buffer = "1bdp"
[[part.scenario.flows]]
cc = "cubic"
[part.sweep]
"flows.0.cc" = ["cubic", "bbr"]
"bottleneck.loss" = ["0%", "1%"]
repeat = 2
"""


# ---- the grid ---------------------------------------------------------------------------------


def test_default_grid_cells_and_quick():
    g = v.load_grid("default")
    assert [p.name for p in g.parts] == [
        "loss-rtt",
        "light-loss",
        "reorder",
        "gilbert",
        "ack-loss",
        "vegas",
        "reorder-48m",
        "light-loss-48m",
        "coexistence",
    ]
    cells = v.plan_cells(g, ["sim"])
    by_part = {}
    for c in cells:
        by_part.setdefault(c.part, []).append(c)
    assert {k: len(x) for k, x in by_part.items()} == {
        "loss-rtt": 27,
        "light-loss": 9,  # 0.1 % loss at 10, 50 and 100 ms
        "reorder": 9,
        "gilbert": 3,
        "ack-loss": 3,
        "vegas": 2,
        "reorder-48m": 2,
        "light-loss-48m": 2,
        "coexistence": 8,  # 10 and 50 ms x 0.25, 1, 4, 8 BDP
    }
    assert {c.cc for c in cells} == {"cubic", "bbr", "reno", "vegas", "bbr+cubic"}
    # high-variance cells (reordering jitter, light and bursty loss, BBR beside CUBIC) get 10 repeats, the others 5
    noisy = {"light-loss", "reorder", "gilbert", "reorder-48m", "light-loss-48m", "coexistence"}
    assert all(len(c.run_ids["sim"]) == (10 if c.part in noisy else 5) for c in cells)
    assert {p.duration_s() for p in g.parts} == {20.0, 25.0, 60.0}
    labels = {c.label for c in by_part["loss-rtt"]}
    assert "rtt=100ms loss=5%" in labels and "rtt=10ms loss=1%" in labels
    assert {c.label for c in by_part["light-loss"]} == {"rtt=10ms", "rtt=50ms", "rtt=100ms"}
    assert g.part("light-loss").scenario().bottleneck.loss.p == 0.001
    assert {c.label for c in by_part["reorder"]} == {"jitter=4ms", "jitter=8ms", "jitter=16ms"}
    sc = g.part("gilbert").scenario()
    assert sc.bottleneck.loss.model == "gilbert" and sc.bottleneck.rate_bps == 50_000_000
    assert g.part("ack-loss").scenario().bottleneck.impair == "ack"
    assert g.part("reorder").scenario().bottleneck.reorder is True

    q = v.select_parts(g, quick=True)
    assert [p.name for p in q.parts] == ["loss-rtt", "coexistence"]
    qc = v.plan_cells(q, ["sim"], quick=True)
    assert len(qc) == 5 and [len(c.run_ids["sim"]) for c in qc] == [2, 2, 2, 2, 3]
    assert q.parts[0].duration_s(True) == 5.0
    # --duration and --repeat
    d = v.select_parts(g, duration="7s")
    assert {p.duration_s() for p in d.parts} == {7.0} and g.parts[0].duration_s() == 20.0
    assert all(len(c.run_ids["sim"]) == 3 for c in v.plan_cells(d, ["sim"], repeat=3))


def test_default_grid_runs_on_the_kernel_backend():
    """Every default cell passes the kernel backend's check, apart from what this machine lacks
    (root, TUN, ...: the problems with key 'backend'; Vegas where neither the kernel's module
    nor its BPF port can run)."""
    from ccbench import sweeps as sw
    from ccbench.backends import kernel

    g = v.load_grid("default")
    for p in g.parts:
        sc = p.scenario()
        for spec in sw.plan(sc, sw.grid_from_scenario(sc), "kernel"):
            try:
                kernel.check(spec.scenario)
            except ValueError as e:
                other = [x for x in e.problems if x[0] != "backend" and "BPF port cannot load here" not in x[1]]
                assert not other, (p.name, spec.params, other)


def test_bad_grid_files(tmp_path):
    with pytest.raises(v.ValidateError, match="no such grid file"):
        v.load_grid(tmp_path / "nope.toml")
    bad = _grid_file(tmp_path, SMALL.replace('rate = "20Mbit"', 'rate = "20Mbit"\nrat = "1"'), "bad.toml")
    with pytest.raises(StudyError) as e:
        v.load_grid(bad)
    assert str(bad) in str(e.value) and "rat" in str(e.value) and "did you mean 'rate'" in str(e.value)
    syntax = _grid_file(tmp_path, "[study\n", "syntax.toml")
    with pytest.raises(v.ValidateError, match="TOML syntax error"):
        v.load_grid(syntax)
    noquick = v.load_grid(_grid_file(tmp_path, SMALL))
    with pytest.raises(v.ValidateError, match=r"no part has a \[part.quick\] table"):
        v.select_parts(noquick, quick=True)
    with pytest.raises(v.ValidateError, match="--duration"):
        v.select_parts(noquick, duration="fast")
    with pytest.raises(v.ValidateError, match="unknown backend 'kernal'"):
        v.parse_backends("sim,kernal")


def test_cli_bad_grid_exit_2(tmp_path):
    from typer.testing import CliRunner

    from ccbench.cli.app import app

    bad = _grid_file(tmp_path, SMALL.replace('cc = "cubic"\n[part.sweep]', 'cc = "cubc"\n[part.sweep]'))
    res = CliRunner().invoke(
        app,
        ["validate", "--grid", str(bad), "--backends", "sim", "--out", str(tmp_path / "o")],
        env={"COLUMNS": "200", "NO_COLOR": "1"},
    )
    assert res.exit_code == 2, res.output
    assert "error:" in res.output and "flows.0.cc" in res.output and "cubc" in res.output
    assert not (tmp_path / "o" / "sim" / "runs").exists()
    res = CliRunner().invoke(app, ["validate", "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert res.exit_code == 0 and "[part.quick]" in res.output and "--rerun" in res.output


# ---- sim-only quick run, resume, --rerun -------------------------------------------------------


def test_quick_sim_only_writes_outputs_and_resumes(tmp_path):
    from typer.testing import CliRunner

    from ccbench.cli.app import app

    out = tmp_path / "v"
    res = CliRunner().invoke(
        app,
        ["validate", "--quick", "--parts", "loss-rtt", "--backends", "sim", "--out", str(out), "-q", "-j", "1"],
        env={"COLUMNS": "200", "NO_COLOR": "1"},
    )
    assert res.exit_code == 0, res.output
    assert "no comparison" in res.output
    for f in ("validate.md", "validate.csv", "goodput.svg"):
        assert (out / f).is_file(), f
    assert (out / "goodput.svg").read_text().lstrip().startswith("<?xml")
    csv = pd.read_csv(out / "validate.csv")
    assert len(csv) == 4
    assert sorted(zip(csv["cc"], csv["bottleneck.loss"])) == [
        ("bbr", "0%"),
        ("bbr", "1%"),
        ("cubic", "0%"),
        ("cubic", "1%"),
    ]
    assert (csv["sim_runs"] == 2).all() and (csv["sim_goodput_mbps"] > 0).all()
    assert "kernel_goodput_mbps" not in csv.columns
    # lossless cells near the link's payload rate, 1 % loss costs CUBIC goodput
    cub = csv[csv["cc"] == "cubic"].set_index("bottleneck.loss")["sim_goodput_mbps"]
    assert 40 < cub["0%"] < 48.3 and cub["1%"] < cub["0%"]
    md = (out / "validate.md").read_text()
    assert "no comparison" in md and "| loss-rtt | rtt=50ms loss=1% | cubic |" in md
    # BBR's cwnd beyond 2 x bw x min_rtt holds at least the quantization budget, 3 TSO skbs of at
    # least 2 segments (bbr_quantization_budget, bbr_min_tso_segs); CUBIC has no such column value
    beyond = csv.set_index(["cc", "bottleneck.loss"])["sim_bbr_cwnd_beyond_bdp_pkts"]
    assert (beyond.loc["bbr"] >= 6).all() and beyond.loc["cubic"].isna().all()
    assert "BBR cwnd − 2·bw·min_rtt" in md
    import ccbench

    assert len(ccbench.load(out / "sim").ok_runs) == 8  # a normal store

    again = v.run_validate("default", out, backends="sim", quick=True, progress=False, workers=1, parts=["loss-rtt"])
    assert again.executed("sim") == 0
    assert sum(s.cached for s in again.summaries["sim"]) == 8
    assert pd.read_csv(out / "validate.csv")["sim_goodput_mbps"].tolist() == csv["sim_goodput_mbps"].tolist()

    rerun = v.run_validate(
        "default", out, backends="sim", quick=True, progress=False, workers=1, rerun=["sim"], parts=["loss-rtt"]
    )
    assert rerun.rerun == {"sim": 8} and rerun.executed("sim") == 8


def test_kernel_unavailable_gives_sim_only_with_a_note(tmp_path, monkeypatch):
    """Not root: the kernel backend's own check says so, validate runs the simulator only."""
    from ccbench.backends.kernel import env

    monkeypatch.setattr(env, "is_root", lambda uid=None: False)
    monkeypatch.setattr(env, "euid", lambda: 1000)
    grid = _grid_file(tmp_path, SMALL)
    run = v.run_validate(grid, tmp_path / "o", backends="sim,kernel", repeat=1, progress=False, workers=1)
    assert run.ran == ["sim"] and "needs root" in run.skipped["kernel"]
    assert run.comparison.reference is None
    assert any("comparison needs the kernel backend" in n for n in run.notes)
    md = (tmp_path / "o" / "validate.md").read_text()
    assert "comparison needs the kernel backend" in md and "reference: none (kernel cannot run here)" in md
    assert run.comparison.backends == ["sim"]  # no kernel store here: no empty kernel columns
    assert "kernel goodput" not in md
    assert (tmp_path / "o" / "goodput.svg").is_file()


# ---- the arithmetic, on synthetic stores -------------------------------------------------------


def test_count_error_rules():
    assert v.rel_error(110.0, 100.0) == pytest.approx(0.10)
    assert v.rel_error(1.0, 0.0) is None and v.rel_error(None, 1.0) is None
    assert v.count_error(120, 100) == (pytest.approx(0.2), "ok")
    assert v.count_error(130, 100)[1] == "miss"
    assert v.count_error(50, 5)[1] == "one-sided"
    assert v.count_error(0, 20) == (pytest.approx(-1.0), "one-sided")
    assert v.count_error(3, 2) == (None, "trivial")
    assert v.count_error(None, 200) == (None, "n/a")


# per (cc, loss): kernel goodputs of the two repeats, and the simulator's relative error
KERNEL = {
    ("cubic", "0%"): [40e6, 42e6],
    ("cubic", "1%"): [4e6, 6e6],
    ("bbr", "0%"): [45e6, 47e6],
    ("bbr", "1%"): [30e6, 34e6],
}
SIM_ERR = {("cubic", "0%"): 0.02, ("cubic", "1%"): -0.12, ("bbr", "0%"): 0.01, ("bbr", "1%"): 0.08}


def _write_synthetic(out: Path, study, srtt_ms: Optional[dict] = None) -> None:
    """Runs of known goodputs; with ``srtt_ms`` (backend -> the series' smoothed RTTs of flow 0,
    one per sample instant) each run also gets a series."""
    from ccbench import results as R
    from ccbench import sweeps as sw
    from ccbench.results.store import Store

    sc = study.parts[0].scenario()
    for backend in ("sim", "kernel"):
        store = Store(out / backend)
        store.prepare()
        for spec in sw.plan(sc, sw.grid_from_scenario(sc), backend):
            key = (spec.params["flows.0.cc"], spec.params["bottleneck.loss"])
            k = KERNEL[key][spec.repeat]
            # the simulator: each repeat off by the cell's error, so the means are too
            gp = k * (1 + SIM_ERR[key]) if backend == "sim" else k
            retx = {"sim": 120, "kernel": 100}[backend] if key[1] == "1%" else {"sim": 50, "kernel": 5}[backend]
            counters = [
                {
                    "side": "sender",
                    "TcpExtTCPSACKReorder": {"sim": 30, "kernel": 20}[backend],
                    "TcpExtTCPTimeouts": {"sim": 2, "kernel": 3}[backend],
                    "TcpExtTCPLossProbes": 100,
                },
                {"side": "receiver", "TcpExtPAWSEstab": {"sim": None, "kernel": 300}[backend]},
            ]
            series = None
            if srtt_ms is not None:
                rtts = srtt_ms[backend]
                series = {
                    "t_s": [0.1 * (k + 1) for k in range(len(rtts))],
                    "flow_id": [0] * len(rtts),
                    "rtt_ms": list(rtts),
                }
            res = R.build_result(
                spec.scenario,
                backend,
                [
                    {
                        "flow_id": 0,
                        "goodput_bps": gp,
                        "rtt_mean_ms": 25.0 if backend == "sim" else 26.0,
                        "retransmits": retx,
                    }
                ],
                series,
                None,
                0.1,
                counters=counters,
            )
            store.write(
                spec.run_id,
                res.runs_table,
                res.flows_table,
                res.series_table if series is not None else None,
                spec.columns(),
                counters=res.counters_table,
            )


def test_rtt_is_the_series_smoothed_rtt_on_both_backends(tmp_path):
    # The flows' rtt_mean_ms is a different estimator on each backend (every sample on the
    # simulator, srtt every 10 ms on the kernel); the series' srtt is the same one on both, so
    # validate compares that, and falls back to rtt_mean_ms only for runs without a series.
    study = v.load_grid(_grid_file(tmp_path, SMALL))
    with_series, without = tmp_path / "a", tmp_path / "b"
    _write_synthetic(with_series, study, srtt_ms={"sim": [10.0, 12.0, 14.0], "kernel": [13.0, 13.0]})
    _write_synthetic(without, study)
    comp, fallback = v.compare(study, with_series, ["sim", "kernel"]), v.compare(study, without, ["sim", "kernel"])
    for i in range(len(comp.cells)):
        assert comp.side(i, "sim").mean("rtt") == pytest.approx(12.0)
        assert comp.side(i, "kernel").mean("rtt") == pytest.approx(13.0)
        assert (fallback.side(i, "sim").mean("rtt"), fallback.side(i, "kernel").mean("rtt")) == (25.0, 26.0)


def test_errors_medians_and_targets_on_synthetic_stores(tmp_path):
    study = v.load_grid(_grid_file(tmp_path, SMALL))
    out = tmp_path / "v"
    _write_synthetic(out, study)
    comp = v.compare(study, out, ["sim", "kernel"])
    assert comp.reference == "kernel" and comp.compared == ["sim"] and comp.backends == ["sim", "kernel"]
    assert len(comp.cells) == 4
    for i, c in enumerate(comp.cells):
        key = (c.cc, c.params["bottleneck.loss"])
        assert comp.side(i, "kernel").mean("goodput") == pytest.approx(sum(KERNEL[key]) / 2)
        assert comp.goodput_error(i, "sim") == pytest.approx(SIM_ERR[key])
        assert comp.cell_ok(i, "sim") is (abs(SIM_ERR[key]) <= 0.10)
        retx_err, status = comp.retx_error(i, "sim")
        if key[1] == "1%":
            assert (retx_err, status) == (pytest.approx(0.2), "ok")
        else:
            assert status == "one-sided" and retx_err == pytest.approx(9.0)
        if comp.has_counters["sim"]:
            assert comp.counter_error(i, "sim", "TcpExtTCPSACKReorder") == (pytest.approx(0.5), "miss")
            assert comp.counter_error(i, "sim", "TcpExtTCPTimeouts") == (None, "trivial")
            assert comp.counter_error(i, "sim", "TcpExtTCPLossProbes") == (pytest.approx(0.0), "ok")
            assert comp.counter_error(i, "sim", "TcpExtPAWSEstab") == (None, "n/a")
            assert comp.side(i, "kernel").counter("TcpExtPAWSEstab") == 300
            assert comp.counter_misses(i, "sim") == ["TcpExtTCPSACKReorder"]

    s = comp.summary("sim").set_index("cc")
    # cubic: |+2 %|, |-12 %| -> median 7 %, worst 12 %, 1 of 2 within 10 %
    assert s.loc["cubic", "median |err| %"] == pytest.approx(7.0)
    assert s.loc["cubic", "worst |err| %"] == pytest.approx(12.0)
    assert s.loc["cubic", "worst cell"] == "loss: loss=1%"
    assert s.loc["cubic", "within 10 %"] == 1 and not s.loc["cubic", "targets met"]
    # bbr: 1 %, 8 % -> median 4.5 %, all within 10 %: targets met
    assert s.loc["bbr", "median |err| %"] == pytest.approx(4.5)
    assert s.loc["bbr", "worst |err| %"] == pytest.approx(8.0)
    assert s.loc["bbr", "within 10 %"] == 2 and bool(s.loc["bbr", "targets met"])
    # all four: 1, 2, 8, 12 -> median 5 %
    assert s.loc["all", "median |err| %"] == pytest.approx(5.0)
    assert s.loc["all", "compared"] == 4 and s.loc["all", "within 10 %"] == 3
    if comp.has_counters["sim"]:
        assert s.loc["all", "counters missed"] == 4 and s.loc["all", "counters compared"] == 8

    run = v.ValidateRun(study, out, False, ["sim", "kernel"], comparison=comp)
    files = v.write_outputs(run)
    csv = pd.read_csv(files["csv"]).set_index(["cc", "bottleneck.loss"])
    assert csv.loc[("cubic", "1%"), "sim_goodput_err_pct"] == pytest.approx(-12.0)
    assert csv.loc[("cubic", "1%"), "kernel_goodput_mbps"] == pytest.approx(5.0)
    assert csv.loc[("cubic", "1%"), "sim_goodput_mbps"] == pytest.approx(4.4)
    assert csv.loc[("cubic", "1%"), "kernel_goodput_min_mbps"] == pytest.approx(4.0)
    assert not bool(csv.loc[("cubic", "1%"), "sim_goodput_within_10pct"])
    # the simulator is a constant factor off each repeat, so the ratio's interval is tight
    assert (
        csv.loc[("bbr", "0%"), "sim_goodput_err_ci_lo_pct"] < 1.0 < csv.loc[("bbr", "0%"), "sim_goodput_err_ci_hi_pct"]
    )
    assert csv.loc[("bbr", "1%"), "sim_retx_err_pct"] == pytest.approx(20.0)
    md = files["md"].read_text()
    assert "| sim | cubic | 2/2 | 7.0 % | 12.0 % | loss: loss=1% | 1/2 | no |" in md
    assert "| sim | bbr | 2/2 | 4.5 % | 8.0 % |" in md
    # two repeats a side: Fieller's interval (t = 12.7 at 1 degree of freedom) straddles ±10 %
    assert "goodput cannot tell with 2 repeats" in md and "-12.0 %" in md
    assert "random draws: common" in md
    assert files["svg"].read_text().lstrip().startswith("<?xml")


def test_run_validate_reads_a_stored_kernel_store_when_the_kernel_cannot_run(tmp_path, monkeypatch):
    study = v.load_grid(_grid_file(tmp_path, SMALL))
    out = tmp_path / "v"
    _write_synthetic(out, study)
    # run_validate asks validate/run.py's backend_unavailable (the name it imported from plan.py)
    monkeypatch.setattr(
        validate_run,
        "backend_unavailable",
        lambda name, study=None, quick=False: "needs root (test)" if name == "kernel" else None,
    )
    # the synthetic simulator store holds the kernel's seeds: common draws
    run = v.run_validate(study, out, backends="sim,kernel", progress=False, draws="common")
    assert run.executed("sim") == 0 and run.ran == ["sim"]
    assert run.comparison.reference == "kernel"
    assert any("runs already stored" in n for n in run.notes)
    assert "goodput cannot tell with 2 repeats" in run.files["md"].read_text()


# ---- the kernel ---------------------------------------------------------------------------------


def _kernel_missing() -> str | None:
    from ccbench.backends.kernel import env

    if not env.is_root():
        return "needs root (namespaces, TUN)"
    for ok, why in (env.tun_available(), env.netns_available()):
        if not ok:
            return why
    if env.iperf3_path() is None:
        return "iperf3 not installed"
    if env.link_binary() is None:
        return "ccbench-link not built"
    return None


@pytest.mark.kernel
@pytest.mark.skipif(_kernel_missing() is not None, reason=_kernel_missing() or "")
def test_kernel_one_cell_both_backends(tmp_path):
    grid = _grid_file(
        tmp_path,
        """
        [study]
        name = "one"
        seed = "test"
        title = "t"
        question = "q"
        original = "o"
        [[part]]
        name = "loss"
        [part.scenario]
        duration = "5s"
        seed = 1
        [part.scenario.bottleneck]
        rate = "50Mbit"
        rtt = "50ms"
        loss = "1%"
        buffer = "1bdp"
        [[part.scenario.flows]]
        cc = "cubic"
        [part.sweep]
        repeat = 1
        """,
    )
    run = v.run_validate(grid, tmp_path / "v", backends="sim,kernel", progress=False)
    assert run.ran == ["sim", "kernel"] and run.all_ok
    comp = run.comparison
    assert comp.reference == "kernel" and len(comp.cells) == 1
    csv = pd.read_csv(run.files["csv"])
    row = csv.iloc[0]
    for b in ("sim", "kernel"):
        assert row[f"{b}_runs"] == 1
        assert 1 < row[f"{b}_goodput_mbps"] < 48.3
        assert row[f"{b}_rtt_mean_ms"] >= 50
        assert row[f"{b}_retransmits"] > 0
    assert math.isfinite(row["sim_goodput_err_pct"])
    if comp.has_counters["kernel"]:
        assert row["kernel_TcpExtTCPTimeouts"] >= 0
    md = run.files["md"].read_text()
    assert "| sim | cubic | 1/1 |" in md


def test_interval_verdicts():
    assert v.interval_verdict(-0.05, 0.08) == v.AGREES
    assert v.interval_verdict(-0.10, 0.10) == v.AGREES  # the bounds belong to the target
    assert v.interval_verdict(0.11, 0.30) == v.DIFFERS and v.interval_verdict(-0.5, -0.2) == v.DIFFERS
    assert v.interval_verdict(-0.15, 0.02) == v.CANNOT_TELL and v.interval_verdict(0.05, 0.2) == v.CANNOT_TELL
    assert v.interval_verdict(None, None) == v.CANNOT_TELL


def _one_cell(sim: list, kernel: list) -> "v.Comparison":
    cell = v.Cell("p", 0, {}, "cubic", "")
    sides = {(0, "sim"): v.Side(goodput=sim), (0, "kernel"): v.Side(goodput=kernel)}
    return v.Comparison([cell], ["sim", "kernel"], sides, "kernel", {"sim": False, "kernel": False})


def test_cell_verdicts_follow_the_interval_of_the_error_not_its_mean():
    rng = np.random.default_rng(7)
    # 10 repeats a side, 2 % spread: the interval of a 3 % error is about ±2 %: agrees
    k = list(40e6 * (1 + 0.02 * rng.standard_normal(10)))
    c = _one_cell([x * 1.03 for x in k], k)
    lo, hi = c.goodput_error_interval(0, "sim")
    assert -0.10 < lo < 0.03 < hi < 0.10 and c.verdict(0, "sim") == v.AGREES
    assert c.spread(0, "kernel") == pytest.approx(np.std(k, ddof=1) / np.mean(k))
    # the same spread, 25 % apart: differs
    c = _one_cell([x * 0.75 for x in k], k)
    assert c.verdict(0, "sim") == v.DIFFERS
    # a mean error of 5 %, but 25 % spread on 3 repeats: the mean is within 10 %, the verdict cannot tell
    k3 = [30e6, 40e6, 50e6]
    c = _one_cell([x * 1.05 for x in k3[::-1]], k3)
    assert c.cell_ok(0, "sim") and c.verdict(0, "sim") == v.CANNOT_TELL
    assert c.verdict_text(0, "sim") == "cannot tell with 3 repeats"


def test_independent_draws_move_the_compared_backends_seeds_only(tmp_path):
    study = v.load_grid(_grid_file(tmp_path, SMALL))
    common = v.plan_cells(study, ["sim", "kernel"], draws="common")
    indep = v.plan_cells(study, ["sim", "kernel"], draws="independent")
    assert [c.run_ids["kernel"] for c in common] == [c.run_ids["kernel"] for c in indep]
    assert all(set(a.run_ids["sim"]).isdisjoint(b.run_ids["sim"]) for a, b in zip(common, indep))
    sc = study.parts[0].scenario(seed_offset=v.INDEPENDENT_SEED_OFFSET)
    assert sc.seed == study.parts[0].scenario().seed + v.INDEPENDENT_SEED_OFFSET
    with pytest.raises(v.ValidateError, match="--draws"):
        v.plan_cells(study, ["sim"], draws="shared")


def _mixed_cell(sim: list, kernel: list, kernel_timing: Optional[tuple] = None) -> "v.Comparison":
    """One BBR-beside-CUBIC cell whose runs give these BBR shares (total goodput 100 Mbit/s)."""
    cell = v.Cell("coexistence", 0, {}, "bbr+cubic", "")
    k = v.Side(goodput=[100e6] * len(kernel), share=kernel)
    if kernel_timing:
        k.steal, k.late, k.disturbed = kernel_timing
    sides = {(0, "sim"): v.Side(goodput=[100e6] * len(sim), share=sim), (0, "kernel"): k}
    return v.Comparison([cell], ["sim", "kernel"], sides, "kernel", {"sim": False, "kernel": False})


def test_share_verdicts_follow_welchs_interval_of_the_difference():
    rng = np.random.default_rng(3)
    k = list(0.15 + 0.01 * rng.standard_normal(10))
    # 10 repeats a side with 0.01 spread: a difference of 0.02 has an interval of about ±0.01
    c = _mixed_cell([x + 0.02 for x in k[::-1]], k)
    lo, hi = c.share_diff_interval(0, "sim")
    assert -v.SHARE_TARGET < lo < 0.02 < hi < v.SHARE_TARGET
    assert c.share_verdict(0, "sim") == v.AGREES
    # 0.15 apart with the same spread: differs
    c = _mixed_cell([x + 0.15 for x in k], k)
    assert c.share_diff_interval(0, "sim")[0] > v.SHARE_TARGET and c.share_verdict(0, "sim") == v.DIFFERS
    # a mean difference of 0.03, but shares spread over 0.05-0.35 on 3 repeats: cannot tell
    c = _mixed_cell([0.08, 0.23, 0.38], [0.05, 0.20, 0.35])
    assert abs(c.share_diff(0, "sim")) <= v.SHARE_TARGET and c.share_verdict(0, "sim") == v.CANNOT_TELL
    assert c.share_verdict_text(0, "sim") == "cannot tell with 3 repeats"
    s = c.summary("sim").set_index("cc")
    assert s.loc["bbr+cubic", "share compared"] == 1 and s.loc["bbr+cubic", f"share {v.CANNOT_TELL}"] == 1
    head, rows = v.main_rows(c)
    assert "share cannot tell with 3 repeats" in rows[0][head.index("verdict")]
    # a cell of one algorithm has no share verdict
    assert _one_cell([1e6, 2e6], [1e6, 2e6]).share_verdict(0, "sim") is None


def test_faithful_timing_bounds():
    from ccbench.results.timing import FAITHFUL_LATE_P99_US, QUIET_HOST_STEAL_PCT, faithful_timing

    assert faithful_timing(0.2, 71.0) is True
    assert faithful_timing(QUIET_HOST_STEAL_PCT, 71.0) is False  # the steal bound is exclusive
    assert faithful_timing(0.2, FAITHFUL_LATE_P99_US) is True  # the lateness bound is inclusive
    assert faithful_timing(0.2, 1500.0) is False
    assert faithful_timing(None, None) is None and faithful_timing(float("nan"), None) is None
    assert faithful_timing(None, 100.0) is True  # a kernel without a steal field: lateness decides


def test_the_references_timing_is_reported_per_cell_and_over_the_grid():
    c = _mixed_cell([0.15, 0.16], [0.15, 0.16], kernel_timing=([0.1, 14.8], [80.0, 4000.0], 1))
    t = c.timing("kernel")
    assert t["runs"] == 2 and t["disturbed"] == 1
    assert t["steal_max_pct"] == 14.8 and t["late_max_us"] == 4000.0 and t["late_median_us"] == 2040.0
    assert c.timing("sim") is None  # simulator runs record no timing
    head, rows = v.main_rows(c)
    assert rows[0][head.index("kernel timing")] == "1/2 disturbed (steal ≤ 14.8 %, p99 late ≤ 4.0 ms)"
    assert "sim timing" not in head
    assert "kernel timing" not in v.main_rows(c, compact=True)[0]


def test_the_terminal_counter_table_is_left_to_validate_md_when_it_does_not_fit(tmp_path):
    from rich.console import Console

    study = v.load_grid(_grid_file(tmp_path, SMALL))
    out = tmp_path / "v"
    _write_synthetic(out, study)
    run = v.ValidateRun(study, out, False, ["sim", "kernel"], comparison=v.compare(study, out, ["sim", "kernel"]))

    def printed(width: int) -> str:
        console = Console(width=width, record=True, no_color=True)
        v.print_tables(run, console)
        return console.export_text()

    wide = printed(250)
    assert "TCP counters, mean per run" in wide and "TCPSACKReorder" in wide and "30 / 20 ✗" in wide
    narrow = printed(60)
    assert "TCP counters, mean per run" not in narrow and "TCPSACKReorder" not in narrow
    assert "wider than this terminal (60): see validate.md" in narrow
    assert "0 or – everywhere" not in narrow  # the counters exist; they only do not fit
    assert "per algorithm" in narrow  # the other tables still fold into the width


def test_bbr_cwnd_beyond_bdp_is_shown_beside_the_counters_and_in_the_csv():
    c = _mixed_cell([0.45, 0.46], [0.51, 0.50])
    assert not c.has_bbr_beyond_bdp and v.BBR_BEYOND_BDP_HEAD not in v.counter_rows(c)[0]
    c.side(0, "sim").bbr_beyond_bdp = [20.4, 20.6]
    c.side(0, "kernel").bbr_beyond_bdp = [25.5, 38.5]
    head, rows = v.counter_rows(c)
    assert rows[0][head.index(v.BBR_BEYOND_BDP_HEAD)] == "20.5 / 32.0"
    t = c.table().iloc[0]
    assert t["sim_bbr_cwnd_beyond_bdp_pkts"] == pytest.approx(20.5) and t["kernel_bbr_cwnd_beyond_bdp_pkts"] == 32.0


def test_a_cell_whose_kernel_goodput_follows_the_hosts_steal_says_so():
    c = _mixed_cell([0.45] * 6, [0.5] * 6, kernel_timing=([1.0, 3.0, 6.0, 10.0, 15.0, 20.0], [500.0] * 6, 6))
    # goodput falling by 0.1 Mbit/s per % of steal, with a little scatter: significant
    gps = [47.4e6, 47.1e6, 46.9e6, 46.4e6, 46.0e6, 45.4e6]
    c.side(0, "kernel").goodput = gps
    c.side(0, "kernel").steal_goodput = list(zip(c.side(0, "kernel").steal, gps))
    corr = c.goodput_steal_correlation(0, "kernel")
    assert corr.r < -0.95 and corr.significant()
    head, rows = v.main_rows(c)
    assert rows[0][head.index("kernel timing")].endswith(f"; goodput falls with steal (r = {corr.r:+.2f})")
    t = c.table().iloc[0]
    assert t["kernel_goodput_steal_r"] == pytest.approx(corr.r) and t["kernel_goodput_steal_p"] < 0.05
    # no relation: nothing said beside the timing
    flat = [46.9e6, 47.2e6, 46.8e6, 47.1e6, 47.0e6, 46.9e6]
    c.side(0, "kernel").steal_goodput = list(zip(c.side(0, "kernel").steal, flat))
    assert not c.goodput_steal_correlation(0, "kernel").significant()
    assert "with steal" not in v.main_rows(c)[1][0][head.index("kernel timing")]


def test_compare_only_runs_nothing_and_compares_the_stores(tmp_path):
    study = v.load_grid(_grid_file(tmp_path, SMALL))
    out = tmp_path / "v"
    _write_synthetic(out, study)
    before = sorted(p.name for p in (out / "sim" / "runs").iterdir())
    run = validate_run.run_validate(
        study, out, backends="sim,kernel", draws="common", compare_only=True, progress=False
    )
    assert run.ran == [] and sorted(p.name for p in (out / "sim" / "runs").iterdir()) == before
    comp = run.comparison
    assert comp.reference == "kernel" and comp.compared == ["sim"]
    assert [round(comp.goodput_error(i, "sim"), 6) for i in range(4)] == [
        round(SIM_ERR[(c.cc, c.params["bottleneck.loss"])], 6) for c in comp.cells
    ]
    assert any("--compare-only: nothing was run" in n for n in run.notes)
    assert "--compare-only: nothing was run" in run.files["md"].read_text()
    # with independent draws the simulator's runs are other seeds, not stored: counted as not run
    run = validate_run.run_validate(study, out, backends="sim,kernel", compare_only=True, progress=False)
    assert run.comparison.side(0, "sim").missing == 2 and run.comparison.side(0, "kernel").n == 2


def test_compare_only_refuses_an_empty_directory_and_rerun(tmp_path):
    study = v.load_grid(_grid_file(tmp_path, SMALL))
    with pytest.raises(v.ValidateError, match="no stored runs of sim, kernel"):
        validate_run.run_validate(study, tmp_path / "empty", compare_only=True, progress=False)
    with pytest.raises(v.ValidateError, match="--compare-only runs nothing"):
        validate_run.run_validate(study, tmp_path / "x", compare_only=True, rerun=["sim"], progress=False)
