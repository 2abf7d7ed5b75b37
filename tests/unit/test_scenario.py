import json

import pytest
from pydantic import ValidationError

from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import DEFAULT_RWND_BYTES, Scenario, load_scenario
from ccbench.scenario.parse import parse_override_value, parse_overrides
from conftest import SIM_SRC, minimal_dict, rust_struct_fields

# The keys of crates/sim/src/config/mod.rs `SimConfig`, written out as the fixture the contract
# test checks against (and cross-checked against the Rust source below).
SIM_CONFIG_KEYS = {
    "": {"name", "duration_ns", "seed", "sample_interval_ns", "bottleneck", "access", "flows", "probe"},
    "bottleneck": {
        "rate_bps",
        "rtt_ns",
        "jitter_ns",
        "jitter_dist",
        "reorder",
        "loss",
        "impair",
        "buffer",
        "aqm",
        "aqm_params",
    },
    "access": {"rate_bps", "delay_ns"},
    "flow": {"id", "group", "cc", "start_ns", "rwnd_bytes", "size_bytes", "pacing", "timestamps"},
    "probe": {"ping_interval_ns"},
    # sim_config_grouped: the connections as flow_groups (crates/sim/src/config/flow_groups.rs)
    "grouped": {
        "name",
        "duration_ns",
        "seed",
        "sample_interval_ns",
        "bottleneck",
        "access",
        "flow_groups",
        "start_jitter_ns",
        "probe",
    },
    "flow_group": {"count", "cc", "start_ns", "stagger_ns", "rwnd_bytes", "size_bytes", "pacing", "timestamps"},
}

FULL = """
name = "full"
duration = "10s"
seed = 7
sample_interval = "50ms"

[bottleneck]
rate = "50Mbit"
rtt = "50ms"
jitter = "8ms"
jitter_dist = "normal"
reorder = false
loss = "0.1%"
impair = "both"
buffer = "1bdp"
aqm = "droptail"

[access]
rate = "1Gbit"
delay = "1ms"

[[flows]]
cc = "cubic"
count = 3
start = "0s+1s"
rwnd = "32MB"

[[flows]]
cc = "reno"
start = "2s"
size = "1MB"
pacing = true

[probe]
ping = "100ms"

[sweep]
"bottleneck.loss" = ["0%", "1%"]
repeat = 3
"""


@pytest.fixture
def full(write_toml):
    return load_scenario(write_toml(FULL))


def test_normalised_values(full):
    b = full.bottleneck
    assert full.duration_s == 10.0 and full.seed == 7 and full.sample_interval_s == 0.05
    assert b.rate_bps == 50_000_000 and b.rtt_s == 0.05 and b.jitter_s == 0.008
    assert b.jitter_dist == "normal" and b.reorder is False and b.impair == "both"
    assert b.loss.model == "bernoulli" and b.loss.p == pytest.approx(0.001)
    assert full.access.rate_bps == 10**9 and full.access.delay_s == 0.001
    assert full.flows[0].count == 3 and full.flows[0].start_s == 0 and full.flows[0].stagger_s == 1.0
    assert full.flows[0].rwnd_bytes == 32_000_000 and full.flows[1].size_bytes == 1_000_000
    assert full.flows[1].pacing is True and full.probe.ping_s == 0.1
    assert full.sweep == {"bottleneck.loss": ["0%", "1%"], "repeat": 3}


def test_defaults():
    sc = Scenario.from_dict({"bottleneck": {"rate": "10Mbit", "rtt": "10ms"}, "flows": [{"cc": "reno"}]})
    assert sc.duration_s == 30.0 and sc.seed == 1 and sc.sample_interval_s == 0.1
    b = sc.bottleneck
    assert b.jitter_s == 0 and b.jitter_dist == "uniform" and b.reorder is True
    assert b.loss.model == "none" and b.impair == "data" and b.aqm == "droptail" and b.trace == ""
    assert str(b.buffer) == "1bdp"
    assert sc.access.rate_bps is None and sc.access.delay_s == 0
    g = sc.flows[0]
    assert g.count == 1 and g.start_s == 0 and g.stagger_s == 0 and g.pacing is False
    # an untouched Linux host's largest window: tcp_rmem max 6 MiB × scaling ratio 160/256
    assert g.rwnd_bytes == DEFAULT_RWND_BYTES == 6 * 1024 * 1024 * 160 // 256 and g.size_bytes is None
    assert sc.probe.ping_s == 0 and sc.sweep is None


