//! ccbench-wifi: one 802.11n hop between two stations as a clock-free, deterministic state
//! machine (time is passed in; randomness comes from the seed through
//! `ccbench_queue::rng`), shared by the simulator and ccbench-link.
//!
//! # The model
//!
//! Two stations share one half-duplex channel: `Dir::Fwd` (the sender side: forward data,
//! reverse flows' ACKs) and `Dir::Rev` (the receiver side: forward flows' ACKs). Each station
//! has a qdisc (any `ccbench_queue::Qdisc`, configured by `[bottleneck] buffer/aqm`) in front
//! of its driver queue; the driver takes packets from the qdisc whenever it holds fewer than
//! `driver_queue_*` MPDUs (queued, awaiting a retry or on the air). The medium then works as
//! follows ([`medium`] has the details):
//!
//! * **Contention (EDCA, 802.11-2016 10.22.2).** After the medium has been idle for
//!   AIFS = SIFS + AIFSN × slot, each station with something to send counts its backoff down
//!   one per idle slot and transmits when it reaches zero; the counter is frozen while the
//!   other station transmits. Both reaching zero in the same slot is a collision: neither
//!   frame gets through and both double their contention window (up to CWmax). After each of
//!   its exchanges a station draws a new backoff from [0, CW] (post-backoff), so a station
//!   whose backoff has run out while it had nothing to send transmits at the first slot
//!   boundary after AIFS when a packet comes; one that gets a packet while the medium is busy
//!   draws a backoff.
//! * **Aggregation (802.11-2016 9.7, 10.24).** The winner sends one A-MPDU built at that moment
//!   from its driver queue: retransmissions first, then fresh packets, up to
//!   `max_ampdu_frames` MPDUs, `max_ampdu_bytes` bytes of subframes and `max_ampdu_ns` of PPDU,
//!   never beyond the 64-MPDU block-ack window from the oldest unacknowledged MPDU. So the
//!   aggregate (and the efficiency) depends on how much is queued when the station gets the
//!   medium. Each subframe carries a 4-byte delimiter, a 26-byte QoS MAC header, 8 bytes of
//!   LLC/SNAP, the IP packet, a 4-byte FCS and padding to 4 bytes.
//! * **One exchange** = HT-mixed preamble + data symbols (802.11-2016 eq. 19-89/19-90) +
//!   SIFS + a compressed BlockAck (32 bytes) at `control_rate_bps` (or an ACK, 14 bytes,
//!   without aggregation). The receiver takes the MPDUs at the end of the PPDU.
//! * **Errors and retries.** Each MPDU fails independently with probability
//!   1 − (1 − `mpdu_error`)(1 − SNR error of its MCS and length) ([`phy::snr_error`]). The
//!   block-ack tells the sender which MPDUs failed; they go into later aggregates. After
//!   `retry_limit + 1` failed transmissions the MPDU is dropped ([`DropReason::RetryLimit`])
//!   and the receiver moves past it. An exchange in which nothing got through counts as a
//!   failure for the contention window (no block-ack comes back), any success resets it.
//! * **In-order release.** The receiver holds MPDUs behind a missing one until it arrives or
//!   the sender drops it (block-ack reordering, 802.11-2016 10.24.7.6), then releases them
//!   all at once: this is the delay variation TCP sees instead of loss.
//! * **Rates.** HT MCS 0–31 at 20/40 MHz, long or short guard interval (802.11-2016 Tables
//!   19-27..19-30); fixed, stepped by `mcs_trace`, or chosen by a Minstrel-like adaptation
//!   ([`rate`]).
//!
//! # Parameters (`[wifi]`), defaults and sources
//!
//! | key | default | meaning | source of the default |
//! |---|---|---|---|
//! | `mcs` | 15 | HT MCS 0–31 (streams = mcs / 8 + 1) | 2×2 802.11n, top rate (130 Mbit/s at 20 MHz, 802.11-2016 Table 19-27) |
//! | `width_mhz` | 20 | 20 or 40 MHz | the common 802.11n channel |
//! | `short_gi` | false | 400 ns guard interval (3.6 µs symbols) | 802.11-2016 19.3.2 (800 ns is mandatory) |
//! | `rate_control` | "fixed" | "fixed" or "minstrel" | — |
//! | `mcs_trace` | none | `[[time_ns, mcs], …]` steps (only with "fixed") | — |
//! | `mpdu_error` | 0.0 | per-MPDU error probability, any MCS | — (the seed's path almost never lost packets) |
//! | `snr_db` | none | SNR at the receiver; per-MCS errors from it | sensitivities of 802.11-2016 Table 19-23 ([`phy::snr_threshold_db`]) |
//! | `retry_limit` | 30 | retransmissions of an MPDU before it is dropped | ath9k ATH_MAX_SW_RETRIES (ath9k.h) |
//! | `aifsn` | 3 | AIFSN | AC_BE, 802.11-2016 Table 9-137 |
//! | `cw_min` | 15 | CWmin, slots | AC_BE = aCWmin of the OFDM/HT PHY |
//! | `cw_max` | 1023 | CWmax, slots | AC_BE = aCWmax of the OFDM/HT PHY |
//! | `slot_ns` | 9000 | aSlotTime | 802.11-2016 Table 19-25 |
//! | `sifs_ns` | 16000 | aSIFSTime | 802.11-2016 Table 19-25 (5 GHz) |
//! | `max_ampdu_frames` | 64 | MPDUs per A-MPDU, 1–64 | the HT block-ack window (10.24.7; ath9k BAW_WITHIN) |
//! | `max_ampdu_bytes` | 65535 | A-MPDU length | HT maximum A-MPDU length exponent 3 (9.4.2.56.3) |
//! | `max_ampdu_ns` | 4000000 | PPDU duration of an A-MPDU | ath9k's 4 ms aggregate limit (ath_max_4ms_framelen, xmit.c) |
//! | `aggregation` | true | A-MPDU + block-ack, or one MPDU + ACK per access | — |
//! | `driver_queue_fwd` | 123 | MPDUs below the qdisc, sender-side station | ath9k ATH_MAX_QDEPTH = 512/4 − 5 (ath9k.h) |
//! | `driver_queue_rev` | 123 | the same, receiver-side station | as above |
//! | `control_rate_bps` | 24000000 | legacy rate of BlockAck/ACK (6, 12 or 24 Mbit/s) | highest mandatory OFDM rate ≤ the data rate (10.7.6.5.2) |
//!
//! Fixed constants: HT-mixed preamble 32 µs + 4 µs per HT-LTF (Table 19-13); BlockAck 32
//! bytes, ACK 14 bytes (9.3.1); MPDU delimiter 4 bytes; QoS MAC header 26 + LLC/SNAP 8 + FCS 4
//! bytes; Minstrel: 50 ms statistics interval (minstrel_ht update_interval = HZ/20), EWMA 75 %
//! old (EWMA_LEVEL), a sample every 10th transmission.
//!
//! # What a real chipset does that this model does not
//!
//! * **Hardware queue pipelining.** ath9k keeps up to two aggregates queued in hardware
//!   (ATH_AGGR_MIN_QDEPTH) and builds the next one while the current is on the air; the model
//!   builds the aggregate at the moment the station wins the medium.
//! * **Multi-rate retry chains and Minstrel's details.** Minstrel-HT retries a failed
//!   transmission at up to four rates, weighs throughput by the A-MPDU airtime and samples
//!   from a table; the model retries at the current rate and keeps one rate per station.
//! * **RTS/CTS, TXOP bursting, other access categories.** AC_BE with a TXOP limit of 0 (one
//!   PPDU per access), no RTS/CTS, no VO/VI/BK traffic, no management frames or beacons.
//! * **Capture, hidden nodes, other networks.** A collision loses both frames; no third
//!   station, no interference, no channel-busy time from neighbours.
//! * **Errors.** Independent per MPDU; no fading, no bursts, no preamble/header loss (a PPDU's
//!   header always gets through), no lost block-acks, no block-ack request airtime after a drop
//!   (the receiver moves its window at once), no reordering timeout (mac80211's 100 ms).
//! * **Collisions** cost the longer PPDU + SIFS + a BlockAck time (ACKTimeout) rather than EIFS
//!   at the other stations; propagation and CCA delays are zero inside a slot.
//! * **Power saving, MU-MIMO, 802.11ac/ax rates, A-MSDU, STBC/LDPC, beamforming, DFS.**
//! * **Driver internals.** No TSQ/BQL interaction, no mac80211 intermediate queues (fq_codel
//!   per station, airtime fairness) unless a qdisc in front models them; the driver queue
//!   limit counts MPDUs, not bytes.
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
