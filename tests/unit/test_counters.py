"""The `counters` table (TCP MIB counter deltas per side, docs/results.md): schema, build_result's
forms, the store round trip with swept columns, and the simulator backend's pass-through."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccbench.results import TABLES
from ccbench.results.run_result import build_result, failed_result
from ccbench.results.schema import COUNTER_NAMES, COUNTER_SIDES, COUNTERS_SCHEMA
from ccbench.results.store import Store, load, query
from ccbench.scenario.model import Scenario
from conftest import ROOT, fake_report, minimal_dict

# the counters every backend reports (docs/results.md), in nstat's spelling
CONTRACT = [
    "TcpRetransSegs",
    "TcpOutSegs",
    "TcpInSegs",
    "TcpExtTCPLossProbes",
    "TcpExtTCPLossProbeRecovery",
    "TcpExtTCPSACKReorder",
    "TcpExtTCPDSACKRecv",
    "TcpExtTCPDSACKOldSent",
    "TcpExtTCPDSACKOfoSent",
    "TcpExtTCPDSACKUndo",
    "TcpExtTCPFullUndo",
    "TcpExtTCPPartialUndo",
    "TcpExtTCPLossUndo",
    "TcpExtTCPSpuriousRTOs",
    "TcpExtTCPTimeouts",
    "TcpExtTCPFastRetrans",
    "TcpExtTCPLostRetransmit",
    "TcpExtTCPSackRecovery",
    "TcpExtPAWSEstab",
    "TcpExtTCPOFOQueue",
    "TcpExtTCPOFODrop",
    "TcpExtDelayedACKs",
    # HyStart's slow-start exits, a mechanism behind CUBIC's losses
    "TcpExtTCPHystartTrainDetect",
    "TcpExtTCPHystartTrainCwnd",
    "TcpExtTCPHystartDelayDetect",
    "TcpExtTCPHystartDelayCwnd",
    # ECN: CE-marked segments delivered, CE-marked packets received
    "TcpExtTCPDeliveredCE",
    "IpExtInCEPkts",
]


def scenario(**kw) -> Scenario:
    return Scenario.from_dict(minimal_dict(**kw), source="counters-test.toml")


def rust_counters(**sender) -> list[dict]:
    """The report.rs form: every key present, unmodelled ones null."""
    snd = {n: None for n in COUNTER_NAMES}
    snd.update({"TcpRetransSegs": 12, "TcpOutSegs": 1000, "TcpExtTCPTimeouts": 0}, **sender)
    rcv = {n: None for n in COUNTER_NAMES}
    rcv.update({"TcpInSegs": 990, "TcpExtPAWSEstab": 7, "TcpExtTCPOFOQueue": 40})
    return [{"side": "sender", **snd}, {"side": "receiver", **rcv}]


def result(sc=None, counters=None):
    sc = sc or scenario()
    rows = [{"flow_id": 0, "goodput_bps": 5e6, "retransmits": 12}]
    return build_result(sc, "sim", rows, None, {}, 0.1, counters=rust_counters() if counters is None else counters)


# ---- schema --------------------------------------------------------------------------------


def test_names_are_the_contract_once_each_and_the_schema_is_fixed():
    assert list(COUNTER_NAMES) == CONTRACT
    assert len(set(COUNTER_NAMES)) == len(COUNTER_NAMES)
    assert COUNTERS_SCHEMA.names == ["run_id", "side", *CONTRACT]
    assert all(COUNTERS_SCHEMA.field(n).type == pa.int64() for n in COUNTER_NAMES)
    assert not COUNTERS_SCHEMA.field("run_id").nullable and not COUNTERS_SCHEMA.field("side").nullable
    assert COUNTER_SIDES == ("sender", "receiver") and "counters" in TABLES


def test_docs_describe_every_counter_and_the_table():
    doc = (ROOT / "docs" / "results.md").read_text()
    assert "## `counters`" in doc
    for name in COUNTERS_SCHEMA.names:
        assert f"`{name}`" in doc, name


def test_build_result_takes_the_rust_list_form():
    r = result()
    t = r.counters_table
    assert t.schema == COUNTERS_SCHEMA and t.num_rows == 2
    df = r.counters
    assert list(df["side"]) == ["sender", "receiver"] and (df["run_id"] == r.run_id).all()
    snd, rcv = df.iloc[0], df.iloc[1]
    assert snd["TcpRetransSegs"] == 12 and snd["TcpExtTCPTimeouts"] == 0
    assert rcv["TcpExtPAWSEstab"] == 7
    # null stays null (not 0) and the column keeps its integer type
    assert df["TcpExtTCPLossProbes"].isna().all() and str(df["TcpExtTCPLossProbes"].dtype) == "Int64"


def test_other_forms_missing_keys_and_order():
    sc = scenario()
    a = build_result(
        sc, "sim", [], None, {}, 0.1, counters={"receiver": {"TcpInSegs": 3}, "sender": {"TcpOutSegs": 4, "Bogus": 1}}
    )
    assert a.counters_table.column("side").to_pylist() == ["sender", "receiver"]
    assert a.counters["TcpOutSegs"].tolist()[0] == 4 and a.counters["TcpRetransSegs"].isna().all()
    b = build_result(sc, "sim", [], None, {}, 0.1, counters=a.counters_table)
    assert b.counters_table.equals(a.counters_table)
    c = build_result(sc, "sim", [], None, {}, 0.1, counters=a.counters)
    assert c.counters_table.equals(a.counters_table)
    # no counters: no rows, same schema; a failed run has none either
    assert build_result(sc, "sim", [], None, {}, 0.1).counters_table.num_rows == 0
    f = failed_result(sc, "sim", "boom", 0.1)
    assert f.counters_table.num_rows == 0 and f.counters_table.schema == COUNTERS_SCHEMA


@pytest.mark.parametrize(
    "bad, words",
    [
        ([{"side": "client", "TcpInSegs": 1}], "side 'client'"),
        ([{"side": "sender", "TcpInSegs": 1.5}], "TcpInSegs"),
        ([{"side": "sender"}, {"side": "sender"}], "more than one row"),
    ],
)
def test_bad_counters_are_refused_clearly(bad, words):
    with pytest.raises(ValueError, match=words):
        build_result(scenario(), "sim", [], None, {}, 0.1, counters=bad)


# ---- store ---------------------------------------------------------------------------------


def test_store_round_trip_with_swept_columns_and_repeat(tmp_path):
    st = Store(tmp_path)
    st.prepare()
    runs = []
    for rep, loss in ((0, "0%"), (1, "1%")):
        r = result(scenario(seed=rep + 1), counters=rust_counters(TcpRetransSegs=10 + rep))
        st.write(
            r.run_id,
            r.runs_table,
            r.flows_table,
            r.series_table,
            {"bottleneck.loss": loss, "repeat": rep},
            link_series=r.link_series_table,
            counters=r.counters_table,
        )
        runs.append(r)
    for r in runs:
        p = tmp_path / "counters" / f"{r.run_id}.parquet"
        assert p.is_file()
        t = pq.read_table(p)
        assert t.column_names == COUNTERS_SCHEMA.names + ["bottleneck.loss", "repeat"]
    res = load(tmp_path)
    c = res.counters
    assert len(c) == 4 and set(c["run_id"]) == {r.run_id for r in runs}
    assert sorted(c["repeat"].unique().tolist()) == [0, 1] and str(c["repeat"].dtype) == "Int64"
    snd = c[c["side"] == "sender"].sort_values("repeat")
    assert snd["TcpRetransSegs"].tolist() == [10, 11]
    assert snd["bottleneck.loss"].tolist() == ["0%", "1%"]
    for n in COUNTER_NAMES:
        assert str(c[n].dtype) == "Int64", n
    # the DuckDB view
    q = query(tmp_path, "SELECT sum(\"TcpRetransSegs\") AS r, count(*) AS n FROM counters WHERE side = 'sender'")
    assert q["r"].tolist() == [21] and q["n"].tolist() == [2]


def test_save_run_and_old_stores_without_counters(tmp_path):
    r = result()
    r.save(tmp_path / "s")
    res = load(tmp_path / "s")
    assert len(res.counters) == 2 and res.counters["TcpExtPAWSEstab"].tolist()[1] == 7
    # a store written before the table existed: an empty table with the schema's columns
    import shutil

    shutil.rmtree(tmp_path / "s" / "counters")
    old = load(tmp_path / "s")
    assert len(old.counters) == 0 and list(old.counters.columns) == COUNTERS_SCHEMA.names
    assert len(query(tmp_path / "s", "SELECT * FROM counters")) == 0


def test_orphan_counters_are_ignored(tmp_path):
    st = Store(tmp_path)
    st.prepare()
    r = result()
    st.write(r.run_id, r.runs_table, r.flows_table, None, counters=r.counters_table)
    orphan = result(scenario(seed=9))
    st._write_atomic(orphan.counters_table, st.path("counters", orphan.run_id))
    assert set(load(tmp_path).counters["run_id"]) == {r.run_id}
    assert set(query(tmp_path, "SELECT run_id FROM counters")["run_id"]) == {r.run_id}


def test_write_parquet_flat_layout_has_counters(tmp_path):
    paths = result().write_parquet(tmp_path)
    assert pq.read_table(paths["counters"]).num_rows == 2


# ---- simulator backend -----------------------------------------------------------------------


def _fake_sim(monkeypatch, counters):
    from ccbench.backends import sim as simbackend

    class Fake:
        @staticmethod
        def run_json(text: str) -> str:
            rep = fake_report(json.loads(text))
            if counters is not None:
                rep["counters"] = counters
            return json.dumps(rep)

        @staticmethod
        def algorithms_json() -> str:
            from ccbench import _sim

            return _sim.algorithms_json()

    monkeypatch.setattr(simbackend, "_sim", lambda: Fake)


def test_sim_backend_passes_the_report_counters_through(monkeypatch):
    from ccbench.backends import sim

    _fake_sim(monkeypatch, rust_counters())
    r = sim.run(scenario())
    col = r.counters["TcpRetransSegs"]
    assert r.counters["side"].tolist() == ["sender", "receiver"]
    assert col.iloc[0] == 12 and col.isna().iloc[1]
    assert r.counters["TcpExtPAWSEstab"].iloc[1] == 7


def test_sim_backend_without_counters_gives_two_null_rows(monkeypatch):
    from ccbench.backends import sim

    _fake_sim(monkeypatch, None)
    r = sim.run(scenario())
    assert r.counters["side"].tolist() == ["sender", "receiver"]
    assert r.counters[list(COUNTER_NAMES)].isna().all().all()


# ---- the kernel's MIB files ------------------------------------------------------------------

SNMP = """Ip: Forwarding DefaultTTL InReceives
Ip: 2 64 100
Tcp: RtoAlgorithm RtoMin MaxConn RetransSegs OutSegs
Tcp: 1 200 -1 12 3400
Udp: InDatagrams
Udp: 5
"""
NETSTAT = """TcpExt: SyncookiesSent PAWSEstab DelayedACKs
TcpExt: 0 7 19
IpExt: InNoRoutes
IpExt: 0
"""


def test_parse_mib_pairs_names_with_values():
    from ccbench.backends.kernel.mib import parse_mib

    m = parse_mib(SNMP + NETSTAT)
    assert m["TcpRetransSegs"] == 12 and m["TcpOutSegs"] == 3400 and m["TcpMaxConn"] == -1
    assert m["TcpExtPAWSEstab"] == 7 and m["TcpExtDelayedACKs"] == 19 and m["IpExtInNoRoutes"] == 0
    assert m["IpInReceives"] == 100 and m["UdpInDatagrams"] == 5
    # a truncated read (a names line without its values) is skipped, the rest still pairs up
    assert parse_mib("Tcp: A B\nTcpExt: X\nTcpExt: 4\n") == {"TcpExtX": 4}


def test_mib_delta_is_null_for_a_counter_the_kernel_lacks():
    from ccbench.backends.kernel.backend import _counter_rows
    from ccbench.backends.kernel.mib import mib_delta

    d = mib_delta(
        {"TcpRetransSegs": 2, "TcpExtPAWSEstab": 1},
        {"TcpRetransSegs": 9, "TcpExtPAWSEstab": 1},
        ["TcpRetransSegs", "TcpExtPAWSEstab", "TcpExtNotHere"],
    )
    assert d == {"TcpRetransSegs": 7, "TcpExtPAWSEstab": 0, "TcpExtNotHere": None}
    rows = _counter_rows(
        {"sender": {"TcpRetransSegs": 2}, "receiver": {}}, {"sender": {"TcpRetransSegs": 5}, "receiver": {}}
    )
    assert [r["side"] for r in rows] == ["sender", "receiver"]
    assert rows[0]["TcpRetransSegs"] == 3 and rows[0]["TcpOutSegs"] is None
    assert all(v is None for k, v in rows[1].items() if k != "side")
    # a reading that failed: every counter null, the rows still there
    assert all(v is None for r in _counter_rows(None, None) for k, v in r.items() if k != "side")


def test_read_mib_of_this_namespace_has_the_counters():
    from ccbench.backends.kernel.mib import read_mib

    m = read_mib()
    missing = [n for n in COUNTER_NAMES if n not in m]
    # every one of them exists on any kernel of the last decade
    assert not missing, missing


def test_the_simulator_reports_exactly_the_counter_names():
    """The real simulator core: report.rs `counters` has both sides and exactly COUNTER_NAMES
    (an integer where modelled, null where not), and they arrive in the table unchanged."""
    import ccbench
    from ccbench import _sim

    sc = scenario(duration="3s", bottleneck={"rate": "10Mbit", "rtt": "20ms", "loss": "1%"})
    rep = json.loads(_sim.run_json(json.dumps(sc.sim_config())))
    assert "counters" in rep, "this simulator build has no counters"
    assert [r["side"] for r in rep["counters"]] == ["sender", "receiver"]
    for r in rep["counters"]:
        assert set(r) == {"side", *COUNTER_NAMES}, set(r) ^ {"side", *COUNTER_NAMES}
        assert all(v is None or (type(v) is int and v >= 0) for k, v in r.items() if k != "side")
        # the unmodelled ones are the ones docs/results.md names
        assert {k for k, v in r.items() if v is None} == {"TcpExtTCPSpuriousRTOs", "TcpExtTCPOFODrop"}
    res = ccbench.run(sc)
    snd = res.counters.iloc[0]
    assert snd["TcpRetransSegs"] == rep["counters"][0]["TcpRetransSegs"] > 0
    assert snd["TcpRetransSegs"] == res.flows["retransmits"].sum()
