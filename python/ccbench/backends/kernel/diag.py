"""tcp_info of TCP sockets through netlink sock_diag (NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY with
an inet_diag_req_v2), read inside a namespace. A small own implementation: the layouts are those
of /usr/include/linux/inet_diag.h and tcp.h (struct tcp_info up to tcpi_snd_wnd, struct
tcp_bbr_info); shorter tcp_info from older kernels is zero-padded and the missing fields None."""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from typing import Optional

from .nsutil import netns_socket

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3
INET_DIAG_INFO = 2
INET_DIAG_VEGASINFO = 3
INET_DIAG_CONG = 4
INET_DIAG_BBRINFO = 16
TCP_ALL_STATES = 0xFFFFFFFF
TCP_LISTEN = 10

_NLMSG = struct.Struct("=IHHII")
_REQ = struct.Struct("=BBBxI HH 16s 16s I 8s")  # inet_diag_req_v2 with inet_diag_sockid
_MSG = struct.Struct("=BBBB HH 16s 16s I 8s IIIII")  # inet_diag_msg
_RTA = struct.Struct("=HH")
# struct tcp_info: 8 u8, 24 u32 (rto..total_retrans), 4 u64, 6 u32, 4 u64, 2 u32, 2 u64, 4 u32
_TCPI = struct.Struct("<8B24I4Q6I4Q2I2Q4I")
_TCPI_NAMES = (
    "state ca_state retransmits probes backoff options wscale app_limited_flags "
    "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets last_data_sent last_ack_sent "
    "last_data_recv last_ack_recv pmtu rcv_ssthresh rtt rttvar snd_ssthresh snd_cwnd advmss "
    "reordering rcv_rtt rcv_space total_retrans "
    "pacing_rate max_pacing_rate bytes_acked bytes_received "
    "segs_out segs_in notsent_bytes min_rtt data_segs_in data_segs_out "
    "delivery_rate busy_time rwnd_limited sndbuf_limited delivered delivered_ce "
    "bytes_sent bytes_retrans dsack_dups reord_seen rcv_ooopack snd_wnd"
).split()
CA_STATES = {0: "open", 1: "disorder", 2: "cwr", 3: "recovery", 4: "loss"}


@dataclass
class SockInfo:
    sport: int
    dport: int
    src: str
    dst: str
    state: int
    cc: Optional[str]
    info: dict  # tcp_info fields by name (without the tcpi_ prefix)
    bbr: Optional[dict]  # bw_bps, min_rtt_us, pacing_gain, cwnd_gain
    cookie: int = 0  # the socket's cookie (sock_gen_cookie), as tracepoints such as tcp_probe print it

    @property
    def inflight(self) -> int:
        i = self.info
        return max(0, i["unacked"] - i["sacked"] - i["lost"] + i["retrans"])


def _parse_tcp_info(b: bytes) -> dict:
    n = len(b)
    if n < _TCPI.size:
        b = b + b"\0" * (_TCPI.size - n)
    return dict(zip(_TCPI_NAMES, _TCPI.unpack_from(b)))


def bbr_mode(pacing_gain: float, cwnd_gain: float | None = None) -> str:
    """BBR's mode from its gains (tcp_bbr.c, bbr_update_gains: startup 2/ln2 for both, drain
    pacing at its inverse, ProbeBW cwnd gain 2 with pacing cycling 1.25/0.75/1, ProbeRTT both 1).
    The cwnd gain tells ProbeRTT from ProbeBW's cruise phase; a cwnd of 4 does not (a loss can
    leave a ProbeBW flow there)."""
    if pacing_gain > 2.0:
        return "startup"
    if pacing_gain < 0.5:
        return "drain"
    if cwnd_gain is not None and abs(cwnd_gain - 1.0) < 0.01:
        return "probe_rtt"
    return "probe_bw"


class DiagSocket:
    """A NETLINK_SOCK_DIAG socket created inside network namespace ``ns`` (None = current)."""

    def __init__(self, ns: str | None = None):
        fam, typ = socket.AF_NETLINK, socket.SOCK_DGRAM
        self.sock = netns_socket(ns, fam, typ, NETLINK_SOCK_DIAG) if ns else socket.socket(fam, typ, NETLINK_SOCK_DIAG)
        self.sock.bind((0, 0))
        self.seq = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def dump(self, states: int = TCP_ALL_STATES, family: int = socket.AF_INET) -> list[SockInfo]:
        self.seq += 1
        ext = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_VEGASINFO - 1)) | (1 << (INET_DIAG_CONG - 1))
        req = _REQ.pack(family, socket.IPPROTO_TCP, ext, states, 0, 0, b"", b"", 0, b"\xff" * 8)
        hdr = _NLMSG.pack(_NLMSG.size + len(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, self.seq, 0)
        self.sock.sendto(hdr + req, (0, 0))
        out: list[SockInfo] = []
        while True:
            data = self.sock.recv(1 << 20)
            off = 0
            while off + _NLMSG.size <= len(data):
                ln, typ, _flags, seq, _pid = _NLMSG.unpack_from(data, off)
                if ln < _NLMSG.size:
                    return out
                if typ == NLMSG_DONE:
                    return out
                if typ == NLMSG_ERROR:
                    (err,) = struct.unpack_from("=i", data, off + _NLMSG.size)
                    if err:
                        raise OSError(-err, "sock_diag dump failed")
                    return out
                if typ == SOCK_DIAG_BY_FAMILY and seq == self.seq:
                    out.append(self._parse(data, off + _NLMSG.size, off + ln, family))
                off += (ln + 3) & ~3

    @staticmethod
    def _parse(data: bytes, p: int, end: int, family: int) -> SockInfo:
        (fam, state, _t, _r, sport, dport, src, dst, _if, ck, _exp, _rq, _wq, _uid, _ino) = _MSG.unpack_from(data, p)
        ck_lo, ck_hi = struct.unpack("=II", ck)  # idiag_cookie: the u64's low and high halves
        ntoh = socket.ntohs
        alen = 4 if fam == socket.AF_INET else 16
        s = SockInfo(
            sport=ntoh(sport),
            dport=ntoh(dport),
            src=socket.inet_ntop(fam, src[:alen]),
            dst=socket.inet_ntop(fam, dst[:alen]),
            state=state,
            cc=None,
            info={},
            bbr=None,
            cookie=(ck_hi << 32) | ck_lo,
        )
        p += _MSG.size
        while p + _RTA.size <= end:
            rlen, rtype = _RTA.unpack_from(data, p)
            if rlen < _RTA.size:
                break
            payload = data[p + _RTA.size : p + rlen]
            if rtype == INET_DIAG_INFO:
                s.info = _parse_tcp_info(payload)
            elif rtype == INET_DIAG_CONG:
                s.cc = payload.split(b"\0", 1)[0].decode()
            elif rtype == INET_DIAG_BBRINFO and len(payload) >= 20:
                lo, hi, mrtt, pg, cg = struct.unpack_from("=5I", payload)
                s.bbr = {
                    "bw_bps": ((hi << 32) | lo) * 8,
                    "min_rtt_us": mrtt,
                    "pacing_gain": pg / 256.0,
                    "cwnd_gain": cg / 256.0,
                }
            p += (rlen + 3) & ~3
        return s

    def listening_ports(self) -> set[int]:
        return {s.sport for s in self.dump(states=1 << TCP_LISTEN)}
