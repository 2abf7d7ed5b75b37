//! The shared medium: two stations contend with EDCA (802.11-2016 10.22.2), the winner sends
//! an A-MPDU built from what its driver queue holds at that moment, the receiver answers with a
//! block-ack after SIFS, failed MPDUs go back for a later aggregate.
//!
//! Events, in time order: a transmission starts (the end of AIFS + backoff of the station that
//! counts down first), its PPDU ends (the receiver takes the MPDUs that got through and
//! releases what is in order), its exchange ends (block-ack or timeout: the sender learns
//! which MPDUs failed, retries or drops them, resets or doubles its contention window and
//! draws its post-backoff). Between the end of one exchange and the next transmission the
//! medium is idle; both stations count their backoff down in the slots after AIFS.
use crate::config::WifiConfig;
use crate::phy::{self, Mode};
use crate::rate::RateCtl;
use crate::reorder::Reorder;
use crate::station::Station;
use crate::stats::MediumStats;
use crate::{Delivery, Dir, DropReason, Nanos};
use ccbench_queue::rng::Rng;
use ccbench_queue::{Backlog, Pkt, Qdisc, Verdict};

/// One station's PPDU in the exchange on the air.
struct Transmission {
    dir: Dir,
    mode: Mode,
    ppdu_end: Nanos,
    /// Per in-flight MPDU: received correctly (filled at `ppdu_end`).
    ok: Vec<bool>,
}

/// The exchange on the air: one transmission, or two that collided.
struct Exchange {
    txs: Vec<Transmission>,
    /// The receiver has taken the MPDUs (done at once for a collision: nothing gets through).
    received: bool,
    /// End of the block-ack (or of its timeout after a collision or a lost A-MPDU).
    end: Nanos,
}

enum Phase {
    Idle { since: Nanos },
    Busy(Exchange),
}

pub struct Medium {
    cfg: WifiConfig,
    aifs_ns: Nanos,
    st: [Station; 2],
    /// Receiver reordering buffer of each direction (indexed by the transmitting station).
    rx: [Reorder; 2],
    rate: [RateCtl; 2],
    phase: Phase,
    backoff_rng: Rng,
    error_rng: Rng,
    /// Deliveries made by internal steps (in `enqueue`), handed out by the next `advance`.
    pending: Vec<Delivery>,
    dropped: Vec<(Dir, Pkt, DropReason)>,
    /// Last time a qdisc wakeup was served, per station (so a wakeup is served once).
    wakeup_done: [Option<Nanos>; 2],
    stats: MediumStats,
    released: Vec<Pkt>,
}

/// What the medium does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Receive(Nanos),
    Finish(Nanos),
    Start(Nanos),
    Wakeup(Nanos, usize),
}

impl Step {
    fn at(self) -> Nanos {
        match self {
            Step::Receive(t) | Step::Finish(t) | Step::Start(t) | Step::Wakeup(t, _) => t,
        }
    }
}

impl Medium {
    /// `qdiscs`: the discipline in front of each station's driver queue ([Fwd, Rev]). Panics on
    /// an invalid `cfg`: callers check `cfg.validate()` first and report the error.
    pub fn new(cfg: &WifiConfig, qdiscs: [Box<dyn Qdisc>; 2], seed: u64) -> Medium {
        if let Err(e) = cfg.validate() {
            panic!("invalid wifi config: {e}");
        }
        let [q0, q1] = qdiscs;
        Medium {
            cfg: cfg.clone(),
            aifs_ns: cfg.sifs_ns + cfg.aifsn as Nanos * cfg.slot_ns,
            st: [
                Station::new(Dir::Fwd, q0, cfg.driver_queue_fwd, cfg.cw_min),
                Station::new(Dir::Rev, q1, cfg.driver_queue_rev, cfg.cw_min),
            ],
            rx: [Reorder::default(), Reorder::default()],
            rate: [RateCtl::new(cfg, seed ^ 0x5A7E_0001), RateCtl::new(cfg, seed ^ 0x5A7E_0002)],
            phase: Phase::Idle { since: 0 },
            backoff_rng: Rng::new(seed ^ 0xBAC0_FF00),
            error_rng: Rng::new(seed ^ 0xE440_0400),
            pending: Vec::new(),
            dropped: Vec::new(),
            wakeup_done: [None; 2],
            stats: MediumStats::default(),
            released: Vec::new(),
        }
    }

