//! The scenario's bottleneck buffer (`bottleneck.buffer` in the scenario JSON): the drop-tail
//! limit, and the byte limit RED derives its thresholds from.
use crate::Limit;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum BufferConfig {
    /// Drop-tail limit in bytes of IP packets queued (BDP-sized buffers arrive as bytes).
    Bytes(u64),
    /// Drop-tail limit in packets (like a pfifo `limit`).
    Packets(u64),
}

impl From<BufferConfig> for Limit {
    fn from(buffer: BufferConfig) -> Limit {
        match buffer {
            BufferConfig::Packets(n) => Limit::Packets(n),
            BufferConfig::Bytes(b) => Limit::Bytes(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rounding, ScheduledDropTail};

    #[test]
    fn buffer_limits_map_to_queue_limits() {
        // 12 Mbit/s, 1 ms per 1500 B: 1 on the wire + limit waiting.
        let mut q = ScheduledDropTail::new(12_000_000, BufferConfig::Packets(2).into(), Rounding::CeilPerPacket);
        assert_eq!((0..5).filter(|_| q.offer(0, 1500).is_some()).count(), 3);
        let mut q = ScheduledDropTail::new(12_000_000, BufferConfig::Bytes(3000).into(), Rounding::CeilPerPacket);
        assert_eq!((0..5).filter(|_| q.offer(0, 1500).is_some()).count(), 3);
        assert_eq!(q.backlog_bytes(0), 3000);
    }
}
