//! Backlog bookkeeping and counters every discipline keeps.

/// What a discipline has counted since it was created.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub enqueued: u64,
    pub dequeued: u64,
    /// Dropped because a limit (packets, bytes, memory, per-flow) was reached.
    pub drops_overlimit: u64,
    /// Dropped by the AQM's congestion signal (CoDel, PIE, RED early drops).
    pub drops_aqm: u64,
    /// CE marks set instead of a drop.
    pub marks: u64,
    pub max_backlog_bytes: u64,
    pub max_backlog_packets: u64,
}

impl QueueStats {
    pub fn drops(&self) -> u64 {
        self.drops_overlimit + self.drops_aqm
    }
}

/// Bytes and packets held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    pub bytes: u64,
    pub packets: u64,
}

impl Backlog {
    #[inline]
    pub fn add(&mut self, len: u32, stats: &mut QueueStats) {
        self.bytes += len as u64;
        self.packets += 1;
        stats.max_backlog_bytes = stats.max_backlog_bytes.max(self.bytes);
        stats.max_backlog_packets = stats.max_backlog_packets.max(self.packets);
    }
    #[inline]
    pub fn remove(&mut self, len: u32) {
        self.bytes -= len as u64;
        self.packets -= 1;
    }
}
