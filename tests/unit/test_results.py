import json
import math

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccbench import analysis
from ccbench.results.run_result import build_result, failed_result, make_run_id
from ccbench.results.schema import FLOWS_SCHEMA, LINK_SERIES_SCHEMA, RUNS_SCHEMA, SERIES_SCHEMA
from ccbench.scenario.model import DEFAULT_RWND_BYTES, Scenario
from conftest import SIM_SRC, fake_report, minimal_dict, rust_struct_fields

DESIGN_FLOWS = [
    "run_id",
    "scenario_hash",
    "backend",
    "flow_id",
    "cc",
    "goodput_bps",
    "bytes_acked",
    "retransmits",
    "loss_events",
    "rtt_min_ms",
    "rtt_mean_ms",
    "rtt_p50_ms",
    "rtt_p95_ms",
    "rtt_p99_ms",
    "cwnd_mean",
    "start_s",
    "end_s",
]
DESIGN_RUNS = [
    "run_id",
    "link_utilisation",
    "drops",
    "jain_index",
    "jain_index_groups",
    "aggregate_goodput_bps",
    "probe_rtt_p50_ms",
    "probe_rtt_p95_ms",
    "probe_rtt_p99_ms",
    "wall_time_s",
    "seed",
    "ccbench_version",
    "status",
    "error",
    "kernel_version",
    "events",
    "data_packets",
]
# docs/results.md (the contract between the backends and the analysis / plots / report)
DESIGN_SERIES = [
    "run_id",
    "flow_id",
    "group",
    "cc",
    "t_s",
    "goodput_bps",
    "cwnd_pkts",
    "rtt_ms",
    "pacing_bps",
    "inflight_pkts",
    "cc_state",
    "bw_est_bps",
    "min_rtt_ms",
    "delivery_rate_bps",
    "retransmits",
]
DESIGN_LINK_SERIES = [
    "run_id",
    "t_s",
    "queue_bytes",
    "probe_rtt_ms",
    "sojourn_ms",
    "probe_rtt_p50_ms",
    "probe_rtt_p95_ms",
]


def scenario(**kw):
    d = minimal_dict(flows=[{"cc": "cubic", "count": 2}, {"cc": "reno"}])
    d.update(kw)
    return Scenario.from_dict(d)


def fake_result(sc, wall=0.5):
    rep = fake_report(sc.sim_config())
    run = dict(rep["run"])
    run.pop("duration_s")
    return build_result(sc, "sim", rep["flows"], rep["series"], run, wall, link_series=rep["link_series"])


def test_schema_has_design_columns():
    for names, schema in ((DESIGN_FLOWS, FLOWS_SCHEMA), (DESIGN_RUNS, RUNS_SCHEMA), (DESIGN_SERIES, SERIES_SCHEMA)):
        missing = set(names) - set(schema.names)
        assert not missing, missing
    # the series tables are exactly the documented columns (queue_bytes lives in link_series)
    assert SERIES_SCHEMA.names == DESIGN_SERIES
    assert LINK_SERIES_SCHEMA.names == DESIGN_LINK_SERIES


def test_results_doc_lists_every_column():
    """docs/results.md documents every column of every table."""
    from conftest import ROOT

    doc = (ROOT / "docs" / "results.md").read_text()
    for schema in (FLOWS_SCHEMA, RUNS_SCHEMA, SERIES_SCHEMA, LINK_SERIES_SCHEMA):
        for name in schema.names:
            assert f"`{name}`" in doc, name


def test_schema_types():
    assert FLOWS_SCHEMA.field("goodput_bps").type == pa.float64()
    assert FLOWS_SCHEMA.field("retransmits").type == pa.int64()
    assert FLOWS_SCHEMA.field("cc").type == pa.string()
    assert RUNS_SCHEMA.field("jain_index").type == pa.float64()
    assert RUNS_SCHEMA.field("status").type == pa.string()
    assert SERIES_SCHEMA.field("t_s").type == pa.float64()
    assert SERIES_SCHEMA.field("cwnd_pkts").type == pa.int64()
    assert LINK_SERIES_SCHEMA.field("queue_bytes").type == pa.int64()
    assert LINK_SERIES_SCHEMA.field("probe_rtt_ms").type == pa.float64()


