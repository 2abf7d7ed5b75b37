//! RTT estimation and the retransmission timeout, following Linux tcp_rtt_estimator() and
//! tcp_set_rto() (RFC 6298 with Linux's variant of the variance term): the variance term is
//! floored at TCP_RTO_MIN (200 ms), so RTO = srtt + max(4·mdev, 200 ms), capped at 120 s.
use crate::time::{Nanos, NS_PER_US};

pub const RTO_MIN_US: u64 = 200_000;
pub const RTO_MAX_US: u64 = 120_000_000;
pub const RTO_INIT_US: u64 = 1_000_000;

#[derive(Debug, Clone)]
pub struct RttEstimator {
    /// Smoothed RTT × 8, µs (Linux `srtt_us`).
    srtt8: u64,
    /// Mean deviation × 4, µs (Linux `mdev_us`).
    mdev4: u64,
    mdev_max: u64,
    rttvar: u64,
    /// Segment number after which the variance is re-evaluated (once per window).
    rtt_seq: u64,
    /// Minimum RTT seen (Linux keeps a 5-minute windowed min; runs here are shorter).
    pub min_rtt_us: u32,
    pub latest_us: u64,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator { srtt8: 0, mdev4: 0, mdev_max: 0, rttvar: 0, rtt_seq: 0, min_rtt_us: u32::MAX, latest_us: 0 }
    }
}

impl RttEstimator {
    pub fn srtt_us(&self) -> u64 {
        self.srtt8 >> 3
    }

    pub fn has_sample(&self) -> bool {
        self.srtt8 != 0
    }

    /// Update the min-RTT filter with the congestion-control RTT sample.
    pub fn update_min(&mut self, rtt_us: u64) {
        self.min_rtt_us = self.min_rtt_us.min(rtt_us.max(1).min(u32::MAX as u64) as u32);
    }

    /// Feed one RTT measurement (µs). `snd_una`/`snd_nxt` drive the once-per-window decay.
    pub fn sample(&mut self, m_us: u64, snd_una: u64, snd_nxt: u64) {
        let m = m_us.max(1) as i64;
        self.latest_us = m as u64;
        if self.srtt8 != 0 {
            let mut err = m - (self.srtt8 >> 3) as i64;
            self.srtt8 = (self.srtt8 as i64 + err).max(1) as u64;
            if err < 0 {
                err = -err - (self.mdev4 >> 2) as i64;
                if err > 0 {
                    err >>= 3;
                }
            } else {
                err -= (self.mdev4 >> 2) as i64;
            }
            self.mdev4 = (self.mdev4 as i64 + err).max(0) as u64;
            if self.mdev4 > self.mdev_max {
                self.mdev_max = self.mdev4;
                if self.mdev_max > self.rttvar {
                    self.rttvar = self.mdev_max;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = RTO_MIN_US;
            }
        } else {
            self.srtt8 = (m as u64) << 3;
            self.mdev4 = (m as u64) << 1;
            self.rttvar = self.mdev4.max(RTO_MIN_US);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
        }
    }

    /// Current RTO (before backoff), ns.
    pub fn rto_ns(&self) -> Nanos {
        let us = if self.srtt8 == 0 { RTO_INIT_US } else { ((self.srtt8 >> 3) + self.rttvar).min(RTO_MAX_US) };
        us * NS_PER_US
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rto_floor_and_convergence() {
        let mut e = RttEstimator::default();
        assert_eq!(e.rto_ns(), 1_000_000_000);
        for i in 0..100 {
            e.sample(50_000, i + 1, i + 10);
        }
        assert_eq!(e.srtt_us(), 50_000);
        // Stable RTT: RTO = srtt + 200 ms floor.
        assert_eq!(e.rto_ns(), 250_000_000);
    }
}
