//! Backlog bookkeeping and counters every discipline keeps, and the packet FIFO with both that
//! the single-queue disciplines (drop-tail, CoDel, PIE, RED) hold.
use crate::{Nanos, Pkt};
use std::collections::VecDeque;

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

/// One FIFO of packets with its backlog and counters. Disciplines decide whether a packet may
/// enter (and count their own drops and marks in `stats`); `push` and `pop` keep the backlog,
/// the maxima and the enqueued/dequeued counts in step with the queue.
#[derive(Debug, Clone, Default)]
pub struct PktFifo {
    pub q: VecDeque<Pkt>,
    pub backlog: Backlog,
    pub stats: QueueStats,
}

impl PktFifo {
    /// Queue an accepted packet, stamped with its enqueue time (sojourn = dequeue time − enq_ns).
    #[inline]
    pub fn push(&mut self, now: Nanos, mut pkt: Pkt) {
        pkt.enq_ns = now;
        self.backlog.add(pkt.len, &mut self.stats);
        self.stats.enqueued += 1;
        self.q.push_back(pkt);
    }
    /// Take the head packet and count it as dequeued.
    #[inline]
    pub fn pop(&mut self) -> Option<Pkt> {
        let p = self.q.pop_front()?;
        self.backlog.remove(p.len);
        self.stats.dequeued += 1;
        Some(p)
    }
}
