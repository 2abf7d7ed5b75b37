//! BBRv3 congestion signals and the model's bounds (google/bbr v3 tcp_bbr.c): the latest
//! delivery rate / volume, loss and ECN per round, the short-term lower bounds bw_lo /
//! inflight_lo (`bbr_adapt_lower_bounds`), the long-term upper bound inflight_hi
//! (`bbr_adapt_upper_bounds`, `bbr_is_inflight_too_high`, `bbr_inflight_hi_from_lost_skb`),
//! ECN alpha (`bbr_update_ecn_alpha`), and the STARTUP exits on loss or ECN.
use super::*;

impl Bbr3 {
    /// `bbr_update_latest_delivery_signals`: max rate and volume delivered this loss round.
    pub(super) fn update_latest_delivery_signals(&mut self, sk: &CcSock, rs: &RateSample, ctx: &Ctx) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(ctx.sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = sk.delivered;
            self.loss_round_start = true;
        }
    }

    /// `bbr_advance_latest_delivery_signals`: once per loss round, restart from this sample.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, ctx: &Ctx) {
        if self.loss_round_start {
            self.bw_latest = ctx.sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }

    /// `bbr_reset_congestion_signals`.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// `bbr_update_congestion_signals`: feed the max-bw filter; once per loss round adapt
    /// the lower bounds to the loss / ECN seen in it.
    pub(super) fn update_congestion_signals(&mut self, sk: &CcSock, rs: &RateSample, ctx: &Ctx) {
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        let bw = ctx.sample_bw;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(sk);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// `bbr_is_probing_bandwidth`: STARTUP, REFILL and UP push inflight up.
    pub(super) fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Refill | Phase::Up))
    }

    /// `bbr_ecn_cut`: 1 - alpha x ecn_factor.
    fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> BBR_SCALE)
    }

    /// `bbr_init_lower_bounds`.
    fn init_lower_bounds(&mut self, sk: &CcSock, init_bw: bool) {
        if init_bw && self.bw_lo == UNSET {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == UNSET {
            self.inflight_lo = sk.cwnd;
        }
    }

    /// `bbr_adapt_lower_bounds`: outside probing, cut bw_lo / inflight_lo by beta on loss
    /// (not below what the latest round delivered) and inflight_lo by the ECN cut.
    pub(super) fn adapt_lower_bounds(&mut self, sk: &CcSock) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNSET;
        if self.ecn_in_round {
            self.init_lower_bounds(sk, false);
            ecn_inflight_lo = ((self.inflight_lo as u64 * self.ecn_cut() as u64) >> BBR_SCALE) as u32;
        }
        if self.loss_in_round {
            self.init_lower_bounds(sk, true);
            let loss_cut = (BBR_UNIT - BETA) as u64;
            self.bw_lo = self.bw_latest.max(((self.bw_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
            self.inflight_lo = self.inflight_latest.max(((self.inflight_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// `bbr_reset_lower_bounds`.
    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET;
        self.inflight_lo = UNSET;
    }

    /// `bbr_update_ecn_alpha` (once per round): EWMA of the CE fraction delivered since the
    /// last update, gain 1/16. Returns the round's CE ratio (<< 8), or None.
    pub(super) fn update_ecn_alpha(&mut self, sk: &CcSock) -> Option<u32> {
        if !self.ecn_eligible && sk.ecn_ok && self.min_rtt_us <= ECN_MAX_RTT_US {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return None;
        }
        let delivered = sk.delivered - self.alpha_last_delivered;
        let delivered_ce = sk.delivered_ce - self.alpha_last_delivered_ce;
        if delivered == 0 {
            return None;
        }
        let ce_ratio = ((delivered_ce << BBR_SCALE) / delivered) as u32;
        let alpha =
            (((BBR_UNIT - ECN_ALPHA_GAIN) * self.ecn_alpha) >> BBR_SCALE) + ((ECN_ALPHA_GAIN * ce_ratio) >> BBR_SCALE);
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = sk.delivered;
        self.alpha_last_delivered_ce = sk.delivered_ce;
        self.check_ecn_too_high_in_startup(sk, ce_ratio);
        Some(ce_ratio)
    }

    /// `bbr_handle_queue_too_high_in_startup`: the pipe counts as full; inflight_hi starts at
    /// the larger of the BDP and what the latest round delivered.
    fn handle_queue_too_high_in_startup(&mut self, sk: &CcSock) {
        self.full_bw_reached = true;
        let bdp = self.inflight(sk, self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// `bbr_check_ecn_too_high_in_startup`: leave STARTUP after 2 rounds with CE ratio >= 0.5.
    fn check_ecn_too_high_in_startup(&mut self, sk: &CcSock, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible {
            return;
        }
        if ce_ratio >= ECN_THRESH {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(sk);
        }
    }

    /// `bbr_check_loss_too_high_in_startup`: at the end of a recovery round with at least 6
    /// loss events and a loss rate above 2 %, the pipe counts as full.
    pub(super) fn check_loss_too_high_in_startup(&mut self, sk: &CcSock, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && sk.ca_state == CaState::Recovery
            && self.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(sk);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `bbr_is_inflight_too_high`: lost / tx_in_flight above 2 %, or (ECN-eligible)
    /// delivered_ce / delivered above 0.5.
    pub(super) fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let loss_thresh = (rs.tx_in_flight as u64 * LOSS_THRESH as u64) >> BBR_SCALE;
            if rs.lost as u64 > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible {
            let ecn_thresh = (rs.delivered as u64 * ECN_THRESH as u64) >> BBR_SCALE;
            if rs.delivered_ce as u64 > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// `bbr_inflight_hi_from_lost_skb`: the in-flight level at which the loss rate crossed
    /// 2 %, solving (lost_prev + p) / (inflight_prev + p) = thresh for the prefix p of this
    /// one-segment skb, rounded up.
    pub(super) fn inflight_hi_from_lost_skb(rs: &RateSample) -> u32 {
        let pcount = 1u32;
        let Some(inflight_prev) = rs.tx_in_flight.checked_sub(pcount) else {
            return UNSET;
        };
        let Some(lost_prev) = rs.lost.checked_sub(pcount) else {
            return UNSET;
        };
        let loss_budget = (inflight_prev as u64 * LOSS_THRESH as u64 + BBR_UNIT as u64 - 1) >> BBR_SCALE;
        let lost_prefix = if lost_prev as u64 >= loss_budget {
            0
        } else {
            ((loss_budget - lost_prev as u64) << BBR_SCALE) / (BBR_UNIT - LOSS_THRESH) as u64
        };
        (inflight_prev as u64 + lost_prefix).min(UNSET as u64) as u32
    }

    /// `bbr_target_inflight`: the BDP, unless congestion cut cwnd below it.
    pub(super) fn target_inflight(&self, sk: &CcSock) -> u32 {
        self.inflight(sk, self.bw(), BBR_UNIT).min(sk.cwnd)
    }

    /// `bbr_handle_inflight_too_high`: once per probe, cut inflight_hi to the in-flight level
    /// that was too high (at least (1 - beta) x target), and stop probing.
    pub(super) fn handle_inflight_too_high(&mut self, sk: &CcSock, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.is_app_limited {
            let floor = (self.target_inflight(sk) as u64 * (BBR_UNIT - BETA) as u64) >> BBR_SCALE;
            self.inflight_hi = rs.tx_in_flight.max(floor as u32);
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.start_bw_probe_down(sk);
        }
    }

    /// `bbr_raise_inflight_hi_slope`: each UP round doubles the inflight_hi growth.
    pub(super) fn raise_inflight_hi_slope(&mut self, sk: &CcSock) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (sk.cwnd / growth_this_round).max(1);
    }

    /// `bbr_probe_inflight_hi_upward`: while cwnd-limited at inflight_hi, add 1 to it per
    /// bw_probe_up_cnt packets acked.
    fn probe_inflight_hi_upward(&mut self, sk: &CcSock, rs: &RateSample) {
        if !sk.is_cwnd_limited || sk.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(sk);
        }
    }

    /// `bbr_advance_max_bw_filter`: forget the older probe cycle's max.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// `bbr_adapt_upper_bounds`: track the ACK phase of a probe; on too much loss / ECN from
    /// probing cut inflight_hi, otherwise raise it. Returns true if it changed the phase.
    pub(super) fn adapt_upper_bounds(&mut self, sk: &mut CcSock, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            // The last probe reached inflight_hi without excess loss: probe again at once.
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(sk, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(sk, rs);
            }
        } else {
            if self.inflight_hi == UNSET {
                return false;
            }
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
                self.probe_inflight_hi_upward(sk, rs);
            }
        }
        false
    }
}
