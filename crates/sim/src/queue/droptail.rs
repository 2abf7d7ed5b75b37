//! A drop-tail FIFO in front of a fixed-rate transmitter.
//!
//! Because the queue is FIFO and the rate fixed, a packet's transmission start and end are
//! known the moment it arrives: start = max(arrival, end of the previous packet). The queue
//! therefore keeps only the (start, bytes) of waiting packets, to know its occupancy, and
//! never needs a "transmission done" event. A packet counts as queued from its arrival until
//! its transmission starts (the packet on the wire has left the queue, as with a Linux qdisc).
use crate::config::BufferConfig;
use crate::time::{tx_time, Nanos};
use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub struct DropTail {
    pub rate_bps: u64,
    pub limit: BufferConfig,
    /// Transmission start time and size of every packet that has not started transmission yet.
    waiting: VecDeque<(Nanos, u32)>,
    waiting_bytes: u64,
    /// When the transmitter becomes free.
    busy_until: Nanos,
    /// IP bytes whose transmission has been scheduled (for utilisation).
    pub bytes_sent: u64,
}

/// Outcome of offering a packet to the queue.
pub enum Enqueue {
    /// Accepted: transmission ends at this time.
    Sent { tx_end: Nanos },
    Dropped,
}

impl DropTail {
    pub fn new(rate_bps: u64, limit: BufferConfig) -> Self {
        DropTail {
            rate_bps,
            limit,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            busy_until: 0,
            bytes_sent: 0,
        }
    }

    /// Forget packets whose transmission has started by `now`.
    #[inline]
    fn advance(&mut self, now: Nanos) {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
        }
    }

    #[inline]
    pub fn offer(&mut self, now: Nanos, bytes: u32) -> Enqueue {
        self.advance(now);
        let start = self.busy_until.max(now);
        if start > now {
            // The packet would wait: check the buffer limit.
            let full = match self.limit {
                BufferConfig::Packets(n) => self.waiting.len() as u64 >= n,
                BufferConfig::Bytes(b) => self.waiting_bytes + bytes as u64 > b,
            };
            if full {
                return Enqueue::Dropped;
            }
            self.waiting.push_back((start, bytes));
            self.waiting_bytes += bytes as u64;
        }
        let end = start + tx_time(bytes, self.rate_bps);
        self.busy_until = end;
        self.bytes_sent += bytes as u64;
        Enqueue::Sent { tx_end: end }
    }

    /// Bytes waiting at time `now` (packets that arrived and have not started transmission).
    pub fn queued_bytes(&mut self, now: Nanos) -> u64 {
        self.advance(now);
        self.waiting_bytes
    }

    /// Time the transmitter is busy until (for end-of-run utilisation accounting).
    pub fn busy_until(&self) -> Nanos {
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_and_drops_at_limit() {
        // 12 Mbit/s: a 1500-byte packet takes 1 ms.
        let mut q = DropTail::new(12_000_000, BufferConfig::Packets(2));
        let ends: Vec<Option<Nanos>> = (0..5)
            .map(|_| match q.offer(0, 1500) {
                Enqueue::Sent { tx_end } => Some(tx_end),
                Enqueue::Dropped => None,
            })
            .collect();
        // First goes straight to the wire, two wait, the rest are dropped.
        assert_eq!(ends, vec![Some(1_000_000), Some(2_000_000), Some(3_000_000), None, None]);
        assert_eq!(q.queued_bytes(0), 3000);
        assert_eq!(q.queued_bytes(1_000_000), 1500);
        assert_eq!(q.queued_bytes(2_000_000), 0);
    }

    #[test]
    fn byte_limit() {
        let mut q = DropTail::new(12_000_000, BufferConfig::Bytes(3000));
        let n_ok = (0..5).filter(|_| matches!(q.offer(0, 1500), Enqueue::Sent { .. })).count();
        assert_eq!(n_ok, 3);
    }
}
