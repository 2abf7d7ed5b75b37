"""The sweep store (ccbench.results.store): atomic per-run Parquet files, orphans and temp files,
load, DuckDB queries, and a store that cannot be written or read whole: one-line errors before
any run (read-only, another user's, full, an unwritable parent), never a traceback; `ccbench
query` skips a truncated file and takes glob characters in the path literally."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import ccbench
from ccbench.results import store as store_mod
from ccbench.results.run_result import build_result, failed_result
from ccbench.results.store import SkippedFileWarning, Store, StoreError, check_writable, load, query
from ccbench.scenario.model import Scenario
from ccbench.sweeps.runner import run_sweep
from conftest import ROOT

BASE = {
    "name": "store-test",
    "duration": "2s",
    "seed": 3,
    "bottleneck": {"rate": "10Mbit", "rtt": "20ms"},
    "flows": [{"cc": "cubic", "count": 2}],
}


def scenario(**over) -> Scenario:
    return Scenario.from_dict(dict(BASE, **over), source="store-test.toml")


def fake_result(sc: Scenario, goodput: float = 1e6):
    """A RunResult built with the real result schema (no simulation)."""
    rows = [{"flow_id": i, "goodput_bps": goodput * (i + 1)} for i in range(2)]
    series = {"t_s": [0.1, 0.2], "flow_id": [0, 0], "cwnd_pkts": [10, 20]}
    link = {"t_s": [0.1, 0.2], "queue_bytes": [0, 3000], "probe_rtt_ms": [None, 22.4]}
    return build_result(sc, "sim", rows, series, {}, 0.01, link_series=link)


def write(st: Store, res, **cols):
    return st.write(
        res.run_id, res.runs_table, res.flows_table, res.series_table, cols, link_series=res.link_series_table
    )


def test_write_layout_and_columns(tmp_path):
    st = Store(tmp_path)
    st.prepare()
    res = fake_result(scenario())
    cols = {"bottleneck.loss": "1%", "seed": 7, "flows.0.pacing": True, "bottleneck.rate_x": 2.5, "repeat": 2}
    assert write(st, res, **cols) == "ok"
    for t in ("runs", "flows", "series", "link_series"):
        assert [p.name for p in (tmp_path / t).iterdir()] == [f"{res.run_id}.parquet"]
    r = load(tmp_path)
    assert list(r.runs["bottleneck.loss"]) == ["1%"] and list(r.flows["bottleneck.loss"]) == ["1%"] * 2
    assert list(r.flows["repeat"]) == [2, 2] and r.flows["repeat"].dtype == "Int64"
    # a swept key that is a standard column keeps the standard column and gets a prefix
    assert list(r.runs["sweep.seed"]) == [7] and list(r.runs["seed"]) == [3]
    # swept columns keep their type (int, bool, float, string) in every table
    for table in (r.runs, r.flows, r.series, r.link_series):
        assert table["sweep.seed"].dtype == "Int64" and table["flows.0.pacing"].dtype == "boolean"
        assert table["bottleneck.rate_x"].dtype == "float64" and (table["repeat"] == 2).all()
        assert (table["bottleneck.loss"] == "1%").all()
    assert len(r.series) == 2 and len(r.link_series) == 2
    assert r.link_series["queue_bytes"].tolist() == [0, 3000]
    assert st.statuses() == {res.run_id: "ok"}


def test_killed_writer_leaves_no_visible_partial_run(tmp_path, monkeypatch):
    st = Store(tmp_path)
    st.prepare()
    good = fake_result(scenario())
    write(st, good)
    bad = fake_result(scenario(seed=4))
    real = store_mod._write_table

    def die_on_runs(tab, path):
        if path.parent.name == "runs":
            raise KeyboardInterrupt  # the process is stopped between flows and runs
        real(tab, path)

    monkeypatch.setattr(store_mod, "_write_table", die_on_runs)
    with pytest.raises(KeyboardInterrupt):
        write(st, bad)
    monkeypatch.setattr(store_mod, "_write_table", real)
    # flows/series of the half-stored run exist, but without its runs file they are invisible
    assert (tmp_path / "flows" / f"{bad.run_id}.parquet").exists()
    assert not (tmp_path / "runs" / f"{bad.run_id}.parquet").exists()
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".tmp-")]
    assert set(st.statuses()) == {good.run_id}
    r = load(tmp_path)
    assert set(r.flows["run_id"]) == set(r.series["run_id"]) == {good.run_id}
    assert query(tmp_path, "SELECT count(*) n FROM flows")["n"][0] == 2
    assert query(tmp_path, "SELECT count(DISTINCT run_id) n FROM series")["n"][0] == 1
    # temp files of dead writers are removed, those of live processes kept
    dead = tmp_path / "flows" / ".tmp-999999999-abcd1234-x.parquet"
    live = tmp_path / "flows" / f".tmp-{os.getppid()}-abcd1234-y.parquet"
    dead.write_bytes(b"PAR1")
    live.write_bytes(b"PAR1")
    assert Store(tmp_path).remove_stale_tmp() == 1
    assert not dead.exists() and live.exists()
    live.unlink()


def test_failed_run_replaces_leftovers(tmp_path):
    st = Store(tmp_path)
    st.prepare()
    sc = scenario()
    write(st, fake_result(sc))
    fail = failed_result(sc, "sim", "boom: it broke", 0.5)
    assert write(st, fail, repeat=0) == "failed" and st.last_error == "boom: it broke"
    assert not (tmp_path / "flows" / f"{fail.run_id}.parquet").exists()
    assert not (tmp_path / "series" / f"{fail.run_id}.parquet").exists()
    assert not (tmp_path / "link_series" / f"{fail.run_id}.parquet").exists()
    r = load(tmp_path)
    assert list(r.runs["status"]) == ["failed"] and len(r.flows) == 0
    assert list(r.failed_runs["error"]) == ["boom: it broke"]
    assert st.statuses() == {fail.run_id: "failed"}
    # an unreadable runs file (e.g. after a power loss) counts as not stored
    (tmp_path / "runs" / "0000000000000000.parquet").write_bytes(b"garbage")
    assert set(st.statuses()) == {fail.run_id}


def test_empty_store(tmp_path):
    Store(tmp_path).prepare()
    r = load(tmp_path)
    assert len(r.runs) == len(r.flows) == len(r.series) == len(r.link_series) == 0
    assert "goodput_bps" in r.flows.columns and "probe_rtt_ms" in r.link_series.columns
    assert r.meta == {}
    assert len(query(tmp_path, "SELECT * FROM link_series")) == 0
    df = query(tmp_path, "SELECT cc, avg(goodput_bps) FROM flows GROUP BY cc")
    assert len(df) == 0
    from ccbench.cli.sweep import app

    res = CliRunner().invoke(app, ["query", str(tmp_path)])  # no SQL: the views and columns
    assert res.exit_code == 0 and "goodput_bps" in res.stdout and "series" in res.stdout
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nope")


# ------------------------------------------------------------------------------------------
# a real sweep on the sim backend
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("swept")
    sc = scenario(sweep={"flows.0.cc": ["cubic", "reno"], "bottleneck.loss": ["0%", "1%"], "repeat": 2})
    s = run_sweep(sc, out, workers=2, progress=False)
    assert (s.ok, s.failed) == (8, 0), load(out).runs["error"].tolist()
    return out


def test_duckdb_aggregate_equals_pandas(swept):
    r = ccbench.load(swept)  # the top-level API reads the same store
    assert len(r.runs) == 8 and len(r.flows) == 16
    sql = (
        'SELECT cc, "bottleneck.loss" AS loss, count(*) AS n, avg(goodput_bps) AS g, '
        "max(rtt_p95_ms) AS p95 FROM flows GROUP BY ALL ORDER BY cc, loss"
    )
    got = query(swept, sql)
    want = (
        r.flows.groupby(["cc", "bottleneck.loss"])
        .agg(n=("goodput_bps", "size"), g=("goodput_bps", "mean"), p95=("rtt_p95_ms", "max"))
        .reset_index()
        .rename(columns={"bottleneck.loss": "loss"})
    )
    assert list(got["n"]) == list(want["n"]) == [4, 4, 4, 4]
    pd.testing.assert_frame_equal(got[["cc", "loss"]], want[["cc", "loss"]])
    assert got["g"].to_numpy() == pytest.approx(want["g"].to_numpy(), rel=1e-12)
    assert got["p95"].to_numpy() == pytest.approx(want["p95"].to_numpy(), rel=1e-12, nan_ok=True)
    assert (got["g"] > 0).all()
    # a join of runs and flows
    j = query(
        swept,
        "SELECT r.seed, sum(f.goodput_bps) s, any_value(r.aggregate_goodput_bps) a "
        "FROM flows f JOIN runs r USING (run_id) GROUP BY r.run_id, r.seed",
    )
    assert len(j) == 8 and j["s"].to_numpy() == pytest.approx(j["a"].to_numpy())
    assert set(j["seed"]) == {3, 4}


def test_query_cli(swept):
    from ccbench.cli.sweep import app

    runner = CliRunner()
    res = runner.invoke(
        app, ["query", str(swept), "SELECT cc, count(*) AS n FROM flows GROUP BY cc ORDER BY cc", "--csv"]
    )
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == ["cc,n", "cubic,8", "reno,8"]
    res = runner.invoke(app, ["query", str(swept), "SELECT nonsense FROM flows"])
    assert res.exit_code == 2 and "nonsense" in res.output
    res = runner.invoke(app, ["query", str(swept), 'SELECT "bottleneck.loss", count(*) FROM runs GROUP BY 1'])
    assert res.exit_code == 0 and "bottleneck.loss" in res.stdout


def test_store_files_are_plain_parquet(swept):
    # readable by any Parquet reader, one runs row per file
    for p in (swept / "runs").glob("*.parquet"):
        t = pq.read_table(p)
        assert t.num_rows == 1 and t.column("run_id")[0].as_py() == p.stem


# ------------------------------------------------------------------------------------------
# run --out: one run saved as a store; what is not a store
# ------------------------------------------------------------------------------------------


def test_save_run_writes_a_store_that_load_and_query_read(tmp_path, write_toml):
    path = write_toml(
        'name = "saved"\nduration = "2s"  # comment kept\nseed = 3\n'
        '[bottleneck]\nrate = "10Mbit"\nrtt = "20ms"\n[[flows]]\ncc = "cubic"\ncount = 2\n'
    )
    sc = ccbench.load_scenario(path)
    res = fake_result(sc)
    out = tmp_path / "out"
    assert res.save(out, command=["ccbench", "run", str(path), "--out", str(out)]) == out
    r = ccbench.load(out)
    assert list(r.runs["run_id"]) == [res.run_id] and len(r.flows) == 2 and len(r.link_series) == 2
    m = r.meta
    assert m["command"][:2] == ["ccbench", "run"] and m["backend"] == "sim" and m["study"] is None
    assert m["ccbench_version"] == ccbench.__version__ and m["grid"] == {} and m["repeat"] == 1
    assert m["scenario_file"] == str(path) and "# comment kept" in m["scenario_toml"]
    assert m["kernel_version"] == os.uname().release and m["created"][:2] == "20"
    assert query(out, "SELECT max(queue_bytes) q FROM link_series")["q"][0] == 3000
    # a second run goes into the same store
    fake_result(sc.with_overrides({"seed": 9})).save(out)
    assert len(ccbench.load(out).runs) == 2


def test_meta_toml_round_trips_an_overridden_scenario(tmp_path):
    """Without a file (or with overrides) ccbench.json holds the scenario re-written as TOML,
    which validates to the same scenario."""
    import tomllib

    from ccbench.results.meta import build_meta

    sc = scenario(sweep={"bottleneck.loss": ["0%", "1%"], "repeat": 2}).with_overrides(
        {"bottleneck.loss": {"model": "gilbert", "p": "1%", "r": "30%"}, "flows.0.pacing": True}
    )
    m = build_meta(sc, "sim")
    back = Scenario.from_dict(tomllib.loads(m["scenario_toml"]))
    assert back.canonical_json() == sc.canonical_json() and back.sweep == sc.sweep


def test_load_refuses_a_directory_that_is_not_a_store(tmp_path):
    flat = tmp_path / "flat"
    fake_result(scenario()).write_parquet(flat)
    with pytest.raises(store_mod.StoreError) as e:
        ccbench.load(flat)
    msg = str(e.value)
    assert "flows.parquet" in msg and "flat layout" in msg and "runs/" in msg
    with pytest.raises(store_mod.StoreError):
        query(flat, "SELECT 1")
    with pytest.raises(store_mod.StoreError):  # run --out into it would mix layouts
        fake_result(scenario()).save(flat)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    with pytest.raises(store_mod.StoreError, match="notes.txt"):
        ccbench.load(other)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert len(ccbench.load(empty).runs) == 0


def test_results_repr_and_html(tmp_path):
    st = Store(tmp_path)
    st.prepare()
    for i, (loss, gp) in enumerate((("0%", 1e6), ("0%", 3e6), ("1%", 5e6))):
        write(st, fake_result(scenario(seed=10 + i), goodput=gp), **{"bottleneck.loss": loss, "repeat": i})
    r = load(tmp_path)
    assert r.swept == ["bottleneck.loss"]
    cells = r.cell_goodput().set_index("bottleneck.loss")
    # aggregate goodput of a run = 1 + 2 goodput units (two flows); cell means of the runs
    assert cells.loc["0%", "mean"] == pytest.approx((3e6 + 9e6) / 2) and cells.loc["0%", "runs"] == 2
    assert cells.loc["1%", "mean"] == pytest.approx(15e6)
    assert "3 runs (0 failed)" in repr(r) and "bottleneck.loss" in repr(r)
    page = r._repr_html_()
    assert "<table" in page and "bottleneck.loss" in page and "6" in page and "15" in page


# ---- a store that cannot be written or read whole -----------------------------------------------

ERRORS_BASE = {
    "name": "store-errors",
    "duration": "1s",
    "seed": 5,
    "bottleneck": {"rate": "10Mbit", "rtt": "20ms"},
    "flows": [{"cc": "cubic", "count": 2}],
}
AS_ROOT = os.geteuid() == 0


def seeded_result(seed: int = 5, series_rows: int = 2):
    """A RunResult with the real schema; ``series_rows`` of incompressible RTT and goodput values."""
    sc = Scenario.from_dict(dict(ERRORS_BASE, seed=seed), source="store-errors.toml")
    rows = [{"flow_id": i, "goodput_bps": 1e6 * (i + 1)} for i in range(2)]
    rng = np.random.default_rng(seed)
    series = {
        "t_s": np.arange(series_rows, dtype=float).tolist(),
        "flow_id": [0] * series_rows,
        "rtt_ms": rng.random(series_rows).tolist(),
        "goodput_bps": rng.random(series_rows).tolist(),
    }
    return build_result(sc, "sim", rows, series, {}, 0.01)


def write_tables(st: Store, res) -> str:
    return st.write(res.run_id, res.runs_table, res.flows_table, res.series_table)


def one_line(msg: str) -> bool:
    return "\n" not in msg.strip() and "Traceback" not in msg


@contextlib.contextmanager
def tmpfs(path, size: str, ro: bool = False):
    """A small tmpfs at ``path`` (root only): a real full or read-only file system."""
    path.mkdir(exist_ok=True)
    opts = f"size={size}" + (",ro" if ro else "")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "ccbench-test", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def stored_store(tmp_path, name="s", n=2):
    root = tmp_path / name
    st = Store(root)
    st.prepare()
    ids = []
    for seed in range(1, n + 1):
        res = seeded_result(seed=seed)
        assert write_tables(st, res) == "ok"
        ids.append(res.run_id)
    return root, ids


# ---- query: a truncated file, glob characters ---------------------------------------------------


def test_query_skips_a_truncated_file_and_says_so(tmp_path):
    root, ids = stored_store(tmp_path, n=3)
    victim = root / "flows" / f"{ids[1]}.parquet"
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])  # a power loss mid-write of a non-atomic copy
    with pytest.warns(SkippedFileWarning, match=ids[1]):
        df = query(root, "SELECT run_id, count(*) n FROM flows GROUP BY run_id ORDER BY run_id")
    assert sorted(df["run_id"]) == sorted([ids[0], ids[2]]) and list(df["n"]) == [2, 2]
    # load() agrees with query() on what is readable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedFileWarning)
        assert len(load(root).flows) == 4
    # the runs table is intact: every run is still listed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedFileWarning)
        assert len(query(root, "SELECT * FROM runs")) == 3


def test_query_cli_with_a_truncated_file(tmp_path):
    from ccbench.cli.sweep import app

    root, ids = stored_store(tmp_path, n=2)
    p = root / "runs" / f"{ids[0]}.parquet"
    p.write_bytes(p.read_bytes()[:40])
    res = CliRunner().invoke(app, ["query", str(root), "SELECT count(*) AS n FROM runs", "--csv"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1] == "1"
    assert "unreadable" in res.stderr and ids[0] in res.stderr and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["query", str(root)])  # the view listing
    assert res.exit_code == 0 and "Traceback" not in res.output


@pytest.mark.parametrize("name", ["store[a]", "st*re?", "s{1,2}"])
def test_query_takes_the_store_path_literally(tmp_path, name):
    root, ids = stored_store(tmp_path, name=name)
    # a sibling the glob [a] / * / ? / {} would match if the path were a pattern
    decoy, _ = stored_store(tmp_path, name="stare" if name != "store[a]" else "storea", n=1)
    df = query(root, "SELECT DISTINCT run_id FROM flows ORDER BY 1")
    assert sorted(df["run_id"]) == sorted(ids)


# ---- writability before runs; errors while writing ----------------------------------------------


@pytest.mark.skipif(not AS_ROOT, reason="mounting a read-only tmpfs needs root")
def test_read_only_store_is_refused_before_running(tmp_path, monkeypatch):
    from ccbench import backends, cli

    ro = tmp_path / "ro"
    with tmpfs(ro, "1M", ro=True):
        with pytest.raises(StoreError) as e:
            Store(ro).prepare()
        assert one_line(str(e.value)) and str(ro) in str(e.value)
        assert "read-only" in str(e.value).lower()
        calls = []
        monkeypatch.setattr(backends, "run", lambda *a, **k: calls.append(a))
        scen = tmp_path / "s.toml"
        scen.write_text('duration = "1s"\n[bottleneck]\nrate = "10Mbit"\nrtt = "20ms"\n[[flows]]\ncc = "cubic"\n')
        res = CliRunner().invoke(cli.app, ["run", str(scen), "--out", str(ro / "new")])
        assert res.exit_code == 2 and calls == [], res.output
        assert "--out" in res.output and "not writable" in res.output and "Traceback" not in res.output


@pytest.mark.skipif(not AS_ROOT, reason="mounting a read-only tmpfs needs root")
def test_sweep_into_a_read_only_store_runs_nothing(tmp_path):
    ro = tmp_path / "ro"
    scen = tmp_path / "s.toml"
    scen.write_text(
        'duration = "1s"\n[bottleneck]\nrate = "10Mbit"\nrtt = "20ms"\n'
        '[[flows]]\ncc = "cubic"\n[sweep]\n"flows.0.cc" = ["cubic", "reno"]\n'
    )
    with tmpfs(ro, "1M", ro=True):
        r = subprocess.run(
            [sys.executable, "-m", "ccbench.cli", "sweep", str(scen), "--out", str(ro), "-q"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert r.returncode == 2, r.stderr
    assert one_line(r.stderr) and str(ro) in r.stderr, r.stderr


@pytest.mark.skipif(not AS_ROOT, reason="needs root to switch to another user")
def test_store_owned_by_another_user():
    """As user nobody, a store that root owns (mode 0755) cannot be written: StoreError."""
    import shutil
    import tempfile

    top = tempfile.mkdtemp(prefix="ccbench-owned-")  # /tmp/...: a path nobody may traverse
    os.chmod(top, 0o755)
    try:
        _check_as_nobody(Path(top))
    finally:
        shutil.rmtree(top)


def _check_as_nobody(tmp_path):
    root, _ = stored_store(tmp_path)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: drop to nobody, report what check_writable says
        os.close(r)
        try:
            os.setgid(65534)
            os.setuid(65534)
            try:
                check_writable(root)
                msg = "ok"
            except StoreError as e:
                msg = "StoreError:" + str(e)
            except BaseException as e:  # noqa: BLE001 - report anything else as a failure
                msg = f"{type(e).__name__}:{e}"
            os.write(w, msg.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        msg = f.read()
    os.waitpid(pid, 0)
    assert msg.startswith("StoreError:"), msg
    assert "Permission denied" in msg and one_line(msg)


def test_unwritable_parent_is_refused(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(StoreError, match="not a directory"):
        check_writable(f / "store")


@pytest.mark.skipif(not AS_ROOT, reason="mounting a small tmpfs needs root")
def test_full_disk(tmp_path):
    mnt = tmp_path / "small"
    with tmpfs(mnt, "8M"):
        st = Store(mnt / "store")
        st.prepare()
        write_tables(st, seeded_result(seed=1))
        # fill the file system to 1 MiB short of full: prepare() refuses to start runs
        with open(mnt / "filler", "wb") as f:
            free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
            f.write(b"\0" * (free - (1 << 20)))
        with pytest.raises(StoreError, match="free") as e:
            Store(mnt / "store").prepare()
        assert one_line(str(e.value))
        # a run that does not fit (~4 MB of series, mostly incompressible) fails in one line ...
        big = seeded_result(seed=2, series_rows=400_000)
        with pytest.raises(StoreError) as e:
            write_tables(st, big)
        assert "No space left" in str(e.value) and big.run_id in str(e.value)
        assert one_line(str(e.value))
        # ... leaving no partial file behind, and the run stored before it intact
        assert not any(p.name.startswith(".tmp-") for p in (mnt / "store").rglob("*"))
        assert list(load(mnt / "store").runs["seed"]) == [1]
        assert not (mnt / "store" / "runs" / f"{big.run_id}.parquet").exists()


def test_min_free_is_documented():
    doc = ROOT / "docs" / "limits.md"
    assert f"{store_mod.MIN_FREE_BYTES >> 20} MiB free" in doc.read_text()