@pytest.mark.parametrize("text, seconds", [("2min", 120.0), ("1h", 3600.0), ("1.5min", 90.0)])
def test_duration_in_minutes_and_hours(text, seconds):
    sc = Scenario.from_dict(minimal_dict(duration=text))
    assert sc.duration_s == seconds
    assert sc.sim_config()["duration_ns"] == int(seconds) * 10**9  # exact integers of ns


@pytest.mark.parametrize(
    "text, problem",
    [("2m", "minutes or milliseconds"), ("1hr", "unknown unit 'hr'"), ("25h", "above the maximum 86400s (1 day)")],
)
def test_bad_duration_units_name_the_key(text, problem):
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(minimal_dict(duration=text))
    assert e.value.key == "duration" and problem in str(e.value)


def test_name_defaults_to_file_stem(write_toml):
    p = write_toml('[bottleneck]\nrate="1Mbit"\nrtt="1ms"\n[[flows]]\ncc="reno"\n', name="my-study.toml")
    assert load_scenario(p).name == "my-study"


def test_sim_config_has_exactly_the_keys_of_config_rs(full):
    cfg = full.sim_config()
    assert set(cfg) == SIM_CONFIG_KEYS[""]
    assert set(cfg["bottleneck"]) == SIM_CONFIG_KEYS["bottleneck"]
    assert set(cfg["access"]) == SIM_CONFIG_KEYS["access"]
    assert set(cfg["probe"]) == SIM_CONFIG_KEYS["probe"]
    for f in cfg["flows"]:
        assert set(f) == SIM_CONFIG_KEYS["flow"]


#: SimConfig fields the Python side does not send (serde defaults: the events cap), or sends only
#: when set (pcap_path: the scenario's [output] pcap, tests/fit/test_sim_pcap_output.py).
RUST_ONLY_KEYS = {"max_events", "pcap_path"}
#: BottleneckConfig fields only Rust sets (serde skip: the served drop-tail cross-check).
RUST_ONLY_BOTTLENECK_KEYS = {"serve_droptail_at_dequeue"}
#: BottleneckConfig fields the Python side sends only when set (a trace link's traces; wifi only
#: on a Wi-Fi link, sim/test_wifi.py).
OPTIONAL_BOTTLENECK_KEYS = {"trace", "wifi"}
#: FlowConfig / FlowGroupConfig fields the Python side sends only when not the default (ecn when
#: on, direction when "reverse", access_rate_bps when set).
OPTIONAL_FLOW_KEYS = {"ecn", "direction", "access_rate_bps"}


def test_fixture_matches_the_rust_source():
    rs = SIM_SRC / "config" / "mod.rs"
    assert set(rust_struct_fields(rs, "SimConfig")) - RUST_ONLY_KEYS == SIM_CONFIG_KEYS[""]
    assert (
        set(rust_struct_fields(rs, "BottleneckConfig")) - RUST_ONLY_BOTTLENECK_KEYS - OPTIONAL_BOTTLENECK_KEYS
        == SIM_CONFIG_KEYS["bottleneck"]
    )
    assert set(rust_struct_fields(rs, "AccessConfig")) == SIM_CONFIG_KEYS["access"]
    assert set(rust_struct_fields(rs, "FlowConfig")) - OPTIONAL_FLOW_KEYS == SIM_CONFIG_KEYS["flow"]
    assert set(rust_struct_fields(rs, "ProbeConfig")) == SIM_CONFIG_KEYS["probe"]
    assert (
        set(rust_struct_fields(SIM_SRC / "config" / "flow_groups.rs", "FlowGroupConfig")) - OPTIONAL_FLOW_KEYS
        == SIM_CONFIG_KEYS["flow_group"]
    )


