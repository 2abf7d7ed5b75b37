"""The fit's closed loop on the real kernel: CUBIC over ccbench-link with `[output] pcap`,
which the kernel backend takes with tcpdump on the sender namespace's TUN (TSO and GSO off),
fitted and judged against the link (python/ccbench/fit/closed_loop.py: rate 5 %, base RTT 2 ms,
buffer 25 %, loss 30 % of what the link drew or inside the interval, the loss model, jitter
1 ms). The same links run on the simulator in benchmarks/fit/. A run the host disturbed (CPU
steal, late emulator) is taken again (conftest.faithful_kernel_run): the estimators read the
link's timing from the capture, and a late emulator changes that timing."""

from __future__ import annotations

import pytest

from ccbench.fit import fit_capture
from ccbench.fit.closed_loop import LINKS, judge, run_link
from conftest import faithful_kernel_run, kernel_missing

pytestmark = pytest.mark.kernel

MISSING = kernel_missing() or (None if __import__("shutil").which("tcpdump") else "tcpdump not installed")


@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
@pytest.mark.parametrize("name", list(LINKS))
def test_fit_recovers_the_kernel_link(name, tmp_path):
    link = LINKS[name]
    pcap = tmp_path / "flow0.pcap"
    drawn: dict[str, float] = {}

    def run():
        drawn["loss"], res = run_link(link, "kernel", pcap)
        return res

    faithful_kernel_run(run, tries=2)
    fit = fit_capture(pcap)
    verdicts = judge(fit, link, drawn["loss"])
    misses = [f"{j.parameter}: set {j.truth}, fitted {j.fitted} ({j.evidence})" for j in verdicts if not j.ok]
    assert not misses, "\n".join(misses)


def test_kernel_capture_refuses_a_reverse_flow_0():
    """The capture is taken in the sender namespace: a reverse flow 0 sends from the other one."""
    from ccbench.backends.kernel import sender_capture
    from ccbench.scenario.model import Scenario

    sc = Scenario.from_dict(
        {
            "bottleneck": {"rate": "10Mbit", "rtt": "20ms"},
            "flows": [{"cc": "cubic", "direction": "reverse"}],
            "output": {"pcap": "x.pcap"},
        }
    )
    keys = [k for k, why, _ in sender_capture.problems(sc) if "reverse flow" in why]
    assert keys == ["output.pcap"]
