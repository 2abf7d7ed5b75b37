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
pub const PACING_GAIN: [u32; 8] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
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
#[inline]
fn jiffies(sk: &CcSock) -> u64 {
    crate::time::jiffies(sk.now_ns)
}

/// msecs_to_jiffies (rounds up, as Linux).
#[inline]
fn msecs_to_jiffies(ms: u64) -> u64 {
    (ms * crate::time::HZ).div_ceil(1000)
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
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        sk: &CcSock,
        rs: &RateSample,
        acked: u32,
        cwnd_out: &mut u32,
    ) -> bool {
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
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(sk, bw, self.pacing_gain));
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
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0
        {
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
            && self.packets_in_net_at_edt(sk, sk.in_flight)
                <= self.inflight(sk, self.max_bw(), BBR_UNIT)
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
        if PROBE_RTT_MODE_MS > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt
        {
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
                self.pacing_gain =
                    if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx as usize] };
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
mod tests {
    use crate::test_support::{Path, Row};
    use super::*;

    fn bbr(seed: u64) -> Bbr {
        Bbr::new(Rng::new(seed))
    }

    /// [rtt_cnt, cycle_idx, pacing_gain, mode as number]
    fn obs(b: &Bbr) -> [u64; 4] {
        [b.rtt_cnt as u64, b.cycle_idx as u64, b.pacing_gain as u64, b.mode as u64]
    }

    /// Path of `mbit` Mbit/s (1500-byte packets), `rtt_ms`, `buf` packets, BBR seeded `seed`.
    fn path(mbit: f64, rtt_ms: f64, buf: usize, seed: u64) -> Path<Bbr> {
        let mut p = Path::new(bbr(seed), mbit * 1e6 / 12_000.0, rtt_ms, buf);
        p.observe = obs;
        p
    }

    /// Payload bit/s of a link of `mbit` Mbit/s carrying 1500-byte packets.
    fn payload_bps(mbit: f64) -> f64 {
        mbit * 1e6 * 1448.0 / 1500.0
    }

    fn rounds(rows: &[Row]) -> Vec<&Row> {
        // The first row of every packet-timed round.
        let mut out = Vec::new();
        let mut last = u64::MAX;
        for r in rows {
            if r.obs[0] != last {
                out.push(r);
                last = r.obs[0];
            }
        }
        out
    }

    #[test]
    fn startup_doubles_per_round_then_drain_then_probe_bw() {
        let mut p = path(100.0, 40.0, 3000, 1);
        p.run_until(2_000_000_000);
        let link = payload_bps(100.0);
        let rs = rounds(&p.rows);
        // Per-round growth of the pacing rate in STARTUP while far below the link rate:
        // highest pacing rate of each round, compared round to round (round 1 still paces at
        // the initial 2.89 × 10 packets / srtt, so the comparison starts at round 2).
        let mut per_round: Vec<(u64, u64, f64)> = Vec::new(); // (round, max pacing, bw at end)
        for r in p.rows.iter().filter(|r| r.label == "STARTUP") {
            match per_round.last_mut() {
                Some(l) if l.0 == r.obs[0] => {
                    l.1 = l.1.max(r.pacing_rate);
                    l.2 = r.bw_bps.unwrap();
                }
                _ => per_round.push((r.obs[0], r.pacing_rate, r.bw_bps.unwrap())),
            }
        }
        let ratios: Vec<f64> = per_round
            .windows(2)
            .filter(|w| w[0].0 >= 2 && w[1].2 < 0.4 * link)
            .map(|w| w[1].1 as f64 / w[0].1 as f64)
            .collect();
        println!("startup pacing growth per round: {ratios:?}");
        assert!(ratios.len() >= 3, "too few startup rounds: {ratios:?}");
        let geo = ratios.iter().product::<f64>().powf(1.0 / ratios.len() as f64);
        assert!((1.8..=2.2).contains(&geo), "pacing should double per round: {ratios:?}");
        for r in &ratios {
            assert!((1.4..=2.6).contains(r), "pacing growth per round: {ratios:?}");
        }
        // Full-pipe detection: DRAIN starts 3 rounds after the estimate stopped growing 25 %.
        let first_full = rs.iter().find(|r| r.bw_bps.unwrap() >= 0.9 * link).unwrap().obs[0];
        let drain = p.rows.iter().find(|r| r.label == "DRAIN").expect("DRAIN reached");
        let probe = p.rows.iter().find(|r| r.label == "PROBE_BW").expect("PROBE_BW reached");
        println!("bw>=90% in round {first_full}, DRAIN in {}, PROBE_BW in {}", drain.obs[0], probe.obs[0]);
        assert!((2..=4).contains(&(drain.obs[0] - first_full)), "drain round {}", drain.obs[0]);
        assert!(probe.obs[0] - drain.obs[0] <= 2, "drain took {} rounds", probe.obs[0] - drain.obs[0]);
        assert_eq!(drain.obs[2], DRAIN_GAIN as u64);
        // Leaving DRAIN happens once in-flight is back at about one BDP (+ budget): BDP of
        // 8333 pkt/s × 40.12 ms = 335 packets.
        assert!(probe.in_flight <= 335 + 80, "in flight at PROBE_BW entry {}", probe.in_flight);
        // ssthresh was set on DRAIN entry to the 1×BDP in-flight target: 335 + 3 × TSO goal
        // (pacing ≈ 34 MB/s → 23 segments) rounded up to even = 404.
        assert!((400..=408).contains(&p.sk.ssthresh), "ssthresh {}", p.sk.ssthresh);
        // Estimate equals the payload rate of the link.
        let bw = p.rows.last().unwrap().bw_bps.unwrap();
        assert!((bw / link - 1.0).abs() < 0.01, "bw {bw} vs link {link}");
        // Min RTT = 40 ms propagation + 0.12 ms serialisation.
        assert_eq!(p.cc.min_rtt_us, 40_120);
    }

