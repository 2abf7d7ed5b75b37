//! BBR v3, following google/bbr branch v3, net/ipv4/tcp_bbr.c with BBR_VERSION 3 (commit
//! 001a430b3ddbbc6d9173061a74d8b580c757b91b, the version stored for that path), with
//! draft-ietf-ccwg-bbr for intent. Reimplemented from the source's behaviour in its fixed-point
//! units (bandwidth in packets/µs << 24, gains << 8, PROBE_RTT and min-RTT stamps in jiffies,
//! cycle stamps in µs), one file per concern:
//!
//! * this file: the state, the constants and the `tcp_congestion_ops` hooks (`bbr_main` is
//!   `cong_control`);
//! * `model.rs`: pacing rate, BDP and cwnd, ACK aggregation, the min-RTT / PROBE_RTT logic;
//! * `bounds.rs`: congestion signals, the short-term model (bw_lo / inflight_lo), the long-term
//!   one (bw_hi / inflight_hi), ECN alpha, and the STARTUP loss / ECN exits;
//! * `probe.rs`: the STARTUP plateau check, DRAIN and the PROBE_BW DOWN / CRUISE / REFILL / UP
//!   cycle with its wall-clock and round-count probe scheduling.
//!
//! Left out (see docs/algorithms.md): the app-limited fast path (`bbr_run_fast_path`, a CPU
//! saving), PLB rehashing, the TLP-recovery loss signal (`CA_EVENT_TLP_RECOVERY`) and
//! `is_acking_tlp_retrans_seq`, `fast_ack_mode`, and the `tso_segs` hook (the simulator sends
//! single segments; the TSO goal only enters the cwnd budget, as in v1's model).
use super::{CaEvent, CaState, CcSock, CongestionControl, LostSkb, RateSample};
use crate::rng::Rng;
use crate::time::msecs_to_jiffies;

mod bounds;
mod model;
mod probe;

pub(super) const BW_SCALE: u32 = 24;
pub(super) const BW_UNIT: u64 = 1 << BW_SCALE;
pub(super) const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// `~0U`: no bound (inflight_lo / inflight_hi / bw_lo unset).
pub const UNSET: u32 = u32::MAX;

/// Window of the min-RTT filter, s.
const MIN_RTT_WIN_SEC: u64 = 10;
/// Time at the PROBE_RTT cwnd, ms.
const PROBE_RTT_MODE_MS: u64 = 200;
/// Window of the probe_rtt_min_us filter: PROBE_RTT comes every 5 s without a lower RTT.
pub const PROBE_RTT_WIN_MS: u64 = 5_000;
/// PROBE_RTT cwnd as a fraction of the estimated BDP: 0.5.
pub const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// Halve the min-RTT TSO allowance for every 2^9 µs of min RTT.
const TSO_RTT_SHIFT: u32 = 9;
/// Pace 1 % below the estimated bandwidth.
const PACING_MARGIN_PERCENT: u64 = 1;
/// STARTUP pacing gain 2.77 (4 ln 2, rounded up).
pub const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// STARTUP cwnd gain 2.
pub const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// DRAIN pacing gain 1/2.885.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// PROBE_BW cwnd gain 2.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW pacing gains by phase: UP 1.25, DOWN 0.91, CRUISE 1, REFILL 1.
pub const PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 91 / 100, BBR_UNIT, BBR_UNIT];
/// The smallest cwnd BBR aims for.
pub const CWND_MIN_TARGET: u32 = 4;
/// Full bandwidth: growth below 1.25x ...
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// ... for 3 rounds.
const FULL_BW_CNT: u32 = 3;
/// Gain on the ACK-aggregation allowance, and the windows of its max filter.
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// ECN is used only below this min RTT, µs (`bbr_ecn_max_rtt_us`).
pub const ECN_MAX_RTT_US: u32 = 5_000;
/// Loss response: bw_lo / inflight_lo shrink to (1 - 0.3).
pub const BETA: u32 = BBR_UNIT * 30 / 100;
/// ECN alpha EWMA gain 1/16, initial alpha 1.
pub const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// ECN cut of inflight_lo: 1 - alpha / 3.
const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// Probing went too far above a CE ratio of 0.5 ...
pub const ECN_THRESH: u32 = BBR_UNIT / 2;
/// ... after ECN without loss, the first reprobe grows inflight_hi by half of it.
const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
/// Probing went too far above a loss rate of 2 %.
pub const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// STARTUP exits after this many loss events in a recovery round with loss above LOSS_THRESH,
const FULL_LOSS_CNT: u32 = 6;
/// or after this many rounds with a CE ratio above ECN_THRESH.
const FULL_ECN_CNT: u32 = 2;
/// Headroom left below inflight_hi after probing found the limit: 15 %.
pub const INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// PROBE_UP adds 1/4 to the cwnd gain.
const BW_PROBE_CWND_GAIN: u32 = 1;
/// Reno-coexistence probing: at most this many rounds between probes, ...
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// ... started at a random 0..2 rounds.
const BW_PROBE_RAND_ROUNDS: u64 = 2;
/// Wall-clock probing: every 2 s plus a random 0..1 s.
pub const BW_PROBE_BASE_US: u64 = 2_000_000;
pub const BW_PROBE_RAND_US: u64 = 1_000_000;
/// Linux default sk_pacing_shift and the GSO size cap (GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER).
const PACING_SHIFT: u32 = 10;
const GSO_LEGACY_MAX_SIZE: u64 = 65536;
const TSO_MAX_BYTES: u64 = GSO_LEGACY_MAX_SIZE - 1 - 320;
/// sysctl tcp_min_tso_segs.
const MIN_TSO_SEGS: u64 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// `enum bbr_pacing_gain_phase`: the index into PACING_GAIN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
}

