"""Throughput of ccbench-link: UDP (iperf3 -u, 1500-byte IP packets) through a 50 ms RTT link
with 0.1 % random loss at increasing offered rates; reports delivered rate, lateness percentiles
and the emulator's CPU time per direction. Also one run of TCP flows (CUBIC) at 1 Gbit/s.

    sudo .venv/bin/python benchmarks/kernel_link/kernel_link_bench.py [--rates 100,300,600,1000] [--seconds 8]

Writes a markdown table to stdout (copied into benchmarks/kernel_link/RESULTS.md)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # bench_machine

from bench_machine import cpu_model  # noqa: E402

from ccbench.backends.kernel.topology import RECEIVER_ADDR, Topology  # noqa: E402
from ccbench.scenario.model import Scenario  # noqa: E402


def link_cfg(rate_mbit: float, loss: str, buffer: str = "1bdp") -> dict:
    sc = Scenario.from_dict(
        {
            "duration": "10s",
            "bottleneck": {"rate": f"{rate_mbit}Mbit", "rtt": "50ms", "loss": loss, "buffer": buffer},
            "flows": [{"cc": "cubic"}],
        }
    )
    return sc.sim_config()


def cpu_of(pid: int) -> float:
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def udp_run(offered_mbit: float, seconds: float, link_mbit: float, loss: str, spin_us: int | None) -> dict:
    with Topology(link_cfg(link_mbit, loss), spin_us=spin_us) as t:
        srv = t.popen("r", ["iperf3", "-s", "-1", "-B", RECEIVER_ADDR], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        c0 = cpu_of(t.link.pid)
        w0 = time.monotonic()
        cli = t.popen(
            "s",
            [
                "iperf3",
                "-u",
                "-c",
                RECEIVER_ADDR,
                "-b",
                f"{offered_mbit}M",
                "-l",
                "1472",
                "-w",
                "4M",
                "-t",
                str(seconds),
                "-J",
            ],
            stdout=subprocess.PIPE,
        )
        out = cli.communicate(timeout=seconds + 30)[0]
        c1 = cpu_of(t.link.pid)
        w1 = time.monotonic()
        srv.wait(timeout=10)
        tun = t.tun_stats()
        rep = t.stop_link()
    j = json.loads(out)
    s = j["end"]["sum"]
    d = rep["directions"][0]
    return {
        "offered_mbit": offered_mbit,
        "sent_mbit": j["end"]["sum"]["bits_per_second"] / 1e6 if "sum" in j["end"] else None,
        "received_mbit": (s.get("bytes", 0) * 8 / s.get("seconds", 1) / 1e6) * (1 - s.get("lost_percent", 0) / 100),
        "iperf_lost_pct": s.get("lost_percent"),
        "link_in_pps": d["packets_in"] / seconds,
        "link_out_mbit": d["bytes_out"] * 8 / seconds / 1e6,
        "emu_lost": d["lost"],
        "emu_dropped": d["dropped"],
        "tun_tx_dropped": tun.get("ccb-s0", {}).get("tx_dropped"),
        "late_p50_us": d["lateness_us"]["p50"],
        "late_p99_us": d["lateness_us"]["p99"],
        "late_max_us": d["lateness_us"]["max"],
        "frac_over_1ms": d["lateness_us"]["frac_over_1ms"],
        "cpu_cores": (c1 - c0) / (w1 - w0),
        "cpu_data_thread_s": d["cpu_user_s"] + d["cpu_sys_s"],
        "spin_cores": sum(x.get("spin_s", 0) for x in rep["directions"]) / (w1 - w0),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rates", default="100,300,600,1000")
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--loss", default="0.1%")
    ap.add_argument("--spin-us", type=int, default=None)
    ap.add_argument("--link-factor", type=float, default=1.05, help="link rate = this x the offered rate")
    a = ap.parse_args()
    rows = []
    for r in [float(x) for x in a.rates.split(",")]:
        row = udp_run(r, a.seconds, max(r * a.link_factor, 50), a.loss, a.spin_us)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    cpu = cpu_model()
    print(
        f"kernel {platform.release()}, {os.cpu_count()} CPUs ({cpu}); "
        f"link rate = {a.link_factor:g} x offered, 50 ms RTT, "
        f"loss {a.loss}, 1 BDP buffer, UDP 1500-byte IP packets, {a.seconds:g} s each\n"
    )
    print(
        "| offered Mbit/s | emulator out Mbit/s | iperf3 received Mbit/s | link in pkt/s | emu lost | queue drops "
        "| TUN ring drops | "
        "lateness p50/p99/max µs | >1 ms late | emulator CPU (cores) | of which spinning |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for x in rows:
        print(
            f"| {x['offered_mbit']:.0f} | {x['link_out_mbit']:.1f} | {x['received_mbit']:.1f} "
            f"| {x['link_in_pps']:.0f} | {x['emu_lost']} | {x['emu_dropped']} | {x['tun_tx_dropped']} "
            f"| {x['late_p50_us']}/{x['late_p99_us']}/{x['late_max_us']:.0f} | "
            f"{x['frac_over_1ms']:.2%} | {x['cpu_cores']:.2f} | {x['spin_cores']:.2f} |"
        )


if __name__ == "__main__":
    main()