    #[test]
    fn probe_bw_gain_cycle_period_and_pacing_levels() {
        let mut p = path(100.0, 40.0, 3000, 7);
        p.run_until(6_000_000_000);
        let min_rtt_ms = p.cc.min_rtt_us as f64 / 1e3;
        let rows: Vec<&Row> =
            p.rows.iter().filter(|r| r.label == "PROBE_BW" && r.t_ns >= 2_000_000_000).collect();
        assert!(rows.len() > 10_000);
        // Pacing rate = gain × bw × 0.99 on every ACK (bw in payload bytes/s).
        for r in &rows {
            let gain = r.obs[2] as f64 / 256.0;
            let bw_bytes = r.bw_bps.unwrap() / 8.0;
            let ratio = r.pacing_rate as f64 / bw_bytes;
            assert!((ratio - gain * 0.99).abs() < 0.002, "t={} gain {gain} ratio {ratio}", r.t_ns);
        }
        // Phase changes: always to the next index, in gains 1.25 → 0.75 → 1 ×6.
        let mut changes: Vec<(u64, u64, u64)> = Vec::new(); // (t_ns, new idx, rtt_cnt)
        for w in rows.windows(2) {
            if w[1].obs[1] != w[0].obs[1] {
                assert_eq!(w[1].obs[1], (w[0].obs[1] + 1) % 8, "phase skipped at {}", w[1].t_ns);
                changes.push((w[1].t_ns, w[1].obs[1], w[1].obs[0]));
            }
        }
        let gains: Vec<u64> = (0..8).map(|i| PACING_GAIN[i] as u64).collect();
        assert_eq!(gains, vec![320, 192, 256, 256, 256, 256, 256, 256]);
        let mut periods_ms = Vec::new();
        let mut period_rounds = Vec::new();
        for w in changes.windows(2) {
            let dur_ms = (w[1].0 - w[0].0) as f64 / 1e6;
            match w[0].1 {
                // 1.25: at least min_rtt, until in-flight reaches 1.25 BDP (about one more RTT).
                0 => assert!(dur_ms > min_rtt_ms && dur_ms < 2.5 * min_rtt_ms, "1.25 phase {dur_ms} ms"),
                // 0.75: at most min_rtt (early exit once in-flight <= BDP).
                1 => assert!(dur_ms <= min_rtt_ms + 1.0, "0.75 phase {dur_ms} ms"),
                // 1.0: exactly one min_rtt of delivery time (to ACK granularity, 0.12 ms).
                _ => assert!(dur_ms > min_rtt_ms && dur_ms < min_rtt_ms + 0.5, "1.0 phase {dur_ms} ms"),
            }
        }
        let starts: Vec<&(u64, u64, u64)> = changes.iter().filter(|c| c.1 == 0).collect();
        for w in starts.windows(2) {
            periods_ms.push((w[1].0 - w[0].0) as f64 / 1e6);
            period_rounds.push(w[1].2 - w[0].2);
        }
        println!("min_rtt {min_rtt_ms} ms; cycle periods {periods_ms:?} ms, rounds {period_rounds:?}");
        assert!(periods_ms.len() >= 8, "cycles seen: {}", periods_ms.len());
        for (ms, rounds) in periods_ms.iter().zip(&period_rounds) {
            assert!(*ms >= 7.0 * min_rtt_ms && *ms <= 9.5 * min_rtt_ms, "period {ms} ms");
            assert!((7..=9).contains(rounds), "rounds per cycle {rounds}");
        }
        // The 1.25 probe and the 0.75 drain leave the queue small: RTT stays within 1.3× base.
        let mean_rtt = rows.iter().map(|r| r.rtt_us as f64).sum::<f64>() / rows.len() as f64;
        assert!(mean_rtt < 1.3 * p.cc.min_rtt_us as f64, "mean rtt {mean_rtt}");
    }

