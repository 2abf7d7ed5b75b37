//! Drop-tail FIFO (Linux pfifo / bfifo), in two forms:
//!
//! * [`ScheduledDropTail`] — the fast path both backends use: a drop-tail FIFO in front of
//!   a fixed-rate [`Transmitter`]. FIFO order and a fixed rate make a packet's transmission start
//!   and end known the moment it arrives (start = max(arrival, end of the previous packet)), so
//!   the queue keeps only the (start, bytes) of waiting packets, for its occupancy, and needs no
//!   dequeue event. A packet counts as queued from its arrival until its transmission starts
//!   (the packet on the wire has left the queue, as a Linux qdisc's backlog does not count the
//!   packet the NIC is sending).
//! * [`DropTail`] — the same discipline as a dequeue-driven [`Qdisc`], for a link that serves
//!   its queue at dequeue events (the form every AQM needs; drop-tail in it behaves the same).
use crate::stats::{Backlog, PktFifo, QueueStats};
use crate::transmitter::{Rounding, Transmitter};
use crate::{Nanos, Pkt, Qdisc, Verdict};
use std::collections::VecDeque;

/// A drop-tail limit: packets (pfifo `limit`) or bytes of IP packets (bfifo `limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Would one more packet of `len` bytes exceed the limit, with `backlog` held?
    #[inline]
    pub fn is_full(&self, packets: u64, bytes: u64, len: u32) -> bool {
        match *self {
            Limit::Packets(n) => packets >= n,
            Limit::Bytes(b) => bytes + len as u64 > b,
        }
    }
}

/// Drop-tail FIFO with departures computed on arrival (see the module doc).
#[derive(Debug, Clone)]
pub struct ScheduledDropTail {
    pub limit: Limit,
    tx: Transmitter,
    /// Transmission start time and size of every packet that has not started transmission yet.
    waiting: VecDeque<(Nanos, u32)>,
    backlog: Backlog,
    /// Length of the packet being serialised (the last one to start service).
    inservice_len: u32,
    /// IP bytes accepted (their transmission is scheduled; for utilisation and departures).
    pub bytes_served: u64,
    pub stats: QueueStats,
}

impl ScheduledDropTail {
    pub fn new(rate_bps: u64, limit: Limit, rounding: Rounding) -> Self {
        ScheduledDropTail {
            limit,
            tx: Transmitter::new(rate_bps, rounding),
            waiting: VecDeque::new(),
            backlog: Backlog::default(),
            inservice_len: 0,
            bytes_served: 0,
            stats: QueueStats::default(),
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
            self.backlog.remove(bytes);
            self.inservice_len = bytes;
            self.stats.dequeued += 1;
        }
    }

    /// Offer a packet of `bytes` at `now`: `Some(end of its transmission)`, or `None` if the
    /// buffer is full (a packet that finds the link idle never waits, so is never dropped).
    #[inline]
    pub fn offer(&mut self, now: Nanos, bytes: u32) -> Option<Nanos> {
        self.advance(now);
        let waits = self.tx.is_busy(now);
        if waits {
            if self.limit.is_full(self.backlog.packets, self.backlog.bytes, bytes) {
                self.stats.drops_overlimit += 1;
                return None;
            }
            self.waiting.push_back((self.tx.busy_until(), bytes));
            self.backlog.add(bytes, &mut self.stats);
        } else {
            self.inservice_len = bytes;
            self.stats.dequeued += 1;
        }
        self.stats.enqueued += 1;
        self.bytes_served += bytes as u64;
        let (_, end) = self.tx.send(now, bytes);
        Some(end)
    }

    /// Bytes waiting at `now` (arrived, not yet started transmission).
    pub fn backlog_bytes(&mut self, now: Nanos) -> u64 {
        self.advance(now);
        self.backlog.bytes
    }

    /// Packets waiting at `now`.
    pub fn backlog_packets(&mut self, now: Nanos) -> u64 {
        self.advance(now);
        self.backlog.packets
    }

    /// IP bytes that have completely left the link by `now` (cumulative).
    pub fn departed_bytes(&mut self, now: Nanos) -> u64 {
        self.advance(now);
        let in_service = if self.tx.is_busy(now) { self.inservice_len as u64 } else { 0 };
        self.bytes_served - self.backlog.bytes - in_service
    }

