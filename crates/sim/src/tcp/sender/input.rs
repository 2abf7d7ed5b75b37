//! ACK processing and the SACK scoreboard: the counterpart of the ACK half of Linux
//! `net/ipv4/tcp_input.c` (`tcp_ack`, `tcp_check_dsack`, `tcp_sacktag_write_queue`,
//! `tcp_clean_rtx_queue`, `tcp_ack_update_rtt`, `tcp_cong_control`, `tcp_set_xmit_timer`),
//! and the time-sorted list of segments in flight (`tcp_rbtree` / `tsorted_sent_queue`
//! helpers of tcp_output.c and include/net/tcp.h).
//!
//! The recovery half of tcp_input.c (`tcp_fastretrans_alert` and friends) is in recovery.rs.
use super::rate::RateAcc;
use super::{Sender, DUPTHRESH, F_EVER_RETRANS, F_LOST, F_RETRANS, F_SACKED, MAX_REORDERING, NIL};
use crate::cc::{AckSample, CaState, RateSample};
use crate::tcp::receiver::PAWS_WINDOW;
use crate::tcp::{ts_tick, Pkt, PktKind, SackBlock, MSS};
use crate::time::{Nanos, NS_PER_MS, NS_PER_US};

impl Sender {
    pub(super) fn ts_unlink(&mut self, seq: u64) {
        let s = *self.seg(seq);
        if !s.in_tsorted {
            return;
        }
        if s.tprev == NIL {
            self.tsorted_head = s.tnext;
        } else {
            self.seg_mut(s.tprev).tnext = s.tnext;
        }
        if s.tnext == NIL {
            self.tsorted_tail = s.tprev;
        } else {
            self.seg_mut(s.tnext).tprev = s.tprev;
        }
        let m = self.seg_mut(seq);
        m.in_tsorted = false;
        m.tprev = NIL;
        m.tnext = NIL;
    }

    pub(super) fn ts_append(&mut self, seq: u64) {
        self.ts_unlink(seq);
        let tail = self.tsorted_tail;
        {
            let m = self.seg_mut(seq);
            m.in_tsorted = true;
            m.tprev = tail;
            m.tnext = NIL;
        }
        if tail == NIL {
            self.tsorted_head = seq;
        } else {
            self.seg_mut(tail).tnext = seq;
        }
        self.tsorted_tail = seq;
    }

    // ----- ACK processing ------------------------------------------------------------