/// `enum bbr_ack_phase`: what the incoming ACKs say about bandwidth probing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// `struct bbr` (v3), field by field where the simulator needs it.
#[derive(Debug, Clone)]
pub struct Bbr3 {
    rng: Rng,
    pub mode: Mode,
    pub cycle_idx: Phase,
    ack_phase: AckPhase,
    /// Min RTT over 10 s and when it was taken (jiffies).
    pub min_rtt_us: u32,
    min_rtt_stamp: u64,
    /// Min RTT over 5 s, which schedules PROBE_RTT, and its stamp (jiffies).
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: u64,
    /// When PROBE_RTT may end (jiffies; 0 = not yet at the PROBE_RTT cwnd).
    probe_rtt_done_stamp: u64,
    probe_rtt_round_done: bool,
    /// `delivered` at which the packet-timed round ends.
    next_rtt_delivered: u64,
    /// Start of the current PROBE_BW phase, µs.
    cycle_mstamp: u64,
    prev_ca_state: CaState,
    round_start: bool,
    idle_restart: bool,
    init_cwnd: u32,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_now: bool,
    full_bw_cnt: u32,
    full_bw: u32,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    /// ACK aggregation (µs epoch).
    ack_epoch_mstamp: u64,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    startup_ecn_rounds: u32,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_round_delivered: u64,
    undo_bw_lo: u32,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,
    /// Max delivery rate and volume in the latest round.
    bw_latest: u32,
    inflight_latest: u32,
    /// Short-term lower bounds (UNSET = none).
    pub bw_lo: u32,
    pub inflight_lo: u32,
    /// Long-term max-bw filter over the last 1-2 probe cycles, and the inflight upper bound.
    bw_hi: [u32; 2],
    pub inflight_hi: u32,
    bw_probe_up_rounds: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    /// Wall-clock wait in DOWN / CRUISE before the next probe, µs.
    pub probe_wait_us: u64,
    ecn_eligible: bool,
    /// EWMA of the CE-marked fraction, << 8.
    pub ecn_alpha: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    /// Packet-timed rounds since the last probe, saturating at 255.
    pub rounds_since_probe: u32,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    loss_events_in_round: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    /// PROBE_RTT entries so far (a test observable, not in `struct bbr`).
    pub probe_rtt_entries: u32,
    mss: u32,
}

/// `struct bbr_context`: per-ACK scratch.
#[derive(Debug, Clone, Copy, Default)]
struct Ctx {
    sample_bw: u32,
}

#[inline]
fn now_us(sk: &CcSock) -> u64 {
    sk.now_ns / 1_000
}

/// The socket's clock in jiffies (`tcp_jiffies32`).
#[inline]
fn jiffies(sk: &CcSock) -> u64 {
    crate::time::jiffies(sk.now_ns)
}

