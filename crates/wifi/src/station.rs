//! One station's transmit side: the qdisc in front, the driver queue below it, the MPDUs
//! awaiting a retransmission, the block-ack window and the EDCA backoff state.
use crate::phy;
use crate::{Dir, DropReason, Nanos};
use ccbench_queue::rng::Rng;
use ccbench_queue::{Backlog, Pkt, Qdisc};
use std::collections::{BTreeMap, VecDeque};

/// The block-ack window: an aggregate never carries a sequence number 64 or more beyond the
/// oldest unacknowledged one (802.11-2016 10.24.7; ath9k BAW_WITHIN).
pub const BA_WINDOW: u64 = 64;

/// One MPDU below the qdisc.
#[derive(Debug, Clone, Copy)]
pub struct Mpdu {
    pub pkt: Pkt,
    /// Sequence number, assigned when it first goes on the air.
    pub seq: u64,
    /// Transmissions so far.
    pub tries: u32,
}

pub struct Station {
    pub dir: Dir,
    qdisc: Box<dyn Qdisc>,
    /// Packets the driver took from the qdisc, not yet sent (no sequence number yet).
    fresh: VecDeque<Pkt>,
    /// MPDUs that failed and wait for a retransmission, by sequence number.
    retry: BTreeMap<u64, Mpdu>,
    /// MPDUs on the air now.
    pub inflight: Vec<Mpdu>,
    next_seq: u64,
    /// Driver queue depth: fresh + retry + in flight.
    limit: usize,
    /// Backoff slots left (frozen while the medium is busy).
    pub backoff: u32,
    /// Current contention window.
    pub cw: u32,
    /// When the station last went from nothing to send to something to send.
    pub frames_since: Nanos,
    qdisc_drops: Vec<Pkt>,
}

impl Station {
    pub fn new(dir: Dir, qdisc: Box<dyn Qdisc>, limit: u32, cw_min: u32) -> Station {
        Station {
            dir,
            qdisc,
            fresh: VecDeque::new(),
            retry: BTreeMap::new(),
            inflight: Vec::new(),
            next_seq: 0,
            limit: limit as usize,
            backoff: 0,
            cw: cw_min,
            frames_since: 0,
            qdisc_drops: Vec::new(),
        }
    }

    pub fn enqueue(&mut self, now: Nanos, pkt: Pkt) -> ccbench_queue::Verdict {
        self.qdisc.enqueue(now, pkt)
    }

    /// Has an MPDU to send (not counting those on the air).
    pub fn has_frames(&self) -> bool {
        !self.fresh.is_empty() || !self.retry.is_empty()
    }

    fn held(&self) -> usize {
        self.fresh.len() + self.retry.len() + self.inflight.len()
    }

    /// Move packets from the qdisc into the driver queue while it has room; report the qdisc's
    /// own drops. Returns true if the station went from nothing to send to something.
    pub fn refill(&mut self, now: Nanos, dropped: &mut Vec<(Dir, Pkt, DropReason)>) -> bool {
        let had = self.has_frames();
        while self.held() < self.limit {
            match self.qdisc.dequeue(now) {
                Some(p) => self.fresh.push_back(p),
                None => break,
            }
        }
        self.qdisc.take_dropped(&mut self.qdisc_drops);
        for p in self.qdisc_drops.drain(..) {
            dropped.push((self.dir, p, DropReason::Queue));
        }
        if !had && self.has_frames() {
            self.frames_since = now;
            return true;
        }
        false
    }

    /// When the qdisc wants to be asked again (fq pacing), if the driver queue has room.
    pub fn qdisc_wakeup(&self) -> Option<Nanos> {
        if self.held() < self.limit {
            self.qdisc.next_wakeup()
        } else {
            None
        }
    }

    /// Draw a backoff from [0, cw].
    pub fn draw_backoff(&mut self, rng: &mut Rng) {
        self.backoff = (rng.next_u64() % (self.cw as u64 + 1)) as u32;
    }

    /// Build the next transmission: retransmissions first (oldest first, as ath9k requeues
    /// them at the head of the TID queue), then fresh packets, inside the block-ack window and
    /// the size limits. `fits(n, psdu_bytes)` says whether an aggregate of n MPDUs and that
    /// PSDU length is allowed; the first MPDU is always taken. Moves them to `inflight`.
    pub fn build(&mut self, aggregate: bool, fits: impl Fn(usize, u64) -> bool) -> &[Mpdu] {
        debug_assert!(self.inflight.is_empty());
        let win_start = self.retry.keys().next().copied().unwrap_or(self.next_seq);
        let mut bytes = 0u64;
        loop {
            let n = self.inflight.len();
            if n > 0 && !aggregate {
                break;
            }
            let next_len = if let Some((_, m)) = self.retry.first_key_value() {
                m.pkt.len
            } else if let Some(p) = self.fresh.front() {
                if self.next_seq >= win_start + BA_WINDOW {
                    break;
                }
                p.len
            } else {
                break;
            };
            let add = if aggregate { phy::subframe_bytes(next_len) } else { phy::mpdu_bytes(next_len) };
            if n > 0 && !fits(n + 1, bytes + add) {
                break;
            }
            bytes += add;
            let m = if let Some((_, m)) = self.retry.pop_first() {
                m
            } else {
                let pkt = self.fresh.pop_front().unwrap();
                let m = Mpdu { pkt, seq: self.next_seq, tries: 0 };
                self.next_seq += 1;
                m
            };
            self.inflight.push(m);
        }
        &self.inflight
    }

    /// Put a failed MPDU back for a retransmission.
    pub fn requeue(&mut self, m: Mpdu) {
        self.retry.insert(m.seq, m);
    }

    /// qdisc + driver queue + awaiting retry + on the air.
    pub fn backlog(&self) -> Backlog {
        let mut b = self.qdisc.backlog();
        let below =
            self.fresh.iter().chain(self.retry.values().map(|m| &m.pkt)).chain(self.inflight.iter().map(|m| &m.pkt));
        for p in below {
            b.bytes += p.len as u64;
            b.packets += 1;
        }
        b
    }
}