def test_sim_config_grouped_has_the_keys_of_flow_groups_rs(full):
    cfg = full.sim_config_grouped()
    assert set(cfg) == SIM_CONFIG_KEYS["grouped"]
    assert [set(g) for g in cfg["flow_groups"]] == [SIM_CONFIG_KEYS["flow_group"]] * len(full.flows)


#: Scenarios whose flow groups the simulator must expand exactly as sim_config() does:
#: several groups with per-group cc / size / rwnd / pacing / timestamps, start offsets and
#: staggers, the default 10 ms start jitter and a long one, extreme seeds, starts near the
#: 1-day limit (large nanosecond counts through the float seconds of _flow_starts) and many
#: flows.
EXPANSION_CASES = [
    dict(
        duration="10s",
        flows=[
            {"cc": "cubic", "count": 3, "start": "0s+1s", "rwnd": "32MB"},
            {"cc": "reno", "start": "2s", "size": "1MB", "pacing": True},
            {"cc": "bbr", "count": 4, "start": "10ms+333us", "timestamps": False},
        ],
    ),
    dict(start_jitter=0, flows=[{"cc": "reno", "count": 3, "start": "1s+250ms"}, {"cc": "vegas", "count": 2}]),
    dict(seed=0, start_jitter="1.5s", flows=[{"cc": "cubic", "count": 50, "start": "0s+7ms"}]),
    dict(
        seed=2**64 - 1,
        start_jitter="999999999ns",
        flows=[{"cc": "cubic", "count": 20, "start": "1ms+1ns"}, {"cc": "bbr", "count": 5, "size": "3kB"}],
    ),
    dict(duration="86400s", start_jitter="3s", flows=[{"cc": "cubic", "count": 3, "start": "86390s+1.000000001s"}]),
    dict(
        duration="20s",
        flows=[
            {"cc": "cubic", "count": 30_000, "start": "0s+333ns"},
            {"cc": "reno", "count": 2_000, "start": "3s+1us", "rwnd": "1MB"},
        ],
    ),
]


@pytest.mark.parametrize("case", range(len(EXPANSION_CASES)))
def test_the_simulator_expands_flow_groups_into_the_flows_of_sim_config(case):
    """The sim backend sends flow groups; the simulator's expansion must be the flows the
    Python expansion gives (ids, groups, starts with their start-jitter offsets, parameters),
    and the whole config it reads must be the same either way."""
    from ccbench import _sim

    sc = Scenario.from_dict(minimal_dict(**EXPANSION_CASES[case]), source="t")
    per_flow, grouped = sc.sim_config(), sc.sim_config_grouped()
    assert "flows" not in grouped and len(grouped["flow_groups"]) == len(sc.flows)
    expanded = json.loads(_sim.config_json(json.dumps(grouped)))
    assert expanded["flows"] == per_flow["flows"]
    assert _sim.config_json(json.dumps(grouped)) == _sim.config_json(json.dumps(per_flow))
    # and both agree with expanded_flows (the kernel backend's view)
    assert [f["start_ns"] for f in expanded["flows"]] == [f.start_ns for f in sc.expanded_flows()]
    if sc.start_jitter_s > 0 and len(per_flow["flows"]) > 2:  # the offsets are really there
        assert len({f["start_ns"] for f in expanded["flows"]}) > 2


def test_sim_config_values(full):
    cfg = full.sim_config()
    assert cfg["duration_ns"] == 10 * 10**9 and cfg["seed"] == 7 and cfg["sample_interval_ns"] == 50 * 10**6
    b = cfg["bottleneck"]
    assert b["rate_bps"] == 50_000_000 and b["rtt_ns"] == 50_000_000 and b["jitter_ns"] == 8_000_000
    assert b["jitter_dist"] == "normal" and b["reorder"] is False and b["impair"] == "both"
    assert b["loss"] == {"model": "bernoulli", "p": 0.001}
    assert cfg["access"] == {"rate_bps": 10**9, "delay_ns": 1_000_000}
    assert cfg["probe"] == {"ping_interval_ns": 100_000_000}
    # every integer field is an int (serde refuses 5e7 for a u64)
    for v in (b["rate_bps"], b["rtt_ns"], cfg["duration_ns"], b["buffer"]["bytes"]):
        assert type(v) is int