impl Bbr3 {
    /// `rng` supplies the probe-wait jitter (`get_random_u32_below` in `bbr_pick_probe_wait`).
    pub fn new(rng: Rng) -> Self {
        Bbr3 {
            rng,
            mode: Mode::Startup,
            cycle_idx: Phase::Up,
            ack_phase: AckPhase::Init,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_min_us: u32::MAX,
            probe_rtt_min_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_round_done: false,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            round_start: false,
            idle_restart: false,
            init_cwnd: 10,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0, 0],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 0,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            inflight_latest: 0,
            bw_lo: UNSET,
            inflight_lo: UNSET,
            bw_hi: [0, 0],
            inflight_hi: UNSET,
            bw_probe_up_rounds: 0,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            ecn_eligible: false,
            ecn_alpha: ECN_ALPHA_INIT,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_events_in_round: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            probe_rtt_entries: 0,
            mss: crate::tcp::MSS,
        }
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// `bbr_max_bw`: the long-term max filter, pkts/µs << 24.
    pub fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// `bbr_bw`: the bandwidth the model uses, capped by the short-term bound.
    pub fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }

    pub fn ecn_eligible(&self) -> bool {
        self.ecn_eligible
    }

    /// `bbr_get_phase` as a label for the time series.
    pub fn phase_label(&self) -> &'static str {
        match (self.mode, self.cycle_idx) {
            (Mode::Startup, _) => "STARTUP",
            (Mode::Drain, _) => "DRAIN",
            (Mode::ProbeRtt, _) => "PROBE_RTT",
            (Mode::ProbeBw, Phase::Up) => "PROBE_BW_UP",
            (Mode::ProbeBw, Phase::Down) => "PROBE_BW_DOWN",
            (Mode::ProbeBw, Phase::Cruise) => "PROBE_BW_CRUISE",
            (Mode::ProbeBw, Phase::Refill) => "PROBE_BW_REFILL",
        }
    }

    /// `bbr_update_round_start`.
    fn update_round_start(&mut self, sk: &CcSock, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = sk.delivered;
            self.round_start = true;
        }
    }

    /// `bbr_calculate_bw_sample`: delivered / interval, rounded up.
    fn bw_sample(rs: &RateSample) -> u32 {
        if rs.interval_us <= 0 || rs.delivered < 0 {
            return 0;
        }
        let bw = (rs.delivered as u64 * BW_UNIT).div_ceil(rs.interval_us as u64);
        bw.min(u32::MAX as u64) as u32
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, sk: &mut CcSock, rs: &RateSample, ctx: &Ctx) {
        self.update_congestion_signals(sk, rs, ctx);
        self.update_ack_aggregation(sk, rs);
        self.check_loss_too_high_in_startup(sk, rs);
        self.check_full_bw_reached(rs, ctx);
        self.check_drain(sk);
        self.update_cycle_phase(sk, rs, ctx);
        self.update_min_rtt(sk, rs);
    }

    /// `bbr_note_loss`: this round trip saw loss.
    fn note_loss(&mut self, sk: &CcSock) {
        if !self.loss_in_round {
            self.loss_round_delivered = sk.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    /// `bbr_init`.
    fn init(&mut self, sk: &mut CcSock) {
        self.init_cwnd = sk.cwnd.min(0x7f);
        self.prior_cwnd = 0;
        sk.ssthresh = super::INFINITE_SSTHRESH;
        self.next_rtt_delivered = sk.delivered;
        self.prev_ca_state = CaState::Open;
        self.mss = sk.mss;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.probe_rtt_min_us = sk.min_rtt_us;
        self.probe_rtt_min_stamp = jiffies(sk);
        self.min_rtt_us = sk.min_rtt_us;
        self.min_rtt_stamp = jiffies(sk);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(sk);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.cycle_mstamp = 0;
        self.cycle_idx = Phase::Up;
        self.mode = Mode::Startup;
        self.ack_epoch_mstamp = now_us(sk);
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0, 0];
        // The ECN mark rate is sampled from the end of the first full flight on.
        self.loss_round_delivered = sk.delivered + 1;
        self.loss_round_start = false;
        self.undo_bw_lo = 0;
        self.undo_inflight_lo = 0;
        self.undo_inflight_hi = 0;
        self.loss_events_in_round = 0;
        self.startup_ecn_rounds = 0;
        self.reset_congestion_signals();
        self.bw_lo = UNSET;
        self.bw_hi = [0, 0];
        self.inflight_lo = UNSET;
        self.inflight_hi = UNSET;
        self.reset_full_bw();
        self.bw_probe_up_cnt = UNSET;
        self.bw_probe_up_acks = 0;
        self.bw_probe_up_rounds = 0;
        self.probe_wait_us = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Init;
        self.rounds_since_probe = 0;
        self.bw_probe_samples = false;
        self.prev_probe_too_high = false;
        self.ecn_eligible = false;
        self.ecn_alpha = ECN_ALPHA_INIT;
        self.alpha_last_delivered = 0;
        self.alpha_last_delivered_ce = 0;
        self.pacing_gain = STARTUP_PACING_GAIN;
        self.cwnd_gain = STARTUP_CWND_GAIN;
        sk.pacing_enabled = true;
    }

    /// `bbr_ssthresh`: save cwnd and the loss-adapted bounds for a possible undo.
    fn ssthresh(&mut self, sk: &CcSock) -> u32 {
        self.save_cwnd(sk);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        sk.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn wants_precise_ce_echo(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn cong_control(&mut self, sk: &mut CcSock, rs: &RateSample) {
        self.update_round_start(sk, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.update_ecn_alpha(sk);
        }
        self.ecn_in_round |= self.ecn_eligible && rs.is_ece;
        let ctx = Ctx { sample_bw: Self::bw_sample(rs) };
        self.update_latest_delivery_signals(sk, rs, &ctx);
        self.update_model(sk, rs, &ctx);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(sk, bw, self.pacing_gain);
        self.set_cwnd(sk, rs.acked_sacked, bw, self.cwnd_gain);
        self.bound_cwnd_for_inflight_model(sk);
        self.advance_latest_delivery_signals(rs, &ctx);
        self.prev_ca_state = sk.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// `bbr_skb_marked_lost`: while probing, find whether (and at which packet) the loss rate
    /// of the flight leading up to this lost segment went too high.
    fn skb_marked_lost(&mut self, sk: &mut CcSock, skb: &LostSkb) {
        self.note_loss(sk);
        if !self.bw_probe_samples || !skb.has_tx_stamp {
            return;
        }
        let mut rs = RateSample {
            tx_in_flight: skb.tx_in_flight,
            lost: (sk.lost - skb.tx_lost) as u32,
            is_app_limited: skb.tx_app_limited,
            ..RateSample::default()
        };
        if self.is_inflight_too_high(&rs) {
            rs.tx_in_flight = Self::inflight_hi_from_lost_skb(&rs);
            self.handle_inflight_too_high(sk, &rs);
        }
    }

    /// `bbr_undo_cwnd`: the loss episode was spurious; restore the short- and long-term
    /// bounds saved by `ssthresh`.
    fn undo_cwnd(&mut self, _sk: &CcSock, _prior_cwnd: u32) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.prior_cwnd
    }

    /// `bbr_set_state`.
    fn set_state(&mut self, sk: &mut CcSock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
                // adapt_lower_bounds needs the cwnd from before the RTO.
                self.inflight_lo = sk.cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            // bbr_exit_loss_recovery
            sk.cwnd = sk.cwnd.max(self.prior_cwnd);
        }
    }

    /// `bbr_cwnd_event`: restart after idle. (The CE events drive the receiver's precise echo,
    /// which the simulator's receiver models; see `wants_precise_ce_echo`.)
    fn cwnd_event(&mut self, sk: &mut CcSock, ev: CaEvent) {
        if ev == CaEvent::TxStart && sk.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = now_us(sk);
            self.ack_epoch_acked = 0;
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(sk, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(sk);
            }
        }
    }

    fn state_label(&self) -> &'static str {
        self.phase_label()
    }

    fn bw_estimate_bps(&self) -> Option<f64> {
        Some(self.bw() as f64 * self.mss as f64 * 8.0 * 1e6 / BW_UNIT as f64)
    }

    fn min_rtt_estimate_us(&self) -> Option<u64> {
        (self.min_rtt_us != u32::MAX).then_some(self.min_rtt_us as u64)
    }
}

#[cfg(test)]
mod tests;
