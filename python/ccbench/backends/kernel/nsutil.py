"""Entering network namespaces from Python 3.10/3.11 (no os.setns): libc ``setns`` via ctypes.
``setns`` changes only the calling thread's namespace, and :func:`netns_socket` switches back at
once, so a socket can be made inside a namespace and used from anywhere."""

from __future__ import annotations

import ctypes
import os
import socket
import threading
from contextlib import contextmanager

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
_lock = threading.Lock()


def ns_path(name: str) -> str:
    return name if "/" in name else f"/var/run/netns/{name}"


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"setns: {os.strerror(e)}")


@contextmanager
def in_netns(name: str):
    """Run the body with the calling thread inside namespace ``name``."""
    orig = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    target = os.open(ns_path(name), os.O_RDONLY | os.O_CLOEXEC)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(orig)
    finally:
        os.close(target)
        os.close(orig)


def netns_socket(name: str, family: int, type_: int, proto: int = 0) -> socket.socket:
    with _lock, in_netns(name):
        return socket.socket(family, type_, proto)


def netns_inode(name: str) -> int | None:
    try:
        return os.stat(ns_path(name)).st_ino
    except OSError:
        return None
