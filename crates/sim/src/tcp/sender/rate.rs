//! Delivery-rate sampling: the counterpart of Linux `net/ipv4/tcp_rate.c`
//! (`tcp_rate_skb_sent` is folded into `on_xmit` in output.rs; `tcp_rate_skb_delivered` and
//! `tcp_rate_gen` are here; `tcp_rate_check_app_limited` is `check_app_limited` in output.rs).
use super::{Sender, F_EVER_RETRANS, NO_STAMP};
use crate::cc::RateSample;
use crate::tcp::MSS;
use crate::time::{Nanos, NS_PER_US};

impl Sender {
    /// `tcp_rate_skb_delivered`: a segment was delivered (SACKed or cumulatively ACKed); the
    /// most recently sent such segment sets the sample's `prior_*` snapshot.
    pub(super) fn rate_skb_delivered(
        &mut self,
        seq: u64,
        rs: &mut RateSample,
        have_prior: &mut bool,
        last_end: &mut u64,
        sacked: bool,
    ) {
        let s = *self.seg(seq);
        if s.tx_delivered_mstamp == NO_STAMP {
            return;
        }
        let after = s.xmit > self.first_tx_mstamp || (s.xmit == self.first_tx_mstamp && seq + 1 > *last_end);
        if !*have_prior || after {
            *have_prior = true;
            rs.prior_delivered = s.tx_delivered;
            rs.prior_mstamp_ns = s.tx_delivered_mstamp;
            rs.is_app_limited = s.tx_app_limited;
            rs.is_retrans = s.flags & F_EVER_RETRANS != 0;
            rs.tx_in_flight = s.tx_in_flight;
            rs.prior_lost = s.tx_lost;
            rs.prior_delivered_ce = s.tx_delivered_ce;
            *last_end = seq + 1;
            self.first_tx_mstamp = s.xmit;
            rs.interval_us = (s.xmit.saturating_sub(s.tx_first_tx) / NS_PER_US) as i64;
        }
        if sacked {
            self.seg_mut(seq).tx_delivered_mstamp = NO_STAMP;
        }
    }

    /// `tcp_rate_gen`: complete the sample once the ACK has been processed.
    pub(super) fn rate_gen(&mut self, now: Nanos, delivered: u32, lost: u32, rs: &mut RateSample, have_prior: bool) {
        if self.sk.app_limited != 0 && self.sk.delivered > self.sk.app_limited {
            self.sk.app_limited = 0;
        }
        if delivered > 0 {
            self.sk.delivered_mstamp_ns = now;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        if !have_prior {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        }
        rs.delivered = (self.sk.delivered - rs.prior_delivered) as i64;
        // v3 additions: losses and CE-marked deliveries since the sampled packet was sent.
        rs.lost = (self.sk.lost - rs.prior_lost) as u32;
        rs.delivered_ce = (self.delivered_ce - rs.prior_delivered_ce) as i64;
        let snd_us = rs.interval_us.max(0);
        let ack_us = (now.saturating_sub(rs.prior_mstamp_ns) / NS_PER_US) as i64;
        rs.interval_us = snd_us.max(ack_us);
        rs.snd_interval_us = snd_us as u64;
        rs.rcv_interval_us = ack_us as u64;
        if rs.interval_us < self.rtt.min_rtt_us as i64 {
            rs.interval_us = -1;
            return;
        }
        // Keep the last non-app-limited sample, or an app-limited one if it is higher.
        let (d, i) = (rs.delivered as u64, rs.interval_us as u64);
        if !rs.is_app_limited || d * self.rate_interval_us >= self.rate_delivered * i {
            self.rate_delivered = d;
            self.rate_interval_us = i;
        }
    }

    /// tcpi_delivery_rate in bit/s (payload), once a valid rate sample exists.
    pub fn delivery_rate_bps(&self) -> Option<f64> {
        (self.rate_interval_us > 0)
            .then(|| self.rate_delivered as f64 * MSS as f64 * 8.0 * 1e6 / self.rate_interval_us as f64)
    }
}

/// The rate sample one ACK builds while it walks the scoreboard. Linux keeps the two
/// bookkeeping fields inside `struct rate_sample` (`prior_delivered != 0` and
/// `last_end_seq`); ours live beside it because `RateSample` is what the algorithms see.
pub(super) struct RateAcc {
    pub(super) rs: RateSample,
    /// A delivered segment has set `rs.prior_*` (`tcp_rate_skb_delivered` ran for one).
    pub(super) have_prior: bool,
    /// End sequence of the segment that set `rs.prior_*`, to order equal transmit times.
    pub(super) last_end: u64,
}

impl RateAcc {
    pub(super) fn new() -> Self {
        RateAcc {
            rs: RateSample { rtt_us: -1, prior_delivered: 0, ..Default::default() },
            have_prior: false,
            last_end: 0,
        }
    }
}