def test_sim_config_is_accepted_by_the_simulator(full):
    """The JSON goes through serde (deny_unknown_fields) and SimConfig::validate, and runs: one
    report row per connection (a refusal raises ValueError with the simulator's message)."""
    from ccbench import _sim

    for sc in (
        full,
        full.with_overrides(
            {"bottleneck.loss": {"model": "gilbert", "p": "1%", "r": "20%"}, "bottleneck.buffer": "100pkt"}
        ),
    ):
        report = json.loads(_sim.run_json(json.dumps(sc.sim_config())))
        assert len(report["flows"]) == len(sc.expanded_flows())


def test_stagger_expansion(full):
    full = full.with_overrides({"start_jitter": "0s"})  # exact starts: the stagger alone
    flows = full.expanded_flows()
    assert [f.id for f in flows] == [0, 1, 2, 3]
    assert [f.group for f in flows] == [0, 0, 0, 1]
    assert [f.cc for f in flows] == ["cubic", "cubic", "cubic", "reno"]
    assert [f.start_ns for f in flows] == [0, 10**9, 2 * 10**9, 2 * 10**9]
    assert [f["start_ns"] for f in full.sim_config()["flows"]] == [0, 10**9, 2 * 10**9, 2 * 10**9]
    assert flows[3].size_bytes == 1_000_000 and flows[3].pacing is True and flows[0].rwnd_bytes == 32_000_000


def test_stagger_with_offset():
    sc = Scenario.from_dict(minimal_dict(start_jitter=0, flows=[{"cc": "reno", "count": 3, "start": "1s+250ms"}]))
    assert [f.start_ns for f in sc.expanded_flows()] == [10**9, 1_250_000_000, 1_500_000_000]


def test_bdp_buffer_arithmetic(full):
    # base RTT = 50 ms + 4 × 1 ms access = 54 ms; BDP = 50e6 × 0.054 / 8 = 337 500 bytes
    assert full.base_rtt_s == pytest.approx(0.054)
    assert full.bdp_bytes == pytest.approx(337_500)
    assert full.buffer_bytes == 337_500 and full.buffer_packets is None
    assert full.sim_config()["bottleneck"]["buffer"] == {"bytes": 337_500}
    q = full.with_overrides({"bottleneck.buffer": "0.25bdp"})
    assert q.buffer_bytes == 84_375
    assert full.with_overrides({"bottleneck.buffer": "4bdp"}).buffer_bytes == 1_350_000
    no_access = full.with_overrides({"access.delay": "0s"})
    assert no_access.buffer_bytes == 312_500  # 50 Mbit/s × 50 ms
    # rounding: 1 Mbit/s × 3 ms = 375 bytes → 1.5 × 375 = 562.5 → at least one packet
    tiny = Scenario.from_dict(minimal_dict(bottleneck={"rate": "1Mbit", "rtt": "3ms", "buffer": "1.5bdp"}))
    assert tiny.buffer_bytes == 1500
    odd = Scenario.from_dict(minimal_dict(bottleneck={"rate": "10Mbit", "rtt": "3ms", "buffer": "0.5bdp"}))
    assert odd.buffer_bytes == 1875  # 10e6 × 0.003 / 8 = 3750 → 1875


def test_buffer_in_packets_and_bytes(full):
    p = full.with_overrides({"bottleneck.buffer": "100pkt"})
    assert p.buffer_packets == 100 and p.buffer_bytes is None
    assert p.sim_config()["bottleneck"]["buffer"] == {"packets": 100}
    b = full.with_overrides({"bottleneck.buffer": "256KiB"})
    assert b.sim_config()["bottleneck"]["buffer"] == {"bytes": 262_144}
    with pytest.raises(ScenarioError) as e:
        full.with_overrides({"bottleneck.buffer": "1000B"})
    assert e.value.key == "bottleneck.buffer"