    /// When the transmitter finishes the last accepted packet.
    pub fn busy_until(&self) -> Nanos {
        self.tx.busy_until()
    }

    pub fn rate_bps(&self) -> u64 {
        self.tx.rate_bps
    }
}

/// Drop-tail FIFO as a dequeue-driven [`Qdisc`] (pfifo / bfifo).
#[derive(Debug, Clone)]
pub struct DropTail {
    pub limit: Limit,
    fifo: PktFifo,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        DropTail { limit, fifo: PktFifo::default() }
    }
}

impl Qdisc for DropTail {
    fn enqueue(&mut self, now: Nanos, pkt: Pkt) -> Verdict {
        let b = self.fifo.backlog;
        if self.limit.is_full(b.packets, b.bytes, pkt.len) {
            self.fifo.stats.drops_overlimit += 1;
            return Verdict::Dropped;
        }
        self.fifo.push(now, pkt);
        Verdict::Queued
    }
    fn dequeue(&mut self, _now: Nanos) -> Option<Pkt> {
        self.fifo.pop()
    }
    fn backlog(&self) -> Backlog {
        self.fifo.backlog
    }
    fn stats(&self) -> &QueueStats {
        &self.fifo.stats
    }
    fn take_dropped(&mut self, _out: &mut Vec<Pkt>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn scheduled_serialises_and_drops_at_packet_limit() {
        // 12 Mbit/s: a 1500-byte packet takes 1 ms.
        let mut q = ScheduledDropTail::new(12_000_000, Limit::Packets(2), Rounding::CeilPerPacket);
        let ends: Vec<Option<Nanos>> = (0..5).map(|_| q.offer(0, 1500)).collect();
        // The first goes straight to the wire (not counted as backlog), two wait, two dropped.
        assert_eq!(ends, vec![Some(MS), Some(2 * MS), Some(3 * MS), None, None]);
        assert_eq!(q.backlog_bytes(0), 3000);
        assert_eq!(q.backlog_bytes(MS), 1500, "the second started at 1 ms");
        assert_eq!(q.backlog_bytes(2 * MS), 0);
        assert_eq!((q.stats.drops_overlimit, q.stats.max_backlog_packets, q.stats.max_backlog_bytes), (2, 2, 3000));
    }

    #[test]
    fn scheduled_byte_limit_counts_waiting_bytes_only() {
        let mut q = ScheduledDropTail::new(12_000_000, Limit::Bytes(3000), Rounding::CeilPerPacket);
        // 1 on the wire + 3000 bytes waiting = 3 packets accepted of 5.
        let ok = (0..5).filter(|_| q.offer(0, 1500).is_some()).count();
        assert_eq!(ok, 3);
    }

    #[test]
    fn departed_bytes_counts_only_finished_packets() {
        let mut q = ScheduledDropTail::new(12_000_000, Limit::Packets(3), Rounding::CarryRemainder);
        for _ in 0..6 {
            q.offer(0, 1500);
        }
        assert_eq!(q.departed_bytes(MS / 2), 0, "first still on the wire");
        assert_eq!(q.departed_bytes(MS), 1500);
        assert_eq!(q.departed_bytes(3 * MS + MS / 2), 4500);
        assert_eq!(q.departed_bytes(9 * MS), 6000, "4 accepted (1 on the wire, 3 waiting), all gone");
    }

    #[test]
    fn fifo_qdisc_keeps_order_and_limit() {
        let mut q = DropTail::new(Limit::Packets(2));
        assert_eq!(q.enqueue(0, Pkt::new(1, 100, 7)), Verdict::Queued);
        assert_eq!(q.enqueue(1, Pkt::new(2, 100, 8)), Verdict::Queued);
        assert_eq!(q.enqueue(2, Pkt::new(3, 100, 7)), Verdict::Dropped, "third over a 2-packet limit");
        assert_eq!(q.dequeue(3).map(|p| (p.id, p.enq_ns)), Some((1, 0)));
        assert_eq!(q.dequeue(3).map(|p| p.id), Some(2));
        assert_eq!(q.dequeue(3), None);
        assert_eq!(q.stats().drops_overlimit, 1);
    }
}
