"""Shared fixtures for the Python tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# a kernel run whose behaviour a test compares counts only where it kept the scenario's timing
from ccbench.results.timing import FAITHFUL_LATE_P99_US, QUIET_HOST_STEAL_PCT, faithful_timing  # noqa: F401 - the tests import the bounds from here

#: tests/, the folder of this file (shared data lives here; the tests are in its subfolders)
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
BAD_DIR = TESTS / "bad_scenarios"
PING_DIR = TESTS / "data" / "ping"
ARTIFACTS = TESTS / "artifacts"
SIM_SRC = ROOT / "crates" / "sim" / "src"

MINIMAL_TOML = """
name = "t"
duration = "2s"
[bottleneck]
rate = "10Mbit"
rtt = "20ms"
[[flows]]
cc = "cubic"
"""


@pytest.fixture
def write_toml(tmp_path):
    """write_toml(text, name="s.toml") -> Path"""

    def _write(text: str, name: str = "s.toml") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return _write


@pytest.fixture
def minimal_toml(write_toml) -> Path:
    return write_toml(MINIMAL_TOML)


def minimal_dict(**top: Any) -> dict:
    d = {
        "name": "t",
        "duration": "2s",
        "bottleneck": {"rate": "10Mbit", "rtt": "20ms"},
        "flows": [{"cc": "cubic"}],
    }
    d.update(top)
    return d


def rust_struct_fields(path: Path, struct: str) -> list[str]:
    """Field names of `pub struct <struct> { pub name: ... }` in a Rust source file."""
    text = path.read_text()
    m = re.search(r"pub struct " + struct + r"\s*\{(.*?)\n\}", text, re.S)
    assert m, f"struct {struct} not found in {path}"
    return re.findall(r"^\s*pub (\w+)\s*:", m.group(1), re.M)


def expanded_config(sim_config: dict) -> dict:
    """A simulator config with one ``flows`` entry per connection: the simulator's own
    expansion of ``flow_groups`` (what the sim backend sends), or the config as it is."""
    if "flows" in sim_config:
        return sim_config
    from ccbench import _sim

    return json.loads(_sim.config_json(json.dumps(sim_config)))


def fake_report(sim_config: dict) -> dict:
    """A report shaped like crates/sim/src/report/mod.rs `SimReport`, for the flows of a config
    (per-connection ``flows`` or ``flow_groups``)."""
    sim_config = expanded_config(sim_config)
    flows = []
    for f in sim_config["flows"]:
        i = f["id"]
        flows.append(
            {
                "flow_id": i,
                "group": f["group"],
                "cc": f["cc"],
                "goodput_bps": 1e6 * (i + 1),
                "bytes_acked": 1000 * (i + 1),
                "retransmits": i,
                "loss_events": i,
                "rtt_min_ms": 20.0,
                "rtt_mean_ms": 25.0,
                "rtt_p50_ms": 24.0,
                "rtt_p95_ms": 30.0,
                "rtt_p99_ms": None,
                "cwnd_mean": 10.5,
                "start_s": 0.0,
                "end_s": 2.0,
                "fct_s": None,
                "completed": False,
                "data_sent": 100,
                "data_received": 98,
                "data_dropped": 1,
                "data_in_network": 1,
            }
        )
    n = len(flows)
    series = {
        "flow_id": [f["flow_id"] for f in flows for _ in range(2)],
        "t_s": [t for _ in flows for t in (0.1, 0.2)],
        "goodput_bps": [1e6] * 2 * n,
        "cwnd_pkts": [10] * 2 * n,
        "rtt_ms": [20.0, None] * n,
        "pacing_bps": [None] * 2 * n,
        "inflight_pkts": [9] * 2 * n,
        "cc_state": ["open"] * 2 * n,
        "bw_est_bps": [None] * 2 * n,
        "min_rtt_ms": [None] * 2 * n,
    }
    link_series = {"t_s": [0.1, 0.2], "queue_bytes": [1500, 0], "probe_rtt_ms": [None, 21.5]}
    run = {
        "link_utilisation": 0.9,
        "drops": 3,
        "random_losses": 0,
        "aggregate_goodput_bps": sum(f["goodput_bps"] for f in flows),
        "probe_rtt_p50_ms": None,
        "probe_rtt_p95_ms": None,
        "probe_rtt_p99_ms": None,
        "duration_s": sim_config["duration_ns"] / 1e9,
        "events": 12345,
        "data_packets": 678,
    }
    return {"flows": flows, "run": run, "series": series, "link_series": link_series, "links": []}


@pytest.fixture
def fake_sim(monkeypatch):
    """Replace ccbench._sim.run_json with one returning fake_report(config) (records calls)."""
    from ccbench.backends import sim as simbackend

    calls: list[dict] = []

    class Fake:
        @staticmethod
        def run_json(text: str) -> str:
            cfg = expanded_config(json.loads(text))
            calls.append(cfg)
            return json.dumps(fake_report(cfg))

        @staticmethod
        def algorithms_json() -> str:
            from ccbench import _sim

            return _sim.algorithms_json()

    monkeypatch.setattr(simbackend, "_sim", lambda: Fake)
    return calls


def kernel_missing(ping: bool = False) -> str | None:
    """Why the kernel backend's tests cannot run here (None: they can): root, TUN, namespaces,
    iperf3, ccbench-link, and ping when the test uses the probe."""
    from ccbench.backends.kernel import env

    if not env.is_root():
        return "kernel backend tests need root (namespaces, TUN)"
    ok, why = env.tun_available()
    if not ok:
        return f"no TUN: {why}"
    ok, why = env.netns_available()
    if not ok:
        return why
    if env.iperf3_path() is None:
        return "iperf3 not installed (make system-deps)"
    if ping and env.ping_path() is None:
        return "ping not installed"
    if env.link_binary() is None:
        return "ccbench-link not built (make build)"
    return None


def kernel_run_where(run, faithful, tries: int = 3):
    """Call ``run()`` (a kernel RunResult) until ``faithful(runs_row)`` holds and return that
    result. If no run of ``tries`` was faithful the test is skipped, naming the emulator's
    lateness and the host's CPU steal of each: what the test checks cannot be judged on a run
    the host disturbed, and its failure would then be about the machine, not ccbench."""
    seen = []
    for _ in range(tries):
        res = run()
        assert res.ok, res.error
        row = res.runs.iloc[0]
        if faithful(row):
            print(
                f"kernel run: emulator p99 lateness {row.emulator_late_p99_us:.0f} µs, "
                f"{row.host_steal_pct:.2f} % stolen"
            )
            return res
        seen.append(f"p99 {row.emulator_late_p99_us:.0f} µs with {row.host_steal_pct:.1f} % stolen")
    pytest.skip(f"the host disturbed each of {tries} kernel runs (emulator lateness: {'; '.join(seen)})")


def faithful_kernel_run(run, tries: int = 3):
    """The first of up to ``tries`` runs on a quiet host in which the emulator kept the timing."""
    return kernel_run_where(
        run,
        lambda row: bool(faithful_timing(row.host_steal_pct, row.emulator_late_p99_us)),
        tries,
    )


def tracing_missing() -> str | None:
    """Why the kernel tests that trace kernel events cannot run here (None: they can): those of
    kernel_missing, and tracefs."""
    from ccbench.backends.kernel.tracefs import tracefs_missing

    return kernel_missing(ping=False) or tracefs_missing()


def run_ccbench(*args, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m ccbench.cli ARGS`` in a subprocess (text output captured); ``env`` is added to
    this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "ccbench.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=None if env is None else {**os.environ, **env},
    )
