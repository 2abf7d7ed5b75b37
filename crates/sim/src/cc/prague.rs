//! TCP Prague, the L4S scalable congestion control (RFC 9331 §4 requirements), after
//! L4STeam/linux net/ipv4/tcp_prague.c at commit 893e1479793e4cd975adf062fab3ff44206f76b1
//! (module version 0.7), in its fractional-window mode.
//!
//! Modelled:
//! * ECN always (TCP_CONG_NEEDS_ECN), ECT(1) on every packet (TCP_CONG_WANTS_ECT_1) and
//!   Accurate ECN feedback (TCP_CONG_NEEDS_ACCECN): the sender learns how many delivered
//!   packets were CE-marked on each ACK (`rs->ece_delta`, tcp/ecn.rs `AccEcn`);
//! * a fractional window `frac_cwnd` in 1/2^20 packets; cwnd follows it by at most one packet
//!   per ACK (`prague_update_cwnd`'s adjust step; a decrement sets ssthresh = cwnd, which ends
//!   slow start);
//! * slow start as Reno's until the first CE mark, which halves the window
//!   (`prague_alpha_mode` 0, the default: alpha starts at 0);
//! * additive increase on the ACKed packets that were not CE-marked: acked·ai/cwnd
//!   (`ai_ack_increase` = 1 packet per round, or, once RTT-independent, (srtt/25 ms)² packets
//!   per round for srtt < 25 ms: `prague_rate_scaled_ai_ack_increase`, so that every flow under
//!   25 ms grows its rate like one at 25 ms);
//! * alpha, the EWMA of the CE fraction with g = 1/16 in 1/2^24, kept upscaled by 16
//!   (`prague_update_alpha`), updated once per round (snd_una past the round's snd_nxt) and,
//!   once RTT-independent, at most every 25 ms;
//! * on entering CWR (an ACK with new CE counts, at most once per round through the CWR state
//!   of tcp_input.c, and at most every 25 ms once RTT-independent): frac_cwnd −=
//!   frac_cwnd·alpha/2 (`prague_enter_cwr`);
//! * a loss (Recovery or RTO) halves frac_cwnd (`prague_enter_loss`) and stops growth until the
//!   state is Open again;
//! * pacing at 100 % of max(frac_cwnd, in flight)/srtt, 200 % while cwnd < ssthresh/2
//!   (`prague_update_pacing_rate`);
//! * RTT independence from the 4th round after slow start (`prague_rtt_transition`).
//!
//! Left out: the rate-based window (`prague_cwnd_mode` 1, which the default mode 2 switches
//! to only for windows of at most 4 packets) and its ±3 % pacing offsets; MTU reduction for
//! small windows (`tcp_sync_mss`); the TSO burst bound (`prague_tso_segs`: the simulator paces
//! single packets); the fallback to Reno when AccECN is not negotiated (`prague_reno`; in the
//! simulator both ends run Prague). This commit has no classic-ECN-AQM detection (an older
//! version's `prague_ecn_fallback`, off by default, is gone).
use super::{CaEvent, CaState, CcSock, CongestionControl, RateSample};

/// PRAGUE_ALPHA_BITS: alpha is a fraction in 1/2^24.
pub const ALPHA_BITS: u32 = 24;
pub const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
/// CWND_UNIT: frac_cwnd is in 1/2^20 packets.
pub const CWND_UNIT: u32 = 20;
pub const ONE_CWND: u64 = 1 << CWND_UNIT;
/// PRAGUE_SHIFT_G: g = 1/16.
pub const SHIFT_G: u32 = 4;
/// MIN_CWND_RTT.
const MIN_CWND: u32 = 2;
/// DEFAULT_RTT_TRANSITION: rounds after slow start before RTT independence.
pub const RTT_TRANSITION: u32 = 4;
/// RTT_TARGET: 25 ms.
pub const RTT_TARGET_US: u64 = 25_000;
/// MAX_SCALED_RTT: no scaling above 100 ms.
const MAX_SCALED_RTT_US: u64 = 100_000;
/// MINIMUM_RATE: 100 kbit/s in bytes/s.
const MINIMUM_RATE: u64 = 12_500;
/// HSRTT_SHIFT: the slow srtt average's gain 1/128.
const HSRTT_SHIFT: u32 = 7;
/// RTT2SEC_SHIFT: (srtt in 1/8 µs) >> 23 ≈ seconds.
const RTT2SEC_SHIFT: u32 = 23;
/// The IP packet of a full segment (`tcp_mss_to_mtu`).
const MTU: u64 = crate::tcp::DATA_PKT_BYTES as u64;

