"""`ccbench capture SERVER`: an iperf3 upload captured with tcpdump at the sender and fitted.
Without root: the helpers and the one-line errors. With root (kernel-marked): inside two
namespaces joined by ccbench-link (the kernel backend's Topology, 198.18.0.0/15 only), an
iperf3 server in one and `ccbench capture` in the other, through a link whose rate and RTT the
fit must recover."""

from __future__ import annotations

import subprocess
import sys
import time
import tomllib

import pytest
from typer.testing import CliRunner

from ccbench.cli import app
from ccbench.livecapture import upload
from ccbench.livecapture.offload import parse_features
from ccbench.livecapture.tcpdump import dropped_by_kernel, tcpdump_argv
from conftest import kernel_missing

runner = CliRunner()

ETHTOOL_K = """Features for ccb-s0:
rx-checksumming: off [fixed]
tx-checksumming: on
tcp-segmentation-offload: off
\ttx-tcp-segmentation: off [requested on]
generic-segmentation-offload: on
generic-receive-offload: off
large-receive-offload: off [fixed]
"""


def test_ethtool_features_are_read_with_their_fixed_flag():
    f = parse_features(ETHTOOL_K)
    assert f["tcp-segmentation-offload"] == (False, False)
    assert f["generic-segmentation-offload"] == (True, False)
    assert f["large-receive-offload"] == (False, True)
    assert f["tx-tcp-segmentation"] == (False, False)  # "[requested on]" is not "on"


def test_tcpdump_statistics_and_command_line(tmp_path):
    assert dropped_by_kernel("12 packets captured\n12 packets received by filter\n3 packets dropped by kernel\n") == 3
    assert dropped_by_kernel("tcpdump: listening on eth0") is None
    argv = tcpdump_argv("eth0", tmp_path / "x.pcap", "tcp port 5201")
    # headers only (snap length), nanosecond stamps, no privilege drop before opening the file
    assert argv[argv.index("-s") + 1] == "128" and "--time-stamp-precision=nano" in argv
    assert argv[argv.index("-Z") + 1] == "root" and argv[-1] == "tcp port 5201"


def _one_error(args, code: int = 1) -> str:
    r = runner.invoke(app, ["capture", *map(str, args)])
    lines = [ln for ln in r.output.splitlines() if ln.strip() and not ln.startswith("uploading")]
    assert r.exit_code == code, r.output
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    return lines[0]


def test_not_root_is_one_line(monkeypatch):
    monkeypatch.setattr(upload.os, "geteuid", lambda: 1000)
    assert "needs root" in _one_error(["198.18.0.2", "--duration", "5s"])


def test_missing_tool_is_named(monkeypatch):
    monkeypatch.setattr(upload.os, "geteuid", lambda: 0)
    monkeypatch.setattr(upload.shutil, "which", lambda tool: None if tool == "iperf3" else f"/usr/bin/{tool}")
    assert "iperf3 is not installed" in _one_error(["198.18.0.2"])


def test_bad_duration_is_bad_input():
    assert "--duration" in _one_error(["198.18.0.2", "--duration", "1s"], code=2)


# ---- in namespaces ---------------------------------------------------------------------------

MISSING = kernel_missing() or upload.missing()
#: The link: 20 Mbit/s, 40 ms, 2 BDP, no loss.
RATE_BPS, RTT_S = 20e6, 0.040


def _ccbench_in(ns: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["ip", "netns", "exec", ns, sys.executable, "-m", "ccbench.cli", "capture", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _gso(ns: str, dev: str) -> bool:
    out = subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-k", dev], capture_output=True, text=True).stdout
    return parse_features(out)["generic-segmentation-offload"][0]


@pytest.mark.kernel
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
def test_capture_through_ccbench_link_fits_the_link(tmp_path):
    from ccbench.backends.kernel.topology import RECEIVER_ADDR, TUN_S, Topology
    from ccbench.scenario.model import Scenario

    link = {"rate": "20Mbit", "rtt": "40ms", "buffer": "2bdp"}
    sc = Scenario.from_dict({"duration": "10s", "bottleneck": link, "flows": [{"cc": "cubic"}]})
    with Topology(sc.sim_config()) as topo:
        # the error for a server that is not there: nothing listens on the port yet
        r = _ccbench_in(topo.ns_s, RECEIVER_ADDR, "--duration", "3s", "--out", str(tmp_path / "none.pcap"))
        errs = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert r.returncode == 1 and len(errs) == 1 and "iperf3 -s" in errs[0], r.stderr
        # no route at all: one line naming the address
        r = _ccbench_in(topo.ns_s, "198.18.0.77", "--duration", "3s")
        assert r.returncode == 1 and "no route to 198.18.0.77" in r.stderr, r.stderr

        server = topo.popen("r", ["iperf3", "-s", "-1", "-B", RECEIVER_ADDR], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        # GSO on before the capture: the command turns it off and must put it back
        subprocess.run(["ip", "netns", "exec", topo.ns_s, "ethtool", "-K", TUN_S, "gso", "on"], check=True)
        assert _gso(topo.ns_s, TUN_S)
        pcap, toml = tmp_path / "up.pcap", tmp_path / "link.toml"
        r = _ccbench_in(topo.ns_s, RECEIVER_ADDR, "--duration", "10s", "--out", str(pcap), "--fit", str(toml))
        server.wait(timeout=10)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "gso off during the capture" in r.stdout, r.stdout
        assert _gso(topo.ns_s, TUN_S)
        subprocess.run(["ip", "netns", "exec", topo.ns_s, "ethtool", "-K", TUN_S, "gso", "off"], check=True)
    b = tomllib.loads(toml.read_text())["bottleneck"]
    from ccbench.units import parse_rate, parse_time

    # the upload runs the namespace's default algorithm (the topology sets Reno; a child
    # namespace may only choose among the host's allowed ones), which fills 2 BDP of buffer,
    # so the queue stands and the ACKs pace at the link's rate (rate.py): within 5 %; the base
    # RTT is the link's 40 ms plus the hosts' few tens of µs
    assert abs(parse_rate(b["rate"]) - RATE_BPS) <= 0.05 * RATE_BPS, b
    assert abs(parse_time(b["rtt"]) - RTT_S) <= 0.002, b
