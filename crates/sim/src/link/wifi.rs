//! The bottleneck as an 802.11n hop (`bottleneck.wifi`): one ccbench-wifi `Medium` shared by
//! both directions, in place of the two bottleneck links' queues and transmitters. The two
//! `Link`s stay, without a queue, for what follows the hop: the wired propagation delay,
//! jitter and loss (a packet the far station releases enters its direction's delay line).
//!
//! As in `served.rs`, the medium holds small descriptors (`ccbench_queue::Pkt`) whose `id` is
//! a slot here; the slot keeps the simulator's packet and when it reached the station. The
//! event loop (world.rs) hands packets over at their arrival, runs the medium at the times
//! `Medium::next_event` asks for, and routes what the far side releases.
use super::slots::Slots;
use crate::tcp::Pkt;
use crate::time::Nanos;
use ccbench_queue::{flow_hash, Qdisc, Verdict};
use ccbench_wifi::{Dir, DropReason, Medium, MediumStats, WifiConfig};

/// A packet the far station released at `at`, `in_hop` after it reached the near one.
pub struct Released {
    pub dir: Dir,
    pub pkt: Pkt,
    pub at: Nanos,
    pub in_hop: Nanos,
}

/// A packet the hop lost after accepting it.
pub struct Lost {
    pub dir: Dir,
    pub pkt: Pkt,
    pub reason: DropReason,
}

pub struct WifiHop {
    medium: Medium,
    /// Packets the medium holds, by slot (= descriptor id): the packet, its direction and the
    /// time it reached the station.
    held: Slots<(Pkt, Dir, Nanos)>,
    /// When the pending `Ev::Medium` is due; None = none pending.
    pub event_at: Option<Nanos>,
    deliveries: Vec<ccbench_wifi::Delivery>,
    dropped: Vec<(Dir, ccbench_queue::Pkt, DropReason)>,
    /// Packets released CE-marked by the discipline in front of the driver queue, per dir.
    pub ce_marked: [u64; 2],
    /// MPDUs dropped after the retry limit, per dir.
    pub retry_drops: [u64; 2],
}

impl WifiHop {
    pub fn new(cfg: &WifiConfig, qdiscs: [Box<dyn Qdisc>; 2], seed: u64) -> Self {
        WifiHop {
            medium: Medium::new(cfg, qdiscs, seed),
            held: Slots::default(),
            event_at: None,
            deliveries: Vec::new(),
            dropped: Vec::new(),
            ce_marked: [0; 2],
            retry_drops: [0; 2],
        }
    }

    /// Hand `pkt` to station `dir` at `now`. Returns the packet back if the discipline in
    /// front of the driver queue refused it. (Run `advance(now)` first if the medium is due.)
    pub fn enqueue(&mut self, now: Nanos, dir: Dir, pkt: Pkt) -> Option<Pkt> {
        let slot = self.held.reserve();
        // Flow hash of the connection id (ping = u32::MAX) and ECT, as served.rs.
        let desc = ccbench_queue::Pkt::new(slot as u64, pkt.bytes, flow_hash(pkt.flow as u64))
            .ect(pkt.ect)
            .l4s((pkt.ect && pkt.ect1) || pkt.ce);
        match self.medium.enqueue(now, dir, desc) {
            Verdict::Dropped => {
                self.held.release(slot);
                Some(pkt)
            }
            Verdict::Queued | Verdict::QueuedMarked => {
                self.held.fill(slot, (pkt, dir, now));
                None
            }
        }
    }

    /// When the medium must run next.
    pub fn next_event(&self) -> Option<Nanos> {
        self.medium.next_event()
    }

    /// Run the medium up to `now`: what the far sides released goes to `out` (in release
    /// order per direction), what was lost after acceptance to `lost`.
    pub fn advance(&mut self, now: Nanos, out: &mut Vec<Released>, lost: &mut Vec<Lost>) {
        self.medium.advance(now, &mut self.deliveries);
        for d in self.deliveries.drain(..) {
            let (mut pkt, dir, arrived) = self.held.take(d.pkt.id, "released");
            if d.pkt.ce {
                // The discipline CE-marked an ECT packet instead of dropping it (RFC 3168 §5).
                pkt.ce = true;
                self.ce_marked[dir as usize] += 1;
            }
            out.push(Released { dir, pkt, at: d.at, in_hop: d.at.saturating_sub(arrived) });
        }
        self.collect_lost(lost);
    }

    /// Packets lost since the last call (qdisc drops after acceptance, retry-limit drops).
    pub fn collect_lost(&mut self, lost: &mut Vec<Lost>) {
        self.medium.take_dropped(&mut self.dropped);
        for (dir, desc, reason) in self.dropped.drain(..) {
            let (pkt, _, _) = self.held.take(desc.id, "dropped");
            if matches!(reason, DropReason::RetryLimit) {
                self.retry_drops[dir as usize] += 1;
            }
            lost.push(Lost { dir, pkt, reason });
        }
    }

    /// IP bytes waiting at station `dir` (qdisc, driver queue, awaiting a retry).
    pub fn backlog_bytes(&self, dir: Dir) -> u64 {
        self.medium.backlog(dir).bytes
    }

    pub fn stats(&self) -> &MediumStats {
        self.medium.stats()
    }

    /// Packets the hop holds, with their direction (end-of-run conservation counts).
    pub fn held(&self) -> impl Iterator<Item = (&Pkt, Dir)> {
        self.held.iter().map(|(p, d, _)| (p, *d))
    }
}
