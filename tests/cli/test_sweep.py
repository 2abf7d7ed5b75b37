"""Sweeps: grid expansion, seeds, zip groups, determinism, resume after SIGKILL, failure isolation.

The end-to-end tests run the real ``sim`` backend on short simulations (2-3 s simulated at
10 Mbit/s), so they also check that the sweep works with the real scenario/results/backends.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ccbench.results.store import load
from ccbench.scenario.model import Scenario
from ccbench.sweeps.grid import Grid, SweepError, derive_seed, grid_from_scenario
from ccbench.sweeps.plan import plan
from ccbench.sweeps.runner import run_sweep
from conftest import MINIMAL_TOML, run_ccbench

BASE = {
    "name": "sweep-test",
    "duration": "2s",
    "seed": 11,
    "bottleneck": {"rate": "10Mbit", "rtt": "20ms"},
    "flows": [{"cc": "cubic"}],
}

STUDY = """\
name = "resume-test"
duration = "{duration}"
seed = 5

[bottleneck]
rate = "10Mbit"
rtt = "20ms"

[[flows]]
cc = "cubic"

[sweep]
"bottleneck.loss" = ["0%", "0.5%", "1%", "2%"]
"flows.0.cc" = ["cubic", "reno"]
repeat = {repeat}
"""


def scenario(sweep=None, **extra) -> Scenario:
    d = dict(BASE, **extra)
    if sweep is not None:
        d["sweep"] = sweep
    return Scenario.from_dict(d, source="test.toml")


def cli() -> list[str]:
    """The ccbench command line: this interpreter running ccbench.cli."""
    return [sys.executable, "-m", "ccbench.cli"]


# ------------------------------------------------------------------------------------------
# grid expansion (no simulation)
# ------------------------------------------------------------------------------------------


def test_three_axis_grid_with_repeats_gives_exact_run_set():
    losses, ccs, rtts = ["0%", "1%"], ["cubic", "reno"], ["10ms", "20ms", "40ms"]
    sc = scenario({"bottleneck.loss": losses, "flows.0.cc": ccs, "bottleneck.rtt": rtts, "repeat": 3})
    specs = plan(sc)
    assert len(specs) == 2 * 2 * 3 * 3
    # repeat-major order; within a repeat, the product with the first axis outermost
    expected = [
        (r, dict(zip(("bottleneck.loss", "flows.0.cc", "bottleneck.rtt"), combo)))
        for r in range(3)
        for combo in itertools.product(losses, ccs, rtts)
    ]
    assert [(s.repeat, s.params) for s in specs] == expected
    assert [s.index for s in specs] == list(range(36))
    for s in specs:
        assert s.seed == 11 + s.repeat == s.scenario.seed
        assert s.scenario.flows[0].cc == s.params["flows.0.cc"]
        assert s.scenario.bottleneck.rtt_s == pytest.approx(int(s.params["bottleneck.rtt"][:-2]) / 1e3)
        assert s.scenario.bottleneck.loss.mean_loss == pytest.approx(float(s.params["bottleneck.loss"][:-1]) / 100)
        assert s.columns() == {**s.params, "repeat": s.repeat}
    assert len({s.run_id for s in specs}) == 36
    # the same sweep expands to the same runs (ids, seeds, order)
    assert [(s.run_id, s.seed) for s in plan(sc)] == [(s.run_id, s.seed) for s in specs]
    # changing the base seed changes every run
    assert not {s.run_id for s in plan(scenario(sc.sweep, seed=12))} & {s.run_id for s in specs[:12]}


def test_zip_groups_vary_together():
    sc = scenario(
        {
            "bottleneck.rtt": ["10ms", "20ms", "40ms"],
            "flows.0.cc": ["cubic", "reno"],
            "bottleneck.jitter": ["1ms", "2ms", "4ms"],
            "zip": [["bottleneck.rtt", "bottleneck.jitter"]],
        }
    )
    g = grid_from_scenario(sc)
    assert [a.keys for a in g.axes()] == [("bottleneck.rtt", "bottleneck.jitter"), ("flows.0.cc",)]
    cells = g.cells()
    assert len(cells) == 6 and len(g) == 6
    assert {(c["bottleneck.rtt"], c["bottleneck.jitter"]) for c in cells} == {
        ("10ms", "1ms"),
        ("20ms", "2ms"),
        ("40ms", "4ms"),
    }
    with pytest.raises(SweepError, match=r"same length.*bottleneck.rtt has 3.*bottleneck.jitter has 2"):
        grid_from_scenario(
            scenario(
                {
                    "bottleneck.rtt": ["10ms", "20ms", "40ms"],
                    "bottleneck.jitter": ["1ms", "2ms"],
                    "zip": [["bottleneck.rtt", "bottleneck.jitter"]],
                }
            )
        )
    # --grid replacing one zipped axis with a different length is refused too
    with pytest.raises(SweepError, match="same length"):
        g.with_options(["bottleneck.jitter=0ms,5ms"])
    # --zip on the command line
    g2 = Grid().with_options(
        ["bottleneck.rtt=10ms,20ms", "bottleneck.jitter=1ms,2ms"], ["bottleneck.rtt,bottleneck.jitter"]
    )
    assert g2.cells() == [
        {"bottleneck.rtt": "10ms", "bottleneck.jitter": "1ms"},
        {"bottleneck.rtt": "20ms", "bottleneck.jitter": "2ms"},
    ]


def test_nested_tables_and_cli_options():
    # unquoted dotted keys in TOML give nested tables: flattened to the same key paths
    sc = scenario({"bottleneck": {"loss": ["0%", "1%"]}, "flows": {"0": {"cc": ["cubic", "reno"]}}, "repeat": 2})
    g = grid_from_scenario(sc)
    assert g.keys == ["bottleneck.loss", "flows.0.cc"] and g.repeat == 2
    # --grid replaces an axis in place, adds new ones at the end; values parse like TOML
    g2 = g.with_options(["flows.0.cc=reno", "flows.0.count=1,2", 'bottleneck.rtt=["10ms", "30ms"]'], repeat=4)
    assert g2.keys == ["bottleneck.loss", "flows.0.cc", "flows.0.count", "bottleneck.rtt"]
    assert g2.values["flows.0.cc"] == ["reno"]
    assert g2.values["flows.0.count"] == [1, 2]
    assert g2.values["bottleneck.rtt"] == ["10ms", "30ms"]
    assert len(g2) == 2 * 1 * 2 * 2 * 4
    specs = plan(sc, g2)
    assert {s.scenario.n_flows for s in specs} == {1, 2}
    # an axis of integers is an integer column; an axis of strings a string column
    assert {s.columns()["flows.0.count"] for s in specs} == {1, 2}
    assert {type(s.columns()["bottleneck.rtt"]) for s in specs} == {str}
    # no [sweep] and no --grid: one cell, repeated
    assert [s.seed for s in plan(scenario(), Grid(repeat=3))] == [11, 12, 13]
    assert derive_seed(11, 2) == 13


@pytest.mark.parametrize(
    "sweep, message",
    [
        ({"bottleneck.loss": "1%"}, r"sweep.bottleneck.loss: '1%' is not a list"),
        ({"bottleneck.loss": []}, r"sweep.bottleneck.loss: the list is empty"),
        ({"bottleneck.loss": ["0%"], "repeat": 0}, r"sweep.repeat: 0 is not a positive integer"),
        (
            {"bottleneck.loss": ["0%"], "zip": [["bottleneck.loss", "bottleneck.rtt"]]},
            r"sweep.zip: 'bottleneck.rtt' is not a swept key",
        ),
        ({"bottleneck.loss": ["0%"], "zip": "bottleneck.loss"}, r"sweep.zip: .* is not valid"),
    ],
)
def test_bad_sweep_tables_are_rejected_with_the_key(sweep, message):
    with pytest.raises(SweepError, match=message):
        grid_from_scenario(scenario(sweep))


def test_invalid_cells_and_duplicates_are_rejected_before_running():
    with pytest.raises(SweepError, match=r"sweep cell bottleneck.loss=120%: .*bottleneck.loss"):
        plan(scenario({"bottleneck.loss": ["1%", "120%"]}))
    with pytest.raises(SweepError, match=r"bottleneck.los\b|bottleneck.los:"):
        plan(scenario({"bottleneck.los": ["1%"]}))
    with pytest.raises(SweepError, match="describe the same run"):
        plan(scenario({"bottleneck.loss": ["1%", "1.0%"]}))
    with pytest.raises(SweepError, match=r"--grid 'bottleneck.loss': expected key=v1,v2"):
        Grid().with_options(["bottleneck.loss"])


# ------------------------------------------------------------------------------------------
# end to end on the sim backend
# ------------------------------------------------------------------------------------------


def _comparable(df):
    cols = [c for c in df.columns if c != "wall_time_s"]
    return df[cols].sort_values([c for c in ("run_id", "flow_id", "t_s") if c in cols]).reset_index(drop=True)


def test_same_sweep_twice_gives_identical_tables(tmp_path):
    sc = scenario({"flows.0.cc": ["cubic", "reno"], "bottleneck.loss": ["0%", "1%"], "repeat": 2})
    a = run_sweep(sc, tmp_path / "a", workers=2, progress=False)
    b = run_sweep(sc, tmp_path / "b", workers=1, progress=False)
    assert (a.ok, a.failed, b.ok, b.failed) == (8, 0, 8, 0)
    ra, rb = load(tmp_path / "a"), load(tmp_path / "b")
    for table in ("runs", "flows", "series", "link_series"):
        x, y = _comparable(getattr(ra, table)), _comparable(getattr(rb, table))
        assert len(x) > 0
        assert x.equals(y), table
    assert len(ra.flows) == 8 and set(ra.flows["repeat"]) == {0, 1}
    assert set(ra.flows["bottleneck.loss"]) == {"0%", "1%"}
    assert sorted(ra.runs["seed"].unique().tolist()) == [11, 12]
    # the runs table agrees with the plan: every planned run stored once, with its columns
    specs = {s.run_id: s for s in plan(sc)}
    assert set(ra.runs["run_id"]) == set(specs)
    for row in ra.runs.itertuples():
        s = specs[row.run_id]
        assert (row.repeat, row.seed) == (s.repeat, s.seed)
    # running it again into the same directory runs nothing
    again = run_sweep(sc, tmp_path / "a", progress=False)
    assert (again.cached, again.executed) == (8, 0)


def _refused_cells():
    """Values that the scenario accepts but the sim backend's check() refuses: an algorithm only
    ns-3 runs (the scenario accepts every name some backend runs)."""
    from ccbench.backends import get_backend
    from ccbench.scenario.model import known_algorithms

    sim = get_backend("sim")
    for cc in known_algorithms():
        try:
            sim.check(scenario(flows=[{"cc": cc}]))
        except ValueError:
            return "flows.0.cc", ["cubic", cc]
    raise AssertionError("the sim backend runs every algorithm the scenario accepts: no cell to fail")


def test_failure_isolation(tmp_path):
    key, values = _refused_cells()
    sc = scenario({key: values, "bottleneck.loss": ["0%", "1%"]})
    s = run_sweep(sc, tmp_path / "d", workers=2, progress=False)
    assert (s.ok, s.failed) == (2, 2)
    res = load(tmp_path / "d")
    runs = res.runs.set_index(key)
    assert set(runs.loc[values[0], "status"]) == {"ok"}
    bad = runs.loc[values[1]]
    assert set(bad["status"]) == {"failed"}
    assert all(key in e or values[1] in e for e in bad["error"])
    assert set(res.flows[key]) == {values[0]}  # failed runs have no flow rows
    # failed runs are not retried unless asked, then they fail again (same message)
    again = run_sweep(sc, tmp_path / "d", progress=False)
    assert (again.cached, again.stored_failed, again.executed) == (2, 2, 0)
    retried = run_sweep(sc, tmp_path / "d", retry_failed=True, progress=False)
    assert (retried.cached, retried.failed) == (2, 2)
    assert len(load(tmp_path / "d").runs) == 4


KILLER = """\
# Runs the ccbench CLI, but SIGKILLs its own process group (itself and the worker processes)
# in the middle of writing the runs file of run number KILL_AFTER + 1: a temporary file with
# half a Parquet file in it is on disk, the rename never happens.
import os, signal, sys
from ccbench.results import store

