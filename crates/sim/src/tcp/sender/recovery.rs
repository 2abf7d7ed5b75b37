//! Loss detection, recovery and undo: the counterpart of Linux `net/ipv4/tcp_recovery.c`
//! (RACK: `tcp_rack_mark_lost`, `tcp_rack_detect_loss`, `tcp_rack_advance`,
//! `tcp_rack_reo_wnd`, `tcp_rack_update_reo_wnd`) and of the recovery half of
//! `net/ipv4/tcp_input.c` (`tcp_fastretrans_alert`, `tcp_enter_recovery`, `tcp_enter_loss`,
//! `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction`, `tcp_undo_cwnd_reduction`,
//! `tcp_try_undo_*`, `tcp_try_to_open`, and ECN's `tcp_enter_cwr`).
//!
//! ECN (RFC 3168 §6.1.2, Linux 6.x): an ACK with ECE (FLAG_ECE) in Open or Disorder enters CWR
//! (`tcp_try_to_open` → `tcp_enter_cwr`): ssthresh from the algorithm, PRR towards it on the
//! following ACKs (`tcp_cong_control` → `tcp_cwnd_reduction`), CWR queued for the next new
//! segment, and no further reduction until snd_una passes the high_seq of the entry — at most
//! once per window. Losses during CWR enter Recovery without a second reduction
//! (`tcp_enter_recovery` checks `tcp_in_cwnd_reduction`). An algorithm with its own
//! `cong_control` (BBR) keeps its cwnd: only the state changes (`tcp_end_cwnd_reduction`
//! returns early for it, and BBR v1 acts on Recovery and Loss only).
use super::{
    Sender, TimerKind, DUPTHRESH, F_EVER_RETRANS, F_LOST, F_RETRANS, F_SACKED, NIL, NO_STAMP, RACK_RECOVERY_THRESH,
    REO_TIMEOUT_MIN_US,
};
use crate::cc::{CaEvent, CaState, LostSkb};
use crate::tcp::{ts_tick, Pkt};
use crate::time::{Nanos, NS_PER_JIFFY, NS_PER_US};

impl Sender {
    /// `tcp_current_ssthresh`.
    fn current_ssthresh(&self) -> u32 {
        if matches!(self.sk.ca_state, CaState::Cwr | CaState::Recovery) {
            self.sk.ssthresh
        } else {
            self.sk.ssthresh.max((self.sk.cwnd >> 1) + (self.sk.cwnd >> 2))
        }
    }

    /// `tcp_packet_delayed`: the echoed timestamp predates the first retransmission, so the
    /// original transmission reached the receiver.
    /// `retrans_stamp` is kept in ns; Linux keeps it in TS ticks (`tcp_skb_timestamp_ts`), so
    /// the comparison is at millisecond resolution. Without timestamps there is no echo. With
    /// no retransmission yet in this episode (retrans_stamp 0) snd_una advancing means the
    /// segment was only delayed (Linux 6.x, SACK connections).
    fn packet_delayed(&self, tsecr: u64) -> bool {
        if self.retrans_stamp == 0 {
            return true;
        }
        self.timestamps && tsecr != 0 && tsecr < ts_tick(self.retrans_stamp)
    }

    /// `tcp_fastretrans_alert` (Linux 6.x): the recovery state machine, run on every ACK.
    /// `ece`: the ACK carries ECN-Echo on an ECN connection (FLAG_ECE). Returns true when RACK
    /// armed the reorder timer.
    pub(super) fn fastretrans_alert(
        &mut self,
        now: Nanos,
        ack: &Pkt,
        una_advanced: bool,
        prior_snd_una: u64,
        ece: bool,
    ) -> bool {
        let tsecr = ack.tsecr;
        // D. State exit when high_seq is acknowledged.
        if self.sk.ca_state == CaState::Open {
            self.retrans_stamp = 0;
        } else if self.sk.ca_state == CaState::Cwr && self.snd_una > self.high_seq {
            // CWR is held until something *above* high_seq is ACKed, so that the CWR flag
            // (sent at or after high_seq) has reached the receiver.
            self.end_cwnd_reduction();
            self.set_state(CaState::Open);
        } else if self.sk.ca_state == CaState::Recovery && self.snd_una >= self.high_seq {
            // tcp_try_undo_recovery leaves Recovery (state Open) whether or not it undid, so
            // PRR does not overwrite an undone cwnd; without an undo cwnd = ssthresh.
            self.try_undo_recovery(tsecr);
            self.end_cwnd_reduction();
        }
        // E. Process the state.
        match self.sk.ca_state {
            CaState::Recovery => {
                if una_advanced && self.try_undo_partial(tsecr, prior_snd_una) {
                    return false;
                }
                if self.try_undo_dsack() {
                    self.try_keep_open();
                }
                let armed = self.identify_loss(now);
                if self.sk.ca_state != CaState::Recovery && self.lost_out > 0 {
                    // Undo reverted the state but loss is evident: a new Recovery.
                    self.enter_recovery(ece);
                }
                armed
            }
            CaState::Loss => {
                self.process_loss(tsecr, una_advanced);
                let prior_retrans = self.retrans_out;
                let armed = self.identify_loss(now);
                let lost_retrans = prior_retrans > self.retrans_out;
                if !(self.sk.ca_state == CaState::Open || lost_retrans) {
                    return armed;
                }
                // The cwnd was undone or retransmissions were lost: change state.
                self.open_or_recover(now, ece) || armed
            }
            _ => self.open_or_recover(now, ece),
        }
    }

