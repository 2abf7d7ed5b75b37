"""The limits every scenario must stay within; docs/limits.md says why each one is where it is.

They bound what one run can cost (simulated packets, series rows, pings, packets held in
memory) and keep every number inside what both backends represent exactly: times are whole
nanoseconds in u64 on the Rust side and float seconds in the results, which are exact to the
nanosecond only below 2^53 ns (104 days). No sane run comes near any of them.
"""

from __future__ import annotations

NS_PER_S = 10**9
NS_PER_MS = 10**6

#: Any time (duration, rtt, jitter, access.delay, start, stagger, start_jitter, sample_interval,
#: probe.ping): at most 1 day. Sums of a few stay far below 2^53 ns, so float seconds stay exact.
MAX_TIME_NS = 86_400 * NS_PER_S
#: A run shorter than this measures nothing useful (and at least 2 base RTTs are needed, see
#: Scenario checks): at 10 ms even a 1 Gbit/s link carries only ~800 packets.
MIN_DURATION_NS = 10 * NS_PER_MS
#: sample_interval (0 = no series) and probe.ping (0 = off) below 1 ms: each sample and each
#: ping is an event and a stored row; 1 ms is finer than any figure reads.
MIN_SAMPLE_INTERVAL_NS = NS_PER_MS
MIN_PING_INTERVAL_NS = NS_PER_MS
#: Rows of `series` plus `link_series` in one run: duration / sample_interval × (flows + 1).
#: 10 million rows are ~1 GB on the way through Python and Arrow.
MAX_SERIES_ROWS = 10_000_000
#: Pings sent in one run (duration / probe.ping); every reply is kept for the percentiles.
MAX_PINGS = 10_000_000
#: Rates (bottleneck.rate, access.rate): a 1500-byte packet takes 12 ns at 1 Tbit/s; much
#: above it the simulator's 1 ns clock cannot resolve serialisation times.
MAX_RATE_BPS = 10**12
#: Full-size packets the bottleneck can carry in one run (rate × duration / 12 000 bit):
#: 10^9 packets are ~3 minutes of simulation at ~6 M packets/s, and at the 2-3 events a
#: packet costs they stay well inside the simulator's own cap of 10^10 events per run.
MAX_PACKETS_PER_RUN = 10**9
#: flows.N.size: 10^15 bytes (1 PB) keeps byte counts exact in the float64 result columns
#: (2^53 ≈ 9 × 10^15) and in the simulator's u64 counters.
MAX_SIZE_BYTES = 10**15
#: flows.N.rwnd: TCP's window scale option advertises at most 2^30 bytes (RFC 7323 §2.3).
MAX_RWND_BYTES = 2**30
#: Packets the bottleneck queue may hold (bottleneck.buffer, also as bytes and N×BDP): every
#: queued packet is ~100 bytes of simulator memory, 10 million ~1 GB.
MAX_BUFFER_PACKETS = 10_000_000
MAX_BUFFER_BYTES = MAX_BUFFER_PACKETS * 1500
#: Data that can be in flight at once: min(Σ flows × rwnd, BDP + buffer), same memory bound.
MAX_IN_FLIGHT_BYTES = MAX_BUFFER_BYTES
#: Connections in one run (all [[flows]] groups together; one group's count has the same cap).
MAX_FLOWS = 100_000
#: Nesting of tables and arrays in a scenario or study file; no key of either is deeper than 5.
#: Deeper input would exhaust Python's recursion limit while parsing or copying it.
MAX_NESTING = 32
