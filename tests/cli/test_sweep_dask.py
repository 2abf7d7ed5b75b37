"""Sweeps on a real Dask cluster: a `dask scheduler` and two `dask worker` processes on
127.0.0.1, the sweep submitted through the CLI with --dask tcp://127.0.0.1:PORT; the results
(written by the client only) must equal those of the local process executor."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from ccbench.results.store import load  # noqa: E402
from ccbench.scenario.model import Scenario  # noqa: E402
from ccbench.sweeps.runner import run_sweep  # noqa: E402

STUDY = """\
name = "dask-test"
duration = "2s"
seed = 21

[bottleneck]
rate = "10Mbit"
rtt = "20ms"

[[flows]]
cc = "cubic"
count = 2

[sweep]
"flows.0.cc" = ["cubic", "reno"]
"bottleneck.loss" = ["0%", "1%"]
repeat = 2
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask_exe() -> str:
    exe = Path(sys.executable).with_name("dask")
    return str(exe) if exe.exists() else "dask"


def stop(procs):
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.time() + 10
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(5)


def comparable(df):
    cols = [c for c in df.columns if c != "wall_time_s"]
    return df[cols].sort_values(["run_id", "flow_id"] if "flow_id" in cols else ["run_id"]).reset_index(drop=True)


def test_sweep_on_dask_cluster_equals_local(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    common = dict(cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    procs = []
    try:
        procs.append(
            subprocess.Popen(
                [dask_exe(), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **common
            )
        )
        for i in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        dask_exe(),
                        "worker",
                        addr,
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--host",
                        "127.0.0.1",
                        "--no-dashboard",
                        "--local-directory",
                        str(tmp_path / f"w{i}"),
                        "--name",
                        f"w{i}",
                    ],
                    **common,
                )
            )
        deadline = time.time() + 60
        client = None
        while client is None:
            try:
                client = distributed.Client(addr, timeout="2s")
            except OSError:
                if time.time() > deadline or procs[0].poll() is not None:
                    raise
                time.sleep(0.2)
        try:
            client.wait_for_workers(2, timeout=60)
        finally:
            client.close()

        out_dask = tmp_path / "dask"
        r = subprocess.run(
            [sys.executable, "-m", "ccbench.cli", "sweep", str(study), "--dask", addr, "--out", str(out_dask)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert r.returncode == 0, r.stderr
        assert f"Dask scheduler {addr}" in r.stderr and "2 worker threads" in r.stderr
    finally:
        stop(procs)

    out_local = tmp_path / "local"
    s = run_sweep(
        Scenario.from_dict(__import__("tomllib").loads(STUDY), source=str(study)), out_local, workers=2, progress=False
    )
    assert (s.ok, s.failed) == (8, 0)
    d, local = load(out_dask), load(out_local)
    assert len(d.flows) == 16 and set(d.runs["status"]) == {"ok"}
    assert comparable(d.flows).equals(comparable(local.flows))
    assert comparable(d.runs).equals(comparable(local.runs))
    # nothing was written by the workers: their directories hold no store files
    assert not list(tmp_path.glob("w*/**/*.parquet"))


def test_dask_local_cluster(tmp_path):
    sc = Scenario.from_dict(__import__("tomllib").loads(STUDY), source="dask-test.toml")
    s = run_sweep(
        sc,
        tmp_path / "out",
        grid=["flows.0.cc=cubic", "bottleneck.loss=0%"],
        repeat=2,
        dask="local",
        workers=1,
        progress=False,
    )
    assert (s.ok, s.failed) == (2, 0) and "LocalCluster" in s.executor
    assert len(load(tmp_path / "out").flows) == 4
