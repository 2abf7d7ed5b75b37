//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257), after Linux 6.18 net/ipv4/tcp_dctcp.c and
//! tcp_dctcp.h. The stored Linux copy read for this file is a 6.x tree (its `dctcp_update_alpha`
//! reads `tp->delivered` / `tp->delivered_ce`, as 6.18 does); where the version matters, the
//! hook order is 6.14+'s: `tcp_in_ack_event` runs after `tcp_clean_rtx_queue`, so the counters
//! already include the ACK being processed.
//!
//! Sender:
//! * window growth is Reno's (`tcp_reno_cong_avoid`);
//! * `alpha`, the smoothed fraction of CE-marked packets in 1/1024, starts at 1024
//!   (`dctcp_alpha_on_init`). Once per window of data — when snd_una reaches the `snd_nxt`
//!   remembered at the previous update (`dctcp_update_alpha`) — it decays by alpha >> g
//!   (g = 4, i.e. 1/16; the whole of alpha once that shift is 0, `min_not_zero`) and gains
//!   (delivered_ce << (10 − g)) / delivered over the window, capped at 1024;
//! * an ECN-Echo makes the sender enter CWR (tcp_input.c, once per window) towards
//!   `ssthresh` = max(cwnd − cwnd·alpha/2048, 2) (`dctcp_ssthresh`), reached by PRR;
//! * a loss halves instead: entering Recovery (`dctcp_state`) or an RTO
//!   (`dctcp_cwnd_event`, CA_EVENT_LOSS) sets ssthresh = max(cwnd/2, 2)
//!   (`dctcp_react_to_loss`);
//! * undo restores max(cwnd, cwnd at the last reduction) (`dctcp_cwnd_undo`).
//!
//! Receiver (both ends run DCTCP): the CE state machine of `dctcp_ece_ack_update` lives in
//! tcp/ecn.rs (`ReceiverEcn` in DCTCP mode), since the simulated receiver has no algorithm
//! object; `needs_ecn` (TCP_CONG_NEEDS_ECN) selects it and makes the connection ECN-capable.
//!
//! Left out: the fallback to Reno when the peer refuses ECN (`dctcp_reno`) — in the simulator
//! ECN is always negotiated for DCTCP; the module parameters (g and the initial alpha are the
//! defaults); `get_info`.
use super::reno::Reno;
use super::{CaEvent, CaState, CcSock, CongestionControl};

/// DCTCP_MAX_ALPHA: alpha is a fraction in 1/1024.
pub const MAX_ALPHA: u32 = 1024;
/// `dctcp_shift_g` default: g = 1/2^4.
pub const SHIFT_G: u32 = 4;

#[derive(Debug, Clone)]
pub struct Dctcp {
    /// `dctcp_alpha`, in 1/1024.
    pub alpha: u32,
    /// snd_nxt at the last alpha update: the end of the current observation window.
    next_seq: u64,
    /// `tp->delivered` / `tp->delivered_ce` at the last alpha update.
    old_delivered: u64,
    old_delivered_ce: u64,
    /// cwnd when ssthresh was last set (undo restores at least this).
    loss_cwnd: u32,
}

impl Default for Dctcp {
    fn default() -> Self {
        Self::new()
    }
}

impl Dctcp {
    pub fn new() -> Self {
        Dctcp { alpha: MAX_ALPHA, next_seq: 0, old_delivered: 0, old_delivered_ce: 0, loss_cwnd: 0 }
    }

    /// `dctcp_reset`: start a new observation window at the current snd_nxt.
    fn reset(&mut self, sk: &CcSock) {
        self.next_seq = sk.snd_nxt;
        self.old_delivered = sk.delivered;
        self.old_delivered_ce = sk.delivered_ce;
    }

    /// One step of alpha ← (1 − g)·alpha + g·F, in 1/1024, with `delivered` packets of which
    /// `delivered_ce` came back with ECN-Echo over the window (the integer arithmetic of
    /// `dctcp_update_alpha`).
    pub fn next_alpha(alpha: u32, delivered: u64, delivered_ce: u64) -> u32 {
        let decay = alpha >> SHIFT_G;
        let mut a = alpha - if decay == 0 { alpha } else { decay };
        if delivered_ce > 0 {
            let gain = (delivered_ce << (10 - SHIFT_G)) / delivered.max(1);
            a = (a as u64 + gain).min(MAX_ALPHA as u64) as u32;
        }
        a
    }

