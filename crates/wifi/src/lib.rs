//! ccbench-wifi: one 802.11n hop between two stations as a clock-free, deterministic state
//! machine (time is passed in, randomness comes from the seed), shared by the simulator and
//! ccbench-link.
//!
//! (Placeholder behaviour while the model is written: one packet per access, fixed overhead,
//! no errors. The API is final.)
pub mod config;
pub mod medium;
pub mod phy;
pub mod rate;
pub mod reorder;
pub mod station;
pub mod stats;
#[cfg(test)]
mod tests;

pub use config::{RateControl, WifiConfig};
pub use medium::Medium;
pub use stats::{DirStats, MediumStats};

/// Nanoseconds on the caller's clock.
pub type Nanos = u64;

/// Which station transmits. `Fwd`: the station on the sender side (forward data, reverse
/// flows' ACKs); `Rev`: the station on the receiver side. Same as the bottleneck's fwd/rev links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    Fwd = 0,
    Rev = 1,
}

impl Dir {
    pub const BOTH: [Dir; 2] = [Dir::Fwd, Dir::Rev];
    pub fn other(self) -> Dir {
        match self {
            Dir::Fwd => Dir::Rev,
            Dir::Rev => Dir::Fwd,
        }
    }
}

/// An MPDU the far side released (in order) at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub dir: Dir,
    pub pkt: ccbench_queue::Pkt,
    pub at: Nanos,
}

/// Why a packet the medium had accepted was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The qdisc in front of the driver queue dropped it after accepting it (AQM drop at
    /// dequeue, FQ-CoDel's drop from the fattest flow).
    Queue,
    /// Its MPDU failed `retry_limit + 1` transmissions.
    RetryLimit,
}

/// Nominal PHY rate of `cfg.mcs` at `cfg.width_mhz` and `cfg.short_gi`, bit/s.
pub fn phy_rate_bps(cfg: &WifiConfig) -> u64 {
    phy::Mode { mcs: cfg.mcs, width_mhz: cfg.width_mhz, short_gi: cfg.short_gi }.rate_bps()
}