    /// Process one ACK; returns the packets sent in response.
    pub fn on_ack(&mut self, now: Nanos, ack: &Pkt) -> &[Pkt] {
        debug_assert_eq!(ack.kind, PktKind::Ack);
        self.out.clear();
        self.mib.in_segs += 1;
        if !self.paws_accepts(ack) {
            // tcp_validate_incoming: PAWS discards the ACK before tcp_ack sees it. (Linux
            // answers with a rate-limited duplicate ACK, which carries nothing for a receiver
            // that sends no data; not modelled.)
            self.mib.paws_estab += 1;
            return &self.out;
        }
        let cum = ack.seq.min(self.snd_nxt);
        if cum < self.snd_una {
            // tcp_ack's old_ack: an ACK below snd_una still carries SACK information.
            if ack.nsack > 0 {
                self.old_ack(now, ack);
            }
            return &self.out;
        }
        // tcp_replace_ts_recent, once the ACK is known to be in window.
        if self.timestamps && ack.ts > self.ts_recent {
            self.ts_recent = ack.ts;
        }
        // tcp_ack_update_window: the receiver sends no data, so its sequence number never
        // moves (ack_seq == snd_wl1) and tcp_may_update_window takes a window from an ACK that
        // advances snd_una, or that offers more (or zero).
        let nwin = ack.wnd as u64;
        if cum > self.snd_una || nwin > self.snd_wnd || nwin == 0 {
            self.snd_wnd = nwin;
            self.rwnd_segs = nwin / MSS as u64;
        }
        self.sk.now_ns = now;
        let prior_snd_una = self.snd_una;
        let prior_delivered = self.sk.delivered;
        let prior_in_flight = self.in_flight();
        let prior_lost = self.sk.lost;
        let prior_fack = self.fack;
        let mut rate = RateAcc::new();
        let mut st = AckState::default();

        let blocks = ack.sacks();
        // tcp_dsack_seen: FLAG_DSACK_TLP, a one-segment D-SACK ending at tlp_high_seq (the
        // probe and the original both arrived).
        let dsack_tlp = ack.dsack && blocks.first().is_some_and(|&(s, e)| e - s <= 1 && self.tlp_high_seq == Some(e));
        let sack_start = self.check_dsack(ack, blocks);
        self.sacktag(now, cum, prior_fack, blocks, sack_start, &mut st, &mut rate);
        self.sack_reordering_check(&st);
        self.clean_rtx_queue(now, cum, &mut st, &mut rate);
        if st.ack_reord < prior_fack {
            // tcp_clean_rtx_queue: a never-retransmitted hole below fack got filled.
            self.check_sack_reordering(st.ack_reord, false);
        }
        if rate.have_prior {
            self.update_reo_wnd(rate.rs.prior_delivered);
        }
        let una_advanced = cum > prior_snd_una;
        if una_advanced {
            self.backoff = 0;
        }

        let ca_rtt = self.ack_update_rtt(now, ack, una_advanced, &st);
        rate.rs.rtt_us = ca_rtt;
        let delivered_now = (self.sk.delivered - prior_delivered) as u32;

        // FLAG_ECE (tcp_ecn_rcv_ecn_echo) — never on the old_ack path below.
        let (ece, ece_delta) = if self.ecn.accecn() {
            // tcp_accecn_process: the newly reported CE packets are delivered_ce, and FLAG_ECE.
            let d = self.ecn.accecn_delta(ack);
            self.delivered_ce += d as u64;
            (d > 0, d)
        } else {
            let ece = self.ecn.ece(ack);
            if ece {
                // tcp_count_delivered (from tcp_clean_rtx_queue and the SACK tagging):
                // TCPDeliveredCE / tp->delivered_ce count what an ECE ACK delivered.
                self.delivered_ce += delivered_now as u64;
            }
            (ece, 0)
        };
        self.sk.delivered_ce = self.delivered_ce;

        self.refresh_sk(now);
        self.cc.pkts_acked(
            &mut self.sk,
            &AckSample { pkts_acked: st.acked_segs, rtt_us: ca_rtt, in_flight: prior_in_flight },
        );
        // tcp_in_ack_event (Linux ≥ 6.14: after tcp_clean_rtx_queue, before the TLP and
        // recovery steps), with the delivery counters of this ACK.
        self.cc.in_ack_event(&mut self.sk, ece);

        // tcp_ack: the TLP episode, before tcp_fastretrans_alert.
        if self.tlp_high_seq.is_some() {
            self.process_tlp_ack(cum, una_advanced, dsack_tlp, st.sacked_segs > 0);
        }

        // Loss detection and the recovery state machine (tcp_fastretrans_alert).
        let newly_lost_before = self.sk.lost;
        let reo_armed = self.fastretrans_alert(now, ack, una_advanced, prior_snd_una, ece);
        let newly_lost = (self.sk.lost - newly_lost_before) as u32;

        // tcp_rate_gen
        let RateAcc { rs, have_prior, .. } = &mut rate;
        self.rate_gen(now, delivered_now, (self.sk.lost - prior_lost) as u32, rs, *have_prior);
        rs.prior_in_flight = prior_in_flight;
        rs.is_ack_delayed = ack.delayed;
        rs.is_ece = ece;
        rs.ece_delta = ece_delta;

        self.cong_control(now, rs, delivered_now, newly_lost, una_advanced);
        self.set_xmit_timer(now, reo_armed, una_advanced);

        self.transmit_more(now);
        &self.out
    }

    /// PAWS for an ACK (`tcp_validate_incoming` → `tcp_paws_discard`): its TSval may be at most
    /// TCP_PAWS_WINDOW ticks older than ts_recent, unless it is a "disordered ACK"
    /// (`tcp_disordered_ack`): a pure duplicate ACK at snd_una within the replay window of
    /// about one RTO. An older ACK that advances snd_una is discarded.
    fn paws_accepts(&self, ack: &Pkt) -> bool {
        if !self.timestamps || self.ts_recent == 0 || ack.ts == 0 {
            return true;
        }
        if self.ts_recent <= ack.ts + PAWS_WINDOW {
            return true;
        }
        // tcp_tsval_replay: icsk_rto * 1024 / HZ, in ticks of 1 ms.
        let replay_ticks = self.rto_ns() / NS_PER_MS * 1024 / 1000;
        ack.seq == self.snd_una && self.ts_recent - ack.ts <= replay_ticks
    }