    #[test]
    fn probe_rtt_after_10s_without_new_min_rtt() {
        // The path RTT rises from 40 to 45 ms at t = 1 s (a route change): from then on no
        // sample matches the 40.12 ms minimum, so the filter expires 10 s after the last one.
        let mut p = path(10.0, 40.0, 1000, 3);
        p.rtt_step = Some((1_000_000_000, 45_000_000));
        p.run_until(14_000_000_000);
        // The window restarts only on a strictly lower sample (Linux bbr_update_min_rtt).
        let mut running = u64::MAX;
        let mut last_min = 0;
        for r in &p.rows {
            if (r.rtt_us as u64) < running {
                running = r.rtt_us as u64;
                last_min = r.t_ns;
            }
        }
        assert!(running <= 41_200, "samples at the old minimum");
        let enter = p.rows.iter().position(|r| r.label == "PROBE_RTT").expect("PROBE_RTT");
        let exit = enter + p.rows[enter..].iter().position(|r| r.label != "PROBE_RTT").unwrap();
        let (t_in, t_out) = (p.rows[enter].t_ns, p.rows[exit].t_ns);
        let waited_ms = (t_in - last_min) as f64 / 1e6;
        println!("last min at {last_min}, PROBE_RTT {t_in}..{t_out}");
        // Entered on the first ACK more than 10 s (2500 jiffies of 4 ms) after the jiffy of the
        // last min sample: between 10 s and 10 s + one jiffy + one ACK gap (1.2 ms).
        assert!(waited_ms > 10_000.0 && waited_ms < 10_005.3, "waited {waited_ms} ms");
        let cwnd_before = p.rows[enter - 1].cwnd;
        // cwnd capped at 4 packets for the whole mode.
        for r in &p.rows[enter..exit] {
            assert!(r.cwnd <= CWND_MIN_TARGET, "cwnd {} in PROBE_RTT", r.cwnd);
        }
        // Duration: drain to 4 in flight (< 1 RTT at 0.75+ drain), then max(200 ms, 1 round).
        let dur_ms = (t_out - t_in) as f64 / 1e6;
        assert!(dur_ms >= 200.0 && dur_ms <= 200.0 + 2.0 * 45.2, "PROBE_RTT lasted {dur_ms} ms");
        // The expired filter took the new path RTT (45 ms + 1.2 ms serialisation).
        assert_eq!(p.rows[exit].min_rtt_us, Some(46_200));
        // Back to PROBE_BW with the saved cwnd restored.
        assert_eq!(p.rows[exit].label, "PROBE_BW");
        assert!(p.rows[exit].cwnd >= cwnd_before, "cwnd {} < {}", p.rows[exit].cwnd, cwnd_before);
        // While in PROBE_RTT the socket is marked app-limited (samples ignored for bw).
        let bw_before = p.rows[enter - 1].bw_bps.unwrap();
        assert!((p.rows[exit].bw_bps.unwrap() / bw_before - 1.0).abs() < 0.01);
        // Only one PROBE_RTT in this run (the new minimum keeps being matched).
        assert!(p.rows[exit..].iter().all(|r| r.label != "PROBE_RTT"));
    }

