"""Scenario `[output] pcap`: the simulator's capture of flow 0 at its sender
(crates/sim/src/pcap.rs)."""

from __future__ import annotations

import json
import struct

import dpkt
import pytest

from ccbench import _sim
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario

BASE = {
    "duration": "3s",
    "bottleneck": {"rate": "10Mbit", "rtt": "20ms", "buffer": "1bdp", "loss": "1%"},
    "flows": [{"cc": "cubic"}],
}


def _run(tmp_path, name: str, output: bool = True) -> dict:
    d = json.loads(json.dumps(BASE))
    if output:
        d["output"] = {"pcap": str(tmp_path / name)}
    sc = Scenario.from_dict(d)
    return json.loads(_sim.run_json(json.dumps(sc.sim_config_grouped())))


def test_capture_headers_and_numbering(tmp_path):
    _run(tmp_path, "a.pcap")
    raw = (tmp_path / "a.pcap").read_bytes()
    # pcap-savefile(5): nanosecond magic, version 2.4, LINKTYPE_RAW (101)
    assert struct.unpack("<IHH", raw[:8]) == (0xA1B23C4D, 2, 4)
    assert struct.unpack("<I", raw[20:24])[0] == 101
    reader = dpkt.pcap.Reader(open(tmp_path / "a.pcap", "rb"))
    data, acks, last_t = [], [], 0.0
    for ts, buf in reader:
        ip = dpkt.ip.IP(buf)
        tcp = ip.data
        assert ts >= last_t, "records in time order"
        last_t = ts
        opts = dict(dpkt.tcp.parse_opts(tcp.opts))
        assert dpkt.tcp.TCP_OPT_TIMESTAMP in opts
        if tcp.sport == 40000:
            # headers only: 20 IP + 32 TCP captured of 1500 IP bytes (1448 MSS + 52)
            assert len(buf) == 52 and ip.len == 1500
            data.append(tcp.seq)
        else:
            acks.append(tcp.ack)
    # new data goes up one MSS (1448 bytes) at a time from sequence number 1
    first = sorted(set(data))
    assert first[0] == 1 and all(b - a == 1448 for a, b in zip(first, first[1:]))
    # 1 % loss over ~2000 segments: some retransmissions (a segment number sent twice)
    assert len(data) > len(first)
    # cumulative ACKs never go backwards and end on a segment boundary
    assert all(b >= a for a, b in zip(acks, acks[1:]))
    assert (acks[-1] - 1) % 1448 == 0


def test_sack_blocks_follow_losses(tmp_path):
    _run(tmp_path, "s.pcap")
    sacks = 0
    for _, buf in dpkt.pcap.Reader(open(tmp_path / "s.pcap", "rb")):
        tcp = dpkt.ip.IP(buf).data
        for kind, val in dpkt.tcp.parse_opts(tcp.opts):
            if kind == dpkt.tcp.TCP_OPT_SACK:
                sacks += 1
                left, right = struct.unpack("!II", val[:8])
                assert left > tcp.ack and (right - left) % 1448 == 0
    assert sacks > 0


def test_capture_is_deterministic_and_leaves_the_run_unchanged(tmp_path):
    with_pcap = _run(tmp_path, "a.pcap")
    _run(tmp_path, "b.pcap")
    without = _run(tmp_path, "", output=False)
    assert (tmp_path / "a.pcap").read_bytes() == (tmp_path / "b.pcap").read_bytes()
    # writing the capture draws no random numbers and moves no event: the same results
    assert with_pcap["flows"] == without["flows"]
    assert with_pcap["links"] == without["links"]


def test_output_keeps_the_scenario_hash():
    plain = Scenario.from_dict(BASE)
    withp = Scenario.from_dict({**BASE, "output": {"pcap": "x.pcap"}})
    assert plain.scenario_hash() == withp.scenario_hash()
    assert "pcap_path" not in plain.sim_config()


@pytest.mark.parametrize("bad", [{"pcap": 3}, {"pcap": ""}, {"pcapx": "a.pcap"}])
def test_bad_output_table(bad):
    with pytest.raises(ScenarioError, match="output"):
        Scenario.from_dict({**BASE, "output": bad})


def test_unwritable_pcap_is_an_error(tmp_path):
    sc = Scenario.from_dict({**BASE, "output": {"pcap": str(tmp_path / "no" / "dir" / "x.pcap")}})
    with pytest.raises(ValueError, match="output.pcap: cannot create"):
        _sim.run_json(json.dumps(sc.sim_config_grouped()))
