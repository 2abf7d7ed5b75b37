"""The Wi-Fi link on the Python side: ``bottleneck.link = "wifi"`` and the
``[wifi]`` table — defaults equal to the crate's, refusals naming the key, the PHY rate filled
in, the simulator's JSON, the run's wifi_* columns. The TCP-level tests are in
crates/sim/tests/wifi.rs."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from ccbench.backends import sim
from ccbench.results.schema import WIFI_RUN_KEYS
from ccbench.scenario import wifi
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario, Wifi, load_scenario

WIFI_TOML = """
name = "w"
duration = "2s"
[bottleneck]
link = "wifi"
rtt = "2ms"
buffer = "200pkt"
[[flows]]
cc = "cubic"
"""


def _scenario(extra: str = "", base: str = WIFI_TOML, tmp_path=None) -> Scenario:
    text = base + extra
    if tmp_path is None:
        import tomllib

        return Scenario.from_dict(tomllib.loads(text))
    p = tmp_path / "s.toml"
    p.write_text(text)
    return load_scenario(p)


def _error(text: str, tmp_path) -> ScenarioError:
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ScenarioError) as e:
        load_scenario(p)
    return e.value


def test_python_defaults_are_the_crates():
    assert wifi.DEFAULTS == wifi.rust_defaults()
    assert Wifi().wire() == wifi.rust_defaults()


@pytest.mark.parametrize(
    "table, rate",
    [
        # 802.11-2016 Table 19-27..19-30: N_DBPS × streams / symbol time
        ("mcs = 15", 130_000_000),  # 2 streams, 64-QAM 5/6, 20 MHz, 800 ns GI
        ("mcs = 0", 6_500_000),
        ("mcs = 7\nwidth_mhz = 40\nshort_gi = true", 150_000_000),
        ("mcs = 31\nwidth_mhz = 40\nshort_gi = true", 600_000_000),
    ],
)
def test_rate_is_the_phy_rate_of_the_mcs(table, rate):
    sc = _scenario("[wifi]\n" + table + "\n")
    assert sc.bottleneck.rate_bps == rate
    assert sc.sim_config()["bottleneck"]["rate_bps"] == rate
    # the BDP buffer is computed from it, as on a wire
    bdp = _scenario("[wifi]\n" + table + "\n", base=WIFI_TOML.replace('"200pkt"', '"1bdp"'))
    assert bdp.buffer_bytes == max(1500, round(rate * 0.002 / 8))


def test_link_wifi_without_a_table_takes_every_default():
    sc = _scenario()
    assert sc.wifi == Wifi()
    assert sc.sim_config()["bottleneck"]["wifi"] == wifi.rust_defaults()


def test_units_of_the_table():
    sc = _scenario(
        '[wifi]\nmpdu_error = "10%"\nslot_ns = "20us"\nsifs_ns = 10000\n'
        'max_ampdu_ns = "2ms"\nmax_ampdu_bytes = "32KB"\ncontrol_rate_bps = "12Mbit"\nsnr_db = 25\n'
    )
    w = sc.sim_config()["bottleneck"]["wifi"]
    assert (w["mpdu_error"], w["slot_ns"], w["sifs_ns"], w["max_ampdu_ns"]) == (0.1, 20_000, 10_000, 2_000_000)
    assert (w["max_ampdu_bytes"], w["control_rate_bps"], w["snr_db"]) == (32_000, 12_000_000, 25.0)


def test_mcs_trace_file_is_read_relative_to_the_scenario(tmp_path):
    (tmp_path / "steps.txt").write_text("# time_ms mcs\n0 15\n\n1500.5 7  # fade\n3000 3\n")
    sc = _scenario('[wifi]\nmcs_trace = "steps.txt"\n', tmp_path=tmp_path)
    assert sc.sim_config()["bottleneck"]["wifi"]["mcs_trace"] == [[0, 15], [1_500_500_000, 7], [3_000_000_000, 3]]
    # the steps, not the path, are part of the scenario's identity
    assert sc.normalised()["bottleneck"]["wifi"]["mcs_trace"][1] == [1_500_500_000, 7]


@pytest.mark.parametrize(
    "body, key, words",
    [
        ("1 15\n0 7\n", "wifi.mcs_trace", "line 2"),
        ("0 40\n", "wifi.mcs_trace", "line 1"),
        ("0 15 3\n", "wifi.mcs_trace", "line 1"),
        ("# nothing\n", "wifi.mcs_trace", "no 'TIME_MS MCS' line"),
    ],
)
def test_bad_mcs_trace_names_the_line(tmp_path, body, key, words):
    (tmp_path / "steps.txt").write_text(body)
    e = _error(WIFI_TOML + '[wifi]\nmcs_trace = "steps.txt"\n', tmp_path)
    assert e.key == key and words in str(e), str(e)


@pytest.mark.parametrize(
    "text, key, words",
    [
        # a [wifi] table on a wire
        (WIFI_TOML.replace('link = "wifi"', 'rate = "50Mbit"') + "[wifi]\nmcs = 7\n", "wifi", 'link = "wifi"'),
        (WIFI_TOML.replace('link = "wifi"', 'link = "wire"\nrate = "50Mbit"') + "[wifi]\n", "wifi", 'link = "wifi"'),
        # a rate with a Wi-Fi link
        (
            WIFI_TOML.replace('link = "wifi"', 'link = "wifi"\nrate = "50Mbit"'),
            "bottleneck.rate",
            "the Wi-Fi PHY sets the rate",
        ),
        # a wire still needs its rate
        (WIFI_TOML.replace('link = "wifi"', 'link = "wire"'), "bottleneck.rate", "required key is missing"),
        (WIFI_TOML.replace('"wifi"', '"wlan"'), "bottleneck.link", "not allowed"),
        (WIFI_TOML + "[wifi]\nmcs = 32\n", "wifi.mcs", ""),
        (WIFI_TOML + "[wifi]\nwidth_mhz = 80\n", "wifi.width_mhz", ""),
        (WIFI_TOML + '[wifi]\nrate_control = "arf"\n', "wifi.rate_control", ""),
        (WIFI_TOML + "[wifi]\nmpdu_error = 0.1\n", "wifi.mpdu_error", "%"),
        (WIFI_TOML + "[wifi]\ncw_min = 31\ncw_max = 15\n", "wifi.cw_min", "cw_max"),
        (WIFI_TOML + "[wifi]\ndriver_queue_fwd = 0\n", "wifi.driver_queue_fwd", ""),
        (WIFI_TOML + '[wifi]\ncontrol_rate_bps = "11Mbit"\n', "wifi.control_rate_bps", "mandatory"),
        (WIFI_TOML + '[wifi]\nmcs_trace = "s.txt"\nrate_control = "minstrel"\n', "wifi.mcs_trace", "minstrel"),
        (WIFI_TOML + "[wifi]\nmsc = 7\n", "wifi.msc", "did you mean 'mcs'"),
    ],
)
def test_refusals_name_the_key(tmp_path, text, key, words):
    (tmp_path / "s.txt").write_text("0 7\n")
    e = _error(text, tmp_path)
    assert e.key == key, str(e)
    assert words in str(e), str(e)


def test_wire_scenarios_keep_their_json_and_hash():
    wire = WIFI_TOML.replace('link = "wifi"', 'rate = "50Mbit"')
    import tomllib

    sc = Scenario.from_dict(tomllib.loads(wire))
    explicit = Scenario.from_dict(tomllib.loads(wire.replace('rate = "50Mbit"', 'rate = "50Mbit"\nlink = "wire"')))
    assert "wifi" not in sc.sim_config()["bottleneck"]
    assert "link" not in sc.normalised()["bottleneck"] and "wifi" not in sc.normalised()["bottleneck"]
    assert sc.scenario_hash() == explicit.scenario_hash()
    assert _scenario().scenario_hash() != _scenario("[wifi]\nmcs = 7\n").scenario_hash()


def test_a_wifi_run_fills_the_wifi_columns_and_a_wire_run_leaves_them_null():
    sc = _scenario('[probe]\nping = "100ms"\n')
    runs = sim.run(sc).runs.iloc[0]
    assert runs["status"] == "ok"
    for k in WIFI_RUN_KEYS:
        assert not pd.isna(runs[k]), k
    # a bulk CUBIC flow over a 200-packet qdisc keeps the data station busy with aggregates
    assert runs["wifi_ampdu_p50_fwd"] > 8 and runs["wifi_txops_fwd"] > 0 and 0 < runs["wifi_airtime_fwd"] <= 1
    assert runs["wifi_airtime_fwd"] + runs["wifi_airtime_rev"] <= 1.0
    assert 0 < runs["link_utilisation"] <= 1
    wire = sim.run(_scenario(base=WIFI_TOML.replace('link = "wifi"', 'rate = "50Mbit"'))).runs.iloc[0]
    for k in WIFI_RUN_KEYS:
        assert pd.isna(wire[k]), k


def test_the_simulator_reads_back_the_wifi_json():
    sc = _scenario('[wifi]\nmcs = 7\nmpdu_error = "1%"\n')
    back = json.loads(sim._sim().config_json(json.dumps(sc.sim_config())))
    assert back["bottleneck"]["wifi"] == sc.sim_config()["bottleneck"]["wifi"]
