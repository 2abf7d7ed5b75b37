"""Packet capture of one kernel-backend run, for comparing it packet by packet with the simulator
(the open 5 % loss item of docs/fidelity.md): an AF_PACKET socket on each TUN device records every
packet with its kernel timestamp while `kernel.run` runs the scenario.

Writes two files:

* OUT: the first flow's data connection, one line per packet and side,
  `t_s side dir kind seq len tsval tsecr [sack blocks]` (side s = sender namespace, r = receiver;
  dir out/in; kind D for data, A for ACK; seq, len and SACK edges in MSS units (1448 bytes)
  relative to the sender's ISN + 1, so iperf3's 37-byte cookie puts every data segment at
  n + 0.026);
* OUT.fwd: every packet that entered the forward direction, in order, `t_s ok|LOST desc`: what
  ccbench-link's loss stream saw. In the runs of November 2026 the n-th line got the stream's
  draw n + 1: one packet crosses before the capture starts.

What it showed (Reno, 50 Mbit/s, 100 ms, 1 BDP, 5 % loss): about 13 packets (iperf3's control
connection, the data connection's handshake and cookie, IPv6) precede the first data segment and
a few IPv6 packets fall inside the run, so the kernel's n-th data segment gets draw n + 13...15
and the simulator's draw n: common random numbers give both the same loss rate but not the same
pattern. Fed the kernel's realised pattern (the LOST column of the data segments), the simulator
tracks the kernel within about 1 % of goodput.

Needs root. Not part of `make test`.

    sudo .venv/bin/python benchmarks/kernel_capture/kernel_pkt_capture.py reno 100ms 5% --seed 1 OUT.txt
"""

from __future__ import annotations

import argparse
import socket
import struct
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from ccbench.backends import kernel  # noqa: E402
from ccbench.backends.kernel import topology  # noqa: E402
from ccbench.backends.kernel.nsutil import netns_socket  # noqa: E402
from ccbench.backends.kernel.traffic import BASE_CPORT  # noqa: E402
from ccbench.scenario.model import Scenario  # noqa: E402

ETH_P_ALL = 3
SO_TIMESTAMPNS = 35
SO_RCVBUFFORCE = 33
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_OUTGOING = 4
MSS = 1448


class Capture:
    """Records (t, side, outgoing, first bytes of the IP packet) on both TUN devices."""

    def __init__(self) -> None:
        self.records: list[tuple[float, str, bool, bytes]] = []
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.drops: dict[str, int] = {}

    def start(self, topo: topology.Topology) -> None:
        for ns, dev, side in ((topo.ns_s, topology.TUN_S, "s"), (topo.ns_r, topology.TUN_R, "r")):
            s = netns_socket(ns, socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
            s.bind((dev, ETH_P_ALL))
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            # a large socket buffer, so a stall of this Python thread does not lose packets
            # (SO_RCVBUFFORCE: root may exceed rmem_max)
            s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
            s.settimeout(0.2)
            th = threading.Thread(target=self._loop, args=(s, side), daemon=True)
            th.start()
            self.threads.append(th)

    def _loop(self, s: socket.socket, side: str) -> None:
        try:
            self._read(s, side)
        finally:
            # PACKET_STATISTICS (tp_packets, tp_drops): what the socket itself had to drop
            try:
                self.drops[side] = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))[1]
            except OSError:
                pass

    def _read(self, s: socket.socket, side: str) -> None:
        while not self.stop.is_set():
            try:
                data, anc, _, addr = s.recvmsg(256, 1024)
            except socket.timeout:
                continue
            except OSError:  # the device went away with ccbench-link
                return
            t = time.time()
            for lvl, typ, d in anc:
                if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", d[:16])
                    t = sec + nsec * 1e-9
            self.records.append((t, side, addr[2] == PACKET_OUTGOING, data))

    def finish(self) -> None:
        self.stop.set()
        for th in self.threads:
            th.join(timeout=2)


def capture_run(scenario: Scenario):
    """Run ``scenario`` on the kernel backend, capturing both TUN devices from the moment the
    topology is configured until the run ends: (the run's result, the capture's records)."""
    cap = Capture()
    configure = topology.Topology._configure

    def configure_and_capture(self: topology.Topology) -> None:
        configure(self)
        cap.start(self)

    topology.Topology._configure = configure_and_capture
    try:
        res = kernel.run(scenario)
    finally:
        topology.Topology._configure = configure
        cap.finish()
    if any(cap.drops.values()):
        print(f"kernel_pkt_capture: the capture sockets dropped packets {cap.drops}", file=sys.stderr)
    return res, cap.records


