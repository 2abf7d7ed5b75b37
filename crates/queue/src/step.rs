//! Step ECN marking: the switch queue DCTCP is designed for (Alizadeh et al., "Data Center
//! TCP", SIGCOMM 2010, §3.1: "mark arriving packets with the Congestion Experienced (CE)
//! codepoint if the queue occupancy is greater than K upon arrival"; RFC 8257 §3.1 describes the
//! same marking). The instantaneous queue is compared with K, with no averaging and no
//! randomness (RED configured with min = max = K, an EWMA weight of 1 and probability 1 is the
//! usual way to get this from a Linux switch or qdisc).
//!
//! * An arriving ECT(0)/ECT(1) packet is CE-marked when the queue it finds — before it is
//!   added, not counting the packet on the wire, as a Linux qdisc's backlog — holds more than
//!   K packets (K in packets) or more than K bytes (K in bytes).
//! * A Not-ECT packet is never marked and never dropped by the marker: the step is a marking
//!   rule only, so a non-ECN flow through it sees plain drop-tail at `limit`. (Linux's RED
//!   would instead drop a Not-ECT packet above its threshold; the DCTCP paper's switches mark
//!   only, and dropping early would make a non-ECN flow's result depend on K.)
//! * Every packet, ECT or not, is tail-dropped at `limit` (packets or bytes, like pfifo/bfifo);
//!   the limit is checked first, so a packet is either dropped or queued (marked or not).
use crate::stats::{Backlog, PktFifo, QueueStats};
use crate::{Limit, Nanos, Pkt, Qdisc, Verdict};

/// The marking threshold K: packets or bytes of IP packets queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threshold {
    Packets(u64),
    Bytes(u64),
}