    /// The default branch of `tcp_fastretrans_alert` (Open, Disorder, CWR): undo on D-SACKs,
    /// detect losses, and enter Recovery if there are any (`tcp_time_to_recover` with RACK:
    /// lost_out > 0); otherwise `tcp_try_to_open`, which reacts to ECE.
    fn open_or_recover(&mut self, now: Nanos, ece: bool) -> bool {
        if self.sk.ca_state <= CaState::Disorder {
            self.try_undo_dsack();
        }
        let armed = self.identify_loss(now);
        if self.lost_out == 0 {
            self.try_to_open(ece);
        } else {
            self.enter_recovery(ece);
        }
        armed
    }

    /// `tcp_process_loss` without F-RTO: undo a spurious RTO, or leave Loss once everything
    /// sent before it is acknowledged.
    fn process_loss(&mut self, tsecr: u64, una_advanced: bool) {
        let recovered = self.snd_una >= self.high_seq;
        if una_advanced && self.try_undo_loss(tsecr) {
            return;
        }
        if recovered {
            self.try_undo_recovery(tsecr);
        }
    }

    /// `tcp_rack_mark_lost`; returns true when it armed the reorder timer.
    fn identify_loss(&mut self, now: Nanos) -> bool {
        if !self.rack_advanced || self.packets_out() == 0 {
            return false;
        }
        self.rack_advanced = false;
        if let Some(reo_us) = self.rack_detect_loss(now) {
            // Linux 6.x: usecs_to_jiffies(timeout + TCP_REO_TIMEOUT_MIN) (rounded up to a
            // jiffy; kernels before 6.x added 2 jiffies instead).
            let ns = ((reo_us + REO_TIMEOUT_MIN_US) * NS_PER_US).div_ceil(NS_PER_JIFFY) * NS_PER_JIFFY;
            self.timer = Some((now + ns, TimerKind::ReorderTimeout));
            return true;
        }
        false
    }

    /// `tcp_rack_reo_wnd`.
    fn reo_wnd_us(&self) -> u64 {
        if !self.reord_seen && (self.sk.ca_state >= CaState::Recovery || self.sacked_out >= DUPTHRESH) {
            return 0;
        }
        if self.rtt.min_rtt_us == u32::MAX {
            return 0;
        }
        (self.rtt.min_rtt_us as u64 / 4 * self.reo_wnd_steps as u64).min(self.rtt.srtt_us())
    }