def test_every_report_field_has_a_column():
    """What crates/sim/src/report/mod.rs sends is stored (no silently dropped measurement)."""
    rs = SIM_SRC / "report" / "mod.rs"
    assert set(rust_struct_fields(rs, "FlowSummary")) <= set(FLOWS_SCHEMA.names)
    # `wifi` is flattened into the run (serde flatten): its fields are the columns
    assert set(rust_struct_fields(rs, "RunSummary")) - {"duration_s", "wifi"} <= set(RUNS_SCHEMA.names)
    assert set(rust_struct_fields(rs, "WifiSummary")) <= set(RUNS_SCHEMA.names)
    assert set(rust_struct_fields(rs, "Series")) <= set(SERIES_SCHEMA.names)
    assert set(rust_struct_fields(rs, "LinkSeries")) <= set(LINK_SERIES_SCHEMA.names)


def test_build_result_fills_standard_columns():
    sc = scenario()
    r = fake_result(sc)
    assert list(r.flows.columns) == FLOWS_SCHEMA.names
    assert list(r.runs.columns) == RUNS_SCHEMA.names
    assert list(r.series.columns) == SERIES_SCHEMA.names
    assert len(r.flows) == 3 and len(r.runs) == 1 and len(r.series) == 6
    assert r.run_id == make_run_id(sc, "sim") and len(r.run_id) == 16
    assert (r.flows["run_id"] == r.run_id).all() and (r.series["run_id"] == r.run_id).all()
    assert r.flows["scenario_hash"].iloc[0] == sc.scenario_hash()
    assert r.flows["group"].tolist() == [0, 0, 1]
    # the series carries each flow's group and algorithm, taken from the scenario
    by_flow = r.series.groupby("flow_id")[["group", "cc"]].first()
    assert by_flow["group"].tolist() == [0, 0, 1] and by_flow["cc"].tolist() == ["cubic", "cubic", "reno"]
    assert list(r.link_series.columns) == LINK_SERIES_SCHEMA.names
    assert r.link_series["queue_bytes"].tolist() == [1500, 0]
    assert pd.isna(r.link_series["probe_rtt_ms"].iloc[0]) and r.link_series["probe_rtt_ms"].iloc[1] == 21.5
    assert (r.link_series["run_id"] == r.run_id).all()
    assert r.flows["rate_mbps"].iloc[0] == 10.0 and r.flows["rtt_ms"].iloc[0] == 20.0
    run = r.runs.iloc[0]
    assert run["status"] == "ok" and run["events"] == 12345 and run["n_flows"] == 3
    # goodputs 1, 2, 3 Mbit/s
    assert run["aggregate_goodput_bps"] == 6e6
    assert run["jain_index"] == pytest.approx(36 / (3 * 14))
    # groups: cubic 1+2 = 3, reno 3 → equal
    assert run["jain_index_groups"] == pytest.approx(1.0)
    assert pd.isna(run["kernel_version"])


def test_jain_groups_null_with_one_group():
    sc = Scenario.from_dict(minimal_dict(flows=[{"cc": "cubic", "count": 3}]))
    assert fake_result(sc).runs_table.column("jain_index_groups")[0].as_py() is None


def test_build_result_makes_nan_null_and_fills_from_scenario():
    sc = scenario()
    rows = [{"flow_id": 0, "goodput_bps": float("nan"), "rtt_mean_ms": float("inf"), "unknown": 1}]
    r = build_result(sc, "kernel", rows, None, {"kernel_version": "6.8.0"}, 1.0)
    row = r.flows_table.to_pylist()[0]
    assert row["goodput_bps"] is None and row["rtt_mean_ms"] is None
    assert row["cc"] == "cubic" and row["rwnd_bytes"] == DEFAULT_RWND_BYTES and row["group"] == 0
    assert "unknown" not in row
    assert r.runs_table.to_pylist()[0]["kernel_version"] == "6.8.0"
    assert r.series_table.num_rows == 0 and r.link_series_table.num_rows == 0
    assert r.run_id != make_run_id(sc, "sim")


