//! The PI controller of DualPI2 (RFC 9332 §2.4 and Appendix A.1; Linux 6.18
//! net/sched/sch_dualpi2.c, `calculate_probability`, `dualpi2_scale_alpha_beta`): every
//! `tupdate` the base probability p' moves by alpha·(qdelay − target) + beta·(qdelay −
//! qdelay_old), qdelay being the larger head-of-queue sojourn of the two queues.
//!
//! Fixed point as Linux: the probability is a u32 (`MAX_PROB` = u32::MAX is 1); the gains are
//! given in 1/256 Hz (the netlink units: 41 ≈ 0.16 Hz, 819 ≈ 3.2 Hz) and kept internally per
//! 64 ns of delay, so that one update adds `(Δq_ns · gain) / 64` probability units. Below 0 the
//! probability is clamped to 0 and above 1 to `MAX_PROB` (wrap-around checks in Linux).
//! Without `drop_overload` the result is capped at 1/k, so that the L queue's k·p' stays ≤ 1.
use crate::Nanos;

/// Linux MAX_PROB: a probability of 1.
pub const MAX_PROB: u32 = u32::MAX;
/// Netlink alpha/beta are in 1/2^8 Hz (ALPHA_BETA_SHIFT).
const ALPHA_BETA_SHIFT: u32 = 8;
/// Internally per 2^6 ns of delay (ALPHA_BETA_GRANULARITY).
const ALPHA_BETA_GRANULARITY: u32 = 6;
const NS_PER_SEC: u64 = 1_000_000_000;

/// `dualpi2_scale_alpha_beta`: a gain in 1/256 Hz to probability units per 64 ns of delay.
pub fn scale_gain(param: u32) -> u32 {
    ((((param as u64) * (MAX_PROB as u64)) >> (ALPHA_BETA_SHIFT - ALPHA_BETA_GRANULARITY)) / NS_PER_SEC) as u32
}

/// The base probability p' and its update rule.
#[derive(Debug, Clone)]
pub struct Pi2 {
    pub target_ns: Nanos,
    pub tupdate_ns: Nanos,
    /// Scaled gains (`scale_gain`).
    alpha: u32,
    beta: u32,
    /// k: the L queue's probability is k·p'.
    coupling: u8,
    /// Without it, p' is capped at MAX_PROB / k.
    drop_overload: bool,
    /// p' (`pi2_prob`).
    pub prob: u32,
    /// qdelay at the previous update (`last_qdelay`).
    last_qdelay: Nanos,
    /// When the next update is due (the hrtimer's expiry).
    next_update: Nanos,
}

impl Pi2 {
    /// A controller created at `now`; its first update is `tupdate` later (`dualpi2_init` arms
    /// the timer at now + tupdate). `alpha`, `beta` in 1/256 Hz.
    pub fn new(
        target_ns: Nanos,
        tupdate_ns: Nanos,
        alpha: u32,
        beta: u32,
        coupling: u8,
        drop_overload: bool,
        now: Nanos,
    ) -> Pi2 {
        Pi2 {
            target_ns,
            tupdate_ns,
            alpha: scale_gain(alpha),
            beta: scale_gain(beta),
            coupling: coupling.max(1),
            drop_overload,
            prob: 0,
            last_qdelay: 0,
            next_update: now + tupdate_ns,
        }
    }

    /// When the next update is due.
    pub fn next_update(&self) -> Nanos {
        self.next_update
    }

    /// Consume one due update (the caller then runs `update` with that time's qdelay).
    pub fn advance_timer(&mut self) {
        self.next_update += self.tupdate_ns.max(1);
    }

    /// `calculate_probability` with the queueing delay `qdelay` of this update.
    pub fn update(&mut self, qdelay: Nanos) {
        let delta: i128 = (qdelay as i128 - self.target_ns as i128) * self.alpha as i128
            + (qdelay as i128 - self.last_qdelay as i128) * self.beta as i128;
        self.last_qdelay = qdelay;
        let step = delta.unsigned_abs() >> ALPHA_BETA_GRANULARITY;
        let p = self.prob as i128 + if delta > 0 { step as i128 } else { -(step as i128) };
        let mut new_prob = p.clamp(0, MAX_PROB as i128) as u32;
        if !self.drop_overload {
            new_prob = new_prob.min(MAX_PROB / self.coupling as u32);
        }
        self.prob = new_prob;
    }

    /// p' as a fraction.
    pub fn prob_f64(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn pi2() -> Pi2 {
        Pi2::new(15 * MS, 16 * MS, 41, 819, 2, true, 0)
    }

    #[test]
    fn gains_scale_to_probability_per_64ns() {
        // 41/256 Hz: per 64 ns of delay error, 41/256 · 64e-9 · 2^32 ≈ 44.0 units; Linux's
        // integer arithmetic: 41 · (2^32 − 1) >> 2 = 44 023 414 783, / 1e9 = 44.
        assert_eq!(scale_gain(41), 44);
        // 819 · (2^32 − 1) >> 2 / 1e9 = 879.4 → 879.
        assert_eq!(scale_gain(819), 879);
    }

    #[test]
    fn one_update_moves_by_alpha_times_error_plus_beta_times_trend() {
        // From p' = 0 and last qdelay 0, a qdelay of 25 ms: delta = (25 − 15) ms · 44 + 25 ms ·
        // 879 = 1e7·44 + 2.5e7·879 = 2.2415e10 units·64ns, /64 = 350 234 375 units ≈ 8.15 %.
        // As a rate: 0.16 Hz · 10 ms + 3.2 Hz · 25 ms = 0.0016 + 0.08 ≈ 0.0816.
        let mut p = pi2();
        p.update(25 * MS);
        assert_eq!(p.prob, ((10_000_000u64 * 44 + 25_000_000 * 879) >> 6) as u32);
        assert!((p.prob_f64() - 0.0816).abs() < 0.001, "{}", p.prob_f64());
        // Same delay again: no trend, only the integral term: + 10 ms · 44 / 64 = 6 875 000.
        let before = p.prob;
        p.update(25 * MS);
        assert_eq!(p.prob - before, 6_875_000);
    }

    #[test]
    fn probability_is_clamped_at_zero_and_one() {
        let mut p = pi2();
        p.update(0); // (0 − 15 ms)·alpha < 0 from 0: stays 0
        assert_eq!(p.prob, 0);
        for _ in 0..100 {
            p.update(4_000 * MS); // +0.16 Hz · ~4 s per update and more: saturates
        }
        assert_eq!(p.prob, MAX_PROB);
    }

    #[test]
    fn without_drop_overload_the_base_probability_stays_at_most_one_over_k() {
        let mut p = Pi2::new(15 * MS, 16 * MS, 41, 819, 2, false, 0);
        for _ in 0..100 {
            p.update(4_000 * MS);
        }
        assert_eq!(p.prob, MAX_PROB / 2);
    }

    #[test]
    fn at_target_with_no_trend_the_probability_holds() {
        let mut p = pi2();
        p.update(15 * MS); // trend +15 ms once
        let held = p.prob;
        p.update(15 * MS);
        assert_eq!(p.prob, held, "qdelay = target, no change: delta 0");
        assert_eq!(p.next_update(), 16 * MS);
    }
}
