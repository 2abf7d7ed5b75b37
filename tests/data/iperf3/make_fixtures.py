"""Make the iperf3 -J + ping fixtures of tests/fit/test_fit_iperf3.py over known links (root).

Each case builds the kernel backend's network (two namespaces joined by ccbench-link, 198.18.0.1
-> 198.18.0.2, backends/kernel/topology.py) with the case's bottleneck, saves an idle ping of the
path (500 probes, 5 ms apart), then runs ``iperf3 -c 198.18.0.2 -J -t 10`` (default 1 s
intervals, Linux's CUBIC) through it. The link's loss and jitter meet the iperf3 data
connection (its client port) and the ping, not iperf3's control connection.

    sudo .venv/bin/python tests/data/iperf3/make_fixtures.py tests/data/iperf3
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from ccbench.backends.kernel.topology import RECEIVER_ADDR, Topology
from ccbench.scenario.model import Scenario

#: name -> the scenario's bottleneck (docs/scenario.md)
CASES = {
    "cubic_20mbit_40ms_1bdp": {"rate": "20Mbit", "rtt": "40ms", "buffer": "1bdp"},
    "cubic_20mbit_20ms_1bdp_loss2pct": {"rate": "20Mbit", "rtt": "20ms", "buffer": "1bdp", "loss": "2%"},
}
CLIENT_PORT = 40000
SERVER_PORT = 5201


def make(name: str, bottleneck: dict, out: Path) -> None:
    sc = Scenario.from_dict({"name": name, "bottleneck": bottleneck, "flows": [{"cc": "cubic"}]})
    cfg = sc.sim_config()
    cfg["measured_tcp_ports"] = [CLIENT_PORT]
    with Topology(cfg) as topo:
        ping = topo.popen("s", ["ping", "-c", "500", "-i", "0.005", RECEIVER_ADDR], stdout=subprocess.PIPE)
        (out / f"{name}.ping.txt").write_bytes(ping.communicate(timeout=60)[0])
        server = topo.popen("r", ["iperf3", "-s", "-1", "-p", str(SERVER_PORT)], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        argv = ["iperf3", "-c", RECEIVER_ADDR, "-p", str(SERVER_PORT), "--cport", str(CLIENT_PORT)]
        client = topo.popen("s", argv + ["-C", "cubic", "-J", "-t", "10"], stdout=subprocess.PIPE)
        (out / f"{name}.json").write_bytes(client.communicate(timeout=60)[0])
        server.wait(timeout=10)


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
    for case, bb in CASES.items():
        make(case, bb, target)
        print("wrote", case)
