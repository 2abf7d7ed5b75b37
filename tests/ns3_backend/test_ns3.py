"""The ns-3 backend: the same scenario on ns-3 3.44 through python/ccbench/backends/ns3/ccbench_ns3.cc.

Needs the ``ns3`` extra (``make ns3``: pip install --no-deps ns3==3.44.post0) and g++; `make test`
installs it, so CI runs these. Every run is a few simulated seconds (well under a second of ns-3
each); the first test of a machine compiles the program (~5–15 s, cached afterwards).
"""

from __future__ import annotations

import json

import pytest

from ccbench import backends
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario

ns3 = backends.get_backend("ns3")
_why = ns3.problem()
pytestmark = pytest.mark.skipif(_why is not None, reason=f"ns3 backend unavailable: {_why}")


@pytest.fixture(scope="module", autouse=True)
def built():
    """Compile once for the module (a failed build fails here, with the compiler's message)."""
    return ns3.binary()


def scenario(duration="3s", **over) -> Scenario:
    d = {
        "name": "t",
        "duration": duration,
        "seed": 1,
        "sample_interval": "500ms",
        "bottleneck": {"rate": "10Mbit", "rtt": "20ms", "buffer": "1bdp"},
        "flows": [{"cc": "cubic"}],
    }
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(d.get(k), dict):
            d[k] = {**d[k], **v}
        else:
            d[k] = v
    return Scenario.from_dict(d)


def run_ok(sc: Scenario):
    res = backends.run(sc, "ns3")
    assert res.status == "ok", res.error
    return res


