"""Kernel backend: real Linux TCP over ccbench-link. Needs root, TUN, iperf3 and a
built ccbench-link; each test is skipped with the reason when something is missing.
Short runs only: the whole file takes about 2–3 minutes."""

from __future__ import annotations

import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from ccbench.backends.kernel import env
from ccbench.scenario.errors import ScenarioError
from ccbench.scenario.model import Scenario
from conftest import QUIET_HOST_STEAL_PCT, ROOT, kernel_missing, kernel_run_where

pytestmark = pytest.mark.kernel


def _missing() -> str | None:
    return kernel_missing(ping=False)


needs_kernel = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def scenario(**kw) -> Scenario:
    d = {
        "duration": "8s",
        "seed": 1,
        "bottleneck": {"rate": "50Mbit", "rtt": "50ms", "buffer": "1bdp"},
        "flows": [{"cc": "cubic"}],
    }
    for k, v in kw.items():
        if k == "bottleneck":
            d["bottleneck"] = {**d["bottleneck"], **v}
        else:
            d[k] = v
    return Scenario.from_dict(d, source="test")


def link_cfg(**bottleneck) -> dict:
    return scenario(bottleneck=bottleneck).sim_config()


def our_namespaces(pid: int | None = None) -> list[str]:
    from pyroute2 import netns

    pre = f"{env.PREFIX}{pid}x" if pid else env.PREFIX
    return [n for n in netns.listnetns() if n.startswith(pre)]


# ---- refusals (no root needed) ----------------------------------------------------------------


def test_refuses_vegas_naming_the_key_and_the_alternatives(monkeypatch):
    """Without the kernel's module and where its BPF port cannot load (here: made so), vegas is
    refused, naming the flow, why the port cannot load and what the kernel can run."""
    from ccbench.backends import kernel
    from ccbench.backends.kernel import bpfcc

    if "vegas" in env.available_algorithms():
        pytest.skip("this kernel has vegas")
    monkeypatch.setattr(bpfcc, "missing", lambda: "clang is not installed")
    sc = Scenario.from_dict(
        {
            "duration": "2s",
            "bottleneck": {"rate": "10Mbit", "rtt": "20ms"},
            "flows": [{"cc": "cubic"}, {"cc": "vegas"}],
        },
        source="v.toml",
    )
    with pytest.raises(ScenarioError) as ei:
        kernel.check(sc)
    msg = str(ei.value)
    assert "flows.1.cc" in msg and "vegas" in msg and "its BPF port cannot load here: clang is not installed" in msg
    for name in env.available_algorithms():
        assert name in msg
    assert "flows.0.cc" not in msg