impl Threshold {
    /// Does a queue holding `backlog` exceed K?
    #[inline]
    pub fn exceeded_by(&self, backlog: Backlog) -> bool {
        match *self {
            Threshold::Packets(k) => backlog.packets > k,
            Threshold::Bytes(k) => backlog.bytes > k,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepConfig {
    /// Mark ECT packets arriving at a queue above this.
    pub k: Threshold,
    /// Tail-drop limit.
    pub limit: Limit,
}

impl StepConfig {
    /// The default K: 65 packets, the DCTCP paper's setting for its 10 Gbit/s ports (its
    /// guideline, §3.4, is K > C × RTT / 7). The queue knows no RTT, so K is not derived from
    /// the link; see docs/scenario.md.
    pub const DEFAULT_K_PACKETS: u64 = 65;
}

/// Step-marking FIFO (see the module doc).
#[derive(Debug, Clone)]
pub struct Step {
    pub cfg: StepConfig,
    fifo: PktFifo,
}

impl Step {
    pub fn new(cfg: StepConfig) -> Self {
        Step { cfg, fifo: PktFifo::default() }
    }
}

impl Qdisc for Step {
    fn enqueue(&mut self, now: Nanos, mut pkt: Pkt) -> Verdict {
        let b = self.fifo.backlog;
        if self.cfg.limit.is_full(b.packets, b.bytes, pkt.len) {
            self.fifo.stats.drops_overlimit += 1;
            return Verdict::Dropped;
        }
        let verdict = if self.cfg.k.exceeded_by(b) && pkt.set_ce() {
            self.fifo.stats.marks += 1;
            Verdict::QueuedMarked
        } else {
            Verdict::Queued
        };
        self.fifo.push(now, pkt);
        verdict
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

    fn step(k: Threshold, limit: Limit) -> Step {
        Step::new(StepConfig { k, limit })
    }

    /// Offer `n` packets of `len` bytes at time 0 (nothing leaves), their verdicts.
    fn fill(q: &mut Step, n: u64, len: u32, ect: bool) -> Vec<Verdict> {
        (0..n).map(|i| q.enqueue(0, Pkt::new(i, len, 1).ect(ect))).collect()
    }

    #[test]
    fn ect_packets_arriving_above_k_packets_are_marked_at_or_below_not() {
        let mut q = step(Threshold::Packets(3), Limit::Packets(100));
        let v = fill(&mut q, 6, 1500, true);
        // Arrivals find 0, 1, 2, 3 packets (≤ K: not marked), then 4 and 5 (> K: marked).
        use Verdict::*;
        assert_eq!(v, vec![Queued, Queued, Queued, Queued, QueuedMarked, QueuedMarked]);
        let ce: Vec<bool> = std::iter::from_fn(|| q.dequeue(0)).map(|p| p.ce).collect();
        assert_eq!(ce, vec![false, false, false, false, true, true], "the mark is on the packet");
        assert_eq!(q.stats().marks, 2);
        assert_eq!(q.stats().drops(), 0);
    }

    #[test]
    fn the_queue_is_measured_on_arrival_so_departures_clear_the_signal() {
        let mut q = step(Threshold::Packets(2), Limit::Packets(100));
        fill(&mut q, 4, 1500, true); // the 4th finds 3 > 2: marked
        assert_eq!(q.stats().marks, 1);
        q.dequeue(1);
        q.dequeue(1); // 2 held = K
        assert_eq!(q.enqueue(2, Pkt::new(9, 1500, 1).ect(true)), Verdict::Queued, "2 is not above K = 2");
        assert_eq!(q.enqueue(2, Pkt::new(10, 1500, 1).ect(true)), Verdict::QueuedMarked, "3 is");
    }

    #[test]
    fn not_ect_packets_are_never_marked_nor_dropped_below_the_limit() {
        let mut q = step(Threshold::Packets(1), Limit::Packets(10));
        let v = fill(&mut q, 12, 1500, false);
        assert!(v[..10].iter().all(|&x| x == Verdict::Queued), "{v:?}");
        assert_eq!(&v[10..], &[Verdict::Dropped, Verdict::Dropped], "only the tail drop drops");
        assert!(std::iter::from_fn(|| q.dequeue(0)).all(|p| !p.ce));
        let s = q.stats();
        assert_eq!((s.marks, s.drops_aqm, s.drops_overlimit), (0, 0, 2));
    }

    #[test]
    fn every_packet_is_tail_dropped_at_the_limit_marked_or_not() {
        let mut q = step(Threshold::Packets(2), Limit::Packets(5));
        let v = fill(&mut q, 8, 1500, true);
        use Verdict::*;
        assert_eq!(v, vec![Queued, Queued, Queued, QueuedMarked, QueuedMarked, Dropped, Dropped, Dropped]);
        assert_eq!(q.backlog_packets(), 5);
        assert_eq!((q.stats().marks, q.stats().drops_overlimit), (2, 3));
        // A byte limit counts the arriving packet's bytes (bfifo).
        let mut q = step(Threshold::Packets(100), Limit::Bytes(4000));
        assert_eq!(fill(&mut q, 3, 1500, true), vec![Queued, Queued, Dropped]);
        assert_eq!(q.enqueue(0, Pkt::new(7, 1000, 1).ect(true)), Queued, "1000 B still fit");
    }

    #[test]
    fn k_in_bytes_counts_bytes_k_in_packets_counts_packets() {
        // 10 small packets (100 B each) hold 1000 B: above K = 5 packets, not above K = 1500 B.
        let mut by_pkts = step(Threshold::Packets(5), Limit::Packets(100));
        let mut by_bytes = step(Threshold::Bytes(1500), Limit::Packets(100));
        fill(&mut by_pkts, 10, 100, true);
        fill(&mut by_bytes, 10, 100, true);
        assert_eq!(by_pkts.stats().marks, 4, "arrivals finding 6..9 packets");
        assert_eq!(by_bytes.stats().marks, 0, "never more than 900 B found");
        // Full-size packets: 1500 B found is not above K = 1500 B, 3000 B is.
        let mut q = step(Threshold::Bytes(1500), Limit::Packets(100));
        use Verdict::*;
        assert_eq!(fill(&mut q, 4, 1500, true), vec![Queued, Queued, QueuedMarked, QueuedMarked]);
        // 15 packets of 100 B find up to 1400 B, the 16th finds 1500 B (= K), the 17th 1600 B.
        let mut q = step(Threshold::Bytes(1500), Limit::Packets(100));
        let v = fill(&mut q, 17, 100, true);
        assert_eq!(v.iter().filter(|&&x| x == QueuedMarked).count(), 1);
        assert_eq!(v[16], QueuedMarked);
    }

    #[test]
    fn already_marked_packets_stay_marked() {
        let mut q = step(Threshold::Packets(0), Limit::Packets(10));
        let mut p = Pkt::new(1, 1500, 1).ect(true);
        p.ce = true;
        assert_eq!(q.enqueue(0, p), Verdict::Queued, "an empty queue is not above K = 0");
        assert!(q.dequeue(0).is_some_and(|p| p.ce));
    }
}