def test_json_dict():
    r = fake_result(scenario())
    d = r.to_json_dict()
    assert set(d) == {"runs", "flows"}
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["flows"][2]["goodput_bps"] == 3e6 and back["flows"][0]["rtt_p99_ms"] is None
    assert back["runs"][0]["jain_index_groups"] == pytest.approx(1.0)


def test_failed_result():
    r = failed_result(scenario(), "sim", "boom", 0.1)
    assert not r.ok and r.status == "failed" and r.error == "boom"
    assert r.flows_table.num_rows == 0 and r.runs_table.num_rows == 1


def test_parquet_is_byte_identical_for_identical_inputs(tmp_path):
    sc = scenario()
    a, b = fake_result(sc, wall=0.5), fake_result(sc, wall=0.7)
    pa_, pb = a.write_parquet(tmp_path / "a"), b.write_parquet(tmp_path / "b")
    for name in ("flows", "series", "link_series"):
        assert pa_[name].read_bytes() == pb[name].read_bytes(), name
    # runs differ only in wall_time_s …
    ra, rb = pq.read_table(pa_["runs"]), pq.read_table(pb["runs"])
    assert ra.drop(["wall_time_s"]).equals(rb.drop(["wall_time_s"]))
    assert ra.column("wall_time_s")[0].as_py() == 0.5
    # … and are byte-identical too when wall time is left out
    qa = a.write_parquet(tmp_path / "qa", wall_time=False)
    qb = b.write_parquet(tmp_path / "qb", wall_time=False)
    for name in ("flows", "runs", "series", "link_series"):
        assert qa[name].read_bytes() == qb[name].read_bytes(), name
    # and the data read back has the schema's types
    assert pq.read_table(pa_["flows"]).schema.field("retransmits").type == pa.int64()
    # a different measurement gives different bytes
    c = fake_result(scenario(seed=2))
    pc = c.write_parquet(tmp_path / "c")
    assert pc["flows"].read_bytes() != pa_["flows"].read_bytes()


def test_sim_determinism_end_to_end(tmp_path):
    """Same scenario and seed → byte-identical Parquet; another seed under loss → different."""
    import ccbench

    d = minimal_dict(duration="3s", bottleneck={"rate": "10Mbit", "rtt": "20ms", "loss": "1%"}, probe={"ping": "50ms"})
    a = ccbench.run(d, raise_on_error=False)
    assert a.ok, a.error
    b = ccbench.run(d, raise_on_error=False)
    c = ccbench.run(dict(d, seed=2), raise_on_error=False)
    fa = a.write_parquet(tmp_path / "a", wall_time=False)
    fb = b.write_parquet(tmp_path / "b", wall_time=False)
    fc = c.write_parquet(tmp_path / "c", wall_time=False)
    for name in ("flows", "runs", "series", "link_series"):
        assert fa[name].read_bytes() == fb[name].read_bytes(), name
    assert a.flows_table.drop(["run_id", "scenario_hash", "seed"]) != c.flows_table.drop(
        ["run_id", "scenario_hash", "seed"]
    )
    assert fa["series"].read_bytes() != fc["series"].read_bytes()


# ---- analysis ---------------------------------------------------------------------------------


def test_jain_known_values():
    assert analysis.jain_index([5, 5, 5, 5]) == pytest.approx(1.0)
    for n in (2, 4, 10):
        assert analysis.jain_index([1.0] + [0.0] * (n - 1)) == pytest.approx(1 / n)
    assert analysis.jain_index([1, 3]) == pytest.approx(16 / 20)
    assert analysis.jain_index([]) is None
    assert analysis.jain_index([0, 0]) is None
    assert analysis.jain_index([1, float("nan"), 1]) == pytest.approx(1.0)