n = int(os.environ["KILL_AFTER"])
real = store._write_table
seen = []

def write_then_die(tab, path):
    if path.parent.name == "runs":
        seen.append(path)
        if len(seen) > n:
            path.write_bytes(b"PAR1 half a file")
            os.killpg(0, signal.SIGKILL)
    real(tab, path)

store._write_table = write_then_die
from ccbench.cli import app
sys.argv = ["ccbench", *sys.argv[1:]]
app()
"""


def test_resume_after_sigkill(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(STUDY.format(duration="3s", repeat=3))  # 24 runs
    out = tmp_path / "out"
    args = ["sweep", str(study), "--out", str(out), "--workers", "2", "--quiet"]
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    proc = subprocess.run(
        [sys.executable, str(killer), *args],
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
        env=dict(os.environ, KILL_AFTER="5"),
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    before = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.parquet")}
    assert len(before) == 5
    assert len([p for p in (out / "runs").iterdir() if p.name.startswith(".tmp-")]) == 1

    r = subprocess.run([*cli(), *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    specs = plan(Scenario.from_dict(_toml(study), source=str(study)))
    assert len(specs) == 24
    files = {t: sorted((out / t).iterdir()) for t in ("runs", "flows", "series", "link_series")}
    for t, paths in files.items():
        assert [p.name for p in paths if not p.name.endswith(".parquet")] == [], f"leftovers in {t}"
        assert {p.stem for p in paths} == {s.run_id for s in specs}, t
        for p in paths:
            pq.read_table(p)  # every file is complete
    res = load(out)
    assert len(res.runs) == 24 and res.runs["run_id"].is_unique
    assert set(res.runs["status"]) == {"ok"}
    # the store records the command that made it (for the report's header)
    assert res.meta["command"][:2] == ["ccbench", "sweep"] and "--workers" in res.meta["command"]
    assert len(res.flows) == 24 and not res.flows.duplicated(["run_id", "flow_id"]).any()
    assert not res.series.duplicated(["run_id", "flow_id", "t_s"]).any()
    # the runs stored before the kill were kept, not run again
    assert all((out / "runs" / name).stat().st_mtime_ns == t for name, t in before.items())
    # and the result is the same as an uninterrupted sweep
    clean = run_sweep(
        Scenario.from_dict(_toml(study), source=str(study)), tmp_path / "clean", workers=2, progress=False
    )
    assert clean.ok == 24
    assert _comparable(load(tmp_path / "clean").flows).equals(_comparable(res.flows))


def _toml(path: Path) -> dict:
    import tomllib

    return tomllib.loads(path.read_text())


def test_kernel_backend_runs_one_at_a_time(tmp_path):
    """--backend kernel forces one local worker and says so; refused runs are failed, not fatal.
    (a ping interval below ping's 2 ms minimum is refused by the kernel backend's check, so no
    namespace is ever created here.)"""
    import io

    from rich.console import Console

    buf = io.StringIO()
    sc = scenario(
        {"bottleneck.loss": ["0%", "1%"]}, bottleneck={"rate": "10Mbit", "rtt": "20ms"}, probe={"ping": "1ms"}
    )
    s = run_sweep(sc, tmp_path / "k", backend="kernel", workers=4, progress=True, console=Console(file=buf, width=200))
    out = buf.getvalue()
    assert "kernel backend: one run at a time per machine" in out and "--workers 4 ignored" in out
    assert s.executor == "1 local process" and (s.ok, s.failed) == (0, 2)
    assert all("probe.ping" in e or "backend" in e for e in load(tmp_path / "k").runs["error"])


def _hold_lock(path, log, i):
    from ccbench.sweeps import lock

    lock.KERNEL_LOCK_PATH = path
    with lock.machine_lock("kernel"):
        with open(log, "a") as f:
            f.write(f"start {i} {time.monotonic()}\n")
        time.sleep(0.2)
        with open(log, "a") as f:
            f.write(f"end {i} {time.monotonic()}\n")


def test_kernel_lock_serialises_processes(tmp_path):
    import multiprocessing as mp

    log = tmp_path / "log"
    procs = [mp.get_context("fork").Process(target=_hold_lock, args=(tmp_path / "lock", log, i)) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(10)
    events = [line.split()[0] for line in log.read_text().splitlines()]
    assert events == ["start", "end"] * 3  # never two holders at once


# ------------------------------------------------------------------------------------------
# typed swept columns, ccbench.json, identical repeats, ccbench.sweep
# ------------------------------------------------------------------------------------------


def test_axis_types_are_decided_once_per_axis():
    from ccbench.sweeps.grid import axis_type

    assert axis_type([1, 2, 3]) == "int64"
    assert axis_type([1, 2.5]) == "float64"  # one float makes the whole axis float
    assert axis_type([True, False]) == "bool"
    assert axis_type(["1%", "2%"]) == "string"
    assert axis_type([1, "2%"]) == "string" and axis_type([True, 1]) == "string"
    sc = scenario(
        {
            "bottleneck.rtt": ["10ms", "20ms"],
            "flows.0.count": [1, 2],
            "flows.0.pacing": [False, True],
            "sample_interval": [0.1, 1],
        }
    )
    cols = [s.columns() for s in plan(sc)]
    assert {type(c["flows.0.count"]) for c in cols} == {int}
    assert {type(c["flows.0.pacing"]) for c in cols} == {bool}
    # 1 (an int in TOML) is stored as 1.0 in a float axis: one type for every run file
    assert {type(c["sample_interval"]) for c in cols} == {float}
    assert {c["sample_interval"] for c in cols} == {0.1, 1.0}


def test_sweep_store_has_typed_columns_meta_and_link_series(tmp_path):
    import ccbench

    sc = scenario({"flows.0.count": [1, 2], "bottleneck.loss": ["0%", "1%"], "repeat": 2}, probe={"ping": "50ms"})
    res = ccbench.sweep(
        sc, tmp_path / "s", workers=2, progress=False, command=["ccbench", "sweep", "x.toml"], study="demo"
    )
    assert res.summary.ok == 8 and len(res.runs) == 8
    for table in (res.runs, res.flows, res.series, res.link_series):
        assert table["flows.0.count"].dtype == "Int64" and set(table["flows.0.count"]) == {1, 2}
        assert set(table["bottleneck.loss"]) == {"0%", "1%"} and set(table["repeat"]) == {0, 1}
    # the link series: one row per sample instant per run, the probe seen in every interval
    per_run = res.link_series.groupby("run_id").size()
    assert len(per_run) == 8 and set(per_run) == {20}  # 2 s / 100 ms
    assert res.link_series["probe_rtt_ms"].notna().all()
    m = res.meta
    assert m["command"] == ["ccbench", "sweep", "x.toml"] and m["study"] == "demo"
    assert m["grid"] == {"flows.0.count": [1, 2], "bottleneck.loss": ["0%", "1%"]} and m["repeat"] == 2
    assert m["backend"] == "sim" and "[bottleneck]" in m["scenario_toml"]
    assert res.swept == ["flows.0.count", "bottleneck.loss"]
    assert len(res.cell_goodput()) == 4


def test_identical_repeats_are_reported(tmp_path):
    """Without random loss, jitter or start jitter every repeat is the same run: the summary
    names those cells; with start_jitter the repeats differ and nothing is reported."""
    import io

    from rich.console import Console

    same = scenario({"flows.0.cc": ["cubic", "reno"], "repeat": 2}, start_jitter="0s")
    buf = io.StringIO()
    s = run_sweep(same, tmp_path / "same", workers=2, progress=True, console=Console(file=buf, width=200))
    assert sorted(c["flows.0.cc"] for c in s.identical_cells) == ["cubic", "reno"]
    assert "same goodput in every repeat" in buf.getvalue()
    differ = scenario({"flows.0.cc": ["cubic", "reno"], "repeat": 2}, start_jitter="20ms")
    assert run_sweep(differ, tmp_path / "differ", workers=2, progress=False).identical_cells == []


# ------------------------------------------------------------------------------------------
# any exception in one run is a stored failed run; run timeout; one sweep per store
# ------------------------------------------------------------------------------------------


def _patch_sim_run(monkeypatch, special):
    """Make the sim backend call ``special(scenario)`` for cells with cc 'reno' (the workers are
    forked after this, so they inherit it); the other cells run normally."""
    from ccbench.backends import sim as sim_backend

    real = sim_backend.run

    def run(sc):
        if sc.flows[0].cc == "reno":
            return special(sc)
        return real(sc)

    monkeypatch.setattr(sim_backend, "run", run)


class _Odd(Exception):
    def __str__(self):
        raise RuntimeError("even the message is broken")


@pytest.mark.parametrize("failure", ["raises", "raises-and-failed-row-raises", "odd-exception", "returns-garbage"])
def test_any_exception_in_one_run_is_a_stored_failed_run(tmp_path, monkeypatch, failure):
    """Before: an exception while building the failed run's row (e.g. OverflowError for
    buffer = 1e20B) escaped, nothing was stored, and every re-run crashed at the same cell."""
    from ccbench import results

    def special(sc):
        if failure == "odd-exception":
            raise _Odd()
        if failure == "returns-garbage":
            return object()
        raise ArithmeticError("boom in the backend")

    _patch_sim_run(monkeypatch, special)
    if failure == "raises-and-failed-row-raises":
        real_failed = results.failed_result

        def failed_result(sc, *a, **kw):
            if sc.flows[0].cc == "reno":
                raise OverflowError("int too big to convert")
            return real_failed(sc, *a, **kw)

        monkeypatch.setattr(results, "failed_result", failed_result)
    sc = scenario({"flows.0.cc": ["cubic", "reno", "bbr"]})
    s = run_sweep(sc, tmp_path / "d", workers=2, progress=False)
    assert (s.ok, s.failed) == (2, 1)
    runs = load(tmp_path / "d").runs.set_index("flows.0.cc")
    assert set(runs.loc[["cubic", "bbr"], "status"]) == {"ok"}
    bad = runs.loc["reno"]
    assert bad["status"] == "failed"
    expected = {
        "raises": "ArithmeticError: boom in the backend",
        "raises-and-failed-row-raises": "ArithmeticError: boom in the backend",
        "odd-exception": "_Odd",
        "returns-garbage": "AttributeError",
    }[failure]
    assert bad["error"].startswith(expected), bad["error"]
    assert bad["run_id"] == plan(sc)[1].run_id and bad["seed"] == 11
    # stored: a plain re-run skips it; --retry-failed runs it again (now fixed)
    assert run_sweep(sc, tmp_path / "d", progress=False).stored_failed == 1
    monkeypatch.undo()
    retried = run_sweep(sc, tmp_path / "d", retry_failed=True, workers=1, progress=False)
    assert (retried.cached, retried.ok, retried.failed) == (2, 1, 0)
    assert set(load(tmp_path / "d").runs["status"]) == {"ok"}


def test_failed_payload_never_raises():
    """The failed row keeps what fits its column and leaves the rest null."""
    from ccbench import results
    from ccbench.sweeps.execute import failed_payload

    class Hostile:
        name = "h"
        seed = 2**70  # does not fit int64

        def __getattr__(self, key):
            raise OverflowError(key)

    p = failed_payload(Hostile(), "sim", "the message", 1.5, run_id="abc")
    row = p["runs"].to_pylist()[0]
    assert p["runs"].schema.equals(results.RUNS_SCHEMA)
    assert (row["run_id"], row["status"], row["error"], row["name"], row["seed"]) == (
        "abc",
        "failed",
        "the message",
        "h",
        None,
    )


def test_store_error_for_one_run_is_stored_as_failed(tmp_path, monkeypatch):
    """A table the store cannot write (not a file-system error) fails that run only."""
    from ccbench.results import store as store_mod

    real = store_mod.Store._write

    def write(self, run_id, runs, flows, *a, **kw):
        if flows is not None and "reno" in set(_cc_of(flows)):
            raise TypeError("cannot convert this table")
        return real(self, run_id, runs, flows, *a, **kw)

    monkeypatch.setattr(store_mod.Store, "_write", write)
    s = run_sweep(scenario({"flows.0.cc": ["cubic", "reno"]}), tmp_path / "d", workers=1, progress=False)
    assert (s.ok, s.failed) == (1, 1)
    runs = load(tmp_path / "d").runs.set_index("flows.0.cc")
    assert runs.loc["reno", "error"] == "storing the run's tables failed: TypeError: cannot convert this table"


def _cc_of(table):
    return table.column("cc").to_pylist() if hasattr(table, "column") else list(table["cc"])


def test_run_timeout_stores_a_failed_run_and_the_sweep_goes_on(tmp_path):
    """A simulation that would take minutes is stopped at the timeout (the simulator polls for
    the worker's SIGALRM), stored as failed naming the timeout; the other runs complete."""
    sc = scenario({"duration": ["2s", "600s"]}, bottleneck={"rate": "1Gbit", "rtt": "20ms"})
    t0 = time.monotonic()
    s = run_sweep(sc, tmp_path / "d", workers=2, progress=False, run_timeout="1.5s")
    assert time.monotonic() - t0 < 20
    assert (s.ok, s.failed) == (1, 1)
    runs = load(tmp_path / "d").runs.set_index("duration")
    assert runs.loc["2s", "status"] == "ok"
    assert runs.loc["600s", "error"] == ("the run exceeded the run timeout of 1.5 s (--run-timeout) and was stopped")


def test_run_timeout_kills_a_worker_that_does_not_stop(tmp_path, monkeypatch):
    """A run stuck where the timeout cannot reach it: its worker is killed and replaced, the run
    stored as failed, the runs that were in flight with it run again and complete."""
    from ccbench.sweeps import runner as sw

    def stuck(sc):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGTERM})
        time.sleep(120)

    _patch_sim_run(monkeypatch, stuck)
    monkeypatch.setattr(sw, "RUN_TIMEOUT_GRACE_S", 1.0)
    sc = scenario({"flows.0.cc": ["cubic", "reno", "bbr", "vegas"]})
    t0 = time.monotonic()
    s = run_sweep(sc, tmp_path / "d", workers=2, progress=False, run_timeout=1)
    assert time.monotonic() - t0 < 30
    assert (s.ok, s.failed) == (3, 1)
    runs = load(tmp_path / "d").runs.set_index("flows.0.cc")
    assert runs.loc["reno", "error"].startswith("the run exceeded the run timeout of 1 s")
    assert "was killed" in runs.loc["reno", "error"]


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("600", 600.0),
        ("90s", 90.0),
        ("30min", 1800.0),
        ("2h", 7200.0),
        ("none", None),
        ("0", None),
        (1, 1.0),
        ("1.5min", 90.0),
        ("500ms", 0.5),
        ("off", None),
    ],
)
def test_parse_run_timeout(text, seconds):
    from ccbench.sweeps.execute import parse_run_timeout

    assert parse_run_timeout(text) == seconds


