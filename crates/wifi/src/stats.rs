//! What the medium counts, per direction and in total.
use crate::Nanos;

/// Counters of one station (one direction of the hop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirStats {
    /// Transmit opportunities won (including those lost to a collision).
    pub txops: u64,
    /// MPDU transmissions, first ones and retries.
    pub mpdus_sent: u64,
    /// MPDU transmissions that were retries.
    pub mpdus_retried: u64,
    /// MPDUs dropped after the retry limit.
    pub mpdus_dropped: u64,
    /// MPDUs the receiver got (each once).
    pub mpdus_delivered: u64,
    /// IP bytes the receiver got.
    pub bytes_delivered: u64,
    /// Airtime of this station's transmissions: PPDUs and the response (block-ack/ACK or its
    /// timeout) that belongs to them, ns.
    pub airtime_ns: Nanos,
    /// A-MPDU size histogram: `ampdu_hist[n]` = transmissions carrying n MPDUs (n ≤ 64).
    pub ampdu_hist: [u64; 65],
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats {
            txops: 0,
            mpdus_sent: 0,
            mpdus_retried: 0,
            mpdus_dropped: 0,
            mpdus_delivered: 0,
            bytes_delivered: 0,
            airtime_ns: 0,
            ampdu_hist: [0; 65],
        }
    }
}

/// Counters of the whole medium.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MediumStats {
    /// Indexed by `Dir as usize`: [Fwd, Rev].
    pub dir: [DirStats; 2],
    /// Transmit opportunities in which both stations transmitted at once.
    pub collisions: u64,
}

impl DirStats {
    /// Mean A-MPDU size in MPDUs (0 with no transmission).
    pub fn mean_ampdu(&self) -> f64 {
        let (n, sum) =
            self.ampdu_hist.iter().enumerate().fold((0u64, 0u64), |(n, s), (k, &c)| (n + c, s + k as u64 * c));
        if n == 0 {
            0.0
        } else {
            sum as f64 / n as f64
        }
    }
    /// The q-quantile (0 ≤ q ≤ 1) of the A-MPDU size, MPDUs (0 with no transmission).
    pub fn ampdu_quantile(&self, q: f64) -> u32 {
        let n: u64 = self.ampdu_hist.iter().sum();
        if n == 0 {
            return 0;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (k, &c) in self.ampdu_hist.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return k as u32;
            }
        }
        64
    }
}