    /// `dctcp_react_to_loss`: a loss halves the window, whatever alpha says.
    fn react_to_loss(&mut self, sk: &mut CcSock) {
        self.loss_cwnd = sk.cwnd;
        sk.ssthresh = (sk.cwnd >> 1).max(2);
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    /// `dctcp_init` on an ECN connection: alpha 1, the first window starts now.
    fn init(&mut self, sk: &mut CcSock) {
        self.alpha = MAX_ALPHA;
        self.loss_cwnd = 0;
        self.reset(sk);
    }

    /// `dctcp_ssthresh`: cwnd·(1 − alpha/2), at least 2.
    fn ssthresh(&mut self, sk: &CcSock) -> u32 {
        self.loss_cwnd = sk.cwnd;
        let cut = ((sk.cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (sk.cwnd - cut).max(2)
    }

    /// `tcp_reno_cong_avoid`, as the module's `.cong_avoid`.
    fn cong_avoid(&mut self, sk: &mut CcSock, ack: u64, acked: u32) {
        Reno.cong_avoid(sk, ack, acked);
    }

    /// `dctcp_state`: entering Recovery (not re-entering it) is a loss.
    fn set_state(&mut self, sk: &mut CcSock, new_state: CaState) {
        if new_state == CaState::Recovery && sk.ca_state != CaState::Recovery {
            self.react_to_loss(sk);
        }
    }

    /// `dctcp_cwnd_event`: an RTO is a loss (the CE events are the receiver's, in tcp/ecn.rs).
    fn cwnd_event(&mut self, sk: &mut CcSock, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.react_to_loss(sk);
        }
    }

    /// `dctcp_update_alpha`: once snd_una has passed the end of the window, fold the window's
    /// CE fraction into alpha and start the next window.
    fn in_ack_event(&mut self, sk: &mut CcSock, _ece: bool) {
        if sk.snd_una < self.next_seq {
            return;
        }
        let delivered = sk.delivered - self.old_delivered;
        let delivered_ce = sk.delivered_ce - self.old_delivered_ce;
        self.alpha = Self::next_alpha(self.alpha, delivered, delivered_ce);
        self.reset(sk);
    }

    /// `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, sk: &CcSock, _prior_cwnd: u32) -> u32 {
        sk.cwnd.max(self.loss_cwnd)
    }

    /// TCP_CONG_NEEDS_ECN.
    fn needs_ecn(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux keeps these counters in u32 and shifts delivered_ce by 10 − g = 6 bits; the
    /// simulator's u64 gives the same result for any window below 2^26 packets.
    #[test]
    fn every_packet_marked_keeps_alpha_at_one() {
        // 1024 − 64 + (100 << 6) / 100 = 960 + 64 = 1024.
        assert_eq!(Dctcp::next_alpha(1024, 100, 100), 1024);
        assert_eq!(Dctcp::next_alpha(1024, 7, 7), 1024);
    }

    #[test]
    fn no_marks_decay_by_one_sixteenth() {
        // 1024 − 64 = 960; 960 − 60 = 900; 900 − 56 = 844.
        assert_eq!(Dctcp::next_alpha(1024, 100, 0), 960);
        assert_eq!(Dctcp::next_alpha(960, 100, 0), 900);
        assert_eq!(Dctcp::next_alpha(900, 100, 0), 844);
        // Below 16 the shift gives 0 and min_not_zero takes all of alpha: 15 → 0.
        assert_eq!(Dctcp::next_alpha(16, 100, 0), 15);
        assert_eq!(Dctcp::next_alpha(15, 100, 0), 0);
        assert_eq!(Dctcp::next_alpha(0, 100, 0), 0);
    }

    #[test]
    fn half_marked_converges_to_512() {
        // F = 1/2: the gain is (50 << 6) / 100 = 32 per window, and a ← a − a/16 + 32 has the
        // fixed point a* = F·1024 = 512. With the integer shift, a − floor(a/16) + 32 = a holds
        // for every a in 512..=527 (floor(a/16) = 32), so alpha stops inside that band: from
        // above at 527, from below at 512. From 1024 the distance shrinks by 15/16 per window,
        // 497·(15/16)^60 ≈ 10, so after 60 windows alpha is within 3 % of 512.
        let mut a = 1024;
        for _ in 0..60 {
            a = Dctcp::next_alpha(a, 100, 50);
        }
        assert!((512..=540).contains(&a), "alpha {a}");
        for _ in 0..200 {
            a = Dctcp::next_alpha(a, 100, 50);
        }
        assert_eq!(a, 527);
        // From 0 it climbs to the lower edge of the band.
        let mut a = 0;
        for _ in 0..300 {
            a = Dctcp::next_alpha(a, 100, 50);
        }
        assert_eq!(a, 512);
    }

    #[test]
    fn ssthresh_cuts_by_half_alpha() {
        let mut d = Dctcp::new();
        let mut sk = CcSock::new(1448, 10, u32::MAX / 2);
        sk.cwnd = 100;
        // alpha = 1: half the window.
        assert_eq!(d.ssthresh(&sk), 50);
        // alpha = 512/1024: 100 − 100·512/2048 = 75.
        d.alpha = 512;
        assert_eq!(d.ssthresh(&sk), 75);
        // alpha = 64/1024: 100 − floor(6400/2048) = 97.
        d.alpha = 64;
        assert_eq!(d.ssthresh(&sk), 97);
        // alpha = 0: no cut; never below 2.
        d.alpha = 0;
        assert_eq!(d.ssthresh(&sk), 100);
        sk.cwnd = 2;
        d.alpha = 1024;
        assert_eq!(d.ssthresh(&sk), 2);
        // undo returns the cwnd the last ssthresh saw.
        sk.cwnd = 1;
        assert_eq!(d.undo_cwnd(&sk, 0), 2);
    }

    #[test]
    fn alpha_updates_once_per_window() {
        let mut d = Dctcp::new();
        let mut sk = CcSock::new(1448, 10, u32::MAX / 2);
        sk.snd_nxt = 10;
        d.init(&mut sk);
        // Five of the window's ten packets delivered, all with ECE: no update yet.
        sk.snd_una = 5;
        sk.delivered = 5;
        sk.delivered_ce = 5;
        sk.snd_nxt = 20;
        d.in_ack_event(&mut sk, true);
        assert_eq!(d.alpha, 1024);
        // The window is complete: 10 delivered, 5 with ECE → 960 + (5 << 6) / 10 = 992.
        sk.snd_una = 10;
        sk.delivered = 10;
        d.in_ack_event(&mut sk, false);
        assert_eq!(d.alpha, 992);
        // The next window ends at snd_nxt = 20; nothing marked in it → 992 − 62 = 930.
        sk.snd_una = 19;
        sk.delivered = 19;
        d.in_ack_event(&mut sk, false);
        assert_eq!(d.alpha, 992);
        sk.snd_una = 20;
        sk.delivered = 20;
        d.in_ack_event(&mut sk, false);
        assert_eq!(d.alpha, 930);
    }

    #[test]
    fn losses_halve() {
        let mut d = Dctcp::new();
        d.alpha = 100;
        let mut sk = CcSock::new(1448, 10, u32::MAX / 2);
        sk.cwnd = 80;
        sk.ca_state = CaState::Open;
        d.set_state(&mut sk, CaState::Recovery);
        assert_eq!(sk.ssthresh, 40);
        // Recovery → Recovery is no new loss.
        sk.ca_state = CaState::Recovery;
        sk.ssthresh = 77;
        d.set_state(&mut sk, CaState::Recovery);
        assert_eq!(sk.ssthresh, 77);
        // An RTO.
        sk.cwnd = 30;
        d.cwnd_event(&mut sk, CaEvent::Loss);
        assert_eq!(sk.ssthresh, 15);
        // CWR (an ECN-Echo) is not a loss: ssthresh comes from `ssthresh`.
        sk.ca_state = CaState::Open;
        d.set_state(&mut sk, CaState::Cwr);
        assert_eq!(sk.ssthresh, 15);
    }
}
