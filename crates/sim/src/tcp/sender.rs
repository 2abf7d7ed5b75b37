//! The sending side of one connection, modelled on Linux 6.x `tcp_ack()`,
//! `tcp_fastretrans_alert()`, `tcp_write_xmit()` and friends:
//!
//! * a SACK scoreboard over the segments in flight (`sacked_out`, `lost_out`, `retrans_out`,
//!   in-flight = packets_out − sacked − lost + retrans, exactly as `tcp_packets_in_flight`);
//! * RACK-TLP loss detection (tcp_recovery.c, Linux ≥ 4.18): a segment is lost once a segment
//!   sent after it has been delivered and RACK.rtt + reo_wnd has elapsed since it was sent.
//!   Before any reordering is seen, reo_wnd is 0 in Recovery or with ≥ 3 SACKed segments
//!   (dupthresh-like); otherwise min(min_rtt/4 × steps, srtt), where `steps` grows by one per
//!   round in which D-SACKs arrive and falls back to 1 after 16 recoveries without them
//!   (tcp_rack_update_reo_wnd). A reorder timer re-checks pending segments; a tail loss probe
//!   fires after 2·srtt (+2 ms, or +200 ms with a single segment out) in Open state;
//! * Recovery with Proportional Rate Reduction (RFC 6937, `tcp_cwnd_reduction`), cwnd set to
//!   ssthresh when recovery ends;
//! * RTO (rtt.rs) with exponential backoff, entering Loss state (cwnd 1, all un-SACKed
//!   segments marked lost);
//! * undo of spurious reductions: D-SACKs for every retransmission, or a timestamp echo older
//!   than the first retransmission (Eifel detection, `tcp_packet_delayed`);
//! * delivery-rate sampling exactly as tcp_rate.c;
//! * internal pacing (`tcp_wstamp_ns`) when the algorithm asks for it or the scenario paces;
//! * `tcp_is_cwnd_limited` bookkeeping so that cwnd grows only when it was the limit.
//!
//! Simplifications against Linux (each one changes timing by less than a packet time or only
//! in situations our scenarios do not create): one segment per packet (no TSO/GSO bursts, so a
//! paced flow sends single packets at the pacing rate instead of 2–64 kB chunks); no F-RTO
//! (sysctl tcp_frto); no SACK reneging; TLP does not trigger the TLP-specific cwnd reduction
//! (tcp_process_tlp_ack); no congestion-window restart after idle (bulk senders never idle);
//! min RTT is the minimum over the run (Linux: 5-minute window).
use super::rtt::RttEstimator;
use super::{Pkt, PktKind, SackBlock, MSS};
use crate::cc::{AckSample, CaEvent, CaState, CcSock, CongestionControl, RateSample};
use crate::metrics::{Histogram, TimeAverage};
use crate::time::{Nanos, NS_PER_JIFFY, NS_PER_SEC, NS_PER_US};
use std::collections::VecDeque;

const F_SACKED: u8 = 1;
const F_LOST: u8 = 2;
/// A retransmission of this segment is in flight (Linux TCPCB_SACKED_RETRANS).
const F_RETRANS: u8 = 4;
/// This segment was retransmitted at some point (Linux TCPCB_EVER_RETRANS / TCPCB_RETRANS).
const F_EVER_RETRANS: u8 = 8;

const NIL: u64 = u64::MAX;

/// `tp->reordering` default (sysctl tcp_reordering): RACK's dupthresh before reordering is seen.
const DUPTHRESH: u32 = 3;
/// TCP_RACK_RECOVERY_THRESH: recoveries a widened reorder window persists without D-SACKs.
const RACK_RECOVERY_THRESH: u32 = 16;

/// Linux TCP_TIMEOUT_MIN (2 jiffies), added to the RACK reorder timer.
const TIMEOUT_MIN_NS: Nanos = 2 * NS_PER_JIFFY;
/// TCP_TIMEOUT_MIN_US, added to the TLP timeout.
const TLP_SLACK_US: u64 = 2_000;

