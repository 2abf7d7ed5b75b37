//! A link queue served at dequeue time: the arm of [`Link`](super::Link) for every discipline
//! that decides when the transmitter asks for the next packet (CoDel, FQ-CoDel, PIE, RED, fq;
//! drop-tail too, as a cross-check of this arm). ccbench-queue's top-level doc describes how
//! both backends serve a discipline.
//!
//! The discipline holds small descriptors (`ccbench_queue::Pkt`); the simulator's packets wait
//! here in `held`, in the slot named by the descriptor's `id`. The event loop (world.rs) enqueues
//! at the packet's real arrival time and dequeues whenever the transmitter is free: at an
//! arrival that finds it idle, at the end of each transmission, or at the discipline's
//! `next_wakeup` (fq pacing). The transmitter is a fixed rate or a Mahimahi trace
//! (`ccbench_queue::Server`); a trace link between two delivery opportunities is idle but
//! cannot start a packet, so its next dequeue is armed at the next opportunity.
use super::slots::Slots;
use crate::tcp::{Pkt, PktKind};
use crate::time::Nanos;
use ccbench_queue::{flow_hash, Qdisc, Rounding, Server, Transmitter, Verdict};

pub struct ServedQueue {
    qdisc: Box<dyn Qdisc>,
    tx: Server,
    /// Packets the discipline holds, by slot (= descriptor id).
    held: Slots<Pkt>,
    /// Scratch for `Qdisc::take_dropped`.
    dropped_desc: Vec<ccbench_queue::Pkt>,
    /// Packets dropped since the event loop last collected them (`take_drops`).
    drops: Vec<Pkt>,
    /// When the pending transmit-done (or wake-up) event is due; None = none pending.
    tx_event: Option<Nanos>,
    /// IP bytes whose transmission has started.
    pub bytes_sent: u64,
    /// Packets the discipline CE-marked.
    pub ce_marked: u64,
}

/// What the transmitter does next.
pub enum Next {
    /// `pkt` starts transmission now and ends at `tx_end`, after waiting `sojourn` in the
    /// queue; `ce`: the discipline marked it Congestion Experienced.
    Send { pkt: Pkt, tx_end: Nanos, sojourn: Nanos, ce: bool },
    /// Nothing eligible before this time (fq throttling): ask again then.
    Wake(Nanos),
    /// Nothing to send (or the transmitter is busy; its transmit-done event is pending).
    Idle,
}

impl ServedQueue {
    /// Serialisation times are rounded up per packet, as the fast path and `time::tx_time` do.
    pub fn new(qdisc: Box<dyn Qdisc>, rate_bps: u64) -> Self {
        Self::with_server(qdisc, Server::Fixed(Transmitter::new(rate_bps, Rounding::CeilPerPacket)))
    }

    /// A queue served by `tx` (a trace link's `TraceServer`).
    pub fn with_server(qdisc: Box<dyn Qdisc>, tx: Server) -> Self {
        ServedQueue {
            qdisc,
            tx,
            held: Slots::default(),
            dropped_desc: Vec::new(),
            drops: Vec::new(),
            tx_event: None,
            bytes_sent: 0,
            ce_marked: 0,
        }
    }

    /// The transmitter's rate (a trace's mean capacity).
    pub fn rate_bps(&self) -> u64 {
        self.tx.rate_bps()
    }

    /// Offer an arriving packet at `now`. A refused packet, and any packet the discipline
    /// dropped to make room (FQ-CoDel's fattest flow), go to the drops `take_drops` returns.
    pub fn enqueue(&mut self, now: Nanos, pkt: Pkt) {
        let slot = self.held.reserve();
        // ECT as the sender set it (new data of an ECN connection; never ACKs, retransmissions
        // or the ping), so a discipline with ECN on marks it instead of dropping. Flow hash of
        // the connection id (ping = u32::MAX).
        // ECT(1) or CE is the L4S identifier DualPI2 classifies on (RFC 9331 §5.1).
        let desc = ccbench_queue::Pkt::new(slot as u64, pkt.bytes, flow_hash(pkt.flow as u64))
            .ect(pkt.ect)
            .l4s((pkt.ect && pkt.ect1) || pkt.ce);
        match self.qdisc.enqueue(now, desc) {
            Verdict::Dropped => {
                self.held.release(slot);
                self.drops.push(pkt);
            }
            Verdict::Queued | Verdict::QueuedMarked => self.held.fill(slot, pkt),
        }
        self.collect_dropped();
    }

    /// Move the discipline's own drops into `drops`, freeing their slots.
    fn collect_dropped(&mut self) {
        self.qdisc.take_dropped(&mut self.dropped_desc);
        for d in self.dropped_desc.drain(..) {
            let p = self.held.take(d.id, "dropped");
            self.drops.push(p);
        }
    }

