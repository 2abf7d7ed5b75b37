"""TCP MIB counters of a network namespace (what ``nstat`` shows), for the ``counters`` table.

``/proc/net/snmp`` and ``/proc/net/netstat`` hold, per protocol, two lines::

    Tcp: RtoAlgorithm RtoMin ... RetransSegs ...
    Tcp: 1 200 ... 12 ...

The counters are per network namespace. ``/proc/net`` is ``/proc/self/net``, the namespace of
the process; ``/proc/thread-self/net`` is that of the calling thread, so reading it while the
thread has entered a namespace (``setns``) gives that namespace's counters without starting a
process.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from .nsutil import in_netns

__all__ = ["parse_mib", "read_mib", "mib_delta", "MIB_FILES"]

MIB_FILES = ("snmp", "netstat")


def parse_mib(text: str) -> dict[str, int]:
    """``{"TcpRetransSegs": 12, "TcpExtPAWSEstab": 3, ...}`` from the text of /proc/net/snmp or
    /proc/net/netstat: each ``Prefix: names`` line is followed by its ``Prefix: values`` line;
    a name is the prefix followed by the field name, as nstat spells it. Lines that do not pair
    up (a truncated read) are skipped."""
    out: dict[str, int] = {}
    lines = [ln for ln in text.splitlines() if ln.strip()]
    i = 0
    while i + 1 < len(lines):
        head, vals = lines[i], lines[i + 1]
        p1, _, names = head.partition(":")
        p2, _, values = vals.partition(":")
        names_l, values_l = names.split(), values.split()
        if p1 != p2 or not names_l or len(names_l) != len(values_l):
            i += 1
            continue
        try:
            nums = [int(v) for v in values_l]
        except ValueError:  # two header lines in a row: re-pair from the second one
            i += 1
            continue
        for n, v in zip(names_l, nums):
            out[f"{p1.strip()}{n}"] = v
        i += 2
    return out


def read_mib(ns: Optional[str] = None) -> dict[str, int]:
    """Every counter of /proc/net/snmp and /proc/net/netstat in namespace ``ns`` (None: the
    calling thread's own)."""

    def _read() -> str:
        text = []
        for name in MIB_FILES:
            with open(f"/proc/thread-self/net/{name}") as f:
                text.append(f.read())
        return "\n".join(text)

    if ns is None:
        return parse_mib(_read())
    with in_netns(ns):
        text = _read()
    return parse_mib(text)


def mib_delta(before: Mapping[str, int], after: Mapping[str, int], names: Iterable[str]) -> dict[str, Optional[int]]:
    """``after - before`` for each of ``names``; None for a counter this kernel does not have
    (missing from either reading)."""
    return {n: (after[n] - before[n]) if n in before and n in after else None for n in names}
