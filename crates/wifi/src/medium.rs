//! PLACEHOLDER medium: one MPDU per access, AIFS + preamble + SIFS + ACK overhead, no errors,
//! stations served alternately. Replaced by the EDCA/A-MPDU model.
use crate::phy::{self, Mode};
use crate::stats::MediumStats;
use crate::{Delivery, Dir, DropReason, Nanos, WifiConfig};
use ccbench_queue::{Backlog, Pkt, Qdisc, Verdict};
use std::collections::VecDeque;

struct Station {
    qdisc: Box<dyn Qdisc>,
    driver: VecDeque<Pkt>,
    limit: usize,
    dropped: Vec<Pkt>,
}

pub struct Medium {
    cfg: WifiConfig,
    st: [Station; 2],
    busy_until: Nanos,
    /// The exchange in progress: (dir, packet, delivery time).
    inflight: Option<(Dir, Pkt, Nanos)>,
    next_turn: usize,
    dropped: Vec<(Dir, Pkt, DropReason)>,
    stats: MediumStats,
}

impl Medium {
    pub fn new(cfg: &WifiConfig, qdiscs: [Box<dyn Qdisc>; 2], _seed: u64) -> Medium {
        if let Err(e) = cfg.validate() {
            panic!("invalid wifi config: {e}");
        }
        let [q0, q1] = qdiscs;
        let mk = |q, dir| Station { qdisc: q, driver: VecDeque::new(), limit: cfg.driver_queue(dir) as usize, dropped: vec![] };
        Medium {
            cfg: cfg.clone(),
            st: [mk(q0, Dir::Fwd), mk(q1, Dir::Rev)],
            busy_until: 0,
            inflight: None,
            next_turn: 0,
            dropped: vec![],
            stats: MediumStats::default(),
        }
    }

    fn refill(&mut self, now: Nanos, d: usize) {
        let s = &mut self.st[d];
        while s.driver.len() < s.limit {
            match s.qdisc.dequeue(now) {
                Some(p) => s.driver.push_back(p),
                None => break,
            }
        }
        s.qdisc.take_dropped(&mut s.dropped);
        let dir = Dir::BOTH[d];
        for p in s.dropped.drain(..) {
            self.dropped.push((dir, p, DropReason::Queue));
        }
    }

    pub fn enqueue(&mut self, now: Nanos, dir: Dir, pkt: Pkt) -> Verdict {
        let v = self.st[dir as usize].qdisc.enqueue(now, pkt);
        self.refill(now, dir as usize);
        v
    }

    fn start_at(&self) -> Option<Nanos> {
        if self.inflight.is_some() || self.st.iter().all(|s| s.driver.is_empty()) {
            return None;
        }
        Some(self.busy_until + self.cfg.sifs_ns + self.cfg.aifsn as Nanos * self.cfg.slot_ns)
    }

    pub fn next_event(&self) -> Option<Nanos> {
        match self.inflight {
            Some(_) => Some(self.busy_until),
            None => self.start_at(),
        }
    }

    pub fn advance(&mut self, now: Nanos, out: &mut Vec<Delivery>) {
        loop {
            if let Some((dir, pkt, at)) = self.inflight {
                if self.busy_until > now {
                    return;
                }
                self.inflight = None;
                out.push(Delivery { dir, pkt, at });
                let s = &mut self.stats.dir[dir as usize];
                s.mpdus_delivered += 1;
                s.bytes_delivered += pkt.len as u64;
                let t = self.busy_until;
                self.refill(t, dir as usize);
                continue;
            }
            let Some(start) = self.start_at() else { return };
            if start > now {
                return;
            }
            let d = if self.st[self.next_turn].driver.is_empty() { 1 - self.next_turn } else { self.next_turn };
            self.next_turn = 1 - d;
            let pkt = self.st[d].driver.pop_front().unwrap();
            let mode = Mode { mcs: self.cfg.fixed_mcs_at(start), width_mhz: self.cfg.width_mhz, short_gi: self.cfg.short_gi };
            let ppdu = mode.ppdu_ns(phy::mpdu_bytes(pkt.len));
            let ack = phy::legacy_ns(self.cfg.control_rate_bps, phy::ACK_BYTES);
            let at = start + ppdu;
            self.busy_until = at + self.cfg.sifs_ns + ack;
            self.inflight = Some((Dir::BOTH[d], pkt, at));
            let s = &mut self.stats.dir[d];
            s.txops += 1;
            s.mpdus_sent += 1;
            s.airtime_ns += self.busy_until - start;
            s.ampdu_hist[1] += 1;
            self.refill(start, d);
        }
    }

    pub fn take_dropped(&mut self, out: &mut Vec<(Dir, Pkt, DropReason)>) {
        out.append(&mut self.dropped);
    }

    pub fn backlog(&self, dir: Dir) -> Backlog {
        let s = &self.st[dir as usize];
        let mut b = s.qdisc.backlog();
        for p in &s.driver {
            b.bytes += p.len as u64;
            b.packets += 1;
        }
        if let Some((d, p, _)) = self.inflight {
            if d == dir {
                b.bytes += p.len as u64;
                b.packets += 1;
            }
        }
        b
    }

    pub fn stats(&self) -> &MediumStats {
        &self.stats
    }

    pub fn phy_rate_bps(&self, now: Nanos) -> u64 {
        Mode { mcs: self.cfg.fixed_mcs_at(now), width_mhz: self.cfg.width_mhz, short_gi: self.cfg.short_gi }.rate_bps()
    }
}