#[derive(Debug, Clone, Default)]
pub struct Prague {
    /// Time of the last CWR reduction (`cwr_stamp`), ns.
    cwr_stamp_ns: u64,
    /// Time of the last alpha update (`alpha_stamp`), ns.
    alpha_stamp_ns: u64,
    /// alpha · 16, in 1/2^24 (`upscaled_alpha`).
    pub upscaled_alpha: u64,
    /// Window increase per non-CE ACKed packet, in 1/2^20 packets per packet of cwnd.
    pub ai_ack_increase: u64,
    /// srtt averaged with gain 1/128, in 1/8 µs << 7 (`hsrtt_us`).
    hsrtt: u64,
    /// The window in 1/2^20 packets.
    pub frac_cwnd: u64,
    /// Pacing rate the window gives, bytes/s (`rate_bytes`).
    rate_bytes: u64,
    loss_rate_bytes: u64,
    loss_cwnd: u32,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// snd_nxt at the start of the round.
    next_seq: u64,
    /// Rounds since slow start ended.
    pub round: u32,
    /// A CE mark has been seen: there is an AQM on the path.
    pub saw_ce: bool,
    /// In a loss reduction (Recovery / Loss) until Open.
    in_loss: bool,
}

impl Prague {
    pub fn new() -> Self {
        Self::default()
    }

    /// alpha in 1/2^24.
    pub fn alpha(&self) -> u64 {
        self.upscaled_alpha >> SHIFT_G
    }

    /// Linux's srtt_us (1/8 µs) from the socket's plain µs.
    fn srtt8(sk: &CcSock) -> u64 {
        sk.srtt_us << 3
    }

    /// `prague_is_rtt_indep`.
    fn is_rtt_indep(&self, sk: &CcSock) -> bool {
        !sk.in_slow_start() && self.round >= RTT_TRANSITION
    }

    /// `prague_rate_scaled_ai_ack_increase`: (rtt/target)² of a packet per round, rounded.
    pub fn rate_scaled_ai(srtt8: u64) -> u64 {
        let target = RTT_TARGET_US << 3;
        if srtt8 >= target {
            return ONE_CWND;
        }
        let num = (srtt8 << CWND_UNIT) * srtt8;
        let div = target * target;
        (num + div / 2) / div
    }

    /// `prague_ai_ack_increase`.
    fn update_ai_ack_increase(&mut self, sk: &CcSock) {
        let rtt = Self::srtt8(sk);
        self.ai_ack_increase = if self.round < RTT_TRANSITION || rtt == 0 || rtt > MAX_SCALED_RTT_US << 3 {
            ONE_CWND
        } else {
            Self::rate_scaled_ai(rtt)
        };
    }

    /// `prague_frac_cwnd_to_snd_cwnd`: rounded up, at least 2, at most the clamp.
    fn frac_to_cwnd(&self, sk: &CcSock) -> u32 {
        let c = ((self.frac_cwnd + ONE_CWND - 1) >> CWND_UNIT).min(u32::MAX as u64) as u32;
        c.max(MIN_CWND).min(sk.cwnd_clamp)
    }

    /// `prague_frac_cwnd_to_pacing_rate`: frac_cwnd · MTU / srtt, bytes/s.
    fn frac_to_rate(&self, sk: &CcSock) -> u64 {
        let mut rate = (1_000_000u64 << 3) * MTU;
        if sk.srtt_us > 0 {
            rate /= Self::srtt8(sk);
        }
        (((rate as u128) * (self.frac_cwnd as u128)) >> CWND_UNIT).max(MINIMUM_RATE as u128) as u64
    }