    /// The `old_ack` path of `tcp_ack`: process the SACK blocks of an ACK below snd_una, run
    /// the recovery state machine and send what that allows.
    fn old_ack(&mut self, now: Nanos, ack: &Pkt) {
        self.sk.now_ns = now;
        let prior_fack = self.fack;
        let mut rate = RateAcc::new();
        let mut st = AckState::default();
        let blocks = ack.sacks();
        let sack_start = self.check_dsack(ack, blocks);
        self.sacktag(now, self.snd_una, prior_fack, blocks, sack_start, &mut st, &mut rate);
        self.sack_reordering_check(&st);
        self.refresh_sk(now);
        let reo_armed = self.fastretrans_alert(now, ack, false, self.snd_una, false);
        self.set_xmit_timer(now, reo_armed, false);
        self.transmit_more(now);
    }

    /// `tcp_sacktag_write_queue`'s reordering check (skipped in Loss without undo).
    fn sack_reordering_check(&mut self, st: &AckState) {
        if st.sack_reord != u64::MAX && (self.sk.ca_state != CaState::Loss || self.undo_marker.is_some()) {
            self.check_sack_reordering(st.sack_reord, false);
        }
    }

    /// `tcp_check_sack_reordering`: a segment below the highest SACKed one was delivered
    /// without a retransmission. Raise `tp->reordering` to the distance (in segments, capped
    /// at tcp_max_reordering) and remember that reordering was seen. `by_ts`: detected by the
    /// timestamp echo in tcp_try_undo_partial (TCPTSReorder, not counted here).
    pub(super) fn check_sack_reordering(&mut self, low_seq: u64, by_ts: bool) {
        // tcp_highest_sack_seq (Linux 6.x): the start of the segment just after the highest
        // SACKed one (snd_nxt if that is the last), i.e. its end; snd_una if nothing is SACKed.
        let fack = if self.sacked_out > 0 { self.fack } else { self.snd_una };
        if low_seq >= fack {
            return;
        }
        let metric = (fack - low_seq) as u32;
        if metric > self.reordering {
            self.reordering = metric.min(MAX_REORDERING);
        }
        self.reord_seen = true;
        if !by_ts {
            self.mib.sack_reorder += 1;
        }
    }

    /// `tcp_check_dsack` (RFC 2883): the first block reports a duplicate. Returns the index
    /// of the first real SACK block.
    fn check_dsack(&mut self, ack: &Pkt, blocks: &[SackBlock]) -> usize {
        let mut sack_start = 0;
        if ack.dsack && !blocks.is_empty() {
            sack_start = 1;
            let (ds, de) = blocks[0];
            self.mib.dsack_recv += 1;
            // tcp_dsack_seen: ignored if it reports more duplicates than were retransmitted;
            // widens RACK's window only once reordering was seen and not for a TLP probe; a
            // spurious retransmission counts as delivered.
            self.dsack_dups += de - ds;
            if self.dsack_dups <= self.retransmits {
                if self.reord_seen && self.tlp_high_seq != Some(de) {
                    self.dsack_seen = true;
                }
                self.sk.delivered += de - ds;
                if let Some(m) = self.undo_marker {
                    if ds >= m && self.undo_retrans > 0 {
                        self.undo_retrans -= 1;
                    }
                }
            }
        }
        sack_start
    }

