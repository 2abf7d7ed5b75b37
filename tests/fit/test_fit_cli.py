"""`ccbench fit` on the command line: the table, the scenario it writes, and one-line errors
for captures it cannot use."""

from __future__ import annotations

import struct

import dpkt
import pytest
from typer.testing import CliRunner

from ccbench.cli import app
from ccbench.fit.replay import simulate_capture
from ccbench.scenario.model import load_scenario

runner = CliRunner()


def _tcp(src: str, sport: int, dst: str, dport: int, seq: int, payload: int) -> bytes:
    tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq, ack=1, flags=dpkt.tcp.TH_ACK, data=b"\0" * payload)
    ip = dpkt.ip.IP(src=bytes(map(int, src.split("."))), dst=bytes(map(int, dst.split("."))), p=6, data=tcp)
    ip.len = 20 + len(tcp)
    return bytes(ip)


def _write(path, frames, linktype=dpkt.pcap.DLT_RAW):
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, linktype=linktype)
        for t, buf in frames:
            w.writepkt(buf, ts=t)


def _fail(args) -> str:
    r = runner.invoke(app, ["fit", *map(str, args)])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    return lines[0]


@pytest.fixture(scope="module")
def sim_pcap(tmp_path_factory):
    pcap = tmp_path_factory.mktemp("fit") / "flow0.pcap"
    sc = {
        "duration": "10s",
        "bottleneck": {"rate": "10Mbit", "rtt": "20ms", "buffer": "2bdp"},
        "flows": [{"cc": "cubic"}],
    }
    simulate_capture(sc, pcap)
    return pcap


def test_table_and_scenario(sim_pcap, tmp_path):
    out = tmp_path / "link.toml"
    r = runner.invoke(app, ["fit", str(sim_pcap), "--out", str(out)])
    assert r.exit_code == 0, r.output
    for row in ("rate", "rtt", "buffer", "loss", "jitter", "loss model"):
        assert row in r.output
    text = out.read_text()
    assert text.count("\n# ") >= 4  # each estimate's evidence as a comment
    sc = load_scenario(out)
    # 10 Mbit/s, 20 ms: the fitted link within the closed-loop tolerances
    assert abs(sc.bottleneck.rate_bps - 10e6) <= 0.05 * 10e6
    assert abs(sc.bottleneck.rtt_s - 0.020) <= 0.002


def test_flow_option_names_the_flow(sim_pcap):
    r = runner.invoke(app, ["fit", str(sim_pcap), "--flow", "198.51.100.1:5201-192.0.2.1:40000", "--json"])
    assert r.exit_code == 0, r.output
    assert '"flow": "192.0.2.1:40000-198.51.100.1:5201"' in r.output
    assert "no TCP packets between" in _fail([sim_pcap, "--flow", "10.9.9.9:1-10.9.9.8:2"])
    assert "is not HOST:PORT" in _fail([sim_pcap, "--flow", "nohost-10.0.0.1:5"])


def test_empty_capture(tmp_path):
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    assert "empty capture" in _fail([empty])
    header_only = tmp_path / "header.pcap"
    _write(header_only, [])
    assert "empty capture (no packets)" in _fail([header_only])


def test_malformed_capture(tmp_path):
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"this is not a capture at all" * 4)
    assert "not a pcap or pcapng capture" in _fail([junk])


def test_truncated_capture(sim_pcap, tmp_path):
    cut = tmp_path / "cut.pcap"
    raw = sim_pcap.read_bytes()
    # 24-byte global header, then records of 16 + 52 bytes: cut inside the third record
    cut.write_bytes(raw[: 24 + 2 * 68 + 30])
    assert "truncated" in _fail([cut])


def test_non_tcp_capture(tmp_path):
    udp = dpkt.udp.UDP(sport=1, dport=2, data=b"x" * 100)
    udp.ulen = 108
    ip = dpkt.ip.IP(src=b"\x0a\0\0\x01", dst=b"\x0a\0\0\x02", p=17, data=udp)
    ip.len = 20 + 108
    path = tmp_path / "udp.pcap"
    _write(path, [(i * 0.001, bytes(ip)) for i in range(10)])
    assert "no TCP packets among its 10 packets" in _fail([path])


def test_several_bulk_flows_need_flow(tmp_path):
    frames = []
    for i in range(200):
        frames.append((i * 0.001, _tcp("10.0.0.1", 1000, "10.0.0.2", 80, 1 + i * 1448, 1448)))
        frames.append((i * 0.001, _tcp("10.0.0.3", 2000, "10.0.0.4", 80, 1 + i * 1448, 1448)))
    path = tmp_path / "two.pcap"
    _write(path, frames)
    line = _fail([path])
    assert "2 bulk TCP flows" in line and "10.0.0.1:1000-10.0.0.2:80" in line and "10.0.0.3:2000-10.0.0.4:80" in line
    assert "--flow" in line


def test_no_bulk_flow(tmp_path):
    path = tmp_path / "small.pcap"
    _write(path, [(i * 0.001, _tcp("10.0.0.1", 1000, "10.0.0.2", 80, 1 + i * 100, 100)) for i in range(5)])
    assert "no bulk TCP flow" in _fail([path])


def test_ethernet_link_type(tmp_path, sim_pcap):
    """The same packets framed in Ethernet (LINKTYPE_ETHERNET) read the same."""
    frames = []
    for ts, buf in dpkt.pcap.Reader(open(sim_pcap, "rb")):
        frames.append((ts, b"\0" * 12 + struct.pack("!H", 0x0800) + buf))
    eth = tmp_path / "eth.pcap"
    _write(eth, frames, linktype=dpkt.pcap.DLT_EN10MB)
    r = runner.invoke(app, ["fit", str(eth), "--json"])
    assert r.exit_code == 0, r.output
    assert "192.0.2.1:40000" in r.output


def test_check_replays_the_fit(sim_pcap):
    """A clean 10 Mbit/s, 20 ms, 2 BDP link is fitted exactly enough that CUBIC's replay on the
    fitted link gives the capture's goodput, RTTs and retransmissions within tolerance."""
    r = runner.invoke(app, ["fit", str(sim_pcap), "--check"])
    assert r.exit_code == 0, r.output
    assert "replay of the fitted scenario" in r.output
    assert "the replay matches the capture" in r.output


def test_check_says_when_the_replay_misses():
    from ccbench.fit.check import Row

    # goodput 10 vs 8 Mbit/s: 20 % off, beyond the 10 % tolerance
    assert not Row("goodput", 10.0, 8.0, "Mbit/s", 0.10, 0.1).ok
    assert Row("goodput", 10.0, 9.5, "Mbit/s", 0.10, 0.1).ok


def test_recommend_from_capture(sim_pcap):
    """recommend --from fits the capture and recommends over the fitted link (10 Mbit/s,
    20 ms, 2 BDP: what the capture's link was)."""
    r = runner.invoke(app, ["recommend", "--from", str(sim_pcap), "--budget", "5s", "--cc", "cubic,reno", "--json"])
    assert r.exit_code == 0, r.output
    import json

    doc = json.loads(r.output[r.output.index("{") :])
    assert abs(doc["link"]["rate_bps"] - 10e6) <= 0.05 * 10e6
    bad = runner.invoke(app, ["recommend", "--from", str(sim_pcap), "--ping", str(sim_pcap)])
    assert bad.exit_code == 2 and "--from and --scenario/--ping" in bad.output