def parse_tcp(p: bytes):
    """(sport, dport, seq, ack, flags, payload, tsval, tsecr, sacks) of an IPv4 TCP packet."""
    if len(p) < 40 or p[0] >> 4 != 4 or p[9] != 6:
        return None
    ihl = (p[0] & 15) * 4
    total = struct.unpack("!H", p[2:4])[0]
    t = p[ihl:]
    sport, dport, seq, ack = struct.unpack("!HHII", t[:12])
    doff = (t[12] >> 4) * 4
    opts, tsval, tsecr, sacks, i = t[20:doff], 0, 0, [], 0
    while i < len(opts) and opts[i] != 0:
        if opts[i] == 1:
            i += 1
            continue
        n = opts[i + 1]
        if opts[i] == 8:
            tsval, tsecr = struct.unpack("!II", opts[i + 2 : i + 10])
        elif opts[i] == 5:
            sacks = [struct.unpack("!II", opts[j : j + 8]) for j in range(i + 2, i + n, 8)]
        i += max(n, 2)
    return sport, dport, seq, ack, t[13], total - ihl - doff, tsval, tsecr, sacks


def receiver_arrivals(records) -> tuple[list[tuple[int, int, int]], int]:
    """The measured connection's data segments as they reached the receiving TUN, in arrival
    order: (ns since the first, segment number from the first data segment, TSval in ticks
    from the first, plus 1); and the highest segment number the receiver's ACKs covered
    (everything below it reached the receiver). The 37-byte iperf3 cookie that opens the
    stream is left out."""
    arrivals, base, ts0, t0, acked = [], None, None, None, 0
    for t, side, out, d in sorted(records, key=lambda r: r[0]):
        p = parse_tcp(d) if side == "r" else None
        if p is None:
            continue
        if out:
            # the receiver's ACKs (a RST at the teardown carries no meaningful ACK number)
            if base is not None and p[1] == BASE_CPORT and p[4] & 0x10 and not p[4] & 0x04:
                off = (p[3] - base) % (1 << 32)
                if off < 1 << 31:
                    acked = max(acked, off // MSS)
            continue
        if p[0] != BASE_CPORT or p[5] == 0:
            continue
        seq, plen, tsval = p[2], p[5], p[6]
        if base is None:
            if plen >= MSS:
                raise ValueError("capture: the first data segment is not the iperf3 cookie")
            base, ts0, t0 = (seq + plen) % (1 << 32), tsval, t
            continue
        off = (seq - base) % (1 << 32)
        if off >= 1 << 31:  # a retransmitted cookie
            continue
        arrivals.append((round((t - t0) * 1e9), off // MSS, (tsval - ts0) % (1 << 32) + 1))
    # never beyond what arrived (guards against a stray ACK number)
    return arrivals, min(acked, max((a[1] for a in arrivals), default=-1) + 1)


def write_logs(records, out: Path) -> None:
    records = sorted(records, key=lambda r: r[0])
    rel = lambda x, isn: ((x - isn) % (1 << 32)) / MSS  # noqa: E731
    isn, lines = None, []
    for t, side, outgoing, data in records:
        p = parse_tcp(data)
        if p is None or BASE_CPORT not in (p[0], p[1]):
            continue
        sport, dport, seq, ack, flags, plen, tsval, tsecr, sacks = p
        from_sender = sport == BASE_CPORT
        if flags & 0x02:
            if from_sender:
                isn = seq + 1
            continue
        if isn is None:
            continue
        d = "out" if outgoing else "in"
        if from_sender:
            lines.append(f"{t:.6f} {side} {d} D {rel(seq, isn):.3f} {plen / MSS:.3f} {tsval} {tsecr}")
        else:
            sk = " ".join(f"{rel(a, isn):.2f}-{rel(b, isn):.2f}" for a, b in sacks)
            lines.append(f"{t:.6f} {side} {d} A {rel(ack, isn):.3f} {plen} {tsval} {tsecr} {sk}".rstrip())
    out.write_text("\n".join(lines) + "\n")
    # The forward direction: what left the sender's TUN, and whether it reached the receiver's.
    key = lambda data: bytes(data[9:10]) + bytes(data[12:])  # noqa: E731 (TTL and checksum may not change)
    arrived = {key(d) for _, side, outgoing, d in records if side == "r" and not outgoing}
    fwd = []
    for t, side, outgoing, data in records:
        if side == "s" and outgoing:
            p = parse_tcp(data)
            desc = f"tcp {p[0]}>{p[1]} len {p[5]} flags {p[4]:#x}" if p else f"other, first byte {data[0]:#x}"
            fwd.append(f"{t:.6f} {'ok' if key(data) in arrived else 'LOST'} {desc}")
    Path(str(out) + ".fwd").write_text("\n".join(fwd) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cc")
    ap.add_argument("rtt")
    ap.add_argument("loss")
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", default="15s")
    a = ap.parse_args()
    d = {
        "duration": a.duration,
        "seed": a.seed,
        "flows": [{"cc": a.cc}],
        "bottleneck": {"rate": "50Mbit", "rtt": a.rtt, "loss": a.loss, "buffer": "1bdp"},
    }
    res, records = capture_run(Scenario.from_dict(d, source="kernel_pkt_capture"))
    if not res.ok:
        raise SystemExit(f"kernel run failed: {res.error}")
    write_logs(records, a.out)
    f = res.flows.iloc[0]
    print(
        f"{a.cc} {a.rtt} {a.loss} seed {a.seed}: kernel goodput {f.goodput_bps / 1e6:.4f} Mbit/s, "
        f"{len(records)} packets captured -> {a.out}, {a.out}.fwd"
    )


if __name__ == "__main__":
    main()
