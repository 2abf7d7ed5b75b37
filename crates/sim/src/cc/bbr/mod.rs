//! BBR v1, following Linux 6.6 net/ipv4/tcp_bbr.c (the version with the ACK-aggregation
//! `extra_acked` allowance, added in 5.1, and EDT-aware in-flight estimates, added in 4.20;
//! the v1 logic has been stable since). Reimplemented from the kernel's behaviour, in the
//! kernel's fixed-point units so that rounding matches:
//!
//! * bandwidth in packets per µs scaled by 2^24 (`BW_UNIT`),
//! * gains scaled by 256 (`BBR_UNIT`): 2/ln2 = 739, drain = 88, 5/4 = 320, 3/4 = 192,
//! * `min_rtt_stamp` / `probe_rtt_done_stamp` in jiffies of 4 ms (HZ = 250, as the referee
//!   kernel's CONFIG_HZ; see crate::time::HZ),
//! * cycle and ACK-epoch stamps in µs, taken from `delivered_mstamp` as the kernel does.
//!
//! How it maps onto the simulator:
//! * `cong_control` = `bbr_main`, called by the sender once per ACK with the rate sample.
//! * In PROBE_RTT BBR marks the socket app-limited (`tp->app_limited`) so that the low-rate
//!   samples of that mode are ignored; it does so by writing `sk.app_limited`, which the
//!   sender must copy back after the hook.
//! * The EDT correction (`bbr_packets_in_net_at_edt`) reads `sk.wstamp_ns`, the pacer's
//!   earliest departure time for the next packet (Linux `tp->tcp_wstamp_ns`); 0 means "now",
//!   i.e. no correction.
//! * The quantisation budget adds 3 × the TSO autosize goal to cwnd, computed from the pacing
//!   rate exactly as Linux does (pacing_rate >> 10 bytes, at most 64 KB minus headers, at least
//!   2 segments — 1 below 1.2 Mbit/s — at most 127). The simulator sends individual segments,
//!   but the cwnd BBR computes (and so the in-flight it allows) is the kernel's.
use super::minmax::Minmax;
use super::{CaEvent, CaState, CcSock, CongestionControl, RateSample};
use crate::rng::Rng;
use crate::time::msecs_to_jiffies;

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Linux TCP_INIT_CWND.
const TCP_INIT_CWND: u32 = 10;
/// Phases in the PROBE_BW gain cycle.
const CYCLE_LEN: u32 = 8;
/// Window of the max-bandwidth filter, in rounds.
const BW_RTTS: u32 = CYCLE_LEN + 2;
/// Window of the min-RTT filter, seconds.
const MIN_RTT_WIN_SEC: u64 = 10;
/// Time at the minimum cwnd in PROBE_RTT, ms.
const PROBE_RTT_MODE_MS: u64 = 200;
/// Below this rate (bit/s) only one segment per TSO burst is budgeted.
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// Pace 1 % below the estimated bandwidth.
const PACING_MARGIN_PERCENT: u64 = 1;
/// 2/ln 2, the smallest gain that doubles the sending rate every round.
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// 1/HIGH_GAIN: drains the STARTUP queue in about one round.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// cwnd gain in PROBE_BW (tolerates delayed and stretched ACKs).
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW pacing gains: probe, drain, then cruise for six phases.
pub const PACING_GAIN: [u32; 8] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// The random starting phase is drawn among this many phases.
const CYCLE_RAND: u64 = 7;
/// Minimum cwnd BBR aims for (and the PROBE_RTT cwnd).
pub const CWND_MIN_TARGET: u32 = 4;
/// STARTUP ends once the max bw grew by less than 25 % ...
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// ... in three consecutive non-app-limited rounds.
const FULL_BW_CNT: u32 = 3;
/// Long-term sampling: an interval lasts at least this many rounds,
const LT_INTVL_MIN_RTTS: u32 = 4;
/// and counts as lossy above 50/256 (~20 %) lost/delivered;
const LT_LOSS_THRESH: u64 = 50;
/// two intervals are consistent if their bw differs by <= 1/8 ...
const LT_BW_RATIO: u64 = (BBR_UNIT / 8) as u64;
/// ... or by <= 4 kbit/s (in bytes/s);
const LT_BW_DIFF: u64 = 4000 / 8;
/// the policed rate is used for this many rounds.
const LT_BW_MAX_RTTS: u32 = 48;
/// Gain on the ACK-aggregation allowance.
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// Window of the extra_acked max filter, rounds (two halves of this length).
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// ACK epoch restarts once this many packets were counted in it.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// The aggregation allowance is at most this much time at the estimated bw.
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// Linux default sk_pacing_shift: TSO bursts of about 1 ms at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER (x86-64: 65536 - 1 - 320).
const TSO_MAX_BYTES: u64 = 65536 - 1 - 320;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::Startup => "STARTUP",
            Mode::Drain => "DRAIN",
            Mode::ProbeBw => "PROBE_BW",
            Mode::ProbeRtt => "PROBE_RTT",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Bbr {
    rng: Rng,
    pub mode: Mode,
    /// Min RTT in the 10 s window, µs (u32::MAX = none yet).
    pub min_rtt_us: u32,
    /// When min_rtt_us was last set / refreshed, ms.
    min_rtt_stamp: u64,
    /// When PROBE_RTT may end, ms (0 = not yet at the low in-flight).
    probe_rtt_done_stamp: u64,
    /// Max filter of delivery rate, pkts/µs << 24, timed in rounds.
    bw: Minmax,
    /// Packet-timed rounds so far.
    pub rtt_cnt: u32,
    /// `delivered` at which the current round ends.
    next_rtt_delivered: u64,
    /// Start of the current gain-cycle phase (µs of delivered_mstamp).
    cycle_mstamp: u64,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    /// ms
    lt_last_stamp: u64,
    lt_last_lost: u64,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    pub cycle_idx: u32,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u64,
    /// µs
    ack_epoch_mstamp: u64,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Segment size, for reporting the estimate in bit/s.
    mss: u32,
}