def test_not_root_gives_a_clear_message(monkeypatch):
    from ccbench.backends import kernel

    monkeypatch.setattr(env, "euid", lambda: 65534)
    with pytest.raises(ScenarioError) as ei:
        kernel.check(scenario())
    msg = str(ei.value)
    assert "needs root" in msg and "uid 65534" in msg and "ccbench doctor" in msg


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists(), reason="needs root and setpriv")
def test_not_root_for_real_as_nobody():
    """The real capability check as an unprivileged user. The check runs in a forked child that
    drops to nobody after everything it needs is imported, so the test does not depend on
    where the checkout (and the venv inside it) lives: a clone in a 0700 directory, which
    nobody cannot enter, must pass too."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to the nobody user")
    from ccbench.backends import kernel

    sc = Scenario.from_dict(
        {"duration": "2s", "bottleneck": {"rate": "10Mbit", "rtt": "20ms"}, "flows": [{"cc": "cubic"}]}
    )
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: drop privileges for real, run the check, report through the pipe
        code = 1
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            try:
                kernel.check(sc)
                msg = "check passed as uid %d" % os.geteuid()
            except ScenarioError as e:
                msg = str(e)
            os.write(write_fd, msg.encode())
            code = 0
        except BaseException as e:  # noqa: BLE001 - report anything to the parent
            os.write(write_fd, f"child error: {type(e).__name__}: {e}".encode())
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as fh:
        out = fh.read().decode()
    os.waitpid(pid, 0)
    assert "needs root" in out and "uid 65534" in out, out


def test_refuses_mixed_timestamps_naming_the_groups():
    from ccbench.backends import kernel

    sc = Scenario.from_dict(
        {
            "duration": "2s",
            "bottleneck": {"rate": "10Mbit", "rtt": "20ms"},
            "flows": [{"cc": "cubic"}, {"cc": "cubic", "timestamps": False}],
        },
        source="ts.toml",
    )
    with pytest.raises(ScenarioError) as ei:
        kernel.check(sc)
    ts = [p for p in ei.value.problems if p[0] == "flows.1.timestamps"]
    assert ts, str(ei.value)
    text = str(ei.value)
    assert "on in flows.0 but off in flows.1" in text and "net.ipv4.tcp_timestamps" in text
    # one value everywhere (on or off) is fine
    for v in (True, False):
        same = sc.with_overrides({"flows.0.timestamps": v, "flows.1.timestamps": v})
        try:
            kernel.check(same)
        except ScenarioError as e:
            assert not any("timestamps" in (p[0] or "") for p in e.problems), str(e)


def test_takes_an_access_rate_and_every_aqm():
    from ccbench.backends import kernel

    sc = Scenario.from_dict(
        {
            "duration": "2s",
            "bottleneck": {"rate": "10Mbit", "rtt": "20ms", "aqm": "codel"},
            "access": {"rate": "1Gbit"},
            "flows": [{"cc": "cubic"}],
        }
    )
    # ccbench-link emulates access links with a rate (crates/link/src/access.rs); whatever else
    # this machine lacks (root, iperf3, ...), neither key is refused
    try:
        kernel.check(sc)
    except ScenarioError as e:
        assert not any(p[0] in ("access.rate", "bottleneck.aqm") for p in e.problems), str(e)
    # ccbench-link serves every discipline the simulator does (its AQM arm)
    from ccbench.scenario import aqm

    assert set(kernel.LINK_AQMS) == set(aqm.NAMES)


def test_algorithms_lists_the_kernel():
    from ccbench.backends import kernel
    from ccbench.backends.kernel import bpfcc

    names = [a["name"] for a in kernel.algorithms()]
    builtin = env.available_algorithms()
    assert names[: len(builtin)] == builtin  # the kernel's own, then the BPF ports it lacks
    ports = [] if bpfcc.missing() else [cc for cc in bpfcc.PORTS if cc not in builtin]
    assert names[len(builtin) :] == ports


# ---- emulator accuracy --------------------------------------------------------------------------


@needs_kernel
def test_idle_ping_50ms_rtt():
    """150 pings over an idle 50 ms link: none lost, and median and mean within 0.5 ms of 50 on
    a quiet host (under 0.5 % of the CPU stolen while the pings ran). The path's own latency
    (TUN devices, the emulator's wake-ups) is 0.3-0.4 ms here, so a host that delays wake-ups
    pushes even the median over the bound (seen: 50.4 ms median, 50.6 mean at 0.4-2 % stolen);
    up to three tries, then skipped with what each try saw."""
    from ccbench.backends.kernel.hostcpu import read_cpu_times, steal_pct
    from ccbench.backends.kernel.topology import RECEIVER_ADDR, Topology

    seen = []
    for _ in range(3):
        with Topology(link_cfg()) as t:
            before = read_cpu_times()
            p = t.popen(
                "s", ["ping", "-n", "-c", "150", "-i", "0.02", RECEIVER_ADDR], stdout=subprocess.PIPE, text=True
            )
            out = p.communicate(timeout=30)[0]
            stolen = steal_pct(before, read_cpu_times())
        rtts = [float(x.split("time=")[1].split()[0]) for x in out.splitlines() if "time=" in x]
        assert len(rtts) == 150
        med, mean = statistics.median(rtts), statistics.fmean(rtts)
        print(f"idle ping: median {med:.3f} ms, mean {mean:.3f} ms, max {max(rtts):.3f} ms, {stolen} % stolen")
        if stolen is None or stolen < QUIET_HOST_STEAL_PCT:
            assert abs(med - 50.0) <= 0.5
            assert abs(mean - 50.0) <= 0.5
            return
        seen.append(f"median {med:.2f} ms, mean {mean:.2f} ms with {stolen:.1f} % stolen")
    pytest.skip(f"the host took CPU time in each try: {'; '.join(seen)}")


def _udp_count(loss: str, n: int = 25000) -> tuple[int, int, dict]:
    """Send n UDP datagrams sender → receiver at ~10 Mbit/s, count what arrives end to end."""
    from ccbench.backends.kernel.nsutil import netns_socket
    from ccbench.backends.kernel.topology import RECEIVER_ADDR, Topology

    with Topology(link_cfg(loss=loss)) as t:
        rx = netns_socket(t.ns_r, socket.AF_INET, socket.SOCK_DGRAM)
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        rx.bind((RECEIVER_ADDR, 9000))
        rx.settimeout(0.5)
        got = set()

        def reader():
            while True:
                try:
                    data = rx.recv(2048)
                except socket.timeout:
                    return
                got.add(int.from_bytes(data[:4], "big"))

        th = threading.Thread(target=reader)
        th.start()
        tx = netns_socket(t.ns_s, socket.AF_INET, socket.SOCK_DGRAM)
        pad = b"\0" * 96
        t_start = time.monotonic()
        for i in range(n):
            tx.sendto(i.to_bytes(4, "big") + pad, (RECEIVER_ADDR, 9000))
            if i % 100 == 99:  # 100 datagrams per 10 ms: ~10 Mbit/s of IP bytes
                d = t_start + (i + 1) / 10000 - time.monotonic()
                if d > 0:
                    time.sleep(d)
        th.join(timeout=10)
        rep = t.stop_link()
        rx.close()
        tx.close()
    return n, len(got), rep["directions"][0]


@needs_kernel
@pytest.mark.parametrize("pct", [1.0, 5.0])
def test_bernoulli_loss_within_99pct_binomial_interval(pct):
    n, got, data = _udp_count(f"{pct}%")
    p = pct / 100
    lost = n - got
    half = 2.5758 * math.sqrt(p * (1 - p) / n)
    print(
        f"loss {pct}%: {lost}/{n} = {lost / n:.4%} (99% interval {p - half:.4%}..{p + half:.4%}); "
        f"emulator: in {data['packets_in']} lost {data['lost']} dropped {data['dropped']}"
    )
    assert data["dropped"] == 0  # nothing dropped by the queue: all loss is the random model
    assert data["packets_in"] >= n
    assert p - half <= lost / n <= p + half


# ---- real TCP ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cubic_run():
    if _missing():
        pytest.skip(_missing())
    from ccbench.backends import kernel

    keep: dict = {}
    # start_jitter 0: the flow's window is exactly 10 s. With a start offset the iperf3 client
    # (whole seconds only) sends a few ms past the end of the run, into the tear-down, and the
    # emulator's lateness then reaches milliseconds (measured: p99 2-12 ms against 52 µs);
    # a known problem, left for the hardening issue: the lateness bound here is about the
    # emulator during the run.
    sc = scenario(duration="10s", probe={"ping": "200ms"}, start_jitter="0s")
    res = kernel.run(sc, keep=keep)
    return sc, res, keep


@needs_kernel
def test_single_cubic_flow_reaches_90pct_of_rate(cubic_run):
    sc, res, keep = cubic_run
    assert res.ok, res.error
    f = res.flows.iloc[0]
    rate = sc.bottleneck.rate_bps
    print(
        f"cubic goodput {f.goodput_bps / 1e6:.2f} Mbit/s of {rate / 1e6:.0f}; utilisation "
        f"{res.runs.link_utilisation[0]:.3f}; retransmits {f.retransmits}; rtt p50 {f.rtt_p50_ms:.1f} ms"
    )
    assert f.goodput_bps >= 0.9 * rate
    assert f.cc == "cubic"
    assert res.runs.backend[0] == "kernel" and res.runs.kernel_version[0] == env.kernel_version()


def _print_lateness(keep: dict) -> None:
    for d in keep["link"]["directions"]:
        lat = d["lateness_us"]
        print(
            f"{d['name']}: {lat['count']} packets, lateness p50 {lat['p50']} p99 {lat['p99']} max {lat['max']:.0f} µs"
        )
        assert lat["count"] > 1000


#: Below this share of stolen CPU time the host's stalls touch too few packets to move the p99.
QUIETER_HOST_STEAL_PCT = 0.3
#: The p50 bound was measured at 0.2-10 % steal; above that the host's stalls reach the median
#: packet too (a CI run at p99 6.9 ms lateness gave p50 54 µs), so the p50 is judged below it.
MEDIAN_JUDGED_BELOW_STEAL_PCT = 10.0


@needs_kernel
def test_emulator_lateness_at_50mbit(cubic_run):
    """ccbench-link sleeps until ~300 µs before a packet's due time and spins the rest, so the
    median packet leaves within tens of µs of it even when the host steals up to a tenth of the
    CPU (measured p50 3-18 µs at 0.2-10 % steal; a thread that only sleeps wakes 50-100 µs late
    here); and on a host that leaves the CPU to the VM, 99 % leave within 200 µs. The p99 is
    judged only on runs in which the hypervisor took under 0.3 % of the CPU: at 0.5-1 % steal
    this VM gave 136-461 µs, at 2.5-10 % 1.5-4.3 ms (backends/kernel/hostcpu.py). The run's
    emulator_late_p99_us column is the worse direction's p99 of the link's report."""
    sc, first, first_keep = cubic_run
    from ccbench.backends import kernel

    _print_lateness(first_keep)
    assert first.runs["emulator_late_p99_us"].iloc[0] == max(
        d["lateness_us"]["p99"] for d in first_keep["link"]["directions"]
    )

    # The median is judged on the fixture's run or a fresh one on a host stealing under a tenth
    # of the CPU; the p99 on the first run (of those, then fresh ones) stealing under 0.3 %.
    done = [first]
    keep_of = {id(first): first_keep}

    def reusing(results):
        queue = list(results)

        def run():
            if queue:
                return queue.pop(0)
            keep = {}
            res = kernel.run(sc, keep=keep)
            _print_lateness(keep)
            done.append(res)  # holds the result, so its id stays its own
            keep_of[id(res)] = keep
            return res

        return run

    res = kernel_run_where(reusing(done), lambda row: row.host_steal_pct < MEDIAN_JUDGED_BELOW_STEAL_PCT)
    for d in keep_of[id(res)]["link"]["directions"]:
        assert d["lateness_us"]["p50"] <= 50, d["name"]

    # every run so far may serve the p99 as well
    res = kernel_run_where(reusing(done), lambda row: row.host_steal_pct < QUIETER_HOST_STEAL_PCT, tries=len(done) + 3)
    row = res.runs.iloc[0]
    print(f"p99 lateness {row.emulator_late_p99_us} µs, host steal {row.host_steal_pct:.2f} %")
    assert row.emulator_late_p99_us <= 200


@needs_kernel
def test_series_has_tcp_info_and_queue(cubic_run):
    _, res, _ = cubic_run
    s = res.series
    assert len(s) >= 80
    late = s[s.t_s > 2]
    assert late.cwnd_pkts.notna().all() and late.rtt_ms.min() >= 49.5
    assert late.goodput_bps.mean() > 40e6
    assert (s.group == 0).all() and (s.cc == "cubic").all()
    assert res.runs.probe_rtt_p50_ms[0] >= 50
    # the link series: every 100 ms sample instant, the emulator's queue, and the probe (one
    # ping every 200 ms) in about every other interval, never below the base RTT
    ls = res.link_series
    assert ls.t_s.tolist() == pytest.approx([0.1 * k for k in range(1, 101)])
    ll = ls[ls.t_s > 2]
    assert ll.queue_bytes.notna().all() and ll.queue_bytes.max() > 0
    got = ls.probe_rtt_ms.dropna()
    assert 35 <= len(got) <= 55 and got.min() >= 49.5


@needs_kernel
def test_sim_and_kernel_tables_have_the_same_columns_and_types(cubic_run):
    from ccbench.backends import sim

    sc, kres, _ = cubic_run
    sres = sim.run(sc.with_overrides({"duration": "2s"}))
    for name in ("flows", "runs", "series", "link_series", "counters"):
        assert getattr(kres, f"{name}_table").schema == getattr(sres, f"{name}_table").schema, name
        assert list(getattr(kres, name).columns) == list(getattr(sres, name).columns), name
        # pandas dtypes too, including the columns one backend leaves null (nullable dtypes)
        kd, sd = getattr(kres, name), getattr(sres, name)
        assert dict(kd.dtypes) == dict(sd.dtypes), name


def _reorder_scenario(timestamps: bool) -> Scenario:
    return Scenario.from_dict(
        {
            "duration": "8s",
            "seed": 1,
            "bottleneck": {
                "rate": "48Mbit",
                "rtt": "50ms",
                "buffer": "300kB",
                "jitter": "8ms",
                "jitter_dist": "uniform",
                "reorder": True,
            },
            "flows": [{"cc": "cubic", "timestamps": timestamps}],
        },
        source="paws",
    )


@pytest.fixture(scope="module")
def reorder_runs():
    """CUBIC over 48 Mbit/s, 50 ms, 300 kB, uniform ±8 ms reordering jitter on the data path,
    8 s, with TCP timestamps on and off (kernel-emulation-facts.md, "Reordering and PAWS")."""
    if _missing():
        pytest.skip(_missing())
    from ccbench.backends import kernel

    return {ts: kernel.run(_reorder_scenario(ts)) for ts in (True, False)}


def _counters(res) -> dict:
    return {row["side"]: row for row in res.counters_table.to_pylist()}


@needs_kernel
def test_paws_drops_reordered_segments_only_with_timestamps(reorder_runs):
    for ts, res in reorder_runs.items():
        assert res.ok, res.error
        c = _counters(res)
        print(
            f"timestamps {ts}: goodput {res.flows.goodput_bps[0] / 1e6:.1f} Mbit/s, receiver "
            f"PAWSEstab {c['receiver']['TcpExtPAWSEstab']}, OFOQueue {c['receiver']['TcpExtTCPOFOQueue']}, "
            f"sender RetransSegs {c['sender']['TcpRetransSegs']}, SACKReorder {c['sender']['TcpExtTCPSACKReorder']}"
        )
        assert set(c) == {"sender", "receiver"}
        # the jitter reorders: the receiver queues out-of-order segments, the sender sees it
        assert c["receiver"]["TcpExtTCPOFOQueue"] > 100 and c["sender"]["TcpExtTCPSACKReorder"] > 0
        # the data went one way: the receiver sent no data and retransmitted nothing
        assert c["receiver"]["TcpRetransSegs"] <= 2
        assert c["receiver"]["TcpInSegs"] >= 0.9 * res.flows.data_received[0]
    assert _counters(reorder_runs[False])["receiver"]["TcpExtPAWSEstab"] == 0
    paws = _counters(reorder_runs[True])["receiver"]["TcpExtPAWSEstab"]
    if paws == 0:
        # 43-164 drops per 8 s run here, but one full CI run saw none (with the emulator's
        # lateness also off): one more run of the same scenario must show them.
        from ccbench.backends import kernel

        again = kernel.run(_reorder_scenario(True))
        paws = _counters(again)["receiver"]["TcpExtPAWSEstab"]
    assert paws > 0


@needs_kernel
def test_sender_retrans_segs_match_the_flows_retransmits(reorder_runs):
    """TcpRetransSegs and tcpi_total_retrans count the same retransmissions (tcp_retransmit_skb
    adds to both). The sender sampler takes its final sample and the closing MIB reading back to
    back (backends/kernel.py, FINAL_SAMPLE_LEAD_S), so they differ only by what is retransmitted
    in between (well under a millisecond) and by the control connection. Before that, the last
    10 ms sample and a later MIB reading differed by up to 9 (177 against 168)."""
    for ts, res in reorder_runs.items():
        mib = _counters(res)["sender"]["TcpRetransSegs"]
        flows = int(res.flows.retransmits.sum())
        assert flows > 0, "no retransmissions: the comparison would be empty"
        assert abs(mib - flows) <= max(3, 0.02 * flows), (ts, mib, flows)


@needs_kernel
def test_bbr_flow_reports_bbr_info():
    from ccbench.backends import kernel

    res = kernel.run(scenario(duration="4s", flows=[{"cc": "bbr"}]))
    assert res.ok, res.error
    s = res.series[res.series.t_s > 1.5]
    assert s.bw_est_bps.notna().all() and (s.bw_est_bps > 10e6).all()
    assert set(s.cc_state) <= {"startup", "drain", "probe_bw", "probe_rtt"}
    assert res.flows.goodput_bps[0] > 30e6


# ---- clean-up ---------------------------------------------------------------------------------

RUNNER = textwrap.dedent("""
    import sys
    from ccbench.backends import kernel
    from ccbench.scenario import Scenario
    sc = Scenario.from_dict({"duration": "30s", "bottleneck": {"rate": "50Mbit", "rtt": "50ms"},
                             "flows": [{"cc": "cubic", "count": 2}], "probe": {"ping": "100ms"}})
    kernel.run(sc)
""")


def _wait_for_run(namespaces, timeout_s: float) -> tuple[list[str], set[int]] | None:
    """Wait until a run with 2 CUBIC flows and a ping is under way in the two namespaces that
    ``namespaces()`` lists: (namespaces, pids in them), or None after ``timeout_s``."""
    from ccbench.backends.kernel.topology import pids_in_netns

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        nss = namespaces()
        if len(nss) == 2:
            pids = set()
            for ns in nss:
                pids |= set(pids_in_netns(ns))
            if len(pids) >= 5:  # 2 iperf3 servers, 2 clients, ping
                return nss, pids
        time.sleep(0.1)
    return None


def _start_runner():
    p = subprocess.Popen(
        [sys.executable, "-c", RUNNER],
        env={**os.environ, "PYTHONPATH": str(ROOT / "python")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    started = _wait_for_run(lambda: our_namespaces(p.pid), 20)
    if started is None:
        p.kill()
        raise AssertionError(f"run did not start: {p.communicate()[1].decode()[-2000:]}")
    return p, *started


def _link_pids(nss) -> list[int]:
    from ccbench.backends.kernel.topology import _link_processes

    return [pid for pid, argv in _link_processes() if any(ns in a for ns in nss for a in argv)]


def _alive(pid):
    from ccbench.backends.kernel.topology import _alive as alive

    return alive(pid)


@needs_kernel
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_leaves_nothing(sig):
    p, nss, pids = _start_runner()
    links = _link_pids(nss)
    assert links, "ccbench-link not found"
    time.sleep(1.5)
    p.send_signal(sig)
    p.wait(timeout=20)
    assert our_namespaces(p.pid) == []
    left = [x for x in pids | set(links) if _alive(x)]
    assert left == [], f"processes left: {left}"


SWEEP_SCENARIO = """
duration = "10s"
[bottleneck]
rate = "50Mbit"
rtt = "50ms"
[[flows]]
cc = "cubic"
count = 2
[probe]
ping = "100ms"
"""


@needs_kernel
def test_ctrl_c_of_a_kernel_sweep_leaves_nothing(tmp_path):
    """Ctrl-C in a terminal sends SIGINT to the whole process group: the sweep process and its
    worker both get it, the worker tears its run down, and the sweep process stops the worker
    (SIGTERM, then SIGKILL after 5 s). The race this guards against: a worker that, its SIGTERM
    spent on the teardown, takes the next queued run from the pool is SIGKILLed in the middle
    of it, and that run's namespaces and iperf3 processes stay behind (about 4 of 10 tries when
    a worker did so). Three tries, each with more runs queued behind the interrupted one."""
    sc = tmp_path / "s.toml"
    sc.write_text(SWEEP_SCENARIO)
    for attempt in range(3):
        before = set(our_namespaces())
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ccbench.cli",
                "sweep",
                str(sc),
                "--backend",
                "kernel",
                "--repeat",
                "3",
                "--out",
                str(tmp_path / f"store{attempt}"),
                "-q",
            ],
            env={**os.environ, "PYTHONPATH": str(ROOT / "python")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            started = _wait_for_run(lambda before=before: sorted(set(our_namespaces()) - before), 30)
            assert started is not None, f"try {attempt}: run did not start"
            nss, pids = started
            links = _link_pids(nss)
            time.sleep(1.5)
            os.killpg(p.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
            p.wait(timeout=60)
            time.sleep(6)  # past the sweep's 5 s SIGKILL deadline for its workers
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        assert p.returncode == 130, p.stderr.read().decode()[-2000:]
        assert sorted(set(our_namespaces()) - before) == [], f"try {attempt}: namespaces left"
        left = [x for x in pids | set(links) if _alive(x)]
        assert left == [], f"try {attempt}: processes left: {left}"


@needs_kernel
def test_cleanup_removes_what_a_killed_run_left():
    from ccbench.backends.kernel.topology import cleanup_stale

    p, nss, pids = _start_runner()
    links = _link_pids(nss)
    p.kill()  # SIGKILL: no finally, no atexit
    p.wait()
    time.sleep(0.3)
    assert our_namespaces(p.pid) == nss  # left behind
    done = cleanup_stale()
    assert sorted(done["namespaces"]) == sorted(nss)
    assert our_namespaces(p.pid) == []
    left = [x for x in pids | set(links) if _alive(x)]
    assert left == [], f"processes left: {left}"


@needs_kernel
def test_cleanup_keeps_runs_in_progress():
    from ccbench.backends.kernel.topology import Topology, cleanup_stale

    with Topology(link_cfg()) as t:
        done = cleanup_stale()
        assert t.ns_s not in done["namespaces"] and t.ns_s in done["kept"]
        assert t.ns_s in our_namespaces()


@needs_kernel
def test_sock_diag_reads_tcp_info_and_bbr_info():
    """Our own sock_diag implementation against a loopback connection inside a fresh namespace."""
    from pyroute2 import netns

    from ccbench.backends.kernel.diag import DiagSocket
    from ccbench.backends.kernel.nsutil import netns_socket
    from ccbench.backends.kernel.topology import _iproute_in, new_tag

    ns = new_tag() + "-s"
    netns.create(ns)
    try:
        with _iproute_in(ns) as ipr:
            ipr.link("set", index=ipr.link_lookup(ifname="lo")[0], state="up")
        srv = netns_socket(ns, socket.AF_INET, socket.SOCK_STREAM)
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        cli = netns_socket(ns, socket.AF_INET, socket.SOCK_STREAM)
        cli.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"bbr")
        cli.connect(srv.getsockname())
        conn, _ = srv.accept()
        cli.sendall(b"x" * 200_000)
        conn.recv(65536)
        with DiagSocket(ns) as d:
            socks = d.dump()
            assert srv.getsockname()[1] in d.listening_ports()
        mine = [s for s in socks if s.sport == cli.getsockname()[1]]
        assert len(mine) == 1
        s = mine[0]
        assert s.cc == "bbr" and s.bbr is not None and s.bbr["pacing_gain"] > 0
        assert s.info["snd_cwnd"] >= 4 and s.info["snd_mss"] > 0 and s.info["bytes_acked"] > 0
        assert s.info["state"] == 1  # ESTABLISHED
        for x in (cli, conn, srv):
            x.close()
    finally:
        netns.remove(ns)


@needs_kernel
def test_fixed_size_flows_complete_with_fct_and_stagger():
    from ccbench.backends import kernel

    sc = scenario(
        duration="5s",
        bottleneck={"rate": "20Mbit", "rtt": "40ms"},
        start_jitter="0s",
        flows=[{"cc": "cubic", "count": 2, "start": "0s+1s", "size": "2MB"}],
    )
    res = kernel.run(sc)
    assert res.ok, res.error
    f = res.flows.set_index("flow_id")
    for i, start in ((0, 0.0), (1, 1.0)):
        assert bool(f.completed[i]) and f.bytes_acked[i] == 2_000_000
        assert abs(f.start_s[i] - start) < 0.05
        # 2 MB at 20 Mbit/s: 0.8 s at line rate + slow start; goodput = size / fct
        assert 0.8 < f.fct_s[i] < 2.0
        assert abs(f.goodput_bps[i] - 2_000_000 * 8 / f.fct_s[i]) < 1
    # a flow that would start after the end is refused before anything runs (docs/limits.md)
    from ccbench.scenario.errors import ScenarioError

    with pytest.raises(ScenarioError, match=r"flows\.1\.start"):
        scenario(
            duration="5s",
            bottleneck={"rate": "20Mbit", "rtt": "40ms"},
            start_jitter="0s",
            flows=[{"cc": "cubic"}, {"cc": "reno", "start": "6s"}],
        )


# ---- link series from ping output (no namespaces needed) --------------------------------------


def test_ping_replies_are_parsed_with_their_receive_time():
    from ccbench.backends.kernel.traffic import parse_ping

    out = (
        b"PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n"
        b"[1700000000.100000] 64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=50.3 ms\n"
        b"[1700000000.350500] 64 bytes from 10.0.0.2: icmp_seq=2 ttl=64 time=61 ms\n"
        b"\n--- 10.0.0.2 ping statistics ---\n2 packets transmitted, 2 received, 0% packet loss, time 250ms\n"
        b"rtt min/avg/max/mdev = 50.3/55.6/61.0/5.3 ms\n"
    )
    got = parse_ping(out, wall_minus_mono=1700000000.0 - 100.0)  # monotonic = wall - offset
    assert [r for _, r in got] == [50.3, 61.0]
    assert [t for t, _ in got] == pytest.approx([100.1, 100.3505])
    assert parse_ping(b"64 bytes from x: icmp_seq=1 ttl=64 time=7.5 ms\n", 0.0) == [(None, 7.5)]


def test_link_series_rows_bin_the_latest_reply_of_each_interval():
    from ccbench.backends.kernel.backend import link_series_rows

    ticks = [0.1, 0.2, 0.3, 0.4]
    replies = [(0.05, 40.0), (0.15, 41.0), (0.19, 42.0), (0.35, 43.0), (None, 99.0), (0.45, 44.0)]
    rows = link_series_rows(ticks, lambda t: int(t * 1000), replies)
    assert [r["t_s"] for r in rows] == ticks
    assert [r["queue_bytes"] for r in rows] == [100, 200, 300, 400]
    # (0, 0.1]: 40; (0.1, 0.2]: the latest of 41 and 42; (0.2, 0.3]: none; (0.3, 0.4]: 43
    assert [r["probe_rtt_ms"] for r in rows] == [40.0, 42.0, None, 43.0]
    # a reply exactly at an instant belongs to the interval it ends
    assert [r["probe_rtt_ms"] for r in link_series_rows([0.1, 0.2], lambda t: None, [(0.1, 5.0)])] == [5.0, None]
    assert [r["probe_rtt_ms"] for r in link_series_rows([0.1, 0.2], lambda t: 0, [])] == [None, None]


def test_iperf3_duration_is_whole_seconds_rounded_up():
    """iperf3 reads -t with atoi: a flow starting at 3.6 ms (start_jitter) of a 10 s run must
    get -t 10, not "9.996" (which iperf3 runs as 9 s, leaving the link idle for the last second)."""
    from ccbench.backends.kernel.traffic import client_argv
    from ccbench.scenario.model import FlowSpec

    f = FlowSpec(id=0, group=0, cc="cubic", start_s=0.0036, rwnd_bytes=1 << 20, size_bytes=None, pacing=False)
    for dur, want in ((10 - 0.0036, "10"), (10.0, "10"), (0.3, "1"), (2.5, "3")):
        argv = client_argv(f, 5201, 40001, dur, "autotune")
        assert argv[argv.index("-t") + 1] == want, (dur, argv)
