"""The kernel backend: the real Linux TCP stack of this machine, in two network namespaces joined
by our userspace link emulator (crates/link, ``ccbench-link``), driven by iperf3.

``check(scenario)`` refuses what this machine cannot run (not root, no TUN, no iperf3, no
ccbench-link, an algorithm the kernel lacks, a mix of ECN on and off, a reverse flow it cannot
run yet) before anything starts; ``run(scenario)`` builds the namespaces, starts the emulator
and the flows, samples tcp_info through sock_diag, tears everything down in every case and
returns the same tables as the simulator through ``build_result``. See docs/kernel-backend.md.
"""

from __future__ import annotations

import math
import time
from typing import Any, Optional

from ...results.run_result import RunResult, build_result, failed_result
from ...results.schema import COUNTER_NAMES, COUNTER_SIDES
from ...scenario import aqm as _aqm
from ...scenario.errors import ScenarioError
from ...scenario.model import DEFAULT_RWND_BYTES, Scenario
from . import bpfcc, env, sender_capture
from .diag import CA_STATES, bbr_mode
from .hostcpu import read_cpu_times, steal_pct
from .wifi import run_columns as wifi_run_columns

__all__ = ["NAME", "run", "check", "algorithms", "available_algorithms", "LINK_AQMS"]

NAME = "kernel"
#: The queue disciplines ccbench-link runs: all of the simulator's (its AQM arm serves the same
#: ccbench-queue code, built from the same bottleneck.aqm / aqm_params).
LINK_AQMS = tuple(_aqm.NAMES)
#: Lead time between starting the samplers and the scenario's t = 0.
LEAD_S = 0.3
#: Internal sock_diag sampling period (congestion events, RTT statistics); the series table is
#: taken from these samples at the scenario's sample interval.
FAST_SAMPLE_S = 0.01
#: The sender sampler takes its last sample this long before the end (a dump of a few dozen
#: sockets takes well under it), so that the sample still falls inside the run's window.
FINAL_SAMPLE_LEAD_S = 0.002


#: Algorithms the simulator models that no kernel here can run, with the reason.
SIM_ONLY_ALGORITHMS = {
    "bbr3": "'bbr3' is BBR v3 (google/bbr branch v3), which mainline Linux does not have: this kernel's "
    "`bbr` is BBR v1, and there is no BPF port of v3",
}


def available_algorithms() -> list[str]:
    """What the kernel can run: its own modules (kernel.env) and, where BPF congestion controls
    load here, the BPF ports of the others (bpfcc.PORTS), by their scenario names."""
    builtin = env.available_algorithms()
    names = [n for n in builtin if not n.startswith(bpfcc.NAME_PREFIX)]
    return names + [cc for cc in bpfcc.PORTS if cc not in names and bpfcc.implementation(cc, builtin)]


def algorithms() -> list[dict]:
    builtin = env.available_algorithms()
    rows = []
    for n in available_algorithms():
        if n in builtin:
            notes = f"the running kernel's module ({env.kernel_version()})"
        else:
            notes = f"our BPF port of Linux's tcp_{n}.c, built and registered as {bpfcc.registered_name(n)} on use"
        rows.append({"name": n, "linux": f"tcp_{n}", "notes": notes})
    return rows