    /// A packet arrives at station `dir` at `now` (now >= every earlier call's now). Call
    /// `next_event` again afterwards: the arrival may start a transmission.
    pub fn enqueue(&mut self, now: Nanos, dir: Dir, pkt: Pkt) -> Verdict {
        self.run(now);
        let d = dir as usize;
        let verdict = self.st[d].enqueue(now, pkt);
        self.refill(now, d);
        verdict
    }

    /// When `advance` must next be called (None: nothing pending).
    pub fn next_event(&self) -> Option<Nanos> {
        let pending = self.pending.iter().map(|d| d.at).min();
        let step = self.next_step().map(Step::at);
        match (pending, step) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Run the medium up to `now`; push every MPDU the far side releases (in order) with its
    /// release time (<= now) to `out`.
    pub fn advance(&mut self, now: Nanos, out: &mut Vec<Delivery>) {
        self.run(now);
        out.append(&mut self.pending);
    }

    /// Packets dropped since the last call: by the qdisc (other than refused arrivals) or
    /// after the retry limit.
    pub fn take_dropped(&mut self, out: &mut Vec<(Dir, Pkt, DropReason)>) {
        out.append(&mut self.dropped);
    }

    /// Bytes and packets held by station `dir`: qdisc + driver queue + awaiting retry + on the
    /// air.
    pub fn backlog(&self, dir: Dir) -> Backlog {
        self.st[dir as usize].backlog()
    }

    pub fn stats(&self) -> &MediumStats {
        &self.stats
    }

    /// PHY rate the forward (data) station uses at `now` when not sampling, bit/s.
    pub fn phy_rate_bps(&self, now: Nanos) -> u64 {
        self.phy_rate_bps_dir(now, Dir::Fwd)
    }

    /// PHY rate station `dir` uses at `now` when not sampling, bit/s.
    pub fn phy_rate_bps_dir(&self, now: Nanos, dir: Dir) -> u64 {
        let mcs = self.rate[dir as usize].current(&self.cfg, now);
        self.mode(mcs).rate_bps()
    }

    /// MCS station `dir` uses at `now` when not sampling.
    pub fn mcs(&self, now: Nanos, dir: Dir) -> u8 {
        self.rate[dir as usize].current(&self.cfg, now)
    }

    fn mode(&self, mcs: u8) -> Mode {
        Mode { mcs, width_mhz: self.cfg.width_mhz, short_gi: self.cfg.short_gi }
    }

    /// Airtime of the response: a BlockAck with aggregation, an ACK without.
    fn response_ns(&self) -> Nanos {
        let bytes = if self.cfg.aggregation { phy::BLOCK_ACK_BYTES } else { phy::ACK_BYTES };
        phy::legacy_ns(self.cfg.control_rate_bps, bytes)
    }

    fn run(&mut self, now: Nanos) {
        while let Some(step) = self.next_step() {
            if step.at() > now {
                break;
            }
            match step {
                Step::Receive(t) => self.receive(t),
                Step::Finish(t) => self.finish(t),
                Step::Start(t) => self.start(t),
                Step::Wakeup(t, d) => {
                    self.wakeup_done[d] = Some(t);
                    self.refill(t, d);
                }
            }
        }
    }

    fn next_step(&self) -> Option<Step> {
        let medium = match &self.phase {
            Phase::Busy(ex) if !ex.received => Some(Step::Receive(ex.txs[0].ppdu_end)),
            Phase::Busy(ex) => Some(Step::Finish(ex.end)),
            Phase::Idle { since } => self.contention_end(*since).map(Step::Start),
        };
        let mut best = medium;
        for d in 0..2 {
            if let Some(w) = self.st[d].qdisc_wakeup() {
                if self.wakeup_done[d].is_some_and(|done| w <= done) {
                    continue;
                }
                if best.is_none_or(|b| w < b.at()) {
                    best = Some(Step::Wakeup(w, d));
                }
            }
        }
        best
    }

    /// When station `d` transmits if the medium stays idle from `since`: after AIFS and its
    /// backoff slots, or (backoff already spent, nothing had been queued) at the first slot
    /// boundary after its frames arrived (802.11-2016 10.22.2.2, access after an idle medium).
    fn access_time(&self, d: usize, since: Nanos) -> Option<Nanos> {
        let s = &self.st[d];
        if !s.has_frames() {
            return None;
        }
        let base = since + self.aifs_ns;
        let slot = self.cfg.slot_ns;
        let after_arrival = if s.frames_since > base { (s.frames_since - base).div_ceil(slot) } else { 0 };
        Some(base + (s.backoff as u64).max(after_arrival) * slot)
    }

    fn contention_end(&self, since: Nanos) -> Option<Nanos> {
        match (self.access_time(0, since), self.access_time(1, since)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Move packets from station `d`'s qdisc into its driver queue; a station that gets
    /// something to send while the medium is busy and its backoff is spent draws a new one
    /// (802.11-2016 10.22.2.2: the backoff procedure is invoked when the medium is busy).
    fn refill(&mut self, now: Nanos, d: usize) {
        let became_active = self.st[d].refill(now, &mut self.dropped);
        if became_active && matches!(self.phase, Phase::Busy(_)) && self.st[d].backoff == 0 {
            self.st[d].draw_backoff(&mut self.backoff_rng);
        }
    }

    /// The medium has been idle since `since` and at least one station's countdown ends at
    /// `t`: every station freezes its counter; those whose counter ends at `t` transmit.
    fn start(&mut self, t: Nanos) {
        let Phase::Idle { since } = self.phase else { unreachable!() };
        let slot = self.cfg.slot_ns;
        let elapsed = if t >= since + self.aifs_ns { ((t - since - self.aifs_ns) / slot) as u32 } else { 0 };
        let mut txs = Vec::with_capacity(2);
        let winners: Vec<usize> = (0..2).filter(|&d| self.access_time(d, since) == Some(t)).collect();
        for d in 0..2 {
            if winners.contains(&d) {
                self.st[d].backoff = 0;
            } else {
                self.st[d].backoff = self.st[d].backoff.saturating_sub(elapsed);
            }
        }
        for &d in &winners {
            let mode = self.rate[d].pick(&self.cfg, t);
            let cfg = &self.cfg;
            let fits = |n: usize, bytes: u64| {
                n <= cfg.max_ampdu_frames as usize
                    && bytes <= cfg.max_ampdu_bytes as u64
                    && mode.ppdu_ns(bytes) <= cfg.max_ampdu_ns
            };
            let mpdus = self.st[d].build(cfg.aggregation, fits);
            let psdu: u64 = if cfg.aggregation {
                mpdus.iter().map(|m| phy::subframe_bytes(m.pkt.len)).sum()
            } else {
                phy::mpdu_bytes(mpdus[0].pkt.len)
            };
            let n = mpdus.len();
            let ppdu_end = t + mode.ppdu_ns(psdu);
            let stats = &mut self.stats.dir[d];
            stats.txops += 1;
            stats.ampdu_hist[n] += 1;
            for m in self.st[d].inflight.iter_mut() {
                stats.mpdus_sent += 1;
                if m.tries > 0 {
                    stats.mpdus_retried += 1;
                }
                m.tries += 1;
            }
            txs.push(Transmission { dir: Dir::BOTH[d], mode, ppdu_end, ok: Vec::new() });
        }
        let collided = txs.len() > 1;
        if collided {
            self.stats.collisions += 1;
        }
        // The exchange ends with the response after SIFS; after a collision both senders wait
        // as long for the block-ack that does not come (ACKTimeout ≈ SIFS + response).
        let last_ppdu = txs.iter().map(|x| x.ppdu_end).max().unwrap();
        let end = last_ppdu + self.cfg.sifs_ns + self.response_ns();
        for x in &txs {
            self.stats.dir[x.dir as usize].airtime_ns += x.ppdu_end - t + self.cfg.sifs_ns + self.response_ns();
        }
        if collided {
            for x in &mut txs {
                x.ok = vec![false; self.st[x.dir as usize].inflight.len()];
            }
        }
        self.phase = Phase::Busy(Exchange { txs, received: collided, end });
    }

    /// Per-MPDU error probability at `mcs` for an MPDU of `bytes`.
    fn mpdu_error(&self, mcs: u8, bytes: u64) -> f64 {
        let snr = self.cfg.snr_db.map_or(0.0, |s| phy::snr_error(mcs, s, bytes));
        1.0 - (1.0 - self.cfg.mpdu_error) * (1.0 - snr)
    }

    /// The PPDU has ended: each MPDU gets through or not; the receiver releases in order.
    fn receive(&mut self, t: Nanos) {
        let Phase::Busy(mut ex) = std::mem::replace(&mut self.phase, Phase::Idle { since: 0 }) else { unreachable!() };
        for x in &mut ex.txs {
            let d = x.dir as usize;
            x.ok.clear();
            for i in 0..self.st[d].inflight.len() {
                let m = self.st[d].inflight[i];
                let p = self.mpdu_error(x.mode.mcs, phy::mpdu_bytes(m.pkt.len));
                let ok = p <= 0.0 || self.error_rng.next_f64() >= p;
                x.ok.push(ok);
                if ok {
                    let s = &mut self.stats.dir[d];
                    s.mpdus_delivered += 1;
                    s.bytes_delivered += m.pkt.len as u64;
                    self.rx[d].receive(m.seq, m.pkt, &mut self.released);
                }
            }
            self.flush_released(x.dir, t);
        }
        ex.received = true;
        self.phase = Phase::Busy(ex);
    }

    fn flush_released(&mut self, dir: Dir, at: Nanos) {
        for pkt in self.released.drain(..) {
            self.pending.push(Delivery { dir, pkt, at });
        }
    }

    /// The exchange has ended: senders learn from the block-ack which MPDUs failed.
    fn finish(&mut self, t: Nanos) {
        let Phase::Busy(ex) = std::mem::replace(&mut self.phase, Phase::Idle { since: t }) else { unreachable!() };
        for x in ex.txs {
            let d = x.dir as usize;
            let mpdus = std::mem::take(&mut self.st[d].inflight);
            let n_ok = x.ok.iter().filter(|&&ok| ok).count();
            self.rate[d].report(x.mode.mcs, mpdus.len() as u64, n_ok as u64);
            for (m, ok) in mpdus.into_iter().zip(x.ok) {
                if ok {
                    continue;
                }
                if m.tries > self.cfg.retry_limit {
                    self.stats.dir[d].mpdus_dropped += 1;
                    self.dropped.push((x.dir, m.pkt, DropReason::RetryLimit));
                    self.rx[d].skip(m.seq, &mut self.released);
                } else {
                    self.st[d].requeue(m);
                }
            }
            self.flush_released(x.dir, t);
            // No block-ack (collision, or nothing decoded): double the window; else reset it
            // (802.11-2016 10.22.2.2/10.22.2.6). Then the post-backoff.
            let st = &mut self.st[d];
            st.cw = if n_ok == 0 { (2 * st.cw + 1).min(self.cfg.cw_max) } else { self.cfg.cw_min };
            st.draw_backoff(&mut self.backoff_rng);
        }
        for d in 0..2 {
            self.refill(t, d);
        }
    }
}
