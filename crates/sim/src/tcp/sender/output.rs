//! Sending and pacing: the counterpart of Linux `net/ipv4/tcp_output.c` (`tcp_write_xmit`,
//! `tcp_xmit_retransmit_queue`, `tcp_transmit_skb`, `tcp_update_skb_after_send`,
//! `tcp_cwnd_validate`).
//!
//! Two functions here live elsewhere in Linux but belong to the transmit path of this model:
//! `check_app_limited` (`tcp_rate_check_app_limited`, tcp_rate.c) and `update_pacing_rate`
//! (`tcp_update_pacing_rate`, tcp_input.c).
use super::{Sender, Seg, TimerKind, F_EVER_RETRANS, F_LOST, F_RETRANS, F_SACKED, NIL};
use crate::cc::{CaEvent, CaState};
use crate::tcp::{ts_tick, Pkt, MSS};
use crate::time::{Nanos, NS_PER_SEC};

impl Sender {
    /// Start the connection (the handshake is not modelled: the first data segment leaves at
    /// the flow's start time with the initial window).
    pub fn start(&mut self, now: Nanos) -> &[Pkt] {
        self.started = true;
        if let Some(rtt) = self.handshake_rtt_us {
            self.rtt.sample(rtt, 0, 0);
            self.rtt.update_min(rtt);
        }
        self.refresh_sk(now);
        self.cc.init(&mut self.sk);
        self.wstamp = now;
        self.cwnd_avg.set(now, self.sk.cwnd as f64);
        self.transmit(now)
    }

    /// Send what cwnd, rwnd and pacing allow: retransmissions first, then new data.
    pub fn transmit(&mut self, now: Nanos) -> &[Pkt] {
        self.out.clear();
        self.transmit_more(now);
        &self.out
    }

    /// `tcp_xmit_retransmit_queue` + `tcp_write_xmit`, appending to `self.out`.
    pub(super) fn transmit_more(&mut self, now: Nanos) {
        if !self.started {
            return;
        }
        let sent_before = self.out.len();
        let mut sent_new = false;
        let had_out = self.packets_out() > 0;
        let mut cwnd_blocked = false;
        loop {
            let paced = self.sk.pacing_enabled || self.force_pacing;
            if paced && self.wstamp > now {
                break;
            }
            if self.in_flight() >= self.sk.cwnd {
                cwnd_blocked = true;
                break;
            }
            if let Some(seq) = self.next_retransmit() {
                self.retransmit(now, seq);
            } else if self.can_send_new() {
                self.send_new(now);
                sent_new = true;
            } else {
                self.check_app_limited();
                break;
            }
        }
        // tcp_write_xmit: `is_cwnd_limited |= in_flight >= cwnd` whatever ended the loop — a
        // paced flow stops on the pacing check and is still cwnd-limited if its window is full.
        cwnd_blocked |= self.in_flight() >= self.sk.cwnd;
        let sent_any = self.out.len() > sent_before;
        if sent_any || cwnd_blocked {
            self.cwnd_validate(cwnd_blocked);
        }
        if sent_new {
            // tcp_event_new_data_sent: arm the RTO if nothing was out before; then TLP.
            if !had_out || matches!(self.timer, Some((_, TimerKind::LossProbe)) | None) {
                self.rearm_rto(now);
            }
            self.schedule_loss_probe(now);
        } else if sent_any && self.timer.is_none() {
            self.rearm_rto(now);
        }
    }

    /// Earliest time pacing allows the next packet, when a packet is waiting for it.
    pub fn pacing_wakeup(&self, now: Nanos) -> Option<Nanos> {
        let paced = self.sk.pacing_enabled || self.force_pacing;
        if paced
            && self.wstamp > now
            && self.in_flight() < self.sk.cwnd
            && (self.lost_out > self.retrans_out || self.can_send_new())
        {
            Some(self.wstamp)
        } else {
            None
        }
    }

    pub(super) fn can_send_new(&self) -> bool {
        let below_total = self.total_segs.is_none_or(|t| self.snd_nxt < t);
        below_total && self.snd_nxt < self.snd_una + self.rwnd_segs
    }

    fn next_retransmit(&mut self) -> Option<u64> {
        while let Some(&seq) = self.lost_queue.front() {
            if seq >= self.snd_una && seq < self.snd_nxt {
                let f = self.seg(seq).flags;
                if f & F_LOST != 0 && f & (F_RETRANS | F_SACKED) == 0 {
                    return Some(seq);
                }
            }
            self.lost_queue.pop_front();
        }
        None
    }

    /// `tcp_rate_check_app_limited`: nothing left to send although cwnd would allow it.
    fn check_app_limited(&mut self) {
        if self.in_flight() < self.sk.cwnd && self.lost_out <= self.retrans_out {
            let mark = self.sk.delivered + self.in_flight() as u64;
            self.sk.app_limited = mark.max(1);
        }
    }

