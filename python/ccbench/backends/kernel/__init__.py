"""The kernel backend: real Linux TCP in network namespaces over ccbench-link (docs/kernel-backend.md).

- ``backend``: ``check``, ``run``, ``algorithms``: the backend interface (backends/__init__.py);
- ``env``: what this machine offers (root, TUN, namespaces, iperf3, congestion controls, the
  ccbench-link binary) — used by ``check()``, ``ccbench doctor`` and the tests;
- ``topology``: namespaces + the emulator + addresses/routes, and the clean-up of everything;
- ``diag``: tcp_info of every flow through netlink sock_diag; ``mib``: the TCP MIB counters;
- ``traffic``: iperf3 servers/clients and the ping probe; ``wifi``: the emulator's Wi-Fi columns;
- ``tracefs``, ``nsutil``: kernel tracing and namespace helpers;
- ``hostcpu``: how much CPU the hypervisor took during a run (runs.host_steal_pct);
- ``bpfcc`` (+ ``bpf/``): BPF struct_ops ports of algorithms the kernel lacks, built, registered
  and unregistered around a run.
"""

from .backend import (
    FAST_SAMPLE_S,
    FINAL_SAMPLE_LEAD_S,
    LEAD_S,
    LINK_AQMS,
    NAME,
    algorithms,
    available_algorithms,
    check,
    link_counters,
    link_series_rows,
    run,
)

__all__ = [
    "NAME",
    "run",
    "check",
    "algorithms",
    "available_algorithms",
    "LINK_AQMS",
    "LEAD_S",
    "FAST_SAMPLE_S",
    "FINAL_SAMPLE_LEAD_S",
    "link_counters",
    "link_series_rows",
]
