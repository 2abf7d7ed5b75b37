import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from conftest import NOT_IMPLEMENTED, skip_if_core_missing


def ccbench(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "ccbench.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def _run_json(path, *extra):
    p = ccbench("run", path, "--json", *extra)
    out = p.stdout.strip()
    assert out, p.stderr
    data = json.loads(out)  # the only thing on stdout is the JSON document
    if p.returncode == 1:
        skip_if_core_missing(data["runs"][0]["error"])
    return p, data


def test_run_json_is_the_only_stdout_output(minimal_toml):
    p, data = _run_json(minimal_toml, "--set", "flows.0.count=2")
    assert set(data) == {"runs", "flows"}
    assert len(data["runs"]) == 1
    assert data["runs"][0]["status"] == "ok", data["runs"][0]["error"]
    assert p.returncode == 0, p.stderr
    assert len(data["flows"]) == 2
    f = data["flows"][0]
    for key in ("flow_id", "cc", "goodput_bps", "rtt_mean_ms", "rtt_p95_ms", "retransmits", "cwnd_mean"):
        assert key in f
    assert f["cc"] == "cubic" and f["goodput_bps"] > 0
    # 10 Mbit/s bottleneck: two flows cannot deliver more than the link
    assert sum(x["goodput_bps"] for x in data["flows"]) <= 10e6 * 1448 / 1500 * 1.01


def test_run_json_reports_a_failure_as_a_row(minimal_toml):
    """Until the core lands this checks the failure path; afterwards the success path."""
    p = ccbench("run", minimal_toml, "--json")
    data = json.loads(p.stdout)
    run = data["runs"][0]
    if run["status"] == "failed":
        assert p.returncode == 1
        assert run["error"] and run["error"] in p.stderr
        assert NOT_IMPLEMENTED in run["error"]  # the only failure expected from a valid scenario
    else:
        assert p.returncode == 0 and run["error"] is None


def test_run_table_and_out(minimal_toml, tmp_path):
    out = tmp_path / "out"
    p = ccbench("run", minimal_toml, "--out", out)
    runs = pq.read_table(out / "runs.parquet").to_pylist()
    assert (out / "flows.parquet").exists() and (out / "series.parquet").exists()
    if p.returncode == 1:
        skip_if_core_missing(runs[0]["error"])
    assert p.returncode == 0, p.stderr
    assert "cubic" in p.stdout and "goodput" in p.stdout and "Jain" in p.stdout
    flows = pq.read_table(out / "flows.parquet")
    assert flows.num_rows == 1
    assert pq.read_table(out / "series.parquet").num_rows > 0


def test_bad_set_exit_2(minimal_toml):
    p = ccbench("run", minimal_toml, "--set", "bottleneck.jitter_dist=gauss")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "bottleneck.jitter_dist" in p.stderr and str(minimal_toml) in p.stderr


def test_sim_refusal_exit_2(minimal_toml):
    p = ccbench("run", minimal_toml, "--set", "bottleneck.aqm=pie")
    assert p.returncode == 2
    assert "bottleneck.aqm" in p.stderr and "sim backend" in p.stderr


def test_missing_backend_exit_2(minimal_toml):
    p = ccbench("run", minimal_toml, "--backend", "ns3")
    assert p.returncode == 2 and "Traceback" not in p.stderr and "ns3" in p.stderr


def test_algorithms_json():
    p = ccbench("algorithms", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    names = {a["name"] for a in data["sim"]}
    assert {"reno", "cubic"} <= names
    assert all(a.get("linux") for a in data["sim"])


def test_algorithms_table():
    p = ccbench("algorithms")
    assert p.returncode == 0 and "cubic" in p.stdout and "backend sim" in p.stdout


def test_python_api(minimal_toml):
    import ccbench as cb

    r = cb.run(minimal_toml, raise_on_error=False)
    skip_if_core_missing(r.error)
    assert r.ok, r.error
    assert hasattr(r.flows, "columns") and len(r.flows) == 1 and len(r.series) > 0
    assert cb.__version__


def test_demo_grid_lists_what_the_sim_has():
    from ccbench.demo import demo_grid

    losses, algs = demo_grid()
    assert losses == ["0%", "0.1%", "1%", "5%"]
    assert algs[:2] == ["cubic", "reno"]


def test_demo_short_run():
    p = ccbench("demo", "--duration", "2s", timeout=600)
    assert "Mathis" in p.stdout and "5%" in p.stdout
    if p.returncode == 1 and NOT_IMPLEMENTED in p.stdout:
        pytest.skip("simulator core not implemented yet")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "failed" not in p.stdout


def test_demo_render_table_and_mathis_line():
    from rich.console import Console

    from ccbench.demo import render

    losses, algs = ["0%", "1%"], ["cubic", "reno"]
    cells = [
        {"loss": l, "cc": c, "status": "ok", "error": None, "base_rtt_s": 0.05,
         "goodput_bps": g, "rtt_mean_ms": 60.0, "rtt_p95_ms": 75.5, "retransmits": r}
        for (l, c, g, r) in [("0%", "cubic", 48.1e6, 0), ("0%", "reno", 47.9e6, 0),
                             ("1%", "cubic", 3.3e6, 250), ("1%", "reno", 2.9e6, 240)]
    ]
    con = Console(record=True, width=200)
    render(losses, algs, cells, con)
    text = con.export_text()
    assert "48.10" in text and "2.90" in text and "60.0 / 75.5" in text and "250" in text
    assert "1% → 2.84 Mbit/s" in text  # Mathis at 50 ms, 1448 B, 1 %
    assert "failed" not in text
    cells[3] = dict(cells[3], status="failed", error="boom")
    con = Console(record=True, width=200)
    render(losses, algs, cells, con)
    text = con.export_text()
    assert "failed" in text and "boom" in text


def test_demo_render_narrow_terminal_splits_by_metric():
    from rich.console import Console

    from ccbench.demo import render

    losses, algs = ["0%", "5%"], ["cubic", "reno", "bbr", "vegas"]
    cells = [{"loss": l, "cc": c, "status": "ok", "error": None, "base_rtt_s": 0.05, "goodput_bps": 12.345e6,
              "rtt_mean_ms": 51.25, "rtt_p95_ms": 60.0, "retransmits": 7} for l in losses for c in algs]
    con = Console(record=True, width=80)
    render(losses, algs, cells, con)
    text = con.export_text()
    assert max(len(line) for line in text.splitlines() if "│" in line) <= 80
    assert "goodput, Mbit/s" in text and "retransmits" in text and "12.35" in text and "51.2 / 60.0" in text
    assert "…" not in text  # nothing truncated
