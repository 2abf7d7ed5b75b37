//! A small seeded generator (xorshift64*) for the randomised disciplines (PIE, RED) and the
//! Wi-Fi medium (ccbench-wifi: backoff, frame errors, rate control), so a run stays
//! reproducible.
//!
//! The simulator has its own generator (`ccbench_sim::rng`, xoshiro256++ with named streams)
//! for loss, jitter and the congestion-control algorithms. The two are kept apart on purpose:
//! their streams differ, so serving either side's draws from the other generator would change
//! every result already recorded.

#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Through the flow-hash mixer so that seeds 0, 1, 2 … start far apart (and never at 0).
        let s = (crate::flow_hash(seed) as u64) << 32 | crate::flow_hash(seed ^ 0xA5A5) as u64;
        Rng(s | 1)
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
