"""Reverse flows and probe percentiles on the kernel backend (RRUL-style latency under load). A
reverse flow is the iperf3 client started with ``-R``: it still connects from the sender
namespace, the server in the receiver namespace sends, so its tcp_info is read on the receiver
namespace's socket. The run needs root, TUN, iperf3, ping and a built ccbench-link and is skipped
with the reason otherwise; it uses the backend's own addresses (198.18.0.1/2, benchmarking range
198.18.0.0/15) in namespaces it creates and removes: one 8 s run. The other tests run anywhere."""

from __future__ import annotations

import os

import pytest

from ccbench.backends.kernel import env
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario
from conftest import kernel_missing

RATE_BPS = 20e6


def _missing() -> str | None:
    return kernel_missing(ping=True)


def scenario(flows: list[dict], bottleneck: dict | None = None, **kw) -> Scenario:
    d = {
        "duration": "8s",
        "seed": 1,
        "start_jitter": "0s",
        "bottleneck": {"rate": "20Mbit", "rtt": "20ms", **(bottleneck or {})},
        "flows": flows,
        **kw,
    }
    return Scenario.from_dict(d, source="test_kernel_rrul")


# ---- anywhere -----------------------------------------------------------------------------------


def test_a_reverse_flow_is_an_iperf3_client_with_R():
    from ccbench.backends.kernel.traffic import client_argv

    fwd, rev = scenario([{"cc": "cubic"}, {"cc": "cubic", "direction": "reverse"}]).expanded_flows()
    assert "-R" not in client_argv(fwd, 5201, 40001, 8.0, "autotune")
    argv = client_argv(rev, 5202, 40002, 8.0, "autotune")
    assert "-R" in argv and argv[argv.index("-C") + 1] == "cubic"


def test_samples_are_taken_from_the_sending_socket_whichever_namespace_holds_it():
    from ccbench.backends.kernel.traffic import DiagSampler, by_role

    ports = {40001: 0, 40002: 1}
    left = DiagSampler("ns-s", ports, 0.0, side="sender", senders={0})
    right = DiagSampler("ns-r", ports, 0.0, side="receiver", senders={1})
    assert left.senders == {0} and right.senders == {1}
    snd, rcv = by_role(left, right, reverse={1})
    assert snd.samples[0] is left.samples[0] and snd.samples[1] is right.samples[1]
    assert rcv.samples[0] is right.samples[0] and rcv.samples[1] is left.samples[1]
    # without reverse flows the defaults are the old roles: the sender namespace sends
    assert DiagSampler("ns-s", ports, 0.0, side="sender").senders == {0, 1}
    assert DiagSampler("ns-r", ports, 0.0, side="receiver").senders == set()


def test_link_series_percentiles_of_the_replies_of_each_interval():
    from ccbench.backends.kernel.backend import link_series_rows

    # ticks every 0.1 s; replies: three in (0, 0.1], none in (0.1, 0.2], one in (0.2, 0.3]
    replies = [(0.02, 30.0), (0.05, 10.0), (0.09, 20.0), (0.25, 40.0), (None, 99.0)]
    rows = link_series_rows([0.1, 0.2, 0.3], lambda t: 0, replies)
    assert [r["probe_rtt_ms"] for r in rows] == [20.0, None, 40.0]  # the latest, as before
    assert [r["probe_rtt_p50_ms"] for r in rows] == [20.0, None, 40.0]  # median of 10, 20, 30
    # p95 by linear interpolation (as the run's): 20 + 0.9 × (30 − 20)
    assert rows[0]["probe_rtt_p95_ms"] == pytest.approx(29.0)
    assert rows[1]["probe_rtt_p95_ms"] is None and rows[2]["probe_rtt_p95_ms"] == 40.0


def _problem_keys(sc: Scenario) -> list[str]:
    from ccbench.backends import kernel

    try:
        kernel.check(sc)
    except ScenarioError as e:
        return [p[0] for p in e.problems]
    return []