    /// `tcp_rack_update_reo_wnd`: widen the window by a step per round with D-SACKs.
    pub(super) fn update_reo_wnd(&mut self, prior_delivered: u64) {
        if prior_delivered < self.rack_last_delivered {
            // Less than a round since the last adjustment: ignore this D-SACK.
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(0xFF);
            self.dsack_seen = false;
            self.rack_last_delivered = self.sk.delivered;
            self.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
    }

    /// `tcp_rack_detect_loss`; returns the reorder timeout (µs) if segments are pending.
    pub(super) fn rack_detect_loss(&mut self, now: Nanos) -> Option<u64> {
        let reo_wnd = self.reo_wnd_us();
        let mut timeout: u64 = 0;
        let mut seq = self.tsorted_head;
        while seq != NIL {
            let s = *self.seg(seq);
            let next = s.tnext;
            if s.flags & F_LOST != 0 && s.flags & F_RETRANS == 0 {
                seq = next;
                continue;
            }
            // Stop at the first segment not sent before the most recently delivered one.
            let sent_before = self.rack_mstamp > s.xmit || (self.rack_mstamp == s.xmit && self.rack_end_seq > seq + 1);
            if !sent_before {
                break;
            }
            let elapsed = now.saturating_sub(s.xmit) / NS_PER_US;
            let remaining = self.rack_rtt_us as i64 + reo_wnd as i64 - elapsed as i64;
            if remaining <= 0 {
                self.mark_lost(seq);
                self.ts_unlink(seq);
            } else {
                timeout = timeout.max(remaining as u64);
            }
            seq = next;
        }
        (timeout > 0).then_some(timeout)
    }

    /// `tcp_mark_skb_lost` (Linux 6.x): a retransmission of a segment already marked lost
    /// is lost again (TCPLostRetransmit) and waits to be retransmitted once more; a segment
    /// not marked lost before is marked, keeping a retransmission in flight if it has one (a
    /// tail loss probe's: in flight and lost, not retransmitted again and not counted until
    /// an RTO finds it lost again).
    pub(super) fn mark_lost(&mut self, seq: u64) {
        let f = self.seg(seq).flags;
        if f & F_LOST != 0 {
            if f & F_RETRANS != 0 {
                self.retrans_out -= 1;
                self.mib.lost_retransmit += 1;
                self.seg_mut(seq).flags = f & !F_RETRANS;
                self.notify_skb_loss_event(seq);
            }
        } else {
            self.lost_out += 1;
            self.seg_mut(seq).flags = f | F_LOST;
            self.notify_skb_loss_event(seq);
        }
        self.lost_queue.push_back(seq);
    }

    /// `tcp_notify_skb_loss_event` (google/bbr v3): count the segment in `tp->lost`, then
    /// hand its transmit snapshot to the algorithm's `skb_marked_lost`.
    fn notify_skb_loss_event(&mut self, seq: u64) {
        self.sk.lost += 1;
        let s = *self.seg(seq);
        let skb = LostSkb {
            tx_in_flight: s.tx_in_flight,
            tx_lost: s.tx_lost,
            tx_app_limited: s.tx_app_limited,
            has_tx_stamp: s.tx_delivered_mstamp != NO_STAMP,
        };
        self.cc.skb_marked_lost(&mut self.sk, &skb);
    }

    /// `tcp_rack_advance`.
    /// Linux 6.x: every unambiguous (S)ACKed segment updates RACK.rtt and triggers detection;
    /// RACK.xmit_time / end_seq only move forward (to the most recently sent one).
    pub(super) fn rack_advance(&mut self, now: Nanos, flags: u8, end_seq: u64, xmit: Nanos) {
        let rtt_us = now.saturating_sub(xmit) / NS_PER_US;
        if flags & F_EVER_RETRANS != 0 && rtt_us < self.rtt.min_rtt_us as u64 {
            // Possibly the ACK of the original transmission: ambiguous, ignore.
            return;
        }
        self.rack_advanced = true;
        self.rack_rtt_us = rtt_us;
        if xmit > self.rack_mstamp || (xmit == self.rack_mstamp && end_seq > self.rack_end_seq) {
            self.rack_mstamp = xmit;
            self.rack_end_seq = end_seq;
        }
    }

    /// `tcp_enter_recovery`: save the state for undo and start a reduction, unless one (CWR)
    /// is already under way. `ece_ack`: the ACK also carried ECE — a congestion signal the
    /// receiver saw, so the reduction is not to be undone to a higher ssthresh.
    pub(super) fn enter_recovery(&mut self, ece_ack: bool) {
        self.prior_ssthresh = 0;
        // tcp_init_undo
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = if self.retrans_out > 0 { self.retrans_out as i64 } else { -1 };
        if !self.in_cwnd_reduction() {
            if !ece_ack {
                self.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.loss_events += 1;
        self.mib.sack_recovery += 1;
        self.set_state(CaState::Recovery);
    }

    /// `tcp_in_cwnd_reduction`: CWR or Recovery.
    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.sk.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_init_cwnd_reduction`: the start of a PRR episode towards the algorithm's ssthresh.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.sk.cwnd_cnt = 0;
        self.prior_cwnd = self.sk.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.sk.ssthresh = self.cc.ssthresh(&self.sk);
        self.ecn.queue_cwr();
    }

    /// `tcp_process_tlp_ack` (RFC 8985 §7.4, Linux 6.x): an ACK during a TLP episode. A probe
    /// of new data, or one the receiver D-SACKed (original and probe both arrived), ends the
    /// episode; an ACK beyond the probed segment after a retransmitted probe means the probe
    /// repaired a loss: one cwnd reduction (ssthresh from the algorithm, cwnd = ssthresh at
    /// once, through CWR) and TCPLossProbeRecovery; a pure duplicate ACK ends it too. An ACK
    /// that reaches exactly tlp_high_seq leaves the episode open.
    /// `una_advanced`, `data_sacked`: FLAG_SND_UNA_ADVANCED and FLAG_DATA_SACKED of the ACK
    /// (the simulator's ACKs carry no data; a window update, the rest of FLAG_NOT_DUP, is not
    /// counted: in the scenarios a TLP episode ends long after the window stops growing).
    pub(super) fn process_tlp_ack(&mut self, ack: u64, una_advanced: bool, dsack_tlp: bool, data_sacked: bool) {
        let Some(high) = self.tlp_high_seq else {
            return;
        };
        if ack < high {
            return;
        }
        if !self.tlp_retrans || dsack_tlp {
            self.tlp_high_seq = None;
        } else if ack > high {
            // tcp_init_cwnd_reduction also clears tlp_high_seq.
            self.init_cwnd_reduction();
            self.set_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open();
            self.mib.loss_probe_recovery += 1;
        } else if !(una_advanced || data_sacked) {
            self.tlp_high_seq = None;
        }
    }

    /// `tcp_enter_cwr` (RFC 3168 §6.1.2): an ECN-Echo in Open or Disorder starts a reduction
    /// without loss; in CWR, Recovery or Loss one is already under way (once per window). No
    /// undo: the receiver saw the congestion.
    pub(super) fn enter_cwr(&mut self) {
        self.prior_ssthresh = 0;
        if self.sk.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.init_cwnd_reduction();
            self.set_state(CaState::Cwr);
        }
    }

    /// `tcp_enter_loss` (the RTO fired): save the state for undo, reduce ssthresh, mark
    /// every un-SACKed segment lost and restart from cwnd = in-flight + 1 in Loss state.
    pub(super) fn enter_loss(&mut self, now: Nanos) {
        let st = self.sk.ca_state;
        if st <= CaState::Disorder || self.high_seq <= self.snd_una || (st == CaState::Loss && self.backoff == 0) {
            self.prior_ssthresh = self.current_ssthresh();
            self.prior_cwnd = self.sk.cwnd;
            self.sk.ssthresh = self.cc.ssthresh(&self.sk);
            self.cc.cwnd_event(&mut self.sk, CaEvent::Loss);
            self.undo_marker = Some(self.snd_una);
            self.undo_retrans = if self.retrans_out > 0 { self.retrans_out as i64 } else { -1 };
        }
        if st != CaState::Loss {
            self.loss_events += 1;
        }
        self.timeout_mark_lost(now);
        self.sk.cwnd = self.in_flight() + 1;
        self.sk.cwnd_cnt = 0;
        self.set_state(CaState::Loss);
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.ecn.queue_cwr();
    }

    /// `tcp_timeout_mark_lost` (Linux 6.x): the head and every un-SACKed segment sent at least
    /// RACK.rtt ago are lost; more recent ones get their chance. A retransmission already
    /// marked lost is a lost retransmission (TCPLostRetransmit).
    fn timeout_mark_lost(&mut self, now: Nanos) {
        self.lost_queue.clear();
        for seq in self.snd_una..self.snd_nxt {
            let s = *self.seg(seq);
            if s.flags & F_SACKED != 0 {
                continue;
            }
            let elapsed_us = now.saturating_sub(s.xmit) / NS_PER_US;
            if seq != self.snd_una && self.rack_rtt_us > elapsed_us {
                continue; // tcp_rack_skb_timeout(tp, skb, 0) > 0: sent recently
            }
            // tcp_mark_skb_lost
            if s.flags & F_LOST != 0 {
                if s.flags & F_RETRANS != 0 {
                    self.seg_mut(seq).flags &= !F_RETRANS;
                    self.retrans_out -= 1;
                    self.mib.lost_retransmit += 1;
                    self.sk.lost += 1;
                }
            } else {
                self.seg_mut(seq).flags |= F_LOST;
                self.lost_out += 1;
                self.sk.lost += 1;
            }
            self.lost_queue.push_back(seq);
        }
    }

    /// `tcp_cwnd_reduction` (PRR, RFC 6937).
    pub(super) fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.in_flight() as i64;
        let delta = self.sk.ssthresh as i64 - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = self.sk.ssthresh as u64 * self.prr_delivered as u64 + self.prior_cwnd as u64 - 1;
            (dividend / self.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.sk.cwnd = (in_flight + sndcnt) as u32;
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        if self.sk.ssthresh < crate::cc::INFINITE_SSTHRESH
            && (self.sk.ca_state == CaState::Cwr || self.undo_marker.is_some())
        {
            self.sk.cwnd = self.sk.ssthresh;
        }
        self.refresh_sk(self.sk.now_ns);
        self.cc.cwnd_event(&mut self.sk, CaEvent::CompleteCwr);
    }

    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for seq in self.snd_una..self.snd_nxt {
                let f = self.seg(seq).flags;
                if f & F_LOST != 0 {
                    self.seg_mut(seq).flags = f & !F_LOST;
                }
            }
            self.lost_out = 0;
            self.lost_queue.clear();
        }
        if self.prior_ssthresh > 0 {
            self.refresh_sk(self.sk.now_ns);
            self.sk.cwnd = self.cc.undo_cwnd(&self.sk, self.prior_cwnd);
            if self.prior_ssthresh > self.sk.ssthresh {
                self.sk.ssthresh = self.prior_ssthresh;
                self.ecn.withdraw_cwr();
            }
        }
        self.undo_marker = None;
    }

    fn may_undo(&self, tsecr: u64) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(tsecr))
    }

    /// `tcp_try_undo_recovery` (SACK flows): undo if the retransmissions were all spurious
    /// (TCPFullUndo, or TCPLossUndo from Loss), then — undone or not — back to Open.
    fn try_undo_recovery(&mut self, tsecr: u64) {
        if self.may_undo(tsecr) {
            self.mib.full_undo += (self.sk.ca_state != CaState::Loss) as u64;
            self.mib.loss_undo += (self.sk.ca_state == CaState::Loss) as u64;
            self.undo_cwnd_reduction(false);
        } else {
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        }
        self.set_state(CaState::Open);
    }

    /// `tcp_try_undo_loss` (without F-RTO): a partial ACK in Loss shows the RTO spurious.
    fn try_undo_loss(&mut self, tsecr: u64) -> bool {
        if self.may_undo(tsecr) {
            self.undo_cwnd_reduction(true);
            self.mib.loss_undo += 1;
            self.backoff = 0;
            self.set_state(CaState::Open);
            return true;
        }
        false
    }

    /// `tcp_try_undo_partial` (Linux 6.x): the hole was filled by the late original, not the
    /// retransmission. Returns true only while retransmissions are still out (then no more
    /// losses are marked on this ACK); after an undo processing continues.
    fn try_undo_partial(&mut self, tsecr: u64, prior_snd_una: u64) -> bool {
        if self.undo_marker.is_some() && self.packet_delayed(tsecr) {
            self.check_sack_reordering(prior_snd_una, true);
            if self.retrans_out > 0 {
                return true;
            }
            if !self.any_retrans_done() {
                self.retrans_stamp = 0;
            }
            self.undo_cwnd_reduction(true);
            self.mib.partial_undo += 1;
            self.try_keep_open();
        }
        false
    }

    /// `tcp_try_undo_dsack`: D-SACKs acknowledged every retransmission.
    fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.reo_wnd_persist = (self.reo_wnd_persist + 1).min(RACK_RECOVERY_THRESH);
            self.undo_cwnd_reduction(false);
            self.mib.dsack_undo += 1;
            return true;
        }
        false
    }

    /// `tcp_any_retrans_done`: retransmissions in flight, or the head was retransmitted.
    fn any_retrans_done(&self) -> bool {
        self.retrans_out > 0 || (self.packets_out() > 0 && self.seg(self.snd_una).flags & F_EVER_RETRANS != 0)
    }

    /// `tcp_try_keep_open`: Disorder while anything is SACKed, lost or retransmitted.
    fn try_keep_open(&mut self) {
        let st = if self.sacked_out + self.lost_out > 0 || self.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.sk.ca_state != st {
            self.set_state(st);
            self.high_seq = self.snd_nxt;
        }
    }

    /// `tcp_try_to_open`: no loss to recover; an ECE enters CWR, otherwise Open or Disorder.
    fn try_to_open(&mut self, ece: bool) {
        if !self.any_retrans_done() {
            self.retrans_stamp = 0;
        }
        if ece {
            self.enter_cwr();
        }
        if self.sk.ca_state != CaState::Cwr {
            self.try_keep_open();
        }
    }
}
