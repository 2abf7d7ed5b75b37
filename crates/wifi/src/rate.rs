//! Picking the MCS of a transmission: fixed (with an optional `mcs_trace`), or a
//! Minstrel-HT-like adaptation.
//!
//! The adaptation follows mac80211's minstrel_ht (net/mac80211/rc80211_minstrel_ht.c) in its
//! main lines: per-MCS success probabilities counted per MPDU and folded into an EWMA (old
//! value weighted 75 %, EWMA_LEVEL in rc80211_minstrel.h) every 50 ms (update_interval =
//! HZ / 20); the rate with the highest expected throughput (nominal rate × success
//! probability, the probability capped at 90 % and rates below 10 % success counted as zero,
//! as minstrel_ht_get_tp_avg does) is used; about one transmission in ten samples another MCS
//! so that its statistics stay fresh. What it leaves out: multi-rate retry chains, the
//! A-MPDU-length-aware throughput (the per-transmission overhead), the sample table's
//! ordering, and the groups of other widths and guard intervals.
use crate::config::{RateControl, WifiConfig};
use crate::phy::Mode;
use crate::Nanos;
use ccbench_queue::rng::Rng;

/// Statistics are folded into the EWMA every this often (minstrel_ht update_interval, HZ/20).
pub const MINSTREL_INTERVAL_NS: Nanos = 50_000_000;
/// Weight of the old value in the EWMA, percent (EWMA_LEVEL 96/128 = 75 %).
const EWMA_OLD_PCT: f64 = 75.0;
/// One transmission in this many samples a random other MCS.
const SAMPLE_EVERY: u64 = 10;

#[derive(Debug, Clone, Default)]
struct McsStats {
    attempts: u64,
    successes: u64,
    /// Smoothed success probability; None until the MCS has been tried.
    prob: Option<f64>,
}

pub struct RateCtl {
    kind: RateControl,
    width_mhz: u32,
    short_gi: bool,
    /// Minstrel: MCS `0..stats.len()` (the configured MCS's stream count).
    stats: Vec<McsStats>,
    best: u8,
    next_update: Nanos,
    txops: u64,
    rng: Rng,
}

impl RateCtl {
    pub fn new(cfg: &WifiConfig, seed: u64) -> RateCtl {
        let streams = cfg.mcs as usize / 8 + 1;
        RateCtl {
            kind: cfg.rate_control,
            width_mhz: cfg.width_mhz,
            short_gi: cfg.short_gi,
            stats: vec![McsStats::default(); 8 * streams],
            best: cfg.mcs,
            next_update: MINSTREL_INTERVAL_NS,
            txops: 0,
            rng: Rng::new(seed),
        }
    }

    fn mode(&self, mcs: u8) -> Mode {
        Mode { mcs, width_mhz: self.width_mhz, short_gi: self.short_gi }
    }

    /// The MCS used at `now` when not sampling (what `phy_rate_bps(now)` reports).
    pub fn current(&self, cfg: &WifiConfig, now: Nanos) -> u8 {
        match self.kind {
            RateControl::Fixed => cfg.fixed_mcs_at(now),
            RateControl::Minstrel => self.best,
        }
    }

    /// The mode of a transmission starting at `now`.
    pub fn pick(&mut self, cfg: &WifiConfig, now: Nanos) -> Mode {
        if self.kind == RateControl::Fixed {
            return self.mode(cfg.fixed_mcs_at(now));
        }
        while now >= self.next_update {
            self.update();
            self.next_update += MINSTREL_INTERVAL_NS;
        }
        self.txops += 1;
        let n = self.stats.len() as u64;
        if self.txops.is_multiple_of(SAMPLE_EVERY) && n > 1 {
            // A uniformly random MCS other than the best.
            let k = self.rng.next_u64() % (n - 1);
            let mcs = if k >= self.best as u64 { k + 1 } else { k };
            return self.mode(mcs as u8);
        }
        self.mode(self.best)
    }

    /// Outcome of a transmission at `mcs`: `sent` MPDUs of which `ok` were acknowledged.
    pub fn report(&mut self, mcs: u8, sent: u64, ok: u64) {
        if self.kind == RateControl::Minstrel {
            if let Some(s) = self.stats.get_mut(mcs as usize) {
                s.attempts += sent;
                s.successes += ok;
            }
        }
    }

    fn update(&mut self) {
        for s in &mut self.stats {
            if s.attempts > 0 {
                let p = s.successes as f64 / s.attempts as f64;
                s.prob = Some(match s.prob {
                    None => p,
                    Some(old) => (old * EWMA_OLD_PCT + p * (100.0 - EWMA_OLD_PCT)) / 100.0,
                });
                s.attempts = 0;
                s.successes = 0;
            }
        }
        let tp = |m: usize, s: &McsStats| match s.prob {
            Some(p) if p >= 0.1 => p.min(0.9) * self.mode(m as u8).rate_bps() as f64,
            _ => 0.0,
        };
        let mut best: Option<(usize, f64)> = None;
        for (m, s) in self.stats.iter().enumerate() {
            let t = tp(m, s);
            if t > 0.0 && best.is_none_or(|(_, bt)| t > bt) {
                best = Some((m, t));
            }
        }
        self.best = match best {
            Some((m, _)) => m as u8,
            // Nothing gets through: fall back to the most robust MCS (minstrel's max_prob_rate
            // would be the lowest rate here).
            None if self.stats.iter().any(|s| s.prob.is_some()) => 0,
            None => self.best,
        };
    }
}