/// Per-segment state: the scoreboard flags, the last transmit time, the tcp_rate.c snapshot,
/// and the links of the time-sorted list of segments in flight (`tsorted_sent_queue`).
#[derive(Debug, Clone, Copy)]
struct Seg {
    xmit: Nanos,
    flags: u8,
    tx_first_tx: Nanos,
    /// 0 once the segment's delivery was counted in a rate sample (Linux clears
    /// `tx.delivered_mstamp` for SACKed skbs).
    tx_delivered_mstamp: Nanos,
    tx_delivered: u64,
    tx_app_limited: bool,
    tprev: u64,
    tnext: u64,
    in_tsorted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    Rto,
    LossProbe,
    ReorderTimeout,
}

/// What the world needs to know to drive this sender.
pub struct SenderParams {
    pub flow: u32,
    /// Segments to send; None = unlimited (bulk).
    pub total_segs: Option<u64>,
    /// Receive window, in segments.
    pub rwnd_segs: u64,
    /// Pace even if the algorithm does not (model a host with the fq qdisc).
    pub pacing: bool,
    /// RTT of the SYN / SYN-ACK exchange (µs), which Linux feeds to the RTT estimator and the
    /// min-RTT filter before data flows (tcp_synack_rtt_meas / tcp_ack_update_rtt). The
    /// handshake itself is not simulated; its packets are small, so this is the base RTT plus
    /// the serialisation of two 60-byte packets — lower than any data packet can measure.
    pub handshake_rtt_us: Option<u64>,
}

pub struct Sender {
    pub flow: u32,
    pub cc: Box<dyn CongestionControl>,
    pub sk: CcSock,
    pub rtt: RttEstimator,
    segs: VecDeque<Seg>,
    snd_una: u64,
    snd_nxt: u64,
    total_segs: Option<u64>,
    rwnd_segs: u64,
    force_pacing: bool,
    handshake_rtt_us: Option<u64>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Segments marked lost, awaiting retransmission (roughly in sequence order).
    lost_queue: VecDeque<u64>,
    tsorted_head: u64,
    tsorted_tail: u64,
    /// Blocks processed from the previous ACK: their content is known SACKed.
    prev_sacks: [SackBlock; 3],
    n_prev_sacks: usize,
    /// One past the highest SACKed segment (Linux "fack").
    fack: u64,
    // RACK
    rack_mstamp: Nanos,
    rack_end_seq: u64,
    rack_rtt_us: u64,
    rack_advanced: bool,
    /// Reordering was observed (Linux `tp->reord_seen`).
    reord_seen: bool,
    /// A D-SACK arrived since the last reo_wnd adjustment.
    dsack_seen: bool,
    reo_wnd_steps: u32,
    reo_wnd_persist: u32,
    /// `tp->delivered` at the last reo_wnd adjustment.
    rack_last_delivered: u64,
    // tcp_rate.c
    first_tx_mstamp: Nanos,
    /// The sample behind tcpi_delivery_rate (`tp->rate_delivered` / `tp->rate_interval_us`).
    rate_delivered: u64,
    rate_interval_us: u64,
    // Recovery / undo
    high_seq: u64,
    prior_cwnd: u32,
    prior_ssthresh: u32,
    prr_delivered: u32,
    prr_out: u32,
    undo_marker: Option<u64>,
    undo_retrans: i64,
    retrans_stamp: Nanos,
    // Timers
    pub timer: Option<(Nanos, TimerKind)>,
    backoff: u32,
    tlp_high_seq: Option<u64>,
    /// Earliest departure time of the next packet (Linux tcp_wstamp_ns).
    wstamp: Nanos,
    // tcp_cwnd_validate
    max_packets_out: u64,
    cwnd_usage_seq: u64,
    is_cwnd_limited: bool,
    started: bool,
    // Statistics
    pub retransmits: u64,
    pub loss_events: u64,
    pub data_sent: u64,
    pub rtt_hist: Histogram,
    pub cwnd_avg: TimeAverage,
    out: Vec<Pkt>,
}

