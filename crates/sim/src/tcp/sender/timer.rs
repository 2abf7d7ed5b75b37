//! Timers: the counterpart of Linux `net/ipv4/tcp_timer.c` (`tcp_write_timer_handler`,
//! `tcp_retransmit_timer`), with the timer arming that Linux keeps beside its callers
//! (`tcp_rearm_rto`, tcp_input.c; `tcp_schedule_loss_probe` and `tcp_send_loss_probe`,
//! tcp_output.c; `tcp_rack_reo_timeout`, tcp_recovery.c).
//!
//! The simulator keeps one timer per connection, like Linux's `icsk_retransmit_timer`, whose
//! kind (`icsk_pending`) is RTO, loss probe or reorder timeout.
use super::{Sender, TimerKind, F_SACKED, NIL, TLP_SLACK_US};
use crate::cc::CaState;
use crate::tcp::Pkt;
use crate::time::{Nanos, NS_PER_SEC, NS_PER_US};

impl Sender {
    pub(super) fn rto_ns(&self) -> Nanos {
        let base = self.rtt.rto_ns();
        (base << self.backoff.min(10)).min(120 * NS_PER_SEC)
    }

    /// `tcp_rearm_rto`.
    pub(super) fn rearm_rto(&mut self, now: Nanos) {
        if self.packets_out() == 0 {
            self.timer = None;
            return;
        }
        let rto = self.rto_ns();
        let deadline = match self.timer {
            Some((_, TimerKind::ReorderTimeout | TimerKind::LossProbe)) => {
                // Measure from the oldest outstanding transmission.
                let head = if self.tsorted_head != NIL { self.seg(self.tsorted_head).xmit } else { now };
                (head + rto).max(now + 1)
            }
            _ => now + rto,
        };
        self.timer = Some((deadline, TimerKind::Rto));
    }

    /// `tcp_schedule_loss_probe`.
    pub(super) fn schedule_loss_probe(&mut self, now: Nanos) {
        if self.packets_out() == 0
            || self.tlp_high_seq.is_some()
            || !matches!(self.sk.ca_state, CaState::Open | CaState::Cwr)
        {
            return;
        }
        let timeout = if self.rtt.has_sample() {
            let mut us = 2 * self.rtt.srtt_us();
            us += if self.packets_out() == 1 { crate::tcp::rtt::RTO_MIN_US } else { TLP_SLACK_US };
            us * NS_PER_US
        } else {
            NS_PER_SEC
        };
        let mut deadline = now + timeout;
        if let Some((t, TimerKind::Rto)) = self.timer {
            deadline = deadline.min(t);
        }
        self.timer = Some((deadline, TimerKind::LossProbe));
    }

    /// The retransmission timer fired (RTO, TLP or RACK reorder timeout).
    pub fn on_timer(&mut self, now: Nanos) -> &[Pkt] {
        let Some((deadline, kind)) = self.timer else {
            self.out.clear();
            return &self.out;
        };
        if deadline > now {
            self.out.clear();
            return &self.out;
        }
        self.timer = None;
        self.out.clear();
        self.refresh_sk(now);
        match kind {
            TimerKind::Rto => self.on_rto(now),
            TimerKind::LossProbe => {
                self.on_loss_probe(now);
                return &self.out;
            }
            TimerKind::ReorderTimeout => self.on_reorder_timeout(now),
        }
        self.transmit_more(now);
        if self.timer.is_none() {
            self.rearm_rto(now);
        }
        &self.out
    }

    /// `tcp_retransmit_timer`: enter Loss, back off, re-arm.
    fn on_rto(&mut self, now: Nanos) {
        if self.packets_out() == 0 {
            return;
        }
        self.mib.timeouts += 1;
        self.enter_loss(now);
        self.backoff += 1;
        self.wstamp = now;
        self.timer = Some((now + self.rto_ns(), TimerKind::Rto));
    }

    fn on_loss_probe(&mut self, now: Nanos) {
        if self.packets_out() > 0 && self.tlp_high_seq.is_none() {
            self.mib.loss_probes += 1;
            self.tlp_retrans = false;
            if self.can_send_new() {
                self.send_new(now);
            } else {
                let seq = self.snd_nxt - 1;
                if self.seg(seq).flags & F_SACKED == 0 {
                    self.send_again(now, seq);
                    self.tlp_retrans = true;
                }
            }
            self.tlp_high_seq = Some(self.snd_nxt);
        }
        self.timer = None;
        self.rearm_rto(now);
    }

    fn on_reorder_timeout(&mut self, now: Nanos) {
        let prior_inflight = self.in_flight();
        let _ = self.rack_detect_loss(now);
        if prior_inflight != self.in_flight() && self.sk.ca_state != CaState::Recovery {
            self.enter_recovery(false);
            if !self.cc.has_cong_control() {
                self.cwnd_reduction(1, 0, false);
            }
        }
        self.rearm_rto(now);
    }
}