    /// SACK blocks (`tcp_sacktag_write_queue`): mark newly SACKed segments, feed the rate
    /// sample and RACK, and remember the blocks for the next ACK.
    #[allow(clippy::too_many_arguments)]
    fn sacktag(
        &mut self,
        now: Nanos,
        cum: u64,
        prior_fack: u64,
        blocks: &[SackBlock],
        sack_start: usize,
        st: &mut AckState,
        rate: &mut RateAcc,
    ) {
        for &(s, e) in &blocks[sack_start..] {
            let e = e.min(self.snd_nxt);
            let mut start = s.max(cum);
            // Skip the part already processed from the previous ACK's blocks.
            loop {
                let mut moved = false;
                for &(ps, pe) in &self.prev_sacks[..self.n_prev_sacks] {
                    if ps <= start && start < pe {
                        start = pe;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
            for seq in start..e {
                let f = self.seg(seq).flags;
                if f & F_SACKED != 0 {
                    continue;
                }
                if f & F_LOST != 0 {
                    self.lost_out -= 1;
                }
                if f & F_RETRANS != 0 {
                    self.retrans_out -= 1;
                }
                self.seg_mut(seq).flags = (f | F_SACKED) & !(F_LOST | F_RETRANS);
                self.sacked_out += 1;
                st.sacked_segs += 1;
                self.sk.delivered += 1;
                let xmit = self.seg(seq).xmit;
                if f & F_EVER_RETRANS == 0 {
                    if seq < prior_fack {
                        st.sack_reord = st.sack_reord.min(seq);
                    }
                    if st.first_sackt == 0 || xmit < st.first_sackt {
                        st.first_sackt = xmit;
                    }
                    st.last_sackt = st.last_sackt.max(xmit);
                }
                self.rate_skb_delivered(seq, &mut rate.rs, &mut rate.have_prior, &mut rate.last_end, true);
                self.rack_advance(now, f, seq + 1, xmit);
                self.ts_unlink(seq);
                self.fack = self.fack.max(seq + 1);
            }
        }
        self.n_prev_sacks = blocks.len() - sack_start;
        for (i, &b) in blocks[sack_start..].iter().enumerate() {
            self.prev_sacks[i] = b;
        }
    }

    /// Cumulative ACK (`tcp_clean_rtx_queue`): drop the acknowledged segments from the
    /// scoreboard, counting the ones not SACKed before as delivered, and advance snd_una.
    fn clean_rtx_queue(&mut self, now: Nanos, cum: u64, st: &mut AckState, rate: &mut RateAcc) {
        st.acked_segs = (cum - self.snd_una) as u32;
        for seq in self.snd_una..cum {
            let s = *self.seg(seq);
            if s.flags & F_EVER_RETRANS != 0 {
                st.retrans_acked = true;
            } else if s.flags & F_SACKED == 0 {
                if st.first_ackt == 0 {
                    st.first_ackt = s.xmit;
                }
                st.last_ackt = s.xmit;
                st.ack_reord = st.ack_reord.min(seq);
            }
            if s.flags & F_RETRANS != 0 {
                self.retrans_out -= 1;
            }
            if s.flags & F_LOST != 0 {
                self.lost_out -= 1;
            }
            if s.flags & F_SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                self.sk.delivered += 1;
                self.rate_skb_delivered(seq, &mut rate.rs, &mut rate.have_prior, &mut rate.last_end, false);
                self.rack_advance(now, s.flags, seq + 1, s.xmit);
            }
            self.ts_unlink(seq);
        }
        for _ in 0..st.acked_segs {
            self.segs.pop_front();
        }
        self.snd_una = cum;
        self.fack = self.fack.max(cum);
    }

    /// RTT samples (`tcp_clean_rtx_queue` + `tcp_ack_update_rtt`): the cumulatively ACKed
    /// never-retransmitted segments (Karn's rule), else the newly SACKed ones — whose newest
    /// also gives the algorithm's RTT whenever there is one — and only then the timestamp
    /// echo, in whole milliseconds (at least one). Returns the RTT handed to the congestion
    /// control (µs, −1 when there is none).
    fn ack_update_rtt(&mut self, now: Nanos, ack: &Pkt, una_advanced: bool, st: &AckState) -> i64 {
        let us = |t: Nanos| (now.saturating_sub(t)) / NS_PER_US;
        let (mut seq_rtt, mut ca_rtt): (i64, i64) = (-1, -1);
        if st.first_ackt != 0 && !st.retrans_acked {
            seq_rtt = us(st.first_ackt) as i64;
            ca_rtt = us(st.last_ackt) as i64;
        }
        if st.first_sackt != 0 {
            if seq_rtt < 0 {
                seq_rtt = us(st.first_sackt) as i64;
            }
            ca_rtt = us(st.last_sackt) as i64;
        }
        if seq_rtt < 0 && self.timestamps && ack.tsecr != 0 && una_advanced {
            // tcp_rtt_tsopt_us(tp, 1)
            let ticks = ts_tick(now).saturating_sub(ack.tsecr).max(1);
            seq_rtt = (ticks * 1000) as i64;
            ca_rtt = seq_rtt;
        }
        if ca_rtt >= 0 {
            self.rtt.update_min(ca_rtt as u64);
            self.rtt_hist.record(ca_rtt as u64);
        }
        if seq_rtt >= 0 {
            self.rtt.sample(seq_rtt as u64, self.snd_una, self.snd_nxt);
        }
        ca_rtt
    }

    /// `tcp_cong_control`: the algorithm's own `cong_control`, or PRR in Recovery / CWR and
    /// `cong_avoid` otherwise, followed by the pacing rate.
    fn cong_control(&mut self, now: Nanos, rs: &RateSample, delivered_now: u32, newly_lost: u32, una_advanced: bool) {
        self.refresh_sk(now);
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.sk, rs);
        } else {
            if matches!(self.sk.ca_state, CaState::Recovery | CaState::Cwr) {
                self.cwnd_reduction(delivered_now, newly_lost, una_advanced);
            } else if self.may_raise_cwnd(delivered_now, una_advanced) {
                self.cc.cong_avoid(&mut self.sk, self.snd_una, delivered_now);
            }
            self.update_pacing_rate();
        }
        self.sk.cwnd = self.sk.cwnd.max(1);
        self.cwnd_avg.set(now, self.sk.cwnd as f64);
    }