impl Sender {
    pub fn new(p: SenderParams, cc: Box<dyn CongestionControl>) -> Self {
        let mut sk = CcSock::new(MSS, super::INIT_CWND, u32::MAX / 2);
        sk.pacing_enabled = p.pacing;
        Sender {
            flow: p.flow,
            cc,
            sk,
            rtt: RttEstimator::default(),
            segs: VecDeque::with_capacity(1024),
            snd_una: 0,
            snd_nxt: 0,
            total_segs: p.total_segs,
            rwnd_segs: p.rwnd_segs.max(2),
            force_pacing: p.pacing,
            handshake_rtt_us: p.handshake_rtt_us,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_queue: VecDeque::new(),
            tsorted_head: NIL,
            tsorted_tail: NIL,
            prev_sacks: [(0, 0); 3],
            n_prev_sacks: 0,
            fack: 0,
            rack_mstamp: 0,
            rack_end_seq: 0,
            rack_rtt_us: 0,
            rack_advanced: false,
            reord_seen: false,
            dsack_seen: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            rack_last_delivered: 0,
            first_tx_mstamp: 0,
            rate_delivered: 0,
            rate_interval_us: 0,
            high_seq: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            prr_delivered: 0,
            prr_out: 0,
            undo_marker: None,
            undo_retrans: -1,
            retrans_stamp: 0,
            timer: None,
            backoff: 0,
            tlp_high_seq: None,
            wstamp: 0,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            is_cwnd_limited: false,
            started: false,
            retransmits: 0,
            loss_events: 0,
            data_sent: 0,
            rtt_hist: Histogram::default(),
            cwnd_avg: TimeAverage::default(),
            out: Vec::with_capacity(64),
        }
    }

    // ----- small views ---------------------------------------------------------------

    #[inline]
    fn packets_out(&self) -> u32 {
        (self.snd_nxt - self.snd_una) as u32
    }

    #[inline]
    pub fn in_flight(&self) -> u32 {
        self.packets_out() - (self.sacked_out + self.lost_out) + self.retrans_out
    }

    #[inline]
    fn seg(&self, seq: u64) -> &Seg {
        &self.segs[(seq - self.snd_una) as usize]
    }

    #[inline]
    fn seg_mut(&mut self, seq: u64) -> &mut Seg {
        let i = (seq - self.snd_una) as usize;
        &mut self.segs[i]
    }