    /// `tcp_cwnd_validate`.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let pout = self.packets_out() as u64;
        if self.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.is_cwnd_limited && pout > self.max_packets_out)
        {
            self.is_cwnd_limited = is_cwnd_limited;
            self.max_packets_out = pout;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// `tcp_rate_skb_sent` + pacing + bookkeeping common to new data and retransmissions.
    fn on_xmit(&mut self, now: Nanos, seq: u64) {
        let (ft, dm, d, al) = (
            self.first_tx_mstamp,
            self.sk.delivered_mstamp_ns,
            self.sk.delivered,
            self.sk.app_limited != 0,
        );
        {
            let s = self.seg_mut(seq);
            s.xmit = now;
            s.tx_first_tx = ft;
            s.tx_delivered_mstamp = dm;
            s.tx_delivered = d;
            s.tx_app_limited = al;
        }
        self.ts_append(seq);
        self.data_sent += 1;
        self.mib.out_segs += 1;
        if self.sk.ca_state == CaState::Recovery {
            self.prr_out += 1;
        }
        // tcp_update_skb_after_send: internal pacing, from the 11th segment on.
        if (self.sk.pacing_enabled || self.force_pacing) && self.data_sent > 10 && self.sk.pacing_rate > 0 {
            let len_ns = (MSS as u128 * NS_PER_SEC as u128 / self.sk.pacing_rate as u128) as u64;
            self.wstamp = self.wstamp.max(now) + len_ns;
        }
        let tsval = if self.timestamps { ts_tick(now) } else { 0 };
        self.out.push(Pkt::data(self.flow, seq, tsval));
    }

    pub(super) fn send_new(&mut self, now: Nanos) {
        self.data_sent_event(now);
        if self.packets_out() == 0 {
            // tcp_rate_skb_sent: a new flight starts the delivery clock.
            self.first_tx_mstamp = now;
            self.sk.delivered_mstamp_ns = now;
        }
        let seq = self.snd_nxt;
        self.segs.push_back(Seg {
            xmit: 0,
            flags: 0,
            tx_first_tx: 0,
            tx_delivered_mstamp: 0,
            tx_delivered: 0,
            tx_app_limited: false,
            tprev: NIL,
            tnext: NIL,
            in_tsorted: false,
        });
        self.snd_nxt += 1;
        self.on_xmit(now, seq);
    }

    /// Retransmit the segment at the head of the lost queue (counts toward undo).
    fn retransmit(&mut self, now: Nanos, seq: u64) {
        self.lost_queue.pop_front();
        // tcp_xmit_retransmit_queue: retransmitting the head restarts the RTO (unless the
        // RACK reorder timer is pending).
        if seq == self.snd_una && !matches!(self.timer, Some((_, TimerKind::ReorderTimeout))) {
            self.timer = Some((now + self.rto_ns(), TimerKind::Rto));
        }
        // tcp_xmit_retransmit_queue: TCPFastRetrans outside Loss (TCPSlowStartRetrans in it).
        if self.sk.ca_state != CaState::Loss {
            self.mib.fast_retrans += 1;
        }
        if self.undo_marker.is_some() {
            if self.undo_retrans < 0 {
                self.undo_retrans = 0;
            }
            self.undo_retrans += 1;
        }
        self.send_again(now, seq);
    }

    /// `tcp_event_data_sent`, before the segment counts as in flight: CA_EVENT_TX_START when
    /// nothing is in flight (a restart after idle, or the first retransmission after an RTO
    /// marked everything lost), and `lsndtime`.
    fn data_sent_event(&mut self, now: Nanos) {
        if self.in_flight() == 0 {
            self.refresh_sk(now);
            self.cc.cwnd_event(&mut self.sk, CaEvent::TxStart);
        }
        self.sk.lsndtime_ns = now;
    }

    /// Put `seq` on the wire again: scoreboard flags, retransmission counters, transmit.
    pub(super) fn send_again(&mut self, now: Nanos, seq: u64) {
        self.data_sent_event(now);
        let f = self.seg(seq).flags;
        if f & F_RETRANS == 0 {
            self.retrans_out += 1;
        }
        self.seg_mut(seq).flags = f | F_RETRANS | F_EVER_RETRANS;
        self.retransmits += 1;
        self.mib.retrans_segs += 1;
        if self.retrans_stamp == 0 {
            self.retrans_stamp = now;
        }
        self.on_xmit(now, seq);
    }

    /// `tcp_update_pacing_rate` for algorithms without `cong_control` (200 % of cwnd/srtt in
    /// slow start, 120 % after). Linux computes it on every ACK whether or not it paces.
    pub(super) fn update_pacing_rate(&mut self) {
        let srtt = self.rtt.srtt_us();
        if srtt == 0 {
            return;
        }
        let ratio = if self.sk.cwnd < self.sk.ssthresh / 2 { 200 } else { 120 };
        let pkts = self.sk.cwnd.max(self.packets_out()) as u64;
        let rate = MSS as u64 * pkts * 1_000_000 / srtt * ratio / 100;
        self.sk.pacing_rate = rate.min(self.sk.max_pacing_rate);
    }
}
