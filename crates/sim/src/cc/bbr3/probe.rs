//! BBRv3 state machine transitions (google/bbr v3 tcp_bbr.c): the STARTUP bw-plateau check
//! (`bbr_check_full_bw_reached`), DRAIN (`bbr_check_drain`), the PROBE_BW cycle
//! DOWN -> CRUISE -> REFILL -> UP (`bbr_update_cycle_phase` and the `bbr_start_bw_probe_*`
//! helpers), its probe scheduling (`bbr_pick_probe_wait`, `bbr_is_reno_coexistence_probe_time`,
//! `bbr_check_time_to_probe_bw`) and the exit from PROBE_RTT.
use super::*;

impl Bbr3 {
    /// `bbr_reset_full_bw`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// `bbr_check_full_bw_reached`: 3 rounds without a sample 25 % above full_bw.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample, ctx: &Ctx) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if ctx.sample_bw >= bw_thresh {
            self.reset_full_bw();
            self.full_bw = ctx.sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// `bbr_check_drain`: STARTUP -> DRAIN once full; DRAIN -> PROBE_BW (DOWN) once the
    /// in-network estimate is at most one BDP.
    pub(super) fn check_drain(&mut self, sk: &mut CcSock) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            sk.ssthresh = self.inflight(sk, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(sk, sk.in_flight) <= self.inflight(sk, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(sk);
        }
    }

    /// `bbr_pick_probe_wait`: 0-1 rounds already counted, and 2-3 s of wall clock.
    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.below(BW_PROBE_RAND_ROUNDS) as u32;
        self.probe_wait_us = BW_PROBE_BASE_US + self.rng.below(BW_PROBE_RAND_US);
    }

    /// `bbr_is_reno_coexistence_probe_time`: a Reno flow with our BDP would probe after
    /// about BDP rounds; probe no later than that (and no later than 63 rounds).
    fn is_reno_coexistence_probe_time(&self, sk: &CcSock) -> bool {
        let rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight(sk));
        self.rounds_since_probe >= rounds
    }

    /// `bbr_has_elapsed_in_phase`.
    fn has_elapsed_in_phase(&self, sk: &CcSock, interval_us: u64) -> bool {
        now_us(sk) > self.cycle_mstamp + interval_us
    }

    /// `bbr_start_bw_probe_refill`: drop the lower bounds and refill the pipe at 1.0 for a
    /// round before probing.
    pub(super) fn start_bw_probe_refill(&mut self, sk: &CcSock, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = sk.delivered;
        self.cycle_idx = Phase::Refill;
    }

    /// `bbr_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, sk: &CcSock, ctx: &Ctx) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = sk.delivered;
        self.cycle_mstamp = now_us(sk);
        self.reset_full_bw();
        self.full_bw = ctx.sample_bw;
        self.cycle_idx = Phase::Up;
        self.raise_inflight_hi_slope(sk);
    }

    /// `bbr_start_bw_probe_down`: a new cycle; pick when to probe next.
    pub(super) fn start_bw_probe_down(&mut self, sk: &CcSock) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.pick_probe_wait();
        self.cycle_mstamp = now_us(sk);
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = sk.delivered;
        self.cycle_idx = Phase::Down;
    }

    /// `bbr_start_bw_probe_cruise`.
    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.cycle_idx = Phase::Cruise;
    }

    /// `bbr_check_time_to_probe_bw`: reprobe soon after ECN-only congestion clears; else
    /// probe once the wall-clock wait or the Reno-coexistence round count has passed.
    fn check_time_to_probe_bw(&mut self, sk: &CcSock) -> bool {
        if self.ecn_eligible && self.ecn_in_cycle && !self.loss_in_cycle && sk.ca_state == CaState::Open {
            let target = ((self.inflight_hi as u64 * ECN_REPROBE_GAIN as u64) >> BBR_SCALE).max(1);
            self.start_bw_probe_refill(sk, target.ilog2());
            return true;
        }
        if self.has_elapsed_in_phase(sk, self.probe_wait_us) || self.is_reno_coexistence_probe_time(sk) {
            self.start_bw_probe_refill(sk, 0);
            return true;
        }
        false
    }

    /// `bbr_check_time_to_cruise`: in-flight below both inflight_hi less headroom and the BDP.
    fn check_time_to_cruise(&self, sk: &CcSock, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(sk, bw, BBR_UNIT)
    }

    /// `bbr_update_cycle_phase`: the PROBE_BW state machine.
    pub(super) fn update_cycle_phase(&mut self, sk: &mut CcSock, rs: &RateSample, ctx: &Ctx) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(sk, rs) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(sk, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.check_time_to_probe_bw(sk);
            }
            Phase::Refill => {
                // After a round of refilling, the samples reflect it: start probing up.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(sk, ctx);
                }
            }
            Phase::Up => {
                let mut is_bw_probe_done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    // Reached the inflight_hi that was too high last time: stop now.
                    self.stopped_risky_probe = true;
                    is_bw_probe_done = true;
                } else if sk.is_cwnd_limited && sk.cwnd >= self.inflight_hi {
                    // inflight_hi limits growth: no plateau verdict yet.
                    self.reset_full_bw();
                    self.full_bw = ctx.sample_bw;
                } else if self.full_bw_now {
                    is_bw_probe_done = true;
                }
                if is_bw_probe_done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(sk);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(sk) {
                    return;
                }
                if self.check_time_to_cruise(sk, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    /// `bbr_exit_probe_rtt`: back to PROBE_BW (DOWN then straight to CRUISE, with a new
    /// probe wait) or to STARTUP.
    pub(super) fn exit_probe_rtt(&mut self, sk: &CcSock) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(sk);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }
}