    /// Payload bytes cumulatively acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una * MSS as u64
    }

    fn refresh_sk(&mut self, now: Nanos) {
        self.sk.now_ns = now;
        self.sk.srtt_us = self.rtt.srtt_us();
        self.sk.min_rtt_us = self.rtt.min_rtt_us;
        self.sk.in_flight = self.in_flight();
        self.sk.snd_nxt = self.snd_nxt;
        self.sk.snd_una = self.snd_una;
        self.sk.is_cwnd_limited = self.cwnd_limited();
        self.sk.wstamp_ns = self.wstamp;
    }

    /// `tcp_is_cwnd_limited()`.
    fn cwnd_limited(&self) -> bool {
        if self.sk.in_slow_start() {
            (self.sk.cwnd as u64) < 2 * self.max_packets_out
        } else {
            self.is_cwnd_limited
        }
    }

    fn set_state(&mut self, st: CaState) {
        if self.sk.ca_state != st {
            self.cc.set_state(&mut self.sk, st);
            self.sk.ca_state = st;
        }
    }

    // ----- time-sorted list ----------------------------------------------------------

    fn ts_unlink(&mut self, seq: u64) {
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

    fn ts_append(&mut self, seq: u64) {
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

    // ----- sending -------------------------------------------------------------------

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
    fn transmit_more(&mut self, now: Nanos) {
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

    fn can_send_new(&self) -> bool {
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
        if self.sk.ca_state == CaState::Recovery {
            self.prr_out += 1;
        }
        // tcp_update_skb_after_send: internal pacing, from the 11th segment on.
        if (self.sk.pacing_enabled || self.force_pacing) && self.data_sent > 10 && self.sk.pacing_rate > 0 {
            let len_ns = (MSS as u128 * NS_PER_SEC as u128 / self.sk.pacing_rate as u128) as u64;
            self.wstamp = self.wstamp.max(now) + len_ns;
        }
        self.out.push(Pkt::data(self.flow, seq, now));
    }

    fn send_new(&mut self, now: Nanos) {
        if self.packets_out() == 0 {
            // tcp_event_data_sent: restart after idle.
            self.refresh_sk(now);
            self.cc.cwnd_event(&mut self.sk, CaEvent::TxStart);
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
        if self.undo_marker.is_some() {
            if self.undo_retrans < 0 {
                self.undo_retrans = 0;
            }
            self.undo_retrans += 1;
        }
        self.send_again(now, seq);
    }

    /// Put `seq` on the wire again: scoreboard flags, retransmission counters, transmit.
    fn send_again(&mut self, now: Nanos, seq: u64) {
        let f = self.seg(seq).flags;
        if f & F_RETRANS == 0 {
            self.retrans_out += 1;
        }
        self.seg_mut(seq).flags = f | F_RETRANS | F_EVER_RETRANS;
        self.retransmits += 1;
        if self.retrans_stamp == 0 {
            self.retrans_stamp = now;
        }
        self.on_xmit(now, seq);
    }

    // ----- timers --------------------------------------------------------------------

    fn rto_ns(&self) -> Nanos {
        let base = self.rtt.rto_ns();
        (base << self.backoff.min(10)).min(120 * NS_PER_SEC)
    }

    /// `tcp_rearm_rto`.
    fn rearm_rto(&mut self, now: Nanos) {
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
    fn schedule_loss_probe(&mut self, now: Nanos) {
        if self.packets_out() == 0
            || self.tlp_high_seq.is_some()
            || !matches!(self.sk.ca_state, CaState::Open | CaState::Cwr)
        {
            return;
        }
        let timeout = if self.rtt.has_sample() {
            let mut us = 2 * self.rtt.srtt_us();
            us += if self.packets_out() == 1 { super::rtt::RTO_MIN_US } else { TLP_SLACK_US };
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

    fn on_rto(&mut self, now: Nanos) {
        if self.packets_out() == 0 {
            return;
        }
        // tcp_enter_loss
        let st = self.sk.ca_state;
        if st <= CaState::Disorder || self.high_seq <= self.snd_una || (st == CaState::Loss && self.backoff == 0) {
            self.prior_ssthresh = self.current_ssthresh();
            self.prior_cwnd = self.sk.cwnd;
            self.sk.ssthresh = self.cc.ssthresh(&self.sk);
            self.cc.cwnd_event(&mut self.sk, CaEvent::Loss);
            self.undo_marker = Some(self.snd_una);
            self.undo_retrans = if self.retrans_out > 0 { self.retrans_out as i64 } else { -1 };
            self.retrans_stamp = 0;
        }
        if st != CaState::Loss {
            self.loss_events += 1;
        }
        // tcp_timeout_mark_lost: everything not SACKed is lost; retransmissions are forgotten.
        self.lost_queue.clear();
        for seq in self.snd_una..self.snd_nxt {
            let f = self.seg(seq).flags;
            if f & F_SACKED != 0 {
                continue;
            }
            if f & F_RETRANS != 0 {
                self.seg_mut(seq).flags &= !F_RETRANS;
                self.retrans_out -= 1;
            }
            if f & F_LOST == 0 {
                self.seg_mut(seq).flags |= F_LOST;
                self.lost_out += 1;
                self.sk.lost += 1;
            }
            self.lost_queue.push_back(seq);
        }
        self.sk.cwnd = self.in_flight() + 1;
        self.sk.cwnd_cnt = 0;
        self.set_state(CaState::Loss);
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.backoff += 1;
        self.wstamp = now;
        self.timer = Some((now + self.rto_ns(), TimerKind::Rto));
    }

    fn on_loss_probe(&mut self, now: Nanos) {
        if self.packets_out() > 0 && self.tlp_high_seq.is_none() {
            if self.can_send_new() {
                self.send_new(now);
            } else {
                let seq = self.snd_nxt - 1;
                if self.seg(seq).flags & F_SACKED == 0 {
                    self.send_again(now, seq);
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
        if prior_inflight != self.in_flight() {
            if self.sk.ca_state != CaState::Recovery {
                self.enter_recovery();
                if !self.cc.has_cong_control() {
                    self.cwnd_reduction(1, 0, false);
                }
            }
        }
        self.rearm_rto(now);
    }

    // ----- ACK processing ------------------------------------------------------------

    /// Process one ACK; returns the packets sent in response.
    pub fn on_ack(&mut self, now: Nanos, ack: &Pkt) -> &[Pkt] {
        debug_assert_eq!(ack.kind, PktKind::Ack);
        self.out.clear();
        let cum = ack.seq.min(self.snd_nxt);
        if cum < self.snd_una {
            return &self.out; // old ACK
        }
        self.sk.now_ns = now;
        let prior_snd_una = self.snd_una;
        let prior_delivered = self.sk.delivered;
        let prior_in_flight = self.in_flight();
        let prior_lost = self.sk.lost;
        let prior_fack = self.fack;
        let mut rs = RateSample { rtt_us: -1, prior_delivered: 0, ..Default::default() };
        let mut have_prior = false;
        let mut rate_last_end: u64 = 0;

        // D-SACK (RFC 2883): the first block reports a duplicate.
        let blocks = ack.sacks();
        let mut sack_start = 0;
        if ack.dsack && !blocks.is_empty() {
            sack_start = 1;
            let (ds, _) = blocks[0];
            self.dsack_seen = true;
            if let Some(m) = self.undo_marker {
                if ds >= m && self.undo_retrans > 0 {
                    self.undo_retrans -= 1;
                }
            }
        }

        // SACK blocks (tcp_sacktag_write_queue).
        let (mut first_sackt, mut last_sackt) = (0u64, 0u64);
        let mut reord_seen = false;
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
                self.sk.delivered += 1;
                let xmit = self.seg(seq).xmit;
                if f & F_EVER_RETRANS == 0 {
                    if seq < prior_fack {
                        reord_seen = true;
                    }
                    if first_sackt == 0 || xmit < first_sackt {
                        first_sackt = xmit;
                    }
                    last_sackt = last_sackt.max(xmit);
                }
                self.rate_skb_delivered(seq, &mut rs, &mut have_prior, &mut rate_last_end, true);
                self.rack_advance(now, f, seq + 1, xmit);
                self.ts_unlink(seq);
                self.fack = self.fack.max(seq + 1);
            }
        }
        self.n_prev_sacks = blocks.len() - sack_start;
        for (i, &b) in blocks[sack_start..].iter().enumerate() {
            self.prev_sacks[i] = b;
        }

        // Cumulative ACK (tcp_clean_rtx_queue).
        let (mut first_ackt, mut last_ackt) = (0u64, 0u64);
        let mut retrans_acked = false;
        let acked_segs = (cum - self.snd_una) as u32;
        for seq in self.snd_una..cum {
            let s = *self.seg(seq);
            if s.flags & F_EVER_RETRANS != 0 {
                retrans_acked = true;
            } else if s.flags & F_SACKED == 0 {
                if first_ackt == 0 {
                    first_ackt = s.xmit;
                }
                last_ackt = s.xmit;
                if seq < prior_fack {
                    reord_seen = true;
                }
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
                self.rate_skb_delivered(seq, &mut rs, &mut have_prior, &mut rate_last_end, false);
                self.rack_advance(now, s.flags, seq + 1, s.xmit);
            }
            self.ts_unlink(seq);
        }
        for _ in 0..acked_segs {
            self.segs.pop_front();
        }
        self.snd_una = cum;
        self.fack = self.fack.max(cum);
        if reord_seen {
            self.reord_seen = true;
        }
        if have_prior {
            self.update_reo_wnd(rs.prior_delivered);
        }
        let una_advanced = cum > prior_snd_una;
        if una_advanced {
            self.backoff = 0;
            if let Some(t) = self.tlp_high_seq {
                if cum >= t {
                    self.tlp_high_seq = None;
                }
            }
        }

        // RTT samples (tcp_ack_update_rtt): Karn's rule, then the timestamp echo.
        let us = |t: Nanos| (now.saturating_sub(t)) / NS_PER_US;
        let (mut seq_rtt, mut ca_rtt): (i64, i64) = (-1, -1);
        if first_ackt != 0 && !retrans_acked {
            seq_rtt = us(first_ackt) as i64;
            ca_rtt = us(last_ackt) as i64;
        } else if una_advanced && ack.ts != 0 {
            seq_rtt = us(ack.ts) as i64;
            ca_rtt = seq_rtt;
        }
        if seq_rtt < 0 && first_sackt != 0 {
            seq_rtt = us(first_sackt) as i64;
            ca_rtt = us(last_sackt) as i64;
        }
        if ca_rtt >= 0 {
            self.rtt.update_min(ca_rtt as u64);
            self.rtt_hist.record(ca_rtt as u64);
        }
        if seq_rtt >= 0 {
            self.rtt.sample(seq_rtt as u64, self.snd_una, self.snd_nxt);
        }
        rs.rtt_us = ca_rtt;
        let delivered_now = (self.sk.delivered - prior_delivered) as u32;

        self.refresh_sk(now);
        self.cc.pkts_acked(
            &mut self.sk,
            &AckSample { pkts_acked: acked_segs, rtt_us: ca_rtt, in_flight: prior_in_flight },
        );

        // Loss detection and the recovery state machine (tcp_fastretrans_alert).
        let newly_lost_before = self.sk.lost;
        let reo_armed = self.fastretrans_alert(now, ack, una_advanced);
        let newly_lost = (self.sk.lost - newly_lost_before) as u32;

        // tcp_rate_gen
        self.rate_gen(now, delivered_now, (self.sk.lost - prior_lost) as u32, &mut rs, have_prior);
        rs.prior_in_flight = prior_in_flight;
        rs.is_ack_delayed = ack.delayed;

        // tcp_cong_control
        self.refresh_sk(now);
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.sk, &rs);
        } else {
            if matches!(self.sk.ca_state, CaState::Recovery | CaState::Cwr) {
                self.cwnd_reduction(delivered_now, newly_lost, una_advanced);
            } else if delivered_now > 0 {
                self.cc.cong_avoid(&mut self.sk, self.snd_una, delivered_now);
            }
            self.update_pacing_rate();
        }
        self.sk.cwnd = self.sk.cwnd.max(1);
        self.cwnd_avg.set(now, self.sk.cwnd as f64);

        // Timers (tcp_set_xmit_timer): a reorder timer RACK just armed stays; otherwise
        // progress re-arms the RTO and, in Open state, the tail loss probe.
        if self.packets_out() == 0 {
            self.timer = None;
        } else if !reo_armed && una_advanced {
            self.timer = None;
            self.rearm_rto(now);
            self.schedule_loss_probe(now);
        } else if self.timer.is_none() {
            self.rearm_rto(now);
        }

        self.transmit_more(now);
        &self.out
    }

    fn current_ssthresh(&self) -> u32 {
        if matches!(self.sk.ca_state, CaState::Cwr | CaState::Recovery) {
            self.sk.ssthresh
        } else {
            self.sk.ssthresh.max((self.sk.cwnd >> 1) + (self.sk.cwnd >> 2))
        }
    }

    /// `tcp_packet_delayed`: the echoed timestamp predates the first retransmission, so the
    /// original transmission reached the receiver.
    fn packet_delayed(&self, tsecr: u64) -> bool {
        self.retrans_stamp != 0 && tsecr != 0 && tsecr < self.retrans_stamp
    }

    /// Returns true when RACK armed the reorder timer.
    fn fastretrans_alert(&mut self, now: Nanos, ack: &Pkt, una_advanced: bool) -> bool {
        // State exit when high_seq is acknowledged.
        match self.sk.ca_state {
            CaState::Recovery if self.snd_una >= self.high_seq => {
                if !self.try_undo_recovery(ack.ts) {
                    self.end_cwnd_reduction();
                    self.try_to_open();
                }
            }
            CaState::Loss => {
                if una_advanced && self.undo_marker.is_some() && self.packet_delayed(ack.ts) {
                    // Spurious RTO (the original segments were only late).
                    self.undo_cwnd_reduction(true);
                    self.try_to_open();
                } else if self.snd_una >= self.high_seq {
                    self.try_undo_recovery(ack.ts);
                    self.try_to_open();
                }
            }
            CaState::Open => {
                self.retrans_stamp = 0;
            }
            _ => {}
        }
        match self.sk.ca_state {
            CaState::Recovery => {
                if una_advanced && self.try_undo_partial(ack.ts) {
                    return false;
                }
                if self.try_undo_dsack() {
                    self.try_to_open();
                    return false;
                }
                self.identify_loss(now)
            }
            CaState::Loss => self.identify_loss(now),
            _ => {
                if self.try_undo_dsack() {
                    self.try_to_open();
                }
                let armed = self.identify_loss(now);
                if self.lost_out > 0 {
                    self.enter_recovery();
                } else {
                    self.try_to_open();
                }
                armed
            }
        }
    }

    /// `tcp_rack_mark_lost`; returns true when it armed the reorder timer.
    fn identify_loss(&mut self, now: Nanos) -> bool {
        if !self.rack_advanced || self.packets_out() == 0 {
            return false;
        }
        self.rack_advanced = false;
        if let Some(reo_us) = self.rack_detect_loss(now) {
            // usecs_to_jiffies(timeout) + TCP_TIMEOUT_MIN, in jiffy resolution.
            let ns = (reo_us * NS_PER_US).div_ceil(NS_PER_JIFFY) * NS_PER_JIFFY + TIMEOUT_MIN_NS;
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
    fn update_reo_wnd(&mut self, prior_delivered: u64) {
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
    fn rack_detect_loss(&mut self, now: Nanos) -> Option<u64> {
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
                timeout = timeout.max(1 + remaining as u64);
            }
            seq = next;
        }
        (timeout > 0).then_some(timeout)
    }

    fn mark_lost(&mut self, seq: u64) {
        let f = self.seg(seq).flags;
        if f & F_RETRANS != 0 {
            self.retrans_out -= 1;
        }
        if f & F_LOST == 0 {
            self.lost_out += 1;
        }
        self.seg_mut(seq).flags = (f | F_LOST) & !F_RETRANS;
        self.sk.lost += 1;
        self.lost_queue.push_back(seq);
    }

    /// `tcp_rack_advance`.
    fn rack_advance(&mut self, now: Nanos, flags: u8, end_seq: u64, xmit: Nanos) {
        if self.rack_mstamp != 0 && !(xmit > self.rack_mstamp || (xmit == self.rack_mstamp && end_seq > self.rack_end_seq)) {
            return;
        }
        let rtt_us = now.saturating_sub(xmit) / NS_PER_US;
        if flags & F_EVER_RETRANS != 0 && rtt_us < self.rtt.min_rtt_us as u64 {
            // Possibly the ACK of the original transmission: ambiguous, ignore.
            return;
        }
        self.rack_rtt_us = rtt_us;
        self.rack_mstamp = xmit;
        self.rack_end_seq = end_seq;
        self.rack_advanced = true;
    }

    fn enter_recovery(&mut self) {
        // tcp_enter_recovery + tcp_init_cwnd_reduction
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = if self.retrans_out > 0 { self.retrans_out as i64 } else { -1 };
        self.prior_ssthresh = self.current_ssthresh();
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.sk.cwnd_cnt = 0;
        self.prior_cwnd = self.sk.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.sk.ssthresh = self.cc.ssthresh(&self.sk);
        self.loss_events += 1;
        self.set_state(CaState::Recovery);
    }

    /// `tcp_cwnd_reduction` (PRR, RFC 6937).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
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
            }
        }
        self.undo_marker = None;
    }

    fn may_undo(&self, tsecr: u64) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(tsecr))
    }

    fn try_undo_recovery(&mut self, tsecr: u64) -> bool {
        if self.may_undo(tsecr) {
            self.undo_cwnd_reduction(false);
            return true;
        }
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        false
    }

    fn try_undo_partial(&mut self, tsecr: u64) -> bool {
        if self.undo_marker.is_some() && self.packet_delayed(tsecr) {
            // tcp_check_sack_reordering: the hole was filled by the original, late segment.
            self.reord_seen = true;
            if self.retrans_out > 0 {
                return true;
            }
            self.undo_cwnd_reduction(true);
            self.try_to_open();
            return true;
        }
        false
    }

    fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.reo_wnd_persist = (self.reo_wnd_persist + 1).min(RACK_RECOVERY_THRESH);
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// `tcp_try_keep_open` / `tcp_try_to_open`.
    fn try_to_open(&mut self) {
        let st = if self.sacked_out + self.lost_out > 0 || self.retrans_out > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        };
        self.set_state(st);
        if st == CaState::Open && self.retrans_out == 0 {
            self.retrans_stamp = 0;
        }
    }

    /// `tcp_update_pacing_rate` for algorithms without `cong_control` (200 % of cwnd/srtt in
    /// slow start, 120 % after). Linux computes it on every ACK whether or not it paces.
    fn update_pacing_rate(&mut self) {
        let srtt = self.rtt.srtt_us();
        if srtt == 0 {
            return;
        }
        let ratio = if self.sk.cwnd < self.sk.ssthresh / 2 { 200 } else { 120 };
        let pkts = self.sk.cwnd.max(self.packets_out()) as u64;
        let rate = MSS as u64 * pkts * 1_000_000 / srtt * ratio / 100;
        self.sk.pacing_rate = rate.min(self.sk.max_pacing_rate);
    }

    // ----- tcp_rate.c ------------------------------------------------------------------

    fn rate_skb_delivered(
        &mut self,
        seq: u64,
        rs: &mut RateSample,
        have_prior: &mut bool,
        last_end: &mut u64,
        sacked: bool,
    ) {
        let s = *self.seg(seq);
        if s.tx_delivered_mstamp == 0 {
            return;
        }
        let after = s.xmit > self.first_tx_mstamp || (s.xmit == self.first_tx_mstamp && seq + 1 > *last_end);
        if !*have_prior || after {
            *have_prior = true;
            rs.prior_delivered = s.tx_delivered;
            rs.prior_mstamp_ns = s.tx_delivered_mstamp;
            rs.is_app_limited = s.tx_app_limited;
            rs.is_retrans = s.flags & F_EVER_RETRANS != 0;
            *last_end = seq + 1;
            self.first_tx_mstamp = s.xmit;
            rs.interval_us = (s.xmit.saturating_sub(s.tx_first_tx) / NS_PER_US) as i64;
        }
        if sacked {
            self.seg_mut(seq).tx_delivered_mstamp = 0;
        }
    }

    fn rate_gen(&mut self, now: Nanos, delivered: u32, lost: u32, rs: &mut RateSample, have_prior: bool) {
        if self.sk.app_limited != 0 && self.sk.delivered > self.sk.app_limited {
            self.sk.app_limited = 0;
        }
        if delivered > 0 {
            self.sk.delivered_mstamp_ns = now;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        if !have_prior || rs.prior_mstamp_ns == 0 {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        }
        rs.delivered = (self.sk.delivered - rs.prior_delivered) as i64;
        let snd_us = rs.interval_us.max(0);
        let ack_us = (now.saturating_sub(rs.prior_mstamp_ns) / NS_PER_US) as i64;
        rs.interval_us = snd_us.max(ack_us);
        rs.snd_interval_us = snd_us as u64;
        rs.rcv_interval_us = ack_us as u64;
        if rs.interval_us < self.rtt.min_rtt_us as i64 {
            rs.interval_us = -1;
            return;
        }
        // Keep the last non-app-limited sample, or an app-limited one if it is higher.
        let (d, i) = (rs.delivered as u64, rs.interval_us as u64);
        if !rs.is_app_limited || d * self.rate_interval_us >= self.rate_delivered * i {
            self.rate_delivered = d;
            self.rate_interval_us = i;
        }
    }

    /// tcpi_delivery_rate in bit/s (payload), once a valid rate sample exists.
    pub fn delivery_rate_bps(&self) -> Option<f64> {
        (self.rate_interval_us > 0)
            .then(|| self.rate_delivered as f64 * MSS as f64 * 8.0 * 1e6 / self.rate_interval_us as f64)
    }

    /// Current RTT for the time series: the latest smoothed RTT, ms.
    pub fn srtt_ms(&self) -> Option<f64> {
        self.rtt.has_sample().then(|| self.rtt.srtt_us() as f64 / 1000.0)
    }

    pub fn pacing_bps(&self) -> Option<f64> {
        (self.sk.pacing_enabled || self.force_pacing).then(|| self.sk.pacing_rate as f64 * 8.0)
    }
}