def test_cv_and_confidence_interval():
    assert analysis.coefficient_of_variation([2, 2, 2]) == 0
    assert analysis.coefficient_of_variation([1, 2, 3]) == pytest.approx(0.5)
    assert analysis.coefficient_of_variation([1]) is None
    ci = analysis.mean_ci([1, 2, 3, 4])
    # t_{0.975, 3} = 3.182446; s = 1.290994; half = 3.182446 * 1.290994 / 2
    assert ci.mean == 2.5 and ci.n == 4
    assert ci.half_width == pytest.approx(3.182446305 * 1.290994449 / 2, rel=1e-7)
    assert analysis.mean_ci([7]).lo is None and analysis.mean_ci([]).mean is None


@pytest.mark.parametrize(
    "df, q, t",
    [
        (1, 0.975, 12.7062047),
        (2, 0.975, 4.30265273),
        (5, 0.975, 2.57058184),
        (10, 0.95, 1.81246112),
        (30, 0.995, 2.74999565),
        (100, 0.975, 1.98397152),
    ],
)
def test_t_quantiles(df, q, t):
    assert analysis.t_quantile(q, df) == pytest.approx(t, rel=1e-6)
    assert analysis.t_cdf(t, df) == pytest.approx(q, abs=1e-9)


def test_mathis():
    # 1448 B, 50 ms, 1 %: 1448*8/0.05*sqrt(150) = 2.837 Mbit/s
    assert analysis.mathis_goodput_bps(0.05, 0.01) == pytest.approx(2_837_489, rel=1e-6)
    assert analysis.mathis_goodput_bps(0.05, 0.0) is None


def test_ratio_table_and_summarise():
    df = pd.DataFrame(
        {
            "loss_pct": [0.1, 0.1, 1, 1, 0.1, 1],
            "cc": ["cubic", "bbr", "cubic", "bbr", "cubic", "bbr"],
            "goodput_bps": [10.0, 20.0, 2.0, 16.0, 10.0, 16.0],
        }
    )
    t = analysis.ratio_table(df, "loss_pct", "cc", "goodput_bps", baseline="cubic")
    assert t.loc[0.1, "bbr"] == 2.0 and t.loc[1, "bbr"] == 8.0 and (t["cubic"] == 1.0).all()
    s = analysis.summarise(df, ["cc", "loss_pct"], "goodput_bps")
    row = s[(s.cc == "cubic") & (s.loss_pct == 0.1)].iloc[0]
    assert row["n"] == 2 and row["mean"] == 10.0 and row["cv"] == 0.0
    with pytest.raises(KeyError):
        analysis.ratio_table(df, "loss_pct", "cc", "goodput_bps", baseline="reno")


def test_sim_backend_converts_a_report(fake_sim):
    """backends.sim.run turns a report.rs-shaped answer (conftest.fake_report) into the tables."""
    import ccbench

    r = ccbench.run(scenario())
    assert fake_sim and fake_sim[0]["flows"][2]["cc"] == "reno"
    assert r.ok and r.flows["goodput_bps"].tolist() == [1e6, 2e6, 3e6]
    assert r.runs["data_packets"].iloc[0] == 678 and r.runs["wall_time_s"].iloc[0] >= 0
    assert math.isclose(r.runs["link_utilisation"].iloc[0], 0.9)


def test_sim_link_series_shares_the_sample_instants_and_sees_the_probe():
    """The link is sampled at every sample instant (also before a flow starts); with a probe
    every 20 ms each 100 ms interval holds a reply whose RTT is at least the base RTT."""
    import ccbench

    d = minimal_dict(duration="2s", start_jitter="0s", probe={"ping": "20ms"}, flows=[{"cc": "cubic", "start": "0.5s"}])
    r = ccbench.run(d)
    ls, s = r.link_series, r.series
    assert ls["t_s"].tolist() == pytest.approx([0.1 * k for k in range(1, 21)])
    assert set(s["t_s"].round(9)) <= set(ls["t_s"].round(9)) and s["t_s"].min() == pytest.approx(0.5)  # started at 0.5
    assert ls["probe_rtt_ms"].notna().all() and (ls["probe_rtt_ms"] >= 20.0).all()
    # before the flow starts the path is idle: empty queue, probe at the base RTT (+ < 1 ms)
    idle = ls[ls["t_s"] < 0.5]
    assert (idle["queue_bytes"] == 0).all() and (idle["probe_rtt_ms"] < 21.0).all()
    # without a probe the column is null
    r2 = ccbench.run(minimal_dict(duration="1s"))
    assert r2.link_series["probe_rtt_ms"].isna().all() and len(r2.link_series) == 10