def test_loss_models():
    def loss(v):
        return Scenario.from_dict(minimal_dict(bottleneck={"rate": "1Mbit", "rtt": "1ms", "loss": v}))

    assert loss("0%").sim_config()["bottleneck"]["loss"] == {"model": "none"}
    assert loss(0).sim_config()["bottleneck"]["loss"] == {"model": "none"}
    assert loss("5%").sim_config()["bottleneck"]["loss"] == {"model": "bernoulli", "p": 0.05}
    assert loss({"model": "bernoulli", "p": "2%"}).bottleneck.loss.p == 0.02
    g = loss({"model": "gilbert", "p": "1%", "r": "25%"})
    assert g.sim_config()["bottleneck"]["loss"] == {"model": "gilbert", "p": 0.01, "r": 0.25, "h": 0.0, "k": 1.0}
    # stationary loss of simple Gilbert = p / (p + r)
    assert g.bottleneck.loss.mean_loss == pytest.approx(0.01 / 0.26)
    g2 = loss({"model": "gilbert", "p": "1%", "r": "25%", "h": "50%", "k": "99%"})
    assert g2.sim_config()["bottleneck"]["loss"]["h"] == 0.5
    assert g2.sim_config()["bottleneck"]["loss"]["k"] == 0.99
    for bad, key in [
        ({"model": "bernoulli"}, "bottleneck.loss"),
        ({"model": "bernoulli", "p": "1%", "r": "2%"}, "bottleneck.loss"),
        ({"model": "markov", "p": "1%"}, "bottleneck.loss.model"),
        ({"model": "gilbert", "p": "1%", "r": "2%", "q": "1%"}, "bottleneck.loss.q"),
        ({"model": "none", "p": "1%"}, "bottleneck.loss"),
        ([1, 2], "bottleneck.loss"),
    ]:
        with pytest.raises(ScenarioError) as e:
            loss(bad)
        assert e.value.key == key, str(e.value)


def test_cc_names_are_normalised_and_checked():
    sc = Scenario.from_dict(minimal_dict(flows=[{"cc": "CUBIC"}, {"cc": " BBR"}]))
    assert [g.cc for g in sc.flows] == ["cubic", "bbr"]
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(minimal_dict(flows=[{"cc": "cubic"}, {"cc": "vegass"}]))
    assert e.value.key == "flows.1.cc" and "did you mean 'vegas'" in e.value.problem


@pytest.mark.parametrize(
    "text, value",
    [
        ("1%", "1%"),
        ("3", 3),
        ("0.5", 0.5),
        ("true", True),
        ("false", False),
        ("cubic", "cubic"),
        ('"quoted"', "quoted"),
        ("50Mbit", "50Mbit"),
        ("[1, 2]", [1, 2]),
        ('{model = "gilbert", p = "1%"}', {"model": "gilbert", "p": "1%"}),
        ("0s+1s", "0s+1s"),
        ("", ""),
    ],
)
def test_override_value_parsing(text, value):
    assert parse_override_value(text) == value


def test_parse_overrides():
    assert parse_overrides(["bottleneck.loss=1%", "flows.0.count=4", "x.y = a=b"]) == {
        "bottleneck.loss": "1%",
        "flows.0.count": 4,
        "x.y": "a=b",
    }


def test_with_overrides(full):
    o = full.with_overrides(
        ["bottleneck.loss=1%", "flows.0.cc=bbr", "flows.0.count=2", "seed=9", "bottleneck.reorder=true", "probe.ping=0"]
    )
    assert o.bottleneck.loss.p == 0.01 and o.flows[0].cc == "bbr" and o.flows[0].count == 2
    assert o.seed == 9 and o.bottleneck.reorder is True and o.probe.ping_s == 0
    assert o.n_flows == 3 and full.n_flows == 4  # the original is unchanged
    assert full.bottleneck.loss.p == pytest.approx(0.001)
    # appending a new [[flows]] entry with index == len
    a = full.with_overrides({"flows.2.cc": "vegas"})
    assert [g.cc for g in a.flows] == ["cubic", "reno", "vegas"]
    # creating a table that was not in the file
    m = Scenario.from_dict(minimal_dict()).with_overrides(["access.delay=2ms"])
    assert m.access.delay_s == 0.002 and m.base_rtt_s == pytest.approx(0.028)


