//! The simulator's drop-tail bottleneck: ccbench-queue's [`ScheduledDropTail`] (shared with
//! ccbench-link), a drop-tail FIFO in front of a fixed-rate transmitter whose departures are
//! computed on arrival (no dequeue event). This module only maps the scenario's buffer onto the
//! queue's limit and picks the simulator's rounding of serialisation times.
use crate::config::BufferConfig;
pub use ccbench_queue::ScheduledDropTail;
use ccbench_queue::{Limit, Rounding};

/// The queue's limit for a scenario buffer.
pub fn limit_of(buffer: BufferConfig) -> Limit {
    match buffer {
        BufferConfig::Packets(n) => Limit::Packets(n),
        BufferConfig::Bytes(b) => Limit::Bytes(b),
    }
}

/// A drop-tail bottleneck of `rate_bps`. Serialisation times are rounded up per packet, as
/// `time::tx_time` does everywhere else in the simulator.
pub fn droptail(rate_bps: u64, buffer: BufferConfig) -> ScheduledDropTail {
    ScheduledDropTail::new(rate_bps, limit_of(buffer), Rounding::CeilPerPacket)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::tx_time;

    #[test]
    fn serialisation_matches_the_simulators_tx_time() {
        // 1 Gbit/s, odd packet sizes: each departure must be exactly the previous one plus
        // time::tx_time (the simulator's own rounding), or results would change.
        let mut q = droptail(999_999_937, BufferConfig::Packets(100));
        let mut end = 0;
        for len in [1500u32, 52, 777, 1500, 1] {
            let got = q.offer(0, len).expect("room for 5");
            end += tx_time(len, 999_999_937);
            assert_eq!(got, end, "len {len}");
        }
    }

    #[test]
    fn buffer_limits_map_to_queue_limits() {
        // 12 Mbit/s, 1 ms per 1500 B: 1 on the wire + limit waiting.
        let mut q = droptail(12_000_000, BufferConfig::Packets(2));
        assert_eq!((0..5).filter(|_| q.offer(0, 1500).is_some()).count(), 3);
        let mut q = droptail(12_000_000, BufferConfig::Bytes(3000));
        assert_eq!((0..5).filter(|_| q.offer(0, 1500).is_some()).count(), 3);
        assert_eq!(q.backlog_bytes(0), 3000);
    }
}
