"""``[output] pcap`` on the kernel backend: tcpdump in the sender namespace on its TUN device,
filtered to flow 0's data connection (its client port), so the file holds what ``ccbench fit``
assumes (docs/fit.md): data segments as they leave the sending host and ACKs as they reach it.
The topology already turns TSO and GSO off on that TUN (topology.Topology._configure), so every
captured segment is one wire packet."""

from __future__ import annotations

import os
from pathlib import Path

from ...livecapture.tcpdump import Tcpdump, tcpdump_path
from ...scenario.model import Scenario
from .topology import TUN_S, Topology

__all__ = ["problems", "start"]


def problems(scenario: Scenario) -> list[tuple[str, str, str]]:
    """What keeps this machine from capturing flow 0 at its sender (check()'s triples)."""
    out = []
    if tcpdump_path() is None:
        out.append(("output.pcap", "tcpdump is not installed", "`make system-deps` or `apt-get install tcpdump`"))
    flows = scenario.expanded_flows()
    if flows and flows[0].direction == "reverse":
        out.append(
            (
                "output.pcap",
                "flow 0 is a reverse flow: its sender is in the receiver namespace, where the capture is not taken",
                'a forward flow 0 (direction = "forward"), or no [output] pcap',
            )
        )
    if os.environ.get("CCBENCH_LINK_GSO") == "1":
        out.append(
            (
                "output.pcap",
                "CCBENCH_LINK_GSO=1 turns TSO on at the sender, so the capture would hold super-segments",
                "unset CCBENCH_LINK_GSO for a capture",
            )
        )
    return out


def start(topo: Topology, path: str, client_port: int) -> Tcpdump:
    """A running capture of the connection from ``client_port`` on the sender's TUN."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    return Tcpdump(TUN_S, out, f"tcp port {client_port}", netns=topo.ns_s).start()