def test_load_with_overrides_mapping(write_toml):
    p = write_toml(FULL)
    sc = load_scenario(p, {"bottleneck.rate": "100Mbit"})
    assert sc.bottleneck.rate_bps == 100_000_000


def test_hash_is_canonical(full, write_toml):
    # same content, different order and spelling → same hash
    reordered = FULL.replace('rate = "50Mbit"', 'rate = "50Mbps"').replace("[sweep]", "[sweep]\nextra = 1")
    other = load_scenario(write_toml(reordered, name="full.toml"))
    assert other.scenario_hash() == full.scenario_hash()
    assert len(full.scenario_hash()) == 64
    assert "sweep" not in full.normalised()
    assert full.with_overrides({"seed": 8}).scenario_hash() != full.scenario_hash()
    assert full.with_overrides({"bottleneck.loss": "1%"}).scenario_hash() != full.scenario_hash()
    json.loads(full.canonical_json())


def test_models_are_immutable(full):
    with pytest.raises(ValidationError):
        full.bottleneck.rate_bps = 1


def test_every_shipped_study_loads_and_its_sweep_cells_validate():

    import tomllib

    from ccbench.study import BUILTIN_DIR

    studies = sorted(BUILTIN_DIR.glob("*.toml"))
    assert any(p.name == "demo-loss.toml" for p in studies)
    for path in studies:
        if "study" in tomllib.loads(path.read_text()):
            continue  # a study file (ccbench.study, cli/test_study.py), not a scenario
        sc = load_scenario(path)
        assert sc.name == path.stem
        for key, values in (sc.sweep or {}).items():
            if key == "repeat" or not isinstance(values, list):
                continue
            for v in values:
                sc.with_overrides({key: v})  # raises ScenarioError if a grid value is bad


def test_demo_study_matches_the_issue():
    from ccbench.demo import STUDY

    sc = load_scenario(STUDY)
    assert sc.bottleneck.rate_bps == 50_000_000 and sc.base_rtt_s == 0.05
    assert sc.buffer_bytes == 312_500 and sc.bottleneck.aqm == "droptail" and sc.duration_s == 30
    assert sc.sweep["bottleneck.loss"] == ["0%", "0.1%", "1%", "5%"]
    assert {"cubic", "reno"} <= set(sc.sweep["flows.0.cc"])


def test_scenario_pickles_and_keeps_its_source(full):
    import pickle

    back = pickle.loads(pickle.dumps(full))
    assert back.scenario_hash() == full.scenario_hash() and back.source == full.source
    assert back.with_overrides({"seed": 3}).seed == 3


def test_keyword_construction_supports_overrides():
    sc = Scenario(bottleneck={"rate": "1Mbit", "rtt": "10ms"}, flows=[{"cc": "reno"}])
    assert sc.with_overrides({"flows.0.count": 2}).n_flows == 2


def test_start_jitter_offsets_are_uniform_deterministic_and_per_seed():
    """Each flow's start is delayed by an offset in [0, start_jitter) that depends only on the
    seed and the flow id (both backends read expanded_flows), so it is reproducible and differs
    between repeats (seeds)."""
    flows = [{"cc": "cubic", "count": 4000, "start": "1s+1ms"}]
    exact = Scenario.from_dict(minimal_dict(duration="10s", start_jitter="0s", flows=flows))
    jit = exact.with_overrides({"start_jitter": "20ms"})
    base = [f.start_ns for f in exact.expanded_flows()]
    assert base[:3] == [10**9, 10**9 + 10**6, 10**9 + 2 * 10**6]  # stagger unchanged by jitter 0
    off = [f.start_ns - b for f, b in zip(jit.expanded_flows(), base)]
    assert all(0 <= o < 20_000_000 for o in off)
    # uniform on [0, J): mean J/2 (sd of the mean J/sqrt(12 n) = 0.0046 J for n = 4000, so
    # 3 sd = 1.4 %), and a quarter of the offsets in each quarter (3 sd = 2 points)
    assert abs(sum(off) / len(off) / 20e6 - 0.5) < 0.014
    for q in range(4):
        share = sum(q * 5e6 <= o < (q + 1) * 5e6 for o in off) / len(off)
        assert abs(share - 0.25) < 0.02, (q, share)
    # the same seed gives the same offsets; another seed others; sim_config carries them
    assert [f.start_ns for f in jit.expanded_flows()] == [
        f.start_ns for f in exact.with_overrides({"start_jitter": "20ms"}).expanded_flows()
    ]
    other = jit.with_overrides({"seed": 2})
    assert sum(a.start_ns != b.start_ns for a, b in zip(jit.expanded_flows(), other.expanded_flows())) > 3900
    assert [f["start_ns"] for f in jit.sim_config()["flows"]] == [f.start_ns for f in jit.expanded_flows()]
    # it is part of the scenario: another start_jitter is another run
    assert jit.scenario_hash() != exact.scenario_hash()