def check(scenario: Scenario) -> None:
    """Raise ScenarioError (all problems, first one's key) for what this machine cannot run."""
    src = scenario.source
    problems: list[tuple[Optional[str], str, Optional[str]]] = []
    if not env.is_root():
        problems.append(
            (
                "backend",
                f"the kernel backend needs root (running as uid {env.euid()}); "
                "namespaces and TUN devices need CAP_NET_ADMIN",
                "to run as root, e.g. `sudo .venv/bin/ccbench run ... --backend kernel`; "
                "`ccbench doctor` lists what else is missing",
            )
        )
    ok, why = env.tun_available()
    if not ok:
        problems.append(("backend", f"no usable TUN device: {why}", "/dev/net/tun (see `ccbench doctor`)"))
    ok, why = env.netns_available()
    if not ok:
        problems.append(("backend", why, "network namespaces and iproute2 (see `ccbench doctor`)"))
    if env.iperf3_path() is None:
        problems.append(("backend", "iperf3 is not installed", "`make system-deps` or `apt-get install iperf3`"))
    if env.link_binary() is None:
        problems.append(
            (
                "backend",
                "ccbench-link is not built",
                "`make build` (or `cargo build --release -p ccbench-link`), or CCBENCH_LINK=/path",
            )
        )
    b = scenario.bottleneck
    if b.aqm not in LINK_AQMS:
        problems.append(("bottleneck.aqm", f"'{b.aqm}' is not implemented in ccbench-link yet", " or ".join(LINK_AQMS)))
    if scenario.probe.ping_s > 0 and env.ping_path() is None:
        problems.append(("probe.ping", "ping is not installed", "`apt-get install iputils-ping`, or ping = 0"))
    if 0 < scenario.probe.ping_s < 0.002:
        problems.append(
            (
                "probe.ping",
                f"{scenario.probe.ping_s * 1e3:g} ms is below ping's 2 ms minimum interval",
                "an interval of at least 2ms",
            )
        )
    # one sysctl per namespace for every connection (a per-route `features ecn` would not help:
    # every flow goes to the same receiver address)
    for key, what, sysctl in (
        ("timestamps", "TCP timestamps are", "net.ipv4.tcp_timestamps"),
        ("ecn", "ECN is", "net.ipv4.tcp_ecn"),
    ):
        vals = [getattr(g, key) for g in scenario.flows]
        if len(set(vals)) > 1:
            on = ", ".join(f"flows.{i}" for i, v in enumerate(vals) if v)
            off = ", ".join(f"flows.{i}" for i, v in enumerate(vals) if not v)
            first = next(i for i, v in enumerate(vals) if v != vals[0])
            problems.append(
                (
                    f"flows.{first}.{key}",
                    f"{what} on in {on} but off in {off}; the kernel backend has one "
                    f"{sysctl} per namespace, for every connection",
                    f"the same {key} value in every [[flows]] group (the sim backend can mix them)",
                )
            )
    reverse = [i for i, g in enumerate(scenario.flows) if g.direction == "reverse"]
    for i in reverse:
        if scenario.flows[i].size_bytes is not None:
            problems.append(
                (
                    f"flows.{i}.size",
                    "a fixed-size reverse flow is not implemented in the kernel "
                    "backend yet (bulk reverse flows are: iperf3 -R)",
                    'a bulk reverse flow (no size), or direction = "forward"',
                )
            )
    if reverse and (b.loss.model != "none" or b.jitter_s > 0):
        # ccbench-link impairs a whole direction (impair = data: the forward one), the simulator
        # impairs by packet kind (a reverse flow's data too); refused rather than run differently
        problems.append(
            (
                f"flows.{reverse[0]}.direction",
                "reverse flows with bottleneck loss or jitter: ccbench-link applies `impair` per "
                "direction, not per packet kind as the simulator does",
                "no loss and no jitter with reverse flows on the kernel backend (the sim backend runs both)",
            )
        )
    avail = available_algorithms()
    for i, g in enumerate(scenario.flows):
        if g.cc in SIM_ONLY_ALGORITHMS:
            problems.append((f"flows.{i}.cc", SIM_ONLY_ALGORITHMS[g.cc], "the sim backend, or `bbr` (BBR v1) here"))
        elif g.cc == "prague" and g.cc not in avail:
            problems.append(
                (
                    f"flows.{i}.cc",
                    f"this kernel ({env.kernel_version()}) has no tcp_prague: TCP Prague is not in "
                    "mainline Linux (it lives in the L4STeam/linux tree, as a module this kernel "
                    "cannot load)",
                    "the sim backend, which runs prague (docs/algorithms.md), or a kernel built with tcp_prague",
                )
            )
        elif g.cc not in avail:
            port = f" (its BPF port cannot load here: {bpfcc.missing()})" if g.cc in bpfcc.PORTS else ""
            problems.append(
                (
                    f"flows.{i}.cc",
                    f"this kernel ({env.kernel_version()}) cannot run '{g.cc}'{port}",
                    "one of the kernel's algorithms: " + (", ".join(avail) or "none readable"),
                )
            )
    if scenario.output.pcap:
        problems += sender_capture.problems(scenario)
    if problems:
        k, p, e = problems[0]
        raise ScenarioError(src, k, p, e, problems)