def test_start_jitter_makes_repeats_differ_without_random_loss():
    """Without loss or jitter the simulator is deterministic in the seed's other uses; the
    start offsets are what make two seeds give different runs — and start_jitter = 0 makes
    them identical again."""
    import ccbench

    d = minimal_dict(duration="2s", flows=[{"cc": "cubic", "count": 2}])
    a, b = ccbench.run(dict(d, seed=1)), ccbench.run(dict(d, seed=2))
    assert a.flows["start_s"].tolist() != b.flows["start_s"].tolist()
    assert a.flows["goodput_bps"].tolist() != b.flows["goodput_bps"].tolist()
    z = dict(d, start_jitter="0s")
    a0, b0 = ccbench.run(dict(z, seed=1)), ccbench.run(dict(z, seed=2))
    assert a0.flows["goodput_bps"].tolist() == b0.flows["goodput_bps"].tolist()
    assert a0.flows["start_s"].tolist() == [0.0, 0.0]


def test_series_rows_get_group_and_cc_from_the_scenario():
    """The kernel backend hands series rows without group / cc: they come from the scenario."""
    sc = scenario()
    rows = [{"flow_id": 2, "t_s": 0.1, "cwnd_pkts": 10}, {"flow_id": 0, "t_s": 0.1, "cwnd_pkts": 12}]
    r = build_result(
        sc, "kernel", [], rows, None, 1.0, link_series=[{"t_s": 0.1, "queue_bytes": 3000, "probe_rtt_ms": None}]
    )
    assert r.series["group"].tolist() == [1, 0] and r.series["cc"].tolist() == ["reno", "cubic"]
    assert r.series["cwnd_pkts"].tolist() == [10, 12] and r.series["rtt_ms"].isna().all()
    assert r.link_series["queue_bytes"].tolist() == [3000]


def test_sim_cc_state_uses_the_kernel_vocabulary():
    """cc_state has the same spelling on both backends: Linux's CA states and tcp_bbr.c's
    modes in lower case (backends/kernel.py: diag.CA_STATES, bbr_mode)."""
    import ccbench
    from ccbench.backends.kernel.diag import CA_STATES

    r = ccbench.run(
        minimal_dict(
            duration="3s",
            bottleneck={"rate": "10Mbit", "rtt": "20ms", "loss": "1%"},
            flows=[{"cc": "bbr"}, {"cc": "cubic"}],
        )
    )
    allowed = set(CA_STATES.values()) | {"startup", "drain", "probe_bw", "probe_rtt"}
    states = set(r.series["cc_state"])
    assert states <= allowed, states
    assert {"startup", "open"} <= states


# ---- the columnar result path (runs of up to 100 000 flows) --------------------------------


def _sim_ids_and_tables(result):
    return [getattr(result, f"{t}_table") for t in ("flows", "runs", "series", "link_series", "counters")]


