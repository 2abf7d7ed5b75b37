"""Seed 003 at its own rate on the real kernel: 10 CUBIC + 10 BBR through a 1 Gbit/s drop-tail
bottleneck made of veth and tbf, and the simulator on the same path.

The kernel backend's TUN emulator is faithful only up to ~300 Mbit/s (docs/kernel-backend.md), so
this referee builds its own three namespaces and lets the kernel's own qdisc be the bottleneck:

    sender ns (20 iperf3 clients) ── veth ── router ns ── veth ── receiver ns (20 iperf3 servers)
                                             tbf 1 Gbit/s, 1000 x 1514-byte limit, on the
                                             router's port toward the receiver

tbf's burst is smaller than a GSO skb, so tbf segments what the sender's TSO builds and queues
wire-sized packets, like the seed's switch. This machine has no netem, so the path adds no delay:
the RTT is veth's own (tens of µs, measured with ping and printed). The simulator runs the
scenario at that measured RTT, with each flow started at the kernel run's realised start. Per run:
each group's goodput, the CUBIC group's dominant period (analysis.dominant_period over the
steady state), 5 s means, retransmissions and the tbf's drops. Addresses are from 198.18.0.0/15;
the namespaces and every process are removed on exit. Needs root, iperf3 and 2+ CPUs.

    sudo .venv/bin/python benchmarks/coexistence_1g/coexistence_1g_veth.py [--duration 200s] [--runs 3] \
        [--sim-seeds 1,2,3]
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks" / "common"))  # bench_machine

from bench_machine import cpu_model, git_commit  # noqa: E402

import ccbench  # noqa: E402
from ccbench import analysis  # noqa: E402
from ccbench.backends.kernel.diag import bbr_mode  # noqa: E402
from ccbench.backends.kernel.mib import read_mib  # noqa: E402
from ccbench.backends.kernel.traffic import SENDER_FIELDS, DiagSampler  # noqa: E402
from ccbench.scenario.model import Scenario  # noqa: E402
from ccbench.units import parse_time  # noqa: E402

GROUPS = [("cubic", 10), ("bbr", 10)]
S_ADDR, M_S_ADDR, M_R_ADDR, R_ADDR = "198.18.20.1", "198.18.20.2", "198.18.21.1", "198.18.21.2"
RATE = "1gbit"
LIMIT_PKTS = 1000
WIRE_BYTES = 1514  # what tbf counts per full-sized packet (Ethernet header included)
BASE_PORT, BASE_CPORT = 5301, 41001
#: tbf counts the 14-byte Ethernet header, the simulator's rate is of IP packets: the same
#: packet rate is 1 Gbit/s x 1500/1514 in the simulator.
SIM_RATE_BPS = round(1e9 * 1500 / WIRE_BYTES)


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), check=check, capture_output=True, text=True, timeout=30)


class VethPath:
    """Three namespaces, two veth pairs, tbf at the router; removed by close()."""

    def __init__(self) -> None:
        tag = f"ccbq{os.getpid()}"
        self.s, self.m, self.r = f"{tag}-s", f"{tag}-m", f"{tag}-r"
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> "VethPath":
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def ns(self, ns: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", ns, *argv, check=check)

    def _build(self) -> None:
        for n in (self.s, self.m, self.r):
            sh("ip", "netns", "add", n)
            self.ns(n, "ip", "link", "set", "lo", "up")
        sh("ip", "-n", self.s, "link", "add", "q-s0", "type", "veth", "peer", "name", "q-m0", "netns", self.m)
        sh("ip", "-n", self.r, "link", "add", "q-r0", "type", "veth", "peer", "name", "q-m1", "netns", self.m)
        for ns, dev, addr in (
            (self.s, "q-s0", S_ADDR),
            (self.m, "q-m0", M_S_ADDR),
            (self.m, "q-m1", M_R_ADDR),
            (self.r, "q-r0", R_ADDR),
        ):
            self.ns(ns, "ip", "addr", "add", f"{addr}/30", "dev", dev)
            self.ns(ns, "ip", "link", "set", dev, "up")
        self.ns(self.s, "ip", "route", "add", R_ADDR, "via", M_S_ADDR)
        self.ns(self.r, "ip", "route", "add", S_ADDR, "via", M_R_ADDR)
        self.ns(self.m, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        # the seed's hosts: 32 MB windows; let the receiver's autotuning reach them
        self.ns(self.r, "sysctl", "-qw", "net.ipv4.tcp_rmem=4096 131072 33554432")
        self.ns(self.s, "sysctl", "-qw", "net.ipv4.tcp_wmem=4096 16384 33554432")
        # burst 10 packets: tbf segments any larger GSO skb and queues wire-sized packets
        self.ns(
            self.m,
            "tc",
            "qdisc",
            "add",
            "dev",
            "q-m1",
            "root",
            "tbf",
            "rate",
            RATE,
            "burst",
            str(10 * WIRE_BYTES),
            "limit",
            str(LIMIT_PKTS * WIRE_BYTES),
        )

    def popen(self, ns: str, argv: list[str]) -> subprocess.Popen:
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.procs.append(p)
        return p

    def base_rtt_ms(self) -> float:
        out = self.ns(self.s, "ping", "-q", "-c", "50", "-i", "0.01", R_ADDR).stdout
        m = re.search(r"= [\d.]+/([\d.]+)/", out)
        if not m:
            raise RuntimeError(f"ping gave no RTT: {out}")
        return float(m.group(1))

    def tbf_stats(self) -> dict:
        out = self.ns(self.m, "tc", "-s", "qdisc", "show", "dev", "q-m1").stdout
        sent = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+)", out)
        return {"bytes": int(sent.group(1)), "pkts": int(sent.group(2)), "drops": int(sent.group(3))}

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=5)
        for n in (self.s, self.m, self.r):
            sh("ip", "netns", "del", n, check=False)


def kernel_run(duration_s: float) -> dict:
    flows = [(i, cc) for i, cc in enumerate(cc for cc, n in GROUPS for _ in range(n))]
    with VethPath() as path:
        rtt = path.base_rtt_ms()
        for i, _ in flows:
            path.popen(path.r, ["iperf3", "-s", "-1", "-B", R_ADDR, "-p", str(BASE_PORT + i)])
        time.sleep(1.0)
        cports = {BASE_CPORT + i: i for i, _ in flows}
        t0 = time.monotonic() + 0.5
        sampler = DiagSampler(path.s, cports, t0, fast_s=0.1)
        before = read_mib(path.s)
        sampler.start()
        clients = []
        time.sleep(max(0.0, t0 - time.monotonic()))
        for i, cc in flows:
            clients.append(
                path.popen(
                    path.s,
                    [
                        "iperf3",
                        "-c",
                        R_ADDR,
                        "-p",
                        str(BASE_PORT + i),
                        "--cport",
                        str(BASE_CPORT + i),
                        "-C",
                        cc,
                        "-i",
                        "0",
                        "-t",
                        str(int(np.ceil(duration_s)) + 1),
                    ],
                )
            )
        time.sleep(max(0.0, t0 + duration_s + 0.3 - time.monotonic()))
        sampler.stop.set()
        sampler.join(5)
        after = read_mib(path.s)
        mib = {k: after[k] - before.get(k, 0) for k in after}
        tbf = path.tbf_stats()
        errors = [c.stderr.read().decode(errors="replace") for c in clients if c.poll() not in (None, 0)]
    if errors:
        raise RuntimeError(f"iperf3 clients failed: {errors[:2]}")
    return {"rtt_ms": rtt, "samples": sampler.samples, "flows": flows, "mib": mib, "tbf": tbf}


def kernel_series(run: dict, duration_s: float, step: float = 0.1):
    """Per-group goodput on a common 100 ms grid from each flow's bytes_acked; each flow's start;
    each BBR flow's ProbeRTT entry times (from its gains, diag.bbr_mode)."""
    grid = np.arange(step, duration_s + 1e-9, step)
    groups: dict[str, np.ndarray] = {cc: np.zeros(len(grid) - 1) for cc, _ in GROUPS}
    starts, entries = [], []
    for fid, cc in run["flows"]:
        fs = run["samples"][fid]
        t = np.asarray(fs.t)
        acked = np.asarray(fs.col("bytes_acked"), dtype=float)
        moved = np.nonzero(acked > 0)[0]
        starts.append(float(t[moved[0]]) if len(moved) else 0.0)
        a = np.interp(grid, t, acked, left=0.0)
        groups[cc] += np.diff(a) * 8 / step
        if cc == "bbr":
            modes = [
                bbr_mode(pg, cg) if pg is not None else None
                for pg, cg in zip(fs.col("bbr_pacing_gain"), fs.col("bbr_cwnd_gain"))
            ]
            entries.append([e for e in analysis.entries_into(t, modes, "probe_rtt") if 0 < e <= duration_s])
    return grid[1:], groups, starts, entries


