"""A store that cannot be written or read whole: one-line errors before any run, never a
traceback; `ccbench query` survives a truncated file and glob characters in the path (issue 11,
items 6 and 7)."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from ccbench.results import store as store_mod
from ccbench.results.run_result import build_result
from ccbench.scenario.model import Scenario
from ccbench.results.store import SkippedFileWarning, Store, StoreError, check_writable, load, query
from conftest import ROOT

BASE = {
    "name": "store-errors",
    "duration": "1s",
    "seed": 5,
    "bottleneck": {"rate": "10Mbit", "rtt": "20ms"},
    "flows": [{"cc": "cubic", "count": 2}],
}
AS_ROOT = os.geteuid() == 0


def fake_result(seed: int = 5, series_rows: int = 2):
    """A RunResult with the real schema; ``series_rows`` of incompressible RTT and goodput values."""
    sc = Scenario.from_dict(dict(BASE, seed=seed), source="store-errors.toml")
    rows = [{"flow_id": i, "goodput_bps": 1e6 * (i + 1)} for i in range(2)]
    rng = np.random.default_rng(seed)
    series = {"t_s": np.arange(series_rows, dtype=float).tolist(), "flow_id": [0] * series_rows,
              "rtt_ms": rng.random(series_rows).tolist(), "goodput_bps": rng.random(series_rows).tolist()}
    return build_result(sc, "sim", rows, series, {}, 0.01)


def write(st: Store, res) -> str:
    return st.write(res.run_id, res.runs_table, res.flows_table, res.series_table)


def one_line(msg: str) -> bool:
    return "\n" not in msg.strip() and "Traceback" not in msg


@contextlib.contextmanager
def tmpfs(path, size: str, ro: bool = False):
    """A small tmpfs at ``path`` (root only): a real full or read-only file system."""
    path.mkdir(exist_ok=True)
    opts = f"size={size}" + (",ro" if ro else "")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "ccbench-test", str(path)],
                       capture_output=True, text=True)
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
        res = fake_result(seed=seed)
        assert write(st, res) == "ok"
        ids.append(res.run_id)
    return root, ids


# ---- item 7: query ------------------------------------------------------------------------

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


# ---- item 6: writability before runs; errors while writing ------------------------------------

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
        scen.write_text('duration = "1s"\n[bottleneck]\nrate = "10Mbit"\nrtt = "20ms"\n'
                        '[[flows]]\ncc = "cubic"\n')
        res = CliRunner().invoke(cli.app, ["run", str(scen), "--out", str(ro / "new")])
        assert res.exit_code == 2 and calls == [], res.output
        assert "--out" in res.output and "not writable" in res.output and "Traceback" not in res.output


@pytest.mark.skipif(not AS_ROOT, reason="mounting a read-only tmpfs needs root")
def test_sweep_into_a_read_only_store_runs_nothing(tmp_path):
    ro = tmp_path / "ro"
    scen = tmp_path / "s.toml"
    scen.write_text('duration = "1s"\n[bottleneck]\nrate = "10Mbit"\nrtt = "20ms"\n'
                    '[[flows]]\ncc = "cubic"\n[sweep]\n"flows.0.cc" = ["cubic", "reno"]\n')
    with tmpfs(ro, "1M", ro=True):
        r = subprocess.run([sys.executable, "-m", "ccbench.cli", "sweep", str(scen), "--out", str(ro),
                            "-q"], capture_output=True, text=True, timeout=120)
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
        write(st, fake_result(seed=1))
        # fill the file system to 1 MiB short of full: prepare() refuses to start runs
        with open(mnt / "filler", "wb") as f:
            free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
            f.write(b"\0" * (free - (1 << 20)))
        with pytest.raises(StoreError, match="free") as e:
            Store(mnt / "store").prepare()
        assert one_line(str(e.value))
        # a run that does not fit (~4 MB of series, mostly incompressible) fails in one line ...
        big = fake_result(seed=2, series_rows=400_000)
        with pytest.raises(StoreError) as e:
            write(st, big)
        assert "No space left" in str(e.value) and big.run_id in str(e.value)
        assert one_line(str(e.value))
        # ... leaving no partial file behind, and the run stored before it intact
        assert not any(p.name.startswith(".tmp-") for p in (mnt / "store").rglob("*"))
        assert list(load(mnt / "store").runs["seed"]) == [1]
        assert not (mnt / "store" / "runs" / f"{big.run_id}.parquet").exists()


def test_min_free_is_documented():
    doc = ROOT / "docs" / "limits.md"
    assert f"{store_mod.MIN_FREE_BYTES >> 20} MiB free" in doc.read_text()