def test_columnar_report_gives_the_tables_of_the_json_report():
    """run_columns (Arrow buffers) and run_json (JSON text) of one scenario give equal tables:
    nulls (BBR-only columns, fct of bulk flows, intervals without a probe reply), several
    groups, a late start, loss and a probe."""
    from ccbench import _sim
    from ccbench.backends import sim as simbackend

    sc = Scenario.from_dict(
        minimal_dict(
            duration="2s",
            probe={"ping": "150ms"},
            bottleneck={"rate": "20Mbit", "rtt": "30ms", "loss": "1%"},
            flows=[{"cc": "cubic", "count": 2}, {"cc": "bbr", "start": "1.5s"}, {"cc": "reno", "size": "100KB"}],
        )
    )
    columnar = simbackend.run(sc)

    class JsonOnly:  # an extension built before run_columns
        run_json = staticmethod(_sim.run_json)

    orig = simbackend._sim
    simbackend._sim = lambda: JsonOnly
    try:
        from_json = simbackend.run(sc)
    finally:
        simbackend._sim = orig
    assert columnar.ok and from_json.ok
    for a, b in zip(_sim_ids_and_tables(columnar), _sim_ids_and_tables(from_json)):
        if "wall_time_s" in a.column_names:
            a, b = a.drop_columns(["wall_time_s"]), b.drop_columns(["wall_time_s"])
        assert a.equals(b), a.schema.names
    f = columnar.flows_table.to_pydict()
    assert f["cc"] == ["cubic", "cubic", "bbr", "reno"] and f["group"] == [0, 0, 1, 2]
    assert f["fct_s"][3] is not None and f["fct_s"][0] is None
    s = columnar.series
    assert s["bw_est_bps"].isna().any() and s["bw_est_bps"].notna().any()  # BBR's only
    assert set(s["cc"]) == {"cubic", "bbr", "reno"} and columnar.link_series["probe_rtt_ms"].notna().any()
    assert columnar.links == from_json.links and columnar.links


def test_flow_specs_match_expanded_flows():
    """build_result takes group / cc / size / rwnd per flow id from the scenario's groups
    without expanding them into objects: the same values as expanded_flows()."""
    from ccbench.results.run_result import _flow_specs

    sc = Scenario.from_dict(
        minimal_dict(
            flows=[
                {"cc": "cubic", "count": 3},
                {"cc": "bbr", "size": "1MB", "rwnd": "64KB", "direction": "reverse"},
                {"cc": "reno", "count": 2},
            ]
        )
    )
    specs = {k: v.to_pylist() for k, v in _flow_specs(sc).items()}
    ex = sc.expanded_flows()
    assert [f.id for f in ex] == list(range(len(ex)))
    assert specs == {
        "group": [f.group for f in ex],
        "cc": [f.cc for f in ex],
        "direction": [f.direction for f in ex],
        "size_bytes": [f.size_bytes for f in ex],
        "rwnd_bytes": [f.rwnd_bytes for f in ex],
    }
    assert specs["direction"] == ["forward"] * 3 + ["reverse"] + ["forward"] * 2
    assert specs["size_bytes"][3] == 1_000_000 and specs["group"] == [0, 0, 0, 1, 2, 2]


def test_build_result_takes_rows_columns_or_an_arrow_table_alike():
    """Flow rows (the kernel backend), a mapping of columns and an Arrow table give the same
    tables: unsorted ids sorted, NaN / inf → null, group / cc filled from the scenario."""
    sc = scenario()
    rows = [
        {"flow_id": 2, "goodput_bps": 3e6, "rtt_mean_ms": float("inf"), "completed": True},
        {"flow_id": 0, "goodput_bps": float("nan"), "rtt_mean_ms": 21.0, "completed": False},
        {"flow_id": 1, "goodput_bps": 1e6, "rtt_mean_ms": 22.0, "completed": None, "not_a_column": 1},
    ]
    series_rows = [
        {"flow_id": 2, "t_s": 0.1, "cwnd_pkts": 10, "rtt_ms": float("nan")},
        {"flow_id": 0, "t_s": 0.1, "cwnd_pkts": 12, "rtt_ms": 20.0},
    ]
    cols = {k: [r.get(k) for r in rows] for k in ("flow_id", "goodput_bps", "rtt_mean_ms", "completed")}
    series_cols = {k: [r[k] for r in series_rows] for k in series_rows[0]}
    arrow = pa.table(
        {
            "flow_id": pa.array([2, 0, 1], pa.uint32()),
            "goodput_bps": [3e6, float("nan"), 1e6],
            "rtt_mean_ms": [float("inf"), 21.0, 22.0],
            "completed": [True, False, None],
        }
    )
    results = [
        build_result(sc, "kernel", f, s, {}, None)
        for f, s in ((rows, series_rows), (cols, series_cols), (arrow, pa.table(series_cols)))
    ]
    first = results[0]
    fl = first.flows_table.to_pydict()
    assert fl["flow_id"] == [0, 1, 2] and fl["goodput_bps"] == [None, 1e6, 3e6]
    assert fl["rtt_mean_ms"] == [21.0, 22.0, None] and fl["cc"] == ["cubic", "cubic", "reno"]
    assert fl["group"] == [0, 0, 1] and fl["rwnd_bytes"][0] > 0
    se = first.series_table.to_pydict()
    assert se["cc"] == ["reno", "cubic"] and se["group"] == [1, 0] and se["rtt_ms"] == [None, 20.0]
    run = first.runs_table.to_pylist()[0]
    assert run["aggregate_goodput_bps"] == 4e6 and run["jain_index"] == pytest.approx(16 / 20)
    assert run["jain_index_groups"] == pytest.approx(analysis.jain_index([1e6, 3e6]))
    for other in results[1:]:
        for a, b in zip(_sim_ids_and_tables(first), _sim_ids_and_tables(other)):
            assert a.equals(b), a.schema.names