    #[test]
    fn random_start_phase_never_drain_and_reproducible() {
        let sk = CcSock::new(1448, 10, 10_000);
        let draw = |seed: u64, n: usize| -> Vec<u32> {
            let mut b = bbr(seed);
            (0..n)
                .map(|_| {
                    b.reset_probe_bw_mode(&sk);
                    b.cycle_idx
                })
                .collect()
        };
        let mut counts = [0u32; 8];
        for seed in 0..2000 {
            let first = draw(seed, 1)[0];
            counts[first as usize] += 1;
        }
        assert_eq!(counts[1], 0, "the 3/4 phase must never be the start phase");
        for (i, c) in counts.iter().enumerate() {
            if i != 1 {
                // Uniform over the 7 other phases: 2000/7 = 286 each.
                assert!((200..=370).contains(c), "phase {i} drawn {c} times: {counts:?}");
            }
        }
        assert_eq!(draw(42, 50), draw(42, 50));
        assert_ne!(draw(42, 50), draw(43, 50));
        // Through the trait: two runs with the same seed are identical, to the nanosecond.
        let run = |seed: u64| {
            let mut p = path(20.0, 30.0, 500, seed);
            p.run_until(3_000_000_000);
            p.rows.iter().map(|r| (r.t_ns, r.cwnd, r.pacing_rate, r.obs[1])).collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
    }

    /// A BBR in PROBE_BW (phase 2, gain 1) with bw = 10 packets/ms and min_rtt = 10 ms, i.e.
    /// BDP = 100 packets; pacing at 1.0 × bw = 14 335 186 B/s → TSO goal 9 segments, so the
    /// 2×BDP cwnd target is 200 + 3 × 9 = 227 → 228 (even).
    fn steady() -> (Bbr, CcSock) {
        let mut sk = CcSock::new(1448, 10, 100_000);
        sk.now_ns = 1_000_000_000;
        sk.delivered = 10_000;
        sk.delivered_mstamp_ns = sk.now_ns;
        let mut b = bbr(1);
        b.init(&mut sk);
        b.min_rtt_us = 10_000;
        b.min_rtt_stamp = 1_000;
        b.bw.reset(0, BW_UNIT / 100);
        b.full_bw_reached = true;
        b.mode = Mode::ProbeBw;
        b.cycle_idx = 2;
        b.cycle_mstamp = us(sk.now_ns);
        b.pacing_gain = BBR_UNIT;
        b.cwnd_gain = CWND_GAIN;
        b.next_rtt_delivered = sk.delivered;
        b.ack_epoch_mstamp = us(sk.now_ns);
        sk.pacing_rate = 14_335_186;
        sk.cwnd = 228;
        sk.in_flight = 200;
        (b, sk)
    }

    /// An ACK of `acked` packets `dt_us` after the previous one, within the current round
    /// unless `round_end`. The sample says 100 packets in 10 ms (= the model's bw). Tests space
    /// ACKs 101 µs apart, just below the model's rate, so every ACK starts a new aggregation
    /// epoch and extra_acked stays at 1 packet (at exactly 100 µs the kernel's truncated bw,
    /// 0.0099999 pkt/µs, makes it 2).
    fn ack(b: &mut Bbr, sk: &mut CcSock, dt_us: u64, acked: u32, losses: u32, round_end: bool) {
        sk.now_ns += dt_us * 1000;
        sk.delivered += acked as u64;
        sk.delivered_mstamp_ns = sk.now_ns;
        sk.lost += losses as u64;
        let prior_delivered = if round_end { sk.delivered } else { sk.delivered - 100 };
        let rs = RateSample {
            prior_delivered: prior_delivered.min(if round_end { u64::MAX } else { b.next_rtt_delivered.saturating_sub(1) }),
            delivered: 100,
            interval_us: 10_000,
            rtt_us: 10_500,
            losses,
            acked_sacked: acked,
            prior_in_flight: sk.in_flight + acked,
            ..RateSample::default()
        };
        b.cong_control(sk, &rs);
    }

    #[test]
    fn steady_state_cwnd_target_and_pacing() {
        let (mut b, mut sk) = steady();
        assert_eq!(Bbr::tso_segs_goal(&sk), 9);
        assert_eq!(b.bdp(b.bw(), BBR_UNIT), 100);
        ack(&mut b, &mut sk, 101, 1, 0, false);
        assert_eq!(sk.cwnd, 228, "2 × 100 + 3 × 9, rounded up to even");
        assert_eq!(sk.pacing_rate, 14_335_186, "1.0 × bw × 99 %");
        // In the 5/4 phase the budget gets +2 and the pacing rate is 1.25 × bw × 99 %.
        b.cycle_idx = 0;
        b.update_gains();
        ack(&mut b, &mut sk, 101, 1, 0, false);
        assert_eq!(sk.pacing_rate, 17_918_982);
        assert_eq!(sk.cwnd, 229, "cwnd grows by acked toward the target");
        assert_eq!(b.inflight(&sk, b.bw(), CWND_GAIN), 200 + 3 * 12 + 2, "TSO goal is 12 at 1.25×, +2 in phase 0");
    }

    #[test]
    fn recovery_packet_conservation_then_restore() {
        let (mut b, mut sk) = steady();
        // Entering Recovery: ssthresh is left alone and the cwnd is saved.
        sk.ssthresh = 5000;
        assert_eq!(b.ssthresh(&sk), 5000);
        assert_eq!(b.prior_cwnd(), 228);
        sk.ca_state = CaState::Recovery;
        sk.in_flight = 190;
        ack(&mut b, &mut sk, 101, 1, 3, false);
        assert_eq!(sk.cwnd, 191, "first recovery ACK: cwnd = in_flight + acked");
        sk.in_flight = 185;
        ack(&mut b, &mut sk, 101, 1, 0, false);
        assert_eq!(sk.cwnd, 191, "conservation keeps cwnd >= in_flight + acked");
        sk.in_flight = 180;
        ack(&mut b, &mut sk, 101, 1, 5, false);
        assert_eq!(sk.cwnd, 186, "losses come off cwnd: 191 - 5");
        // A round later conservation ends: slow start toward the target (+acked).
        ack(&mut b, &mut sk, 101, 1, 0, true);
        assert_eq!(sk.cwnd, 187);
        // Recovery over: the saved 228 comes back.
        sk.ca_state = CaState::Open;
        ack(&mut b, &mut sk, 101, 1, 0, false);
        assert_eq!(sk.cwnd, 228);
    }

    #[test]
    fn rto_loss_state_then_restore_and_undo() {
        let (mut b, mut sk) = steady();
        assert_eq!(b.ssthresh(&sk), INFINITE_SSTHRESH_FOR_TEST);
        b.full_bw = 777;
        b.set_state(&mut sk, CaState::Loss);
        assert_eq!(b.full_bw, 0);
        assert_eq!(b.prev_ca_state, CaState::Loss);
        sk.ca_state = CaState::Loss;
        sk.cwnd = 1;
        sk.in_flight = 0;
        ack(&mut b, &mut sk, 101, 1, 0, false);
        assert_eq!(sk.cwnd, 4, "slow start from 1, floored at the 4-packet minimum");
        sk.ca_state = CaState::Open;
        ack(&mut b, &mut sk, 101, 1, 0, false);
        assert_eq!(sk.cwnd, 228, "prior cwnd restored on leaving Loss");
        b.full_bw = 99;
        b.full_bw_cnt = 2;
        assert_eq!(b.undo_cwnd(&sk, 50), 228, "undo keeps the current cwnd");
        assert_eq!((b.full_bw, b.full_bw_cnt), (0, 0));
    }

    const INFINITE_SSTHRESH_FOR_TEST: u32 = crate::cc::INFINITE_SSTHRESH;

    #[test]
    fn init_pacing_and_idle_restart() {
        let mut sk = CcSock::new(1448, 10, 10_000);
        let mut b = bbr(9);
        b.init(&mut sk);
        assert!(sk.pacing_enabled);
        assert_eq!(sk.ssthresh, crate::cc::INFINITE_SSTHRESH);
        // 2.89 × 10 packets per 1 ms (no RTT sample yet) × 1448 × 99 %.
        assert_eq!(sk.pacing_rate, 41_381_651);
        assert_eq!(b.state_label(), "STARTUP");
        assert_eq!(b.min_rtt_estimate_us(), None);
        assert_eq!(b.bw_estimate_bps(), Some(0.0));
        // With an srtt of 20 ms the first ACK re-derives the initial rate from it.
        sk.srtt_us = 20_000;
        let rs = RateSample { delivered: -1, interval_us: -1, rtt_us: 20_000, ..Default::default() };
        sk.now_ns = 20_000_000;
        b.cong_control(&mut sk, &rs);
        assert!(b.has_seen_rtt);
        // 10 × 2^24 / 20 000 = 8388 (pkts/µs << 24) → 2 068 934 B/s in the kernel's integer units.
        assert_eq!(sk.pacing_rate, 2_068_934);
        assert_eq!(b.min_rtt_estimate_us(), Some(20_000));

        // Idle restart in PROBE_BW: pace at 1.0 × bw even in the 1.25 phase.
        let (mut b, mut sk) = steady();
        b.cycle_idx = 0;
        b.update_gains();
        sk.app_limited = 0;
        b.cwnd_event(&mut sk, CaEvent::TxStart);
        assert!(!b.idle_restart, "not app-limited: no idle restart");
        sk.app_limited = 10_050;
        sk.pacing_rate = 1;
        b.cwnd_event(&mut sk, CaEvent::TxStart);
        assert!(b.idle_restart);
        assert_eq!(sk.pacing_rate, 14_335_186);
        // No PROBE_RTT while restarting from idle, even with an expired filter.
        sk.now_ns += 20_000_000_000;
        let rs = RateSample { delivered: 0, interval_us: 10_000, rtt_us: 12_000, is_ack_delayed: true, ..Default::default() };
        b.cong_control(&mut sk, &rs);
        assert_eq!(b.mode, Mode::ProbeBw);
    }

    #[test]
    fn app_limited_samples_only_raise_the_estimate() {
        let (mut b, mut sk) = steady();
        let before = b.max_bw();
        sk.now_ns += 1_000_000;
        let low = RateSample { delivered: 10, interval_us: 10_000, rtt_us: 10_000, is_app_limited: true, acked_sacked: 1, prior_delivered: 0, ..Default::default() };
        b.cong_control(&mut sk, &low);
        assert_eq!(b.max_bw(), before);
        let high = RateSample { delivered: 150, interval_us: 10_000, ..low };
        b.cong_control(&mut sk, &high);
        assert_eq!(b.max_bw(), 150 * BW_UNIT / 10_000);
        // A low non-app-limited sample does not lower a max set in this window either.
        let low2 = RateSample { is_app_limited: false, ..low };
        b.cong_control(&mut sk, &low2);
        assert_eq!(b.max_bw(), 150 * BW_UNIT / 10_000);
    }

    #[test]
    fn ack_aggregation_allowance_adds_extra_acked() {
        let (mut b, mut sk) = steady();
        // ACKs just below the estimated rate: nothing beyond the ACK itself.
        for _ in 0..50 {
            ack(&mut b, &mut sk, 101, 1, 0, false);
        }
        assert_eq!(b.extra_acked_max(), 1);
        assert_eq!(sk.cwnd, 228);
        // 2 ms of silence, then one stretch ACK for 20 packets: 20 more than expected from a
        // fresh epoch, added to the target: 200 + 20 + 27 = 247 → 248.
        ack(&mut b, &mut sk, 2_000, 20, 0, false);
        assert_eq!(b.extra_acked_max(), 20);
        assert_eq!(b.ack_aggregation_cwnd(), 20);
        assert_eq!(sk.cwnd, 248);
    }

    #[test]
    fn long_term_bw_detects_policer_and_expires() {
        let (mut b, mut sk) = steady();
        // A policer lets 5 packets/ms through (half the model's bw) and drops 1 in 4 sent.
        let policed = BW_UNIT / 200;
        let mut n = 0u64;
        let mut step = |b: &mut Bbr, sk: &mut CcSock, lossy: bool| {
            n += 1;
            let losses = if lossy && n % 3 == 0 { 1 } else { 0 };
            let round_end = n % 50 == 0;
            ack(b, sk, 200, 1, losses, round_end);
        };
        for _ in 0..50 * 12 {
            step(&mut b, &mut sk, true);
            if b.lt_use_bw() {
                break;
            }
        }
        assert!(b.lt_use_bw(), "policer not detected");
        let err = (b.lt_bw() as f64 / policed as f64 - 1.0).abs();
        assert!(err < 0.05, "lt_bw {} vs {}", b.lt_bw(), policed);
        assert_eq!(b.bw(), b.lt_bw());
        // In lt mode the pacing gain is 1 whatever the phase, at the policed rate.
        b.cycle_idx = 0;
        ack(&mut b, &mut sk, 200, 1, 0, false);
        assert_eq!(b.pacing_gain, BBR_UNIT);
        let expect = Bbr::rate_bytes_per_sec(&sk, b.lt_bw(), BBR_UNIT);
        assert_eq!(sk.pacing_rate, expect);
        assert!((sk.pacing_rate as f64 / (5_000.0 * 1448.0 * 0.99) - 1.0).abs() < 0.05);
        // Used for 48 rounds, then dropped and gain cycling restarts.
        for _ in 0..50 * 46 {
            step(&mut b, &mut sk, false);
        }
        assert!(b.lt_use_bw(), "still policed after 46 rounds");
        for _ in 0..50 * 3 {
            step(&mut b, &mut sk, false);
        }
        assert!(!b.lt_use_bw(), "lt_bw must expire after 48 rounds");
        assert_eq!(b.bw(), b.max_bw());
    }

    #[test]
    fn low_loss_is_not_a_policer() {
        let (mut b, mut sk) = steady();
        for n in 1..=50 * 20u64 {
            let losses = if n % 10 == 0 { 1 } else { 0 }; // 10 % < 50/256
            ack(&mut b, &mut sk, 200, 1, losses, n % 50 == 0);
        }
        assert!(!b.lt_use_bw());
    }

    #[test]
    fn probe_rtt_every_10s_with_handshake_min_rtt() {
        // As on Linux, the min RTT starts from the handshake sample (50 ms + a 60-byte SYN's
        // serialisation); full-size data packets, 0.24 ms at 50 Mbit/s, can never match it,
        // so the first PROBE_RTT comes exactly 10 s after init. PROBE_RTT then takes the data
        // RTT of an empty queue (50.24 ms) as the new minimum; on this jitter-free path
        // PROBE_BW's cruise phases (pacing at 0.99 × bw) drain the queue to exactly zero and
        // re-measure that minimum, so later episodes only come when 10 s pass without that.
        let mut p = path(50.0, 50.0, 420, 4).with_handshake();
        assert_eq!(p.sk.pacing_rate, Bbr::rate_bytes_per_sec(&p.sk, 10 * BW_UNIT / 50_009, HIGH_GAIN));
        p.run_until(31_000_000_000);
        let mut eps: Vec<(f64, f64, u32)> = Vec::new(); // (start s, duration s, max cwnd)
        let mut last = "";
        for r in &p.rows {
            if r.label == "PROBE_RTT" {
                if last != "PROBE_RTT" {
                    eps.push((r.t_ns as f64 / 1e9, 0.0, 0));
                }
                let e = eps.last_mut().unwrap();
                e.1 = r.t_ns as f64 / 1e9 - e.0;
                e.2 = e.2.max(r.cwnd);
            }
            last = r.label;
        }
        println!("PROBE_RTT episodes (start, duration, max cwnd): {eps:?}");
        assert!(!eps.is_empty());
        assert!((eps[0].0 - 10.0).abs() < 0.01, "first at {}", eps[0].0);
        for w in eps.windows(2) {
            // Never sooner than 10 s after the previous one ended (min_rtt_stamp reset on exit).
            let gap = w[1].0 - (w[0].0 + w[0].1);
            assert!(gap >= 10.0, "gap {gap}");
        }
        assert_eq!(p.cc.min_rtt_us, 50_240, "data-packet RTT of an empty queue");
        for e in &eps {
            assert!(e.1 >= 0.2 && e.1 <= 0.2 + 2.0 * 0.0503, "duration {}", e.1);
            assert!(e.2 <= 4, "cwnd {} in PROBE_RTT", e.2);
        }
    }
}
