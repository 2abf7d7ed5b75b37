"""Where packets to a server leave this host: its address (resolved once, so tcpdump's filter
and iperf3 use the same one) and the interface and source address of the route to it
(`ip -j route get`)."""

from __future__ import annotations

import json
import socket
import subprocess

__all__ = ["RouteError", "resolve", "route_to"]


class RouteError(RuntimeError):
    """The server's name does not resolve or no route leads to it."""


def resolve(server: str, port: int) -> str:
    """The first address ``server`` resolves to for a TCP connection."""
    try:
        infos = socket.getaddrinfo(server, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise RouteError(f"cannot resolve {server}: {e.strerror}") from None
    return infos[0][4][0]


def route_to(address: str) -> tuple[str, str]:
    """(interface, source address) of the route to ``address``."""
    r = subprocess.run(["ip", "-j", "route", "get", address], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        raise RouteError(f"no route to {address}: {r.stderr.strip() or 'ip route get failed'}")
    routes = json.loads(r.stdout or "[]")
    if not routes or "dev" not in routes[0]:
        raise RouteError(f"no route to {address}")
    return routes[0]["dev"], routes[0].get("prefsrc", "")