def test_reverse_flows_the_emulator_cannot_run_as_the_simulator_does_are_refused():
    # ccbench-link impairs per direction, the simulator per packet kind: refused, not run differently
    for b in ({"loss": "1%"}, {"jitter": "2ms"}):
        keys = _problem_keys(scenario([{"cc": "cubic"}, {"cc": "cubic", "direction": "reverse"}], b))
        assert "flows.1.direction" in keys, (b, keys)
        assert "flows.0.direction" not in _problem_keys(scenario([{"cc": "cubic"}], b))
    keys = _problem_keys(scenario([{"cc": "cubic", "direction": "reverse", "size": "1MB"}]))
    assert "flows.0.size" in keys
    ok = _problem_keys(scenario([{"cc": "cubic"}, {"cc": "cubic", "direction": "reverse"}]))
    assert not any(k.startswith("flows.") for k in ok), ok


# ---- root: one forward and one reverse CUBIC flow ----------------------------------------------


def _our_namespaces() -> list[str]:
    from pyroute2 import netns

    return [n for n in netns.listnetns() if n.startswith(f"{env.PREFIX}{os.getpid()}x")]


@pytest.mark.kernel
@pytest.mark.skipif(_missing() is not None, reason=_missing() or "")
def test_one_forward_and_one_reverse_cubic_flow_on_the_kernel():
    """20 Mbit/s, 20 ms, FQ-CoDel, one CUBIC flow each way and a ping every 20 ms, 8 s. Each
    direction carries one flow's data and the other's ACKs, which take at most 52/(1500+52) =
    3.4 % of it (crates/sim/tests/rrul.rs), so each flow can reach 93 % of the rate as goodput;
    70 % leaves room for slow start (< 0.5 s of 8) and the shared CPU. FQ-CoDel, as in the
    simulator's test: on a shared drop-tail FIFO two-way traffic adds ACK compression."""
    from ccbench.backends import kernel

    sc = scenario(
        [{"cc": "cubic"}, {"cc": "cubic", "direction": "reverse"}],
        {"aqm": "fq_codel", "buffer": "4bdp"},
        probe={"ping": "20ms"},
    )
    keep: dict = {}
    res = kernel.run(sc, keep=keep)
    assert _our_namespaces() == [], "the run left its namespaces behind"
    assert res.ok, res.error
    fl = res.flows.sort_values("flow_id").reset_index(drop=True)
    print(fl[["flow_id", "direction", "cc", "goodput_bps", "bytes_acked", "retransmits", "rtt_p50_ms"]])
    assert list(fl["direction"]) == ["forward", "reverse"]
    assert list(fl["cc"]) == ["cubic", "cubic"], "the reverse flow's sending socket runs the client's -C"
    for _, f in fl.iterrows():
        assert f["goodput_bps"] >= 0.70 * RATE_BPS, (f["direction"], f["goodput_bps"])
        # the samples are the sending socket's: it had most of what the receiver got acknowledged
        # (bytes_acked of a receiving socket would be a few control bytes)
        got = f["goodput_bps"] * (f["end_s"] - f["start_s"]) / 8
        assert f["bytes_acked"] >= 0.9 * got, (f["direction"], f["bytes_acked"], got)
        assert f["data_sent"] > 0.9 * got / 1448
    # each direction of the emulator carried one flow's data (the link counts packets per direction)
    links = {link["name"]: link for link in res.links}
    data_pkts = [f["data_sent"] for _, f in fl.iterrows()]
    assert links["bottleneck/fwd"]["arrived"] >= 0.9 * data_pkts[0]
    assert links["bottleneck/rev"]["arrived"] >= 0.9 * data_pkts[1]
    # probe percentiles per interval: null exactly where no reply arrived, p50 <= p95
    ls = res.link_series
    has = ls["probe_rtt_ms"].notna()
    assert has.sum() >= 0.8 * len(ls), "a ping every 20 ms: replies in most 100 ms intervals"
    assert (ls["probe_rtt_p50_ms"].notna() == has).all() and (ls["probe_rtt_p95_ms"].notna() == has).all()
    got = ls[has]
    assert (got["probe_rtt_p50_ms"] <= got["probe_rtt_p95_ms"]).all()
    assert (got["probe_rtt_p50_ms"] >= 0.95 * sc.base_rtt_s * 1e3).all()
