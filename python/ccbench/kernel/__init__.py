"""Kernel backend machinery: real Linux TCP in network namespaces over ccbench-link.

- ``env``: what this machine offers (root, TUN, namespaces, iperf3, congestion controls, the
  ccbench-link binary) — used by ``check()``, ``ccbench doctor`` and the tests.
- ``topology``: namespaces + the emulator + addresses/routes, and the clean-up of everything.
- ``diag``: tcp_info of every flow through netlink sock_diag (own small implementation).
- ``traffic``: iperf3 servers/clients and the ping probe.

See docs/kernel-backend.md.
"""