    /// The transmitter is still sending at `now`.
    pub fn busy(&self, now: Nanos) -> bool {
        self.tx.is_busy(now)
    }

    /// Consume the pending transmit-done event if it is the one due at `now` (a later arrival
    /// may have started the transmitter already and superseded it).
    pub fn take_tx_event(&mut self, now: Nanos) -> bool {
        if self.tx_event == Some(now) {
            self.tx_event = None;
            true
        } else {
            false
        }
    }

    /// If the transmitter is free, take the next packet from the discipline and start sending
    /// it. `Send` and a new `Wake` time need a transmit-done event at `tx_end` / the wake time;
    /// a `Wake` the caller already has an event for comes back as `Idle`.
    pub fn next(&mut self, now: Nanos) -> Next {
        if self.tx.is_busy(now) {
            return Next::Idle;
        }
        let ready = self.tx.ready_at(now);
        let out = if ready > now {
            // A trace link between opportunities: take the next packet at the next one.
            self.wake_at(now, Some(ready))
        } else {
            match self.qdisc.dequeue(now) {
                Some(d) => {
                    let pkt = self.held.take(d.id, "dequeued");
                    let (_, tx_end) = self.tx.send(now, pkt.bytes);
                    self.bytes_sent += pkt.bytes as u64;
                    self.ce_marked += d.ce as u64;
                    self.tx_event = Some(tx_end);
                    Next::Send { pkt, tx_end, sojourn: now - d.enq_ns, ce: d.ce }
                }
                None => {
                    let wake = self.qdisc.next_wakeup();
                    self.wake_at(now, wake)
                }
            }
        };
        self.collect_dropped();
        out
    }

    /// Arm a wake-up at `wake` if packets are held (`Wake`, or `Idle` when that event is
    /// already pending); nothing held or no time: `Idle`, no event.
    fn wake_at(&mut self, now: Nanos, wake: Option<Nanos>) -> Next {
        let wake = wake.filter(|_| self.qdisc.backlog_packets() > 0);
        match wake.map(|t| t.max(now + 1)) {
            Some(t) if self.tx_event == Some(t) => Next::Idle,
            Some(t) => {
                self.tx_event = Some(t);
                Next::Wake(t)
            }
            None => {
                self.tx_event = None;
                Next::Idle
            }
        }
    }

    /// Packets dropped since the last call (arriving packets refused, AQM drops at dequeue,
    /// drops from the fattest flow), to `out`.
    pub fn take_drops(&mut self, out: &mut Vec<Pkt>) {
        out.append(&mut self.drops);
    }

    pub fn has_drops(&self) -> bool {
        !self.drops.is_empty()
    }

    /// Bytes the discipline holds (waiting; the packet being serialised has left it).
    pub fn backlog_bytes(&self) -> u64 {
        self.qdisc.backlog_bytes()
    }

    /// Packets held, for the end-of-run conservation counts.
    pub fn held(&self) -> impl Iterator<Item = &Pkt> {
        self.held.iter()
    }

    /// Data packets of flow `f` held (conservation counts).
    pub fn held_data_of(&self, f: u32) -> u64 {
        self.held().filter(|p| p.kind == PktKind::Data && p.flow == f).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccbench_queue::{DropTail, Limit};

    fn data(flow: u32, seq: u64) -> Pkt {
        Pkt::data(flow, seq, 0)
    }

    #[test]
    fn serves_in_order_one_packet_per_transmission_and_reports_drops() {
        // 12 Mbit/s: a 1500-byte packet (1448 + 52) takes 1 ms.
        let mut q = ServedQueue::new(Box::new(DropTail::new(Limit::Packets(2))), 12_000_000);
        for s in 0..4 {
            q.enqueue(0, data(0, s));
        }
        let mut drops = Vec::new();
        q.take_drops(&mut drops);
        assert_eq!(drops.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![2, 3], "limit 2: third and fourth dropped");
        let Next::Send { pkt, tx_end, sojourn, .. } = q.next(0) else { panic!("idle transmitter sends") };
        assert_eq!((pkt.seq, tx_end, sojourn), (0, 1_000_000, 0));
        assert!(matches!(q.next(500_000), Next::Idle), "busy until 1 ms");
        assert!(!q.take_tx_event(500_000) && q.take_tx_event(1_000_000));
        let Next::Send { pkt, sojourn, .. } = q.next(1_000_000) else { panic!() };
        assert_eq!((pkt.seq, sojourn), (1, 1_000_000), "waited 1 ms");
        assert!(matches!(q.next(2_000_000), Next::Idle));
        assert_eq!((q.backlog_bytes(), q.held().count(), q.bytes_sent), (0, 0, 3000));
    }
}