def test_small_run_has_the_common_tables_columns_and_dtypes():
    sc = scenario(probe={"ping": "100ms"})
    res = run_ok(sc)
    ref = backends.run(sc, "sim")
    for table in ("flows", "runs", "series", "link_series", "counters"):
        got, want = getattr(res, table), getattr(ref, table)
        assert list(got.columns) == list(want.columns), table
        assert dict(got.dtypes) == dict(want.dtypes), table
    assert res.runs["backend"].tolist() == ["ns3"]
    f = res.flows.iloc[0]
    assert f["cc"] == "cubic" and f["flow_id"] == 0 and f["group"] == 0
    # measured, not invented: bytes, segments, RTT above the base RTT of 20 ms
    assert 0 < f["goodput_bps"] <= 10e6 * 1448 / 1500 * 1.001
    assert f["data_sent"] >= f["data_received"] > 0
    assert f["bytes_acked"] > 0.8 * f["goodput_bps"] * 3 / 8
    assert 20.0 <= f["rtt_min_ms"] <= f["rtt_p50_ms"] <= f["rtt_p95_ms"] < 20.0 + 2 * 25.0 + 5
    # series every 500 ms for the flow and the link; the probe replies are timed
    assert res.series["t_s"].tolist() == pytest.approx([0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
    assert res.link_series["t_s"].tolist() == pytest.approx([0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
    assert res.series["cwnd_pkts"].min() >= 1
    assert set(res.series["cc_state"]) <= {"open", "disorder", "cwr", "recovery", "loss"}
    assert res.link_series["probe_rtt_ms"].notna().all()
    assert res.runs["probe_rtt_p50_ms"].iloc[0] >= 20.0
    # what ns-3 cannot measure stays null (BBR's bandwidth estimate, the delivery rate)
    assert res.series["bw_est_bps"].isna().all() and res.series["delivery_rate_bps"].isna().all()
    counters = res.counters.set_index("side")
    assert counters.loc["sender", "TcpOutSegs"] >= f["data_sent"]
    assert counters.loc["receiver", "TcpInSegs"] >= f["data_received"]
    assert counters["TcpExtTCPDSACKRecv"].isna().all()  # not counted by ns-3


def test_one_cubic_flow_fills_an_idle_10mbit_link():
    """≥ 90 % of the rate once out of slow start, and the queue is the scenario's buffer: ns-3's
    defaults (536-byte segments, 128 KB socket buffers, FqCoDel and a 100-packet device queue)
    each break one of these."""
    sc = scenario("12s", sample_interval="1s", bottleneck={"rtt": "150ms"})
    res = run_ok(sc)
    s = res.series
    steady = s[s["t_s"] > 6.0]["goodput_bps"]
    assert steady.mean() >= 0.9 * 10e6, steady.tolist()
    assert res.runs["link_utilisation"].iloc[0] >= 0.85
    # segments of 1448 bytes: 1500-byte packets
    f = res.flows.iloc[0]
    assert f["bytes_acked"] / (f["data_sent"] - f["retransmits"]) == pytest.approx(1448, rel=0.05)
    # the drop-tail queue fills to the scenario's buffer (1 BDP = 187 500 bytes) and no further
    q = res.link_series["queue_bytes"]
    buf = sc.buffer_bytes
    assert q.max() <= buf
    assert q.max() >= 0.8 * buf


def test_loss_cells_run_end_to_end():
    # Bernoulli 1 % on data packets: losses counted, about 1 % of what was sent, retransmitted
    res = run_ok(scenario(bottleneck={"rate": "20Mbit", "loss": "1%"}))
    run = res.runs.iloc[0]
    f = res.flows.iloc[0]
    assert run["random_losses"] > 0 and f["retransmits"] > 0
    assert 0.004 < run["random_losses"] / f["data_sent"] < 0.025
    assert f["data_dropped"] >= run["random_losses"]  # loss + queue drops of this flow's data
    # Gilbert–Elliott on the ACK path: data packets are untouched, ACKs are lost
    res = run_ok(
        scenario(bottleneck={"rate": "20Mbit", "impair": "ack", "loss": {"model": "gilbert", "p": "1%", "r": "30%"}})
    )
    links = {lk["name"]: lk for lk in res.links}
    assert links["bottleneck/fwd"]["dropped_loss"] == 0
    assert links["bottleneck/rev"]["dropped_loss"] > 0
    assert res.flows["goodput_bps"].iloc[0] > 5e6


def test_two_flow_cell_runs_end_to_end():
    sc = scenario("4s", bottleneck={"rate": "20Mbit"}, flows=[{"cc": "cubic"}, {"cc": "bbr", "start": "500ms"}])
    res = run_ok(sc)
    fl = res.flows.set_index("flow_id")
    assert fl.loc[0, "cc"] == "cubic" and fl.loc[1, "cc"] == "bbr"
    assert (fl["goodput_bps"] > 1e6).all()
    assert fl.loc[1, "start_s"] >= 0.5
    delivered = (fl["goodput_bps"] * (fl["end_s"] - fl["start_s"])).sum()  # bits, over each flow's window
    assert delivered <= 20e6 * 4 * 1448 / 1500 * 1.001
    run = res.runs.iloc[0]
    assert 0.5 < run["jain_index"] <= 1.0 and 0.5 < run["jain_index_groups"] <= 1.0
    # BBR paces: its pacing rate is reported, CUBIC's (unpaced) is null
    s = res.series
    assert s[s["flow_id"] == 1]["pacing_bps"].notna().any()
    assert s[s["flow_id"] == 0]["pacing_bps"].isna().all()


def test_aqm_and_ns3_only_algorithm_run():
    res = run_ok(scenario(bottleneck={"aqm": "codel"}, flows=[{"cc": "westwood"}]))
    assert res.flows["cc"].iloc[0] == "westwood" and res.flows["goodput_bps"].iloc[0] > 5e6
    assert res.runs["sojourn_p95_ms"].iloc[0] < 30  # CoDel keeps the standing queue short
    # FQ-CoDel (its times are strings in ns-3) with two flows: both served
    res = run_ok(
        scenario(bottleneck={"aqm": "fq_codel", "aqm_params": {"quantum": "300B"}}, flows=[{"cc": "cubic", "count": 2}])
    )
    assert (res.flows["goodput_bps"] > 3e6).all()
    with pytest.raises(ScenarioError) as e:  # the simulator refuses what it does not have
        backends.check(scenario(flows=[{"cc": "westwood"}]), "sim")
    assert e.value.key == "flows.0.cc"


@pytest.mark.parametrize(
    "over, key",
    [
        ({"bottleneck": {"aqm": "fq"}}, "bottleneck.aqm"),
        ({"bottleneck": {"aqm": "pie", "aqm_params": {"bytemode": True}}}, "bottleneck.aqm_params.bytemode"),
        (
            {"bottleneck": {"aqm": "fq_codel", "aqm_params": {"memory_limit": "4MB"}}},
            "bottleneck.aqm_params.memory_limit",
        ),
    ],
)
def test_refuses_what_ns3_cannot_express_naming_the_key(over, key):
    sc = scenario(**over)
    with pytest.raises(ScenarioError) as e:
        backends.run(sc, "ns3")
    assert e.value.key == key
    assert key in str(e.value)


def test_refuses_link_kinds_it_has_no_model_for(monkeypatch):
    """A key of a link ns-3 has no model for (``bottleneck.link``, ``bottleneck.trace``) with a
    non-default value is refused by name: checked through the model's fields, so this holds
    whichever of those keys the scenario schema has."""
    sc = scenario()
    b = sc.bottleneck
    fields = dict(type(b).model_fields)
    from pydantic.fields import FieldInfo

    fields["link"] = FieldInfo(default="wire")
    monkeypatch.setattr(type(b), "model_fields", fields, raising=False)
    object.__setattr__(b, "link", "wifi")
    with pytest.raises(ScenarioError) as e:
        ns3.check(sc)
    assert e.value.key == "bottleneck.link" and '"wifi"' in str(e.value)


def test_algorithms_lists_ns3_under_our_names(capsys):
    rows = {r["name"]: r for r in backends.algorithms("ns3")}
    assert {"reno", "cubic", "bbr", "vegas", "westwood", "ledbat", "dctcp"} <= set(rows)
    assert "ns3::TcpLinuxReno" in rows["reno"]["notes"] and "ns3::TcpCubic" in rows["cubic"]["notes"]
    from ccbench.cli.algorithms import algorithms

    algorithms(as_json=True)
    out = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in out["ns3"]] == list(rows)


def test_validate_includes_ns3(tmp_path):
    """`ccbench validate --backends sim,kernel,ns3`: ns-3 runs every cell into its own store and
    its columns appear beside the simulator's (without the kernel here: it would run real
    namespaces as root; validate treats every backend alike)."""
    from ccbench import validate as v

    run = v.run_validate(
        "default", tmp_path / "o", backends="sim,ns3", quick=True, duration="2s", repeat=1, progress=False, workers=1
    )
    assert "ns3" in run.ran and "sim" in run.ran
    assert run.executed("ns3") == run.executed("sim") > 0 and run.all_ok
    assert "ns3" in run.comparison.backends
    assert (tmp_path / "o" / "ns3" / "runs").is_dir()
    assert "ns3" in (tmp_path / "o" / "validate.md").read_text()