    /// `tcp_may_raise_cwnd`: grow cwnd only on ACKs that acknowledge new data cumulatively
    /// (FLAG_DATA_ACKED) — SACK-only ACKs count too once reordering above the default
    /// tcp_reordering (3) has been seen (FLAG_FORWARD_PROGRESS).
    fn may_raise_cwnd(&self, delivered_now: u32, una_advanced: bool) -> bool {
        if self.reordering > DUPTHRESH {
            delivered_now > 0
        } else {
            una_advanced
        }
    }

    /// Timers (`tcp_set_xmit_timer`): a reorder timer RACK just armed stays; otherwise
    /// progress re-arms the RTO and, in Open state, the tail loss probe.
    fn set_xmit_timer(&mut self, now: Nanos, reo_armed: bool, una_advanced: bool) {
        if self.packets_out() == 0 {
            self.timer = None;
        } else if !reo_armed && una_advanced {
            self.timer = None;
            self.rearm_rto(now);
            self.schedule_loss_probe(now);
        } else if self.timer.is_none() {
            self.rearm_rto(now);
        }
    }
}

/// What one ACK's walk over the scoreboard found (Linux keeps the same in
/// `struct tcp_sacktag_state` and in the locals of `tcp_clean_rtx_queue`).
struct AckState {
    /// Oldest and newest transmit time of the never-retransmitted segments newly SACKed.
    first_sackt: Nanos,
    last_sackt: Nanos,
    /// The same for the segments newly cumulatively acknowledged without a SACK before.
    first_ackt: Nanos,
    last_ackt: Nanos,
    /// A segment that was ever retransmitted was cumulatively acknowledged (Karn's rule).
    retrans_acked: bool,
    /// Lowest never-retransmitted segment newly SACKed below the previous fack (u64::MAX: none).
    sack_reord: u64,
    /// Lowest never-retransmitted, never-SACKed segment cumulatively ACKed (u64::MAX: none).
    ack_reord: u64,
    /// Segments the cumulative ACK removed from the queue.
    acked_segs: u32,
    /// Segments newly SACKed by this ACK (Linux FLAG_DATA_SACKED when non-zero).
    sacked_segs: u32,
}

impl Default for AckState {
    fn default() -> Self {
        AckState {
            first_sackt: 0,
            last_sackt: 0,
            first_ackt: 0,
            last_ackt: 0,
            retrans_acked: false,
            sack_reord: u64::MAX,
            ack_reord: u64::MAX,
            acked_segs: 0,
            sacked_segs: 0,
        }
    }
}