@pytest.mark.parametrize("text", ["soon", "1m", "-5s", "2 hours"])
def test_run_timeout_uses_the_scenario_time_grammar(text):
    from ccbench.sweeps.execute import parse_run_timeout
    from ccbench.sweeps.grid import SweepError
    from ccbench.units import UnitError, parse_time_ns

    with pytest.raises(UnitError):
        parse_time_ns(text)
    with pytest.raises(SweepError, match=r"^--run-timeout .*: expected a duration"):
        parse_run_timeout(text)


def test_bad_run_timeout_is_one_line(tmp_path):
    study = tmp_path / "s.toml"
    study.write_text(STUDY.format(duration="1s", repeat=1))
    r = subprocess.run(
        [*cli(), "sweep", str(study), "--out", str(tmp_path / "o"), "--run-timeout", "soon"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert "--run-timeout 'soon': expected a duration" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


def test_second_sweep_into_one_store_waits_and_runs_nothing_twice(tmp_path):
    """Before: two sweeps into one store both ran every cell."""
    study = tmp_path / "study.toml"
    study.write_text(STUDY.format(duration="3s", repeat=1))  # 8 runs
    out = tmp_path / "out"
    first = subprocess.Popen(
        [*cli(), "sweep", str(study), "--out", str(out), "--workers", "1", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lock = out / ".sweep.lock"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (lock.exists() and lock.read_text().strip()):
            time.sleep(0.02)
        assert lock.read_text().strip() == str(first.pid)
        import io

        from rich.console import Console

        buf = io.StringIO()
        second = run_sweep(tmp_path / "study.toml", out, workers=2, progress=True, console=Console(file=buf, width=300))
        assert first.wait(60) == 0, first.stderr.read()
    finally:
        if first.poll() is None:
            first.kill()
    assert f"another sweep (pid {first.pid}" in buf.getvalue()
    assert second.executed == 0 and second.cached == 8
    res = load(out)
    assert len(res.runs) == 8 and res.runs["run_id"].is_unique


@pytest.mark.parametrize("sig,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_sweep_exit_status_on_signals(tmp_path, sig, status):
    study = tmp_path / "study.toml"
    study.write_text(STUDY.format(duration="3s", repeat=20))
    out = tmp_path / "out"
    p = subprocess.Popen(
        [
            sys.executable,
            "-X",
            "faulthandler",
            *cli()[1:],
            "sweep",
            str(study),
            "--out",
            str(out),
            "--workers",
            "1",
            "--quiet",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(list((out / "runs").glob("*.parquet"))) < 2:
        time.sleep(0.05)
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:  # hung: show where (faulthandler prints every thread)
        p.send_signal(signal.SIGABRT)
        _, err = p.communicate()
        raise AssertionError(err[-10000:]) from None
    assert p.returncode == status, err
    assert "Traceback" not in err


# ---- sweep --set on a swept key -------------------------------------------------------------

SWEEP_TOML = (
    MINIMAL_TOML
    + """
[sweep]
"bottleneck.loss" = ["0%", "1%", "2%"]
repeat = 2
"""
)


def _plan_column(stdout, column):
    """Values of one column of the --dry-run plan table (rich box drawing, one run per row)."""
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in stdout.splitlines() if line.startswith("│")]
    header = [line for line in stdout.splitlines() if line.startswith("┃")][0]
    names = [c.strip() for c in header.split("┃")[1:-1]]
    return [r[names.index(column)] for r in rows]


def test_sweep_set_on_a_swept_key_pins_the_axis(write_toml):
    path = write_toml(SWEEP_TOML)
    p = run_ccbench("sweep", path, "--dry-run")
    assert p.returncode == 0, p.stderr
    assert sorted(set(_plan_column(p.stdout, "bottleneck.loss"))) == ["0%", "1%", "2%"]
    p = run_ccbench("sweep", path, "--dry-run", "--set", "bottleneck.loss=5%", "--set", "flows.0.cc=reno")
    assert p.returncode == 0, p.stderr
    # pinned: the one value, each repeat once; the other --set is an ordinary override
    assert _plan_column(p.stdout, "bottleneck.loss") == ["5%", "5%"]
    assert "pinned" in p.stderr and "bottleneck.loss" in p.stderr and "flows.0.cc" not in p.stderr
    # a key swept only by --grid is pinned too
    p = run_ccbench("sweep", path, "--dry-run", "--grid", "flows.0.cc=reno,cubic", "--set", "flows.0.cc=reno")
    assert p.returncode == 0, p.stderr
    assert _plan_column(p.stdout, "flows.0.cc") == ["reno"] * 6


def test_sweep_set_on_a_zipped_key_says_how_to_pin_the_group(write_toml):
    path = write_toml(
        MINIMAL_TOML
        + """
[sweep]
"bottleneck.rtt" = ["10ms", "50ms"]
"bottleneck.jitter" = ["1ms", "5ms"]
zip = [["bottleneck.rtt", "bottleneck.jitter"]]
"""
    )
    p = run_ccbench("sweep", path, "--dry-run", "--set", "bottleneck.rtt=10ms")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "zipped" in p.stderr and "--grid bottleneck.jitter" in p.stderr
