"""`ccbench run` (cli/run.py): the per-flow table, --json (and --series), --out into a store,
-i interval lines, --duration, a scenario's [sweep] table noted but not expanded, refusals with
exit status 2, and ccbench.run, the Python call behind it."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from conftest import MINIMAL_TOML
from conftest import run_ccbench as ccbench


def _run_json(path, *extra):
    p = ccbench("run", path, "--json", *extra)
    out = p.stdout.strip()
    assert out, p.stderr
    data = json.loads(out)  # the only thing on stdout is the JSON document
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


def test_run_json_reports_a_failure_as_a_row(minimal_toml, monkeypatch):
    """A run that fails inside the simulator (here: a cap of 1000 events, far below what 2 s of
    10 Mbit/s take) is a row with status "failed" and the simulator's message, which stderr
    repeats, and the exit status is 1."""
    from ccbench import _sim

    for name in ("run_json", "run_columns"):
        real = getattr(_sim, name)
        monkeypatch.setattr(
            _sim, name, lambda text, real=real: real(json.dumps({**json.loads(text), "max_events": 1000}))
        )
    res = _invoke("run", minimal_toml, "--json")
    run = json.loads(res.stdout)["runs"][0]
    assert res.exit_code == 1 and run["status"] == "failed"
    assert "run exceeded 1000 events" in run["error"] and run["error"] in res.stderr


def test_run_table_and_out(minimal_toml, tmp_path):
    """run --out writes a one-run store: ccbench.load, ccbench query read it back."""
    import ccbench as cb

    out = tmp_path / "out"
    p = ccbench("run", minimal_toml, "--out", out)
    res = cb.load(out)
    assert len(res.runs) == 1
    assert p.returncode == 0, p.stderr
    assert "cubic" in p.stdout and "goodput" in p.stdout and "Jain" in p.stdout
    assert res.runs["status"].tolist() == ["ok"]
    assert len(res.flows) == 1 and res.flows["cc"].tolist() == ["cubic"]
    assert len(res.series) > 0
    assert res.runs["run_id"].iloc[0] == res.flows["run_id"].iloc[0]
    meta = json.loads((out / "ccbench.json").read_text())
    assert meta["backend"] == "sim" and meta["scenario_toml"] == minimal_toml.read_text()
    q = ccbench("query", out, "SELECT cc, goodput_bps FROM flows", "--csv")
    assert q.returncode == 0, q.stderr
    lines = q.stdout.strip().splitlines()
    assert lines[0] == "cc,goodput_bps" and len(lines) == 2 and lines[1].startswith("cubic,")
    # the bottleneck is sampled once per sample_interval (default 100 ms) over the 2 s run
    q = ccbench("query", out, "SELECT count(*) AS n FROM link_series", "--csv")
    assert q.returncode == 0, q.stderr
    assert q.stdout.split() == ["n", "20"]


def test_bad_set_exit_2(minimal_toml):
    p = ccbench("run", minimal_toml, "--set", "bottleneck.jitter_dist=gauss")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "bottleneck.jitter_dist" in p.stderr and str(minimal_toml) in p.stderr


def test_aqm_parameter_refusal_exit_2(minimal_toml):
    # every discipline runs on the simulator; a parameter of another discipline is refused
    p = ccbench("run", minimal_toml, "--set", "bottleneck.aqm=pie", "--set", "bottleneck.aqm_params.interval=10ms")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "bottleneck.aqm_params.interval" in p.stderr and "pie takes" in p.stderr


def test_missing_backend_exit_2(minimal_toml, tmp_path):
    # the ns3 backend without its SDK (CCBENCH_NS3_SDK pointing at an empty directory)
    p = ccbench("run", minimal_toml, "--backend", "ns3", env={"CCBENCH_NS3_SDK": str(tmp_path)})
    assert p.returncode == 2 and "Traceback" not in p.stderr and "ns3" in p.stderr
    assert "make ns3" in p.stderr


def test_python_api(minimal_toml):
    import ccbench as cb

    r = cb.run(minimal_toml, raise_on_error=False)
    assert r.ok, r.error
    assert hasattr(r.flows, "columns") and len(r.flows) == 1 and len(r.series) > 0
    assert cb.__version__


# ---- run on a file with a [sweep] table ----------------------------------------------------

SWEEP_TOML = (
    MINIMAL_TOML
    + """