# --------------------------------------------------------------------------------------------


def _min_rtt_ms(row, ix) -> Optional[float]:
    """The algorithm's own min-RTT estimate, as the simulator reports it: for BBR its 10 s
    windowed min_rtt from INET_DIAG_BBRINFO (it expires and ProbeRTT renews it), for the others
    tcpi_min_rtt (the stack's minimum over a 300 s window, which only falls)."""
    us = row[ix["bbr_min_rtt_us"]]
    if us is None:
        us = row[ix["min_rtt"]]
    return us / 1000.0 if us else None


def _pct(xs: list[float], q: float) -> Optional[float]:
    if not xs:
        return None
    s = sorted(xs)
    k = (len(s) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _rwnd_plan(flows) -> tuple[dict[int, str], int]:
    """How each flow's rwnd (its largest window) is honoured: ``setsockopt`` (iperf3 -w,
    SO_RCVBUF/SO_SNDBUF; Linux caps it at net.core.rmem_max, which a namespace cannot raise) or
    ``autotune`` (receive-buffer autotuning up to the receiver namespace's net.ipv4.tcp_rmem
    max). Either way the buffer is sized so that its window is the rwnd (traffic.rcvbuf_for_window).
    The default rwnd autotunes to a 6 MiB tcp_rmem max, as on an untouched Linux host. Returns
    the plan and the tcp_rmem max."""
    from .traffic import rcvbuf_for_window, rmem_max, so_rcvbuf_for_window

    rm = rmem_max()

    def autotuned(f) -> bool:
        return f.rwnd_bytes == DEFAULT_RWND_BYTES or so_rcvbuf_for_window(f.rwnd_bytes) > rm

    plan = {f.id: "autotune" if autotuned(f) else "setsockopt" for f in flows}
    auto = [f.rwnd_bytes for f in flows if plan[f.id] == "autotune"]
    return plan, rcvbuf_for_window(max(auto) if auto else DEFAULT_RWND_BYTES)


def _utilisation(q_t: list[float], departed: list[int], dur: float, rate_bps: int) -> Optional[float]:
    """IP bytes that left the bottleneck during [0, duration] / (rate × duration), from the
    emulator's cumulative departure counter sampled on the run's clock."""
    import bisect

    if not q_t or len(departed) != len(q_t):
        return None
    i0 = max(0, bisect.bisect_right(q_t, 0.0) - 1)
    i1 = max(0, bisect.bisect_right(q_t, dur) - 1)
    span = q_t[i1] - q_t[i0]
    if span <= 0:
        return None
    return (departed[i1] - departed[i0]) * 8.0 / (rate_bps * span)


def run(scenario: Scenario, spin_us: Optional[int] = None, keep: Optional[dict] = None) -> RunResult:
    """Run the scenario on this kernel. Infrastructure errors give a failed RunResult;
    KeyboardInterrupt / SIGTERM tear everything down and propagate. ``keep``, if given, receives
    the raw material (link report, sock_diag samples, iperf3 JSON) for diagnostics."""
    check(scenario)
    wall0 = time.perf_counter()
    try:
        return _run(scenario, wall0, spin_us, keep)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:
        return failed_result(scenario, NAME, f"{type(e).__name__}: {e}", time.perf_counter() - wall0)


def _run(scenario: Scenario, wall0: float, spin_us: Optional[int], keep: Optional[dict]) -> RunResult:
    from . import traffic as tr
    from .topology import Topology, signals_raise

    flows = scenario.expanded_flows()
    plan, rmem_cap = _rwnd_plan(flows)
    link_cfg = scenario.sim_config()
    # Only the measured connections' data segments and ACKs meet the scenario's loss and jitter
    # (crates/link/src/measured.rs): not iperf3's control connection, the handshakes or the
    # cookie, which the simulator does not have, so that both backends' random streams stay
    # aligned and a setup packet is never lost.
    link_cfg["measured_tcp_ports"] = [tr.BASE_CPORT + f.id for f in flows]
    dur = scenario.duration_s
    timestamps = all(g.timestamps for g in scenario.flows)  # check() refused a mix
    ecn = all(g.ecn for g in scenario.flows)  # likewise
    reverse = {f.id for f in flows if f.direction == "reverse"}
    builtin = env.available_algorithms()
    impls = {f.cc: bpfcc.implementation(f.cc, builtin) for f in flows}  # check() refused the impossible
    ports = sorted(cc for cc, (_, how) in impls.items() if how == "bpf")
    mib: dict[str, dict] = {}
    pcap_dropped: Optional[int] = None
    host_steal: Optional[float] = None
    with (
        signals_raise(),
        bpfcc.loaded(ports),
        Topology(
            link_cfg,
            spin_us=spin_us,
            tcp_rmem_max=rmem_cap,
            tcp_timestamps=timestamps,
            tcp_ecn=True if ecn else None,
            two_way=bool(reverse),
        ) as topo,
    ):
        # iperf3's data connection opens ~3 RTTs (control connection) plus a process start after
        # launch: launch that much early; the flow's measured start is what the tables record.
        setup = 3 * scenario.base_rtt_s + 0.07
        t0 = time.monotonic() + max(LEAD_S, setup + 0.1)
        fps = [
            tr.FlowProc(
                id=f.id,
                cc=impls[f.cc][0],
                start_s=f.start_s,
                port=tr.BASE_PORT + f.id,
                cport=tr.BASE_CPORT + f.id,
                argv=tr.client_argv(
                    f, tr.BASE_PORT + f.id, tr.BASE_CPORT + f.id, dur - f.start_s, plan[f.id], impls[f.cc][0]
                ),
                setup_lead_s=0.0 if f.size_bytes else setup,
                size_bytes=f.size_bytes,
                rwnd_bytes=f.rwnd_bytes,
                rwnd_mode=plan[f.id],
                pacing=f.pacing,
                reverse=f.id in reverse,
            )
            for f in flows
            if f.start_s < dur
        ]
        sampler = rsampler = launcher = pcap = None
        try:
            tr.start_servers(topo, fps)
            if scenario.output.pcap:  # flow 0 as its sender's TUN sees it: docs/fit.md
                pcap = sender_capture.start(topo, scenario.output.pcap, tr.BASE_CPORT + flows[0].id)
            ports = {fp.cport: fp.id for fp in fps}
            # one sampler per namespace; a reverse flow's sending socket is in the receiver's
            sampler = tr.DiagSampler(
                topo.ns_s, ports, t0, FAST_SAMPLE_S, side="sender", senders={fp.id for fp in fps if not fp.reverse}
            )
            rsampler = tr.DiagSampler(
                topo.ns_r, ports, t0, FAST_SAMPLE_S, side="receiver", senders={fp.id for fp in fps if fp.reverse}
            )
            sampler.start()
            rsampler.start()
            launcher = tr.FlowLauncher(topo, fps, t0)
            mib["before"] = _read_mibs(topo)  # no connection yet: just before the first launch
            cpu_before = read_cpu_times()
            launcher.start()
            while time.monotonic() < t0 - 0.01:
                time.sleep(0.005)
            ping = tr.start_ping(topo, scenario.probe.ping_s, dur) if scenario.probe.ping_s > 0 else None
            end = t0 + dur
            # The end of the window the flows table measures: the sender sampler's last sample
            # and the closing MIB reading are taken back to back, just before the end, so that
            # the flows' totals (tcpi_total_retrans, ...) and the counters cover the same window.
            sampler.on_stop = lambda: _read_mibs(topo)
            while time.monotonic() < end - FINAL_SAMPLE_LEAD_S:
                time.sleep(min(0.1, max(0.0, end - FINAL_SAMPLE_LEAD_S - time.monotonic())))
            sampler.stop.set()
            sampler.join(timeout=5)
            mib["after"] = sampler.on_stop_result if sampler.on_stop_result is not None else _read_mibs(topo)
            host_steal = steal_pct(cpu_before, read_cpu_times())
            launcher.stop.set()
            launcher.join(timeout=5)
            launcher.collect(deadline=end + 5.0)
            for smp in (sampler, rsampler):
                smp.stop.set()
                smp.join(timeout=5)
            replies = tr.finish_ping(ping, end + 3.0) if ping is not None else []
            pcap_dropped = pcap.stop() if pcap is not None else None
            tun = topo.tun_stats()
            report = topo.stop_link() or {}
        finally:  # threads and tcpdump must not outlive the run, whatever happened
            if pcap is not None:
                pcap.stop()
            for th in (launcher, sampler, rsampler):
                if th is not None:
                    th.stop.set()
            for fp in fps:
                if fp.receiver is not None:
                    fp.receiver.stop.set()
    sampler, rsampler = tr.by_role(sampler, rsampler, reverse)  # sending / receiving sockets
    if keep is not None:
        keep.update(
            {
                "link": report,
                "tun": tun,
                "samples": sampler.samples,
                "receiver_samples": rsampler.samples,
                "sample_fields": tr.SENDER_FIELDS,
                "iperf3": {f.id: f.result for f in fps},
                "t0": t0,
                "ping_rtts_ms": [r for _, r in replies],
                "ping_replies": replies,
                "rwnd_plan": plan,
                "mib": mib,
                "pcap_dropped": pcap_dropped,
            }
        )
    res = _assemble(
        scenario,
        fps,
        sampler,
        rsampler,
        report,
        replies,
        t0,
        wall0,
        counters=_counter_rows(mib.get("before"), mib.get("after")),
        host_steal=host_steal,
        impls=impls,
    )
    if pcap_dropped:  # the run stands; its capture misses packets, which the fit would misread
        note = f"output.pcap: tcpdump reports {pcap_dropped} packets dropped by the kernel"
        res.error = f"{res.error}; {note}" if res.error else note
    return res


def _late_p99_us(dirs: list[dict]) -> Optional[float]:
    """The worse direction's 99th percentile of how late ccbench-link released a packet
    against its due time (µs): how faithfully the emulator kept the scenario's timing."""
    p99 = [(d.get("lateness_us") or {}).get("p99") for d in dirs]
    known = [float(v) for v in p99 if v is not None]
    return max(known) if known else None


def _read_mibs(topo) -> Optional[dict[str, dict[str, int]]]:
    """{"sender": {...}, "receiver": {...}}: every MIB counter of the two namespaces (None if
    they could not be read: the counters are then null, the run goes on)."""
    from .mib import read_mib

    try:
        return {"sender": read_mib(topo.ns_s), "receiver": read_mib(topo.ns_r)}
    except OSError:
        return None


def _counter_rows(before: Optional[dict], after: Optional[dict]) -> list[dict]:
    """The counters table's rows: the change of each COUNTER_NAMES counter per side; a counter
    this kernel lacks (or a reading that failed) is null."""
    from .mib import mib_delta

    rows = []
    for side in COUNTER_SIDES:
        b = (before or {}).get(side) or {}
        a = (after or {}).get(side) or {}
        rows.append({"side": side, **mib_delta(b, a, COUNTER_NAMES)})
    return rows


def _at(ts: list[float], t: float) -> int:
    """Index of the last sample at or before t (-1 if none)."""
    import bisect

    return bisect.bisect_right(ts, t + 1e-9) - 1


def link_series_rows(ticks: list[float], queue_at, replies: list[tuple[Optional[float], float]]) -> list[dict]:
    """One link_series row per sample instant: the queue at the instant, the RTT of the latest
    probe reply received in (previous instant, instant] and the median and 95th percentile of
    every reply received in it (null if none; percentiles as the run's, by ``_pct``).
    ``replies``: (time received on the run's clock, RTT ms), as ping -D reports them."""
    import bisect

    timed = sorted((t, r) for t, r in replies if t is not None)
    rt = [t for t, _ in timed]
    rows, lo = [], 0
    for tk in ticks:
        hi = bisect.bisect_right(rt, tk)
        inside = [r for _, r in timed[lo:hi]]  # received in (previous tick, tk]
        rows.append(
            {
                "t_s": tk,
                "queue_bytes": queue_at(tk),
                "probe_rtt_ms": inside[-1] if inside else None,
                "probe_rtt_p50_ms": _pct(inside, 50),
                "probe_rtt_p95_ms": _pct(inside, 95),
            }
        )
        lo = hi
    return rows


def _assemble(
    scenario, fps, sampler, rsampler, report, replies, t0, wall0, counters=None, host_steal=None, impls=None
) -> RunResult:
    from .traffic import SENDER_FIELDS as F

    dur = scenario.duration_s
    interval = scenario.sample_interval_s
    dirs = report.get("directions") or [{}, {}]
    data = dirs[0]
    # queue occupancy samples of the data direction, on the run's clock
    qs = data.get("queue_samples") or {}
    link_t0 = report.get("clock_monotonic_start_ns", 0) / 1e9
    q_t = [link_t0 + t / 1e9 - t0 for t in qs.get("t_ns", [])]
    q_b = qs.get("bytes", [])

    def queue_at(t: float) -> Optional[int]:
        if not q_t:
            return None
        import bisect

        i = bisect.bisect_right(q_t, t) - 1
        return int(q_b[i]) if i >= 0 else None

    # sample instants k × interval up to the duration, as the simulator samples
    ticks = [round(k * interval, 9) for k in range(1, int(dur / interval + 1e-9) + 1)] if interval > 0 else []
    rtts = [r for _, r in replies]
    # ping -D stamps are on the wall clock; finish_ping moved them to the monotonic one
    link_rows = link_series_rows(ticks, queue_at, [(None if t is None else t - t0, r) for t, r in replies])

    flow_rows, series = [], []
    errors = []
    # the kernel's name of a BPF port (ccb_vegas) back to the scenario's (vegas), and how it ran
    scenario_cc = {kname: cc for cc, (kname, _) in (impls or {}).items()}
    how = {kname: impl for kname, impl in (impls or {}).values()}
    ix = {name: i for i, name in enumerate(F)}
    for fp in fps:
        fs = sampler.samples.get(fp.id)
        rs = rsampler.samples.get(fp.id)
        rows, ts = (fs.rows, fs.t) if fs else ([], [])
        rrows, rts = (rs.rows, rs.t) if rs else ([], [])
        res = fp.result or {}
        endj = res.get("end") or {}
        sent = endj.get("sum_sent") or {}
        recv = endj.get("sum_received") or {}
        if fp.error and fp.result is None:
            errors.append(f"flow {fp.id}: {fp.error}")
        # The flow starts when its data connection first shows up (iperf3 needs a process start
        # and its control connection first); goodput counts the bytes that reached the receiving
        # socket between then and the end of the run (or the last byte of a sized flow).
        start_s = min(x[0] for x in (ts, rts) if x) if (ts or rts) else None
        if start_s is None and fp.started_at:
            start_s = fp.started_at - t0
        size = next((f.size_bytes for f in scenario.expanded_flows() if f.id == fp.id), None)
        goodput = fct = None
        completed = False  # as the simulator: a bulk flow never completes
        end_s = dur
        if rrows and start_s is not None:
            j = _at(rts, dur)
            got = rrows[j][0] if j >= 0 else 0
            if size:
                # our own receiver timestamps the last byte; the flow starts at connect()
                rcv = fp.receiver
                if fp.connect_at is not None:
                    start_s = fp.connect_at - t0
                last_at = rcv.last_at if rcv else None
                completed = bool(rcv and rcv.bytes >= size and last_at is not None and last_at - t0 <= dur)
                if completed:
                    fct = last_at - fp.connect_at
                    end_s = start_s + fct
                    got = size
                elif rcv is not None:
                    got = rcv.bytes
            if end_s > start_s:
                goodput = got * 8.0 / (end_s - start_s)
        elif recv.get("seconds"):  # no receiver samples: iperf3's own receiver-side figure
            goodput = recv["bytes"] * 8.0 / recv["seconds"]
        live = [r for t, r in zip(ts, rows) if t <= end_s]
        rtt = [r[ix["rtt"]] / 1000.0 for r in live if r[ix["rtt"]]]
        cw = [r[ix["snd_cwnd"]] for r in live]
        events, prev = 0, 0
        for r in live:
            st = r[ix["ca_state"]]
            if st >= 3 and prev < 3:
                events += 1
            prev = st
        # counters as of the end of the flow's window (the processes run a little past the end)
        jl = _at(ts, end_s)
        last = rows[jl] if jl >= 0 else None
        jr = _at(rts, end_s)
        # a forward flow's data leaves its client port on the data direction; a reverse flow's
        # leaves the server port on the other direction
        ddir, dport = (dirs[1], fp.port) if fp.reverse else (data, fp.cport)
        dl = (ddir.get("tcp_sport_dropped_lost") or {}).get(str(dport)) if report else None
        flow_rows.append(
            {
                "flow_id": fp.id,
                "cc": scenario_cc.get(kcc := (fs.cc if fs and fs.cc else fp.cc), kcc),
                "cc_impl": how.get(fp.cc),
                "goodput_bps": goodput,
                "bytes_acked": size if completed else (last[ix["bytes_acked"]] if last else sent.get("bytes")),
                # as of the end of the window (iperf3's own count includes what it sent after the end)
                "retransmits": last[ix["total_retrans"]] if last else sent.get("retransmits"),
                "loss_events": events if live else None,
                "rtt_min_ms": (last[ix["min_rtt"]] / 1000.0)
                if last and last[ix["min_rtt"]]
                else (min(rtt) if rtt else None),
                "rtt_mean_ms": (sum(rtt) / len(rtt)) if rtt else None,
                "rtt_p50_ms": _pct(rtt, 50),
                "rtt_p95_ms": _pct(rtt, 95),
                "rtt_p99_ms": _pct(rtt, 99),
                "cwnd_mean": (sum(cw) / len(cw)) if cw else None,
                "start_s": start_s,
                "end_s": end_s,
                "fct_s": fct,
                "completed": completed,
                "size_bytes": size,
                "data_sent": last[ix["data_segs_out"]] if last else None,
                # data segments that reached the receiving socket (tcpi_data_segs_in, duplicates included)
                "data_received": rrows[jr][1] if jr >= 0 else None,
                # dropped by the bottleneck queue + removed by the loss model, counted by ccbench-link
                "data_dropped": (dl[0] + dl[1]) if dl else (0 if report else None),
            }
        )
        # series at the scenario's interval: the latest fast sample at or before each tick
        if interval > 0 and rows:
            prev_b, prev_t = 0, start_s if start_s is not None else 0.0
            for tk in ticks:
                j = _at(ts, tk)
                if j < 0 or tk - ts[j] > interval:
                    continue
                r = rows[j]
                jr = _at(rts, tk)
                gp = None
                if jr >= 0 and tk > prev_t:
                    b = rrows[jr][0]
                    gp = (b - prev_b) * 8.0 / (tk - prev_t)
                    prev_b, prev_t = b, tk
                pg = r[ix["bbr_pacing_gain"]]
                state = bbr_mode(pg, r[ix["bbr_cwnd_gain"]]) if pg is not None else CA_STATES.get(r[ix["ca_state"]])
                pr = r[ix["pacing_rate"]]
                series.append(
                    {
                        "flow_id": fp.id,
                        "t_s": tk,
                        "goodput_bps": gp,
                        "cwnd_pkts": r[ix["snd_cwnd"]],
                        "rtt_ms": r[ix["rtt"]] / 1000.0,
                        "pacing_bps": pr * 8.0 if pr < (1 << 62) else None,
                        "inflight_pkts": r[ix["inflight"]],
                        "cc_state": state,
                        "bw_est_bps": float(r[ix["bbr_bw_bps"]]) if r[ix["bbr_bw_bps"]] is not None else None,
                        "min_rtt_ms": _min_rtt_ms(r, ix),
                        "delivery_rate_bps": (r[ix["delivery_rate"]] * 8.0) if r[ix["delivery_rate"]] else None,
                        "retransmits": r[ix["total_retrans"]],
                    }
                )
    started = {fp.id for fp in fps}
    for f in scenario.expanded_flows():  # flows whose start is at or after the end never ran
        if f.id not in started:
            flow_rows.append({"flow_id": f.id, "start_s": f.start_s, "completed": False})
    extra: dict[str, Any] = {
        "link_utilisation": _utilisation(q_t, qs.get("departed_bytes") or [], dur, scenario.bottleneck.rate_bps),
        "drops": sum(queue_drops(d) for d in dirs) if report else None,
        "ce_marked": sum(d.get("ce_marked", 0) for d in dirs) if report else None,
        "random_losses": sum(d.get("lost", 0) for d in dirs) if report else None,
        "probe_rtt_p50_ms": _pct(rtts, 50),
        "probe_rtt_p95_ms": _pct(rtts, 95),
        "probe_rtt_p99_ms": _pct(rtts, 99),
        "kernel_version": env.kernel_version(),
        "emulator_late_p99_us": _late_p99_us(dirs) if report else None,
        "host_steal_pct": host_steal,
        # the Wi-Fi hop's columns over the run's window (a wire: none, they stay null)
        **wifi_run_columns(report.get("wifi"), link_t0, t0, dur),
    }
    status, error = "ok", None
    if not report:
        status, error = "failed", "ccbench-link gave no report"
    elif errors and len(errors) == len(fps):
        status, error = "failed", "; ".join(errors)[:2000]
    elif sampler.error or rsampler.error:
        error = sampler.error or rsampler.error
    res = build_result(
        scenario,
        NAME,
        flow_rows,
        series,
        extra,
        time.perf_counter() - wall0,
        status=status,
        error=error,
        link_series=link_rows,
        counters=counters,
    )
    res.links = link_counters(dirs) if report else []
    return res


def queue_drops(direction: dict) -> int:
    """Queue drops of one direction of ccbench-link's report: the bottleneck's and, with access
    links, their entry and exit links' (the simulator's ``drops`` counts every link's)."""
    access = direction.get("access") or {}
    return direction.get("dropped", 0) + sum((access.get(side) or {}).get("dropped", 0) for side in ("entry", "exit"))


#: ccbench-link's two directions under the simulator's names for the same links.
_LINK_NAMES = ("bottleneck/fwd", "bottleneck/rev")


def link_counters(dirs: list[dict]) -> list[dict]:
    """Per-link packet counters in the simulator's form (``RunResult.links``, report.rs
    ``LinkCounters``): arrivals, departures, queue drops (tail and AQM), random losses, packets
    held at the end, and CE marks set by the queue discipline."""
    out = []
    for name, d in zip(_LINK_NAMES, dirs):
        out.append(
            {
                "name": name,
                "arrived": d.get("packets_in"),
                "departed": d.get("packets_out"),
                "dropped_queue": d.get("dropped"),
                "dropped_loss": d.get("lost"),
                "held": d.get("held_at_end"),
                "ce_marked": d.get("ce_marked"),
            }
        )
    return out
