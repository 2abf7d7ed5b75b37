"""Taking sender-side packet captures of real TCP transfers: tcpdump as a child process, the
interface's segmentation offloads, the route's interface, and ``ccbench capture`` (an iperf3
upload captured and fitted in one command). The kernel backend's ``[output] pcap`` uses the
tcpdump wrapper; docs/fit.md describes both."""
