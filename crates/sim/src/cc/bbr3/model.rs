//! BBRv3 control outputs from the model: pacing rate, BDP, cwnd and its bounds, ACK aggregation,
//! and the min-RTT filters that schedule PROBE_RTT (google/bbr v3 tcp_bbr.c: `bbr_set_pacing_rate`,
//! `bbr_bdp`, `bbr_quantization_budget`, `bbr_set_cwnd`, `bbr_bound_cwnd_for_inflight_model`,
//! `bbr_update_ack_aggregation`, `bbr_update_min_rtt`, `bbr_update_gains`).
use super::*;

impl Bbr3 {
    /// `bbr_rate_bytes_per_sec`: `rate` (pkts/µs << 24) times `gain`, less `margin` %, in
    /// bytes/s, at least 1.
    pub(super) fn rate_bytes_per_sec(sk: &CcSock, rate: u64, gain: u32, margin: u64) -> u64 {
        let mut r = rate as u128 * sk.mss as u128;
        r = (r * gain as u128) >> BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - margin)) as u128;
        ((r >> BW_SCALE) as u64).max(1)
    }

    /// `bbr_bw_to_pacing_rate`.
    fn bw_to_pacing_rate(sk: &CcSock, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(sk, bw as u64, gain, PACING_MARGIN_PERCENT).min(sk.max_pacing_rate)
    }

    /// `bbr_init_pacing_rate_from_rtt`: STARTUP gain x cwnd / srtt (1 ms before a sample).
    pub(super) fn init_pacing_rate_from_rtt(&mut self, sk: &mut CcSock) {
        let rtt_us = if sk.srtt_us > 0 {
            self.has_seen_rtt = true;
            sk.srtt_us.max(1)
        } else {
            1_000
        };
        let bw = (sk.cwnd as u64 * BW_UNIT / rtt_us).min(u32::MAX as u64) as u32;
        sk.pacing_rate = Self::bw_to_pacing_rate(sk, bw, STARTUP_PACING_GAIN);
    }

    /// `bbr_set_pacing_rate`: never slow down before the pipe is full.
    pub(super) fn set_pacing_rate(&mut self, sk: &mut CcSock, bw: u32, gain: u32) {
        let rate = Self::bw_to_pacing_rate(sk, bw, gain);
        if !self.has_seen_rtt && sk.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(sk);
        }
        if self.full_bw_reached || rate > sk.pacing_rate {
            sk.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_generic` for the legacy GSO size: bytes per ms at the pacing rate plus a
    /// min-RTT allowance of 64 KB halved per 512 µs of min RTT.
    pub(super) fn tso_segs_goal(&self, sk: &CcSock) -> u32 {
        let mut bytes = sk.pacing_rate >> PACING_SHIFT;
        let r = self.min_rtt_us >> TSO_RTT_SHIFT;
        if r < 32 {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
        let bytes = bytes.min(TSO_MAX_BYTES);
        (bytes / sk.mss.max(1) as u64).max(MIN_TSO_SEGS) as u32
    }

    /// `bbr_save_cwnd`: the last good cwnd, before recovery or PROBE_RTT cut it.
    pub(super) fn save_cwnd(&mut self, sk: &CcSock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = sk.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(sk.cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain) packets; the initial cwnd without an RTT sample.
    pub fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return self.init_cwnd;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        (((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128)).min(u32::MAX as u128) as u32
    }

    /// `bbr_quantization_budget`: at least 3 TSO bursts and the minimum cwnd; 2 more in UP so
    /// that probing exceeds the BDP even when it is small.
    pub(super) fn quantization_budget(&self, sk: &CcSock, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(sk)).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub(super) fn inflight(&self, sk: &CcSock, bw: u32, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(sk, bdp)
    }

    /// `bbr_packets_in_net_at_edt`: in flight less what the path delivers before the pacer's
    /// next departure time.
    pub(super) fn packets_in_net_at_edt(&self, sk: &CcSock, inflight_now: u32) -> u32 {
        let edt = sk.wstamp_ns.max(sk.now_ns);
        let interval_us = (edt - sk.now_ns) / 1_000;
        let interval_delivered = (self.bw() as u64 * interval_us) >> BW_SCALE;
        let mut inflight_at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(sk) as u64;
        }
        inflight_at_edt.saturating_sub(interval_delivered) as u32
    }

    fn extra_acked_max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        let max_aggr = self.bw() as u64 * EXTRA_ACKED_MAX_US / BW_UNIT;
        let aggr = (EXTRA_ACKED_GAIN as u64 * self.extra_acked_max() as u64) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// `bbr_probe_rtt_cwnd`: half the estimated BDP, at least the minimum cwnd.
    pub fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    /// `bbr_set_cwnd`: grow toward the target (gain x BDP + aggregation allowance); cut to it
    /// only once the pipe was full; cap at the PROBE_RTT cwnd in PROBE_RTT.
    pub(super) fn set_cwnd(&mut self, sk: &mut CcSock, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = sk.cwnd;
        if acked != 0 {
            let mut target = self.bdp(bw, gain);
            target += self.ack_aggregation_cwnd();
            target = self.quantization_budget(sk, target);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        sk.cwnd = cwnd.min(sk.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            sk.cwnd = sk.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// `bbr_inflight_with_headroom`: inflight_hi less 15 % (at least 1), at least the minimum.
    pub(super) fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = ((self.inflight_hi as u64 * INFLIGHT_HEADROOM as u64) >> BBR_SCALE).max(1) as u32;
        self.inflight_hi.saturating_sub(headroom).max(CWND_MIN_TARGET)
    }

    /// `bbr_bound_cwnd_for_inflight_model`: inflight_hi while probing, inflight_hi less
    /// headroom in CRUISE and PROBE_RTT, and always inflight_lo.
    pub(super) fn bound_cwnd_for_inflight_model(&self, sk: &mut CcSock) {
        let mut cap = UNSET;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt || (self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Cruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        sk.cwnd = sk.cwnd.min(cap);
    }

    /// `bbr_update_ack_aggregation`: max excess of ACKed data over bw x epoch, in a filter
    /// of 5-10 rounds (1-2 before the pipe is full).
    pub(super) fn update_ack_aggregation(&mut self, sk: &CcSock, rs: &RateSample) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            let thresh = if self.full_bw_reached { EXTRA_ACKED_WIN_RTTS } else { 1 };
            if self.extra_acked_win_rtts >= thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let delivered_us = sk.delivered_mstamp_ns / 1_000;
        let epoch_us = delivered_us.saturating_sub(self.ack_epoch_mstamp);
        let mut expected_acked = self.bw() as u64 * epoch_us / BW_UNIT;
        if self.ack_epoch_acked as u64 <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = delivered_us;
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked as u64).saturating_sub(expected_acked).min(sk.cwnd as u64) as u32;
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_check_probe_rtt_done`: after 200 ms and a round at the PROBE_RTT cwnd, schedule
    /// the next PROBE_RTT, restore cwnd and leave.
    pub(super) fn check_probe_rtt_done(&mut self, sk: &mut CcSock) {
        if !(self.probe_rtt_done_stamp != 0 && jiffies(sk) > self.probe_rtt_done_stamp) {
            return;
        }
        self.probe_rtt_min_stamp = jiffies(sk);
        sk.cwnd = sk.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(sk);
    }

    /// `bbr_update_min_rtt`: a 5 s min-RTT filter times PROBE_RTT; the 10 s one is min_rtt.
    pub(super) fn update_min_rtt(&mut self, sk: &mut CcSock, rs: &RateSample) {
        let now = jiffies(sk);
        let probe_rtt_expired = now > self.probe_rtt_min_stamp + msecs_to_jiffies(PROBE_RTT_WIN_MS);
        if rs.rtt_us >= 0
            && ((rs.rtt_us as u64) < self.probe_rtt_min_us as u64 || (probe_rtt_expired && !rs.is_ack_delayed))
        {
            self.probe_rtt_min_us = rs.rtt_us.min(u32::MAX as i64) as u32;
            self.probe_rtt_min_stamp = now;
        }
        let min_rtt_expired = now > self.min_rtt_stamp + MIN_RTT_WIN_SEC * crate::time::HZ;
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_entries += 1;
            self.save_cwnd(sk);
            self.probe_rtt_done_stamp = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = sk.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples at the reduced cwnd say nothing about the path's bandwidth.
            let mark = sk.delivered + sk.in_flight as u64;
            sk.app_limited = if mark == 0 { 1 } else { mark };
            if self.probe_rtt_done_stamp == 0 && sk.in_flight <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp = now + msecs_to_jiffies(PROBE_RTT_MODE_MS);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = sk.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(sk);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    pub(super) fn update_gains(&mut self) {
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = STARTUP_PACING_GAIN;
                self.cwnd_gain = STARTUP_CWND_GAIN;
            }
            Mode::Drain => {
                self.pacing_gain = DRAIN_GAIN;
                self.cwnd_gain = STARTUP_CWND_GAIN;
            }
            Mode::ProbeBw => {
                self.pacing_gain = PACING_GAIN[self.cycle_idx as usize];
                self.cwnd_gain = CWND_GAIN;
                if self.cycle_idx == Phase::Up {
                    self.cwnd_gain += BBR_UNIT * BW_PROBE_CWND_GAIN / 4;
                }
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }
}