def test_start_jitter_default_and_validation():
    sc = Scenario.from_dict(minimal_dict())
    assert sc.start_jitter_s == 0.01
    assert 0 <= sc.expanded_flows()[0].start_ns < 10_000_000
    for bad, problem in (("-1ms", "negative"), ("2s", "not below the duration"), ("soon", "")):
        with pytest.raises(ScenarioError) as e:
            Scenario.from_dict(minimal_dict(start_jitter=bad))
        assert e.value.key == "start_jitter" and problem in e.value.problem


# ---- timestamps (per flow group) -------------------------------------------------------------


def test_timestamps_default_on_and_reach_every_expanded_flow():
    sc = Scenario.from_dict(minimal_dict(flows=[{"cc": "cubic", "count": 2}, {"cc": "reno", "timestamps": False}]))
    assert [g.timestamps for g in sc.flows] == [True, False]
    assert [f.timestamps for f in sc.expanded_flows()] == [True, True, False]


@pytest.mark.parametrize("bad", ["no", "false", 0, 1, "on", [True], {"x": 1}])
def test_timestamps_refuses_a_non_boolean_naming_the_key(bad):
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(minimal_dict(flows=[{"cc": "cubic"}, {"cc": "reno", "timestamps": bad}]), source="ts.toml")
    assert e.value.key == "flows.1.timestamps"
    text = str(e.value)
    assert text.startswith("ts.toml: flows.1.timestamps: ") and "true or false" in text


def test_timestamps_misspelt_is_suggested():
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(minimal_dict(flows=[{"cc": "cubic", "timestamp": False}]))
    assert e.value.key == "flows.0.timestamp" and "did you mean 'timestamps'" in e.value.problem


def test_timestamps_hash_override_and_sweep():
    on = Scenario.from_dict(minimal_dict())
    explicit = Scenario.from_dict(minimal_dict(flows=[{"cc": "cubic", "timestamps": True}]))
    off = on.with_overrides({"flows.0.timestamps": False})
    # the default keeps the hash runs had before the key existed; off is another scenario
    assert explicit.scenario_hash() == on.scenario_hash()
    assert "timestamps" not in on.normalised()["flows"][0]
    assert off.normalised()["flows"][0]["timestamps"] is False
    assert off.scenario_hash() != on.scenario_hash()
    # overrides from the command line and sweeps (values as TOML booleans)
    cli = on.with_overrides(parse_overrides(["flows.0.timestamps=false"]))
    assert cli.flows[0].timestamps is False and cli.scenario_hash() == off.scenario_hash()
    from ccbench.sweeps.plan import plan

    specs = plan(Scenario.from_dict(minimal_dict(sweep={"flows.0.timestamps": [True, False]})))
    assert [s.scenario.flows[0].timestamps for s in specs] == [True, False]
    assert [s.columns()["flows.0.timestamps"] for s in specs] == [True, False]


def test_sim_config_carries_timestamps_on_every_flow():
    sc = Scenario.from_dict(minimal_dict(flows=[{"cc": "cubic", "count": 2}, {"cc": "reno", "timestamps": False}]))
    assert [f["timestamps"] for f in sc.sim_config()["flows"]] == [True, True, False]