    /// `prague_pacing_rate_to_frac_cwnd`: rate_bytes over the slow srtt, in 1/2^20 packets.
    fn rate_to_frac(&self, sk: &CcSock) -> u64 {
        let rtt = match self.hsrtt >> HSRTT_SHIFT {
            0 => Self::srtt8(sk),
            r => r,
        };
        let bytes = ((self.rate_bytes as u128 * rtt as u128) >> (RTT2SEC_SHIFT - CWND_UNIT)) as u64;
        bytes.div_ceil(MTU)
    }

    /// `prague_new_round`.
    fn new_round(&mut self, sk: &CcSock) {
        self.next_seq = sk.snd_nxt;
        self.old_delivered = sk.delivered;
        self.old_delivered_ce = sk.delivered_ce;
        if !sk.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = RTT_TRANSITION;
            }
        }
        self.update_ai_ack_increase(sk);
    }

    /// `prague_should_update_ewma`: a round has passed, and, once RTT-independent, 25 ms too.
    fn should_update_ewma(&self, sk: &CcSock) -> bool {
        sk.snd_una >= self.next_seq
            && (!self.is_rtt_indep(sk) || sk.now_ns.saturating_sub(self.alpha_stamp_ns) >= RTT_TARGET_US * 1000)
    }

    /// One EWMA step on the upscaled alpha: alpha·16 ← alpha·16 − alpha·16/16 + F, with F the
    /// CE fraction of the round in 1/2^24, capped at 16 (`prague_update_alpha`).
    pub fn next_upscaled_alpha(upscaled: u64, delivered: u64, delivered_ce: u64) -> u64 {
        let f = if delivered_ce > 0 { (delivered_ce << ALPHA_BITS) / delivered.max(1) } else { 0 };
        (upscaled - (upscaled >> SHIFT_G) + f).min(MAX_ALPHA << SHIFT_G)
    }

    /// `prague_update_alpha` (no alpha before the first CE mark), then a new round.
    fn update_alpha(&mut self, sk: &CcSock) {
        if self.saw_ce {
            let delivered = sk.delivered - self.old_delivered;
            let delivered_ce = sk.delivered_ce - self.old_delivered_ce;
            self.upscaled_alpha = Self::next_upscaled_alpha(self.upscaled_alpha, delivered, delivered_ce);
            self.alpha_stamp_ns = sk.now_ns;
        }
        self.hsrtt = self.hsrtt + Self::srtt8(sk) - (self.hsrtt >> HSRTT_SHIFT);
        self.new_round(sk);
    }

    /// `prague_update_cwnd`.
    fn update_cwnd(&mut self, sk: &mut CcSock, rs: &RateSample) {
        let mut acked = rs.acked_sacked as i64;
        if rs.ece_delta > 0 {
            if !self.saw_ce {
                // prague_alpha_mode 0: the first mark halves the window.
                self.frac_cwnd = (self.frac_cwnd + 1) >> 1;
            }
            self.saw_ce = true;
            acked -= rs.ece_delta as i64;
        }
        if acked > 0 && !self.in_loss && sk.is_cwnd_limited {
            let mut acked = acked as u64;
            if sk.in_slow_start() {
                acked = sk.slow_start(acked as u32) as u64;
                self.frac_cwnd = (sk.cwnd as u64) << CWND_UNIT;
                if acked == 0 {
                    self.update_ai_ack_increase(sk);
                    return;
                }
            }
            // acked · ai / cwnd, rounded; at least `acked` units (1/2^20 packet each).
            let mut increase = acked * self.ai_ack_increase;
            if self.frac_cwnd > 0 {
                let num = (increase as u128) << CWND_UNIT;
                let d = self.frac_cwnd as u128;
                increase = ((num + d / 2) / d) as u64;
            }
            self.frac_cwnd += acked.max(increase);
            self.rate_bytes = (self.rate_bytes + acked).max(self.frac_to_rate(sk));
        }
        // Step-wise adjustment of cwnd towards the fractional window.
        let target = self.frac_to_cwnd(sk);
        if sk.cwnd > target {
            sk.cwnd -= 1;
            sk.ssthresh = sk.cwnd;
            self.update_ai_ack_increase(sk);
        } else if sk.cwnd < target {
            sk.cwnd += 1;
            self.update_ai_ack_increase(sk);
        }
    }

    /// `prague_update_pacing_rate` (fractional-window mode).
    fn update_pacing_rate(&mut self, sk: &mut CcSock) {
        let max_inflight = (self.frac_cwnd >> CWND_UNIT).max(sk.in_flight as u64);
        let mut rate = (1_000_000u64 << 3) * MTU;
        if sk.srtt_us > 0 {
            rate /= Self::srtt8(sk);
        }
        rate = (rate.saturating_mul(max_inflight)).max(MINIMUM_RATE);
        self.rate_bytes = rate;
        if sk.cwnd < sk.ssthresh / 2 {
            rate = rate.saturating_mul(2);
        }
        sk.pacing_rate = rate.min(sk.max_pacing_rate);
    }

    /// `prague_enter_loss`.
    fn enter_loss(&mut self, sk: &CcSock) {
        self.loss_cwnd = sk.cwnd;
        self.loss_rate_bytes = self.rate_bytes;
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.rate_bytes = self.frac_to_rate(sk);
        self.in_loss = true;
    }

    /// `prague_enter_cwr`: frac_cwnd −= frac_cwnd · alpha / 2, rounded to nearest.
    fn enter_cwr(&mut self, sk: &CcSock) {
        if self.is_rtt_indep(sk) && RTT_TARGET_US * 1000 > sk.now_ns.saturating_sub(self.cwr_stamp_ns) {
            return;
        }
        self.cwr_stamp_ns = sk.now_ns;
        self.frac_cwnd -= Self::cwr_reduction(self.alpha(), self.frac_cwnd);
        self.rate_bytes = self.frac_to_rate(sk);
    }

    /// (alpha · frac_cwnd + 1/2) >> 25: half of alpha's share of the window.
    pub fn cwr_reduction(alpha: u64, frac_cwnd: u64) -> u64 {
        ((alpha as u128 * frac_cwnd as u128 + MAX_ALPHA as u128) >> (ALPHA_BITS + 1)) as u64
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    /// `prague_init`: paced, alpha 0, frac_cwnd = cwnd, the first round starts now.
    fn init(&mut self, sk: &mut CcSock) {
        sk.pacing_enabled = true;
        self.alpha_stamp_ns = sk.now_ns;
        self.upscaled_alpha = 0;
        self.frac_cwnd = (sk.cwnd as u64) << CWND_UNIT;
        self.rate_bytes = if sk.srtt_us > 0 {
            let per_pkt = (1_000_000u64 << 3) * MTU / Self::srtt8(sk);
            (per_pkt * sk.cwnd.max(sk.in_flight) as u64).max(MINIMUM_RATE)
        } else {
            MINIMUM_RATE
        };
        self.update_pacing_rate(sk);
        self.loss_rate_bytes = 0;
        self.round = 0;
        self.saw_ce = sk.delivered_ce > 0;
        self.hsrtt = if sk.srtt_us > 0 { Self::srtt8(sk) << HSRTT_SHIFT } else { 1 << (HSRTT_SHIFT + 3) };
        self.new_round(sk);
    }

    /// `prague_ssthresh`: unchanged (the reductions act on frac_cwnd).
    fn ssthresh(&mut self, sk: &CcSock) -> u32 {
        sk.ssthresh
    }

    /// `prague_state`.
    fn set_state(&mut self, sk: &mut CcSock, new_state: CaState) {
        if new_state == sk.ca_state {
            return;
        }
        match new_state {
            CaState::Recovery => self.enter_loss(sk),
            CaState::Cwr => self.enter_cwr(sk),
            CaState::Open => self.in_loss = false,
            _ => {}
        }
    }

    /// `prague_cwnd_event`: an RTO is a loss.
    fn cwnd_event(&mut self, sk: &mut CcSock, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.enter_loss(sk);
        }
    }

    /// `prague_cwnd_undo`.
    fn undo_cwnd(&mut self, sk: &CcSock, _prior_cwnd: u32) -> u32 {
        self.in_loss = false;
        self.rate_bytes = self.rate_bytes.max(self.loss_rate_bytes);
        self.frac_cwnd = self.rate_to_frac(sk);
        self.loss_cwnd.max(sk.cwnd)
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `prague_cong_control`.
    fn cong_control(&mut self, sk: &mut CcSock, rs: &RateSample) {
        self.update_cwnd(sk, rs);
        if self.should_update_ewma(sk) {
            self.update_alpha(sk);
        }
        self.update_pacing_rate(sk);
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    fn needs_accecn(&self) -> bool {
        true
    }

    fn wants_ect_1(&self) -> bool {
        true
    }

    /// Prague is run over the fq qdisc (L4STeam's setup for tcp_prague.c): its pacing rate is
    /// enforced by fq's Earliest Departure Time, not by TCP's internal pacing.
    fn wants_edt_fq(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket in congestion avoidance: cwnd 100, srtt 20 ms, cwnd-limited, Open.
    fn sock() -> CcSock {
        let mut sk = CcSock::new(1448, 100, 10_000);
        sk.ssthresh = 100;
        sk.srtt_us = 20_000;
        sk.is_cwnd_limited = true;
        sk
    }

    fn ack(acked: u32, ce: u32) -> RateSample {
        RateSample { acked_sacked: acked, ece_delta: ce, ..Default::default() }
    }

    #[test]
    fn alpha_is_an_ewma_with_gain_one_sixteenth() {
        // From alpha 0, one round with every packet marked: alpha = g·1 = 1/16 (2^20 in 1/2^24).
        let up = Prague::next_upscaled_alpha(0, 100, 100);
        assert_eq!(up >> SHIFT_G, MAX_ALPHA / 16);
        // A second such round: (1 − 1/16)/16 + 1/16 = 31/256.
        let up = Prague::next_upscaled_alpha(up, 100, 100);
        assert_eq!(up >> SHIFT_G, MAX_ALPHA * 31 / 256);
        // Unmarked rounds decay it by 15/16 each; F = 25/100 adds a quarter of 1/16.
        assert_eq!(Prague::next_upscaled_alpha(MAX_ALPHA << SHIFT_G, 10, 0) >> SHIFT_G, MAX_ALPHA * 15 / 16);
        assert_eq!(Prague::next_upscaled_alpha(0, 100, 25) >> SHIFT_G, MAX_ALPHA / 64);
    }

    #[test]
    fn cwr_cuts_the_window_by_alpha_over_two() {
        // alpha = 1/2, 100 packets: −25 packets. alpha = 1: −50 (DCTCP's halving at full marking).
        assert_eq!(Prague::cwr_reduction(MAX_ALPHA / 2, 100 << CWND_UNIT), 25 << CWND_UNIT);
        assert_eq!(Prague::cwr_reduction(MAX_ALPHA, 100 << CWND_UNIT), 50 << CWND_UNIT);
        let mut p = Prague::new();
        let mut sk = sock();
        p.init(&mut sk);
        p.upscaled_alpha = (MAX_ALPHA / 2) << SHIFT_G;
        p.set_state(&mut sk, CaState::Cwr);
        assert_eq!(p.frac_cwnd, 75 << CWND_UNIT);
        // cwnd then steps down by one packet per ACK to 75, ssthresh following it.
        sk.ca_state = CaState::Cwr;
        sk.is_cwnd_limited = false;
        for _ in 0..30 {
            p.cong_control(&mut sk, &ack(0, 0));
        }
        assert_eq!((sk.cwnd, sk.ssthresh), (75, 75));
    }

    #[test]
    fn the_first_mark_halves_the_window_and_marked_packets_do_not_grow_it() {
        let mut p = Prague::new();
        let mut sk = sock();
        p.init(&mut sk);
        assert_eq!(p.alpha(), 0, "prague_alpha_mode 0: alpha starts at 0");
        // 2 acked, 2 of them CE: the first mark halves frac_cwnd (100 → 50) and nothing grows.
        p.cong_control(&mut sk, &ack(2, 2));
        assert!(p.saw_ce);
        assert_eq!(p.frac_cwnd, 50 << CWND_UNIT);
        assert_eq!(sk.cwnd, 99, "one packet per ACK towards 50");
    }

    #[test]
    fn additive_increase_is_one_packet_per_round_before_rtt_independence() {
        // 100 packets acked one by one at cwnd 100: +1/100 each (ai = 1 packet), +1 in all
        // (the window grows from 100 to ~101 within the round: 100·(1/100.5) ≈ 0.995 to 1).
        let mut p = Prague::new();
        let mut sk = sock();
        sk.snd_nxt = 1000; // the round ends when snd_una reaches 1000: not within this test
        p.init(&mut sk);
        p.saw_ce = true;
        for _ in 0..100 {
            p.cong_control(&mut sk, &ack(1, 0));
        }
        let grown = p.frac_cwnd as f64 / ONE_CWND as f64 - 100.0;
        assert!((grown - 1.0).abs() < 0.01, "{grown}");
        assert_eq!(sk.cwnd, 101);
    }

    #[test]
    fn rtt_independence_scales_the_increase_by_rtt_over_25ms_squared() {
        // 5 ms: (5/25)² = 0.04 of a packet per round; 25 ms and above: 1.
        let ai = Prague::rate_scaled_ai(5_000 << 3);
        assert_eq!(ai, (ONE_CWND as f64 * 0.04).round() as u64);
        assert_eq!(Prague::rate_scaled_ai(25_000 << 3), ONE_CWND);
        assert_eq!(Prague::rate_scaled_ai(60_000 << 3), ONE_CWND);
        // The scaling starts at the 4th round after slow start.
        let mut p = Prague::new();
        let mut sk = sock();
        sk.srtt_us = 5_000;
        p.init(&mut sk);
        assert_eq!(p.ai_ack_increase, ONE_CWND);
        for r in 1..=4 {
            sk.snd_una = sk.snd_nxt;
            sk.snd_nxt += 100;
            sk.now_ns += 30_000_000;
            p.cong_control(&mut sk, &ack(0, 0));
            assert_eq!(p.round, r + 1);
        }
        assert_eq!(p.ai_ack_increase, ai);
    }

    #[test]
    fn loss_halves_the_window_and_stops_growth_until_open() {
        let mut p = Prague::new();
        let mut sk = sock();
        p.init(&mut sk);
        p.set_state(&mut sk, CaState::Recovery);
        assert_eq!(p.frac_cwnd, 50 << CWND_UNIT);
        sk.ca_state = CaState::Recovery;
        let before = p.frac_cwnd;
        p.cong_control(&mut sk, &ack(10, 0));
        assert_eq!(p.frac_cwnd, before, "no growth in loss");
        p.set_state(&mut sk, CaState::Open);
        sk.ca_state = CaState::Open;
        p.cong_control(&mut sk, &ack(10, 0));
        assert!(p.frac_cwnd > before);
    }

    #[test]
    fn pacing_is_the_window_over_srtt() {
        // cwnd 100 at 20 ms: 100 · 1500 B / 0.02 s = 7.5 MB/s; doubled while cwnd < ssthresh/2.
        let mut p = Prague::new();
        let mut sk = sock();
        p.init(&mut sk);
        p.cong_control(&mut sk, &ack(0, 0));
        assert_eq!(sk.pacing_rate, 7_500_000);
        assert!(sk.pacing_enabled);
        sk.ssthresh = 1000;
        p.cong_control(&mut sk, &ack(0, 0));
        assert_eq!(sk.pacing_rate, 15_000_000);
    }
}