[sweep]
"bottleneck.loss" = ["0%", "1%", "2%"]
repeat = 2
"""
)


def test_run_notes_the_sweep_table_it_does_not_expand(write_toml):
    path = write_toml(SWEEP_TOML)
    p = ccbench("run", path, "--json")
    data = json.loads(p.stdout)
    assert len(data["runs"]) == 1  # the base scenario, once
    # 3 values x repeat 2 = 6 runs; the note names the count and the command that runs them
    assert "[sweep]" in p.stderr and "6 runs" in p.stderr and f"ccbench sweep {path}" in p.stderr
    plain = ccbench("run", write_toml(MINIMAL_TOML, "plain.toml"), "--json")
    assert "sweep" not in plain.stderr


# ---- run -i: iperf3-like interval lines -----------------------------------------------------------


def _synthetic_series():
    """Two flows, samples every 0.1 s for 2.5 s. Flow 0 delivers 10 Mbit/s throughout, one more
    retransmit per sample, cwnd = sample number; flow 1 starts at 1.0 s at 5 Mbit/s with RTT
    alternating 20 / 40 ms and no retransmits."""
    import pandas as pd

    rows = []
    for n in range(1, 26):
        t = round(n * 0.1, 10)
        rows.append(dict(run_id="r", flow_id=0, t_s=t, goodput_bps=10e6, cwnd_pkts=n, rtt_ms=30.0, retransmits=n))
        if n > 10:
            rows.append(
                dict(
                    run_id="r",
                    flow_id=1,
                    t_s=t,
                    goodput_bps=5e6,
                    cwnd_pkts=7,
                    rtt_ms=20.0 if n % 2 else 40.0,
                    retransmits=0,
                )
            )
    flows = pd.DataFrame({"flow_id": [0, 1], "cc": ["cubic", "reno"]})
    return pd.DataFrame(rows), flows


def test_interval_rows_known_answer():
    from ccbench.cli.run import interval_rows

    series, flows = _synthetic_series()
    rows = interval_rows(series, flows, 1.0, 0.1, 2.5)
    by = {(r["flow_id"], r["start_s"]): r for r in rows}
    # windows 0-1, 1-2, 2-2.5 (the last one short: its goodput is over 0.5 s, not 1 s)
    assert sorted({(r["start_s"], r["end_s"]) for r in rows}) == [(0.0, 1.0), (1.0, 2.0), (2.0, 2.5)]
    for start in (0.0, 1.0, 2.0):
        assert by[(0, start)]["goodput_bps"] == pytest.approx(10e6)
        assert by[(0, start)]["cc"] == "cubic"
    assert [by[(0, s)]["retransmits"] for s in (0.0, 1.0, 2.0)] == [10, 10, 5]  # cumulative 10, 20, 25
    assert [by[(0, s)]["cwnd_pkts"] for s in (0.0, 1.0, 2.0)] == [10, 20, 25]  # value at the window's end
    # flow 1 has no samples in 0-1 s: no line; it fills 1-2 s and 2-2.5 s
    assert (1, 0.0) not in by
    assert by[(1, 1.0)]["goodput_bps"] == pytest.approx(5e6) and by[(1, 2.0)]["goodput_bps"] == pytest.approx(5e6)
    assert by[(1, 1.0)]["rtt_ms"] == pytest.approx(30.0) and by[(1, 1.0)]["retransmits"] == 0
    # SUM rows add goodput and retransmits of the flows in the window
    assert by[("SUM", 0.0)]["goodput_bps"] == pytest.approx(10e6)
    assert by[("SUM", 1.0)]["goodput_bps"] == pytest.approx(15e6) and by[("SUM", 2.0)]["retransmits"] == 5
    # window length = the whole run: one row per flow, its mean
    whole = interval_rows(series, flows, 2.5, 0.1, 2.5)
    assert [r["goodput_bps"] for r in whole if r["flow_id"] == 1] == [pytest.approx(5e6 * 15 / 25)]


def test_run_interval_lines_add_up_to_the_flow_summary(minimal_toml):
    p = ccbench("run", minimal_toml, "-i", "500ms", "--set", "flows.0.count=2")
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("[")]
    assert lines[0].startswith("[ ID]")
    flow0 = [ln for ln in lines if ln.startswith("[  0]")]
    sums = [ln for ln in lines if ln.startswith("[SUM]")]
    assert len(flow0) == 4 and len(sums) == 4  # 2 s in 0.5 s windows, two flows
    assert "0.00-0.50 s" in flow0[0] and "1.50-2.00 s" in flow0[-1] and "cubic" in flow0[0]
    # JSON: the same windows; per flow, retransmits over the windows = the run's total and the
    # mean window goodput = the run's goodput (same bytes over the same time) within 2 %
    _, data = _run_json(minimal_toml, "-i", "500ms", "--set", "flows.0.count=2")
    for f in data["flows"]:
        ws = [w for w in data["intervals"] if w["flow_id"] == f["flow_id"]]
        assert len(ws) == 4
        assert sum(w["retransmits"] for w in ws) == f["retransmits"]
        assert sum(w["goodput_bps"] for w in ws) / 4 == pytest.approx(f["goodput_bps"], rel=0.02)


def test_run_interval_must_be_a_multiple_of_sample_interval(minimal_toml):
    p = ccbench("run", minimal_toml, "-i", "150ms")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "--interval" in p.stderr and "sample_interval" in p.stderr
    p = ccbench("run", minimal_toml, "--interval", "fast")
    assert p.returncode == 2 and "--interval" in p.stderr


def test_run_json_series(minimal_toml):
    _, plain = _run_json(minimal_toml)
    assert "series" not in plain
    _, data = _run_json(minimal_toml, "--series")
    rows = data["series"]
    # 2 s sampled every 100 ms (the default sample_interval), one flow
    assert len(rows) == 20
    assert {"t_s", "cwnd_pkts", "goodput_bps", "rtt_ms", "flow_id"} <= set(rows[0])
    assert [r["t_s"] for r in rows] == sorted(r["t_s"] for r in rows)
    assert "link_series" in data
    for r in data["link_series"]:
        assert {"t_s", "queue_bytes"} <= set(r)


def test_run_out_refuses_what_is_not_a_store(minimal_toml, tmp_path):
    """--out into a file or a directory of other files: exit 2 before running, nothing written."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    p = ccbench("run", minimal_toml, "--out", a_file)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "--out" in p.stderr
    assert a_file.read_text() == "keep me"
    other = tmp_path / "other"
    other.mkdir()
    (other / "flows.parquet").write_bytes(b"")  # the flat layout of older versions
    p = ccbench("run", minimal_toml, "--out", other)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "not a ccbench store" in p.stderr
    assert sorted(x.name for x in other.iterdir()) == ["flows.parquet"]