def test_build_result_at_100000_flows_is_vectorised():
    """A run of 100 000 flows and a million series rows: build_result stays well under the
    ~17 s that one Python dict per row cost (it takes ~0.2 s; the bound leaves room for a
    loaded machine), and `run` prints a few lines, not 100 000."""
    import time

    import numpy as np

    from ccbench.cli import errors as cli_errors
    from ccbench.cli import run as cli

    n, samples = 100_000, 10
    sc = Scenario.from_dict(
        minimal_dict(duration="1s", flows=[{"cc": "cubic", "count": n // 2}, {"cc": "bbr", "count": n // 2}])
    )
    rng = np.random.default_rng(1)
    flows = pa.table(
        {
            "flow_id": pa.array(np.arange(n, dtype=np.uint32)),
            "goodput_bps": pa.array(rng.uniform(0, 1e6, n)),
            "retransmits": pa.array(np.full(n, 2, dtype=np.uint64)),
        }
    )
    fid = np.repeat(np.arange(n, dtype=np.uint32), samples)
    series = pa.table(
        {
            "flow_id": pa.array(fid),
            "t_s": pa.array(np.tile(np.arange(1, samples + 1) / 10, n)),
            "cwnd_pkts": pa.array(np.full(n * samples, 10, dtype=np.uint32)),
            "cc_state": pa.array(["open"] * (n * samples)),
        }
    )
    t0 = time.perf_counter()
    r = build_result(sc, "sim", flows, series, {}, 1.0)
    elapsed = time.perf_counter() - t0
    assert elapsed < 5.0, elapsed
    assert r.flows_table.num_rows == n and r.series_table.num_rows == n * samples
    assert r.series_table.column("cc")[-1].as_py() == "bbr" and r.series_table.column("group")[0].as_py() == 0
    assert r.runs_table.column("jain_index_groups")[0].as_py() is not None
    with cli_errors.console.capture() as cap:
        cli.print_result(r, sc)
    text = cap.get()
    assert f"{n - cli.MAX_FLOW_ROWS} more flows" in text and len(text.splitlines()) < 3 * cli.MAX_FLOW_ROWS


def test_run_columns_is_interruptible():
    """run_columns polls for signals like run_json: a handler's exception (here SIGALRM's)
    stops a run that would take far longer within a second or two."""
    import signal
    import time

    from ccbench import _sim

    class Alarm(Exception):
        pass

    def on_alarm(signum, frame):
        raise Alarm()

    sc = Scenario.from_dict(
        minimal_dict(duration="120s", bottleneck={"rate": "1Gbit", "rtt": "10ms"}, flows=[{"cc": "cubic", "count": 4}])
    )
    cfg = json.dumps(sc.sim_config())
    old = signal.signal(signal.SIGALRM, on_alarm)
    t0 = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(Alarm):
            _sim.run_columns(cfg)  # ~10 M data packets: several seconds without the alarm
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert time.perf_counter() - t0 < 2.5


def test_json_rows_cleans_floats_column_by_column():
    """json_rows (to_json_dict's rows) gives what a per-value json_safe gave: NaN / inf → None in
    float columns (also across chunks), every other value as it is."""
    from ccbench.results.schema import json_rows, json_safe

    t = pa.table(
        {
            "x": pa.chunked_array([[1.5, float("nan")], [float("-inf"), None]]),
            "s": ["a", "b", None, "d"],
            "n": pa.array([1, None, 3, 4], pa.int64()),
            "ok": [True, False, None, True],
        }
    )
    rows = json_rows(t)
    assert rows == [{k: json_safe(v) for k, v in r.items()} for r in t.to_pylist()]
    assert [r["x"] for r in rows] == [1.5, None, None, None] and rows[2]["n"] == 3 and rows[1]["ok"] is False
    assert json_rows(FLOWS_SCHEMA.empty_table()) == []


@pytest.mark.parametrize("flow_type", [pa.uint32(), pa.int64()])
def test_group_and_cc_fill_by_flow_id_valid_and_invalid_ids(flow_type):
    """series and flows rows get group / cc from the scenario by flow id: a column of valid ids
    (the simulator's: used as take() indices directly) and one with negative or out-of-range
    ids (null there, the valid rows filled alike) give the same values row for row."""
    sc = scenario()  # flows 0, 1: cubic (group 0); flow 2: reno (group 1)
    valid = [2, 0, 1, 1, 0]
    t = [0.1] * len(valid)
    good = build_result(
        sc,
        "sim",
        pa.table({"flow_id": pa.array([0, 1, 2], flow_type)}),
        pa.table({"flow_id": pa.array(valid, flow_type), "t_s": t}),
        {},
        None,
    )
    se = good.series_table.to_pydict()
    assert se["cc"] == ["reno", "cubic", "cubic", "cubic", "cubic"] and se["group"] == [1, 0, 0, 0, 0]
    assert good.flows_table.to_pydict()["cc"] == ["cubic", "cubic", "reno"]
    bad_ids = [2, 3, 3, 1] + ([-1] if flow_type == pa.int64() else [2**32 - 1])
    bad = build_result(sc, "sim", None, pa.table({"flow_id": pa.array(bad_ids, flow_type), "t_s": t}), {}, None)
    se = bad.series_table.to_pydict()
    assert se["cc"] == ["reno", None, None, "cubic", None] and se["group"] == [1, None, None, 0, None]


@pytest.mark.parametrize(("late_us", "warned"), [(None, False), (120.0, False), (200.0, False), (1500.0, True)])
def test_the_run_line_warns_when_the_emulator_released_packets_late(late_us, warned):
    """A kernel run whose emulator p99 lateness is over 200 µs gets a warning naming it and the
    host's CPU steal; a simulator run (null columns) and a faithful kernel run do not."""
    from ccbench.cli import errors as cli_errors
    from ccbench.cli import run as cli

    sc = Scenario.from_dict(minimal_dict(), source="test")
    flows = pa.table({"flow_id": pa.array([0], pa.uint32()), "goodput_bps": [1e6]})
    extra = {"emulator_late_p99_us": late_us, "host_steal_pct": None if late_us is None else 4.25}
    r = build_result(sc, "kernel", flows, pa.table({"flow_id": pa.array([], pa.uint32())}), extra, 1.0)
    assert r.runs_table.column("emulator_late_p99_us")[0].as_py() == late_us
    with cli_errors.console.capture() as cap:
        cli.print_result(r, sc)
    text = cap.get()
    assert (
        "warning: the emulator released 1 % of packets over 1.5 ms late; the host took 4.2 % of the CPU" in text
    ) == warned
    assert ("warning" in text) == warned