def takeovers(t: np.ndarray, groups: dict) -> tuple[int, float, float]:
    """Episodes in which the CUBIC group holds more than half of the goodput (1 s means): their
    number, median length and median interval between their starts (s)."""
    sec = np.floor(t - 1e-9).astype(int)
    ids = np.unique(sec)
    share = np.array(
        [groups["cubic"][sec == i].sum() / max(1.0, (groups["cubic"] + groups["bbr"])[sec == i].sum()) for i in ids]
    )
    high = share > 0.5
    starts = [int(ids[i]) for i in range(len(ids)) if high[i] and (i == 0 or not high[i - 1])]
    lengths, n = [], 0
    for h in high:
        n = n + 1 if h else 0
        if h:
            if n == 1:
                lengths.append(0)
            lengths[-1] += 1
    gaps = np.diff(starts)
    return (
        len(starts),
        float(np.median(lengths)) if lengths else 0.0,
        float(np.median(gaps)) if len(gaps) else float("nan"),
    )


def describe(label: str, t: np.ndarray, groups: dict, retrans: int, drops, entries) -> str:
    cubic = groups["cubic"]
    start = analysis.steady_state_start(t, cubic)
    keep = t >= (start if start is not None else t[0])
    per = analysis.dominant_period(t[keep], cubic[keep])
    period = (
        f"{per.period_s:.1f} s"
        if per.significant
        else f"none (strongest {per.candidate_period_s:.1f} s)"
        if per.candidate_period_s
        else "none"
    )
    blocks = (t // 5).astype(int)
    five = " ".join(
        f"{groups['cubic'][blocks == b].mean() / 1e6:.0f}/{groups['bbr'][blocks == b].mean() / 1e6:.0f}"
        for b in np.unique(blocks)[:40]
    )
    d = "" if drops is None else str(drops)
    n_to, len_to, gap_to = takeovers(t, groups)
    rounds = analysis.event_rounds(entries, window_s=1.0, min_events=3)
    n_rounds = len(rounds)
    per_round = float(np.mean([r.n for r in rounds])) if rounds else 0.0
    step = analysis.level_change_at(t, cubic, [r.start_s for r in rounds])
    steps = (
        f"{np.exp(step.at_events):.2f} / {np.exp(step.midway):.2f}"
        if step.at_events is not None and step.midway is not None
        else ""
    )
    return (
        f"| {label} | {cubic.mean() / 1e6:.0f} | {groups['bbr'].mean() / 1e6:.0f} | {period} "
        f"| {n_to} × {len_to:.0f} s{'' if np.isnan(gap_to) else f', every {gap_to:.0f} s'} "
        f"| {n_rounds} × {per_round:.1f} | {steps} | {retrans} | {d} "
        f"| {five} |"
    )


def sim_scenario(duration: str, seed: int, rtt_ms: float, starts: list[float]) -> Scenario:
    t0 = min(starts)
    flows = [
        {"cc": cc, "rwnd": "32MB", "start": f"{(s - t0) * 1e6:.0f}us"}
        for (cc, n), s in zip([(cc, n) for cc, n in GROUPS for _ in range(n)], starts)
    ]
    return Scenario.from_dict(
        {
            "name": "coexistence-1g-veth",
            "duration": duration,
            "seed": seed,
            "sample_interval": "100ms",
            "start_jitter": "0s",
            "bottleneck": {"rate": f"{SIM_RATE_BPS}bit", "rtt": f"{rtt_ms * 1000:.0f}us", "buffer": f"{LIMIT_PKTS}pkt"},
            "flows": flows,
        },
        source="coexistence_1g_veth.py",
    )


def study_scenario(duration: str, seed: int) -> Scenario:
    """The coexistence-1g study's own mapping of seed 003 (python/ccbench/study/studies/coexistence-1g.toml)."""
    return Scenario.from_dict(
        {
            "name": "coexistence-1g",
            "duration": duration,
            "seed": seed,
            "sample_interval": "100ms",
            "bottleneck": {"rate": "1Gbit", "rtt": "200us", "buffer": f"{LIMIT_PKTS}pkt"},
            "flows": [{"cc": cc, "count": n, "rwnd": "32MB"} for cc, n in GROUPS],
        },
        source="coexistence_1g_veth.py",
    )


def sim_row(label: str, sc: Scenario) -> str:
    res = ccbench.run(sc)
    s = res.series
    agg = s.groupby(["t_s", "cc"])["goodput_bps"].sum().unstack().sort_index().fillna(0.0)
    t = agg.index.to_numpy(float)
    groups = {cc: agg[cc].to_numpy(float) for cc, _ in GROUPS}
    retrans = int(res.flows["retransmits"].sum())
    drops = int(res.runs["drops"].iloc[0])
    return describe(label, t, groups, retrans, drops, analysis.probe_rtt_entries(s))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default="200s")
    ap.add_argument("--runs", type=int, default=3, help="kernel runs")
    ap.add_argument("--sim-seeds", default="1,2,3", help="simulator seeds per kernel run")
    ap.add_argument(
        "--study-seeds",
        default="1,2,3",
        help="simulator seeds of the study's own scenario (200 us, all flows at t = 0)",
    )
    ap.add_argument("--keep", help="pickle each kernel run's series to KEEP-<run>.pkl")
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    a = ap.parse_args()
    # SIGTERM unwinds like Ctrl-C, so VethPath.close removes the namespaces and the processes
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    dur = parse_time(a.duration)
    rows, rtts = [], []
    for k in range(1, a.runs + 1):
        run = kernel_run(dur)
        rtts.append(run["rtt_ms"])
        t, groups, starts, entries = kernel_series(run, dur)
        if a.keep:
            with open(f"{a.keep}-{k}.pkl", "wb") as fh:
                pickle.dump(
                    {
                        "t": t,
                        "groups": groups,
                        "starts": starts,
                        "entries": entries,
                        "rtt_ms": run["rtt_ms"],
                        "mib": run["mib"],
                        "tbf": run["tbf"],
                        "flows": run["flows"],
                        "sample_fields": SENDER_FIELDS,
                        "samples": {fid: (fs.t, fs.rows) for fid, fs in run["samples"].items()},
                    },
                    fh,
                )
        rows.append(
            describe(
                f"kernel, run {k} (RTT {run['rtt_ms'] * 1000:.0f} µs)",
                t,
                groups,
                run["mib"].get("TcpRetransSegs", 0),
                run["tbf"]["drops"],
                entries,
            )
        )
        print(rows[-1], flush=True)
        for seed in (int(x) for x in a.sim_seeds.split(",")):
            rows.append(
                sim_row(
                    f"simulator, seed {seed}, run {k}'s RTT and starts",
                    sim_scenario(a.duration, seed, run["rtt_ms"], starts),
                )
            )
            print(rows[-1], flush=True)
    for seed in (int(x) for x in a.study_seeds.split(",") if x):
        rows.append(
            sim_row(
                f"simulator, seed {seed}, the study's scenario (200 µs, 1 Gbit/s, all at t = 0)",
                study_scenario(a.duration, seed),
            )
        )
        print(rows[-1], flush=True)
    text = f"""# Seed 003 at 1 Gbit/s: 10 CUBIC + 10 BBR through veth and tbf, kernel and simulator

Command: `sudo .venv/bin/python benchmarks/coexistence_1g/coexistence_1g_veth.py --duration {a.duration} --runs {a.runs} --sim-seeds {a.sim_seeds} --study-seeds {a.study_seeds}`
Commit {git_commit()}; Linux {platform.release()}; {os.cpu_count()} CPUs ({cpu_model()}).
1 Gbit/s tbf, {LIMIT_PKTS} × {WIRE_BYTES}-byte drop-tail limit, no added delay (RTT as measured by
ping: {", ".join(f"{r * 1000:.0f}" for r in rtts)} µs), {a.duration}, 32 MB windows. The simulator
runs each kernel run's RTT and flow start times, at {SIM_RATE_BPS / 1e6:.2f} Mbit/s of IP packets (tbf's
1 Gbit/s counts the Ethernet header: the same packet rate).

| run | CUBIC Mbit/s | BBR Mbit/s | CUBIC's dominant period | CUBIC takeovers | ProbeRTT rounds × flows | CUBIC's step at a round / midway | retransmissions | bottleneck drops | 5 s means, CUBIC/BBR Mbit/s |
|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

Columns: CUBIC takeovers are episodes in which the CUBIC group holds more than half of the
goodput (1 s means): how many, their median length, the median interval between their starts.
ProbeRTT rounds are entries of at least 3 BBR flows into ProbeRTT within 1 s (from BBR's gains on
the kernel, `cc_state` in the simulator), with the mean number of flows per round. CUBIC's step is
the factor by which its group's 4 s mean changes across a round (median over rounds,
analysis.level_change_at), against the same measure midway between rounds: 1.00 would be no
change. The 5 s means cover the first 200 s.

What the runs show is discussed in docs/studies.md (coexistence-1g) and docs/fidelity.md.
"""  # noqa: E501 (Markdown table rows and the command stay on one line)
    Path(a.out).write_text(text)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