def test_run_table_lists_32_flows_and_summarises_the_rest(minimal_toml):
    """A run of many flows prints 32 rows and one line with the others' count and the
    goodput spread of all flows (the table of 100 000 flows would be unreadable and slow)."""
    from ccbench.cli.run import MAX_FLOW_ROWS

    p = ccbench("run", minimal_toml, "--set", "flows.0.count=40", "--set", "duration=1s")
    assert p.returncode == 0, p.stderr
    more = [ln for ln in p.stdout.splitlines() if "more flows" in ln]
    assert len(more) == 1 and more[0].startswith(f"... {40 - MAX_FLOW_ROWS} more flows")
    lo, med, hi = map(float, more[0].split("min/median/max ")[1].split()[0].split("/"))
    assert 0 <= lo <= med <= hi
    ids = [
        int(ln.split("│")[1])
        for ln in p.stdout.splitlines()
        if ln.startswith("│") and ln.split("│")[1].strip().isdigit()
    ]
    assert ids == list(range(MAX_FLOW_ROWS))


def test_run_out_does_not_import_pandas(minimal_toml, tmp_path):
    """`ccbench run --out` makes no DataFrame: nothing on its path may import pandas (0.2-0.4 s
    of start-up; pyarrow's pa.array / pa.scalar / to_numpy import it through the pandas shim,
    hence ccbench.results.arrow_values). The stored run is complete."""
    out = tmp_path / "store"
    code = (
        "import atexit, os, sys, runpy\n"
        "atexit.register(lambda: os.write(2, f'PANDAS={\"pandas\" in sys.modules}\\n'.encode()))\n"
        f"sys.argv = ['ccbench', 'run', {str(minimal_toml)!r}, '--out', {str(out)!r}, '--set', 'flows.0.count=40']\n"
        "runpy.run_module('ccbench.cli', run_name='__main__')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "PANDAS=False" in p.stderr, p.stderr
    assert pq.read_table(next((out / "flows").glob("*.parquet"))).num_rows == 40
    assert pq.read_table(next((out / "series").glob("*.parquet"))).num_rows > 0


# ---- run --duration ---------------------------------------------------------------------------


def _invoke(*args):
    from typer.testing import CliRunner

    from ccbench.cli.app import app

    return CliRunner().invoke(app, [*map(str, args)], env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_run_duration_overrides_the_scenario_as_set_does(minimal_toml):
    """--duration TIME is --set duration=TIME: the same run (scenario hash) for the minutes form."""
    res = _invoke("run", minimal_toml, "--duration", "0.02min", "--json")
    assert res.exit_code == 0, res.output
    run = json.loads(res.stdout)["runs"][0]
    assert run["status"] == "ok" and run["duration_s"] == 1.2  # the file says 2s
    same = _invoke("run", minimal_toml, "--set", "duration=1.2s", "--json")
    assert json.loads(same.stdout)["runs"][0]["scenario_hash"] == run["scenario_hash"]
    # agreeing with a --set of duration is fine
    res = _invoke("run", minimal_toml, "--duration", "1.2s", "--set", "duration=1.2s", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["runs"][0]["scenario_hash"] == run["scenario_hash"]


@pytest.mark.parametrize("value", ["2m", "1hr", "25h", "0s", "soon"])
def test_run_bad_duration_is_the_set_error(minimal_toml, value):
    """A bad --duration exits 2 with exactly the message of --set duration=VALUE (the key named)."""
    res = _invoke("run", minimal_toml, "--duration", value)
    assert res.exit_code == 2 and "Traceback" not in res.stderr
    assert f"{minimal_toml}: duration: " in res.stderr
    assert res.stderr == _invoke("run", minimal_toml, "--set", f"duration={value}").stderr


def test_run_duration_and_a_different_set_duration_are_refused(minimal_toml):
    res = _invoke("run", minimal_toml, "--duration", "1s", "--set", "duration=2s")
    assert res.exit_code == 2 and "--duration '1s' and --set duration=2s disagree" in res.stderr