#[inline]
fn us(ns: u64) -> u64 {
    ns / 1_000
}

/// Linux tcp_jiffies32 at the modelled HZ (crate::time::HZ = 250, as the referee kernel).
/// The socket's clock in jiffies (`tcp_jiffies32`).
#[inline]
fn jiffies(sk: &CcSock) -> u64 {
    crate::time::jiffies(sk.now_ns)
}

impl Bbr {
    /// `rng` supplies the random starting phase of the PROBE_BW gain cycle.
    pub fn new(rng: Rng) -> Self {
        Bbr {
            rng,
            mode: Mode::Startup,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: Minmax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0, 0],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            mss: crate::tcp::MSS,
        }
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// Windowed max delivery rate, pkts/µs << 24.
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The bandwidth the model uses: the policed long-term rate when in that mode.
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    pub fn lt_use_bw(&self) -> bool {
        self.lt_use_bw
    }

    pub fn lt_bw(&self) -> u64 {
        self.lt_bw
    }

    pub fn prior_cwnd(&self) -> u32 {
        self.prior_cwnd
    }

    fn extra_acked_max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Rate in bytes/s for `rate` (pkts/µs << 24) with `gain`, 1 % pacing margin included.
    fn rate_bytes_per_sec(sk: &CcSock, rate: u64, gain: u32) -> u64 {
        let mut r = rate as u128;
        r *= sk.mss as u128;
        r *= gain as u128;
        r >>= BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE) as u64
    }

    fn bw_to_pacing_rate(sk: &CcSock, bw: u64, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(sk, bw, gain).min(sk.max_pacing_rate)
    }

    /// Initial pacing: high_gain × cwnd / srtt (1 ms when there is no RTT sample yet).
    fn init_pacing_rate_from_rtt(&mut self, sk: &mut CcSock) {
        let rtt_us = if sk.srtt_us > 0 {
            self.has_seen_rtt = true;
            sk.srtt_us.max(1)
        } else {
            1_000
        };
        let bw = sk.cwnd as u64 * BW_UNIT / rtt_us;
        sk.pacing_rate = Self::bw_to_pacing_rate(sk, bw, HIGH_GAIN);
    }

    fn set_pacing_rate(&mut self, sk: &mut CcSock, bw: u64, gain: u32) {
        let rate = Self::bw_to_pacing_rate(sk, bw, gain);
        if !self.has_seen_rtt && sk.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(sk);
        }
        // Before the pipe is full, never slow down (a low early sample must not stall startup).
        if self.full_bw_reached || rate > sk.pacing_rate {
            sk.pacing_rate = rate;
        }
    }

    fn min_tso_segs(sk: &CcSock) -> u64 {
        if sk.pacing_rate < (MIN_TSO_RATE_BPS >> 3) {
            1
        } else {
            2
        }
    }

    /// Segments per TSO burst Linux would build at this pacing rate.
    pub fn tso_segs_goal(sk: &CcSock) -> u32 {
        let bytes = (sk.pacing_rate >> PACING_SHIFT).min(TSO_MAX_BYTES);
        let segs = (bytes / sk.mss.max(1) as u64).max(Self::min_tso_segs(sk));
        segs.min(0x7f) as u32
    }

    /// Remember the last good cwnd (before recovery or PROBE_RTT cut it).
    fn save_cwnd(&mut self, sk: &CcSock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = sk.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(sk.cwnd);
        }
    }

    /// ceil(bw × min_rtt × gain) in packets; the initial cwnd while there is no RTT sample.
    pub fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128) as u32
    }

    /// Add room for TSO bursts at both ends, round up to even, and make sure the 5/4 phase
    /// can actually exceed the BDP.
    fn quantization_budget(&self, sk: &CcSock, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * Self::tso_segs_goal(sk);
        cwnd = (cwnd + 1) & !1u32;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    fn inflight(&self, sk: &CcSock, bw: u64, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(sk, bdp)
    }

    /// Packets likely still in the network when the next paced packet leaves.
    fn packets_in_net_at_edt(&self, sk: &CcSock, inflight_now: u32) -> u32 {
        let now = sk.now_ns;
        let edt = sk.wstamp_ns.max(now);
        let interval_us = (edt - now) / 1_000;
        let interval_delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut inflight_at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += Self::tso_segs_goal(sk) as u64;
        }
        if interval_delivered >= inflight_at_edt {
            0
        } else {
            (inflight_at_edt - interval_delivered) as u32
        }
    }

    /// Extra cwnd to keep sending through ACK aggregation (only once the pipe is full).
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128) as u64;
        let aggr = (EXTRA_ACKED_GAIN as u64 * self.extra_acked_max() as u64) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// Recovery handling: returns Some(cwnd) while packet conservation applies, else the cwnd
    /// to continue from (None = use `cwnd_out`).
    fn set_cwnd_to_recover_or_restore(&mut self, sk: &CcSock, rs: &RateSample, acked: u32, cwnd_out: &mut u32) -> bool {
        let prev_state = self.prev_ca_state;
        let state = sk.ca_state;
        let mut cwnd = sk.cwnd;
        // Newly lost packets come off cwnd first (then slow start toward the target).
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // First round of recovery: packet conservation, and a round starts now.
            self.packet_conservation = true;
            self.next_rtt_delivered = sk.delivered;
            cwnd = sk.in_flight + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Recovery over: back to the cwnd saved when it began.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            *cwnd_out = cwnd.max(sk.in_flight + acked);
            return true;
        }
        *cwnd_out = cwnd;
        false
    }

    fn set_cwnd(&mut self, sk: &mut CcSock, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = sk.cwnd;
        if acked != 0 {
            let mut c = cwnd;
            if !self.set_cwnd_to_recover_or_restore(sk, rs, acked, &mut c) {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(sk, target);
                if self.full_bw_reached {
                    c = (c + acked).min(target);
                } else if c < target || sk.delivered < TCP_INIT_CWND as u64 {
                    c += acked;
                }
                c = c.max(CWND_MIN_TARGET);
            }
            cwnd = c;
        }
        sk.cwnd = cwnd.min(sk.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            sk.cwnd = sk.cwnd.min(CWND_MIN_TARGET);
        }
    }

    fn is_next_cycle_phase(&self, sk: &CcSock, rs: &RateSample) -> bool {
        let elapsed = us(sk.delivered_mstamp_ns).saturating_sub(self.cycle_mstamp);
        let is_full_length = elapsed > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(sk, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            // Probing: stay until in-flight reached gain × BDP, unless packets are being lost.
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(sk, bw, self.pacing_gain));
        }
        // Draining: leave as soon as the queue is estimated gone.
        is_full_length || inflight <= self.inflight(sk, bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self, sk: &CcSock) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = us(sk.delivered_mstamp_ns);
    }

    fn update_cycle_phase(&mut self, sk: &CcSock, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(sk, rs) {
            self.advance_cycle_phase(sk);
        }
    }

    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// Enter PROBE_BW at a random phase, never the 3/4 (drain) phase.
    fn reset_probe_bw_mode(&mut self, sk: &CcSock) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as u32;
        self.advance_cycle_phase(sk);
    }

    fn reset_mode(&mut self, sk: &CcSock) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(sk);
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self, sk: &CcSock) {
        self.lt_last_stamp = us(sk.delivered_mstamp_ns) / 1_000;
        self.lt_last_delivered = sk.delivered;
        self.lt_last_lost = sk.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, sk: &CcSock) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(sk);
    }

    /// A long-term interval ended with rate `bw`: two consistent lossy intervals = policer.
    fn lt_bw_interval_done(&mut self, sk: &CcSock, bw: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw
                || Self::rate_bytes_per_sec(sk, diff, BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(sk);
    }

    fn lt_bw_sampling(&mut self, sk: &CcSock, rs: &RateSample) {
        if self.lt_use_bw {
            // Using the policed rate: give it up after 48 rounds of PROBE_BW.
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(sk);
                    self.reset_probe_bw_mode(sk);
                }
            }
            return;
        }
        // Sampling starts at the first loss (a policer's bucket is then empty).
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(sk);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        // The interval ends on a loss.
        if rs.losses == 0 {
            return;
        }
        let lost = sk.lost - self.lt_last_lost;
        let delivered = sk.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (us(sk.delivered_mstamp_ns) / 1_000) as i64 - self.lt_last_stamp as i64;
        if t_ms < 1 {
            return;
        }
        if t_ms as u64 >= u32::MAX as u64 / 1_000 {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        let t_us = t_ms as u64 * 1_000;
        let bw = delivered * BW_UNIT / t_us;
        self.lt_bw_interval_done(sk, bw);
    }

    fn update_bw(&mut self, sk: &CcSock, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = sk.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(sk, rs);
        let bw = rs.delivered as u64 * BW_UNIT / rs.interval_us as u64;
        // App-limited samples only count if they do not lower the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    fn update_ack_aggregation(&mut self, sk: &CcSock, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = us(sk.delivered_mstamp_ns).saturating_sub(self.ack_epoch_mstamp);
        let mut expected_acked = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        // A slow ACK stream (or a very old epoch) starts a new epoch.
        if self.ack_epoch_acked as u64 <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = us(sk.delivered_mstamp_ns);
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked as u64).saturating_sub(expected_acked);
        let extra = extra.min(sk.cwnd as u64) as u32;
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = ((self.full_bw as u128 * FULL_BW_THRESH as u128) >> BBR_SCALE) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn check_drain(&mut self, sk: &mut CcSock) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            sk.ssthresh = self.inflight(sk, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(sk, sk.in_flight) <= self.inflight(sk, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(sk);
        }
    }

    fn check_probe_rtt_done(&mut self, sk: &mut CcSock) {
        if !(self.probe_rtt_done_stamp != 0 && jiffies(sk) > self.probe_rtt_done_stamp) {
            return;
        }
        self.min_rtt_stamp = jiffies(sk);
        sk.cwnd = sk.cwnd.max(self.prior_cwnd);
        self.reset_mode(sk);
    }

    fn update_min_rtt(&mut self, sk: &mut CcSock, rs: &RateSample) {
        let now = jiffies(sk);
        let filter_expired = now > self.min_rtt_stamp + MIN_RTT_WIN_SEC * crate::time::HZ;
        if rs.rtt_us >= 0
            // Strictly lower, as Linux: an equal sample does not refresh the 10 s window.
            && ((rs.rtt_us as u64) < self.min_rtt_us as u64 || (filter_expired && !rs.is_ack_delayed))
        {
            self.min_rtt_us = rs.rtt_us.min(u32::MAX as i64) as u32;
            self.min_rtt_stamp = now;
        }
        if PROBE_RTT_MODE_MS > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(sk);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at the reduced window say nothing about the path's bandwidth.
            let mark = sk.delivered + sk.in_flight as u64;
            sk.app_limited = if mark == 0 { 1 } else { mark };
            if self.probe_rtt_done_stamp == 0 && sk.in_flight <= CWND_MIN_TARGET {
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

    fn update_gains(&mut self) {
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = HIGH_GAIN;
                self.cwnd_gain = HIGH_GAIN;
            }
            Mode::Drain => {
                self.pacing_gain = DRAIN_GAIN;
                self.cwnd_gain = HIGH_GAIN;
            }
            Mode::ProbeBw => {
                self.pacing_gain = if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx as usize] };
                self.cwnd_gain = CWND_GAIN;
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }

    fn update_model(&mut self, sk: &mut CcSock, rs: &RateSample) {
        self.update_bw(sk, rs);
        self.update_ack_aggregation(sk, rs);
        self.update_cycle_phase(sk, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(sk);
        self.update_min_rtt(sk, rs);
        self.update_gains();
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn init(&mut self, sk: &mut CcSock) {
        self.prior_cwnd = 0;
        sk.ssthresh = super::INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = CaState::Open;
        self.mss = sk.mss;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = sk.min_rtt_us;
        self.min_rtt_stamp = jiffies(sk);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(sk);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(sk);
        self.reset_startup_mode();
        self.pacing_gain = HIGH_GAIN;
        self.cwnd_gain = HIGH_GAIN;
        self.ack_epoch_mstamp = us(sk.now_ns);
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0, 0];
        sk.pacing_enabled = true;
    }

    /// BBR does not pick a new ssthresh on loss: it saves cwnd for the end of recovery and
    /// leaves ssthresh as it is.
    fn ssthresh(&mut self, sk: &CcSock) -> u32 {
        self.save_cwnd(sk);
        sk.ssthresh
    }

    fn min_tso_segs(&self, sk: &CcSock) -> Option<u64> {
        Some(Self::min_tso_segs(sk))
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, sk: &mut CcSock, rs: &RateSample) {
        self.update_model(sk, rs);
        let bw = self.bw();
        let gain = self.pacing_gain;
        self.set_pacing_rate(sk, bw, gain);
        let cwnd_gain = self.cwnd_gain;
        self.set_cwnd(sk, rs, rs.acked_sacked, bw, cwnd_gain);
    }

    /// A spurious reduction: restart full-pipe detection and long-term sampling; keep cwnd.
    fn undo_cwnd(&mut self, sk: &CcSock, _prior_cwnd: u32) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(sk);
        sk.cwnd
    }

    fn set_state(&mut self, sk: &mut CcSock, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample { losses: 1, ..RateSample::default() };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            // An RTO counts as the end of a round for long-term sampling.
            self.round_start = true;
            self.lt_bw_sampling(sk, &rs);
        }
    }

    fn cwnd_event(&mut self, sk: &mut CcSock, ev: CaEvent) {
        if ev == CaEvent::TxStart && sk.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = us(sk.now_ns);
            self.ack_epoch_acked = 0;
            // Restarting after idle: pace at the estimate, no need for more speed.
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(sk, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(sk);
            }
        }
    }

    fn state_label(&self) -> &'static str {
        self.mode.label()
    }

    fn bw_estimate_bps(&self) -> Option<f64> {
        // Payload bit/s, as Linux reports bbr_bw in tcp_info (bytes/s) times 8.
        Some(self.bw() as f64 * self.mss as f64 * 8.0 * 1e6 / BW_UNIT as f64)
    }

    fn min_rtt_estimate_us(&self) -> Option<u64> {
        if self.min_rtt_us == u32::MAX {
            None
        } else {
            Some(self.min_rtt_us as u64)
        }
    }
}

#[cfg(test)]
mod tests;
