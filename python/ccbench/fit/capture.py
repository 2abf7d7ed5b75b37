"""Read a pcap or pcapng capture (dpkt) and pick the one bulk TCP flow in it.

Only the IPv4/IPv6 and TCP headers are read: a capture truncated to the headers (``tcpdump -s
96``) serves as well as a full one, since payload lengths come from the IP length field.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import dpkt

__all__ = ["FitError", "TcpPacket", "Flow", "read_packets", "select_flow", "parse_flow_spec"]

#: A direction carrying less payload than this is not a bulk transfer (about 70 full segments).
MIN_BULK_BYTES = 100_000
#: Another flow carrying at least this fraction of the largest one's payload is a bulk flow too.
BULK_SHARE = 0.1

# Link types (tcpdump.org/linktypes.html) and the offset of the IP header in their frames.
_LINKTYPE_ETHERNET = 1
_LINKTYPE_RAW = {101, 12, 14}
_LINKTYPE_LINUX_SLL = 113
_LINKTYPE_LINUX_SLL2 = 276
_LINKTYPE_NULL = 0


class FitError(Exception):
    """Bad input to ``ccbench fit``; the message is one line naming what is wrong."""


@dataclass(slots=True)
class TcpPacket:
    t: float
    src: str
    sport: int
    dst: str
    dport: int
    seq: int
    ack: int
    flags: int
    window: int
    payload: int
    #: IP bytes on the wire (IP total length).
    ip_len: int
    #: SACK blocks as (left, right) 32-bit sequence numbers.
    sacks: tuple = ()
    #: (TSval, TSecr) of the timestamps option, or None.
    ts: Optional[tuple] = None


@dataclass
class Flow:
    """One TCP connection: the packets of its data direction and of its ACK direction."""

    sender: tuple
    receiver: tuple
    data: list = field(default_factory=list)
    acks: list = field(default_factory=list)

    def name(self) -> str:
        return f"{_ep(self.sender)}-{_ep(self.receiver)}"


def _ep(e: tuple) -> str:
    host, port = e
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _tcp_options(opts: bytes) -> tuple[tuple, Optional[tuple]]:
    """SACK blocks (RFC 2018 §3, kind 5) and the timestamps option (RFC 7323 §3, kind 8)."""
    sacks: tuple = ()
    ts = None
    i, n = 0, len(opts)
    while i < n:
        kind = opts[i]
        if kind == 0:  # end of option list
            break
        if kind == 1:  # no-operation
            i += 1
            continue
        if i + 1 >= n or opts[i + 1] < 2:
            break
        size = opts[i + 1]
        body = opts[i + 2 : i + size]
        if kind == 5 and len(body) % 8 == 0:
            sacks = tuple(struct.unpack_from("!II", body, k) for k in range(0, len(body), 8))
        elif kind == 8 and len(body) == 8:
            ts = struct.unpack("!II", body)
        i += size
    return sacks, ts


_addr_cache: dict[bytes, str] = {}


def _addr(raw: bytes) -> str:
    s = _addr_cache.get(raw)
    if s is None:
        s = str(ipaddress.ip_address(raw))
        _addr_cache[raw] = s
    return s


def _ip_offset(linktype: int, frame: bytes) -> Optional[int]:
    """Offset of the IP header in a frame, or None for a frame that carries no IP."""
    if linktype in _LINKTYPE_RAW:
        return 0
    if linktype == _LINKTYPE_ETHERNET:
        off, etype = 14, struct.unpack("!H", frame[12:14])[0] if len(frame) >= 14 else 0
        while etype == 0x8100 and len(frame) >= off + 4:  # 802.1Q tags
            etype = struct.unpack("!H", frame[off + 2 : off + 4])[0]
            off += 4
        return off if etype in (0x0800, 0x86DD) else None
    if linktype == _LINKTYPE_LINUX_SLL:
        return 16
    if linktype == _LINKTYPE_LINUX_SLL2:
        return 20
    if linktype == _LINKTYPE_NULL:
        return 4
    raise FitError(f"unsupported link type {linktype} (expected Ethernet, raw IP or Linux cooked)")


def _parse(t: float, buf: bytes) -> Optional[TcpPacket]:
    """The TCP headers of an IP packet (truncated payload allowed), or None if it is not TCP."""
    if len(buf) < 20:
        return None
    version = buf[0] >> 4
    if version == 4:
        ihl = (buf[0] & 0x0F) * 4
        if buf[9] != 6 or len(buf) < ihl + 20:
            return None
        ip_len = struct.unpack("!H", buf[2:4])[0]
        src, dst = _addr(bytes(buf[12:16])), _addr(bytes(buf[16:20]))
        tcp_at, tcp_room = ihl, ip_len - ihl
    elif version == 6:
        if len(buf) < 60 or buf[6] != 6:  # no extension headers
            return None
        ip_len = 40 + struct.unpack("!H", buf[4:6])[0]
        src, dst = _addr(bytes(buf[8:24])), _addr(bytes(buf[24:40]))
        tcp_at, tcp_room = 40, ip_len - 40
    else:
        return None
    sport, dport, seq, ack, off_flags, window = struct.unpack_from("!HHIIHH", buf, tcp_at)
    doff = (off_flags >> 12) * 4
    sacks, ts = _tcp_options(buf[tcp_at + 20 : tcp_at + doff])
    return TcpPacket(
        t, src, sport, dst, dport, seq, ack, off_flags & 0x1FF, window, max(0, tcp_room - doff), ip_len, sacks, ts
    )


def _reader(f, path: Path):
    head = f.read(4)
    f.seek(0)
    if len(head) < 4:
        raise FitError(f"{path}: empty capture (no pcap header)")
    magic = struct.unpack("<I", head)[0]
    try:
        if magic == 0x0A0D0D0A:
            return dpkt.pcapng.Reader(f)
        return dpkt.pcap.Reader(f)
    except (ValueError, dpkt.dpkt.UnpackError, dpkt.NeedData) as e:
        raise FitError(f"{path}: not a pcap or pcapng capture ({e})") from None


def _check_records(path: Path) -> None:
    """dpkt's pcap reader yields a cut last record as a short frame: walk the record headers
    (pcap-savefile(5): 16 bytes, captured length at offset 8) and refuse a file that does not end
    on a record boundary."""
    raw = path.read_bytes()
    order = "<" if raw[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    at, n = 24, 0
    while at < len(raw):
        if at + 16 > len(raw):
            break
        caplen = struct.unpack_from(order + "I", raw, at + 8)[0]
        if at + 16 + caplen > len(raw):
            break
        at += 16 + caplen
        n += 1
    if at != len(raw):
        raise FitError(f"{path}: truncated capture (record {n + 1} is cut short after {n} whole packets)")


def read_packets(path: Path) -> list[TcpPacket]:
    """Every TCP packet of the capture, in capture order. Raises FitError on an unreadable,
    malformed, truncated, empty or TCP-less capture."""
    path = Path(path)
    if not path.is_file():
        raise FitError(f"{path}: no such file")
    out: list[TcpPacket] = []
    frames = 0
    with path.open("rb") as f:
        reader = _reader(f, path)
        linktype = reader.datalink()
        try:
            for ts, frame in reader:
                frames += 1
                off = _ip_offset(linktype, frame)
                if off is None:
                    continue
                pkt = _parse(float(ts), frame[off:])
                if pkt is not None:
                    out.append(pkt)
        except (dpkt.NeedData, dpkt.UnpackError, struct.error, ValueError) as e:
            raise FitError(f"{path}: malformed or truncated capture after {frames} packets ({e})") from None
    if path.stat().st_size >= 24 and isinstance(reader, dpkt.pcap.Reader):
        _check_records(path)
    if frames == 0:
        raise FitError(f"{path}: empty capture (no packets)")
    if not out:
        raise FitError(f"{path}: no TCP packets among its {frames} packets")
    return out


def parse_flow_spec(spec: str) -> tuple[tuple, tuple]:
    """``HOST:PORT-HOST:PORT`` (IPv6 hosts in brackets) as two endpoints, in either order."""

    def endpoint(s: str) -> tuple:
        s = s.strip()
        host, _, port = s.rpartition(":")
        host = host.strip("[]")
        try:
            return str(ipaddress.ip_address(host)), int(port)
        except ValueError:
            raise FitError(f"--flow {spec!r}: {s!r} is not HOST:PORT") from None

    parts = spec.split("-")
    if len(parts) != 2:
        raise FitError(f"--flow {spec!r}: expected HOST:PORT-HOST:PORT, e.g. 10.0.0.1:40000-10.0.0.2:5201")
    return endpoint(parts[0]), endpoint(parts[1])


def select_flow(packets: list[TcpPacket], spec: Optional[str] = None) -> Flow:
    """The bulk TCP flow of the capture (the one named by ``spec``, if given): its data
    direction is the one that carries more payload."""
    payload: dict[tuple, int] = {}
    for p in packets:
        key = ((p.src, p.sport), (p.dst, p.dport))
        payload[key] = payload.get(key, 0) + p.payload
    if spec is not None:
        a, b = parse_flow_spec(spec)
        if (a, b) not in payload and (b, a) not in payload:
            raise FitError(f"--flow {spec}: no TCP packets between these endpoints in the capture")
        key = max([(a, b), (b, a)], key=lambda k: payload.get(k, 0))
    else:
        bulk = sorted((k for k, v in payload.items() if v >= MIN_BULK_BYTES), key=lambda k: -payload[k])
        if not bulk:
            most = max(payload.values())
            raise FitError(f"no bulk TCP flow: the largest direction carries {most} payload bytes (< {MIN_BULK_BYTES})")
        bulk = [k for k in bulk if payload[k] >= BULK_SHARE * payload[bulk[0]]]
        if len(bulk) > 1:
            names = ", ".join(Flow(*k).name() for k in bulk)
            raise FitError(f"{len(bulk)} bulk TCP flows ({names}): choose one with --flow")
        key = bulk[0]
    sender, receiver = key
    flow = Flow(sender=sender, receiver=receiver)
    for p in packets:
        if (p.src, p.sport) == sender and (p.dst, p.dport) == receiver:
            flow.data.append(p)
        elif (p.src, p.sport) == receiver and (p.dst, p.dport) == sender:
            flow.acks.append(p)
    if not any(p.payload for p in flow.data):
        raise FitError(f"flow {flow.name()} carries no data")
    return flow
